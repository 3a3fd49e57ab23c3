//! Ignore rules, read without following links or blocking.
//!
//! Every listing of the workspace (the sweep, agents' `listFiles`, the
//! Explorer, quick open, search) judges by these rules. Ignore files are
//! read here, not by the `ignore` crate's walker, which opens them
//! blocking: a FIFO a command named `.gitignore` hung every walk.
//!
//! A sweep's scan before a command keeps the contents it read
//! ([`KeptRules`]). The scan after the command judges by those kept rules,
//! not by the files as the command left them: a command that writes a
//! `.gitignore` naming a file it creates cannot hide that file from the
//! record.
//!
//! The precedence is the `ignore` crate's, which the scan before uses:
//! `.ignore` files before `.gitignore` files, each kind from the deepest
//! folder up (the first pattern that decides, ignoring or re-including,
//! wins), then `.git/info/exclude`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The ignore files a folder can hold, highest precedence first.
const IGNORE_FILES: [&str; 2] = [".ignore", ".gitignore"];

/// Whether `path` names an ignore file (by its last name).
pub fn is_ignore_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| IGNORE_FILES.iter().any(|f| n == *f))
}

/// Whether a name a listing met may be one of a folder's ignore files (any
/// case: on a file system that folds case, `.GITIGNORE` is read as
/// `.gitignore`).
pub(crate) fn is_ignore_name(name: &std::ffi::OsStr) -> bool {
    IGNORE_FILES
        .iter()
        .any(|f| name.as_encoded_bytes().eq_ignore_ascii_case(f.as_bytes()))
}

/// A folder's [`IGNORE_FILES`] (`rel` relative to `root`) as they are now,
/// in that order.
pub(crate) fn read_ignore_files(root: &Path, rel: &Path) -> [Option<Vec<u8>>; 2] {
    IGNORE_FILES.map(|name| read_small(&crate::disk::reach(root, &rel.join(name))))
}

/// The ignore files' contents as one scan met them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeptRules {
    /// Folder relative to the root (empty for the root) → the contents of
    /// its [`IGNORE_FILES`], in that order.
    folders: BTreeMap<PathBuf, [Option<Vec<u8>>; 2]>,
    /// `.git/info/exclude` at the root.
    exclude: Option<Vec<u8>>,
}

impl KeptRules {
    /// Keeps the ignore files of `rel` (a folder below `root`) as they are
    /// now, and adds them to `matchers`.
    pub(crate) fn keep_folder(&mut self, rel: &Path, matchers: &mut Matchers) {
        let (files, exclude) = matchers.read_folder(rel);
        if rel.as_os_str().is_empty() {
            self.exclude = exclude;
        }
        if files.iter().any(Option::is_some) {
            self.folders.insert(rel.to_path_buf(), files);
        }
    }

    /// Keeps the ignore files a listing of `rel` (a folder below the root,
    /// not the root) read, and adds them to `matchers`.
    pub(crate) fn keep_read(
        &mut self,
        rel: &Path,
        files: [Option<Vec<u8>>; 2],
        matchers: &mut Matchers,
    ) {
        if files.iter().any(Option::is_some) {
            matchers.add(rel, &files);
            self.folders.insert(rel.to_path_buf(), files);
        }
    }

    /// Whether `.git/info/exclude` at `root` differs from the kept one.
    pub(crate) fn exclude_differs(&self, root: &Path) -> bool {
        read_small(&crate::disk::reach(root, Path::new(".git/info/exclude"))) != self.exclude
    }

    /// The kept rules as matchers anchored at `root`.
    pub(crate) fn matchers(&self, root: &Path) -> Matchers {
        let mut matchers = Matchers::new(root);
        for (rel, files) in &self.folders {
            matchers.add(rel, files);
        }
        matchers.exclude = self.exclude.as_ref().map(|c| Arc::new(compile(root, c)));
        matchers
    }
}

/// Compiled ignore rules.
#[derive(Debug)]
pub(crate) struct Matchers {
    root: PathBuf,
    /// Per kind of [`IGNORE_FILES`]: folder relative to the root → its file.
    kinds: [BTreeMap<PathBuf, Arc<Gitignore>>; 2],
    exclude: Option<Arc<Gitignore>>,
}

