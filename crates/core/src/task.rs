//! Delegated tasks and their state machine.
//!
//! [`TaskTransition::apply`] is the only code that changes a task's status
//! (enforced by the private fields here and by `cargo xtask boundaries`).
//! Every (status, event) pair is decided: the table below is implemented in
//! one `match`, and pairs it does not list are refused with a typed error —
//! the caller then leaves the session alone ("transition first, cancel after").

use std::fmt;

use serde::{Deserialize, Serialize};

pub use crate::cancel::CancelReason;
use crate::ids::{AcpAgentId, AttemptNo, ProviderId, TaskId, Timestamp};
use crate::verification::{
    FailureClass, MAX_RETRIES, VerificationLimits, VerificationRecord, VerificationVerdict,
};

/// The closed set of task statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Queued,
    Running,
    SelfVerifying,
    AwaitingApproval,
    Completed,
    Failed,
    RolledBack,
    Rejected,
    Stopped,
}

impl TaskStatus {
    pub const ALL: [Self; 9] = [
        Self::Queued,
        Self::Running,
        Self::SelfVerifying,
        Self::AwaitingApproval,
        Self::Completed,
        Self::Failed,
        Self::RolledBack,
        Self::Rejected,
        Self::Stopped,
    ];

    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::RolledBack | Self::Rejected | Self::Stopped
        )
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::SelfVerifying => "self_verifying",
            Self::AwaitingApproval => "awaiting_approval",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::RolledBack => "rolled_back",
            Self::Rejected => "rejected",
            Self::Stopped => "stopped",
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an `awaiting_approval` task waits for; `None` exactly when the task
/// is in any other status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PendingApprovalKind {
    None,
    /// The attempt finished; a person approves completion.
    Completion,
    /// The agent tried to change an existing test file; the edit is held.
    TestChange,
    /// The agent ended its turn without finishing and a person is there to
    /// answer it: their reply, "finish and verify", or stop.
    Reply,
}

/// How a task may complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionMode {
    /// Completes when verification passes on the current attempt.
    SelfVerification,
    /// Completes only when a person approves; the verification log is shown
    /// on the approval card but is not a gate.
    HumanApproval,
}

/// The one place that decides a task's completion mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletionModePolicy;

impl CompletionModePolicy {
    /// Human approval unless the workspace opted into self-verification.
    pub fn decide(workspace_opt_in: Option<CompletionMode>) -> CompletionMode {
        workspace_opt_in.unwrap_or(CompletionMode::HumanApproval)
    }

    /// Whether a person may flip the mode of a task that already started.
    /// Never: a task keeps the mode it was created with.
    pub const fn allows_user_override(_status: TaskStatus) -> bool {
        false
    }
}

/// Which agent backend runs a task.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TaskBackend {
    /// The built-in agent with a hosted or local model provider.
    BuiltIn { provider: ProviderId, model: String },
    /// The deterministic offline local agent.
    Local,
    /// An external agent over the Agent Client Protocol.
    Acp { agent_id: AcpAgentId },
}

impl TaskBackend {
    /// The agent runtime that runs this backend.
    pub const fn agent_kind(&self) -> crate::agent::AgentBackendKind {
        match self {
            Self::BuiltIn { .. } | Self::Local => crate::agent::AgentBackendKind::BuiltIn,
            Self::Acp { .. } => crate::agent::AgentBackendKind::Acp,
        }
    }
}

/// Which unresponsiveness signal fired (AC-20).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnresponsiveSignal {
    /// S1: the transport to the agent closed.
    TransportClosed,
    /// S2: no event for the idle limit while no host request was pending.
    Idle,
}

/// What a successful rollback restored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RollbackScope {
    TaskStart,
    Attempt,
    Snapshot,
}

