//! Bootstrap: builds the host and registers every contract implementation
//! exactly once in the typed `ContractRegistry`.
//!
//! A contract without an implementation in this build is listed in
//! [`UNREGISTERED_CONTRACTS`]; the completeness test requires every contract
//! of `cocode_core::CONTRACTS` to be in exactly one of the two places, and
//! compares this file's registrations with an actual bootstrap run.

use std::path::PathBuf;

use cocode_core::{ContractId, ContractRegistry};

/// Contracts this build runs without. Features that need one report it as
/// unavailable instead of pretending to work.
pub const UNREGISTERED_CONTRACTS: [ContractId; 12] = [
    ContractId::AgentRuntime,
    ContractId::SnapshotStore,
    ContractId::WorkspaceFileGate,
    ContractId::EditLockRegistry,
    ContractId::VerificationRunner,
    ContractId::FileFormatParser,
    ContractId::ProcessLauncher,
    ContractId::SandboxPolicy,
    ContractId::BrickEngine,
    ContractId::TextDocumentSource,
    ContractId::SemanticTokenSink,
    ContractId::CredentialVault,
];

/// What the host is built for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BootstrapConfig {
    /// The folder to open, already canonical.
    pub workspace: Option<PathBuf>,
}

/// The assembled host: every registered contract, shared by the UI and the CLI.
#[derive(Debug)]
pub struct Host {
    pub contracts: ContractRegistry,
    pub workspace: Option<PathBuf>,
}

/// Bootstrap failures.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    #[error(transparent)]
    Registry(#[from] cocode_core::RegistryError),
}

/// Builds the host.
pub fn bootstrap(config: BootstrapConfig) -> Result<Host, BootstrapError> {
    let contracts = ContractRegistry::new();
    Ok(Host {
        contracts,
        workspace: config.workspace,
    })
}

#[cfg(test)]
#[path = "bootstrap_tests.rs"]
mod tests;
