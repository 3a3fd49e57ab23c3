//! The read-only history integrity checker (`cocode doctor` and a UI page).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use cocode_core::gate::StoreError;
use cocode_core::ids::SnapshotId;
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{ContentHash, EditSnapshot};

use crate::store::{HistoryStore, record_paths};

/// What the checker counted. Everything but `current_differs` is a problem.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntegrityReport {
    /// Records listed by a task index but by none of their path indexes.
    pub only_in_task_index: Vec<SnapshotId>,
    /// Records listed by a path index but not by their task's index.
    pub only_in_path_index: Vec<SnapshotId>,
    /// Blobs a record references that are not stored.
    pub missing_blobs: Vec<ContentHash>,
    /// Blobs whose content does not hash to their name (or does not unzip).
    pub corrupt_blobs: Vec<ContentHash>,
    /// Files under `objects/` that are not named like a blob.
    pub stray_objects: Vec<PathBuf>,
    /// Index files that cannot be read.
    pub unreadable_indexes: Vec<String>,
    /// Write journals waiting for recovery (unreadable ones included).
    pub pending_journals: Vec<PathBuf>,
    /// Informational: paths whose current content is not their last
    /// recorded result (a person's edits cause this).
    pub current_differs: Vec<NormalizedPath>,
}

impl IntegrityReport {
    /// The number of problems (informational counts excluded).
    pub fn problems(&self) -> usize {
        self.only_in_task_index.len()
            + self.only_in_path_index.len()
            + self.missing_blobs.len()
            + self.corrupt_blobs.len()
            + self.stray_objects.len()
            + self.unreadable_indexes.len()
            + self.pending_journals.len()
    }
}

/// Checks a workspace's history without changing anything.
#[derive(Debug, Clone)]
pub struct HistoryIntegrityChecker<'a> {
    store: &'a HistoryStore,
}

impl<'a> HistoryIntegrityChecker<'a> {
    pub fn new(store: &'a HistoryStore) -> Self {
        Self { store }
    }

    pub fn check(&self) -> Result<IntegrityReport, StoreError> {
        let mut report = IntegrityReport::default();
        let mut by_task: BTreeMap<SnapshotId, EditSnapshot> = BTreeMap::new();
        // Tasks retention marked are being removed; an interrupted removal
        // is finished by the next retention run, not an integrity problem.
        let mut collected = BTreeSet::new();
        for task in self.store.task_ids()? {
            if self.store.retention_marker(&task)?.is_some() {
                collected.insert(task);
                continue;
            }
            match self.store.snapshots_of_task(&task) {
                Ok(records) => {
                    by_task.extend(records.into_iter().map(|r| (r.snapshot_id().clone(), r)));
                }
                Err(e) => report.unreadable_indexes.push(e.to_string()),
            }
        }
        // (path, id) pairs the path indexes list, and the last record per path.
        let mut in_paths: BTreeSet<(NormalizedPath, SnapshotId)> = BTreeSet::new();
        let mut path_ids: BTreeMap<SnapshotId, EditSnapshot> = BTreeMap::new();
        let mut last: BTreeMap<NormalizedPath, EditSnapshot> = BTreeMap::new();
        for file in self.store.path_index_files()? {
            match self.store.read_path_index(&file) {
                Ok(records) => {
                    for r in records
                        .into_iter()
                        .filter(|r| !collected.contains(r.task_id()))
                    {
                        // A rename is listed in both of its paths' files; each
                        // file speaks only for its own path.
                        for p in record_paths(&r) {
                            if self.store.path_index_file(p) == file {
                                in_paths.insert((p.clone(), r.snapshot_id().clone()));
                                last.insert(p.clone(), r.clone());
                            }
                        }
                        path_ids.insert(r.snapshot_id().clone(), r);
                    }
                }
                Err(e) => report.unreadable_indexes.push(e.to_string()),
            }
        }
        for (id, r) in &by_task {
            if !record_paths(r)
                .iter()
                .all(|p| in_paths.contains(&((*p).clone(), id.clone())))
            {
                report.only_in_task_index.push(id.clone());
            }
        }
        for id in path_ids.keys() {
            if !by_task.contains_key(id) {
                report.only_in_path_index.push(id.clone());
            }
        }
        let referenced: BTreeSet<ContentHash> = by_task
            .values()
            .chain(path_ids.values())
            .flat_map(EditSnapshot::kept_hashes)
            .collect();
        let (stored, strays) = self.store.blob_names()?;
        report.stray_objects = strays;
        let stored: BTreeSet<ContentHash> = stored.into_iter().collect();
        report.missing_blobs = referenced.difference(&stored).copied().collect();
        for hash in &stored {
            if matches!(self.store.read_blob(hash), Err(StoreError::CorruptBlob(_))) {
                report.corrupt_blobs.push(*hash);
            }
        }
        report.pending_journals = self
            .store
            .write_journals()?
            .into_iter()
            .map(|j| j.path)
            .chain(self.store.rollback_journals()?.into_iter().map(|j| j.path))
            .collect();
        let root = self.store.layout().workspace_root();
        for (path, r) in &last {
            let full = path.segments().fold(root.to_path_buf(), |p, s| p.join(s));
            let current = std::fs::read(&full).ok().map(|b| ContentHash::of(&b));
            // A rename's source is expected to be gone.
            let expected = if r.path() == path { r.result() } else { None };
            if current != expected {
                report.current_differs.push(path.clone());
            }
        }
        Ok(report)
    }
}