/// Why a task ended (closed set; no free text).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case", deny_unknown_fields)]
pub enum TerminalReason {
    Verified,
    Approved,
    RetriesExhausted,
    EnvironmentFailure {
        class: FailureClass,
    },
    TransportClosed,
    IdleTimeout,
    AgentError {
        code: String,
    },
    UserStopped,
    TestChangeRejected,
    CompletionRejected,
    RolledBack,
    AppRestarted,
    /// The agent ended its turn without saying the attempt is done (no
    /// `task.finish`), on the first attempt; no person stopped anything.
    AgentEndedUnfinished,
    /// What the task changed could not all be recorded (a look at the
    /// workspace ran out of time or was stopped, the history's disk
    /// failed): its rollback is refused, so it cannot go on.
    NotFullyRecorded,
}

/// An input to the state machine.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TaskEvent {
    Start,
    UserStop,
    /// The agent ended its turn saying the attempt is done (`task.finish`).
    AgentTurnEnded,
    /// The agent ended its turn without saying the attempt is done.
    AgentEndedUnfinished,
    /// The gate held an edit of an existing test file.
    TestEditHeld,
    Approve,
    Reject,
    VerdictPass,
    VerdictFail,
    EnvironmentExhausted,
    /// Verification finished in human-approval mode.
    VerificationDone,
    VerdictIncomplete,
    Unresponsive(UnresponsiveSignal),
    /// A non-retryable agent error, with its stable code.
    AgentError {
        code: String,
    },
    RollbackSucceeded(RollbackScope),
    AttemptTimedOut {
        at: Timestamp,
    },
    /// Found non-terminal when the app started: the session is gone.
    AppRestarted,
    /// A sweep of the task could not record all of its changes.
    RecordingFailed,
    /// The agent ended its turn without finishing, and a person can answer
    /// (the window, `task run --interactive`).
    AwaitReply,
    /// The person answered the agent: its next turn starts.
    UserReplied,
    /// The person asked to verify the attempt as it stands.
    FinishRequested,
}

/// The kind of an event, without payload (for tables and errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskEventKind {
    Start,
    UserStop,
    AgentTurnEnded,
    TestEditHeld,
    Approve,
    Reject,
    VerdictPass,
    VerdictFail,
    EnvironmentExhausted,
    VerificationDone,
    VerdictIncomplete,
    Unresponsive,
    AgentError,
    RollbackSucceeded,
    AttemptTimedOut,
    AppRestarted,
    AgentEndedUnfinished,
    AwaitReply,
    UserReplied,
    FinishRequested,
    RecordingFailed,
}

impl TaskEventKind {
    pub const ALL: [Self; 21] = [
        Self::Start,
        Self::UserStop,
        Self::AgentTurnEnded,
        Self::TestEditHeld,
        Self::Approve,
        Self::Reject,
        Self::VerdictPass,
        Self::VerdictFail,
        Self::EnvironmentExhausted,
        Self::VerificationDone,
        Self::VerdictIncomplete,
        Self::Unresponsive,
        Self::AgentError,
        Self::RollbackSucceeded,
        Self::AttemptTimedOut,
        Self::AppRestarted,
        Self::AgentEndedUnfinished,
        Self::AwaitReply,
        Self::UserReplied,
        Self::FinishRequested,
        Self::RecordingFailed,
    ];
}

impl TaskEvent {
    pub fn kind(&self) -> TaskEventKind {
        match self {
            Self::Start => TaskEventKind::Start,
            Self::UserStop => TaskEventKind::UserStop,
            Self::AgentTurnEnded => TaskEventKind::AgentTurnEnded,
            Self::TestEditHeld => TaskEventKind::TestEditHeld,
            Self::Approve => TaskEventKind::Approve,
            Self::Reject => TaskEventKind::Reject,
            Self::VerdictPass => TaskEventKind::VerdictPass,
            Self::VerdictFail => TaskEventKind::VerdictFail,
            Self::EnvironmentExhausted => TaskEventKind::EnvironmentExhausted,
            Self::VerificationDone => TaskEventKind::VerificationDone,
            Self::VerdictIncomplete => TaskEventKind::VerdictIncomplete,
            Self::Unresponsive(_) => TaskEventKind::Unresponsive,
            Self::AgentError { .. } => TaskEventKind::AgentError,
            Self::RollbackSucceeded(_) => TaskEventKind::RollbackSucceeded,
            Self::AttemptTimedOut { .. } => TaskEventKind::AttemptTimedOut,
            Self::AppRestarted => TaskEventKind::AppRestarted,
            Self::AgentEndedUnfinished => TaskEventKind::AgentEndedUnfinished,
            Self::AwaitReply => TaskEventKind::AwaitReply,
            Self::UserReplied => TaskEventKind::UserReplied,
            Self::FinishRequested => TaskEventKind::FinishRequested,
            Self::RecordingFailed => TaskEventKind::RecordingFailed,
        }
    }
}

