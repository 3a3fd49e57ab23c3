//! Nothing escapes the record: huge and sparse files, sweeps that cannot
//! finish, cocode ending mid-command, a full disk.

use std::os::unix::fs::FileTypeExt as _;
use std::process::Command;
use std::time::{Duration, Instant};

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::snapshot::{Form, SnapshotOrigin};
use cocode_workspace::{
    OpenWorkspace, RecoveredSweep, RollbackError, RollbackQuery, SweepBudget, SweepWriters,
};
use pretty_assertions::assert_eq;

use super::common::*;

fn within(secs: u64) -> SweepBudget<'static> {
    SweepBudget {
        deadline: Some(Instant::now() + Duration::from_secs(secs)),
        stop: None,
    }
}

fn end(
    ws: &OpenWorkspace,
    c: &cocode_core::gate::TaskContext,
    budget: &SweepBudget<'_>,
) -> Result<Vec<cocode_core::snapshot::EditSnapshot>, cocode_core::gate::GateError> {
    ws.gate
        .end_sweep_within(c, SnapshotOrigin::Observed, SweepWriters::Anyone, budget)
}

/// The attack of the last round: a hidden edit next to a 2 TiB sparse
/// file. The sparse file is named by its metadata, never read, so the
/// sweep ends within its time limit; both are recorded and rolled back.
#[test]
fn a_hidden_edit_beside_a_two_tebibyte_sparse_file_is_recorded_and_rolled_back_in_time() {
    let (_d, ws) = workspace(&[("notes.txt", "notes\n"), ("src/lib.rs", "fn f() {}\n")]);
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(30)).unwrap();
    sh(
        &root,
        "echo HIDDEN-EDIT >> notes.txt; truncate -s 2T src/sparse.bin",
    );
    let started = Instant::now();
    let observed = end(&ws, &c, &within(30)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(
        summary(&observed),
        triples(&[
            ("modify", "notes.txt", "observed"),
            ("create", "src/sparse.bin", "observed")
        ])
    );
    assert!(observed[1].unkept().result, "too large to keep");
    ws.gate
        .rollback(&c.task_id, &RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(
        tree(&root),
        files(&[("notes.txt", "notes\n"), ("src/lib.rs", "fn f() {}\n")])
    );
}

/// A sweep out of time or stopped marks the task "not fully recorded":
/// rollback refuses with that reason, in this process and the next.
#[test]
fn a_sweep_that_cannot_finish_marks_the_task_and_rollback_refuses_with_the_reason() {
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(30)).unwrap();
    sh(&root, "echo changed > a.txt; echo new > b.txt");
    let spent = SweepBudget {
        deadline: Some(Instant::now()),
        stop: None,
    };
    let refused = end(&ws, &c, &spent).unwrap_err();
    assert_eq!(
        (refused.code, refused.message.as_str()),
        (
            WorkspaceErrorCode::NotFullyRecorded,
            "the look at the workspace ran out of time"
        )
    );
    let not_undone =
        RollbackError::NotFullyRecorded("the look at the workspace ran out of time".to_owned());
    assert_eq!(
        ws.gate.rollback(&c.task_id, &RollbackQuery::TaskStart),
        Err(not_undone.clone())
    );
    drop(ws);
    let (ws, _) = restart(&root);
    assert_eq!(
        ws.gate.rollback(&c.task_id, &RollbackQuery::TaskStart),
        Err(not_undone)
    );
    assert_eq!(
        tree(&root),
        files(&[("a.txt", "changed\n"), ("b.txt", "new\n")]),
        "a refused rollback touches nothing"
    );
    // A stopped look says so.
    let c2 = ctx("t2", 1);
    ws.gate.begin_task_sweep(&c2, &within(30)).unwrap();
    sh(&root, "echo again > a.txt");
    let stop = || true;
    let stopped = SweepBudget {
        deadline: None,
        stop: Some(&stop),
    };
    let refused = end(&ws, &c2, &stopped).unwrap_err();
    assert_eq!(
        refused.message.as_str(),
        "the look at the workspace was stopped"
    );
    assert!(ws.gate.unrecorded_reason(&c2.task_id).is_some());
    assert_eq!(ws.gate.unrecorded_reason(&ctx("t3", 1).task_id), None);
}

