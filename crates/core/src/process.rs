//! Contracts of the process launcher and the sandbox policy.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ids::TaskId;
use crate::services::Secret;
use crate::workspace::HostPattern;

/// Sandbox profiles; also the key list of `SandboxProfileRegistry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxProfileKind {
    /// ACP agents, `terminal.run`, verification: env whitelist, policy
    /// proxy required, OS confinement where available.
    Agent,
    /// The person's own terminal: env whitelist, not proxied, not confined.
    HumanTerminal,
    /// LSP servers, formatters and the hooks of a brick the person chose:
    /// env whitelist, not proxied, not confined.
    Tool,
}

impl SandboxProfileKind {
    pub const ALL: [Self; 3] = [Self::Agent, Self::HumanTerminal, Self::Tool];
}

/// A profile with its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SandboxProfile {
    Agent { task_id: TaskId },
    HumanTerminal,
    Tool,
}

impl SandboxProfile {
    pub fn kind(&self) -> SandboxProfileKind {
        match self {
            Self::Agent { .. } => SandboxProfileKind::Agent,
            Self::HumanTerminal => SandboxProfileKind::HumanTerminal,
            Self::Tool => SandboxProfileKind::Tool,
        }
    }
}

/// How the child's stdio is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LaunchIo {
    /// stdin, and stdout and stderr interleaved in `read_output`.
    Piped,
    /// stdout alone in `read_output` (a protocol such as ACP speaks on it)
    /// and stderr apart in `read_stderr` (the agent's log).
    PipedSplit,
    Pty {
        rows: u16,
        cols: u16,
    },
}

/// Everything the launcher needs for one child process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSpec {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// Explicit variables for this launch; credential-like names are refused.
    pub env_overrides: BTreeMap<String, String>,
    pub profile: SandboxProfile,
    pub io: LaunchIo,
    pub timeout: Option<Duration>,
    /// Output beyond this many bytes is trimmed from the start.
    pub output_byte_limit: Option<usize>,
    /// Further folders this launch may write besides the workspace and the
    /// write exceptions (an external agent's own state folder). Only
    /// existing folders are granted.
    pub extra_writable: Vec<PathBuf>,
    /// An external agent's declared secret variables (its own API key),
    /// for this launch alone: the one way a credential reaches a child.
    /// Only agent launches take them, and each name must look like a
    /// credential (so it can never replace `PATH` or the proxy variables).
    pub secret_env: BTreeMap<String, Secret>,
    /// Hosts this launch alone may reach through the policy proxy besides
    /// the workspace's allowed hosts (an external agent's own model API).
    pub extra_hosts: Vec<HostPattern>,
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitStatus {
    Code(i32),
    Signal(i32),
    TimedOut,
    Killed,
}

/// Launch failures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    #[error("program not found: {0}")]
    NotFound(String),
    #[error("environment variable {0} looks like a credential and is never passed to a child")]
    CredentialLikeEnv(String),
    #[error("environment variable {0} is set by the sandbox and cannot be overridden")]
    ReservedEnv(String),
    #[error(
        "“{0}” is not a valid environment variable name (letters, digits and _, not starting with a digit)"
    )]
    InvalidEnvName(String),
    #[error(
        "the value of environment variable {0} looks like a credential and is never passed to a child"
    )]
    CredentialLikeValue(String),
    #[error(
        "secret variable {0} can only be given to an agent launch, under a credential-like name"
    )]
    SecretEnvNotAllowed(String),
    #[error("the agent profile needs the policy proxy, which is not running")]
    ProxyUnavailable,
    #[error("the sandbox could not be set up: {0}")]
    Sandbox(String),
    #[error("spawn failed: {0}")]
    Spawn(String),
    #[error("I/O with the child failed: {0}")]
    Io(String),
}

/// A running child.
/// A stream of output chunks.
pub type ByteStream = std::pin::Pin<Box<dyn futures_core::Stream<Item = Vec<u8>> + Send>>;

#[async_trait::async_trait]
pub trait ProcessHandle: Send {
    fn pid(&self) -> Option<u32>;
    async fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), LaunchError>;
    /// Closes a piped child's stdin (a filter reading to the end finishes);
    /// later writes fail. Nothing for other kinds.
    fn close_stdin(&mut self) {}
    /// The next chunk of output (stdout and stderr interleaved for PTYs);
    /// `None` at end of output.
    async fn read_output(&mut self) -> Option<Vec<u8>>;
    /// stderr of a `PipedSplit` launch, as its own stream (it can be read
    /// while `read_output` is awaited); `None` for the other kinds, whose
    /// stderr is in `read_output`, and after the first call.
    fn take_stderr(&mut self) -> Option<ByteStream> {
        None
    }
    /// The pseudo-terminal of a [`LaunchIo::Pty`] child, for a terminal that
    /// drives it from its own threads; `None` for piped children and after
    /// the first call. Once taken, `read_output` ends at once and
    /// `write_stdin` fails: the taker owns the terminal's both directions.
    fn take_pty(&mut self) -> Option<PtyIo> {
        None
    }
    async fn wait(&mut self) -> Result<ExitStatus, LaunchError>;
    /// Kills the whole process group.
    async fn kill(&mut self) -> Result<(), LaunchError>;
}

/// Both directions and the size of a child's pseudo-terminal. Reads and
/// writes block, so each belongs on a thread of its own.
pub struct PtyIo {
    /// What the child writes (its stdout and stderr); ends when the child
    /// side closes.
    pub reader: Box<dyn std::io::Read + Send>,
    /// What the child reads as its keyboard.
    pub writer: Box<dyn std::io::Write + Send>,
    pub control: Box<dyn PtyControl>,
}

impl std::fmt::Debug for PtyIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PtyIo")
    }
}

/// What a terminal asks of its pseudo-terminal besides bytes.
pub trait PtyControl: Send + Sync {
    /// Changes the size (the child gets `SIGWINCH`).
    fn resize(&self, rows: u16, cols: u16) -> Result<(), LaunchError>;
    /// The process group in the terminal's foreground (a program the shell
    /// started, or the shell itself); `None` where the platform cannot say.
    fn foreground_group(&self) -> Option<u32>;
}

/// The one place that spawns processes.
pub trait ProcessLauncher: Send + Sync {
    fn launch(&self, spec: LaunchSpec) -> Result<Box<dyn ProcessHandle>, LaunchError>;
}

/// How a launch is confined by the operating system.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Confinement {
    Landlock,
    Seatbelt,
    /// Not confined by the OS, with the reason shown to the person.
    Unconfined {
        reason: String,
    },
}

/// Network reach of a launch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NetworkPlan {
    /// Only through the policy proxy at this loopback port.
    ProxyOnly { port: u16 },
    /// The person's own network (human terminal, tools).
    Unrestricted,
}

/// The complete, decided sandbox for one launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPlan {
    pub env: BTreeMap<String, String>,
    pub writable_roots: Vec<PathBuf>,
    /// Paths inside the writable roots bound read-only in the launch's
    /// mount namespace (version-control metadata and cocode's history
    /// when the workspace root itself is granted).
    pub read_only: Vec<PathBuf>,
    pub network: NetworkPlan,
    pub confinement: Confinement,
}

/// Decides the sandbox of a launch (a pure transform of the spec).
pub trait SandboxPolicy: Send + Sync {
    fn plan(&self, spec: &LaunchSpec) -> Result<SandboxPlan, LaunchError>;
}
