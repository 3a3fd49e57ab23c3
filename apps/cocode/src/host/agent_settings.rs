//! External agents on the Settings page: an entry as a person types it
//! (checked field by field), and where each agent stands — a preset or
//! the folder's own entry (one that replaces a preset says so), whether
//! its program is installed and how to install it, and which of its
//! secret variables the credential store holds.

use std::collections::BTreeMap;

use cocode_acp::registry::Program;
use cocode_core::AcpAgentId;
use cocode_core::services::CredentialVault;
use cocode_core::workspace::{AcpAgentEntry, WorkspaceConfig};

/// An agent entry as typed on the Settings page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentDraft {
    /// The id of the folder's entry this replaces (`None`: a new entry, or
    /// one that replaces the preset of the same id).
    pub original: Option<String>,
    pub id: String,
    pub display_name: String,
    /// The program and its arguments, quoted as in a shell.
    pub command: String,
    /// `NAME=value`, one a line.
    pub env: String,
    /// Hosts, separated by commas or spaces.
    pub model_hosts: String,
    /// Variable names, separated by commas or spaces.
    pub secret_env: String,
    /// Folders, one a line (`~/` is the home folder).
    pub state_dirs: String,
}

impl AgentDraft {
    /// A draft of `entry` as it is written (editing it replaces it when
    /// `own`, the folder's entry; a preset's makes a new entry).
    pub fn of(entry: &AcpAgentEntry, own: bool) -> Self {
        Self {
            original: own.then(|| entry.id.to_string()),
            id: entry.id.to_string(),
            display_name: entry.display_name.clone(),
            command: shell_words::join(&entry.command),
            env: entry
                .env
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("\n"),
            model_hosts: entry.model_hosts.join(", "),
            secret_env: entry.secret_env.join(", "),
            state_dirs: entry.state_dirs.join("\n"),
        }
    }
}

/// A name a shell could export: letters, digits and `_`, not first a digit.
fn variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
}

/// `draft` as an entry of `workspace.json`, or the first thing wrong
/// with it, in words.
pub fn parse_agent(draft: &AgentDraft) -> Result<AcpAgentEntry, String> {
    let id = draft.id.trim();
    let id = AcpAgentId::new(id).map_err(|e| format!("agent id “{id}”: {e}"))?;
    let display_name = draft.display_name.trim();
    if display_name.is_empty() || display_name.chars().any(char::is_control) {
        return Err("give the agent a name, such as My agent".to_owned());
    }
    let command = shell_words::split(draft.command.trim())
        .map_err(|_| "the command has a quote that is not closed".to_owned())?;
    if command.is_empty() {
        return Err("type the command that starts the agent, such as my-agent --acp".to_owned());
    }
    let mut env = BTreeMap::new();
    for line in draft.env.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once('=') else {
            return Err(format!("“{line}” is not NAME=value"));
        };
        let name = name.trim();
        if !variable_name(name) {
            return Err(format!("“{name}” is not a variable name"));
        }
        if cocode_toolchain::env::is_credential_like(name)
            || cocode_toolchain::env::is_credential_value(value)
        {
            return Err(format!(
                "{name} looks like a secret: name it under secret variables, and its value goes to the credential store, not workspace.json"
            ));
        }
        env.insert(name.to_owned(), value.to_owned());
    }
    let mut model_hosts = Vec::new();
    for host in words(&draft.model_hosts) {
        let parsed = crate::host::typed::parse_host(host)?;
        model_hosts.push(parsed.to_string());
    }
    let mut secret_env: Vec<String> = Vec::new();
    for name in words(&draft.secret_env) {
        if !variable_name(name) {
            return Err(format!("secret variable “{name}” is not a variable name"));
        }
        if env.contains_key(name) {
            return Err(format!(
                "{name} is both an environment value and a secret variable"
            ));
        }
        if !secret_env.iter().any(|n| n == name) {
            secret_env.push(name.to_owned());
        }
    }
    let mut state_dirs = Vec::new();
    for dir in draft
        .state_dirs
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        if !(dir.starts_with("~/") || std::path::Path::new(dir).is_absolute()) {
            return Err(format!(
                "state folder “{dir}” is neither under ~/ nor an absolute path"
            ));
        }
        state_dirs.push(dir.to_owned());
    }
    Ok(AcpAgentEntry {
        id,
        display_name: display_name.to_owned(),
        command,
        env,
        model_hosts,
        secret_env,
        state_dirs,
        auth_method: None,
    })
}

