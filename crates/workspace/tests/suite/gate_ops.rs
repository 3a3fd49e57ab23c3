//! Gate operations: records, refusals, decomposition, test protection,
//! human saves and history queries.

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{GateOutcome, SnapshotStore, WorkspaceFileGate};
use cocode_core::ids::Seq;
use cocode_core::snapshot::ContentHash;
use cocode_workspace::HistoryIntegrityChecker;
use pretty_assertions::assert_eq;

use super::common::*;

#[test]
fn writes_record_create_then_modify_with_stored_blobs_and_both_indexes() {
    let (_d, ws) = workspace(&[]);
    let c = ctx("t1", 1);
    let created = apply(&ws, &c, write("src/a.txt", b"one\n"));
    let modified = apply(&ws, &c, write("src/a.txt", b"two\n"));
    let unchanged = apply(&ws, &c, write("src/a.txt", b"two\n"));
    assert_eq!(
        summary(&created),
        triples(&[("create", "src/a.txt", "gate")])
    );
    assert_eq!(
        summary(&modified),
        triples(&[("modify", "src/a.txt", "gate")])
    );
    assert_eq!(unchanged, vec![]);
    assert_eq!(
        (
            created[0].seq(),
            modified[0].seq(),
            modified[0].base(),
            modified[0].result()
        ),
        (
            Seq(1),
            Seq(2),
            Some(ContentHash::of(b"one\n")),
            Some(ContentHash::of(b"two\n"))
        )
    );
    assert_eq!(
        std::fs::read(ws.workspace.root.join("src/a.txt")).unwrap(),
        b"two\n"
    );
    let store = ws.gate.store();
    assert_eq!(
        store.read_blob(&ContentHash::of(b"one\n")).unwrap(),
        b"one\n"
    );
    assert_eq!(
        store.snapshots_of_task(&c.task_id).unwrap(),
        [created.clone(), modified.clone()].concat()
    );
    assert_eq!(
        store.last_snapshot_of_path(&p("src/a.txt")).unwrap(),
        Some(modified[0].clone())
    );
    assert_eq!(
        store
            .diff_between(
                &p("src/a.txt"),
                created[0].result().as_ref(),
                modified[0].result().as_ref()
            )
            .unwrap(),
        "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-one\n+two\n"
    );
    ws.gate.flush().unwrap();
    assert_eq!(
        HistoryIntegrityChecker::new(store)
            .check()
            .unwrap()
            .problems(),
        0
    );
}

