//! Batches: several operations as one (one journal, one barrier), refused
//! whole, held whole, rolled back like any other edits of the task.

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{GateOp, GateOutcome, WorkspaceFileGate};
use cocode_core::ids::Seq;
use cocode_workspace::RollbackQuery;
use pretty_assertions::assert_eq;

use super::common::*;

fn batch(ops: Vec<GateOp>) -> GateOp {
    GateOp::Batch { ops }
}

#[test]
fn a_batch_applies_every_item_in_order_with_consecutive_seqs_and_rolls_back_whole() {
    let before = [
        ("a.txt", "A"),
        ("gone.txt", "G"),
        ("d/x.txt", "X"),
        ("d/y.txt", "Y"),
        ("old.txt", "O"),
    ];
    let (_d, ws) = workspace(&before);
    let c = ctx("t1", 1);
    let first = apply(&ws, &c, write("first.txt", b"1"));
    let records = apply(
        &ws,
        &c,
        batch(vec![
            write("a.txt", b"A2"),
            write("new/b.txt", b"B"),
            delete("gone.txt"),
            delete("d"),
            rename("old.txt", "moved/new.txt"),
        ]),
    );
    assert_eq!(
        summary(&records),
        triples(&[
            ("modify", "a.txt", "gate"),
            ("create", "new/b.txt", "gate"),
            ("delete", "gone.txt", "gate"),
            ("delete", "d/x.txt", "gate"),
            ("delete", "d/y.txt", "gate"),
            ("rename", "old.txt -> moved/new.txt", "gate"),
        ])
    );
    assert_eq!(
        records
            .iter()
            .map(cocode_core::snapshot::EditSnapshot::seq)
            .collect::<Vec<_>>(),
        (2..=7).map(Seq).collect::<Vec<_>>()
    );
    assert_eq!(first[0].seq(), Seq(1));
    assert_eq!(
        tree(&ws.workspace.root),
        files(&[
            ("a.txt", "A2"),
            ("first.txt", "1"),
            ("moved/new.txt", "O"),
            ("new/b.txt", "B"),
        ])
    );
    assert_eq!(
        ws.gate.store().snapshots_of_task(&c.task_id).unwrap(),
        [first, records].concat()
    );
    ws.gate.flush().unwrap();
    assert_eq!(history_problems(&ws), 0);
    assert_eq!(pending_journals(&ws.layout.write_journal_dir()).len(), 0);

    ws.gate
        .rollback(&c.task_id, &RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(tree(&ws.workspace.root), files(&before));
}

#[test]
fn one_refused_item_refuses_the_whole_batch_and_changes_nothing() {
    let before = [("a.txt", "A"), ("b.txt", "B")];
    let cases = [
        (
            batch(vec![write("a.txt", b"A2"), delete("missing.txt")]),
            WorkspaceErrorCode::FileNotFound,
            "missing.txt",
        ),
        (
            batch(vec![write("c.txt", b"C"), rename("a.txt", "b.txt")]),
            WorkspaceErrorCode::FileConflict,
            "b.txt",
        ),
        (
            batch(vec![
                write("a.txt", b"1"),
                write("x/.cocode-ok", b"k"),
                write(".cocode/x", b"2"),
            ]),
            WorkspaceErrorCode::PathNotWritable,
            ".cocode/x",
        ),
        // Two items on one path: each is planned against the disk as it was
        // before the batch, so the second could not see the first.
        (
            batch(vec![write("a.txt", b"1"), write("a.txt", b"2")]),
            WorkspaceErrorCode::FileConflict,
            "a.txt",
        ),
        (
            batch(vec![write("c.txt", b"1"), rename("a.txt", "c.txt")]),
            WorkspaceErrorCode::FileConflict,
            "c.txt",
        ),
        // A folder item and an item below it, in either order.
        (
            batch(vec![write("d/e.txt", b"1"), delete("d")]),
            WorkspaceErrorCode::FileConflict,
            "d/e.txt",
        ),
        (
            batch(vec![delete("d"), write("d/e/f.txt", b"1")]),
            WorkspaceErrorCode::FileConflict,
            "d/e/f.txt",
        ),
        (
            batch(vec![
                write("c.txt", b"1"),
                batch(vec![write("e.txt", b"2")]),
            ]),
            WorkspaceErrorCode::FileConflict,
            "e.txt",
        ),
    ];
    for (op, code, path) in cases {
        let (_d, ws) = workspace(&before);
        let c = ctx("t1", 1);
        let err = ws.gate.apply(&c, op.clone()).unwrap_err();
        assert_eq!((err.code, err.path.as_str()), (code, path), "{op:?}");
        assert_eq!(
            ws.gate.store().snapshots_of_task(&c.task_id).unwrap(),
            vec![],
            "{op:?}"
        );
        assert_eq!(tree(&ws.workspace.root), files(&before), "{op:?}");
        assert_eq!(ws.gate.store().blob_names().unwrap().0, vec![], "{op:?}");
        assert_eq!(
            pending_journals(&ws.layout.write_journal_dir()).len(),
            0,
            "{op:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn two_items_reaching_one_file_through_a_link_are_refused() {
    let (_d, ws) = workspace(&[("real/a.txt", "A")]);
    std::os::unix::fs::symlink("real", ws.workspace.root.join("link")).unwrap();
    let c = ctx("t1", 1);
    let err = ws
        .gate
        .apply(
            &c,
            batch(vec![write("link/a.txt", b"1"), write("real/a.txt", b"2")]),
        )
        .unwrap_err();
    assert_eq!(
        (err.code, err.path.as_str()),
        (WorkspaceErrorCode::FileConflict, "real/a.txt")
    );
    assert_eq!(
        std::fs::read_to_string(ws.workspace.root.join("real/a.txt")).unwrap(),
        "A"
    );
    assert_eq!(pending_journals(&ws.layout.write_journal_dir()).len(), 0);
}

#[test]
fn a_batch_touching_an_existing_test_file_is_held_whole_and_applied_whole_on_approval() {
    let (_d, ws) = workspace(&[("src/lib.rs", "old"), ("tests/it.rs", "old test")]);
    let c = ctx("t1", 1);
    let op = batch(vec![
        write("src/lib.rs", b"new"),
        write("tests/it.rs", b"new test"),
    ]);
    let GateOutcome::Held { pending_change } = ws.gate.apply(&c, op.clone()).unwrap() else {
        panic!("a batch changing a test file must be held");
    };
    assert_eq!(
        (
            pending_change.op.clone(),
            pending_change
                .protected
                .iter()
                .map(|t| t.path.as_str().to_owned())
                .collect::<Vec<_>>()
        ),
        (op.clone(), vec!["tests/it.rs".to_owned()])
    );
    assert_eq!(
        tree(&ws.workspace.root),
        files(&[("src/lib.rs", "old"), ("tests/it.rs", "old test")])
    );
    let approved = ws.gate.apply_approved(&c, &op).unwrap();
    assert_eq!(
        summary(&approved),
        triples(&[
            ("modify", "src/lib.rs", "gate"),
            ("modify", "tests/it.rs", "gate")
        ])
    );
    assert_eq!(
        tree(&ws.workspace.root),
        files(&[("src/lib.rs", "new"), ("tests/it.rs", "new test")])
    );
}

#[test]
fn an_empty_batch_or_one_that_changes_nothing_records_nothing() {
    let (_d, ws) = workspace(&[("a.txt", "A")]);
    let c = ctx("t1", 1);
    assert_eq!(apply(&ws, &c, batch(vec![])), vec![]);
    assert_eq!(apply(&ws, &c, batch(vec![write("a.txt", b"A")])), vec![]);
    assert_eq!(
        ws.gate.store().snapshots_of_task(&c.task_id).unwrap(),
        vec![]
    );
}
