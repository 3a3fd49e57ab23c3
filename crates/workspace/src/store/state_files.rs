//! cocode's small state files: `workspace.json`, retention markers, the
//! lease file, other state under `.cocode/` and the case probe.

use std::fs;
use std::io;
use std::path::Path;

use cocode_core::gate::StoreError;
use cocode_core::ids::TaskId;
use cocode_core::workspace::WorkspaceConfig;

use super::files::io_err;
use super::format::{JournalFile, RetentionMarker, SweepJournal, UnrecordedMarker};
use super::history::HistoryStore;
use crate::disk;

impl HistoryStore {
    // ---- retention ----------------------------------------------------------

    /// The retention marker of a task, if retention removed its snapshots.
    pub fn retention_marker(&self, task: &TaskId) -> Result<Option<RetentionMarker>, StoreError> {
        let path = self.layout.retention_marker(task);
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| StoreError::Index(format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err("reading", &path, &e)),
        }
    }

    /// Writes a task's retention marker (synced: it must exist before any of
    /// the task's records go, so rollback is disabled with its reason).
    pub fn write_retention_marker(
        &self,
        task: &TaskId,
        marker: &RetentionMarker,
    ) -> Result<(), StoreError> {
        let path = self.layout.retention_marker(task);
        let bytes =
            serde_json::to_vec_pretty(marker).map_err(|e| StoreError::Index(e.to_string()))?;
        if let Some(dir) = path.parent() {
            disk::create_dir_all(dir).map_err(|e| io_err("creating", dir, &e))?;
        }
        disk::write_atomic_synced(&path, &bytes).map_err(|e| io_err("writing", &path, &e))
    }

    // ---- sweeps -------------------------------------------------------------

    /// Why a task's changes are not all recorded, if a sweep of it could
    /// not finish.
    pub fn unrecorded_marker(&self, task: &TaskId) -> Result<Option<UnrecordedMarker>, StoreError> {
        read_json(&self.layout.unrecorded_marker(task))
    }

    /// Marks a task's changes as not all recorded (synced: rollback must
    /// stay refused after a crash).
    pub fn write_unrecorded_marker(
        &self,
        task: &TaskId,
        marker: &UnrecordedMarker,
    ) -> Result<(), StoreError> {
        write_json_synced(&self.layout.unrecorded_marker(task), marker)
    }

    /// Notes that `journal`'s task runs a command or a turn between the
    /// two looks of a sweep. Not synced: it is for a process that ends
    /// (the page cache outlives it), as the stat cache it points to.
    pub fn write_sweep_journal(&self, journal: &SweepJournal) -> Result<(), StoreError> {
        let path = self.layout.sweep_journal(&journal.ctx.task_id);
        let bytes =
            serde_json::to_vec_pretty(journal).map_err(|e| StoreError::Index(e.to_string()))?;
        if let Some(dir) = path.parent() {
            disk::create_dir_all(dir).map_err(|e| io_err("creating", dir, &e))?;
        }
        disk::write_atomic(&path, &bytes).map_err(|e| io_err("writing", &path, &e))
    }

    /// Removes a task's sweep journal; an absent one is not an error.
    pub fn remove_sweep_journal(&self, task: &TaskId) -> Result<(), StoreError> {
        Self::remove_state_file(&self.layout.sweep_journal(task))
    }

    /// Every sweep journal left, oldest first, with those that cannot be
    /// read (by their file).
    pub fn sweep_journals(&self) -> Result<Vec<JournalFile<SweepJournal>>, StoreError> {
        let dir = self.layout.sweep_journal_dir();
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err("listing", &dir, &e)),
        };
        let mut found = Vec::new();
        for entry in entries {
            let path = entry.map_err(|e| io_err("listing", &dir, &e))?.path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let content = fs::read(&path).map_err(|e| e.to_string()).and_then(|b| {
                serde_json::from_slice::<SweepJournal>(&b).map_err(|e| e.to_string())
            });
            found.push(JournalFile { path, content });
        }
        found.sort_by_key(|f| f.content.as_ref().map(|j| j.began_at).ok());
        Ok(found)
    }

    // ---- config -----------------------------------------------------------

    /// Writes `workspace.json` (synced; the old file stays until the new one is complete).
    pub fn save_config(&self, config: &WorkspaceConfig) -> Result<(), StoreError> {
        let path = self.layout.config_file();
        let bytes = config_bytes(config)?;
        disk::write_atomic_synced(&path, &bytes).map_err(|e| io_err("writing config", &path, &e))
    }

    /// Writes a small state file under `.cocode/` (lease set, markers).
    pub fn write_state_file(&self, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        if !path.starts_with(self.layout.cocode_dir()) {
            return Err(StoreError::Io {
                message: format!("state files live under .cocode/ ({})", path.display()),
                kind: None,
            });
        }
        if let Some(dir) = path.parent() {
            disk::create_dir_all(dir).map_err(|e| io_err("creating", dir, &e))?;
        }
        disk::write_atomic_synced(path, bytes).map_err(|e| io_err("writing", path, &e))
    }

    /// Removes a state file written by [`Self::write_state_file`]; an
    /// absent one is not an error.
    pub fn remove_state(&self, path: &Path) -> Result<(), StoreError> {
        if !path.starts_with(self.layout.cocode_dir()) {
            return Err(StoreError::Io {
                message: format!("state files live under .cocode/ ({})", path.display()),
                kind: None,
            });
        }
        Self::remove_state_file(path)
    }

    /// Writes `locks/edit_locks.json` (not synced: it is read only after a
    /// crash, for post-mortem, and discarded at the next start).
    pub fn write_lease_file(&self, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.layout.edit_locks_file();
        if let Some(dir) = path.parent() {
            disk::create_dir_all(dir).map_err(|e| io_err("creating", dir, &e))?;
        }
        disk::write_atomic(&path, bytes).map_err(|e| io_err("writing", &path, &e))
    }

    /// Removes a probe or state file under `.cocode/`.
    pub(crate) fn remove_state_file(path: &Path) -> Result<(), StoreError> {
        disk::remove_file(path).map_err(|e| io_err("removing", path, &e))
    }

    /// Creates an empty file that must not exist (the case probe).
    pub(crate) fn create_probe(path: &Path) -> Result<(), StoreError> {
        disk::create_new_empty(path).map_err(|e| io_err("creating probe", path, &e))
    }
}

/// The bytes of `workspace.json` for `config` (the one place its format is
/// written; a new workspace made from a brick starts with it too).
pub fn config_bytes(config: &WorkspaceConfig) -> Result<Vec<u8>, StoreError> {
    let mut bytes =
        serde_json::to_vec_pretty(config).map_err(|e| StoreError::Index(e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// A small JSON state file, or nothing when it is absent.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, StoreError> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StoreError::Index(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err("reading", path, &e)),
    }
}

/// Writes a small JSON state file, synced, creating its folder.
fn write_json_synced<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| StoreError::Index(e.to_string()))?;
    if let Some(dir) = path.parent() {
        disk::create_dir_all(dir).map_err(|e| io_err("creating", dir, &e))?;
    }
    disk::write_atomic_synced(path, &bytes).map_err(|e| io_err("writing", path, &e))
}
