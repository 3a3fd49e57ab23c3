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
                let paths: Vec<PathBuf> = event
                    .paths
                    .into_iter()
                    .filter(|p| !ignored(&base, p))
                    .collect();
                if paths.is_empty() {
                    return;
                }
                let mut p = sink.lock().unwrap_or_else(PoisonError::into_inner);
                let was_empty = p.changed.is_empty() && !p.listing;
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
