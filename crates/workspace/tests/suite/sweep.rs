//! The observed-change sweep around a real shell command.

use cocode_workspace::{HistoryIntegrityChecker, OpenWorkspace};
use pretty_assertions::assert_eq;

use super::common::*;

/// Runs `script` in the workspace between a sweep's two scans; what the
/// sweep recorded for `c`'s task.
fn swept(
    ws: &OpenWorkspace,
    c: &cocode_core::gate::TaskContext,
    script: &str,
) -> Vec<cocode_core::snapshot::EditSnapshot> {
    ws.gate.begin_sweep().unwrap();
    sh(&ws.workspace.root, script);
    ws.gate.end_sweep(c).unwrap()
}

#[test]
fn a_shell_command_between_begin_and_end_is_recorded_as_observed_snapshots() {
    let (_d, ws) = workspace(&[
        ("b", "bee\n"),
        ("same.txt", "unchanged\n"),
        ("ignored/x.log", "log\n"),
        (".gitignore", "ignored/\n"),
    ]);
    let c = ctx("t1", 1);
    ws.gate.begin_sweep().unwrap();
    sh(
        &ws.workspace.root,
        "echo x > a; rm b; mkdir d; echo y > d/c; echo more >> ignored/x.log",
    );
    let records = ws.gate.end_sweep(&c).unwrap();
    let want: Vec<(String, String, String)> = [
        ("create", "a"),
        ("delete", "b"),
        ("create", "d"),
        ("create", "d/c"),
    ]
    .iter()
    .map(|(k, p)| ((*k).to_owned(), (*p).to_owned(), "observed".to_owned()))
    .collect();
    assert_eq!(summary(&records), want);
    let store = ws.gate.store();
    // The deleted file's content was stored before the command ran.
    let deleted = records.iter().find(|r| r.path().as_str() == "b").unwrap();
    assert_eq!(store.read_blob(&deleted.base().unwrap()).unwrap(), b"bee\n");
    assert_eq!(store.snapshots_of_task(&c.task_id).unwrap(), records);
    assert_eq!(
        HistoryIntegrityChecker::new(store)
            .check()
            .unwrap()
            .problems(),
        0
    );
    // Nothing happened since: the next sweep records nothing.
    ws.gate.begin_sweep().unwrap();
    assert_eq!(ws.gate.end_sweep(&c).unwrap(), vec![]);
}

#[test]
fn gate_writes_and_human_saves_during_a_command_are_not_recorded_twice() {
    let (_d, ws) = workspace(&[("a.txt", "a\n"), ("h.txt", "h\n")]);
    let c = ctx("t1", 1);
    ws.gate.begin_sweep().unwrap();
    let gate_records = apply(&ws, &c, write("a.txt", b"by the gate\n"));
    cocode_core::gate::WorkspaceFileGate::save_user_file(&ws.gate, &p("h.txt"), b"by a person\n")
        .unwrap();
    sh(&ws.workspace.root, "echo same-size > m.txt");
    let observed = ws.gate.end_sweep(&c).unwrap();
    assert_eq!(
        summary(&observed),
        vec![(
            "create".to_owned(),
            "m.txt".to_owned(),
            "observed".to_owned()
        )]
    );
    assert_eq!(
        ws.gate.store().snapshots_of_task(&c.task_id).unwrap(),
        [gate_records, observed].concat()
    );
    // The person's save is not the task's: rolling the task back leaves it.
    ws.gate
        .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(
        tree(&ws.workspace.root),
        files(&[("a.txt", "a\n"), ("h.txt", "by a person\n")])
    );
}

#[test]
fn a_tool_rewriting_a_file_right_after_the_gate_wrote_it_is_still_seen() {
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    let c = ctx("t1", 1);
    ws.gate.begin_sweep().unwrap();
    // The gate notes its own result without reading the file back; a
    // same-size rewrite in the same instant must not hide behind that.
    let gate_records = apply(&ws, &c, write("a.txt", b"gate\n"));
    sh(&ws.workspace.root, "printf 'tool\\n' > a.txt");
    let observed = ws.gate.end_sweep(&c).unwrap();
    assert_eq!(
        summary(&observed),
        vec![(
            "modify".to_owned(),
            "a.txt".to_owned(),
            "observed".to_owned()
        )]
    );
    assert_eq!(
        (observed[0].base(), observed[0].result()),
        (
            gate_records[0].result(),
            Some(cocode_core::snapshot::ContentHash::of(b"tool\n"))
        )
    );
}

