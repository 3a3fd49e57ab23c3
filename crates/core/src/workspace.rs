//! The workspace entity and its persisted configuration (`workspace.json`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::gate::EditLease;
use crate::path::{CaseSensitivity, NormalizeOptions, NormalizedPath, UnicodeSensitivity};
use crate::task::CompletionMode;
use crate::verification::VerificationLimits;

/// An allowed-host entry: an exact host or `*.suffix`, with an optional port.
/// Stored normalized (lower-case ASCII, no trailing dot); IDNA conversion to
/// ASCII happens before construction.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HostPattern {
    wildcard: bool,
    host: String,
    port: Option<u16>,
}

/// A malformed host pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid host pattern {0:?}: expected 'host', '*.suffix' or either with ':port', in ASCII")]
pub struct HostPatternInvalid(pub String);

impl HostPattern {
    pub fn parse(text: &str) -> Result<Self, HostPatternInvalid> {
        let invalid = || HostPatternInvalid(text.to_owned());
        let lowered = text.trim().to_ascii_lowercase();
        let (host_part, port) = match lowered.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), Some(p.parse::<u16>().map_err(|_| invalid())?)),
            None => (lowered.clone(), None),
        };
        let (wildcard, host) = match host_part.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, host_part.as_str()),
        };
        let host = host.strip_suffix('.').unwrap_or(host);
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        if host.is_empty() || host.len() > 253 || !host.split('.').all(label_ok) || port == Some(0)
        {
            return Err(invalid());
        }
        Ok(Self {
            wildcard,
            host: host.to_owned(),
            port,
        })
    }

    pub fn is_wildcard(&self) -> bool {
        self.wildcard
    }
    pub fn host(&self) -> &str {
        &self.host
    }
    pub fn port(&self) -> Option<u16> {
        self.port
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.wildcard {
            f.write_str("*.")?;
        }
        f.write_str(&self.host)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HostPattern({self})")
    }
}

impl TryFrom<String> for HostPattern {
    type Error = HostPatternInvalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<HostPattern> for String {
    fn from(p: HostPattern) -> String {
        p.to_string()
    }
}

/// The allowed hosts, kept in their three sources so the UI can show the
/// defaults read-only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowedHosts {
    /// Ecosystem defaults for the detected project types.
    pub defaults: Vec<HostPattern>,
    /// Derived from the workspace's lockfiles.
    pub derived: Vec<HostPattern>,
    /// Added by the person.
    pub user: Vec<HostPattern>,
    /// Named in a lockfile only by an agent task's edit: not allowed until
    /// a person adds them to `user`.
    #[serde(default)]
    pub held: Vec<HeldHost>,
}

/// A host a lockfile names because an agent task wrote it there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldHost {
    pub host: HostPattern,
    /// The lockfile, relative to the workspace (`go.sum`).
    pub file: String,
    /// The task whose edit added it.
    pub task: crate::ids::TaskId,
}

impl AllowedHosts {
    /// The union, de-duplicated and sorted.
    pub fn all(&self) -> Vec<&HostPattern> {
        let mut all: Vec<_> = self
            .defaults
            .iter()
            .chain(&self.derived)
            .chain(&self.user)
            .collect();
        all.sort();
        all.dedup();
        all
    }
}

/// A path outside the workspace that an agent's tools may write (a package cache).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteException {
    /// What it is for (`CARGO_HOME`, `PUB_CACHE`, …).
    pub name: String,
    pub path: PathBuf,
}

/// A brick the workspace was scaffolded from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppliedBrick {
    pub name: String,
    pub version: String,
}

/// History retention settings (whole tasks are the unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetentionConfig {
    /// P3: keep a task pinned while it is among the K most recent tasks of a path it touched.
    pub keep_recent_per_path: u32,
    /// P4: total history byte cap.
    pub byte_cap: u64,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        Self {
            keep_recent_per_path: 14,
            byte_cap: 80 * 1024 * 1024,
        }
    }
}

/// The default of [`WorkspaceConfig::max_kept_file_mib`].
pub const DEFAULT_MAX_KEPT_FILE_MIB: u64 = 256;

fn default_max_kept_file_mib() -> u64 {
    DEFAULT_MAX_KEPT_FILE_MIB
}

