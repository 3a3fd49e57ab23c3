//! cocode-core (layer L0): the pure domain every crate speaks — entities, the
//! task state machine, verification records and verdict, path keys, and the
//! twelve contract traits with their registries. No filesystem, process or
//! network access.

pub mod agent;
pub mod cancel;
pub mod clock;
pub mod disk_name;
pub mod error;
pub mod gate;
mod hex;
pub mod ids;
pub mod output;
pub mod path;
pub mod process;
pub mod registry;
pub mod services;
pub mod shown;
pub mod snapshot;
pub mod task;
pub mod verification;
pub mod words;
pub mod workspace;

pub use error::WorkspaceErrorCode;
pub use ids::{
    AcpAgentId, AttemptNo, OpId, ProviderId, RequestId, Seq, SessionId, SnapshotId, TaskId,
    Timestamp,
};
pub use path::{
    CaseSensitivity, NormalizeOptions, NormalizedPath, PathInvalid, PathKey, PathStyle,
    UnicodeSensitivity,
};
pub use registry::{CONTRACTS, ContractId, ContractRegistry, RegistryError};
pub use snapshot::{
    ContentHash, ContentHasher, EditSnapshot, SnapshotKind, SnapshotOrigin, Unkept,
};
pub use task::{
    CancelReason, CompletionMode, CompletionModePolicy, DelegatedTask, PendingApprovalKind,
    TaskEvent, TaskStatus, TaskTransition,
};
pub use verification::{VerificationRecord, VerificationVerdict};
