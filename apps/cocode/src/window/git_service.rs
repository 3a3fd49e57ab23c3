//! The window's git worker: a thread that reads the repository's state
//! (`cocode_git::read`), files' content at HEAD, the Source Control
//! panel's diff of one file and the last commits, and runs the person's
//! own `git` for what writes to `.git` — so the UI never waits on git.
//! Refreshes asked while one is queued become one, after a short pause
//! that lets a burst of changes (a build, an agent's edits) settle.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cocode_core::process::ProcessLauncher;
use cocode_git::{CommitSummary, GitAction, RepoState};

pub use crate::window::scm::{DiffSide, FileDiff};

use crate::window::link::{Coalesce, UiEnd, Waker, link};

/// What staging answers when none of its files has a change.
pub const NOTHING_TO_STAGE: &str = "None of these files has a change to stage.";

/// How long a refresh waits for more changes before it reads.
const SETTLE: Duration = Duration::from_millis(150);

/// How many commits the panel lists.
pub const RECENT_COMMITS: usize = 20;

/// Files larger than this are not diffed in the panel.
const DIFF_LIMIT: usize = 4 * 1024 * 1024;

/// Work for the git thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitRequest {
    /// Read the repository's state (and the panel's diff and commits)
    /// again.
    Refresh,
    /// The content at HEAD of this file (absolute path).
    HeadOf(PathBuf),
    /// Show this file's changes (workspace-relative) in the panel, now and
    /// after each refresh; `None` shows none.
    Diff(Option<String>),
    /// Run the person's git; then everything is read again.
    Perform(GitAction),
    /// What discarding these files' changes (workspace-relative) writes:
    /// each file's content now and in the index.
    PrepareDiscard(Vec<String>),
}

/// What the git thread found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitEvent {
    /// The repository's state (`None`: the folder is in no repository),
    /// or why it could not be read.
    State(Result<Option<Arc<RepoState>>, String>),
    /// A file's text at HEAD (`None`: not in HEAD, or not text).
    Head { path: PathBuf, text: Option<String> },
    /// The last commits on HEAD and the local branches.
    History {
        commits: Vec<CommitSummary>,
        branches: Vec<String>,
    },
    /// The panel's file diff (`None`: the file has no change any more, or
    /// none is shown), or why it could not be read.
    Diff(Result<Option<FileDiff>, String>),
    /// A git command ended: what it did in words, and git's output or its
    /// error.
    Done {
        action: GitAction,
        result: Result<String, String>,
    },
    /// The files of a discard, ready for the gate, or why not.
    DiscardReady(Result<Vec<cocode_workspace::DiscardFile>, String>),
    /// The discards recorded in the folder (earlier sessions' too), oldest
    /// first: each can be undone.
    Discards(Vec<crate::window::scm::Discard>),
}

