//! Recovery outcomes that need no crash: unresolved journals block their
//! paths until abandoned, corrupt journals are reported and kept, torn
//! index tails are cut.

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{TaskContext, WorkspaceFileGate};
use cocode_workspace::{HistoryIntegrityChecker, OpenWorkspace};
use pretty_assertions::assert_eq;

use super::common::*;

/// Leaves a journal behind by aborting inside a child is covered by the crash
/// suite; here the journal of a completed operation is copied back and the
/// file is changed by someone else, so it matches neither base nor result.
#[test]
fn a_path_in_neither_state_blocks_until_a_person_abandons_the_journal() {
    let (_d, ws) = workspace(&[("a.txt", "old")]);
    let c = ctx("t1", 1);
    apply(&ws, &c, write("a.txt", b"new"));
    let journal = pending_journals(&ws.layout.write_journal_dir())
        .into_iter()
        .next()
        .unwrap();
    let saved = std::fs::read(&journal).unwrap();
    let root = ws.workspace.root.clone();
    let layout = ws.layout.clone();
    drop(ws);
    // Pretend the operation never finished: its journal is back, its records
    // are gone from the indexes, and the file is in a third state.
    std::fs::write(&journal, &saved).unwrap();
    std::fs::remove_dir_all(layout.tasks_dir()).unwrap();
    std::fs::remove_dir_all(layout.files_dir()).unwrap();
    std::fs::write(root.join("a.txt"), b"third").unwrap();

    let ws = OpenWorkspace::open(&root).unwrap();
    let report = ws.gate.recover().unwrap();
    assert_eq!(
        report
            .unresolved
            .iter()
            .map(|(_, p)| p.to_string())
            .collect::<Vec<_>>(),
        vec!["a.txt"]
    );
    let err = ws.gate.apply(&c, write("a.txt", b"x")).unwrap_err();
    assert_eq!(err.code, WorkspaceErrorCode::RecoveryPending);
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "third"
    );
    // Other paths are not blocked.
    apply(&ws, &c, write("b.txt", b"b"));

    let op = report.unresolved[0].0.clone();
    assert_eq!(
        ws.gate.abandon_write_journal(&op).unwrap(),
        vec![p("a.txt")]
    );
    assert_eq!(
        summary(&apply(&ws, &c, write("a.txt", b"x"))),
        vec![("modify".to_owned(), "a.txt".to_owned(), "gate".to_owned())]
    );
    assert!(
        layout
            .abandoned_journal_dir()
            .join(format!("{op}.json"))
            .is_file()
    );
}

/// `a.txt` written `A` → `B` → `C` by two operations, and the workspace
/// closed with both journals put back, as a crash before their checkpoint
/// leaves them (a journal is retired after the barrier after its
/// operation's checkpoint, and the retirement is durable only after the
/// barrier after that). Returns the folder, the root, the journals' folder and the two
/// journals' paths.
fn two_journals_of_one_file() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    [std::path::PathBuf; 2],
) {
    let (d, ws) = workspace(&[("a.txt", "A")]);
    let c = ctx("t1", 1);
    let dir = ws.layout.write_journal_dir();
    apply(&ws, &c, write("a.txt", b"B"));
    let first = pending_journals(&dir).remove(0);
    let first_bytes = std::fs::read(&first).unwrap();
    apply(&ws, &c, write("a.txt", b"C"));
    // Both wait for a checkpoint.
    let pending = pending_journals(&dir);
    assert_eq!(pending.len(), 2);
    let second = pending.into_iter().find(|j| *j != first).unwrap();
    let second_bytes = std::fs::read(&second).unwrap();
    let root = ws.workspace.root.clone();
    drop(ws);
    std::fs::write(&first, &first_bytes).unwrap();
    std::fs::write(&second, &second_bytes).unwrap();
    (d, root, dir, [first, second])
}

/// The crash left the later change on disk. Judged alone, the older
/// journal would see neither its base nor its result; judged along the
/// file's chain both changes happened: nothing is unresolved, and the
/// file stays writable.
#[test]
fn a_settled_journal_left_beside_a_later_one_on_the_same_file_is_complete() {
    let (_d, root, dir, journals) = two_journals_of_one_file();
    let (ws, report) = restart(&root);
    assert_eq!(report.unresolved, Vec::new());
    assert_eq!((report.records_dropped, report.index_lines_removed), (0, 0));
    let mut settled: Vec<String> = report
        .settled_journals
        .iter()
        .map(ToString::to_string)
        .collect();
    settled.sort();
    let mut ops: Vec<String> = journals
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    ops.sort();
    assert_eq!(settled, ops);
    assert_eq!(pending_journals(&dir), Vec::<std::path::PathBuf>::new());
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "C");
    // Each change is in the history once, and the file takes a third.
    let c = ctx("t1", 1);
    assert_eq!(
        ws.gate.store().snapshots_of_task(&c.task_id).unwrap().len(),
        2
    );
    assert_eq!(
        summary(&apply(&ws, &c, write("a.txt", b"D"))),
        vec![("modify".to_owned(), "a.txt".to_owned(), "gate".to_owned())]
    );
    ws.gate.flush().unwrap();
    assert_eq!(history_problems(&ws), 0);
}

