//! The disk layer under the gate and the store: every create, write, rename
//! and removal of a workspace file or of `.cocode/` ends up in this
//! module's files (the single-writer rule; `boundaries.yaml` lists every
//! file of the product that writes).
//!
//! Two kinds of writes live here:
//! - `.cocode/` state (blobs, indexes, journals, config): plain paths, since
//!   agents cannot write under `.cocode/` and the folder is ours
//!   ([`state`]);
//! - workspace files, through [`SafeRoot`]: on Unix every directory on the
//!   way is opened relative to its parent with `O_NOFOLLOW`, so a directory
//!   swapped for a symlink between the policy check and the write makes the
//!   operation fail instead of writing outside the workspace.
//!
//! Durability: writes are not synced one by one. The gate collects what it
//! wrote and calls [`barrier`] once per operation, after the blobs, the
//! journal and the staged file contents are written and before the first
//! visible change.
#![expect(
    clippy::disallowed_methods,
    reason = "the disk layer of the workspace gate and store: the single writer"
)]

mod reach;
mod regular;
mod replace;
mod safe_root;
mod stamp;
mod state;

pub(crate) use reach::{Reach, reach, reaches_deep, too_long};
pub(crate) use regular::{EntryKind, open_regular_file, read_all};
pub(crate) use safe_root::{Entry, SafeRoot, Staged};
pub(crate) use stamp::{Stamp, fs_clock};
#[cfg(all(test, unix))]
pub(crate) use state::BARRIER_WATCH;
pub(crate) use state::{
    EntryId, FileLock, LockRefused, append, append_at, barrier, create_dir_all, create_new_empty,
    entry_id, remove_empty_dir, remove_file, rename, repair_torn_tail, try_lock_file, write_atomic,
    write_atomic_reusing, write_atomic_synced,
};

#[cfg(test)]
mod tests {
    use super::replace::{ReplaceStep, next_replace_step};
    use super::*;
    use pretty_assertions::assert_eq;
    use std::fs;

    #[cfg(unix)]
    #[test]
    fn a_stamp_is_settled_only_when_it_predates_the_file_systems_clock() {
        let dir = tempfile::tempdir().unwrap();
        let safe = SafeRoot::open(dir.path()).unwrap();
        fs::write(dir.path().join("f"), "one").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let clock = fs_clock(&dir.path().join("clock")).unwrap();
        let before = safe.stamp(&[], "f").unwrap().unwrap();
        // Rewritten after the reading: same size, the old mtime put back.
        let mtime = fs::metadata(dir.path().join("f"))
            .unwrap()
            .modified()
            .unwrap();
        fs::write(dir.path().join("f"), "two").unwrap();
        fs::File::options()
            .write(true)
            .open(dir.path().join("f"))
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let after = safe.stamp(&[], "f").unwrap().unwrap();
        assert_eq!(
            (
                before.settled_before(&clock),
                after.settled_before(&clock),
                before == after
            ),
            (true, false, false)
        );
        // A later reading of the clock is later.
        std::thread::sleep(std::time::Duration::from_millis(30));
        let later = fs_clock(&dir.path().join("clock")).unwrap();
        assert!(later.ctime > clock.ctime && after.settled_before(&later));
    }

    #[cfg(unix)]
    #[test]
    fn folders_open_only_without_symlinks_on_the_way_whichever_way_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        let outside = dir.path().join("outside");
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/f.txt"), "f").unwrap();
        fs::create_dir_all(outside.join("b")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("inner")).unwrap();
        fs::write(root.join("file"), "x").unwrap();
        let safe = SafeRoot::open(&root).unwrap();
        let seg = |p: &str| p.split('/').map(str::to_owned).collect::<Vec<_>>();
        let found: Vec<_> = ["a/b", "link/b", "inner/b", "a/missing", "file/b"]
            .into_iter()
            .map(|p| (p, safe.both_ways(&seg(p))))
            .collect();
        let names = Ok(vec!["f.txt".to_owned()]);
        let symlink: Result<Vec<String>, _> = Err(std::io::ErrorKind::InvalidInput);
        let want = [
            ("a/b", names),
            ("link/b", symlink.clone()),
            ("inner/b", symlink.clone()),
            ("a/missing", Err(std::io::ErrorKind::NotFound)),
            ("file/b", symlink),
        ];
        let both: Vec<_> = want
            .into_iter()
            .map(|(p, r)| (p, (cfg!(target_os = "linux").then(|| r.clone()), r)))
            .collect();
        assert_eq!(found, both);
    }

    #[test]
    fn replace_retries_only_transient_windows_errors_and_never_read_only_targets() {
        let steps: Vec<ReplaceStep> = (0..6)
            .map(|a| next_replace_step(a, Some(32), false))
            .collect();
        assert_eq!(
            steps,
            vec![
                ReplaceStep::RetryAfterMs(10),
                ReplaceStep::RetryAfterMs(30),
                ReplaceStep::RetryAfterMs(80),
                ReplaceStep::RetryAfterMs(180),
                ReplaceStep::GiveUp,
                ReplaceStep::GiveUp,
            ]
        );
        assert_eq!(next_replace_step(0, Some(5), true), ReplaceStep::GiveUp);
        assert_eq!(next_replace_step(0, Some(2), false), ReplaceStep::GiveUp);
        assert_eq!(next_replace_step(0, None, false), ReplaceStep::GiveUp);
        assert_eq!(
            next_replace_step(1, Some(33), false),
            ReplaceStep::RetryAfterMs(30)
        );
    }

    #[test]
    fn a_torn_tail_is_cut_back_and_a_whole_last_record_gets_its_newline() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("index.jsonl");
        let whole = |tail: &[u8]| serde_json::from_slice::<serde_json::Value>(tail).is_ok();
        fs::write(&p, b"{\"a\":1}\n{\"b\":").unwrap();
        assert!(repair_torn_tail(&p, whole).unwrap());
        append(&p, Some(b"{\"h\":0}\n"), b"{\"c\":3}\n").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"c\":3}\n");
        assert!(!repair_torn_tail(&p, whole).unwrap());
        // A whole record that lacks only its newline is kept.
        fs::write(&p, b"{\"a\":1}\n{\"b\":2}").unwrap();
        assert!(repair_torn_tail(&p, whole).unwrap());
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"b\":2}\n");
    }

    #[test]
    fn an_append_creates_the_folder_and_heads_only_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("files/k/versions.jsonl");
        append(&p, Some(b"{\"path\":\"a\"}\n"), b"1\n").unwrap();
        append(&p, Some(b"{\"path\":\"a\"}\n"), b"2\n").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"path\":\"a\"}\n1\n2\n");
        // A file left empty (created, nothing written) still gets its header.
        let empty = dir.path().join("files/e/versions.jsonl");
        fs::create_dir_all(empty.parent().unwrap()).unwrap();
        fs::write(&empty, b"").unwrap();
        append(&empty, Some(b"{\"path\":\"e\"}\n"), b"1\n").unwrap();
        assert_eq!(fs::read_to_string(&empty).unwrap(), "{\"path\":\"e\"}\n1\n");
    }
}
