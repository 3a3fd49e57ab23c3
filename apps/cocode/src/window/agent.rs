//! The Agent panel's state: the composer, the transcript, approvals and the
//! workspace's tasks. The task service's events fill it; `views::agent`
//! draws it.

use crate::window::transcript::Transcript;

/// The backends the composer offers (`local` needs no key).
pub const BACKENDS: &[&str] = &[
    "local",
    "anthropic",
    "openai",
    "openrouter",
    "ollama",
    "lmstudio",
];

/// An agent error that ended a task, and what the person can do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: String,
    pub kind: FailureKind,
}

/// What a failure calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Trying again can work (the provider was busy or unreachable).
    Retryable,
    /// The key or the provider's settings need the person (Providers).
    Setup,
    /// Neither: the transcript says what happened.
    Other,
}

impl Failure {
    pub fn of(code: &str) -> Self {
        let kind = match code {
            "PROVIDER_UNAVAILABLE"
            | "PROVIDER_RATE_LIMITED"
            | "PROVIDER_NETWORK"
            | "PROVIDER_TIMEOUT"
            | "PROVIDER_INVALID_RESPONSE"
            | "PROVIDER_INVALID_TOOL_CALL" => FailureKind::Retryable,
            "PROVIDER_AUTH" | "PROVIDER_CONFIG" | "PROVIDER_BAD_REQUEST" => FailureKind::Setup,
            c if c.starts_with("CREDENTIAL_VAULT_") => FailureKind::Setup,
            _ => FailureKind::Other,
        };
        Self {
            code: code.to_owned(),
            kind,
        }
    }
}

/// The Agent panel's state; the task service fills it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentPanel {
    pub prompt: String,
    pub backend: String,
    /// The chosen provider's model (`None`: its default).
    pub model: Option<String>,
    /// What the last run was: (prompt, backend, model), for Retry.
    pub last_run: Option<(String, String, Option<String>)>,
    /// How the last run failed, when an agent error ended it.
    pub failure: Option<Failure>,
    /// The running task's agent ended its turn unfinished and waits for
    /// the person's reply.
    pub awaiting_reply: Option<cocode_core::TaskId>,
    pub transcript: Transcript,
    pub running: bool,
    pub tool_approvals: Vec<cocode_tool_protocol::ApprovalSnapshot>,
    pub task_approval: Option<(cocode_core::TaskId, cocode_core::PendingApprovalKind)>,
    pub tasks: Vec<crate::window::task_service::TaskRow>,
    /// External (ACP) agents of the workspace: (id, name); offered as
    /// backends `acp:<id>`.
    pub acp_agents: Vec<(String, String)>,
    /// The task whose review detail is open.
    pub detail: Option<crate::host::review::TaskDetail>,
    pub note: Option<String>,
    pub error: Option<String>,
    /// Agent-command confinement and the proxy port, once the workspace's
    /// host is open.
    pub sandbox: Option<(cocode_core::process::Confinement, u16)>,
}

impl Default for AgentPanel {
    fn default() -> Self {
        Self {
            prompt: String::new(),
            backend: "local".to_owned(),
            model: None,
            last_run: None,
            failure: None,
            awaiting_reply: None,
            transcript: Transcript::default(),
            running: false,
            tool_approvals: Vec::new(),
            task_approval: None,
            tasks: Vec::new(),
            // The presets until the workspace's task service reports its
            // own list (a folder without history starts no service).
            acp_agents: cocode_acp::AcpAgentRegistry::with_presets()
                .agents()
                .map(|a| (a.id.to_string(), a.display_name.clone()))
                .collect(),
            detail: None,
            note: None,
            error: None,
            sandbox: None,
        }
    }
}

impl AgentPanel {
    pub(crate) fn on_event(&mut self, event: crate::window::task_service::ServiceEvent) {
        use crate::window::task_service::ServiceEvent as E;
        match event {
            E::Progress(p) => self.transcript.apply(&p),
            E::Changes { call_id, rows } => self.transcript.attach_changes(&call_id, &rows),
            E::ToolApproval(s) => self.tool_approvals.push(s),
            E::ToolApprovalGone(id) => self.tool_approvals.retain(|a| a.id != id),
            E::TaskApproval { task_id, kind } => self.task_approval = Some((task_id, kind)),
            E::AwaitingReply { task_id } => self.awaiting_reply = Some(task_id),
            E::Finished {
                summary,
                agent_error,
            } => {
                self.failure = agent_error.map(|code| Failure::of(&code));
                self.awaiting_reply = None;
                self.transcript.push_end(&summary);
                self.running = false;
                self.task_approval = None;
            }
            E::Tasks(rows) => self.tasks = rows,
            E::AcpAgents(agents) => self.acp_agents = agents,
            E::Detail(d) => self.detail = Some(d),
            E::Note(n) => self.note = Some(n),
            E::Sandbox {
                confinement,
                proxy_port,
            } => self.sandbox = Some((confinement, proxy_port)),
            E::Error(e) => {
                self.error = Some(e);
                self.running = false;
            }
            // Agents' commands go to their terminal tabs; saves to their
            // editor tabs.
            E::Command(_) | E::Saved { .. } | E::UserOpDone { .. } | E::TaskFiles { .. } => {}
        }
    }
}