/// The invariants the state machine guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Invariant {
    /// 1: completed via self-verification only if the current attempt's
    /// verdict is pass and recorded.
    SelfVerifiedCompletionNeedsPass,
    /// 5: `rolled_back` only after a rollback to task start succeeded.
    RolledBackNeedsFullRollback,
}

/// A refused transition. The task is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("event '{event:?}' is not allowed in status '{status}'")]
    NotAllowed {
        status: TaskStatus,
        pending: PendingApprovalKind,
        event: TaskEventKind,
    },
    #[error("event '{event:?}' requires completion mode {required:?}")]
    WrongCompletionMode {
        event: TaskEventKind,
        required: CompletionMode,
    },
    #[error("event '{event:?}' contradicts the recorded verdict {verdict:?}")]
    VerdictMismatch {
        event: TaskEventKind,
        verdict: VerificationVerdict,
    },
    #[error("event would break invariant {0:?}")]
    InvariantViolated(Invariant),
}

/// Work the caller must do after a transition was applied.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TransitionEffect {
    /// An attempt begins (0 on start, +1 on each retry).
    BeginAttempt(AttemptNo),
    /// Tell the agent why the previous attempt failed verification.
    SendFailureSummary,
    /// Apply the held test-file edit through the gate as a snapshot of this task.
    ApplyHeldEdit,
    /// Discard the held test-file edit.
    DiscardHeldEdit,
    /// Cancel the agent session (idempotent).
    CancelSession(CancelReason),
    /// The task ended: release every lease it holds.
    ReleaseLeases,
}

/// An applied transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    pub from: TaskStatus,
    pub to: TaskStatus,
    pub effects: Vec<TransitionEffect>,
}

/// The fields of a new task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTask {
    pub task_id: TaskId,
    pub prompt: String,
    pub backend: TaskBackend,
    pub completion_mode: CompletionMode,
    pub created_at: Timestamp,
}

/// A task delegated to an agent. Fields are private: status changes only
/// through [`TaskTransition::apply`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "TaskWire", into = "TaskWire")]
pub struct DelegatedTask {
    task_id: TaskId,
    prompt: String,
    backend: TaskBackend,
    status: TaskStatus,
    completion_mode: CompletionMode,
    pending_approval_kind: PendingApprovalKind,
    retry_count: u8,
    attempt_no: AttemptNo,
    verification_log: Vec<VerificationRecord>,
    /// Records of the current attempt before this index are void (a test
    /// change was approved after they were taken).
    void_before: usize,
    created_at: Timestamp,
    terminal_reason: Option<TerminalReason>,
}

/// A persisted task whose fields contradict each other.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskRecordInvalid {
    #[error("pending_approval_kind must be set exactly when the status is awaiting_approval")]
    PendingApprovalMismatch,
    #[error("retry_count exceeds {MAX_RETRIES}")]
    RetryCountTooHigh,
    #[error("attempt_no must equal retry_count")]
    AttemptClockMismatch,
    #[error("terminal_reason must be set exactly when the status is terminal")]
    TerminalReasonMismatch,
    #[error("a verification record belongs to a future attempt")]
    RecordFromFutureAttempt,
    #[error("void_before points past the verification log")]
    VoidMarkerOutOfRange,
}