/// cocode ends (no drop, no save: as a `kill -9`) while a command runs;
/// the next start records the command's writes with its task, so a
/// rollback undoes them.
#[test]
fn cocode_ending_mid_command_leaves_the_commands_writes_recorded_at_the_next_start() {
    let (_d, ws) = workspace(&[("a.txt", "a\n"), ("keep/b.txt", "b\n")]);
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(30)).unwrap();
    sh(
        &root,
        "echo written > a.txt; rm keep/b.txt; echo new > c.txt",
    );
    std::mem::forget(ws);
    let (ws, report) = restart(&root);
    assert_eq!(
        report.sweeps_recovered,
        vec![RecoveredSweep {
            task_id: c.task_id.clone(),
            recorded: 3,
            unrecorded: None,
        }]
    );
    let records = ws.gate.store().snapshots_of_task(&c.task_id).unwrap();
    assert_eq!(
        summary(&records),
        triples(&[
            ("modify", "a.txt", "observed"),
            ("create", "c.txt", "observed"),
            ("delete", "keep/b.txt", "observed"),
        ])
    );
    ws.gate
        .rollback(&c.task_id, &RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(
        tree(&root),
        files(&[("a.txt", "a\n"), ("keep/b.txt", "b\n")])
    );
    // Settled once: a later start finds nothing to settle.
    drop(ws);
    assert_eq!(restart(&root).1.sweeps_recovered, vec![]);
}

/// Two commands running at once when cocode ended cannot be told apart:
/// both tasks are marked, never one given the other's changes.
#[test]
fn two_commands_cocode_ended_during_are_both_marked_not_fully_recorded() {
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    let root = ws.workspace.root.clone();
    let (c1, c2) = (ctx("t1", 1), ctx("t2", 1));
    ws.gate.begin_task_sweep(&c1, &within(30)).unwrap();
    ws.gate.begin_task_sweep(&c2, &within(30)).unwrap();
    sh(&root, "echo written > a.txt");
    std::mem::forget(ws);
    let (ws, report) = restart(&root);
    let reason = "cocode ended while several commands or agent turns ran at once, so their changes cannot be told apart";
    let marked: Vec<(String, Option<String>)> = report
        .sweeps_recovered
        .iter()
        .map(|s| (s.task_id.to_string(), s.unrecorded.clone()))
        .collect();
    assert_eq!(
        marked,
        vec![
            ("t1".to_owned(), Some(reason.to_owned())),
            ("t2".to_owned(), Some(reason.to_owned()))
        ]
    );
    assert_eq!(
        ws.gate.rollback(&c1.task_id, &RollbackQuery::TaskStart),
        Err(RollbackError::NotFullyRecorded(reason.to_owned()))
    );
}

/// A sweep that finishes leaves no journal: a later start records nothing
/// more for the task.
#[test]
fn a_finished_sweep_leaves_nothing_for_the_next_start() {
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(30)).unwrap();
    sh(&root, "echo written > a.txt");
    assert_eq!(end(&ws, &c, &within(30)).unwrap().len(), 1);
    std::mem::forget(ws);
    sh(&root, "echo the person > a.txt");
    let (ws, report) = restart(&root);
    assert_eq!(report.sweeps_recovered, vec![]);
    assert_eq!(
        ws.gate.store().snapshots_of_task(&c.task_id).unwrap().len(),
        1
    );
}

/// A tmpfs of a few MiB, unmounted when dropped.
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    fn mount(mib: u32) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap().keep();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(Self(dir))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n")
}

