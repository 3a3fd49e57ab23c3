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
    /// The sandbox refused a write outside the workspace the check needed.
    #[serde(rename = "failure:env_sandbox_refused")]
    EnvSandboxRefused,
    /// The installed toolchain cannot build the project (a newer
    /// `rust-version`, a nightly-only crate).
    #[serde(rename = "failure:env_toolchain")]
    EnvToolchain,
    /// The check ran out of the attempt's time.
    #[serde(rename = "failure:env_timed_out")]
    EnvTimedOut,
    /// The workspace's configuration names the command, and the person has
    /// not trusted it yet: it was not run.
    #[serde(rename = "failure:env_untrusted")]
    EnvUntrusted,
}

impl FailureClass {
    pub const ALL: [Self; 9] = [
        Self::CodeDefect,
        Self::EnvToolAborted,
        Self::EnvResource,
        Self::EnvNetworkBlocked,
        Self::EnvToolMissing,
        Self::EnvSandboxRefused,
        Self::EnvToolchain,
        Self::EnvTimedOut,
        Self::EnvUntrusted,
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RecordWire", into = "RecordWire")]
pub struct VerificationRecord {
    method: VerificationMethod,
    outcome: VerificationOutcome,
    attempt_no: AttemptNo,
    facts: RunFacts,
    findings: Vec<Finding>,
    notes: Vec<VerificationNote>,
}

/// At most this many findings are kept per record.
pub const MAX_FINDINGS: usize = 20;
/// Caps of one finding's fields, in bytes (cut at a character boundary).
pub const MAX_FINDING_NAME: usize = 300;
pub const MAX_FINDING_PLACE: usize = 300;
pub const MAX_FINDING_DETAIL: usize = 1200;
/// At most this many lines of a finding's detail are kept.
pub const MAX_FINDING_DETAIL_LINES: usize = 12;

/// What kind of thing a finding names (closed set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A test the runner reported as failed (`name` is the test's name).
    FailedTest,
    /// An error a compiler, type checker or linter reported (`name` is its
    /// message, `place` where).
    Error,
    /// A program the check needed that is not installed (`name`).
    MissingTool,
    /// A path outside the workspace the sandbox refused to let the check
    /// write (`name`).
    RefusedPath,
    /// A command the workspace names that the person has not trusted yet
    /// (`name`, shell-quoted).
    UntrustedCommand,
}

/// One thing a check said failed, read from its output by the runner (never
/// from what an agent says). The verdict does not read findings: they are
/// for people and for the model's next attempt.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "FindingWire", into = "FindingWire")]
pub struct Finding {
    kind: FindingKind,
    name: String,
    place: Option<String>,
    detail: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FindingWire {
    kind: FindingKind,
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    place: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    detail: String,
}

/// `text` cut to at most `max` bytes at a character boundary, `…` marking a cut.
fn capped(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

impl Finding {
    /// A finding with its fields capped (`MAX_FINDING_*`); the detail keeps
    /// its first `MAX_FINDING_DETAIL_LINES` lines.
    pub fn new(kind: FindingKind, name: &str, place: Option<&str>, detail: &str) -> Self {
        let lines: Vec<&str> = detail.lines().collect();
        let mut kept = lines
            .iter()
            .take(MAX_FINDING_DETAIL_LINES)
            .copied()
            .collect::<Vec<_>>()
            .join("\n");
        if lines.len() > MAX_FINDING_DETAIL_LINES {
            kept.push_str("\n…");
        }
        Self {
            kind,
            name: capped(name.trim(), MAX_FINDING_NAME),
            place: place
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| capped(p, MAX_FINDING_PLACE)),
            detail: capped(kept.trim_end(), MAX_FINDING_DETAIL),
        }
    }

    pub fn kind(&self) -> FindingKind {
        self.kind
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn place(&self) -> Option<&str> {
        self.place.as_deref()
    }
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl From<FindingWire> for Finding {
    fn from(w: FindingWire) -> Self {
        Self::new(w.kind, &w.name, w.place.as_deref(), &w.detail)
    }
}

impl From<Finding> for FindingWire {
    fn from(f: Finding) -> Self {
        Self {
            kind: f.kind,
            name: f.name,
            place: f.place,
            detail: f.detail,
        }
    }
}

/// Something the runner did that a person should know beside the outcome
/// (closed set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum VerificationNote {
    /// Targets that need a nightly toolchain (`#![feature]`) were left out;
    /// the rest was checked.
    #[serde(rename = "note:skipped_nightly_targets")]
    SkippedNightlyTargets,
    /// The command came from the workspace's `verification` settings, not
    /// from detection.
    #[serde(rename = "note:configured_command")]
    ConfiguredCommand,
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    notes: Vec<VerificationNote>,
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
        let (findings, notes) = (w.findings, w.notes);
        let record = match (w.result, w.no_target_code, w.failure_class) {
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
        }?;
        Ok(record.with_findings(findings).with_notes(notes))
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
            findings: r.findings,
            notes: r.notes,
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
            findings: Vec::new(),
            notes: Vec::new(),
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
            findings: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The method is the code's own: a mismatch cannot be written.
    pub fn no_target(code: NoTargetCode, attempt_no: AttemptNo, facts: RunFacts) -> Self {
        Self {
            method: code.method(),
            outcome: VerificationOutcome::NoTarget(code),
            attempt_no,
            facts,
            findings: Vec::new(),
            notes: Vec::new(),
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
    /// What the check said failed (at most `MAX_FINDINGS`).
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }
    pub fn notes(&self) -> &[VerificationNote] {
        &self.notes
    }

    /// The record with these findings, the first `MAX_FINDINGS` kept.
    #[must_use]
    pub fn with_findings(mut self, mut findings: Vec<Finding>) -> Self {
        findings.truncate(MAX_FINDINGS);
        self.findings = findings;
        self
    }

    /// The record with these notes, each once, in order.
    #[must_use]
    pub fn with_notes(mut self, mut notes: Vec<VerificationNote>) -> Self {
        notes.sort();
        notes.dedup();
        self.notes = notes;
        self
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
