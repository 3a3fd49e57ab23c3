use std::collections::BTreeSet;

use super::*;
use pretty_assertions::assert_eq;

/// A phrase is words: no Rust names, no wire names, no `None`/`Some(…)`.
fn assert_words(what: &str, phrase: &str, debug: &str) {
    assert!(!phrase.is_empty(), "{what}: empty phrase");
    assert!(!phrase.contains('_'), "{what}: {phrase}");
    assert!(!phrase.contains("::"), "{what}: {phrase}");
    assert!(
        !phrase.contains("None") && !phrase.contains("Some("),
        "{what}: {phrase}"
    );
    let camel = phrase
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    assert!(!camel, "{what}: {phrase}");
    assert_ne!(phrase, debug, "{what}: the phrase is its Debug name");
}

/// Each value's phrase is words, and no two values of a kind read the same.
fn check_all<T: std::fmt::Debug>(values: &[T], phrase: impl Fn(&T) -> String) {
    let mut seen = BTreeSet::new();
    for value in values {
        let debug = format!("{value:?}");
        let text = phrase(value);
        assert_words(&debug, &text, &debug);
        assert!(seen.insert(text.clone()), "{debug}: {text} is used twice");
    }
}

#[test]
fn every_status_and_reason_reads_as_words() {
    check_all(&TaskStatus::ALL, |s| s.phrase().to_owned());
    check_all(
        &[
            TerminalReason::Verified,
            TerminalReason::Approved,
            TerminalReason::RetriesExhausted,
            TerminalReason::EnvironmentFailure {
                class: FailureClass::EnvToolMissing,
            },
            TerminalReason::TransportClosed,
            TerminalReason::IdleTimeout,
            TerminalReason::AgentError {
                code: "TIMEOUT".to_owned(),
            },
            TerminalReason::UserStopped,
            TerminalReason::TestChangeRejected,
            TerminalReason::CompletionRejected,
            TerminalReason::RolledBack,
            TerminalReason::AppRestarted,
            TerminalReason::AgentEndedUnfinished,
        ],
        TerminalReason::phrase,
    );
    check_all(
        &[
            PendingApprovalKind::Completion,
            PendingApprovalKind::TestChange,
            PendingApprovalKind::Reply,
        ],
        |k| k.phrase().unwrap_or_default().to_owned(),
    );
    assert_eq!(PendingApprovalKind::None.phrase(), None);
    check_all(
        &[
            CompletionMode::SelfVerification,
            CompletionMode::HumanApproval,
        ],
        |m| m.phrase().to_owned(),
    );
    check_all(
        &[
            CancelReason::UserStopped,
            CancelReason::UserRolledBack,
            CancelReason::ApprovalRejected,
            CancelReason::TaskFailed,
            CancelReason::WorkspaceClosing,
        ],
        |c| c.phrase().to_owned(),
    );
}

#[test]
fn verification_reads_as_words() {
    check_all(&VerificationMethod::ALL, |m| m.phrase().to_owned());
    check_all(&FailureClass::ALL, |c| c.phrase().to_owned());
    check_all(&NoTargetCode::ALL, |c| c.phrase().to_owned());
    let outcomes: Vec<VerificationOutcome> = std::iter::once(VerificationOutcome::Pass)
        .chain(FailureClass::ALL.map(VerificationOutcome::Fail))
        .chain(NoTargetCode::ALL.map(VerificationOutcome::NoTarget))
        .collect();
    check_all(&outcomes, |o| o.phrase());
    check_all(
        &[
            VerificationVerdict::Pass,
            VerificationVerdict::Fail {
                class: FailureClass::CodeDefect,
            },
            VerificationVerdict::NotCompletable(NotCompletable::NotExecuted(vec![
                VerificationMethod::Tests,
                VerificationMethod::StaticAnalysis,
            ])),
            VerificationVerdict::NotCompletable(NotCompletable::ParseCheckNotExecuted),
            VerificationVerdict::NotCompletable(NotCompletable::NothingPassed),
        ],
        VerificationVerdict::phrase,
    );
    assert_eq!(
        VerificationVerdict::NotCompletable(NotCompletable::NotExecuted(vec![
            VerificationMethod::Tests,
            VerificationMethod::StaticAnalysis,
        ]))
        .phrase(),
        "incomplete: not run yet: tests, static analysis"
    );
    check_all(&FailureClass::ALL, |c| {
        c.remedy().unwrap_or("none").to_owned()
    });
    assert_eq!(FailureClass::CodeDefect.remedy(), None);
    check_all(
        &[
            VerificationNote::SkippedNightlyTargets,
            VerificationNote::ConfiguredCommand,
        ],
        |n| n.phrase().to_owned(),
    );
}

