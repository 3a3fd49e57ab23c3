//! A person's file operations from the Explorer: through the gate's policy,
//! never snapshots, never charged to a command running meanwhile.

use cocode_core::WorkspaceErrorCode;
use cocode_workspace::UserOp;
use pretty_assertions::assert_eq;

use super::common::*;

#[test]
fn new_file_new_folder_rename_and_delete_change_the_disk_and_nothing_else() {
    let (_d, ws) = workspace(&[("src/a.rs", "fn a() {}\n"), ("keep.txt", "k\n")]);
    let root = ws.workspace.root.clone();
    ws.gate
        .apply_user_op(&UserOp::CreateFolder(p("docs/guides")))
        .unwrap();
    assert!(root.join("docs/guides").is_dir());
    ws.gate
        .apply_user_op(&UserOp::CreateFile(p("docs/guides/안내.md")))
        .unwrap();
    assert_eq!(
        std::fs::read(root.join("docs/guides/안내.md")).unwrap(),
        b""
    );
    ws.gate
        .apply_user_op(&UserOp::Rename {
            from: p("src"),
            to: p("lib"),
        })
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("lib/a.rs")).unwrap(),
        "fn a() {}\n"
    );
    assert!(!root.join("src").exists());
    ws.gate.apply_user_op(&UserOp::Delete(p("docs"))).unwrap();
    assert!(!root.join("docs").exists());
    ws.gate
        .apply_user_op(&UserOp::Delete(p("keep.txt")))
        .unwrap();
    assert!(!root.join("keep.txt").exists());
    // A person's operations are not snapshots of any task.
    assert_eq!(ws.gate.store().task_ids().unwrap(), vec![]);
    assert!(ws.gate.store().path_index_files().unwrap().is_empty());
    // No temp file is left behind.
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".cocode", "lib"]);
}

#[test]
fn refusals_name_the_reason_and_change_nothing() {
    let (_d, ws) = workspace(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("dir/x.txt", "x\n")]);
    let root = ws.workspace.root.clone();
    let code = |op: UserOp| ws.gate.apply_user_op(&op).unwrap_err().code;
    assert_eq!(
        code(UserOp::CreateFile(p("a.txt"))),
        WorkspaceErrorCode::FileConflict
    );
    assert_eq!(
        code(UserOp::CreateFolder(p("dir"))),
        WorkspaceErrorCode::FileConflict
    );
    assert_eq!(
        code(UserOp::Rename {
            from: p("a.txt"),
            to: p("b.txt")
        }),
        WorkspaceErrorCode::FileConflict
    );
    assert_eq!(
        code(UserOp::Rename {
            from: p("dir"),
            to: p("dir/inner")
        }),
        WorkspaceErrorCode::FileConflict
    );
    assert_eq!(
        code(UserOp::Delete(p("missing"))),
        WorkspaceErrorCode::FileNotFound
    );
    assert_eq!(
        code(UserOp::Delete(p(".cocode"))),
        WorkspaceErrorCode::PathNotWritable
    );
    assert_eq!(
        code(UserOp::CreateFile(p(".cocode/evil"))),
        WorkspaceErrorCode::PathNotWritable
    );
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "b\n");
    assert!(root.join("dir/x.txt").is_file());
}

#[cfg(unix)]
#[test]
fn deleting_a_folder_removes_links_in_it_without_following_them() {
    let (_d, ws) = workspace(&[("dir/x.txt", "x\n")]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("precious.txt"), "keep me\n").unwrap();
    let root = ws.workspace.root.clone();
    std::os::unix::fs::symlink(outside.path(), root.join("dir/link")).unwrap();
    // A link at the top is refused as a target elsewhere; inside a folder
    // being deleted it is removed as a link.
    ws.gate.apply_user_op(&UserOp::Delete(p("dir"))).unwrap();
    assert!(!root.join("dir").exists());
    assert_eq!(
        std::fs::read_to_string(outside.path().join("precious.txt")).unwrap(),
        "keep me\n"
    );
}

