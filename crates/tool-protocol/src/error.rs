//! Tool error codes (stable wire strings) and the structured tool error.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every registry-level error code. Handlers may return their own codes
/// (e.g. `WORKSPACE_LOCKED`), which are carried unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ToolErrorCode {
    #[serde(rename = "TOOL_INVALID_REQUEST")]
    InvalidRequest,
    #[serde(rename = "TOOL_NOT_FOUND")]
    NotFound,
    #[serde(rename = "TOOL_VALIDATION_FAILED")]
    ValidationFailed,
    #[serde(rename = "TOOL_POLICY_DENIED")]
    PolicyDenied,
    #[serde(rename = "TOOL_APPROVAL_DENIED")]
    ApprovalDenied,
    #[serde(rename = "TOOL_CANCELLED")]
    Cancelled,
    #[serde(rename = "TOOL_TIMEOUT")]
    Timeout,
    #[serde(rename = "TOOL_INVALID_OPTIONS")]
    InvalidOptions,
    #[serde(rename = "TOOL_OUTPUT_LIMIT_EXCEEDED")]
    OutputLimitExceeded,
    #[serde(rename = "TOOL_OUTPUT_VALIDATION_FAILED")]
    OutputValidationFailed,
    #[serde(rename = "TOOL_RESULT_SERIALIZATION_FAILED")]
    ResultSerializationFailed,
    #[serde(rename = "TOOL_RESULT_VALIDATION_FAILED")]
    ResultValidationFailed,
    #[serde(rename = "TOOL_EXECUTION_FAILED")]
    ExecutionFailed,
    #[serde(rename = "TOOL_IDEMPOTENCY_CONFLICT")]
    IdempotencyConflict,
    #[serde(rename = "TOOL_EXECUTION_ABORTED")]
    ExecutionAborted,
    #[serde(rename = "TOOL_IDEMPOTENCY_PENDING")]
    IdempotencyPending,
    #[serde(rename = "TOOL_IDEMPOTENCY_UNKNOWN")]
    IdempotencyUnknown,
    #[serde(rename = "TOOL_IDEMPOTENCY_STORE_FAILED")]
    IdempotencyStoreFailed,
    #[serde(rename = "TOOL_EXECUTION_UNKNOWN")]
    ExecutionUnknown,
    #[serde(rename = "TOOL_LIST_CURSOR_INVALID")]
    ListCursorInvalid,
    #[serde(rename = "TOOL_LIST_CURSOR_REPEATED")]
    ListCursorRepeated,
    #[serde(rename = "TOOL_LIST_PAGE_LIMIT")]
    ListPageLimit,
}

impl ToolErrorCode {
    pub const ALL: [Self; 22] = [
        Self::InvalidRequest,
        Self::NotFound,
        Self::ValidationFailed,
        Self::PolicyDenied,
        Self::ApprovalDenied,
        Self::Cancelled,
        Self::Timeout,
        Self::InvalidOptions,
        Self::OutputLimitExceeded,
        Self::OutputValidationFailed,
        Self::ResultSerializationFailed,
        Self::ResultValidationFailed,
        Self::ExecutionFailed,
        Self::IdempotencyConflict,
        Self::ExecutionAborted,
        Self::IdempotencyPending,
        Self::IdempotencyUnknown,
        Self::IdempotencyStoreFailed,
        Self::ExecutionUnknown,
        Self::ListCursorInvalid,
        Self::ListCursorRepeated,
        Self::ListPageLimit,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "TOOL_INVALID_REQUEST",
            Self::NotFound => "TOOL_NOT_FOUND",
            Self::ValidationFailed => "TOOL_VALIDATION_FAILED",
            Self::PolicyDenied => "TOOL_POLICY_DENIED",
            Self::ApprovalDenied => "TOOL_APPROVAL_DENIED",
            Self::Cancelled => "TOOL_CANCELLED",
            Self::Timeout => "TOOL_TIMEOUT",
            Self::InvalidOptions => "TOOL_INVALID_OPTIONS",
            Self::OutputLimitExceeded => "TOOL_OUTPUT_LIMIT_EXCEEDED",
            Self::OutputValidationFailed => "TOOL_OUTPUT_VALIDATION_FAILED",
            Self::ResultSerializationFailed => "TOOL_RESULT_SERIALIZATION_FAILED",
            Self::ResultValidationFailed => "TOOL_RESULT_VALIDATION_FAILED",
            Self::ExecutionFailed => "TOOL_EXECUTION_FAILED",
            Self::IdempotencyConflict => "TOOL_IDEMPOTENCY_CONFLICT",
            Self::ExecutionAborted => "TOOL_EXECUTION_ABORTED",
            Self::IdempotencyPending => "TOOL_IDEMPOTENCY_PENDING",
            Self::IdempotencyUnknown => "TOOL_IDEMPOTENCY_UNKNOWN",
            Self::IdempotencyStoreFailed => "TOOL_IDEMPOTENCY_STORE_FAILED",
            Self::ExecutionUnknown => "TOOL_EXECUTION_UNKNOWN",
            Self::ListCursorInvalid => "TOOL_LIST_CURSOR_INVALID",
            Self::ListCursorRepeated => "TOOL_LIST_CURSOR_REPEATED",
            Self::ListPageLimit => "TOOL_LIST_PAGE_LIMIT",
        }
    }

    /// Whether the same call may succeed later unchanged: cancellation,
    /// timeouts and a lease held by another owner are transient.
    pub const fn retryable(self) -> bool {
        matches!(
            self,
            Self::Cancelled | Self::Timeout | Self::IdempotencyPending
        )
    }
}

impl fmt::Display for ToolErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A structured tool error: a stable code (registry or handler), a message
/// without file contents, retryability and machine-readable details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolError {
    pub code: String,
    pub message: String,
    pub retryable: bool,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
}

impl ToolError {
    /// A registry error with the code's own retryability.
    pub fn new(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self {
            code: code.as_str().to_owned(),
            message: message.into(),
            retryable: code.retryable(),
            details: Value::Null,
        }
    }

    /// A handler error with its own code and retryability (kept as given).
    pub fn handler(code: impl Into<String>, message: impl Into<String>, retryable: bool) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            retryable,
            details: Value::Null,
        }
    }

    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    pub fn is(&self, code: ToolErrorCode) -> bool {
        self.code == code.as_str()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_are_stable_and_match_display() {
        for code in ToolErrorCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
            assert!(code.as_str().starts_with("TOOL_"));
        }
        let retryable: Vec<_> = ToolErrorCode::ALL
            .into_iter()
            .filter(|c| c.retryable())
            .collect();
        assert_eq!(
            retryable,
            [
                ToolErrorCode::Cancelled,
                ToolErrorCode::Timeout,
                ToolErrorCode::IdempotencyPending
            ]
        );
    }

    #[test]
    fn handler_errors_keep_their_code_and_retryability() {
        let e = ToolError::handler("WORKSPACE_LOCKED", "src/a.rs is leased", true)
            .with_details(serde_json::json!({"path": "src/a.rs"}));
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"code": "WORKSPACE_LOCKED", "message": "src/a.rs is leased",
                "retryable": true, "details": {"path": "src/a.rs"}})
        );
        assert_eq!(serde_json::from_value::<ToolError>(json).unwrap(), e);
    }
}
