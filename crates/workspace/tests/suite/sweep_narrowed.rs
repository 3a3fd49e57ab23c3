//! The scan after a command narrowed to what the sweep's watcher reported:
//! every case is run twice, swept in full and narrowed, and both must
//! record the same changes and roll back to the same tree.

use std::path::Path;
use std::process::Command;

use cocode_core::gate::TaskContext;
use cocode_core::snapshot::{EditSnapshot, SnapshotOrigin};
use cocode_workspace::{OpenWorkspace, RollbackQuery, SweepWriters};
use pretty_assertions::assert_eq;

use super::common::*;

/// Files that are there in every case, so that a narrowed scan visibly
/// looks at fewer files than the tree holds.
const FILLER: usize = 60;

/// Runs `script` in `root` with `$OUT` naming a folder outside it.
fn sh(root: &Path, out: &Path, script: &str) {
    let status = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(root)
        .env("OUT", out)
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
}

/// A workspace with `files` and the filler, a folder outside it, and the
/// sweep's watcher started when `watched`.
fn setup(files: &[(&str, &str)], watched: bool) -> (tempfile::TempDir, OpenWorkspace) {
    let filler: Vec<(String, String)> = (0..FILLER)
        .map(|i| (format!("fill/d{}/f{i}.txt", i % 6), format!("filler {i}\n")))
        .collect();
    let mut all: Vec<(&str, &str)> = files.to_vec();
    all.extend(filler.iter().map(|(a, b)| (a.as_str(), b.as_str())));
    let (dir, ws) = workspace(&all);
    std::fs::create_dir(dir.path().join("out")).unwrap();
    if watched {
        assert!(ws.gate.watch().unwrap());
    }
    (dir, ws)
}

