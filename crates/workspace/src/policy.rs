//! The gate's path policy: where agents may write, and which files are
//! protected tests.
//!
//! `allowed = (workspace ∪ write_exceptions) − <workspace>/.cocode/**`,
//! judged on the canonical real path: the parent folder is resolved through
//! every symlink, so a link inside the workspace that points outside is
//! outside. The final component is never followed (an operation on a symlink
//! is refused by the gate as a non-regular file).

use std::io;
use std::path::{Component, Path, PathBuf};

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::GateError;
use cocode_core::path::{
    CaseSensitivity, NormalizeOptions, NormalizedPath, UnicodeSensitivity, normalize,
};
use globset::{Glob, GlobSet, GlobSetBuilder};
use unicode_normalization::UnicodeNormalization;

/// A workspace path resolved to its real location below the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The real (symlink-free) path relative to the root; records use it, so
    /// two spellings of one file share one history.
    pub path: NormalizedPath,
    /// Parent folders, root first.
    pub dir: Vec<String>,
    pub name: String,
}

/// Decides where the gate may write.
#[derive(Debug, Clone)]
pub struct PathPolicy {
    root: PathBuf,
    options: NormalizeOptions,
    /// Canonical write exceptions (only resolvable ones are kept).
    exceptions: Vec<PathBuf>,
}

pub(crate) fn refuse(
    code: WorkspaceErrorCode,
    operation: &'static str,
    path: &str,
    message: &str,
) -> GateError {
    GateError {
        code,
        operation,
        path: path.to_owned(),
        message: message.to_owned(),
        io_kind: None,
    }
}

impl PathPolicy {
    pub fn new(root: &Path, options: NormalizeOptions, exceptions: Vec<PathBuf>) -> Self {
        Self {
            root: root.to_path_buf(),
            options,
            exceptions,
        }
    }

    pub fn options(&self) -> NormalizeOptions {
        self.options
    }

    /// Normalizes agent-supplied text (`WORKSPACE_PATH_INVALID` on bad input).
    pub fn normalize(
        &self,
        operation: &'static str,
        raw: &str,
    ) -> Result<NormalizedPath, GateError> {
        normalize(raw, self.options).map_err(|e| {
            refuse(
                WorkspaceErrorCode::PathInvalid,
                operation,
                raw,
                &e.to_string(),
            )
        })
    }

    /// Resolves `path` to its real location and applies the policy.
    pub fn resolve(
        &self,
        operation: &'static str,
        path: &NormalizedPath,
    ) -> Result<Resolved, GateError> {
        let shown = path.as_str();
        let not_writable = |message: &str| {
            refuse(
                WorkspaceErrorCode::PathNotWritable,
                operation,
                shown,
                message,
            )
        };
        if path.is_in_cocode_dir() {
            return Err(not_writable(
                "the workspace's .cocode folder belongs to cocode",
            ));
        }
        let lexical = self.on_disk(operation, path)?;
        let parent = lexical.parent().unwrap_or(&self.root);
        let name = lexical.file_name().map_or_else(
            || path.file_name().to_owned(),
            |n| n.to_string_lossy().into_owned(),
        );
        let real_parent = canonicalize_existing_prefix(parent)
            .map_err(|e| not_writable(&format!("the path cannot be resolved: {e}")))?;
        let real = real_parent.join(&name);
        let Ok(inside) = real.strip_prefix(&self.root) else {
            if self.exceptions.iter().any(|x| real.starts_with(x)) {
                return Err(refuse(
                    WorkspaceErrorCode::OutsideWorkspace,
                    operation,
                    shown,
                    "the real path is in a write exception outside the workspace; history cannot record it",
                ));
            }
            return Err(not_writable("the real path is outside the workspace"));
        };
        self.resolved_below_root(
            operation,
            shown,
            inside,
            WorkspaceErrorCode::PathNotWritable,
            WorkspaceErrorCode::PathNotWritable,
        )
    }

