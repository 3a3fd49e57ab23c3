//! The reviewed wording of task summaries (the CLI's `task list` and
//! `task show`, the window's task rows) and of the progress transcript,
//! pinned as snapshots. Update them with `cargo insta review` after
//! reading every changed line as a person would.

use std::fmt::Write as _;

use cocode_core::agent::{AgentEvent, ToolCallUpdate};
use cocode_core::ids::{AttemptNo, Timestamp};
use cocode_core::task::{
    NewTask, RollbackScope, TaskBackend, TaskEvent, TransitionContext, UnresponsiveSignal,
};
use cocode_core::verification::{
    FailureClass, NoTargetCode, RunFacts, VerificationMethod, VerificationRecord,
};
use cocode_core::{CompletionMode, DelegatedTask, TaskId, TaskTransition};

use super::{TaskFacts, describe_task};
use crate::host::orchestrator::{Progress, describe_end};
use crate::host::progress::print_progress;

const FACTS: RunFacts = RunFacts {
    started_at: Timestamp(1_764_460_800_000),
    duration_ms: 1200,
    diagnostics_count: None,
    exit_code: Some(0),
};

fn task(mode: CompletionMode) -> DelegatedTask {
    DelegatedTask::new(NewTask {
        task_id: TaskId::new("task-1764460800000-0a1b").unwrap(),
        prompt: "replace \"1\" with \"2\" in config.json".into(),
        backend: TaskBackend::Local,
        completion_mode: mode,
        created_at: Timestamp(1_764_460_800_000),
    })
}

/// A task driven through `events`; `records` are recorded (for the current
/// attempt) whenever the task is verifying and the next event needs them.
fn driven(mode: CompletionMode, events: &[TaskEvent], fail: Option<FailureClass>) -> DelegatedTask {
    let mut t = task(mode);
    for event in events {
        if t.status() == cocode_core::TaskStatus::SelfVerifying
            && t.verification_log()
                .iter()
                .all(|r| r.attempt_no() != t.attempt_no())
        {
            let a = t.attempt_no();
            let record = match fail {
                Some(class) => VerificationRecord::fail(VerificationMethod::Tests, class, a, FACTS),
                None => VerificationRecord::pass(VerificationMethod::Tests, a, FACTS),
            };
            t.record_verification(record).unwrap();
            for m in [
                VerificationMethod::StaticAnalysis,
                VerificationMethod::Build,
                VerificationMethod::RuntimeErrors,
            ] {
                let code = NoTargetCode::ALL
                    .into_iter()
                    .find(|c| c.method() == m)
                    .unwrap();
                t.record_verification(VerificationRecord::no_target(code, a, FACTS))
                    .unwrap();
            }
        }
        TaskTransition::apply(&mut t, event, &TransitionContext::default()).unwrap();
    }
    t
}

#[expect(clippy::too_many_lines, reason = "one row per way a task can stand")]
fn summaries() -> Vec<(&'static str, DelegatedTask)> {
    use CompletionMode::{HumanApproval as H, SelfVerification as V};
    use TaskEvent as E;
    let (s, end) = (E::Start, E::AgentTurnEnded);
    let retries: Vec<TaskEvent> = std::iter::once(s.clone())
        .chain((0..4).flat_map(|_| [end.clone(), E::VerdictFail]))
        .collect();
    let cases: Vec<(&str, CompletionMode, Vec<TaskEvent>, Option<FailureClass>)> = vec![
        ("queued", H, vec![], None),
        ("running", H, vec![s.clone()], None),
        ("verifying", H, vec![s.clone(), end.clone()], None),
        (
            "awaiting completion",
            H,
            vec![s.clone(), end.clone(), E::VerificationDone],
            None,
        ),
        (
            "awaiting a test change",
            H,
            vec![s.clone(), E::TestEditHeld],
            None,
        ),
        (
            "approved",
            H,
            vec![s.clone(), end.clone(), E::VerificationDone, E::Approve],
            None,
        ),
        (
            "verified",
            V,
            vec![s.clone(), end.clone(), E::VerdictPass],
            None,
        ),
        (
            "retries used up",
            V,
            retries,
            Some(FailureClass::CodeDefect),
        ),
        (
            "environment",
            V,
            vec![s.clone(), end.clone(), E::EnvironmentExhausted],
            Some(FailureClass::EnvToolMissing),
        ),
        (
            "transport closed",
            H,
            vec![
                s.clone(),
                E::Unresponsive(UnresponsiveSignal::TransportClosed),
            ],
            None,
        ),
        (
            "idle",
            H,
            vec![s.clone(), E::Unresponsive(UnresponsiveSignal::Idle)],
            None,
        ),
        (
            "agent error",
            H,
            vec![
                s.clone(),
                E::AgentError {
                    code: "PROVIDER_AUTH_FAILED".into(),
                },
            ],
            None,
        ),
        ("stopped", H, vec![s.clone(), E::UserStop], None),
        (
            "test change rejected",
            H,
            vec![s.clone(), E::TestEditHeld, E::Reject],
            None,
        ),
        (
            "completion rejected",
            H,
            vec![s.clone(), end.clone(), E::VerificationDone, E::Reject],
            None,
        ),
        (
            "rolled back",
            H,
            vec![s.clone(), E::RollbackSucceeded(RollbackScope::TaskStart)],
            None,
        ),
        ("app restarted", H, vec![s.clone(), E::AppRestarted], None),
        (
            "ended unfinished",
            H,
            vec![s, E::AgentEndedUnfinished],
            None,
        ),
    ];
    cases
        .into_iter()
        .map(|(label, mode, events, fail)| (label, driven(mode, &events, fail)))
        .collect()
}