impl Matchers {
    /// No rules yet.
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            kinds: Default::default(),
            exclude: None,
        }
    }

    /// Reads the ignore files of `rel` (a folder below the root) as they
    /// are now and adds them; returns their contents (and, for the root,
    /// `.git/info/exclude`).
    fn read_folder(&mut self, rel: &Path) -> ([Option<Vec<u8>>; 2], Option<Vec<u8>>) {
        let files = read_ignore_files(&self.root, rel);
        let mut exclude = None;
        if rel.as_os_str().is_empty() {
            exclude = read_small(&self.root.join(".git/info/exclude"));
            self.exclude = exclude.as_ref().map(|c| Arc::new(compile(&self.root, c)));
        }
        self.add(rel, &files);
        (files, exclude)
    }

    fn add(&mut self, rel: &Path, files: &[Option<Vec<u8>>; 2]) {
        let folder = self.root.join(rel);
        for (kind, content) in files.iter().enumerate() {
            if let Some(content) = content {
                self.kinds[kind].insert(rel.to_path_buf(), Arc::new(compile(&folder, content)));
            }
        }
    }

    /// [`Self::ignores`] of `rel`, relative to the root; no rules at all
    /// (the usual tree without ignore files) answer at once.
    pub(crate) fn ignores_below(&self, rel: &Path, is_dir: bool) -> bool {
        if self.kinds.iter().all(BTreeMap::is_empty) && self.exclude.is_none() {
            return false;
        }
        self.ignores(&self.root.join(rel), is_dir)
    }

    /// The rules that judge what the folder `rel` (relative to the root)
    /// holds, gathered once for all its entries.
    pub(crate) fn in_folder(&self, rel: &Path) -> FolderRules {
        let mut chain = Vec::new();
        let mut split = 0;
        for (n, kind) in self.kinds.iter().enumerate() {
            for folder in rel.ancestors() {
                if let Some(matcher) = kind.get(folder) {
                    chain.push(Arc::clone(matcher));
                }
            }
            if n == 0 {
                split = chain.len();
            }
        }
        FolderRules {
            chain,
            split,
            exclude: self.exclude.clone(),
            path: self.root.join(rel),
        }
    }

    /// [`Self::in_folder`] of a folder whose own ignore files (`own`, in
    /// [`IGNORE_FILES`] order) were read but not added yet.
    pub(crate) fn in_folder_with(&self, rel: &Path, own: &[Option<Vec<u8>>; 2]) -> FolderRules {
        let folder = self.root.join(rel);
        let compiled = own
            .each_ref()
            .map(|c| c.as_ref().map(|c| Arc::new(compile(&folder, c))));
        self.in_folder(rel).below(&folder, compiled)
    }

    /// Whether the rules ignore `rel` (relative to the root) or a folder
    /// above it: a path met without walking down to it.
    pub(crate) fn ignores_here_or_above(&self, rel: &Path, is_dir: bool) -> bool {
        let mut at = PathBuf::new();
        let mut parts = rel.components().peekable();
        while let Some(part) = parts.next() {
            at.push(part);
            let last = parts.peek().is_none();
            if self.ignores_below(&at, !last || is_dir) {
                return true;
            }
        }
        false
    }

    /// Whether the rules ignore `path` (absolute, below the root).
    pub(crate) fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let Some(folder) = path.strip_prefix(&self.root).ok().and_then(Path::parent) else {
            return false;
        };
        // One order of precedence, kept in one place.
        self.in_folder(folder).ignores_path(path, is_dir)
    }
}

/// The rules of one folder's entries, in [`Matchers::ignores`]' order
/// (see [`Matchers::in_folder`]).
#[derive(Debug)]
pub(crate) struct FolderRules {
    chain: Vec<Arc<Gitignore>>,
    /// Where the chain's `.ignore` files end and its `.gitignore` files
    /// begin.
    split: usize,
    exclude: Option<Arc<Gitignore>>,
    /// The folder's absolute path; an entry's name is pushed to judge it.
    path: PathBuf,
}