// serde's `skip_serializing_if` passes a reference.
#[expect(clippy::trivially_copy_pass_by_ref, reason = "serde's signature")]
fn is_default_max_kept_file_mib(mib: &u64) -> bool {
    *mib == DEFAULT_MAX_KEPT_FILE_MIB
}

/// Default protected test locations (any segment depth).
pub const DEFAULT_TEST_PATTERNS: [&str; 9] = [
    "test/",
    "tests/",
    "integration_test/",
    "widgetbook/",
    "benches/",
    "__tests__/",
    "*_test.*",
    "*.test.*",
    "*.spec.*",
];

/// `<workspace>/.cocode/config/workspace.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceConfig {
    pub version: u32,
    /// Only the user part; defaults and derived hosts are computed.
    #[serde(default)]
    pub allowed_hosts: Vec<HostPattern>,
    #[serde(default)]
    pub write_exceptions: Vec<WriteException>,
    /// `None` means the policy default (human approval).
    #[serde(default)]
    pub completion_mode: Option<CompletionMode>,
    #[serde(default)]
    pub limits: VerificationLimits,
    #[serde(default)]
    pub retention: RetentionConfig,
    /// The ceiling, in MiB, for a file's content the history keeps when it
    /// records a change it observed (a command's, an external agent's).
    /// Above it the change is recorded by hash only, "too large to keep",
    /// and a rollback that needs that content is refused.
    #[serde(
        default = "default_max_kept_file_mib",
        skip_serializing_if = "is_default_max_kept_file_mib"
    )]
    pub max_kept_file_mib: u64,
    #[serde(default = "default_test_patterns")]
    pub test_patterns: Vec<String>,
    #[serde(default)]
    pub applied_bricks: Vec<AppliedBrick>,
    /// External ACP agents of this workspace (beside the presets; an entry
    /// with a preset's id replaces it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acp_agents: Vec<AcpAgentEntry>,
    /// Language servers of this workspace: an entry with a built-in
    /// server's id replaces its command (an empty command turns it off).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub language_servers: Vec<LanguageServerEntry>,
    /// The commands verification runs, per method, instead of what it
    /// detects from the project's manifests.
    #[serde(default, skip_serializing_if = "VerificationCommands::is_empty")]
    pub verification: VerificationCommands,
}

/// The `verification` section of `workspace.json`: per method, the
/// program and arguments to run at the workspace root (no shell) instead
/// of what detection would run. An empty list turns the method off
/// (nothing to check); a missing entry keeps detection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerificationCommands {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_analysis: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<String>>,
}

impl VerificationCommands {
    pub fn is_empty(&self) -> bool {
        self.static_analysis.is_none() && self.build.is_none() && self.tests.is_none()
    }

    /// The command named for `method`, if any (③ and ⑤ take none).
    pub fn for_method(&self, method: crate::verification::VerificationMethod) -> Option<&[String]> {
        use crate::verification::VerificationMethod as M;
        match method {
            M::StaticAnalysis => self.static_analysis.as_deref(),
            M::Build => self.build.as_deref(),
            M::Tests => self.tests.as_deref(),
            M::RuntimeErrors | M::ParseCheck => None,
        }
    }
}

/// A language server entry of `workspace.json` (or of the person's
/// `language-servers.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanguageServerEntry {
    pub id: String,
    /// Program and arguments (no shell); empty turns the server off.
    pub command: Vec<String>,
    /// File extensions it serves (without the dot); empty keeps a built-in
    /// server's own.
    #[serde(default)]
    pub extensions: Vec<String>,
}

/// An ACP agent entry of `workspace.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcpAgentEntry {
    pub id: crate::ids::AcpAgentId,
    pub display_name: String,
    /// Program and arguments (no shell).
    pub command: Vec<String>,
    /// Environment overrides (they pass the launcher's whitelist).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Hosts the agent's model API needs.
    #[serde(default)]
    pub model_hosts: Vec<String>,
    /// Variables whose values are secrets (from the keyring or `--pass-env`).
    #[serde(default)]
    pub secret_env: Vec<String>,
    /// The agent's own state folders (`~/` is the home folder).
    #[serde(default)]
    pub state_dirs: Vec<String>,
    /// The login method (an id the agent lists) cocode selects with
    /// `authenticate` before a session when the agent's secret variables
    /// are supplied (Gemini CLI's `gemini-api-key`). Otherwise the person
    /// logs in with the agent's own command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<String>,
}

