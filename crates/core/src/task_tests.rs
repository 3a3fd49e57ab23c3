use super::*;
use crate::verification::{NoTargetCode, RunFacts, VerificationMethod};
use PendingApprovalKind as P;
use TaskStatus as S;
use pretty_assertions::assert_eq;

const FACTS: RunFacts = RunFacts {
    started_at: Timestamp(0),
    duration_ms: 1,
    diagnostics_count: None,
    exit_code: Some(0),
};

fn ctx() -> TransitionContext {
    TransitionContext::default()
}

fn new_task(mode: CompletionMode) -> DelegatedTask {
    DelegatedTask::new(NewTask {
        task_id: TaskId::new("t1").unwrap(),
        prompt: "add pagination".into(),
        backend: TaskBackend::Local,
        completion_mode: mode,
        created_at: Timestamp(1),
    })
}

#[expect(
    clippy::needless_pass_by_value,
    reason = "call sites read better with owned events"
)]
fn step(task: &mut DelegatedTask, event: TaskEvent) -> Transition {
    TaskTransition::apply(task, &event, &ctx()).unwrap()
}

/// Records of the current attempt that make the verdict `Pass`.
fn passing(task: &mut DelegatedTask) {
    let a = task.attempt_no();
    for m in VerificationMethod::EXECUTION_ORDER {
        task.record_verification(VerificationRecord::pass(m, a, FACTS))
            .unwrap();
    }
}

fn failing(task: &mut DelegatedTask, class: FailureClass) {
    let a = task.attempt_no();
    task.record_verification(VerificationRecord::fail(
        VerificationMethod::Tests,
        class,
        a,
        FACTS,
    ))
    .unwrap();
}

fn nothing_applies(task: &mut DelegatedTask) {
    let a = task.attempt_no();
    for code in NoTargetCode::ALL {
        task.record_verification(VerificationRecord::no_target(code, a, FACTS))
            .unwrap();
    }
}

/// The eleven states of the table: nine statuses, `awaiting_approval` split
/// by kind.
const STATES: [(TaskStatus, PendingApprovalKind); 11] = [
    (S::Queued, P::None),
    (S::Running, P::None),
    (S::SelfVerifying, P::None),
    (S::AwaitingApproval, P::TestChange),
    (S::AwaitingApproval, P::Completion),
    (S::AwaitingApproval, P::Reply),
    (S::Completed, P::None),
    (S::Failed, P::None),
    (S::RolledBack, P::None),
    (S::Rejected, P::None),
    (S::Stopped, P::None),
];

/// Drives a fresh task into `state` through the public API only.
fn task_in(state: (TaskStatus, PendingApprovalKind), mode: CompletionMode) -> DelegatedTask {
    let mut t = new_task(mode);
    match state {
        (S::Queued, _) => {}
        (S::Running, _) => {
            step(&mut t, TaskEvent::Start);
        }
        (S::SelfVerifying, _) => {
            step(&mut t, TaskEvent::Start);
            step(&mut t, TaskEvent::AgentTurnEnded);
        }
        (S::AwaitingApproval, P::TestChange) => {
            step(&mut t, TaskEvent::Start);
            step(&mut t, TaskEvent::TestEditHeld);
        }
        (S::AwaitingApproval, P::Reply) => {
            step(&mut t, TaskEvent::Start);
            step(&mut t, TaskEvent::AwaitReply);
        }
        (S::AwaitingApproval, _) => {
            t = task_in((S::SelfVerifying, P::None), CompletionMode::HumanApproval);
            step(&mut t, TaskEvent::VerificationDone);
        }
        (S::Completed, _) => {
            t = task_in((S::AwaitingApproval, P::Completion), mode);
            step(&mut t, TaskEvent::Approve);
        }
        (S::Failed, _) => {
            step(&mut t, TaskEvent::Start);
            step(
                &mut t,
                TaskEvent::AgentError {
                    code: "PROVIDER_AUTH".into(),
                },
            );
        }
        (S::RolledBack, _) => {
            step(
                &mut t,
                TaskEvent::RollbackSucceeded(RollbackScope::TaskStart),
            );
        }
        (S::Rejected, _) => {
            t = task_in((S::AwaitingApproval, P::TestChange), mode);
            step(&mut t, TaskEvent::Reject);
        }
        (S::Stopped, _) => {
            step(&mut t, TaskEvent::UserStop);
        }
    }
    assert_eq!((t.status(), t.pending_approval_kind()), state);
    t
}

