//! The remaining contracts: verification, parsers, bricks, editor text,
//! semantic tokens and credentials.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::ids::{AttemptNo, ProviderId, TaskId};
use crate::path::NormalizedPath;
use crate::verification::VerificationRecord;

/// What to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationRequest {
    pub task_id: TaskId,
    pub attempt_no: AttemptNo,
    pub workspace_root: PathBuf,
    /// Files the attempt changed (for package detection and ⑤).
    pub edited_paths: Vec<NormalizedPath>,
    /// The workspace's own commands per method (`workspace.json`).
    pub commands: crate::workspace::VerificationCommands,
    /// The methods whose configured command the person has not trusted in
    /// this folder: they are not run (`failure:env_untrusted`).
    pub untrusted: Vec<crate::verification::VerificationMethod>,
}

/// Verification could not run at all (distinct from a failing method).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerificationError {
    #[error("verification was cancelled")]
    Cancelled,
    #[error("verification could not start: {0}")]
    Setup(String),
}

/// Runs the methods in order ④ → ② → ① → ③ (⑤ only when ①–④ had no target)
/// and returns the records to append.
#[async_trait::async_trait]
pub trait VerificationRunner: Send + Sync {
    async fn verify(
        &self,
        req: VerificationRequest,
    ) -> Result<Vec<VerificationRecord>, VerificationError>;
}

/// The result of a parser check of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParseCheck {
    Ok,
    Errors { count: u32 },
}

/// A parser for one file format (⑤).
pub trait FileFormatParser: Send + Sync {
    /// Lower-case extensions without the dot.
    fn extensions(&self) -> &[&'static str];
    fn check(&self, content: &[u8]) -> ParseCheck;
}

/// A brick (template) offered for new workspaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrickInfo {
    pub name: String,
    pub description: String,
    /// The variables a scaffold asks for, in the brick's order.
    pub variables: Vec<BrickVariable>,
}

/// The type of a brick variable's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrickVariableKind {
    #[default]
    String,
    /// `true` or `false`.
    Bool,
    /// A decimal integer.
    Integer,
    /// One of `choices`.
    Choice,
}

/// One variable of a brick.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrickVariable {
    pub name: String,
    pub description: String,
    pub kind: BrickVariableKind,
    /// The default as the brick declares it; it may refer to `folder_name`
    /// (the destination's folder name), so it is shown resolved by
    /// [`BrickEngine::default_value`].
    pub default: Option<String>,
    /// A regular expression a string value must match in full.
    pub pattern: Option<String>,
    pub choices: Vec<String>,
}

/// A scaffolding request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaffoldRequest {
    pub brick: String,
    pub destination: PathBuf,
    pub variables: BTreeMap<String, String>,
}

/// Why scaffolding failed; the destination never exists half-made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScaffoldError {
    #[error("rejected before any write: {0}")]
    RejectedBeforeStart(String),
    #[error("failed while staging (staging removed: {staging_removed}): {message}")]
    FailedInProgress {
        staging_removed: bool,
        message: String,
    },
}

/// Atomic scaffolding from templates.
#[async_trait::async_trait]
pub trait BrickEngine: Send + Sync {
    fn bricks(&self) -> Vec<BrickInfo>;
    /// Checks a request without writing anything (live validation in a
    /// dialog): every error `scaffold` would report as
    /// `RejectedBeforeStart`.
    fn validate(&self, req: &ScaffoldRequest) -> Result<(), ScaffoldError>;
    /// A variable's default for this destination (`None` when it has none).
    fn default_value(
        &self,
        brick: &str,
        variable: &str,
        destination: &std::path::Path,
    ) -> Option<String>;
    /// Renders the brick into a staging folder beside the destination, runs
    /// its hooks there and moves it into place with one rename; returns the
    /// destination.
    async fn scaffold(&self, req: ScaffoldRequest) -> Result<PathBuf, ScaffoldError>;
}

/// Unsaved editor text, which wins over disk when an agent reads a file.
pub trait TextDocumentSource: Send + Sync {
    fn unsaved_text(&self, path: &NormalizedPath) -> Option<String>;
    /// Whether `path` has unsaved text, without copying it.
    fn has_unsaved(&self, path: &NormalizedPath) -> bool {
        self.unsaved_text(path).is_some()
    }
}

/// One semantic token in absolute coordinates.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SemanticToken {
    pub line: u32,
    pub start_char: u32,
    pub length: u32,
    pub token_type: String,
    pub modifiers: Vec<String>,
}

/// Receives semantic tokens from language servers for the editor.
pub trait SemanticTokenSink: Send + Sync {
    fn publish(&self, path: &NormalizedPath, version: i32, tokens: Vec<SemanticToken>);
}

/// A secret value. Its `Debug` and `Display` never show the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one place that sends it (a provider request header
    /// or an ACP agent's own environment).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// Credential store errors. There is no fallback to files or the environment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VaultError {
    #[error("the OS credential store is unavailable: {0}")]
    CredentialVaultUnavailable(String),
    /// The store exists but is locked (the person has to unlock it).
    #[error("the OS credential store is locked: {0}")]
    Locked(String),
    #[error("the credential store refused the operation: {0}")]
    Refused(String),
}

impl VaultError {
    /// The stable code shown with the message.
    pub const fn code(&self) -> &'static str {
        match self {
            Self::CredentialVaultUnavailable(_) => "CREDENTIAL_VAULT_UNAVAILABLE",
            Self::Locked(_) => "CREDENTIAL_VAULT_LOCKED",
            Self::Refused(_) => "CREDENTIAL_VAULT_REFUSED",
        }
    }
}

/// Provider keys in the OS keyring (service `cocode`, one entry per provider).
pub trait CredentialVault: Send + Sync {
    fn get(&self, provider: &ProviderId) -> Result<Option<Secret>, VaultError>;
    fn set(&self, provider: &ProviderId, secret: &Secret) -> Result<(), VaultError>;
    fn delete(&self, provider: &ProviderId) -> Result<(), VaultError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print_their_value() {
        let s = Secret::new("sk-live-123");
        assert_eq!(format!("{s:?}"), "Secret(<redacted>)");
        assert_eq!(s.expose(), "sk-live-123");
    }
}