#[test]
fn refusals_have_their_codes_and_change_nothing() {
    let (_d, ws) = workspace(&[("a.txt", "A"), ("b.txt", "B")]);
    let c = ctx("t1", 1);
    let cases = [
        (delete("missing.txt"), WorkspaceErrorCode::FileNotFound),
        (
            rename("missing.txt", "x.txt"),
            WorkspaceErrorCode::FileNotFound,
        ),
        (rename("a.txt", "b.txt"), WorkspaceErrorCode::FileConflict),
        (rename("a.txt", "a.txt"), WorkspaceErrorCode::FileConflict),
    ];
    let got: Vec<(WorkspaceErrorCode, String)> = cases
        .iter()
        .map(|(op, _)| {
            let err = ws.gate.apply(&c, op.clone()).unwrap_err();
            (err.code, err.path)
        })
        .collect();
    let want: Vec<(WorkspaceErrorCode, String)> = cases
        .iter()
        .zip(["missing.txt", "missing.txt", "b.txt", "a.txt"])
        .map(|((_, code), path)| (*code, path.to_owned()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        ws.gate.store().snapshots_of_task(&c.task_id).unwrap(),
        vec![]
    );
    assert_eq!(
        tree(&ws.workspace.root),
        [("a.txt", "A"), ("b.txt", "B")]
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    );
}

#[test]
fn a_directory_delete_decomposes_into_one_snapshot_per_file() {
    let (_d, ws) = workspace(&[("d/a.txt", "A"), ("d/sub/b.txt", "B"), ("keep.txt", "K")]);
    let c = ctx("t1", 2);
    let records = apply(&ws, &c, delete("d"));
    assert_eq!(
        summary(&records),
        triples(&[
            ("delete", "d/a.txt", "gate"),
            ("delete", "d/sub/b.txt", "gate")
        ])
    );
    assert_eq!(
        records
            .iter()
            .map(|r| (r.seq(), r.attempt_no().0))
            .collect::<Vec<_>>(),
        vec![(Seq(1), 2), (Seq(2), 2)]
    );
    assert!(!ws.workspace.root.join("d").exists());
    assert_eq!(
        tree(&ws.workspace.root).keys().cloned().collect::<Vec<_>>(),
        vec!["keep.txt".to_owned()]
    );
}

#[cfg(unix)]
#[test]
fn a_directory_holding_a_symlink_is_refused_whole() {
    let (_d, ws) = workspace(&[("d/a.txt", "A"), ("d/b.txt", "B")]);
    std::os::unix::fs::symlink("a.txt", ws.workspace.root.join("d/link")).unwrap();
    let before = tree(&ws.workspace.root);
    let err = ws.gate.apply(&ctx("t1", 1), delete("d")).unwrap_err();
    assert_eq!(
        (err.code, err.path.as_str()),
        (WorkspaceErrorCode::FileTypeConflict, "d/link")
    );
    assert_eq!(tree(&ws.workspace.root), before);
    let err = ws
        .gate
        .apply(&ctx("t1", 1), write("d/link", b"x"))
        .unwrap_err();
    assert_eq!(err.code, WorkspaceErrorCode::FileTypeConflict);
    assert_eq!(tree(&ws.workspace.root), before);
}

#[test]
fn renames_record_both_paths_and_directories_decompose() {
    let (_d, ws) = workspace(&[("a.txt", "A"), ("d/x.txt", "X"), ("d/y/z.txt", "Z")]);
    let c = ctx("t1", 1);
    let file = apply(&ws, &c, rename("a.txt", "moved/b.txt"));
    let dir = apply(&ws, &c, rename("d", "e"));
    assert_eq!(
        summary(&file),
        triples(&[("rename", "a.txt -> moved/b.txt", "gate")])
    );
    assert_eq!(
        summary(&dir),
        triples(&[
            ("rename", "d/x.txt -> e/x.txt", "gate"),
            ("rename", "d/y/z.txt -> e/y/z.txt", "gate")
        ])
    );
    assert_eq!(
        tree(&ws.workspace.root),
        [("e/x.txt", "X"), ("e/y/z.txt", "Z"), ("moved/b.txt", "A")]
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    );
    let store = ws.gate.store();
    assert_eq!(
        store.last_snapshot_of_path(&p("a.txt")).unwrap(),
        Some(file[0].clone())
    );
    assert_eq!(
        store.last_snapshot_of_path(&p("moved/b.txt")).unwrap(),
        Some(file[0].clone())
    );
    assert_eq!(
        store
            .diff_between(
                &p("moved/b.txt"),
                file[0].base().as_ref(),
                file[0].result().as_ref()
            )
            .unwrap(),
        ""
    );
}

#[test]
fn changing_an_existing_test_file_is_held_but_creating_one_is_not() {
    let (_d, ws) = workspace(&[("tests/it.rs", "old"), ("src/lib_test.go", "go")]);
    let c = ctx("t1", 1);
    for op in [
        write("tests/it.rs", b"new"),
        delete("src/lib_test.go"),
        rename("tests/it.rs", "src/it.rs"),
    ] {
        match ws.gate.apply(&c, op.clone()).unwrap() {
            GateOutcome::Held { pending_change } => {
                assert_eq!(
                    (pending_change.op, pending_change.ctx.clone()),
                    (op, c.clone())
                );
            }
            GateOutcome::Applied { snapshots } => panic!("applied {snapshots:?}"),
        }
    }
    assert_eq!(
        ws.gate.store().snapshots_of_task(&c.task_id).unwrap(),
        vec![]
    );
    assert_eq!(
        std::fs::read_to_string(ws.workspace.root.join("tests/it.rs")).unwrap(),
        "old"
    );
    let created = apply(&ws, &c, write("tests/new_test.rs", b"fresh"));
    assert_eq!(
        summary(&created),
        triples(&[("create", "tests/new_test.rs", "gate")])
    );
    // After a person approves, the held change lands as the same task's snapshot.
    let approved = ws
        .gate
        .apply_approved(&c, &write("tests/it.rs", b"new"))
        .unwrap();
    assert_eq!(
        (summary(&approved), approved[0].seq()),
        (triples(&[("modify", "tests/it.rs", "gate")]), Seq(2))
    );
    assert_eq!(
        std::fs::read_to_string(ws.workspace.root.join("tests/it.rs")).unwrap(),
        "new"
    );
}

#[test]
fn a_human_save_changes_the_file_without_a_snapshot() {
    let (_d, ws) = workspace(&[("a.txt", "A")]);
    ws.gate
        .save_user_file(&p("a.txt"), "사람이 고침\n".as_bytes())
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.workspace.root.join("a.txt")).unwrap(),
        "사람이 고침\n"
    );
    assert_eq!(
        ws.gate.store().last_snapshot_of_path(&p("a.txt")).unwrap(),
        None
    );
    assert_eq!(ws.gate.store().task_ids().unwrap(), vec![]);
}