/// The history store runs out of space while it records a command's
/// changes: the sweep fails loudly (`WORKSPACE_IO_FAILED`), the task is
/// marked, and rollback is refused rather than said to have undone it.
#[test]
fn a_full_disk_under_the_history_fails_the_sweep_loudly_and_rollback_is_refused() {
    if !crate::require::require("root, to mount a small tmpfs", is_root()) {
        return;
    }
    let disk = SmallDisk::mount(6).expect("a tmpfs mounts as root");
    let root = disk.0.join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    let ws = OpenWorkspace::open(&root).unwrap();
    ws.gate.recover().unwrap();
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(30)).unwrap();
    // Random content does not compress: its blob needs as much again as
    // the file itself, more than is left.
    sh(
        &root,
        "echo edited > a.txt; head -c 3500000 /dev/urandom > data.bin",
    );
    let failed = end(&ws, &c, &within(30)).unwrap_err();
    assert_eq!(failed.code, WorkspaceErrorCode::IoFailed, "{failed}");
    assert_eq!(failed.io_kind, Some(std::io::ErrorKind::StorageFull));
    match ws.gate.rollback(&c.task_id, &RollbackQuery::TaskStart) {
        Err(RollbackError::NotFullyRecorded(reason)) => {
            assert!(
                reason.starts_with("recording its changes failed"),
                "{reason}"
            );
        }
        other => panic!("a rollback after a failed record: {other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "edited\n"
    );
    drop(ws);
}

fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    path.symlink_metadata().unwrap().permissions().mode() & 0o7777
}

fn form_changes(records: &[cocode_core::snapshot::EditSnapshot]) -> Vec<(String, String)> {
    let word = |f: Option<Form>| f.map_or_else(|| "file".to_owned(), Form::phrase);
    records
        .iter()
        .map(|r| {
            let forms = r.forms();
            (
                r.path().to_string(),
                format!(
                    "{} -> {}",
                    r.base().map_or("-".to_owned(), |_| word(forms.base)),
                    r.result().map_or("-".to_owned(), |_| word(forms.result))
                ),
            )
        })
        .collect()
}

/// What a command makes that is not a plain file — a link (never
/// followed), a FIFO (never opened), the executable and set-id bits — is
/// recorded as what it is, and a rollback puts back exactly what was there.
#[test]
fn links_fifos_and_mode_bits_a_command_changes_are_recorded_and_undone() {
    let (_d, ws) = workspace(&[
        ("run.sh", "echo run\n"),
        ("tool.sh", "echo tool\n"),
        ("target.txt", "t\n"),
    ]);
    let root = ws.workspace.root.clone();
    sh(
        &root,
        "chmod 644 run.sh && chmod 755 tool.sh && chmod 664 target.txt && ln -s target.txt cur && mkfifo old-pipe",
    );
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(30)).unwrap();
    sh(
        &root,
        "chmod 4755 run.sh; chmod 644 tool.sh; ln -s /etc/passwd leak; mkfifo pipe; \
         rm cur && echo plain > cur; rm old-pipe; echo more >> target.txt",
    );
    let observed = end(&ws, &c, &within(30)).unwrap();
    assert_eq!(
        form_changes(&observed),
        [
            ("cur", "a link -> file"),
            ("leak", "- -> a link"),
            ("old-pipe", "a FIFO -> -"),
            ("pipe", "- -> a FIFO"),
            ("run.sh", "file -> set-id file, mode bits 4111"),
            ("target.txt", "file -> file"),
            ("tool.sh", "executable -> file"),
        ]
        .map(|(p, c)| (p.to_owned(), c.to_owned()))
    );
    ws.gate
        .rollback(&c.task_id, &RollbackQuery::TaskStart)
        .unwrap();
    assert!(!root.join("leak").exists() && root.join("leak").symlink_metadata().is_err());
    assert!(root.join("pipe").symlink_metadata().is_err());
    assert_eq!(
        std::fs::read_link(root.join("cur")).unwrap(),
        std::path::Path::new("target.txt")
    );
    assert!(
        root.join("old-pipe")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert_eq!(
        (
            mode_of(&root.join("run.sh")) & 0o7111,
            mode_of(&root.join("tool.sh")) & 0o7111
        ),
        (0, 0o111)
    );
    assert_eq!(
        std::fs::read_to_string(root.join("run.sh")).unwrap(),
        "echo run\n"
    );
    // Content put back keeps the file's own read and write bits.
    assert_eq!(mode_of(&root.join("target.txt")), 0o664);
    assert_eq!(mode_of(&root.join("run.sh")), 0o644);
}

