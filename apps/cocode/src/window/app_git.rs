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
use crate::window::scm::{Discard, Focus, GitCommand, Outcome, SourceControl};
use crate::window::workspace_service::ServiceRequest;

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
                self.open_file(&cocode_git::absolute_path(&root, &rel));
            }
            GitCommand::DismissOutcome => self.scm.outcome = None,
            GitCommand::Discard(paths) => self.scm.confirm_discard = Some(paths),
            GitCommand::CancelDiscard => self.scm.confirm_discard = None,
            GitCommand::ConfirmDiscard => {
                let (Some(paths), Some(git)) = (self.scm.confirm_discard.take(), &self.git) else {
                    return;
                };
                self.scm.running.push(DISCARDING.to_owned());
                self.scm.outcome = None;
                git.send(GitRequest::PrepareDiscard(paths.clone()));
                self.scm.discarding = Some(paths);
            }
            GitCommand::UndoDiscard(id) => self.undo_discard(id),
            GitCommand::CommitTask {
                task_id,
                prompt,
                paths,
            } => self.commit_task(&task_id, &prompt, paths),
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
        let mut discards = Vec::new();
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
                GitEvent::DiscardReady(ready) => discards.push(ready),
                GitEvent::Discards(recorded) => {
                    // This window's own (if any came first) stay.
                    let mut all = recorded;
                    for own in std::mem::take(&mut self.scm.discards) {
                        if !all.iter().any(|d| d.id == own.id) {
                            all.push(own);
                        }
                    }
                    self.scm.discards = all;
                }
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
        for ready in discards {
            self.send_discard(ready);
        }
        let Some(git) = &self.git else {
            return;
        };
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

impl CocodeApp {
    /// The gutter's "Revert Change": HEAD's lines back in place of the
    /// mark's, as one edit of the document (undone with Ctrl/Cmd+Z, saved
    /// as the person's). Nothing happens when the text changed since the
    /// change was shown, or an agent's edit holds the file.
    pub(super) fn revert_git_change(&mut self, id: u32, mark: cocode_git::LineMark, version: i32) {
        use cocode_editor::{Change, ChangeSet, EditKind, Selection};
        let docs = Arc::clone(&self.editors.docs);
        let Some(tab) = self.editors.get_mut(id) else {
            return;
        };
        let (Some(rel), GitBase::Known(Some(base))) = (tab.rel.clone(), tab.git_base.clone())
        else {
            return;
        };
        if tab.locked().is_some() {
            return;
        }
        docs.with_document(&rel, |doc| {
            if doc.version() != version {
                return;
            }
            let text = doc.rope().to_string();
            let (from, to, old) = cocode_git::revert_change(&base, &text, &mark);
            let at = from + old.chars().count();
            if let Ok(set) = ChangeSet::single(Change::replace(from, to, old)) {
                let _ = doc.apply_selecting(&set, EditKind::Other, Selection::point(at));
            }
        });
        tab.git_peek = None;
        tab.reveal = true;
        // The keys go back to the text (Ctrl/Cmd+Z takes the revert back).
        tab.focus = true;
    }
}

impl CocodeApp {
    /// "Commit the task's changes": its files that git shows as changed
    /// are staged, its message written in the box, and Source Control
    /// shown; the person reviews and commits.
    fn commit_task(&mut self, task_id: &str, prompt: &str, paths: Vec<String>) {
        let summary = self.task_summary(task_id);
        self.show_panel(crate::window::panel::PanelId::SourceControl);
        self.scm.message = crate::window::scm::task_message(task_id, prompt, summary.as_deref());
        self.scm.amend = false;
        // The git thread stages those git shows as changed when it runs.
        self.perform_git(GitAction::Stage(paths));
    }

    /// What the agent said it did (its `task.finish` summary), from the
    /// task's conversation in this window.
    fn task_summary(&self, task_id: &str) -> Option<String> {
        let conversation = self
            .agent
            .conversations
            .iter()
            .find(|c| c.task.as_ref().is_some_and(|t| t.as_str() == task_id))?;
        conversation
            .transcript
            .entries()
            .iter()
            .rev()
            .find_map(|entry| {
                let crate::window::transcript::Entry::Tool(tool) = entry else {
                    return None;
                };
                if tool.title != "task.finish" {
                    return None;
                }
                let input: serde_json::Value = serde_json::from_str(tool.input.as_deref()?).ok()?;
                input["summary"].as_str().map(str::to_owned)
            })
    }
}