#[test]
fn a_record_names_what_is_missing_and_never_passes_beside_errors() {
    use crate::ids::{AttemptNo, Timestamp};
    use crate::verification::{
        DiagnosticsCount, Finding, FindingKind, RunFacts, VerificationRecord,
    };
    let facts = |errors: Option<u32>| RunFacts {
        started_at: Timestamp(0),
        duration_ms: 1,
        diagnostics_count: errors.map(|error| DiagnosticsCount { error, warning: 0 }),
        exit_code: Some(101),
    };
    let m = VerificationMethod::StaticAnalysis;
    let a = AttemptNo(0);
    assert_eq!(a.ordinal(), 1);
    assert_eq!(
        VerificationRecord::pass(m, a, facts(None)).phrase(),
        "passed"
    );
    assert_eq!(
        VerificationRecord::pass(m, a, facts(Some(1))).phrase(),
        "found 1 problem that was there before the task"
    );
    assert_eq!(
        VerificationRecord::pass(m, a, facts(Some(3))).phrase(),
        "found 3 problems that were there before the task"
    );
    let missing =
        VerificationRecord::fail(m, FailureClass::EnvToolMissing, a, facts(None)).with_findings(
            vec![Finding::new(FindingKind::MissingTool, "yarn", None, "")],
        );
    assert_eq!(
        missing.phrase(),
        "failed: the check could not run: yarn is not installed"
    );
    let refused = VerificationRecord::fail(m, FailureClass::EnvSandboxRefused, a, facts(None))
        .with_findings(vec![Finding::new(
            FindingKind::RefusedPath,
            "/home/me/.cache/x",
            None,
            "",
        )]);
    assert_eq!(
        refused.phrase(),
        "failed: the check could not run: the sandbox refused to let it write /home/me/.cache/x"
    );
    // Without a finding, the class's own words.
    assert_eq!(
        VerificationRecord::fail(m, FailureClass::EnvToolMissing, a, facts(None)).phrase(),
        "failed: the check could not run: a program it needs is not installed"
    );
}

#[test]
fn tool_calls_snapshots_and_confinement_read_as_words() {
    check_all(
        &[
            ToolCallStatus::Pending,
            ToolCallStatus::InProgress,
            ToolCallStatus::Completed,
            ToolCallStatus::Failed,
            ToolCallStatus::Cancelled,
        ],
        |s| s.phrase().to_owned(),
    );
    check_all(
        &[
            TurnEndReason::Finished,
            TurnEndReason::EndTurn,
            TurnEndReason::MaxTurns,
            TurnEndReason::MaxTokens,
            TurnEndReason::Refusal,
            TurnEndReason::Cancelled,
        ],
        |r| r.phrase().to_owned(),
    );
    check_all(
        &[
            SnapshotOrigin::Gate,
            SnapshotOrigin::Observed,
            SnapshotOrigin::Review,
            SnapshotOrigin::Rollback,
        ],
        |o| o.phrase().to_owned(),
    );
    check_all(
        &[
            SnapshotKind::Create,
            SnapshotKind::Modify,
            SnapshotKind::Delete,
            SnapshotKind::Rename,
        ],
        |k| k.phrase().to_owned(),
    );
    check_all(
        &[
            Confinement::Landlock,
            Confinement::Seatbelt,
            Confinement::Unconfined {
                reason: "the kernel has no Landlock".to_owned(),
            },
        ],
        Confinement::phrase,
    );
    check_all(
        &[
            ExitStatus::Code(0),
            ExitStatus::Code(3),
            ExitStatus::Signal(9),
            ExitStatus::TimedOut,
            ExitStatus::Killed,
        ],
        |s| s.phrase(),
    );
    assert_eq!(ExitStatus::Code(3).phrase(), "exited with code 3");
}
