//! What verification runs for each project: its kind by its manifest,
//! and the step of each method (program, folder, environment, how its
//! output is read).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cocode_core::verification::{NoTargetCode, VerificationMethod, VerificationNote};

/// A kind of project, by its manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProjectKind {
    Cargo,
    Python,
    Node,
    Dart,
    /// The workspace's own commands (`verification` in `workspace.json`).
    Configured,
}

/// A detected project.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Project {
    pub kind: ProjectKind,
    pub dir: PathBuf,
}

pub(crate) fn kinds_in(dir: &Path) -> Vec<ProjectKind> {
    let has = |name: &str| dir.join(name).is_file();
    let mut out = Vec::new();
    if has("Cargo.toml") {
        out.push(ProjectKind::Cargo);
    }
    if has("pyproject.toml") || has("setup.py") || has("setup.cfg") || has("requirements.txt") {
        out.push(ProjectKind::Python);
    }
    if has("package.json") {
        out.push(ProjectKind::Node);
    }
    if has("pubspec.yaml") {
        out.push(ProjectKind::Dart);
    }
    out
}

/// The projects at the workspace root and those containing an edited file
/// (the nearest manifest above it). A Cargo package inside a Cargo project
/// already found above it is covered by that one (a workspace member).
pub fn detect(root: &Path, edited: &[cocode_core::path::NormalizedPath]) -> Vec<Project> {
    let mut dirs = vec![root.to_path_buf()];
    for path in edited {
        let mut dir = path.segments().fold(root.to_path_buf(), |p, s| p.join(s));
        while dir.pop() && dir.starts_with(root) && dir != root {
            if !kinds_in(&dir).is_empty() {
                dirs.push(dir.clone());
                break;
            }
        }
    }
    let mut found: Vec<Project> = Vec::new();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        for kind in kinds_in(&dir) {
            let covered = kind == ProjectKind::Cargo
                && found
                    .iter()
                    .any(|p| p.kind == ProjectKind::Cargo && dir.starts_with(&p.dir));
            if !covered {
                found.push(Project {
                    kind,
                    dir: dir.clone(),
                });
            }
        }
    }
    found
}

/// How a tool's output is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// Exit code decides.
    ExitCode,
    /// `cargo check --message-format=json`: error messages are counted.
    CargoMessages,
    /// libtest summaries: no test at all is `no_test_files`.
    CargoTests,
    /// pytest: exit 5 is "no tests collected".
    Pytest,
    /// `ruff check --output-format=json`: one entry per finding.
    RuffJson,
    /// Lines containing `error TS` (tsc) or ` error - ` (dart analyze).
    ErrorLines(&'static str),
    /// `pyright --outputjson` over the edited files: its errors that mean
    /// the code is broken wherever it runs (syntax, undefined names); type
    /// errors that depend on installed packages or existed before do not
    /// fail a task (pyright has no baseline of the files before the task).
    PyrightJson,
}

#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub(crate) argv: Vec<String>,
    pub(crate) cwd: PathBuf,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) reading: Reading,
    /// Lasting folders outside the workspace the step writes (Cargo's
    /// build output, the project's private home), made if missing and
    /// granted to the step alone.
    pub(crate) lasting: Vec<PathBuf>,
    /// Notes the runner adds to the record of this step's method.
    pub(crate) notes: Vec<VerificationNote>,
}

#[derive(Debug, Clone)]
pub(crate) enum Planned {
    Run(Step),
    NoTarget(NoTargetCode),
    /// A command the workspace names that the person has not trusted: not
    /// run.
    Untrusted(Vec<String>),
}

pub(crate) fn on_path(program: &str) -> bool {
    let path = std::env::var("PATH").ok();
    crate::launcher::on_search_path(program, path.as_deref())
}

pub(crate) fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| (*s).to_owned()).collect()
}

/// `package.json` scripts that exist and are not npm's placeholder.
pub(crate) fn npm_script(dir: &Path, name: &str) -> bool {
    std::fs::read(dir.join("package.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("scripts")?.get(name)?.as_str().map(ToOwned::to_owned))
        .is_some_and(|s| !s.contains("no test specified"))
}

pub(crate) fn is_python_test(name: &str) -> bool {
    Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("py"))
        && (name.starts_with("test_") || name.ends_with("_test.py"))
}

/// Whether pytest would find a test file (a few levels deep).
pub(crate) fn has_python_tests(dir: &Path, depth: u8) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.path().is_dir() {
            depth < 4
                && !name.starts_with('.')
                && name != "node_modules"
                && has_python_tests(&e.path(), depth + 1)
        } else {
            is_python_test(&name)
        }
    })
}

pub(crate) fn step(parts: &[&str], cwd: &Path, reading: Reading) -> Planned {
    Planned::Run(Step {
        argv: argv(parts),
        cwd: cwd.to_path_buf(),
        env: BTreeMap::new(),
        reading,
        lasting: Vec::new(),
        notes: Vec::new(),
    })
}

