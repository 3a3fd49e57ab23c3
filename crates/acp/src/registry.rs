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

/// A Claude adapter: its settings file lives inside its state folder
/// (`CLAUDE_CONFIG_DIR`), not beside it as `~/.claude.json`, where a
/// confined agent may not write.
fn claude_adapter(agent: &str, display_name: &str, program: &str) -> AcpAgentConfig {
    let mut entry = preset(
        agent,
        display_name,
        &[program],
        "api.anthropic.com",
        "ANTHROPIC_API_KEY",
        "~/.claude",
        // The adapter reads its key from the environment without a login.
        None,
    );
    entry
        .env
        .insert("CLAUDE_CONFIG_DIR".into(), "~/.claude".into());
    entry
}

/// Claude through its current ACP adapter (`claude-agent-acp`).
pub fn claude() -> AcpAgentConfig {
    claude_adapter("claude", "Claude", "claude-agent-acp")
}

/// Claude Code through the older ACP adapter (`claude-code-acp`), kept for
/// people who have it installed.
pub fn claude_code() -> AcpAgentConfig {
    claude_adapter(
        "claude-code",
        "Claude Code (older adapter)",
        "claude-code-acp",
    )
}

/// Codex through its ACP adapter, logged in with the `OpenAI` key. Its own
/// sandbox (bubblewrap) cannot nest inside cocode's confinement, which
/// already holds the agent and everything it runs, so Codex runs commands
/// without it — and asks before any command it does not know to be safe,
/// so a person (or `--deny-all`) decides.
pub fn codex() -> AcpAgentConfig {
    preset(
        "codex",
        "Codex",
        &[
            "codex-acp",
            "-c",
            "sandbox_mode=\"danger-full-access\"",
            "-c",
            "approval_policy=\"untrusted\"",
        ],
        "api.openai.com",
        "OPENAI_API_KEY",
        "~/.codex",
        Some("openai-api-key"),
    )
}

/// The npm package that provides each preset's program.
const NPM_PACKAGES: [(&str, &str); 4] = [
    ("gemini", "@google/gemini-cli"),
    ("claude-agent-acp", "@agentclientprotocol/claude-agent-acp"),
    ("claude-code-acp", "@zed-industries/claude-code-acp"),
    ("codex-acp", "@zed-industries/codex-acp"),
];

/// Whether an agent's program is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// Found at this path.
    Installed(PathBuf),
    /// Not found on `PATH`; the command that installs it, when known.
    Missing { install: Option<String> },
}

impl std::fmt::Display for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Installed(path) => write!(f, "installed: {}", path.display()),
            Self::Missing {
                install: Some(install),
            } => write!(f, "not installed — {install}"),
            Self::Missing { install: None } => f.write_str("not installed"),
        }
    }
}

/// Whether `agent`'s program is on `path_var` (a `PATH` value), or how to
/// install it.
pub fn program(agent: &AcpAgentConfig, path_var: Option<&std::ffi::OsStr>) -> Program {
    let Some(first) = agent.command.first() else {
        return Program::Missing { install: None };
    };
    if let Some(found) = cocode_platform::programs::find_program(first, path_var) {
        return Program::Installed(found);
    }
    let name = Path::new(first)
        .file_name()
        .map_or_else(|| first.clone(), |n| n.to_string_lossy().into_owned());
    Program::Missing {
        install: NPM_PACKAGES
            .iter()
            .find(|(program, _)| *program == name)
            .map(|(_, package)| format!("npm install -g {package}")),
    }
}

/// `value` with a leading `~/` taken against `home` (entries name state
/// folders and settings paths that way).
pub fn expand_home(value: &str, home: Option<&Path>) -> String {
    match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest).to_string_lossy().into_owned(),
        _ => value.to_owned(),
    }
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
    /// The presets: Gemini CLI, Claude (current and older adapter), Codex.
    pub fn with_presets() -> Self {
        let mut r = Self::default();
        for a in [gemini(), claude(), claude_code(), codex()] {
            r.insert(a);
        }
        r
    }

    /// The presets with a workspace's own `entries`, each in place of the
    /// preset of the same id.
    pub fn with_entries(entries: impl IntoIterator<Item = AcpAgentConfig>) -> Self {
        let mut r = Self::with_presets();
        for entry in entries {
            r.insert(entry);
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
        assert_eq!(r.agents().count(), 4);
    }

    #[test]
    fn a_missing_presets_program_names_its_npm_package_and_a_custom_one_says_only_missing() {
        let empty = tempfile::tempdir().unwrap();
        let path = Some(empty.path().as_os_str());
        let hints: Vec<String> = AcpAgentRegistry::with_presets()
            .agents()
            .map(|a| format!("{}: {}", a.id, program(a, path)))
            .collect();
        assert_eq!(
            hints,
            vec![
                "claude: not installed — npm install -g @agentclientprotocol/claude-agent-acp",
                "claude-code: not installed — npm install -g @zed-industries/claude-code-acp",
                "codex: not installed — npm install -g @zed-industries/codex-acp",
                "gemini: not installed — npm install -g @google/gemini-cli",
            ]
        );
        let mut custom = gemini();
        custom.command = vec!["my-agent".into()];
        assert_eq!(program(&custom, path).to_string(), "not installed");
        custom.command = Vec::new();
        assert_eq!(program(&custom, path), Program::Missing { install: None });
    }

    #[cfg(unix)]
    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test makes a program to find"
    )]
    fn an_installed_program_is_found_on_the_path() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let gemini_bin = dir.path().join("gemini");
        std::fs::write(&gemini_bin, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&gemini_bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            program(&gemini(), Some(dir.path().as_os_str())),
            Program::Installed(gemini_bin)
        );
    }

    #[test]
    fn home_is_expanded_only_in_a_leading_tilde_slash() {
        let home = Some(Path::new("/home/u"));
        assert_eq!(expand_home("~/.claude", home), "/home/u/.claude");
        assert_eq!(expand_home("~/.claude", None), "~/.claude");
        assert_eq!(expand_home("a~/b", home), "a~/b");
        assert_eq!(expand_home("~user/x", home), "~user/x");
        assert_eq!(claude().env["CLAUDE_CONFIG_DIR"], "~/.claude");
        assert_eq!(codex().auth_method.as_deref(), Some("openai-api-key"));
    }
}