/// A device node a command makes is recorded and removed by a rollback; one
/// it removes cannot be made again, so that rollback is refused by name.
#[test]
fn a_device_node_is_recorded_removed_by_rollback_and_never_made() {
    if !crate::require::require("root, to make a device node", is_root()) {
        return;
    }
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(30)).unwrap();
    sh(&root, "mknod null-dev c 1 3");
    let observed = end(&ws, &c, &within(30)).unwrap();
    assert_eq!(
        form_changes(&observed),
        [("null-dev".to_owned(), "- -> a socket or device".to_owned())]
    );
    ws.gate
        .rollback(&c.task_id, &RollbackQuery::TaskStart)
        .unwrap();
    assert!(root.join("null-dev").symlink_metadata().is_err());
    // Removed by a command: it is not made again.
    sh(&root, "mknod null-dev c 1 3");
    let c2 = ctx("t2", 1);
    ws.gate.begin_task_sweep(&c2, &within(30)).unwrap();
    sh(&root, "rm null-dev");
    assert_eq!(end(&ws, &c2, &within(30)).unwrap().len(), 1);
    assert_eq!(
        ws.gate.rollback(&c2.task_id, &RollbackQuery::TaskStart),
        Err(RollbackError::Conflicts(vec![
            cocode_workspace::rollback::PathConflict {
                path: p("null-dev"),
                reason: cocode_workspace::rollback::ConflictReason::CannotRemake,
            }
        ]))
    );
}

/// A name that is not UTF-8 and a name with a backslash, made by a
/// command: each recorded under its own bytes (never a lossy spelling that
/// names another file, or none), shown escaped, and removed by a rollback.
#[test]
fn names_that_are_not_text_are_recorded_by_their_bytes_and_undone() {
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(30)).unwrap();
    sh(
        &root,
        r#"printf latin1 > "$(printf 'caf\351.txt')"; printf slash > 'a\b'; mkdir 'd\x' && printf in > 'd\x/f'"#,
    );
    let observed = end(&ws, &c, &within(30)).unwrap();
    let shown: Vec<String> = observed
        .iter()
        .map(|r| cocode_core::shown::line(r.path().as_str()).into_owned())
        .collect();
    assert_eq!(shown, [r"a\x5cb", r"caf\xe9.txt", r"d\x5cx", r"d\x5cx/f"]);
    ws.gate
        .rollback(&c.task_id, &RollbackQuery::TaskStart)
        .unwrap();
    let mut left: Vec<Vec<u8>> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| {
            use std::os::unix::ffi::OsStrExt as _;
            e.unwrap().file_name().as_bytes().to_vec()
        })
        .filter(|n| n != b".cocode")
        .collect();
    left.sort();
    assert_eq!(left, [b"a.txt".to_vec()]);
}

/// What a command that made 400 nested folders named `name` and `f.txt`
/// in the deepest, besides `more` (kind, path), is recorded as: each
/// folder, then the file, sorted by path.
fn made_deep(name: &str, more: &[(&str, &str)]) -> Vec<(String, String, String)> {
    let mut want: Vec<(String, String, String)> = (1..=400)
        .map(|n| vec![name; n].join("/"))
        .chain([format!("{}/f.txt", vec![name; 400].join("/"))])
        .map(|path| ("create".to_owned(), path, "observed".to_owned()))
        .chain(more.iter().map(|(kind, path)| {
            (
                (*kind).to_owned(),
                (*path).to_owned(),
                "observed".to_owned(),
            )
        }))
        .collect();
    want.sort_by(|a, b| a.1.cmp(&b.1));
    want
}