/// What to run for one method on one project.
pub(crate) fn plan(
    method: VerificationMethod,
    project: &Project,
    edited_py: &[PathBuf],
    target_dir: &Path,
) -> Planned {
    let planned = match project.kind {
        ProjectKind::Cargo => plan_cargo(method, project, target_dir),
        ProjectKind::Python => plan_python(method, project, edited_py),
        ProjectKind::Node => plan_node(method, project),
        ProjectKind::Dart => plan_dart(method, project),
        ProjectKind::Configured => None,
    };
    planned.unwrap_or(Planned::NoTarget(no_target_of(method)))
}

/// The command verification runs as ① for `project` (what the agent's
/// status tool names), when it has one.
pub fn test_command(project: &Project) -> Option<Vec<String>> {
    match plan(
        VerificationMethod::Tests,
        project,
        &[],
        &std::env::temp_dir(),
    ) {
        Planned::Run(step) => Some(step.argv),
        Planned::NoTarget(_) | Planned::Untrusted(_) => None,
    }
}

pub(crate) fn plan_cargo(
    method: VerificationMethod,
    project: &Project,
    target_dir: &Path,
) -> Option<Planned> {
    let (parts, reading): (&[&str], Reading) = match method {
        VerificationMethod::StaticAnalysis => (
            &[
                "cargo",
                "check",
                "--all-targets",
                "--message-format=json",
                "--quiet",
            ],
            Reading::CargoMessages,
        ),
        VerificationMethod::Build => (&["cargo", "build", "--quiet"], Reading::ExitCode),
        VerificationMethod::Tests => (&["cargo", "test", "--no-fail-fast"], Reading::CargoTests),
        VerificationMethod::RuntimeErrors | VerificationMethod::ParseCheck => return None,
    };
    let mut env = BTreeMap::new();
    // Build output goes below the temp folder, never into the workspace:
    // one folder per project, kept between runs and app sessions so later
    // verifications build incrementally and temp does not fill with a new
    // copy per run. The step alone may write it.
    let target = target_dir.join(project_target_name(&project.dir));
    env.insert(
        "CARGO_TARGET_DIR".to_owned(),
        target.to_string_lossy().into_owned(),
    );
    Some(Planned::Run(Step {
        argv: argv(parts),
        cwd: project.dir.clone(),
        env,
        reading,
        lasting: vec![target],
        notes: Vec::new(),
    }))
}

/// A stable folder name for one project's build output: its folder name
/// (readable in a listing) and a hash of its full path (unique).
pub(crate) fn project_target_name(dir: &Path) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(dir.as_os_str().as_encoded_bytes());
    let hash = digest[..8].iter().fold(String::new(), |mut out, b| {
        use std::fmt::Write as _;
        let _ = write!(out, "{b:02x}");
        out
    });
    let name: String = dir
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{name}-{hash}")
}

/// Compiles each file named on the command line without writing bytecode;
/// a syntax error ends with its traceback and exit code 1.
pub(crate) const PY_COMPILE_CHECK: &str =
    "import sys\nfor f in sys.argv[1:]:\n    compile(open(f, 'rb').read(), f, 'exec')";

/// Whether the project declares pytest as its runner: a `pytest.ini`, a
/// `[tool.pytest.ini_options]` table in `pyproject.toml`, a `[tool:pytest]`
/// section in `setup.cfg` or a `[pytest]` section in `tox.ini`.
pub(crate) fn declares_pytest(dir: &Path) -> bool {
    let has = |file: &str, marker: &str| {
        std::fs::read_to_string(dir.join(file)).is_ok_and(|t| t.contains(marker))
    };
    dir.join("pytest.ini").is_file()
        || has("pyproject.toml", "[tool.pytest")
        || has("setup.cfg", "[tool:pytest]")
        || has("tox.ini", "[pytest]")
}

pub(crate) fn plan_python(
    method: VerificationMethod,
    project: &Project,
    edited_py: &[PathBuf],
) -> Option<Planned> {
    match method {
        VerificationMethod::StaticAnalysis if on_path("ruff") => Some(step(
            &["ruff", "check", "--output-format=json", "."],
            &project.dir,
            Reading::RuffJson,
        )),
        // Without ruff, pyright over the edited files: only their errors,
        // so a project's untyped remainder does not fail the task.
        VerificationMethod::StaticAnalysis if on_path("pyright") && !edited_py.is_empty() => {
            let mut parts = argv(&["pyright", "--outputjson"]);
            parts.extend(edited_py.iter().map(|p| p.to_string_lossy().into_owned()));
            Some(Planned::Run(Step {
                argv: parts,
                cwd: project.dir.clone(),
                env: BTreeMap::new(),
                reading: Reading::PyrightJson,
                lasting: Vec::new(),
                notes: Vec::new(),
            }))
        }
        VerificationMethod::StaticAnalysis if !edited_py.is_empty() => {
            // Without a linter, the interpreter's own compiler checks the
            // edited files — in memory: `py_compile` would write bytecode
            // beside them.
            let mut parts = argv(&["python3", "-c", PY_COMPILE_CHECK]);
            parts.extend(edited_py.iter().map(|p| p.to_string_lossy().into_owned()));
            Some(Planned::Run(Step {
                argv: parts,
                cwd: project.dir.clone(),
                env: BTreeMap::new(),
                reading: Reading::ExitCode,
                lasting: Vec::new(),
                notes: Vec::new(),
            }))
        }
        VerificationMethod::Tests
            if declares_pytest(&project.dir) || has_python_tests(&project.dir, 0) =>
        {
            let mut env = BTreeMap::new();
            env.insert("PYTHONDONTWRITEBYTECODE".to_owned(), "1".to_owned());
            Some(Planned::Run(Step {
                argv: argv(&["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"]),
                cwd: project.dir.clone(),
                env,
                reading: Reading::Pytest,
                lasting: Vec::new(),
                notes: Vec::new(),
            }))
        }
        _ => None,
    }
}

