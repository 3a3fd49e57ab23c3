//! The history store itself ([`HistoryStore`]): what its clones share, the
//! operations it holds in memory until a checkpoint writes them, and the
//! [`SnapshotStore`] it is for the rest of cocode.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use cocode_core::gate::{SnapshotStore, StoreError};
use cocode_core::ids::{OpId, TaskId};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{ContentHash, EditSnapshot};

use super::files::{io_err, record_paths};
use crate::disk;
use crate::layout::Layout;

/// What `.cocode/.gitignore` says: everything in `.cocode/` is ignored.
const COCODE_IGNORE: &[u8] =
    b"# cocode's own history, locks and settings: never part of the project.\n*\n";

/// Held operations that make the gate checkpoint.
pub const CHECKPOINT_OPERATIONS: usize = 64;

/// Held blob bytes that make the gate checkpoint.
pub const CHECKPOINT_BYTES: usize = 8 * 1024 * 1024;

/// Committed operations whose records and small blobs are held in memory
/// — their journals carry them meanwhile — until a checkpoint writes them
/// to the indexes and packs (see [`HistoryStore::hold`]).
#[derive(Debug, Default)]
pub(super) struct Held {
    pub(super) ops: Vec<OpId>,
    /// Every held record, in commit order.
    pub(super) records: Vec<EditSnapshot>,
    pub(super) blobs: HashMap<ContentHash, std::sync::Arc<[u8]>>,
    pub(super) bytes: usize,
    /// A checkpoint failed part way: the next one appends only the lines
    /// the indexes lack.
    pub(super) torn: bool,
}

/// What checkpoints wrote since the gate last collected it: the operations
/// now wholly in the indexes and packs, and the files they appended to or
/// created (for the gate's next barrier).
#[derive(Debug, Default)]
pub(crate) struct Checkpointed {
    pub(crate) ops: Vec<OpId>,
    pub(crate) blob_files: Vec<PathBuf>,
    pub(crate) index_files: Vec<PathBuf>,
}

impl Checkpointed {
    pub(crate) fn is_empty(&self) -> bool {
        self.ops.is_empty() && self.blob_files.is_empty() && self.index_files.is_empty()
    }
}

/// The history under `<workspace>/.cocode/history`.
#[derive(Debug, Clone)]
pub struct HistoryStore {
    pub(super) layout: Layout,
    pub(super) packs: crate::pack::Packs,
    /// Settled write journals kept to carry the next ones (see
    /// [`Self::write_journal`]); clones share them.
    pub(super) spare_journals: std::sync::Arc<std::sync::Mutex<Vec<Spare>>>,
    /// Whether `files/` held a path index in a one-file-per-path form when
    /// first asked (only earlier versions write them); until then no
    /// path's index is looked for there.
    pub(super) per_path_indexes: std::sync::Arc<std::sync::OnceLock<bool>>,
    /// Held operations (clones share them).
    pub(super) held: std::sync::Arc<std::sync::Mutex<Held>>,
    /// What checkpoints wrote that no barrier has taken yet.
    pub(super) checkpointed: std::sync::Arc<std::sync::Mutex<Checkpointed>>,
}

/// A settled journal renamed away to carry a later one.
#[derive(Debug)]
pub(super) struct Spare {
    pub(super) path: PathBuf,
    /// Whether its rename away from the settled journal's name is durable.
    /// Until it is, a crash could bring that name back over the new
    /// content, so it is not reused.
    pub(super) durable: bool,
}

impl HistoryStore {
    pub fn new(layout: Layout) -> Self {
        let packs = crate::pack::Packs::new(layout.packs_dir());
        Self {
            layout,
            packs,
            spare_journals: std::sync::Arc::default(),
            per_path_indexes: std::sync::Arc::default(),
            held: std::sync::Arc::default(),
            checkpointed: std::sync::Arc::default(),
        }
    }

    pub(super) fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    // ---- held operations ----------------------------------------------------

    /// Holds a committed operation's records and the blobs its journal
    /// carries: reads of this store see them at once, the indexes and
    /// packs get them at the next checkpoint, and the operation's journal
    /// is their durable copy until a barrier after that. Returns whether a
    /// checkpoint is due ([`CHECKPOINT_OPERATIONS`], [`CHECKPOINT_BYTES`]).
    pub(crate) fn hold(
        &self,
        op: OpId,
        records: &[EditSnapshot],
        blobs: Vec<(ContentHash, Vec<u8>)>,
    ) -> bool {
        let mut held = self.held();
        for (hash, bytes) in blobs {
            if let std::collections::hash_map::Entry::Vacant(slot) = held.blobs.entry(hash) {
                let len = bytes.len();
                slot.insert(bytes.into());
                held.bytes += len;
            }
        }
        held.records.extend_from_slice(records);
        held.ops.push(op);
        held.ops.len() >= CHECKPOINT_OPERATIONS || held.bytes >= CHECKPOINT_BYTES
    }

    /// Operations held and not yet checkpointed.
    pub fn held_operations(&self) -> usize {
        self.held().ops.len()
    }