#[test]
fn a_rewrite_within_the_same_clock_tick_and_size_is_still_seen() {
    let (_d, ws) = workspace(&[("a.txt", "aaaa\n")]);
    let c = ctx("t1", 1);
    ws.gate.begin_sweep().unwrap();
    // Same size, written immediately: the stat may not change at all.
    sh(&ws.workspace.root, "printf 'bbbb\\n' > a.txt");
    let records = ws.gate.end_sweep(&c).unwrap();
    assert_eq!(
        summary(&records),
        vec![(
            "modify".to_owned(),
            "a.txt".to_owned(),
            "observed".to_owned()
        )]
    );
}

#[test]
fn another_tasks_gate_write_during_a_command_is_not_the_commands_change() {
    let (_d, ws) = workspace(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let command_task = ctx("t1", 1);
    let other = ctx("t2", 1);
    ws.gate.begin_sweep().unwrap();
    // While t1's command runs, t2 edits a file through the gate.
    let other_records = apply(&ws, &other, write("a.txt", b"by t2\n"));
    sh(&ws.workspace.root, "echo by-the-command > b.txt");
    let observed = ws.gate.end_sweep(&command_task).unwrap();
    assert_eq!(
        summary(&observed),
        vec![(
            "modify".to_owned(),
            "b.txt".to_owned(),
            "observed".to_owned()
        )]
    );
    // Rolling t1 back leaves t2's edit alone.
    ws.gate
        .rollback(
            &command_task.task_id,
            &cocode_workspace::RollbackQuery::TaskStart,
        )
        .unwrap();
    assert_eq!(
        tree(&ws.workspace.root),
        files(&[("a.txt", "by t2\n"), ("b.txt", "b\n")])
    );
    assert_eq!(
        ws.gate.store().snapshots_of_task(&other.task_id).unwrap(),
        other_records
    );
}

#[test]
fn a_new_gitignore_does_not_hide_a_commands_changes_as_deletions() {
    let (_d, ws) = workspace(&[("sub/x.txt", "x\n"), ("sub/y.txt", "y\n")]);
    let c = ctx("t1", 1);
    ws.gate.begin_sweep().unwrap();
    // The command hides its folder from git, then changes a file in it.
    sh(
        &ws.workspace.root,
        "printf '*\\n' > sub/.gitignore && echo changed > sub/x.txt",
    );
    let observed = ws.gate.end_sweep(&c).unwrap();
    assert_eq!(
        summary(&observed),
        vec![
            (
                "create".to_owned(),
                "sub/.gitignore".to_owned(),
                "observed".to_owned()
            ),
            (
                "modify".to_owned(),
                "sub/x.txt".to_owned(),
                "observed".to_owned()
            )
        ]
    );
    ws.gate
        .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    assert!(!ws.workspace.root.join("sub/.gitignore").exists());
    assert_eq!(
        std::fs::read_to_string(ws.workspace.root.join("sub/x.txt")).unwrap(),
        "x\n"
    );
    assert!(ws.workspace.root.join("sub/y.txt").is_file());
}

#[test]
fn large_files_a_command_changes_are_recorded_and_restored_byte_for_byte() {
    for size in [9_000_000_usize, 60_000_000] {
        let before: Vec<u8> = (0..size).map(|i| u8::try_from(i % 251).unwrap()).collect();
        let (_d, ws) = workspace(&[("small.txt", "s\n")]);
        std::fs::create_dir_all(ws.workspace.root.join("data")).unwrap();
        std::fs::write(ws.workspace.root.join("data/big.bin"), &before).unwrap();
        let c = ctx("t1", 1);
        ws.gate.begin_sweep().unwrap();
        let mut after = before.clone();
        after[size / 2] ^= 0xff;
        after.extend_from_slice(b"grown");
        std::fs::write(ws.workspace.root.join("data/big.bin"), &after).unwrap();
        let observed = ws.gate.end_sweep(&c).unwrap();
        assert_eq!(
            summary(&observed),
            vec![(
                "modify".to_owned(),
                "data/big.bin".to_owned(),
                "observed".to_owned()
            )],
            "{size}"
        );
        ws.gate
            .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
            .unwrap();
        assert!(
            std::fs::read(ws.workspace.root.join("data/big.bin")).unwrap() == before,
            "{size} bytes not restored"
        );
    }
}

#[test]
fn nfc_and_nfd_twins_are_two_files_each_reached_and_swept_by_its_own_name() {
    let nfc = "caf\u{e9}.txt";
    let nfd = "cafe\u{301}.txt";
    let (_d, ws) = workspace(&[(nfc, "composed\n"), (nfd, "decomposed\n")]);
    let root = ws.workspace.root.clone();
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap();
    let c = ctx("t1", 1);
    // Each name reads its own file.
    for (name, text) in [(nfc, "composed\n"), (nfd, "decomposed\n")] {
        let bytes = ws.gate.read_file("readFile", &p(name)).unwrap().unwrap();
        assert_eq!(String::from_utf8(bytes).unwrap(), text);
    }
    // A gate write to the NFD name changes that file only, recorded by it.
    let records = apply(&ws, &c, write(nfd, b"gate\n"));
    assert_eq!(
        summary(&records),
        vec![("modify".to_owned(), nfd.to_owned(), "gate".to_owned())]
    );
    assert_eq!(
        (read(nfc), read(nfd)),
        ("composed\n".into(), "gate\n".into())
    );
    // A command changing the NFD file: the sweep names the NFD file.
    ws.gate.begin_sweep().unwrap();
    sh(&root, &format!("echo command > '{nfd}'"));
    let observed = ws.gate.end_sweep(&c).unwrap();
    assert_eq!(
        summary(&observed),
        vec![("modify".to_owned(), nfd.to_owned(), "observed".to_owned())]
    );
    assert_eq!(read(nfc), "composed\n");
    ws.gate
        .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(
        (read(nfc), read(nfd)),
        ("composed\n".into(), "decomposed\n".into())
    );
    ws.gate.flush().unwrap();
    assert_eq!(history_problems(&ws), 0);
}

#[test]
fn a_name_in_another_unicode_form_reaches_the_one_file_there_and_two_are_a_conflict() {
    // Only the NFD spelling exists (a file made on a Mac); the agent names
    // it composed, as models write text.
    let (_d, ws) = workspace(&[("cafe\u{301}.txt", "decomposed\n")]);
    let c = ctx("t1", 1);
    let bytes = ws
        .gate
        .read_file("readFile", &p("caf\u{e9}.txt"))
        .unwrap()
        .unwrap();
    assert_eq!(bytes, b"decomposed\n");
    let records = apply(&ws, &c, write("caf\u{e9}.txt", b"edited\n"));
    assert_eq!(
        summary(&records),
        vec![(
            "modify".to_owned(),
            "cafe\u{301}.txt".to_owned(),
            "gate".to_owned()
        )]
    );
    assert_eq!(
        tree(&ws.workspace.root),
        files(&[("cafe\u{301}.txt", "edited\n")])
    );
    // "ệ" spelled two other ways (decomposed, and ê + dot below): a third
    // spelling matches both, so it is refused, naming the conflict.
    let root = &ws.workspace.root;
    put(root, "e\u{323}\u{302}.txt", b"one\n");
    put(root, "\u{ea}\u{323}.txt", b"two\n");
    let err = ws
        .gate
        .read_file("readFile", &p("\u{1ec7}.txt"))
        .unwrap_err();
    assert_eq!(
        err.code,
        cocode_core::error::WorkspaceErrorCode::FileConflict
    );
    assert!(
        err.message.contains("different Unicode forms"),
        "{}",
        err.message
    );
    let outcome = cocode_core::gate::WorkspaceFileGate::apply(
        &ws.gate,
        &c,
        write("\u{1ec7}.txt", b"three\n"),
    );
    assert_eq!(
        outcome.unwrap_err().code,
        cocode_core::error::WorkspaceErrorCode::FileConflict
    );
    // Each exact name still works.
    assert_eq!(
        ws.gate
            .read_file("readFile", &p("\u{ea}\u{323}.txt"))
            .unwrap()
            .unwrap(),
        b"two\n"
    );
    assert_eq!(
        tree(root),
        files(&[
            ("cafe\u{301}.txt", "edited\n"),
            ("e\u{323}\u{302}.txt", "one\n"),
            ("\u{ea}\u{323}.txt", "two\n"),
        ])
    );
}

/// Ignore files at every depth, read by the listings that meet them:
/// deeper rules before shallower ones, `.ignore` before `.gitignore`, a
/// re-inclusion below a rule above, and a folder whose listing holds no
/// ignore file judged by the rules above it alone.
#[test]
fn ignore_files_deep_in_the_tree_judge_what_their_folders_hold() {
    let (_d, ws) = workspace(&[
        (".gitignore", "*.log\nbuild/\n"),
        ("a/.gitignore", "!keep.log\n*.tmp\n"),
        ("a/b/.ignore", "*.txt\n"),
        ("a/b/.gitignore", "!*.txt\n"),
        ("a/b/c/d/x.txt", "x\n"),
        ("a/keep.log", "k\n"),
        ("a/b/deep.tmp", "t\n"),
        ("a/b/c/keep.log", "k\n"),
        ("e/f/g.txt", "g\n"),
        ("e/f/build/out.bin", "o\n"),
        ("top.log", "l\n"),
    ]);
    let c = ctx("t1", 1);
    let observed = swept(
        &ws,
        &c,
        "for f in a/b/c/d/x.txt a/keep.log a/b/deep.tmp a/b/c/keep.log e/f/g.txt \
         e/f/build/out.bin top.log; do echo more >> $f; done",
    );
    let want: Vec<(String, String, String)> = [
        ("modify", "a/b/c/keep.log"),
        ("modify", "a/keep.log"),
        ("modify", "e/f/g.txt"),
    ]
    .iter()
    .map(|(k, p)| ((*k).to_owned(), (*p).to_owned(), "observed".to_owned()))
    .collect();
    assert_eq!(summary(&observed), want);
}

#[test]
fn a_file_hidden_by_an_ignore_rule_the_command_wrote_is_recorded_and_rolled_back() {
    let (_d, ws) = workspace(&[
        ("sub/x.txt", "x\n"),
        (".gitignore", "ignored/\n"),
        ("ignored/old.log", "log\n"),
    ]);
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    ws.gate.begin_sweep().unwrap();
    // New files, each hidden by a rule the same command added: a new
    // nested `.gitignore`, a new `.ignore`, and a line appended to the
    // root's. The already ignored folder stays ignored.
    sh(
        &root,
        "printf 'secret.txt\\n' > sub/.gitignore && echo s > sub/secret.txt && \
         printf '*.tmp\\n' > .ignore && echo t > note.tmp && \
         printf '*.hidden\\n' >> .gitignore && echo h > a.hidden && \
         echo more >> ignored/old.log",
    );
    let observed = ws.gate.end_sweep(&c).unwrap();
    let want: Vec<(String, String, String)> = [
        ("modify", ".gitignore"),
        ("create", ".ignore"),
        ("create", "a.hidden"),
        ("create", "note.tmp"),
        ("create", "sub/.gitignore"),
        ("create", "sub/secret.txt"),
    ]
    .iter()
    .map(|(k, p)| ((*k).to_owned(), (*p).to_owned(), "observed".to_owned()))
    .collect();
    assert_eq!(summary(&observed), want);
    ws.gate
        .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(
        tree(&root),
        files(&[
            (".gitignore", "ignored/\n"),
            ("ignored/old.log", "log\nmore\n"),
            ("sub/x.txt", "x\n"),
        ])
    );
    // The next command is judged by the rules now on disk again.
    ws.gate.begin_sweep().unwrap();
    sh(&root, "echo again >> ignored/old.log");
    assert_eq!(ws.gate.end_sweep(&c).unwrap(), vec![]);
}

#[cfg(unix)]
#[test]
fn fifos_named_like_ignore_files_or_files_never_block_a_sweep() {
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    let c = ctx("t1", 1);
    let observed = swept(
        &ws,
        &c,
        "mkfifo .gitignore .ignore pipe && mkdir d && mkfifo d/.gitignore && echo b > d/b.txt",
    );
    // The FIFOs are recorded as FIFOs (never opened), the file as a file.
    assert_eq!(
        summary(&observed),
        triples(&[
            ("create", ".gitignore", "observed"),
            ("create", ".ignore", "observed"),
            ("create", "d", "observed"),
            ("create", "d/.gitignore", "observed"),
            ("create", "d/b.txt", "observed"),
            ("create", "pipe", "observed"),
        ])
    );
    let fifo = Some(cocode_core::snapshot::Form::Fifo);
    let folder = Some(cocode_core::snapshot::Form::Folder);
    let forms: Vec<_> = observed.iter().map(|r| r.forms().result).collect();
    assert_eq!(forms, [fifo, fifo, folder, fifo, None, fifo]);
    // And a scan by the rules on disk, which reads the ignore files.
    ws.gate.begin_sweep().unwrap();
    assert_eq!(ws.gate.end_sweep(&c).unwrap(), vec![]);
    ws.gate
        .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(tree(&ws.workspace.root), files(&[("a.txt", "a\n")]));
}

/// A workspace whose `workspace.json` keeps content up to 1 MiB.
fn workspace_keeping_one_mib(files: &[(&str, &str)]) -> (tempfile::TempDir, OpenWorkspace) {
    let (d, ws) = workspace(files);
    let root = ws.workspace.root.clone();
    let config = ws.layout.config_file();
    drop(ws);
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    json["max_kept_file_mib"] = serde_json::json!(1);
    std::fs::write(&config, serde_json::to_vec(&json).unwrap()).unwrap();
    (d, OpenWorkspace::open(&root).unwrap())
}

fn unkept_of(records: &[cocode_core::snapshot::EditSnapshot]) -> Vec<(String, bool, bool)> {
    records
        .iter()
        .map(|r| (r.path().to_string(), r.unkept().base, r.unkept().result))
        .collect()
}

#[test]
fn changes_above_the_ceiling_are_recorded_by_hash_and_a_rollback_needing_them_is_refused() {
    let (_d, ws) = workspace_keeping_one_mib(&[("small.txt", "small\n")]);
    let root = ws.workspace.root.clone();
    let big: Vec<u8> = (0..2_000_000_u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(root.join("big.bin"), &big).unwrap();
    let c = ctx("t1", 1);
    ws.gate.begin_sweep().unwrap();
    // The big file changes; a new big file appears; a small one grows past
    // the ceiling.
    sh(
        &root,
        "printf x | dd of=big.bin bs=1 seek=1000000 conv=notrunc 2>/dev/null && \
         head -c 3000000 /dev/zero > new.bin && head -c 2000000 /dev/zero >> small.txt",
    );
    let observed = ws.gate.end_sweep(&c).unwrap();
    assert_eq!(
        summary(&observed),
        [
            ("modify", "big.bin"),
            ("create", "new.bin"),
            ("modify", "small.txt")
        ]
        .iter()
        .map(|(k, p)| ((*k).to_owned(), (*p).to_owned(), "observed".to_owned()))
        .collect::<Vec<_>>()
    );
    assert_eq!(
        unkept_of(&observed),
        vec![
            ("big.bin".to_owned(), true, true),
            ("new.bin".to_owned(), false, true),
            ("small.txt".to_owned(), false, true),
        ]
    );
    // Above the ceiling a file is named by its identity (metadata and a
    // sample), never read whole, so not by its content's hash; nothing
    // above the ceiling was kept, and the checker knows that is no damage.
    let mut changed = big.clone();
    changed[1_000_000] = b'x';
    assert_ne!(
        observed[0].result(),
        Some(cocode_core::snapshot::ContentHash::of(&changed))
    );
    assert_ne!(observed[0].result(), observed[0].base());
    ws.gate.flush().unwrap();
    assert_eq!(history_problems(&ws), 0);
    let before = tree_sizes(&root);
    let refused = ws
        .gate
        .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap_err();
    assert_eq!(
        refused,
        cocode_workspace::RollbackError::Conflicts(vec![
            cocode_workspace::rollback::PathConflict {
                path: p("big.bin"),
                reason: cocode_workspace::rollback::ConflictReason::TooLargeToKeep,
            }
        ])
    );
    assert_eq!(
        tree_sizes(&root),
        before,
        "a refused rollback touched nothing"
    );
    // Nothing changed since: an unchanged big file is not hashed again.
    ws.gate.begin_sweep().unwrap();
    assert_eq!(ws.gate.end_sweep(&c).unwrap(), vec![]);
}

#[test]
fn a_rollback_whose_targets_were_kept_undoes_files_that_grew_past_the_ceiling() {
    let (_d, ws) = workspace_keeping_one_mib(&[("small.txt", "small\n")]);
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    let observed = swept(
        &ws,
        &c,
        "head -c 3000000 /dev/zero > new.bin && head -c 2000000 /dev/zero >> small.txt",
    );
    assert_eq!(observed.len(), 2);
    ws.gate
        .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(tree(&root), files(&[("small.txt", "small\n")]));
}

fn tree_sizes(root: &std::path::Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name() != ".cocode")
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    out.sort();
    out
}

/// A command that rewrites a file at the same size and sets its mtime
/// back: the change time, which no program can set, still gives it away.
#[cfg(unix)]
#[test]
fn a_change_hidden_by_restoring_size_and_mtime_is_still_recorded() {
    let (_d, ws) = workspace(&[("a.txt", "aaaa\n")]);
    let root = ws.workspace.root.clone();
    // Old enough that the first scan takes it as settled (not racy).
    sh(&root, "touch -d '2020-01-01 00:00:00' a.txt");
    let c = ctx("t1", 1);
    ws.gate.begin_sweep().unwrap();
    ws.gate.end_sweep(&c).unwrap();
    let observed = swept(
        &ws,
        &c,
        "sleep 0.05; printf 'bbbb\\n' > b.tmp && cat b.tmp > a.txt && rm b.tmp && \
         touch -d '2020-01-01 00:00:00' a.txt",
    );
    assert_eq!(
        summary(&observed),
        vec![(
            "modify".to_owned(),
            "a.txt".to_owned(),
            "observed".to_owned()
        )]
    );
}

/// A command that floods the tree with new files past the count limit
/// hides no change of a tracked file, and nothing tracked reads as deleted.
#[test]
fn a_flood_of_new_files_past_the_count_limit_hides_no_tracked_change() {
    let (_d, ws) = workspace(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")]);
    let root = ws.workspace.root.clone();
    let ws = OpenWorkspace {
        gate: ws.gate.with_sweep_limits(cocode_workspace::SweepLimits {
            max_files: 3,
            ..cocode_workspace::SweepLimits::default()
        }),
        ..ws
    };
    let c = ctx("t1", 1);
    ws.gate.begin_sweep().unwrap();
    sh(
        &root,
        "mkdir flood && for i in 1 2 3 4 5 6 7 8; do echo $i > flood/$i; echo $i > 0$i; done && \
         echo changed > c.txt",
    );
    // Past the limit the sweep cannot say it recorded everything: it says
    // so, and the task is marked.
    let refused = ws.gate.end_sweep(&c).unwrap_err();
    assert_eq!(
        refused.code,
        cocode_core::error::WorkspaceErrorCode::NotFullyRecorded
    );
    assert!(matches!(
        ws.gate
            .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart),
        Err(cocode_workspace::RollbackError::NotFullyRecorded(_))
    ));
    let observed = summary(&ws.gate.store().snapshots_of_task(&c.task_id).unwrap());
    // The new files the walk met before the limit are recorded; the rest
    // are not tracked. Every tracked file is looked at.
    let modified: Vec<&str> = observed
        .iter()
        .filter(|(kind, _, _)| kind != "create")
        .map(|(kind, path, _)| {
            assert_eq!(kind, "modify", "{observed:?}");
            path.as_str()
        })
        .collect();
    assert_eq!(modified, ["c.txt"], "{observed:?}");
    assert!(observed.len() < 17, "{observed:?}");
}

/// The next process takes over the stat cache: files whose stat did not
/// change are not read again, a change is still recorded against its base
/// and rolled back, and an entry whose base left the history is read
/// again rather than trusted.
#[test]
fn the_next_process_reuses_the_stat_cache_and_still_records_every_change() {
    let files: Vec<(String, String)> = (0..50)
        .map(|i| (format!("d{}/f{i}.txt", i % 5), format!("content {i}\n")))
        .collect();
    let (_d, ws) = workspace_of(&files);
    let root = ws.workspace.root.clone();
    assert_eq!(ws.gate.begin_sweep().unwrap().hashed, 50);
    drop(ws);
    // A file changed while no cocode ran: its stat tells.
    std::fs::write(root.join("d0/f0.txt"), "changed in between\n").unwrap();
    let ws = OpenWorkspace::open(&root).unwrap();
    ws.gate.recover().unwrap();
    let stats = ws.gate.begin_sweep().unwrap();
    // Fifty files and five folders met; one file read.
    assert_eq!((stats.files, stats.hashed), (55, 1));
    let c = ctx("t1", 1);
    sh(&root, "echo more >> d1/f1.txt && rm d2/f2.txt");
    let records = ws.gate.end_sweep(&c).unwrap();
    let paths: Vec<&str> = records.iter().map(|r| r.path().as_str()).collect();
    assert_eq!(paths, vec!["d1/f1.txt", "d2/f2.txt"]);
    ws.gate
        .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    let tree = tree(&root);
    assert_eq!(tree["d1/f1.txt"], "content 1\n");
    assert_eq!(tree["d2/f2.txt"], "content 2\n");
    ws.gate.flush().unwrap();
    let report = HistoryIntegrityChecker::new(ws.gate.store())
        .check()
        .unwrap();
    assert_eq!(report.problems(), 0, "{report:?}");
    // A base gone from the history (collected by an older version that did
    // not know the cache): that file is read again.
    let base = cocode_core::snapshot::ContentHash::of(b"content 3\n");
    ws.gate.store().remove_blob(&base).unwrap();
    ws.gate.store().compact_packs().unwrap();
    drop(ws);
    let ws = OpenWorkspace::open(&root).unwrap();
    ws.gate.recover().unwrap();
    // That file, and the two the rollback just wrote (racy: written within
    // the cache's last look).
    assert_eq!(ws.gate.begin_sweep().unwrap().hashed, 3);
    assert!(ws.gate.store().has_blob(&base));
}

/// The saved stat cache names packed contents by a prefix of their hash:
/// an entry is taken back only when the packs resolve its prefix to
/// exactly one blob; an unresolved prefix (blob gone, or shared by
/// two) drops the entry, and that file is read again.
#[test]
fn the_saved_stat_cache_names_packed_contents_by_a_prefix_the_history_resolves() {
    use std::io::Read as _;
    let files: Vec<(String, String)> = (0..20)
        .map(|i| (format!("f{i}.txt"), format!("content {i}\n")))
        .collect();
    let (_d, ws) = workspace_of(&files);
    assert_eq!(ws.gate.begin_sweep().unwrap().hashed, 20);
    // Saved when the gate closes.
    let saved = ws.layout.sweep_cache_file();
    drop(ws);
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(saved).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    let hashes: Vec<cocode_core::snapshot::ContentHash> = files
        .iter()
        .map(|(_, content)| cocode_core::snapshot::ContentHash::of(content.as_bytes()))
        .collect();
    for hash in &hashes {
        let whole = hash.as_bytes();
        assert!(
            !bytes.windows(32).any(|w| w == whole),
            "no whole hash of a packed blob is saved"
        );
        assert!(bytes.windows(12).any(|w| w == &whole[..12]));
    }
    let resolve = |prefix: &[u8; 12]| {
        hashes
            .iter()
            .find(|h| h.as_bytes()[..12] == *prefix)
            .copied()
    };
    let mut cache = cocode_workspace::sweep::StatCache::default();
    // A resolved prefix is taken without asking history again.
    assert_eq!(cache.restore(&bytes, &|_| false, &resolve), (20, true));
    // A prefix that resolves to nothing, or whose blob left the packs.
    assert_eq!(cache.restore(&bytes, &|_| true, &|_| None), (0, false));
    let gone = |prefix: &[u8; 12]| resolve(prefix).filter(|h| *h != hashes[3]);
    assert_eq!(cache.restore(&bytes, &|_| true, &gone), (19, false));
    // Cut short: nothing taken.
    assert_eq!(
        cache.restore(&bytes[..bytes.len() - 5], &|_| true, &resolve),
        (0, false)
    );
}
