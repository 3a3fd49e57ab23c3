//! Atomic rollback: targets, conflicts that touch nothing, boundaries,
//! renames, folders, observed changes, exclusions and collected tasks.

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::WorkspaceFileGate;
use cocode_core::ids::{AttemptNo, TaskId};
use cocode_core::snapshot::ContentHash;
use cocode_workspace::rollback::{ConflictReason, PathConflict};
use cocode_workspace::{RollbackAvailability, RollbackError, RollbackQuery};
use pretty_assertions::assert_eq;

use super::common::*;

fn task(name: &str) -> TaskId {
    TaskId::new(name).unwrap()
}

#[test]
fn rolling_back_a_task_after_another_task_edited_the_file_is_a_conflict_that_touches_nothing() {
    let (_d, ws) = workspace(&[("a.txt", "0"), ("b.txt", "b0")]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"t1"));
    apply(&ws, &ctx("t1", 0), write("b.txt", b"t1"));
    apply(&ws, &ctx("t2", 0), write("a.txt", b"t2"));
    let err = roll_back_t1(&ws).unwrap_err();
    assert_eq!(
        err,
        RollbackError::Conflicts(vec![PathConflict {
            path: p("a.txt"),
            reason: ConflictReason::LaterTask {
                task_id: task("t2")
            }
        }])
    );
    // b.txt had no conflict but is untouched too: one conflict, nothing happens.
    assert_eq!(
        tree(&ws.workspace.root),
        files(&[("a.txt", "t2"), ("b.txt", "t1")])
    );
}

#[test]
fn a_human_edit_after_the_agent_is_a_conflict() {
    let (_d, ws) = workspace(&[("a.txt", "0")]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"agent"));
    ws.gate.save_user_file(&p("a.txt"), b"person").unwrap();
    let availability = ws
        .gate
        .rollback_availability(&task("t1"), &RollbackQuery::TaskStart);
    assert_eq!(
        availability,
        RollbackAvailability::Unavailable(RollbackError::Conflicts(vec![PathConflict {
            path: p("a.txt"),
            reason: ConflictReason::ChangedSince {
                expected: Some(ContentHash::of(b"agent")),
                found: Some(ContentHash::of(b"person"))
            }
        }]))
    );
    assert!(roll_back_t1(&ws).is_err());
    assert_eq!(tree(&ws.workspace.root), files(&[("a.txt", "person")]));
}

#[test]
fn create_then_delete_rolls_back_to_nothing_without_error() {
    let (_d, ws) = workspace(&[("keep.txt", "k")]);
    apply(&ws, &ctx("t1", 0), write("tmp.txt", b"x"));
    apply(&ws, &ctx("t1", 0), delete("tmp.txt"));
    assert_eq!(roll_back_t1(&ws).unwrap(), vec![]);
    assert_eq!(tree(&ws.workspace.root), files(&[("keep.txt", "k")]));
}

#[test]
fn rename_chains_restore_both_paths_and_folders_come_back() {
    let (_d, ws) = workspace(&[("a.txt", "A"), ("d/x.txt", "X"), ("d/y/z.txt", "Z")]);
    let c = ctx("t1", 0);
    apply(&ws, &c, write("a.txt", b"A2"));
    apply(&ws, &c, rename("a.txt", "b.txt"));
    apply(&ws, &c, rename("b.txt", "c/c.txt"));
    apply(&ws, &c, delete("d"));
    assert_eq!(tree(&ws.workspace.root), files(&[("c/c.txt", "A2")]));
    let records = roll_back_t1(&ws).unwrap();
    assert_eq!(
        summary(&records),
        [
            ("create", "a.txt"),
            ("delete", "c/c.txt"),
            ("create", "d/x.txt"),
            ("create", "d/y/z.txt")
        ]
        .iter()
        .map(|(k, p)| ((*k).to_owned(), (*p).to_owned(), "rollback".to_owned()))
        .collect::<Vec<_>>()
    );
    assert_eq!(
        tree(&ws.workspace.root),
        files(&[("a.txt", "A"), ("d/x.txt", "X"), ("d/y/z.txt", "Z")])
    );
    ws.gate.flush().unwrap();
    assert_eq!(history_problems(&ws), 0);
    // Rolled back already: nothing left to do, and still no error.
    assert_eq!(
        ws.gate
            .rollback_availability(&task("t1"), &RollbackQuery::TaskStart),
        RollbackAvailability::Unavailable(RollbackError::NothingToRollBack)
    );
}

