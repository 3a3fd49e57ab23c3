//! Self-verification: "done" means a method passed on the current attempt.
//!
//! The runner detects the projects (Cargo, Python, Node, Dart) at the
//! workspace root and around the edited files, runs ④ static analysis → ②
//! build → ① tests → ③ runtime errors, stopping early only on a failure,
//! and ⑤ the parse check only when ①–④ all had no target. Every tool runs
//! through the launcher with the agent profile (the code under test was
//! written by an agent). Records carry counts and exit codes only; raw
//! output stays in a bounded in-memory buffer for this session. The runner
//! never reads what an agent claims about its work, and the verdict is left
//! to `VerificationVerdict::evaluate`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cocode_core::ids::{AttemptNo, TaskId, Timestamp};
use cocode_core::process::{
    ExitStatus, LaunchError, LaunchIo, LaunchSpec, ProcessLauncher, SandboxProfile,
};
use cocode_core::registry::FileFormatParserRegistry;
use cocode_core::services::{
    ParseCheck, VerificationError, VerificationRequest, VerificationRunner,
};
use cocode_core::verification::{
    DiagnosticsCount, FailureClass, Finding, FindingKind, NoTargetCode, RunFacts,
    VerificationLimits, VerificationMethod, VerificationNote, VerificationOutcome,
    VerificationRecord,
};

use cocode_core::clock::Clock;
use cocode_core::output::OutputBuffer;

mod output;
mod plan;

use output::{
    RESOURCE_MARKERS, cargo_test_total, count_errors, pyright_findings, toolchain_cannot_build,
    without_nightly_targets,
};
pub use output::{RawNotice, RawOutputBuffer, failure_excerpt};
use plan::{Planned, Reading, Step, no_target_of, plan, project_target_name};
pub use plan::{Project, ProjectKind, detect, node_package_manager, test_command};

/// The name of the runner's base folder below the temp folder, one per
/// person (`cocode-verify-target-<uid>` on Unix): the temp folder is shared,
/// and a folder another user made there is refused (`lasting_folder`), so
/// one person's base must never stand in another's way.
fn base_name() -> String {
    #[cfg(unix)]
    {
        format!(
            "cocode-verify-target-{}",
            rustix::process::getuid().as_raw()
        )
    }
    #[cfg(not(unix))]
    {
        "cocode-verify-target".to_owned()
    }
}

/// The blocked-host count of a task (from the policy proxy), to tell a
/// network refusal from a code defect.
pub type BlockedHosts = Arc<dyn Fn(&TaskId) -> usize + Send + Sync>;

/// Runs the methods in order and writes one record per method.
pub struct OrchestratingVerificationRunner {
    launcher: Arc<dyn ProcessLauncher>,
    parsers: FileFormatParserRegistry,
    limits: VerificationLimits,
    blocked_hosts: BlockedHosts,
    target_dir: PathBuf,
    baselines: Mutex<HashMap<(TaskId, Project), u32>>,
    raw: Mutex<RawOutputBuffer>,
    /// What records are stamped with.
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for OrchestratingVerificationRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrchestratingVerificationRunner")
            .field("parsers", &self.parsers)
            .finish_non_exhaustive()
    }
}

/// The result of one method over every project.
struct MethodResult {
    outcome: VerificationOutcome,
    diagnostics: Option<DiagnosticsCount>,
    exit_code: Option<i32>,
    findings: Vec<Finding>,
    notes: Vec<VerificationNote>,
}

impl OrchestratingVerificationRunner {
    pub fn new(
        launcher: Arc<dyn ProcessLauncher>,
        parsers: FileFormatParserRegistry,
        limits: VerificationLimits,
        blocked_hosts: BlockedHosts,
    ) -> Self {
        Self {
            launcher,
            parsers,
            limits,
            blocked_hosts,
            target_dir: std::env::temp_dir().join(base_name()),
            baselines: Mutex::new(HashMap::new()),
            raw: Mutex::new(RawOutputBuffer::new(8 * 1024 * 1024)),
            clock: cocode_core::clock::system(),
        }
    }

