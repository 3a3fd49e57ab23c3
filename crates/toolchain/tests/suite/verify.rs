//! The verification runner against the real fixture projects in
//! `tests/fixtures/`, through the real launcher (agent profile: proxy and,
//! on Linux, Landlock).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cocode_core::ids::AttemptNo;
use cocode_core::path::NormalizedPath;
use cocode_core::services::{VerificationRequest, VerificationRunner};
use cocode_core::verification::{
    VerificationLimits, VerificationOutcome, VerificationRecord, VerificationVerdict,
};
use cocode_toolchain::verify::OrchestratingVerificationRunner;
use cocode_toolchain::{Launcher, PolicyProxy, WritableRoots};
use pretty_assertions::assert_eq;

use super::common::{policy, require, require_peer, task};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A copy of a fixture in a fresh folder.
fn fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    copy_dir(&source, &ws);
    (dir, ws)
}

async fn runner(ws: &Path, target: &Path) -> OrchestratingVerificationRunner {
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let exceptions = cocode_toolchain::allowed::write_exceptions(
        &env,
        home.as_deref(),
        cocode_toolchain::TargetOs::current(),
    )
    .into_iter()
    .filter_map(|x| x.path.canonicalize().ok())
    .collect();
    let launcher = Launcher::new(
        tokio::runtime::Handle::current(),
        Some(Arc::clone(&proxy)),
        WritableRoots {
            workspace: Some(ws.to_path_buf()),
            exceptions,
        },
    );
    let blocked = Arc::clone(&proxy);
    OrchestratingVerificationRunner::new(
        Arc::new(launcher),
        cocode_toolchain::parsers::builtin_registry().unwrap(),
        VerificationLimits::default(),
        Arc::new(move |t| blocked.blocked_hosts(t).len()),
    )
    .with_target_dir(target.to_path_buf())
}

fn request(ws: &Path, edited: &[&str]) -> VerificationRequest {
    VerificationRequest {
        task_id: task(),
        attempt_no: AttemptNo(0),
        workspace_root: ws.to_path_buf(),
        edited_paths: edited
            .iter()
            .map(|p| NormalizedPath::try_from((*p).to_owned()).unwrap())
            .collect(),
        commands: cocode_core::workspace::VerificationCommands::default(),
        untrusted: Vec::new(),
    }
}

/// `kind name @ place` per finding of the record of `method`.
fn findings_of(records: &[VerificationRecord], method: &str) -> Vec<String> {
    records
        .iter()
        .filter(|r| serde_json::to_value(r.method()).unwrap() == method)
        .flat_map(|r| r.findings().iter())
        .map(|f| format!("{} @ {}", f.name(), f.place().unwrap_or("-")))
        .collect()
}

/// "method:outcome" per record, e.g. `static_analysis:fail/code_defect`.
fn summary(records: &[VerificationRecord]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            let method = serde_json::to_value(r.method())
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned();
            // Wire codes read `failure:code_defect`, `no_target:no_debug_session`.
            let code =
                |v: serde_json::Value| v.as_str().unwrap().split_once(':').unwrap().1.to_owned();
            let outcome = match r.outcome() {
                VerificationOutcome::Pass => "pass".to_owned(),
                VerificationOutcome::Fail(c) => {
                    format!("fail/{}", code(serde_json::to_value(c).unwrap()))
                }
                VerificationOutcome::NoTarget(c) => {
                    format!("no_target/{}", code(serde_json::to_value(c).unwrap()))
                }
            };
            format!("{method}:{outcome}")
        })
        .collect()
}

