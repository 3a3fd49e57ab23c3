//! What can go wrong reading a repository.

/// What can go wrong reading a repository.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    #[error("the repository at {path} could not be opened: {message}")]
    Open { path: String, message: String },
    #[error("the repository's HEAD could not be read: {message}")]
    Head { message: String },
    #[error("git status could not be read: {message}")]
    Status { message: String },
    #[error("{path} could not be read at HEAD: {message}")]
    Blob { path: String, message: String },
}

impl GitError {
    /// A stable code for machines.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Open { .. } => "git.open_failed",
            Self::Head { .. } => "git.head_unreadable",
            Self::Status { .. } => "git.status_failed",
            Self::Blob { .. } => "git.blob_unreadable",
        }
    }
}
