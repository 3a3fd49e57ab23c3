//! cocode's small state files: `workspace.json`, retention markers, the
//! lease file, other state under `.cocode/` and the case probe.

use std::fs;
use std::io;
use std::path::Path;

use cocode_core::gate::StoreError;
use cocode_core::ids::TaskId;
use cocode_core::workspace::WorkspaceConfig;

use super::files::io_err;
use super::format::RetentionMarker;
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
