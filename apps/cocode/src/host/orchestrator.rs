//! `TaskOrchestrator`: one delegated task from creation to a terminal state
//! (or to a person's decision). Every status change goes through
//! `TaskTransition`; the orchestrator carries out the effects it returns.
//!
//! When the agent ends its turn without declaring the attempt done, the
//! task waits for the next instruction; a headless run has none to give,
//! so it stops the task (`stopped`) and says why.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cocode_core::agent::{
    AgentEvent, AgentRuntime, AgentSession, RequestCompletion, SessionRequest, SessionTarget,
};
use cocode_core::services::VerificationRequest;
use cocode_core::task::{
    NewTask, TaskBackend, Transition, TransitionContext, TransitionEffect, UnresponsiveSignal,
};
use cocode_core::verification::{VerificationOutcome, VerificationRecord, VerificationVerdict};
use cocode_core::{
    AttemptNo, CancelReason, CompletionMode, DelegatedTask, PendingApprovalKind, RequestId,
    SessionId, TaskEvent, TaskId, TaskStatus, TaskTransition, Timestamp,
};
use cocode_workspace::RetentionTrigger;
use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::host::log::LogErr as _;
use crate::host::tools::HeldEdit;
use crate::host::workspace_host::WorkspaceHost;

mod checks;
mod events;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSpec {
    pub prompt: String,
    pub backend: TaskBackend,
    pub completion_mode: CompletionMode,
}

/// A person's answer to a task-level approval (a test change or completion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Reject,
    /// Nobody can answer now: the task stays `awaiting_approval`.
    Defer,
}

/// A person's answer to an agent that ended its turn without finishing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Their message: the agent's next turn, in the same attempt.
    Message(String),
    /// Verify the attempt as it stands.
    FinishAndVerify,
    /// Compact the conversation now, then ask again.
    Compact,
    /// No answer: the turn stays unfinished, as without a person.
    End,
}

/// Answers task-level approvals (a person may take their time: the run
/// waits without blocking a thread).
#[async_trait::async_trait]
pub trait TaskApprover: Send + Sync {
    async fn decide(&self, task: &DelegatedTask, kind: PendingApprovalKind) -> Decision;

    /// Whether a person is there to answer the agent when it ends its turn
    /// unfinished (the window, `task run --interactive`). Without one the
    /// task ends as unfinished.
    fn converses(&self) -> bool {
        false
    }

    /// The person's answer to the agent (asked only when [`Self::converses`]).
    async fn reply(&self, _task: &DelegatedTask) -> Reply {
        Reply::End
    }
}

/// What a run reports while it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    Created(TaskId),
    Status {
        from: TaskStatus,
        to: TaskStatus,
    },
    Agent(AgentEvent),
    Verification(VerificationRecord),
    /// The lines of a failed check's output that say what failed (after
    /// its record; the window shows them a click away).
    VerificationOutput {
        method: cocode_core::verification::VerificationMethod,
        excerpt: String,
        /// Whether its record named what failed (then the command line
        /// does not print the excerpt again).
        named: bool,
    },
    Note(String),
    /// The person's reply to the agent.
    Reply(String),
}

/// The agent session a task's run uses (tool approvals name it).
pub fn session_of(task: &TaskId) -> String {
    format!("{}-s0", task.as_str())
}

/// Why a run could not be carried out (the task record says how it ended).
#[derive(Debug, thiserror::Error)]
pub enum OrchestratorError {
    #[error("invalid transition: {0}")]
    Transition(#[from] cocode_core::task::TransitionError),
    #[error("the task record could not be saved: {0}")]
    Persist(String),
    #[error("{0}")]
    Setup(String),
    /// The folder's `workspace.json` grants hosts or agents the person has
    /// not confirmed: no agent runs until they do (or keep them off).
    #[error(
        "this folder's .cocode/config/workspace.json grants what you have not confirmed: {}",
        .0.join("; ")
    )]
    Untrusted(Vec<String>),
}

impl OrchestratorError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Transition(_) => "task_transition",
            Self::Persist(_) => "task_persist",
            Self::Setup(_) => "task_setup",
            Self::Untrusted(_) => "untrusted_workspace",
        }
    }
}

/// An agent error's stable code (its words when it has none).
fn code_of(e: cocode_core::agent::AgentError) -> String {
    match e {
        cocode_core::agent::AgentError::Backend { code, .. } => code,
        other => format!("{other}"),
    }
}

