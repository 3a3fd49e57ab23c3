//! Opening a workspace: the canonical root, the measured case rule, the
//! `.cocode/` layout, `workspace.json`, and a gate ready to recover.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cocode_core::gate::StoreError;
use cocode_core::path::{CaseSensitivity, NormalizeOptions, UnicodeSensitivity};
use cocode_core::workspace::{
    AllowedHosts, WORKSPACE_CONFIG_VERSION, Workspace, WorkspaceConfig, WriteException,
};

use crate::gate::Gate;
use crate::layout::Layout;
use crate::policy::{PathPolicy, TestPatternInvalid, TestPatterns};
use crate::store::HistoryStore;

/// Why a workspace could not be opened. Nothing on disk was overwritten.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("not a folder: {0}")]
    NotAFolder(PathBuf),
    #[error("cannot open the workspace: {message} ({path})")]
    Io { path: PathBuf, message: String },
    #[error("workspace.json is invalid and was left untouched: {reason} ({path})")]
    ConfigInvalid { path: PathBuf, reason: String },
    #[error(
        "workspace.json has format version {found}; this build reads version {WORKSPACE_CONFIG_VERSION} ({path})"
    )]
    ConfigVersion { path: PathBuf, found: u32 },
    #[error(transparent)]
    TestPatterns(#[from] TestPatternInvalid),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "the workspace is open for writing in another cocode process ({holder}); close it there or wait until it ends"
    )]
    Busy { holder: String },
}

/// The right to write the workspace: one process at a time holds it (an OS
/// file lock on `.cocode/writer.lock`, which ends with the process however
/// it ends). Held by the window and by every command line that changes the
/// workspace; readers (`task list`, `task show`) need none.
#[derive(Debug)]
pub struct WriterLock {
    _lock: crate::disk::FileLock,
}

/// A folder's cocode settings as they are, read without creating anything
/// (for commands that only look: `acp list`, `lsp servers`, `doctor` on a
/// folder cocode has not worked in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderPeek {
    /// Canonical.
    pub root: PathBuf,
    /// `workspace.json`, or the defaults when there is none.
    pub config: WorkspaceConfig,
    /// Whether the folder has a `.cocode/` folder.
    pub has_history: bool,
}

/// `folder`'s canonical path, when it is a folder.
fn canonical_folder(folder: &Path) -> Result<PathBuf, OpenError> {
    let root = dunce::canonicalize(folder).map_err(|e| OpenError::Io {
        path: folder.to_path_buf(),
        message: e.to_string(),
    })?;
    if root.is_dir() {
        Ok(root)
    } else {
        Err(OpenError::NotAFolder(root))
    }
}

/// Reads what `folder`'s settings say without creating anything: no
/// `.cocode/`, no lock, no probe file. A `workspace.json` that cannot be
/// used is the same error [`OpenWorkspace::open`] gives.
pub fn peek(folder: &Path) -> Result<FolderPeek, OpenError> {
    let root = canonical_folder(folder)?;
    let layout = Layout::new(&root);
    let has_history = layout.cocode_dir().is_dir();
    let config = read_config(&layout)?.unwrap_or_default();
    Ok(FolderPeek {
        root,
        config,
        has_history,
    })
}

/// An open workspace and its gate.
#[derive(Debug)]
pub struct OpenWorkspace {
    pub workspace: Workspace,
    pub config: WorkspaceConfig,
    pub layout: Layout,
    pub gate: Gate,
}

impl OpenWorkspace {
    /// Opens (and on first use initializes) the workspace at `folder`.
    /// Recovery is not run here: call `gate.recover()` and show its report;
    /// the gate's first operation runs it regardless.
    #[tracing::instrument(level = "debug", skip_all, name = "workspace.open")]
    pub fn open(folder: &Path) -> Result<Self, OpenError> {
        let root = canonical_folder(folder)?;
        let layout = Layout::new(&root);
        let store = HistoryStore::new(layout.clone());
        store.create_layout()?;
        let case = probe_case(&layout)?;
        let unicode = probe_unicode(&layout)?;
        let config = load_or_create_config(&store, &layout)?;
        let write_exceptions = resolve_exceptions(&config.write_exceptions);
        let options = NormalizeOptions::measured(case, unicode);
        let policy = PathPolicy::new(
            &root,
            options,
            write_exceptions.iter().map(|x| x.path.clone()).collect(),
        );
        let tests = TestPatterns::new(&config.test_patterns)?;
        let gate = Gate::new(layout.clone(), policy, tests)
            .map_err(|e| OpenError::Io {
                path: root.clone(),
                message: e.to_string(),
            })?
            .with_sweep_limits(crate::sweep::SweepLimits {
                max_file_bytes: config.max_kept_file_mib.saturating_mul(1024 * 1024),
                ..crate::sweep::SweepLimits::default()
            });
        let workspace = Workspace {
            root,
            case,
            unicode,
            allowed_hosts: AllowedHosts {
                user: config.allowed_hosts.clone(),
                ..AllowedHosts::default()
            },
            write_exceptions,
            edit_locks: BTreeMap::new(),
            applied_bricks: config.applied_bricks.clone(),
        };
        Ok(Self {
            workspace,
            config,
            layout,
            gate,
        })
    }

    /// Adds `host` to the person's allowed hosts in `workspace.json` (read
    /// afresh, so edits made meanwhile survive) and returns the new list.
    pub fn allow_host(
        &self,
        host: &cocode_core::workspace::HostPattern,
    ) -> Result<Vec<cocode_core::workspace::HostPattern>, OpenError> {
        let mut config = load_or_create_config(self.gate.store(), &self.layout)?;
        if !config.allowed_hosts.contains(host) {
            config.allowed_hosts.push(host.clone());
            self.gate.store().save_config(&config)?;
        }
        Ok(config.allowed_hosts)
    }

