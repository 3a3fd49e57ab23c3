//! The ignore rules a sweep judges by.
//!
//! A scan before a command reads the workspace's ignore files as they are
//! and keeps their contents here. The scan after the command judges by
//! those kept rules, not by the files as the command left them: a command
//! that writes a `.gitignore` naming a file it creates cannot hide that
//! file from the record.
//!
//! The precedence is the `ignore` crate's, which the scan before uses:
//! `.ignore` files before `.gitignore` files, each kind from the deepest
//! folder up (the first pattern that decides, ignoring or re-including,
//! wins), then `.git/info/exclude`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The ignore files a folder can hold, highest precedence first.
const IGNORE_FILES: [&str; 2] = [".ignore", ".gitignore"];

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
    pub(crate) fn keep_folder(&mut self, root: &Path, rel: &Path, matchers: &mut Matchers) {
        let dir = root.join(rel);
        let files = IGNORE_FILES.map(|name| read_small(&dir.join(name)));
        if rel.as_os_str().is_empty() {
            self.exclude = read_small(&root.join(".git/info/exclude"));
            matchers.exclude = self.exclude.as_ref().map(|c| compile(root, c));
        }
        if files.iter().any(Option::is_some) {
            matchers.add(rel, &files);
            self.folders.insert(rel.to_path_buf(), files);
        }
    }

    /// The kept rules as matchers anchored at `root`.
    pub(crate) fn matchers(&self, root: &Path) -> Matchers {
        let mut matchers = Matchers::new(root);
        for (rel, files) in &self.folders {
            matchers.add(rel, files);
        }
        matchers.exclude = self.exclude.as_ref().map(|c| compile(root, c));
        matchers
    }
}

/// Compiled ignore rules.
#[derive(Debug)]
pub(crate) struct Matchers {
    root: PathBuf,
    /// Per kind of [`IGNORE_FILES`]: folder relative to the root → its file.
    kinds: [BTreeMap<PathBuf, Gitignore>; 2],
    exclude: Option<Gitignore>,
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

    fn add(&mut self, rel: &Path, files: &[Option<Vec<u8>>; 2]) {
        let folder = self.root.join(rel);
        for (kind, content) in files.iter().enumerate() {
            if let Some(content) = content {
                self.kinds[kind].insert(rel.to_path_buf(), compile(&folder, content));
            }
        }
    }

    /// Whether the rules ignore `path` (absolute, below the root).
    pub(crate) fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return false;
        };
        for kind in &self.kinds {
            for folder in rel.ancestors().skip(1) {
                if let Some(matcher) = kind.get(folder) {
                    let decided = matcher.matched(path, is_dir);
                    if decided.is_ignore() {
                        return true;
                    }
                    if decided.is_whitelist() {
                        return false;
                    }
                }
            }
        }
        self.exclude
            .as_ref()
            .is_some_and(|m| m.matched(path, is_dir).is_ignore())
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