/// The package manager a Node project declares: the `packageManager`
/// field of `package.json` (`yarn@4.1.0`), else the lock file it keeps,
/// else npm.
pub fn node_package_manager(dir: &Path) -> &'static str {
    let declared = std::fs::read(dir.join("package.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("packageManager")?.as_str().map(ToOwned::to_owned));
    if let Some(declared) = declared {
        for manager in ["pnpm", "yarn", "bun", "npm"] {
            if declared.split('@').next() == Some(manager) {
                return manager;
            }
        }
    }
    if dir.join("pnpm-lock.yaml").is_file() {
        "pnpm"
    } else if dir.join("yarn.lock").is_file() {
        "yarn"
    } else if dir.join("bun.lockb").is_file() || dir.join("bun.lock").is_file() {
        "bun"
    } else {
        "npm"
    }
}

pub(crate) fn plan_node(method: VerificationMethod, project: &Project) -> Option<Planned> {
    let manager = node_package_manager(&project.dir);
    let run_script = |script: &str| -> Vec<String> {
        match (manager, script) {
            ("npm", "test") => argv(&["npm", "test", "--silent"]),
            ("npm", _) => argv(&["npm", "run", script, "--silent"]),
            ("yarn", _) => argv(&["yarn", "run", script]),
            (other, _) => argv(&[other, "run", script]),
        }
    };
    match method {
        VerificationMethod::StaticAnalysis if project.dir.join("tsconfig.json").is_file() => {
            let local = project.dir.join("node_modules/.bin/tsc");
            let tsc = if local.is_file() {
                local.to_string_lossy().into_owned()
            } else if on_path("tsc") {
                "tsc".to_owned()
            } else {
                return None;
            };
            Some(Planned::Run(Step {
                argv: vec![tsc, "--noEmit".into()],
                cwd: project.dir.clone(),
                env: BTreeMap::new(),
                reading: Reading::ErrorLines("error TS"),
                lasting: Vec::new(),
                notes: Vec::new(),
            }))
        }
        VerificationMethod::Build if npm_script(&project.dir, "build") => {
            Some(Planned::Run(Step {
                argv: run_script("build"),
                cwd: project.dir.clone(),
                env: BTreeMap::new(),
                reading: Reading::ExitCode,
                lasting: Vec::new(),
                notes: Vec::new(),
            }))
        }
        VerificationMethod::Tests if npm_script(&project.dir, "test") => Some(Planned::Run(Step {
            argv: run_script("test"),
            cwd: project.dir.clone(),
            env: BTreeMap::new(),
            reading: Reading::ExitCode,
            lasting: Vec::new(),
            notes: Vec::new(),
        })),
        _ => None,
    }
}

pub(crate) fn plan_dart(method: VerificationMethod, project: &Project) -> Option<Planned> {
    match method {
        VerificationMethod::StaticAnalysis => Some(step(
            &["dart", "analyze"],
            &project.dir,
            Reading::ErrorLines(" error - "),
        )),
        VerificationMethod::Tests if project.dir.join("test").is_dir() => {
            let flutter = std::fs::read_to_string(project.dir.join("pubspec.yaml"))
                .is_ok_and(|t| t.contains("flutter:"));
            let parts: &[&str] = if flutter {
                &["flutter", "test"]
            } else {
                &["dart", "test"]
            };
            Some(step(parts, &project.dir, Reading::ExitCode))
        }
        _ => None,
    }
}

pub(crate) fn no_target_of(method: VerificationMethod) -> NoTargetCode {
    match method {
        VerificationMethod::Tests => NoTargetCode::NoTestFiles,
        VerificationMethod::Build => NoTargetCode::NoBuildTarget,
        VerificationMethod::RuntimeErrors => NoTargetCode::NoDebugSession,
        VerificationMethod::StaticAnalysis => NoTargetCode::FileNotAnalyzed,
        VerificationMethod::ParseCheck => NoTargetCode::NoRegisteredParser,
    }
}
