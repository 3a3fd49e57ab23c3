//! The agent runtime contract shared by the built-in agent and the ACP host.
//!
//! A backend never decides policy: everything that touches the workspace
//! comes back to the host as an [`AgentRequest`] that the host completes
//! exactly once, through the same use cases for every backend.

use std::fmt;
use std::pin::Pin;
use std::time::Duration;

use futures_core::Stream;
use serde::{Deserialize, Serialize};

use crate::ids::{AcpAgentId, ProviderId, RequestId, SessionId, TaskId};
use crate::task::CancelReason;

/// Agent backend kinds; also the key list of `AgentBackendRegistry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentBackendKind {
    /// The built-in multi-provider agent (including the local agent).
    BuiltIn,
    /// External agents over the Agent Client Protocol.
    Acp,
}

impl AgentBackendKind {
    pub const ALL: [Self; 2] = [Self::BuiltIn, Self::Acp];
}

/// A provider or agent a runtime offers, for the backend picker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProvider {
    pub id: ProviderId,
    pub display_name: String,
    /// Whether the provider can be used now (key present, agent installed).
    pub available: bool,
    pub models: Vec<String>,
}

/// What a session is started for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRequest {
    pub task_id: TaskId,
    pub session_id: SessionId,
    /// Absolute workspace root (the ACP `cwd`).
    pub workspace_root: std::path::PathBuf,
    pub target: SessionTarget,
    /// Request-level timeout after which a pending host request fails back to the agent.
    pub request_timeout: Duration,
    /// The project's instructions for the built-in agent: the person's own
    /// file, then the workspace root's `AGENTS.md`, and where to find the
    /// ones of the folders it touches. External agents read their own.
    pub instructions: Instructions,
}

/// One instructions file as given to a model.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProjectInstructions {
    /// Where it comes from, as a person reads it (`AGENTS.md`,
    /// `crates/x/AGENTS.md`, `~/.config/cocode/AGENTS.md`).
    pub source: String,
    /// Its text (capped; a cut one says so at its end).
    pub text: String,
}

/// The instructions files of the folders above a workspace path.
pub trait InstructionsLookup: Send + Sync {
    /// Those of the folders between the workspace root (not included) and
    /// `path`, outermost first, each file once per task: a file already
    /// given is not given again.
    fn above(&self, path: &str) -> Vec<ProjectInstructions>;
}

/// The instructions a session starts with, and the lookup for nested ones.
#[derive(Clone, Default)]
pub struct Instructions {
    pub files: Vec<ProjectInstructions>,
    pub nested: Option<std::sync::Arc<dyn InstructionsLookup>>,
}

impl fmt::Debug for Instructions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Instructions")
            .field("files", &self.files)
            .field("nested", &self.nested.is_some())
            .finish()
    }
}

impl PartialEq for Instructions {
    fn eq(&self, other: &Self) -> bool {
        self.files == other.files
            && match (&self.nested, &other.nested) {
                (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

impl Eq for Instructions {}

/// Which model or agent the session talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionTarget {
    Provider { provider: ProviderId, model: String },
    Local,
    Acp { agent_id: AcpAgentId },
}

/// What a session can do, as negotiated at start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent yes/no capabilities, as the protocol negotiates them"
)]
pub struct AgentCapabilities {
    pub load_session: bool,
    pub images: bool,
    pub streaming: bool,
    /// The agent has `task.finish`: it says when an attempt is done, and a
    /// turn it ends without saying so is unfinished. Without it (external
    /// agents), the end of its turn is the end of the attempt.
    pub finish_tool: bool,
}

/// One user turn sent to the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserTurn {
    pub text: String,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndReason {
    /// The agent declared the attempt done.
    Finished,
    /// The agent stopped and waits for the next user turn.
    EndTurn,
    MaxTurns,
    MaxTokens,
    Refusal,
    Cancelled,
}

/// Status of a tool call as reported by the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
    Cancelled,
}

/// A streamed tool-call row for the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallUpdate {
    pub call_id: String,
    pub title: Option<String>,
    pub status: ToolCallStatus,
    /// Workspace-relative paths the call touches.
    pub locations: Vec<String>,
    /// What the call shows (empty: unchanged since the last update).
    pub content: Vec<ToolCallContent>,
}

