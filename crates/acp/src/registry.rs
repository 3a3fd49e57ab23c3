//! External agents the host can launch: presets and custom entries. An
//! entry is the same type `workspace.json` stores (`acp_agents`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cocode_core::AcpAgentId;
pub use cocode_core::workspace::AcpAgentEntry as AcpAgentConfig;

fn id(s: &str) -> AcpAgentId {
    AcpAgentId::new(s).unwrap_or_else(|_| unreachable!("preset agent id {s} is valid"))
}

fn preset(
    agent: &str,
    display_name: &str,
    command: &[&str],
    model_host: &str,
    secret: &str,
    state_dir: &str,
    auth_method: Option<&str>,
) -> AcpAgentConfig {
    AcpAgentConfig {
        id: id(agent),
        display_name: display_name.into(),
        command: command.iter().map(|s| (*s).to_owned()).collect(),
        env: BTreeMap::new(),
        model_hosts: vec![model_host.into()],
        secret_env: vec![secret.into()],
        state_dirs: vec![state_dir.into()],
        auth_method: auth_method.map(str::to_owned),
    }
}

/// Gemini CLI in ACP mode.
pub fn gemini() -> AcpAgentConfig {
    preset(
        "gemini",
        "Gemini CLI",
        &["gemini", "--acp"],
        "generativelanguage.googleapis.com",
        "GEMINI_API_KEY",
        "~/.gemini",
        Some("gemini-api-key"),
    )
}

/// Claude Code through its ACP adapter.
pub fn claude_code() -> AcpAgentConfig {
    preset(
        "claude-code",
        "Claude Code",
        &["claude-code-acp"],
        "api.anthropic.com",
        "ANTHROPIC_API_KEY",
        "~/.claude",
        // The adapter reads its key from the environment without a login.
        None,
    )
}

/// Codex through its ACP adapter.
pub fn codex() -> AcpAgentConfig {
    preset(
        "codex",
        "Codex",
        &["codex-acp"],
        "api.openai.com",
        "OPENAI_API_KEY",
        "~/.codex",
        None,
    )
}

/// The credential-store entry holding an agent's secret variable `name`
/// (`acp-<agent>-<NAME>` under the `cocode` service).
pub fn secret_account(
    agent: &AcpAgentId,
    name: &str,
) -> Result<cocode_core::ProviderId, cocode_core::ids::IdError> {
    cocode_core::ProviderId::new(format!("acp-{}-{name}", agent.as_str()))
}

/// An agent's state folders as paths (`~/` against `home`).
pub fn state_paths(agent: &AcpAgentConfig, home: Option<&Path>) -> Vec<PathBuf> {
    agent
        .state_dirs
        .iter()
        .filter_map(|d| match d.strip_prefix("~/") {
            Some(rest) => home.map(|h| h.join(rest)),
            None => Some(PathBuf::from(d)),
        })
        .collect()
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
        for a in [gemini(), claude_code(), codex()] {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_folders_resolve_against_home_and_entries_replace_presets() {
        let g = gemini();
        assert_eq!(
            state_paths(&g, Some(Path::new("/home/u"))),
            vec![PathBuf::from("/home/u/.gemini")]
        );
        assert!(state_paths(&g, None).is_empty(), "no home, no grant");
        let mut r = AcpAgentRegistry::with_presets();
        let mut custom = gemini();
        custom.command = vec!["my-gemini".into()];
        r.insert(custom);
        assert_eq!(r.get(&id("gemini")).unwrap().command, vec!["my-gemini"]);
        assert_eq!(r.agents().count(), 3);
    }
}