/// A file 400 folders deep is recorded and undone; so is one past the
/// system's longest path (8,000 bytes), walked a folder at a time (Linux;
/// elsewhere the task says it is not fully recorded instead of calling
/// itself recorded).
#[test]
fn deep_paths_even_past_the_longest_path_are_recorded_and_undone() {
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(60)).unwrap();
    let deep = vec!["d"; 400].join("/");
    sh(
        &root,
        &format!("mkdir -p {deep} && echo deep > {deep}/f.txt"),
    );
    let observed = end(&ws, &c, &within(60)).unwrap();
    assert_eq!(summary(&observed), made_deep("d", &[]));
    ws.gate
        .rollback(&c.task_id, &RollbackQuery::TaskStart)
        .unwrap();
    assert!(!root.join("d").exists(), "the folders it made are gone too");
    // 400 folders of 20 characters: past 4,096 bytes.
    let c2 = ctx("t2", 1);
    ws.gate.begin_task_sweep(&c2, &within(60)).unwrap();
    let name = "folder-of-twenty-ch";
    // Made one relative step at a time, as a command can.
    sh(
        &root,
        &format!(
            "echo hidden > a.txt; python3 -c \"import os\nfor _ in range(400):\n    os.mkdir('{name}'); os.chdir('{name}')\nopen('f.txt', 'w').write('far')\""
        ),
    );
    let far = vec![name; 400].join("/");
    assert!(root.join(&far).as_os_str().len() > 8_000);
    if cfg!(target_os = "linux") {
        // Walked one folder at a time: recorded like any other path.
        let observed = end(&ws, &c2, &within(60)).unwrap();
        assert_eq!(summary(&observed), made_deep(name, &[("modify", "a.txt")]));
        let far_file = observed
            .iter()
            .find(|s| s.path().as_str().ends_with("/f.txt"))
            .unwrap();
        assert_eq!(
            ws.gate
                .store()
                .read_blob(&far_file.result().unwrap())
                .unwrap(),
            b"far"
        );
        ws.gate
            .rollback(&c2.task_id, &RollbackQuery::TaskStart)
            .unwrap();
        assert!(
            !root.join(name).exists(),
            "the folders it made are gone too"
        );
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
    } else {
        // Where such a path cannot be reached, the task says so.
        let refused = end(&ws, &c2, &within(60)).unwrap_err();
        assert_eq!(
            refused.code,
            WorkspaceErrorCode::NotFullyRecorded,
            "{refused}"
        );
        assert!(
            refused
                .message
                .contains("folder(s) lie deeper than the system's longest path"),
            "{refused}"
        );
        assert!(matches!(
            ws.gate.rollback(&c2.task_id, &RollbackQuery::TaskStart),
            Err(RollbackError::NotFullyRecorded(_))
        ));
    }
}

/// The look before a later command is kept as a small delta beside the
/// cache file the first one wrote; cocode ending during that command
/// still records exactly its changes at the next start.
#[test]
fn a_later_command_cocode_ended_during_is_recorded_from_the_cache_and_its_delta() {
    let (_d, ws) = workspace(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let root = ws.workspace.root.clone();
    let c1 = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c1, &within(30)).unwrap();
    sh(&root, "echo one > a.txt; echo new > n.txt");
    assert_eq!(end(&ws, &c1, &within(30)).unwrap().len(), 2);
    let c2 = ctx("t2", 1);
    ws.gate.begin_task_sweep(&c2, &within(30)).unwrap();
    assert!(
        ws.layout.sweep_delta_file().is_file(),
        "a delta, not the whole cache"
    );
    sh(&root, "echo two > b.txt; rm n.txt");
    std::mem::forget(ws);
    let (ws, report) = restart(&root);
    assert_eq!(
        report.sweeps_recovered,
        vec![RecoveredSweep {
            task_id: c2.task_id.clone(),
            recorded: 2,
            unrecorded: None,
        }]
    );
    assert_eq!(
        summary(&ws.gate.store().snapshots_of_task(&c2.task_id).unwrap()),
        triples(&[
            ("modify", "b.txt", "observed"),
            ("delete", "n.txt", "observed"),
        ])
    );
}