#[test]
fn an_attempt_boundary_rollback_leaves_earlier_attempts_and_a_later_full_rollback_still_works() {
    let (_d, ws) = workspace(&[("a.txt", "0")]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"attempt0"));
    apply(&ws, &ctx("t1", 1), write("a.txt", b"attempt1"));
    apply(&ws, &ctx("t1", 1), write("new.txt", b"n"));
    ws.gate
        .rollback(&task("t1"), &RollbackQuery::ToAttempt(AttemptNo(1)))
        .unwrap();
    assert_eq!(tree(&ws.workspace.root), files(&[("a.txt", "attempt0")]));
    roll_back_t1(&ws).unwrap();
    assert_eq!(tree(&ws.workspace.root), files(&[("a.txt", "0")]));
}

#[test]
fn rolling_back_to_a_snapshot_undoes_it_and_everything_after() {
    let (_d, ws) = workspace(&[]);
    let c = ctx("t1", 0);
    apply(&ws, &c, write("a.txt", b"1"));
    let second = apply(&ws, &c, write("a.txt", b"2"));
    apply(&ws, &c, write("b.txt", b"b"));
    ws.gate
        .rollback(
            &task("t1"),
            &RollbackQuery::ToSnapshot(second[0].snapshot_id().clone()),
        )
        .unwrap();
    assert_eq!(tree(&ws.workspace.root), files(&[("a.txt", "1")]));
}

#[cfg(unix)]
#[test]
fn observed_changes_of_a_shell_command_roll_back_and_restore_the_tree() {
    let (_d, ws) = workspace(&[("b", "bee\n"), ("keep", "k\n")]);
    let before = tree(&ws.workspace.root);
    let c = ctx("t1", 0);
    ws.gate.begin_sweep().unwrap();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("echo x > a; rm b; mkdir d; echo y > d/c")
        .current_dir(&ws.workspace.root)
        .status()
        .unwrap();
    assert!(status.success());
    // The folder the command made is a change of its own.
    assert_eq!(ws.gate.end_sweep(&c).unwrap().len(), 4);
    roll_back_t1(&ws).unwrap();
    assert_eq!(tree(&ws.workspace.root), before);
    assert!(
        !ws.workspace.root.join("d").exists(),
        "the folder it made is gone"
    );
}

#[test]
fn a_task_collected_by_retention_reports_rollback_unavailable_with_the_reason() {
    let (_d, ws) = workspace(&[]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"1"));
    // Retention, which left the marker below, checkpoints first.
    ws.gate.flush().unwrap();
    let marker = cocode_workspace::store::RetentionMarker {
        version: 1,
        removed_at: cocode_core::ids::Timestamp::from_millis(42),
        reason: "history over its byte cap".into(),
        snapshots_removed: 1,
        bytes_freed: 10,
    };
    std::fs::write(
        ws.layout.retention_marker(&task("t1")),
        serde_json::to_vec(&marker).unwrap(),
    )
    .unwrap();
    let err = roll_back_t1(&ws).unwrap_err();
    assert_eq!(
        err,
        RollbackError::Collected {
            removed_at_ms: 42,
            reason: "history over its byte cap".into()
        }
    );
    assert_eq!(tree(&ws.workspace.root), files(&[("a.txt", "1")]));
}

#[test]
fn agent_writes_to_paths_of_an_interrupted_rollback_are_refused_until_abandoned() {
    let (_d, ws) = workspace(&[("a.txt", "0"), ("b.txt", "0")]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"1"));
    apply(&ws, &ctx("t1", 0), write("b.txt", b"1"));
    let root = ws.workspace.root.clone();
    // Interrupt the rollback after its first item, then put the second path
    // in a third state so the replay cannot finish.
    let b = root.join("b.txt");
    let result = rollback_changing_at(&ws, "rollback::between_items", move || {
        std::fs::write(&b, b"third").unwrap();
    });
    assert_eq!(result, stopped_at("b.txt"));
    let err = ws
        .gate
        .apply(&ctx("t2", 0), write("b.txt", b"agent"))
        .unwrap_err();
    assert_eq!(err.code, WorkspaceErrorCode::RollbackInProgress);
    // The next start replays and stops at the same path.
    drop(ws);
    let (ws, report) = restart(&root);
    assert_eq!(incomplete_paths(&report), vec!["b.txt"]);
    let op = report.rollbacks_incomplete[0].0.clone();
    assert_eq!(
        ws.gate
            .apply(&ctx("t2", 0), write("b.txt", b"agent"))
            .unwrap_err()
            .code,
        WorkspaceErrorCode::RollbackInProgress
    );
    assert_eq!(
        ws.gate.abandon_pending_journal(&op).unwrap(),
        vec![p("a.txt"), p("b.txt")]
    );
    apply(&ws, &ctx("t2", 0), write("b.txt", b"agent"));
    assert_eq!(tree(&root), files(&[("a.txt", "0"), ("b.txt", "agent")]));
}

