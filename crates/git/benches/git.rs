//! Two comparisons on a repository of 10,000 files (100 folders × 100),
//! committed, then 50 files changed and 20 new ones, reported by `cargo
//! xtask bench` as ours/peer (bars in `xtask/src/bench.rs`, shown in
//! TESTING.md):
//! - `git_status_10000`: `cocode_git::read` of the repository against
//!   `git status --porcelain` of it (a warm index on both sides);
//! - `git_line_marks_10000`: the gutter's marks of a changed 10,000-line
//!   file (its text at HEAD read from the repository, the file read, the
//!   lines compared) against `git diff -U0` of it.
#![expect(
    clippy::disallowed_methods,
    reason = "the bench builds its repository with git and runs it as the peer"
)]
#![expect(clippy::unwrap_used, reason = "bench setup")]

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};

/// Folders of 100 files (fewer in debug builds so `cargo test` stays fast).
const FOLDERS: usize = if cfg!(debug_assertions) { 3 } else { 100 };
const LINES: usize = if cfg!(debug_assertions) { 300 } else { 10_000 };

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    out.stdout
}

/// The repository: committed, then changed.
fn repository(root: &Path) {
    for d in 0..FOLDERS {
        let folder = root.join(format!("d{d:03}"));
        std::fs::create_dir_all(&folder).unwrap();
        for f in 0..100 {
            std::fs::write(
                folder.join(format!("f{f:02}.txt")),
                format!("file {d} {f}\n").repeat(3),
            )
            .unwrap();
        }
    }
    let mut big = String::new();
    for line in 0..LINES {
        writeln!(big, "line {line}: some text that stays the same").unwrap();
    }
    std::fs::write(root.join("big.txt"), &big).unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "first"]);
    for d in 0..FOLDERS.min(50) {
        std::fs::write(root.join(format!("d{d:03}/f00.txt")), "changed\n").unwrap();
    }
    for n in 0..20 {
        std::fs::write(root.join(format!("new{n}.txt")), "new\n").unwrap();
    }
    // Every 100th line changed, every 250th removed, a line added every 500.
    let mut changed = String::new();
    for line in 0..LINES {
        if line % 250 == 0 {
            continue;
        }
        if line % 100 == 0 {
            writeln!(changed, "line {line}: changed").unwrap();
        } else {
            writeln!(changed, "line {line}: some text that stays the same").unwrap();
        }
        if line % 500 == 0 {
            changed.push_str("an added line\n");
        }
    }
    std::fs::write(root.join("big.txt"), changed).unwrap();
    // Both sides start from an index whose stat data is fresh.
    git(root, &["status", "--porcelain"]);
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repository(root);
    let wanted = cocode_git::read(root).unwrap().unwrap();
    assert_eq!(wanted.changed_count(), FOLDERS.min(50) + 20 + 1);

    let mut status = c.benchmark_group("git_status_10000");
    status.sample_size(20);
    status.bench_function("ours", |b| {
        b.iter(|| {
            let state = cocode_git::read(root).unwrap().unwrap();
            assert_eq!(state.files.len(), wanted.files.len());
        });
    });
    status.bench_function("peer", |b| {
        b.iter(|| {
            let out = git(root, &["status", "--porcelain"]);
            assert!(!out.is_empty());
        });
    });
    status.finish();

    let mut marks = c.benchmark_group("git_line_marks_10000");
    marks.sample_size(20);
    marks.bench_function("ours", |b| {
        b.iter(|| {
            let base = cocode_git::head_content(root, "big.txt").unwrap().unwrap();
            let now = std::fs::read_to_string(root.join("big.txt")).unwrap();
            let marks = cocode_git::line_marks(std::str::from_utf8(&base).unwrap(), &now);
            assert!(!marks.is_empty());
        });
    });
    marks.bench_function("peer", |b| {
        b.iter(|| {
            let out = git(root, &["diff", "--no-color", "-U0", "--", "big.txt"]);
            assert!(!out.is_empty());
        });
    });
    marks.finish();
}

criterion_group!(git_benches, benches);
criterion_main!(git_benches);
