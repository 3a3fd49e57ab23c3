//! Retention over real histories: what goes, in which order, what always
//! stays, and what a collected task's rollback says.

use cocode_core::ids::{TaskId, Timestamp};
use cocode_core::snapshot::ContentHash;
use cocode_core::workspace::RetentionConfig;
use cocode_workspace::{
    OpenWorkspace, RetentionReport, RetentionTrigger, RollbackError, RollbackQuery, TaskLife,
};
use pretty_assertions::assert_eq;

use super::common::*;

/// Content gzip cannot shrink, so sizes are predictable.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x & 0xff) as u8
        })
        .collect()
}

fn life(task: &str, at: Option<i64>) -> TaskLife {
    TaskLife {
        task_id: TaskId::new(task).unwrap(),
        terminated_at: at.map(Timestamp::from_millis),
    }
}

/// Retention run over a cap of one byte, keeping the most recent task of
/// each path: every task that may go, goes.
fn over_a_cap_of_one_byte(ws: &OpenWorkspace, lives: &[TaskLife]) -> RetentionReport {
    let config = RetentionConfig {
        keep_recent_per_path: 1,
        byte_cap: 1,
    };
    ws.gate
        .run_retention(lives, RetentionTrigger::CapExceeded, config)
        .unwrap()
}

fn ids(v: &[TaskId]) -> Vec<&str> {
    v.iter().map(TaskId::as_str).collect()
}

#[test]
fn over_the_cap_terminal_tasks_go_oldest_first_but_never_running_ones_nor_the_latest() {
    let (_d, ws) = workspace(&[]);
    for (n, task) in ["t1", "t2", "t3", "t4"].iter().enumerate() {
        apply(
            &ws,
            &ctx(task, 0),
            write(&format!("{task}.bin"), &noise(n as u64 + 1, 20_000)),
        );
    }
    ws.gate.flush().unwrap();
    let t1_blob = ContentHash::of(&noise(1, 20_000));
    assert!(ws.gate.store().has_blob(&t1_blob));
    let lives = [
        life("t1", Some(1)),
        life("t2", Some(2)),
        life("t3", None),
        life("t4", Some(4)),
    ];
    let report = over_a_cap_of_one_byte(&ws, &lives);
    // Every task is the only (so most recent) task of its file: all pinned,
    // so P4' applies; t3 runs and t4 is the latest terminal task.
    assert_eq!(ids(&report.plan.remove), vec!["t1", "t2"]);
    assert_eq!(report.blobs_removed, 2);
    assert!(!ws.gate.store().has_blob(&t1_blob));
    let err = ws
        .gate
        .rollback(&TaskId::new("t1").unwrap(), &RollbackQuery::TaskStart)
        .unwrap_err();
    assert!(matches!(err, RollbackError::Collected { .. }), "{err:?}");
    assert!(
        ws.gate
            .rollback(&TaskId::new("t4").unwrap(), &RollbackQuery::TaskStart)
            .is_ok()
    );
    ws.gate.flush().unwrap();
    assert_eq!(history_problems(&ws), 0);
    // The files themselves are the person's now; retention never touches them.
    assert_eq!(
        std::fs::read(ws.workspace.root.join("t1.bin")).unwrap(),
        noise(1, 20_000)
    );
}

