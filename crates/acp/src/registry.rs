//! External agents the host can launch: presets and custom entries.

use std::collections::BTreeMap;

use cocode_core::AcpAgentId;
use serde::{Deserialize, Serialize};

/// How to launch one ACP agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcpAgentConfig {
    pub id: AcpAgentId,
    pub display_name: String,
    /// Program and arguments (no shell).
    pub command: Vec<String>,
    /// Environment overrides; they pass the launcher's whitelist like any other.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Hosts the agent's own model API needs (added to its allowed hosts).
    #[serde(default)]
    pub model_hosts: Vec<String>,
    /// Names of variables whose values are secrets (the agent's API key):
    /// they come from the keyring or the CLI's `--pass-env`, never from
    /// cocode's own environment.
    #[serde(default)]
    pub secret_env: Vec<String>,
    /// The agent's own state folders (`~/` is the home folder), writable by
    /// the agent when they exist; the agent cannot create them itself.
    #[serde(default)]
    pub state_dirs: Vec<String>,
}

fn id(s: &str) -> AcpAgentId {
    AcpAgentId::new(s).unwrap_or_else(|_| unreachable!("preset agent id {s} is valid"))
}

impl AcpAgentConfig {
    /// Gemini CLI in ACP mode.
    pub fn gemini() -> Self {
        Self {
            id: id("gemini"),
            display_name: "Gemini CLI".into(),
            command: vec!["gemini".into(), "--acp".into()],
            env: BTreeMap::new(),
            model_hosts: vec!["generativelanguage.googleapis.com".into()],
            secret_env: vec!["GEMINI_API_KEY".into()],
            state_dirs: vec!["~/.gemini".into()],
        }
    }

    /// Claude Code through its ACP adapter.
    pub fn claude_code() -> Self {
        Self {
            id: id("claude-code"),
            display_name: "Claude Code".into(),
            command: vec!["claude-code-acp".into()],
            env: BTreeMap::new(),
            model_hosts: vec!["api.anthropic.com".into()],
            secret_env: vec!["ANTHROPIC_API_KEY".into()],
            state_dirs: vec!["~/.claude".into()],
        }
    }

    /// Codex through its ACP adapter.
    pub fn codex() -> Self {
        Self {
            id: id("codex"),
            display_name: "Codex".into(),
            command: vec!["codex-acp".into()],
            env: BTreeMap::new(),
            model_hosts: vec!["api.openai.com".into()],
            secret_env: vec!["OPENAI_API_KEY".into()],
            state_dirs: vec!["~/.codex".into()],
        }
    }
}

impl From<cocode_core::workspace::AcpAgentEntry> for AcpAgentConfig {
    fn from(e: cocode_core::workspace::AcpAgentEntry) -> Self {
        Self {
            id: e.id,
            display_name: e.display_name,
            command: e.command,
            env: e.env,
            model_hosts: e.model_hosts,
            secret_env: e.secret_env,
            state_dirs: e.state_dirs,
        }
    }
}

impl AcpAgentConfig {
    /// The state folders as paths (`~/` against `home`).
    pub fn state_paths(&self, home: Option<&std::path::Path>) -> Vec<std::path::PathBuf> {
        self.state_dirs
            .iter()
            .filter_map(|d| match d.strip_prefix("~/") {
                Some(rest) => home.map(|h| h.join(rest)),
                None => Some(std::path::PathBuf::from(d)),
            })
            .collect()
    }
}

/// The agents on offer, by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AcpAgentRegistry {
    agents: BTreeMap<AcpAgentId, AcpAgentConfig>,
}

impl AcpAgentRegistry {
    /// The presets: Gemini CLI, Claude Code, Codex.
    pub fn with_presets() -> Self {
        let mut r = Self::default();
        for a in [
            AcpAgentConfig::gemini(),
            AcpAgentConfig::claude_code(),
            AcpAgentConfig::codex(),
        ] {
            r.insert(a);
        }
        r
    }

    /// Adds or replaces an entry (custom entries override presets by id).
    pub fn insert(&mut self, agent: AcpAgentConfig) {
        self.agents.insert(agent.id.clone(), agent);
    }

    pub fn get(&self, id: &AcpAgentId) -> Option<&AcpAgentConfig> {
        self.agents.get(id)
    }

    pub fn agents(&self) -> impl Iterator<Item = &AcpAgentConfig> {
        self.agents.values()
    }
}
