//! Shared fixtures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cocode_core::gate::{GateOp, GateOutcome, TaskContext, WorkspaceFileGate};
use cocode_core::ids::{AttemptNo, SessionId, TaskId};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::EditSnapshot;
use cocode_workspace::{HistoryIntegrityChecker, OpenWorkspace};

pub fn p(s: &str) -> NormalizedPath {
    NormalizedPath::try_from(s.to_owned()).unwrap()
}

pub fn ctx(task: &str, attempt: u32) -> TaskContext {
    TaskContext {
        task_id: TaskId::new(task).unwrap(),
        session_id: SessionId::new(format!("{task}-session")).unwrap(),
        attempt_no: AttemptNo(attempt),
    }
}

pub fn write(path: &str, bytes: &[u8]) -> GateOp {
    GateOp::Write {
        path: p(path),
        bytes: bytes.to_vec(),
    }
}

pub fn delete(path: &str) -> GateOp {
    GateOp::Delete { path: p(path) }
}

pub fn rename(from: &str, to: &str) -> GateOp {
    GateOp::Rename {
        from: p(from),
        to: p(to),
    }
}

/// A path whose records go to the same shard of the path indexes as
/// `path`'s (`mate<n>.txt`, the first `n` that shares it).
pub fn shard_mate(ws: &OpenWorkspace, path: &str) -> String {
    let shard = ws.layout.path_index_shard(&p(path).key());
    // A shard is one of 256: 100,000 names miss one with odds below e^-390.
    (0..100_000)
        .map(|n| format!("mate{n}.txt"))
        .find(|m| ws.layout.path_index_shard(&p(m).key()) == shard)
        .unwrap()
}

/// A workspace in a temp folder, with files created before it opens.
pub fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, OpenWorkspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    for (path, content) in files {
        put(&root, path, content.as_bytes());
    }
    let ws = OpenWorkspace::open(&root).unwrap();
    (dir, ws)
}

/// [`workspace`] of files whose names and contents were made up.
pub fn workspace_of(files: &[(String, String)]) -> (tempfile::TempDir, OpenWorkspace) {
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    workspace(&refs)
}

pub fn put(root: &Path, rel: &str, bytes: &[u8]) {
    let full = root.join(rel);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, bytes).unwrap();
}

pub fn applied(outcome: GateOutcome) -> Vec<EditSnapshot> {
    match outcome {
        GateOutcome::Applied { snapshots } => snapshots,
        GateOutcome::Held { pending_change } => panic!("held: {pending_change:?}"),
    }
}

pub fn apply(ws: &OpenWorkspace, c: &TaskContext, op: GateOp) -> Vec<EditSnapshot> {
    applied(ws.gate.apply(c, op).unwrap())
}

/// Every file under `root` except `.cocode/`, with its content.
pub fn tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == ".cocode" {
            continue;
        }
        let meta = path.symlink_metadata().unwrap();
        if meta.file_type().is_symlink() {
            out.insert(
                rel,
                format!("-> {}", std::fs::read_link(&path).unwrap().display()),
            );
        } else if meta.is_dir() {
            walk(root, &path, out);
        } else {
            out.insert(
                rel,
                String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned(),
            );
        }
    }
}

/// Files under a folder, recursively (for `.cocode/` bookkeeping counts).
pub fn count_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { count_files(&p) } else { 1 })
        .sum()
}

/// The write journals waiting in `dir` (`journal/writes/`), sorted: the
/// `.json` files, not the spares a settled journal is renamed to.
pub fn pending_journals(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
        .collect();
    out.sort();
    out
}

/// (kind, path, origin) of records, for whole-value comparisons.
pub fn summary(records: &[EditSnapshot]) -> Vec<(String, String, String)> {
    records
        .iter()
        .map(|r| {
            let kind = format!("{:?}", r.kind()).to_lowercase();
            let path = match r.previous_path() {
                Some(from) => format!("{from} -> {}", r.path()),
                None => r.path().to_string(),
            };
            (kind, path, format!("{:?}", r.origin()).to_lowercase())
        })
        .collect()
}

/// What the integrity checker finds wrong with the workspace's history.
pub fn history_problems(ws: &OpenWorkspace) -> usize {
    HistoryIntegrityChecker::new(ws.gate.store())
        .check()
        .unwrap()
        .problems()
}

/// (path, content) pairs as the map [`tree`] returns.
pub fn files(v: &[(&str, &str)]) -> BTreeMap<String, String> {
    v.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// Owned (kind, path, origin) triples, to compare with [`summary`].
pub fn triples(v: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    v.iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

/// `count` files spread over `folders` folders (`d<k>/f<i>.txt`, content
/// `original <i>`), and a workspace holding them.
pub fn spread_workspace(
    count: usize,
    folders: usize,
) -> (Vec<(String, String)>, tempfile::TempDir, OpenWorkspace) {
    let original: Vec<(String, String)> = (0..count)
        .map(|i| {
            (
                format!("d{}/f{i}.txt", i % folders),
                format!("original {i}"),
            )
        })
        .collect();
    let (dir, ws) = workspace_of(&original);
    (original, dir, ws)
}

/// The workspace at `root` opened afresh, as after a restart, and what its
/// recovery did.
pub fn restart(root: &Path) -> (OpenWorkspace, cocode_workspace::RecoveryReport) {
    let ws = OpenWorkspace::open(root).unwrap();
    let report = ws.gate.recover().unwrap();
    (ws, report)
}

/// The paths interrupted rollbacks stopped at, as recovery reported them.
pub fn incomplete_paths(report: &cocode_workspace::RecoveryReport) -> Vec<String> {
    report
        .rollbacks_incomplete
        .iter()
        .map(|(_, p)| p.to_string())
        .collect()
}

/// One pack entry: its hash's bytes and its payload's range.
pub type PackEntry<'a> = (&'a [u8], std::ops::Range<usize>);

/// A pack file's whole entries of today's kind (a kind byte, the hash, the
/// LEB128 length, the payload), each as (its hash's bytes, its payload's
/// range), and where the last whole one ends: past it is a torn tail.
pub fn pack_entries(bytes: &[u8]) -> (Vec<PackEntry<'_>>, usize) {
    let mut entries = Vec::new();
    let mut at = 0;
    'entries: while at < bytes.len() {
        let mut end = at + 33;
        let (mut len, mut shift) = (0usize, 0);
        loop {
            let Some(byte) = bytes.get(end) else {
                break 'entries;
            };
            end += 1;
            len |= usize::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        if end + len > bytes.len() {
            break;
        }
        entries.push((&bytes[at + 1..at + 33], end..end + len));
        at = end + len;
    }
    (entries, at)
}

/// Runs `script` with `sh` in `root`; it must succeed.
#[cfg(unix)]
pub fn sh(root: &Path, script: &str) {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(root)
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
}
