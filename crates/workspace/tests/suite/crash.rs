//! Crash safety with real process death.
//!
//! The test binary re-runs itself as a child (`child_runs_one_scenario`
//! with `COCODE_CRASH_*` set). The child opens the workspace, arms one crash
//! point of the write-commit protocol so that reaching it aborts the process
//! (no unwinding, no destructors, no flush), and runs one gate operation.
//! The parent then recovers in a fresh gate and checks that the integrity
//! checker finds nothing, that each file is fully old (no record) or fully
//! new (with its record) — recovery decides per record, so a folder delete
//! cut between two files keeps the deletions that happened — that no stray
//! file is left, and that a second recovery changes nothing.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use cocode_core::gate::WorkspaceFileGate;
use cocode_workspace::{HistoryIntegrityChecker, OpenWorkspace};
use pretty_assertions::assert_eq;

use super::common::*;

const POINTS: [&str; 12] = [
    "gate::after_reserve",
    // Half a blob's entry appended to its pack (the sweep's base blobs).
    "pack::mid_entry",
    "gate::after_blobs",
    "gate::after_journal",
    "gate::after_stage",
    "gate::between_files",
    "gate::after_apply",
    "gate::after_hold",
    // Not a fail point: the child aborts right after the operation returned,
    // its records held and its journal waiting for a checkpoint.
    "returned",
    // `flush:` points: the operation returns, then the child flushes and
    // dies in the checkpoint — half a blob's entry in a pack, the blobs
    // packed with no index line, every line appended and no barrier yet.
    "flush:pack::mid_entry",
    "flush:store::checkpoint_after_blobs",
    "flush:store::checkpoint_after_indexes",
];

/// Files as (path, content) pairs.
type Files = Vec<(&'static str, &'static str)>;

/// (name, files before, files after); the operation is [`op_of`].
fn scenarios() -> Vec<(&'static str, Files, Files)> {
    vec![
        (
            "create",
            vec![("keep.txt", "K")],
            vec![("keep.txt", "K"), ("new/a.txt", "created")],
        ),
        ("modify", vec![("a.txt", "old")], vec![("a.txt", "new")]),
        (
            "modify_large",
            vec![("a.txt", "old")],
            vec![("a.txt", large_content())],
        ),
        (
            "delete_dir",
            vec![("d/a.txt", "A"), ("d/b.txt", "B"), ("d/c/e.txt", "E")],
            vec![],
        ),
        (
            "rename_dir",
            vec![("d/a.txt", "A"), ("d/b.txt", "B")],
            vec![("e/a.txt", "A"), ("e/b.txt", "B")],
        ),
        (
            "batch",
            vec![("a.txt", "old"), ("c.txt", "C"), ("d.txt", "D")],
            vec![("a.txt", "new"), ("new/b.txt", "B"), ("e/d.txt", "D")],
        ),
        // Enough files in enough folders that the changes are spread over
        // threads (and the process dies in one of them).
        (
            "batch_many",
            many_paths().map(|p| (p, "old")).collect(),
            many_paths().map(|p| (p, "new")).collect(),
        ),
    ]
}

/// The new content of the `modify_large` scenario: larger than a journal
/// carries ([`cocode_workspace::store::HELD_BLOB_MAX`]), so the operation
/// packs it before its journal is written.
fn large_content() -> &'static str {
    static LARGE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LARGE.get_or_init(|| {
        use std::fmt::Write as _;
        let mut text = String::new();
        for i in 0..=cocode_workspace::store::HELD_BLOB_MAX / 8 {
            writeln!(text, "{i:07}").unwrap();
        }
        text
    })
}

/// The files of the `batch_many` scenario: 40 in 4 folders.
fn many_paths() -> impl Iterator<Item = &'static str> {
    (0..40).map(|i| &*Box::leak(format!("m{}/f{i}.txt", i % 4).into_boxed_str()))
}

