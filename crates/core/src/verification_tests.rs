use super::*;
use VerificationMethod::{Build, ParseCheck, RuntimeErrors, StaticAnalysis, Tests};
use pretty_assertions::assert_eq;

const FACTS: RunFacts = RunFacts {
    started_at: Timestamp(1_000),
    duration_ms: 1234,
    diagnostics_count: Some(DiagnosticsCount {
        error: 0,
        warning: 2,
    }),
    exit_code: Some(0),
};
const A0: AttemptNo = AttemptNo(0);
const A1: AttemptNo = AttemptNo(1);

fn pass(m: VerificationMethod) -> VerificationRecord {
    VerificationRecord::pass(m, A0, FACTS)
}
fn fail(m: VerificationMethod, c: FailureClass) -> VerificationRecord {
    VerificationRecord::fail(m, c, A0, FACTS)
}
fn none(code: NoTargetCode) -> VerificationRecord {
    VerificationRecord::no_target(code, A0, FACTS)
}
fn all_no_target() -> Vec<VerificationRecord> {
    vec![
        none(NoTargetCode::FileNotAnalyzed),
        none(NoTargetCode::NoBuildTarget),
        none(NoTargetCode::NoTestFiles),
        none(NoTargetCode::NoDebugSession),
    ]
}

#[test]
fn record_wire_format_matches_the_design() {
    let r = VerificationRecord::no_target(NoTargetCode::FileNotAnalyzed, A1, FACTS);
    assert_eq!(
        serde_json::to_value(r).unwrap(),
        serde_json::json!({
            "method": "static_analysis", "result": "no_target", "attempt_no": 1,
            "no_target_code": "no_target:file_not_analyzed",
            "started_at": 1000, "duration_ms": 1234,
            "diagnostics_count": {"error": 0, "warning": 2}, "exit_code": 0
        })
    );
    let f = VerificationRecord::fail(Tests, FailureClass::EnvToolMissing, A1, FACTS);
    let json = serde_json::to_value(&f).unwrap();
    assert_eq!(json["failure_class"], "failure:env_tool_missing");
    assert_eq!(json["result"], "fail");
    assert_eq!(
        serde_json::from_value::<VerificationRecord>(json).unwrap(),
        f
    );
}

#[test]
fn contradictory_records_cannot_be_deserialized() {
    let base = serde_json::json!({
        "method": "tests", "attempt_no": 0, "started_at": 0, "duration_ms": 1
    });
    let with = |extra: serde_json::Value| {
        let mut v = base.clone();
        for (k, val) in extra.as_object().unwrap() {
            v[k] = val.clone();
        }
        serde_json::from_value::<VerificationRecord>(v)
    };
    assert!(with(serde_json::json!({"result": "pass"})).is_ok());
    assert!(
        with(serde_json::json!({"result": "pass", "failure_class": "failure:code_defect"}))
            .is_err()
    );
    assert!(with(serde_json::json!({"result": "fail"})).is_err());
    assert!(with(serde_json::json!({"result": "fail", "no_target_code": "no_target:no_test_files", "failure_class": "failure:code_defect"})).is_err());
    assert!(with(serde_json::json!({"result": "no_target"})).is_err());
    assert!(
        with(
            serde_json::json!({"result": "no_target", "no_target_code": "no_target:no_test_files"})
        )
        .is_ok()
    );
    // A code of another method.
    let err = with(
        serde_json::json!({"result": "no_target", "no_target_code": "no_target:no_build_target"}),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("belongs to method 'build'"),
        "{err}"
    );
    // Free text has no field to live in.
    assert!(
        with(
            serde_json::json!({"result": "no_target", "no_target_code": "no_target:not_applicable"})
        )
        .is_err()
    );
    assert!(with(serde_json::json!({"result": "pass", "reason": "trust me"})).is_err());
}

#[test]
fn every_no_target_code_belongs_to_exactly_one_method() {
    let methods: Vec<_> = NoTargetCode::ALL.iter().map(|c| c.method()).collect();
    assert_eq!(
        methods,
        [Tests, Build, RuntimeErrors, StaticAnalysis, ParseCheck]
    );
    for code in NoTargetCode::ALL {
        assert_eq!(
            VerificationRecord::no_target(code, A0, FACTS).method(),
            code.method()
        );
    }
}

