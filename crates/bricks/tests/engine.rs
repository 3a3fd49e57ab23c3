//! The brick engine end to end: real files, real hooks through the real
//! launcher, and the promise that a destination never exists half-made.
#![expect(clippy::unwrap_used, reason = "test code")]
#![expect(
    clippy::disallowed_methods,
    reason = "tests build brick folders by hand"
)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cocode_bricks::{BrickCatalog, BrickSource, Bricks};
use cocode_core::services::{BrickEngine, ScaffoldError, ScaffoldRequest};
use cocode_toolchain::{Launcher, WritableRoots};
use pretty_assertions::assert_eq;

/// The built-in bricks plus those in `extra`, with hooks run by the real
/// launcher.
fn engine_with(extra: &[&Path]) -> Bricks {
    let mut catalog = BrickCatalog::builtin().unwrap();
    for dir in extra {
        assert_eq!(catalog.add_folder(dir).problems, []);
    }
    let launcher = Launcher::new(
        tokio::runtime::Handle::current(),
        None,
        WritableRoots::default(),
    );
    Bricks::new(catalog, Arc::new(launcher))
}

fn engine(extra: Option<&Path>) -> Bricks {
    engine_with(extra.as_slice())
}

fn request(brick: &str, destination: PathBuf, vars: &[(&str, &str)]) -> ScaffoldRequest {
    ScaffoldRequest {
        brick: brick.to_owned(),
        destination,
        variables: vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    }
}

