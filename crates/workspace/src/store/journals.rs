//! The write and rollback journals on disk: writing (through spare
//! journals kept to carry the next ones), listing, retiring, removing and
//! abandoning them.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use cocode_core::gate::StoreError;
use cocode_core::ids::OpId;

use super::files::{io_err, read_dir_sorted};
use super::format::{Journal, JournalFile, RollbackJournal, WriteJournal};
use super::history::{CHECKPOINT_OPERATIONS, HistoryStore, Spare};
use crate::disk;

/// Every `<op_id>.json` journal in `dir`, oldest op first (op ids sort by time).
fn read_journals<J: Journal>(dir: &Path) -> Result<Vec<JournalFile<J>>, StoreError> {
    let mut out = Vec::new();
    for path in read_dir_sorted(dir)? {
        let is_journal = path.extension().is_some_and(|e| e == "json") && path.is_file();
        if !is_journal {
            continue;
        }
        let content = fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<J>(&b).map_err(|e| e.to_string()))
            .and_then(|j| {
                let expected = format!("{}.json", j.op_id().as_str());
                if path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy() == expected)
                {
                    Ok(j)
                } else {
                    Err(format!(
                        "journal names op {} but the file is not {expected}",
                        j.op_id()
                    ))
                }
            });
        out.push(JournalFile { path, content });
    }
    Ok(out)
}

/// Settled journals kept as spares; more are removed. A checkpoint
/// settles up to [`CHECKPOINT_OPERATIONS`] journals at once, and each
/// becomes a spare that carries one of the next ones.
const SPARE_JOURNALS: usize = CHECKPOINT_OPERATIONS + 4;

/// Numbers spare journal names within this process.
static SPARE_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether `name` is a spare journal's file name in `journal/writes/`.
fn is_spare_journal(name: &str) -> bool {
    name.starts_with(".spare-") && name.ends_with(".journal")
}

impl HistoryStore {
    // ---- write journals ---------------------------------------------------

    /// Writes a journal (temp + rename); returns its path for the barrier.
    /// The temp file is a spare (a settled journal renamed away) when one
    /// is at hand: each operation then moves names instead of allocating
    /// an inode and freeing another. A spare is never a `.json` file, so
    /// recovery never reads one; a spare that fails is removed and a new
    /// temp file used.
    pub fn write_journal(&self, journal: &WriteJournal) -> Result<PathBuf, StoreError> {
        let path = self.layout.write_journal(&journal.op_id);
        let bytes = serde_json::to_vec(journal).map_err(|e| StoreError::Index(e.to_string()))?;
        let spare = self.durable_spare();
        if let Some(spare) = spare {
            match disk::write_atomic_reusing(&spare, &path, &bytes) {
                Ok(()) => return Ok(path),
                Err(e) => {
                    tracing::debug!(spare = %spare.display(), error = %e, "a spare journal could not be reused");
                    let _ = disk::remove_file(&spare);
                }
            }
        }
        disk::write_atomic(&path, &bytes).map_err(|e| io_err("writing journal", &path, &e))?;
        Ok(path)
    }

    /// A spare whose rename is durable, if one is at hand (a barrier that
    /// synced the journal folder after its rename has marked it, see
    /// [`Self::spares_made_durable`]). Spares are retired one per
    /// operation, after its barrier, so the next one finds the spare
    /// retired the operation before.
    fn durable_spare(&self) -> Option<PathBuf> {
        let mut spares = self.spares();
        let i = spares.iter().rposition(|s| s.durable)?;
        Some(spares.remove(i).path)
    }

    /// Marks every spare durable: the caller synced the journal folder
    /// after they were renamed.
    pub(crate) fn spares_made_durable(&self) {
        for spare in self.spares().iter_mut() {
            spare.durable = true;
        }
    }