/// A fresh task id made at `now`.
fn new_task_id(now: Timestamp) -> Result<TaskId, OrchestratorError> {
    let t = now.as_millis();
    TaskId::new(format!("task-{t}-{:04x}", fastrand::u16(..)))
        .map_err(|e| OrchestratorError::Setup(e.to_string()))
}

/// Lines of a failing check's output sent to the agent, at most.
const EXCERPT_LINES: usize = 40;
/// Bytes of a failing check's output sent to the agent, at most.
const EXCERPT_BYTES: usize = 4000;

/// The text sent to the agent after a failed verification: what failed,
/// by method, with counts and exit codes, and the lines of each failing
/// check's output that say what failed (`output` gives a method's output
/// of that attempt, while this session keeps it). An attempt whose turn
/// ended without `task.finish` was never verified, and is called so.
pub fn failure_summary(
    records: &[VerificationRecord],
    attempt: AttemptNo,
    output: impl Fn(cocode_core::verification::VerificationMethod) -> Option<String>,
) -> String {
    let failed: Vec<&VerificationRecord> = records
        .iter()
        .filter(|r| r.attempt_no() == attempt)
        .filter(|r| matches!(r.outcome(), VerificationOutcome::Fail(_)))
        .collect();
    if failed.is_empty() {
        return format!(
            "Attempt {} ended without task.finish, so nothing was verified. Carry on with the task and call task.finish when the work is done.",
            attempt.ordinal()
        );
    }
    let mut lines = vec![format!(
        "Verification of attempt {} failed. Fix the problems and call task.finish again.",
        attempt.ordinal()
    )];
    for r in failed {
        let VerificationOutcome::Fail(class) = r.outcome() else {
            continue;
        };
        let facts = r.facts();
        let mut line = format!("- {}: failed ({})", r.method().as_str(), class_str(class));
        if let Some(counts) = facts.diagnostics_count {
            let _ = write!(
                line,
                ", {} error(s), {} warning(s)",
                counts.error, counts.warning
            );
        }
        if let Some(code) = facts.exit_code {
            let _ = write!(line, ", exit code {code}");
        }
        lines.push(line);
        let details = r.detail_lines();
        if !r.findings().is_empty() {
            lines.push("  what failed:".to_owned());
        }
        lines.extend(details.iter().map(|l| format!("    {l}")));
        // The output's failing lines when the runner named nothing.
        if let Some(text) = output(r.method()).filter(|_| r.findings().is_empty()) {
            let excerpt =
                cocode_toolchain::verify::failure_excerpt(&text, EXCERPT_LINES, EXCERPT_BYTES);
            if !excerpt.is_empty() {
                lines.push("  what it printed (the lines that say what failed):".to_owned());
                lines.extend(excerpt.lines().map(|l| {
                    if l.is_empty() {
                        String::new()
                    } else {
                        format!("    {l}")
                    }
                }));
            }
        }
    }
    lines.join("\n")
}

/// What a person is asked about a task that waits for them: the test file
/// it changes, or whether to accept it — with what verification said, so
/// a task whose tests failed is never called "ready".
pub fn approval_question(task: &DelegatedTask, kind: PendingApprovalKind) -> String {
    let id = task.task_id();
    if kind == PendingApprovalKind::TestChange {
        return format!("Task {id} changes a test file. Apply the change?");
    }
    match task.verdict() {
        VerificationVerdict::Pass => {
            format!("Task {id} passed verification. Accept it as completed?")
        }
        VerificationVerdict::Fail { class } => format!(
            "Task {id} did not pass verification ({}). Accept it as completed anyway?",
            class.phrase()
        ),
        VerificationVerdict::NotCompletable(_) => format!(
            "Task {id} is ready; verification decided nothing ({}). Accept it as completed?",
            task.verdict().phrase()
        ),
    }
}

/// The wire name of a failure class (`failure:code_defect`, …).
pub fn class_str(class: cocode_core::verification::FailureClass) -> String {
    serde_json::to_value(class)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Runs tasks on a host.
pub struct TaskOrchestrator {
    host: Arc<WorkspaceHost>,
}

impl std::fmt::Debug for TaskOrchestrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOrchestrator").finish_non_exhaustive()
    }
}

