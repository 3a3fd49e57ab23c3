//! Stable error codes shared by the gate, the tool protocol and the UI.
//!
//! Codes are part of the wire contract: agents, traces and tests match on
//! them, so a variant's text never changes once released.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The workspace error codes (`WORKSPACE_*`), returned by the gate and carried
/// unchanged into tool results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WorkspaceErrorCode {
    #[serde(rename = "WORKSPACE_PATH_INVALID")]
    PathInvalid,
    #[serde(rename = "WORKSPACE_PATH_NOT_WRITABLE")]
    PathNotWritable,
    #[serde(rename = "WORKSPACE_OUTSIDE_WORKSPACE")]
    OutsideWorkspace,
    #[serde(rename = "WORKSPACE_FILE_NOT_FOUND")]
    FileNotFound,
    #[serde(rename = "WORKSPACE_FILE_CONFLICT")]
    FileConflict,
    #[serde(rename = "WORKSPACE_FILE_TYPE_CONFLICT")]
    FileTypeConflict,
    #[serde(rename = "WORKSPACE_PATCH_NOT_FOUND")]
    PatchNotFound,
    #[serde(rename = "WORKSPACE_REVISION_CONFLICT")]
    RevisionConflict,
    #[serde(rename = "WORKSPACE_SOURCE_LIMIT")]
    SourceLimit,
    #[serde(rename = "WORKSPACE_LOCKED")]
    Locked,
    #[serde(rename = "WORKSPACE_ROLLBACK_IN_PROGRESS")]
    RollbackInProgress,
    #[serde(rename = "WORKSPACE_RECOVERY_PENDING")]
    RecoveryPending,
    #[serde(rename = "WORKSPACE_HELD_FOR_APPROVAL")]
    HeldForApproval,
    #[serde(rename = "WORKSPACE_BINARY_FILE")]
    BinaryFile,
    /// The disk failed under an operation (an I/O error, a full disk, a
    /// sync that failed); the same call may work later.
    #[serde(rename = "WORKSPACE_IO_FAILED")]
    IoFailed,
    /// A look at the workspace around a command or an agent's turn could
    /// not finish (it ran out of time, was stopped, or met more files than
    /// it tracks): the task's changes are not all recorded.
    #[serde(rename = "WORKSPACE_NOT_FULLY_RECORDED")]
    NotFullyRecorded,
}

impl WorkspaceErrorCode {
    pub const ALL: [Self; 16] = [
        Self::PathInvalid,
        Self::PathNotWritable,
        Self::OutsideWorkspace,
        Self::FileNotFound,
        Self::FileConflict,
        Self::FileTypeConflict,
        Self::PatchNotFound,
        Self::RevisionConflict,
        Self::SourceLimit,
        Self::Locked,
        Self::RollbackInProgress,
        Self::RecoveryPending,
        Self::HeldForApproval,
        Self::BinaryFile,
        Self::IoFailed,
        Self::NotFullyRecorded,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PathInvalid => "WORKSPACE_PATH_INVALID",
            Self::PathNotWritable => "WORKSPACE_PATH_NOT_WRITABLE",
            Self::OutsideWorkspace => "WORKSPACE_OUTSIDE_WORKSPACE",
            Self::FileNotFound => "WORKSPACE_FILE_NOT_FOUND",
            Self::FileConflict => "WORKSPACE_FILE_CONFLICT",
            Self::FileTypeConflict => "WORKSPACE_FILE_TYPE_CONFLICT",
            Self::PatchNotFound => "WORKSPACE_PATCH_NOT_FOUND",
            Self::RevisionConflict => "WORKSPACE_REVISION_CONFLICT",
            Self::SourceLimit => "WORKSPACE_SOURCE_LIMIT",
            Self::Locked => "WORKSPACE_LOCKED",
            Self::RollbackInProgress => "WORKSPACE_ROLLBACK_IN_PROGRESS",
            Self::RecoveryPending => "WORKSPACE_RECOVERY_PENDING",
            Self::HeldForApproval => "WORKSPACE_HELD_FOR_APPROVAL",
            Self::BinaryFile => "WORKSPACE_BINARY_FILE",
            Self::IoFailed => "WORKSPACE_IO_FAILED",
            Self::NotFullyRecorded => "WORKSPACE_NOT_FULLY_RECORDED",
        }
    }

    /// Whether the same call may succeed later without a change of input.
    pub const fn retryable(self) -> bool {
        matches!(
            self,
            Self::RevisionConflict | Self::Locked | Self::RollbackInProgress | Self::IoFailed
        )
    }
}

impl fmt::Display for WorkspaceErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_equal_the_display_names() {
        for code in WorkspaceErrorCode::ALL {
            let wire = serde_json::to_string(&code).unwrap();
            assert_eq!(wire, format!("\"{}\"", code.as_str()));
            let back: WorkspaceErrorCode = serde_json::from_str(&wire).unwrap();
            assert_eq!(back, code);
        }
    }

    #[test]
    fn only_transient_conditions_are_retryable() {
        let retryable: Vec<_> = WorkspaceErrorCode::ALL
            .into_iter()
            .filter(|c| c.retryable())
            .map(WorkspaceErrorCode::as_str)
            .collect();
        assert_eq!(
            retryable,
            [
                "WORKSPACE_REVISION_CONFLICT",
                "WORKSPACE_LOCKED",
                "WORKSPACE_ROLLBACK_IN_PROGRESS",
                "WORKSPACE_IO_FAILED"
            ]
        );
    }
}
