//! A person's review undo: recorded as the task's own `review` snapshot,
//! refused (touching nothing) when the file changed since the review was
//! computed or another task changed it since, and undone again by a
//! rollback to the task's start byte for byte.

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::ids::TaskId;
use cocode_core::snapshot::{ContentHash, SnapshotOrigin};
use cocode_workspace::{ReviewChange, RollbackQuery};
use pretty_assertions::assert_eq;

use super::common::*;

fn task(name: &str) -> TaskId {
    TaskId::new(name).unwrap()
}

fn undo_to(path: &str, expected: &[u8], content: Option<&[u8]>) -> ReviewChange {
    ReviewChange {
        path: p(path),
        expected: Some(ContentHash::of(expected)),
        content: content.map(<[u8]>::to_vec),
    }
}

#[test]
fn an_undo_is_the_tasks_own_review_snapshot_and_a_rollback_still_restores_the_start() {
    let (_d, ws) = workspace(&[("a.txt", "one\ntwo\n")]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"ONE\nTWO\n"));
    apply(&ws, &ctx("t1", 1), write("new.txt", b"made\n"));
    let records = ws
        .gate
        .apply_review(
            &task("t1"),
            &[
                undo_to("a.txt", b"ONE\nTWO\n", Some(b"one\nTWO\n")),
                undo_to("new.txt", b"made\n", None),
            ],
        )
        .unwrap();
    assert_eq!(
        records
            .iter()
            .map(|r| (r.path().to_string(), r.origin(), r.attempt_no().0))
            .collect::<Vec<_>>(),
        vec![
            ("a.txt".to_owned(), SnapshotOrigin::Review, 1),
            ("new.txt".to_owned(), SnapshotOrigin::Review, 1),
        ]
    );
    assert_eq!(tree(&ws.workspace.root), files(&[("a.txt", "one\nTWO\n")]));
    ws.gate
        .rollback(&task("t1"), &RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(tree(&ws.workspace.root), files(&[("a.txt", "one\ntwo\n")]));
}

#[test]
fn an_undo_of_a_file_changed_since_the_review_touches_nothing() {
    let (_d, ws) = workspace(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"A\n"));
    apply(&ws, &ctx("t1", 0), write("b.txt", b"B\n"));
    // A person saves over b.txt after the review was computed.
    put(&ws.workspace.root, "b.txt", b"person\n");
    let err = ws
        .gate
        .apply_review(
            &task("t1"),
            &[
                undo_to("a.txt", b"A\n", Some(b"a\n")),
                undo_to("b.txt", b"B\n", Some(b"b\n")),
            ],
        )
        .unwrap_err();
    assert_eq!(
        (err.code, err.path.as_str(), err.message.as_str()),
        (
            WorkspaceErrorCode::RevisionConflict,
            "b.txt",
            "the file changed since the review was computed; nothing was touched"
        )
    );
    // a.txt passed its check but is untouched too, and nothing is recorded.
    assert_eq!(
        tree(&ws.workspace.root),
        files(&[("a.txt", "A\n"), ("b.txt", "person\n")])
    );
    assert_eq!(
        ws.gate
            .store()
            .snapshots_of_task(&task("t1"))
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn an_undo_after_another_task_changed_the_file_is_refused() {
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"t1\n"));
    apply(&ws, &ctx("t2", 0), write("a.txt", b"t2\n"));
    // Even with the content now on disk as its expectation, t1's undo
    // would overwrite t2's change.
    let err = ws
        .gate
        .apply_review(&task("t1"), &[undo_to("a.txt", b"t2\n", Some(b"a\n"))])
        .unwrap_err();
    assert_eq!(
        (err.code, err.message),
        (
            WorkspaceErrorCode::RevisionConflict,
            "task t2 changed this file after the task under review; undo refused".to_owned()
        )
    );
    assert_eq!(tree(&ws.workspace.root), files(&[("a.txt", "t2\n")]));
    let err = ws
        .gate
        .apply_review(&task("t1"), &[undo_to("other.txt", b"", None)])
        .unwrap_err();
    assert_eq!(err.message, "the task under review never changed this file");
}

#[cfg(unix)]
#[test]
fn an_undo_never_writes_through_a_link_put_in_the_files_place() {
    let (d, ws) = workspace(&[("a.txt", "a\n")]);
    apply(&ws, &ctx("t1", 0), write("a.txt", b"A\n"));
    // Someone swaps the file for a link to a file outside, with the same
    // content the review expects.
    let outside = d.path().join("outside.txt");
    std::fs::write(&outside, "A\n").unwrap();
    std::fs::remove_file(ws.workspace.root.join("a.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.workspace.root.join("a.txt")).unwrap();
    let err = ws
        .gate
        .apply_review(&task("t1"), &[undo_to("a.txt", b"A\n", Some(b"a\n"))])
        .unwrap_err();
    assert_eq!(err.code, WorkspaceErrorCode::RevisionConflict);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "A\n");
}