/// Puts `entry` into `config`: in place of the folder's entry `original`,
/// or as a new one (an id the folder already has is refused).
pub fn put_agent(
    config: &mut WorkspaceConfig,
    original: Option<&str>,
    mut entry: AcpAgentEntry,
) -> Result<(), String> {
    let at = original.and_then(|o| config.acp_agents.iter().position(|a| a.id.as_str() == o));
    if original.is_some() && at.is_none() {
        return Err(format!(
            "no agent entry has the id {}",
            original.unwrap_or_default()
        ));
    }
    let clash = config
        .acp_agents
        .iter()
        .enumerate()
        .any(|(i, a)| a.id == entry.id && Some(i) != at);
    if clash {
        return Err(format!(
            "this folder already has an agent {}: edit that one",
            entry.id
        ));
    }
    if let Some(i) = at {
        // What the form does not show stays as it was.
        entry.auth_method = config.acp_agents[i].auth_method.take();
        config.acp_agents[i] = entry;
    } else {
        entry.auth_method = cocode_acp::AcpAgentRegistry::with_presets()
            .get(&entry.id)
            .and_then(|p| p.auth_method.clone());
        config.acp_agents.push(entry);
    }
    Ok(())
}

/// Where an agent comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentOrigin {
    /// One of cocode's presets, as it ships.
    Preset,
    /// This folder's own entry.
    Folder,
    /// This folder's entry in place of the preset of the same id.
    ReplacesPreset,
}

/// Whether a secret variable's value is in the credential store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretState {
    Stored,
    Missing,
    /// The store could not say (why), or it was not asked.
    Unknown(String),
}

/// One agent as the Settings page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentStatus {
    pub entry: AcpAgentEntry,
    pub origin: AgentOrigin,
    /// Where its program is, or `None` with how to install it.
    pub installed: Option<std::path::PathBuf>,
    pub install: Option<String>,
    pub secrets: Vec<(String, SecretState)>,
}

