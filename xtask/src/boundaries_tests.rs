use super::*;
use pretty_assertions::assert_eq;

fn allow() -> Allowlist {
    Allowlist {
        launcher: vec!["crates/toolchain/src/launcher.rs".into()],
        writer: vec!["crates/workspace/src/gate.rs".into()],
        launcher_root: vec!["apps/cocode/src/host/root.rs".into()],
        task_status: vec!["crates/core/src/task.rs".into()],
        runtime: vec!["apps/cocode/src/host/runtime.rs".into()],
        pure: vec!["crates/core".into()],
        modules: None,
        words: Vec::new(),
    }
}

fn findings(files: &[(&str, &str)]) -> Vec<(String, Rule)> {
    let sources: Vec<(PathBuf, String)> = files
        .iter()
        .map(|(p, t)| (PathBuf::from(p), (*t).to_owned()))
        .collect();
    scan(&sources, &allow())
        .unwrap()
        .into_iter()
        .map(|f| (format!("{}:{}", f.file.display(), f.line), f.rule))
        .collect()
}

#[test]
fn spawning_outside_the_launcher_is_found() {
    let src = "fn run() {\n    let _ = std::process::Command::new(\"ls\").status();\n}\n";
    assert_eq!(
        findings(&[("crates/editor/src/lib.rs", src)]),
        vec![(
            "crates/editor/src/lib.rs:2".to_owned(),
            Rule::SingleLauncher
        )]
    );
    assert_eq!(
        findings(&[("crates/toolchain/src/launcher.rs", src)]),
        vec![]
    );
}

#[test]
fn every_spawning_spelling_is_found() {
    let cases = [
        "use std::process::Command;",
        "use tokio::process::Command;",
        "use std::process;",
        "use std::process::*;",
        "use portable_pty::native_pty_system;",
        "fn f() { let _ = nix::unistd::fork(); }",
        "use std::os::unix::process::CommandExt;",
    ];
    for case in cases {
        let got = findings(&[("crates/agent/src/lib.rs", case)]);
        assert!(
            got.iter().any(|(_, r)| *r == Rule::SingleLauncher),
            "{case}: {got:?}"
        );
    }
    assert_eq!(
        findings(&[("apps/cocode/src/main.rs", "use std::process::ExitCode;")]),
        vec![]
    );
}

#[test]
fn writing_outside_the_gate_is_found() {
    let cases = [
        "fn f() { std::fs::write(\"a\", \"b\").unwrap(); }",
        "use std::fs::File; fn f() { File::create(\"a\"); }",
        "use std::fs; fn f() { fs::remove_dir_all(\"a\"); }",
        "use std::fs::OpenOptions;",
        "fn f() { std::fs::rename(\"a\", \"b\"); }",
        "async fn f() { tokio::fs::write(\"a\", b\"\").await; }",
        "use std::fs as f; fn g() { f::write(\"a\", \"b\"); }",
        "fn f() { println!(\"{:?}\", std::fs::create_dir_all(\"x\")); }",
        "fn f() { std::os::unix::fs::symlink(\"a\", \"b\"); }",
    ];
    for case in cases {
        let got = findings(&[("crates/agent/src/lib.rs", case)]);
        assert!(
            got.iter().any(|(_, r)| *r == Rule::SingleWriter),
            "{case}: {got:?}"
        );
        assert_eq!(
            findings(&[("crates/workspace/src/gate.rs", case)])
                .iter()
                .filter(|(_, r)| *r == Rule::SingleWriter)
                .count(),
            0,
            "{case}"
        );
    }
    // Reading is fine.
    assert_eq!(
        findings(&[(
            "crates/agent/src/lib.rs",
            "fn f() { let _ = std::fs::read_to_string(\"a\"); let _ = std::fs::File::open(\"a\"); }"
        )]),
        vec![]
    );
}

#[test]
fn task_status_is_assigned_only_in_the_transition() {
    let assign = "fn f(t: &mut T) { t.status = TaskStatus::Completed; }";
    let build = "fn f() -> DelegatedTask { DelegatedTask { status: TaskStatus::Queued } }";
    let replace = "fn f(t: &mut T) { std::mem::replace(&mut t.status, TaskStatus::Failed); }";
    for case in [assign, build, replace] {
        let got = findings(&[("crates/agent/src/session.rs", case)]);
        assert!(
            got.iter().any(|(_, r)| *r == Rule::TaskStatus),
            "{case}: {got:?}"
        );
        assert_eq!(
            findings(&[("crates/core/src/task.rs", case)]),
            vec![],
            "{case}"
        );
    }
}

