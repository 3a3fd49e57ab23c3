//! Commands a workspace's own configuration names (language servers and
//! verification commands in `.cocode/config/workspace.json`) run only once
//! the person trusted them
//! for that folder: a cloned repository could otherwise name any program,
//! started as soon as one of its files opens. What the person trusted is
//! kept outside every workspace, per person
//! (`<config dir>/cocode/trusted-commands.json`), keyed by the folder's
//! canonical path and the exact command; a changed command is asked about
//! again.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

/// The trusted commands of every folder, and what the person decided
/// about the hosts and agents a folder's `workspace.json` grants.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustStore {
    /// Folder (canonical path) → the commands trusted there.
    #[serde(default)]
    pub folders: BTreeMap<String, Vec<Vec<String>>>,
    /// Folder → the grants the person allowed there.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allowed: BTreeMap<String, Vec<Grant>>,
    /// Folder → the grants the person kept off there (not asked again).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub refused: BTreeMap<String, Vec<Grant>>,
}

/// What a workspace's own `workspace.json` grants its agents, which a
/// person confirms before any agent of the folder runs: a cloned
/// repository could otherwise open the network to any host, or name the
/// program an "agent" entry starts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Grant {
    /// A host of `allowed_hosts`: agents' commands may reach it.
    Host { host: String },
    /// An `acp_agents` entry: the program it starts (with its environment).
    Agent {
        id: String,
        command: Vec<String>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
    },
    /// A host of an `acp_agents` entry's `model_hosts`.
    ModelHost { agent: String, host: String },
}

impl Grant {
    /// The grant in a person's words.
    pub fn words(&self) -> String {
        match self {
            Self::Host { host } => format!("network access to {host} for agents' commands"),
            Self::Agent { id, command, env } => {
                let mut text = format!(
                    "the external agent “{id}”, started as: {}",
                    cocode_core::shown::command(command)
                );
                if !env.is_empty() {
                    let names: Vec<&str> = env.keys().map(String::as_str).collect();
                    let _ = write!(text, " (setting {})", names.join(", "));
                }
                text
            }
            Self::ModelHost { agent, host } => {
                format!("network access to {host} for the agent “{agent}”")
            }
        }
    }
}

/// Every grant of `config`, in the file's order.
pub fn grants_of(config: &cocode_core::workspace::WorkspaceConfig) -> Vec<Grant> {
    let mut grants: Vec<Grant> = config
        .allowed_hosts
        .iter()
        .map(|h| Grant::Host {
            host: h.to_string(),
        })
        .collect();
    for agent in &config.acp_agents {
        grants.push(Grant::Agent {
            id: agent.id.to_string(),
            command: agent.command.clone(),
            env: agent.env.clone(),
        });
        for host in &agent.model_hosts {
            grants.push(Grant::ModelHost {
                agent: agent.id.to_string(),
                host: host.clone(),
            });
        }
    }
    grants.dedup();
    grants
}

/// What the person decided about a folder's grants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrantStanding {
    pub allowed: Vec<Grant>,
    pub refused: Vec<Grant>,
    /// Neither yet: off until the person allows them.
    pub pending: Vec<Grant>,
}

/// Where the person's trusted commands are kept.
pub fn store_file() -> Option<PathBuf> {
    directories::BaseDirs::new()
        .map(|d| d.config_dir().join("cocode").join("trusted-commands.json"))
}

