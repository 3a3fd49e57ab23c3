//! The barrier flushes only the files and folders the gate lists, so a
//! write the gate forgets to list would be visible before it is durable.
//! This audit watches every barrier of a session of real operations and
//! checks that everything written since the previous one is listed: each
//! file whose content is new (a new inode, or a known one with another size
//! or modification time) and each folder whose entries changed. The
//! lists are kept on every system, so the audit here on Linux (where the
//! barrier is one `syncfs`) checks the lists macOS and Windows sync.
#![cfg(unix)]
#![expect(
    clippy::disallowed_methods,
    reason = "the audit plays the person and the commands writing beside the gate"
)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use cocode_core::gate::{GateOp, TaskContext, WorkspaceFileGate as _};
use cocode_core::ids::{AttemptNo, SessionId, TaskId};
use cocode_core::path::NormalizedPath;
use pretty_assertions::assert_eq;

use crate::disk::BARRIER_WATCH;
use crate::{OpenWorkspace, RollbackQuery};

/// What the tree under the workspace root holds at one moment.
#[derive(Default, Clone)]
struct Tree {
    /// Every regular file's inode, by path.
    files: BTreeMap<PathBuf, u64>,
    /// Every file's content stamp (size, modification time), by inode.
    content: BTreeMap<u64, (u64, i64, i64)>,
    /// Every folder's entries: name and inode (a rename over a name
    /// changes the inode).
    dirs: BTreeMap<PathBuf, BTreeMap<String, u64>>,
}

impl Tree {
    fn of(root: &Path) -> Self {
        let mut tree = Self::default();
        tree.walk(root);
        tree
    }

    fn walk(&mut self, dir: &Path) {
        let mut names = BTreeMap::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            names.insert(entry.file_name().to_string_lossy().into_owned(), meta.ino());
            if meta.is_dir() {
                self.walk(&path);
            } else if meta.is_file() {
                self.files.insert(path, meta.ino());
                self.content
                    .insert(meta.ino(), (meta.size(), meta.mtime(), meta.mtime_nsec()));
            }
        }
        self.dirs.insert(dir.to_path_buf(), names);
    }
}

/// Files that are not the barrier's to make durable: state kept without
/// syncing by design (lost, it costs a full scan or a post-mortem note) and
/// the writer lock.
fn exempt(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    ["sweep.cache", "edit_locks.json", "writer.lock", "clock"]
        .iter()
        .any(|n| name.starts_with(n))
}

/// The audit of the barriers on this thread.
struct Audit {
    /// What the barriers were not given, one line each.
    missed: Rc<RefCell<Vec<String>>>,
    /// The tree at the last barrier.
    last: Rc<RefCell<Tree>>,
    barriers: Rc<RefCell<usize>>,
}

impl Audit {
    /// Changes made outside the gate (a person's) are not the barrier's.
    fn forget_changes(&self, root: &Path) {
        *self.last.borrow_mut() = Tree::of(root);
    }
}

fn watch(root: &Path) -> Audit {
    let audit = Audit {
        missed: Rc::default(),
        last: Rc::new(RefCell::new(Tree::of(root))),
        barriers: Rc::default(),
    };
    let root = root.to_path_buf();
    let out = Rc::clone(&audit.missed);
    let last = Rc::clone(&audit.last);
    let barriers = Rc::clone(&audit.barriers);
    BARRIER_WATCH.with(|w| {
        *w.borrow_mut() = Some(Box::new(move |files, dirs| {
            *barriers.borrow_mut() += 1;
            let now = Tree::of(&root);
            let before = last.replace(now.clone());
            for (path, ino) in &now.files {
                let new = before.content.get(ino) != now.content.get(ino);
                if new && !files.contains(path) && !exempt(path) {
                    out.borrow_mut().push(format!("file {}", path.display()));
                }
            }
            for (dir, names) in &now.dirs {
                let old = before.dirs.get(dir).cloned().unwrap_or_default();
                let changed = names
                    .iter()
                    .chain(&old)
                    .any(|(n, _)| old.get(n) != names.get(n) && !exempt(Path::new(n)));
                if changed && !dirs.contains(dir) {
                    out.borrow_mut().push(format!("folder {}", dir.display()));
                }
            }
        }));
    });
    audit
}

fn p(s: &str) -> NormalizedPath {
    NormalizedPath::try_from(s.to_owned()).unwrap()
}

fn ctx(task: &str, attempt: u32) -> TaskContext {
    TaskContext {
        task_id: TaskId::new(task).unwrap(),
        session_id: SessionId::new(format!("{task}-session")).unwrap(),
        attempt_no: AttemptNo(attempt),
    }
}

fn write(path: &str, bytes: &[u8]) -> GateOp {
    GateOp::Write {
        path: p(path),
        bytes: bytes.to_vec(),
    }
}