#[test]
fn rule1_any_fail_wins_even_over_passes() {
    let records = vec![
        pass(StaticAnalysis),
        pass(Build),
        fail(Tests, FailureClass::CodeDefect),
        pass(RuntimeErrors),
    ];
    assert_eq!(
        VerificationVerdict::evaluate(&records, A0),
        VerificationVerdict::Fail {
            class: FailureClass::CodeDefect
        }
    );
}

#[test]
fn rule1_environment_class_decides_over_code_defect() {
    let records = vec![
        fail(StaticAnalysis, FailureClass::CodeDefect),
        fail(Tests, FailureClass::EnvToolMissing),
    ];
    assert_eq!(
        VerificationVerdict::evaluate(&records, A0),
        VerificationVerdict::Fail {
            class: FailureClass::EnvToolMissing
        }
    );
    assert!(!FailureClass::EnvToolMissing.spends_retry());
    assert!(FailureClass::CodeDefect.spends_retry());
}

#[test]
fn rule2_one_pass_with_all_four_executed_completes() {
    let mut records = all_no_target();
    records[2] = pass(Tests);
    assert_eq!(
        VerificationVerdict::evaluate(&records, A0),
        VerificationVerdict::Pass
    );
}

#[test]
fn rule3_parser_decides_when_nothing_else_applies() {
    let mut records = all_no_target();
    assert_eq!(
        VerificationVerdict::evaluate(&records, A0),
        VerificationVerdict::NotCompletable(NotCompletable::ParseCheckNotExecuted)
    );
    records.push(none(NoTargetCode::NoRegisteredParser));
    assert_eq!(
        VerificationVerdict::evaluate(&records, A0),
        VerificationVerdict::NotCompletable(NotCompletable::NothingPassed)
    );
    records.push(pass(ParseCheck));
    assert_eq!(
        VerificationVerdict::evaluate(&records, A0),
        VerificationVerdict::Pass
    );
}

#[test]
fn parse_check_pass_does_not_count_when_another_method_applies() {
    // ② has a target but was not run: ⑤ passing does not open completion.
    let records = vec![
        none(NoTargetCode::FileNotAnalyzed),
        none(NoTargetCode::NoTestFiles),
        none(NoTargetCode::NoDebugSession),
        pass(ParseCheck),
    ];
    assert_eq!(
        VerificationVerdict::evaluate(&records, A0),
        VerificationVerdict::NotCompletable(NotCompletable::NotExecuted(vec![Build]))
    );
}

#[test]
fn rule4_unexecuted_methods_block_completion() {
    let records = vec![pass(StaticAnalysis), pass(Build)];
    assert_eq!(
        VerificationVerdict::evaluate(&records, A0),
        VerificationVerdict::NotCompletable(NotCompletable::NotExecuted(vec![
            Tests,
            RuntimeErrors
        ]))
    );
    assert_eq!(
        VerificationVerdict::evaluate(&[], A0),
        VerificationVerdict::NotCompletable(NotCompletable::NotExecuted(
            VerificationMethod::EXECUTION_ORDER.to_vec()
        ))
    );
}

#[test]
fn only_the_current_attempt_counts() {
    let mut records = vec![
        pass(StaticAnalysis),
        pass(Build),
        pass(Tests),
        pass(RuntimeErrors),
    ];
    assert_eq!(
        VerificationVerdict::evaluate(&records, A1),
        VerificationVerdict::NotCompletable(NotCompletable::NotExecuted(
            VerificationMethod::EXECUTION_ORDER.to_vec()
        ))
    );
    records.push(VerificationRecord::fail(
        Tests,
        FailureClass::CodeDefect,
        A1,
        FACTS,
    ));
    assert_eq!(
        VerificationVerdict::evaluate(&records, A0),
        VerificationVerdict::Pass
    );
    assert_eq!(
        VerificationVerdict::evaluate(&records, A1),
        VerificationVerdict::Fail {
            class: FailureClass::CodeDefect
        }
    );
}

#[test]
fn a_later_run_of_a_method_supersedes_an_earlier_one_in_the_attempt() {
    let records = vec![
        fail(Tests, FailureClass::EnvResource),
        pass(StaticAnalysis),
        none(NoTargetCode::NoBuildTarget),
        pass(Tests),
        none(NoTargetCode::NoDebugSession),
    ];
    assert_eq!(
        VerificationVerdict::evaluate(&records, A0),
        VerificationVerdict::Pass
    );
}

