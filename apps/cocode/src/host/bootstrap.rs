//! Bootstrap: registers every contract implementation of a workspace's host
//! exactly once in the typed `ContractRegistry` (`WorkspaceHost::open` calls
//! [`register_contracts`] with the parts it built).
//!
//! A contract without an implementation in this build is listed in
//! [`UNREGISTERED_CONTRACTS`]; the completeness test requires every contract
//! of `cocode_core::CONTRACTS` to be in exactly one of the two places, and
//! compares this file's registrations with an actual host.

use std::sync::Arc;

use cocode_core::agent::{AgentBackendKind, AgentRuntime};
use cocode_core::gate::{
    EditLockRegistry, GateError, GateOp, GateOutcome, SnapshotStore, TaskContext, WorkspaceFileGate,
};
use cocode_core::path::NormalizedPath;
use cocode_core::process::{ProcessLauncher, SandboxPolicy};
use cocode_core::registry::{AgentBackendRegistry, FileFormatParserRegistry};
use cocode_core::services::{
    BrickEngine, CredentialVault, FileFormatParser, SemanticTokenSink, TextDocumentSource,
    VerificationRunner,
};
use cocode_core::{ContractId, ContractRegistry, RegistryError};
use cocode_editor::OpenDocuments;
use cocode_workspace::OpenWorkspace;

/// Contracts this build runs without (features that need one would report
/// it as unavailable instead of pretending to work). Every contract has an
/// implementation now.
pub const UNREGISTERED_CONTRACTS: [ContractId; 0] = [];

/// The gate of a shared open workspace, as a contract object.
#[derive(Debug)]
pub struct SharedGate(pub Arc<OpenWorkspace>);

impl WorkspaceFileGate for SharedGate {
    fn apply(&self, ctx: &TaskContext, op: GateOp) -> Result<GateOutcome, GateError> {
        WorkspaceFileGate::apply(&self.0.gate, ctx, op)
    }

    fn save_user_file(&self, path: &NormalizedPath, bytes: &[u8]) -> Result<(), GateError> {
        self.0.gate.save_user_file(path, bytes)
    }
}

/// What a host is made of.
pub struct HostParts {
    pub workspace: Arc<OpenWorkspace>,
    pub leases: Arc<dyn EditLockRegistry>,
    pub runner: Arc<dyn VerificationRunner>,
    pub launcher: Arc<dyn ProcessLauncher>,
    /// The sandbox decision the launcher follows (one policy decides every
    /// profile).
    pub sandbox: Arc<dyn SandboxPolicy>,
    pub vault: Arc<dyn CredentialVault>,
    pub built_in: Arc<dyn AgentRuntime>,
    pub acp: Arc<dyn AgentRuntime>,
    pub parsers: FileFormatParserRegistry,
    pub bricks: Arc<dyn BrickEngine>,
    /// The open documents: the source of unsaved text and the sink of
    /// semantic tokens.
    pub documents: Arc<OpenDocuments>,
}

impl std::fmt::Debug for HostParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostParts").finish_non_exhaustive()
    }
}

/// Registers each part once.
pub fn register_contracts(parts: HostParts) -> Result<ContractRegistry, RegistryError> {
    let mut registry = ContractRegistry::new();
    let mut backends = AgentBackendRegistry::new();
    backends.register(AgentBackendKind::BuiltIn, parts.built_in)?;
    backends.register(AgentBackendKind::Acp, parts.acp)?;
    registry.register::<dyn AgentRuntime>(backends)?;
    let store: Arc<dyn SnapshotStore> = Arc::new(parts.workspace.gate.store().clone());
    registry.register::<dyn SnapshotStore>(store)?;
    registry
        .register::<dyn WorkspaceFileGate>(Arc::new(SharedGate(Arc::clone(&parts.workspace))))?;
    registry.register::<dyn EditLockRegistry>(parts.leases)?;
    registry.register::<dyn VerificationRunner>(parts.runner)?;
    registry.register::<dyn FileFormatParser>(parts.parsers)?;
    registry.register::<dyn ProcessLauncher>(parts.launcher)?;
    registry.register::<dyn SandboxPolicy>(parts.sandbox)?;
    registry.register::<dyn CredentialVault>(parts.vault)?;
    registry.register::<dyn BrickEngine>(parts.bricks)?;
    let source: Arc<dyn TextDocumentSource> = Arc::clone(&parts.documents) as _;
    registry.register::<dyn TextDocumentSource>(source)?;
    registry.register::<dyn SemanticTokenSink>(parts.documents)?;
    Ok(registry)
}

#[cfg(test)]
#[path = "bootstrap_tests.rs"]
mod tests;