async fn run(ws: &Path, edited: &[&str]) -> Vec<VerificationRecord> {
    let target = tempfile::tempdir().unwrap();
    runner(ws, target.path())
        .await
        .verify(request(ws, edited))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cargo_crate_passes_clean_and_fails_on_a_type_error_or_a_failing_test() {
    if !require("cargo") {
        return;
    }
    let (_d, ws) = fixture("cargo-crate");
    let clean = run(&ws, &["src/lib.rs"]).await;
    assert_eq!(
        summary(&clean),
        vec![
            "static_analysis:pass",
            "build:pass",
            "tests:pass",
            "runtime_errors:no_target/no_debug_session"
        ]
    );
    assert_eq!(
        VerificationVerdict::evaluate(&clean, AttemptNo(0)),
        VerificationVerdict::Pass
    );
    let lib = ws.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, source.replace("a + b\n", "\"not a number\"\n")).unwrap();
    assert_eq!(
        summary(&run(&ws, &["src/lib.rs"]).await),
        vec!["static_analysis:fail/code_defect"]
    );
    std::fs::write(
        &lib,
        source.replace("super::add(2, 3), 5", "super::add(2, 3), 6"),
    )
    .unwrap();
    let failing = run(&ws, &["src/lib.rs"]).await;
    assert_eq!(
        summary(&failing),
        vec![
            "static_analysis:pass",
            "build:pass",
            "tests:fail/code_defect"
        ]
    );
    // The record names the failing test and where it panicked.
    assert_eq!(
        findings_of(&failing, "tests"),
        vec!["tests::adds @ src/lib.rs:10:9"]
    );
    assert!(
        failing[2].findings()[0].detail().contains("right: 6"),
        "{:?}",
        failing[2].findings()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_type_error_is_named_with_its_place() {
    if !require("cargo") {
        return;
    }
    let (_d, ws) = fixture("cargo-crate");
    let lib = ws.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, source.replace("a + b\n", "\"not a number\"\n")).unwrap();
    let records = run(&ws, &["src/lib.rs"]).await;
    assert_eq!(summary(&records), vec!["static_analysis:fail/code_defect"]);
    let found = findings_of(&records, "static_analysis");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("E0308: mismatched types @ src/lib.rs:"),
        "{found:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crate_with_a_nightly_only_bench_verifies_its_tests_and_says_what_it_left_out() {
    if !require("cargo") {
        return;
    }
    let (_d, ws) = fixture("cargo-crate");
    std::fs::create_dir_all(ws.join("benches")).unwrap();
    std::fs::write(
        ws.join("benches/speed.rs"),
        "#![feature(test)]\nextern crate test;\n#[bench]\nfn add(b: &mut test::Bencher) { b.iter(|| fixture_crate::add(1, 2)); }\n",
    )
    .unwrap();
    let records = run(&ws, &["src/lib.rs"]).await;
    assert_eq!(
        summary(&records),
        vec![
            "static_analysis:pass",
            "build:pass",
            "tests:pass",
            "runtime_errors:no_target/no_debug_session"
        ]
    );
    assert_eq!(
        records[0].notes(),
        &[cocode_core::verification::VerificationNote::SkippedNightlyTargets]
    );
    // A nightly feature in the library itself is the toolchain's limit,
    // not a defect of the code, and it is not left out.
    let lib = ws.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, format!("#![feature(never_type)]\n{source}")).unwrap();
    assert_eq!(
        summary(&run(&ws, &["src/lib.rs"]).await),
        vec!["static_analysis:fail/env_toolchain"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_present_before_the_first_edit_does_not_fail_static_analysis() {
    if !require("cargo") {
        return;
    }
    let (_d, ws) = fixture("cargo-crate");
    let lib = ws.join("src/lib.rs");
    let broken =
        std::fs::read_to_string(&lib).unwrap() + "\npub fn old() -> u8 { \"pre-existing\" }\n";
    std::fs::write(&lib, broken).unwrap();
    let target = tempfile::tempdir().unwrap();
    let runner = runner(&ws, target.path()).await;
    runner.capture_baseline(&request(&ws, &[])).await;
    let records = runner.verify(request(&ws, &["src/lib.rs"])).await.unwrap();
    // ④ counts the same single error as before the task: not a new one.
    // (The build still fails on it.)
    assert_eq!(
        summary(&records),
        vec!["static_analysis:pass", "build:fail/code_defect"]
    );
    assert_eq!(
        records[0].facts().diagnostics_count.map(|d| d.error),
        Some(1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_package_runs_its_compile_check_and_pytest() {
    if !require("python3") {
        return;
    }
    let pytest = std::process::Command::new("python3")
        .args(["-c", "import pytest"])
        .status()
        .is_ok_and(|s| s.success());
    if !require_peer("pytest", pytest) {
        return;
    }
    let (_d, ws) = fixture("python-pkg");
    let clean = run(&ws, &["calc.py"]).await;
    assert_eq!(
        summary(&clean),
        vec![
            "static_analysis:pass",
            "build:no_target/no_build_target",
            "tests:pass",
            "runtime_errors:no_target/no_debug_session"
        ]
    );
    std::fs::write(ws.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    let failing = run(&ws, &["calc.py"]).await;
    assert_eq!(summary(&failing)[2], "tests:fail/code_defect");
    assert_eq!(
        findings_of(&failing, "tests"),
        vec!["test_calc.py::test_add @ test_calc.py:5"]
    );
    std::fs::write(ws.join("calc.py"), "def add(a, b)\n    return a + b\n").unwrap();
    assert_eq!(
        summary(&run(&ws, &["calc.py"]).await),
        vec!["static_analysis:fail/code_defect"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_package_runs_npm_test() {
    if !require("npm") {
        return;
    }
    let (_d, ws) = fixture("node-pkg");
    let clean = run(&ws, &["add.js"]).await;
    assert_eq!(
        summary(&clean),
        vec![
            "static_analysis:no_target/file_not_analyzed",
            "build:no_target/no_build_target",
            "tests:pass",
            "runtime_errors:no_target/no_debug_session"
        ]
    );
    std::fs::write(ws.join("add.js"), "exports.add = (a, b) => a * b;\n").unwrap();
    let failing = run(&ws, &["add.js"]).await;
    assert_eq!(summary(&failing)[2], "tests:fail/code_defect");
    let named = findings_of(&failing, "tests");
    assert_eq!(named.len(), 1, "{named:?}");
    assert!(named[0].starts_with("adds @ "), "{named:?}");
    // A test script naming a runner that is not installed: the shell's
    // "not found" (exit 127) is a check that could not run, not a defect.
    let manifest = std::fs::read_to_string(ws.join("package.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    json["scripts"]["test"] = "no-such-test-runner-cocode --run".into();
    std::fs::write(ws.join("package.json"), json.to_string()).unwrap();
    assert_eq!(
        summary(&run(&ws, &["add.js"]).await)[2],
        "tests:fail/env_tool_missing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_other_target_a_broken_config_file_fails_the_parse_check() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("settings.json"), "{\"a\": 1,}").unwrap();
    std::fs::write(ws.join("notes.txt"), "free text").unwrap();
    let records = run(&ws, &["settings.json", "notes.txt"]).await;
    assert_eq!(
        summary(&records),
        vec![
            "static_analysis:no_target/file_not_analyzed",
            "build:no_target/no_build_target",
            "tests:no_target/no_test_files",
            "runtime_errors:no_target/no_debug_session",
            "parse_check:fail/code_defect"
        ]
    );
    std::fs::write(ws.join("settings.json"), "{\"a\": 1}").unwrap();
    let records = run(&ws, &["settings.json"]).await;
    assert_eq!(
        summary(&records).last().map(String::as_str),
        Some("parse_check:pass")
    );
    let records = run(&ws, &["notes.txt"]).await;
    assert_eq!(
        summary(&records).last().map(String::as_str),
        Some("parse_check:no_target/no_registered_parser")
    );
    // Source files outside any project: their grammar decides.
    std::fs::write(ws.join("snippet.rs"), "fn main() { let x = ; }\n").unwrap();
    let records = run(&ws, &["snippet.rs"]).await;
    assert_eq!(
        summary(&records).last().map(String::as_str),
        Some("parse_check:fail/code_defect")
    );
    std::fs::write(ws.join("snippet.rs"), "fn main() { let x = 1; }\n").unwrap();
    let records = run(&ws, &["snippet.rs"]).await;
    assert_eq!(
        summary(&records).last().map(String::as_str),
        Some("parse_check:pass")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_tool_is_an_environment_failure_not_a_pass() {
    if super::common::have("dart") {
        eprintln!("skipping: dart is installed, so it is not missing");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("pubspec.yaml"), "name: app\n").unwrap();
    assert_eq!(
        summary(&run(&ws, &["pubspec.yaml"]).await),
        vec!["static_analysis:fail/env_tool_missing"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_script_that_writes_under_home_passes_in_its_private_home() {
    if !require("npm") {
        return;
    }
    let (_d, ws) = fixture("node-pkg");
    // What coverage tools and package managers do: a cache in the home
    // folder and in the XDG cache folder.
    let script = "node -e \"const fs=require('fs'),os=require('os'),p=require('path');const d=p.join(os.homedir(),'.cache','cov');fs.mkdirSync(d,{recursive:true});fs.writeFileSync(p.join(d,'x'),'1');fs.mkdirSync(p.join(process.env.XDG_CACHE_HOME,'y'),{recursive:true})\" && node --test";
    let manifest = std::fs::read_to_string(ws.join("package.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    json["scripts"]["test"] = script.into();
    std::fs::write(ws.join("package.json"), json.to_string()).unwrap();
    let records = run(&ws, &["add.js"]).await;
    assert_eq!(
        summary(&records)[2],
        "tests:pass",
        "{:?}",
        records[2].findings()
    );
    // The person's own home was not written.
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
    assert!(!home.join(".cache/cov/x").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_runner_that_is_missing_could_not_run_and_is_named() {
    if !require("npm") {
        return;
    }
    if super::common::have("yarn") {
        eprintln!("skipping: yarn is installed, so it is not missing");
        return;
    }
    let (_d, ws) = fixture("node-pkg");
    // The lock file says the project uses yarn.
    std::fs::write(ws.join("yarn.lock"), "# yarn lockfile v1\n").unwrap();
    let records = run(&ws, &["add.js"]).await;
    assert_eq!(summary(&records)[2], "tests:fail/env_tool_missing");
    assert_eq!(
        records[2].phrase(),
        "failed: the check could not run: yarn is not installed"
    );
    assert_eq!(
        VerificationVerdict::evaluate(&records, AttemptNo(0)),
        VerificationVerdict::Fail {
            class: cocode_core::verification::FailureClass::EnvToolMissing
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workspace_commands_replace_detection() {
    if !require("npm") {
        return;
    }
    let (_d, ws) = fixture("node-pkg");
    let target = tempfile::tempdir().unwrap();
    let runner = runner(&ws, target.path()).await;
    let mut req = request(&ws, &["add.js"]);
    req.commands = cocode_core::workspace::VerificationCommands {
        static_analysis: Some(Vec::new()),
        build: Some(vec![
            "node".into(),
            "-e".into(),
            "require('./add.js')".into(),
        ]),
        tests: Some(vec![
            "node".into(),
            "-e".into(),
            "process.exit(require('./add.js').add(2, 3) === 5 ? 0 : 1)".into(),
        ]),
    };
    let records = runner.verify(req.clone()).await.unwrap();
    assert_eq!(
        summary(&records),
        vec![
            "static_analysis:no_target/file_not_analyzed",
            "build:pass",
            "tests:pass",
            "runtime_errors:no_target/no_debug_session"
        ]
    );
    assert_eq!(
        records[1].notes(),
        &[cocode_core::verification::VerificationNote::ConfiguredCommand]
    );
    // npm test (detection) would pass too; the configured check decides.
    std::fs::write(ws.join("add.js"), "exports.add = (a, b) => a * b;\n").unwrap();
    let records = runner.verify(req.clone()).await.unwrap();
    assert_eq!(summary(&records)[2], "tests:fail/code_defect");
    // A command the person has not trusted is not run: it could not run,
    // and the record names it.
    let marker = ws.join("ran-untrusted");
    req.commands.build = Some(vec!["touch".into(), marker.to_string_lossy().into_owned()]);
    req.untrusted = vec![cocode_core::verification::VerificationMethod::Build];
    let records = runner.verify(req).await.unwrap();
    assert_eq!(
        summary(&records),
        vec![
            "static_analysis:no_target/file_not_analyzed",
            "build:fail/env_untrusted"
        ]
    );
    assert_eq!(
        records[1].phrase(),
        "failed: the check could not run: this workspace names its command, which is not trusted yet"
    );
    assert_eq!(
        records[1].findings()[0].name(),
        format!("touch {}", marker.display())
    );
    assert!(!marker.exists(), "the untrusted command ran");
}

fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[test]
fn records_carry_no_free_text() {
    // Every string in a serialized record is one of the closed vocabularies.
    let record = VerificationRecord::fail(
        cocode_core::verification::VerificationMethod::Tests,
        cocode_core::verification::FailureClass::CodeDefect,
        AttemptNo(0),
        cocode_core::verification::RunFacts {
            started_at: cocode_core::ids::Timestamp::from_millis(1),
            duration_ms: 2,
            diagnostics_count: None,
            exit_code: Some(1),
        },
    );
    let mut found = Vec::new();
    strings(&serde_json::to_value(record).unwrap(), &mut found);
    found.sort();
    assert_eq!(found, vec!["fail", "failure:code_defect", "tests"]);
}
