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
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

/// The trusted commands of every folder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustStore {
    /// Folder (canonical path) → the commands trusted there.
    #[serde(default)]
    pub folders: BTreeMap<String, Vec<Vec<String>>>,
}

/// Where the person's trusted commands are kept.
pub fn store_file() -> Option<PathBuf> {
    directories::BaseDirs::new()
        .map(|d| d.config_dir().join("cocode").join("trusted-commands.json"))
}

fn key(root: &Path) -> String {
    root.canonicalize()
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

    /// Writes the store to `file`, replacing it atomically.
    pub fn save(&self, file: &Path) -> anyhow::Result<()> {
        crate::host::config_file::replace_json(file, self)
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

/// Records in the person's store that `command` is trusted in `root`.
pub fn trust_command(root: &Path, command: &[String]) -> anyhow::Result<()> {
    let file = store_file().context("this system has no configuration folder")?;
    let mut store = TrustStore::load(&file)?;
    store.trust(root, command);
    store.save(&file)
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
}