/// One run's moving parts.
struct Run<'a> {
    host: Arc<WorkspaceHost>,
    task: DelegatedTask,
    session_id: SessionId,
    session: Option<Box<dyn AgentSession>>,
    approver: &'a dyn TaskApprover,
    progress: &'a mpsc::UnboundedSender<Progress>,
    held: mpsc::UnboundedReceiver<HeldEdit>,
    pending_held: Option<HeldEdit>,
    attempt_started: Instant,
    stop: CancellationToken,
    /// Host requests being completed; several run at once (an agent may
    /// read files while its command runs), each with its own cancel token
    /// so a withdrawn request stops alone.
    requests: JoinSet<(RequestId, RequestCompletion)>,
    request_tokens: BTreeMap<RequestId, CancellationToken>,
    /// Which request each completing task serves (to answer even a
    /// handler that panicked).
    request_tasks: HashMap<tokio::task::Id, RequestId>,
    /// Output of running requests (commands), passed on to the session.
    request_output: (
        mpsc::UnboundedSender<RequestChunk>,
        mpsc::UnboundedReceiver<RequestChunk>,
    ),
    /// cocode asked the agent to cancel its turn (a stop, a time limit).
    cancel_asked: bool,
    /// The code of the last request cocode refused the agent, if any.
    last_refusal: Option<String>,
    /// The trace row of the turn the agent is working on.
    request_trace: Option<crate::host::trace::AgentRequestTrace>,
    /// Tool calls under way: their title and the task's newest change when
    /// they began (a call's changes are reviewed on their own).
    call_starts: HashMap<String, (String, Option<u64>)>,
    /// The session's events, once taken (the pump reads them; a person's
    /// "compact now" while the task waits for them reads what it said).
    events: Option<cocode_core::agent::EventStream>,
    /// The task's newest change (`None`: none yet) when the orchestrator
    /// last stood between the agent's actions (the start, a person's
    /// message, a tool call's end): a call's changes start no earlier,
    /// even when its start is read late (the built-in agent runs a call
    /// before its start is read).
    seq_mark: Option<u64>,
}

/// The next event of the session's stream (none once it has ended, or
/// before it is taken).
async fn next_event(stream: &mut Option<cocode_core::agent::EventStream>) -> Option<AgentEvent> {
    match stream {
        Some(stream) => stream.next().await,
        None => None,
    }
}

/// How long an agent may be quiet before the person is told so.
const QUIET: Duration = Duration::from_secs(15);

/// Output of a running request.
type RequestChunk = (RequestId, Vec<u8>);