/// One event of each kind, with a verification log that makes verdict
/// events valid where they are allowed at all.
fn prepare(kind: TaskEventKind, task: &mut DelegatedTask) -> TaskEvent {
    let verifying = task.status() == S::SelfVerifying;
    match kind {
        TaskEventKind::Start => TaskEvent::Start,
        TaskEventKind::UserStop => TaskEvent::UserStop,
        TaskEventKind::AgentTurnEnded => TaskEvent::AgentTurnEnded,
        TaskEventKind::TestEditHeld => TaskEvent::TestEditHeld,
        TaskEventKind::Approve => TaskEvent::Approve,
        TaskEventKind::Reject => TaskEvent::Reject,
        TaskEventKind::VerdictPass => {
            if verifying {
                passing(task);
            }
            TaskEvent::VerdictPass
        }
        TaskEventKind::VerdictFail => {
            if verifying {
                failing(task, FailureClass::CodeDefect);
            }
            TaskEvent::VerdictFail
        }
        TaskEventKind::EnvironmentExhausted => {
            if verifying {
                failing(task, FailureClass::EnvToolMissing);
            }
            TaskEvent::EnvironmentExhausted
        }
        TaskEventKind::VerificationDone => TaskEvent::VerificationDone,
        TaskEventKind::VerdictIncomplete => {
            if verifying {
                nothing_applies(task);
            }
            TaskEvent::VerdictIncomplete
        }
        TaskEventKind::Unresponsive => TaskEvent::Unresponsive(UnresponsiveSignal::Idle),
        TaskEventKind::AgentError => TaskEvent::AgentError {
            code: "PROVIDER_AUTH".into(),
        },
        TaskEventKind::RollbackSucceeded => TaskEvent::RollbackSucceeded(RollbackScope::TaskStart),
        TaskEventKind::AttemptTimedOut => TaskEvent::AttemptTimedOut { at: Timestamp(9) },
        TaskEventKind::AppRestarted => TaskEvent::AppRestarted,
        TaskEventKind::AgentEndedUnfinished => TaskEvent::AgentEndedUnfinished,
        TaskEventKind::AwaitReply => TaskEvent::AwaitReply,
        TaskEventKind::UserReplied => TaskEvent::UserReplied,
        TaskEventKind::FinishRequested => TaskEvent::FinishRequested,
        TaskEventKind::RecordingFailed => TaskEvent::RecordingFailed,
    }
}

