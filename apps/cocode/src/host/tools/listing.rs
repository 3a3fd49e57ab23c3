//! `listFiles`' listings: the files below a folder in path order, walked
//! only as far as the pages asked for so far.
//!
//! Each folder is listed when the walk reaches it and its entries sorted as
//! their paths sort (a folder's name with the `/` that follows it), so the
//! files come out in the order a sort of all the paths gives, and the first
//! page costs the folders before its last file, not the tree: 500 files of
//! a 24,000-file workspace read a few dozen folders.

use std::path::{Path, PathBuf};

use cocode_workspace::IgnoreFilter;

/// One entry of a folder still to visit.
#[derive(Debug)]
struct Pending {
    /// How it sorts: its name, and `/` after a folder's.
    key: String,
    path: PathBuf,
    folder: bool,
}

/// The walk of one listing, and the files it found so far.
#[derive(Debug)]
pub(crate) struct LazyListing {
    /// Paths are made relative to it (the workspace root).
    root: PathBuf,
    rules: IgnoreFilter,
    /// The folders being walked, outermost first, each with its entries
    /// still to visit, the next last.
    stack: Vec<Vec<Pending>>,
    /// The files found so far, in path order.
    files: Vec<String>,
}

impl LazyListing {
    /// The listing of `dir` (inside `root`): gitignore-aware (the rules of
    /// every folder from the file system's root down, as git tools apply
    /// them), without `.git/` and `.cocode/`, links not followed, only
    /// regular files listed. Nothing is read yet.
    pub(crate) fn new(root: &Path, dir: &Path) -> Self {
        let mut listing = Self {
            root: root.to_path_buf(),
            rules: IgnoreFilter::with_parents_of(dir),
            stack: Vec::new(),
            files: Vec::new(),
        };
        let top = listing.entries(dir);
        listing.stack.push(top);
        listing
    }

    /// The entries of `folder` the walk visits, the first in path order
    /// last (an unreadable folder has none).
    fn entries(&self, folder: &Path) -> Vec<Pending> {
        let Ok(read) = std::fs::read_dir(folder) else {
            return Vec::new();
        };
        let mut entries: Vec<Pending> = read
            .flatten()
            .filter_map(|entry| {
                let kind = entry.file_type().ok()?;
                let (folder, file) = (kind.is_dir(), kind.is_file());
                if !folder && !file {
                    return None;
                }
                let name = entry.file_name();
                if folder && crate::host::files::hidden_dir(&name) {
                    return None;
                }
                let path = entry.path();
                if self.rules.ignores(&path, folder) {
                    return None;
                }
                let mut key = name.to_string_lossy().into_owned();
                if folder {
                    key.push('/');
                }
                Some(Pending { key, path, folder })
            })
            .collect();
        entries.sort_unstable_by(|a, b| b.key.cmp(&a.key));
        entries
    }

    /// Walks on until at least `count` files are found or none is left.
    fn fill(&mut self, count: usize) {
        while self.files.len() < count {
            let Some(top) = self.stack.last_mut() else {
                return;
            };
            match top.pop() {
                None => {
                    self.stack.pop();
                }
                Some(Pending {
                    path, folder: true, ..
                }) => {
                    let inner = self.entries(&path);
                    self.stack.push(inner);
                }
                Some(Pending { path, .. }) => {
                    if let Ok(rel) = path.strip_prefix(&self.root) {
                        self.files.push(rel.to_string_lossy().replace('\\', "/"));
                    }
                }
            }
        }
    }

    /// The files from `start` on, at most `limit` of them, and whether more
    /// follow.
    pub(crate) fn page(&mut self, start: usize, limit: usize) -> (&[String], bool) {
        self.fill(start.saturating_add(limit).saturating_add(1));
        let end = start.saturating_add(limit).min(self.files.len());
        let more = self.files.len() > end;
        (self.files.get(start..end).unwrap_or_default(), more)
    }

    /// How many files were found so far.
    pub(crate) fn found(&self) -> usize {
        self.files.len()
    }
}

#[cfg(test)]
#[expect(clippy::disallowed_methods, reason = "the tests lay out trees")]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn all(listing: &mut LazyListing) -> Vec<String> {
        listing.page(0, usize::MAX / 2).0.to_vec()
    }

    /// Names that sort differently as names and as paths (`a-b/`, `a.txt`,
    /// `a/`), ignored and hidden folders, a link: the walk gives what a
    /// sort of every listed path gives, and a page reads no further than
    /// it needs.
    #[test]
    fn files_come_in_the_order_of_their_sorted_paths_and_only_as_far_as_asked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "a/b",
            "a/z/y",
            "a.txt",
            "a-b/c",
            "a0",
            "b/.hidden",
            "B",
            "한글/파일",
            "ignored/x",
            "kept/x.log",
            "kept/y",
            ".git/config",
            ".cocode/state",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "ignored/\n*.log\n").unwrap();
        // A link to a folder is not followed.
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("a"), root.join("link")).unwrap();
        let expected = vec![
            ".gitignore",
            "B",
            "a-b/c",
            "a.txt",
            "a/b",
            "a/z/y",
            "a0",
            "b/.hidden",
            "kept/y",
            "한글/파일",
        ];
        let mut sorted = expected.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, expected);
        let mut listing = LazyListing::new(root, root);
        let (page, more) = listing.page(0, 3);
        assert_eq!(page.to_vec(), vec![".gitignore", "B", "a-b/c"]);
        assert!(more);
        // The fourth file was looked for, no more.
        assert_eq!(listing.found(), 4);
        let (page, more) = listing.page(3, 3);
        assert_eq!(page.to_vec(), vec!["a.txt", "a/b", "a/z/y"]);
        assert!(more);
        assert_eq!(all(&mut listing), expected);
        let (page, more) = listing.page(8, 5);
        assert_eq!(page.to_vec(), vec!["kept/y", "한글/파일"]);
        assert!(!more);
        assert_eq!(listing.page(20, 5).0.len(), 0);
        // Below a folder: paths stay the workspace's.
        let mut below = LazyListing::new(root, &root.join("a"));
        assert_eq!(all(&mut below), vec!["a/b", "a/z/y"]);
    }
}