/// Appending a record the task cannot accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordRefused {
    #[error("verification records are accepted only while self_verifying (status is '{0}')")]
    NotVerifying(TaskStatus),
    #[error("record is for attempt {record}, the task is on attempt {current}")]
    WrongAttempt {
        record: AttemptNo,
        current: AttemptNo,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskWire {
    task_id: TaskId,
    prompt: String,
    backend: TaskBackend,
    status: TaskStatus,
    completion_mode: CompletionMode,
    pending_approval_kind: PendingApprovalKind,
    retry_count: u8,
    attempt_no: AttemptNo,
    verification_log: Vec<VerificationRecord>,
    #[serde(default)]
    void_before: usize,
    created_at: Timestamp,
    terminal_reason: Option<TerminalReason>,
}

impl TryFrom<TaskWire> for DelegatedTask {
    type Error = TaskRecordInvalid;
    fn try_from(w: TaskWire) -> Result<Self, Self::Error> {
        if (w.status == TaskStatus::AwaitingApproval)
            != (w.pending_approval_kind != PendingApprovalKind::None)
        {
            return Err(TaskRecordInvalid::PendingApprovalMismatch);
        }
        if w.retry_count > MAX_RETRIES {
            return Err(TaskRecordInvalid::RetryCountTooHigh);
        }
        if w.attempt_no != AttemptNo(u32::from(w.retry_count)) {
            return Err(TaskRecordInvalid::AttemptClockMismatch);
        }
        if w.status.is_terminal() != w.terminal_reason.is_some() {
            return Err(TaskRecordInvalid::TerminalReasonMismatch);
        }
        if w.verification_log
            .iter()
            .any(|r| r.attempt_no() > w.attempt_no)
        {
            return Err(TaskRecordInvalid::RecordFromFutureAttempt);
        }
        if w.void_before > w.verification_log.len() {
            return Err(TaskRecordInvalid::VoidMarkerOutOfRange);
        }
        Ok(Self {
            task_id: w.task_id,
            prompt: w.prompt,
            backend: w.backend,
            status: w.status,
            completion_mode: w.completion_mode,
            pending_approval_kind: w.pending_approval_kind,
            retry_count: w.retry_count,
            attempt_no: w.attempt_no,
            verification_log: w.verification_log,
            void_before: w.void_before,
            created_at: w.created_at,
            terminal_reason: w.terminal_reason,
        })
    }
}

impl From<DelegatedTask> for TaskWire {
    fn from(t: DelegatedTask) -> Self {
        TaskWire {
            task_id: t.task_id,
            prompt: t.prompt,
            backend: t.backend,
            status: t.status,
            completion_mode: t.completion_mode,
            pending_approval_kind: t.pending_approval_kind,
            retry_count: t.retry_count,
            attempt_no: t.attempt_no,
            verification_log: t.verification_log,
            void_before: t.void_before,
            created_at: t.created_at,
            terminal_reason: t.terminal_reason,
        }
    }
}

impl DelegatedTask {
    /// A new task, `queued` on attempt 0.
    pub fn new(new: NewTask) -> Self {
        Self {
            task_id: new.task_id,
            prompt: new.prompt,
            backend: new.backend,
            status: TaskStatus::Queued,
            completion_mode: new.completion_mode,
            pending_approval_kind: PendingApprovalKind::None,
            retry_count: 0,
            attempt_no: AttemptNo::FIRST,
            verification_log: Vec::new(),
            void_before: 0,
            created_at: new.created_at,
            terminal_reason: None,
        }
    }

    pub fn task_id(&self) -> &TaskId {
        &self.task_id
    }
    pub fn prompt(&self) -> &str {
        &self.prompt
    }
    pub fn backend(&self) -> &TaskBackend {
        &self.backend
    }
    pub fn status(&self) -> TaskStatus {
        self.status
    }
    pub fn completion_mode(&self) -> CompletionMode {
        self.completion_mode
    }
    pub fn pending_approval_kind(&self) -> PendingApprovalKind {
        self.pending_approval_kind
    }
    pub fn retry_count(&self) -> u8 {
        self.retry_count
    }
    pub fn attempt_no(&self) -> AttemptNo {
        self.attempt_no
    }
    pub fn verification_log(&self) -> &[VerificationRecord] {
        &self.verification_log
    }
    pub fn created_at(&self) -> Timestamp {
        self.created_at
    }
    pub fn terminal_reason(&self) -> Option<&TerminalReason> {
        self.terminal_reason.as_ref()
    }

    /// Appends a record of the current attempt (append-only; only while
    /// verifying, so no record can land in a finished attempt).
    pub fn record_verification(&mut self, record: VerificationRecord) -> Result<(), RecordRefused> {
        if self.status != TaskStatus::SelfVerifying {
            return Err(RecordRefused::NotVerifying(self.status));
        }
        if record.attempt_no() != self.attempt_no {
            return Err(RecordRefused::WrongAttempt {
                record: record.attempt_no(),
                current: self.attempt_no,
            });
        }
        self.verification_log.push(record);
        Ok(())
    }

    /// The verdict over the current attempt's valid records.
    pub fn verdict(&self) -> VerificationVerdict {
        let valid = self
            .verification_log
            .get(self.void_before..)
            .unwrap_or_default();
        VerificationVerdict::evaluate(valid, self.attempt_no)
    }
}

/// Limits the transition function needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransitionContext {
    pub limits: VerificationLimits,
}

