//! The files of a workspace as people and tools see them: gitignore-aware
//! (the ignore files read by [`IgnoreFilter`], never blocking on a FIFO),
//! without the VCS's and cocode's own state folders.

use std::path::Path;

use cocode_core::path::is_cocode_name;
use cocode_workspace::IgnoreFilter;
use ignore::WalkBuilder;

/// The most files a listing holds (quick open, search in files, the
/// language servers' whole-workspace diagnostics).
pub const MAX_FILES: usize = 500_000;

/// Folders never listed: the VCS's and cocode's own state (`.cocode` in
/// any spelling).
pub fn hidden_dir(name: &std::ffi::OsStr) -> bool {
    name == ".git" || name.to_str().is_some_and(is_cocode_name)
}

/// The files of `root`, gitignore-aware, without `.git/` and `.cocode/`,
/// as sorted workspace paths; and how many were left out past the cap.
pub fn list_files(root: &Path) -> (Vec<String>, usize) {
    let rules = IgnoreFilter::with_parents_of(root);
    // Listed on every core, as ripgrep lists; the sort makes the order.
    let walker = WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let hidden = is_dir && hidden_dir(e.file_name());
            !hidden && (e.depth() == 0 || !rules.ignores(e.path(), is_dir))
        })
        .build_parallel();
    let found = std::sync::Mutex::new(Vec::new());
    walker.run(|| {
        let found = &found;
        Box::new(move |entry| {
            if let Ok(entry) = entry
                && entry.file_type().is_some_and(|t| t.is_file())
                && let Ok(rel) = entry.path().strip_prefix(root)
            {
                let rel = rel.to_string_lossy().replace('\\', "/");
                found
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(rel);
            }
            ignore::WalkState::Continue
        })
    });
    let mut files = found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    files.sort();
    // The first in path order stay: the same ones each time.
    let omitted = files.len().saturating_sub(MAX_FILES);
    files.truncate(MAX_FILES);
    (files, omitted)
}