    /// Takes the workspace's writer lock for this process, naming it as
    /// `holder` (its process id is added) for whoever finds it taken.
    pub fn lock_for_writing(&self, holder: &str) -> Result<WriterLock, OpenError> {
        let path = self.layout.writer_lock();
        let named = format!("pid {}: {holder}", std::process::id());
        crate::disk::try_lock_file(&path, &named)
            .map(|lock| WriterLock { _lock: lock })
            .map_err(|refused| match refused {
                crate::disk::LockRefused::Held(holder) => OpenError::Busy {
                    holder: if holder.is_empty() {
                        "a process that did not say which".to_owned()
                    } else {
                        holder
                    },
                },
                crate::disk::LockRefused::Io(e) => OpenError::Io {
                    path,
                    message: e.to_string(),
                },
            })
    }

    /// `workspace.json` as it is now (a change made while the workspace is
    /// open applies from here).
    pub fn current_config(&self) -> Result<WorkspaceConfig, OpenError> {
        load_or_create_config(self.gate.store(), &self.layout)
    }

    /// Replaces `workspace.json` with `config` (the old file stays until
    /// the new one is complete). The settings read at open stay as they
    /// were; [`Self::current_config`] reads the new ones.
    pub fn replace_config(&self, config: &WorkspaceConfig) -> Result<(), StoreError> {
        self.gate.store().save_config(config)
    }

    /// The person's allowed hosts as `workspace.json` holds them now.
    pub fn user_hosts(&self) -> Result<Vec<cocode_core::workspace::HostPattern>, OpenError> {
        Ok(load_or_create_config(self.gate.store(), &self.layout)?.allowed_hosts)
    }

    /// The verification commands as `workspace.json` holds them now (a
    /// change made while the workspace is open applies to the next check).
    pub fn verification_commands(
        &self,
    ) -> Result<cocode_core::workspace::VerificationCommands, OpenError> {
        Ok(load_or_create_config(self.gate.store(), &self.layout)?.verification)
    }

    /// Saves a changed config (the old file stays until the new one is complete).
    pub fn save_config(&mut self, config: WorkspaceConfig) -> Result<(), StoreError> {
        self.gate.store().save_config(&config)?;
        self.config = config;
        Ok(())
    }
}

/// Measures whether the volume folds case: creates a lower-case probe file
/// in `.cocode/` and looks for its upper-case spelling.
pub fn probe_case(layout: &Layout) -> Result<CaseSensitivity, StoreError> {
    let stem = format!("case-probe-{}", std::process::id());
    let lower = layout.cocode_dir().join(format!("{stem}-x"));
    let upper = layout
        .cocode_dir()
        .join(format!("{}-X", stem.to_uppercase()));
    Ok(if folds(&lower, &upper)? {
        CaseSensitivity::Insensitive
    } else {
        CaseSensitivity::Sensitive
    })
}

/// Measures whether the volume folds Unicode normalization: creates a probe
/// file whose name holds a composed `é` (NFC) in `.cocode/` and looks for
/// the decomposed spelling (`e` + U+0301, NFD).
pub fn probe_unicode(layout: &Layout) -> Result<UnicodeSensitivity, StoreError> {
    let stem = format!("nf-probe-{}", std::process::id());
    let composed = layout.cocode_dir().join(format!("{stem}-\u{e9}"));
    let decomposed = layout.cocode_dir().join(format!("{stem}-e\u{301}"));
    Ok(if folds(&composed, &decomposed)? {
        UnicodeSensitivity::Insensitive
    } else {
        UnicodeSensitivity::Sensitive
    })
}

/// Whether `other` names the probe file `created` (made, looked up as
/// `other`, removed).
fn folds(created: &Path, other: &Path) -> Result<bool, StoreError> {
    HistoryStore::remove_state_file(created)?;
    HistoryStore::create_probe(created)?;
    let folded = other.symlink_metadata().is_ok();
    HistoryStore::remove_state_file(created)?;
    Ok(folded)
}

fn load_or_create_config(
    store: &HistoryStore,
    layout: &Layout,
) -> Result<WorkspaceConfig, OpenError> {
    if let Some(config) = read_config(layout)? {
        return Ok(config);
    }
    let config = WorkspaceConfig::default();
    store.save_config(&config)?;
    Ok(config)
}

/// `workspace.json` as it is (`None`: there is none).
fn read_config(layout: &Layout) -> Result<Option<WorkspaceConfig>, OpenError> {
    let path = layout.config_file();
    match std::fs::read(&path) {
        Ok(bytes) => {
            let value: serde_json::Value =
                serde_json::from_slice(&bytes).map_err(|e| OpenError::ConfigInvalid {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
            let found = value
                .get("version")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0);
            if found != u64::from(WORKSPACE_CONFIG_VERSION) {
                return Err(OpenError::ConfigVersion {
                    path,
                    found: u32::try_from(found).unwrap_or(u32::MAX),
                });
            }
            serde_json::from_value(value)
                .map(Some)
                .map_err(|e| OpenError::ConfigInvalid {
                    path,
                    reason: e.to_string(),
                })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(OpenError::Io {
            path,
            message: e.to_string(),
        }),
    }
}

/// Canonical exceptions; one that does not resolve (missing folder) is left out.
fn resolve_exceptions(configured: &[WriteException]) -> Vec<WriteException> {
    configured
        .iter()
        .filter_map(|x| {
            dunce::canonicalize(&x.path)
                .ok()
                .map(|path| WriteException {
                    name: x.name.clone(),
                    path,
                })
        })
        .collect()
}