/// The other side of the same crash: the first operation's rename had not
/// reached the disk either, so the file holds its base. Neither change
/// happened (the second was applied only after a barrier that would have
/// kept the first): both records are dropped with their index lines, and
/// the file is not blocked.
#[test]
fn two_journals_of_one_file_whose_first_change_was_lost_are_both_dropped() {
    let (_d, root, _dir, _journals) = two_journals_of_one_file();
    std::fs::write(root.join("a.txt"), b"A").unwrap();

    let (ws, report) = restart(&root);
    assert_eq!(
        (counts(&report), report.settled_journals.len()),
        ((2, 4, 0, 0), 2)
    );
    let c = ctx("t1", 1);
    assert_eq!(
        ws.gate.store().snapshots_of_task(&c.task_id).unwrap(),
        Vec::new()
    );
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "A");
    writes_from_base_a(&ws, &c);
}

/// An operation's index lines are written by a checkpoint after its
/// rename, and the barrier after the checkpoint makes both durable; where
/// the file system keeps no order between files, a crash before it can
/// keep the lines and lose the rename.
/// Recovery finds the file in its base state and drops the record: its
/// lines go too, and every other line stays as it was.
#[test]
fn a_dropped_record_whose_index_lines_reached_the_disk_leaves_no_line() {
    let (_d, ws) = workspace(&[("a.txt", "A"), ("b.txt", "b")]);
    let c = ctx("t1", 1);
    let dir = ws.layout.write_journal_dir();
    let kept = apply(&ws, &c, write("b.txt", b"b2"));
    let before = pending_journals(&dir);
    apply(&ws, &c, write("a.txt", b"B"));
    let journal: Vec<_> = pending_journals(&dir)
        .into_iter()
        .filter(|j| !before.contains(j))
        .collect();
    assert_eq!(journal.len(), 1);
    let journal_bytes = std::fs::read(&journal[0]).unwrap();
    let root = ws.workspace.root.clone();
    let task_index = ws.layout.task_index(&c.task_id);
    let b_shard = ws.gate.store().path_index_file(&p("b.txt"));
    drop(ws);
    let b_shard_before = std::fs::read(&b_shard).unwrap();
    // The crash: the journal and the index lines are on disk, the rename
    // is not.
    std::fs::write(&journal[0], &journal_bytes).unwrap();
    std::fs::write(root.join("a.txt"), b"A").unwrap();

    let (ws, report) = restart(&root);
    assert_eq!(counts(&report), (1, 2, 0, 0));
    let store = ws.gate.store();
    assert_eq!(store.snapshots_of_task(&c.task_id).unwrap(), kept);
    assert_eq!(store.path_history(&p("a.txt")).unwrap(), Vec::new());
    assert_eq!(store.path_history(&p("b.txt")).unwrap(), kept);
    let b_line = format!("{}\n", serde_json::to_string(&kept[0]).unwrap());
    assert_eq!(std::fs::read_to_string(&task_index).unwrap(), b_line);
    if b_shard != store.path_index_file(&p("a.txt")) {
        assert_eq!(std::fs::read(&b_shard).unwrap(), b_shard_before);
    }
    writes_from_base_a(&ws, &c);
}

/// (records dropped, index lines removed, records completed, paths
/// unresolved) of a recovery.
fn counts(report: &cocode_workspace::RecoveryReport) -> (usize, usize, usize, usize) {
    (
        report.records_dropped,
        report.index_lines_removed,
        report.records_completed,
        report.unresolved.len(),
    )
}

/// The next write of `a.txt` records its base `A` again (every dropped
/// change left nothing behind), and the history is sound.
fn writes_from_base_a(ws: &OpenWorkspace, c: &TaskContext) {
    let next = apply(ws, c, write("a.txt", b"next"));
    assert_eq!(
        next[0].base(),
        Some(cocode_core::snapshot::ContentHash::of(b"A"))
    );
    ws.gate.flush().unwrap();
    assert_eq!(history_problems(ws), 0);
}