#[test]
fn only_one_file_builds_a_runtime() {
    let cases = [
        "fn f() { let _ = tokio::runtime::Builder::new_multi_thread().build(); }",
        "use tokio::runtime::Builder; fn f() { let _ = Builder::new_current_thread(); }",
        "fn f() { let _ = tokio::runtime::Runtime::new(); }",
        "#[tokio::main] async fn main() {}",
    ];
    for case in cases {
        let got = findings(&[("apps/cocode/src/window/app.rs", case)]);
        assert!(
            got.iter().any(|(_, r)| *r == Rule::SingleRuntime),
            "{case}: {got:?}"
        );
        assert_eq!(
            findings(&[("apps/cocode/src/host/runtime.rs", case)]),
            vec![],
            "{case}"
        );
    }
}

#[test]
fn pure_crates_do_no_io() {
    let got = findings(&[(
        "crates/core/src/x.rs",
        "use std::net::TcpStream; fn f() { let _ = std::fs::read(\"a\"); }",
    )]);
    assert_eq!(
        got,
        vec![
            ("crates/core/src/x.rs:1".to_owned(), Rule::PureCrate),
            ("crates/core/src/x.rs:1".to_owned(), Rule::PureCrate)
        ]
    );
    assert_eq!(
        findings(&[("crates/editor/src/x.rs", "use std::net::TcpStream;")]),
        vec![]
    );
}

#[test]
fn test_code_is_exempt() {
    let write = "std::fs::write(\"a\", \"b\").unwrap();";
    let files = [
        (
            "crates/agent/src/lib.rs".to_owned(),
            format!(
                "#[cfg(test)]\nmod tests {{ fn f() {{ {write} }} }}\n#[cfg(test)]\n#[path = \"lib_extra_tests.rs\"]\nmod extra;\n#[cfg(test)]\nmod helper;\n#[test]\nfn t() {{ {write} }}\n"
            ),
        ),
        (
            "crates/agent/src/lib_extra_tests.rs".to_owned(),
            format!("fn f() {{ {write} }}"),
        ),
        (
            "crates/agent/src/helper.rs".to_owned(),
            format!("fn f() {{ {write} }}"),
        ),
        (
            "crates/agent/src/session_tests.rs".to_owned(),
            format!("fn f() {{ {write} }}"),
        ),
        (
            "crates/agent/tests/suite.rs".to_owned(),
            format!("fn f() {{ {write} }}"),
        ),
        (
            "crates/agent/benches/b.rs".to_owned(),
            format!("fn f() {{ {write} }}"),
        ),
    ];
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(findings(&refs), vec![]);
    // `not(test)` is product code.
    let not_test = format!("#[cfg(not(test))]\nfn f() {{ {write} }}");
    assert_eq!(findings(&[("crates/agent/src/lib.rs", &not_test)]).len(), 1);
}

#[test]
fn a_launcher_is_built_only_in_the_composition_root() {
    let src = "use cocode_toolchain::Launcher;\nfn f(h: H) -> Launcher {\n    Launcher::new(h, None, W::default())\n}\n";
    assert_eq!(
        findings(&[("apps/cocode/src/window/terminals.rs", src)]),
        vec![(
            "apps/cocode/src/window/terminals.rs:3".to_owned(),
            Rule::LauncherRoot
        )]
    );
    assert_eq!(findings(&[("apps/cocode/src/host/root.rs", src)]), vec![]);
}

