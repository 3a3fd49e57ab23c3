//! Provider error codes (stable wire strings) and their retry rules.

use std::fmt;
use std::time::Duration;

/// Why a provider request or response failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProviderErrorCode {
    /// 401/403: the key is missing, wrong or lacks access. Not retried.
    Auth,
    /// 429. Retried, honouring `Retry-After`.
    RateLimited,
    /// 5xx (and 529 "overloaded"). Retried.
    Unavailable,
    /// Connection refused, reset, DNS, TLS, a stream cut short. Retried.
    Network,
    /// No response within the per-request timeout (not a user cancel). Retried.
    Timeout,
    /// Any other 4xx: the request itself is wrong (unknown model, bad option).
    BadRequest,
    /// The request is longer than the model's context window (the
    /// provider's own "too long" error). The session compacts and sends it
    /// once more; not retried by the transport.
    ContextTooLong,
    /// The response is not what the protocol promises (not JSON, wrong role,
    /// missing or duplicate tool-call ids, an error event in the stream).
    InvalidResponse,
    /// A tool call whose name is missing or whose arguments are not a JSON
    /// object. Retryable: the model may well get it right the next time.
    InvalidToolCall,
    /// The response asks for more tool calls than the run has left.
    ToolCallLimit,
    /// The model repeated the same call with the same arguments.
    Repetition,
    /// The provider is not usable as configured (no key, no base URL, unknown id).
    Config,
    /// The user cancelled.
    Cancelled,
}

impl ProviderErrorCode {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Auth => "PROVIDER_AUTH",
            Self::RateLimited => "PROVIDER_RATE_LIMITED",
            Self::Unavailable => "PROVIDER_UNAVAILABLE",
            Self::Network => "PROVIDER_NETWORK",
            Self::Timeout => "PROVIDER_TIMEOUT",
            Self::BadRequest => "PROVIDER_BAD_REQUEST",
            Self::ContextTooLong => "PROVIDER_CONTEXT_TOO_LONG",
            Self::InvalidResponse => "PROVIDER_INVALID_RESPONSE",
            Self::InvalidToolCall => "PROVIDER_INVALID_TOOL_CALL",
            Self::ToolCallLimit => "PROVIDER_TOOL_CALL_LIMIT",
            Self::Repetition => "PROVIDER_REPETITION",
            Self::Config => "PROVIDER_CONFIG",
            Self::Cancelled => "PROVIDER_CANCELLED",
        }
    }

    /// Whether the transport sends the request again by itself.
    pub const fn retried_by_transport(self) -> bool {
        matches!(
            self,
            Self::RateLimited | Self::Unavailable | Self::Network | Self::Timeout
        )
    }

    /// Whether trying again later can succeed (reported to the task).
    pub const fn retryable(self) -> bool {
        self.retried_by_transport() || matches!(self, Self::InvalidToolCall)
    }
}

impl fmt::Display for ProviderErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A provider failure: a stable code and a message meant for a person. The
/// message never contains the API key or the request body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ProviderError {
    pub code: ProviderErrorCode,
    pub message: String,
    /// The server's `Retry-After`, when it sent one.
    pub retry_after: Option<Duration>,
}

impl ProviderError {
    pub fn new(code: ProviderErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    pub fn invalid_response(message: impl Into<String>) -> Self {
        Self::new(ProviderErrorCode::InvalidResponse, message)
    }

    pub fn is(&self, code: ProviderErrorCode) -> bool {
        self.code == code
    }
}