    /// The folder under which Cargo builds go, one subfolder per project
    /// (outside the workspace).
    #[must_use]
    pub fn with_target_dir(mut self, dir: PathBuf) -> Self {
        self.target_dir = dir;
        self
    }

    /// Stamps records with `clock` (the host's one clock).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn raw_output(
        &self,
        task: &TaskId,
        attempt: AttemptNo,
        method: VerificationMethod,
    ) -> RawNotice {
        self.raw
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .notice(task, attempt, method)
    }

    /// Counts ④'s errors before the task's first edit, so only new errors fail.
    #[tracing::instrument(level = "debug", skip_all, name = "verify.baseline")]
    pub async fn capture_baseline(&self, req: &VerificationRequest) {
        for project in detect(&req.workspace_root, &req.edited_paths) {
            if let Planned::Run(mut step) = plan(
                VerificationMethod::StaticAnalysis,
                &project,
                &[],
                &self.target_dir,
            ) {
                self.give_private_home(&mut step, &project);
                let (_, output, _) = self
                    .execute(&req.task_id, &step, self.limits.attempt_time_limit())
                    .await;
                let errors = count_errors(step.reading, &output).unwrap_or(0);
                self.baselines
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert((req.task_id.clone(), project), errors);
            }
        }
    }

    /// Runs one step; returns the exit (or launch failure), the output and
    /// the blocked-host count added during the run.
    async fn execute(
        &self,
        task: &TaskId,
        step: &Step,
        limit: Duration,
    ) -> (Result<ExitStatus, LaunchError>, String, usize) {
        let blocked_before = (self.blocked_hosts)(task);
        let extra_writable = match step
            .lasting
            .iter()
            .map(|p| crate::scratch::lasting_folder(p))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(folders) => folders,
            Err(e) => return (Err(e), String::new(), 0),
        };
        let spec = LaunchSpec {
            argv: step.argv.clone(),
            cwd: step.cwd.clone(),
            env_overrides: step.env.clone(),
            profile: SandboxProfile::Agent {
                task_id: task.clone(),
            },
            // stdout and stderr apart: chunks of the two pipes interleaved
            // could split a summary line (`test result: …`) in two.
            io: LaunchIo::PipedSplit,
            timeout: Some(limit),
            output_byte_limit: Some(4 * 1024 * 1024),
            extra_writable,
            secret_env: BTreeMap::new(),
            extra_hosts: Vec::new(),
        };
        let mut out = OutputBuffer::new(spec.output_byte_limit);
        let mut err = OutputBuffer::new(spec.output_byte_limit);
        let status = match self.launcher.launch(spec) {
            Ok(mut handle) => {
                let stderr = handle.take_stderr();
                let read_err = async {
                    if let Some(mut stream) = stderr {
                        while let Some(chunk) =
                            std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await
                        {
                            err.push(&chunk);
                        }
                    }
                };
                let read_out = async {
                    while let Some(chunk) = handle.read_output().await {
                        out.push(&chunk);
                    }
                };
                tokio::join!(read_out, read_err);
                handle.wait().await
            }
            Err(e) => Err(e),
        };
        // The tool's own output first, then its diagnostics: each stays whole.
        let mut text = String::from_utf8_lossy(out.bytes()).into_owned();
        let diagnostics = String::from_utf8_lossy(err.bytes());
        if !diagnostics.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&diagnostics);
        }
        let blocked = (self.blocked_hosts)(task).saturating_sub(blocked_before);
        (status, text, blocked)
    }

    async fn run_method(
        &self,
        req: &VerificationRequest,
        method: VerificationMethod,
        projects: &[Project],
        deadline: Instant,
    ) -> MethodResult {
        let edited_py = edited_python(req);
        let planned = self.planned(req, method, projects, &edited_py);
        let mut outcomes = Vec::new();
        let mut diagnostics: Option<DiagnosticsCount> = None;
        let mut exit_code = None;
        let mut findings = Vec::new();
        let mut notes = Vec::new();
        for (project, planned) in planned {
            let mut step = match planned {
                Planned::NoTarget(code) => {
                    outcomes.push(VerificationOutcome::NoTarget(code));
                    continue;
                }
                Planned::Untrusted(command) => {
                    findings.push(untrusted_finding(&command));
                    notes.push(VerificationNote::ConfiguredCommand);
                    outcomes.push(VerificationOutcome::Fail(FailureClass::EnvUntrusted));
                    continue;
                }
                Planned::Run(step) => step,
            };
            self.give_private_home(&mut step, &project);
            let remaining = |deadline: Instant| {
                deadline
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(1))
            };
            let (mut status, mut output, mut blocked) =
                self.execute(&req.task_id, &step, remaining(deadline)).await;
            // A target that needs a nightly toolchain (a bench with
            // `#![feature(test)]`) is left out and the rest checked again.
            if project.kind == ProjectKind::Cargo
                && matches!(status, Ok(ExitStatus::Code(c)) if c != 0)
                && let Some(narrowed) = without_nightly_targets(&step, &output)
            {
                step = narrowed;
                (status, output, blocked) =
                    self.execute(&req.task_id, &step, remaining(deadline)).await;
            }
            notes.extend(step.notes.iter().copied());
            self.raw
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(
                    (req.task_id.clone(), req.attempt_no, method),
                    output.clone().into_bytes(),
                );
            let errors = count_errors(step.reading, &output);
            if let Some(n) = errors {
                let d = diagnostics.get_or_insert_with(DiagnosticsCount::default);
                d.error = d.error.saturating_add(n);
            }
            let outcome = match &status {
                Err(LaunchError::NotFound(program)) => {
                    let name = Path::new(program)
                        .file_name()
                        .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned());
                    findings.push(Finding::new(FindingKind::MissingTool, &name, None, ""));
                    VerificationOutcome::Fail(FailureClass::EnvToolMissing)
                }
                Err(_) => VerificationOutcome::Fail(FailureClass::EnvToolAborted),
                Ok(ExitStatus::TimedOut) => VerificationOutcome::Fail(FailureClass::EnvTimedOut),
                Ok(ExitStatus::Signal(_) | ExitStatus::Killed) => {
                    VerificationOutcome::Fail(FailureClass::EnvToolAborted)
                }
                Ok(ExitStatus::Code(code)) => {
                    exit_code = Some(*code);
                    self.judge_exit(req, &project, step.reading, *code, errors, &output, blocked)
                }
            };
            if let VerificationOutcome::Fail(class) = outcome {
                findings.extend(
                    Self::findings_of(class, step.reading, &output, req)
                        .into_iter()
                        .map(|f| from_root(f, &req.workspace_root, &step.cwd)),
                );
            }
            outcomes.push(outcome);
        }
        let outcome = outcomes
            .iter()
            .find(|o| matches!(o, VerificationOutcome::Fail(_)))
            .or_else(|| {
                outcomes
                    .iter()
                    .find(|o| matches!(o, VerificationOutcome::Pass))
            })
            .or_else(|| outcomes.first())
            .copied()
            .unwrap_or(VerificationOutcome::NoTarget(no_target_of(method)));
        MethodResult {
            outcome,
            diagnostics,
            exit_code,
            findings,
            notes,
        }
    }

    /// What to run for `method`: the workspace's own command, which
    /// replaces detection for this method (an empty one turns it off), or
    /// the plan of each detected project.
    fn planned(
        &self,
        req: &VerificationRequest,
        method: VerificationMethod,
        projects: &[Project],
        edited_py: &[PathBuf],
    ) -> Vec<(Project, Planned)> {
        match req.commands.for_method(method) {
            Some([]) => vec![(
                Project {
                    kind: ProjectKind::Configured,
                    dir: req.workspace_root.clone(),
                },
                Planned::NoTarget(no_target_of(method)),
            )],
            Some(command) if req.untrusted.contains(&method) => vec![(
                Project {
                    kind: ProjectKind::Configured,
                    dir: req.workspace_root.clone(),
                },
                Planned::Untrusted(command.to_vec()),
            )],
            Some(command) => {
                let project = Project {
                    kind: ProjectKind::Configured,
                    dir: req.workspace_root.clone(),
                };
                let step = Step {
                    argv: command.to_vec(),
                    cwd: req.workspace_root.clone(),
                    env: BTreeMap::new(),
                    reading: Reading::ExitCode,
                    lasting: Vec::new(),
                    notes: vec![VerificationNote::ConfiguredCommand],
                };
                vec![(project, Planned::Run(step))]
            }
            None => projects
                .iter()
                .map(|p| (p.clone(), plan(method, p, edited_py, &self.target_dir)))
                .collect(),
        }
    }

    /// What a failed step's output says failed, for its class.
    fn findings_of(
        class: FailureClass,
        reading: Reading,
        output: &str,
        req: &VerificationRequest,
    ) -> Vec<Finding> {
        match class {
            FailureClass::EnvToolMissing => crate::findings::missing_tools(output)
                .iter()
                .map(|n| Finding::new(FindingKind::MissingTool, n, None, ""))
                .collect(),
            FailureClass::EnvSandboxRefused => {
                crate::findings::refused_paths(output, &req.workspace_root)
                    .iter()
                    .map(|p| Finding::new(FindingKind::RefusedPath, p, None, ""))
                    .collect()
            }
            _ if reading == Reading::PyrightJson => pyright_findings(output),
            _ => crate::findings::read(output),
        }
    }

    /// The step's own home: `HOME` and the XDG folders point at a lasting
    /// folder of the project below the runner's base (coverage tools,
    /// package managers and test runners write their caches there, which
    /// the sandbox would refuse in the person's home), while the
    /// toolchains installed in the person's home stay found.
    fn give_private_home(&self, step: &mut Step, project: &Project) {
        let home = self
            .target_dir
            .join("homes")
            .join(project_target_name(&project.dir));
        let real = std::env::var_os("HOME").map(PathBuf::from);
        let text = |p: &Path| p.to_string_lossy().into_owned();
        for (name, sub) in [
            ("HOME", ""),
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_STATE_HOME", ".local/state"),
        ] {
            let path = if sub.is_empty() {
                home.clone()
            } else {
                home.join(sub)
            };
            step.env
                .entry(name.to_owned())
                .or_insert_with(|| text(&path));
        }
        if let Some(real) = real {
            // Where rustup, cargo, pyenv, pub and pip --user installs live
            // unless the person set their variables (then those pass).
            for (name, sub) in [
                ("CARGO_HOME", ".cargo"),
                ("RUSTUP_HOME", ".rustup"),
                ("PYENV_ROOT", ".pyenv"),
                ("PUB_CACHE", ".pub-cache"),
                ("PYTHONUSERBASE", ".local"),
                ("GIT_CONFIG_GLOBAL", ".gitconfig"),
                ("NPM_CONFIG_USERCONFIG", ".npmrc"),
            ] {
                let path = real.join(sub);
                if std::env::var_os(name).is_none() && path.exists() {
                    step.env
                        .entry(name.to_owned())
                        .or_insert_with(|| text(&path));
                }
            }
        }
        step.lasting.push(home);
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one judgement over everything a run produced"
    )]
    fn judge_exit(
        &self,
        req: &VerificationRequest,
        project: &Project,
        reading: Reading,
        code: i32,
        errors: Option<u32>,
        output: &str,
        blocked: usize,
    ) -> VerificationOutcome {
        if reading == Reading::Pytest && code == 5 {
            return VerificationOutcome::NoTarget(NoTargetCode::NoTestFiles);
        }
        if reading == Reading::Pytest && output.contains("No module named pytest") {
            return VerificationOutcome::Fail(FailureClass::EnvToolMissing);
        }
        if reading == Reading::CargoTests && code == 0 && cargo_test_total(output) == 0 {
            return VerificationOutcome::NoTarget(NoTargetCode::NoTestFiles);
        }
        // pyright exits 1 for any error; only the counted ones decide.
        if reading == Reading::PyrightJson {
            match errors {
                Some(0) if code == 0 || code == 1 => return VerificationOutcome::Pass,
                // Not its report: pyright itself failed (exit 2 or 3).
                None if code != 0 => {
                    return VerificationOutcome::Fail(FailureClass::EnvToolAborted);
                }
                _ => {}
            }
        }
        if code == 0 {
            return VerificationOutcome::Pass;
        }
        // A shell's "command not found": the check could not run (a script
        // names a tool that is not installed), which no edit fixes.
        if code == 127
            || !crate::findings::missing_tools(output).is_empty()
                && crate::findings::read(output).is_empty()
        {
            return VerificationOutcome::Fail(FailureClass::EnvToolMissing);
        }
        // A refused host explains a failure only when the output names no
        // failing test or error of its own (a tool's update check may be
        // refused beside a test that really failed).
        if blocked > 0 && crate::findings::read(output).is_empty() {
            return VerificationOutcome::Fail(FailureClass::EnvNetworkBlocked);
        }
        if RESOURCE_MARKERS.iter().any(|m| output.contains(m)) {
            return VerificationOutcome::Fail(FailureClass::EnvResource);
        }
        if toolchain_cannot_build(output) {
            return VerificationOutcome::Fail(FailureClass::EnvToolchain);
        }
        if !crate::findings::refused_paths(output, &req.workspace_root).is_empty()
            && crate::findings::read(output).is_empty()
        {
            return VerificationOutcome::Fail(FailureClass::EnvSandboxRefused);
        }
        if let Some(n) = errors {
            // Only errors beyond those present before the task's first edit count.
            let baseline = self
                .baselines
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(&(req.task_id.clone(), project.clone()))
                .copied()
                .unwrap_or(0);
            if n > 0 && n <= baseline {
                return VerificationOutcome::Pass;
            }
        }
        VerificationOutcome::Fail(FailureClass::CodeDefect)
    }

    /// ⑤ over the edited files that exist.
    fn parse_check(&self, req: &VerificationRequest) -> MethodResult {
        let mut errors = 0u32;
        let mut checked = 0;
        let mut findings = Vec::new();
        for path in &req.edited_paths {
            let Some(parser) = self.parsers.parser_for(path.file_name()) else {
                continue;
            };
            let full = path
                .segments()
                .fold(req.workspace_root.clone(), |acc, s| acc.join(s));
            let Ok(bytes) = std::fs::read(full) else {
                continue;
            };
            checked += 1;
            if let ParseCheck::Errors { count } = parser.check(&bytes) {
                errors = errors.saturating_add(count);
                let what = if count == 1 {
                    "1 syntax error".to_owned()
                } else {
                    format!("{count} syntax errors")
                };
                findings.push(Finding::new(
                    FindingKind::Error,
                    &what,
                    Some(path.as_str()),
                    "",
                ));
            }
        }
        let outcome = if checked == 0 {
            VerificationOutcome::NoTarget(NoTargetCode::NoRegisteredParser)
        } else if errors == 0 {
            VerificationOutcome::Pass
        } else {
            VerificationOutcome::Fail(FailureClass::CodeDefect)
        };
        MethodResult {
            outcome,
            diagnostics: Some(DiagnosticsCount {
                error: errors,
                warning: 0,
            }),
            exit_code: None,
            findings: if outcome == VerificationOutcome::Pass {
                Vec::new()
            } else {
                findings
            },
            notes: Vec::new(),
        }
    }
}

