//! The window's git work: the folder's reader started with the folder,
//! its state refreshed when files change, each editor tab's text at HEAD
//! for the gutter's marks, and the Source Control panel's commands (the
//! person's own git, run off the UI thread).

use std::path::PathBuf;
use std::sync::Arc;

use cocode_git::GitAction;

use super::CocodeApp;
use crate::window::editors::GitBase;
use crate::window::git_service::{GitEvent, GitRequest, GitService};
use crate::window::scm::{Focus, GitCommand, Outcome, SourceControl};

impl CocodeApp {
    /// Starts reading git's state of the folder at `root` (the old
    /// folder's reader ends).
    pub(super) fn start_git(&mut self, root: PathBuf) {
        self.git_state = None;
        self.git_problem = None;
        self.scm = SourceControl::default();
        let launcher: Arc<dyn cocode_core::process::ProcessLauncher> = self.root.person_launcher();
        self.git = Some(GitService::spawn(
            self.waker.clone(),
            root,
            launcher,
            self.runtime.clone(),
        ));
    }

    /// Reads git's state again (files changed).
    pub(super) fn refresh_git(&self) {
        if let Some(git) = &self.git {
            git.send(GitRequest::Refresh);
        }
    }

    /// The Source Control panel's asks.
    pub(super) fn run_git(&mut self, command: GitCommand) {
        match command {
            GitCommand::Perform(action) => self.perform_git(action),
            GitCommand::Commit => {
                let action = GitAction::Commit {
                    message: self.scm.message.clone(),
                    amend: self.scm.amend,
                };
                self.perform_git(action);
            }
            GitCommand::Select(chosen) => {
                let same_file = self.scm.selected.as_ref().map(|s| &s.path) == Some(&chosen.path);
                let shown = if self.scm.selected.as_ref() == Some(&chosen) {
                    None
                } else {
                    Some(chosen)
                };
                if !same_file {
                    self.scm.diff = None;
                    self.scm.diff_problem = None;
                    if let Some(git) = &self.git {
                        git.send(GitRequest::Diff(shown.as_ref().map(|s| s.path.clone())));
                    }
                }
                self.scm.selected = shown;
            }
            GitCommand::Open(rel) => {
                let Some(root) = self.workspace_root().cloned() else {
                    return;
                };
                let path = rel.split('/').fold(root, |p, s| p.join(s));
                self.open_file(&path);
            }
            GitCommand::DismissOutcome => self.scm.outcome = None,
            GitCommand::PickBranch => {
                self.show_panel(crate::window::panel::PanelId::SourceControl);
                self.scm.branch_picker = Some(String::new());
                self.scm.focus = Some(Focus::Branch);
            }
            GitCommand::ToggleBranches => {
                self.scm.branch_picker = match self.scm.branch_picker {
                    Some(_) => None,
                    None => Some(String::new()),
                };
            }
        }
    }

    /// Runs the person's git on the git thread; the panel shows it under
    /// way until it answers.
    fn perform_git(&mut self, action: GitAction) {
        let Some(git) = &self.git else {
            return;
        };
        self.scm.running.push(action.words());
        self.scm.outcome = None;
        git.send(GitRequest::Perform(action));
    }

    /// Takes what the git reader found; asks HEAD's text of tabs that
    /// have none yet.
    pub(super) fn apply_git(&mut self) {
        let Some(git) = &mut self.git else {
            return;
        };
        for event in git.drain() {
            match event {
                GitEvent::State(Ok(state)) => {
                    // HEAD may have moved (a commit, a checkout, a reset):
                    // every tab's base is read again.
                    let head = |s: &Option<Arc<cocode_git::RepoState>>| {
                        s.as_ref().map(|s| (s.head.clone(), s.head_id.clone()))
                    };
                    let moved = head(&self.git_state) != head(&state);
                    self.git_state = state;
                    self.git_problem = None;
                    self.scm.known = true;
                    if moved {
                        for tab in &mut self.editors.tabs {
                            tab.git_base = GitBase::Unasked;
                        }
                    }
                }
                GitEvent::State(Err(problem)) => {
                    tracing::warn!("git status: {problem}");
                    self.git_problem = Some(problem);
                    self.scm.known = true;
                }
                GitEvent::Head { path, text } => {
                    for tab in self.editors.tabs.iter_mut().filter(|t| t.path == path) {
                        tab.git_base = GitBase::Known(text.clone());
                        tab.git_marks = None;
                    }
                }
                GitEvent::History { commits, branches } => {
                    self.scm.commits = commits;
                    self.scm.branches = branches;
                }
                GitEvent::Diff(Ok(diff)) => {
                    // A diff of a file no longer selected is late: dropped.
                    if diff.as_ref().map(|d| &d.path) == self.scm.selected.as_ref().map(|s| &s.path)
                        || diff.is_none()
                    {
                        self.scm.diff = diff;
                        self.scm.diff_problem = None;
                    }
                }
                GitEvent::Diff(Err(problem)) => self.scm.diff_problem = Some(problem),
                GitEvent::Done { action, result } => {
                    let words = action.words();
                    if let Some(at) = self.scm.running.iter().position(|w| *w == words) {
                        self.scm.running.remove(at);
                    }
                    self.scm.outcome = match result {
                        Ok(output) => {
                            match &action {
                                GitAction::Commit { .. } => {
                                    self.scm.message.clear();
                                    self.scm.amend = false;
                                }
                                GitAction::Switch(_) | GitAction::CreateBranch(_) => {
                                    self.scm.branch_picker = None;
                                }
                                _ => {}
                            }
                            done_note(&action, &output).map(Outcome::Done)
                        }
                        Err(words) => Some(Outcome::Failed(words)),
                    };
                    // Staging a file's last hunk leaves nothing to show of
                    // it on that side; the refresh that follows says so.
                }
            }
        }
        if self.git_state.is_none() {
            return;
        }
        for tab in self
            .editors
            .tabs
            .iter_mut()
            .filter(|t| t.git_base == GitBase::Unasked)
        {
            tab.git_base = GitBase::Asked;
            git.send(GitRequest::HeadOf(tab.path.clone()));
        }
    }
}

/// What a finished git command did, in a few words (a commit names its
/// first output line, where git prints the new commit's id); nothing for
/// staging and unstaging, which the lists show.
fn done_note(action: &GitAction, output: &str) -> Option<String> {
    Some(match action {
        GitAction::Commit { .. } => output.lines().next().map_or_else(
            || "Committed.".to_owned(),
            |line| format!("Committed: {line}"),
        ),
        GitAction::Switch(branch) => format!("On branch {branch}."),
        GitAction::CreateBranch(branch) => format!("Created branch {branch} and switched to it."),
        GitAction::Init => "Created a repository here.".to_owned(),
        GitAction::Stage(_)
        | GitAction::Unstage(_)
        | GitAction::StagePatch(_)
        | GitAction::UnstagePatch(_) => return None,
    })
}