fn key(root: &Path) -> String {
    dunce::canonicalize(root)
        .unwrap_or_else(|_| root.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

impl TrustStore {
    /// The store in `file` (empty when it does not exist; an unreadable or
    /// malformed file is an error, so nothing is trusted by accident).
    pub fn load(file: &Path) -> anyhow::Result<Self> {
        match std::fs::read_to_string(file) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("{} is not a list of trusted commands", file.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(e).with_context(|| format!("{} cannot be read", file.display())),
        }
    }

    /// The person's store; a broken one trusts nothing (and says so in the
    /// log).
    pub fn person() -> Self {
        match store_file().map(|f| Self::load(&f)) {
            Some(Ok(store)) => store,
            Some(Err(e)) => {
                tracing::warn!("{e:#}");
                Self::default()
            }
            None => Self::default(),
        }
    }

    /// Whether `command` is trusted in the folder `root`.
    pub fn trusts(&self, root: &Path, command: &[String]) -> bool {
        self.folders
            .get(&key(root))
            .is_some_and(|commands| commands.iter().any(|c| c == command))
    }

    /// Trusts `command` in `root`.
    pub fn trust(&mut self, root: &Path, command: &[String]) {
        let commands = self.folders.entry(key(root)).or_default();
        if !commands.iter().any(|c| c == command) {
            commands.push(command.to_vec());
        }
    }

    /// Where each grant of `config` stands in the folder `root`.
    pub fn standing(
        &self,
        root: &Path,
        config: &cocode_core::workspace::WorkspaceConfig,
    ) -> GrantStanding {
        let allowed = self.allowed.get(&key(root));
        let refused = self.refused.get(&key(root));
        let mut standing = GrantStanding::default();
        for grant in grants_of(config) {
            if refused.is_some_and(|r| r.contains(&grant)) {
                standing.refused.push(grant);
            } else if allowed.is_some_and(|a| a.contains(&grant)) {
                standing.allowed.push(grant);
            } else {
                standing.pending.push(grant);
            }
        }
        standing
    }

    /// Records the person's decision on `grant` in `root`.
    pub fn decide(&mut self, root: &Path, grant: &Grant, allow: bool) {
        let k = key(root);
        let (yes, no) = if allow {
            (&mut self.allowed, &mut self.refused)
        } else {
            (&mut self.refused, &mut self.allowed)
        };
        if let Some(list) = no.get_mut(&k) {
            list.retain(|g| g != grant);
        }
        let list = yes.entry(k).or_default();
        if !list.contains(grant) {
            list.push(grant.clone());
        }
    }

    /// `config` with only what the person allowed in `root`: hosts and
    /// model hosts not allowed are left out, and an agent entry whose
    /// command is not allowed is left out (a preset of the same id stays
    /// as it ships).
    pub fn effective(
        &self,
        root: &Path,
        config: &cocode_core::workspace::WorkspaceConfig,
    ) -> cocode_core::workspace::WorkspaceConfig {
        let allowed = self.standing(root, config).allowed;
        let mut out = config.clone();
        out.allowed_hosts.retain(|h| {
            allowed.contains(&Grant::Host {
                host: h.to_string(),
            })
        });
        out.acp_agents.retain(|a| {
            allowed.contains(&Grant::Agent {
                id: a.id.to_string(),
                command: a.command.clone(),
                env: a.env.clone(),
            })
        });
        for agent in &mut out.acp_agents {
            let id = agent.id.to_string();
            agent.model_hosts.retain(|host| {
                allowed.contains(&Grant::ModelHost {
                    agent: id.clone(),
                    host: host.clone(),
                })
            });
        }
        out
    }

    /// Writes the store to `file`, replacing it atomically.
    pub fn save(&self, file: &Path) -> anyhow::Result<()> {
        crate::host::config_file::replace_json(file, self)
    }

    /// Drops the decisions of folders that no longer exist: a folder made
    /// later at the same path is not the one the person trusted, and the
    /// store does not grow with every throwaway checkout. A folder that
    /// cannot be looked at (no permission, a disk not mounted in a way
    /// that says "not found") keeps its decisions.
    pub fn forget_gone_folders(&mut self) {
        let gone = |key: &String| {
            std::fs::symlink_metadata(key).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        };
        self.folders.retain(|k, _| !gone(k));
        self.allowed.retain(|k, _| !gone(k));
        self.refused.retain(|k, _| !gone(k));
    }
}

/// The methods whose command the workspace's `verification` settings name
/// and the person has not trusted in `root` (an empty command runs
/// nothing and needs no trust).
pub fn untrusted_verification(
    root: &Path,
    commands: &cocode_core::workspace::VerificationCommands,
) -> Vec<cocode_core::verification::VerificationMethod> {
    let store = TrustStore::person();
    cocode_core::verification::VerificationMethod::EXECUTION_ORDER
        .into_iter()
        .filter(|m| {
            commands
                .for_method(*m)
                .is_some_and(|c| !c.is_empty() && !store.trusts(root, c))
        })
        .collect()
}

/// Where the grants of `config` stand for the person in `root`.
pub fn grant_standing(
    root: &Path,
    config: &cocode_core::workspace::WorkspaceConfig,
) -> GrantStanding {
    TrustStore::person().standing(root, config)
}

/// `config` as the person allowed it in `root` (see [`TrustStore::effective`]).
pub fn effective_config(
    root: &Path,
    config: &cocode_core::workspace::WorkspaceConfig,
) -> cocode_core::workspace::WorkspaceConfig {
    TrustStore::person().effective(root, config)
}

/// Records the person's decisions on grants of `root` in their store.
pub fn decide_grants(root: &Path, decisions: &[(Grant, bool)]) -> anyhow::Result<()> {
    if decisions.is_empty() {
        return Ok(());
    }
    let file = store_file().context("this system has no configuration folder")?;
    decide_grants_in(&file, root, decisions)
}

/// Records decisions in the store `file`, under its lock: another process
/// deciding at the same moment (a second window, the command line) keeps
/// its decisions too.
fn decide_grants_in(file: &Path, root: &Path, decisions: &[(Grant, bool)]) -> anyhow::Result<()> {
    crate::host::config_file::locked(file, || {
        let mut store = TrustStore::load(file)?;
        store.forget_gone_folders();
        for (grant, allow) in decisions {
            store.decide(root, grant, *allow);
        }
        store.save(file)
    })
}

/// Records in the person's store that `command` is trusted in `root`.
pub fn trust_command(root: &Path, command: &[String]) -> anyhow::Result<()> {
    let file = store_file().context("this system has no configuration folder")?;
    crate::host::config_file::locked(&file, || {
        let mut store = TrustStore::load(&file)?;
        store.forget_gone_folders();
        store.trust(root, command);
        store.save(&file)
    })
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests lay out and break the file"
)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_trusted_only_in_its_folder_and_only_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let file = dir.path().join("config/trusted-commands.json");
        assert_eq!(TrustStore::load(&file).unwrap(), TrustStore::default());
        let cmd = vec!["./tools/lsp".to_owned(), "--stdio".to_owned()];
        let mut store = TrustStore::default();
        store.trust(&a, &cmd);
        store.trust(&a, &cmd);
        store.save(&file).unwrap();
        let store = TrustStore::load(&file).unwrap();
        assert_eq!(store.folders.values().map(Vec::len).sum::<usize>(), 1);
        assert!(store.trusts(&a, &cmd));
        // Through another spelling of the same folder.
        assert!(store.trusts(&a.join("../a"), &cmd));
        assert!(!store.trusts(&b, &cmd));
        assert!(!store.trusts(&a, &["./tools/lsp".to_owned()]));
        // A broken store is an error, never an empty trust list silently.
        std::fs::write(&file, "{ not json").unwrap();
        assert!(TrustStore::load(&file).is_err());
    }

    /// A folder removed since its decisions were made loses them when the
    /// store is next written (a folder made again at its path is not the
    /// one trusted); the folders that exist keep theirs.
    #[test]
    fn decisions_of_folders_that_are_gone_go_when_the_store_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config/trusted-commands.json");
        let (kept, gone) = (dir.path().join("kept"), dir.path().join("gone"));
        std::fs::create_dir_all(&kept).unwrap();
        std::fs::create_dir_all(&gone).unwrap();
        let host = |h: &str| Grant::Host { host: h.to_owned() };
        let cmd = vec!["./lsp".to_owned()];
        decide_grants_in(&file, &kept, &[(host("a.example"), true)]).unwrap();
        decide_grants_in(&file, &gone, &[(host("b.example"), true)]).unwrap();
        decide_grants_in(&file, &gone, &[(host("c.example"), false)]).unwrap();
        let gone_key = key(&gone);
        let mut store = TrustStore::load(&file).unwrap();
        store.trust(&gone, &cmd);
        store.save(&file).unwrap();
        std::fs::remove_dir(&gone).unwrap();
        // Read as it is, nothing is dropped.
        let store = TrustStore::load(&file).unwrap();
        assert!(store.allowed.contains_key(&gone_key));
        // The next write drops every decision of the folder that is gone.
        decide_grants_in(&file, &kept, &[(host("d.example"), true)]).unwrap();
        let store = TrustStore::load(&file).unwrap();
        assert_eq!(
            (
                store.folders.keys().collect::<Vec<_>>(),
                store.allowed.keys().cloned().collect::<Vec<_>>(),
                store.refused.keys().collect::<Vec<_>>(),
            ),
            (vec![], vec![key(&kept)], vec![])
        );
        assert_eq!(
            store.allowed[&key(&kept)],
            vec![host("a.example"), host("d.example")]
        );
        // Made again at the same path, it is not trusted.
        std::fs::create_dir_all(&gone).unwrap();
        assert!(!store.trusts(&gone, &cmd));
    }

    /// Eight deciders at once (as two windows and the command line would
    /// be) each keep their decision: the store is read, changed and
    /// replaced under its lock, never over another's change.
    #[test]
    fn decisions_made_at_the_same_moment_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config/trusted-commands.json");
        let roots: Vec<PathBuf> = (0..8)
            .map(|n| {
                let root = dir.path().join(format!("folder-{n}"));
                std::fs::create_dir_all(&root).unwrap();
                root
            })
            .collect();
        let start = std::sync::Barrier::new(roots.len());
        std::thread::scope(|s| {
            for root in &roots {
                let (file, start) = (&file, &start);
                s.spawn(move || {
                    start.wait();
                    for round in 0..10 {
                        let grant = Grant::Host {
                            host: format!("host-{round}.example"),
                        };
                        decide_grants_in(file, root, &[(grant, true)]).unwrap();
                    }
                });
            }
        });
        let store = TrustStore::load(&file).unwrap();
        for root in &roots {
            let hosts: Vec<String> = store.allowed[&key(root)]
                .iter()
                .map(|g| match g {
                    Grant::Host { host } => host.clone(),
                    other => panic!("{other:?}"),
                })
                .collect();
            let expected: Vec<String> = (0..10).map(|r| format!("host-{r}.example")).collect();
            assert_eq!(hosts, expected, "{}", root.display());
        }
    }
}