/// A finding whose place is relative to the workspace root, as people and
/// the agent name files: an absolute place inside the workspace loses the
/// root, and a place relative to a project below the root gains the
/// project's folder.
fn from_root(finding: Finding, root: &Path, cwd: &Path) -> Finding {
    let Some(place) = finding.place() else {
        return finding;
    };
    let path = Path::new(place);
    let rooted = if path.is_absolute() {
        match path.strip_prefix(root) {
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => return finding,
        }
    } else {
        match cwd.strip_prefix(root) {
            Ok(sub) if !sub.as_os_str().is_empty() => sub.join(path).to_string_lossy().into_owned(),
            _ => return finding,
        }
    };
    Finding::new(
        finding.kind(),
        finding.name(),
        Some(&rooted.replace('\\', "/")),
        finding.detail(),
    )
}

/// The finding of a command the person has not trusted: it, quoted.
fn untrusted_finding(command: &[String]) -> Finding {
    Finding::new(
        FindingKind::UntrustedCommand,
        &cocode_core::shown::command(command),
        None,
        "",
    )
}

/// The edited Python files that exist, as full paths.
fn edited_python(req: &VerificationRequest) -> Vec<PathBuf> {
    req.edited_paths
        .iter()
        .filter(|p| {
            Path::new(p.file_name())
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("py"))
        })
        .map(|p| {
            p.segments()
                .fold(req.workspace_root.clone(), |acc, s| acc.join(s))
        })
        .filter(|p| p.is_file())
        .collect()
}