    /// Writes every held blob to a pack (or a file of its own) and every
    /// held record to its indexes; the operations are then listed for the
    /// gate's next barrier ([`Self::take_checkpointed`]). Nothing is
    /// synced here. Every read and rewrite of the indexes that does not
    /// see held records runs one first. On failure the operations stay
    /// held and the next checkpoint appends only the lines the indexes
    /// lack.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        let mut held = self.held();
        if held.ops.is_empty() && held.records.is_empty() && held.blobs.is_empty() {
            return Ok(());
        }
        // Every file the lines go to is listed first, so a barrier syncs
        // the ones a failed attempt appended to as well.
        let mut index_files = Vec::new();
        for r in &held.records {
            index_files.push(self.layout.task_index(r.task_id()));
            index_files.extend(record_paths(r).into_iter().map(|p| self.path_index_file(p)));
        }
        index_files.sort();
        index_files.dedup();
        let mut blob_files = Vec::new();
        let mut result = Ok(());
        for bytes in held.blobs.values() {
            match self.store_blob(bytes) {
                Ok((_, Some(file))) => blob_files.push(file),
                Ok((_, None)) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        fail::fail_point!("store::checkpoint_after_blobs");
        if result.is_ok() {
            result = if held.torn {
                self.append_missing_on_disk(&held.records)
            } else {
                self.append_filtered(&held.records, Some(&HashSet::new()), Some(&HashSet::new()))
            };
        }
        let mut done = self
            .checkpointed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        done.blob_files.extend(blob_files);
        done.index_files.extend(index_files);
        if let Err(e) = result {
            held.torn = true;
            return Err(e);
        }
        done.ops.append(&mut held.ops);
        *held = Held::default();
        fail::fail_point!("store::checkpoint_after_indexes");
        Ok(())
    }

    /// Takes what checkpoints wrote since the last call (the gate's
    /// barrier makes it durable).
    pub(crate) fn take_checkpointed(&self) -> Checkpointed {
        std::mem::take(
            &mut *self
                .checkpointed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Whether checkpoints wrote anything no barrier has taken yet.
    pub(crate) fn has_checkpointed(&self) -> bool {
        !self
            .checkpointed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_empty()
    }

    /// The held records that `keep` selects, in commit order.
    pub(super) fn held_records(&self, keep: impl Fn(&EditSnapshot) -> bool) -> Vec<EditSnapshot> {
        self.held()
            .records
            .iter()
            .filter(|r| keep(r))
            .cloned()
            .collect()
    }

    pub(super) fn spares(&self) -> std::sync::MutexGuard<'_, Vec<Spare>> {
        self.spare_journals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Creates every folder of the `.cocode/` layout.
    pub fn create_layout(&self) -> Result<(), StoreError> {
        for dir in self.layout.folders() {
            disk::create_dir_all(&dir).map_err(|e| io_err("creating", &dir, &e))?;
        }
        // `.cocode/` ignores itself, so git never stages its history,
        // locks or settings (a workspace made before this gets it on its
        // next open). Whatever is already there, a person's own file or
        // anything else, is left as it is.
        let ignore = self.layout.cocode_ignore_file();
        if ignore.symlink_metadata().is_err() {
            disk::write_atomic_synced(&ignore, COCODE_IGNORE)
                .map_err(|e| io_err("writing", &ignore, &e))?;
        }
        Ok(())
    }

    /// Bytes under `history/`: blobs, indexes, journals and markers (the
    /// held blobs count as their journals carry them).
    pub fn history_bytes(&self) -> u64 {
        fn walk(dir: &Path) -> u64 {
            let Ok(entries) = fs::read_dir(dir) else {
                return 0;
            };
            entries
                .filter_map(Result::ok)
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => walk(&e.path()),
                    Ok(_) => e.metadata().map_or(0, |m| m.len()),
                    Err(_) => 0,
                })
                .sum()
        }
        walk(&self.layout.history_dir())
    }
}

impl SnapshotStore for HistoryStore {
    fn snapshots_of_task(&self, task: &TaskId) -> Result<Vec<EditSnapshot>, StoreError> {
        HistoryStore::snapshots_of_task(self, task)
    }

    fn last_snapshot_of_path(
        &self,
        path: &NormalizedPath,
    ) -> Result<Option<EditSnapshot>, StoreError> {
        HistoryStore::last_snapshot_of_path(self, path)
    }

    fn read_blob(&self, hash: &ContentHash) -> Result<Vec<u8>, StoreError> {
        HistoryStore::read_blob(self, hash)
    }

    fn diff_between(
        &self,
        path: &NormalizedPath,
        before: Option<&ContentHash>,
        after: Option<&ContentHash>,
    ) -> Result<String, StoreError> {
        let load = |h: Option<&ContentHash>| h.map(|h| self.read_blob(h)).transpose();
        Ok(crate::diff::unified(
            path,
            None,
            load(before)?.as_deref(),
            load(after)?.as_deref(),
        ))
    }
}