/// One case: the files, what happens before the task's sweep (after a
/// first scan saw the files), the command, and the changes it must record.
#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    before: &'static str,
    command: &'static str,
    recorded: &'static [(&'static str, &'static str)],
    /// Whether rolling back must give the whole tree as it was before the
    /// command (not when it changed ignored files or left a link where a
    /// folder was).
    rolls_back: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "edit, create and delete",
        files: &[("a.txt", "a\n"), ("b.txt", "b\n"), ("src/c.rs", "c\n")],
        before: "",
        command: "echo more >> src/c.rs; echo n > new.txt; rm b.txt",
        recorded: &[
            ("delete", "b.txt"),
            ("create", "new.txt"),
            ("modify", "src/c.rs"),
        ],
        rolls_back: true,
    },
    Case {
        name: "folders made during the command, before any watch on them",
        files: &[("a.txt", "a\n")],
        before: "",
        command: "mkdir -p x/y/z && echo deep > x/y/z/f && echo top > x/t && mkdir x/y/e",
        // Each folder made is a change of its own.
        recorded: &[
            ("create", "x"),
            ("create", "x/t"),
            ("create", "x/y"),
            ("create", "x/y/e"),
            ("create", "x/y/z"),
            ("create", "x/y/z/f"),
        ],
        rolls_back: true,
    },
    Case {
        name: "a folder reported with a folder inside it",
        files: &[("src/a", "a\n")],
        before: "",
        command: "chmod 700 src && mkdir src/new && echo n > src/new/f",
        recorded: &[("create", "src/new"), ("create", "src/new/f")],
        rolls_back: true,
    },
    Case {
        name: "a folder renamed",
        files: &[("src/m/a", "a\n"), ("src/m/b/c", "c\n")],
        before: "",
        command: "mv src/m src/n && echo late >> src/n/a",
        recorded: &[
            ("delete", "src/m"),
            ("delete", "src/m/a"),
            ("delete", "src/m/b"),
            ("delete", "src/m/b/c"),
            ("create", "src/n"),
            ("create", "src/n/a"),
            ("create", "src/n/b"),
            ("create", "src/n/b/c"),
        ],
        rolls_back: true,
    },
    Case {
        name: "a folder removed, another swapped for a link",
        files: &[("src/m/a", "a\n"), ("src/m/b/c", "c\n"), ("lib/x", "x\n")],
        before: "",
        command: "rm -rf src/m && rm -rf lib && ln -s /etc lib",
        // The link is recorded as a link (never followed). A rollback is
        // refused: `lib/x` goes back below where a link stands now.
        recorded: &[
            ("modify", "lib"),
            ("delete", "lib/x"),
            ("delete", "src/m"),
            ("delete", "src/m/a"),
            ("delete", "src/m/b"),
            ("delete", "src/m/b/c"),
        ],
        rolls_back: false,
    },
    Case {
        name: "a file and a folder moved in from outside",
        files: &[("a.txt", "a\n")],
        before: "mkdir -p $OUT/pkg/inner && echo p > $OUT/pkg/inner/p.txt && echo f > $OUT/f.txt",
        command: "mv $OUT/pkg vendor && mv $OUT/f.txt f.txt",
        recorded: &[
            ("create", "f.txt"),
            ("create", "vendor"),
            ("create", "vendor/inner"),
            ("create", "vendor/inner/p.txt"),
        ],
        rolls_back: true,
    },
    Case {
        name: "ignored folders, and a rule the command wrote",
        files: &[(".gitignore", "build/\n"), ("build/o", "o\n")],
        before: "",
        command: "echo o2 > build/o; echo n > build/n; echo hide.txt >> .gitignore; echo h > hide.txt",
        recorded: &[("modify", ".gitignore"), ("create", "hide.txt")],
        rolls_back: false,
    },
    Case {
        name: "a write through a hard link outside the workspace",
        files: &[("shared.txt", "shared\n")],
        before: "ln shared.txt $OUT/alias",
        command: "echo changed >> $OUT/alias",
        recorded: &[("modify", "shared.txt")],
        rolls_back: true,
    },
    Case {
        name: "a write through a shared memory map",
        files: &[("m.bin", "data-data\n")],
        before: "",
        command: "python3 -c \"import mmap;f=open('m.bin','r+b');m=mmap.mmap(f.fileno(),0);f.close();m[0:4]=b'MMAP';m.flush();m.close()\"",
        recorded: &[("modify", "m.bin")],
        rolls_back: true,
    },
    Case {
        name: "a tracked file in a folder a rule added since hides from the walk",
        files: &[("keep/x", "x\n"), (".gitignore", "")],
        before: "echo keep/ > .gitignore",
        command: "echo changed >> keep/x",
        recorded: &[("modify", "keep/x")],
        rolls_back: true,
    },
    Case {
        name: "a same-size rewrite that restores the mtime",
        files: &[("same.txt", "aaaa")],
        before: "touch -d 2001-01-01 same.txt",
        command: "printf bbbb > same.txt && touch -d 2001-01-01 same.txt",
        recorded: &[("modify", "same.txt")],
        rolls_back: true,
    },
];

fn records_of(records: &[EditSnapshot]) -> Vec<(String, String)> {
    summary(records)
        .into_iter()
        .map(|(kind, path, origin)| {
            assert_eq!(origin, "observed");
            (kind, path)
        })
        .collect()
}

/// How the look before the command is taken.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Before {
    /// Every file statted.
    Full,
    /// As a task's look shortly after another: narrowed to what the
    /// watcher reported since.
    Recent,
}

/// What a case's run recorded, whether the scan after was narrowed and how
/// many files it looked at.
type Ran = (Vec<(String, String)>, bool, usize);

/// Runs `case` swept in full or narrowed: what was recorded, whether the
/// scan after was narrowed and how many files it looked at.
fn run(case: &Case, narrowed: bool) -> Ran {
    run_with(case, narrowed, Before::Full).0
}