#[cfg(unix)]
#[test]
fn a_persons_operations_while_a_command_runs_are_not_charged_to_it() {
    let (_d, ws) = workspace(&[("src/a.rs", "a\n"), ("old/b.txt", "b\n")]);
    let c = ctx("t1", 1);
    ws.gate.begin_sweep().unwrap();
    ws.gate
        .apply_user_op(&UserOp::Rename {
            from: p("src"),
            to: p("lib"),
        })
        .unwrap();
    ws.gate.apply_user_op(&UserOp::Delete(p("old"))).unwrap();
    ws.gate
        .apply_user_op(&UserOp::CreateFile(p("new.txt")))
        .unwrap();
    let status = std::process::Command::new("sh")
        .args(["-c", "echo made > by-command.txt"])
        .current_dir(&ws.workspace.root)
        .status()
        .unwrap();
    assert!(status.success());
    let observed = ws.gate.end_sweep(&c).unwrap();
    assert_eq!(
        summary(&observed),
        vec![(
            "create".to_owned(),
            "by-command.txt".to_owned(),
            "observed".to_owned()
        )]
    );
}

#[test]
fn a_rewrite_replaces_every_file_or_none() {
    use cocode_core::snapshot::ContentHash;
    use cocode_workspace::UserWrite;
    let (_d, ws) = workspace(&[("a.txt", "cat\n"), ("b.txt", "cat cat\n")]);
    let root = ws.workspace.root.clone();
    let write = |path: &str, was: &str, now: &str| UserWrite {
        path: p(path),
        expected: ContentHash::of(was.as_bytes()),
        bytes: now.as_bytes().to_vec(),
    };
    // One file changed since it was read: nothing is written.
    let err = ws
        .gate
        .apply_user_op(&UserOp::Rewrite(vec![
            write("a.txt", "cat\n", "dog\n"),
            write("b.txt", "stale\n", "dog dog\n"),
        ]))
        .unwrap_err();
    assert_eq!(err.code, WorkspaceErrorCode::FileConflict);
    assert_eq!(err.path, "b.txt");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "cat\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).unwrap(),
        "cat cat\n"
    );
    ws.gate
        .apply_user_op(&UserOp::Rewrite(vec![
            write("a.txt", "cat\n", "dog\n"),
            write("b.txt", "cat cat\n", "dog dog\n"),
        ]))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "dog\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).unwrap(),
        "dog dog\n"
    );
    assert!(ws.gate.store().task_ids().unwrap().is_empty());
}

fn hash(bytes: &[u8]) -> cocode_core::snapshot::ContentHash {
    cocode_core::snapshot::ContentHash::of(bytes)
}

fn discard(
    path: &str,
    expected: Option<&[u8]>,
    restore: Option<&[u8]>,
) -> cocode_workspace::DiscardFile {
    cocode_workspace::DiscardFile {
        path: p(path),
        expected: expected.map(hash),
        restore: restore.map(<[u8]>::to_vec),
    }
}

#[test]
fn a_discard_keeps_what_it_removes_and_its_undo_puts_back_every_byte() {
    let (_d, ws) = workspace(&[("src/a.rs", "fn a() { changed }\n"), ("keep.txt", "k\n")]);
    let root = ws.workspace.root.clone();
    std::fs::write(root.join("new.bin"), [0u8, 159, 146, 150, b'\r', b'\n']).unwrap();
    // Modified: back to the index's text; untracked: removed; deleted:
    // made again.
    ws.gate
        .apply_user_op(&UserOp::Discard {
            id: 7,
            files: vec![
                discard(
                    "src/a.rs",
                    Some(b"fn a() { changed }\n"),
                    Some(b"fn a() {}\n"),
                ),
                discard("new.bin", Some(&[0, 159, 146, 150, b'\r', b'\n']), None),
                discard("gone.txt", None, Some(b"was here\n")),
            ],
        })
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("src/a.rs")).unwrap(),
        "fn a() {}\n"
    );
    assert!(!root.join("new.bin").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("gone.txt")).unwrap(),
        "was here\n"
    );
    let records = ws.gate.discards().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].id, records[0].files.clone()),
        (
            7,
            vec![
                cocode_workspace::DiscardedFile {
                    path: p("src/a.rs"),
                    before: Some(hash(b"fn a() { changed }\n")),
                    after: Some(hash(b"fn a() {}\n")),
                },
                cocode_workspace::DiscardedFile {
                    path: p("new.bin"),
                    before: Some(hash(&[0, 159, 146, 150, b'\r', b'\n'])),
                    after: None,
                },
                cocode_workspace::DiscardedFile {
                    path: p("gone.txt"),
                    before: None,
                    after: Some(hash(b"was here\n")),
                },
            ]
        )
    );
    // Not a task's change: no snapshot, no task.
    assert_eq!(ws.gate.store().task_ids().unwrap(), vec![]);
    // Retention, even with nothing allowed, keeps a discard's content.
    ws.gate
        .run_retention(
            &[],
            cocode_workspace::RetentionTrigger::AppStart,
            cocode_core::workspace::RetentionConfig {
                keep_recent_per_path: 0,
                byte_cap: 1,
            },
        )
        .unwrap();
    // Another process (the next start) undoes it.
    drop(ws);
    let ws = cocode_workspace::OpenWorkspace::open(&root).unwrap();
    ws.gate
        .apply_user_op(&UserOp::UndoDiscard {
            id: 7,
            paths: vec![p("src/a.rs"), p("new.bin"), p("gone.txt")],
        })
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("src/a.rs")).unwrap(),
        "fn a() { changed }\n"
    );
    assert_eq!(
        std::fs::read(root.join("new.bin")).unwrap(),
        [0u8, 159, 146, 150, b'\r', b'\n']
    );
    assert!(!root.join("gone.txt").exists());
    assert_eq!(ws.gate.discards().unwrap(), vec![]);
    // Undone once: a second undo has nothing to undo.
    let again = ws
        .gate
        .apply_user_op(&UserOp::UndoDiscard {
            id: 7,
            paths: vec![p("src/a.rs")],
        })
        .unwrap_err();
    assert_eq!(again.code, WorkspaceErrorCode::FileNotFound);
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".cocode", "keep.txt", "new.bin", "src"]);
}

