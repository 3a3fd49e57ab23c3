//! What `cocode_git::read` says of real repositories made with `git` in
//! temp folders, checked against what git itself says.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build repositories with the real git and write files"
)]
#![expect(clippy::unwrap_used, reason = "test helpers")]

#[path = "../../../tests/support/require.rs"]
mod require;

#[path = "../../../tests/support/git.rs"]
mod git;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use cocode_git::{FileState, Head, Kind, RepoState, Upstream, head_content, read};
use git::{git, git_failing};
use pretty_assertions::assert_eq;

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn state(staged: Option<Kind>, unstaged: Option<Kind>) -> FileState {
    FileState {
        staged,
        unstaged,
        renamed_from: None,
        is_folder: false,
    }
}

/// A repository with one commit of `a.txt`, `b.txt`, `c.txt`,
/// `src/lib.rs`, `src/old.rs` and `keep/k.txt`.
fn committed() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    for (rel, text) in [
        ("a.txt", "a\n"),
        ("b.txt", "b\n"),
        ("c.txt", "c\n"),
        ("src/lib.rs", "fn a() {}\nfn b() {}\n"),
        ("src/old.rs", "old\nold\nold\n"),
        ("keep/k.txt", "k\n"),
        (".gitignore", "target/\n*.log\n"),
    ] {
        write(root, rel, text);
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "first"]);
    dir
}

#[test]
fn a_folder_outside_any_repository_has_no_state() {
    if !require::require_program("git") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let outer = Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        !outer.status.success(),
        "the temp folder {} sits inside a repository; this test needs one that does not",
        dir.path().display()
    );
    assert_eq!(read(dir.path()).unwrap(), None);
    assert_eq!(head_content(dir.path(), "a.txt").unwrap(), None);
}

#[test]
fn every_kind_of_change_is_read_as_git_status_shows_it() {
    if !require::require_program("git") {
        return;
    }
    let dir = committed();
    let root = dir.path();
    write(root, "a.txt", "a changed\n");
    git(root, &["rm", "-q", "b.txt"]);
    std::fs::remove_file(root.join("c.txt")).unwrap();
    git(root, &["mv", "src/old.rs", "src/new.rs"]);
    write(root, "staged.txt", "new\n");
    git(root, &["add", "staged.txt"]);
    write(root, "src/lib.rs", "fn a() {}\nfn b() { 1 }\n");
    git(root, &["add", "src/lib.rs"]);
    write(root, "src/lib.rs", "fn a() { 2 }\nfn b() { 1 }\n");
    write(root, "fresh/one.txt", "1\n");
    write(root, "fresh/two.txt", "2\n");
    write(root, "loose.txt", "loose\n");
    write(root, "target/debug/out.bin", "bin\n");
    write(root, "run.log", "log\n");
    std::fs::create_dir_all(root.join(".cocode/history")).unwrap();
    write(root, ".cocode/history/x", "own\n");

    let read = read(root).unwrap().unwrap();
    let mut want = BTreeMap::new();
    want.insert("a.txt".to_owned(), state(None, Some(Kind::Modified)));
    want.insert("b.txt".to_owned(), state(Some(Kind::Deleted), None));
    want.insert("c.txt".to_owned(), state(None, Some(Kind::Deleted)));
    want.insert(
        "fresh".to_owned(),
        FileState {
            is_folder: true,
            ..state(None, Some(Kind::Untracked))
        },
    );
    want.insert("loose.txt".to_owned(), state(None, Some(Kind::Untracked)));
    want.insert("run.log".to_owned(), state(None, Some(Kind::Ignored)));
    want.insert(
        "src/lib.rs".to_owned(),
        state(Some(Kind::Modified), Some(Kind::Modified)),
    );
    want.insert(
        "src/new.rs".to_owned(),
        FileState {
            renamed_from: Some("src/old.rs".to_owned()),
            ..state(Some(Kind::Renamed), None)
        },
    );
    want.insert("staged.txt".to_owned(), state(Some(Kind::Added), None));
    want.insert(
        "target".to_owned(),
        FileState {
            is_folder: true,
            ..state(None, Some(Kind::Ignored))
        },
    );
    assert_eq!(read.files, want);
    // git itself says the same of the tracked and untracked paths (it
    // also lists cocode's own folder, which cocode leaves out).
    assert_eq!(
        sorted_lines(&git(
            root,
            &["status", "--porcelain", "--untracked-files=normal"]
        )),
        sorted_lines(
            " M a.txt\nD  b.txt\n D c.txt\nR  src/old.rs -> src/new.rs\nMM src/lib.rs\n\
             A  staged.txt\n?? fresh/\n?? loose.txt\n?? .cocode/\n"
        )
    );
    assert_eq!(read.head, Head::Branch("main".to_owned()));
    assert_eq!(read.upstream, None);
    assert_eq!(read.operation, None);
    assert_eq!(read.changed_count(), 8);
    // What the Explorer shows: files, files inside a folder shown whole,
    // folders rolled up (ignored files colour nothing above them).
    assert_eq!(read.file_kind("fresh/one.txt"), Some(Kind::Untracked));
    assert_eq!(read.file_kind("target/debug/out.bin"), Some(Kind::Ignored));
    assert_eq!(read.file_kind("keep/k.txt"), None);
    assert_eq!(read.folder_kind("src"), Some(Kind::Modified));
    assert_eq!(read.folder_kind("keep"), None);
    assert_eq!(read.folder_kind("target/debug"), Some(Kind::Ignored));
}