    /// Takes over the spare journals a process left in `journal/writes/`
    /// (up to [`SPARE_JOURNALS`]; the rest are removed). Called by recovery,
    /// which the one writing process runs first.
    pub fn adopt_spare_journals(&self) -> Result<(), StoreError> {
        let dir = self.layout.write_journal_dir();
        let mut spares = self.spares();
        spares.clear();
        for path in read_dir_sorted(&dir)? {
            let spare = path
                .file_name()
                .is_some_and(|n| is_spare_journal(&n.to_string_lossy()));
            if !spare {
                continue;
            }
            if spares.len() < SPARE_JOURNALS && path.is_file() {
                // Its rename may still be in the cache of the system.
                spares.push(Spare {
                    path,
                    durable: false,
                });
            } else {
                disk::remove_file(&path).map_err(|e| io_err("removing", &path, &e))?;
            }
        }
        Ok(())
    }

    /// Every pending write journal, oldest op first.
    pub fn write_journals(&self) -> Result<Vec<JournalFile>, StoreError> {
        read_journals(&self.layout.write_journal_dir())
    }

    /// Writes a rollback journal (temp + rename); returns its path.
    pub fn write_rollback_journal(&self, journal: &RollbackJournal) -> Result<PathBuf, StoreError> {
        let path = self.layout.rollback_journal(&journal.op_id);
        let bytes = serde_json::to_vec(journal).map_err(|e| StoreError::Index(e.to_string()))?;
        disk::write_atomic(&path, &bytes).map_err(|e| io_err("writing journal", &path, &e))?;
        Ok(path)
    }

    /// Every pending rollback journal, oldest op first.
    pub fn rollback_journals(&self) -> Result<Vec<JournalFile<RollbackJournal>>, StoreError> {
        read_journals(&self.layout.journal_dir())
    }

    pub fn remove_rollback_journal(&self, op: &OpId) -> Result<(), StoreError> {
        let path = self.layout.rollback_journal(op);
        disk::remove_file(&path).map_err(|e| io_err("removing journal", &path, &e))
    }

    /// Moves an interrupted rollback's journal out of the way after a person
    /// accepted the current state; it stays as evidence.
    pub fn abandon_rollback_journal(&self, op: &OpId) -> Result<(), StoreError> {
        let from = self.layout.rollback_journal(op);
        let dir = self.layout.journal_dir().join("abandoned");
        let to = dir.join(format!("{}.json", op.as_str()));
        disk::create_dir_all(&dir).map_err(|e| io_err("creating", &dir, &e))?;
        disk::rename(&from, &to).map_err(|e| io_err("abandoning journal", &from, &e))
    }

    /// Removes a journal (a refused operation's: nothing of it stays).
    pub fn remove_write_journal(&self, op: &OpId) -> Result<(), StoreError> {
        let path = self.layout.write_journal(op);
        disk::remove_file(&path).map_err(|e| io_err("removing journal", &path, &e))
    }

    /// Retires a settled journal: renamed to a spare that carries a later
    /// journal while fewer than [`SPARE_JOURNALS`] are kept, removed
    /// otherwise.
    pub fn retire_write_journal(&self, op: &OpId) -> Result<(), StoreError> {
        let path = self.layout.write_journal(op);
        let mut spares = self.spares();
        if spares.len() < SPARE_JOURNALS {
            let n = SPARE_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let spare = self
                .layout
                .write_journal_dir()
                .join(format!(".spare-{}-{n}.journal", std::process::id()));
            match disk::rename(&path, &spare) {
                Ok(()) => {
                    spares.push(Spare {
                        path: spare,
                        durable: false,
                    });
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                // Removed below instead.
                Err(_) => {}
            }
        }
        drop(spares);
        self.remove_write_journal(op)
    }

    /// Moves a journal out of the way after a person accepted the current
    /// state of its paths; it stays on disk as evidence.
    pub fn abandon_write_journal(&self, op: &OpId) -> Result<(), StoreError> {
        let from = self.layout.write_journal(op);
        let dir = self.layout.abandoned_journal_dir();
        let to = dir.join(format!("{}.json", op.as_str()));
        disk::create_dir_all(&dir).map_err(|e| io_err("creating", &dir, &e))?;
        disk::rename(&from, &to).map_err(|e| io_err("abandoning journal", &from, &e))
    }
}