/// The journals a recovery reported as corrupt.
fn corrupt_paths(report: &cocode_workspace::RecoveryReport) -> Vec<std::path::PathBuf> {
    report
        .corrupt_journals
        .iter()
        .map(|(p, _)| p.clone())
        .collect()
}

#[test]
fn a_corrupt_journal_is_reported_and_never_deleted() {
    let (_d, ws) = workspace(&[]);
    let bad = ws.layout.write_journal_dir().join("w000000000000-1-0.json");
    std::fs::write(&bad, b"{ torn").unwrap();
    let report = ws.gate.recover().unwrap();
    assert_eq!(corrupt_paths(&report), vec![bad.clone()]);
    let integrity = HistoryIntegrityChecker::new(ws.gate.store())
        .check()
        .unwrap();
    assert_eq!(integrity.pending_journals, vec![bad.clone()]);
    assert_eq!(std::fs::read(&bad).unwrap(), b"{ torn");
}

#[test]
fn a_torn_index_line_is_cut_and_the_history_stays_readable() {
    let (_d, ws) = workspace(&[]);
    let c = ctx("t1", 1);
    let first = apply(&ws, &c, write("a.txt", b"1"));
    ws.gate.flush().unwrap();
    let index = ws.layout.task_index(&c.task_id);
    let mut bytes = std::fs::read(&index).unwrap();
    bytes.extend_from_slice(b"{\"snapshot_id\":\"half");
    std::fs::write(&index, bytes).unwrap();
    let root = ws.workspace.root.clone();
    drop(ws);
    let ws = OpenWorkspace::open(&root).unwrap();
    assert_eq!(ws.gate.recover().unwrap().torn_index_tails_cut, 1);
    let second = apply(&ws, &c, write("a.txt", b"2"));
    assert_eq!(
        ws.gate.store().snapshots_of_task(&c.task_id).unwrap(),
        [first, second].concat()
    );
    ws.gate.flush().unwrap();
    assert_eq!(history_problems(&ws), 0);
}

#[test]
fn the_last_record_of_a_path_ignores_a_torn_tail_and_the_other_paths_of_its_shard() {
    let (_d, ws) = workspace(&[]);
    let c = ctx("t1", 1);
    let mate = shard_mate(&ws, "a.txt");
    let first = apply(&ws, &c, write("a.txt", b"1"));
    let second = apply(&ws, &c, write("a.txt", b"2"));
    let theirs = apply(&ws, &c, write(&mate, b"m"));
    let shard = ws.layout.path_index_shard(&p("a.txt").key());
    let store = ws.gate.store();
    assert_eq!(
        (
            store.path_index_file(&p("a.txt")),
            store.path_index_file(&p(&mate))
        ),
        (shard.clone(), shard.clone())
    );
    assert_eq!(store.path_index_files().unwrap(), vec![shard.clone()]);
    assert_eq!(
        store.path_history(&p("a.txt")).unwrap(),
        [first.clone(), second.clone()].concat()
    );
    assert_eq!(store.path_history(&p(&mate)).unwrap(), theirs);

    let whole = std::fs::read(&shard).unwrap();
    let mut torn = whole.clone();
    torn.extend_from_slice(b"{\"snapshot_id\":\"half");
    std::fs::write(&shard, &torn).unwrap();
    assert_eq!(
        (
            store.last_snapshot_of_path(&p("a.txt")).unwrap(),
            store.last_snapshot_of_path(&p(&mate)).unwrap()
        ),
        (Some(second[0].clone()), Some(theirs[0].clone()))
    );
    // Only the first line: the mate has no record yet.
    let first_end = whole.iter().position(|b| *b == b'\n').unwrap() + 1;
    std::fs::write(&shard, &whole[..first_end]).unwrap();
    assert_eq!(
        (
            store.last_snapshot_of_path(&p("a.txt")).unwrap(),
            store.last_snapshot_of_path(&p(&mate)).unwrap()
        ),
        (Some(first[0].clone()), None)
    );
    std::fs::write(&shard, b"").unwrap();
    assert_eq!(store.last_snapshot_of_path(&p("a.txt")).unwrap(), None);
    assert_eq!(store.last_snapshot_of_path(&p("never.txt")).unwrap(), None);
}