impl Run<'_> {
    fn say(&self, p: Progress) {
        let _ = self.progress.send(p);
    }

    fn persist(&self) -> Result<(), OrchestratorError> {
        self.host
            .save_task(&self.task)
            .map_err(|e| OrchestratorError::Persist(e.to_string()))
    }

    /// Applies an event, saves the record and carries out the effects.
    async fn apply(&mut self, event: TaskEvent) -> Result<Transition, OrchestratorError> {
        let ctx = TransitionContext {
            limits: self.host.workspace.config.limits,
        };
        let transition = TaskTransition::apply(&mut self.task, &event, &ctx)?;
        self.persist()?;
        self.say(Progress::Status {
            from: transition.from,
            to: transition.to,
        });
        for effect in &transition.effects {
            self.effect(effect).await;
        }
        if transition.to.is_terminal() {
            let host = Arc::clone(&self.host);
            tokio::task::spawn_blocking(move || {
                host.run_retention(RetentionTrigger::TaskTerminated)
            })
            .await
            .log_err("history retention after a task ended");
        }
        Ok(transition)
    }

    async fn effect(&mut self, effect: &TransitionEffect) {
        match effect {
            TransitionEffect::BeginAttempt(attempt) => {
                self.host.tasks.set_attempt(self.task.task_id(), *attempt);
                self.attempt_started = Instant::now();
            }
            TransitionEffect::SendFailureSummary => {
                let previous = AttemptNo(self.task.attempt_no().0.saturating_sub(1));
                let runner = Arc::clone(&self.host.runner);
                let task_id = self.task.task_id().clone();
                let text =
                    failure_summary(
                        self.task.verification_log(),
                        previous,
                        |method| match runner.raw_output(&task_id, previous, method) {
                            cocode_toolchain::verify::RawNotice::Present(bytes) => {
                                Some(String::from_utf8_lossy(&bytes).into_owned())
                            }
                            _ => None,
                        },
                    );
                if let Err(e) = self.send_turn(text).await {
                    self.say(Progress::Note(format!(
                        "the failure summary was not delivered: {e}"
                    )));
                }
            }
            TransitionEffect::ApplyHeldEdit => {
                if let Some(edit) = self.pending_held.take() {
                    let gate = Arc::clone(&self.host.workspace);
                    let ctx = edit.change.ctx.clone();
                    let op = edit.change.op.clone();
                    let applied =
                        tokio::task::spawn_blocking(move || gate.gate.apply_approved(&ctx, &op))
                            .await;
                    match applied {
                        Ok(Ok(_)) => self.say(Progress::Note(
                            "the approved test change was applied".into(),
                        )),
                        Ok(Err(e)) => self.say(Progress::Note(format!(
                            "the approved test change could not be applied: {e}"
                        ))),
                        Err(e) => self.say(Progress::Note(format!(
                            "the approved test change could not be applied: {e}"
                        ))),
                    }
                }
                self.forget_held();
                self.host.tasks.release_held(self.task.task_id());
            }
            TransitionEffect::DiscardHeldEdit => {
                self.pending_held = None;
                self.forget_held();
                self.host.tasks.release_held(self.task.task_id());
            }
            TransitionEffect::CancelSession(reason) => {
                self.cancel_asked = true;
                if let Some(session) = &self.session {
                    session
                        .cancel(*reason)
                        .await
                        .log_err("cancelling the agent's session");
                }
            }
            TransitionEffect::ReleaseLeases => {
                use cocode_core::gate::EditLockRegistry as _;
                self.turn_sweep_end().await;
                self.host.leases.release_task(self.task.task_id());
                self.host.tasks.remove(self.task.task_id());
            }
        }
    }

    /// Starts the agent's session on the backend's runtime — taken from the
    /// host's contract registry, where bootstrap registered each runtime
    /// once — and sends the prompt. False when the task ended instead.
    async fn begin(
        &mut self,
        request: SessionRequest,
        spec: &TaskSpec,
    ) -> Result<bool, OrchestratorError> {
        self.mark_seq();
        let runtime = self
            .host
            .contracts
            .get::<dyn AgentRuntime>()
            .ok()
            .and_then(|backends| backends.get(spec.backend.agent_kind()));
        let Some(runtime) = runtime else {
            self.say(Progress::Note(
                "no agent runtime is registered for this backend".into(),
            ));
            self.apply(TaskEvent::AgentError {
                code: "AGENT_BACKEND_UNAVAILABLE".into(),
            })
            .await?;
            return Ok(false);
        };
        match runtime.start_session(request).await {
            Ok(session) => self.session = Some(session),
            Err(e) => {
                self.say(Progress::Note(format!("the agent could not start: {e}")));
                self.apply(TaskEvent::AgentError { code: code_of(e) })
                    .await?;
                return Ok(false);
            }
        }
        if let Err(e) = self.send_turn(spec.prompt.clone()).await {
            self.say(Progress::Note(format!("the prompt could not be sent: {e}")));
            self.apply(TaskEvent::AgentError { code: code_of(e) })
                .await?;
        }
        Ok(true)
    }

    fn edited_paths(&self) -> Vec<cocode_core::path::NormalizedPath> {
        let attempt = self.task.attempt_no();
        let mut paths = BTreeSet::new();
        if let Ok(snapshots) = self
            .host
            .workspace
            .gate
            .store()
            .snapshots_of_task(self.task.task_id())
        {
            for s in snapshots.iter().filter(|s| s.parts().attempt_no == attempt) {
                for t in s.transitions() {
                    if t.after.is_some() {
                        paths.insert(t.path.clone());
                    }
                }
            }
        }
        paths.into_iter().collect()
    }

    /// The person decided the held test change: its saved copy goes.
    fn forget_held(&mut self) {
        if let Err(e) = crate::host::records::remove_held(&self.host.workspace, self.task.task_id())
        {
            self.say(Progress::Note(format!(
                "the decided test change stays saved with the task: {e:#}"
            )));
        }
    }

    /// Asks the approver about the pending approval.
    async fn ask(&mut self) -> Result<(), OrchestratorError> {
        if self.task.status() != TaskStatus::AwaitingApproval {
            return Ok(());
        }
        let kind = self.task.pending_approval_kind();
        let decision = tokio::select! {
            d = self.approver.decide(&self.task, kind) => d,
            () = self.stop.cancelled() => {
                self.apply(TaskEvent::UserStop).await?;
                return Ok(());
            }
        };
        match decision {
            Decision::Approve => {
                self.apply(TaskEvent::Approve).await?;
            }
            Decision::Reject => {
                self.apply(TaskEvent::Reject).await?;
            }
            Decision::Defer => {}
        }
        Ok(())
    }

    async fn on_held(&mut self, edit: HeldEdit) -> Result<(), OrchestratorError> {
        self.say(Progress::Note(format!(
            "a test change waits for approval: {}",
            edit.change
                .op
                .touched_paths()
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
        // Kept with the task until a person decides, even across a restart.
        if let Err(e) = crate::host::records::save_held(&self.host.workspace, &edit.change) {
            self.say(Progress::Note(format!(
                "the held test change could not be saved with the task: {e:#}"
            )));
        }
        self.pending_held = Some(edit);
        self.apply(TaskEvent::TestEditHeld).await?;
        self.ask().await
    }

    /// Waits for the person's answer to the agent and acts on it. The wait
    /// does not count against the attempt's time.
    async fn converse(&mut self) -> Result<(), OrchestratorError> {
        let reply = loop {
            let asked = Instant::now();
            let reply = tokio::select! {
                r = self.approver.reply(&self.task) => r,
                () = self.stop.cancelled() => {
                    self.apply(TaskEvent::UserStop).await?;
                    return Ok(());
                }
            };
            self.attempt_started += asked.elapsed();
            if reply != Reply::Compact {
                break reply;
            }
            self.compact_now().await;
        };
        match reply {
            Reply::Message(text) => {
                // A checkpoint: what the agent changes from here on answers
                // this message (its turn's changes were recorded before
                // the person was asked).
                self.mark_seq();
                if let Err(e) = crate::host::task_review::record_message(
                    &self.host.workspace,
                    self.task.task_id(),
                    &text,
                ) {
                    self.say(Progress::Note(format!(
                        "this message's checkpoint could not be saved: {e:#}"
                    )));
                }
                self.apply(TaskEvent::UserReplied).await?;
                self.say(Progress::Reply(text.clone()));
                if let Err(e) = self.send_turn(text).await {
                    self.say(Progress::Note(format!("the reply could not be sent: {e}")));
                    self.apply(TaskEvent::AgentError { code: code_of(e) })
                        .await?;
                }
            }
            Reply::FinishAndVerify => {
                self.apply(TaskEvent::FinishRequested).await?;
                while let Ok(edit) = self.held.try_recv() {
                    self.on_held(edit).await?;
                }
                self.verify().await?;
            }
            Reply::End => {
                self.apply(TaskEvent::AgentEndedUnfinished).await?;
            }
            // Handled above: it asks again.
            Reply::Compact => {}
        }
        Ok(())
    }

    /// The agent finished its attempt: a test edit held during the turn is
    /// decided first, then the attempt is verified.
    async fn attempt_done(&mut self) -> Result<(), OrchestratorError> {
        while let Ok(edit) = self.held.try_recv() {
            self.on_held(edit).await?;
        }
        if self.task.status() == TaskStatus::Running {
            self.verify().await?;
        }
        Ok(())
    }

    /// The agent's turn ended as cancelled. The cancel cocode asked for
    /// (a stop, a limit) already moved the task on; an agent that gives up
    /// on its own (Codex does after a refused permission) has ended its
    /// turn, and the task moves on instead of waiting for the idle limit.
    async fn turn_cancelled(&mut self) -> Result<(), OrchestratorError> {
        if std::mem::take(&mut self.cancel_asked) {
            return Ok(());
        }
        let note = match self.last_refusal.take() {
            Some(code) => format!("the agent cancelled its own turn after a refusal ({code})"),
            None => "the agent cancelled its own turn".to_owned(),
        };
        self.say(Progress::Note(note));
        if self
            .session
            .as_ref()
            .is_some_and(|s| s.capabilities().finish_tool)
        {
            self.apply(TaskEvent::AgentEndedUnfinished).await?;
            Ok(())
        } else {
            self.attempt_done().await
        }
    }

    /// Pumps session events until the task is terminal or waits for a person.
    async fn pump(&mut self) -> Result<(), OrchestratorError> {
        let limits = self.host.workspace.config.limits;
        let Some(session) = self.session.as_mut() else {
            return Ok(());
        };
        if self.events.is_none() {
            self.events = Some(session.events());
        }
        let mut last_event = Instant::now();
        let mut calls_in_flight: BTreeSet<String> = BTreeSet::new();
        // Said once per silence: the agent has been quiet for a while.
        let mut quiet_told = false;
        loop {
            if self.task.status().is_terminal()
                || self.task.status() == TaskStatus::AwaitingApproval
                || self.fail_if_unrecorded().await?
            {
                return Ok(());
            }
            let attempt_left = limits
                .attempt_time_limit()
                .saturating_sub(self.attempt_started.elapsed());
            // Time spent inside tool calls (approval waits, long commands)
            // is not idleness.
            let waiting_on_agent = calls_in_flight.is_empty() && self.requests.is_empty();
            let idle_left = if waiting_on_agent {
                limits.idle_limit().saturating_sub(last_event.elapsed())
            } else {
                Duration::MAX
            };
            let quiet_left = if waiting_on_agent && !quiet_told {
                QUIET.saturating_sub(last_event.elapsed())
            } else {
                Duration::MAX
            };
            tokio::select! {
                () = self.stop.cancelled() => {
                    self.apply(TaskEvent::UserStop).await?;
                }
                held = self.held.recv() => {
                    if let Some(edit) = held {
                        self.on_held(edit).await?;
                    }
                }
                () = tokio::time::sleep(attempt_left) => {
                    self.say(Progress::Note("the attempt ran out of time".into()));
                    let at = self.host.clock.now();
                    self.apply(TaskEvent::AttemptTimedOut { at }).await?;
                    self.decide_verdict().await?;
                }
                () = tokio::time::sleep(idle_left) => {
                    self.apply(TaskEvent::Unresponsive(UnresponsiveSignal::Idle)).await?;
                }
                () = tokio::time::sleep(quiet_left) => {
                    quiet_told = true;
                    self.say(Progress::Note(self.quiet_note()));
                }
                Some((id, chunk)) = self.request_output.1.recv() => {
                    if let Some(session) = &self.session {
                        session.request_output(&id, &chunk);
                    }
                }
                Some(done) = self.requests.join_next_with_id(), if !self.requests.is_empty() => {
                    last_event = Instant::now();
                    self.answer(done).await;
                }
                event = next_event(&mut self.events) => {
                    last_event = Instant::now();
                    quiet_told = false;
                    let Some(event) = event else {
                        self.apply(TaskEvent::Unresponsive(UnresponsiveSignal::TransportClosed)).await?;
                        continue;
                    };
                    self.say(Progress::Agent(event.clone()));
                    self.on_event(event, &mut calls_in_flight).await?;
                    // A person's reply may have taken a while: not idleness.
                    last_event = Instant::now();
                }
            }
        }
    }
}

impl TaskOrchestrator {
    pub fn new(host: Arc<WorkspaceHost>) -> Self {
        Self { host }
    }

    fn target(backend: &TaskBackend) -> SessionTarget {
        match backend {
            TaskBackend::Local => SessionTarget::Local,
            TaskBackend::BuiltIn { provider, model } => SessionTarget::Provider {
                provider: provider.clone(),
                model: model.clone(),
            },
            TaskBackend::Acp { agent_id } => SessionTarget::Acp {
                agent_id: agent_id.clone(),
            },
        }
    }

    /// The project's instructions for a built-in agent's session (external
    /// agents read their own): the files it starts with are said and
    /// recorded; nested ones are recorded as they are given.
    fn instructions(
        &self,
        run: &Run<'_>,
        backend: &TaskBackend,
        task_id: &TaskId,
    ) -> cocode_core::agent::Instructions {
        use crate::host::instructions as agents_md;
        if !matches!(backend, TaskBackend::BuiltIn { .. }) {
            return cocode_core::agent::Instructions::default();
        }
        let files = agents_md::at_start(&self.host.workspace, agents_md::person_file().as_deref());
        let sources: Vec<String> = files.iter().map(|f| f.source.clone()).collect();
        if !sources.is_empty() {
            run.say(Progress::Note(format!(
                "project instructions given to the agent: {}",
                sources.join(", ")
            )));
            if let Err(e) = agents_md::record(&self.host.workspace, task_id, &sources) {
                tracing::warn!("the instructions given are not recorded: {e:#}");
            }
        }
        cocode_core::agent::Instructions {
            files,
            nested: Some(Arc::new(agents_md::Nested::new(
                Arc::clone(&self.host.workspace),
                task_id.clone(),
            ))),
        }
    }

    /// Runs a new task until it is terminal or waits for a person; returns
    /// the task as saved.
    /// Notes where a task starts: where the person's repository stood
    /// (`cocode task show` names it) and its prompt as the conversation's
    /// first checkpoint (restoring to before it undoes the whole task).
    /// Not having either never stops a task.
    fn note_start(&self, task_id: &TaskId, prompt: &str) {
        if let Err(e) = self.host.record_started_on(task_id) {
            tracing::warn!("the task's starting commit is not recorded: {e:#}");
        }
        if let Err(e) =
            crate::host::task_review::record_message(&self.host.workspace, task_id, prompt)
        {
            tracing::warn!("the prompt's checkpoint is not recorded: {e:#}");
        }
    }

    pub async fn run(
        &self,
        spec: TaskSpec,
        approver: &dyn TaskApprover,
        progress: &mpsc::UnboundedSender<Progress>,
        stop: CancellationToken,
    ) -> Result<DelegatedTask, OrchestratorError> {
        // Before anything of the task exists: a folder whose own settings
        // grant what the person has not confirmed runs no agent.
        let pending = self.host.pending_grants();
        if !pending.is_empty() {
            return Err(OrchestratorError::Untrusted(
                pending
                    .iter()
                    .map(crate::host::trust::Grant::words)
                    .collect(),
            ));
        }
        let created_at = self.host.clock.now();
        let task_id = new_task_id(created_at)?;
        // The hosts derived from the workspace's files as they are before
        // this task starts (a host an agent's edit added stays held).
        if let Err(e) = self.host.refresh_hosts() {
            tracing::warn!("the allowed hosts stay as they were: {e:#}");
        }
        let session_id = SessionId::new(session_of(&task_id))
            .map_err(|e| OrchestratorError::Setup(e.to_string()))?;
        let task = DelegatedTask::new(NewTask {
            task_id: task_id.clone(),
            prompt: spec.prompt.clone(),
            backend: spec.backend.clone(),
            completion_mode: spec.completion_mode,
            created_at,
        });
        let held = self.host.tasks.held_edits(&task_id);
        let mut run = Run {
            host: Arc::clone(&self.host),
            task,
            session_id: session_id.clone(),
            session: None,
            approver,
            progress,
            held,
            pending_held: None,
            attempt_started: Instant::now(),
            stop,
            requests: JoinSet::new(),
            request_tokens: BTreeMap::new(),
            request_tasks: HashMap::new(),
            request_output: mpsc::unbounded_channel(),
            cancel_asked: false,
            last_refusal: None,
            request_trace: None,
            call_starts: HashMap::new(),
            events: None,
            seq_mark: None,
        };
        run.persist()?;
        self.host
            .record_runner(&task_id)
            .map_err(|e| OrchestratorError::Persist(e.to_string()))?;
        self.note_start(&task_id, &spec.prompt);
        run.say(Progress::Created(task_id.clone()));
        // The baseline of pre-existing static-analysis errors is taken before
        // the first edit, so verification counts only new ones. It runs the
        // project's own checker, which may take a while: said first.
        run.say(Progress::Note(
            "checking the project as it is now, so verification counts only new problems".into(),
        ));
        // The checker writes too (`cargo` makes a missing `Cargo.lock`):
        // swept like verification, recorded with the task (only when there
        // is a project to check: a look costs a walk of the tree).
        let checked = !cocode_toolchain::verify::detect(self.host.root(), &[]).is_empty();
        if checked {
            run.sweep_begin().await;
        }
        self.host
            .runner
            .capture_baseline(&VerificationRequest {
                task_id: task_id.clone(),
                attempt_no: AttemptNo(0),
                workspace_root: self.host.root().to_path_buf(),
                edited_paths: Vec::new(),
                commands: self.host.verification_commands().0,
                untrusted: Vec::new(),
            })
            .await;
        if checked {
            run.sweep_end().await;
        }
        run.apply(TaskEvent::Start).await?;
        let instructions = self.instructions(&run, &spec.backend, &task_id);
        let request = SessionRequest {
            task_id: task_id.clone(),
            session_id,
            workspace_root: self.host.root().to_path_buf(),
            target: Self::target(&spec.backend),
            request_timeout: Duration::from_mins(2),
            instructions,
        };
        if !run.begin(request, &spec).await? {
            return Ok(run.task);
        }
        run.pump().await?;
        if let Some(session) = run.session.take() {
            if run.task.status().is_terminal() {
                session.dispose().await;
            } else {
                // Waiting for a person: the session is not needed to decide
                // completion, and a headless run ends here.
                session
                    .cancel(CancelReason::WorkspaceClosing)
                    .await
                    .log_err("closing the agent's session");
            }
        }
        Ok(run.task)
    }

    /// Marks tasks found non-terminal at startup as failed (`app_restarted`).
    pub fn fail_interrupted(&self) -> Result<Vec<TaskId>, OrchestratorError> {
        fail_interrupted(&self.host.workspace)
    }

    /// Decides a task left awaiting approval (from `cocode task approve|reject`).
    pub fn decide(
        &self,
        task_id: &TaskId,
        approve: bool,
    ) -> Result<DelegatedTask, OrchestratorError> {
        let mut task = self
            .host
            .load_task(task_id)
            .map_err(|e| OrchestratorError::Setup(e.to_string()))?;
        let ctx = TransitionContext {
            limits: self.host.workspace.config.limits,
        };
        let ws = &self.host.workspace;
        let test_change = task.pending_approval_kind() == PendingApprovalKind::TestChange;
        if test_change {
            // The run that held it decides it while it lives; after it
            // ended (cocode restarted), the saved change is decided here.
            if crate::host::records::runner_alive(ws, task_id) {
                return Err(OrchestratorError::Setup(
                    "the held test change waits in its running task; decide it there".into(),
                ));
            }
            let held = crate::host::records::load_held(ws, task_id)
                .map_err(|e| OrchestratorError::Setup(format!("{e:#}")))?
                .ok_or_else(|| {
                    OrchestratorError::Setup("no held test change is saved with the task".into())
                })?;
            if approve {
                ws.gate
                    .apply_approved(&held.ctx, &held.op)
                    .map_err(|e| OrchestratorError::Setup(e.to_string()))?;
            }
            crate::host::records::remove_held(ws, task_id)
                .map_err(|e| OrchestratorError::Persist(format!("{e:#}")))?;
        }
        let event = if approve {
            TaskEvent::Approve
        } else {
            TaskEvent::Reject
        };
        TaskTransition::apply(&mut task, &event, &ctx)?;
        // The agent that held the change is gone with its run: the task
        // ends as interrupted, with the person's decision carried out.
        if test_change && !task.status().is_terminal() {
            TaskTransition::apply(&mut task, &TaskEvent::AppRestarted, &ctx)?;
        }
        self.host
            .save_task(&task)
            .map_err(|e| OrchestratorError::Persist(e.to_string()))?;
        if task.status().is_terminal() {
            self.host.run_retention(RetentionTrigger::TaskTerminated);
        }
        Ok(task)
    }
}

/// Marks tasks whose run was interrupted as failed (`app_restarted`): live
/// (not terminal, not waiting for a person) and their runner process — the
/// one that recorded `runner.json` — no longer exists.
pub fn fail_interrupted(
    ws: &cocode_workspace::OpenWorkspace,
) -> Result<Vec<TaskId>, OrchestratorError> {
    let ctx = TransitionContext {
        limits: ws.config.limits,
    };
    let mut failed = Vec::new();
    for mut task in crate::host::records::load_all(&ws.layout)
        .into_iter()
        .flatten()
    {
        // A completion or a held test change can still be decided later; a
        // reply to an agent whose session is gone cannot.
        let live = !task.status().is_terminal()
            && (task.status() != TaskStatus::AwaitingApproval
                || task.pending_approval_kind() == PendingApprovalKind::Reply);
        if !live || crate::host::records::runner_alive(ws, task.task_id()) {
            continue;
        }
        TaskTransition::apply(&mut task, &TaskEvent::AppRestarted, &ctx)?;
        crate::host::records::save_task_record(ws, &task)
            .map_err(|e| OrchestratorError::Persist(e.to_string()))?;
        failed.push(task.task_id().clone());
    }
    Ok(failed)
}

/// The reason a task ended, as a short phrase.
pub fn describe_end(task: &DelegatedTask) -> String {
    let status = task.status().phrase();
    match (
        task.terminal_reason(),
        task.pending_approval_kind().phrase(),
    ) {
        (Some(reason), _) => format!("{status}: {}", reason.phrase()),
        (None, Some(waits_for)) => format!("{status}: {waits_for}"),
        (None, None) => status.to_owned(),
    }
}

#[cfg(test)]
#[path = "orchestrator_tests.rs"]
mod summary_tests;