#[test]
fn an_older_attempt_cannot_write_after_a_newer_one() {
    let (_d, ws) = workspace(&[]);
    apply(&ws, &ctx("t1", 2), write("a.txt", b"2"));
    let err = ws
        .gate
        .apply(&ctx("t1", 1), write("a.txt", b"1"))
        .unwrap_err();
    assert_eq!(err.code, WorkspaceErrorCode::RevisionConflict);
    assert_eq!(
        std::fs::read_to_string(ws.workspace.root.join("a.txt")).unwrap(),
        "2"
    );
}

/// Lines of an index file on disk (0 when it does not exist).
fn lines_on_disk(file: &std::path::Path) -> usize {
    std::fs::read_to_string(file).map_or(0, |t| t.lines().count())
}

#[test]
fn held_operations_are_read_at_once_and_reach_the_indexes_at_flush() {
    let (_d, ws) = workspace(&[]);
    let c = ctx("t1", 1);
    apply(&ws, &c, write("a.txt", b"1"));
    apply(&ws, &c, write("a.txt", b"2"));
    let journals = ws.layout.write_journal_dir();
    let index = ws.layout.task_index(&c.task_id);
    let store = ws.gate.store();
    // Both are held: read at once, not yet on disk; their journals carry
    // them.
    assert_eq!(
        (
            ws.gate.unsynced_operations(),
            pending_journals(&journals).len(),
            lines_on_disk(&index),
            store.snapshots_of_task(&c.task_id).unwrap().len(),
            store.path_history(&p("a.txt")).unwrap().len(),
            store.read_blob(&ContentHash::of(b"1")).unwrap(),
        ),
        (2, 2, 0, 2, 2, b"1".to_vec())
    );
    ws.gate.flush().unwrap();
    assert_eq!(
        (
            ws.gate.unsynced_operations(),
            pending_journals(&journals).len(),
            lines_on_disk(&index),
            lines_on_disk(&store.path_index_file(&p("a.txt"))),
            store.snapshots_of_task(&c.task_id).unwrap().len(),
        ),
        (0, 0, 2, 2, 2)
    );
}

/// The blobs an operation's journal carries: the new ones no pack holds.
/// A base the sweep packed is not carried; content another held operation
/// carries is carried again (each journal stands on its own).
#[test]
fn a_journal_carries_the_new_blobs_no_pack_holds() {
    let (_d, ws) = workspace(&[("a.txt", "old")]);
    let c = ctx("t1", 1);
    ws.gate.begin_sweep().unwrap();
    apply(&ws, &c, write("a.txt", b"new"));
    apply(&ws, &c, write("b.txt", b"new"));
    let carried: Vec<Vec<ContentHash>> = pending_journals(&ws.layout.write_journal_dir())
        .iter()
        .map(|file| {
            let journal: cocode_workspace::WriteJournal =
                serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
            journal.blobs.iter().map(|b| b.hash).collect()
        })
        .collect();
    let new = ContentHash::of(b"new");
    assert_eq!(carried, vec![vec![new], vec![new]]);
    ws.gate.flush().unwrap();
    assert_eq!(ws.gate.store().read_blob(&new).unwrap(), b"new".to_vec());
}

#[test]
fn a_checkpoint_every_so_many_operations_lets_their_journals_go() {
    let (_d, ws) = workspace(&[]);
    let c = ctx("t1", 1);
    let journals = ws.layout.write_journal_dir();
    let index = ws.layout.task_index(&c.task_id);
    let n = cocode_workspace::store::CHECKPOINT_OPERATIONS;
    for i in 0..n - 1 {
        apply(&ws, &c, write("a.txt", format!("{i}").as_bytes()));
    }
    assert_eq!(
        (pending_journals(&journals).len(), lines_on_disk(&index)),
        (n - 1, 0)
    );
    // The n-th operation checkpoints; the next one's barrier makes that
    // durable, and the journals of the n go.
    apply(&ws, &c, write("a.txt", b"last of the first"));
    assert_eq!(
        (pending_journals(&journals).len(), lines_on_disk(&index)),
        (n, n)
    );
    apply(&ws, &c, write("a.txt", b"next"));
    assert_eq!(
        (
            pending_journals(&journals).len(),
            lines_on_disk(&index),
            ws.gate.unsynced_operations()
        ),
        (1, n, 1)
    );
}

