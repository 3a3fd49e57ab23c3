//! One rule for tests that need a real peer (an installed program, a kernel
//! feature, a real agent): under `CI` a missing peer fails the test;
//! elsewhere the test says why it skips, and the skip is recorded so that
//! `cargo xtask test` counts and names every skip in its summary.
//!
//! Test crates include this file with
//! `#[path = "…/tests/support/require.rs"] mod require;`.
#![allow(
    dead_code,
    reason = "each test crate uses the part of the helper it needs"
)]

use std::sync::atomic::{AtomicUsize, Ordering};

static RECORDED: AtomicUsize = AtomicUsize::new(0);

/// Whether `program` is a file in one of `PATH`'s folders.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// True when the peer `what` is `present`. Otherwise: a failure under `CI`,
/// elsewhere a recorded skip (the caller returns).
pub fn require(what: &str, present: bool) -> bool {
    if present {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} is required under CI (cargo xtask test installs it)"
    );
    eprintln!("skipped: {what} is not available here");
    record(what);
    false
}

/// [`require`] for a program on `PATH`.
pub fn require_program(program: &str) -> bool {
    require(program, on_path(program))
}

/// Appends the skip to the folder `cargo xtask test` reads
/// (`COCODE_SKIPPED_DIR`), one file per skip so parallel test processes
/// never interleave.
fn record(what: &str) {
    let Some(dir) = std::env::var_os("COCODE_SKIPPED_DIR") else {
        return;
    };
    let test = std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .map(str::to_owned)
        .or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|e| e.file_stem().map(|s| s.to_string_lossy().into_owned()))
        })
        .unwrap_or_default();
    let n = RECORDED.fetch_add(1, Ordering::SeqCst);
    let file = std::path::Path::new(&dir).join(format!("{}-{n}", std::process::id()));
    #[expect(
        clippy::disallowed_methods,
        reason = "a test helper records a skip for the test runner's summary"
    )]
    let written = std::fs::write(file, format!("{test}: {what}\n"));
    if let Err(e) = written {
        eprintln!("the skip could not be recorded: {e}");
    }
}
