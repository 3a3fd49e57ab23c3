//! One language server cocode can start: a name the registry and the
//! TypeScript chooser share.

use serde::Serialize;

/// One language server cocode can start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerSpec {
    /// Stable id (`pyright`), the key of configuration entries.
    pub id: String,
    /// Extensions (lower case, no dot) of the files it serves.
    pub extensions: Vec<String>,
    /// Program and arguments (no shell).
    pub command: Vec<String>,
    /// What a person runs to install it.
    pub install: String,
    /// Its command was named by the workspace's own configuration (a
    /// cloned repository's `.cocode/config/workspace.json`) and the person
    /// has not trusted it: it is not started until they do.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub needs_trust: bool,
    /// Its command came from the workspace's own configuration (a cloned
    /// repository's): it runs confined like an agent's command (writes in
    /// the workspace only, network through the policy proxy), trusted or
    /// not.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_workspace: bool,
    /// `initializationOptions` it is started with (the TypeScript it uses).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initialization_options: Option<serde_json::Value>,
    /// What a person should know about how it runs (which TypeScript).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// It is offered pull diagnostics, and its answer to a pull of a
    /// document's diagnostics is all it says of that version: pyright,
    /// pulled, checks the file before it answers and publishes nothing
    /// itself. No quiet time is waited after such an answer. Other servers
    /// are not offered pulls (rust-analyzer would stop publishing its own
    /// findings) and get the quiet time after their reports.
    #[serde(skip)]
    pub pull_is_final: bool,
}
