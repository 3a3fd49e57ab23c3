//! Contracts of the workspace gate, the snapshot store and edit leases.

use std::fmt;
use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::error::WorkspaceErrorCode;
use crate::ids::{AttemptNo, SessionId, TaskId, Timestamp};
use crate::path::NormalizedPath;
use crate::snapshot::{ContentHash, EditSnapshot, PathTransition};

/// Who an agent edit belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TaskContext {
    pub task_id: TaskId,
    pub session_id: SessionId,
    pub attempt_no: AttemptNo,
}

/// An edit the gate held instead of applying (an existing test file would change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingChange {
    pub ctx: TaskContext,
    pub op: GateOp,
    /// The projected transitions that touched protected paths.
    pub protected: Vec<PathTransition>,
}

/// A gate operation.
#[derive(Clone, PartialEq, Eq)]
pub enum GateOp {
    Write {
        path: NormalizedPath,
        bytes: Vec<u8>,
    },
    Delete {
        path: NormalizedPath,
    },
    Rename {
        from: NormalizedPath,
        to: NormalizedPath,
    },
    /// Several operations as one: planned together, refused together, one
    /// journal and one durability barrier, consecutive seqs in the order
    /// given. Each path is touched by one item only (no item equals or
    /// contains another's path) and an item is never itself a batch; the
    /// gate refuses either with `WORKSPACE_FILE_CONFLICT`.
    Batch {
        ops: Vec<GateOp>,
    },
}

impl GateOp {
    /// Every path the operation touches (leases cover all of them).
    pub fn touched_paths(&self) -> Vec<&NormalizedPath> {
        match self {
            Self::Write { path, .. } | Self::Delete { path } => vec![path],
            Self::Rename { from, to } => vec![from, to],
            Self::Batch { ops } => ops.iter().flat_map(GateOp::touched_paths).collect(),
        }
    }
}

impl fmt::Debug for GateOp {
    /// Never prints file contents.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Write { path, bytes } => f
                .debug_struct("Write")
                .field("path", path)
                .field("bytes", &bytes.len())
                .finish(),
            Self::Delete { path } => f.debug_struct("Delete").field("path", path).finish(),
            Self::Rename { from, to } => f
                .debug_struct("Rename")
                .field("from", from)
                .field("to", to)
                .finish(),
            Self::Batch { ops } => f.debug_struct("Batch").field("ops", ops).finish(),
        }
    }
}

/// What a gate operation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateOutcome {
    /// Applied; the snapshots were stored before the files changed.
    Applied { snapshots: Vec<EditSnapshot> },
    /// Held for a person's approval: content unchanged, no snapshot.
    Held { pending_change: PendingChange },
}

/// A refused gate operation, with its stable code. Nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message} ({operation} {path})")]
pub struct GateError {
    pub code: WorkspaceErrorCode,
    pub operation: &'static str,
    pub path: String,
    pub message: String,
    /// The kind of the disk error behind it, when a disk error caused it.
    pub io_kind: Option<std::io::ErrorKind>,
}

/// The one write path for agent edits (C-02: no agent edit leaves no snapshot).
pub trait WorkspaceFileGate: Send + Sync {
    fn apply(&self, ctx: &TaskContext, op: GateOp) -> Result<GateOutcome, GateError>;
    /// A person's save from the editor: no snapshot; later rollbacks treat it
    /// as a conflict rather than overwrite it.
    fn save_user_file(&self, path: &NormalizedPath, bytes: &[u8]) -> Result<(), GateError>;
}

/// Errors of the history store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("blob {0} is missing")]
    MissingBlob(ContentHash),
    #[error("blob {0} does not hash to its name")]
    CorruptBlob(ContentHash),
    #[error("history index is unreadable: {0}")]
    Index(String),
    /// The disk failed under the history; `kind` is the disk error's own.
    #[error("history I/O failed: {message}")]
    Io {
        message: String,
        kind: Option<std::io::ErrorKind>,
    },
}

/// Read access to the content-addressed history.
pub trait SnapshotStore: Send + Sync {
    fn snapshots_of_task(&self, task: &TaskId) -> Result<Vec<EditSnapshot>, StoreError>;
    fn last_snapshot_of_path(
        &self,
        path: &NormalizedPath,
    ) -> Result<Option<EditSnapshot>, StoreError>;
    fn read_blob(&self, hash: &ContentHash) -> Result<Vec<u8>, StoreError>;
    /// Unified diff (3 context lines) between two stored states of a path.
    fn diff_between(
        &self,
        path: &NormalizedPath,
        before: Option<&ContentHash>,
        after: Option<&ContentHash>,
    ) -> Result<String, StoreError>;
}

/// One held lease.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EditLease {
    pub task_id: TaskId,
    pub session_id: SessionId,
    pub renewed_at: Timestamp,
}

/// Why leases could not be acquired.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    #[error("WORKSPACE_LOCKED: {path} is leased by task {holder}")]
    Locked {
        path: NormalizedPath,
        holder: TaskId,
    },
    #[error("lease acquisition was cancelled")]
    Cancelled,
}

/// A set of acquired leases; dropping it releases them.
pub trait LeaseGuard: Send {}

/// Edit leases: one lease per gate operation, all-or-nothing over every
/// touched path, strict FIFO, containment conflicts.
#[async_trait::async_trait]
pub trait EditLockRegistry: Send + Sync {
    /// Waits in FIFO order until every path is free, then holds them all.
    async fn acquire(
        &self,
        paths: &[NormalizedPath],
        ctx: &TaskContext,
    ) -> Result<Box<dyn LeaseGuard>, LeaseError>;
    fn release_session(&self, session: &SessionId);
    fn release_task(&self, task: &TaskId);
    fn leases(&self) -> Vec<(NormalizedPath, EditLease)>;
}

/// The only way to run a gate operation under leases: acquire, run, release
/// on every exit (return, refusal, error or cancellation — the guard drops).
pub async fn with_leases<F, R>(
    registry: &dyn EditLockRegistry,
    paths: &[NormalizedPath],
    ctx: &TaskContext,
    action: F,
) -> Result<R, LeaseError>
where
    F: Future<Output = R>,
{
    let guard = registry.acquire(paths, ctx).await?;
    let out = action.await;
    drop(guard);
    Ok(out)
}
