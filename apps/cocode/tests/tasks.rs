//! Delegated tasks end to end through the real `cocode` binary: the local
//! agent, the tool registry with the workspace catalog, leases and the
//! gate, verification, approvals and the task records.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build workspaces and run the binary"
)]
#![expect(clippy::unwrap_used, reason = "test helpers")]

use std::path::Path;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;

#[path = "../../../tests/support/require.rs"]
mod peers;

use serde_json::Value;

/// Runs `cocode ARGS` with no terminal on stdin; returns (exit code, stdout).
fn cocode(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args(args)
        .stdin(Stdio::null())
        .env("HOME", std::env::temp_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.code().is_some(),
        "killed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap(), stdout)
}

fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    dir
}

fn run(ws: &Path, prompt: &str, extra: &[&str]) -> (i32, String) {
    cocode(&run_args(ws, prompt, extra))
}

/// `task run` in `ws` with `prompt` and the `extra` flags.
fn run_args<'a>(ws: &'a Path, prompt: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "task",
        "run",
        "--workspace",
        ws.to_str().unwrap(),
        "--prompt",
        prompt,
    ];
    args.extend_from_slice(extra);
    // The tests wrote the external agent's entry into workspace.json
    // themselves: as its person, they allow it.
    if extra.iter().any(|a| a.starts_with("acp:")) {
        args.push("--trust-workspace");
    }
    args
}