/// A rename whose two paths share a shard is one line there, listed in
/// both paths' histories.
#[test]
fn a_rename_within_one_shard_is_one_line_in_both_histories() {
    let (_d, ws) = workspace(&[("a.txt", "a")]);
    let c = ctx("t1", 1);
    let mate = shard_mate(&ws, "a.txt");
    let moved = apply(&ws, &c, rename("a.txt", &mate));
    ws.gate.flush().unwrap();
    let shard = ws.layout.path_index_shard(&p("a.txt").key());
    let text = std::fs::read_to_string(&shard).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let store = ws.gate.store();
    assert_eq!(store.path_history(&p("a.txt")).unwrap(), moved);
    assert_eq!(store.path_history(&p(&mate)).unwrap(), moved);
    assert_eq!(history_problems(&ws), 0);
    ws.gate
        .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(tree(&ws.workspace.root), files(&[("a.txt", "a")]));
}

/// Overwrites the payload of `hash`'s entry in the packs below `dir`.
fn corrupt_packed(dir: &std::path::Path, hash: &cocode_core::snapshot::ContentHash) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let mut bytes = std::fs::read(&path).unwrap();
        let (entries, _) = pack_entries(&bytes);
        let Some(payload) = entries
            .into_iter()
            .find(|(h, _)| *h == hash.as_bytes())
            .map(|(_, payload)| payload)
        else {
            continue;
        };
        bytes[payload].fill(b'x');
        std::fs::write(&path, bytes).unwrap();
        return;
    }
    panic!("no pack holds {hash}");
}

/// A loose blob (written by an earlier version, or too big to pack) that is
/// missing or damaged is counted the same way.
#[test]
fn the_integrity_checker_counts_missing_and_corrupt_loose_blobs() {
    let (_d, ws) = workspace(&[]);
    let c = ctx("t1", 1);
    let r = apply(&ws, &c, write("a.txt", b"content"));
    ws.gate.flush().unwrap();
    let hash = r[0].result().unwrap();
    let store = ws.gate.store();
    let packed = store.read_blob(&hash).unwrap();
    // Moved out of its pack into a loose file, damaged.
    store.remove_blob(&hash).unwrap();
    store.compact_packs().unwrap();
    let loose = ws.layout.blob_file(&hash);
    std::fs::create_dir_all(loose.parent().unwrap()).unwrap();
    std::fs::write(&loose, b"not gzip").unwrap();
    assert_eq!(packed, b"content");
    let report = HistoryIntegrityChecker::new(store).check().unwrap();
    assert_eq!(
        (report.missing_blobs, report.corrupt_blobs),
        (vec![], vec![hash])
    );
    std::fs::remove_file(&loose).unwrap();
    let report = HistoryIntegrityChecker::new(store).check().unwrap();
    assert_eq!(
        (report.missing_blobs, report.corrupt_blobs),
        (vec![hash], vec![])
    );
}

#[test]
fn the_integrity_checker_counts_missing_and_corrupt_blobs_and_human_edits() {
    let (_d, ws) = workspace(&[]);
    let c = ctx("t1", 1);
    let r = apply(&ws, &c, write("a.txt", b"content"));
    apply(&ws, &c, write("b.txt", b"other"));
    ws.gate.flush().unwrap();
    // Small blobs are packed: one goes from its pack, the other's payload
    // is overwritten in place.
    let store = ws.gate.store();
    store.remove_blob(&r[0].result().unwrap()).unwrap();
    let b_hash = cocode_core::snapshot::ContentHash::of(b"other");
    corrupt_packed(&ws.layout.packs_dir(), &b_hash);
    store.compact_packs().unwrap();
    std::fs::write(ws.workspace.root.join("b.txt"), b"edited by a person").unwrap();
    let report = HistoryIntegrityChecker::new(ws.gate.store())
        .check()
        .unwrap();
    assert_eq!(
        (
            report.missing_blobs,
            report.corrupt_blobs,
            report.current_differs,
            report.pending_journals.len()
        ),
        (
            vec![r[0].result().unwrap()],
            vec![b_hash],
            vec![p("b.txt")],
            0
        )
    );
}

#[test]
fn one_process_writes_a_workspace_and_another_is_told_who() {
    let (_d, ws) = workspace(&[("a.txt", "0")]);
    let held = ws.lock_for_writing("cocode task run --prompt x").unwrap();
    let other = OpenWorkspace::open(&ws.workspace.root).unwrap();
    let refused = other.lock_for_writing("cocode").unwrap_err();
    let holder = format!("pid {}: cocode task run --prompt x", std::process::id());
    assert_eq!(
        refused.to_string(),
        format!(
            "the workspace is open for writing in another cocode process ({holder}); close it there or wait until it ends"
        )
    );
    drop(held);
    let taken = other.lock_for_writing("cocode doctor").unwrap();
    assert_eq!(
        std::fs::read_to_string(other.layout.writer_lock()).unwrap(),
        format!("pid {}: cocode doctor", std::process::id())
    );
    drop(taken);
}