#[test]
fn config_is_created_on_first_open_and_a_broken_one_is_left_alone() {
    let (d, ws) = workspace(&[]);
    let config_file = ws.layout.config_file();
    let default: cocode_core::workspace::WorkspaceConfig =
        serde_json::from_slice(&std::fs::read(&config_file).unwrap()).unwrap();
    assert_eq!(default, cocode_core::workspace::WorkspaceConfig::default());
    // The volumes here fold neither case nor Unicode forms.
    assert_eq!(
        ws.workspace.options(),
        cocode_core::path::NormalizeOptions::measured(
            cocode_core::path::CaseSensitivity::Sensitive,
            cocode_core::path::UnicodeSensitivity::Sensitive
        )
    );
    drop(ws);
    std::fs::write(&config_file, b"{ not json").unwrap();
    let err = cocode_workspace::OpenWorkspace::open(&d.path().join("ws")).unwrap_err();
    assert!(
        matches!(err, cocode_workspace::OpenError::ConfigInvalid { .. }),
        "{err}"
    );
    assert_eq!(std::fs::read(&config_file).unwrap(), b"{ not json");
}

#[test]
fn on_a_case_insensitive_volume_new_names_keep_their_spelling_and_old_ones_theirs() {
    use cocode_core::gate::GateOp;
    use cocode_core::path::{
        CaseSensitivity, NormalizeOptions, PathStyle, UnicodeSensitivity, normalize,
    };
    use cocode_workspace::{Gate, HistoryStore, Layout, PathPolicy, TestPatterns};

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    put(&root, "Docs/README.md", b"old");
    let root = root.canonicalize().unwrap();
    // The gate as a case-insensitive volume (macOS, Windows) opens it.
    let options = NormalizeOptions {
        case: CaseSensitivity::Insensitive,
        unicode: UnicodeSensitivity::Insensitive,
        style: PathStyle::native(),
    };
    let layout = Layout::new(&root);
    HistoryStore::new(layout.clone()).create_layout().unwrap();
    let gate = Gate::new(
        layout,
        PathPolicy::new(&root, options, Vec::new()),
        TestPatterns::new(&[]).unwrap(),
    )
    .unwrap();
    let c = ctx("t1", 1);
    let op = |path: &str, bytes: &[u8]| GateOp::Write {
        path: normalize(path, options).unwrap(),
        bytes: bytes.to_vec(),
    };
    let records = [
        applied(gate.apply(&c, op("docs/readme.md", b"new")).unwrap()),
        applied(gate.apply(&c, op("DOCS/Guide.md", b"guide")).unwrap()),
        applied(gate.apply(&c, op("Src/MyWidget.rs", b"widget")).unwrap()),
    ];
    assert_eq!(
        tree(&root),
        [
            ("Docs/Guide.md", "guide"),
            ("Docs/README.md", "new"),
            ("Src/MyWidget.rs", "widget"),
        ]
        .into_iter()
        .map(|(p, c)| (p.to_owned(), c.to_owned()))
        .collect()
    );
    // History knows each file by one folded path, whatever the spelling.
    let paths: Vec<String> = records
        .iter()
        .flatten()
        .map(|r| r.parts().path.as_str().to_owned())
        .collect();
    assert_eq!(
        paths,
        ["docs/readme.md", "docs/guide.md", "src/mywidget.rs"]
    );
}

/// A checkpoint that fails part way (here the task's index cannot be
/// appended to, the path's shard can) keeps the operations held and their
/// journals; the next one appends only the lines the indexes lack, so no
/// line is written twice.
#[test]
fn a_checkpoint_that_failed_part_way_is_finished_without_a_line_twice() {
    let (_d, ws) = workspace(&[("a.txt", "old")]);
    let c = ctx("t1", 1);
    let records = apply(&ws, &c, write("a.txt", b"new"));
    let index = ws.layout.task_index(&c.task_id);
    std::fs::create_dir_all(&index).unwrap();
    let err = ws.gate.flush().unwrap_err();
    assert_eq!(err.operation, "flush");
    let store = ws.gate.store();
    let shard = store.path_index_file(&p("a.txt"));
    let journals = ws.layout.write_journal_dir();
    assert_eq!(
        (
            lines_on_disk(&shard),
            pending_journals(&journals).len(),
            ws.gate.unsynced_operations(),
            // The shard's line and the held record are one record.
            store.path_history(&p("a.txt")).unwrap(),
        ),
        (1, 1, 1, records.clone())
    );
    std::fs::remove_dir(&index).unwrap();
    ws.gate.flush().unwrap();
    assert_eq!(
        (
            lines_on_disk(&shard),
            lines_on_disk(&index),
            pending_journals(&journals).len(),
            ws.gate.unsynced_operations(),
            store.path_history(&p("a.txt")).unwrap(),
            store.snapshots_of_task(&c.task_id).unwrap(),
        ),
        (1, 1, 0, 0, records.clone(), records)
    );
    assert_eq!(history_problems(&ws), 0);
}