fn default_test_patterns() -> Vec<String> {
    DEFAULT_TEST_PATTERNS
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

/// Current `workspace.json` format version.
pub const WORKSPACE_CONFIG_VERSION: u32 = 1;

impl Default for WorkspaceConfig {
    fn default() -> Self {
        Self {
            version: WORKSPACE_CONFIG_VERSION,
            allowed_hosts: Vec::new(),
            write_exceptions: Vec::new(),
            completion_mode: None,
            limits: VerificationLimits::default(),
            retention: RetentionConfig::default(),
            max_kept_file_mib: DEFAULT_MAX_KEPT_FILE_MIB,
            test_patterns: default_test_patterns(),
            applied_bricks: Vec::new(),
            acp_agents: Vec::new(),
            language_servers: Vec::new(),
            verification: VerificationCommands::default(),
        }
    }
}

/// An open workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// Canonical absolute path.
    pub root: PathBuf,
    /// Measured by probing the volume when the workspace opened.
    pub case: CaseSensitivity,
    /// Measured the same way: whether NFC and NFD names are one file.
    pub unicode: UnicodeSensitivity,
    pub allowed_hosts: AllowedHosts,
    /// Resolved exceptions only: one that could not be resolved is left out.
    pub write_exceptions: Vec<WriteException>,
    pub edit_locks: BTreeMap<NormalizedPath, EditLease>,
    pub applied_bricks: Vec<AppliedBrick>,
}

impl Workspace {
    /// How this workspace's paths are normalized: the platform's name rules
    /// with the volume's measured case and Unicode rules.
    pub const fn options(&self) -> NormalizeOptions {
        NormalizeOptions::measured(self.case, self.unicode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn host_patterns_normalize_and_refuse_garbage() {
        let p = HostPattern::parse("*.Crates.IO.").unwrap();
        assert_eq!(
            (p.is_wildcard(), p.host(), p.port()),
            (true, "crates.io", None)
        );
        assert_eq!(p.to_string(), "*.crates.io");
        assert_eq!(
            HostPattern::parse("registry.npmjs.org:8443")
                .unwrap()
                .port(),
            Some(8443)
        );
        for bad in [
            "",
            "*.",
            "a..b",
            "-a.com",
            "a.com:0",
            "a.com:99999",
            "a b.com",
            "a/b",
            "한국.kr",
            "*.*.a",
        ] {
            assert_eq!(
                HostPattern::parse(bad),
                Err(HostPatternInvalid(bad.into())),
                "{bad}"
            );
        }
    }

    #[test]
    fn allowed_hosts_union_is_deduplicated() {
        let h = |s| HostPattern::parse(s).unwrap();
        let hosts = AllowedHosts {
            defaults: vec![h("crates.io"), h("static.crates.io")],
            derived: vec![h("crates.io")],
            user: vec![h("example.com")],
            held: Vec::new(),
        };
        let all: Vec<_> = hosts.all().into_iter().map(ToString::to_string).collect();
        assert_eq!(all, ["crates.io", "example.com", "static.crates.io"]);
    }

    #[test]
    fn workspace_config_round_trips_and_rejects_unknown_fields() {
        let config = WorkspaceConfig::default();
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(json["version"], 1);
        assert_eq!(
            json["retention"],
            serde_json::json!({"keep_recent_per_path": 14, "byte_cap": 83_886_080})
        );
        assert_eq!(
            serde_json::from_value::<WorkspaceConfig>(json).unwrap(),
            config
        );

        let minimal: WorkspaceConfig = serde_json::from_str(r#"{"version":1}"#).unwrap();
        assert_eq!(minimal, config);

        let typo = serde_json::from_str::<WorkspaceConfig>(
            r#"{"version":1,"completion_mod":"self_verification"}"#,
        )
        .unwrap_err();
        assert!(
            typo.to_string().contains("unknown field `completion_mod`"),
            "{typo}"
        );
        let bad_host =
            serde_json::from_str::<WorkspaceConfig>(r#"{"version":1,"allowed_hosts":["a..b"]}"#);
        assert!(bad_host.is_err());
    }
}