/// Every file below `dir` with its content, as `path → text`.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                // cocode's own folder is checked on its own.
                if path.file_name().is_some_and(|n| n == ".cocode") {
                    continue;
                }
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(
                    rel,
                    String::from_utf8_lossy(&fs::read(&path).unwrap()).into_owned(),
                );
            }
        }
    }
    out
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// A brick folder on disk with a manifest and template files.
fn brick_dir(root: &Path, manifest: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = root.join("bricks");
    fs::create_dir_all(dir.join("template")).unwrap();
    fs::write(dir.join("brick.toml"), manifest).unwrap();
    for (path, text) in files {
        let target = dir.join("template").join(path);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(target, text).unwrap();
    }
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_bricks_are_offered_and_scaffold_with_their_defaults() {
    let engine = engine(None);
    let offered: Vec<String> = engine.bricks().into_iter().map(|b| b.name).collect();
    assert_eq!(
        offered,
        [
            "dart-package",
            "python-package",
            "rust-bin",
            "rust-lib",
            "static-web"
        ]
    );
    let parent = tempfile::tempdir().unwrap();
    for name in &offered {
        let dest = parent.path().join(format!("My App {name}"));
        let made = engine.scaffold(request(name, dest.clone(), &[])).await;
        assert_eq!(made, Ok(dest.clone()), "{name}");
    }
    let rust = tree(&parent.path().join("My App rust-bin"));
    assert_eq!(
        rust,
        BTreeMap::from([
            (".gitignore".to_owned(), "/target\n/.cocode/\n".to_owned()),
            (
                "Cargo.toml".to_owned(),
                "[package]\nname = \"my-app-rust-bin\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n"
                    .to_owned()
            ),
            (
                "src/main.rs".to_owned(),
                "fn main() {\n    println!(\"Hello from my-app-rust-bin!\");\n}\n".to_owned()
            ),
        ])
    );
    let python = tree(&parent.path().join("My App python-package"));
    assert_eq!(
        python.keys().collect::<Vec<_>>(),
        [
            ".gitignore",
            "pyproject.toml",
            "src/my_app_python_package/__init__.py",
            "tests/test_my_app_python_package.py"
        ]
    );
    assert!(python["pyproject.toml"].contains("name = \"my-app-python-package\""));
    let web = tree(&parent.path().join("My App static-web"));
    assert!(web["index.html"].contains("<title>My App static-web</title>"));
    // Nothing but the five destinations: no staging folder left behind.
    assert_eq!(names(parent.path()).len(), 5);
    // Each new workspace records the brick it was made from.
    let ws = cocode_workspace::OpenWorkspace::open(&parent.path().join("My App rust-bin")).unwrap();
    assert_eq!(
        ws.config.applied_bricks,
        [cocode_core::workspace::AppliedBrick {
            name: "rust-bin".into(),
            version: "1.0.0".into()
        }]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_library_brick_builds_and_its_test_passes_with_cargo() {
    let engine = engine(None);
    let parent = tempfile::tempdir().unwrap();
    let dest = parent.path().join("adder");
    engine
        .scaffold(request("rust-lib", dest.clone(), &[("edition", "2021")]))
        .await
        .unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = std::process::Command::new(cargo)
        .args(["test", "--offline", "--quiet"])
        .current_dir(&dest)
        .env("CARGO_TARGET_DIR", parent.path().join("target"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_rejected_before_anything_is_written() {
    let engine = engine(None);
    let parent = tempfile::tempdir().unwrap();
    fs::create_dir(parent.path().join("taken")).unwrap();
    fs::write(parent.path().join("taken/keep.txt"), "mine").unwrap();
    let cases = [
        request("nope", parent.path().join("a"), &[]),
        request(
            "rust-bin",
            parent.path().join("a"),
            &[("crate_name", "Bad Name")],
        ),
        request("rust-bin", parent.path().join("a"), &[("edition", "2015")]),
        request("rust-bin", parent.path().join("a"), &[("colour", "red")]),
        request("rust-bin", parent.path().join("taken"), &[]),
        request("rust-bin", parent.path().join("missing/a"), &[]),
        request("rust-bin", PathBuf::from("relative"), &[]),
        request("rust-bin", parent.path().join("CON"), &[]),
    ];
    for req in cases {
        let validated = engine.validate(&req);
        let result = engine.scaffold(req.clone()).await;
        assert!(
            matches!(&result, Err(ScaffoldError::RejectedBeforeStart(_))),
            "{req:?}: {result:?}"
        );
        assert_eq!(validated, result.map(|_| ()), "{req:?}");
    }
    assert_eq!(names(parent.path()), ["taken"]);
    assert_eq!(
        tree(&parent.path().join("taken")),
        BTreeMap::from([("keep.txt".to_owned(), "mine".to_owned())])
    );
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_run_in_staging_and_a_failing_hook_leaves_no_trace() {
    let home = tempfile::tempdir().unwrap();
    let manifest = r#"
name = "hooked"
description = "Hooks"
[[variables]]
name = "fail"
type = "bool"
default = "false"
[hooks]
pre = [["sh", "-c", "echo pre > pre.txt"]]
post = [["sh", "-c", "test -f main.txt && cat main.txt > post.txt && {% if fail %}echo broken >&2 && exit 7{% else %}true{% endif %}"]]
"#;
    let dir = brick_dir(
        home.path(),
        manifest,
        &[("main.txt", "hello {{ folder_name }}\n")],
    );
    let engine = engine(Some(&dir));
    let parent = tempfile::tempdir().unwrap();
    let dest = parent.path().join("ok");
    engine
        .scaffold(request("hooked", dest.clone(), &[]))
        .await
        .unwrap();
    assert_eq!(
        tree(&dest),
        BTreeMap::from([
            ("main.txt".to_owned(), "hello ok\n".to_owned()),
            ("post.txt".to_owned(), "hello ok\n".to_owned()),
            ("pre.txt".to_owned(), "pre\n".to_owned()),
        ])
    );
    let failed = engine
        .scaffold(request(
            "hooked",
            parent.path().join("bad"),
            &[("fail", "true")],
        ))
        .await;
    let Err(ScaffoldError::FailedInProgress {
        staging_removed,
        message,
    }) = failed
    else {
        panic!("{failed:?}");
    };
    assert!(staging_removed);
    assert!(
        message.contains("exited with code 7") && message.contains("broken"),
        "{message}"
    );
    assert_eq!(names(parent.path()), ["ok"]);
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_colliding_with_a_pre_hook_file_or_a_missing_program_fails_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let collide = brick_dir(
        home.path(),
        "name = \"collide\"\ndescription = \"d\"\n[hooks]\npre = [[\"sh\", \"-c\", \"echo hook > main.txt\"]]\n",
        &[("main.txt", "template\n")],
    );
    let missing_home = tempfile::tempdir().unwrap();
    let missing = brick_dir(
        missing_home.path(),
        "name = \"missing\"\ndescription = \"d\"\n[hooks]\npost = [[\"cocode-no-such-program\"]]\n",
        &[("a.txt", "a")],
    );
    let engine = engine_with(&[&collide, &missing]);
    let parent = tempfile::tempdir().unwrap();
    for (brick, expected) in [("collide", "main.txt"), ("missing", "program not found")] {
        let result = engine
            .scaffold(request(brick, parent.path().join(brick), &[]))
            .await;
        let Err(ScaffoldError::FailedInProgress {
            staging_removed: true,
            message,
        }) = result
        else {
            panic!("{brick}: {result:?}");
        };
        assert!(message.contains(expected), "{brick}: {message}");
    }
    assert_eq!(names(parent.path()), Vec::<String>::new());
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destination_that_appears_while_staging_is_never_replaced() {
    let home = tempfile::tempdir().unwrap();
    // The hook plays another program creating the destination meanwhile.
    let dir = brick_dir(
        home.path(),
        "name = \"race\"\ndescription = \"d\"\n[hooks]\npost = [[\"sh\", \"-c\", \"mkdir ../{{ folder_name }} && echo theirs > ../{{ folder_name }}/theirs.txt\"]]\n",
        &[("ours.txt", "ours")],
    );
    let engine = engine(Some(&dir));
    let parent = tempfile::tempdir().unwrap();
    let dest = parent.path().join("dest");
    let result = engine.scaffold(request("race", dest.clone(), &[])).await;
    let Err(ScaffoldError::FailedInProgress {
        staging_removed: true,
        message,
    }) = result
    else {
        panic!("{result:?}");
    };
    assert!(message.contains("moving into"), "{message}");
    assert_eq!(names(parent.path()), ["dest"]);
    assert_eq!(
        tree(&dest),
        BTreeMap::from([("theirs.txt".to_owned(), "theirs\n".to_owned())])
    );
}

#[test]
fn a_brick_folder_with_a_symbolic_link_or_a_taken_name_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let dir = brick_dir(
        home.path(),
        "name = \"rust-bin\"\ndescription = \"d\"\n",
        &[("a.txt", "a")],
    );
    let mut catalog = BrickCatalog::builtin().unwrap();
    let load = catalog.add_folder(&dir);
    assert_eq!(load.added, Vec::<String>::new());
    assert_eq!(load.problems.len(), 1);
    assert_eq!(
        load.problems[0].message,
        "a brick named \"rust-bin\" is already offered"
    );
    // The built-in one is still the one offered.
    assert_eq!(
        catalog.get("rust-bin").unwrap().source,
        BrickSource::BuiltIn
    );
    #[cfg(unix)]
    {
        let other = tempfile::tempdir().unwrap();
        let dir = brick_dir(
            other.path(),
            "name = \"linked\"\ndescription = \"d\"\n",
            &[],
        );
        std::os::unix::fs::symlink("/etc/hostname", dir.join("template/secret")).unwrap();
        let load = BrickCatalog::default().add_folder(&dir);
        assert_eq!(load.problems.len(), 1);
        let err = &load.problems[0];
        assert!(
            err.message.ends_with("is a symbolic link"),
            "{}",
            err.message
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_are_shown_resolved_for_the_destination() {
    let engine = engine(None);
    assert_eq!(
        engine.default_value("python-package", "package", Path::new("/x/My-Tool")),
        Some("my_tool".to_owned())
    );
    assert_eq!(
        engine.default_value("python-package", "nope", Path::new("/x/a")),
        None
    );
}