/// Bytes deflate cannot shrink (a blob too big for a pack stays loose).
fn noise(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

#[test]
fn every_barrier_lists_everything_written_since_the_one_before() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("old.txt"), "old\n").unwrap();
    let ws = OpenWorkspace::open(&root).unwrap();
    let root = ws.workspace.root.clone();
    let audit = watch(&root);

    let gate = &ws.gate;
    let c = ctx("t1", 1);
    // New folders, a packed and a loose blob, a replace, a move, a removal.
    gate.apply(&c, write("deep/er/new.rs", b"pub fn f() {}\n"))
        .unwrap();
    gate.apply(&c, write("big.bin", &noise(1_200_000))).unwrap();
    gate.apply(&c, write("src/lib.rs", b"fn main() { f() }\n"))
        .unwrap();
    gate.apply(
        &c,
        GateOp::Rename {
            from: p("old.txt"),
            to: p("moved/old.txt"),
        },
    )
    .unwrap();
    gate.apply(&c, GateOp::Delete { path: p("big.bin") })
        .unwrap();
    gate.apply(
        &c,
        GateOp::Batch {
            ops: (0..40)
                .map(|n| write(&format!("batch/{}/f{n}.txt", n % 5), b"x"))
                .collect(),
        },
    )
    .unwrap();
    // A person's change, recorded by the sweep around a command.
    gate.begin_sweep().unwrap();
    std::fs::write(root.join("src/lib.rs"), "// by hand\n").unwrap();
    std::fs::create_dir_all(root.join("out")).unwrap();
    std::fs::write(root.join("out/gen.txt"), "generated\n").unwrap();
    audit.forget_changes(&root);
    gate.end_sweep(&c).unwrap();
    gate.flush().unwrap();
    // Writes after a flush reuse a settled journal's file.
    gate.apply(&ctx("t1", 2), write("later.txt", b"later\n"))
        .unwrap();
    // A folder the gate made durable, removed and made again by the next
    // write: its new entry is synced too.
    let other = ctx("t2", 1);
    gate.apply(&other, write("tmp/x/y.txt", b"y\n")).unwrap();
    gate.flush().unwrap();
    std::fs::remove_dir_all(root.join("tmp")).unwrap();
    audit.forget_changes(&root);
    gate.apply(&other, write("tmp/x/z.txt", b"z\n")).unwrap();
    gate.rollback(&c.task_id, &RollbackQuery::TaskStart)
        .unwrap();
    gate.flush().unwrap();

    BARRIER_WATCH.with(|w| w.borrow_mut().take());
    assert_eq!(audit.missed.borrow().clone(), Vec::<String>::new());
    // Every operation above had its barrier (the batch and the sweep one
    // each), and so did the rollback and the flushes.
    assert!(
        *audit.barriers.borrow() >= 10,
        "{} barriers",
        audit.barriers.borrow()
    );
}

#[test]
fn a_settled_journal_is_reused_only_once_its_rename_away_is_durable() {
    use cocode_core::ids::{OpId, Timestamp};

    use crate::store::{HistoryStore, WRITE_JOURNAL_VERSION, WriteJournal};

    let dir = tempfile::tempdir().unwrap();
    let store = HistoryStore::new(crate::Layout::new(dir.path()));
    std::fs::create_dir_all(store.layout().write_journal_dir()).unwrap();
    let journal = |n: u32| WriteJournal {
        blobs: Vec::new(),
        version: WRITE_JOURNAL_VERSION,
        op_id: OpId::new(format!("w{n:012x}-1-0")).unwrap(),
        created_at: Timestamp::from_millis(i64::from(n)),
        records: Vec::new(),
        staged: Vec::new(),
    };
    let inode = |path: &Path| std::fs::metadata(path).unwrap().ino();
    let first = inode(&store.write_journal(&journal(1)).unwrap());
    let second = inode(&store.write_journal(&journal(2)).unwrap());
    // The first is retired and its folder synced by a barrier; the second
    // is retired after it.
    store.retire_write_journal(&journal(1).op_id).unwrap();
    store.spares_made_durable();
    store.retire_write_journal(&journal(2).op_id).unwrap();
    // The next journal takes the durable spare, never the newer one.
    let third = inode(&store.write_journal(&journal(3)).unwrap());
    assert_eq!(third, first);
    // With only the newer one left, the next journal is a new file.
    let fourth = inode(&store.write_journal(&journal(4)).unwrap());
    assert!(fourth != second && fourth != first);
    let mut names: Vec<String> = std::fs::read_dir(store.layout().write_journal_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // The second journal's spare waits for the next barrier.
    let spare = names.remove(0);
    assert!(spare.starts_with(".spare-"), "{spare}");
    assert_eq!(
        names,
        [
            format!("{}.json", journal(3).op_id.as_str()),
            format!("{}.json", journal(4).op_id.as_str()),
        ]
    );
    assert_eq!(
        inode(&store.layout().write_journal_dir().join(spare)),
        second
    );
}