/// A workspace of two files and a task that changed one and made another.
fn a_task_of_two_writes() -> (tempfile::TempDir, OpenWorkspace, TaskContext) {
    let (dir, ws) = workspace(&[("a.txt", "version 0\n"), ("keep.txt", "kept")]);
    let c = ctx("t1", 1);
    apply(&ws, &c, write("a.txt", b"version 1\n"));
    apply(&ws, &c, write("new/b.txt", b"made by the task"));
    ws.gate.flush().unwrap();
    (dir, ws, c)
}

/// The workspace opened again and recovered, its history clean.
fn reopened(root: &std::path::Path) -> OpenWorkspace {
    let ws = OpenWorkspace::open(root).unwrap();
    ws.gate.recover().unwrap();
    assert_eq!(history_problems(&ws), 0);
    ws
}

/// [`a_task_of_two_writes`]'s task rolled back: the tree as it began, the
/// history still clean.
fn rolled_back_whole(ws: &OpenWorkspace, c: &TaskContext) {
    ws.gate
        .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    ws.gate.flush().unwrap();
    assert_eq!(
        tree(&ws.workspace.root),
        [("a.txt", "version 0\n"), ("keep.txt", "kept")]
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    );
    assert_eq!(history_problems(ws), 0);
}

/// A history whose pack an earlier version wrote — `CPK1` entries, each the
/// hash, a little-endian `u32` length and the blob gzip-compressed — opens,
/// checks clean and rolls back byte for byte from the old entries. (A pack
/// of both kinds is read, extended and compacted in `pack`'s unit tests.)
#[test]
fn a_history_packed_by_an_earlier_version_opens_and_rolls_back() {
    use std::io::Write as _;
    let (_d, ws, c) = a_task_of_two_writes();
    let root = ws.workspace.root.clone();
    let store = ws.gate.store();
    let hashes = [
        cocode_core::snapshot::ContentHash::of(b"version 0\n"),
        cocode_core::snapshot::ContentHash::of(b"version 1\n"),
        cocode_core::snapshot::ContentHash::of(b"made by the task"),
    ];
    // The earlier pack, exactly as its writer made it.
    let mut pack = Vec::new();
    for hash in &hashes {
        let bytes = store.read_blob(hash).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&bytes).unwrap();
        let payload = gz.finish().unwrap();
        pack.extend_from_slice(b"CPK1");
        pack.extend_from_slice(hash.as_bytes());
        pack.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_le_bytes());
        pack.extend_from_slice(&payload);
    }
    std::fs::remove_dir_all(ws.layout.packs_dir()).unwrap();
    std::fs::create_dir_all(ws.layout.packs_dir()).unwrap();
    // Numbered past the pack this process read: it meets the file as a
    // fresh process would.
    let pack_file = ws.layout.packs_dir().join("pack-000007.pack");
    std::fs::write(&pack_file, &pack).unwrap();
    drop(ws);
    let ws = reopened(&root);
    for hash in &hashes {
        assert!(ws.gate.store().read_blob(hash).is_ok(), "{hash}");
    }
    rolled_back_whole(&ws, &c);
    let after = std::fs::read(&pack_file).unwrap();
    assert_eq!(
        after, pack,
        "the old entries untouched, nothing new to store"
    );
}

/// A history written before blobs were packed — every blob a gzip file of
/// its own under `objects/aa/<hash>`, no `packs/` folder — opens, checks
/// clean and rolls back byte for byte; what the rollback stores is packed.
#[test]
fn a_history_of_loose_blobs_from_before_packs_opens_and_rolls_back() {
    use std::io::Write as _;
    let (_d, ws, c) = a_task_of_two_writes();
    let root = ws.workspace.root.clone();
    let store = ws.gate.store();
    let (hashes, _) = store.blob_names().unwrap();
    assert_eq!(hashes.len(), 3, "version 0, version 1 and b.txt");
    // The earlier layout, exactly as its writer made it.
    for hash in &hashes {
        let bytes = store.read_blob(hash).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&bytes).unwrap();
        let loose = ws.layout.blob_file(hash);
        std::fs::create_dir_all(loose.parent().unwrap()).unwrap();
        std::fs::write(&loose, gz.finish().unwrap()).unwrap();
    }
    std::fs::remove_dir_all(ws.layout.packs_dir()).unwrap();
    drop(ws);
    let ws = reopened(&root);
    rolled_back_whole(&ws, &c);
}