/// The design's table, row by row: (from, event, mode-or-any, to).
#[expect(
    clippy::match_same_arms,
    reason = "one arm per row of the design's table"
)]
fn allowed(
    state: (TaskStatus, PendingApprovalKind),
    kind: TaskEventKind,
    mode: CompletionMode,
) -> Option<(TaskStatus, PendingApprovalKind)> {
    use CompletionMode::{HumanApproval as H, SelfVerification as V};
    use TaskEventKind as E;
    let (status, pending) = state;
    let live = !status.is_terminal();
    Some(match (status, pending, kind, mode) {
        (S::Queued, _, E::Start, _) => (S::Running, P::None), // 1
        (S::Queued, _, E::UserStop, _) => (S::Stopped, P::None), // 2
        (S::Running, _, E::AgentTurnEnded, _) => (S::SelfVerifying, P::None), // 3
        (S::Running, _, E::TestEditHeld, _) => (S::AwaitingApproval, P::TestChange), // 4
        (S::AwaitingApproval, P::TestChange, E::Approve, _) => (S::Running, P::None), // 5
        (S::AwaitingApproval, P::TestChange, E::Reject, _) => (S::Rejected, P::None), // 6
        (S::SelfVerifying, _, E::VerdictPass, V) => (S::Completed, P::None), // 7
        (S::SelfVerifying, _, E::VerdictFail, V) => (S::Running, P::None), // 8
        (S::SelfVerifying, _, E::EnvironmentExhausted, _) => (S::Failed, P::None), // 10
        (S::SelfVerifying, _, E::VerificationDone, H) => (S::AwaitingApproval, P::Completion), // 11
        (S::AwaitingApproval, P::Completion, E::Approve, _) => (S::Completed, P::None), // 12
        (S::AwaitingApproval, P::Completion, E::Reject, _) => (S::Rejected, P::None), // 13
        (S::Running, _, E::Unresponsive | E::AgentError, _) => (S::Failed, P::None), // 14, 15
        (S::Running | S::SelfVerifying | S::AwaitingApproval, _, E::UserStop, _) => {
            (S::Stopped, P::None) // 16
        }
        (s, _, E::RollbackSucceeded, _) if s != S::RolledBack => (S::RolledBack, P::None), // 17, 18
        (S::Running, _, E::AttemptTimedOut, _) => (S::SelfVerifying, P::None),             // 19
        (S::SelfVerifying, _, E::VerdictIncomplete, V) => (S::AwaitingApproval, P::Completion), // 20
        (S::Running, _, E::AgentEndedUnfinished, _) => (S::Failed, P::None), // 21, first attempt
        (S::Running, _, E::AwaitReply, _) => (S::AwaitingApproval, P::Reply), // 22
        (S::AwaitingApproval, P::Reply, E::UserReplied, _) => (S::Running, P::None), // 23
        (S::AwaitingApproval, P::Reply, E::FinishRequested, _) => (S::SelfVerifying, P::None), // 24
        (S::AwaitingApproval, P::Reply, E::AgentEndedUnfinished, _) => (S::Failed, P::None), // 25, first attempt
        (_, _, E::AppRestarted | E::RecordingFailed, _) if live => (S::Failed, P::None),     // 26
        _ => return None,
    })
}

#[test]
fn every_status_and_event_pair_is_decided_as_the_table_says() {
    let mut decided = 0;
    for mode in [
        CompletionMode::SelfVerification,
        CompletionMode::HumanApproval,
    ] {
        for state in STATES {
            for kind in TaskEventKind::ALL {
                let mut task = task_in(state, mode);
                let event = prepare(kind, &mut task);
                assert_eq!(event.kind(), kind);
                let before = task.clone();
                let result = TaskTransition::apply(&mut task, &event, &ctx());
                match (allowed(state, kind, mode), result) {
                    (Some(target), Ok(t)) => {
                        assert_eq!(
                            (t.from, t.to),
                            (state.0, target.0),
                            "{state:?} {kind:?} {mode:?}"
                        );
                        assert_eq!((task.status(), task.pending_approval_kind()), target);
                        assert_eq!(
                            task.status().is_terminal(),
                            task.terminal_reason().is_some()
                        );
                    }
                    (None, Err(err)) => {
                        assert_eq!(task, before, "a refused event must not change the task");
                        let typed = matches!(
                            err,
                            TransitionError::NotAllowed { .. }
                                | TransitionError::WrongCompletionMode { .. }
                        );
                        assert!(typed, "{state:?} {kind:?} {mode:?}: {err:?}");
                    }
                    (expected, got) => {
                        panic!(
                            "{state:?} × {kind:?} ({mode:?}): expected {expected:?}, got {got:?}"
                        )
                    }
                }
                decided += 1;
            }
        }
    }
    assert_eq!(decided, 2 * 11 * 21);
}

#[test]
fn refused_pairs_name_the_status_and_event() {
    let mut t = task_in((S::Completed, P::None), CompletionMode::HumanApproval);
    let err = TaskTransition::apply(&mut t, &TaskEvent::Start, &ctx()).unwrap_err();
    assert_eq!(
        err,
        TransitionError::NotAllowed {
            status: S::Completed,
            pending: P::None,
            event: TaskEventKind::Start
        }
    );
}