#[test]
fn unpinned_tasks_go_before_pinned_ones_even_if_they_ended_later() {
    let (_d, ws) = workspace(&[]);
    apply(&ws, &ctx("pinned", 0), write("own.bin", &noise(1, 20_000)));
    apply(
        &ws,
        &ctx("older", 0),
        write("shared.bin", &noise(2, 20_000)),
    );
    apply(
        &ws,
        &ctx("newer", 0),
        write("shared.bin", &noise(3, 20_000)),
    );
    apply(
        &ws,
        &ctx("latest", 0),
        write("other.bin", &noise(4, 20_000)),
    );
    ws.gate.flush().unwrap();
    let lives = [
        life("pinned", Some(1)),
        life("older", Some(2)),
        life("newer", Some(3)),
        life("latest", Some(4)),
    ];
    // Just over the cap: one removal is enough.
    let config = RetentionConfig {
        keep_recent_per_path: 1,
        byte_cap: ws.gate.history_bytes() - 1,
    };
    let report = ws
        .gate
        .run_retention(&lives, RetentionTrigger::TaskTerminated, config)
        .unwrap();
    assert_eq!(ids(&report.plan.remove), vec!["older"]);
    assert_eq!(
        ids(&report.plan.pinned.iter().cloned().collect::<Vec<_>>()),
        vec!["latest", "newer", "pinned"]
    );
}

#[test]
fn blobs_a_pending_journal_references_are_never_collected() {
    let (_d, ws) = workspace(&[]);
    apply(&ws, &ctx("t1", 0), write("a.bin", &noise(1, 10_000)));
    apply(&ws, &ctx("t2", 0), write("b.bin", &noise(2, 10_000)));
    // Both journals wait for a checkpoint; retention runs one first and
    // lets them go.
    let config = RetentionConfig {
        keep_recent_per_path: 0,
        byte_cap: 1,
    };
    let lives = [
        life("t1", Some(1)),
        life("t2", Some(2)),
        life("t3", Some(3)),
    ];
    apply(&ws, &ctx("t3", 0), write("c.bin", b"c"));
    // t1 and t2 are collected, t3 is the latest.
    let report = ws
        .gate
        .run_retention(&lives, RetentionTrigger::AppStart, config)
        .unwrap();
    assert_eq!(ids(&report.plan.remove), vec!["t1", "t2"]);
    assert!(
        !ws.gate
            .store()
            .has_blob(&ContentHash::of(&noise(1, 10_000)))
    );
    assert!(
        !ws.gate
            .store()
            .has_blob(&ContentHash::of(&noise(2, 10_000)))
    );
    assert!(ws.gate.store().has_blob(&ContentHash::of(b"c")));
    // A journal naming t1's content keeps that blob even though no record does.
    let (_d2, ws2) = workspace(&[]);
    apply(&ws2, &ctx("t1", 0), write("a.bin", &noise(7, 10_000)));
    apply(&ws2, &ctx("t2", 0), write("b.bin", b"b"));
    let held = pending_journals(&ws2.layout.write_journal_dir())
        .into_iter()
        .next()
        .unwrap();
    let mut journal: cocode_workspace::WriteJournal =
        serde_json::from_slice(&std::fs::read(&held).unwrap()).unwrap();
    let t1_records = ws2
        .gate
        .store()
        .snapshots_of_task(&TaskId::new("t1").unwrap())
        .unwrap();
    // The journal of an operation this gate did not make (another
    // process's, left unresolved), naming t1's records.
    journal.op_id = cocode_core::ids::OpId::new("w000000000001-1-0").unwrap();
    journal.records = t1_records;
    let pending = ws2.layout.write_journal(&journal.op_id);
    std::fs::write(&pending, serde_json::to_vec(&journal).unwrap()).unwrap();
    let lives = [life("t1", Some(1)), life("t2", Some(2))];
    let report = ws2
        .gate
        .run_retention(&lives, RetentionTrigger::AppStart, config)
        .unwrap();
    assert_eq!(ids(&report.plan.remove), vec!["t1"]);
    assert!(
        ws2.gate
            .store()
            .has_blob(&ContentHash::of(&noise(7, 10_000)))
    );
}

