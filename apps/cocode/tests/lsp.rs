//! Language servers through the real `cocode` binary: `cocode lsp servers`,
//! `cocode lsp diagnostics` in both formats, and a local-agent task that
//! calls `lsp.diagnostics` and sees the error pyright reported.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build workspaces and run the binary"
)]
#![expect(clippy::unwrap_used, reason = "test helpers")]

use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;

#[path = "../../../tests/support/require.rs"]
mod peers;

/// Runs `cocode ARGS`; returns (exit code, stdout, stderr).
fn cocode(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args(args)
        .stdin(Stdio::null())
        .env("HOME", std::env::temp_dir())
        .env(
            "XDG_CONFIG_HOME",
            // One per test process: another user's run leaves its own.
            std::env::temp_dir().join(format!("cocode-lsp-test-config-{}", std::process::id())),
        )
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A line with Hangul and an emoji before a type error.
const MAIN_PY: &str = "s = \"한글🙂\"; n: int = \"text\"\nprint(s)\n";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.py"), MAIN_PY).unwrap();
    std::fs::write(dir.path().join("ok.py"), "x: int = 1\n").unwrap();
    std::fs::write(dir.path().join("notes.md"), "# notes\n").unwrap();
    dir
}

#[test]
fn servers_lists_each_language_and_how_to_install_a_missing_one() {
    let ws = workspace();
    // A workspace entry turns taplo off and adds a server that is not
    // installed.
    let config = ws.path().join(".cocode/config/workspace.json");
    let (code, _, _) = cocode(&["lsp", "servers", "--workspace", ws.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    // Listing created nothing; the folder's settings come with its history.
    assert!(!config.exists());
    drop(cocode_workspace::OpenWorkspace::open(ws.path()).unwrap());
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    json["language_servers"] = serde_json::json!([
        {"id": "taplo", "command": []},
        {"id": "zig", "command": ["no-such-zls"], "extensions": ["zig"]}
    ]);
    std::fs::write(&config, json.to_string()).unwrap();
    let (code, out, err) = cocode(&["lsp", "servers", "--workspace", ws.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split('\t').collect()).collect();
    let ids: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(
        ids,
        vec![
            "rust-analyzer",
            "pyright",
            "typescript-language-server",
            "taplo",
            "gopls",
            "clangd",
            "dart",
            "zig"
        ]
    );
    let row = |id: &str| rows.iter().find(|r| r[0] == id).unwrap().clone();
    assert_eq!(row("taplo")[2], "(turned off)");
    assert_eq!(
        row("zig"),
        vec![
            "zig",
            ".zig",
            "no-such-zls",
            "not installed — install no-such-zls"
        ]
    );
    assert_eq!(row("pyright")[1], ".py .pyi");
    assert_eq!(row("pyright")[2], "pyright-langserver --stdio");
    if peers::require_program("pyright-langserver") {
        assert!(
            row("pyright")[3].starts_with("installed: "),
            "{:?}",
            row("pyright")
        );
    }
}

#[test]
fn diagnostics_prints_compiler_lines_and_json_in_characters() {
    if !peers::require_program("pyright-langserver") {
        return;
    }
    let ws = workspace();
    let dir = ws.path().to_str().unwrap();
    let (code, out, err) = cocode(&["lsp", "diagnostics", "--workspace", dir, "main.py", "ok.py"]);
    assert_eq!(code, 1, "errors found: {err}");
    // Column 21 counts characters: the Hangul and the emoji are one each.
    assert_eq!(
        out,
        "main.py:1:21: error: Type \"Literal['text']\" is not assignable to declared type \"int\"; \
         \"Literal['text']\" is not assignable to \"int\" [Pyright reportAssignmentType]\n"
    );
    let (code, out, _) = cocode(&[
        "lsp",
        "diagnostics",
        "--workspace",
        dir,
        "main.py",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d = &report["files"][0]["diagnostics"][0];
    assert_eq!(report["files"][0]["path"], "main.py");
    assert_eq!(
        (&d["line"], &d["column"], &d["endLine"], &d["endColumn"]),
        (&1.into(), &21.into(), &1.into(), &27.into())
    );
    assert_eq!(d["severity"], "error");
    assert_eq!(d["code"], "reportAssignmentType");
    assert_eq!(report["checked"], 1);

    // Fixed, the file has nothing to report and the exit status is 0.
    std::fs::write(ws.path().join("main.py"), "s = \"한글🙂\"; n: int = 3\n").unwrap();
    let (code, out, err) = cocode(&["lsp", "diagnostics", "--workspace", dir]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");

    // A file no server takes is named with the reason.
    let (code, out, err) = cocode(&["lsp", "diagnostics", "--workspace", dir, "notes.md"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "cocode: notes.md: no language server is set up for notes.md\n"
    );
}

/// Four named files each get the server's whole result, and with no path
/// every file the server takes does: pyright's reports for one file do
/// not end the wait for the others.
#[test]
fn four_named_python_files_each_get_their_own_result() {
    if !peers::require_program("pyright-langserver") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let names = ["a.py", "b.py", "c.py", "d.py"];
    for (i, name) in names.iter().enumerate() {
        // Each file has its own count of errors: i + 1.
        let body = (0..=i)
            .map(|k| format!("v{k}: int = \"s{k}\""))
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(ws.path().join(name), body).unwrap();
    }
    let dir = ws.path().to_str().unwrap();
    let mut args = vec!["lsp", "diagnostics", "--workspace", dir, "--format", "json"];
    args.extend(names);
    let (code, out, err) = cocode(&args);
    assert_eq!(code, 1, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let counts: Vec<(String, usize)> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["diagnostics"].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        vec![
            ("a.py".to_owned(), 1),
            ("b.py".to_owned(), 2),
            ("c.py".to_owned(), 3),
            ("d.py".to_owned(), 4)
        ]
    );
    assert_eq!(report["unanswered"], serde_json::json!([]));
    // With no path: the same, every file the server takes.
    let (code, out, _) = cocode(&["lsp", "diagnostics", "--workspace", dir]);
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 1 + 2 + 3 + 4, "{out}");
}

#[test]
fn a_local_agent_task_asks_the_language_server_and_sees_its_error() {
    if !peers::require_program("pyright-langserver") {
        return;
    }
    let ws = workspace();
    let (_, out, _) = cocode(&[
        "task",
        "run",
        "--workspace",
        ws.path().to_str().unwrap(),
        "--prompt",
        "check main.py",
    ]);
    assert!(out.contains("  lsp.diagnostics main.py [done]\n"), "{out}");
    assert!(
        out.contains(
            "The language servers found:\nmain.py:1:21: error: Type \"Literal['text']\" is not \
             assignable to declared type \"int\"\n"
        ),
        "{out}"
    );
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_workspace_is_never_read_for_a_server() {
    if !peers::require_program("pyright-langserver") {
        return;
    }
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    // A file outside whose error would name what it holds.
    std::fs::write(outside.path().join("secret.py"), "print(SECRET_NAME_123)\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.py"), ws.path().join("leak.py"))
        .unwrap();
    let (code, out, err) = cocode(&[
        "lsp",
        "diagnostics",
        "--workspace",
        ws.path().to_str().unwrap(),
        "leak.py",
    ]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.starts_with("cocode: leak.py: not readable (WORKSPACE_"),
        "{err}"
    );
    assert!(!err.contains("SECRET_NAME_123"));
}

/// rust-analyzer answers a file at once with its own findings and only
/// later with `cargo check`'s: the type error comes from the second, so the
/// query waits for rust-analyzer's work to end. A type error and a syntax
/// error are each reported with rustc's code, never called clean.
#[test]
fn a_type_error_and_a_syntax_error_in_rust_are_reported_with_their_codes() {
    let runs = Command::new("rust-analyzer")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !peers::require("rust-analyzer", runs) {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("Cargo.toml"),
        "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    )
    .unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(
        ws.path().join("src/lib.rs"),
        "mod broken;\npub fn twice(x: i32) -> i32 { x * 2 }\npub fn use_it() -> i32 {\n    let s: i32 = \"text\";\n    twice(s)\n}\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join("src/broken.rs"),
        "pub fn f() { let x = ; }\n",
    )
    .unwrap();
    let dir = ws.path().to_str().unwrap();
    let (code, out, err) = cocode(&[
        "lsp",
        "diagnostics",
        "--workspace",
        dir,
        "--timeout",
        "240",
        "src/lib.rs",
        "src/broken.rs",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines.contains(
            &"src/lib.rs:4:18: error: mismatched types; expected `i32`, found `&str` [rustc E0308]"
        ),
        "{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("src/broken.rs:1:22: error: ")
                && l.contains("expected expression")),
        "{out}"
    );
    assert_eq!(err, "");
}

/// A cloned repository's `.cocode/config/workspace.json` names a program as
/// a language server: it does not run until the person trusts it with
/// `cocode lsp trust`, and a changed command is held again.
#[test]
fn a_server_command_the_workspace_names_runs_only_once_trusted() {
    let ws = workspace();
    let dir = ws.path().to_str().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let ran = ws.path().join("ran");
    let escaped = outside.path().join("escaped");
    let (code, _, _) = cocode(&["lsp", "servers", "--workspace", dir]);
    assert_eq!(code, 0);
    drop(cocode_workspace::OpenWorkspace::open(ws.path()).unwrap());
    let config = ws.path().join(".cocode/config/workspace.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    // It writes in the workspace, then tries outside it.
    let command = format!(
        "echo ran > {}; echo out > {}",
        ran.display(),
        escaped.display()
    );
    json["language_servers"] = serde_json::json!([
        {"id": "notes", "command": ["sh", "-c", command], "extensions": ["md"]}
    ]);
    std::fs::write(&config, json.to_string()).unwrap();

    let (code, out, err) = cocode(&["lsp", "diagnostics", "--workspace", dir, "notes.md"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert_eq!(
        err,
        format!(
            "cocode: notes.md: notes is not started: this workspace's .cocode/config/workspace.json names its command (sh -c '{command}'), and it runs only once you trust it (cocode lsp trust, or Trust in the Problems panel)\n"
        )
    );
    assert!(!ran.exists(), "the workspace's command ran untrusted");
    let (_, out, _) = cocode(&["lsp", "servers", "--workspace", dir]);
    assert!(
        out.lines().any(|l| l
            == format!(
                "notes\t.md\tsh -c '{command}'\tnot started: this workspace's .cocode/config/workspace.json names its command (sh -c '{command}'); trust it first"
            )),
        "{out}"
    );

    let (code, out, err) = cocode(&["lsp", "trust", "--workspace", dir]);
    assert_eq!(code, 0, "{err}");
    let root = ws.path().canonicalize().unwrap();
    assert_eq!(
        out,
        format!("trusted in {}: notes: sh -c '{command}'\n", root.display())
    );
    // Trusted, it runs (it is no language server, so it gives no answer)
    // — confined: it wrote in the workspace and nothing outside it.
    let (code, _, _) = cocode(&[
        "lsp",
        "diagnostics",
        "--workspace",
        dir,
        "--timeout",
        "3",
        "notes.md",
    ]);
    assert_eq!(code, 2);
    assert!(ran.exists(), "the trusted command did not run");
    let landlock =
        cocode_toolchain::confine::available() == cocode_core::process::Confinement::Landlock;
    if peers::require("Landlock", landlock) {
        assert!(
            !escaped.exists(),
            "a server the workspace names wrote outside the workspace"
        );
    }

    // The same server id with another command is held again.
    std::fs::remove_file(&ran).unwrap();
    json["language_servers"][0]["command"] =
        serde_json::json!(["sh", "-c", format!("{command}; true")]);
    std::fs::write(&config, json.to_string()).unwrap();
    let (code, _, err) = cocode(&["lsp", "diagnostics", "--workspace", dir, "notes.md"]);
    assert_eq!(code, 2);
    assert!(err.contains("notes is not started"), "{err}");
    assert!(!ran.exists());
    let (code, out, err) = cocode(&["lsp", "trust", "--workspace", dir, "pyright"]);
    assert_eq!((code, out.as_str()), (3, ""));
    assert!(err.contains("pyright is not held"), "{err}");
}