    /// A real path below the root as `Resolved`: refused with `in_cocode`
    /// inside `.cocode/`, and with `root_code` for the root itself.
    fn resolved_below_root(
        &self,
        operation: &'static str,
        shown: &str,
        inside: &Path,
        in_cocode: WorkspaceErrorCode,
        root_code: WorkspaceErrorCode,
    ) -> Result<Resolved, GateError> {
        let segments: Vec<String> = inside
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        let real_path = normalize(&segments.join("/"), self.options).map_err(|e| {
            refuse(
                WorkspaceErrorCode::PathInvalid,
                operation,
                shown,
                &e.to_string(),
            )
        })?;
        if real_path.is_in_cocode_dir() {
            return Err(refuse(
                in_cocode,
                operation,
                shown,
                "the real path is inside the workspace's .cocode folder",
            ));
        }
        let (dir, name) = match segments.split_last() {
            Some((name, dir)) => (dir.to_vec(), name.clone()),
            None => {
                return Err(refuse(
                    root_code,
                    operation,
                    shown,
                    "the workspace root itself is not a file",
                ));
            }
        };
        Ok(Resolved {
            path: real_path,
            dir,
            name,
        })
    }
}

impl PathPolicy {
    /// Resolves `path` for reading: every link on the way is followed to
    /// find the real path, which must lie inside the workspace and outside
    /// its `.cocode` folder. `None` when nothing is there. The caller then
    /// reads the real path without following any link, so a folder swapped
    /// for a link after this check makes the read fail instead of leaving
    /// the workspace.
    pub fn resolve_read(
        &self,
        operation: &'static str,
        path: &NormalizedPath,
    ) -> Result<Option<Resolved>, GateError> {
        let shown = path.as_str();
        let outside = |message: &str| {
            refuse(
                WorkspaceErrorCode::OutsideWorkspace,
                operation,
                shown,
                message,
            )
        };
        if path.is_in_cocode_dir() {
            return Err(outside("the workspace's .cocode folder belongs to cocode"));
        }
        let real = match dunce::canonicalize(self.on_disk(operation, path)?) {
            Ok(real) => real,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(refuse(
                    WorkspaceErrorCode::IoFailed,
                    operation,
                    shown,
                    &format!("the path cannot be resolved: {e}"),
                ));
            }
        };
        let Ok(inside) = real.strip_prefix(&self.root) else {
            return Err(outside("the real path is outside the workspace"));
        };
        self.resolved_below_root(
            operation,
            shown,
            inside,
            WorkspaceErrorCode::OutsideWorkspace,
            WorkspaceErrorCode::FileTypeConflict,
        )
        .map(Some)
    }
}

impl PathPolicy {
    /// Where `path` is on disk: each segment names the entry already there
    /// as it is spelled on disk, and a segment with no entry yet — and
    /// everything below it — takes the spelling the path was given (a new
    /// `src/MyWidget.rs` is created with that name).
    ///
    /// - On a volume that folds case or Unicode forms, the entry is the one
    ///   whose folded name is the segment's (an edit of `readme.md` keeps
    ///   `README.md` spelled as it is).
    /// - On a volume that folds neither, an entry named exactly as given
    ///   wins, so each of an NFC and an NFD twin is reached by its own name.
    ///   A name that is not plain ASCII and has no exact entry reaches the
    ///   one entry spelled in another Unicode form (a model writes `é`
    ///   composed; a file made on a Mac has it decomposed). Two or more
    ///   such entries are a conflict, never a guess.
    fn on_disk(
        &self,
        operation: &'static str,
        path: &NormalizedPath,
    ) -> Result<PathBuf, GateError> {
        let folds = self.options.case == CaseSensitivity::Insensitive
            || self.options.unicode == UnicodeSensitivity::Insensitive;
        let mut current = self.root.clone();
        let mut existing = true;
        for (key, spelled) in path.segments().zip(path.spelled_segments()) {
            let found = if !existing {
                None
            } else if folds {
                entry_named(&current, key, self.options)
            } else if current.join(key).symlink_metadata().is_ok() {
                Some(key.into())
            } else if key.is_ascii() {
                None
            } else {
                let twins = entries_composing_to(&current, key);
                if twins.len() > 1 {
                    let names: Vec<String> = twins
                        .iter()
                        .map(|n| format!("{:?}", n.to_string_lossy()))
                        .collect();
                    return Err(refuse(
                        WorkspaceErrorCode::FileConflict,
                        operation,
                        path.as_str(),
                        &format!(
                            "{} entries are named {key:?} in different Unicode forms ({}); name one exactly as it is spelled on disk",
                            twins.len(),
                            names.join(", ")
                        ),
                    ));
                }
                twins.into_iter().next()
            };
            if let Some(real) = found {
                current.push(real);
            } else {
                existing = false;
                current.push(spelled);
            }
        }
        Ok(current)
    }
}

