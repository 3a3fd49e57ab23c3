//! The one safe read path for workspace files: agents' read tools, the
//! revision checks before an edit, search, and the window's preview all
//! read through here.
//!
//! A read is two steps, like a write: the path policy resolves the path
//! (following links to find the real one, which must be inside the
//! workspace and outside `.cocode/`), then the disk layer opens the real
//! path folder by folder without following any link and reads only a
//! regular file. A folder swapped for a link between the two steps makes
//! the read fail; it never returns bytes from outside the workspace.

use std::fs::File;
use std::io::{self, Read as _};
use std::path::Path;

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::GateError;
use cocode_core::path::{NormalizeOptions, NormalizedPath};

use crate::disk::SafeRoot;
use crate::policy::PathPolicy;

/// Reads workspace files for anyone who is not the gate (the gate reads
/// through the same functions with its own policy and disk).
pub struct WorkspaceReader {
    policy: PathPolicy,
    disk: SafeRoot,
}

impl std::fmt::Debug for WorkspaceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceReader")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// The start of a file, for previews.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePrefix {
    pub bytes: Vec<u8>,
    /// The file's whole size when it was opened.
    pub size: u64,
}

impl WorkspaceReader {
    /// A reader of the workspace at `root` (canonical).
    pub fn open(root: &Path, options: NormalizeOptions) -> io::Result<Self> {
        Ok(Self {
            policy: PathPolicy::new(root, options, Vec::new()),
            disk: SafeRoot::open(root)?,
        })
    }

    /// Normalizes text a caller was given (`WORKSPACE_PATH_INVALID`).
    pub fn normalize(
        &self,
        operation: &'static str,
        raw: &str,
    ) -> Result<NormalizedPath, GateError> {
        self.policy.normalize(operation, raw)
    }

    /// A whole regular file; `None` when nothing is there.
    pub fn read(
        &self,
        operation: &'static str,
        path: &NormalizedPath,
    ) -> Result<Option<Vec<u8>>, GateError> {
        read_file(&self.policy, &self.disk, operation, path)
    }

    /// A regular file opened for reading through no link, for a caller
    /// that reads it in pieces (the editor streams a big file into its
    /// rope); `None` when nothing is there.
    pub fn open_regular(
        &self,
        operation: &'static str,
        path: &NormalizedPath,
    ) -> Result<Option<File>, GateError> {
        open_file(&self.policy, &self.disk, operation, path)
    }

    /// A regular file a walk that follows no link listed (search in
    /// files goes over thousands): its path is spelled as on disk, so
    /// there is no spelling or link to resolve first, and the disk layer
    /// opens it folder by folder through no link, as for any read, so a
    /// folder swapped for a link since the walk makes the open fail. `None`
    /// when nothing is there any more.
    pub fn open_listed(
        &self,
        operation: &'static str,
        path: &NormalizedPath,
    ) -> Result<Option<File>, GateError> {
        if path.is_in_cocode_dir() {
            return Err(crate::policy::refuse(
                WorkspaceErrorCode::OutsideWorkspace,
                operation,
                path.as_str(),
                "the workspace's .cocode folder belongs to cocode",
            ));
        }
        let mut dir: Vec<String> = path.spelled_segments().map(str::to_owned).collect();
        let name = dir.pop().unwrap_or_default();
        self.disk
            .open_regular(&dir, &name)
            .map_err(|e| read_failed(operation, path, &e))
    }

    /// At most `max` bytes from the start of a regular file, with its size.
    pub fn read_prefix(
        &self,
        operation: &'static str,
        path: &NormalizedPath,
        max: u64,
    ) -> Result<Option<FilePrefix>, GateError> {
        let Some(file) = open_file(&self.policy, &self.disk, operation, path)? else {
            return Ok(None);
        };
        let failed = |e: &io::Error| read_failed(operation, path, e);
        let size = file.metadata().map_err(|e| failed(&e))?.len();
        // Sized up front: a big file is read into one buffer of its size,
        // not into a doubling one (which holds up to twice as much while it
        // grows). One byte more, so a file that grew meanwhile needs no
        // second buffer to be noticed.
        let expected = usize::try_from(size.min(max)).unwrap_or(usize::MAX);
        let mut bytes = Vec::with_capacity(expected.saturating_add(1));
        file.take(max)
            .read_to_end(&mut bytes)
            .map_err(|e| failed(&e))?;
        Ok(Some(FilePrefix { bytes, size }))
    }
}

/// Resolves and reads `path` through `policy` and `disk`.
pub(crate) fn read_file(
    policy: &PathPolicy,
    disk: &SafeRoot,
    operation: &'static str,
    path: &NormalizedPath,
) -> Result<Option<Vec<u8>>, GateError> {
    open_file(policy, disk, operation, path)?
        .map(crate::disk::read_all)
        .transpose()
        .map_err(|e| read_failed(operation, path, &e))
}

/// Resolves `path` and opens the real file, through no link.
fn open_file(
    policy: &PathPolicy,
    disk: &SafeRoot,
    operation: &'static str,
    path: &NormalizedPath,
) -> Result<Option<File>, GateError> {
    let Some(resolved) = policy.resolve_read(operation, path)? else {
        return Ok(None);
    };
    fail::fail_point!("read::after_resolve");
    disk.open_regular(&resolved.dir, &resolved.name)
        .map_err(|e| read_failed(operation, path, &e))
}

/// The stable code of a failed read. The disk layer reports a link or a
/// non-folder on the way, and a non-regular file, as `InvalidInput`.
fn read_failed(operation: &'static str, path: &NormalizedPath, e: &io::Error) -> GateError {
    let (code, message) = match e.kind() {
        io::ErrorKind::NotFound => (WorkspaceErrorCode::FileNotFound, e.to_string()),
        io::ErrorKind::InvalidInput => (
            WorkspaceErrorCode::FileTypeConflict,
            format!("{e} (agents and previews read only regular files, through no link)"),
        ),
        io::ErrorKind::PermissionDenied => (
            WorkspaceErrorCode::FileNotFound,
            format!("the file cannot be read: {e}"),
        ),
        _ => (WorkspaceErrorCode::IoFailed, e.to_string()),
    };
    GateError {
        code,
        operation,
        path: path.as_str().to_owned(),
        message,
        io_kind: Some(e.kind()),
    }
}
