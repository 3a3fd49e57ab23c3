//! What can go wrong reading or writing a repository.

/// What can go wrong reading or writing a repository.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    #[error("the repository at {path} could not be opened: {message}")]
    Open { path: String, message: String },
    #[error("the repository's HEAD could not be read: {message}")]
    Head { message: String },
    #[error("git status could not be read: {message}")]
    Status { message: String },
    #[error("{path} could not be read from the repository: {message}")]
    Blob { path: String, message: String },
    #[error("the repository's history could not be read: {message}")]
    History { message: String },
    #[error("“{name}” cannot be a branch name")]
    BranchName { name: String },
    #[error("{command} could not be started: {message}")]
    NotStarted { command: String, message: String },
    /// git refused or failed; `output` is what it said.
    #[error("{command} failed:\n{output}")]
    Failed { command: String, output: String },
}

impl GitError {
    /// A stable code for machines.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Open { .. } => "git.open_failed",
            Self::Head { .. } => "git.head_unreadable",
            Self::Status { .. } => "git.status_failed",
            Self::Blob { .. } => "git.blob_unreadable",
            Self::History { .. } => "git.history_unreadable",
            Self::BranchName { .. } => "git.bad_branch_name",
            Self::NotStarted { .. } => "git.not_started",
            Self::Failed { .. } => "git.command_failed",
        }
    }
}