/// Every agent the folder can run — the presets, with the folder's own
/// entries added or in their place — and where each stands. `vault`
/// answers for the secrets (`None`: not asked).
pub fn agent_statuses(
    config: &WorkspaceConfig,
    vault: Option<&dyn CredentialVault>,
) -> Vec<AgentStatus> {
    let presets = cocode_acp::AcpAgentRegistry::with_presets();
    let agents = cocode_acp::AcpAgentRegistry::with_entries(config.acp_agents.iter().cloned());
    let path_var = std::env::var_os("PATH");
    agents
        .agents()
        .map(|entry| {
            let own = config.acp_agents.iter().any(|a| a.id == entry.id);
            let origin = match (own, presets.get(&entry.id).is_some()) {
                (false, _) => AgentOrigin::Preset,
                (true, false) => AgentOrigin::Folder,
                (true, true) => AgentOrigin::ReplacesPreset,
            };
            let (installed, install) =
                match cocode_acp::registry::program(entry, path_var.as_deref()) {
                    Program::Installed(path) => (Some(path), None),
                    Program::Missing { install } => (None, install),
                };
            let secrets = entry
                .secret_env
                .iter()
                .map(|name| {
                    let state = match (vault, cocode_acp::registry::secret_account(&entry.id, name))
                    {
                        (None, _) => SecretState::Unknown("not asked yet".to_owned()),
                        (_, Err(e)) => SecretState::Unknown(format!("not a usable name: {e}")),
                        (Some(vault), Ok(account)) => match vault.get(&account) {
                            Ok(Some(_)) => SecretState::Stored,
                            Ok(None) => SecretState::Missing,
                            Err(e) => SecretState::Unknown(format!("{} {e}", e.code())),
                        },
                    };
                    (name.clone(), state)
                })
                .collect();
            AgentStatus {
                entry: entry.clone(),
                origin,
                installed,
                install,
                secrets,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn draft() -> AgentDraft {
        AgentDraft {
            original: None,
            id: "my-agent".into(),
            display_name: "My agent".into(),
            command: "my-agent --acp 'a b'".into(),
            env: "MODE=fast\n\n".into(),
            model_hosts: "api.example.com, models.example.org:443".into(),
            secret_env: "MY_KEY MY_KEY".into(),
            state_dirs: "~/.my-agent\n/var/lib/my-agent".into(),
        }
    }

    #[test]
    fn a_typed_entry_is_checked_field_by_field_and_round_trips() {
        let entry = parse_agent(&draft()).unwrap();
        assert_eq!(entry.command, ["my-agent", "--acp", "a b"]);
        assert_eq!(
            entry.env,
            BTreeMap::from([("MODE".to_owned(), "fast".to_owned())])
        );
        assert_eq!(
            entry.model_hosts,
            ["api.example.com", "models.example.org:443"]
        );
        assert_eq!(entry.secret_env, ["MY_KEY"]);
        assert_eq!(entry.state_dirs, ["~/.my-agent", "/var/lib/my-agent"]);
        assert_eq!(parse_agent(&AgentDraft::of(&entry, true)).unwrap(), entry);

        for (change, why) in [
            (
                ("id", "my agent"),
                "agent id “my agent”: identifier contains ' '; only ASCII letters, digits, '_' and '-' are allowed",
            ),
            (("name", " "), "give the agent a name, such as My agent"),
            (
                ("command", "agent 'open"),
                "the command has a quote that is not closed",
            ),
            (
                ("command", "  "),
                "type the command that starts the agent, such as my-agent --acp",
            ),
            (("env", "MODE"), "“MODE” is not NAME=value"),
            (
                ("env", "OPENAI_API_KEY=sk-123"),
                "OPENAI_API_KEY looks like a secret: name it under secret variables, and its value goes to the credential store, not workspace.json",
            ),
            (
                ("hosts", "api.example.com, not/a/host"),
                "“not/a/host” is not a host: write host, *.suffix, or either with :port, in ASCII",
            ),
            (
                ("secrets", "MODE"),
                "MODE is both an environment value and a secret variable",
            ),
            (
                ("secrets", "1KEY"),
                "secret variable “1KEY” is not a variable name",
            ),
            (
                ("dirs", "relative/dir"),
                "state folder “relative/dir” is neither under ~/ nor an absolute path",
            ),
        ] {
            let mut d = draft();
            let (field, text) = change;
            let slot = match field {
                "id" => &mut d.id,
                "name" => &mut d.display_name,
                "command" => &mut d.command,
                "env" => &mut d.env,
                "hosts" => &mut d.model_hosts,
                "secrets" => &mut d.secret_env,
                _ => &mut d.state_dirs,
            };
            *slot = text.to_owned();
            assert_eq!(parse_agent(&d), Err(why.to_owned()), "{field}");
        }
    }

    #[test]
    fn an_entry_is_added_edited_in_place_and_never_doubled() {
        let mut config = WorkspaceConfig::default();
        let entry = parse_agent(&draft()).unwrap();
        put_agent(&mut config, None, entry.clone()).unwrap();
        assert_eq!(
            put_agent(&mut config, None, entry.clone()),
            Err("this folder already has an agent my-agent: edit that one".to_owned())
        );
        let mut renamed = entry.clone();
        renamed.id = AcpAgentId::new("other").unwrap();
        renamed.display_name = "Other".into();
        put_agent(&mut config, Some("my-agent"), renamed).unwrap();
        assert_eq!(config.acp_agents.len(), 1);
        assert_eq!(config.acp_agents[0].display_name, "Other");
        assert_eq!(
            put_agent(&mut config, Some("gone"), entry),
            Err("no agent entry has the id gone".to_owned())
        );
        // A preset's id makes the folder's entry replace it, keeping the
        // preset's login method.
        let mut gemini = cocode_acp::registry::gemini();
        gemini.command = vec!["/opt/gemini/bin/gemini".into(), "--experimental-acp".into()];
        let expected = gemini.auth_method.clone();
        gemini.auth_method = None;
        put_agent(&mut config, None, gemini).unwrap();
        assert_eq!(config.acp_agents[1].auth_method, expected);
        let statuses = agent_statuses(&config, None);
        let origin = |id: &str| {
            statuses
                .iter()
                .find(|s| s.entry.id.as_str() == id)
                .map(|s| s.origin)
        };
        assert_eq!(origin("gemini"), Some(AgentOrigin::ReplacesPreset));
        assert_eq!(origin("other"), Some(AgentOrigin::Folder));
        assert_eq!(origin("codex"), Some(AgentOrigin::Preset));
        let gemini = statuses
            .iter()
            .find(|s| s.entry.id.as_str() == "gemini")
            .unwrap();
        assert_eq!(gemini.installed, None);
        assert_eq!(
            gemini.secrets,
            vec![(
                "GEMINI_API_KEY".to_owned(),
                SecretState::Unknown("not asked yet".to_owned())
            )]
        );
    }
}
