//! What the next barrier makes durable, the barrier itself, and the
//! journals it lets go ([`Gate::flush`]).

use std::io;
use std::path::PathBuf;

use cocode_core::gate::GateError;

use super::errors::{io_failed, store_failed};
use super::state::{Gate, GateState};
use crate::disk;

impl Gate {
    /// Makes committed operations durable and removes their journals.
    pub fn flush(&self) -> Result<(), GateError> {
        let mut st = self.lock();
        self.flush_locked(&mut st)
    }

    pub(super) fn flush_locked(&self, st: &mut GateState) -> Result<(), GateError> {
        self.store
            .checkpoint()
            .map_err(|e| store_failed("flush", &e))?;
        if st.settled_unsynced.is_empty()
            && st.rollbacks_unsynced.is_empty()
            && st.checkpointed_unsynced.is_empty()
            && !self.store.has_checkpointed()
        {
            return Ok(());
        }
        self.barrier(st)
            .map_err(|e| io_failed("flush", &format!("sync failed: {e}"), Some(e.kind())))?;
        self.remove_settled(st);
        Ok(())
    }

    /// Syncs everything noted since the last barrier.
    pub(super) fn barrier(&self, st: &mut GateState) -> io::Result<()> {
        let checkpointed = self.store.take_checkpointed();
        for file in checkpointed.blob_files {
            self.note_blob(st, file);
        }
        for file in checkpointed.index_files {
            self.note_appended(st, file);
        }
        st.checkpointed_unsynced.extend(checkpointed.ops);
        disk::barrier(
            &self.layout.cocode_dir(),
            &st.unsynced_files,
            &st.unsynced_dirs,
        )?;
        if st.unsynced_dirs.contains(&self.layout.write_journal_dir()) {
            self.store.spares_made_durable();
        }
        st.unsynced_files.clear();
        st.unsynced_dirs.clear();
        let settled = std::mem::take(&mut st.checkpointed_unsynced);
        st.settled_unsynced.extend(settled);
        for (path, id) in std::mem::take(&mut st.entries_seen) {
            if let Some(id) = id {
                st.durable_entries.insert(path, id);
            }
        }
        Ok(())
    }

    /// Notes a file written under a new name (a temp file renamed, a
    /// staged file): its content and its entry.
    pub(super) fn note_written(&self, st: &mut GateState, file: PathBuf) {
        self.note_entry_of(st, &file);
        st.unsynced_files.insert(file);
    }

    /// Notes a file appended to (an index, a pack): its content, and its
    /// entry when the file is not the one a barrier already made durable
    /// under that name (it was created since).
    pub(super) fn note_appended(&self, st: &mut GateState, file: PathBuf) {
        if !st.entries_seen.contains_key(&file) {
            let id = disk::entry_id(&file);
            st.entries_seen.insert(file.clone(), id);
            if id.is_none() || st.durable_entries.get(&file) != id.as_ref() {
                self.note_entry_of(st, &file);
            }
        }
        st.unsynced_files.insert(file);
    }

    /// Notes a stored blob: a loose one is a new file, a packed one an
    /// append.
    pub(super) fn note_blob(&self, st: &mut GateState, file: PathBuf) {
        if file.starts_with(self.layout.packs_dir()) {
            self.note_appended(st, file);
        } else {
            self.note_written(st, file);
        }
    }

    /// Notes that `path`'s entry in its folder changed (created, renamed
    /// to, renamed away, removed): the folder is synced at the next
    /// barrier, and so is each folder above it whose own entry is not known
    /// durable (a folder created since).
    pub(super) fn note_entry_of(&self, st: &mut GateState, path: &std::path::Path) {
        let root = self.layout.workspace_root();
        let mut entry = path;
        while let Some(dir) = entry.parent() {
            if !dir.starts_with(root) {
                break;
            }
            st.unsynced_dirs.insert(dir.to_path_buf());
            if dir == root || st.entries_seen.contains_key(dir) {
                break;
            }
            let id = disk::entry_id(dir);
            st.entries_seen.insert(dir.to_path_buf(), id);
            if id.is_some() && st.durable_entries.get(dir) == id.as_ref() {
                break;
            }
            entry = dir;
        }
    }

    pub(super) fn full_path(&self, dir: &[String], name: &str) -> PathBuf {
        let mut p = self.layout.workspace_root().to_path_buf();
        p.extend(dir);
        p.push(name);
        p
    }

    pub(super) fn remove_settled(&self, st: &mut GateState) {
        // The journals' folders change: the next barrier syncs them.
        for op in std::mem::take(&mut st.settled_unsynced) {
            self.note_entry_of(st, &self.layout.write_journal(&op));
            // A journal that cannot be removed now is settled by recovery later.
            if let Err(e) = self.store.retire_write_journal(&op) {
                tracing::warn!(op = %op, error = %e, "could not remove a settled write journal");
            }
        }
        for op in std::mem::take(&mut st.rollbacks_unsynced) {
            self.note_entry_of(st, &self.layout.rollback_journal(&op));
            if let Err(e) = self.store.remove_rollback_journal(&op) {
                tracing::warn!(op = %op, error = %e, "could not remove a finished rollback journal");
            }
        }
    }

    /// Finished operations (writes and rollbacks) whose journals wait for
    /// the next barrier.
    pub fn unsynced_operations(&self) -> usize {
        let st = self.lock();
        st.settled_unsynced.len()
            + st.rollbacks_unsynced.len()
            + st.checkpointed_unsynced.len()
            + self.store.held_operations()
    }
}
