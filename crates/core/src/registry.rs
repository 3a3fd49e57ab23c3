//! The typed contract registry and the keyed registries.
//!
//! [`CONTRACTS`] is the one constant list of contracts. The app's bootstrap
//! registers each implementation exactly once; registering twice is an
//! error, and the completeness test compares the list with both the
//! bootstrap source and an actual bootstrap run.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::agent::{AgentBackendKind, AgentRuntime};
use crate::gate::{EditLockRegistry, SnapshotStore, WorkspaceFileGate};
use crate::process::{ProcessLauncher, SandboxPolicy, SandboxProfileKind};
use crate::services::{
    BrickEngine, CredentialVault, FileFormatParser, SemanticTokenSink, TextDocumentSource,
    VerificationRunner,
};
use crate::verification::VerificationMethod;

/// The twelve contracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ContractId {
    AgentRuntime,
    SnapshotStore,
    WorkspaceFileGate,
    EditLockRegistry,
    VerificationRunner,
    FileFormatParser,
    ProcessLauncher,
    SandboxPolicy,
    BrickEngine,
    TextDocumentSource,
    SemanticTokenSink,
    CredentialVault,
}

/// The one constant list of contracts.
pub const CONTRACTS: [ContractId; 12] = [
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

impl ContractId {
    /// The trait's name as written in source.
    pub const fn name(self) -> &'static str {
        match self {
            Self::AgentRuntime => "AgentRuntime",
            Self::SnapshotStore => "SnapshotStore",
            Self::WorkspaceFileGate => "WorkspaceFileGate",
            Self::EditLockRegistry => "EditLockRegistry",
            Self::VerificationRunner => "VerificationRunner",
            Self::FileFormatParser => "FileFormatParser",
            Self::ProcessLauncher => "ProcessLauncher",
            Self::SandboxPolicy => "SandboxPolicy",
            Self::BrickEngine => "BrickEngine",
            Self::TextDocumentSource => "TextDocumentSource",
            Self::SemanticTokenSink => "SemanticTokenSink",
            Self::CredentialVault => "CredentialVault",
        }
    }
}

impl fmt::Display for ContractId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A contract and what the registry holds for it: a shared trait object, or
/// a keyed registry for the contracts with several implementations.
pub trait Contract: 'static {
    const ID: ContractId;
    type Slot: Clone + Send + Sync + 'static;
}

macro_rules! single_contract {
    ($($trait:ident),* $(,)?) => {$(
        impl Contract for dyn $trait {
            const ID: ContractId = ContractId::$trait;
            type Slot = Arc<dyn $trait>;
        }
    )*};
}

single_contract!(
    SnapshotStore,
    WorkspaceFileGate,
    EditLockRegistry,
    VerificationRunner,
    ProcessLauncher,
    SandboxPolicy,
    BrickEngine,
    TextDocumentSource,
    SemanticTokenSink,
    CredentialVault,
);

impl Contract for dyn AgentRuntime {
    const ID: ContractId = ContractId::AgentRuntime;
    type Slot = AgentBackendRegistry;
}

impl Contract for dyn FileFormatParser {
    const ID: ContractId = ContractId::FileFormatParser;
    type Slot = FileFormatParserRegistry;
}

/// Registry misuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("contract {0} is registered twice")]
    DuplicateContract(ContractId),
    #[error("contract {0} is not registered")]
    MissingContract(ContractId),
    #[error("key {0} is registered twice")]
    DuplicateKey(String),
}

/// One implementation per contract, looked up by type.
#[derive(Default)]
pub struct ContractRegistry {
    slots: BTreeMap<ContractId, Box<dyn Any + Send + Sync>>,
}

impl fmt::Debug for ContractRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContractRegistry")
            .field("registered", &self.registered())
            .finish()
    }
}

impl ContractRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers the implementation of `C`; a second registration is refused.
    pub fn register<C: Contract + ?Sized>(&mut self, slot: C::Slot) -> Result<(), RegistryError> {
        if self.slots.contains_key(&C::ID) {
            return Err(RegistryError::DuplicateContract(C::ID));
        }
        self.slots.insert(C::ID, Box::new(slot));
        Ok(())
    }

    pub fn get<C: Contract + ?Sized>(&self) -> Result<C::Slot, RegistryError> {
        self.slots
            .get(&C::ID)
            .and_then(|any| any.downcast_ref::<C::Slot>())
            .cloned()
            .ok_or(RegistryError::MissingContract(C::ID))
    }

    /// Registered contracts, in [`CONTRACTS`] order.
    pub fn registered(&self) -> Vec<ContractId> {
        CONTRACTS
            .into_iter()
            .filter(|c| self.slots.contains_key(c))
            .collect()
    }

    /// Contracts with no implementation yet, in [`CONTRACTS`] order.
    pub fn missing(&self) -> Vec<ContractId> {
        CONTRACTS
            .into_iter()
            .filter(|c| !self.slots.contains_key(c))
            .collect()
    }
}