#[test]
fn the_sweeps_base_blobs_survive_retention() {
    let (_d, ws) = workspace(&[("tracked.txt", "base content")]);
    apply(&ws, &ctx("t1", 0), write("x.bin", &noise(1, 10_000)));
    apply(&ws, &ctx("t2", 0), write("y.bin", b"y"));
    ws.gate.begin_sweep().unwrap();
    let config = RetentionConfig {
        keep_recent_per_path: 0,
        byte_cap: 1,
    };
    ws.gate
        .run_retention(
            &[life("t1", Some(1)), life("t2", Some(2))],
            RetentionTrigger::CapExceeded,
            config,
        )
        .unwrap();
    assert!(ws.gate.store().has_blob(&ContentHash::of(b"base content")));
}

/// Removing a task's records from a shard of the path indexes keeps the
/// records other tasks left there.
#[test]
fn a_collected_task_leaves_the_other_records_of_its_shard() {
    let (_d, ws) = workspace(&[]);
    let mate = shard_mate(&ws, "x.bin");
    apply(&ws, &ctx("t1", 0), write("x.bin", &noise(1, 20_000)));
    let kept = apply(&ws, &ctx("t2", 0), write(&mate, &noise(2, 20_000)));
    apply(&ws, &ctx("t3", 0), write("y.bin", &noise(3, 20_000)));
    ws.gate.flush().unwrap();
    let lives = [life("t1", Some(1)), life("t2", None), life("t3", Some(3))];
    let report = over_a_cap_of_one_byte(&ws, &lives);
    assert_eq!(ids(&report.plan.remove), vec!["t1"]);
    let store = ws.gate.store();
    assert_eq!(store.path_history(&p("x.bin")).unwrap(), []);
    assert_eq!(store.path_history(&p(&mate)).unwrap(), kept);
    let shard = ws.layout.path_index_shard(&p("x.bin").key());
    assert_eq!(
        std::fs::read_to_string(&shard).unwrap(),
        format!("{}\n", serde_json::to_string(&kept[0]).unwrap())
    );
    assert_eq!(history_problems(&ws), 0);
}

/// Retention is due only over the cap: under it nothing goes, not even a
/// blob no record names. Over it, such blobs go first, and a task's history
/// goes only if the history is still over the cap without them.
#[test]
fn under_the_cap_nothing_goes_and_over_it_unnamed_blobs_go_before_any_task() {
    let (_d, ws) = workspace(&[]);
    apply(&ws, &ctx("t1", 0), write("a.bin", &noise(1, 20_000)));
    apply(&ws, &ctx("t2", 0), write("b.bin", &noise(2, 20_000)));
    ws.gate.flush().unwrap();
    // Content no record names (as a look stores a file that then changes
    // again before any command).
    let unnamed = noise(9, 200_000);
    let (hash, _) = ws.gate.store().put_blob(&unnamed).unwrap();
    let lives = [life("t1", Some(1)), life("t2", Some(2))];
    let bytes = ws.gate.history_bytes();
    let at_cap = RetentionConfig {
        keep_recent_per_path: 1,
        byte_cap: bytes,
    };
    let report = ws
        .gate
        .run_retention(&lives, RetentionTrigger::TaskTerminated, at_cap)
        .unwrap();
    assert_eq!(report.plan.remove, Vec::<TaskId>::new());
    assert_eq!(report.blobs_removed, 0);
    assert!(ws.gate.store().has_blob(&hash));
    assert_eq!(ws.gate.history_bytes(), bytes);
    // One byte over: the unnamed blob alone brings it under.
    let over = RetentionConfig {
        keep_recent_per_path: 1,
        byte_cap: bytes - 1,
    };
    let report = ws
        .gate
        .run_retention(&lives, RetentionTrigger::TaskTerminated, over)
        .unwrap();
    assert_eq!(report.plan.remove, Vec::<TaskId>::new());
    assert_eq!(report.blobs_removed, 1);
    assert!(!ws.gate.store().has_blob(&hash));
    assert!(ws.gate.history_bytes() < bytes - 100_000);
    // Both tasks still roll back.
    for task in ["t1", "t2"] {
        ws.gate
            .rollback(&TaskId::new(task).unwrap(), &RollbackQuery::TaskStart)
            .unwrap();
    }
}