#[test]
fn invariant1_no_self_verified_completion_without_a_recorded_pass() {
    let mut t = task_in(
        (S::SelfVerifying, P::None),
        CompletionMode::SelfVerification,
    );
    let err = TaskTransition::apply(&mut t, &TaskEvent::VerdictPass, &ctx()).unwrap_err();
    assert_eq!(
        err,
        TransitionError::InvariantViolated(Invariant::SelfVerifiedCompletionNeedsPass)
    );
    // A pass together with a failure is still a failure.
    passing(&mut t);
    failing(&mut t, FailureClass::CodeDefect);
    assert!(TaskTransition::apply(&mut t, &TaskEvent::VerdictPass, &ctx()).is_err());
    assert_eq!(t.status(), S::SelfVerifying);
}

#[test]
fn invariant1_passes_of_an_earlier_attempt_do_not_count() {
    let mut t = task_in(
        (S::SelfVerifying, P::None),
        CompletionMode::SelfVerification,
    );
    passing(&mut t);
    failing(&mut t, FailureClass::CodeDefect);
    step(&mut t, TaskEvent::VerdictFail);
    assert_eq!(t.attempt_no(), AttemptNo(1));
    step(&mut t, TaskEvent::AgentTurnEnded);
    assert!(TaskTransition::apply(&mut t, &TaskEvent::VerdictPass, &ctx()).is_err());
    passing(&mut t);
    let tr = step(&mut t, TaskEvent::VerdictPass);
    assert_eq!(tr.to, S::Completed);
    assert_eq!(t.terminal_reason(), Some(&TerminalReason::Verified));
}

#[test]
fn retries_stop_after_three_and_only_code_defects_spend_them() {
    let mut t = task_in(
        (S::SelfVerifying, P::None),
        CompletionMode::SelfVerification,
    );
    for expected_retry in 1..=3u8 {
        failing(&mut t, FailureClass::CodeDefect);
        let tr = step(&mut t, TaskEvent::VerdictFail);
        assert_eq!(
            tr.effects,
            vec![
                TransitionEffect::BeginAttempt(AttemptNo(u32::from(expected_retry))),
                TransitionEffect::SendFailureSummary
            ]
        );
        assert_eq!(
            (t.retry_count(), t.attempt_no()),
            (expected_retry, AttemptNo(u32::from(expected_retry)))
        );
        step(&mut t, TaskEvent::AgentTurnEnded);
    }
    failing(&mut t, FailureClass::CodeDefect);
    let tr = step(&mut t, TaskEvent::VerdictFail);
    assert_eq!((tr.to, t.retry_count()), (S::Failed, 3));
    assert_eq!(t.terminal_reason(), Some(&TerminalReason::RetriesExhausted));
    assert_eq!(
        tr.effects,
        vec![
            TransitionEffect::CancelSession(CancelReason::TaskFailed),
            TransitionEffect::ReleaseLeases
        ]
    );
}

#[test]
fn an_agent_that_ends_its_turn_unfinished_fails_the_task_without_a_person_stopping_it() {
    let mut t = task_in((S::Running, P::None), CompletionMode::SelfVerification);
    let tr = step(&mut t, TaskEvent::AgentEndedUnfinished);
    assert_eq!((tr.from, tr.to), (S::Running, S::Failed));
    assert_eq!(
        t.terminal_reason(),
        Some(&TerminalReason::AgentEndedUnfinished)
    );
    assert_eq!(
        tr.effects,
        vec![
            TransitionEffect::CancelSession(CancelReason::TaskFailed),
            TransitionEffect::ReleaseLeases
        ]
    );
}