fn sorted_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines.join("\n") + "\n"
}

#[test]
fn a_conflicted_merge_shows_its_conflicts_and_the_operation() {
    if !require::require_program("git") {
        return;
    }
    let dir = committed();
    let root = dir.path();
    git(root, &["checkout", "-q", "-b", "other"]);
    write(root, "a.txt", "theirs\n");
    git(root, &["commit", "-q", "-am", "theirs"]);
    git(root, &["checkout", "-q", "main"]);
    write(root, "a.txt", "ours\n");
    git(root, &["commit", "-q", "-am", "ours"]);
    git_failing(root, &["merge", "-q", "other"]);
    let read = read(root).unwrap().unwrap();
    assert_eq!(read.file_kind("a.txt"), Some(Kind::Conflicted));
    assert_eq!(read.folder_kind(""), None, "the root is no folder entry");
    assert_eq!(read.operation.as_deref(), Some("merge"));
    assert_eq!(
        sorted_lines(&git(root, &["status", "--porcelain"])),
        "UU a.txt\n"
    );
}

#[test]
fn branch_upstream_detached_and_unborn_heads_are_named() {
    if !require::require_program("git") {
        return;
    }
    let origin = committed();
    let clone = tempfile::tempdir().unwrap();
    git(
        clone.path(),
        &["clone", "-q", origin.path().to_str().unwrap(), "."],
    );
    let root = clone.path();
    write(root, "mine.txt", "1\n");
    git(root, &["add", "mine.txt"]);
    git(root, &["commit", "-q", "-m", "mine 1"]);
    write(root, "mine.txt", "2\n");
    git(root, &["commit", "-q", "-am", "mine 2"]);
    write(origin.path(), "theirs.txt", "t\n");
    git(origin.path(), &["add", "theirs.txt"]);
    git(origin.path(), &["commit", "-q", "-m", "theirs"]);
    git(root, &["fetch", "-q"]);
    let read = read(root).unwrap().unwrap();
    assert_eq!(read.head, Head::Branch("main".to_owned()));
    assert_eq!(
        read.upstream,
        Some(Upstream {
            name: "origin/main".to_owned(),
            ahead: 2,
            behind: 1,
        })
    );
    assert_eq!(
        git(
            root,
            &["rev-list", "--left-right", "--count", "main...origin/main"]
        ),
        "2\t1\n"
    );

    let id = git(root, &["rev-parse", "--short=7", "HEAD~1"]);
    git(root, &["checkout", "-q", "--detach", "HEAD~1"]);
    let detached = cocode_git::read(root).unwrap().unwrap();
    assert_eq!(detached.head, Head::Detached(id.trim().to_owned()));
    assert_eq!(
        detached.head_id,
        Some(git(root, &["rev-parse", "HEAD"]).trim().to_owned())
    );
    assert_eq!(
        cocode_git::head(root).unwrap(),
        Some((detached.head.clone(), detached.head_id.clone()))
    );
    assert_eq!(detached.upstream, None);

    let empty = tempfile::tempdir().unwrap();
    git(empty.path(), &["init", "-q"]);
    write(empty.path(), "x.txt", "x\n");
    let unborn = cocode_git::read(empty.path()).unwrap().unwrap();
    assert_eq!(unborn.head, Head::Unborn("main".to_owned()));
    assert_eq!(unborn.head_id, None);
    assert_eq!(
        cocode_git::head(empty.path()).unwrap(),
        Some((Head::Unborn("main".to_owned()), None))
    );
    assert_eq!(unborn.file_kind("x.txt"), Some(Kind::Untracked));
    assert_eq!(head_content(empty.path(), "x.txt").unwrap(), None);
}

#[test]
fn a_workspace_inside_a_repository_sees_its_own_paths_and_their_head_content() {
    if !require::require_program("git") {
        return;
    }
    let dir = committed();
    let root = dir.path();
    write(root, "src/lib.rs", "changed\n");
    write(root, "a.txt", "changed\n");
    let read = read(&root.join("src")).unwrap().unwrap();
    let state: &RepoState = &read;
    assert_eq!(
        state.files.keys().collect::<Vec<_>>(),
        ["lib.rs"],
        "only the workspace's own paths, relative to it"
    );
    assert_eq!(state.workdir, dunce::canonicalize(root).unwrap());
    assert_eq!(
        head_content(&root.join("src"), "lib.rs")
            .unwrap()
            .as_deref(),
        Some(&b"fn a() {}\nfn b() {}\n"[..])
    );
    assert_eq!(
        head_content(root, "src/lib.rs").unwrap().as_deref(),
        Some(&b"fn a() {}\nfn b() {}\n"[..])
    );
    assert_eq!(head_content(root, "src/missing.rs").unwrap(), None);
    // Many at once, in order, as one by one.
    let lib = Some(b"fn a() {}\nfn b() {}\n".to_vec());
    assert_eq!(
        cocode_git::head_contents(root, &["src/lib.rs", "src/missing.rs", "src"]).unwrap(),
        [lib.clone(), None, None]
    );
    assert_eq!(
        cocode_git::index_contents(root, &["src/missing.rs", "src/lib.rs"]).unwrap(),
        [None, lib]
    );
    assert_eq!(
        cocode_git::absolute_path(root, "src/lib.rs"),
        root.join("src").join("lib.rs")
    );
    assert_eq!(
        head_content(root, "src").unwrap(),
        None,
        "a folder is no file"
    );
}