/// The state machine. The only place that assigns `DelegatedTask::status`.
#[derive(Debug, Clone, Copy)]
pub struct TaskTransition;

enum Next {
    To {
        status: TaskStatus,
        pending: PendingApprovalKind,
        effects: Vec<TransitionEffect>,
    },
    End {
        status: TaskStatus,
        reason: TerminalReason,
        cancel: Option<CancelReason>,
    },
}

impl TaskTransition {
    /// Spends the next retry — a new attempt that is sent the failure
    /// summary — or, with the budget gone, ends the task failed with
    /// `retries_exhausted`.
    fn spend_retry(task: &mut DelegatedTask, ctx: &TransitionContext) -> Next {
        let max = ctx.limits.max_retries().min(MAX_RETRIES);
        if task.retry_count < max {
            task.retry_count += 1;
            task.attempt_no = task.attempt_no.next();
            Next::To {
                status: TaskStatus::Running,
                pending: PendingApprovalKind::None,
                effects: vec![
                    TransitionEffect::BeginAttempt(task.attempt_no),
                    TransitionEffect::SendFailureSummary,
                ],
            }
        } else {
            Next::End {
                status: TaskStatus::Failed,
                reason: TerminalReason::RetriesExhausted,
                cancel: Some(CancelReason::TaskFailed),
            }
        }
    }