#[test]
fn a_person_answers_an_agent_that_waits_for_a_reply() {
    let mut t = task_in((S::Running, P::None), CompletionMode::SelfVerification);
    let tr = step(&mut t, TaskEvent::AwaitReply);
    assert_eq!(
        (tr.from, tr.to, t.pending_approval_kind(), tr.effects),
        (S::Running, S::AwaitingApproval, P::Reply, vec![])
    );
    // Approving or rejecting is not an answer to the agent.
    for event in [TaskEvent::Approve, TaskEvent::Reject] {
        let before = t.clone();
        assert!(TaskTransition::apply(&mut t, &event, &ctx()).is_err());
        assert_eq!(t, before);
    }
    let tr = step(&mut t, TaskEvent::UserReplied);
    assert_eq!(
        (
            tr.from,
            tr.to,
            tr.effects,
            t.attempt_no(),
            t.pending_approval_kind()
        ),
        (
            S::AwaitingApproval,
            S::Running,
            vec![],
            AttemptNo(0),
            P::None
        ),
        "the reply goes on in the same attempt"
    );
    step(&mut t, TaskEvent::AwaitReply);
    let tr = step(&mut t, TaskEvent::FinishRequested);
    assert_eq!((tr.from, tr.to), (S::AwaitingApproval, S::SelfVerifying));

    // Stopping while it waits cancels the session; nothing is held.
    let mut t = task_in(
        (S::AwaitingApproval, P::Reply),
        CompletionMode::HumanApproval,
    );
    let tr = step(&mut t, TaskEvent::UserStop);
    assert_eq!(
        (tr.to, tr.effects),
        (
            S::Stopped,
            vec![
                TransitionEffect::CancelSession(CancelReason::UserStopped),
                TransitionEffect::ReleaseLeases
            ]
        )
    );
    // No answer at all is an unfinished turn: on the first attempt the task
    // fails as it does without a person.
    let mut t = task_in(
        (S::AwaitingApproval, P::Reply),
        CompletionMode::SelfVerification,
    );
    let tr = step(&mut t, TaskEvent::AgentEndedUnfinished);
    assert_eq!(
        (tr.to, t.terminal_reason()),
        (S::Failed, Some(&TerminalReason::AgentEndedUnfinished))
    );
}

#[test]
fn no_answer_on_a_retry_spends_the_next_retry() {
    let mut t = task_in(
        (S::SelfVerifying, P::None),
        CompletionMode::SelfVerification,
    );
    failing(&mut t, FailureClass::CodeDefect);
    step(&mut t, TaskEvent::VerdictFail);
    step(&mut t, TaskEvent::AwaitReply);
    let tr = step(&mut t, TaskEvent::AgentEndedUnfinished);
    assert_eq!(
        (tr.from, tr.to, t.retry_count(), t.pending_approval_kind()),
        (S::AwaitingApproval, S::Running, 2, P::None)
    );
    assert_eq!(
        tr.effects,
        vec![
            TransitionEffect::BeginAttempt(AttemptNo(2)),
            TransitionEffect::SendFailureSummary
        ]
    );
}

#[test]
fn an_unfinished_retry_spends_the_next_retry_and_then_fails_with_the_verdict() {
    let mut t = task_in(
        (S::SelfVerifying, P::None),
        CompletionMode::SelfVerification,
    );
    failing(&mut t, FailureClass::CodeDefect);
    step(&mut t, TaskEvent::VerdictFail);
    assert_eq!((t.status(), t.retry_count()), (S::Running, 1));
    for expected_retry in 2..=3u8 {
        let tr = step(&mut t, TaskEvent::AgentEndedUnfinished);
        assert_eq!(
            (tr.from, tr.to, t.retry_count(), t.attempt_no()),
            (
                S::Running,
                S::Running,
                expected_retry,
                AttemptNo(u32::from(expected_retry))
            )
        );
        assert_eq!(
            tr.effects,
            vec![
                TransitionEffect::BeginAttempt(AttemptNo(u32::from(expected_retry))),
                TransitionEffect::SendFailureSummary
            ]
        );
    }
    let tr = step(&mut t, TaskEvent::AgentEndedUnfinished);
    assert_eq!((tr.to, t.retry_count()), (S::Failed, 3));
    assert_eq!(t.terminal_reason(), Some(&TerminalReason::RetriesExhausted));
    assert_eq!(
        t.verification_log()
            .iter()
            .map(|r| (r.attempt_no(), r.outcome()))
            .next_back(),
        Some((
            AttemptNo(0),
            crate::verification::VerificationOutcome::Fail(FailureClass::CodeDefect)
        )),
        "the failed verification stays the task's last word"
    );
}

