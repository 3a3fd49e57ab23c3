//! Helpers over the history's files: the store's I/O error, a folder's
//! sorted listing, reading a JSONL index, and which indexes a record goes to.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use cocode_core::gate::StoreError;
use cocode_core::ids::SnapshotId;
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::EditSnapshot;

use super::format::PathIndexHeader;

pub(super) fn io_err(context: &str, path: &Path, e: &io::Error) -> StoreError {
    StoreError::Io {
        message: format!("{context}: {e} ({})", path.display()),
        kind: Some(e.kind()),
    }
}

/// Whether `file` is a shard of the path indexes (see
/// [`Layout::path_index_shard`](crate::layout::Layout::path_index_shard)).
pub(super) fn is_shard(file: &Path) -> bool {
    file.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("shard-"))
}

/// The index paths a record belongs to.
pub(crate) fn record_paths(r: &EditSnapshot) -> Vec<&NormalizedPath> {
    let mut paths = vec![r.path()];
    if let Some(prev) = r.previous_path() {
        paths.push(prev);
    }
    paths
}

pub(super) fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("listing", dir, &e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        out.push(entry.map_err(|e| io_err("listing", dir, &e))?.path());
    }
    out.sort();
    Ok(out)
}

/// Adds the held records an index on disk does not list yet (a checkpoint
/// that failed part way can have appended some of them).
pub(super) fn with_held(records: &mut Vec<EditSnapshot>, held: Vec<EditSnapshot>) {
    if held.is_empty() {
        return;
    }
    let listed: HashSet<SnapshotId> = records.iter().map(|r| r.snapshot_id().clone()).collect();
    records.extend(
        held.into_iter()
            .filter(|r| !listed.contains(r.snapshot_id())),
    );
}

/// Reads a JSONL index. A final line without its newline is a torn append and
/// is ignored (recovery cuts it); any other unreadable line is an error.
pub(super) fn read_jsonl(path: &Path, with_header: bool) -> Result<Vec<EditSnapshot>, StoreError> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("reading index", path, &e)),
    };
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut out = Vec::new();
    for (n, line) in complete.lines().enumerate() {
        if with_header && n == 0 {
            serde_json::from_str::<PathIndexHeader>(line)
                .map_err(|e| StoreError::Index(format!("{}: bad header: {e}", path.display())))?;
            continue;
        }
        out.push(
            serde_json::from_str(line).map_err(|e| {
                StoreError::Index(format!("{} line {}: {e}", path.display(), n + 1))
            })?,
        );
    }
    Ok(out)
}