/// Fail points are global to the test process: tests that set one take
/// turns.
static FAIL_POINT_USERS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Rolls task `t1` back to its start; `change` runs the first time the
/// rollback reaches the fail point `point` on this thread.
fn rollback_changing_at(
    ws: &cocode_workspace::OpenWorkspace,
    point: &'static str,
    change: impl Fn() + Send + Sync + 'static,
) -> Result<Vec<cocode_core::snapshot::EditSnapshot>, RollbackError> {
    let _turn = FAIL_POINT_USERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let me = std::thread::current().id();
    let done = std::sync::atomic::AtomicBool::new(false);
    fail::cfg_callback(point, move || {
        if std::thread::current().id() == me
            && !done.swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            change();
        }
    })
    .unwrap();
    let result = roll_back_t1(ws);
    fail::remove(point);
    result
}

/// Task `t1` rolled back to its start.
fn roll_back_t1(
    ws: &cocode_workspace::OpenWorkspace,
) -> Result<Vec<cocode_core::snapshot::EditSnapshot>, RollbackError> {
    ws.gate.rollback(&task("t1"), &RollbackQuery::TaskStart)
}

/// How a rollback that stopped at `path` is reported.
fn stopped_at(path: &str) -> Result<Vec<cocode_core::snapshot::EditSnapshot>, RollbackError> {
    Err(RollbackError::Failed(format!(
        "the rollback stopped at {path}; it stays pending until finished at the next start or abandoned"
    )))
}

/// A file changed between the precheck and its replacement is never
/// overwritten, even when the change keeps its size and puts its mtime back
/// (only the ctime, which no program can set, shows it): the rollback stops
/// there and the person's text stays.
#[test]
fn a_change_hidden_behind_the_old_mtime_during_a_rollback_still_stops_it() {
    let (_d, ws) = workspace(&[("a.txt", "old 0"), ("b.txt", "old 0")]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"new 1"));
    apply(&ws, &ctx("t1", 0), write("b.txt", b"new 1"));
    // Old enough that the precheck trusts the files' stamps.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let root = ws.workspace.root.clone();
    let b = root.join("b.txt");
    let result = rollback_changing_at(&ws, "rollback::after_stage", move || {
        let mtime = std::fs::metadata(&b).unwrap().modified().unwrap();
        std::fs::write(&b, b"human").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&b)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
    });
    assert_eq!(result, stopped_at("b.txt"));
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap();
    assert_eq!(
        (read("a.txt"), read("b.txt")),
        ("old 0".to_owned(), "human".to_owned())
    );
}