    /// Applies `event` to `task`. On error the task is unchanged.
    #[expect(
        clippy::too_many_lines,
        reason = "the transition table reads best as one match"
    )]
    pub fn apply(
        task: &mut DelegatedTask,
        event: &TaskEvent,
        ctx: &TransitionContext,
    ) -> Result<Transition, TransitionError> {
        use PendingApprovalKind as P;
        use TaskStatus as S;

        let from = task.status;
        let not_allowed = || TransitionError::NotAllowed {
            status: from,
            pending: task.pending_approval_kind,
            event: event.kind(),
        };
        let to = |status, effects| Next::To {
            status,
            pending: P::None,
            effects,
        };
        let end = |status, reason, cancel| Next::End {
            status,
            reason,
            cancel,
        };

        let next = match (from, task.pending_approval_kind, event) {
            // 1
            (S::Queued, _, TaskEvent::Start) => to(
                S::Running,
                vec![TransitionEffect::BeginAttempt(task.attempt_no)],
            ),
            // 2
            (S::Queued, _, TaskEvent::UserStop) => {
                end(S::Stopped, TerminalReason::UserStopped, None)
            }
            // 3
            (S::Running, _, TaskEvent::AgentTurnEnded) => to(S::SelfVerifying, vec![]),
            // 4
            (S::Running, _, TaskEvent::TestEditHeld) => Next::To {
                status: S::AwaitingApproval,
                pending: P::TestChange,
                effects: vec![],
            },
            // 5
            (S::AwaitingApproval, P::TestChange, TaskEvent::Approve) => {
                task.void_before = task.verification_log.len();
                to(S::Running, vec![TransitionEffect::ApplyHeldEdit])
            }
            // 6
            (S::AwaitingApproval, P::TestChange, TaskEvent::Reject) => end(
                S::Rejected,
                TerminalReason::TestChangeRejected,
                Some(CancelReason::ApprovalRejected),
            ),
            // 7
            (S::SelfVerifying, _, TaskEvent::VerdictPass) => {
                Self::require_mode(task, event, CompletionMode::SelfVerification)?;
                match task.verdict() {
                    VerificationVerdict::Pass => end(S::Completed, TerminalReason::Verified, None),
                    _ => {
                        return Err(TransitionError::InvariantViolated(
                            Invariant::SelfVerifiedCompletionNeedsPass,
                        ));
                    }
                }
            }
            // 8, 9
            (S::SelfVerifying, _, TaskEvent::VerdictFail) => {
                Self::require_mode(task, event, CompletionMode::SelfVerification)?;
                match task.verdict() {
                    VerificationVerdict::Fail { class } if class.spends_retry() => {
                        Self::spend_retry(task, ctx)
                    }
                    verdict => {
                        return Err(TransitionError::VerdictMismatch {
                            event: event.kind(),
                            verdict,
                        });
                    }
                }
            }
            // 10
            (S::SelfVerifying, _, TaskEvent::EnvironmentExhausted) => match task.verdict() {
                VerificationVerdict::Fail { class } if !class.spends_retry() => end(
                    S::Failed,
                    TerminalReason::EnvironmentFailure { class },
                    Some(CancelReason::TaskFailed),
                ),
                verdict => {
                    return Err(TransitionError::VerdictMismatch {
                        event: event.kind(),
                        verdict,
                    });
                }
            },
            // 11
            (S::SelfVerifying, _, TaskEvent::VerificationDone) => {
                Self::require_mode(task, event, CompletionMode::HumanApproval)?;
                Next::To {
                    status: S::AwaitingApproval,
                    pending: P::Completion,
                    effects: vec![],
                }
            }
            // 20
            (S::SelfVerifying, _, TaskEvent::VerdictIncomplete) => {
                Self::require_mode(task, event, CompletionMode::SelfVerification)?;
                match task.verdict() {
                    VerificationVerdict::NotCompletable(_) => Next::To {
                        status: S::AwaitingApproval,
                        pending: P::Completion,
                        effects: vec![],
                    },
                    verdict => {
                        return Err(TransitionError::VerdictMismatch {
                            event: event.kind(),
                            verdict,
                        });
                    }
                }
            }
            // 12
            (S::AwaitingApproval, P::Completion, TaskEvent::Approve) => {
                end(S::Completed, TerminalReason::Approved, None)
            }
            // 13
            (S::AwaitingApproval, P::Completion, TaskEvent::Reject) => end(
                S::Rejected,
                TerminalReason::CompletionRejected,
                Some(CancelReason::ApprovalRejected),
            ),
            // 14
            (S::Running, _, TaskEvent::Unresponsive(signal)) => end(
                S::Failed,
                match signal {
                    UnresponsiveSignal::TransportClosed => TerminalReason::TransportClosed,
                    UnresponsiveSignal::Idle => TerminalReason::IdleTimeout,
                },
                Some(CancelReason::TaskFailed),
            ),
            // 15
            (S::Running, _, TaskEvent::AgentError { code }) => end(
                S::Failed,
                TerminalReason::AgentError { code: code.clone() },
                Some(CancelReason::TaskFailed),
            ),
            // 16
            (S::Running | S::SelfVerifying | S::AwaitingApproval, _, TaskEvent::UserStop) => end(
                S::Stopped,
                TerminalReason::UserStopped,
                Some(CancelReason::UserStopped),
            ),
            // 17, 18
            (status, _, TaskEvent::RollbackSucceeded(scope)) if status != S::RolledBack => {
                if *scope != RollbackScope::TaskStart {
                    return Err(TransitionError::InvariantViolated(
                        Invariant::RolledBackNeedsFullRollback,
                    ));
                }
                end(
                    S::RolledBack,
                    TerminalReason::RolledBack,
                    (!status.is_terminal()).then_some(CancelReason::UserRolledBack),
                )
            }
            // 19
            (S::Running, _, TaskEvent::AttemptTimedOut { at }) => {
                let record = ctx.limits.timed_out_record(task.attempt_no, *at);
                task.verification_log.push(record);
                to(S::SelfVerifying, vec![])
            }
            // 21: the agent ended its turn without finishing. On a retry
            // after failed verification that is a failed attempt: it spends
            // the next retry, and once the budget is gone the task fails with
            // its verification verdict. On the first attempt nothing was
            // verified, so the task fails with its own reason.
            // A person who answers nothing (an empty reply, the end of
            // input) leaves the turn as unfinished as the agent did: 25.
            (S::Running, _, TaskEvent::AgentEndedUnfinished)
            | (S::AwaitingApproval, P::Reply, TaskEvent::AgentEndedUnfinished)
                if task.retry_count > 0 =>
            {
                Self::spend_retry(task, ctx)
            }
            (S::Running, _, TaskEvent::AgentEndedUnfinished)
            | (S::AwaitingApproval, P::Reply, TaskEvent::AgentEndedUnfinished) => end(
                S::Failed,
                TerminalReason::AgentEndedUnfinished,
                Some(CancelReason::TaskFailed),
            ),
            // 22: the agent ended its turn unfinished and a person can
            // answer: the task waits for them.
            (S::Running, _, TaskEvent::AwaitReply) => Next::To {
                status: S::AwaitingApproval,
                pending: P::Reply,
                effects: vec![],
            },
            // 23: the person's reply starts the agent's next turn (the
            // same attempt).
            (S::AwaitingApproval, P::Reply, TaskEvent::UserReplied) => to(S::Running, vec![]),
            // 24: "finish and verify": the attempt is verified as it stands.
            (S::AwaitingApproval, P::Reply, TaskEvent::FinishRequested) => {
                to(S::SelfVerifying, vec![])
            }
            // The app restarted while the task was live: its session is gone.
            (status, _, TaskEvent::AppRestarted) if !status.is_terminal() => {
                end(S::Failed, TerminalReason::AppRestarted, None)
            }
            // 26: a sweep could not record all the task's changes.
            (status, _, TaskEvent::RecordingFailed) if !status.is_terminal() => end(
                S::Failed,
                TerminalReason::NotFullyRecorded,
                Some(CancelReason::TaskFailed),
            ),
            _ => return Err(not_allowed()),
        };

        let transition = match next {
            Next::To {
                status,
                pending,
                effects,
            } => {
                task.status = status;
                task.pending_approval_kind = pending;
                Transition {
                    from,
                    to: status,
                    effects,
                }
            }
            Next::End {
                status,
                reason,
                cancel,
            } => {
                let mut effects = Vec::new();
                if from == S::AwaitingApproval && task.pending_approval_kind == P::TestChange {
                    effects.push(TransitionEffect::DiscardHeldEdit);
                }
                effects.extend(cancel.map(TransitionEffect::CancelSession));
                effects.push(TransitionEffect::ReleaseLeases);
                task.status = status;
                task.pending_approval_kind = P::None;
                task.terminal_reason = Some(reason);
                Transition {
                    from,
                    to: status,
                    effects,
                }
            }
        };
        debug_assert!(task.retry_count <= MAX_RETRIES, "invariant 4");
        Ok(transition)
    }

    fn require_mode(
        task: &DelegatedTask,
        event: &TaskEvent,
        required: CompletionMode,
    ) -> Result<(), TransitionError> {
        if task.completion_mode == required {
            Ok(())
        } else {
            Err(TransitionError::WrongCompletionMode {
                event: event.kind(),
                required,
            })
        }
    }
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;