/// Each form a blob takes reads back whole: tiny content packed as it is,
/// text packed deflated, and content too big to pack as a gzip file of its
/// own that any gzip reader opens.
#[test]
fn a_blob_is_stored_as_it_is_deflated_or_loose_and_each_reads_back() {
    use std::io::Read as _;
    let (_d, ws) = workspace(&[]);
    let store = ws.gate.store();
    let tiny = b"ab".to_vec();
    let text = "a line of text that repeats\n".repeat(200).into_bytes();
    // Pseudo-random bytes deflate cannot shrink, past the pack's ceiling.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let big: Vec<u8> = (0..3 << 20)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect();
    let hashes: Vec<_> = [&tiny, &text, &big]
        .iter()
        .map(|bytes| store.put_blob(bytes).unwrap().0)
        .collect();
    let pack = std::fs::read(ws.layout.packs_dir().join("pack-000001.pack")).unwrap();
    let mut entry = vec![0xD0];
    entry.extend_from_slice(hashes[0].as_bytes());
    entry.push(2);
    entry.extend_from_slice(b"ab");
    assert_eq!(&pack[..entry.len()], &entry[..], "the tiny blob as it is");
    assert_eq!(pack[entry.len()], 0xD1, "the text deflated");
    assert_eq!(
        &pack[entry.len() + 1..entry.len() + 33],
        hashes[1].as_bytes()
    );
    assert!(pack.len() < entry.len() + 200, "{}", pack.len());
    let loose = ws.layout.blob_file(&hashes[2]);
    let mut unzipped = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&loose).unwrap())
        .read_to_end(&mut unzipped)
        .unwrap();
    assert!(
        unzipped == big,
        "the loose file is plain gzip of the content"
    );
    for (hash, bytes) in hashes.iter().zip([&tiny, &text, &big]) {
        assert!(store.read_blob(hash).unwrap() == *bytes);
    }
    assert_eq!(history_problems(&ws), 0);
}

/// A real history earlier versions wrote (`tests/golden/earlier-history`):
/// its first task by the version before packs (loose blobs, no stat
/// cache), its second by the version of the first pack entry kind (`CPK1`)
/// and the first form of the stat cache. It opens and checks clean, every
/// content its records name reads back, and the second task rolls back
/// byte for byte to bases the first version stored. (The first task then
/// stays as it is: the second changed its paths after it.)
#[test]
fn a_history_earlier_versions_wrote_opens_reads_and_rolls_back() {
    fn copy(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &to.join(entry.file_name()));
            } else {
                std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
            }
        }
    }
    let files = |pairs: &[(&str, &str)]| -> std::collections::BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    let golden =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/earlier-history/ws");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    copy(&golden, &root);
    let ws = reopened(&root);
    let store = ws.gate.store();
    let tasks = ["task-1796274787044-d6fd", "task-1796274991420-ee5a"]
        .map(|t| cocode_core::ids::TaskId::new(t).unwrap());
    let mut named = Vec::new();
    for task in &tasks {
        let records = store.snapshots_of_task(task).unwrap();
        assert!(!records.is_empty(), "{task}");
        for record in records {
            named.extend(record.base());
            named.extend(record.result());
        }
    }
    let text = |hash| String::from_utf8(store.read_blob(hash).unwrap()).unwrap();
    let mut contents: Vec<String> = named.iter().map(text).collect();
    contents.sort();
    contents.dedup();
    let main_first = "fn main() {\n    println!(\"hello, world\");\n}\n";
    let main_second = format!("{main_first}// the end\n");
    let mut expected = vec![
        "# Notes\n\n첫 줄\n",
        "# Notes\n\n첫 줄\n둘째 줄\n",
        "fn main() {\n    println!(\"hello\");\n}\n",
        main_first,
        &main_second,
        "made\n",
        "old\n",
        "pub fn two() -> u8 {\n    2\n}\n",
    ];
    expected.sort_unstable();
    assert_eq!(contents, expected);
    assert_eq!(
        tree(&root),
        files(&[
            ("docs/made/new.txt", "made\n"),
            ("docs/notes.md", "# Notes\n\n첫 줄\n둘째 줄\n"),
            ("keep.txt", "keep me\n"),
            ("src/lib.rs", "pub fn two() -> u8 {\n    2\n}\n"),
            ("src/main.rs", &main_second),
        ])
    );
    // The first form of the stat cache is read; a copy's stats differ, so
    // every file is read once more (five files and three folders).
    assert_eq!(ws.gate.begin_sweep().unwrap().files, 8);
    ws.gate
        .rollback(&tasks[1], &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    ws.gate.flush().unwrap();
    assert_eq!(
        tree(&root),
        files(&[
            ("docs/made/new.txt", "made\n"),
            ("docs/notes.md", "# Notes\n\n첫 줄\n"),
            ("keep.txt", "keep me\n"),
            ("src/main.rs", main_first),
        ])
    );
    assert_eq!(history_problems(&ws), 0);
}

