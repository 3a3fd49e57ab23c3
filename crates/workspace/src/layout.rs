//! Where everything lives under `<workspace>/.cocode/` (one place, so the
//! store, the gate, recovery and the integrity checker agree).

use std::path::{Path, PathBuf};

use cocode_core::ids::{OpId, TaskId};
use cocode_core::path::{COCODE_DIR, PathKey};
use cocode_core::snapshot::ContentHash;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    /// `root` is the canonical workspace root.
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }

    pub fn workspace_root(&self) -> &Path {
        &self.root
    }

    pub fn cocode_dir(&self) -> PathBuf {
        self.root.join(COCODE_DIR)
    }

    /// `.cocode/.gitignore`: `*`, so git never sees cocode's own files.
    pub fn cocode_ignore_file(&self) -> PathBuf {
        self.cocode_dir().join(".gitignore")
    }

    pub fn config_dir(&self) -> PathBuf {
        self.cocode_dir().join("config")
    }

    pub fn config_file(&self) -> PathBuf {
        self.config_dir().join("workspace.json")
    }

    pub fn locks_dir(&self) -> PathBuf {
        self.cocode_dir().join("locks")
    }

    pub fn edit_locks_file(&self) -> PathBuf {
        self.locks_dir().join("edit_locks.json")
    }

    pub fn history_dir(&self) -> PathBuf {
        self.cocode_dir().join("history")
    }

    pub fn objects_dir(&self) -> PathBuf {
        self.history_dir().join("objects")
    }

    /// A person's discards, so they can be undone.
    pub fn discards_file(&self) -> PathBuf {
        self.cocode_dir().join("discards.json")
    }

    /// The sweep's stat cache as the last process left it.
    pub fn sweep_cache_file(&self) -> PathBuf {
        self.cocode_dir().join("sweep.cache")
    }

    /// What changed in the stat cache since [`Self::sweep_cache_file`] was
    /// written (the look before a command, kept cheaply).
    pub fn sweep_delta_file(&self) -> PathBuf {
        self.cocode_dir().join("sweep.cache.delta")
    }

    /// Small blobs packed together (see `pack`).
    pub fn packs_dir(&self) -> PathBuf {
        self.history_dir().join("packs")
    }

    pub fn blob_file(&self, hash: &ContentHash) -> PathBuf {
        let hex = hash.to_hex();
        self.objects_dir().join(&hex[..2]).join(hex)
    }

    pub fn files_dir(&self) -> PathBuf {
        self.history_dir().join("files")
    }

    /// The shard of the path indexes a path's records are appended to,
    /// `files/shard-<xx>.jsonl`, `xx` the first byte of the path's key in
    /// hex: at most 256 files, however many paths the history knows. A path
    /// with an index in a form of earlier versions ([`Self::path_index`],
    /// [`Self::folder_path_index`]) keeps it; `HistoryStore` decides which
    /// file a path uses.
    pub fn path_index_shard(&self, key: &PathKey) -> PathBuf {
        let hex = key.to_hex();
        self.files_dir().join(format!("shard-{}.jsonl", &hex[..2]))
    }

    /// A path's index as versions before the shards kept it, one file per
    /// path: `files/<key>.jsonl`. Such an index is read and appended to
    /// where it is.
    pub fn path_index(&self, key: &PathKey) -> PathBuf {
        self.files_dir().join(format!("{}.jsonl", key.to_hex()))
    }

    /// A path's index as still earlier versions kept it:
    /// `files/<key>/versions.jsonl`, a folder per path. Such an index is
    /// read and appended to where it is.
    pub fn folder_path_index(&self, key: &PathKey) -> PathBuf {
        self.files_dir().join(key.to_hex()).join("versions.jsonl")
    }

    pub fn tasks_dir(&self) -> PathBuf {
        self.history_dir().join("tasks")
    }

    pub fn task_dir(&self, task: &TaskId) -> PathBuf {
        self.tasks_dir().join(task.as_str())
    }

    pub fn task_index(&self, task: &TaskId) -> PathBuf {
        self.task_dir(task).join("snapshots.jsonl")
    }

    pub fn task_record(&self, task: &TaskId) -> PathBuf {
        self.task_dir(task).join("task.json")
    }

    pub fn retention_marker(&self, task: &TaskId) -> PathBuf {
        self.task_dir(task).join("retention.json")
    }

    /// A sweep of the task could not finish (see
    /// [`crate::store::UnrecordedMarker`]).
    pub fn unrecorded_marker(&self, task: &TaskId) -> PathBuf {
        self.task_dir(task).join("unrecorded.json")
    }

    /// Sweeps whose command or turn is running (see
    /// [`crate::store::SweepJournal`]).
    pub fn sweep_journal_dir(&self) -> PathBuf {
        self.journal_dir().join("sweeps")
    }

    pub fn sweep_journal(&self, task: &TaskId) -> PathBuf {
        self.sweep_journal_dir()
            .join(format!("{}.json", task.as_str()))
    }

    /// A file whose timestamps the gate sets to read the file system's own
    /// clock (see `disk::fs_clock`); its content is never used.
    /// The lock the one process writing the workspace holds.
    pub fn writer_lock(&self) -> PathBuf {
        self.cocode_dir().join("writer.lock")
    }

    pub fn clock_file(&self) -> PathBuf {
        self.history_dir().join("clock")
    }

    pub fn journal_dir(&self) -> PathBuf {
        self.history_dir().join("journal")
    }

    pub fn rollback_journal(&self, op: &OpId) -> PathBuf {
        self.journal_dir().join(format!("{}.json", op.as_str()))
    }

    pub fn write_journal_dir(&self) -> PathBuf {
        self.journal_dir().join("writes")
    }

    pub fn write_journal(&self, op: &OpId) -> PathBuf {
        self.write_journal_dir()
            .join(format!("{}.json", op.as_str()))
    }

    /// Journals a person abandoned: kept as evidence, never replayed.
    pub fn abandoned_journal_dir(&self) -> PathBuf {
        self.write_journal_dir().join("abandoned")
    }

    pub fn operations_dir(&self) -> PathBuf {
        self.cocode_dir().join("operations")
    }

    /// Every folder the layout needs, parents first.
    pub fn folders(&self) -> Vec<PathBuf> {
        vec![
            self.cocode_dir(),
            self.config_dir(),
            self.locks_dir(),
            self.history_dir(),
            self.objects_dir(),
            self.packs_dir(),
            self.files_dir(),
            self.tasks_dir(),
            self.journal_dir(),
            self.write_journal_dir(),
            self.operations_dir(),
        ]
    }
}
