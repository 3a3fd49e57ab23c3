//! The Agent panel's state: the composer, the transcript, approvals and the
//! workspace's tasks. The workspace service's events fill it; `views::agent`
//! draws it.

use crate::window::command::AgentCommand;
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

/// One conversation with an agent: one task, its transcript and what it
/// waits for. Several run at once, each in its own tab.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The number the workspace service tags this conversation's reports with.
    pub id: u64,
    /// Its task, once created.
    pub task: Option<cocode_core::TaskId>,
    pub transcript: Transcript,
    pub running: bool,
    /// What the run was: (prompt, backend, model), for Retry.
    pub last_run: Option<(String, String, Option<String>)>,
    /// How the run failed, when an agent error ended it.
    pub failure: Option<Failure>,
    /// The agent ended its turn unfinished and waits for the person.
    pub awaiting_reply: Option<cocode_core::TaskId>,
    /// The task waiting for the person, what it waits for and the question.
    pub task_approval: Option<(
        cocode_core::TaskId,
        cocode_core::PendingApprovalKind,
        String,
    )>,
    /// "waiting for task X's lease on path", while it does.
    pub lease_wait: Option<String>,
    /// Why the run could not start or broke off.
    pub error: Option<String>,
}

/// Where a conversation stands, for its tab and its row in the task list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Nothing asked yet.
    New,
    Running,
    /// A tool call or the task itself waits for the person's approval.
    NeedsApproval,
    /// The agent waits for the person's reply.
    WaitsForReply,
    /// The task waits for another task's lease.
    WaitsForLease,
    Failed,
    Ended,
}

impl Standing {
    /// The badge's words and tone.
    pub fn badge(self) -> (&'static str, cocode_ui::Tone) {
        use cocode_ui::Tone;
        match self {
            Self::New => ("new", Tone::Neutral),
            Self::Running => ("running", Tone::Info),
            Self::NeedsApproval => ("needs approval", Tone::Warning),
            Self::WaitsForReply => ("waits for you", Tone::Warning),
            Self::WaitsForLease => ("waiting for a lease", Tone::Warning),
            Self::Failed => ("failed", Tone::Danger),
            Self::Ended => ("ended", Tone::Success),
        }
    }
}

impl Conversation {
    fn new(id: u64) -> Self {
        Self {
            id,
            task: None,
            transcript: Transcript::default(),
            running: false,
            last_run: None,
            failure: None,
            awaiting_reply: None,
            task_approval: None,
            lease_wait: None,
            error: None,
        }
    }

    /// Nothing was asked in it yet.
    pub fn is_fresh(&self) -> bool {
        self.last_run.is_none() && !self.running
    }

    /// The tab's title: the start of what was asked.
    pub fn title(&self) -> String {
        match &self.last_run {
            None => "New task".to_owned(),
            Some((prompt, ..)) => {
                let first = prompt.lines().next().unwrap_or_default();
                let mut title: String = first.chars().take(24).collect();
                if first.chars().count() > 24 {
                    title.push('…');
                }
                title
            }
        }
    }

    /// The agent session its task runs in (tool approvals name it).
    pub fn session(&self) -> Option<String> {
        self.task
            .as_ref()
            .map(crate::host::orchestrator::session_of)
    }

    /// Where it stands; `approvals` tool calls of it wait for the person.
    pub fn standing(&self, approvals: usize) -> Standing {
        if self.running {
            if approvals > 0 || self.task_approval.is_some() {
                Standing::NeedsApproval
            } else if self.awaiting_reply.is_some() {
                Standing::WaitsForReply
            } else if self.lease_wait.is_some() {
                Standing::WaitsForLease
            } else {
                Standing::Running
            }
        } else if self.last_run.is_none() {
            Standing::New
        } else if self.failure.is_some() || self.error.is_some() {
            Standing::Failed
        } else {
            Standing::Ended
        }
    }

