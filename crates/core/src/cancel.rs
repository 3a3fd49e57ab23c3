//! Why a session is cancelled: a name both the agent contract and the task
//! state machine use, kept apart so that neither depends on the other.

use serde::{Deserialize, Serialize};

/// Why a session is cancelled (closed set). Cancel is idempotent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CancelReason {
    UserStopped,
    UserRolledBack,
    ApprovalRejected,
    TaskFailed,
    WorkspaceClosing,
}