/// (inode, birth time) of every file directly in `dir`: a file made anew
/// differs from a renamed one in both, even where the inode number is
/// reused.
#[cfg(unix)]
fn file_identities(
    dir: &std::path::Path,
) -> std::collections::BTreeSet<(u64, Option<std::time::SystemTime>)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let meta = std::fs::metadata(&p).unwrap();
            (meta.ino(), meta.created().ok())
        })
        .collect()
}

/// Each operation's journal is written into a settled one renamed away (a
/// spare), so a long run of operations moves names instead of making and
/// freeing a file each time; no spare is ever a pending journal. A spare
/// carries a journal only once a barrier made its rename durable. The
/// journals of a checkpoint's operations are settled together, so the
/// files that take turns are that many and the two written before the
/// first spares were durable.
#[cfg(unix)]
#[test]
fn settled_journals_become_spares_that_carry_the_next_ones() {
    let (_d, ws) = workspace(&[]);
    let c = ctx("t1", 1);
    let dir = ws.layout.write_journal_dir();
    let n = cocode_workspace::store::CHECKPOINT_OPERATIONS;
    for i in 0..n + 2 {
        apply(&ws, &c, write(&format!("f{i}.txt"), b"x"));
    }
    // The first n journals are spares; the last two are pending, written
    // before the spares' renames were durable.
    let files = file_identities(&dir);
    assert_eq!((files.len(), pending_journals(&dir).len()), (n + 2, 2));
    for i in n + 2..3 * n {
        apply(&ws, &c, write(&format!("f{i}.txt"), b"y"));
    }
    ws.gate.flush().unwrap();
    assert_eq!(file_identities(&dir), files);
    assert_eq!(pending_journals(&dir), Vec::<std::path::PathBuf>::new());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "abandoned")
        .collect();
    names.sort();
    let pid = std::process::id();
    assert_eq!(names.len(), n + 2);
    assert!(
        names
            .iter()
            .all(|n| n.starts_with(&format!(".spare-{pid}-")) && n.ends_with(".journal")),
        "{names:?}"
    );
    assert_eq!(history_problems(&ws), 0);
}

/// A spare another process left holds a whole, valid journal and more: it
/// is never read as one, and the journal written through it is cut to its
/// own bytes.
#[cfg(unix)]
#[test]
fn a_left_spare_is_never_replayed_and_carries_an_exact_journal() {
    let (_d, ws) = workspace(&[("a.txt", "old")]);
    let c = ctx("t1", 1);
    let dir = ws.layout.write_journal_dir();
    let first = apply(&ws, &c, write("a.txt", b"new"));
    let journal = pending_journals(&dir).into_iter().next().unwrap();
    let mut left = std::fs::read(&journal).unwrap();
    left.extend(std::iter::repeat_n(b' ', 10_000));
    ws.gate.flush().unwrap();
    let root = ws.workspace.root.clone();
    drop(ws);
    // The file changed since: replayed, the journal would block it.
    std::fs::write(root.join("a.txt"), b"third").unwrap();
    std::fs::write(dir.join(".spare-1-7.journal"), &left).unwrap();
    let spares = file_identities(&dir);
    assert_eq!(spares.len(), 2);

    let ws = OpenWorkspace::open(&root).unwrap();
    let report = ws.gate.recover().unwrap();
    assert_eq!(report, cocode_workspace::RecoveryReport::default());
    assert_eq!(
        ws.gate.store().snapshots_of_task(&c.task_id).unwrap(),
        first
    );
    let second = apply(&ws, &c, write("b.txt", b"b"));
    let pending = pending_journals(&dir);
    assert_eq!(pending.len(), 1);
    let written: cocode_workspace::WriteJournal =
        serde_json::from_slice(&std::fs::read(&pending[0]).unwrap()).unwrap();
    assert_eq!(written.records, second);
    // Both files are the spares that were there: nothing was made.
    assert_eq!(file_identities(&dir), spares);
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "third"
    );
}

