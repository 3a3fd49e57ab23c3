//! `cocode verify` and `cocode doctor` on a real fixture workspace.
#![cfg_attr(
    unix,
    expect(clippy::disallowed_methods, reason = "copies a fixture workspace")
)]
#![expect(clippy::unwrap_used, reason = "test helpers")]

#[cfg(unix)]
use std::path::Path;

use pretty_assertions::assert_eq;

#[path = "../../../tests/support/require.rs"]
mod peers;

#[cfg(unix)]
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

#[cfg(unix)]
#[test]
fn verify_prints_one_record_per_method_and_the_verdict_and_exits_by_it() {
    let runtime = cocode::host::runtime::build().unwrap();
    if !peers::require_program("npm") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/node-pkg"),
        &ws,
    );
    let mut out = Vec::new();
    let code = cocode::cli::check::verify(&ws, true, false, runtime.handle(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let methods: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| {
            format!(
                "{}:{}",
                v["method"].as_str().unwrap(),
                v["result"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        (code, methods, text.lines().last().unwrap().to_owned()),
        (
            0,
            vec![
                "static_analysis:no_target".to_owned(),
                "build:no_target".to_owned(),
                "tests:pass".to_owned(),
                "runtime_errors:no_target".to_owned()
            ],
            "verdict: passed".to_owned()
        )
    );
    // In words: each method's outcome, and what the failing test printed.
    std::fs::write(ws.join("add.js"), "exports.add = (a, b) => a - b;\n").unwrap();
    let mut out = Vec::new();
    assert_eq!(
        cocode::cli::check::verify(&ws, false, false, runtime.handle(), &mut out).unwrap(),
        1
    );
    let text = String::from_utf8(out).unwrap();
    // The failing test is named, with its place in the workspace and what
    // its assertion said; the output's lines are not repeated.
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "static analysis: nothing to check: no analyzed file",
            "build: nothing to check: nothing to build",
            "tests: failed: the code has a defect (exit code 1)",
            "    failed test adds at add.test.js:5:1",
            "      error: Expected values to be strictly equal: -1 !== 5",
            "      expected: 5",
            "      actual: -1",
            "      operator: 'strictEqual'",
            "verdict: failed: the code has a defect"
        ],
        "{text}"
    );
}

#[test]
fn doctor_reports_each_check_and_a_clean_history() {
    let runtime = cocode::host::runtime::build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A folder cocode has worked in (one it has not is only looked at).
    drop(cocode_workspace::OpenWorkspace::open(dir.path()).unwrap());
    #[cfg(unix)]
    let outside = tempfile::tempdir().unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
    let mut out = Vec::new();
    let code = cocode::cli::check::doctor(dir.path(), runtime.handle(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let labels: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("  "))
        .filter_map(|l| l.split_once(':').map(|(k, _)| k))
        .collect();
    let mut expected = vec![
        "confinement",
        "read-only to agent commands",
        "private temp folder per agent command",
    ];
    if cfg!(target_os = "linux") {
        expected.extend([
            "socket filter (only TCP and Unix stream sockets; no UDP, raw or netlink sockets, no Unix datagrams)",
            "no hard links and no opening files by handle (a write through another name would go unrecorded)",
            "scoping (no abstract Unix sockets, no signals to processes outside a command)",
            "connections decided by cocode (Unix sockets only in folders the command may write; TCP only to the proxy)",
            "command lifetime (a PID namespace per agent command; nothing it starts outlives it or cocode)",
            "processes out of sight (a private /proc per agent command; cocode, its parent and other users' processes are not visible)",
            "the person's sockets (session bus, ssh and gpg agents, displays, container engines) hidden from agent commands",
            "pseudo-terminals of its own per agent command (a private devpts; none of the person's)",
            "cocode's own environment sealed (undumpable, keys taken out)",
            "network (a namespace per agent command with only loopback and the proxy in it; no other address answers)",
        ]);
    }
    expected.extend([
        "top-level links",
        "hosts held for a person",
        "credential store",
        "policy proxy",
        "logs",
        "crash reports",
        "blocked paths",
        "history",
    ]);
    assert_eq!(labels, expected, "{text}");
    #[cfg(unix)]
    assert!(
        text.contains(&format!(
            "top-level links: 1 not writable by agent commands\n  {} → {} (points outside the workspace)\n",
            dir.path().join("escape").display(),
            outside.path().display()
        )),
        "{text}"
    );
    #[cfg(target_os = "linux")]
    if matches!(
        cocode_toolchain::confine::available(),
        cocode_core::process::Confinement::Landlock
    ) {
        for line in [
            "read-only to agent commands: active — .cocode, .git, .hg, .svn, .jj, .bzr at any depth, bound read-only in each command's mount namespace; the rest of the workspace, its root included, is writable (new files at the root work)",
            "processes out of sight (a private /proc per agent command; cocode, its parent and other users' processes are not visible): active",
            "private temp folder per agent command: active",
            "socket filter (only TCP and Unix stream sockets; no UDP, raw or netlink sockets, no Unix datagrams): active",
            "no hard links and no opening files by handle (a write through another name would go unrecorded): active",
            "scoping (no abstract Unix sockets, no signals to processes outside a command): active",
            "connections decided by cocode (Unix sockets only in folders the command may write; TCP only to the proxy): active",
            "command lifetime (a PID namespace per agent command; nothing it starts outlives it or cocode): active",
            "network (a namespace per agent command with only loopback and the proxy in it; no other address answers): active",
            "the person's sockets (session bus, ssh and gpg agents, displays, container engines) hidden from agent commands: active",
            "pseudo-terminals of its own per agent command (a private devpts; none of the person's): active",
            // A test process is not sealed; the `cocode` executable is.
            "cocode's own environment sealed (undumpable, keys taken out): not active",
        ] {
            assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        }
    }
    assert!(text.contains("policy proxy: self-test passed"), "{text}");
    let data = cocode::host::crash::data_dir().unwrap();
    assert!(
        text.contains(&format!(
            "\nlogs: {} (the window's, a file a day, the last 7 kept)\ncrash reports: {}",
            data.join("logs").display(),
            data.join("crashes").display()
        )),
        "{text}"
    );
    assert!(text.contains("history: 0 problem(s)"), "{text}");
    assert!(text.contains("\nblocked paths: none\n"), "{text}");
    assert_eq!(code, 0);
}

/// Commands that only look (`lsp servers`, `acp list`, `doctor`) create
/// nothing in a folder cocode has not worked in; work that needs history
/// makes `.cocode/`, which ignores itself, so git never sees it — an older
/// workspace gets the ignore file on its next open, and a file of the
/// person's own there is left as it is.
#[cfg(unix)]
#[test]
fn looking_creates_nothing_and_cocodes_own_folder_stays_out_of_git() {
    let runtime = cocode::host::runtime::build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut out = Vec::new();
    let servers = cocode::cli::args::LspCommand::Servers {
        workspace: root.clone(),
        check: false,
    };
    assert_eq!(
        cocode::cli::lsp::lsp_command(&servers, runtime.handle(), &mut out).unwrap(),
        0
    );
    let list = cocode::cli::args::AcpCommand::List {
        workspace: root.clone(),
    };
    let vault = cocode_toolchain::vault::SessionVault::default();
    assert_eq!(
        cocode::cli::acp::acp_command(&list, &vault, &mut std::io::empty(), &mut out).unwrap(),
        0
    );
    cocode::cli::check::doctor(&root, runtime.handle(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("Gemini CLI"), "{text}");
    assert!(
        text.contains(
            "\nhistory: none — cocode has not worked in this folder yet (its first task starts it)\n"
        ),
        "{text}"
    );
    assert_eq!(
        std::fs::read_dir(&root).unwrap().count(),
        0,
        "looking created something"
    );

    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    drop(cocode_workspace::OpenWorkspace::open(&root).unwrap());
    assert!(root.join(".cocode/history").is_dir());
    let ignore = root.join(".cocode/.gitignore");
    assert!(
        std::fs::read_to_string(&ignore).unwrap().ends_with("\n*\n"),
        "everything in .cocode is ignored"
    );
    assert_eq!(
        git(&["status", "--porcelain", "--untracked-files=all"]),
        "?? a.txt\n"
    );
    // An older workspace gets it on its next open.
    std::fs::remove_file(&ignore).unwrap();
    drop(cocode_workspace::OpenWorkspace::open(&root).unwrap());
    assert!(ignore.is_file());
    // A person's own file there stays as it is.
    std::fs::write(&ignore, "# mine\n*\n").unwrap();
    drop(cocode_workspace::OpenWorkspace::open(&root).unwrap());
    assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "# mine\n*\n");
}

/// A command the workspace's `verification` settings name runs only once
/// the person trusted it (a cloned repository could name any program):
/// `cocode verify` says it could not run and how to trust it; `--trust`
/// prints the command, trusts it and runs it.
#[cfg(unix)]
#[test]
fn a_verification_command_the_workspace_names_runs_once_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let config = tempfile::tempdir().unwrap();
    let verify = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cocode"))
            .args(["verify", "--workspace", ws.to_str().unwrap()])
            .args(extra)
            .env("XDG_CONFIG_HOME", config.path())
            .env("HOME", config.path())
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // The first run makes `.cocode/`; then the workspace names its check.
    verify(&[]);
    let file = ws.join(".cocode/config/workspace.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    json["verification"] = serde_json::json!({"tests": ["touch", "ran"]});
    std::fs::write(&file, json.to_string()).unwrap();

    let (code, out) = verify(&[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "tests: failed: the check could not run: this workspace names its command, which is not trusted yet\n    not trusted yet: touch ran\n"
        ),
        "{out}"
    );
    assert!(out.contains("cocode verify --trust"), "{out}");
    assert!(!ws.join("ran").exists());

    let (code, out) = verify(&["--trust"]);
    let root = ws.canonicalize().unwrap();
    assert!(
        out.starts_with(&format!(
            "trusted in {}: tests: touch ran\n",
            root.display()
        )),
        "{out}"
    );
    assert_eq!(code, 0, "{out}");
    assert!(ws.join("ran").exists());
    // Trusted once: the next run needs no flag.
    std::fs::remove_file(ws.join("ran")).unwrap();
    let (code, out) = verify(&[]);
    assert_eq!(code, 0, "{out}");
    assert!(ws.join("ran").exists());
}