impl Coalesce for GitEvent {
    fn merge(&mut self, next: Self) -> Option<Self> {
        match (&*self, next) {
            // Only the newest state matters.
            (Self::State(_), next @ Self::State(_))
            | (Self::History { .. }, next @ Self::History { .. })
            | (Self::Diff(_), next @ Self::Diff(_)) => {
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

/// What one round of the thread does.
#[derive(Default)]
struct Round {
    refresh: bool,
    heads: Vec<PathBuf>,
    diff_changed: bool,
    actions: Vec<GitAction>,
    discards: Vec<Vec<String>>,
}

impl GitService {
    /// Starts the thread for the folder `root` and asks for its state; git
    /// commands run through `launcher` (the person's) on `runtime`.
    pub fn spawn(
        waker: Waker,
        root: PathBuf,
        launcher: Arc<dyn ProcessLauncher>,
        runtime: tokio::runtime::Handle,
    ) -> Self {
        let (ui, mut worker) = link(waker);
        let started = std::thread::Builder::new()
            .name("cocode-git".into())
            .spawn(move || {
                let mut shown: Option<String> = None;
                if !worker
                    .events
                    .blocking_send(GitEvent::Discards(recorded_discards(&root)))
                {
                    return;
                }
                while let Some(first) = worker.requests.blocking_recv() {
                    let mut round = Round::default();
                    let mut take = |request: GitRequest, round: &mut Round| match request {
                        GitRequest::Refresh => round.refresh = true,
                        GitRequest::HeadOf(path) => {
                            if !round.heads.contains(&path) {
                                round.heads.push(path);
                            }
                        }
                        GitRequest::Diff(path) => {
                            shown = path;
                            round.diff_changed = true;
                        }
                        GitRequest::Perform(action) => round.actions.push(action),
                        GitRequest::PrepareDiscard(paths) => round.discards.push(paths),
                    };
                    take(first, &mut round);
                    if round.refresh && round.actions.is_empty() {
                        std::thread::sleep(SETTLE);
                    }
                    while let Ok(more) = worker.requests.try_recv() {
                        take(more, &mut round);
                    }
                    for action in round.actions.drain(..) {
                        let result = perform(&root, launcher.as_ref(), &runtime, &action);
                        round.refresh = true;
                        if !worker
                            .events
                            .blocking_send(GitEvent::Done { action, result })
                        {
                            return;
                        }
                    }
                    let mut events = Vec::new();
                    for paths in round.discards.drain(..) {
                        events.push(GitEvent::DiscardReady(discard_files(&root, &paths)));
                    }
                    if round.refresh {
                        let state = cocode_git::read(&root)
                            .map(|s| s.map(Arc::new))
                            .map_err(|e| e.to_string());
                        let in_repo = matches!(state, Ok(Some(_)));
                        events.push(GitEvent::State(state));
                        if in_repo {
                            events.push(history(&root));
                        }
                    }
                    if round.refresh || round.diff_changed {
                        events.push(GitEvent::Diff(match &shown {
                            Some(rel) => file_diff(&root, rel),
                            None => Ok(None),
                        }));
                    }
                    for path in round.heads {
                        let text = head_text(&root, &path);
                        events.push(GitEvent::Head { path, text });
                    }
                    for event in events {
                        if !worker.events.blocking_send(event) {
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

/// Runs one git command for the folder `root`.
fn perform(
    root: &Path,
    launcher: &dyn ProcessLauncher,
    runtime: &tokio::runtime::Handle,
    action: &GitAction,
) -> Result<String, String> {
    // `git init` (or a folder that left its repository): git runs in the
    // folder itself.
    let workdir = cocode_git::workdir(root)
        .map_err(|e| e.to_string())?
        .unwrap_or_else(|| root.to_path_buf());
    // Staging names only what git shows now as changed (a task's file may
    // have no change left; an ignored one git refuses to add): the one
    // action that needs the status read first.
    let filtered;
    let action = match action {
        GitAction::Stage(paths) => {
            let state = cocode_git::read(root).map_err(|e| e.to_string())?;
            let changed: Vec<String> = paths
                .iter()
                .filter(|p| {
                    state.as_ref().is_some_and(|state| {
                        state
                            .files
                            .get(p.as_str())
                            .and_then(cocode_git::FileState::shown)
                            .is_some_and(|k| k != cocode_git::Kind::Ignored)
                    })
                })
                .cloned()
                .collect();
            if changed.is_empty() {
                return Ok(NOTHING_TO_STAGE.to_owned());
            }
            filtered = GitAction::Stage(changed);
            &filtered
        }
        _ => action,
    };
    runtime
        .block_on(cocode_git::perform(launcher, root, &workdir, action))
        .map_err(|e| e.to_string())
}

/// What discarding `paths`' changes writes: each goes back to its
/// content in the index, or is removed when the index has none (an
/// untracked file).
fn discard_files(
    root: &Path,
    paths: &[String],
) -> Result<Vec<cocode_workspace::DiscardFile>, String> {
    use cocode_core::path::{CaseSensitivity, NormalizeOptions, normalize};
    let mut now = Vec::with_capacity(paths.len());
    for rel in paths {
        let path = cocode_git::absolute_path(root, rel);
        now.push(match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => {
                Some(std::fs::read(&path).map_err(|e| format!("{rel}: {e}"))?)
            }
            Ok(_) => {
                return Err(format!(
                    "{rel} is not a file: only files are discarded here"
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("{rel}: {e}")),
        });
    }
    // The index is read once, however many files go.
    let rels: Vec<&str> = paths.iter().map(String::as_str).collect();
    let staged = cocode_git::index_contents(root, &rels).map_err(|e| e.to_string())?;
    let mut files = Vec::with_capacity(paths.len());
    for ((rel, now), restore) in paths.iter().zip(now).zip(staged) {
        if now == restore {
            continue;
        }
        files.push(cocode_workspace::DiscardFile {
            path: normalize(rel, NormalizeOptions::native(CaseSensitivity::Sensitive))
                .map_err(|e| e.to_string())?,
            expected: now.as_deref().map(cocode_core::snapshot::ContentHash::of),
            restore,
        });
    }
    if files.is_empty() {
        return Err("there is no change to discard".to_owned());
    }
    Ok(files)
}

/// The discards recorded in the folder at `root`.
fn recorded_discards(root: &Path) -> Vec<crate::window::scm::Discard> {
    match cocode_workspace::recorded_discards(&cocode_workspace::Layout::new(root)) {
        Ok(records) => records
            .into_iter()
            .map(|r| crate::window::scm::Discard {
                id: r.id,
                paths: r.files.iter().map(|f| f.path.as_str().to_owned()).collect(),
            })
            .collect(),
        Err(e) => {
            tracing::warn!("the folder's discards: {e}");
            Vec::new()
        }
    }
}

/// The last commits and the branches.
fn history(root: &Path) -> GitEvent {
    let commits = cocode_git::recent_commits(root, RECENT_COMMITS).unwrap_or_else(|e| {
        tracing::debug!("recent commits: {e}");
        Vec::new()
    });
    let branches = cocode_git::local_branches(root).unwrap_or_else(|e| {
        tracing::debug!("branches: {e}");
        Vec::new()
    });
    GitEvent::History { commits, branches }
}

/// `rel`'s staged and unstaged changes; `None` when it has neither.
fn file_diff(root: &Path, rel: &str) -> Result<Option<FileDiff>, String> {
    let Some(inside) = cocode_git::workspace_in_repo(root).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    let head = cocode_git::head_content(root, rel).map_err(|e| e.to_string())?;
    let index = cocode_git::index_content(root, rel).map_err(|e| e.to_string())?;
    let path = cocode_git::absolute_path(root, rel);
    // A folder git shows whole (untracked `out/`) has no diff of its own.
    let work = match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => Some(std::fs::read(&path).map_err(|e| e.to_string())?),
        _ => None,
    };
    let staged = side(head.as_deref(), index.as_deref());
    let unstaged = side(index.as_deref(), work.as_deref());
    if staged == DiffSide::Unchanged && unstaged == DiffSide::Unchanged {
        return Ok(None);
    }
    Ok(Some(FileDiff {
        path: rel.to_owned(),
        repo_path: cocode_git::repo_path(&inside, rel),
        staged,
        unstaged,
    }))
}

/// The change from `old` to `new` (`None`: absent).
fn side(old: Option<&[u8]>, new: Option<&[u8]>) -> DiffSide {
    if old == new {
        return DiffSide::Unchanged;
    }
    let (old, new) = (old.unwrap_or_default(), new.unwrap_or_default());
    if old.len() > DIFF_LIMIT || new.len() > DIFF_LIMIT {
        return DiffSide::TooLarge;
    }
    match (std::str::from_utf8(old), std::str::from_utf8(new)) {
        (Ok(old), Ok(new)) if !old.contains('\0') && !new.contains('\0') => {
            DiffSide::Hunks(cocode_git::diff_hunks(old, new))
        }
        _ => DiffSide::Binary,
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