/// Earlier versions kept each path's index in a file of its own
/// (`files/<key>.jsonl`) or a folder of its own
/// (`files/<key>/versions.jsonl`); such an index is read and appended to
/// where it is, and a path without one gets its shard.
#[test]
fn a_path_index_of_an_earlier_form_is_read_and_appended_to_where_it_is() {
    let (_d, ws) = workspace(&[("a.txt", "old"), ("c.txt", "old c")]);
    let c = ctx("t1", 1);
    let first = apply(&ws, &c, write("a.txt", b"1"));
    let c_first = apply(&ws, &c, write("c.txt", b"1"));
    ws.gate.flush().unwrap();
    // The indexes as an earlier version left them: no shard, one file per
    // path starting with the path's header.
    for shard in ws.gate.store().path_index_files().unwrap() {
        std::fs::remove_file(shard).unwrap();
    }
    let one_path_file = |path: &str, records: &[cocode_core::snapshot::EditSnapshot]| {
        let mut text = format!("{{\"path\":\"{path}\"}}\n");
        for r in records {
            text.push_str(&serde_json::to_string(r).unwrap());
            text.push('\n');
        }
        text
    };
    let (a_key, c_key) = (p("a.txt").key(), p("c.txt").key());
    let folder = ws.layout.folder_path_index(&a_key);
    std::fs::create_dir(folder.parent().unwrap()).unwrap();
    std::fs::write(&folder, one_path_file("a.txt", &first)).unwrap();
    let flat = ws.layout.path_index(&c_key);
    std::fs::write(&flat, one_path_file("c.txt", &c_first)).unwrap();
    let root = ws.workspace.root.clone();
    drop(ws);

    let (ws, _) = restart(&root);
    let second = apply(&ws, &c, write("a.txt", b"2"));
    let c_second = apply(&ws, &c, write("c.txt", b"2"));
    apply(&ws, &c, write("b.txt", b"b"));
    ws.gate.flush().unwrap();
    let store = ws.gate.store();
    assert_eq!(
        (
            store.path_index_file(&p("a.txt")),
            store.path_index_file(&p("c.txt")),
            store.path_index_file(&p("b.txt"))
        ),
        (
            folder.clone(),
            flat.clone(),
            ws.layout.path_index_shard(&p("b.txt").key())
        )
    );
    assert_eq!(
        std::fs::read_to_string(&folder).unwrap(),
        one_path_file("a.txt", &[first.clone(), second.clone()].concat())
    );
    assert_eq!(
        std::fs::read_to_string(&flat).unwrap(),
        one_path_file("c.txt", &[c_first.clone(), c_second.clone()].concat())
    );
    assert_eq!(
        store.path_history(&p("a.txt")).unwrap(),
        [first, second.clone()].concat()
    );
    assert_eq!(
        store.last_snapshot_of_path(&p("a.txt")).unwrap(),
        Some(second[0].clone())
    );
    assert_eq!(
        store.last_snapshot_of_path(&p("c.txt")).unwrap(),
        Some(c_second[0].clone())
    );
    assert_eq!(history_problems(&ws), 0);
    ws.gate
        .rollback(&c.task_id, &cocode_workspace::RollbackQuery::TaskStart)
        .unwrap();
    assert_eq!(
        tree(&ws.workspace.root),
        files(&[("a.txt", "old"), ("c.txt", "old c")])
    );
}

/// A journal whose carried blob does not match its hash is reported as
/// corrupt and kept, as one that does not parse is.
#[test]
fn a_journal_carrying_a_blob_unlike_its_hash_is_reported_and_kept() {
    let (_d, ws) = workspace(&[("a.txt", "old")]);
    let c = ctx("t1", 1);
    apply(&ws, &c, write("a.txt", b"new"));
    let journal = pending_journals(&ws.layout.write_journal_dir()).remove(0);
    let mut parsed: cocode_workspace::WriteJournal =
        serde_json::from_slice(&std::fs::read(&journal).unwrap()).unwrap();
    let (old, new) = (
        cocode_core::snapshot::ContentHash::of(b"old"),
        cocode_core::snapshot::ContentHash::of(b"new"),
    );
    let mut carried: Vec<_> = parsed.blobs.iter().map(|b| b.hash).collect();
    carried.sort();
    let mut expected = vec![old, new];
    expected.sort();
    assert_eq!(carried, expected);
    let mut tampered = cocode_workspace::store::JournalBlob::of(b"newer");
    tampered.hash = new;
    parsed.blobs = vec![cocode_workspace::store::JournalBlob::of(b"old"), tampered];
    let bytes = serde_json::to_vec(&parsed).unwrap();
    let root = ws.workspace.root.clone();
    drop(ws);
    std::fs::write(&journal, &bytes).unwrap();

    let (_ws, report) = restart(&root);
    assert_eq!(corrupt_paths(&report), vec![journal.clone()]);
    assert_eq!(std::fs::read(&journal).unwrap(), bytes);
}