#[test]
fn configured_retry_limit_below_three_is_honoured() {
    let limits = VerificationLimits::new(
        std::time::Duration::from_mins(1),
        1,
        0,
        std::time::Duration::from_mins(1),
    )
    .unwrap();
    let c = TransitionContext { limits };
    let mut t = task_in(
        (S::SelfVerifying, P::None),
        CompletionMode::SelfVerification,
    );
    failing(&mut t, FailureClass::CodeDefect);
    assert_eq!(
        TaskTransition::apply(&mut t, &TaskEvent::VerdictFail, &c)
            .unwrap()
            .to,
        S::Running
    );
    step(&mut t, TaskEvent::AgentTurnEnded);
    failing(&mut t, FailureClass::CodeDefect);
    assert_eq!(
        TaskTransition::apply(&mut t, &TaskEvent::VerdictFail, &c)
            .unwrap()
            .to,
        S::Failed
    );
}

#[test]
fn environment_failures_end_the_task_without_spending_a_retry() {
    let mut t = task_in(
        (S::SelfVerifying, P::None),
        CompletionMode::SelfVerification,
    );
    failing(&mut t, FailureClass::EnvNetworkBlocked);
    let err = TaskTransition::apply(&mut t, &TaskEvent::VerdictFail, &ctx()).unwrap_err();
    assert!(
        matches!(err, TransitionError::VerdictMismatch { .. }),
        "{err:?}"
    );
    step(&mut t, TaskEvent::EnvironmentExhausted);
    assert_eq!((t.status(), t.retry_count()), (S::Failed, 0));
    assert_eq!(
        t.terminal_reason(),
        Some(&TerminalReason::EnvironmentFailure {
            class: FailureClass::EnvNetworkBlocked
        })
    );
}

#[test]
fn environment_exhausted_is_refused_for_a_code_defect() {
    let mut t = task_in(
        (S::SelfVerifying, P::None),
        CompletionMode::SelfVerification,
    );
    failing(&mut t, FailureClass::CodeDefect);
    assert!(matches!(
        TaskTransition::apply(&mut t, &TaskEvent::EnvironmentExhausted, &ctx()),
        Err(TransitionError::VerdictMismatch { .. })
    ));
}

#[test]
fn incomplete_verdict_waits_for_a_person_and_never_completes_itself() {
    let mut t = task_in(
        (S::SelfVerifying, P::None),
        CompletionMode::SelfVerification,
    );
    nothing_applies(&mut t);
    assert!(TaskTransition::apply(&mut t, &TaskEvent::VerdictPass, &ctx()).is_err());
    step(&mut t, TaskEvent::VerdictIncomplete);
    assert_eq!(
        (t.status(), t.pending_approval_kind()),
        (S::AwaitingApproval, P::Completion)
    );
    // A passing verdict is not "incomplete".
    let mut u = task_in(
        (S::SelfVerifying, P::None),
        CompletionMode::SelfVerification,
    );
    passing(&mut u);
    assert!(matches!(
        TaskTransition::apply(&mut u, &TaskEvent::VerdictIncomplete, &ctx()),
        Err(TransitionError::VerdictMismatch { .. })
    ));
}

#[test]
fn invariant2_human_mode_completes_only_through_approval() {
    let mut t = task_in((S::SelfVerifying, P::None), CompletionMode::HumanApproval);
    passing(&mut t);
    assert_eq!(
        TaskTransition::apply(&mut t, &TaskEvent::VerdictPass, &ctx()),
        Err(TransitionError::WrongCompletionMode {
            event: TaskEventKind::VerdictPass,
            required: CompletionMode::SelfVerification
        })
    );
    step(&mut t, TaskEvent::VerificationDone);
    assert_eq!(t.status(), S::AwaitingApproval);
    let tr = step(&mut t, TaskEvent::Approve);
    assert_eq!(
        (tr.to, t.terminal_reason()),
        (S::Completed, Some(&TerminalReason::Approved))
    );
}