/// Something a tool call shows in the transcript.
#[derive(Clone, PartialEq, Eq)]
pub enum ToolCallContent {
    /// What the call returned, as text.
    Text(String),
    /// The call's arguments as the model sent them (JSON text).
    Input(String),
    /// A file change; `old_text` is `None` for a new file.
    Diff {
        path: String,
        old_text: Option<String>,
        new_text: String,
    },
    /// A command's terminal; its output arrives as
    /// [`AgentEvent::TerminalOutput`] with the same id.
    Terminal { terminal_id: String },
}

impl fmt::Debug for ToolCallContent {
    /// File contents never appear in logs or traces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Text(t) => f.debug_tuple("Text").field(&t.chars().count()).finish(),
            Self::Input(t) => f.debug_tuple("Input").field(&t.chars().count()).finish(),
            Self::Diff {
                path,
                old_text,
                new_text,
            } => f
                .debug_struct("Diff")
                .field("path", path)
                .field("old_chars", &old_text.as_ref().map(|t| t.chars().count()))
                .field("new_chars", &new_text.chars().count())
                .finish(),
            Self::Terminal { terminal_id } => f
                .debug_struct("Terminal")
                .field("terminal_id", terminal_id)
                .finish(),
        }
    }
}

/// One entry of an agent's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanEntry {
    pub content: String,
    pub done: bool,
}

/// A file operation an agent asks the host to perform through the gate.
#[derive(Clone, PartialEq, Eq)]
pub enum FileEditOp {
    Write { path: String, content: String },
    Delete { path: String },
    Rename { from: String, to: String },
}

impl fmt::Debug for FileEditOp {
    /// File contents never appear in logs or traces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Write { path, content } => f
                .debug_struct("Write")
                .field("path", path)
                .field("content_chars", &content.chars().count())
                .finish(),
            Self::Delete { path } => f.debug_struct("Delete").field("path", path).finish(),
            Self::Rename { from, to } => f
                .debug_struct("Rename")
                .field("from", from)
                .field("to", to)
                .finish(),
        }
    }
}

/// A permission option offered by the agent (ACP `request_permission`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOptionKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

/// One answer an agent offers to its permission request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PermissionOption {
    pub id: String,
    /// The agent's own words ("Allow once", "Always allow", "Reject").
    pub name: String,
    pub kind: PermissionOptionKind,
}

/// A host request payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentRequestKind {
    FileRead {
        path: String,
        line: Option<u32>,
        limit: Option<u32>,
    },
    FileEdit(FileEditOp),
    /// A command run in the workspace under the agent profile; the host
    /// completes it when the command has ended, with `exitCode`, `output`,
    /// `truncated` and `timedOut`.
    Command {
        argv: Vec<String>,
        /// Workspace-relative; `None` is the workspace root.
        cwd: Option<String>,
        /// Extra environment, still subject to the launcher's whitelist.
        env: Vec<(String, String)>,
        /// The most output returned (the start is trimmed first); the host
        /// caps it at its own limit.
        output_limit: Option<u64>,
    },
    Permission {
        title: String,
        /// As the agent offers them, in its order.
        options: Vec<PermissionOption>,
        /// Workspace-relative paths the action touches (its tool call's
        /// locations), as the agent named them.
        locations: Vec<String>,
    },
}

/// How the host completed a request (exactly once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestCompletion {
    Success(serde_json::Value),
    /// Refused by policy or by a person; `code` is a stable error code.
    Refused {
        code: String,
    },
    Error {
        code: String,
        retryable: bool,
    },
}

/// A request the host must complete exactly once (success, refusal or error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRequest {
    pub id: RequestId,
    pub kind: AgentRequestKind,
}