    fn on_event(&mut self, event: crate::window::workspace_service::RunEvent) {
        use crate::host::orchestrator::Progress;
        use crate::window::workspace_service::RunEvent as R;
        match event {
            R::Progress(p) => {
                if let Progress::Created(id) = &p {
                    self.task = Some(id.clone());
                }
                self.transcript.apply(&p);
            }
            R::Changes { call_id, rows } => self.transcript.attach_changes(&call_id, &rows),
            R::TaskApproval {
                task_id,
                kind,
                question,
            } => self.task_approval = Some((task_id, kind, question)),
            R::AwaitingReply { task_id } => self.awaiting_reply = Some(task_id),
            R::LeaseWait(wait) => self.lease_wait = wait,
            R::Finished {
                summary,
                agent_error,
            } => {
                self.failure = agent_error.map(|code| Failure::of(&code));
                self.transcript.push_end(&summary);
                self.end();
            }
            R::Failed(why) => {
                self.transcript.push_note(&why);
                self.error = Some(why);
                self.end();
            }
        }
    }

    fn end(&mut self) {
        self.running = false;
        self.awaiting_reply = None;
        self.task_approval = None;
        self.lease_wait = None;
    }
}

/// The Agent panel's state; the workspace service fills it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentPanel {
    pub prompt: String,
    pub backend: String,
    /// The chosen provider's model (`None`: its default).
    pub model: Option<String>,
    /// The conversations, in tab order; at least one.
    pub conversations: Vec<Conversation>,
    /// The tab shown.
    pub active: usize,
    next_conversation: u64,
    /// Tool calls of every running task waiting for the person.
    pub tool_approvals: Vec<cocode_tool_protocol::ApprovalSnapshot>,
    pub tasks: Vec<crate::window::workspace_service::TaskRow>,
    /// External (ACP) agents of the workspace, offered as backends
    /// `acp:<id>`.
    pub acp_agents: Vec<crate::window::workspace_service::AcpAgentRow>,
    /// The task whose review detail is open.
    pub detail: Option<crate::host::review::TaskDetail>,
    pub note: Option<String>,
    pub error: Option<String>,
    /// Agent-command confinement and the proxy port, once the workspace's
    /// host is open.
    pub sandbox: Option<(cocode_core::process::Confinement, u16)>,
    /// What the folder's `workspace.json` grants, waiting for the person's
    /// decision before a run starts.
    pub grant_prompt: Option<GrantPrompt>,
    /// What a rollback of the detail's task would do, to the point the
    /// person picked (its precheck, read before anything moves).
    pub rollback_preview: Option<crate::host::review::RollbackPreview>,
}

/// The question asked before the first run of a folder whose own settings
/// grant hosts or agents the person has not confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantPrompt {
    /// The conversation whose run waits.
    pub conv: u64,
    pub grants: Vec<crate::host::trust::Grant>,
    /// Which are ticked to be allowed (all start off).
    pub allow: Vec<bool>,
}

impl Default for AgentPanel {
    fn default() -> Self {
        Self {
            prompt: String::new(),
            backend: "local".to_owned(),
            model: None,
            conversations: vec![Conversation::new(1)],
            active: 0,
            next_conversation: 2,
            tool_approvals: Vec::new(),
            tasks: Vec::new(),
            // The presets until the folder's workspace service reports its
            // own list, with whether each is installed (a folder without
            // history starts no service).
            acp_agents: cocode_acp::AcpAgentRegistry::with_presets()
                .agents()
                .map(|a| crate::window::workspace_service::AcpAgentRow {
                    id: a.id.to_string(),
                    name: a.display_name.clone(),
                    missing: None,
                })
                .collect(),
            detail: None,
            rollback_preview: None,
            note: None,
            error: None,
            sandbox: None,
            grant_prompt: None,
        }
    }
}

impl AgentPanel {
    /// The conversation shown.
    pub fn current(&self) -> &Conversation {
        &self.conversations[self.active.min(self.conversations.len() - 1)]
    }

    pub fn current_mut(&mut self) -> &mut Conversation {
        let i = self.active.min(self.conversations.len() - 1);
        &mut self.conversations[i]
    }

    /// How many tasks run now.
    /// What waits for the person: tool calls, and tasks asking to be
    /// accepted as completed.
    pub fn waiting(&self) -> usize {
        self.tool_approvals.len()
            + self
                .conversations
                .iter()
                .filter(|c| c.task_approval.is_some())
                .count()
    }

    /// The conversation whose task's session is `session`.
    pub fn conversation_of_session(&self, session: &str) -> Option<(usize, &Conversation)> {
        self.conversations
            .iter()
            .enumerate()
            .find(|(_, c)| c.session().is_some_and(|s| s == session))
    }