#[test]
fn approving_a_test_change_applies_the_held_edit_and_keeps_retries() {
    let mut v = task_in(
        (S::AwaitingApproval, P::TestChange),
        CompletionMode::SelfVerification,
    );
    let tr = step(&mut v, TaskEvent::Approve);
    assert_eq!(tr.effects, vec![TransitionEffect::ApplyHeldEdit]);
    assert_eq!(
        (v.status(), v.retry_count(), v.attempt_no()),
        (S::Running, 0, AttemptNo(0))
    );
}

#[test]
fn void_marker_hides_records_taken_before_an_approved_test_change() {
    // Build a persisted task whose attempt-0 passes predate the void marker.
    let mut t = task_in(
        (S::SelfVerifying, P::None),
        CompletionMode::SelfVerification,
    );
    passing(&mut t);
    let mut json = serde_json::to_value(&t).unwrap();
    json["void_before"] = 4.into();
    let t: DelegatedTask = serde_json::from_value(json).unwrap();
    assert!(matches!(
        t.verdict(),
        VerificationVerdict::NotCompletable(_)
    ));
}

#[test]
fn test_edit_rejection_discards_the_held_edit_and_cancels() {
    let mut t = task_in(
        (S::AwaitingApproval, P::TestChange),
        CompletionMode::HumanApproval,
    );
    let tr = step(&mut t, TaskEvent::Reject);
    assert_eq!(
        tr.effects,
        vec![
            TransitionEffect::DiscardHeldEdit,
            TransitionEffect::CancelSession(CancelReason::ApprovalRejected),
            TransitionEffect::ReleaseLeases
        ]
    );
    assert_eq!(
        t.terminal_reason(),
        Some(&TerminalReason::TestChangeRejected)
    );
}

#[test]
fn invariant5_only_a_full_rollback_ends_in_rolled_back() {
    for scope in [RollbackScope::Attempt, RollbackScope::Snapshot] {
        let mut t = task_in((S::Running, P::None), CompletionMode::HumanApproval);
        assert_eq!(
            TaskTransition::apply(&mut t, &TaskEvent::RollbackSucceeded(scope), &ctx()),
            Err(TransitionError::InvariantViolated(
                Invariant::RolledBackNeedsFullRollback
            ))
        );
        assert_eq!(t.status(), S::Running);
    }
    let mut live = task_in((S::Running, P::None), CompletionMode::HumanApproval);
    let tr = step(
        &mut live,
        TaskEvent::RollbackSucceeded(RollbackScope::TaskStart),
    );
    assert_eq!(
        tr.effects,
        vec![
            TransitionEffect::CancelSession(CancelReason::UserRolledBack),
            TransitionEffect::ReleaseLeases
        ]
    );
    let mut done = task_in((S::Completed, P::None), CompletionMode::HumanApproval);
    let tr = step(
        &mut done,
        TaskEvent::RollbackSucceeded(RollbackScope::TaskStart),
    );
    assert_eq!(tr.effects, vec![TransitionEffect::ReleaseLeases]);
}

#[test]
fn attempt_timeout_records_a_code_defect_then_the_retry_path_decides() {
    let mut t = task_in((S::Running, P::None), CompletionMode::SelfVerification);
    step(&mut t, TaskEvent::AttemptTimedOut { at: Timestamp(42) });
    assert_eq!(t.status(), S::SelfVerifying);
    assert_eq!(
        t.verdict(),
        VerificationVerdict::Fail {
            class: FailureClass::CodeDefect
        }
    );
    let tr = step(&mut t, TaskEvent::VerdictFail);
    assert_eq!((tr.to, t.retry_count()), (S::Running, 1));
}

#[test]
fn records_are_accepted_only_for_the_current_attempt_while_verifying() {
    let mut t = task_in((S::Running, P::None), CompletionMode::SelfVerification);
    let r = VerificationRecord::pass(VerificationMethod::Tests, AttemptNo(0), FACTS);
    assert_eq!(
        t.record_verification(r.clone()),
        Err(RecordRefused::NotVerifying(S::Running))
    );
    step(&mut t, TaskEvent::AgentTurnEnded);
    let late = VerificationRecord::pass(VerificationMethod::Tests, AttemptNo(1), FACTS);
    assert_eq!(
        t.record_verification(late),
        Err(RecordRefused::WrongAttempt {
            record: AttemptNo(1),
            current: AttemptNo(0)
        })
    );
    assert_eq!(t.record_verification(r), Ok(()));
}