#[test]
fn limits_refuse_unbounded_values() {
    use std::time::Duration;
    let s = Duration::from_secs;
    assert_eq!(
        VerificationLimits::new(s(0), 3, 0, s(1)),
        Err(LimitsInvalid::ZeroAttemptTimeLimit)
    );
    assert_eq!(
        VerificationLimits::new(s(1), 3, 0, s(0)),
        Err(LimitsInvalid::ZeroIdleLimit)
    );
    assert_eq!(
        VerificationLimits::new(s(1), 4, 0, s(1)),
        Err(LimitsInvalid::TooManyRetries)
    );
    let d = VerificationLimits::default();
    assert_eq!(
        (
            d.attempt_time_limit(),
            d.max_retries(),
            d.environment_rerun_budget(),
            d.idle_limit()
        ),
        (s(1200), 3, 0, s(1200))
    );
    let json = serde_json::to_value(d).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"attempt_time_limit_secs": 1200, "max_retries": 3,
        "environment_rerun_budget": 0, "idle_limit_secs": 1200})
    );
    let mut bad = json;
    bad["attempt_time_limit_secs"] = 0.into();
    assert!(serde_json::from_value::<VerificationLimits>(bad).is_err());
}

#[test]
fn timed_out_record_is_a_code_defect_failure() {
    let r = VerificationLimits::default().timed_out_record(A1, Timestamp(5));
    assert_eq!(
        r.outcome(),
        VerificationOutcome::Fail(FailureClass::CodeDefect)
    );
    assert_eq!(r.attempt_no(), A1);
    assert_eq!(r.facts().duration_ms, 1_200_000);
}

#[test]
fn findings_and_notes_travel_with_the_record_and_are_capped() {
    let long_name = "t".repeat(MAX_FINDING_NAME + 50);
    let detail: String = (0..30)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    let findings: Vec<Finding> = (0..MAX_FINDINGS + 5)
        .map(|i| {
            Finding::new(
                FindingKind::FailedTest,
                &format!("tests::case_{i}"),
                Some("src/lib.rs:10:9"),
                "assertion failed",
            )
        })
        .collect();
    let r = VerificationRecord::fail(Tests, FailureClass::CodeDefect, A1, FACTS)
        .with_findings(findings)
        .with_notes(vec![
            VerificationNote::SkippedNightlyTargets,
            VerificationNote::SkippedNightlyTargets,
        ]);
    assert_eq!(r.findings().len(), MAX_FINDINGS);
    assert_eq!(r.findings()[3].name(), "tests::case_3");
    assert_eq!(r.notes(), &[VerificationNote::SkippedNightlyTargets]);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json["findings"][0],
        serde_json::json!({"kind": "failed_test", "name": "tests::case_0",
            "place": "src/lib.rs:10:9", "detail": "assertion failed"})
    );
    assert_eq!(
        json["notes"],
        serde_json::json!(["note:skipped_nightly_targets"])
    );
    assert_eq!(
        serde_json::from_value::<VerificationRecord>(json).unwrap(),
        r
    );

    // One finding's fields are capped at a character boundary.
    let capped = Finding::new(FindingKind::Error, &format!("{long_name}한"), None, &detail);
    assert!(
        capped.name().len() <= MAX_FINDING_NAME,
        "{}",
        capped.name().len()
    );
    assert!(capped.name().ends_with('…'));
    assert_eq!(
        capped.detail().lines().count(),
        MAX_FINDING_DETAIL_LINES + 1
    );
    assert!(capped.detail().ends_with("line 11\n…"));
    // Read back from disk, an oversized finding is capped the same way.
    let wire = serde_json::json!({"kind": "error", "name": long_name});
    let read: Finding = serde_json::from_value(wire).unwrap();
    assert!(read.name().len() <= MAX_FINDING_NAME);
    // Old records without findings still read.
    let old = serde_json::json!({"method": "tests", "result": "pass", "attempt_no": 0,
        "started_at": 0, "duration_ms": 1});
    let old: VerificationRecord = serde_json::from_value(old).unwrap();
    assert!(old.findings().is_empty() && old.notes().is_empty());
}
