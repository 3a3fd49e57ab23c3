//! The workspace's settings as the Settings page shows and changes them:
//! `.cocode/config/workspace.json` read as it is now, each change checked
//! with the reason it is refused, and the hosts and agents it grants with
//! where each stands for the person. The window and the command line use
//! the same checks.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cocode_core::task::CompletionMode;
use cocode_core::verification::VerificationLimits;
use cocode_core::workspace::{AllowedHosts, WorkspaceConfig, WriteException};

use crate::host::trust::GrantStanding;

pub use crate::host::typed::parse_host;

/// What the Settings page shows of a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsView {
    pub config: WorkspaceConfig,
    /// Whether `workspace.json` exists yet (a change creates it).
    pub exists: bool,
    /// The hosts agents' commands reach: defaults and lockfile hosts
    /// (read-only) and the person's, as the person allowed them.
    pub hosts: AllowedHosts,
    pub grants: GrantStanding,
    /// Every agent the folder can run and where each stands.
    pub agents: Vec<crate::host::agent_settings::AgentStatus>,
}

/// One change the Settings page makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsEdit {
    /// `None`: the default (a person approves each task's completion).
    CompletionMode(Option<CompletionMode>),
    /// The attempt time limit in seconds and the retries after a failed
    /// verification.
    Attempts {
        time_limit_secs: String,
        retries: String,
    },
    /// Tasks kept per path and the history's size cap in MiB.
    Retention {
        keep_per_path: String,
        cap_mib: String,
    },
    /// The largest file content kept when a change is observed, in MiB.
    MaxKeptFile(String),
    AddHost(String),
    RemoveHost(String),
    AddWriteException {
        name: String,
        path: String,
    },
    RemoveWriteException(String),
    /// Take an external agent entry out (its preset, if any, returns).
    RemoveAgent(String),
    /// Add an external agent entry, or replace the folder's entry
    /// `original` (a preset's id makes the entry replace the preset).
    PutAgent(crate::host::agent_settings::AgentDraft),
}

/// `workspace.json` of the folder at `root`: its settings and whether the
/// file exists (reading only: nothing is created).
pub fn read_config(root: &Path) -> Result<(WorkspaceConfig, bool), String> {
    let file = cocode_workspace::Layout::new(root).config_file();
    match std::fs::read_to_string(&file) {
        Ok(text) => serde_json::from_str(&text)
            .map(|c| (c, true))
            .map_err(|e| format!("{} is not valid: {e}", file.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok((WorkspaceConfig::default(), false))
        }
        Err(e) => Err(format!("{} cannot be read: {e}", file.display())),
    }
}

/// The view of `config` of the folder at `root`; `vault` says which
/// agents' secrets are stored (`None`: not asked).
pub fn view_of(
    root: &Path,
    config: WorkspaceConfig,
    exists: bool,
    vault: Option<&dyn cocode_core::services::CredentialVault>,
) -> SettingsView {
    let store = crate::host::trust::TrustStore::person();
    let grants = store.standing(root, &config);
    let effective = store.effective(root, &config);
    let hosts = cocode_toolchain::allowed::compose(root, &effective.allowed_hosts);
    let agents = crate::host::agent_settings::agent_statuses(&config, vault);
    SettingsView {
        config,
        exists,
        hosts,
        grants,
        agents,
    }
}

/// A whole number a person types, checked against `range`.
pub fn parse_number(
    text: &str,
    what: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, String> {
    let n: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{what}: “{}” is not a whole number", text.trim()))?;
    if range.contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "{what}: {n} is outside {}–{}",
            range.start(),
            range.end()
        ))
    }
}

/// A write exception a person types, checked: a name and an absolute
/// path outside the workspace.
pub fn parse_write_exception(
    root: &Path,
    name: &str,
    path: &str,
) -> Result<WriteException, String> {
    let name = name.trim();
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err("give the exception a name, such as CARGO_HOME".to_owned());
    }
    let path = PathBuf::from(path.trim());
    if !path.is_absolute() {
        return Err(format!("“{}” is not an absolute path", path.display()));
    }
    if path.starts_with(root) {
        return Err(
            "agents already write inside the workspace; an exception names a folder outside it"
                .to_owned(),
        );
    }
    Ok(WriteException {
        name: name.to_owned(),
        path,
    })
}