#[test]
fn completion_mode_policy_defaults_to_human_approval() {
    assert_eq!(
        CompletionModePolicy::decide(None),
        CompletionMode::HumanApproval
    );
    assert_eq!(
        CompletionModePolicy::decide(Some(CompletionMode::SelfVerification)),
        CompletionMode::SelfVerification
    );
    for status in TaskStatus::ALL {
        assert!(!CompletionModePolicy::allows_user_override(status));
    }
}

#[test]
fn task_records_round_trip_with_stable_names() {
    let mut t = new_task(CompletionMode::SelfVerification);
    step(&mut t, TaskEvent::Start);
    step(&mut t, TaskEvent::AgentTurnEnded);
    passing(&mut t);
    let json = serde_json::to_value(&t).unwrap();
    assert_eq!(json["status"], "self_verifying");
    assert_eq!(json["completion_mode"], "self_verification");
    assert_eq!(json["pending_approval_kind"], "none");
    assert_eq!(json["backend"], serde_json::json!({"kind": "local"}));
    assert_eq!(json["terminal_reason"], serde_json::Value::Null);
    assert_eq!(json["verification_log"].as_array().unwrap().len(), 4);
    let back: DelegatedTask = serde_json::from_value(json).unwrap();
    assert_eq!(back, t);

    step(&mut t, TaskEvent::VerdictPass);
    let json = serde_json::to_value(&t).unwrap();
    assert_eq!(
        json["terminal_reason"],
        serde_json::json!({"reason": "verified"})
    );
    assert_eq!(serde_json::from_value::<DelegatedTask>(json).unwrap(), t);

    let backend = TaskBackend::BuiltIn {
        provider: ProviderId::new("anthropic").unwrap(),
        model: "claude-x".into(),
    };
    assert_eq!(
        serde_json::to_value(&backend).unwrap(),
        serde_json::json!({"kind": "built_in", "provider": "anthropic", "model": "claude-x"})
    );
    let acp = TaskBackend::Acp {
        agent_id: AcpAgentId::new("gemini").unwrap(),
    };
    assert_eq!(
        serde_json::to_value(&acp).unwrap(),
        serde_json::json!({"kind": "acp", "agent_id": "gemini"})
    );
    assert_eq!(
        serde_json::to_value(TerminalReason::AgentError {
            code: "PROVIDER_AUTH".into()
        })
        .unwrap(),
        serde_json::json!({"reason": "agent_error", "code": "PROVIDER_AUTH"})
    );
    assert_eq!(
        serde_json::to_value(CancelReason::UserRolledBack).unwrap(),
        "user_rolled_back"
    );
}

#[test]
fn contradictory_task_records_are_refused() {
    let t = task_in(
        (S::AwaitingApproval, P::Completion),
        CompletionMode::HumanApproval,
    );
    let good = serde_json::to_value(&t).unwrap();
    let broken = |field: &str, value: serde_json::Value| {
        let mut v = good.clone();
        v[field] = value;
        serde_json::from_value::<DelegatedTask>(v)
            .unwrap_err()
            .to_string()
    };
    assert!(broken("pending_approval_kind", "none".into()).contains("pending_approval_kind"));
    assert!(broken("status", "running".into()).contains("pending_approval_kind"));
    assert!(broken("retry_count", 4.into()).contains("retry_count exceeds"));
    assert!(broken("attempt_no", 2.into()).contains("attempt_no must equal"));
    assert!(
        broken("terminal_reason", serde_json::json!({"reason": "verified"}))
            .contains("terminal_reason")
    );
    assert!(broken("void_before", 99.into()).contains("void_before"));
    assert!(broken("status", "done".into()).contains("unknown variant"));
}