impl FolderRules {
    /// Whether the rules ignore the entry `name` of the folder: the same
    /// answer as [`Matchers::ignores_below`] of its path.
    pub(crate) fn ignores(&mut self, name: &std::ffi::OsStr, is_dir: bool) -> bool {
        if self.chain.is_empty() && self.exclude.is_none() {
            return false;
        }
        self.path.push(name);
        let ignored = self.ignores_path(&self.path, is_dir);
        self.path.pop();
        ignored
    }

    /// The rules of `folder`, a folder of this one (absolute), whose own
    /// ignore files are `own` (in [`IGNORE_FILES`] order): each kind's own
    /// file before this folder's of that kind.
    fn below(&self, folder: &Path, own: [Option<Arc<Gitignore>>; 2]) -> Self {
        let [ignore, gitignore] = own;
        let mut chain = Vec::with_capacity(self.chain.len() + 2);
        chain.extend(ignore);
        chain.extend(self.chain[..self.split].iter().cloned());
        let split = chain.len();
        chain.extend(gitignore);
        chain.extend(self.chain[self.split..].iter().cloned());
        Self {
            chain,
            split,
            exclude: self.exclude.clone(),
            path: folder.to_path_buf(),
        }
    }

    /// Whether the rules ignore `path`, an entry of the folder (absolute).
    fn ignores_path(&self, path: &Path, is_dir: bool) -> bool {
        for matcher in &self.chain {
            let decided = matcher.matched(path, is_dir);
            if decided.is_ignore() {
                return true;
            }
            if decided.is_whitelist() {
                return false;
            }
        }
        self.exclude
            .as_ref()
            .is_some_and(|m| m.matched(path, is_dir).is_ignore())
    }
}

/// The ignore rules of a tree as they are on disk, for a walker's entry
/// filter: a folder's files are read the first time the walk asks about
/// something in it (a walk meets folders before what they hold).
#[derive(Debug)]
pub struct IgnoreFilter {
    state: Mutex<FilterState>,
}

#[derive(Debug)]
struct FilterState {
    read: BTreeSet<PathBuf>,
    matchers: Matchers,
    /// A folder (absolute) → the rules of its entries, gathered the first
    /// time one was asked about (its folders and those above it read).
    folders: HashMap<PathBuf, Arc<FolderRules>>,
}

impl IgnoreFilter {
    /// The rules of `root` and the folders below it.
    pub fn new(root: &Path) -> Self {
        Self {
            state: Mutex::new(FilterState {
                read: BTreeSet::new(),
                matchers: Matchers::new(root),
                folders: HashMap::new(),
            }),
        }
    }

    /// The rules of every folder from the file system's root down, as git
    /// tools apply a parent folder's `.gitignore` to a folder inside it.
    pub fn with_parents_of(dir: &Path) -> Self {
        Self::new(dir.ancestors().last().unwrap_or(dir))
    }

    /// Whether the rules ignore `path` (absolute; anything outside the
    /// filter's root is not ignored).
    pub fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let Some(parent) = path.parent() else {
            return false;
        };
        let rules = match self.rules_below_known(parent) {
            Some(rules) => rules,
            None => match self.rules_read_from_root(parent) {
                Some(rules) => rules,
                None => return false,
            },
        };
        // Judged outside the lock: walkers on other threads go on.
        rules.ignores_path(path, is_dir)
    }

    /// The rules of `folder` when they or the rules of the folder above it
    /// are known (a walk meets a folder as an entry of the one above): its
    /// own ignore files, read outside the lock, before those.
    fn rules_below_known(&self, folder: &Path) -> Option<Arc<FolderRules>> {
        let above = {
            let state = self
                .state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(rules) = state.folders.get(folder) {
                return Some(Arc::clone(rules));
            }
            if folder == state.matchers.root || !folder.starts_with(&state.matchers.root) {
                return None;
            }
            Arc::clone(state.folders.get(folder.parent()?)?)
        };
        let own = IGNORE_FILES.map(|name| {
            read_small(&folder.join(name)).map(|content| Arc::new(compile(folder, &content)))
        });
        let rules = Arc::new(above.below(folder, own));
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Some(Arc::clone(
            state.folders.entry(folder.to_path_buf()).or_insert(rules),
        ))
    }

    /// The rules of `folder`, its folders read from the filter's root
    /// down; `None` outside the root.
    fn rules_read_from_root(&self, parent: &Path) -> Option<Arc<FolderRules>> {
        {
            let mut state = self
                .state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let FilterState {
                read,
                matchers,
                folders,
            } = &mut *state;
            if let Some(rules) = folders.get(parent) {
                return Some(Arc::clone(rules));
            }
            let rel = parent.strip_prefix(&matchers.root).ok()?;
            let above: Vec<PathBuf> = rel.ancestors().map(Path::to_path_buf).collect();
            for folder in above.into_iter().rev() {
                if !read.contains(&folder) {
                    matchers.read_folder(&folder);
                    read.insert(folder);
                }
            }
            let rules = Arc::new(matchers.in_folder(rel));
            folders.insert(parent.to_path_buf(), Arc::clone(&rules));
            Some(rules)
        }
    }
}