/// A key of a keyed registry with a closed set of expected keys.
pub trait RegistryKey: Copy + Ord + fmt::Debug + Send + Sync + 'static {
    /// Every key the registry must eventually hold.
    const ALL: &'static [Self];
}

impl RegistryKey for AgentBackendKind {
    const ALL: &'static [Self] = &AgentBackendKind::ALL;
}
impl RegistryKey for VerificationMethod {
    const ALL: &'static [Self] = &VerificationMethod::ALL;
}
impl RegistryKey for SandboxProfileKind {
    const ALL: &'static [Self] = &SandboxProfileKind::ALL;
}

/// Implementations by key, each key at most once.
pub struct KeyedRegistry<K: RegistryKey, V: ?Sized> {
    entries: BTreeMap<K, Arc<V>>,
}

impl<K: RegistryKey, V: ?Sized> Clone for KeyedRegistry<K, V> {
    fn clone(&self) -> Self {
        Self {
            entries: self.entries.clone(),
        }
    }
}

impl<K: RegistryKey, V: ?Sized> Default for KeyedRegistry<K, V> {
    fn default() -> Self {
        Self {
            entries: BTreeMap::new(),
        }
    }
}

impl<K: RegistryKey, V: ?Sized> fmt::Debug for KeyedRegistry<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.entries.keys()).finish()
    }
}

impl<K: RegistryKey, V: ?Sized> KeyedRegistry<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn register(&mut self, key: K, value: Arc<V>) -> Result<(), RegistryError> {
        if self.entries.contains_key(&key) {
            return Err(RegistryError::DuplicateKey(format!("{key:?}")));
        }
        self.entries.insert(key, value);
        Ok(())
    }

    pub fn get(&self, key: K) -> Option<Arc<V>> {
        self.entries.get(&key).cloned()
    }

    /// Expected keys with no entry, in declaration order.
    pub fn missing(&self) -> Vec<K> {
        K::ALL
            .iter()
            .copied()
            .filter(|k| !self.entries.contains_key(k))
            .collect()
    }

    pub fn keys(&self) -> Vec<K> {
        self.entries.keys().copied().collect()
    }
}

/// Agent runtimes by backend kind (built-in, acp).
pub type AgentBackendRegistry = KeyedRegistry<AgentBackendKind, dyn AgentRuntime>;

/// Sandbox policies by profile (`agent`, `human_terminal`, `tool`).
pub type SandboxProfileRegistry = KeyedRegistry<SandboxProfileKind, dyn SandboxPolicy>;

/// The verification executors by method (the five methods).
pub type VerificationMethodRegistry<E> = KeyedRegistry<VerificationMethod, E>;

/// Parsers by lower-case file extension (an open set: an extension with no
/// parser yields `no_target:no_registered_parser`).
#[derive(Clone, Default)]
pub struct FileFormatParserRegistry {
    by_extension: BTreeMap<String, Arc<dyn FileFormatParser>>,
}

impl fmt::Debug for FileFormatParserRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.by_extension.keys()).finish()
    }
}

impl FileFormatParserRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a parser under each of its extensions; an extension already
    /// taken is refused and nothing is registered.
    pub fn register(&mut self, parser: &Arc<dyn FileFormatParser>) -> Result<(), RegistryError> {
        let extensions: Vec<String> = parser
            .extensions()
            .iter()
            .map(|e| e.to_lowercase())
            .collect();
        if let Some(taken) = extensions
            .iter()
            .find(|e| self.by_extension.contains_key(*e))
        {
            return Err(RegistryError::DuplicateKey(taken.clone()));
        }
        for ext in extensions {
            self.by_extension.insert(ext, Arc::clone(parser));
        }
        Ok(())
    }

    /// The parser for a file name, by its last extension (case-insensitive).
    pub fn parser_for(&self, file_name: &str) -> Option<Arc<dyn FileFormatParser>> {
        let (_, ext) = file_name.rsplit_once('.')?;
        self.by_extension.get(&ext.to_lowercase()).cloned()
    }

    pub fn extensions(&self) -> Vec<String> {
        self.by_extension.keys().cloned().collect()
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