/// A large rollback applies its folders on several threads; a file changed
/// after the precheck stops it there all the same: that file keeps the
/// person's text, every other file is at its old or its restored content,
/// and the next start finishes every other file and stops at that one.
#[test]
fn a_file_changed_during_a_large_rollback_stops_it_without_being_overwritten() {
    let (original, _d, ws) = spread_workspace(80, 8);
    for (path, _) in &original {
        apply(&ws, &ctx("t1", 0), write(path, b"changed"));
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    let root = ws.workspace.root.clone();
    let target = root.join("d5/f45.txt");
    let result = rollback_changing_at(&ws, "rollback::after_stage", move || {
        std::fs::write(&target, b"person").unwrap();
    });
    assert_eq!(result, stopped_at("d5/f45.txt"));
    // Every file at its old or its restored content, the person's text kept.
    let consistent = |root: &std::path::Path| {
        let mut files = tree(root);
        files.retain(|path, _| !path.contains(".cocode-rollback-"));
        assert_eq!(files.len(), original.len());
        for (i, (path, old)) in original.iter().enumerate() {
            let content = files[path].as_str();
            if i == 45 {
                assert_eq!(content, "person");
            } else {
                assert!(content == "changed" || content == old, "{path}: {content}");
            }
        }
    };
    consistent(&root);
    drop(ws);
    let (_ws, report) = restart(&root);
    assert_eq!(incomplete_paths(&report), vec!["d5/f45.txt"]);
    consistent(&root);
}

/// Enough files that the rollback spreads its reads, writes and renames
/// over several threads: the tree must still come back exactly, with one
/// record per path, and a conflict found among many paths still touches
/// nothing.
#[test]
fn a_large_rollback_restores_every_file_and_a_single_conflict_still_touches_nothing() {
    let (original, _d, ws) = spread_workspace(150, 7);
    let c = ctx("t1", 0);
    for i in 0..120 {
        apply(&ws, &c, write(&format!("d{}/f{i}.txt", i % 7), b"changed"));
    }
    for i in 120..150 {
        apply(&ws, &c, delete(&format!("d{}/f{i}.txt", i % 7)));
    }
    for i in 0..60 {
        apply(
            &ws,
            &c,
            write(&format!("new{}/n{i}.txt", i % 5), b"created"),
        );
    }
    let after_task = tree(&ws.workspace.root);

    // A person's edit on one of 210 paths: nothing is touched.
    ws.gate.save_user_file(&p("d3/f73.txt"), b"person").unwrap();
    let err = roll_back_t1(&ws).unwrap_err();
    assert_eq!(
        err,
        RollbackError::Conflicts(vec![PathConflict {
            path: p("d3/f73.txt"),
            reason: ConflictReason::ChangedSince {
                expected: Some(ContentHash::of(b"changed")),
                found: Some(ContentHash::of(b"person")),
            }
        }])
    );
    let mut expected_now = after_task.clone();
    expected_now.insert("d3/f73.txt".to_owned(), "person".to_owned());
    assert_eq!(tree(&ws.workspace.root), expected_now);

    ws.gate
        .save_user_file(&p("d3/f73.txt"), b"changed")
        .unwrap();
    let records = roll_back_t1(&ws).unwrap();
    assert_eq!(records.len(), 210);
    let restored: std::collections::BTreeMap<String, String> = original.into_iter().collect();
    assert_eq!(tree(&ws.workspace.root), restored);
    ws.gate.flush().unwrap();
    assert_eq!(history_problems(&ws), 0);
}

/// The task's index file of `t1` in the workspace's history.
fn task_index(ws: &cocode_workspace::OpenWorkspace) -> std::path::PathBuf {
    ws.layout.task_index(&task("t1"))
}

#[test]
fn a_task_index_cut_mid_line_makes_rollback_refuse_and_name_the_damage() {
    let (_d, ws) = workspace(&[("a.txt", "0"), ("b.txt", "0")]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"1"));
    let second = apply(&ws, &ctx("t1", 0), write("b.txt", b"1"));
    ws.gate.flush().unwrap();
    let root = ws.workspace.root.clone();
    let index = task_index(&ws);
    drop(ws);
    // The last record loses its second half (and its newline).
    let text = std::fs::read_to_string(&index).unwrap();
    let last = text.trim_end().rfind('\n').unwrap() + 1;
    let cut = last + (text.len() - last) / 2;
    std::fs::write(&index, &text[..cut]).unwrap();
    let (ws, _) = restart(&root);
    let refused = ws
        .gate
        .rollback(&task("t1"), &RollbackQuery::TaskStart)
        .unwrap_err();
    assert_eq!(
        refused,
        RollbackError::Damaged(vec![second[0].snapshot_id().clone()])
    );
    assert!(refused.to_string().starts_with(
        "the task's history is damaged: its index lacks 1 record(s) that the path indexes hold"
    ));
    // Nothing was touched, and the integrity check names the same record.
    assert_eq!(tree(&root), files(&[("a.txt", "1"), ("b.txt", "1")]));
    let report = cocode_workspace::HistoryIntegrityChecker::new(ws.gate.store())
        .check()
        .unwrap();
    assert_eq!(
        report.only_in_path_index,
        vec![second[0].snapshot_id().clone()]
    );
}

#[test]
fn a_whole_record_that_lost_only_its_newline_is_kept_and_rolled_back() {
    let (_d, ws) = workspace(&[("a.txt", "0"), ("b.txt", "0")]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"1"));
    apply(&ws, &ctx("t1", 0), write("b.txt", b"1"));
    ws.gate.flush().unwrap();
    let root = ws.workspace.root.clone();
    let index = task_index(&ws);
    drop(ws);
    let text = std::fs::read_to_string(&index).unwrap();
    std::fs::write(&index, text.trim_end_matches('\n')).unwrap();
    let (ws, _) = restart(&root);
    assert_eq!(std::fs::read_to_string(&index).unwrap(), text);
    ws.gate
        .rollback(&task("t1"), &RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(tree(&root), files(&[("a.txt", "0"), ("b.txt", "0")]));
    ws.gate.flush().unwrap();
    assert_eq!(history_problems(&ws), 0);
}