/// An ignore file's patterns; a line that is not a valid pattern is
/// skipped, as git skips it.
fn compile(folder: &Path, content: &[u8]) -> Gitignore {
    let mut builder = GitignoreBuilder::new(folder);
    for line in String::from_utf8_lossy(content).lines() {
        let _ = builder.add_line(None, line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// An ignore file's content, up to 1 MiB. Only a regular file counts: a
/// link is not followed (as git does not) and a FIFO never blocks the scan.
fn read_small(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read as _;
    let file = crate::disk::open_regular_file(path).ok()??;
    let mut bytes = Vec::new();
    file.take(1 << 20).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
#[expect(clippy::disallowed_methods, reason = "the test lays out ignore files")]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// A folder's gathered rules, and a walker's filter that gathers them
    /// as it goes, answer as the rules asked path by path: deeper files
    /// first, `.ignore` before `.gitignore`, re-inclusions, folder-only
    /// patterns, and `.git/info/exclude` last.
    #[test]
    fn a_folders_rules_answer_as_the_path_by_path_rules() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\nbuild/\n").unwrap();
        std::fs::write(root.join("a/.gitignore"), "!keep.log\nsecret*\n").unwrap();
        std::fs::write(root.join("a/b/.ignore"), "!secret-ok\nonly-b\n").unwrap();
        std::fs::write(root.join(".git/info/exclude"), "excluded\n").unwrap();
        let mut matchers = Matchers::new(root);
        for rel in ["", "a", "a/b"] {
            matchers.read_folder(Path::new(rel));
        }
        let names = [
            "x.log",
            "keep.log",
            "secret",
            "secret-ok",
            "only-b",
            "build",
            "excluded",
            "plain",
        ];
        let mut ignored = Vec::new();
        // A walker's filter reads the files itself, folder by folder.
        let filter = IgnoreFilter::new(root);
        for folder in ["", "a", "a/b"] {
            let mut rules = matchers.in_folder(Path::new(folder));
            for name in names {
                for is_dir in [false, true] {
                    let rel = Path::new(folder).join(name);
                    let expected = matchers.ignores_below(&rel, is_dir);
                    let got = rules.ignores(std::ffi::OsStr::new(name), is_dir);
                    assert_eq!(got, expected, "{} (folder: {is_dir})", rel.display());
                    let filtered = filter.ignores(&root.join(&rel), is_dir);
                    assert_eq!(filtered, expected, "filter: {} ({is_dir})", rel.display());
                    if got {
                        ignored.push(format!(
                            "{}{}",
                            rel.display(),
                            if is_dir { "/" } else { "" }
                        ));
                    }
                }
            }
        }
        assert_eq!(
            ignored,
            [
                "x.log",
                "x.log/",
                "keep.log",
                "keep.log/",
                "build/",
                "excluded",
                "excluded/",
                "a/x.log",
                "a/x.log/",
                "a/secret",
                "a/secret/",
                "a/secret-ok",
                "a/secret-ok/",
                "a/build/",
                "a/excluded",
                "a/excluded/",
                "a/b/x.log",
                "a/b/x.log/",
                "a/b/secret",
                "a/b/secret/",
                "a/b/only-b",
                "a/b/only-b/",
                "a/b/build/",
                "a/b/excluded",
                "a/b/excluded/",
            ]
        );
    }
}
