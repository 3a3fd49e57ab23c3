//! The window's git reader: a thread that reads the repository's state
//! (`cocode_git::read`) and files' content at HEAD, so the UI never waits
//! on git. Refreshes asked while one is queued become one, after a short
//! pause that lets a burst of changes (a build, an agent's edits) settle.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cocode_git::RepoState;

use crate::window::link::{Coalesce, UiEnd, Waker, link};

/// How long a refresh waits for more changes before it reads.
const SETTLE: Duration = Duration::from_millis(150);

/// Work for the git thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitRequest {
    /// Read the repository's state again.
    Refresh,
    /// The content at HEAD of this file (absolute path).
    HeadOf(PathBuf),
}

/// What the git thread found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitEvent {
    /// The repository's state (`None`: the folder is in no repository),
    /// or why it could not be read.
    State(Result<Option<Arc<RepoState>>, String>),
    /// A file's text at HEAD (`None`: not in HEAD, or not text).
    Head { path: PathBuf, text: Option<String> },
}

impl Coalesce for GitEvent {
    fn merge(&mut self, next: Self) -> Option<Self> {
        match (&*self, next) {
            // Only the newest state matters.
            (Self::State(_), next @ Self::State(_)) => {
                *self = next;
                None
            }
            (_, next) => Some(next),
        }
    }
}

/// Handle to the git thread; dropping it ends the thread.
#[derive(Debug)]
pub struct GitService {
    link: UiEnd<GitRequest, GitEvent>,
}

impl GitService {
    /// Starts the thread for the folder `root` and asks for its state.
    pub fn spawn(waker: Waker, root: PathBuf) -> Self {
        let (ui, mut worker) = link(waker);
        let started = std::thread::Builder::new()
            .name("cocode-git".into())
            .spawn(move || {
                while let Some(first) = worker.requests.blocking_recv() {
                    let mut refresh = false;
                    let mut heads: Vec<PathBuf> = Vec::new();
                    let mut take = |request: GitRequest, refresh: &mut bool| match request {
                        GitRequest::Refresh => *refresh = true,
                        GitRequest::HeadOf(path) => {
                            if !heads.contains(&path) {
                                heads.push(path);
                            }
                        }
                    };
                    take(first, &mut refresh);
                    if refresh {
                        std::thread::sleep(SETTLE);
                    }
                    while let Ok(more) = worker.requests.try_recv() {
                        take(more, &mut refresh);
                    }
                    if refresh {
                        let state = cocode_git::read(&root)
                            .map(|s| s.map(Arc::new))
                            .map_err(|e| e.to_string());
                        if !worker.events.blocking_send(GitEvent::State(state)) {
                            return;
                        }
                    }
                    for path in heads {
                        let text = head_text(&root, &path);
                        if !worker.events.blocking_send(GitEvent::Head { path, text }) {
                            return;
                        }
                    }
                }
            });
        if let Err(e) = started {
            tracing::warn!("git status will not show: {e}");
        }
        let service = Self { link: ui };
        service.send(GitRequest::Refresh);
        service
    }

    /// Queues a request; never blocks.
    pub fn send(&self, request: GitRequest) {
        self.link.send(request);
    }

    /// What arrived since the last call; never blocks.
    pub fn drain(&mut self) -> Vec<GitEvent> {
        self.link.drain()
    }
}

/// `path`'s text at HEAD, when it is inside `root`, in HEAD and UTF-8.
fn head_text(root: &Path, path: &Path) -> Option<String> {
    let rel = cocode_git::relative_path(root, path)?;
    match cocode_git::head_content(root, &rel) {
        Ok(bytes) => String::from_utf8(bytes?).ok(),
        Err(e) => {
            tracing::debug!("{rel} at HEAD: {e}");
            None
        }
    }
}
