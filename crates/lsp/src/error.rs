//! What can go wrong talking to a language server.

/// What can go wrong talking to a language server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LspError {
    #[error("no language server is set up for {path}")]
    NoServer { path: String },
    #[error("{server} is not installed ({program} is not on the PATH) — {install}")]
    NotInstalled {
        server: String,
        program: String,
        install: String,
    },
    #[error("{server} could not start: {message}")]
    Launch { server: String, message: String },
    #[error("{server} is stopped: {reason}")]
    Stopped { server: String, reason: String },
    #[error("the language server stopped: {reason}")]
    Closed { reason: String },
    #[error("the language server did not answer {method} within {after_ms} ms")]
    Timeout { method: String, after_ms: u64 },
    #[error("the language server refused {method}: {message} (code {code})")]
    Server {
        method: String,
        code: i64,
        message: String,
    },
    #[error("the language server's answer to {method} is not readable: {message}")]
    BadResponse { method: String, message: String },
    #[error(
        "{server} is not started: this workspace's .cocode/config/workspace.json names its command ({command}), and it runs only once you trust it (cocode lsp trust, or Trust in the Problems panel)"
    )]
    Untrusted { server: String, command: String },
}

impl LspError {
    /// A stable code for machines.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoServer { .. } => "lsp.no_server",
            Self::NotInstalled { .. } => "lsp.not_installed",
            Self::Launch { .. } => "lsp.launch_failed",
            Self::Stopped { .. } => "lsp.stopped",
            Self::Closed { .. } => "lsp.closed",
            Self::Timeout { .. } => "lsp.timeout",
            Self::Server { .. } => "lsp.server_error",
            Self::BadResponse { .. } => "lsp.bad_response",
            Self::Untrusted { .. } => "lsp.untrusted",
        }
    }
}
