//! Which version-control metadata a workspace holds: every entry named as
//! one (`.git`, `.hg`, `.svn`, `.jj`, `.bzr`) at any depth — the root and
//! ignored folders included, which the sweep does not look into — without
//! following links or looking inside. A sweep takes the census when it
//! begins; what is new when it ends was made by the commands or the agent
//! in between (a `git init` at a root that had no repository, a clone into
//! an ignored folder), and goes again as a repository made below does.

use std::collections::BTreeSet;
use std::path::Path;

use cocode_core::path::{NormalizeOptions, NormalizedPath, is_version_control_name, normalize};

/// The most entries one census reads; a larger workspace gets none (and
/// what is made in it is judged by the sweep's own records alone).
pub const CENSUS_LIMIT: usize = 2_000_000;

/// The metadata entries below `root` as workspace paths, sorted; `None`
/// past [`CENSUS_LIMIT`] entries or when a folder cannot be read.
pub fn take(root: &Path, options: NormalizeOptions) -> Option<BTreeSet<NormalizedPath>> {
    let mut found = BTreeSet::new();
    let mut folders = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            // A folder that vanished meanwhile holds nothing.
            if folder == root {
                return None;
            }
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > CENSUS_LIMIT {
                return None;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let path = entry.path();
            if is_version_control_name(&name.to_string_lossy()) {
                let rel = path.strip_prefix(root).ok()?;
                if let Ok(p) = normalize(&rel.to_string_lossy(), options) {
                    found.insert(p);
                }
                continue;
            }
            // `.cocode` is cocode's own; links are not followed.
            if kind.is_dir() && !(folder == root && name == ".cocode") {
                folders.push(path);
            }
        }
    }
    Some(found)
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
