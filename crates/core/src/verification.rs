//! Verification records and the single verdict over them.
//!
//! Records carry closed codes and numbers only — no free text anywhere, so an
//! agent has no field in which to argue that a method "does not apply". The
//! constructors make wrong combinations (a `no_target` code of another
//! method, a failure class on a pass) unrepresentable, and deserialization
//! goes through the same checks.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ids::{AttemptNo, Timestamp};

/// The five verification methods (closed set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerificationMethod {
    /// ① the project's tests.
    Tests,
    /// ② the project's build.
    Build,
    /// ③ runtime errors from a connected debug session.
    RuntimeErrors,
    /// ④ static analysis, counting new errors against the task's baseline.
    StaticAnalysis,
    /// ⑤ a parser check of the edited files; decides only when ①–④ have no target.
    ParseCheck,
}

impl VerificationMethod {
    /// Every method; also the key list of `VerificationMethodRegistry`.
    pub const ALL: [Self; 5] = [
        Self::Tests,
        Self::Build,
        Self::RuntimeErrors,
        Self::StaticAnalysis,
        Self::ParseCheck,
    ];

    /// Execution order of ①–④: cheapest first (④ → ② → ① → ③).
    pub const EXECUTION_ORDER: [Self; 4] = [
        Self::StaticAnalysis,
        Self::Build,
        Self::Tests,
        Self::RuntimeErrors,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Tests => "tests",
            Self::Build => "build",
            Self::RuntimeErrors => "runtime_errors",
            Self::StaticAnalysis => "static_analysis",
            Self::ParseCheck => "parse_check",
        }
    }
}

/// Why a method had nothing to verify (closed set; each belongs to one method).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NoTargetCode {
    #[serde(rename = "no_target:no_test_files")]
    NoTestFiles,
    #[serde(rename = "no_target:no_build_target")]
    NoBuildTarget,
    #[serde(rename = "no_target:no_debug_session")]
    NoDebugSession,
    #[serde(rename = "no_target:file_not_analyzed")]
    FileNotAnalyzed,
    #[serde(rename = "no_target:no_registered_parser")]
    NoRegisteredParser,
}

impl NoTargetCode {
    pub const ALL: [Self; 5] = [
        Self::NoTestFiles,
        Self::NoBuildTarget,
        Self::NoDebugSession,
        Self::FileNotAnalyzed,
        Self::NoRegisteredParser,
    ];

    /// The one method this code may be recorded for.
    pub const fn method(self) -> VerificationMethod {
        match self {
            Self::NoTestFiles => VerificationMethod::Tests,
            Self::NoBuildTarget => VerificationMethod::Build,
            Self::NoDebugSession => VerificationMethod::RuntimeErrors,
            Self::FileNotAnalyzed => VerificationMethod::StaticAnalysis,
            Self::NoRegisteredParser => VerificationMethod::ParseCheck,
        }
    }
}

/// Why a method failed (closed set). Only `CodeDefect` spends a retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum FailureClass {
    #[serde(rename = "failure:code_defect")]
    CodeDefect,
    #[serde(rename = "failure:env_tool_aborted")]
    EnvToolAborted,
    #[serde(rename = "failure:env_resource")]
    EnvResource,
    #[serde(rename = "failure:env_network_blocked")]
    EnvNetworkBlocked,
    #[serde(rename = "failure:env_tool_missing")]
    EnvToolMissing,
}

impl FailureClass {
    pub const ALL: [Self; 5] = [
        Self::CodeDefect,
        Self::EnvToolAborted,
        Self::EnvResource,
        Self::EnvNetworkBlocked,
        Self::EnvToolMissing,
    ];

    /// Whether a failure of this class spends one of the task's retries.
    /// Environment failures do not: retrying cannot fix a missing tool.
    pub const fn spends_retry(self) -> bool {
        matches!(self, Self::CodeDefect)
    }
}