/// Applies `edit` to `config`, or says why it cannot be made (nothing
/// changes then).
pub fn apply(root: &Path, config: &mut WorkspaceConfig, edit: &SettingsEdit) -> Result<(), String> {
    match edit {
        SettingsEdit::CompletionMode(mode) => config.completion_mode = *mode,
        SettingsEdit::Attempts {
            time_limit_secs,
            retries,
        } => {
            let secs = parse_number(time_limit_secs, "attempt time limit", 10..=86_400)?;
            let retries = parse_number(
                retries,
                "retries",
                0..=u64::from(cocode_core::verification::MAX_RETRIES),
            )?;
            let old = config.limits;
            config.limits = VerificationLimits::new(
                Duration::from_secs(secs),
                u8::try_from(retries).map_err(|e| e.to_string())?,
                old.environment_rerun_budget(),
                old.idle_limit(),
            )
            .map_err(|e| e.to_string())?;
        }
        SettingsEdit::Retention {
            keep_per_path,
            cap_mib,
        } => {
            let keep = parse_number(keep_per_path, "tasks kept per file", 1..=1_000)?;
            let cap = parse_number(cap_mib, "history size cap", 1..=1_048_576)?;
            config.retention.keep_recent_per_path =
                u32::try_from(keep).map_err(|e| e.to_string())?;
            config.retention.byte_cap = cap * 1024 * 1024;
        }
        SettingsEdit::MaxKeptFile(text) => {
            config.max_kept_file_mib = parse_number(text, "largest kept file", 1..=65_536)?;
        }
        SettingsEdit::AddHost(text) => {
            let host = parse_host(text)?;
            if config.allowed_hosts.contains(&host) {
                return Err(format!("{host} is already allowed"));
            }
            config.allowed_hosts.push(host);
        }
        SettingsEdit::RemoveHost(text) => {
            let before = config.allowed_hosts.len();
            config.allowed_hosts.retain(|h| h.to_string() != *text);
            if config.allowed_hosts.len() == before {
                return Err(format!("{text} is not in the list"));
            }
        }
        SettingsEdit::AddWriteException { name, path } => {
            let exception = parse_write_exception(root, name, path)?;
            if config
                .write_exceptions
                .iter()
                .any(|e| e.name == exception.name)
            {
                return Err(format!("an exception named {} exists", exception.name));
            }
            config.write_exceptions.push(exception);
        }
        SettingsEdit::RemoveWriteException(name) => {
            let before = config.write_exceptions.len();
            config.write_exceptions.retain(|e| e.name != *name);
            if config.write_exceptions.len() == before {
                return Err(format!("no exception is named {name}"));
            }
        }
        SettingsEdit::PutAgent(draft) => {
            let entry = crate::host::agent_settings::parse_agent(draft)?;
            crate::host::agent_settings::put_agent(config, draft.original.as_deref(), entry)?;
        }
        SettingsEdit::RemoveAgent(id) => {
            let before = config.acp_agents.len();
            config.acp_agents.retain(|a| a.id.as_str() != id);
            if config.acp_agents.len() == before {
                return Err(format!("no agent entry has the id {id}"));
            }
        }
    }
    Ok(())
}

/// What a change the person made grants: allowed at once (it is theirs,
/// not the folder's word).
pub fn granted_by(edit: &SettingsEdit) -> Vec<crate::host::trust::Grant> {
    use crate::host::trust::Grant;
    match edit {
        SettingsEdit::AddHost(text) => parse_host(text)
            .ok()
            .map(|h| Grant::Host {
                host: h.to_string(),
            })
            .into_iter()
            .collect(),
        SettingsEdit::PutAgent(draft) => {
            let Ok(entry) = crate::host::agent_settings::parse_agent(draft) else {
                return Vec::new();
            };
            let mut grants = vec![Grant::Agent {
                id: entry.id.to_string(),
                command: entry.command.clone(),
                env: entry.env.clone(),
            }];
            grants.extend(entry.model_hosts.iter().map(|host| Grant::ModelHost {
                agent: entry.id.to_string(),
                host: host.clone(),
            }));
            grants
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    #[expect(clippy::too_many_lines, reason = "each refusal, then each change")]
    fn each_change_is_checked_and_a_refused_one_changes_nothing() {
        let root = Path::new("/work/project");
        let mut config = WorkspaceConfig::default();
        let before = config.clone();
        for (edit, why) in [
            (
                SettingsEdit::AddHost("not a host!".into()),
                "“not a host!” is not a host: write host, *.suffix, or either with :port, in ASCII",
            ),
            (
                SettingsEdit::Attempts {
                    time_limit_secs: "ten".into(),
                    retries: "1".into(),
                },
                "attempt time limit: “ten” is not a whole number",
            ),
            (
                SettingsEdit::Attempts {
                    time_limit_secs: "600".into(),
                    retries: "9".into(),
                },
                "retries: 9 is outside 0–3",
            ),
            (
                SettingsEdit::AddWriteException {
                    name: "CACHE".into(),
                    path: "relative/dir".into(),
                },
                "“relative/dir” is not an absolute path",
            ),
            (
                SettingsEdit::AddWriteException {
                    name: "CACHE".into(),
                    path: "/work/project/target".into(),
                },
                "agents already write inside the workspace; an exception names a folder outside it",
            ),
            (
                SettingsEdit::RemoveHost("nowhere.example".into()),
                "nowhere.example is not in the list",
            ),
        ] {
            assert_eq!(apply(root, &mut config, &edit), Err(why.to_owned()));
            assert_eq!(config, before);
        }
        apply(
            root,
            &mut config,
            &SettingsEdit::AddHost(" API.Example.com ".into()),
        )
        .unwrap();
        assert_eq!(
            apply(
                root,
                &mut config,
                &SettingsEdit::AddHost("api.example.com".into())
            ),
            Err("api.example.com is already allowed".to_owned())
        );
        apply(
            root,
            &mut config,
            &SettingsEdit::Attempts {
                time_limit_secs: "900".into(),
                retries: "2".into(),
            },
        )
        .unwrap();
        apply(
            root,
            &mut config,
            &SettingsEdit::Retention {
                keep_per_path: "5".into(),
                cap_mib: "40".into(),
            },
        )
        .unwrap();
        apply(
            root,
            &mut config,
            &SettingsEdit::CompletionMode(Some(CompletionMode::SelfVerification)),
        )
        .unwrap();
        assert_eq!(
            config.allowed_hosts,
            vec![cocode_core::workspace::HostPattern::parse("api.example.com").unwrap()]
        );
        assert_eq!(config.limits.attempt_time_limit(), Duration::from_mins(15));
        assert_eq!(config.limits.max_retries(), 2);
        assert_eq!(config.retention.keep_recent_per_path, 5);
        assert_eq!(config.retention.byte_cap, 40 * 1024 * 1024);
        assert_eq!(
            config.completion_mode,
            Some(CompletionMode::SelfVerification)
        );
        apply(
            root,
            &mut config,
            &SettingsEdit::RemoveHost("api.example.com".into()),
        )
        .unwrap();
        assert!(config.allowed_hosts.is_empty());
    }
}
