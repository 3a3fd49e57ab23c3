//! The formats of the history's journals and markers: write and rollback
//! journals, the blobs a write journal carries, retention markers and the
//! header of an earlier version's path index.

use std::path::PathBuf;

use cocode_core::gate::StoreError;
use cocode_core::gate::TaskContext;
use cocode_core::ids::{AttemptNo, OpId, TaskId, Timestamp};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{ContentHash, EditSnapshot, Form};
use serde::{Deserialize, Serialize};

/// Current format version of `journal/writes/<op_id>.json` (2: the
/// journal carries its operation's small new blobs; version 1 journals,
/// which carry none, read the same).
pub const WRITE_JOURNAL_VERSION: u32 = 2;

/// A write-commit journal: the complete records of one gate operation,
/// written before any workspace file is touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteJournal {
    pub version: u32,
    pub op_id: OpId,
    pub created_at: Timestamp,
    pub records: Vec<EditSnapshot>,
    /// Workspace-relative temp files the operation stages next to its
    /// targets; recovery removes any that a crash left behind.
    #[serde(default)]
    pub staged: Vec<String>,
    /// The operation's new blobs of at most [`HELD_BLOB_MAX`] bytes (up
    /// to [`JOURNAL_BLOBS_MAX`] in all): the journal is their durable copy
    /// until a checkpoint has put them in a pack (see
    /// [`HistoryStore::hold`](super::HistoryStore::hold)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blobs: Vec<JournalBlob>,
}

/// A blob a write journal carries, its content in standard base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalBlob {
    pub hash: ContentHash,
    pub base64: String,
}

impl JournalBlob {
    pub fn of(bytes: &[u8]) -> Self {
        Self::with_hash(ContentHash::of(bytes), bytes)
    }

    /// [`Self::of`] for content whose hash the caller has.
    pub fn with_hash(hash: ContentHash, bytes: &[u8]) -> Self {
        use base64::Engine as _;
        Self {
            hash,
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// The content, checked against its hash.
    pub fn content(&self) -> Result<Vec<u8>, StoreError> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.base64)
            .map_err(|_| StoreError::CorruptBlob(self.hash))?;
        if ContentHash::of(&bytes) == self.hash {
            Ok(bytes)
        } else {
            Err(StoreError::CorruptBlob(self.hash))
        }
    }
}

/// A new blob at most this large is carried by its operation's journal
/// and put in a pack at the next checkpoint; a larger one is stored
/// before the journal is written.
pub const HELD_BLOB_MAX: usize = 64 * 1024;

/// The most blob bytes one journal carries; an operation's further new
/// blobs are stored before its journal is written.
pub const JOURNAL_BLOBS_MAX: usize = 1024 * 1024;

/// Current format version of `journal/<op_id>.json` (rollback journals).
pub const ROLLBACK_JOURNAL_VERSION: u32 = 1;

/// One path of a rollback: the state it is in before, the state it goes to,
/// and the staging file holding the target content next to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RollbackItem {
    pub path: NormalizedPath,
    pub prior: Option<ContentHash>,
    pub target: Option<ContentHash>,
    /// Workspace-relative staging file (restorations only; none for an
    /// empty folder, which is made in place).
    #[serde(default)]
    pub staging: Option<String>,
    /// What the path is now when not a plain file (a link, a FIFO…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior_form: Option<Form>,
    /// What the path goes back to when not a plain file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_form: Option<Form>,
}

/// A rollback journal, written before any file is touched; replayed at
/// startup when a rollback was interrupted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RollbackJournal {
    pub version: u32,
    pub op_id: OpId,
    pub task_id: TaskId,
    pub created_at: Timestamp,
    pub items: Vec<RollbackItem>,
    /// The rollback's own records (origin `rollback`), appended once every
    /// item is at its target.
    pub records: Vec<EditSnapshot>,
}

/// `tasks/<task_id>/retention.json`: retention removed this task's
/// snapshots; rollback is disabled with this reason. The task record stays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetentionMarker {
    pub version: u32,
    pub removed_at: Timestamp,
    pub reason: String,
    pub snapshots_removed: usize,
    pub bytes_freed: u64,
}

/// `journal/sweeps/<task_id>.json`: the task's command or turn is
/// running between the two looks of a sweep, and the stat cache holds the
/// look before it. Removed when the look after it is recorded; found at
/// the next start (cocode ended in between), the look after it is taken
/// then and recorded with the task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepJournal {
    pub version: u32,
    pub ctx: TaskContext,
    pub began_at: Timestamp,
}

pub const SWEEP_JOURNAL_VERSION: u32 = 1;

/// `tasks/<task_id>/unrecorded.json`: a sweep of the task could not
/// finish, so its changes are not all recorded; rollback is refused with
/// this reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnrecordedMarker {
    pub version: u32,
    pub at: Timestamp,
    pub attempt_no: AttemptNo,
    pub reason: String,
}

/// The first line of a path index in the one-file-per-path forms of
/// earlier versions (`files/<path_key>.jsonl`,
/// `files/<path_key>/versions.jsonl`); a shard has none, each of its
/// records names its paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PathIndexHeader {
    pub(super) path: NormalizedPath,
}

/// One journal file as found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalFile<J = WriteJournal> {
    pub path: PathBuf,
    /// The parsed journal, or why it could not be read (reported, never deleted).
    pub content: Result<J, String>,
}

/// Journals name their operation; the file name must agree.
pub trait Journal: serde::de::DeserializeOwned {
    fn op_id(&self) -> &OpId;
}

impl Journal for WriteJournal {
    fn op_id(&self) -> &OpId {
        &self.op_id
    }
}

impl Journal for RollbackJournal {
    fn op_id(&self) -> &OpId {
        &self.op_id
    }
}