    pub fn running(&self) -> usize {
        self.conversations.iter().filter(|c| c.running).count()
    }

    /// The tool approvals of `conv`: those of its task's session, and (in
    /// the tab shown) any whose session no conversation claims, so that
    /// none is hidden.
    pub fn approvals_of(
        &self,
        conv: &Conversation,
    ) -> Vec<&cocode_tool_protocol::ApprovalSnapshot> {
        let sessions: Vec<Option<String>> = self
            .conversations
            .iter()
            .map(Conversation::session)
            .collect();
        let mine = conv.session();
        let shown = conv.id == self.current().id;
        self.tool_approvals
            .iter()
            .filter(|a| {
                let owned = sessions.iter().flatten().any(|s| *s == a.session_id);
                mine.as_ref().is_some_and(|s| *s == a.session_id) || (shown && !owned)
            })
            .collect()
    }

    /// Where `conv` stands, its tool approvals counted.
    pub fn standing(&self, conv: &Conversation) -> Standing {
        // Its run waits for the person's word on the folder's settings.
        if self
            .grant_prompt
            .as_ref()
            .is_some_and(|p| p.conv == conv.id)
        {
            return Standing::NeedsApproval;
        }
        conv.standing(self.approvals_of(conv).len())
    }

    /// The conversation a new task goes in: the one shown while nothing was
    /// asked in it, otherwise a new tab (shown).
    pub fn conversation_for_run(&mut self) -> &mut Conversation {
        if !self.current().is_fresh() {
            self.new_conversation();
        }
        self.current_mut()
    }

    /// Opens an empty conversation and shows it.
    pub fn new_conversation(&mut self) {
        let id = self.next_conversation;
        self.next_conversation += 1;
        self.conversations.push(Conversation::new(id));
        self.active = self.conversations.len() - 1;
        self.detail = None;
    }

    /// Shows tab `index`.
    pub fn show_conversation(&mut self, index: usize) {
        if index < self.conversations.len() {
            self.active = index;
            self.detail = None;
        }
    }

    /// Closes tab `index` unless its task runs; the last tab becomes a
    /// new, empty one.
    pub fn close_conversation(&mut self, index: usize) {
        if self.conversations.get(index).is_none_or(|c| c.running) {
            return;
        }
        self.conversations.remove(index);
        if self.conversations.is_empty() {
            self.new_conversation();
        }
        if self.active >= index && self.active > 0 {
            self.active -= 1;
        }
        self.active = self.active.min(self.conversations.len() - 1);
    }

    /// What the person's answer or stop in the tab shown asks of the task
    /// service (a reply takes the composer's text); `None` when the tab's
    /// task waits for no such thing.
    pub(crate) fn request_for(
        &mut self,
        command: &AgentCommand,
    ) -> Option<crate::window::workspace_service::ServiceRequest> {
        use crate::host::orchestrator::Reply;
        use crate::window::workspace_service::ServiceRequest;
        let text = match command {
            AgentCommand::SendReply => std::mem::take(&mut self.prompt).trim().to_owned(),
            _ => String::new(),
        };
        let conv = self.current_mut();
        let id = conv.id;
        match command {
            AgentCommand::SendReply if !text.is_empty() => {
                conv.awaiting_reply.take()?;
                Some(ServiceRequest::Reply {
                    conv: id,
                    reply: Reply::Message(text),
                })
            }
            AgentCommand::FinishAndVerify => {
                conv.awaiting_reply.take()?;
                Some(ServiceRequest::Reply {
                    conv: id,
                    reply: Reply::FinishAndVerify,
                })
            }
            AgentCommand::CompactNow => {
                conv.awaiting_reply.take()?;
                Some(ServiceRequest::Reply {
                    conv: id,
                    reply: Reply::Compact,
                })
            }
            AgentCommand::TaskDecision { approve } => {
                conv.task_approval.take()?;
                Some(ServiceRequest::TaskDecision {
                    conv: id,
                    approve: *approve,
                })
            }
            AgentCommand::StopTask if conv.running => Some(ServiceRequest::Stop(id)),
            _ => None,
        }
    }

