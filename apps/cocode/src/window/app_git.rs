//! The window's git work: the folder's reader started with the folder,
//! its state refreshed when files change, and each editor tab's text at
//! HEAD for the gutter's marks.

use std::path::PathBuf;

use super::CocodeApp;
use crate::window::editors::GitBase;
use crate::window::git_service::{GitEvent, GitRequest, GitService};

impl CocodeApp {
    /// Starts reading git's state of the folder at `root` (the old
    /// folder's reader ends).
    pub(super) fn start_git(&mut self, root: PathBuf) {
        self.git_state = None;
        self.git_problem = None;
        self.git = Some(GitService::spawn(self.waker.clone(), root));
    }

    /// Reads git's state again (files changed).
    pub(super) fn refresh_git(&self) {
        if let Some(git) = &self.git {
            git.send(GitRequest::Refresh);
        }
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
                    // HEAD may have moved (a commit, a checkout): every
                    // tab's base is read again.
                    let moved =
                        self.git_state.as_ref().map(|s| &s.head) != state.as_ref().map(|s| &s.head);
                    self.git_state = state;
                    self.git_problem = None;
                    if moved {
                        for tab in &mut self.editors.tabs {
                            tab.git_base = GitBase::Unasked;
                        }
                    }
                }
                GitEvent::State(Err(problem)) => {
                    tracing::warn!("git status: {problem}");
                    self.git_problem = Some(problem);
                }
                GitEvent::Head { path, text } => {
                    for tab in self.editors.tabs.iter_mut().filter(|t| t.path == path) {
                        tab.git_base = GitBase::Known(text.clone());
                        tab.git_marks = None;
                    }
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