/// The (path, origin) of each snapshot in a `task show` answer.
#[cfg(unix)]
fn recorded(shown: &Value) -> Vec<(String, String)> {
    shown["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap_or_default().to_owned(),
                s["origin"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The only task of a workspace, as `task show` prints it.
/// `task run` in `ws` with `prompt` and the `extra` flags, started and
/// left running (its output dropped).
fn spawn_run(ws: &Path, prompt: &str, extra: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args(run_args(ws, prompt, extra))
        .env("HOME", std::env::temp_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits (up to a minute) until `path` exists; `what` names it in the
/// failure.
fn wait_for(path: &Path, what: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    while !path.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} never happened"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn only_task(ws: &Path) -> Value {
    let (code, list) = cocode(&["task", "list", "--workspace", ws.to_str().unwrap()]);
    assert_eq!(code, 0, "{list}");
    let ids: Vec<&str> = list
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "{list}");
    let (code, shown) = cocode(&[
        "task",
        "show",
        ids[0],
        "--json",
        "--workspace",
        ws.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    serde_json::from_str(&shown).unwrap()
}

fn methods(task: &Value) -> Vec<(String, String)> {
    task["verification_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["method"].as_str().unwrap().to_owned(),
                r["result"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_local_task_edits_through_the_gate_verifies_and_completes_with_yes() {
    let ws = workspace(&[("config.json", "{\"a\": 1}\n")]);
    let (code, out) = run(
        ws.path(),
        r#"replace "1" with "2" in config.json"#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("config.json")).unwrap(),
        "{\"a\": 2}\n"
    );
    for line in [
        "status: waiting to start → running",
        "  workspace.applyPatch config.json [done]",
        "status: running → verifying its work",
        "  verify parse check: passed",
        "status: verifying its work → waiting for a person",
        "status: waiting for a person → completed",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in\n{out}");
    }
    let shown = only_task(ws.path());
    let task = &shown["task"];
    assert_eq!(task["status"], "completed");
    assert_eq!(task["terminal_reason"]["reason"], "approved");
    assert_eq!(
        methods(task),
        vec![
            ("static_analysis".into(), "no_target".into()),
            ("build".into(), "no_target".into()),
            ("tests".into(), "no_target".into()),
            ("runtime_errors".into(), "no_target".into()),
            ("parse_check".into(), "pass".into()),
        ]
    );
    let snapshots = shown["snapshots"].as_array().unwrap();
    assert_eq!(snapshots.len(), 1);
    assert_eq!(snapshots[0]["path"], "config.json");
    assert_eq!(snapshots[0]["origin"], "gate");
}

#[test]
fn without_a_person_completion_waits_and_task_approve_decides_it() {
    let ws = workspace(&[("config.json", "{\"a\": 1}\n")]);
    let (code, out) = run(
        ws.path(),
        r#"replace "1" with "2" in config.json"#,
        &["--approve-all-edits"],
    );
    assert_eq!(code, 3, "{out}");
    let task = only_task(ws.path())["task"].clone();
    assert_eq!(
        (
            task["status"].as_str(),
            task["pending_approval_kind"].as_str()
        ),
        (Some("awaiting_approval"), Some("completion"))
    );
    let id = task["task_id"].as_str().unwrap();
    let (code, out) = cocode(&[
        "task",
        "approve",
        id,
        "--workspace",
        ws.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(only_task(ws.path())["task"]["status"], "completed");
    // A decided task cannot be decided again.
    let (code, _) = cocode(&[
        "task",
        "reject",
        id,
        "--workspace",
        ws.path().to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
}

#[test]
fn denied_edits_change_nothing_and_the_task_fails_unfinished() {
    let ws = workspace(&[("notes.txt", "keep me\n")]);
    let (code, out) = run(ws.path(), "delete notes.txt", &["--deny-all"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("workspace.deleteFile failed with TOOL_APPROVAL_DENIED"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(),
        "keep me\n"
    );
    // Nobody stopped the task: the agent, refused, ended its turn without
    // finishing.
    let shown = only_task(ws.path());
    assert_eq!(shown["task"]["status"], "failed");
    assert_eq!(
        shown["task"]["terminal_reason"],
        serde_json::json!({"reason": "agent_ended_unfinished"})
    );
    assert_eq!(shown["snapshots"], serde_json::json!([]));
    assert!(
        out.lines()
            .any(|l| l.ends_with(": failed: the agent ended its turn without finishing the task")),
        "{out}"
    );
}

#[test]
fn a_failed_verification_spends_a_retry_and_sends_the_summary_back() {
    let ws = workspace(&[("config.json", "{\"a\": 1}\n")]);
    let (code, out) = run(
        ws.path(),
        r#"replace "1" with "1," in config.json"#,
        &["--yes", "--completion-mode", "self_verification"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines()
            .any(|l| l == "  verify parse check: failed: the code has a defect"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l == "status: verifying its work → running"),
        "{out}"
    );
    // The local agent received the failure summary as its next instruction
    // and, not understanding it, answered with what it can do. Each retry
    // it ends without finishing is a failed attempt that spends the next
    // retry; with the budget gone, the task fails with its verdict.
    assert!(out.contains("I am the local agent"), "{out}");
    let task = only_task(ws.path())["task"].clone();
    assert_eq!(task["retry_count"], 3);
    assert_eq!(task["attempt_no"], 3);
    assert_eq!(task["status"], "failed");
    assert_eq!(
        task["terminal_reason"],
        serde_json::json!({"reason": "retries_exhausted"})
    );
    assert!(
        out.lines()
            .any(|l| l.ends_with(": failed: verification still failed after every retry")),
        "{out}"
    );
}

#[test]
fn an_edit_of_an_existing_test_file_waits_for_its_own_approval() {
    let ws = workspace(&[("tests/test_a.py", "assert 1 == 1\n")]);
    let (code, out) = run(
        ws.path(),
        r#"replace "1 == 1" with "2 == 2" in tests/test_a.py"#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("a test change waits for approval: tests/test_a.py"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l == "status: running → waiting for a person"),
        "{out}"
    );
    assert!(
        out.contains("the approved test change was applied"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("tests/test_a.py")).unwrap(),
        "assert 2 == 2\n"
    );
    let shown = only_task(ws.path());
    assert_eq!(shown["task"]["status"], "completed");
    assert_eq!(shown["snapshots"].as_array().unwrap().len(), 1);
}

/// A held test change outlives the run that held it: saved with the task,
/// decided by a person later (`task approve` / `task reject`).
#[test]
fn a_held_test_change_survives_its_run_until_a_person_decides() {
    for (decision, expected, end) in [
        // The change is applied; the agent that would go on is gone.
        (
            "approve",
            "assert 2 == 2\n",
            "failed: cocode restarted while it ran",
        ),
        (
            "reject",
            "assert 1 == 1\n",
            "rejected: a person rejected its change to a test file",
        ),
    ] {
        let ws = workspace(&[("tests/test_a.py", "assert 1 == 1\n")]);
        // Edits are approved, the test change is left for a person; the
        // run ends with the task waiting.
        let (code, out) = run(
            ws.path(),
            r#"replace "1 == 1" with "2 == 2" in tests/test_a.py"#,
            &["--approve-all-edits"],
        );
        assert_eq!(code, 3, "{out}");
        let id = only_task(ws.path())["task"]["task_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let held = ws
            .path()
            .join(format!(".cocode/history/tasks/{id}/held.json"));
        assert!(held.is_file(), "{out}");
        assert_eq!(
            std::fs::read_to_string(ws.path().join("tests/test_a.py")).unwrap(),
            "assert 1 == 1\n"
        );
        let (code, out) = cocode(&[
            "task",
            decision,
            &id,
            "--workspace",
            ws.path().to_str().unwrap(),
        ]);
        assert_eq!(code, 1, "{out}");
        assert_eq!(out, format!("task {id}: {end}\n"), "{decision}");
        assert_eq!(
            std::fs::read_to_string(ws.path().join("tests/test_a.py")).unwrap(),
            expected,
            "{decision}"
        );
        assert!(!held.exists());
    }
}

/// The same rule for a command: a test file a command changed goes back to
/// its base and waits for a person; approving applies the command's
/// result byte for byte, rejecting keeps the base.
#[test]
fn a_test_file_a_command_changed_waits_for_approval_and_is_applied_byte_for_byte() {
    let ws = workspace(&[("tests/test_a.py", "assert 1 == 1\n"), ("a.txt", "a\n")]);
    // No newline at its end: what is applied is the command's bytes.
    let prompt = r#"run "printf 'assert 2 == 2\ntail' > tests/test_a.py; echo b > a.txt""#;
    // Left for a person: the run ends with the task waiting, the file at
    // its base.
    let (code, out) = run(ws.path(), prompt, &["--approve-all-edits"]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("a test change waits for approval: tests/test_a.py"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("tests/test_a.py")).unwrap(),
        "assert 1 == 1\n"
    );
    let shown = only_task(ws.path());
    assert_eq!(recorded_paths(&shown), ["a.txt"], "{shown:#}");
    let id = shown["task"]["task_id"].as_str().unwrap().to_owned();
    let (code, out) = cocode(&[
        "task",
        "approve",
        &id,
        "--workspace",
        ws.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        std::fs::read(ws.path().join("tests/test_a.py")).unwrap(),
        b"assert 2 == 2\ntail"
    );
    assert_eq!(
        recorded_paths(&only_task(ws.path())),
        ["a.txt", "tests/test_a.py"]
    );
    // Rejected, the base stays.
    let ws = workspace(&[("tests/test_a.py", "assert 1 == 1\n")]);
    let (code, out) = run(ws.path(), prompt, &["--approve-all-edits"]);
    assert_eq!(code, 3, "{out}");
    let id = only_task(ws.path())["task"]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, out) = cocode(&[
        "task",
        "reject",
        &id,
        "--workspace",
        ws.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("tests/test_a.py")).unwrap(),
        "assert 1 == 1\n"
    );
}

#[test]
fn a_denied_test_edit_leaves_the_file_untouched() {
    let ws = workspace(&[("tests/test_a.py", "assert 1 == 1\n")]);
    let (code, out) = run(
        ws.path(),
        r#"replace "1 == 1" with "2 == 2" in tests/test_a.py"#,
        &["--deny-all"],
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("tests/test_a.py")).unwrap(),
        "assert 1 == 1\n"
    );
    let shown = only_task(ws.path());
    assert_eq!(shown["task"]["status"], "failed");
    assert_eq!(
        shown["task"]["terminal_reason"],
        serde_json::json!({"reason": "agent_ended_unfinished"})
    );
    assert_eq!(shown["snapshots"], serde_json::json!([]));
}

#[test]
fn tools_list_prints_the_served_catalog_in_each_format() {
    let (code, out) = cocode(&["tools", "list", "--format", "openai"]);
    assert_eq!(code, 0);
    let tools: Vec<Value> = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    // Every catalog tool but `lsp.diagnostics` (no language server runs in
    // the host), in catalog order.
    assert_eq!(
        names,
        [
            "workspace__getStatus",
            "workspace__listFiles",
            "workspace__readFile",
            "workspace__search",
            "workspace__writeFile",
            "workspace__applyPatch",
            "workspace__createFile",
            "workspace__renameFile",
            "workspace__deleteFile",
            "workspace__applyEdits",
            "terminal__run",
            "task__finish"
        ]
    );
    let (code, out) = cocode(&["tools", "list", "--format", "mcp"]);
    assert_eq!(code, 0);
    assert!(out.contains("\"name\": \"workspace.readFile\""));
    let (code, _) = cocode(&["tools", "list", "--format", "yaml"]);
    assert_ne!(code, 0);
}

#[test]
fn a_provider_without_a_key_fails_the_task_with_the_auth_code() {
    let ws = workspace(&[("a.txt", "x\n")]);
    let (code, out) = run(
        ws.path(),
        "anything",
        &[
            "--backend",
            "anthropic",
            "--base-url",
            "http://127.0.0.1:9",
            "--api-key-env",
            "COCODE_TEST_UNSET_KEY",
        ],
    );
    // The variable is unset: the run refuses before creating a task.
    assert_ne!(code, 0, "{out}");
    let (code, list) = cocode(&["task", "list", "--workspace", ws.path().to_str().unwrap()]);
    assert_eq!((code, list.as_str()), (0, ""));
}

/// `rollback --yes`: changes made while a command ran are reverted too.
fn rollback(ws: &Path, task: &str) -> (i32, String) {
    cocode(&[
        "rollback",
        "--workspace",
        ws.to_str().unwrap(),
        "--task",
        task,
        "--yes",
    ])
}

/// Runs `prompt` as the only task (approved) and rolls it back to its
/// start; returns what the rollback printed.
fn run_then_roll_back(ws: &Path, prompt: &str) -> String {
    let (code, out) = run(ws, prompt, &["--yes"]);
    assert_eq!(code, 0, "{out}");
    let id = only_task(ws)["task"]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, out) = rollback(ws, &id);
    assert_eq!(code, 0, "{out}");
    out
}

#[test]
fn rollback_to_the_start_restores_the_file_and_ends_the_task() {
    let ws = workspace(&[("config.json", "{\"a\": 1}\n")]);
    let out = run_then_roll_back(ws.path(), r#"replace "1" with "2" in config.json"#);
    assert!(out.lines().any(|l| l == "restored config.json"), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("config.json")).unwrap(),
        "{\"a\": 1}\n"
    );
    let shown = only_task(ws.path());
    assert_eq!(shown["task"]["status"], "rolled_back");
    let origins: Vec<&str> = shown["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["origin"].as_str().unwrap())
        .collect();
    assert_eq!(origins, vec!["gate", "rollback"]);
}

/// A file the task made is removed, and the line says so rather than
/// "restored".
#[test]
fn rollback_says_which_files_it_removed_because_the_task_made_them() {
    let ws = workspace(&[("config.json", "{\"a\": 1}\n")]);
    let out = run_then_roll_back(ws.path(), r#"create notes/new.md with "made by the task""#);
    let lines: Vec<&str> = out.lines().take(1).collect();
    assert_eq!(lines, ["removed notes/new.md (the task made it)"], "{out}");
    assert!(!ws.path().join("notes/new.md").exists());
}

#[test]
fn rollback_refuses_to_overwrite_a_later_human_change() {
    let ws = workspace(&[("config.json", "{\"a\": 1}\n")]);
    let (code, out) = run(
        ws.path(),
        r#"replace "1" with "2" in config.json"#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    std::fs::write(ws.path().join("config.json"), "{\"a\": 7}\n").unwrap();
    let id = only_task(ws.path())["task"]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, out) = rollback(ws.path(), &id);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("conflict config.json: it changed since the task's last edit\n"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("config.json")).unwrap(),
        "{\"a\": 7}\n"
    );
    assert_eq!(only_task(ws.path())["task"]["status"], "completed");
}

#[cfg(unix)]
#[test]
fn a_command_runs_sandboxed_and_its_changes_are_recorded_and_reversible() {
    // With mount namespaces, commands do ordinary work at the root too: a
    // new top-level file and `sed -i` (a temporary file beside the one it
    // edits); `.git` stays read-only. Without them, commands write only
    // inside the existing top-level entries.
    let root_work = cocode_toolchain::confine::protections().metadata_mounts;
    let ws = workspace(&[
        ("keep.txt", "k\n"),
        ("out/keep.txt", "k\n"),
        (".git/config", "[core]\n"),
    ]);
    let before = tree(ws.path());
    let (code, out) = run(
        ws.path(),
        r#"run "echo made > out/made.txt; { echo new > top.txt; sed -i s/k/K/ keep.txt; echo x > .git/hooks-pre-commit; echo x >> .git/config; } 2>/dev/null; true""#,
        &["--yes"],
    );
    // No project and no parser for .txt: a person decides completion (--yes).
    assert_eq!(code, 0, "{out}");
    assert!(out.lines().any(|l| l == "  terminal.run [done]"), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out/made.txt")).unwrap(),
        "made\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!ws.path().join(".git/hooks-pre-commit").exists());
    let shown = only_task(ws.path());
    let mut got = recorded(&shown);
    got.sort();
    if root_work {
        assert_eq!(
            std::fs::read_to_string(ws.path().join("top.txt")).unwrap(),
            "new\n"
        );
        assert_eq!(
            std::fs::read_to_string(ws.path().join("keep.txt")).unwrap(),
            "K\n"
        );
        let observed = |p: &str| (p.to_owned(), "observed".to_owned());
        assert_eq!(
            got,
            vec![
                observed("keep.txt"),
                observed("out/made.txt"),
                observed("top.txt")
            ],
            "{shown}"
        );
    } else {
        assert!(!ws.path().join("top.txt").exists());
        assert_eq!(
            got,
            vec![("out/made.txt".to_owned(), "observed".to_owned())],
            "{shown}"
        );
    }
    let id = shown["task"]["task_id"].as_str().unwrap().to_owned();
    let (code, out) = rollback(ws.path(), &id);
    assert_eq!(code, 0, "{out}");
    // Byte for byte as before, `.cocode/` aside.
    assert_eq!(tree(ws.path()), before);
}

/// Every file below `root` but cocode's history, with its bytes.
#[cfg(unix)]
fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".cocode" {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

#[cfg(target_os = "linux")]
#[test]
fn a_command_cannot_read_the_keys_in_cocodes_own_environment() {
    let ws = workspace(&[("keep.txt", "k\n")]);
    // Credentials cocode recognises by name or by shape, and ones only the
    // environment rule catches: passwords inside URLs, a webhook, a DSN, an
    // npm auth string, a proxy's user and password.
    let secrets = [
        (
            "ANTHROPIC_API_KEY",
            "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        ),
        ("SOMETHING_ELSE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        ("DATABASE_URL", "postgres://app:dbpass4711@db.internal/app"),
        ("REDIS_URL", "redis://:redispass4711@cache.internal:6379/0"),
        (
            "SLACK_WEBHOOK",
            "https://hooks.slack.com/services/T0/B0/slacksecret4711",
        ),
        ("SENTRY_DSN", "https://sentrykey4711@o1.ingest.sentry.io/1"),
        ("NPM_CONFIG__AUTH", "bnBtdXNlcjpucG1wYXNzNDcxMQ=="),
        (
            "HTTPS_PROXY",
            "http://proxyuser:proxypass4711@proxy.internal:3128",
        ),
    ];
    // The command's parent is cocode itself; `environ` is what the kernel
    // shows of cocode's starting environment. The test reads cocode's too,
    // while the command runs (as root it may; otherwise the undumpable
    // mark refuses it).
    let mut command = Command::new(env!("CARGO_BIN_EXE_cocode"));
    command
        .args([
            "task",
            "run",
            "--workspace",
            ws.path().to_str().unwrap(),
            "--prompt",
            r#"run "cat /proc/$PPID/environ > keep.txt 2>&1; cat /proc/1/environ >> keep.txt 2>&1; echo end >> keep.txt; touch started; sleep 2""#,
            "--yes",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .env("HOME", std::env::temp_dir())
        .env("COCODE_PLAIN_MARKER", "plain");
    for (name, value) in secrets {
        command.env(name, value);
    }
    let child = command.spawn().unwrap();
    let environ = format!("/proc/{}/environ", child.id());
    let started = ws.path().join("started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let own = std::fs::read(&environ).map(|b| String::from_utf8_lossy(&b).into_owned());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let seen = std::fs::read_to_string(ws.path().join("keep.txt")).unwrap();
    assert!(seen.ends_with("end\n"), "{seen}");
    for (name, value) in secrets {
        assert!(
            !seen.contains(value),
            "{name} was read by the command: {seen}"
        );
        if let Ok(own) = &own {
            assert!(
                !own.contains(value),
                "{name} is in cocode's environ: {own:?}"
            );
        }
    }
    match own {
        // Only root reads an undumpable process's environ; what it reads
        // still names the variables cocode keeps.
        Ok(own) => assert!(own.contains("COCODE_PLAIN_MARKER=plain"), "{own:?}"),
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}"),
    }
}

/// A repository a command makes (`sub/.git` with `core.fsmonitor` set, a
/// hook) would run its settings in the person's next `git status` there:
/// cocode removes it after the command, recorded with the task, and a
/// repository that was there before stays.
#[cfg(target_os = "linux")]
#[test]
fn a_repository_a_command_makes_is_removed_and_one_that_was_there_stays() {
    let ws = workspace(&[("vendor/dep/.git/config", "[core]\n"), ("keep.txt", "k\n")]);
    let (code, out) = run(
        ws.path(),
        r#"run "mkdir -p sub/.git/hooks && printf '[core]\n\tfsmonitor = touch /tmp/owned\n' > sub/.git/config && printf x > sub/.git/hooks/pre-commit && printf 'gitdir: ../elsewhere' > other.git-file && mkdir -p two && mv other.git-file two/.git && echo made > sub/file.txt""#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(!ws.path().join("sub/.git").exists(), "{out}");
    assert!(!ws.path().join("two/.git").exists(), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("sub/file.txt")).unwrap(),
        "made\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("vendor/dep/.git/config")).unwrap(),
        "[core]\n"
    );
    // Made by the command, removed by cocode: both recorded with the task.
    let shown = only_task(ws.path());
    let mut kinds: Vec<(String, String)> = shown["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["path"].as_str().unwrap().contains(".git"))
        .map(|s| {
            let made = s["base"].is_null();
            (
                s["path"].as_str().unwrap().to_owned(),
                format!(
                    "{} {}",
                    if made { "made" } else { "removed" },
                    s["origin"].as_str().unwrap()
                ),
            )
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            ("sub/.git/config".to_owned(), "made observed".to_owned()),
            ("sub/.git/config".to_owned(), "removed gate".to_owned()),
            (
                "sub/.git/hooks/pre-commit".to_owned(),
                "made observed".to_owned()
            ),
            (
                "sub/.git/hooks/pre-commit".to_owned(),
                "removed gate".to_owned()
            ),
            ("two/.git".to_owned(), "made observed".to_owned()),
            ("two/.git".to_owned(), "removed gate".to_owned()),
        ],
        "{shown}"
    );
    let id = shown["task"]["task_id"].as_str().unwrap().to_owned();
    let (code, undone) = rollback(ws.path(), &id);
    assert_eq!(code, 0, "{undone}");
    // Rolled back whole: neither the repository nor the command's file is
    // left (folders a rollback empties stay, as they do for any task).
    for gone in [
        "sub/.git/config",
        "sub/.git/hooks/pre-commit",
        "two/.git",
        "sub/file.txt",
    ] {
        assert!(!ws.path().join(gone).exists(), "{gone}: {undone}");
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("vendor/dep/.git/config")).unwrap(),
        "[core]\n"
    );
}

/// A repository where the sweep does not look — at a root that had none,
/// in a folder `.gitignore` names — made by a command goes too: its
/// `core.fsmonitor` would run in the person's next `git status`.
#[cfg(target_os = "linux")]
#[test]
fn a_repository_made_at_a_root_without_one_or_in_an_ignored_folder_is_removed() {
    let ws = workspace(&[(".gitignore", "ignored/\n"), ("keep.txt", "k\n")]);
    let (code, out) = run(
        ws.path(),
        r#"run "mkdir -p .git/hooks && printf '[core]\n\tfsmonitor = touch /tmp/owned\n' > .git/config && mkdir -p ignored/x/.git && printf '[core]\n' > ignored/x/.git/config && echo made > ignored/x/file.txt""#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(!ws.path().join(".git").exists(), "{out}");
    assert!(!ws.path().join("ignored/x/.git").exists(), "{out}");
    // What is not a repository stays.
    assert_eq!(
        std::fs::read_to_string(ws.path().join("ignored/x/file.txt")).unwrap(),
        "made\n"
    );
    // The removals are recorded with the task, so a rollback can answer
    // for them too.
    let shown = only_task(ws.path());
    let mut removed: Vec<(String, String)> = shown["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_owned(),
                s["origin"].as_str().unwrap().to_owned(),
            )
        })
        .filter(|(path, _)| path.contains(".git"))
        .collect();
    removed.sort();
    assert_eq!(
        removed,
        [
            (".git/config".to_owned(), "gate".to_owned()),
            ("ignored/x/.git/config".to_owned(), "gate".to_owned()),
        ],
        "{shown}"
    );
}

/// The real, sealed `cocode` run by a person who is not root (run as root,
/// the test drops to `nobody`): every namespace is there — the doctor says
/// so — and a command writes a new file at the workspace root while `.git`
/// stays read-only. A sealed cocode is undumpable, and its forks could not
/// write their user namespace's maps before.
#[cfg(target_os = "linux")]
#[test]
fn a_person_who_is_not_root_gets_every_namespace_from_the_sealed_binary() {
    use std::os::unix::process::CommandExt as _;
    // Who runs the test.
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    if !root {
        eprintln!("skipping: the test drops from root to another user; run as root to run it");
        return;
    }
    let userns = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
        .is_ok_and(|v| v.trim() != "0")
        && std::fs::read_to_string("/proc/sys/kernel/unprivileged_userns_clone")
            .map_or(true, |v| v.trim() == "1")
        && std::fs::read_to_string("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
            .map_or(true, |v| v.trim() == "0");
    if !peers::require("unprivileged user namespaces", userns) {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let ws = base.path().join("ws");
    let home = base.path().join("home");
    for dir in [ws.join(".git"), home.clone()] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join("keep.txt"), "k\n").unwrap();
    let nobody = 65534;
    for entry in [
        base.path(),
        &ws,
        &ws.join(".git"),
        &ws.join(".git/config"),
        &ws.join("keep.txt"),
        &home,
    ] {
        std::os::unix::fs::chown(entry, Some(nobody), Some(nobody)).unwrap();
    }
    let as_nobody = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
            .args(args)
            .uid(nobody)
            .gid(nobody)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &home)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let dir = ws.to_str().unwrap();
    let (_, doctor) = as_nobody(&["doctor", "--workspace", dir]);
    for line in [
        "command lifetime (a PID namespace per agent command; nothing it starts outlives it or cocode): active",
        "processes out of sight (a private /proc per agent command; cocode, its parent and other users' processes are not visible): active",
    ] {
        assert!(doctor.lines().any(|l| l == line), "{line}\n{doctor}");
    }
    assert!(
        doctor.contains(
            "read-only to agent commands: active — .cocode, .git, .hg, .svn, .jj, .bzr at any depth"
        ),
        "{doctor}"
    );
    let (code, out) = as_nobody(&[
        "task",
        "run",
        "--workspace",
        dir,
        "--prompt",
        r#"run "echo made > top.txt; echo x >> .git/config 2>/dev/null; true""#,
        "--yes",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.join("top.txt")).unwrap(),
        "made\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
}

/// A file name can hold a line feed (a forged `task …: completed` line
/// of its own) or a right-to-left override (`gpj.exe` shown as `exe.jpg`):
/// the command line shows both escaped, on the path's own line.
#[cfg(target_os = "linux")]
#[test]
fn a_newline_or_an_override_in_a_file_name_is_printed_escaped() {
    let ws = workspace(&[("out/keep.txt", "k\n")]);
    let (code, out) = run(
        ws.path(),
        r#"run "IFS=; f=$(printf 'out/evil\ntask 9: completed \\342\\200\\256gpj.exe'); printf x > $f""#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    let shown = only_task(ws.path());
    let id = shown["task"]["task_id"].as_str().unwrap().to_owned();
    assert_eq!(
        recorded(&shown)[0].0,
        "out/evil\ntask 9: completed \u{202e}gpj.exe"
    );
    let (code, text) = cocode(&[
        "task",
        "show",
        &id,
        "--workspace",
        ws.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("    1. ") && l.contains("out/evil"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("out/evil\\u000atask 9: completed \\u202egpj.exe"),
        "{line}"
    );
    assert!(
        !text.lines().any(|l| l.starts_with("task 9")) && !text.contains('\u{202e}'),
        "{text}"
    );
    let (code, undone) = rollback(ws.path(), &id);
    assert_eq!(code, 0, "{undone}");
    assert!(
        undone.contains(
            "removed out/evil\\u000atask 9: completed \\u202egpj.exe (the task made it)\n"
        ),
        "{undone}"
    );
}

#[test]
fn escape_sequences_in_prompts_and_replies_are_printed_as_text() {
    let ws = workspace(&[("keep.txt", "k\n")]);
    let prompt = "\x1b]0;owned\x07\x1b[2Jclear the screen\u{9b}31m\u{7f}";
    let (_, out) = run(ws.path(), prompt, &["--yes"]);
    let (_, listed) = cocode(&["task", "list", "--workspace", ws.path().to_str().unwrap()]);
    for printed in [&out, &listed] {
        assert!(
            !printed.contains(['\x1b', '\x07', '\u{9b}', '\u{7f}']),
            "a control character reached the terminal: {printed:?}"
        );
    }
    assert!(
        listed.contains("\\u001b]0;owned\\u0007\\u001b[2Jclear the screen\\u009b31m"),
        "{listed}"
    );
    // `--json` output stays valid JSON and carries the prompt as it was.
    assert_eq!(only_task(ws.path())["task"]["prompt"], prompt);
}

/// A verification test that leaves a file behind: the file is recorded
/// with the task (origin `verification`) and its rollback removes it.
#[cfg(unix)]
#[test]
fn a_file_a_verification_test_writes_is_recorded_and_rolled_back() {
    if !peers::require_program("npm") {
        return;
    }
    let ws = workspace(&[
        (
            "package.json",
            r#"{"name": "v", "version": "1.0.0", "scripts": {"test": "node -e \"require('fs').writeFileSync('out/made.txt', 'left by the test')\""}}"#,
        ),
        ("out/keep.txt", "k\n"),
        ("notes.txt", "one\n"),
    ]);
    let (code, out) = run(
        ws.path(),
        r#"replace "one" with "two" in notes.txt"#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out/made.txt")).unwrap(),
        "left by the test"
    );
    let shown = only_task(ws.path());
    assert_eq!(
        recorded(&shown),
        vec![
            ("notes.txt".to_owned(), "gate".to_owned()),
            ("out/made.txt".to_owned(), "verification".to_owned()),
        ],
        "{shown}"
    );
    let id = shown["task"]["task_id"].as_str().unwrap().to_owned();
    let (code, out) = rollback(ws.path(), &id);
    assert_eq!(code, 0, "{out}");
    assert!(!ws.path().join("out/made.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(),
        "one\n"
    );
}

/// Eight runs at once on one file: one process writes the workspace at a
/// time; every run reported completed has its edit in the file, every other
/// was refused naming the holder, and the history stays sound.
#[test]
fn parallel_runs_on_one_workspace_complete_with_their_edit_or_are_refused() {
    let words: Vec<String> = (0..8).map(|n| format!("word{n}")).collect();
    let ws = workspace(&[("f.txt", &format!("{}\n", words.join("\n")))]);
    // The history exists before the runs race to create it.
    let (code, _) = cocode(&["task", "list", "--workspace", ws.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    let runs: Vec<_> = words
        .iter()
        .map(|w| {
            Command::new(env!("CARGO_BIN_EXE_cocode"))
                .args([
                    "task",
                    "run",
                    "--workspace",
                    ws.path().to_str().unwrap(),
                    "--prompt",
                    &format!(r#"replace "{w}" with "{}" in f.txt"#, w.to_uppercase()),
                    "--yes",
                ])
                .env("HOME", std::env::temp_dir())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let ended: Vec<_> = runs
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let text = std::fs::read_to_string(ws.path().join("f.txt")).unwrap();
    let mut completed = 0;
    for (w, out) in words.iter().zip(&ended) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(0) {
            completed += 1;
            assert!(text.contains(&w.to_uppercase()), "{w} lost: {text}");
        } else {
            assert!(
                stderr
                    .contains("the workspace is open for writing in another cocode process (pid "),
                "{w}: {stderr}"
            );
            assert!(text.contains(w.as_str()), "{w} refused but changed: {text}");
        }
    }
    assert!(completed >= 1, "no run completed");
    let (code, doctor) = cocode(&["doctor", "--workspace", ws.path().to_str().unwrap()]);
    assert!(doctor.contains("history: 0 problem(s)"), "{doctor}");
    assert_eq!(code, 0, "{doctor}");
}

/// Sets limits in the workspace's `workspace.json` (created by `task list`).
fn set_limits(ws: &Path, attempt_secs: u64, idle_secs: u64) {
    let (code, _) = cocode(&["task", "list", "--workspace", ws.to_str().unwrap()]);
    assert_eq!(code, 0);
    let path = ws.join(".cocode/config/workspace.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["limits"]["attempt_time_limit_secs"] = attempt_secs.into();
    config["limits"]["idle_limit_secs"] = idle_secs.into();
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
}

/// A provider that accepts connections and never answers.
fn silent_provider() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    url
}

fn run_silent(ws: &Path, extra: &[&str]) -> (i32, String) {
    let url = silent_provider();
    let mut args = vec![
        "task",
        "run",
        "--workspace",
        ws.to_str().unwrap(),
        "--prompt",
        "do something",
        "--backend",
        "openai",
        "--base-url",
        &url,
        "--api-key-env",
        "COCODE_TEST_KEY",
    ];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args(&args)
        .stdin(Stdio::null())
        .env("COCODE_TEST_KEY", "sk-test")
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn an_agent_that_goes_silent_fails_the_task_as_unresponsive() {
    let ws = workspace(&[("a.txt", "x\n")]);
    set_limits(ws.path(), 600, 1);
    let (code, out) = run_silent(ws.path(), &["--yes"]);
    assert_eq!(code, 1, "{out}");
    let task = only_task(ws.path())["task"].clone();
    assert_eq!(task["status"], "failed");
    assert_eq!(task["terminal_reason"]["reason"], "idle_timeout");
}

#[test]
fn an_attempt_out_of_time_is_recorded_as_a_failed_check_and_goes_to_a_person() {
    let ws = workspace(&[("a.txt", "x\n")]);
    set_limits(ws.path(), 1, 600);
    let (code, out) = run_silent(ws.path(), &["--deny-all"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the attempt ran out of time"), "{out}");
    let task = only_task(ws.path())["task"].clone();
    assert_eq!(task["status"], "rejected");
    let failed: Vec<&Value> = task["verification_log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"] == "fail")
        .collect();
    assert_eq!(failed.len(), 1, "{task}");
    assert_eq!(failed[0]["failure_class"], "failure:code_defect");
}

/// Registers the scripted ACP agent in the workspace's `workspace.json`.
#[cfg(unix)]
fn with_scripted_acp_agent(ws: &Path) {
    with_scripted_acp_agent_declaring(ws, &[]);
}

/// … declaring these secret variables.
#[cfg(unix)]
fn with_scripted_acp_agent_declaring(ws: &Path, secret_env: &[&str]) {
    let (code, _) = cocode(&["task", "list", "--workspace", ws.to_str().unwrap()]);
    assert_eq!(code, 0);
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../crates/acp/tests/agents/scripted_agent.py")
        .canonicalize()
        .unwrap();
    let path = ws.join(".cocode/config/workspace.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["acp_agents"] = serde_json::json!([{
        "id": "scripted",
        "display_name": "Scripted agent",
        "command": ["python3", script.to_str().unwrap()],
        "secret_env": secret_env,
    }]);
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
}

#[cfg(unix)]
#[test]
fn an_acp_agents_write_goes_through_approval_and_the_gate_and_the_task_completes() {
    let ws = workspace(&[("keep.txt", "k\n")]);
    with_scripted_acp_agent(ws.path());
    let (code, out) = run(
        ws.path(),
        "write out.txt hello from acp",
        &["--backend", "acp:scripted", "--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("written"), "{out}");
    assert!(
        out.lines().any(|l| l == "  Write out.txt out.txt [done]"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out.txt")).unwrap(),
        "hello from acp"
    );
    let shown = only_task(ws.path());
    assert_eq!(shown["task"]["status"], "completed");
    assert_eq!(
        shown["task"]["backend"],
        serde_json::json!({"kind": "acp", "agent_id": "scripted"})
    );
    assert_eq!(
        recorded(&shown),
        vec![("out.txt".to_owned(), "gate".to_owned())],
        "{shown}"
    );
}

#[cfg(unix)]
#[test]
fn an_acp_agent_reads_through_the_host_and_a_denied_write_changes_nothing() {
    let ws = workspace(&[("a.txt", "alpha\nbeta\n")]);
    with_scripted_acp_agent(ws.path());
    let (code, out) = run(
        ws.path(),
        "read a.txt",
        &["--backend", "acp:scripted", "--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("read: alpha\nbeta\n"), "{out}");

    let (code, out) = run(
        ws.path(),
        "write a.txt overwritten",
        &["--backend", "acp:scripted", "--deny-all"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("write failed: TOOL_APPROVAL_DENIED"), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "alpha\nbeta\n"
    );
}

#[cfg(target_os = "linux")]
#[path = "../../../tests/support/processes.rs"]
mod processes;

/// Ctrl-C (`SIGINT`) and `SIGTERM` of `task run` stop the task: the agent
/// is asked to cancel, and one that ignores it is killed after its grace
/// with every process it started; the task is saved as stopped.
#[cfg(target_os = "linux")]
#[test]
fn interrupting_task_run_stops_the_task_and_leaves_no_agent_process() {
    use std::io::BufRead as _;
    for (signal, prompt) in [("-INT", "stubborn"), ("-TERM", "hang")] {
        let ws = workspace(&[("a.txt", "alpha\n")]);
        with_scripted_acp_agent(ws.path());
        let root = ws.path().canonicalize().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_cocode"))
            .args(run_args(
                &root,
                prompt,
                &["--backend", "acp:scripted", "--yes"],
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("HOME", std::env::temp_dir())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen = String::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("→ running") {
                break;
            }
        }
        // The agent is up and in its turn.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while processes::in_folder(&root).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(
            !processes::in_folder(&root).is_empty(),
            "no agent ran: {seen}"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
        let killed = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let rest: Vec<String> = lines.map(Result::unwrap).collect();
        let status = child.wait().unwrap();
        let out = format!("{seen}{}", rest.join("\n"));
        assert_eq!(status.code(), Some(1), "{signal}: {out}");
        assert!(
            out.ends_with(": stopped: a person stopped it"),
            "{signal}: {out}"
        );
        assert_eq!(
            processes::in_folder(&root),
            Vec::<u32>::new(),
            "{signal}: {out}"
        );
    }
}

/// An agent that cannot reach its model says nothing for minutes: after
/// 15 quiet seconds the run says so, with the places the proxy refused
/// and the setting that allows an agent's model API.
#[cfg(unix)]
#[test]
fn a_quiet_agent_is_reported_with_the_hosts_the_proxy_refused_it() {
    let ws = workspace(&[("a.txt", "alpha\n")]);
    with_scripted_acp_agent(ws.path());
    let (_, out) = run(
        ws.path(),
        "offline http://127.0.0.1:9/v1/messages 17",
        &["--backend", "acp:scripted", "--yes"],
    );
    let told = "  no word from the agent for 15 s; it is still running; the proxy refused it 127.0.0.1:9 (an external agent's own model API belongs in model_hosts of its acp_agents entry)\ngave up on the model\n";
    assert!(out.contains(told), "{out}");
    assert!(
        out.contains("blocked hosts: 127.0.0.1:9 (the agent's own model API: model_hosts of its entry “scripted” in acp_agents; its commands: allowed_hosts; both in .cocode/config/workspace.json)\n"),
        "{out}"
    );
}

/// Library logs (here the launcher's warning about a state folder it
/// cannot make) go to the log file, not into `task run`'s output.
#[cfg(unix)]
#[test]
fn library_warnings_go_to_the_log_file_not_to_the_output_of_task_run() {
    let ws = workspace(&[("a.txt", "alpha\n")]);
    with_scripted_acp_agent(ws.path());
    let path = ws.path().join(".cocode/config/workspace.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["acp_agents"][0]["state_dirs"] = serde_json::json!(["/proc/cocode-no-such-state"]);
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args(run_args(
            ws.path(),
            "env HOME",
            &["--backend", "acp:scripted", "--yes"],
        ))
        .stdin(Stdio::null())
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env_remove("COCODE_LOG")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert_eq!(stderr, "", "{stdout}");
    assert!(
        !stdout.contains("WARN") && !stdout.contains('\u{1b}'),
        "{stdout}"
    );
    let logs = home.path().join("data/cocode/logs");
    let logged: String = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        logged.contains("WARN") && logged.contains("/proc/cocode-no-such-state"),
        "{logged}"
    );
    assert!(!logged.contains('\u{1b}'), "{logged}");
}

/// Runs `task run` on a terminal (a pseudo-terminal driven by Python),
/// answering `answer` to each question; returns the exit code, the output
/// and the questions asked.
#[cfg(unix)]
fn run_on_a_terminal(
    ws: &Path,
    prompt: &str,
    extra: &[&str],
    answer: &str,
) -> (i32, String, Vec<String>) {
    let driver = r#"
import os, pty, sys, json
answer = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
out, questions, pending = b"", [], b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    pending += chunk
    while b"[y/N] " in pending:
        asked, pending = pending.split(b"[y/N] ", 1)
        questions.append(asked.decode(errors="replace").splitlines()[-1].strip() + " [y/N]")
        os.write(fd, (answer + "\n").encode())
_, status = os.waitpid(pid, 0)
print(json.dumps({"code": os.waitstatus_to_exitcode(status), "out": out.decode(errors="replace"), "questions": questions}))
"#;
    let out = Command::new("python3")
        .args(["-c", driver, answer, env!("CARGO_BIN_EXE_cocode")])
        .args(run_args(ws, prompt, extra))
        .env("HOME", std::env::temp_dir())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (
        i32::try_from(v["code"].as_i64().unwrap()).unwrap(),
        v["out"].as_str().unwrap().replace("\r\n", "\n"),
        v["questions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q.as_str().unwrap().to_owned())
            .collect(),
    )
}

/// An external agent asks permission to write a file, then writes it
/// through the host: on a terminal the person is asked once for that
/// action (not again for the write), then once whether to accept the
/// task — and the verification results come before that question.
#[cfg(unix)]
#[test]
fn interactive_task_run_asks_once_per_action() {
    let ws = workspace(&[("a.txt", "alpha\n")]);
    with_scripted_acp_agent(ws.path());
    let (code, out, questions) = run_on_a_terminal(
        ws.path(),
        "permitwrite out.txt hello",
        &["--backend", "acp:scripted"],
        "y",
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out.txt")).unwrap(),
        "hello"
    );
    assert_eq!(questions.len(), 2, "{questions:#?}\n{out}");
    assert_eq!(
        questions[0], "The agent asks: Write out.txt — y: Allow once, n: Reject? [y/N]",
        "{questions:#?}"
    );
    // A text file has no check: verification decided nothing, and the
    // question says so rather than calling the task ready.
    assert!(
        questions[1].ends_with(
            "is ready; verification decided nothing (incomplete: nothing applied, so a person decides). Accept it as completed? [y/N]"
        ),
        "{questions:#?}"
    );
    let asked = out.find("Accept it as completed?").unwrap();
    let verified = out.find("verify parse check").unwrap();
    assert!(
        verified < asked,
        "verification came after the question:\n{out}"
    );
}

/// An agent reads a path before it creates the file there (Gemini CLI
/// does): a missing file inside the workspace reads as empty, as ACP
/// clients answer; a path outside stays refused, whether or not it exists.
#[cfg(unix)]
#[test]
fn an_acp_agent_reading_a_missing_file_gets_empty_content_but_outside_stays_refused() {
    let ws = workspace(&[("a.txt", "alpha\n")]);
    with_scripted_acp_agent(ws.path());
    let (code, out) = run(
        ws.path(),
        "read new/file.txt",
        &["--backend", "acp:scripted", "--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\nread: \n"), "{out}");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("there.txt"), "secret\n").unwrap();
    for name in ["there.txt", "absent.txt"] {
        let prompt = format!("read {}", outside.path().join(name).display());
        let (_, out) = run(ws.path(), &prompt, &["--backend", "acp:scripted", "--yes"]);
        assert!(
            out.contains("read failed: WORKSPACE_PATH_INVALID"),
            "{name}: {out}"
        );
        assert!(!out.contains("secret"), "{out}");
    }
}

/// An agent that gives up after a refusal (Codex ends its turn as
/// `cancelled` without being asked to) ends the task at once, saying why,
/// instead of waiting for the idle limit.
#[cfg(unix)]
#[test]
fn an_acp_agent_that_cancels_its_own_turn_after_a_refusal_ends_the_task_with_the_reason() {
    let ws = workspace(&[("a.txt", "alpha\n")]);
    with_scripted_acp_agent(ws.path());
    // Were the turn's end ignored, the idle limit would end the task.
    let path = ws.path().join(".cocode/config/workspace.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["limits"]["idle_limit_secs"] = 20.into();
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    let started = std::time::Instant::now();
    let (code, out) = run(
        ws.path(),
        "giveup",
        &["--backend", "acp:scripted", "--deny-all"],
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "it waited for the idle limit: {out}"
    );
    assert!(out.contains("refused; giving up"), "{out}");
    assert!(
        out.contains("the agent cancelled its own turn after a refusal (TOOL_APPROVAL_DENIED)"),
        "{out}"
    );
    assert!(!out.contains("idle"), "{out}");
    // Verified (nothing changed), then refused by `--deny-all`.
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("status: running → verifying its work\n"),
        "{out}"
    );
    assert!(
        out.ends_with(": rejected: a person rejected its result\n"),
        "{out}"
    );
}

/// An external agent that writes files with its own I/O (not through
/// `fs/write_text_file`): the turn is swept, the writes are recorded as the
/// task's observed snapshots — also those made before a command it runs —
/// and rollback restores the files byte for byte.
#[cfg(unix)]
#[test]
fn an_acp_agents_own_file_writes_are_recorded_and_rolled_back() {
    for (prompt, path) in [
        ("direct out/a.txt written by the agent itself", "out/a.txt"),
        ("direct-run out/b.txt written before a command", "out/b.txt"),
        ("direct keep.txt replaced by the agent", "keep.txt"),
    ] {
        let ws = workspace(&[("keep.txt", "k\n"), ("out/keep.txt", "k\n")]);
        with_scripted_acp_agent(ws.path());
        let (code, out) = run(ws.path(), prompt, &["--backend", "acp:scripted", "--yes"]);
        assert_eq!(code, 0, "{out}");
        // Before a command, the write is recorded as the command begins;
        // otherwise as the turn ends.
        assert!(
            prompt.starts_with("direct-run")
                || out.contains("the agent changed 1 file(s) itself; recorded with the task"),
            "{out}"
        );
        let written: String = prompt.splitn(3, ' ').nth(2).unwrap().to_owned();
        assert_eq!(
            std::fs::read_to_string(ws.path().join(path)).unwrap(),
            written
        );
        let shown = only_task(ws.path());
        assert_eq!(
            recorded(&shown),
            vec![(path.to_owned(), "observed".to_owned())],
            "{shown}"
        );
        let id = shown["task"]["task_id"].as_str().unwrap().to_owned();
        let (code, out) = rollback(ws.path(), &id);
        assert_eq!(code, 0, "{out}");
        if path == "keep.txt" {
            assert_eq!(
                std::fs::read_to_string(ws.path().join(path)).unwrap(),
                "k\n"
            );
        } else {
            assert!(!ws.path().join(path).exists(), "{path}");
        }
    }
}

/// An ACP agent that changes a test file with its own I/O (not through
/// the client's write) meets the same rule: the file goes back to its
/// base and the change waits for a person; approving applies it.
#[cfg(unix)]
#[test]
fn a_test_file_an_acp_agent_changed_itself_waits_for_approval() {
    let ws = workspace(&[("tests/test_a.py", "assert 1 == 1\n")]);
    with_scripted_acp_agent(ws.path());
    let (code, out) = run(
        ws.path(),
        "direct tests/test_a.py assert 2 == 2",
        &["--backend", "acp:scripted", "--approve-all-edits"],
    );
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("a test change waits for approval: tests/test_a.py"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("tests/test_a.py")).unwrap(),
        "assert 1 == 1\n"
    );
    let shown = only_task(ws.path());
    assert_eq!(recorded(&shown), vec![], "{shown}");
    let id = shown["task"]["task_id"].as_str().unwrap().to_owned();
    let (code, out) = cocode(&[
        "task",
        "approve",
        &id,
        "--workspace",
        ws.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("tests/test_a.py")).unwrap(),
        "assert 2 == 2"
    );
}

/// Two interrupts at once while an ACP agent works (it wrote a file with
/// its own I/O): cocode quits at once at the second, and the next look at
/// the workspace
/// finds the task ended, never "running", with the agent's write recorded
/// and rolled back.
#[cfg(unix)]
#[test]
fn two_interrupts_at_once_during_an_acp_turn_leave_the_agents_write_recorded() {
    let ws = workspace(&[("out/keep.txt", "k\n")]);
    with_scripted_acp_agent(ws.path());
    let mut child = spawn_run(
        ws.path(),
        "direct-hang out/a.txt written",
        &["--backend", "acp:scripted", "--yes"],
    );
    let written = ws.path().join("out/a.txt");
    wait_for(&written, "the agent's write");
    let pid = child.id().to_string();
    let status = Command::new("sh")
        // Two of one kind at once merge into one; an interrupt and a
        // termination do not.
        .args(["-c", &format!("kill -INT {pid}; kill -TERM {pid}")])
        .status()
        .unwrap();
    assert!(status.success());
    // The second ends cocode at once, mid-turn.
    let exited = child.wait().unwrap();
    assert_eq!(exited.code(), Some(130));
    let shown = only_task(ws.path());
    // Ended either way: saved as stopped when the first was handled before
    // the second ended cocode, else failed at the next look.
    let status = shown["task"]["status"].as_str().unwrap();
    assert!(matches!(status, "failed" | "stopped"), "{shown:#}");
    assert_eq!(
        recorded(&shown),
        vec![("out/a.txt".to_owned(), "observed".to_owned())],
        "{shown:#}"
    );
    let id = shown["task"]["task_id"].as_str().unwrap().to_owned();
    let (code, out) = rollback(ws.path(), &id);
    assert_eq!(code, 0, "{out}");
    assert!(!written.exists());
}

#[cfg(unix)]
#[test]
fn an_acp_agents_terminal_runs_sandboxed_its_changes_are_recorded_and_its_output_is_shown() {
    // Commands write inside the workspace's existing top-level entries.
    let ws = workspace(&[("keep.txt", "k\n"), ("out/keep.txt", "k\n")]);
    with_scripted_acp_agent(ws.path());
    let (code, out) = run(
        ws.path(),
        "run printf made > out/made.txt && echo done",
        &["--backend", "acp:scripted", "--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("exit 0 signal None truncated False released ACP_UNKNOWN_TERMINAL: done\n"),
        "{out}"
    );
    assert!(
        out.contains("  terminal term-1 exited 0\n    | done\n"),
        "the output stays in the transcript after release: {out}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out/made.txt")).unwrap(),
        "made"
    );
    let shown = only_task(ws.path());
    assert_eq!(
        recorded(&shown),
        vec![("out/made.txt".to_owned(), "observed".to_owned())],
        "{shown}"
    );
}

#[cfg(unix)]
#[test]
fn an_acp_agent_killing_its_terminal_stops_the_command_and_a_denied_one_never_runs() {
    let ws = workspace(&[("keep.txt", "k\n")]);
    with_scripted_acp_agent(ws.path());
    let (code, out) = run(ws.path(), "kill", &["--backend", "acp:scripted", "--yes"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("exit None signal SIGKILL truncated False"),
        "the host stopped `sleep 30` when the agent killed it: {out}"
    );

    let (code, out) = run(
        ws.path(),
        "run touch never.txt",
        &["--backend", "acp:scripted", "--deny-all"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("wait failed: TOOL_APPROVAL_DENIED"), "{out}");
    assert!(!ws.path().join("never.txt").exists());
}

#[cfg(unix)]
#[test]
fn an_acp_agent_sees_its_commands_output_while_it_runs() {
    let ws = workspace(&[("keep.txt", "k\n")]);
    with_scripted_acp_agent(ws.path());
    let (code, out) = run(
        ws.path(),
        "watch echo first; sleep 2; echo second",
        &["--backend", "acp:scripted", "--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("while running: 'first\\n'; exit 0: 'first\\nsecond\\n'"),
        "{out}"
    );
}

#[cfg(unix)]
#[test]
fn pass_env_gives_an_acp_agent_its_declared_secret_for_one_run_only() {
    let ws = workspace(&[("keep.txt", "k\n")]);
    with_scripted_acp_agent_declaring(ws.path(), &["SCRIPTED_API_KEY"]);
    let run_with = |extra: &[&str]| {
        let mut args = vec![
            "task",
            "run",
            "--workspace",
            ws.path().to_str().unwrap(),
            "--prompt",
            "env SCRIPTED_API_KEY",
            "--backend",
            "acp:scripted",
            "--yes",
            "--trust-workspace",
        ];
        args.extend_from_slice(extra);
        let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
            .args(&args)
            .stdin(Stdio::null())
            .env("HOME", std::env::temp_dir())
            .env("SCRIPTED_API_KEY", "from-env")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run_with(&["--pass-env", "SCRIPTED_API_KEY"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("env: from-env"), "{out}");
    // In cocode's environment is not enough: nothing passes implicitly.
    let (code, out, err) = run_with(&[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("env: unset"), "{out}");
    // A name the agent did not declare is refused before anything runs.
    let (code, out, err) = run_with(&["--pass-env", "HOME_TOKEN"]);
    assert_ne!(code, Some(0), "{out}");
    assert!(
        err.contains("--pass-env HOME_TOKEN: Scripted agent declares no such secret variable (it declares: SCRIPTED_API_KEY)"),
        "{err}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_run_names_the_hosts_the_proxy_refused() {
    let ws = workspace(&[("notes.txt", "n\n")]);
    let (_, out) = run(
        ws.path(),
        r#"run "curl -s -o /dev/null http://blocked.example/""#,
        &["--yes"],
    );
    assert!(
        out.contains("blocked hosts: blocked.example:80 (allow them in allowed_hosts of .cocode/config/workspace.json)"),
        "{out}"
    );
}

/// A task that writes a lockfile naming a host does not grant itself (or a
/// later task) that host: the proxy refuses it, and the run names the file
/// and the task that asked for it.
#[cfg(target_os = "linux")]
#[test]
fn a_host_a_task_wrote_into_a_lockfile_stays_refused_until_a_person_allows_it() {
    let ws = workspace(&[
        ("go.mod", "module example.com/m\n"),
        ("go.sum", "golang.org/x/text v0.3.0 h1:abc=\n"),
    ]);
    let (code, out) = run(
        ws.path(),
        r#"replace "golang.org/x/text v0.3.0 h1:abc=" with "http://127.0.0.1/evil/mod v1.0.0 h1:x=" in go.sum"#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    let writer = only_task(ws.path())["task"]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, out) = run(
        ws.path(),
        r#"run "curl -s -o /dev/null http://127.0.0.1/""#,
        &["--yes"],
    );
    assert!(
        out.contains(&format!(
            "blocked hosts: 127.0.0.1:80 (allow them in allowed_hosts of .cocode/config/workspace.json)\n  127.0.0.1: named in go.sum by an edit of task {writer}: allowed only once a person allows it\n"
        )),
        "{out}"
    );
    let (_, doctor) = cocode(&["doctor", "--workspace", ws.path().to_str().unwrap()]);
    assert!(
        doctor.contains(&format!("\n  127.0.0.1 — in go.sum, by task {writer}\n")),
        "{doctor}"
    );
}

/// Whether `cargo` is on PATH; under CI it must be.
#[cfg(unix)]
fn have_cargo() -> bool {
    peers::require_program("cargo")
}

/// Copies a fixture project from `tests/fixtures/`.
#[cfg(unix)]
fn fixture_project(name: &str) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.path().is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures")
            .join(name),
        dir.path(),
    );
    dir
}

#[cfg(unix)]
#[test]
fn a_cargo_project_task_completes_by_self_verification_with_the_real_toolchain() {
    if !have_cargo() {
        return;
    }
    let ws = fixture_project("cargo-crate");
    let (code, out) = run(
        ws.path(),
        r#"replace "a + b" with "b + a" in src/lib.rs"#,
        &["--yes", "--completion-mode", "self_verification"],
    );
    assert_eq!(code, 0, "{out}");
    for line in [
        "  verify static analysis: passed",
        "  verify build: passed",
        "  verify tests: passed",
        "status: verifying its work → completed",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in\n{out}");
    }
    assert!(
        std::fs::read_to_string(ws.path().join("src/lib.rs"))
            .unwrap()
            .contains("b + a")
    );
    let task = only_task(ws.path())["task"].clone();
    assert_eq!(task["terminal_reason"]["reason"], "verified");
}

/// The project check taken before the task's first edit (so verification
/// counts only new problems) writes too: `cargo` makes a missing
/// `Cargo.lock`. That file is recorded with the task, and a rollback to its
/// start leaves the project as it was, without one.
#[cfg(unix)]
#[test]
fn the_lock_file_the_check_before_the_task_makes_is_recorded_and_rolled_back() {
    if !have_cargo() {
        return;
    }
    let ws = fixture_project("cargo-crate");
    std::fs::remove_file(ws.path().join("Cargo.lock")).unwrap();
    let (code, out) = run(
        ws.path(),
        r#"replace "a + b" with "b + a" in src/lib.rs"#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines()
            .any(|l| l == "  verification changed 1 file(s); recorded with the task"),
        "{out}"
    );
    assert!(ws.path().join("Cargo.lock").is_file());
    let task = only_task(ws.path());
    let id = task["task"]["task_id"].as_str().unwrap().to_owned();
    let (code, out) = rollback(ws.path(), &id);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines()
            .any(|l| l == "removed Cargo.lock (the task made it)"),
        "{out}"
    );
    assert!(!ws.path().join("Cargo.lock").exists());
    assert!(
        std::fs::read_to_string(ws.path().join("src/lib.rs"))
            .unwrap()
            .contains("a + b")
    );
}

/// A loopback OpenAI-compatible server that answers every chat completion
/// with `reply(n)` (n = 1, 2, …) as a whole JSON body.
/// Every request body it was sent is kept.
#[cfg(unix)]
fn recording_provider(
    reply: fn(usize) -> Value,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&bodies);
    std::thread::spawn(move || {
        let mut n = 0;
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&body).into_owned());
            n += 1;
            let payload = reply(n).to_string();
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{payload}",
                payload.len()
            );
        }
    });
    (url, bodies)
}

#[cfg(unix)]
fn completion_with_call(id: &str, name: &str, arguments: &Value) -> Value {
    serde_json::json!({"id": "x", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}}]},
        "finish_reason": "tool_calls"}]})
}

/// The model breaks `add` once, then declares every attempt done.
#[cfg(unix)]
fn breaking_model(n: usize) -> Value {
    if n == 1 {
        completion_with_call(
            "c1",
            "workspace__applyPatch",
            &serde_json::json!({"path": "src/lib.rs", "search": "a + b", "replace": "a - b"}),
        )
    } else {
        completion_with_call(
            &format!("c{n}"),
            "task__finish",
            &serde_json::json!({"summary": "changed add"}),
        )
    }
}

/// The first message sent to the model that starts with `start`.
#[cfg(unix)]
fn first_message_starting(bodies: &[String], start: &str) -> String {
    bodies
        .iter()
        .find_map(|b| {
            let body: Value = serde_json::from_str(b).ok()?;
            body["messages"].as_array()?.iter().rev().find_map(|m| {
                let text = m["content"].as_str()?;
                text.starts_with(start).then(|| text.to_owned())
            })
        })
        .unwrap_or_else(|| {
            panic!(
                "no message starting {start:?} among {} requests",
                bodies.len()
            )
        })
}

#[cfg(unix)]
#[test]
fn a_change_that_breaks_a_test_is_retried_three_times_and_then_fails() {
    if !have_cargo() {
        return;
    }
    let (url, bodies) = recording_provider(breaking_model);
    let ws = fixture_project("cargo-crate");
    let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args([
            "task",
            "run",
            "--workspace",
            ws.path().to_str().unwrap(),
            "--prompt",
            "improve add",
            "--backend",
            "openai",
            "--model",
            "scripted",
            "--base-url",
            &url,
            "--api-key-env",
            "COCODE_TEST_KEY",
            "--yes",
            "--completion-mode",
            "self_verification",
        ])
        .stdin(Stdio::null())
        .env("COCODE_TEST_KEY", "sk-test")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let task = only_task(ws.path())["task"].clone();
    assert_eq!(task["status"], "failed", "{stdout}");
    assert_eq!(task["terminal_reason"]["reason"], "retries_exhausted");
    assert_eq!(
        (task["retry_count"].as_u64(), task["attempt_no"].as_u64()),
        (Some(3), Some(3))
    );
    let failed_tests: Vec<u64> = task["verification_log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["method"] == "tests" && r["result"] == "fail")
        .map(|r| r["attempt_no"].as_u64().unwrap())
        .collect();
    assert_eq!(
        failed_tests,
        vec![0, 1, 2, 3],
        "four attempts, each with failing tests"
    );
    // The model was told which test failed and how, not only an exit code.
    let retry = first_message_starting(&bodies.lock().unwrap(), "Verification of attempt 1 failed");

    assert!(
        retry.contains(
            "- tests: failed (failure:code_defect), exit code 101\n  what failed:\n    failed test tests::adds at src/lib.rs:10:9\n"
        ),
        "{retry}"
    );
    for needed in ["        left: -1", "       right: 5"] {
        assert!(retry.lines().any(|l| l == needed), "{needed}\n{retry}");
    }
    // `thread 'tests::adds' (40) panicked at …`: the id depends on the run.
    assert!(
        retry
            .lines()
            .any(|l| l.starts_with("      thread 'tests::adds'")
                && l.ends_with("panicked at src/lib.rs:10:9:")),
        "{retry}"
    );
    // The record on disk names it too.
    let first = task["verification_log"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["method"] == "tests")
        .unwrap()
        .clone();
    assert_eq!(first["findings"][0]["name"], "tests::adds");
    assert_eq!(first["findings"][0]["place"], "src/lib.rs:10:9");
    // And `task show` prints it in words.
    let id = task["task_id"].as_str().unwrap().to_owned();
    let show = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args([
            "task",
            "show",
            &id,
            "--workspace",
            ws.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        shown.contains("failed test tests::adds at src/lib.rs:10:9"),
        "{shown}"
    );
}

#[cfg(unix)]
#[test]
fn a_killed_cli_run_leaves_a_clean_history_and_its_task_shows_failed() {
    let ws = workspace(&[("a.txt", "x\n")]);
    set_limits(ws.path(), 600, 600);
    let url = silent_provider();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args([
            "task",
            "run",
            "--workspace",
            ws.path().to_str().unwrap(),
            "--prompt",
            "wait",
            "--backend",
            "openai",
            "--base-url",
            &url,
            "--api-key-env",
            "COCODE_TEST_KEY",
            "--yes",
        ])
        .env("COCODE_TEST_KEY", "sk-test")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let list = || cocode(&["task", "list", "--workspace", ws.path().to_str().unwrap()]).1;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !list().contains("\trunning\t") {
        assert!(
            std::time::Instant::now() < deadline,
            "the task never ran: {}",
            list()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Another process looking at the workspace leaves a live run alone.
    assert!(list().contains("\trunning\t"));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        list().contains("\tfailed: cocode restarted while it ran\t"),
        "{}",
        list()
    );
    let (code, doctor) = cocode(&["doctor", "--workspace", ws.path().to_str().unwrap()]);
    assert!(doctor.contains("history: 0 problem(s)"), "{doctor}");
    assert_eq!(code, 0, "{doctor}");
}

/// `kill -9` of cocode while an agent command runs: the command and what
/// it started in a new session are gone at once, and nothing is written
/// afterwards.
#[cfg(target_os = "linux")]
#[test]
fn the_commands_of_a_killed_cocode_die_with_it_and_write_nothing_afterwards() {
    if !peers::require(
        "PID namespaces for agent launches",
        cocode_toolchain::reaper::available(),
    ) {
        return;
    }
    let ws = workspace(&[("out/keep.txt", "k\n")]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args([
            "task",
            "run",
            "--workspace",
            ws.path().to_str().unwrap(),
            "--prompt",
            r#"run "setsid sh -c 'sleep 3; echo late > out/setsid' & sh -c '(sleep 3; echo late > out/double) &'; echo started > out/started; sleep 60""#,
            "--yes",
        ])
        .env("HOME", std::env::temp_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = ws.path().join("out/started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Past the moment the two descendants would have written.
    std::thread::sleep(std::time::Duration::from_secs(5));
    let mut left: Vec<String> = std::fs::read_dir(ws.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["keep.txt", "started"]);
}

/// `kill -9` of cocode during an agent command, then a new start: the
/// command's earlier writes are recorded with its task (not lost as they
/// were), the task says cocode ended, and a rollback undoes them.
#[test]
fn the_writes_of_a_command_cocode_was_killed_during_are_recorded_and_rolled_back() {
    let ws = workspace(&[("a.txt", "a\n"), ("gone.txt", "g\n")]);
    let mut child = spawn_run(
        ws.path(),
        r#"run "echo written > a.txt; rm gone.txt; echo started > started.txt; sleep 60""#,
        &["--yes"],
    );
    wait_for(&ws.path().join("started.txt"), "the command's start");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let task = only_task(ws.path());
    let id = task["task"]["task_id"].as_str().unwrap().to_owned();
    assert_eq!(
        recorded_paths(&task),
        ["a.txt", "gone.txt", "started.txt"],
        "{task:#}"
    );
    let (code, out) = rollback(ws.path(), &id);
    assert_eq!(code, 0, "{out}");
    let mut left: Vec<(String, String)> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            ("a.txt".to_owned(), "a\n".to_owned()),
            ("gone.txt".to_owned(), "g\n".to_owned())
        ]
    );
}

/// A link, a FIFO and a mode change a command makes are recorded as what
/// they are, said so by `task show`, and undone by `rollback`.
#[cfg(unix)]
#[test]
fn links_fifos_and_mode_bits_from_a_command_are_shown_and_rolled_back() {
    use std::os::unix::fs::PermissionsExt as _;
    let ws = workspace(&[("a.sh", "echo a\n")]);
    let (code, out) = run(
        ws.path(),
        r#"run "chmod 755 a.sh; ln -s a.sh link; mkfifo pipe""#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    let id = only_task(ws.path())["task"]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, shown) = cocode(&[
        "task",
        "show",
        &id,
        "--workspace",
        ws.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{shown}");
    for line in [
        "1. modified a.sh · attempt 1 · changed while the task ran (author unknown) · a file → executable",
        "2. created link · attempt 1 · changed while the task ran (author unknown) · nothing → a link",
        "3. created pipe · attempt 1 · changed while the task ran (author unknown) · nothing → a FIFO",
    ] {
        assert!(shown.contains(line), "{line}\n{shown}");
    }
    let (code, out) = rollback(ws.path(), &id);
    assert_eq!(code, 0, "{out}");
    assert!(ws.path().join("link").symlink_metadata().is_err());
    assert!(ws.path().join("pipe").symlink_metadata().is_err());
    let mode = ws
        .path()
        .join("a.sh")
        .metadata()
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0, "{mode:o}");
}

/// A file name that is not UTF-8, made by a command: recorded by its bytes,
/// shown escaped by `task show`, and removed by `rollback`.
#[cfg(unix)]
#[test]
fn a_name_that_is_not_text_is_shown_escaped_and_rolled_back() {
    let ws = workspace(&[("a.txt", "a\n")]);
    let (code, out) = run(
        ws.path(),
        r#"run "printf latin1 > \"$(printf 'caf\\351.txt')\"""#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    let id = only_task(ws.path())["task"]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, shown) = cocode(&[
        "task",
        "show",
        &id,
        "--workspace",
        ws.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains(
            r"1. created caf\xe9.txt · attempt 1 · changed while the task ran (author unknown)"
        ),
        "{shown}"
    );
    let (code, out) = rollback(ws.path(), &id);
    assert_eq!(code, 0, "{out}");
    let left: Vec<_> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != ".cocode")
        .collect();
    assert_eq!(left, ["a.txt"]);
}

/// A rollback that would revert what changed while a command ran (the
/// command's, or someone else's: cocode cannot tell) names those files and
/// asks; without a terminal to ask on and without `--yes`, nothing is
/// touched.
#[test]
fn a_rollback_of_changes_made_while_a_command_ran_asks_first() {
    let ws = workspace(&[("a.txt", "a\n")]);
    let (code, out) = run(ws.path(), r#"run "echo changed > a.txt""#, &["--yes"]);
    assert_eq!(code, 0, "{out}");
    let id = only_task(ws.path())["task"]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, out) = cocode(&[
        "rollback",
        "--workspace",
        ws.path().to_str().unwrap(),
        "--task",
        &id,
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out,
        "1 path(s) changed while the task ran, and cocode cannot tell whether the task or someone else changed them; rolling back reverts them too:\n  a.txt\nrollback not run: nothing was touched (pass --yes to revert them too)\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "changed\n"
    );
    let (code, out) = rollback(ws.path(), &id);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "a\n"
    );
}

#[test]
fn history_over_the_retention_cap_shrinks_when_a_task_ends() {
    let ws = workspace(&[("a.txt", "one\n"), ("b.txt", "one\n")]);
    let (code, out) = run(
        ws.path(),
        r#"replace "one" with "two" in a.txt"#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    let first = only_task(ws.path());
    let first_id = first["task"]["task_id"].as_str().unwrap().to_owned();
    assert_eq!(first["snapshots"].as_array().unwrap().len(), 1);
    // The person lowers the history's cap below what it holds now.
    let config_path = ws.path().join(".cocode/config/workspace.json");
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["retention"] = serde_json::json!({"keep_recent_per_path": 1, "byte_cap": 1});
    std::fs::write(&config_path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();

    let (code, out) = run(
        ws.path(),
        r#"replace "one" with "two" in b.txt"#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    let show = |id: &str| -> Value {
        let (code, shown) = cocode(&[
            "task",
            "show",
            id,
            "--json",
            "--workspace",
            ws.path().to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{shown}");
        serde_json::from_str(&shown).unwrap()
    };
    // The older task's snapshots went when the newer one ended; the task
    // that ended last always keeps its history.
    assert_eq!(show(&first_id)["snapshots"], serde_json::json!([]));
    assert!(
        ws.path()
            .join(".cocode/history/tasks")
            .join(&first_id)
            .join("retention.json")
            .is_file()
    );
    let (_, list) = cocode(&["task", "list", "--workspace", ws.path().to_str().unwrap()]);
    let second_id = list
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .find(|id| *id != first_id)
        .unwrap()
        .to_owned();
    assert_eq!(recorded_paths(&show(&second_id)), vec!["b.txt".to_owned()]);
}

fn recorded_paths(shown: &Value) -> Vec<String> {
    shown["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_blocked_path_is_listed_by_doctor_and_released_by_abandon() {
    use cocode_core::gate::{GateOp, TaskContext, WorkspaceFileGate as _};
    let ws = workspace(&[("a.txt", "old\n")]);
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let root_arg = root.to_str().unwrap();
    // An operation whose journal is left behind while the file ends up in a
    // third state: recovery can neither finish nor undo it.
    let (layout, journal, saved) = {
        let open = cocode_workspace::OpenWorkspace::open(&root).unwrap();
        let ctx = TaskContext {
            task_id: cocode_core::TaskId::new("t1").unwrap(),
            session_id: cocode_core::SessionId::new("t1-s0").unwrap(),
            attempt_no: cocode_core::AttemptNo(0),
        };
        open.gate
            .apply(
                &ctx,
                GateOp::Write {
                    path: cocode_core::NormalizedPath::try_from("a.txt".to_owned()).unwrap(),
                    bytes: b"new\n".to_vec(),
                },
            )
            .unwrap();
        let journal = std::fs::read_dir(open.layout.write_journal_dir())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let saved = std::fs::read(&journal).unwrap();
        (open.layout.clone(), journal, saved)
    };
    std::fs::write(&journal, &saved).unwrap();
    std::fs::remove_dir_all(layout.tasks_dir()).unwrap();
    std::fs::remove_dir_all(layout.files_dir()).unwrap();
    std::fs::write(root.join("a.txt"), "third\n").unwrap();

    let (code, doctor) = cocode(&["doctor", "--workspace", root_arg]);
    assert_eq!(code, 1, "{doctor}");
    assert!(doctor.contains("\nblocked paths: 1 "), "{doctor}");
    let line = doctor
        .lines()
        .find(|l| l.starts_with("  a.txt — journal "))
        .unwrap_or_else(|| panic!("{doctor}"));
    let op = line["  a.txt — journal ".len()..]
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(
        line,
        format!(
            "  a.txt — journal {op}; keep the file as it is now with: cocode doctor --abandon {op} --workspace {root_arg}"
        )
    );
    // While blocked, an agent cannot write it.
    let (code, out) = run(&root, r#"replace "third" with "x" in a.txt"#, &["--yes"]);
    assert_ne!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "third\n"
    );

    let (code, out) = cocode(&["doctor", "--abandon", &op, "--workspace", root_arg]);
    assert_eq!(
        (code, out),
        (
            0,
            format!(
                "released a.txt: kept as it is now\njournal {op} is kept in the history's abandoned folder\n"
            )
        )
    );
    assert!(
        layout
            .abandoned_journal_dir()
            .join(format!("{op}.json"))
            .is_file()
    );
    let (code, doctor) = cocode(&["doctor", "--workspace", root_arg]);
    assert!(doctor.contains("\nblocked paths: none\n"), "{doctor}");
    assert_eq!(code, 0, "{doctor}");
    let (code, out) = cocode(&["doctor", "--abandon", &op, "--workspace", root_arg]);
    assert_eq!(
        (code, out),
        (3, String::new()),
        "a released journal is gone"
    );

    let (code, out) = run(&root, r#"replace "third" with "x" in a.txt"#, &["--yes"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "x\n");
}

/// `cocode task run` with `input` on its standard input.
fn run_with_input(ws: &Path, prompt: &str, extra: &[&str], input: &str) -> (i32, String) {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args(run_args(ws, prompt, extra))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("HOME", std::env::temp_dir())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn an_interactive_run_reads_the_persons_reply_and_the_agent_goes_on_with_it() {
    let ws = workspace(&[("notes.txt", "n\n")]);
    // The local agent does not understand the first prompt and ends its
    // turn; the reply tells it what to do, in the same task.
    let (code, out) = run_with_input(
        ws.path(),
        "tidy things up",
        &["--interactive", "--yes"],
        "create out.txt with \"hi\"\n",
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out.txt")).unwrap(),
        "hi"
    );
    assert!(out.contains("I am the local agent"), "{out}");
    assert!(
        out.lines().any(|l| l == "you: create out.txt with \"hi\""),
        "{out}"
    );
    assert!(
        out.contains("status: running → waiting for a person"),
        "{out}"
    );
    let shown = only_task(ws.path());
    assert_eq!(shown["task"]["status"], "completed");
    assert_eq!(
        shown["task"]["attempt_no"], 0,
        "the reply is the same attempt"
    );

    // An empty reply ends the task as a run without a person would.
    let ws = workspace(&[("notes.txt", "n\n")]);
    let (code, out) = run_with_input(ws.path(), "tidy things up", &["--interactive"], "\n");
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        only_task(ws.path())["task"]["terminal_reason"],
        serde_json::json!({"reason": "agent_ended_unfinished"})
    );
}

#[test]
fn a_run_is_refused_while_the_folders_own_settings_grant_what_was_not_confirmed() {
    let ws = workspace(&[("keep.txt", "k\n")]);
    let (code, _) = cocode(&["task", "list", "--workspace", ws.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    let path = ws.path().join(".cocode/config/workspace.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["allowed_hosts"] = serde_json::json!(["example.org"]);
    std::fs::write(&path, config.to_string()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
            .args(run_args(ws.path(), r#"run "true""#, extra))
            .stdin(Stdio::null())
            .env("HOME", home.path())
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["--yes"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert_eq!(
        err,
        "cocode: this folder's .cocode/config/workspace.json grants what you have not confirmed:\n  network access to example.org for agents' commands\nRun again with --trust-workspace to allow it (remembered for this folder), or take it out of workspace.json\n"
    );
    assert!(!out.contains("created"), "no task was made: {out}");
    let (code, out, err) = run(&["--yes", "--trust-workspace"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.starts_with(
            "allowed for this folder: network access to example.org for agents' commands\n"
        ),
        "{out}"
    );
    // Remembered: the next run is not asked about it.
    let (code, out, err) = run(&["--yes"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(!out.contains("allowed for this folder"), "{out}");
}

#[test]
fn task_show_names_the_branch_and_commit_a_task_started_on() {
    if !peers::require_program("git") {
        return;
    }
    let ws = workspace(&[("config.json", "{\"a\": 1}\n")]);
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
            .args([
                "-c",
                "init.defaultBranch=topic",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(ws.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "first"]);
    let head = git(&["rev-parse", "HEAD"]).trim().to_owned();
    let (code, out) = run(
        ws.path(),
        r#"replace "1" with "2" in config.json"#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    let shown = only_task(ws.path());
    assert_eq!(
        shown["started_on"],
        serde_json::json!({"version": 1, "branch": "topic", "head": head})
    );
    let id = shown["task"]["task_id"].as_str().unwrap();
    let (code, text) = cocode(&[
        "task",
        "show",
        id,
        "--workspace",
        ws.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let line = format!("  git:      started on branch topic at {}", &head[..7]);
    assert!(text.lines().any(|l| l == line), "{text}");
    // Outside any repository there is nothing to name.
    let plain = workspace(&[("config.json", "{\"a\": 1}\n")]);
    let (code, out) = run(
        plain.path(),
        r#"replace "1" with "2" in config.json"#,
        &["--yes"],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(only_task(plain.path())["started_on"], Value::Null);
}

/// Reads `sub/x.txt`, then `sub/y.txt`, then finishes.
#[cfg(unix)]
fn reading_model(n: usize) -> Value {
    match n {
        1 => completion_with_call(
            "c1",
            "workspace__readFile",
            &serde_json::json!({"path": "sub/x.txt"}),
        ),
        2 => completion_with_call(
            "c2",
            "workspace__readFile",
            &serde_json::json!({"path": "sub/y.txt"}),
        ),
        _ => completion_with_call(
            &format!("c{n}"),
            "task__finish",
            &serde_json::json!({"summary": "read them"}),
        ),
    }
}

/// The last tool message of a request body, as JSON.
#[cfg(unix)]
fn last_tool_result(body: &str) -> Value {
    let body: Value = serde_json::from_str(body).unwrap();
    let message = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    serde_json::from_str(message["content"].as_str().unwrap()).unwrap()
}

/// `AGENTS.md`: the person's own and the workspace root's reach the system
/// prompt (said at the start and recorded); a folder's own comes with the
/// result of the first call that touches a file under it, once.
#[cfg(unix)]
#[test]
fn agents_md_reaches_the_system_prompt_and_a_folders_own_comes_with_the_first_call_under_it() {
    let (url, bodies) = recording_provider(reading_model);
    let ws = workspace(&[
        ("AGENTS.md", "Indent with tabs.\n"),
        ("sub/AGENTS.md", "Under sub/, indent with two spaces.\n"),
        ("sub/x.txt", "x\n"),
        ("sub/y.txt", "y\n"),
    ]);
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".config");
    std::fs::create_dir_all(config.join("cocode")).unwrap();
    std::fs::write(config.join("cocode/AGENTS.md"), "Answer briefly.\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args([
            "task",
            "run",
            "--workspace",
            ws.path().to_str().unwrap(),
            "--prompt",
            "read the files under sub",
            "--backend",
            "openai",
            "--model",
            "scripted",
            "--base-url",
            &url,
            "--api-key-env",
            "COCODE_TEST_KEY",
            "--yes",
        ])
        .stdin(Stdio::null())
        .env("COCODE_TEST_KEY", "sk-test")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", &config)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "project instructions given to the agent: ~/.config/cocode/AGENTS.md, AGENTS.md\n"
        ),
        "{stdout}"
    );
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 3, "{stdout}");
    let first: Value = serde_json::from_str(&bodies[0]).unwrap();
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.ends_with(
            "\n\n## ~/.config/cocode/AGENTS.md\n\nAnswer briefly.\n\n## AGENTS.md\n\nIndent with tabs."
        ),
        "{system}"
    );
    assert!(!system.contains("two spaces"), "{system}");
    // sub/AGENTS.md with the first read under sub/, and not again.
    assert_eq!(
        last_tool_result(&bodies[1])["instructions"],
        serde_json::json!([{"source": "sub/AGENTS.md", "text": "Under sub/, indent with two spaces.\n"}])
    );
    assert_eq!(last_tool_result(&bodies[1])["result"]["content"], "x\n");
    assert!(last_tool_result(&bodies[2]).get("instructions").is_none());
    let id = only_task(ws.path())["task"]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let shown = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args([
            "task",
            "show",
            &id,
            "--workspace",
            ws.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("\n  instructions: ~/.config/cocode/AGENTS.md, AGENTS.md, sub/AGENTS.md\n"),
        "{shown}"
    );
}

/// `reading_model`, each answer reporting 1,000 prompt tokens (600 of them
/// cached) and 100 completion tokens.
#[cfg(unix)]
fn counting_model(n: usize) -> Value {
    let mut answer = reading_model(n);
    answer["usage"] = serde_json::json!({
        "prompt_tokens": 1_000,
        "completion_tokens": 100,
        "prompt_tokens_details": {"cached_tokens": 600}
    });
    answer
}

/// A task's cost is its requests' tokens times the prices the person set
/// for the model in `providers.json`, cached tokens at their own price.
#[cfg(unix)]
#[test]
fn a_tasks_cost_is_its_tokens_times_the_persons_prices() {
    let (url, bodies) = recording_provider(counting_model);
    let ws = workspace(&[("sub/x.txt", "x\n"), ("sub/y.txt", "y\n")]);
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".config");
    std::fs::create_dir_all(config.join("cocode")).unwrap();
    std::fs::write(
        config.join("cocode/providers.json"),
        r#"{"providers": {"openai": {"prices": {"scripted": {"input": 2, "output": 8, "cache_read": 0.5}}}}}"#,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args([
            "task",
            "run",
            "--workspace",
            ws.path().to_str().unwrap(),
            "--prompt",
            "read the files under sub",
            "--backend",
            "openai",
            "--model",
            "scripted",
            "--base-url",
            &url,
            "--api-key-env",
            "COCODE_TEST_KEY",
            "--yes",
        ])
        .stdin(Stdio::null())
        .env("COCODE_TEST_KEY", "sk-test")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", &config)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(bodies.lock().unwrap().len(), 3, "{stdout}");
    // Each request: 400 × $2 + 600 × $0.50 + 100 × $8 per million tokens.
    assert_eq!(
        stdout
            .matches("  tokens: 1,000 tokens in (600 cached) · 100 out · $0.0019\n")
            .count(),
        3,
        "{stdout}"
    );
    let task = only_task(ws.path());
    assert_eq!(
        task["usage"],
        serde_json::json!({"input": 3_000, "output": 300, "cached": 1_800, "cost_micros": 5_700})
    );
    let id = task["task"]["task_id"].as_str().unwrap().to_owned();
    let shown = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args([
            "task",
            "show",
            &id,
            "--workspace",
            ws.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("\n  spent:    3,000 tokens in (1,800 cached) · 300 out · $0.0057\n"),
        "{shown}"
    );
}
