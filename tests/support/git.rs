//! Running the real `git` in a test's repository, with a fixed identity
//! and none of the machine's or person's git configuration.
//!
//! Test crates include this file with
//! `#[path = "…/tests/support/git.rs"] mod git;`.
#![allow(
    dead_code,
    reason = "each test crate uses the part of the helper it needs"
)]
#![expect(clippy::disallowed_methods, reason = "tests run the real git")]
#![allow(
    clippy::expect_used,
    reason = "a test helper; outside `cfg(test)` in integration test crates"
)]

use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs")
}

/// Runs `git ARGS` in `dir`, which must succeed; its output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("git prints UTF-8 here")
}

/// Runs `git ARGS` in `dir`, which must fail (a conflicting merge).
pub fn git_failing(dir: &Path, args: &[&str]) {
    let out = run(dir, args);
    assert!(!out.status.success(), "git {args:?} should fail: {out:?}");
}
