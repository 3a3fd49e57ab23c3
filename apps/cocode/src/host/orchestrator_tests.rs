//! The retry message a failed verification gives the agent.

use cocode_core::ids::{AttemptNo, Timestamp};
use cocode_core::verification::{
    FailureClass, Finding, FindingKind, RunFacts, VerificationMethod, VerificationRecord,
};
use pretty_assertions::assert_eq;

const FACTS: RunFacts = RunFacts {
    started_at: Timestamp(0),
    duration_ms: 1,
    diagnostics_count: None,
    exit_code: Some(1),
};

fn failed(findings: Vec<Finding>) -> VerificationRecord {
    VerificationRecord::fail(
        VerificationMethod::Tests,
        FailureClass::CodeDefect,
        AttemptNo(0),
        FACTS,
    )
    .with_findings(findings)
}

/// The model hears which test failed, where, and how, for pytest and
/// node's runner as for cargo test; the output's lines only when the
/// runner named nothing.
#[test]
fn the_retry_message_names_each_failing_test() {
    let pytest = failed(vec![Finding::new(
        FindingKind::FailedTest,
        "test_calc.py::test_add",
        Some("test_calc.py:5"),
        ">       assert add(2, 3) == 5\nE       assert -1 == 5",
    )]);
    let node = failed(vec![Finding::new(
        FindingKind::FailedTest,
        "adds",
        Some("add.test.js:5:1"),
        "error: Expected values to be strictly equal: -1 !== 5",
    )]);
    for (record, lines) in [
        (
            pytest,
            "    failed test test_calc.py::test_add at test_calc.py:5\n      >       assert add(2, 3) == 5\n      E       assert -1 == 5",
        ),
        (
            node,
            "    failed test adds at add.test.js:5:1\n      error: Expected values to be strictly equal: -1 !== 5",
        ),
    ] {
        let text = super::failure_summary(&[record], AttemptNo(0), |_| {
            Some("the whole output\nnot ok 1 - adds\n".to_owned())
        });
        assert_eq!(
            text,
            format!(
                "Verification of attempt 1 failed. Fix the problems and call task.finish again.\n- tests: failed (failure:code_defect), exit code 1\n  what failed:\n{lines}"
            )
        );
    }
    // Nothing named: the output's failing lines.
    let text = super::failure_summary(&[failed(Vec::new())], AttemptNo(0), |_| {
        Some("noise\nnot ok 1 - adds\n  ---\n".to_owned())
    });
    assert!(
        text.ends_with(
            "  what it printed (the lines that say what failed):\n    not ok 1 - adds\n      ---"
        ),
        "{text}"
    );
    // A turn that ended without finishing was never verified.
    assert_eq!(
        super::failure_summary(&[], AttemptNo(1), |_| None),
        "Attempt 2 ended without task.finish, so nothing was verified. Carry on with the task and call task.finish when the work is done."
    );
}
