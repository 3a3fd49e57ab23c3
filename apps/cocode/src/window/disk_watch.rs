//! Watches the open folder for changes made by anything but the editor (an
//! agent's edit, a build, `git checkout`): the window reloads open files and
//! refreshes the Explorer. Events arrive on notify's thread, are collected,
//! and wake the UI once; the frame drains them without waiting.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::window::link::Waker;

/// What changed since the last drain.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DiskChanges {
    /// Files whose content may differ now.
    pub changed: BTreeSet<PathBuf>,
    /// Whether entries were created, removed or renamed (the Explorer
    /// lists again).
    pub listing: bool,
    /// Whether git's own files changed (an index, HEAD or a branch moved:
    /// a commit, a checkout, `git add` in a terminal).
    pub vcs: bool,
}

/// Whether `path` is one of git's files whose change can change what git
/// says of the folder (not its objects or logs, which every commit writes
/// alongside the index and refs that say so).
fn git_state_file(root: &Path, path: &Path) -> bool {
    let Ok(inside) = path.strip_prefix(root.join(".git")) else {
        return false;
    };
    let first = inside.components().next().map(|c| c.as_os_str().to_owned());
    !matches!(
        first.as_deref().and_then(|f| f.to_str()),
        Some("objects" | "logs")
    ) && path.extension().is_none_or(|e| e != "lock")
}

/// A watcher of one folder.
pub struct DiskWatch {
    _watcher: notify::RecommendedWatcher,
    pending: Arc<Mutex<DiskChanges>>,
}

impl std::fmt::Debug for DiskWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskWatch").finish_non_exhaustive()
    }
}

/// Paths cocode's own state and the VCS keep (never shown, never reloaded).
fn ignored(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|rel| {
        rel.components()
            .next()
            .is_some_and(|c| crate::window::io_worker::hidden_dir(c.as_os_str()))
    })
}

impl DiskWatch {
    /// Starts watching `root` (recursively).
    pub fn start(root: &Path, waker: Waker) -> notify::Result<Self> {
        let pending = Arc::new(Mutex::new(DiskChanges::default()));
        let sink = Arc::clone(&pending);
        let base = root.to_path_buf();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else {
                    // Events were lost: look at everything again.
                    let mut p = sink.lock().unwrap_or_else(PoisonError::into_inner);
                    p.listing = true;
                    drop(p);
                    waker.wake();
                    return;
                };
                if matches!(event.kind, EventKind::Access(_)) {
                    return;
                }
                if event.paths.iter().any(|p| git_state_file(&base, p)) {
                    let mut p = sink.lock().unwrap_or_else(PoisonError::into_inner);
                    let was_empty = p.changed.is_empty() && !p.listing && !p.vcs;
                    p.vcs = true;
                    drop(p);
                    if was_empty {
                        waker.wake();
                    }
                }
                let paths: Vec<PathBuf> = event
                    .paths
                    .into_iter()
                    .filter(|p| !ignored(&base, p))
                    .collect();
                if paths.is_empty() {
                    return;
                }
                let mut p = sink.lock().unwrap_or_else(PoisonError::into_inner);
                let was_empty = p.changed.is_empty() && !p.listing && !p.vcs;
                if matches!(
                    event.kind,
                    EventKind::Create(_)
                        | EventKind::Remove(_)
                        | EventKind::Modify(notify::event::ModifyKind::Name(_))
                        | EventKind::Any
                        | EventKind::Other
                ) {
                    p.listing = true;
                }
                p.changed.extend(paths);
                drop(p);
                if was_empty {
                    waker.wake();
                }
            })?;
        watcher.watch(root, RecursiveMode::Recursive)?;
        Ok(Self {
            _watcher: watcher,
            pending,
        })
    }

    /// What changed since the last call; never blocks for long.
    pub fn drain(&self) -> DiskChanges {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