#[test]
fn a_discard_or_its_undo_over_a_file_that_changed_is_refused_and_changes_nothing() {
    let (_d, ws) = workspace(&[("a.txt", "mine\n"), ("b.txt", "b mine\n")]);
    let root = ws.workspace.root.clone();
    // The panel showed older content of b.txt: nothing is discarded, not
    // even a.txt, and nothing is recorded.
    let refused = ws
        .gate
        .apply_user_op(&UserOp::Discard {
            id: 1,
            files: vec![
                discard("a.txt", Some(b"mine\n"), Some(b"head\n")),
                discard("b.txt", Some(b"b older\n"), Some(b"b head\n")),
            ],
        })
        .unwrap_err();
    assert_eq!(
        (refused.code, refused.path.as_str()),
        (WorkspaceErrorCode::FileConflict, "b.txt")
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "mine\n"
    );
    assert_eq!(ws.gate.discards().unwrap(), vec![]);

    ws.gate
        .apply_user_op(&UserOp::Discard {
            id: 2,
            files: vec![discard("a.txt", Some(b"mine\n"), Some(b"head\n"))],
        })
        .unwrap();
    // The person typed again after the discard: the undo would lose it.
    std::fs::write(root.join("a.txt"), "typed after\n").unwrap();
    let refused = ws
        .gate
        .apply_user_op(&UserOp::UndoDiscard {
            id: 2,
            paths: vec![p("a.txt")],
        })
        .unwrap_err();
    assert_eq!(refused.code, WorkspaceErrorCode::FileConflict);
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "typed after\n"
    );
    assert_eq!(ws.gate.discards().unwrap().len(), 1);
    // Paths other than the discard's are refused; the same id twice too.
    assert_eq!(
        ws.gate
            .apply_user_op(&UserOp::UndoDiscard {
                id: 2,
                paths: vec![p("b.txt")],
            })
            .unwrap_err()
            .code,
        WorkspaceErrorCode::FileConflict
    );
    assert_eq!(
        ws.gate
            .apply_user_op(&UserOp::Discard {
                id: 2,
                files: vec![discard("b.txt", Some(b"b mine\n"), Some(b"b head\n"))],
            })
            .unwrap_err()
            .code,
        WorkspaceErrorCode::FileConflict
    );
}

#[cfg(unix)]
#[test]
fn a_discard_never_follows_or_replaces_a_link_or_writes_cocodes_own_folder() {
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    let root = ws.workspace.root.clone();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
    let code = |files| {
        ws.gate
            .apply_user_op(&UserOp::Discard { id: 9, files })
            .unwrap_err()
            .code
    };
    assert_eq!(
        code(vec![discard("link.txt", Some(b"secret\n"), None)]),
        WorkspaceErrorCode::FileTypeConflict
    );
    // A folder that is a link is never entered.
    assert_eq!(
        code(vec![discard(
            "out/secret.txt",
            Some(b"secret\n"),
            Some(b"x\n")
        )]),
        WorkspaceErrorCode::PathNotWritable
    );
    assert_eq!(
        code(vec![discard(".cocode/discards.json", None, Some(b"{}"))]),
        WorkspaceErrorCode::PathNotWritable
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "secret\n"
    );
    assert!(root.join("link.txt").is_symlink());
    assert_eq!(ws.gate.discards().unwrap(), vec![]);
}