/// The outcome of one method, with the code that belongs to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VerificationOutcome {
    Pass,
    Fail(FailureClass),
    NoTarget(NoTargetCode),
}

/// Warning and error counts reported by a method.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsCount {
    pub error: u32,
    pub warning: u32,
}

/// Measurements of one run of one method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunFacts {
    pub started_at: Timestamp,
    pub duration_ms: u64,
    pub diagnostics_count: Option<DiagnosticsCount>,
    pub exit_code: Option<i32>,
}

/// One entry of a task's `verification_log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RecordWire", into = "RecordWire")]
pub struct VerificationRecord {
    method: VerificationMethod,
    outcome: VerificationOutcome,
    attempt_no: AttemptNo,
    facts: RunFacts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ResultWire {
    Pass,
    Fail,
    NoTarget,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordWire {
    method: VerificationMethod,
    result: ResultWire,
    attempt_no: AttemptNo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    no_target_code: Option<NoTargetCode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failure_class: Option<FailureClass>,
    started_at: Timestamp,
    duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    diagnostics_count: Option<DiagnosticsCount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
}

/// A persisted record whose fields contradict each other.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordInvalid {
    #[error("result '{0}' requires its code field")]
    MissingCode(&'static str),
    #[error("result '{0}' must not carry a failure class or no-target code")]
    UnexpectedCode(&'static str),
    #[error("no-target code belongs to method '{code_method}', not '{method}'")]
    CodeOfAnotherMethod {
        method: &'static str,
        code_method: &'static str,
    },
}

impl TryFrom<RecordWire> for VerificationRecord {
    type Error = RecordInvalid;
    fn try_from(w: RecordWire) -> Result<Self, Self::Error> {
        let facts = RunFacts {
            started_at: w.started_at,
            duration_ms: w.duration_ms,
            diagnostics_count: w.diagnostics_count,
            exit_code: w.exit_code,
        };
        match (w.result, w.no_target_code, w.failure_class) {
            (ResultWire::Pass, None, None) => Ok(Self::pass(w.method, w.attempt_no, facts)),
            (ResultWire::Pass, _, _) => Err(RecordInvalid::UnexpectedCode("pass")),
            (ResultWire::Fail, None, Some(class)) => {
                Ok(Self::fail(w.method, class, w.attempt_no, facts))
            }
            (ResultWire::Fail, None, None) => Err(RecordInvalid::MissingCode("fail")),
            (ResultWire::Fail, Some(_), _) => Err(RecordInvalid::UnexpectedCode("fail")),
            (ResultWire::NoTarget, Some(code), None) => {
                if code.method() == w.method {
                    Ok(Self::no_target(code, w.attempt_no, facts))
                } else {
                    Err(RecordInvalid::CodeOfAnotherMethod {
                        method: w.method.as_str(),
                        code_method: code.method().as_str(),
                    })
                }
            }
            (ResultWire::NoTarget, None, None) => Err(RecordInvalid::MissingCode("no_target")),
            (ResultWire::NoTarget, _, Some(_)) => Err(RecordInvalid::UnexpectedCode("no_target")),
        }
    }
}

impl From<VerificationRecord> for RecordWire {
    fn from(r: VerificationRecord) -> Self {
        let (result, no_target_code, failure_class) = match r.outcome {
            VerificationOutcome::Pass => (ResultWire::Pass, None, None),
            VerificationOutcome::Fail(class) => (ResultWire::Fail, None, Some(class)),
            VerificationOutcome::NoTarget(code) => (ResultWire::NoTarget, Some(code), None),
        };
        RecordWire {
            method: r.method,
            result,
            attempt_no: r.attempt_no,
            no_target_code,
            failure_class,
            started_at: r.facts.started_at,
            duration_ms: r.facts.duration_ms,
            diagnostics_count: r.facts.diagnostics_count,
            exit_code: r.facts.exit_code,
        }
    }
}

impl VerificationRecord {
    pub fn pass(method: VerificationMethod, attempt_no: AttemptNo, facts: RunFacts) -> Self {
        Self {
            method,
            outcome: VerificationOutcome::Pass,
            attempt_no,
            facts,
        }
    }

    pub fn fail(
        method: VerificationMethod,
        class: FailureClass,
        attempt_no: AttemptNo,
        facts: RunFacts,
    ) -> Self {
        Self {
            method,
            outcome: VerificationOutcome::Fail(class),
            attempt_no,
            facts,
        }
    }

    /// The method is the code's own: a mismatch cannot be written.
    pub fn no_target(code: NoTargetCode, attempt_no: AttemptNo, facts: RunFacts) -> Self {
        Self {
            method: code.method(),
            outcome: VerificationOutcome::NoTarget(code),
            attempt_no,
            facts,
        }
    }

    pub fn method(&self) -> VerificationMethod {
        self.method
    }
    pub fn outcome(&self) -> VerificationOutcome {
        self.outcome
    }
    pub fn attempt_no(&self) -> AttemptNo {
        self.attempt_no
    }
    pub fn facts(&self) -> RunFacts {
        self.facts
    }
}

/// The configurable limits of verification and attempts (all positive, finite).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "LimitsWire", into = "LimitsWire")]
pub struct VerificationLimits {
    attempt_time_limit: Duration,
    max_retries: u8,
    environment_rerun_budget: u8,
    idle_limit: Duration,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsWire {
    attempt_time_limit_secs: u64,
    max_retries: u8,
    environment_rerun_budget: u8,
    idle_limit_secs: u64,
}

/// Limits that would disable a safety bound.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitsInvalid {
    #[error("the attempt time limit must be positive")]
    ZeroAttemptTimeLimit,
    #[error("the idle limit must be positive")]
    ZeroIdleLimit,
    #[error("at most {MAX_RETRIES} retries are allowed")]
    TooManyRetries,
}

/// The hard ceiling on retries (invariant 4).
pub const MAX_RETRIES: u8 = 3;

impl VerificationLimits {
    pub fn new(
        attempt_time_limit: Duration,
        max_retries: u8,
        environment_rerun_budget: u8,
        idle_limit: Duration,
    ) -> Result<Self, LimitsInvalid> {
        if attempt_time_limit.is_zero() {
            return Err(LimitsInvalid::ZeroAttemptTimeLimit);
        }
        if idle_limit.is_zero() {
            return Err(LimitsInvalid::ZeroIdleLimit);
        }
        if max_retries > MAX_RETRIES {
            return Err(LimitsInvalid::TooManyRetries);
        }
        Ok(Self {
            attempt_time_limit,
            max_retries,
            environment_rerun_budget,
            idle_limit,
        })
    }

    pub fn attempt_time_limit(&self) -> Duration {
        self.attempt_time_limit
    }
    pub fn max_retries(&self) -> u8 {
        self.max_retries
    }
    pub fn environment_rerun_budget(&self) -> u8 {
        self.environment_rerun_budget
    }
    pub fn idle_limit(&self) -> Duration {
        self.idle_limit
    }

    /// The record an attempt that ran out of time leaves: a `code_defect`
    /// failure, so the ordinary retry path (⑧/⑨) decides — the first timeout
    /// does not kill the task. It is filed under ③ (runtime errors): the
    /// agent's attempt failed while running, and no other method was run.
    pub fn timed_out_record(
        &self,
        attempt_no: AttemptNo,
        started_at: Timestamp,
    ) -> VerificationRecord {
        VerificationRecord::fail(
            VerificationMethod::RuntimeErrors,
            FailureClass::CodeDefect,
            attempt_no,
            RunFacts {
                started_at,
                duration_ms: u64::try_from(self.attempt_time_limit.as_millis()).unwrap_or(u64::MAX),
                diagnostics_count: None,
                exit_code: None,
            },
        )
    }
}

impl Default for VerificationLimits {
    /// 20-minute attempts, 3 retries, no environment re-runs, idle limit = attempt limit.
    fn default() -> Self {
        Self {
            attempt_time_limit: Duration::from_mins(20),
            max_retries: MAX_RETRIES,
            environment_rerun_budget: 0,
            idle_limit: Duration::from_mins(20),
        }
    }
}

impl TryFrom<LimitsWire> for VerificationLimits {
    type Error = LimitsInvalid;
    fn try_from(w: LimitsWire) -> Result<Self, Self::Error> {
        Self::new(
            Duration::from_secs(w.attempt_time_limit_secs),
            w.max_retries,
            w.environment_rerun_budget,
            Duration::from_secs(w.idle_limit_secs),
        )
    }
}

impl From<VerificationLimits> for LimitsWire {
    fn from(l: VerificationLimits) -> Self {
        LimitsWire {
            attempt_time_limit_secs: l.attempt_time_limit.as_secs(),
            max_retries: l.max_retries,
            environment_rerun_budget: l.environment_rerun_budget,
            idle_limit_secs: l.idle_limit.as_secs(),
        }
    }
}

/// Why an attempt cannot complete by self-verification (yet).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NotCompletable {
    /// These methods of ①–④ have no record for the attempt: run them first.
    NotExecuted(Vec<VerificationMethod>),
    /// ①–④ had no target and ⑤ has no record: run the parser check.
    ParseCheckNotExecuted,
    /// Everything ran, nothing failed, nothing passed (e.g. no method applies
    /// and no parser is registered). A person decides.
    NothingPassed,
}

/// The verdict over one attempt's records.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum VerificationVerdict {
    /// Rule 1: some method failed. `class` is the deciding class: an
    /// environment class when any is present (retrying cannot fix the
    /// environment), `code_defect` otherwise.
    Fail { class: FailureClass },
    /// Rules 2–3: the attempt may complete.
    Pass,
    /// Rules 3–4: not completable.
    NotCompletable(NotCompletable),
}

impl VerificationVerdict {
    /// The single judge. Looks only at records of `attempt`; within the
    /// attempt, a later record of the same method supersedes an earlier one
    /// (an environment re-run replaces the run it repeats).
    pub fn evaluate(records: &[VerificationRecord], attempt: AttemptNo) -> Self {
        let mut latest: BTreeMap<VerificationMethod, VerificationOutcome> = BTreeMap::new();
        for record in records.iter().filter(|r| r.attempt_no == attempt) {
            latest.insert(record.method, record.outcome);
        }

        // Rule 1: any fail → retry path, even if something passed.
        let worst_fail = latest
            .values()
            .filter_map(|o| match o {
                VerificationOutcome::Fail(class) => Some(*class),
                _ => None,
            })
            .max();
        if let Some(class) = worst_fail {
            return Self::Fail { class };
        }

        let main = VerificationMethod::EXECUTION_ORDER;
        let missing: Vec<_> = main
            .iter()
            .copied()
            .filter(|m| !latest.contains_key(m))
            .collect();
        if !missing.is_empty() {
            // Rule 4.
            return Self::NotCompletable(NotCompletable::NotExecuted(missing));
        }
        if main
            .iter()
            .any(|m| latest.get(m) == Some(&VerificationOutcome::Pass))
        {
            // Rule 2.
            return Self::Pass;
        }
        // Rule 3: ①–④ all no_target → ⑤ decides.
        match latest.get(&VerificationMethod::ParseCheck) {
            Some(VerificationOutcome::Pass) => Self::Pass,
            Some(_) => Self::NotCompletable(NotCompletable::NothingPassed),
            None => Self::NotCompletable(NotCompletable::ParseCheckNotExecuted),
        }
    }
}

#[cfg(test)]
#[path = "verification_tests.rs"]
mod tests;