#[test]
fn task_summaries_read_as_words() {
    let mut text = String::new();
    for (label, t) in summaries() {
        writeln!(text, "{label:<24}{}", describe_end(&t)).unwrap();
    }
    insta::assert_snapshot!(text);
}

#[test]
fn task_show_reads_as_words() {
    let (_, t) = summaries()
        .into_iter()
        .find(|(label, _)| *label == "retries used up")
        .unwrap();
    insta::assert_snapshot!(describe_task(&t, &TaskFacts::default(), &[]));
}

#[test]
fn the_progress_transcript_reads_as_words() {
    let mut out = Vec::new();
    let mut streaming = false;
    let events = [
        Progress::Created(TaskId::new("task-1764460800000-0a1b").unwrap()),
        Progress::Status {
            from: cocode_core::TaskStatus::Queued,
            to: cocode_core::TaskStatus::Running,
        },
        Progress::Agent(AgentEvent::MessageDelta("I will edit ".into())),
        Progress::Agent(AgentEvent::MessageDelta("config.json.".into())),
        Progress::Agent(AgentEvent::ToolCallUpdate(ToolCallUpdate {
            call_id: "c1".into(),
            title: Some("workspace.applyPatch".into()),
            status: cocode_core::agent::ToolCallStatus::Completed,
            locations: vec!["config.json".into()],
            content: Vec::new(),
        })),
        Progress::Agent(AgentEvent::ToolCallUpdate(ToolCallUpdate {
            call_id: "c2".into(),
            title: Some("terminal.run".into()),
            status: cocode_core::agent::ToolCallStatus::Failed,
            locations: Vec::new(),
            content: Vec::new(),
        })),
        Progress::Status {
            from: cocode_core::TaskStatus::Running,
            to: cocode_core::TaskStatus::SelfVerifying,
        },
        Progress::Verification(VerificationRecord::fail(
            VerificationMethod::ParseCheck,
            FailureClass::CodeDefect,
            AttemptNo(0),
            FACTS,
        )),
        Progress::Verification(
            VerificationRecord::fail(
                VerificationMethod::Tests,
                FailureClass::CodeDefect,
                AttemptNo(0),
                FACTS,
            )
            .with_findings(vec![cocode_core::verification::Finding::new(
                cocode_core::verification::FindingKind::FailedTest,
                "tests::adds",
                Some("src/lib.rs:10:9"),
                "assertion `left == right` failed\n  left: -1\n right: 5",
            )]),
        ),
        Progress::Verification(
            VerificationRecord::fail(
                VerificationMethod::Tests,
                FailureClass::EnvToolMissing,
                AttemptNo(0),
                FACTS,
            )
            .with_findings(vec![cocode_core::verification::Finding::new(
                cocode_core::verification::FindingKind::MissingTool,
                "yarn",
                None,
                "",
            )]),
        ),
        Progress::Verification(VerificationRecord::no_target(
            NoTargetCode::NoTestFiles,
            AttemptNo(0),
            FACTS,
        )),
        Progress::Note(
            "the agent ended its turn (it waits for a reply) without finishing the attempt".into(),
        ),
    ];
    for p in &events {
        print_progress(p, &mut out, &mut streaming).unwrap();
    }
    insta::assert_snapshot!(String::from_utf8(out).unwrap());
}
