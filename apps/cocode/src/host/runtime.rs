//! The process's one tokio runtime. `main` builds it once and hands its
//! `Handle` down: the command line blocks on it, the window's workers spawn
//! onto it. Nothing else in the app builds a runtime (`cargo xtask
//! boundaries` keeps it so), and [`built`] counts what this function built,
//! so tests can show there is exactly one.

use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context as _;

static BUILT: AtomicUsize = AtomicUsize::new(0);

/// Builds the runtime: a worker per core, named threads, IO and time.
pub fn build() -> anyhow::Result<tokio::runtime::Runtime> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_name("cocode-worker")
        .enable_all()
        .build()
        .context("starting the runtime")?;
    BUILT.fetch_add(1, Ordering::SeqCst);
    Ok(runtime)
}

/// How many runtimes this process has built.
pub fn built() -> usize {
    BUILT.load(Ordering::SeqCst)
}