/// Everything a session reports. The event stream is the only observation point.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentEvent {
    MessageDelta(String),
    ThoughtDelta(String),
    ToolCallUpdate(ToolCallUpdate),
    Plan(Vec<PlanEntry>),
    /// Commands the agent offers now: (name, description).
    AvailableCommands(Vec<(String, String)>),
    /// The agent's session mode changed (e.g. `plan`, `default`).
    ModeChanged(String),
    /// The agent's context window: `used` of `size` tokens.
    ContextUsage {
        used: u64,
        size: u64,
    },
    /// Tokens one model request used, as the provider reported them:
    /// `input` includes the `cached` part read from the provider's cache;
    /// `cost_micros` is what the request cost in millionths of a US dollar
    /// by the person's price table, when it prices the model.
    TokenUsage {
        input: u64,
        output: u64,
        cached: u64,
        cost_micros: Option<u64>,
    },
    /// The conversation was compacted to stay within the model's context
    /// window. `before` and `after` estimate the next request's tokens;
    /// `left_out` old tool results were replaced by a note and the first
    /// `summarized` messages by the model's `summary` (none when leaving
    /// results out was enough). `replaced` is the conversation as the model
    /// saw it before, for the task's record.
    Compacted {
        before: u64,
        after: u64,
        left_out: usize,
        summarized: usize,
        summary: Option<String>,
        replaced: serde_json::Value,
    },
    /// The server says another model answered than the one asked for (a
    /// dated snapshot of the asked model is the same model). Said once per
    /// model a session sees.
    ModelMismatch {
        asked: String,
        answered: String,
    },
    TurnEnded {
        reason: TurnEndReason,
    },
    TransportClosed {
        reason: String,
    },
    /// A provider request failed with a retryable error and is sent again
    /// (`attempt` of `max`, e.g. "retry 1/2"); text streamed by the failed
    /// request is void.
    Retrying {
        attempt: u32,
        max: u32,
        code: String,
    },
    /// The run stopped on an error it could not recover from; no further
    /// turn follows until the next `send`. `code` is a stable error code.
    Failed {
        code: String,
        message: String,
    },
    Request(AgentRequest),
    /// The backend no longer needs a request it made (an ACP agent killed
    /// or released a terminal whose command still runs): the host cancels
    /// the work and still completes the request, normally with a
    /// cancellation error.
    RequestWithdrawn {
        id: RequestId,
    },
    /// A command's final output in a terminal the agent created; kept in
    /// the transcript after the agent releases the terminal.
    TerminalOutput {
        terminal_id: String,
        output: String,
        exit_code: Option<i32>,
        truncated: bool,
    },
}

/// The session's event stream.
pub type EventStream = Pin<Box<dyn Stream<Item = AgentEvent> + Send>>;

/// Errors of a runtime or session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    #[error("{code}: {message}")]
    Backend {
        code: String,
        message: String,
        retryable: bool,
    },
    #[error("the session is closed")]
    Closed,
    #[error("request {0} was already completed")]
    AlreadyCompleted(RequestId),
}

/// A backend that can start agent sessions.
#[async_trait::async_trait]
pub trait AgentRuntime: Send + Sync {
    fn kind(&self) -> AgentBackendKind;
    async fn describe_providers(&self) -> Vec<AgentProvider>;
    async fn start_session(&self, req: SessionRequest)
    -> Result<Box<dyn AgentSession>, AgentError>;
}

/// One running session.
#[async_trait::async_trait]
pub trait AgentSession: Send + Sync {
    fn capabilities(&self) -> AgentCapabilities;
    /// The only observation point; can be taken once.
    fn events(&mut self) -> EventStream;
    async fn send(&self, turn: UserTurn) -> Result<(), AgentError>;
    /// Output of a host request that is still running (a command's bytes
    /// as they arrive); the completion still carries the whole output.
    /// Sessions that do not show it ignore it.
    fn request_output(&self, _id: &RequestId, _chunk: &[u8]) {}
    /// Completes a host request exactly once.
    async fn complete(
        &self,
        id: RequestId,
        completion: RequestCompletion,
    ) -> Result<(), AgentError>;
    /// Idempotent.
    async fn cancel(&self, reason: CancelReason) -> Result<(), AgentError>;
    /// Compacts the conversation now, at the person's asking, between
    /// turns (what a `Compacted` event then says). Sessions whose agent
    /// keeps its own context (external agents) cannot.
    async fn compact(&self) -> Result<(), AgentError> {
        Err(AgentError::Backend {
            code: "AGENT_CANNOT_COMPACT".to_owned(),
            message: "this agent keeps its own context; cocode cannot compact it".to_owned(),
            retryable: false,
        })
    }
    async fn dispose(self: Box<Self>);
}