/// [`run`] with the look before taken as `before`; also whether that look
/// was narrowed.
fn run_with(case: &Case, narrowed: bool, before: Before) -> (Ran, bool) {
    let (dir, ws) = setup(case.files, narrowed);
    let out = dir.path().join("out");
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    // The files as a first scan saw them.
    ws.gate.begin_sweep().unwrap();
    assert_eq!(ws.gate.end_sweep(&ctx("t0", 1)).unwrap(), vec![]);
    sh(&root, &out, case.before);
    let start = tree(&root);
    let begun = match before {
        Before::Full => ws.gate.begin_sweep().unwrap(),
        Before::Recent => ws
            .gate
            .begin_task_sweep(&c, &cocode_workspace::SweepBudget::UNLIMITED)
            .unwrap(),
    };
    sh(&root, &out, case.command);
    let writers = if narrowed {
        SweepWriters::ConfinedCommands
    } else {
        SweepWriters::Anyone
    };
    let records = ws
        .gate
        .end_sweep_by(&c, SnapshotOrigin::Observed, writers)
        .unwrap();
    let stats = ws.gate.last_sweep_stats();
    if case.rolls_back {
        // What was recorded rolls the tree back to where it was.
        ws.gate
            .rollback(&c.task_id, &RollbackQuery::TaskStart)
            .unwrap();
        assert_eq!(tree(&root), start, "{}: rolled back", case.name);
    }
    ws.gate.flush().unwrap();
    let report = cocode_workspace::HistoryIntegrityChecker::new(ws.gate.store())
        .check()
        .unwrap();
    assert_eq!(report.problems(), 0, "{}: {report:?}", case.name);
    (
        (records_of(&records), stats.narrowed, stats.files),
        begun.narrowed,
    )
}

#[test]
fn a_narrowed_scan_records_what_a_full_scan_records() {
    for case in CASES {
        let want: Vec<(String, String)> = case
            .recorded
            .iter()
            .map(|(k, p)| ((*k).to_owned(), (*p).to_owned()))
            .collect();
        let (full, full_narrowed, full_files) = run(case, false);
        assert_eq!(full, want, "{}: swept in full", case.name);
        assert!(!full_narrowed, "{}", case.name);
        assert!(full_files >= FILLER, "{}: {full_files} files", case.name);
        let (narrow, narrowed, files) = run(case, true);
        assert_eq!(narrow, want, "{}: narrowed", case.name);
        assert!(narrowed, "{}: the scan after was not narrowed", case.name);
        assert!(
            files < FILLER / 2,
            "{}: a narrowed scan looked at {files} files",
            case.name
        );
    }
}

/// The look before a command shortly after another is narrowed too, and
/// records the same: what happened between the two looks is the base, what
/// the command did is its change. Not when an ignore file was reported:
/// that look reads the rules again, in full. The one case it cannot see is
/// a hard link made from outside between the looks (see
/// `a_link_made_between_two_quick_looks_is_not_seen_by_the_second`).
#[test]
fn a_narrowed_look_before_records_what_a_full_look_before_records() {
    for case in CASES {
        if case.name == "a write through a hard link outside the workspace" {
            continue;
        }
        let want = pairs(case.recorded);
        let ((got, after_narrowed, _), before_narrowed) = run_with(case, true, Before::Recent);
        assert_eq!(got, want, "{}: narrowed before", case.name);
        assert!(after_narrowed, "{}", case.name);
        let rules_touched = case.before.contains("ignore");
        assert_eq!(
            before_narrowed, !rules_touched,
            "{}: the look before narrowed",
            case.name
        );
    }
}

/// The window [`cocode_workspace::NARROW_BEFORE_WITHIN`] leaves open: a
/// hard link a person makes from outside between two quick looks is not
/// seen by the second, and a write through it during the command is not
/// the command's (the next full look takes it, as the person's). After a
/// pause the look is full, and the link is seen.
#[test]
fn a_link_made_between_two_quick_looks_is_not_seen_by_the_second() {
    let listed = CASES
        .iter()
        .find(|c| c.name == "a write through a hard link outside the workspace")
        .unwrap();
    // Nothing recorded, so nothing to roll back.
    let case = Case {
        rolls_back: false,
        ..*listed
    };
    let ((quick, _, _), narrowed) = run_with(&case, true, Before::Recent);
    assert!(narrowed);
    assert_eq!(quick, pairs(&[]));
    let ((full, _, _), narrowed) = run_with(listed, true, Before::Full);
    assert!(!narrowed);
    assert_eq!(full, pairs(listed.recorded));
}

fn begin(ws: &OpenWorkspace, out: &Path, script: &str) {
    ws.gate.begin_sweep().unwrap();
    sh(&ws.workspace.root, out, script);
}

