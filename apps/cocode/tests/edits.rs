//! `workspace.applyEdits`: several edits land together or not at all, each
//! checked exactly like its single-file tool, each recorded as a snapshot of
//! the task.
#![expect(clippy::disallowed_methods, reason = "the test builds a workspace")]
#![expect(clippy::unwrap_used, reason = "test code")]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use cocode_core::{AttemptNo, ContentHash, TaskId};
use cocode_tool_protocol::catalog;
use common::{approve_everything, call, open_host};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn revision(text: &str) -> String {
    format!("sha256:{}", ContentHash::of(text.as_bytes()).to_hex())
}

/// Every file under `root` except `.cocode/`, with its text.
fn tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".cocode" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    out
}

fn files(v: &[(&str, &str)]) -> BTreeMap<String, String> {
    v.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

const BEFORE: [(&str, &str); 3] = [
    ("a.txt", "alpha\n"),
    ("b.txt", "beta\n"),
    ("old.txt", "o\n"),
];

async fn host_with_files() -> (
    tempfile::TempDir,
    cocode::host::workspace_host::WorkspaceHost,
) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in BEFORE {
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    let (host, _documents) = open_host(dir.path()).await;
    approve_everything(&host);
    host.tasks
        .set_attempt(&TaskId::new("t1").unwrap(), AttemptNo(1));
    (dir, host)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_edit_lands_with_its_snapshot_and_revision() {
    let (dir, host) = host_with_files().await;
    let result = call(
        &host,
        catalog::APPLY_EDITS,
        json!({"edits": [
            {"op": "patch", "path": "a.txt", "search": "alpha", "replace": "ALPHA",
             "expectedRevision": revision("alpha\n")},
            {"op": "write", "path": "c/new.txt", "content": "new\n"},
            {"op": "delete", "path": "b.txt"},
            {"op": "rename", "path": "old.txt", "to": "moved.txt"}
        ]}),
    )
    .await;
    assert_eq!(result.error, None);
    assert_eq!(
        result.structured_content.unwrap(),
        json!({"outcome": "applied", "files": [
            {"path": "a.txt", "revision": revision("ALPHA\n")},
            {"path": "c/new.txt", "revision": revision("new\n")},
            {"path": "b.txt", "revision": null},
            {"path": "moved.txt", "revision": revision("o\n")}
        ]})
    );
    assert_eq!(
        tree(dir.path()),
        files(&[
            ("a.txt", "ALPHA\n"),
            ("c/new.txt", "new\n"),
            ("moved.txt", "o\n")
        ])
    );
    let snapshots = host
        .workspace
        .gate
        .store()
        .snapshots_of_task(&TaskId::new("t1").unwrap())
        .unwrap();
    assert_eq!(
        snapshots
            .iter()
            .map(|s| (s.seq().0, s.path().as_str().to_owned()))
            .collect::<Vec<_>>(),
        vec![
            (1, "a.txt".to_owned()),
            (2, "c/new.txt".to_owned()),
            (3, "b.txt".to_owned()),
            (4, "moved.txt".to_owned())
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_failing_or_malformed_edit_changes_nothing() {
    let (dir, host) = host_with_files().await;
    let cases: [(Value, &str, Value); 4] = [
        // The patch of the second edit finds nothing: the first is not kept.
        (
            json!([{"op": "write", "path": "a.txt", "content": "x"},
                   {"op": "patch", "path": "b.txt", "search": "gamma", "replace": "g"}]),
            "WORKSPACE_PATCH_NOT_FOUND",
            json!({"operation": "patch", "path": "b.txt"}),
        ),
        // A revision check fails exactly as in writeFile.
        (
            json!([{"op": "delete", "path": "old.txt"},
                   {"op": "write", "path": "a.txt", "content": "x",
                    "expectedRevision": revision("stale\n")}]),
            "WORKSPACE_REVISION_CONFLICT",
            json!({"operation": "write", "path": "a.txt",
                   "expected": revision("stale\n"), "current": revision("alpha\n")}),
        ),
        (
            json!([{"op": "create", "path": "b.txt", "content": "x"}]),
            "WORKSPACE_FILE_CONFLICT",
            json!({"operation": "create", "path": "b.txt"}),
        ),
        // Two edits on one path.
        (
            json!([{"op": "write", "path": "a.txt", "content": "1"},
                   {"op": "rename", "path": "old.txt", "to": "a.txt"}]),
            "WORKSPACE_FILE_CONFLICT",
            json!({"operation": "batch", "path": "a.txt"}),
        ),
    ];
    for (edits, code, details) in cases {
        let result = call(&host, catalog::APPLY_EDITS, json!({"edits": edits})).await;
        let error = result.error.unwrap();
        assert_eq!(
            (error.code.as_str(), &error.details),
            (code, &details),
            "{edits}"
        );
        assert_eq!(tree(dir.path()), files(&BEFORE), "{edits}");
    }
    let malformed = [
        (
            json!([{"op": "delete", "path": "a.txt", "content": "x"}]),
            "edit 0 (delete) does not take `content`",
        ),
        (
            json!([{"op": "write", "path": "a.txt", "content": "1"},
                   {"op": "rename", "path": "b.txt"}]),
            "edit 1 (rename) needs `to`",
        ),
    ];
    for (edits, message) in malformed {
        let result = call(&host, catalog::APPLY_EDITS, json!({"edits": edits})).await;
        let error = result.error.unwrap();
        assert_eq!(
            (error.code.as_str(), error.message.as_str()),
            ("TOOL_VALIDATION_FAILED", message)
        );
    }
    // Each result within its own limit, too many bytes together.
    let big = "x".repeat(catalog::SOURCE_LIMIT_BYTES);
    let per_file = catalog::EDIT_BATCH_BYTES_LIMIT / catalog::SOURCE_LIMIT_BYTES;
    let edits: Vec<Value> = (0..=per_file)
        .map(|n| json!({"op": "write", "path": format!("big/{n}.txt"), "content": big}))
        .collect();
    let result = call(&host, catalog::APPLY_EDITS, json!({"edits": edits})).await;
    let error = result.error.unwrap();
    assert_eq!(
        (error.code.as_str(), &error.details),
        (
            "WORKSPACE_SOURCE_LIMIT",
            &json!({"operation": "edits", "path": format!("big/{per_file}.txt")})
        )
    );
    assert_eq!(tree(dir.path()), files(&BEFORE));
    assert_eq!(
        host.workspace
            .gate
            .store()
            .snapshots_of_task(&TaskId::new("t1").unwrap())
            .unwrap(),
        Vec::new()
    );
}

/// The host's trace sees every call of its registry, started and ended,
/// with a written file's text kept only as its length.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_is_traced_without_the_text_it_wrote() {
    use cocode_tool_protocol::observe::LifecyclePhase;
    let (_dir, host) = host_with_files().await;
    let result = call(
        &host,
        catalog::WRITE_FILE,
        json!({"path": "secret.txt", "content": "the whole text of a file\n"}),
    )
    .await;
    assert_eq!(result.error, None);
    let rows: Vec<(LifecyclePhase, String, Value)> = host
        .traces
        .entries()
        .into_iter()
        .map(|e| (e.phase, e.tool, e.arguments))
        .collect();
    let redacted = json!({"path": "secret.txt", "content": {"chars": 25}});
    assert_eq!(
        rows,
        vec![
            (
                LifecyclePhase::Started,
                catalog::WRITE_FILE.to_owned(),
                redacted.clone()
            ),
            (
                LifecyclePhase::Completed,
                catalog::WRITE_FILE.to_owned(),
                redacted
            ),
        ]
    );
}

/// A host opened with the composition root's clock stamps what it records
/// with that clock, not the system's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_injected_clock_stamps_the_snapshots() {
    use cocode_core::clock::{Clock as _, ManualClock};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::at(1_234_567));
    let (host, _documents) =
        common::open_host_with_clock(dir.path(), Arc::clone(&clock) as _).await;
    approve_everything(&host);
    host.tasks
        .set_attempt(&TaskId::new("t1").unwrap(), AttemptNo(1));
    assert_eq!(host.clock.now(), clock.now());
    let first = call(
        &host,
        catalog::WRITE_FILE,
        json!({"path": "a.txt", "content": "one\n"}),
    )
    .await;
    assert_eq!(first.error, None);
    clock.advance(1_000);
    let second = call(
        &host,
        catalog::WRITE_FILE,
        json!({"path": "b.txt", "content": "two\n"}),
    )
    .await;
    assert_eq!(second.error, None);
    let stamps: Vec<(String, i64)> = host
        .workspace
        .gate
        .store()
        .snapshots_of_task(&TaskId::new("t1").unwrap())
        .unwrap()
        .iter()
        .map(|s| (s.path().as_str().to_owned(), s.ts().as_millis()))
        .collect();
    assert_eq!(
        stamps,
        vec![
            ("a.txt".to_owned(), 1_234_567),
            ("b.txt".to_owned(), 1_235_567)
        ]
    );
}