/// The words the panel shows while a discard is under way.
const DISCARDING: &str = "discard";

impl CocodeApp {
    /// The git thread read what a discard writes: it goes to the gate as
    /// a person's operation (recorded, so it can be undone).
    fn send_discard(&mut self, ready: Result<Vec<cocode_workspace::DiscardFile>, String>) {
        let files = match ready {
            Ok(files) => files,
            Err(problem) => {
                self.end_discard();
                self.scm.outcome =
                    Some(Outcome::Failed(format!("Nothing was discarded: {problem}")));
                return;
            }
        };
        let Some(root) = self.workspace_root().cloned() else {
            self.end_discard();
            return;
        };
        // Unique among this folder's discards: the time in milliseconds,
        // past the last one's.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let id = self
            .scm
            .discards
            .iter()
            .map(|d| d.id + 1)
            .fold(now, u64::max);
        if self.tasks.is_none() {
            self.start_tasks(root);
        }
        self.send_task(ServiceRequest::UserOp(cocode_workspace::UserOp::Discard {
            id,
            files,
        }));
    }

    /// A discard is over (done, refused or failed).
    fn end_discard(&mut self) {
        self.scm.discarding = None;
        if let Some(at) = self.scm.running.iter().position(|w| w == DISCARDING) {
            self.scm.running.remove(at);
        }
    }

    /// Puts back what a discard of this window's removed.
    fn undo_discard(&mut self, id: u64) {
        use cocode_core::path::{CaseSensitivity, NormalizeOptions, normalize};
        let Some(discard) = self.scm.discards.iter().find(|d| d.id == id).cloned() else {
            return;
        };
        let paths: Result<Vec<_>, _> = discard
            .paths
            .iter()
            .map(|p| normalize(p, NormalizeOptions::native(CaseSensitivity::Sensitive)))
            .collect();
        let paths = match paths {
            Ok(paths) => paths,
            Err(e) => {
                self.scm.outcome = Some(Outcome::Failed(e.to_string()));
                return;
            }
        };
        if self.tasks.is_none()
            && let Some(root) = self.workspace_root().cloned()
        {
            self.start_tasks(root);
        }
        self.scm.running.push(DISCARDING.to_owned());
        self.scm.outcome = None;
        self.send_task(ServiceRequest::UserOp(
            cocode_workspace::UserOp::UndoDiscard { id, paths },
        ));
    }

    /// The gate answered a discard or its undo.
    pub(super) fn on_discard_done(
        &mut self,
        op: &cocode_workspace::UserOp,
        result: Result<(), String>,
    ) {
        use cocode_workspace::UserOp;
        self.end_discard();
        let paths = |files: &[cocode_core::path::NormalizedPath]| -> Vec<String> {
            files.iter().map(|p| p.as_str().to_owned()).collect()
        };
        match (op, result) {
            (UserOp::Discard { id, files }, Ok(())) => {
                let discard = Discard {
                    id: *id,
                    paths: paths(&files.iter().map(|f| f.path.clone()).collect::<Vec<_>>()),
                };
                self.scm.discards.push(discard.clone());
                self.scm.outcome = Some(Outcome::Discarded(discard));
            }
            (UserOp::UndoDiscard { id, paths: named }, Ok(())) => {
                self.scm.discards.retain(|d| d.id != *id);
                let discard = Discard {
                    id: *id,
                    paths: paths(named),
                };
                self.scm.outcome = Some(Outcome::Done(format!(
                    "Put back the changes to {}.",
                    discard.named()
                )));
            }
            (UserOp::Discard { .. }, Err(message)) => {
                self.scm.outcome =
                    Some(Outcome::Failed(format!("Nothing was discarded: {message}")));
            }
            (_, Err(message)) => {
                self.scm.outcome =
                    Some(Outcome::Failed(format!("Nothing was put back: {message}")));
            }
            _ => {}
        }
        self.refresh_git();
    }
}

/// What a finished git command did, in a few words (a commit names its
/// first output line, where git prints the new commit's id); nothing for
/// staging and unstaging, which the lists show (unless nothing could be
/// staged).
fn done_note(action: &GitAction, output: &str) -> Option<String> {
    Some(match action {
        GitAction::Stage(_) if output == crate::window::git_service::NOTHING_TO_STAGE => {
            output.to_owned()
        }
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