fn end_confined(ws: &OpenWorkspace, c: &TaskContext) -> Vec<(String, String)> {
    let records = ws
        .gate
        .end_sweep_by(c, SnapshotOrigin::Observed, SweepWriters::ConfinedCommands)
        .unwrap();
    records_of(&records)
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn two_narrowed_scans_in_a_row_follow_a_folder_the_first_saw_renamed() {
    let (dir, ws) = setup(&[("src/m/a", "a\n")], true);
    let out = dir.path().join("out");
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    begin(&ws, &out, "mv src/m src/n && mkdir src/n/deep");
    assert_eq!(
        end_confined(&ws, &c),
        pairs(&[
            ("delete", "src/m"),
            ("delete", "src/m/a"),
            ("create", "src/n"),
            ("create", "src/n/a"),
            ("create", "src/n/deep"),
        ])
    );
    // No scan in full between: the second relies on the watches the first
    // added for the folders it walked.
    sh(&root, &out, "echo b >> src/n/a && echo d > src/n/deep/d");
    assert_eq!(
        end_confined(&ws, &c),
        pairs(&[("modify", "src/n/a"), ("create", "src/n/deep/d")])
    );
    assert!(ws.gate.last_sweep_stats().narrowed);
}

#[test]
fn writers_that_could_make_links_get_a_full_scan() {
    let (dir, ws) = setup(&[("shared.txt", "shared\n")], true);
    let out = dir.path().join("out");
    let c = ctx("t1", 1);
    // A link made during the command: nothing reports the write through it.
    begin(
        &ws,
        &out,
        "ln shared.txt $OUT/alias && echo changed >> $OUT/alias",
    );
    let records = ws
        .gate
        .end_sweep_by(&c, SnapshotOrigin::Observed, SweepWriters::Anyone)
        .unwrap();
    assert_eq!(records_of(&records), pairs(&[("modify", "shared.txt")]));
    assert!(!ws.gate.last_sweep_stats().narrowed);
}

#[test]
fn without_a_watcher_or_a_scan_in_full_before_nothing_is_narrowed() {
    let (dir, ws) = setup(&[("a.txt", "a\n")], false);
    let out = dir.path().join("out");
    let c = ctx("t1", 1);
    begin(&ws, &out, "echo b >> a.txt");
    assert_eq!(end_confined(&ws, &c), pairs(&[("modify", "a.txt")]));
    assert!(!ws.gate.last_sweep_stats().narrowed);
    // The watcher started after the scan before the command: that scan
    // watched nothing, so the scan after walks everything.
    ws.gate.begin_sweep().unwrap();
    assert!(ws.gate.watch().unwrap());
    sh(&ws.workspace.root, &out, "echo c >> a.txt");
    assert_eq!(end_confined(&ws, &c), pairs(&[("modify", "a.txt")]));
    assert!(!ws.gate.last_sweep_stats().narrowed);
}

#[test]
fn a_change_made_while_the_watcher_overflowed_is_still_recorded() {
    // A queue of 16 events for the watcher this test starts (the length is
    // read when a watcher starts; setting it needs root).
    let limit = Path::new("/proc/sys/fs/inotify/max_queued_events");
    let before = std::fs::read_to_string(limit).unwrap();
    if std::fs::write(limit, "16").is_err() {
        eprintln!("skipped: the inotify queue length cannot be set here (not root)");
        return;
    }
    let (dir, ws) = setup(&[("a.txt", "a\n")], false);
    let watched = ws.gate.watch();
    std::fs::write(limit, before.trim()).unwrap();
    assert!(watched.unwrap());
    let out = dir.path().join("out");
    let c = ctx("t1", 1);
    // The reading thread drains the queue as it fills; a burst from many
    // writers at once outruns it.
    begin(
        &ws,
        &out,
        "for i in $(seq 1 40); do (for j in $(seq 1 25); do echo $j > n$i-$j; done) & done; wait; echo b >> a.txt",
    );
    let records = end_confined(&ws, &c);
    assert!(!ws.gate.last_sweep_stats().narrowed, "events were lost");
    assert_eq!(records.len(), 1001);
    assert!(records.contains(&("modify".to_owned(), "a.txt".to_owned())));
    // The next scan in full watches again, and the one after narrows.
    begin(&ws, &out, "echo c >> a.txt");
    assert_eq!(end_confined(&ws, &c), pairs(&[("modify", "a.txt")]));
    assert!(ws.gate.last_sweep_stats().narrowed);
}

/// `.git/info/exclude` lies where no watch is: the look before a command
/// reads it, and when it changed since the last look, looks in full.
#[test]
fn a_changed_exclude_file_makes_the_look_before_full() {
    let (dir, ws) = setup(&[("a.txt", "a\n"), (".git/info/exclude", "")], true);
    let out = dir.path().join("out");
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    let budget = cocode_workspace::SweepBudget::UNLIMITED;
    assert!(!ws.gate.begin_task_sweep(&c, &budget).unwrap().narrowed);
    assert_eq!(end_confined(&ws, &c), pairs(&[]));
    // Unchanged: narrowed.
    assert!(ws.gate.begin_task_sweep(&c, &budget).unwrap().narrowed);
    assert_eq!(end_confined(&ws, &c), pairs(&[]));
    sh(&root, &out, "echo a.txt > .git/info/exclude");
    assert!(!ws.gate.begin_task_sweep(&c, &budget).unwrap().narrowed);
    sh(&root, &out, "echo b >> a.txt");
    // Tracked before the rule came, it is still looked at.
    assert_eq!(end_confined(&ws, &c), pairs(&[("modify", "a.txt")]));
    // After a pause the look is full again.
    ws.gate.forget_recent_look();
    assert!(!ws.gate.begin_task_sweep(&c, &budget).unwrap().narrowed);
}

/// The version-control metadata made since the look before, by path.
fn made_since(ws: &OpenWorkspace) -> Vec<String> {
    ws.gate
        .metadata_made_since_sweep()
        .iter()
        .map(|p| p.as_str().to_owned())
        .collect()
}

/// The census of version-control metadata each look takes comes from the
/// looks' own listings, and walks only the folders the rules keep them
/// out of. After a narrowed look it names what a walk of the tree names:
/// metadata made at the root (where no look or watch goes), in a watched
/// folder, in a folder renamed or made, in an ignored folder there before
/// and in one made by the command; metadata removed is gone from it.
#[test]
fn the_census_the_looks_keep_names_what_a_walk_of_the_tree_names() {
    let (dir, ws) = setup(
        &[
            (".gitignore", "vendor/\nbuild/\n"),
            ("vendor/dep/.git/config", "x\n"),
            ("old/.git/config", "x\n"),
            ("keep/a.txt", "a\n"),
            ("src/.hg", ""),
        ],
        true,
    );
    let out = dir.path().join("out");
    let root = ws.workspace.root.clone();
    let c = ctx("t1", 1);
    let budget = cocode_workspace::SweepBudget::UNLIMITED;
    assert!(!ws.gate.begin_task_sweep(&c, &budget).unwrap().narrowed);
    sh(
        &root,
        &out,
        "git init -q . && mkdir -p sub/.git && rm -rf old/.git && mkdir -p build/x/.git vendor/two/.jj && mv keep kept && mkdir kept/.svn && touch .bzr",
    );
    end_confined(&ws, &c);
    assert!(ws.gate.last_sweep_stats().narrowed);
    let made = made_since(&ws);
    assert_eq!(
        made,
        [
            ".bzr",
            ".git",
            "build/x/.git",
            "kept/.svn",
            "sub/.git",
            "vendor/two/.jj"
        ]
    );
    // What the looks know is what a walk of the whole tree finds.
    let walked: Vec<String> =
        cocode_workspace::metadata_census::take(&root, ws.gate.policy().options())
            .unwrap()
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect();
    assert_eq!(
        walked,
        [
            ".bzr",
            ".git",
            "build/x/.git",
            "kept/.svn",
            "src/.hg",
            "sub/.git",
            "vendor/dep/.git",
            "vendor/two/.jj"
        ]
    );
    // The next look starts from there (in full: `git init` wrote
    // `.git/info/exclude`): nothing is new, and what the next command
    // makes is.
    assert!(!ws.gate.begin_task_sweep(&c, &budget).unwrap().narrowed);
    sh(&root, &out, "rm -rf sub && mkdir -p vendor/dep/inner/.git");
    end_confined(&ws, &c);
    let made = made_since(&ws);
    assert_eq!(made, ["vendor/dep/inner/.git"]);
}