#[test]
fn an_unsafe_fn_says_when_it_is_safe() {
    let bare = "unsafe fn f() {}\nstruct S;\nimpl S { unsafe fn g(&self) {} }\ntrait T { unsafe fn h(); }\n";
    assert_eq!(
        findings(&[("crates/agent/src/lib.rs", bare)]),
        vec![
            (
                "crates/agent/src/lib.rs:1".to_owned(),
                Rule::UnsafeWithoutSafety
            ),
            (
                "crates/agent/src/lib.rs:3".to_owned(),
                Rule::UnsafeWithoutSafety
            ),
            (
                "crates/agent/src/lib.rs:4".to_owned(),
                Rule::UnsafeWithoutSafety
            ),
        ]
    );
    let documented = "/// Does it.\n///\n/// # Safety\n/// Only before threads.\nunsafe fn f() {}\n#[cfg(test)]\nmod tests { unsafe fn t() {} }\n";
    assert_eq!(findings(&[("crates/agent/src/lib.rs", documented)]), vec![]);
}

#[test]
fn unparsable_sources_are_an_error_not_a_pass() {
    let sources = vec![(PathBuf::from("crates/agent/src/lib.rs"), "fn (".to_owned())];
    assert!(scan(&sources, &allow()).is_err());
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn repo_sources() -> (Vec<(PathBuf, String)>, Allowlist) {
    let root = repo_root();
    let allow: Allowlist =
        serde_yaml_ng::from_str(&std::fs::read_to_string(root.join("boundaries.yaml")).unwrap())
            .unwrap();
    let mut sources = Vec::new();
    for dir in ["crates", "apps"] {
        for file in source_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&file).unwrap();
            sources.push((file.strip_prefix(&root).unwrap().to_path_buf(), text));
        }
    }
    (sources, allow)
}

#[test]
fn the_repository_passes_and_each_deliberate_break_fails() {
    let (sources, allow) = repo_sources();
    assert_eq!(
        scan(&sources, &allow).unwrap(),
        vec![],
        "the repository itself is clean"
    );

    let breaks = [
        (
            "crates/editor/src/lib.rs",
            "\npub fn sneaky() { let _ = std::process::Command::new(\"sh\"); }\n",
            Rule::SingleLauncher,
        ),
        (
            "crates/agent/src/lib.rs",
            "\npub fn sneaky() { let _ = std::fs::write(\"x\", \"y\"); }\n",
            Rule::SingleWriter,
        ),
        (
            "apps/cocode/src/lib.rs",
            "\npub fn sneaky(t: &mut Task) { t.status = S::Completed; }\n",
            Rule::TaskStatus,
        ),
        (
            "crates/core/src/lib.rs",
            "\npub fn sneaky() { let _ = std::fs::read(\"x\"); }\n",
            Rule::PureCrate,
        ),
        // The workspace host reads records; records naming the workspace
        // host closes a circle.
        (
            "apps/cocode/src/host/records.rs",
            "\npub fn sneaky(_: &crate::host::workspace_host::HostOptions) {}\n",
            Rule::ModuleCycle,
        ),
        (
            "apps/cocode/src/host/progress.rs",
            "\npub fn sneaky() { let _ = crate::cli::check::verify; }\n",
            Rule::ModuleLayer,
        ),
        (
            "apps/cocode/src/window/views/agent.rs",
            "\npub fn sneaky(s: &str) -> String { format!(\"status: {s:?}\") }\n",
            Rule::DebugInUserText,
        ),
        (
            "crates/toolchain/src/scratch.rs",
            "\n/// Frees it.\npub unsafe fn sneaky() {}\n",
            Rule::UnsafeWithoutSafety,
        ),
        // The task state machine names the agent's backend kinds; the agent
        // module naming the state machine closes a circle in a crate other
        // than the app.
        (
            "crates/core/src/agent.rs",
            "\npub fn sneaky() -> crate::task::TaskStatus { todo!() }\n",
            Rule::ModuleCycle,
        ),
        // The window building its own launcher.
        (
            "apps/cocode/src/window/app.rs",
            "\nfn sneaky(h: H) { let _ = cocode_toolchain::Launcher::new(h, None, W::default()); }\n",
            Rule::LauncherRoot,
        ),
    ];
    for (file, injected, rule) in breaks {
        let mut broken = sources.clone();
        let entry = broken
            .iter_mut()
            .find(|(p, _)| p == Path::new(file))
            .unwrap();
        entry.1.push_str(injected);
        let found = scan(&broken, &allow).unwrap();
        assert_eq!(found.len(), 1, "{file}: {found:?}");
        assert_eq!(
            (found[0].file.as_path(), found[0].rule),
            (Path::new(file), rule)
        );
    }
}