fn record(
    method: VerificationMethod,
    result: &MethodResult,
    attempt: AttemptNo,
    started_at: Timestamp,
    took: Duration,
) -> VerificationRecord {
    let facts = RunFacts {
        started_at,
        duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        diagnostics_count: result.diagnostics,
        exit_code: result.exit_code,
    };
    let record = match result.outcome {
        VerificationOutcome::Pass => VerificationRecord::pass(method, attempt, facts),
        VerificationOutcome::Fail(class) => VerificationRecord::fail(method, class, attempt, facts),
        VerificationOutcome::NoTarget(code) => VerificationRecord::no_target(code, attempt, facts),
    };
    record
        .with_findings(result.findings.clone())
        .with_notes(result.notes.clone())
}

#[async_trait::async_trait]
impl VerificationRunner for OrchestratingVerificationRunner {
    async fn verify(
        &self,
        req: VerificationRequest,
    ) -> Result<Vec<VerificationRecord>, VerificationError> {
        if !req.workspace_root.is_dir() {
            return Err(VerificationError::Setup(format!(
                "no workspace at {}",
                req.workspace_root.display()
            )));
        }
        let projects = detect(&req.workspace_root, &req.edited_paths);
        let deadline = Instant::now() + self.limits.attempt_time_limit();
        let mut records = Vec::new();
        let mut all_no_target = true;
        for method in [
            VerificationMethod::StaticAnalysis,
            VerificationMethod::Build,
            VerificationMethod::Tests,
            VerificationMethod::RuntimeErrors,
        ] {
            if Instant::now() >= deadline {
                records.push(
                    self.limits
                        .timed_out_record(req.attempt_no, self.clock.now()),
                );
                return Ok(records);
            }
            let (started_at, clock) = (self.clock.now(), Instant::now());
            let result = self.run_method(&req, method, &projects, deadline).await;
            let rec = record(method, &result, req.attempt_no, started_at, clock.elapsed());
            all_no_target &= matches!(rec.outcome(), VerificationOutcome::NoTarget(_));
            let failed = matches!(rec.outcome(), VerificationOutcome::Fail(_));
            records.push(rec);
            if failed {
                return Ok(records);
            }
        }
        if all_no_target {
            let (started_at, clock) = (self.clock.now(), Instant::now());
            let result = self.parse_check(&req);
            records.push(record(
                VerificationMethod::ParseCheck,
                &result,
                req.attempt_no,
                started_at,
                clock.elapsed(),
            ));
        }
        Ok(records)
    }
}

