//! Which version-control metadata a workspace holds: every entry named as
//! one (`.git`, `.hg`, `.svn`, `.jj`, `.bzr`) at any depth — the root and
//! ignored folders included, which the sweep does not look into — without
//! following links or looking inside. A sweep takes the census when it
//! begins; what is new when it ends was made by the commands or the agent
//! in between (a `git init` at a root that had no repository, a clone into
//! an ignored folder), and goes again as a repository made below does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use cocode_core::path::{NormalizeOptions, NormalizedPath, is_version_control_name, normalize};

/// The most entries one census reads; a larger workspace gets none (and
/// what is made in it is judged by the sweep's own records alone).
pub const CENSUS_LIMIT: usize = 2_000_000;

/// One folder's part of a census.
#[derive(Default)]
struct Listed {
    /// Metadata entries in it, relative to the root.
    found: Vec<PathBuf>,
    /// Folders in it to list next, relative to the root.
    folders: Vec<PathBuf>,
    /// It could not be read.
    unreadable: bool,
}

/// The metadata entries below `root` as workspace paths, sorted; `None`
/// past [`CENSUS_LIMIT`] entries or when the root cannot be read. Folder
/// depth by folder depth, each depth's folders listed on every core; a
/// name is looked at without a path made for it (only folders and
/// metadata get one).
pub fn take(root: &Path, options: NormalizeOptions) -> Option<BTreeSet<NormalizedPath>> {
    census_from(root, vec![PathBuf::new()], options)
}

/// [`take`] of the folders `below` (relative to `root`) and what they hold;
/// a folder that is gone holds nothing.
pub(crate) fn take_below(
    root: &Path,
    below: &BTreeSet<PathBuf>,
    options: NormalizeOptions,
) -> Option<BTreeSet<NormalizedPath>> {
    census_from(root, below.iter().cloned().collect(), options)
}

#[tracing::instrument(level = "debug", skip_all, name = "sweep.census")]
fn census_from(
    root: &Path,
    start: Vec<PathBuf>,
    options: NormalizeOptions,
) -> Option<BTreeSet<NormalizedPath>> {
    let seen = AtomicUsize::new(0);
    let mut found = BTreeSet::new();
    let mut depth = start;
    while !depth.is_empty() {
        let listings = crate::parallel::parallel_map(&depth, |rel| list(root, rel, &seen));
        if seen.load(Ordering::Relaxed) > CENSUS_LIMIT {
            return None;
        }
        let mut deeper = Vec::new();
        for (rel, listed) in depth.iter().zip(listings) {
            // A folder that vanished meanwhile holds nothing; the root
            // unreadable, nothing is known.
            if listed.unreadable && rel.as_os_str().is_empty() {
                return None;
            }
            for entry in listed.found {
                if let Some(p) =
                    crate::disk_text::text_of(&entry).and_then(|t| normalize(&t, options).ok())
                {
                    found.insert(p);
                }
            }
            deeper.extend(listed.folders);
        }
        depth = deeper;
    }
    Some(found)
}

/// One folder: its metadata entries and the folders to look into.
fn list(root: &Path, rel: &Path, seen: &AtomicUsize) -> Listed {
    let mut listed = Listed::default();
    let Ok(entries) = std::fs::read_dir(&*crate::disk::reach(root, rel)) else {
        listed.unreadable = true;
        return listed;
    };
    let mut count = 0;
    for entry in entries.flatten() {
        count += 1;
        let name = entry.file_name();
        if is_version_control_name(&name.to_string_lossy()) {
            listed.found.push(rel.join(&name));
            continue;
        }
        // `.cocode` is cocode's own; links are not followed.
        if entry.file_type().is_ok_and(|kind| kind.is_dir())
            && !(rel.as_os_str().is_empty() && name == ".cocode")
        {
            listed.folders.push(rel.join(&name));
        }
    }
    seen.fetch_add(count, Ordering::Relaxed);
    listed
}

/// What `after` holds that `before` did not: entries made meanwhile.
pub fn made(
    before: &BTreeSet<NormalizedPath>,
    after: &BTreeSet<NormalizedPath>,
) -> Vec<NormalizedPath> {
    after.difference(before).cloned().collect()
}

#[cfg(test)]
#[expect(clippy::disallowed_methods, reason = "the test lays out a workspace")]
mod tests {
    use super::*;
    use cocode_core::path::CaseSensitivity;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_census_finds_metadata_at_the_root_and_in_ignored_folders_but_not_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let options = NormalizeOptions::native(CaseSensitivity::Sensitive);
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join(".cocode/x/.git")).unwrap();
        std::fs::write(root.join(".gitignore"), "node_modules/\n").unwrap();
        let before = take(root, options).unwrap();
        assert!(before.is_empty(), "{before:?}");
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("node_modules/dep/.git/.git")).unwrap();
        std::fs::write(root.join("src/.hg"), "").unwrap();
        let after = take(root, options).unwrap();
        let new = made(&before, &after);
        let names: Vec<&str> = new.iter().map(NormalizedPath::as_str).collect();
        assert_eq!(names, vec![".git", "node_modules/dep/.git", "src/.hg"]);
        assert_eq!(made(&after, &after), Vec::<NormalizedPath>::new());
    }
}