/// The entry of `dir` whose folded name is `key`.
fn entry_named(dir: &Path, key: &str, options: NormalizeOptions) -> Option<std::ffi::OsString> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .find(|name| {
            name.to_str()
                .and_then(|n| normalize(n, options).ok())
                .is_some_and(|p| p.as_str() == key)
        })
}

/// The entries of `dir` whose names compose (NFC) to the same text as
/// `name` does, in the order the folder lists them.
fn entries_composing_to(dir: &Path, name: &str) -> Vec<std::ffi::OsString> {
    let wanted: String = name.nfc().collect();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .filter(|n| {
            n.to_str()
                .is_some_and(|n| !n.is_ascii() && n.nfc().eq(wanted.chars()))
        })
        .collect()
}

/// Canonicalizes the longest existing prefix of `path` and appends the rest.
fn canonicalize_existing_prefix(path: &Path) -> io::Result<PathBuf> {
    let mut missing = Vec::new();
    let mut current = path.to_path_buf();
    loop {
        match dunce::canonicalize(&current) {
            Ok(real) => {
                return Ok(missing.iter().rev().fold(real, |p: PathBuf, s| p.join(s)));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let Some(name) = current.file_name().map(ToOwned::to_owned) else {
                    return Err(e);
                };
                missing.push(name);
                if !current.pop() {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Protected test locations: `dir/` patterns match a folder of that name at
/// any depth, other patterns match the file name at any depth.
#[derive(Debug, Clone)]
pub struct TestPatterns {
    set: GlobSet,
}

/// A pattern in `test_patterns` that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("test pattern {pattern:?} is invalid: {reason}")]
pub struct TestPatternInvalid {
    pub pattern: String,
    pub reason: String,
}

impl TestPatterns {
    pub fn new(patterns: &[String]) -> Result<Self, TestPatternInvalid> {
        let mut builder = GlobSetBuilder::new();
        for pattern in patterns {
            let glob = match pattern.strip_suffix('/') {
                Some(dir) => format!("**/{dir}/**"),
                None => format!("**/{pattern}"),
            };
            let glob = Glob::new(&glob).map_err(|e| TestPatternInvalid {
                pattern: pattern.clone(),
                reason: e.to_string(),
            })?;
            builder.add(glob);
        }
        let set = builder.build().map_err(|e| TestPatternInvalid {
            pattern: patterns.join(", "),
            reason: e.to_string(),
        })?;
        Ok(Self { set })
    }

    pub fn is_protected(&self, path: &NormalizedPath) -> bool {
        self.set.is_match(path.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cocode_core::workspace::DEFAULT_TEST_PATTERNS;

    fn p(s: &str) -> NormalizedPath {
        NormalizedPath::try_from(s.to_owned()).unwrap()
    }

    #[test]
    fn default_test_patterns_match_at_any_depth_and_nothing_else() {
        let patterns: Vec<String> = DEFAULT_TEST_PATTERNS
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let t = TestPatterns::new(&patterns).unwrap();
        let protected = [
            "test/a.dart",
            "pkg/test/widget_test.dart",
            "tests/it.rs",
            "crates/x/tests/suite/a.rs",
            "integration_test/app.dart",
            "widgetbook/main.dart",
            "benches/b.rs",
            "web/__tests__/a.js",
            "lib/foo_test.go",
            "src/a.test.ts",
            "src/deep/b.spec.js",
        ];
        let free = [
            "src/lib.rs",
            "testing/a.rs",
            "src/tests.rs",
            "contest/a.rs",
            "src/latest.rs",
            "test",
            "a_test",
        ];
        let got_protected: Vec<&str> = protected
            .iter()
            .copied()
            .filter(|s| t.is_protected(&p(s)))
            .collect();
        let got_free: Vec<&str> = free
            .iter()
            .copied()
            .filter(|s| t.is_protected(&p(s)))
            .collect();
        assert_eq!(got_protected, protected.to_vec());
        assert_eq!(got_free, Vec::<&str>::new());
    }

    #[test]
    fn a_bad_pattern_is_a_typed_error() {
        let err = TestPatterns::new(&["[".to_owned()]).unwrap_err();
        assert_eq!(err.pattern, "[");
    }
}