fn op_of(scenario: &str) -> cocode_core::gate::GateOp {
    match scenario {
        "create" => write("new/a.txt", b"created"),
        "modify" => write("a.txt", b"new"),
        "modify_large" => write("a.txt", large_content().as_bytes()),
        "delete_dir" => delete("d"),
        "rename_dir" => rename("d", "e"),
        "batch_many" => cocode_core::gate::GateOp::Batch {
            ops: many_paths().map(|p| write(p, b"new")).collect(),
        },
        "batch" => cocode_core::gate::GateOp::Batch {
            ops: vec![
                write("a.txt", b"new"),
                write("new/b.txt", b"B"),
                delete("c.txt"),
                rename("d.txt", "e/d.txt"),
            ],
        },
        other => panic!("unknown scenario {other}"),
    }
}

/// The child side, run only by its parent (`--ignored --exact`); a no-op
/// unless the parent set the environment.
#[test]
#[ignore = "the crash child: its parent test runs it with --ignored --exact"]
fn child_runs_one_scenario() {
    let (Ok(root), Ok(scenario), Ok(point)) = (
        std::env::var("COCODE_CRASH_ROOT"),
        std::env::var("COCODE_CRASH_SCENARIO"),
        std::env::var("COCODE_CRASH_POINT"),
    ) else {
        return;
    };
    // A point not reached fails the child without the close's flush, whose
    // checkpoint would reach the checkpoint's points.
    let ws = std::mem::ManuallyDrop::new(OpenWorkspace::open(Path::new(&root)).unwrap());
    if let Some(in_flush) = point.strip_prefix("flush:") {
        let outcome = ws.gate.apply(&ctx("crash", 1), op_of(&scenario));
        assert!(outcome.is_ok(), "{outcome:?}");
        fail::cfg_callback(in_flush, || std::process::abort()).unwrap();
        let flushed = ws.gate.flush();
        panic!("crash point {point} was not reached: {flushed:?}");
    }
    if point != "returned" {
        fail::cfg_callback(point.clone(), || std::process::abort()).unwrap();
    }
    if scenario == "retention" {
        let lives = retention_lives();
        let config = cocode_core::workspace::RetentionConfig {
            keep_recent_per_path: 0,
            byte_cap: 1,
        };
        let outcome =
            ws.gate
                .run_retention(&lives, cocode_workspace::RetentionTrigger::AppStart, config);
        panic!("crash point {point} was not reached: {outcome:?}");
    }
    if scenario == "rollback" {
        let outcome = ws.gate.rollback(
            &ctx("crash", 1).task_id,
            &cocode_workspace::RollbackQuery::TaskStart,
        );
        if point == "returned" {
            assert!(outcome.is_ok(), "{outcome:?}");
            std::process::abort();
        }
        panic!("crash point {point} was not reached: {outcome:?}");
    }
    let outcome = ws.gate.apply(&ctx("crash", 1), op_of(&scenario));
    if point == "returned" {
        assert!(outcome.is_ok(), "{outcome:?}");
        std::process::abort();
    }
    panic!("crash point {point} was not reached: {outcome:?}");
}

/// Runs the child test with a scenario and a crash point; returns its exit status.
fn crash_child(root: &Path, scenario: &str, point: &str) -> std::process::Output {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "suite::crash::child_runs_one_scenario",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("COCODE_CRASH_ROOT", root)
        .env("COCODE_CRASH_SCENARIO", scenario)
        .env("COCODE_CRASH_POINT", point)
        .output()
        .unwrap()
}

fn as_map(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// File hashes, index line counts and blob counts: what a second recovery must not change.
fn fingerprint(ws: &OpenWorkspace) -> (BTreeMap<String, String>, usize, usize, usize) {
    let lines = |dir: &Path| -> usize {
        let mut n = 0;
        for entry in walkdir(dir) {
            if entry.extension().is_some_and(|e| e == "jsonl") {
                n += std::fs::read_to_string(&entry).unwrap().lines().count();
            }
        }
        n
    };
    (
        tree(&ws.workspace.root),
        lines(&ws.layout.history_dir()),
        ws.gate.store().blob_names().unwrap().0.len(),
        pending_journals(&ws.layout.write_journal_dir()).len(),
    )
}

fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .map(|e| e.unwrap().path())
        .flat_map(|p| if p.is_dir() { walkdir(&p) } else { vec![p] })
        .collect()
}