#[cfg(test)]
mod excerpt_tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_excerpt_keeps_what_failed_and_drops_the_rest() {
        let cargo = "   Compiling probe v0.1.0\n    Finished test\n     Running unittests\n\nrunning 2 tests\ntest tests::subtracts ... ok\ntest tests::adds ... FAILED\n\nfailures:\n\n---- tests::adds stdout ----\n\nthread 'tests::adds' panicked at src/lib.rs:10:9:\nassertion `left == right` failed\n  left: -1\n right: 5\nnote: run with `RUST_BACKTRACE=1`\n\nfailures:\n    tests::adds\n\ntest result: FAILED. 1 passed; 1 failed\n";
        assert_eq!(
            failure_excerpt(cargo, 40, 4000),
            "test tests::adds ... FAILED\n\nfailures:\n\n---- tests::adds stdout ----\n…\nthread 'tests::adds' panicked at src/lib.rs:10:9:\nassertion `left == right` failed\n  left: -1\n right: 5\n…\nfailures:\n    tests::adds\n\ntest result: FAILED. 1 passed; 1 failed\n"
        );
        // Colours go; controls are shown escaped; the caps hold.
        assert_eq!(
            failure_excerpt("\u{1b}[31merror\u{1b}[0m: bad\u{7}\n", 40, 4000),
            "error: bad\\u0007\n"
        );
        let many: String = (0..100)
            .flat_map(|i| ["error ".to_owned(), i.to_string(), "\n".to_owned()])
            .collect();
        assert_eq!(
            failure_excerpt(&many, 3, 4000),
            "error 0\nerror 1\nerror 2\n…\n"
        );
        assert!(failure_excerpt(&many, 100, 50).len() <= 54);
        // Nothing marked: the end of the output.
        assert_eq!(failure_excerpt("a\nb\nc\n", 2, 4000), "b\nc\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::plan::plan_cargo;
    use pretty_assertions::assert_eq;

    #[test]
    fn cargo_outputs_are_read_for_errors_and_test_counts() {
        let messages = [
            r#"{"reason":"compiler-message","message":{"level":"error","message":"mismatched types"}}"#,
            r#"{"reason":"compiler-message","message":{"level":"warning","message":"unused"}}"#,
            r#"{"reason":"compiler-message","message":{"level":"error","message":"aborting due to 1 previous error"}}"#,
            r#"{"reason":"build-finished","success":false}"#,
        ]
        .join("\n");
        assert_eq!(count_errors(Reading::CargoMessages, &messages), Some(1));
        let tests = "running 2 tests\ntest result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out\n\nrunning 0 tests\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert_eq!(cargo_test_total(tests), 3);
        assert_eq!(
            cargo_test_total(
                "running 0 tests\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
            ),
            0
        );
    }

    #[test]
    fn each_cargo_project_builds_in_its_own_lasting_folder_under_the_base() {
        let base = Path::new("/tmp/base");
        let target_of = |dir: &str| {
            let project = Project {
                kind: ProjectKind::Cargo,
                dir: PathBuf::from(dir),
            };
            let Some(Planned::Run(step)) = plan_cargo(VerificationMethod::Build, &project, base)
            else {
                panic!("cargo build is planned");
            };
            PathBuf::from(&step.env["CARGO_TARGET_DIR"])
        };
        let a = target_of("/home/me/작업 공간");
        assert_eq!(a.parent(), Some(base));
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("작업_공간-"), "{name}");
        assert_eq!(name.len(), "작업_공간-".len() + 16);
        // The same project always gets the same folder; another one, another.
        assert_eq!(target_of("/home/me/작업 공간"), a);
        assert_ne!(target_of("/home/you/작업 공간"), a);
    }

    #[test]
    fn raw_output_states_present_trimmed_and_earlier_session() {
        let mut raw = RawOutputBuffer::new(10);
        let t = TaskId::new("t").unwrap();
        raw.push(
            (t.clone(), AttemptNo(0), VerificationMethod::Tests),
            b"0123456789".to_vec(),
        );
        raw.push(
            (t.clone(), AttemptNo(0), VerificationMethod::Build),
            b"abc".to_vec(),
        );
        assert_eq!(
            raw.notice(&t, AttemptNo(0), VerificationMethod::Build),
            RawNotice::Present(b"abc".to_vec())
        );
        assert_eq!(
            raw.notice(&t, AttemptNo(0), VerificationMethod::Tests),
            RawNotice::TrimmedByCap
        );
        assert_eq!(
            raw.notice(&t, AttemptNo(1), VerificationMethod::Tests),
            RawNotice::EarlierSession
        );
    }
}
