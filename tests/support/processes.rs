//! Which processes work in a folder: a test's way to find the agents it
//! started (they run with the workspace as their working folder) and to
//! check that none is left.
//!
//! Test crates include this file with
//! `#[path = "…/tests/support/processes.rs"] mod processes;`.

use std::path::Path;

/// The processes (other than this one) whose working folder is `root`
/// (Linux: read from `/proc`).
pub fn in_folder(root: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            (pid != std::process::id()
                && std::fs::read_link(e.path().join("cwd")).is_ok_and(|c| c == root))
            .then_some(pid)
        })
        .collect()
}