/// Bytes at the end of the packs below `root` that are no whole entry.
fn torn_pack_bytes(root: &Path) -> usize {
    let Ok(packs) = std::fs::read_dir(root.join(".cocode/history/packs")) else {
        return 0;
    };
    packs
        .map(|pack| {
            let bytes = std::fs::read(pack.unwrap().path()).unwrap();
            bytes.len() - pack_entries(&bytes).1
        })
        .sum()
}

#[test]
fn every_crash_point_of_the_write_protocol_loses_nothing() {
    let mut failures = Vec::new();
    for (scenario, before, after) in scenarios() {
        for point in POINTS {
            if point == "gate::between_files"
                && matches!(scenario, "create" | "modify" | "modify_large")
            {
                continue; // single-file operations have no boundary between files
            }
            if point == "pack::mid_entry" && scenario != "modify_large" {
                continue; // their blobs go in the journal, packed only at a checkpoint
            }
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("ws");
            std::fs::create_dir(&root).unwrap();
            for (path, content) in &before {
                put(&root, path, content.as_bytes());
            }
            drop(OpenWorkspace::open(&root).unwrap());
            let out = crash_child(&root, scenario, point);
            if out.status.success() || out.status.code().is_some() {
                failures.push(format!(
                    "{scenario}@{point}: the child did not die ({:?}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout)
                ));
                continue;
            }
            if point.ends_with("pack::mid_entry") && torn_pack_bytes(&root) == 0 {
                failures.push(format!("{scenario}@{point}: no pack ends in half an entry"));
            }
            // A fresh process (this one) recovers.
            let ws = OpenWorkspace::open(&root).unwrap();
            let report = ws.gate.recover().unwrap();
            let integrity = HistoryIntegrityChecker::new(ws.gate.store())
                .check()
                .unwrap();
            let records = ws
                .gate
                .store()
                .snapshots_of_task(&ctx("crash", 1).task_id)
                .unwrap();
            let files = tree(&ws.workspace.root);
            // Per file: fully old with no record, or fully new with its record.
            let (old_files, new_files) = (as_map(&before), as_map(&after));
            let paths: std::collections::BTreeSet<&String> =
                old_files.keys().chain(new_files.keys()).collect();
            let mut mixed = Vec::new();
            for path in paths {
                let recorded = records.iter().any(|r| {
                    r.path().as_str() == path
                        || r.previous_path().is_some_and(|f| f.as_str() == path)
                });
                let current = files.get(path);
                let ok = (current == old_files.get(path) && !recorded)
                    || (current == new_files.get(path) && recorded);
                if !ok {
                    mixed.push(path.clone());
                }
            }
            let leftovers: Vec<&String> = files
                .keys()
                .filter(|f| !old_files.contains_key(*f) && !new_files.contains_key(*f))
                .collect();
            let state = if mixed.is_empty() && leftovers.is_empty() {
                "consistent"
            } else {
                "mixed"
            };
            let first = fingerprint(&ws);
            drop(ws);
            let again = OpenWorkspace::open(&root).unwrap();
            let second_report = again.gate.recover().unwrap();
            let second = fingerprint(&again);
            if state == "mixed"
                || integrity.problems() != 0
                || first != second
                || !report.unresolved.is_empty()
            {
                failures.push(format!(
                    "{scenario}@{point}: state {state} {mixed:?} {leftovers:?}, files {files:?}, {} records, integrity {integrity:?}, report {report:?}, second {second_report:?}, fingerprints differ: {}",
                    records.len(),
                    first != second
                ));
            }
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

/// Which outcome each point must produce: before the journal exists nothing
/// happened; from the file change on, the edit is complete.
#[test]
fn crash_points_before_the_change_drop_and_after_it_complete() {
    let mut got = Vec::new();
    for point in POINTS {
        if point == "gate::between_files" {
            continue;
        }
        // Only a blob too large for the journal is packed during the
        // operation.
        let (scenario, new) = if point == "pack::mid_entry" {
            ("modify_large", large_content())
        } else {
            ("modify", "new")
        };
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        put(&root, "a.txt", b"old");
        drop(OpenWorkspace::open(&root).unwrap());
        let status = crash_child(&root, scenario, point).status;
        assert!(status.code().is_none(), "{point}: {status:?}");
        let ws = OpenWorkspace::open(&root).unwrap();
        ws.gate.recover().unwrap();
        let content = std::fs::read_to_string(root.join("a.txt")).unwrap();
        let state = match content.as_str() {
            "old" => "old".to_owned(),
            c if c == new => "new".to_owned(),
            other => format!("neither: {} bytes", other.len()),
        };
        got.push((point, state));
    }
    let want: Vec<(&str, String)> = [
        ("gate::after_reserve", "old"),
        ("pack::mid_entry", "old"),
        ("gate::after_blobs", "old"),
        ("gate::after_journal", "old"),
        ("gate::after_stage", "old"),
        ("gate::after_apply", "new"),
        ("gate::after_hold", "new"),
        ("returned", "new"),
        ("flush:pack::mid_entry", "new"),
        ("flush:store::checkpoint_after_blobs", "new"),
        ("flush:store::checkpoint_after_indexes", "new"),
    ]
    .into_iter()
    .map(|(a, b)| (a, b.to_owned()))
    .collect();
    assert_eq!(got, want);
}

const ROLLBACK_POINTS: [&str; 6] = [
    "rollback::after_journal",
    "rollback::after_stage",
    "rollback::between_items",
    "rollback::after_apply",
    "rollback::after_records",
    "returned",
];

/// Files of the rollback crash test beyond the four named ones: enough that
/// the rollback spreads over several threads (and dies in one of them).
const MANY: usize = 48;

/// A task modified, created, deleted and renamed files; the rollback of the
/// whole task dies at each step. Replay must converge on the original tree
/// with the rollback's records written exactly once.
#[test]
fn every_crash_point_of_rollback_converges_on_replay() {
    let many: Vec<(String, String)> = (0..MANY)
        .map(|i| (format!("many/f{i}.txt"), format!("m{i}")))
        .collect();
    let original: Vec<(&str, &str)> = [
        ("a.txt", "a0"),
        ("d/b.txt", "b0"),
        ("gone.txt", "g0"),
        ("old.txt", "o0"),
    ]
    .into_iter()
    .chain(many.iter().map(|(a, b)| (a.as_str(), b.as_str())))
    .collect();
    let mut failures = Vec::new();
    for point in ROLLBACK_POINTS {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        for (path, content) in &original {
            put(&root, path, content.as_bytes());
        }
        {
            let ws = OpenWorkspace::open(&root).unwrap();
            let c = ctx("crash", 1);
            apply(&ws, &c, write("a.txt", b"a1"));
            apply(&ws, &c, write("d/b.txt", b"b1"));
            apply(&ws, &c, write("new/n.txt", b"n1"));
            apply(&ws, &c, delete("gone.txt"));
            apply(&ws, &c, rename("old.txt", "moved.txt"));
            for (path, _) in &many {
                apply(&ws, &c, write(path, b"changed"));
            }
        }
        let out = crash_child(&root, "rollback", point);
        if out.status.code().is_some() {
            failures.push(format!(
                "{point}: the child did not die: {}",
                String::from_utf8_lossy(&out.stdout)
            ));
            continue;
        }
        let ws = OpenWorkspace::open(&root).unwrap();
        let report = ws.gate.recover().unwrap();
        let files = tree(&ws.workspace.root);
        let rollback_records = ws
            .gate
            .store()
            .snapshots_of_task(&ctx("crash", 1).task_id)
            .unwrap()
            .into_iter()
            .filter(|r| r.origin() == cocode_core::snapshot::SnapshotOrigin::Rollback)
            .count();
        let integrity = HistoryIntegrityChecker::new(ws.gate.store())
            .check()
            .unwrap();
        let first = fingerprint(&ws);
        drop(ws);
        let again = OpenWorkspace::open(&root).unwrap();
        again.gate.recover().unwrap();
        let second = fingerprint(&again);
        // After the journal exists the rollback completes; before, nothing happened.
        let expected_files = as_map(&original);
        let ok = files == expected_files
            && rollback_records == 6 + MANY
            && integrity.problems() == 0
            && first == second
            && report.rollbacks_incomplete.is_empty();
        if !ok {
            failures.push(format!(
                "{point}: files {files:?}, {rollback_records} rollback records, integrity {integrity:?}, report {report:?}, stable {}",
                first == second
            ));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

fn retention_lives() -> Vec<cocode_workspace::TaskLife> {
    ["t1", "t2", "t3"]
        .iter()
        .zip(1_i64..)
        .map(|(t, at)| cocode_workspace::TaskLife {
            task_id: cocode_core::ids::TaskId::new(*t).unwrap(),
            terminated_at: Some(cocode_core::ids::Timestamp::from_millis(at)),
        })
        .collect()
}

/// A workspace where tasks t1–t3 each wrote a file, and a retention run
/// that died at `point`.
fn retention_crashed_at(point: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    {
        let ws = OpenWorkspace::open(&root).unwrap();
        for t in ["t1", "t2", "t3"] {
            apply(&ws, &ctx(t, 0), write(&format!("{t}.txt"), t.as_bytes()));
        }
    }
    let out = crash_child(&root, "retention", point);
    assert!(
        out.status.code().is_none(),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    (dir, root)
}

/// Retention dies after writing a task's marker, before its records go: the
/// history stays consistent for the checker, rollback is already refused,
/// and the next run finishes the removal.
#[test]
fn retention_interrupted_after_the_marker_is_finished_by_the_next_run() {
    let (_dir, root) = retention_crashed_at("retention::after_marker");
    let ws = OpenWorkspace::open(&root).unwrap();
    ws.gate.recover().unwrap();
    assert_eq!(history_problems(&ws), 0);
    let t1 = cocode_core::ids::TaskId::new("t1").unwrap();
    assert!(matches!(
        ws.gate
            .rollback(&t1, &cocode_workspace::RollbackQuery::TaskStart),
        Err(cocode_workspace::RollbackError::Collected { .. })
    ));
    let config = cocode_core::workspace::RetentionConfig {
        keep_recent_per_path: 0,
        byte_cap: 1,
    };
    let report = ws
        .gate
        .run_retention(
            &retention_lives(),
            cocode_workspace::RetentionTrigger::AppStart,
            config,
        )
        .unwrap();
    assert_eq!(
        (report.finished_earlier.clone(), report.plan.remove.clone()),
        (
            vec![t1.clone()],
            vec![cocode_core::ids::TaskId::new("t2").unwrap()]
        )
    );
    assert_eq!(ws.gate.store().snapshots_of_task(&t1).unwrap(), vec![]);
    assert_eq!(history_problems(&ws), 0);
}

/// Retention dies after a pack's live entries were rewritten to a new pack,
/// before the old one was removed: both packs hold the kept blobs, the
/// checker finds nothing, the kept task rolls back byte for byte, and the
/// next run removes the leftover pack.
#[test]
fn retention_interrupted_between_a_packs_rewrite_and_its_removal_loses_nothing() {
    let (_dir, root) = retention_crashed_at("pack::after_compact_write");
    let packs = |ws: &OpenWorkspace| std::fs::read_dir(ws.layout.packs_dir()).unwrap().count();
    let ws = OpenWorkspace::open(&root).unwrap();
    ws.gate.recover().unwrap();
    assert_eq!(packs(&ws), 2, "the rewrite and the old pack");
    assert_eq!(history_problems(&ws), 0);
    let t3 = cocode_core::ids::TaskId::new("t3").unwrap();
    ws.gate
        .rollback(&t3, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    assert!(!root.join("t3.txt").exists());
    let config = cocode_core::workspace::RetentionConfig {
        keep_recent_per_path: 0,
        byte_cap: 1,
    };
    ws.gate
        .run_retention(
            &retention_lives(),
            cocode_workspace::RetentionTrigger::AppStart,
            config,
        )
        .unwrap();
    ws.gate.flush().unwrap();
    let report = HistoryIntegrityChecker::new(ws.gate.store())
        .check()
        .unwrap();
    assert_eq!(report.problems(), 0, "{report:?}");
    assert_eq!(packs(&ws), 1);
}