/// A folder a command makes (empty or not) or removes is a change of its
/// own: a rollback removes what it made and makes again what it removed;
/// a folder it made that now holds someone else's file is a conflict, and
/// nothing is touched.
#[test]
fn folders_a_command_makes_or_removes_are_recorded_and_undone() {
    let (_d, ws) = workspace(&[("keep/a.txt", "a\n")]);
    let root = ws.workspace.root.clone();
    sh(&root, "mkdir empty");
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(30)).unwrap();
    sh(
        &root,
        "mkdir made && mkdir -p made2/inner && echo x > made2/inner/f && rmdir empty",
    );
    let observed = end(&ws, &c, &within(30)).unwrap();
    assert_eq!(
        summary(&observed),
        triples(&[
            ("delete", "empty", "observed"),
            ("create", "made", "observed"),
            ("create", "made2", "observed"),
            ("create", "made2/inner", "observed"),
            ("create", "made2/inner/f", "observed"),
        ])
    );
    ws.gate
        .rollback(&c.task_id, &RollbackQuery::TaskStart)
        .unwrap();
    let mut left: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".cocode")
        .collect();
    left.sort();
    assert_eq!(left, ["empty", "keep"]);
    assert!(root.join("empty").read_dir().unwrap().next().is_none());
    // A folder the task made, where a person put a file since.
    let c2 = ctx("t2", 1);
    ws.gate.begin_task_sweep(&c2, &within(30)).unwrap();
    sh(&root, "mkdir mine");
    assert_eq!(end(&ws, &c2, &within(30)).unwrap().len(), 1);
    sh(&root, "echo person > mine/theirs.txt");
    assert_eq!(
        ws.gate.rollback(&c2.task_id, &RollbackQuery::TaskStart),
        Err(RollbackError::Conflicts(vec![
            cocode_workspace::rollback::PathConflict {
                path: p("mine"),
                reason: cocode_workspace::rollback::ConflictReason::HoldsOthers,
            }
        ]))
    );
    assert_eq!(
        std::fs::read_to_string(root.join("mine/theirs.txt")).unwrap(),
        "person\n"
    );
}

/// A folder the gate makes for an agent's new file, or removes with the
/// last file in it, while a command or an agent's turn runs, is noted as
/// the gate's: the look after never gives it to the command.
#[test]
fn folders_the_gate_makes_or_empties_are_not_a_later_commands_change() {
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(30)).unwrap();
    apply(&ws, &c, write("new/deeper/x.txt", b"x\n"));
    sh(&root, "true");
    assert_eq!(end(&ws, &c, &within(30)).unwrap(), vec![]);
    ws.gate.begin_task_sweep(&c, &within(30)).unwrap();
    apply(&ws, &c, delete("new/deeper/x.txt"));
    sh(&root, "true");
    assert_eq!(end(&ws, &c, &within(30)).unwrap(), vec![]);
}

/// A command that makes 200,001 new files, past the 200,000 entries the
/// sweep tracks, beside an edit: what was seen is recorded, and the task
/// says it is not fully recorded, so its rollback is refused rather than
/// leaving the rest behind while saying "undone".
#[test]
fn two_hundred_thousand_and_one_new_files_leave_the_task_not_fully_recorded() {
    let (_d, ws) = workspace(&[("a.txt", "a\n")]);
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    ws.gate.begin_task_sweep(&c, &within(600)).unwrap();
    sh(
        &root,
        "echo edited > a.txt; python3 -c \"import os\nfor d in range(100):\n    os.mkdir(f'many{d}')\n    for f in range(2000):\n        open(f'many{d}/f{f}', 'w').close()\nopen('many0/one-more', 'w').close()\"",
    );
    let refused = end(&ws, &c, &within(600)).unwrap_err();
    assert_eq!(
        refused.code,
        WorkspaceErrorCode::NotFullyRecorded,
        "{refused}"
    );
    assert!(
        refused
            .message
            .starts_with("the workspace holds more than 200000 files the sweep would track"),
        "{refused}"
    );
    match ws.gate.rollback(&c.task_id, &RollbackQuery::TaskStart) {
        Err(RollbackError::NotFullyRecorded(reason)) => {
            assert!(reason.contains("more than 200000 files"), "{reason}");
        }
        other => panic!("a rollback of a task past the cap: {other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "edited\n"
    );
}