    pub(crate) fn on_event(&mut self, event: crate::window::workspace_service::ServiceEvent) {
        use crate::window::workspace_service::ServiceEvent as E;
        match event {
            E::Run { conv, event } => {
                if let Some(c) = self.conversations.iter_mut().find(|c| c.id == conv) {
                    c.on_event(event);
                }
            }
            E::ToolApproval(s) => self.tool_approvals.push(s),
            E::ToolApprovalGone(id) => self.tool_approvals.retain(|a| a.id != id),
            E::Tasks(rows) => self.tasks = rows,
            E::AcpAgents(agents) => self.acp_agents = agents,
            E::Detail(d) => {
                // A preview of another task, or of this task before it
                // changed, no longer says what a rollback would do.
                self.rollback_preview = None;
                self.detail = Some(d);
            }
            E::RollbackPreview(p) => {
                if self.detail.as_ref().is_some_and(|d| d.id == p.task_id) {
                    self.rollback_preview = Some(*p);
                }
            }
            E::Note(n) => self.note = Some(n),
            E::Sandbox {
                confinement,
                proxy_port,
            } => self.sandbox = Some((confinement, proxy_port)),
            E::Error(e) => self.error = Some(e),
            E::ConfirmGrants { conv, grants } => {
                if let Some(c) = self.conversations.iter_mut().find(|c| c.id == conv) {
                    c.running = false;
                    c.transcript.push_note(
                        "waiting for your decision on what this folder's settings grant",
                    );
                }
                let allow = vec![false; grants.len()];
                self.grant_prompt = Some(GrantPrompt {
                    conv,
                    grants,
                    allow,
                });
            }
            // Agents' commands go to their terminal tabs; saves to their
            // editor tabs.
            E::Command(_)
            | E::Saved { .. }
            | E::UserOpDone { .. }
            | E::TaskFiles { .. }
            | E::Trace(_)
            | E::Settings(_)
            | E::SettingsRefused(_)
            | E::ToolSample { .. }
            | E::Review(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn asked(panel: &mut AgentPanel, prompt: &str) -> u64 {
        let conv = panel.conversation_for_run();
        conv.last_run = Some((prompt.to_owned(), "local".to_owned(), None));
        conv.running = true;
        conv.id
    }

    fn titles(panel: &AgentPanel) -> Vec<String> {
        panel
            .conversations
            .iter()
            .map(Conversation::title)
            .collect()
    }

    #[test]
    fn runs_fill_the_fresh_tab_then_open_new_ones_and_running_tabs_stay_open() {
        let mut panel = AgentPanel::default();
        assert_eq!(titles(&panel), vec!["New task"]);
        assert_eq!(asked(&mut panel, "first"), 1);
        assert_eq!(
            asked(&mut panel, "a second task with a long first line\nmore"),
            2
        );
        assert_eq!(titles(&panel), vec!["first", "a second task with a lon…"]);
        assert_eq!((panel.active, panel.running()), (1, 2));
        // A running task's tab does not close.
        panel.close_conversation(0);
        assert_eq!(panel.conversations.len(), 2);
        panel.on_event(crate::window::workspace_service::ServiceEvent::Run {
            conv: 1,
            event: crate::window::workspace_service::RunEvent::Failed("no such backend".into()),
        });
        assert_eq!(panel.standing(&panel.conversations[0]), Standing::Failed);
        assert_eq!(panel.running(), 1);
        panel.close_conversation(0);
        assert_eq!(titles(&panel), vec!["a second task with a lon…"]);
        assert_eq!(panel.active, 0);
        // Reports for a closed conversation are dropped.
        panel.on_event(crate::window::workspace_service::ServiceEvent::Run {
            conv: 1,
            event: crate::window::workspace_service::RunEvent::LeaseWait(Some("x".into())),
        });
        assert_eq!(panel.current().lease_wait, None);
        panel.on_event(crate::window::workspace_service::ServiceEvent::Run {
            conv: 2,
            event: crate::window::workspace_service::RunEvent::LeaseWait(Some(
                "waiting for task t's lease on a.txt".into(),
            )),
        });
        assert_eq!(panel.standing(panel.current()), Standing::WaitsForLease);
        // "+ New" opens an empty tab beside it; closing the last one leaves
        // an empty one.
        panel.new_conversation();
        assert_eq!(
            titles(&panel),
            vec!["a second task with a lon…", "New task"]
        );
        assert_eq!(panel.standing(panel.current()), Standing::New);
        panel.close_conversation(1);
        assert_eq!(panel.active, 0);
        assert_eq!(panel.conversations.len(), 1);
    }
}
