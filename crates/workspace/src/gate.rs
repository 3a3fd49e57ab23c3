//! The workspace gate: the one write path for agent edits (C-02 — there is
//! no agent edit path that leaves no `EditSnapshot`).
//!
//! Every operation runs inside one serial section and follows the
//! write-commit protocol; the order is the contract:
//! 1. reserve seq and check attempt monotonicity (failure changes nothing);
//! 2. store the new base and result blobs too large for the journal;
//! 3. write the journal `journal/writes/<op_id>.json`, carrying the records
//!    and the other new blobs — from here the edit is recoverable;
//! 4. stage the new contents next to their targets, make steps 2–4 durable
//!    with one barrier, then apply (atomic rename, unlink, rename);
//! 5. hold the records and the journal's blobs in the store
//!    ([`HistoryStore::hold`]): every read sees them; a checkpoint writes
//!    them to the indexes and packs once [`crate::store::CHECKPOINT_OPERATIONS`]
//!    operations are held, before any read that does not see held records,
//!    at the end of a sweep and at [`Gate::flush`];
//! 6. retire the journal — after the first barrier after its checkpoint,
//!    which makes the checkpoint and the step 4 rename durable; until then a
//!    leftover journal is simply "complete" for recovery, which writes what
//!    it carries to the indexes and packs. [`Gate::flush`] checkpoints and
//!    runs that barrier on demand (shutdown, review).
//!
//! So an operation touches two files of the history, its journal and the
//! journal folder, instead of five (journal, pack, task index, path index,
//! folder): the appends of many operations share a checkpoint's barrier.
//!
//! A batch (`GateOp::Batch`) is one operation: its items are planned
//! together, refused or held together, and share one journal and one
//! barrier.
//!
//! Recovery runs before the first operation of a gate (so a late or missing
//! startup hook cannot let an agent write into an unrecovered state) and
//! immediately after a failure in steps 4–5.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{
    GateError, GateOp, GateOutcome, PendingChange, StoreError, TaskContext, WorkspaceFileGate,
};
use cocode_core::ids::{AttemptNo, OpId, Seq, SnapshotId, TaskId, Timestamp};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{
    ContentHash, EditSnapshot, EditSnapshotParts, PathTransition, SnapshotOrigin, Unkept,
};
use cocode_core::workspace::RetentionConfig;

use crate::disk::{self, Entry, EntryKind, SafeRoot, Staged, Stamp};
use crate::layout::Layout;
use crate::parallel::{by_folder, folder_of, lock_ignoring_poison, parallel_map};
use crate::policy::{PathPolicy, Resolved, TestPatterns};
use crate::retention::{self, RetentionPlan, RetentionTrigger, TaskHistory, TaskLife};
use crate::rollback::{self, RollbackAvailability, RollbackError, RollbackQuery, RollbackTarget};
use crate::store::{
    HELD_BLOB_MAX, HistoryStore, JOURNAL_BLOBS_MAX, JournalBlob, ROLLBACK_JOURNAL_VERSION,
    RetentionMarker, RollbackItem, RollbackJournal, WRITE_JOURNAL_VERSION, WriteJournal,
};
use crate::sweep::{StatCache, SweepLimits};

/// What startup (or lazy) recovery found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Journals whose records were all settled (completed or dropped) and removed.
    pub settled_journals: Vec<OpId>,
    pub records_completed: usize,
    pub records_dropped: usize,
    /// Index lines of dropped records that had reached the disk before the
    /// change they record did; removed.
    pub index_lines_removed: usize,
    /// Paths left in neither their base nor their result state; blocked
    /// (`WORKSPACE_RECOVERY_PENDING`) until a person abandons the journal.
    pub unresolved: Vec<(OpId, NormalizedPath)>,
    /// Journals that cannot be read: reported, never deleted.
    pub corrupt_journals: Vec<(PathBuf, String)>,
    pub staged_files_removed: usize,
    pub torn_index_tails_cut: usize,
    /// Interrupted rollbacks that were finished.
    pub rollbacks_replayed: Vec<OpId>,
    /// Interrupted rollbacks stopped at a path in neither its prior nor its
    /// target state; their paths stay excluded until a person abandons them.
    pub rollbacks_incomplete: Vec<(OpId, NormalizedPath)>,
}

/// How recovery settles a journal's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The change is on disk: its index lines are completed.
    Complete,
    /// Nothing of it happened: it leaves no index line.
    Dropped,
    /// The disk shows neither: its paths are blocked.
    Unresolved,
}

/// Where a task's numbering stands.
#[derive(Debug, Clone, Copy)]
struct TaskCursor {
    last_seq: Option<Seq>,
    last_attempt: AttemptNo,
}

struct GateState {
    recovered: bool,
    /// Paths of unresolved write journals.
    blocked: BTreeMap<NormalizedPath, OpId>,
    /// Paths of a running or interrupted rollback.
    exclusion: BTreeMap<NormalizedPath, OpId>,
    tasks: HashMap<TaskId, TaskCursor>,
    /// Numbering held by unresolved journals, so new records never reuse it.
    held_by_journals: HashMap<TaskId, TaskCursor>,
    /// Committed operations whose journals go after the next barrier.
    settled_unsynced: Vec<OpId>,
    /// Checkpointed operations the next barrier makes durable: then their
    /// journals are settled.
    checkpointed_unsynced: Vec<OpId>,
    /// Finished rollbacks whose journals go after the next barrier.
    rollbacks_unsynced: Vec<OpId>,
    /// Files written and folders changed since the last barrier.
    unsynced_files: BTreeSet<PathBuf>,
    unsynced_dirs: BTreeSet<PathBuf>,
    /// Folders and appended files whose entry was looked at since the last
    /// barrier, with their identity then (see [`disk::entry_id`]).
    entries_seen: HashMap<PathBuf, Option<disk::EntryId>>,
    /// Folders and appended files whose entry in their folder a barrier
    /// made durable, with their identity then: while it is the same, their
    /// folder need not be synced for them.
    durable_entries: HashMap<PathBuf, disk::EntryId>,
    sweep: StatCache,
    /// What the last scan of the sweep did.
    last_scan: crate::sweep::SweepStats,
    /// The version-control metadata the workspace held when the sweep
    /// began (`metadata_census`), or `None` when it was too large to count.
    metadata_before: Option<BTreeSet<NormalizedPath>>,
}

/// Who may have written the workspace between the two scans of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepWriters {
    /// Anyone (an agent writing files itself, the person, an unconfined
    /// command): the scan after stats every file.
    Anyone,
    /// Only processes confined so that they can neither make hard links
    /// nor open files by handle (Linux: Landlock with cocode's seccomp
    /// filter, as agent commands and ACP agents run): every change they
    /// make is reported by the sweep's watcher or caught by its fallback
    /// rules.
    ConfinedCommands,
}

/// One change the gate will make on disk.
#[derive(Debug)]
enum Action {
    Put { target: Resolved, bytes: Vec<u8> },
    Remove { target: Resolved },
    Move { from: Resolved, to: Resolved },
}

/// Where an action's new content is staged: (folder, target name, temp name).
type StagedName = (Vec<String>, String, String);

/// One recorded change: a path's before/after, or a rename.
#[derive(Debug, Clone)]
struct Change {
    path: NormalizedPath,
    previous_path: Option<NormalizedPath>,
    base: Option<ContentHash>,
    result: Option<ContentHash>,
    /// Sides recorded by hash only (the sweep's files above the ceiling).
    unkept: Unkept,
}

/// A checked operation: the records it will write and the actions behind them.
#[derive(Debug, Default)]
struct Plan {
    changes: Vec<Change>,
    actions: Vec<Action>,
    /// Contents to store as blobs before anything is touched.
    blobs: Vec<Vec<u8>>,
    /// Folders emptied by a directory delete or rename, deepest first.
    emptied_dirs: Vec<(Vec<String>, String)>,
    /// A removal of version-control metadata an agent command made
    /// (`Gate::remove_made_metadata`), the one change there planned.
    metadata_removal: bool,
}

impl Plan {
    fn transitions(&self) -> Vec<PathTransition> {
        let mut out = Vec::new();
        for Change {
            path,
            previous_path,
            base,
            result,
            ..
        } in &self.changes
        {
            match previous_path {
                Some(from) => {
                    out.push(PathTransition {
                        path: from.clone(),
                        before: *base,
                        after: None,
                    });
                    out.push(PathTransition {
                        path: path.clone(),
                        before: None,
                        after: *result,
                    });
                }
                None => out.push(PathTransition {
                    path: path.clone(),
                    before: *base,
                    after: *result,
                }),
            }
        }
        out
    }
}

static OP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn now() -> Timestamp {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    Timestamp::from_millis(ms)
}

/// A fresh operation id; ids sort by creation time.
fn new_op_id(ts: Timestamp) -> Result<OpId, GateError> {
    let n = OP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let id = format!("w{:012x}-{:x}-{n:x}", ts.as_millis(), std::process::id());
    OpId::new(id).map_err(|e| internal("reserve", "", &e.to_string()))
}

/// Refuses a batch in which two items touch the same path or one item's
/// path contains another's: every item is planned against the disk as it is
/// before the batch, so items must not see each other's effects.
fn disjoint(ops: &[GateOp]) -> Result<(), GateError> {
    let mut owner: HashMap<&str, usize> = HashMap::new();
    for (n, op) in ops.iter().enumerate() {
        for path in op.touched_paths() {
            match owner.insert(path.as_str(), n) {
                Some(other) if other != n => {
                    return Err(refuse(
                        WorkspaceErrorCode::FileConflict,
                        "batch",
                        path,
                        "two items of one batch touch this path",
                    ));
                }
                _ => {}
            }
        }
    }
    for (n, op) in ops.iter().enumerate() {
        for path in op.touched_paths() {
            let key = path.as_str();
            let inside_another = key
                .match_indices('/')
                .any(|(i, _)| owner.get(&key[..i]).is_some_and(|&o| o != n));
            if inside_another {
                return Err(refuse(
                    WorkspaceErrorCode::FileConflict,
                    "batch",
                    path,
                    "another item of the batch works on a folder containing this path",
                ));
            }
        }
    }
    Ok(())
}

fn internal(operation: &'static str, path: &str, message: &str) -> GateError {
    GateError {
        code: WorkspaceErrorCode::PathNotWritable,
        operation,
        path: path.to_owned(),
        message: message.to_owned(),
        io_kind: None,
    }
}

/// The disk failed under the history or a sync: retryable.
fn io_failed(operation: &'static str, message: &str, io_kind: Option<io::ErrorKind>) -> GateError {
    GateError {
        code: WorkspaceErrorCode::IoFailed,
        operation,
        path: String::new(),
        message: message.to_owned(),
        io_kind,
    }
}

/// Agents write no version-control metadata, at any depth, by the path
/// they named or by the real one it resolves to: a hook or a configuration
/// (`core.fsmonitor`, a filter driver) written there runs in the person's
/// own git later, outside any sandbox. The person's own saves are not
/// judged here.
fn outside_metadata(
    operation: &'static str,
    asked: &NormalizedPath,
    target: &Resolved,
) -> Result<(), GateError> {
    if asked.is_in_version_control_metadata() || target.path.is_in_version_control_metadata() {
        return Err(refuse(
            WorkspaceErrorCode::PathNotWritable,
            operation,
            asked,
            "version-control metadata (.git and the like) is the person's: a hook or setting written there would run in their own git, outside any sandbox",
        ));
    }
    Ok(())
}

fn refuse(
    code: WorkspaceErrorCode,
    operation: &'static str,
    path: &NormalizedPath,
    message: &str,
) -> GateError {
    GateError {
        code,
        operation,
        path: path.as_str().to_owned(),
        message: message.to_owned(),
        io_kind: None,
    }
}

fn store_failed(operation: &'static str, e: &StoreError) -> GateError {
    let kind = match e {
        StoreError::Io { kind, .. } => *kind,
        _ => None,
    };
    io_failed(operation, &format!("history store failed: {e}"), kind)
}

/// Maps a disk error of an operation on `path` to a stable code.
fn disk_failed(operation: &'static str, path: &NormalizedPath, e: &io::Error) -> GateError {
    let code = match e.kind() {
        io::ErrorKind::NotFound => WorkspaceErrorCode::FileNotFound,
        io::ErrorKind::AlreadyExists => WorkspaceErrorCode::FileConflict,
        // The path itself is the problem: a link or a non-folder on the
        // way, no permission, a read-only volume.
        io::ErrorKind::InvalidInput
        | io::ErrorKind::PermissionDenied
        | io::ErrorKind::ReadOnlyFilesystem => WorkspaceErrorCode::PathNotWritable,
        // The disk failed (full, an I/O error, a failed sync): the same
        // call may work later.
        _ => WorkspaceErrorCode::IoFailed,
    };
    GateError {
        io_kind: Some(e.kind()),
        ..refuse(code, operation, path, &e.to_string())
    }
}

/// The gate over one open workspace.
pub struct Gate {
    layout: Layout,
    store: HistoryStore,
    policy: PathPolicy,
    tests: TestPatterns,
    disk: SafeRoot,
    sweep_limits: SweepLimits,
    state: Mutex<GateState>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("root", &self.layout.workspace_root())
            .finish_non_exhaustive()
    }
}

impl Gate {
    /// A gate over the canonical `layout` root. Nothing is recovered yet:
    /// call [`Gate::recover`] at startup; the first operation does it anyway.
    pub fn new(layout: Layout, policy: PathPolicy, tests: TestPatterns) -> io::Result<Self> {
        let disk = SafeRoot::open(layout.workspace_root())?;
        let mut sweep = StatCache::default();
        sweep.set_options(policy.options());
        Ok(Self {
            store: HistoryStore::new(layout.clone()),
            layout,
            policy,
            tests,
            disk,
            sweep_limits: SweepLimits::default(),
            state: Mutex::new(GateState {
                recovered: false,
                blocked: BTreeMap::new(),
                exclusion: BTreeMap::new(),
                tasks: HashMap::new(),
                metadata_before: None,
                held_by_journals: HashMap::new(),
                settled_unsynced: Vec::new(),
                checkpointed_unsynced: Vec::new(),
                rollbacks_unsynced: Vec::new(),
                unsynced_files: BTreeSet::new(),
                unsynced_dirs: BTreeSet::new(),
                entries_seen: HashMap::new(),
                durable_entries: HashMap::new(),
                sweep,
                last_scan: crate::sweep::SweepStats::default(),
            }),
        })
    }

    /// Replaces the sweep's size and count limits.
    #[must_use]
    pub fn with_sweep_limits(mut self, limits: SweepLimits) -> Self {
        self.sweep_limits = limits;
        self
    }

    /// Whether `path` matches the workspace's test patterns (an agent's
    /// change to it is held for a person).
    pub fn is_test_file(&self, path: &NormalizedPath) -> bool {
        self.tests.is_protected(path)
    }

    pub fn store(&self) -> &HistoryStore {
        &self.store
    }

    pub fn policy(&self) -> &PathPolicy {
        &self.policy
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        // A panic inside the serial section leaves the disk in a state
        // recovery understands; keep serving rather than poisoning the gate.
        lock_ignoring_poison(&self.state)
    }

    /// Reads a workspace file through the one safe read path
    /// ([`crate::read`]); `None` when nothing is there.
    pub fn read_file(
        &self,
        operation: &'static str,
        path: &NormalizedPath,
    ) -> Result<Option<Vec<u8>>, GateError> {
        crate::read::read_file(&self.policy, &self.disk, operation, path)
    }

    /// Paths blocked by unresolved write journals.
    pub fn blocked_paths(&self) -> Vec<(NormalizedPath, OpId)> {
        self.lock()
            .blocked
            .iter()
            .map(|(p, o)| (p.clone(), o.clone()))
            .collect()
    }

    /// Runs recovery now (idempotent; the first gate operation also runs it).
    pub fn recover(&self) -> Result<RecoveryReport, StoreError> {
        let mut st = self.lock();
        self.recover_locked(&mut st)
    }

    /// Makes committed operations durable and removes their journals.
    pub fn flush(&self) -> Result<(), GateError> {
        let mut st = self.lock();
        self.flush_locked(&mut st)
    }

    fn flush_locked(&self, st: &mut GateState) -> Result<(), GateError> {
        self.store
            .checkpoint()
            .map_err(|e| store_failed("flush", &e))?;
        if st.settled_unsynced.is_empty()
            && st.rollbacks_unsynced.is_empty()
            && st.checkpointed_unsynced.is_empty()
            && !self.store.has_checkpointed()
        {
            return Ok(());
        }
        self.barrier(st)
            .map_err(|e| io_failed("flush", &format!("sync failed: {e}"), Some(e.kind())))?;
        self.remove_settled(st);
        Ok(())
    }

    /// Syncs everything noted since the last barrier.
    fn barrier(&self, st: &mut GateState) -> io::Result<()> {
        let checkpointed = self.store.take_checkpointed();
        for file in checkpointed.blob_files {
            self.note_blob(st, file);
        }
        for file in checkpointed.index_files {
            self.note_appended(st, file);
        }
        st.checkpointed_unsynced.extend(checkpointed.ops);
        disk::barrier(
            &self.layout.cocode_dir(),
            &st.unsynced_files,
            &st.unsynced_dirs,
        )?;
        if st.unsynced_dirs.contains(&self.layout.write_journal_dir()) {
            self.store.spares_made_durable();
        }
        st.unsynced_files.clear();
        st.unsynced_dirs.clear();
        let settled = std::mem::take(&mut st.checkpointed_unsynced);
        st.settled_unsynced.extend(settled);
        for (path, id) in std::mem::take(&mut st.entries_seen) {
            if let Some(id) = id {
                st.durable_entries.insert(path, id);
            }
        }
        Ok(())
    }

    /// Notes a file written under a new name (a temp file renamed, a
    /// staged file): its content and its entry.
    fn note_written(&self, st: &mut GateState, file: PathBuf) {
        self.note_entry_of(st, &file);
        st.unsynced_files.insert(file);
    }

    /// Notes a file appended to (an index, a pack): its content, and its
    /// entry when the file is not the one a barrier already made durable
    /// under that name (it was created since).
    fn note_appended(&self, st: &mut GateState, file: PathBuf) {
        if !st.entries_seen.contains_key(&file) {
            let id = disk::entry_id(&file);
            st.entries_seen.insert(file.clone(), id);
            if id.is_none() || st.durable_entries.get(&file) != id.as_ref() {
                self.note_entry_of(st, &file);
            }
        }
        st.unsynced_files.insert(file);
    }

    /// Notes a stored blob: a loose one is a new file, a packed one an
    /// append.
    fn note_blob(&self, st: &mut GateState, file: PathBuf) {
        if file.starts_with(self.layout.packs_dir()) {
            self.note_appended(st, file);
        } else {
            self.note_written(st, file);
        }
    }

    /// Notes that `path`'s entry in its folder changed (created, renamed
    /// to, renamed away, removed): the folder is synced at the next
    /// barrier, and so is each folder above it whose own entry is not known
    /// durable (a folder created since).
    fn note_entry_of(&self, st: &mut GateState, path: &std::path::Path) {
        let root = self.layout.workspace_root();
        let mut entry = path;
        while let Some(dir) = entry.parent() {
            if !dir.starts_with(root) {
                break;
            }
            st.unsynced_dirs.insert(dir.to_path_buf());
            if dir == root || st.entries_seen.contains_key(dir) {
                break;
            }
            let id = disk::entry_id(dir);
            st.entries_seen.insert(dir.to_path_buf(), id);
            if id.is_some() && st.durable_entries.get(dir) == id.as_ref() {
                break;
            }
            entry = dir;
        }
    }

    fn full_path(&self, dir: &[String], name: &str) -> PathBuf {
        let mut p = self.layout.workspace_root().to_path_buf();
        p.extend(dir);
        p.push(name);
        p
    }

    fn remove_settled(&self, st: &mut GateState) {
        // The journals' folders change: the next barrier syncs them.
        for op in std::mem::take(&mut st.settled_unsynced) {
            self.note_entry_of(st, &self.layout.write_journal(&op));
            // A journal that cannot be removed now is settled by recovery later.
            if let Err(e) = self.store.retire_write_journal(&op) {
                tracing::warn!(op = %op, error = %e, "could not remove a settled write journal");
            }
        }
        for op in std::mem::take(&mut st.rollbacks_unsynced) {
            self.note_entry_of(st, &self.layout.rollback_journal(&op));
            if let Err(e) = self.store.remove_rollback_journal(&op) {
                tracing::warn!(op = %op, error = %e, "could not remove a finished rollback journal");
            }
        }
    }

    /// A person accepts the current state of the paths an unresolved journal
    /// names: the journal moves to `journal/writes/abandoned/` and the paths
    /// are unblocked. Its records never enter the history.
    pub fn abandon_write_journal(&self, op: &OpId) -> Result<Vec<NormalizedPath>, GateError> {
        let mut st = self.lock();
        let paths = paths_of(&st.blocked, op, "unresolved write journal")?;
        self.store
            .abandon_write_journal(op)
            .map_err(|e| store_failed("abandon", &e))?;
        st.blocked.retain(|_, o| o != op);
        Ok(paths)
    }

    /// Applies a change a person approved after the gate held it: the same
    /// protocol, without test-file protection.
    pub fn apply_approved(
        &self,
        ctx: &TaskContext,
        op: &GateOp,
    ) -> Result<Vec<EditSnapshot>, GateError> {
        let mut st = self.lock();
        self.prepare(&mut st)?;
        let plan = self.plan(&st, op)?;
        self.commit(&mut st, ctx, &plan, SnapshotOrigin::Gate)
    }

    fn prepare(&self, st: &mut GateState) -> Result<(), GateError> {
        if !st.recovered {
            self.recover_locked(st)
                .map_err(|e| store_failed("recover", &e))?;
        }
        Ok(())
    }

    // ---- planning -----------------------------------------------------------

    fn plan(&self, st: &GateState, op: &GateOp) -> Result<Plan, GateError> {
        let mut plan = Plan::default();
        match op {
            GateOp::Batch { ops } => {
                disjoint(ops)?;
                for item in ops {
                    self.plan_item(&mut plan, item)?;
                }
                // Two spellings can reach one file through a link inside
                // the workspace; the resolved paths must differ too.
                let mut seen = BTreeSet::new();
                for change in &plan.changes {
                    for p in std::iter::once(&change.path).chain(&change.previous_path) {
                        if !seen.insert(p) {
                            return Err(refuse(
                                WorkspaceErrorCode::FileConflict,
                                "batch",
                                p,
                                "two items of one batch reach this file",
                            ));
                        }
                    }
                }
            }
            single => self.plan_item(&mut plan, single)?,
        }
        for change in &plan.changes {
            for p in std::iter::once(&change.path).chain(&change.previous_path) {
                if let Some(op) = st.blocked.get(p) {
                    return Err(refuse(
                        WorkspaceErrorCode::RecoveryPending,
                        "recover",
                        p,
                        &format!(
                            "an interrupted edit ({op}) left this file in an unknown state; accept or restore it first"
                        ),
                    ));
                }
                if let Some(op) = st.exclusion.get(p) {
                    return Err(refuse(
                        WorkspaceErrorCode::RollbackInProgress,
                        "rollback",
                        p,
                        &format!("a rollback ({op}) is restoring this file"),
                    ));
                }
            }
        }
        Ok(plan)
    }

    /// Plans one operation that is not a batch (a batch item).
    fn plan_item(&self, plan: &mut Plan, op: &GateOp) -> Result<(), GateError> {
        match op {
            GateOp::Write { path, bytes } => self.plan_write(plan, path, bytes),
            GateOp::Delete { path } => self.plan_delete(plan, path),
            GateOp::Rename { from, to } => self.plan_rename(plan, from, to),
            GateOp::Batch { ops } => Err(GateError {
                code: WorkspaceErrorCode::FileConflict,
                operation: "batch",
                path: ops
                    .first()
                    .and_then(|o| o.touched_paths().first().map(|p| p.as_str().to_owned()))
                    .unwrap_or_default(),
                message: "a batch item cannot itself be a batch".to_owned(),
                io_kind: None,
            }),
        }
    }

    fn plan_write(
        &self,
        plan: &mut Plan,
        path: &NormalizedPath,
        bytes: &[u8],
    ) -> Result<(), GateError> {
        let target = self.policy.resolve("write", path)?;
        outside_metadata("write", path, &target)?;
        let found = self
            .disk
            .entry(&target.dir, &target.name)
            .map_err(|e| disk_failed("write", &target.path, &e))?;
        let base = match found {
            None => None,
            Some(Entry::File(bytes)) => Some(bytes),
            Some(Entry::Other(_)) => {
                return Err(refuse(
                    WorkspaceErrorCode::FileTypeConflict,
                    "write",
                    path,
                    "not a regular file (a folder, symlink or device)",
                ));
            }
        };
        let result = ContentHash::of(bytes);
        let base_hash = base.as_deref().map(ContentHash::of);
        if base_hash != Some(result) {
            plan.changes.push(Change {
                path: target.path.clone(),
                previous_path: None,
                base: base_hash,
                result: Some(result),
                unkept: Unkept::NONE,
            });
            if let Some(b) = base {
                plan.blobs.push(b);
            }
            plan.blobs.push(bytes.to_vec());
            plan.actions.push(Action::Put {
                target,
                bytes: bytes.to_vec(),
            });
        }
        Ok(())
    }

    fn plan_delete(&self, plan: &mut Plan, path: &NormalizedPath) -> Result<(), GateError> {
        let target = self.policy.resolve("delete", path)?;
        if !plan.metadata_removal {
            outside_metadata("delete", path, &target)?;
        }
        match self.kind(&target)? {
            None => {
                return Err(refuse(
                    WorkspaceErrorCode::FileNotFound,
                    "delete",
                    path,
                    "nothing to delete",
                ));
            }
            Some(EntryKind::File) => self.plan_delete_file(plan, target)?,
            Some(EntryKind::Dir) => {
                for file in self.files_below(&target, "delete")? {
                    self.plan_delete_file(plan, file)?;
                }
                self.plan_emptied_dirs(plan, &target, "delete")?;
            }
            Some(_) => {
                return Err(refuse(
                    WorkspaceErrorCode::FileTypeConflict,
                    "delete",
                    path,
                    "not a regular file (a symlink or device)",
                ));
            }
        }

        Ok(())
    }

    fn plan_rename(
        &self,
        plan: &mut Plan,
        from: &NormalizedPath,
        to: &NormalizedPath,
    ) -> Result<(), GateError> {
        let source = self.policy.resolve("rename", from)?;
        let dest = self.policy.resolve("rename", to)?;
        // A folder holding a repository moves whole, as an agent command
        // may move it; what is moved into or out of metadata is refused.
        outside_metadata("rename", from, &source)?;
        outside_metadata("rename", to, &dest)?;
        if source.path == dest.path
            || source.path.contains(&dest.path)
            || dest.path.contains(&source.path)
        {
            return Err(refuse(
                WorkspaceErrorCode::FileConflict,
                "rename",
                to,
                "a rename onto itself or into itself",
            ));
        }
        if self.kind(&dest)?.is_some() {
            return Err(refuse(
                WorkspaceErrorCode::FileConflict,
                "rename",
                to,
                "the target exists; rename never overwrites",
            ));
        }
        match self.kind(&source)? {
            None => {
                return Err(refuse(
                    WorkspaceErrorCode::FileNotFound,
                    "rename",
                    from,
                    "nothing to rename",
                ));
            }
            Some(EntryKind::File) => self.plan_move_file(plan, source, dest)?,
            Some(EntryKind::Dir) => {
                let prefix = format!("{}/", source.path.as_str());
                for file in self.files_below(&source, "rename")? {
                    let rest = file
                        .path
                        .as_str()
                        .strip_prefix(&prefix)
                        .unwrap_or(file.path.as_str());
                    let target_path = self
                        .policy
                        .normalize("rename", &format!("{}/{rest}", dest.path))?;
                    let target = self.policy.resolve("rename", &target_path)?;
                    if self.kind(&target)?.is_some() {
                        return Err(refuse(
                            WorkspaceErrorCode::FileConflict,
                            "rename",
                            &target_path,
                            "the target exists",
                        ));
                    }
                    self.plan_move_file(plan, file, target)?;
                }
                self.plan_emptied_dirs(plan, &source, "rename")?;
            }
            Some(_) => {
                return Err(refuse(
                    WorkspaceErrorCode::FileTypeConflict,
                    "rename",
                    from,
                    "not a regular file (a symlink or device)",
                ));
            }
        }

        Ok(())
    }

    fn plan_delete_file(&self, plan: &mut Plan, target: Resolved) -> Result<(), GateError> {
        let bytes = self.read(&target, "delete")?;
        plan.changes.push(Change {
            path: target.path.clone(),
            previous_path: None,
            base: Some(ContentHash::of(&bytes)),
            result: None,
            unkept: Unkept::NONE,
        });
        plan.blobs.push(bytes);
        plan.actions.push(Action::Remove { target });
        Ok(())
    }

    fn plan_move_file(
        &self,
        plan: &mut Plan,
        from: Resolved,
        to: Resolved,
    ) -> Result<(), GateError> {
        let bytes = self.read(&from, "rename")?;
        let hash = ContentHash::of(&bytes);
        plan.changes.push(Change {
            path: to.path.clone(),
            previous_path: Some(from.path.clone()),
            base: Some(hash),
            result: Some(hash),
            unkept: Unkept::NONE,
        });
        plan.blobs.push(bytes);
        plan.actions.push(Action::Move { from, to });
        Ok(())
    }

    fn plan_emptied_dirs(
        &self,
        plan: &mut Plan,
        top: &Resolved,
        operation: &'static str,
    ) -> Result<(), GateError> {
        let mut dirs = Vec::new();
        self.collect_dirs(top, &mut dirs, operation)?;
        dirs.reverse();
        // A plan may delete several folders (every repository a command
        // made): each one's emptied folders are kept, not the last one's.
        plan.emptied_dirs.extend(dirs);
        Ok(())
    }

    fn collect_dirs(
        &self,
        dir: &Resolved,
        out: &mut Vec<(Vec<String>, String)>,
        operation: &'static str,
    ) -> Result<(), GateError> {
        out.push((dir.dir.clone(), dir.name.clone()));
        let mut inner = dir.dir.clone();
        inner.push(dir.name.clone());
        for (name, kind) in self
            .disk
            .list(&inner)
            .map_err(|e| disk_failed(operation, &dir.path, &e))?
        {
            if kind == EntryKind::Dir {
                let child = self.child(dir, &name, operation)?;
                self.collect_dirs(&child, out, operation)?;
            }
        }
        Ok(())
    }

    fn child(
        &self,
        dir: &Resolved,
        name: &str,
        operation: &'static str,
    ) -> Result<Resolved, GateError> {
        let path = self
            .policy
            .normalize(operation, &format!("{}/{name}", dir.path))?;
        let mut parent = dir.dir.clone();
        parent.push(dir.name.clone());
        Ok(Resolved {
            path,
            dir: parent,
            name: name.to_owned(),
        })
    }

    /// Every regular file below a folder; any symlink or device makes the
    /// whole operation refused (all or nothing).
    fn files_below(
        &self,
        dir: &Resolved,
        operation: &'static str,
    ) -> Result<Vec<Resolved>, GateError> {
        let mut out = Vec::new();
        let mut inner = dir.dir.clone();
        inner.push(dir.name.clone());
        for (name, kind) in self
            .disk
            .list(&inner)
            .map_err(|e| disk_failed(operation, &dir.path, &e))?
        {
            let child = self.child(dir, &name, operation)?;
            if child.path.is_in_cocode_dir() {
                return Err(refuse(
                    WorkspaceErrorCode::PathNotWritable,
                    operation,
                    &child.path,
                    "inside .cocode",
                ));
            }
            match kind {
                EntryKind::File => out.push(child),
                EntryKind::Dir => out.extend(self.files_below(&child, operation)?),
                EntryKind::Symlink | EntryKind::Other => {
                    return Err(refuse(
                        WorkspaceErrorCode::FileTypeConflict,
                        operation,
                        &child.path,
                        "the folder holds a symlink or device; nothing was changed",
                    ));
                }
            }
        }
        Ok(out)
    }

    fn kind(&self, target: &Resolved) -> Result<Option<EntryKind>, GateError> {
        self.disk
            .kind(&target.dir, &target.name)
            .map_err(|e| disk_failed("stat", &target.path, &e))
    }

    fn read(&self, target: &Resolved, operation: &'static str) -> Result<Vec<u8>, GateError> {
        match self.disk.read(&target.dir, &target.name) {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => Err(refuse(
                WorkspaceErrorCode::FileNotFound,
                operation,
                &target.path,
                "the file vanished",
            )),
            Err(e) => Err(disk_failed(operation, &target.path, &e)),
        }
    }

    /// Projected transitions that would change or delete an existing
    /// protected test file.
    fn protected(&self, plan: &Plan) -> Vec<PathTransition> {
        plan.transitions()
            .into_iter()
            .filter(|t| t.before.is_some() && self.tests.is_protected(&t.path))
            .collect()
    }

    // ---- the write-commit protocol ------------------------------------------------

    fn cursor(&self, st: &mut GateState, task: &TaskId) -> Result<TaskCursor, StoreError> {
        if let Some(c) = st.tasks.get(task) {
            return Ok(*c);
        }
        let records = self.store.snapshots_of_task(task)?;
        let mut cursor = TaskCursor {
            last_seq: records.last().map(EditSnapshot::seq),
            last_attempt: records
                .iter()
                .map(EditSnapshot::attempt_no)
                .max()
                .unwrap_or(AttemptNo(0)),
        };
        if let Some(held) = st.held_by_journals.get(task) {
            cursor.last_seq = cursor.last_seq.max(held.last_seq);
            cursor.last_attempt = cursor.last_attempt.max(held.last_attempt);
        }
        st.tasks.insert(task.clone(), cursor);
        Ok(cursor)
    }

    /// Step 1: numbers the records of `changes` after the task's last
    /// snapshot; an attempt older than one the task already wrote under is
    /// refused. Nothing is written.
    fn reserve(
        &self,
        st: &mut GateState,
        (task_id, attempt_no): (&TaskId, AttemptNo),
        changes: &[Change],
        origin: SnapshotOrigin,
    ) -> Result<(OpId, Timestamp, Vec<EditSnapshot>), GateError> {
        let cursor = self
            .cursor(st, task_id)
            .map_err(|e| store_failed("reserve", &e))?;
        if attempt_no < cursor.last_attempt {
            return Err(GateError {
                code: WorkspaceErrorCode::RevisionConflict,
                operation: "reserve",
                path: String::new(),
                message: format!(
                    "attempt {} is older than the task's attempt {}",
                    attempt_no.ordinal(),
                    cursor.last_attempt.ordinal()
                ),
                io_kind: None,
            });
        }
        let ts = now();
        let op_id = new_op_id(ts)?;
        let mut seq = cursor.last_seq.map_or(Seq(1), Seq::next);
        let mut records = Vec::new();
        for (n, change) in changes.iter().enumerate() {
            let snapshot_id = SnapshotId::new(format!("{op_id}-{n}"))
                .map_err(|e| internal("reserve", "", &e.to_string()))?;
            let record = EditSnapshot::new(EditSnapshotParts {
                snapshot_id,
                task_id: task_id.clone(),
                seq,
                attempt_no,
                path: change.path.clone(),
                previous_path: change.previous_path.clone(),
                base: change.base,
                result: change.result,
                unkept: change.unkept,
                origin,
                ts,
            })
            .map_err(|e| {
                refuse(
                    WorkspaceErrorCode::FileConflict,
                    "reserve",
                    &change.path,
                    &e.to_string(),
                )
            })?;
            records.push(record);
            seq = seq.next();
        }
        Ok((op_id, ts, records))
    }

    fn commit(
        &self,
        st: &mut GateState,
        ctx: &TaskContext,
        plan: &Plan,
        origin: SnapshotOrigin,
    ) -> Result<Vec<EditSnapshot>, GateError> {
        if plan.changes.is_empty() {
            return Ok(Vec::new());
        }
        // Step 1: reserve seq, check attempt monotonicity.
        let (op_id, ts, records) =
            self.reserve(st, (&ctx.task_id, ctx.attempt_no), &plan.changes, origin)?;
        fail::fail_point!("gate::after_reserve");

        // Step 2: new blobs; small ones go in the journal. A blob another
        // held operation carries is carried again: each journal keeps
        // every blob its records need that no pack or file holds, so
        // recovery never needs another journal to be complete.
        let mut carried: Vec<(ContentHash, &[u8])> = Vec::new();
        let mut carried_hashes = BTreeSet::new();
        let mut carried_bytes = 0;
        for bytes in &plan.blobs {
            let fits =
                bytes.len() <= HELD_BLOB_MAX && carried_bytes + bytes.len() <= JOURNAL_BLOBS_MAX;
            if fits {
                let hash = ContentHash::of(bytes);
                if !self.store.is_packed_as_indexed(&hash) && carried_hashes.insert(hash) {
                    carried_bytes += bytes.len();
                    carried.push((hash, bytes));
                }
                continue;
            }
            let (_, path) = self
                .store
                .put_blob(bytes)
                .map_err(|e| store_failed("store", &e))?;
            if let Some(path) = path {
                self.note_blob(st, path);
            }
        }
        fail::fail_point!("gate::after_blobs");

        // Step 3: the journal. From here on the edit is recoverable.
        let (journal, staged_names) =
            Self::journal_for(op_id.clone(), ts, &records, plan, &carried);
        let journal_file = self
            .store
            .write_journal(&journal)
            .map_err(|e| store_failed("journal", &e))?;
        self.note_written(st, journal_file);
        fail::fail_point!("gate::after_journal");

        // Step 4: stage, one barrier, apply.
        let staged = match self.stage(plan, &staged_names) {
            Ok(staged) => staged,
            Err(e) => {
                // Nothing visible changed: the journal and any staged file go.
                self.discard(&journal);
                return Err(e);
            }
        };
        fail::fail_point!("gate::after_stage");
        for s in staged.iter().flatten() {
            let path = self.full_path(&s.dir, &s.temp_name);
            self.note_written(st, path);
        }
        if let Err(e) = self.barrier(st) {
            self.discard(&journal);
            return Err(io_failed(
                "sync",
                &format!("sync failed: {e}"),
                Some(e.kind()),
            ));
        }
        // Everything committed earlier is durable now, indexes included.
        self.remove_settled(st);
        // The renames and removals below change these folders' entries.
        for action in &plan.actions {
            let (a, b) = match action {
                Action::Put { target, .. } | Action::Remove { target } => (target, None),
                Action::Move { from, to } => (from, Some(to)),
            };
            for r in std::iter::once(a).chain(b) {
                let path = self.full_path(&r.dir, &r.name);
                self.note_entry_of(st, &path);
            }
        }
        if let Err(e) = self.apply(plan, &staged) {
            self.recover_after_failure(st, &journal);
            return Err(e);
        }
        fail::fail_point!("gate::after_apply");

        // Step 5: the store holds the records and the carried blobs; the
        // journal goes after the barrier after their checkpoint (step 6).
        let due = self.store.hold(
            op_id,
            &records,
            carried.iter().map(|(h, b)| (*h, b.to_vec())).collect(),
        );
        fail::fail_point!("gate::after_hold");
        if due && let Err(e) = self.store.checkpoint() {
            // The change is done and its journal keeps what the indexes
            // lack: the next checkpoint (or recovery) writes it.
            tracing::warn!(error = %e, "a checkpoint of the history failed; the next one retries");
        }
        st.tasks.insert(
            ctx.task_id.clone(),
            TaskCursor {
                last_seq: records.last().map(EditSnapshot::seq),
                last_attempt: ctx.attempt_no,
            },
        );
        for t in plan.transitions() {
            st.sweep
                .record(self.layout.workspace_root(), &t.path, t.after);
        }
        Ok(records)
    }

    /// The journal of an operation and the temp names its new contents are
    /// staged under (`.<name>.cocode-<op>-<n>.tmp` next to each target).
    fn journal_for(
        op_id: OpId,
        ts: Timestamp,
        records: &[EditSnapshot],
        plan: &Plan,
        carried: &[(ContentHash, &[u8])],
    ) -> (WriteJournal, Vec<Option<StagedName>>) {
        let staged_names: Vec<Option<StagedName>> = plan
            .actions
            .iter()
            .enumerate()
            .map(|(n, a)| match a {
                Action::Put { target, .. } => Some((
                    target.dir.clone(),
                    target.name.clone(),
                    format!(".{}.cocode-{op_id}-{n}.tmp", target.name),
                )),
                _ => None,
            })
            .collect();
        let staged = staged_names
            .iter()
            .flatten()
            .map(|(dir, _, temp)| {
                dir.iter()
                    .chain(std::iter::once(temp))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .collect();
        let journal = WriteJournal {
            version: WRITE_JOURNAL_VERSION,
            op_id,
            created_at: ts,
            records: records.to_vec(),
            staged,
            blobs: carried
                .iter()
                .map(|(h, b)| JournalBlob::with_hash(*h, b))
                .collect(),
        };
        (journal, staged_names)
    }

    /// Notes the index files the records were appended to.
    fn note_indexes(&self, st: &mut GateState, records: &[EditSnapshot]) {
        for r in records {
            self.note_appended(st, self.layout.task_index(r.task_id()));
            for p in crate::store::record_paths(r) {
                self.note_appended(st, self.store.path_index_file(p));
            }
        }
    }

    fn stage(
        &self,
        plan: &Plan,
        staged_names: &[Option<(Vec<String>, String, String)>],
    ) -> Result<Vec<Option<Staged>>, GateError> {
        let mut staged: Vec<Option<Staged>> = Vec::new();
        for (action, names) in plan.actions.iter().zip(staged_names) {
            match (action, names) {
                (Action::Put { target, bytes }, Some((dir, name, temp))) => {
                    let s = self
                        .disk
                        .stage(dir, name, temp, bytes)
                        .map_err(|e| disk_failed("write", &target.path, &e))?;
                    staged.push(Some(s));
                }
                _ => staged.push(None),
            }
        }
        Ok(staged)
    }

    /// Removes the staged files and the journal of an operation that failed
    /// before anything visible changed.
    fn discard(&self, journal: &WriteJournal) {
        for staged in &journal.staged {
            let segments: Vec<String> = staged.split('/').map(ToOwned::to_owned).collect();
            if let Some((name, dir)) = segments.split_last() {
                let _ = self.disk.unlink(dir, name);
            }
        }
        if let Err(e) = self.store.remove_write_journal(&journal.op_id) {
            tracing::warn!(op = %journal.op_id, error = %e, "could not remove the journal of a refused operation; recovery drops it");
        }
    }

    /// Makes the planned changes visible, folder by folder ([`by_folder`]:
    /// a large batch or folder operation spreads its folders over threads).
    /// Recovery decides per record, so any subset done before a failure is
    /// understood.
    fn apply(&self, plan: &Plan, staged: &[Option<Staged>]) -> Result<(), GateError> {
        let pairs: Vec<(&Action, &Option<Staged>)> = plan.actions.iter().zip(staged).collect();
        let started = AtomicBool::new(false);
        by_folder(
            &pairs,
            |(action, _)| match action {
                Action::Put { target, .. } | Action::Remove { target } => folder_of(&target.path),
                Action::Move { to, .. } => folder_of(&to.path),
            },
            |(action, s)| {
                if started.swap(true, Ordering::Relaxed) {
                    fail::fail_point!("gate::between_files");
                }
                self.apply_action(action, s.as_ref())
            },
        )?;
        for (dir, name) in &plan.emptied_dirs {
            // Untracked leftovers (empty folders) are not recorded; a folder
            // that is not empty stays.
            let _ = self.disk.rmdir_if_empty(dir, name);
        }
        Ok(())
    }

    fn apply_action(&self, action: &Action, s: Option<&Staged>) -> Result<(), GateError> {
        match (action, s) {
            (Action::Put { target, .. }, Some(s)) => self
                .disk
                .commit(s)
                .map_err(|e| disk_failed("write", &target.path, &e)),
            (Action::Remove { target }, _) => self
                .disk
                .unlink(&target.dir, &target.name)
                .map_err(|e| disk_failed("delete", &target.path, &e)),
            (Action::Move { from, to }, _) => self
                .disk
                .rename((&from.dir, &from.name), (&to.dir, &to.name))
                .map_err(|e| disk_failed("rename", &to.path, &e)),
            (Action::Put { target, .. }, None) => Err(internal(
                "write",
                target.path.as_str(),
                "a staged file is missing",
            )),
        }
    }

    // ---- recovery -------------------------------------------------------------

    fn recover_after_failure(&self, st: &mut GateState, journal: &WriteJournal) {
        let mut report = RecoveryReport::default();
        let outcomes = self.judge(&[journal]).remove(0);
        if let Err(e) = self.recover_journal(st, journal, &outcomes, &mut report) {
            tracing::error!(op = %journal.op_id, error = %e, "in-process recovery failed; the journal stays for startup recovery");
        }
        if let Some(first) = journal.records.first() {
            st.tasks.remove(first.task_id());
        }
    }

    fn recover_locked(&self, st: &mut GateState) -> Result<RecoveryReport, StoreError> {
        let mut report = RecoveryReport {
            torn_index_tails_cut: self.store.repair_indexes()?,
            ..RecoveryReport::default()
        };
        self.store.adopt_spare_journals()?;
        // The barrier below makes the spares' names durable (a crash of the
        // process that retired them may have left them in the cache).
        st.unsynced_dirs.insert(self.layout.write_journal_dir());
        st.settled_unsynced.clear();
        st.rollbacks_unsynced.clear();
        st.blocked.clear();
        st.held_by_journals.clear();
        st.exclusion.clear();
        let mut journals = Vec::new();
        for file in self.store.write_journals()? {
            match file.content {
                Ok(journal) => match journal.blobs.iter().find_map(|b| b.content().err()) {
                    // A blob it carries does not match its hash.
                    Some(e) => report.corrupt_journals.push((file.path, e.to_string())),
                    None => journals.push(journal),
                },
                Err(reason) => report.corrupt_journals.push((file.path, reason)),
            }
        }
        let all: Vec<&WriteJournal> = journals.iter().collect();
        for (journal, outcomes) in journals.iter().zip(self.judge(&all)) {
            self.recover_journal(st, journal, &outcomes, &mut report)?;
        }
        st.tasks.clear();
        for file in self.store.rollback_journals()? {
            match file.content {
                Ok(journal) => match self.replay_rollback(st, &journal, None) {
                    Ok(()) => report.rollbacks_replayed.push(journal.op_id.clone()),
                    Err(path) => report
                        .rollbacks_incomplete
                        .push((journal.op_id.clone(), path)),
                },
                Err(reason) => report.corrupt_journals.push((file.path, reason)),
            }
        }
        // Replayed rollbacks are durable now; their journals go.
        self.barrier(st).map_err(|e| StoreError::Io {
            message: format!("sync failed: {e}"),
            kind: Some(e.kind()),
        })?;
        self.remove_settled(st);
        st.tasks.clear();
        if !st.recovered && st.sweep.is_empty() {
            self.restore_sweep_cache(st);
        }
        st.recovered = true;
        Ok(report)
    }

    /// Takes over the stat cache the last process left, so files whose
    /// stat did not change are not read (and their content not stored)
    /// again. Missing or damaged, it is simply not used.
    fn restore_sweep_cache(&self, st: &mut GateState) {
        let path = self.layout.sweep_cache_file();
        let Ok(file) = std::fs::File::open(&path) else {
            return;
        };
        let mut bytes = Vec::new();
        if Read::read_to_end(&mut flate2::read::GzDecoder::new(file), &mut bytes).is_err() {
            return;
        }
        let store = &self.store;
        let packed = store.packed_by_prefix();
        let taken = st
            .sweep
            .restore(&bytes, &|h| store.has_blob_cached(h), &|prefix| {
                packed.get(prefix).copied().flatten()
            });
        tracing::debug!(entries = taken, "stat cache restored");
    }

    /// Leaves the stat cache for the next process (best effort, not
    /// synced: a lost or stale cache only costs a full read). Without a
    /// scan in this process it is what the file already holds: nothing is
    /// written (retention at start-up follows the restore at once).
    fn save_sweep_cache(&self, st: &GateState) {
        if !st.sweep.is_populated() || st.sweep.is_empty() {
            return;
        }
        let path = self.layout.sweep_cache_file();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let store = &self.store;
        let bytes = st.sweep.to_bytes(&|h| store.is_packed_cached(h));
        let packed = Write::write_all(&mut gz, &bytes).and_then(|()| gz.finish());
        if let Err(e) = packed.and_then(|bytes| disk::write_atomic(&path, &bytes)) {
            tracing::warn!(error = %e, "could not keep the stat cache");
        }
    }

    /// The disk content of a recorded (real) path: `Ok(None)` absent,
    /// `Err(())` when it is not a regular file or cannot be read.
    fn current(&self, path: &NormalizedPath) -> Result<Option<ContentHash>, ()> {
        self.current_stamped(path).map(|(hash, _)| hash)
    }

    /// The current content's hash and the stamp the file had when read.
    fn current_stamped(
        &self,
        path: &NormalizedPath,
    ) -> Result<(Option<ContentHash>, Option<Stamp>), ()> {
        let segments: Vec<String> = path.segments().map(ToOwned::to_owned).collect();
        let Some((name, dir)) = segments.split_last() else {
            return Err(());
        };
        match self.disk.stamped_entry(dir, name) {
            Ok(None) => Ok((None, None)),
            Ok(Some((Entry::File(bytes), stamp))) => Ok((Some(ContentHash::of(&bytes)), stamp)),
            _ => Err(()),
        }
    }

    /// How each record of each journal (oldest first) is settled, judged
    /// path by path along the chain of every journal's records of the
    /// path: the newest record the disk shows the result or the base of
    /// marks where the changes stopped, so the records before it happened
    /// and the ones after it did not; a disk no record explains leaves
    /// every record of the path unresolved. A record is complete or
    /// dropped when all its paths agree, unresolved otherwise. One journal
    /// is judged by the disk alone. Several are left by a crash between
    /// two barriers: a settled journal is retired after the next
    /// operation's barrier, and the retirement is durable only after the
    /// barrier after that, so it can lie beside a later journal of the
    /// same file, whose change the disk shows.
    fn judge(&self, journals: &[&WriteJournal]) -> Vec<Vec<Outcome>> {
        type Link = (usize, usize, Option<ContentHash>, Option<ContentHash>);
        let mut chains: BTreeMap<NormalizedPath, Vec<Link>> = BTreeMap::new();
        for (j, journal) in journals.iter().enumerate() {
            for (r, record) in journal.records.iter().enumerate() {
                for t in record.transitions() {
                    chains
                        .entry(t.path)
                        .or_default()
                        .push((j, r, t.before, t.after));
                }
            }
        }
        let mut outcomes: Vec<Vec<Option<Outcome>>> = journals
            .iter()
            .map(|journal| vec![None; journal.records.len()])
            .collect();
        for (path, chain) in &chains {
            let disk = self.current(path);
            let stop = chain
                .iter()
                .enumerate()
                .rev()
                .find_map(|(i, (_, _, before, after))| {
                    if disk == Ok(*after) {
                        Some(i + 1)
                    } else if disk == Ok(*before) {
                        Some(i)
                    } else {
                        None
                    }
                });
            for (i, &(j, r, _, _)) in chain.iter().enumerate() {
                let here = match stop {
                    Some(stop) if i < stop => Outcome::Complete,
                    Some(_) => Outcome::Dropped,
                    None => Outcome::Unresolved,
                };
                let outcome = &mut outcomes[j][r];
                *outcome = match *outcome {
                    None => Some(here),
                    Some(before) if before == here => Some(here),
                    Some(_) => Some(Outcome::Unresolved),
                };
            }
        }
        outcomes
            .into_iter()
            .map(|records| {
                records
                    .into_iter()
                    .map(|o| o.unwrap_or(Outcome::Complete))
                    .collect()
            })
            .collect()
    }

    /// Settles a journal as [`Self::judge`] found its records: staged
    /// files go, complete records are indexed, dropped ones leave no index
    /// line, and unresolved paths are blocked.
    fn recover_journal(
        &self,
        st: &mut GateState,
        journal: &WriteJournal,
        outcomes: &[Outcome],
        report: &mut RecoveryReport,
    ) -> Result<(), StoreError> {
        for staged in &journal.staged {
            let segments: Vec<String> = staged.split('/').map(ToOwned::to_owned).collect();
            if let Some((name, dir)) = segments.split_last()
                && matches!(self.disk.kind(dir, name), Ok(Some(EntryKind::File)))
            {
                {
                    self.disk.unlink(dir, name).map_err(|e| StoreError::Io {
                        message: format!("removing staged file {staged}: {e}"),
                        kind: Some(e.kind()),
                    })?;
                    report.staged_files_removed += 1;
                }
            }
        }
        let mut complete = Vec::new();
        let mut dropped = Vec::new();
        let mut unresolved = Vec::new();
        for (record, outcome) in journal.records.iter().zip(outcomes) {
            match outcome {
                Outcome::Complete => complete.push(record.clone()),
                Outcome::Dropped => dropped.push(record.clone()),
                Outcome::Unresolved => {
                    unresolved.extend(record.transitions().into_iter().map(|t| t.path));
                }
            }
        }
        if !complete.is_empty() {
            // The blobs the journal carries (a checkpoint may not have
            // packed them yet).
            for blob in &journal.blobs {
                if let (_, Some(file)) = self.store.put_blob(&blob.content()?)? {
                    self.note_blob(st, file);
                }
            }
        }
        self.store.append_missing(&complete)?;
        self.note_indexes(st, &complete);
        report.records_completed += complete.len();
        // Nothing of these happened. Their index lines, appended after the
        // rename, can still have reached the disk first where the file
        // system keeps no order between files.
        report.index_lines_removed += self.store.remove_unhappened(&dropped)?;
        report.records_dropped += dropped.len();
        if unresolved.is_empty() {
            // It goes after the next barrier, which makes the above durable.
            st.settled_unsynced.push(journal.op_id.clone());
            report.settled_journals.push(journal.op_id.clone());
        } else {
            for path in unresolved {
                report
                    .unresolved
                    .push((journal.op_id.clone(), path.clone()));
                st.blocked.insert(path, journal.op_id.clone());
            }
            for r in &journal.records {
                let held = st
                    .held_by_journals
                    .entry(r.task_id().clone())
                    .or_insert(TaskCursor {
                        last_seq: None,
                        last_attempt: AttemptNo(0),
                    });
                held.last_seq = held.last_seq.max(Some(r.seq()));
                held.last_attempt = held.last_attempt.max(r.attempt_no());
            }
        }
        Ok(())
    }

    // ---- the observed-change sweep ----------------------------------------------

    /// Refreshes the stat cache before a command or an agent turn, storing a
    /// base blob of every file it hashes (so the change can be rolled back).
    pub fn begin_sweep(&self) -> Result<crate::sweep::SweepStats, GateError> {
        let mut st = self.lock();
        self.prepare(&mut st)?;
        let stats = self.scan(&mut st, crate::sweep::IgnoreRules::OnDisk)?;
        st.metadata_before =
            crate::metadata_census::take(self.layout.workspace_root(), self.policy.options());
        Ok(stats)
    }

    /// The version-control metadata made since the sweep began (or since
    /// this was last asked): a repository at a root that had none, or in a
    /// folder the sweep ignores, which its records do not show. The census
    /// is taken again, so each entry is named once.
    pub fn metadata_made_since_sweep(&self) -> Vec<NormalizedPath> {
        let now = crate::metadata_census::take(self.layout.workspace_root(), self.policy.options());
        let mut st = self.lock();
        let made = match (&st.metadata_before, &now) {
            (Some(before), Some(after)) => crate::metadata_census::made(before, after),
            _ => Vec::new(),
        };
        st.metadata_before = now;
        made
    }

    /// One stat-cache scan; stored blobs are noted for the next barrier.
    fn scan(
        &self,
        st: &mut GateState,
        rules: crate::sweep::IgnoreRules,
    ) -> Result<crate::sweep::SweepStats, GateError> {
        let root = self.layout.workspace_root();
        let stats = self.scanning(st, |sweep, store_blob| {
            sweep.scan(root, &self.sweep_limits, rules, store_blob)
        })?;
        st.last_scan = stats;
        Ok(stats)
    }

    /// Runs one scan of the sweep with a sink that stores the blobs it
    /// hands over; they are noted for the next barrier.
    fn scanning<R>(
        &self,
        st: &mut GateState,
        scan: impl FnOnce(
            &mut StatCache,
            &mut dyn FnMut(&[u8]) -> Result<(), StoreError>,
        ) -> Result<R, StoreError>,
    ) -> Result<R, GateError> {
        let store = &self.store;
        let mut stored = Vec::new();
        let done = scan(&mut st.sweep, &mut |bytes| {
            let (_, path) = store.put_blob(bytes)?;
            stored.extend(path);
            Ok(())
        })
        .map_err(|e| store_failed("sweep", &e))?;
        for path in stored {
            self.note_blob(st, path);
        }
        Ok(done)
    }

    /// Starts the sweep's watcher (Linux). From the next full scan on, the
    /// scan after a command by [`SweepWriters::ConfinedCommands`] looks only
    /// at what it reported (see [`crate::sweep`]). Returns whether this
    /// system has a watcher the sweep can use.
    pub fn watch(&self) -> io::Result<bool> {
        #[cfg(target_os = "linux")]
        {
            let mut st = self.lock();
            if !st.sweep.is_watched() {
                let watch = crate::sweep::Watch::start(self.layout.workspace_root())?;
                st.sweep.set_watch(std::sync::Arc::new(watch));
            }
            Ok(true)
        }
        #[cfg(not(target_os = "linux"))]
        Ok(false)
    }

    /// What the last scan of the sweep did (how many files it looked at,
    /// whether it was narrowed to what the watcher reported).
    pub fn last_sweep_stats(&self) -> crate::sweep::SweepStats {
        self.lock().last_scan
    }

    /// Diffs the tree against the cache and records every change as an
    /// `origin: observed` snapshot of `ctx`'s task.
    pub fn end_sweep(&self, ctx: &TaskContext) -> Result<Vec<EditSnapshot>, GateError> {
        self.end_sweep_as(ctx, SnapshotOrigin::Observed)
    }

    /// [`Self::end_sweep`] with another origin (`verification` for the
    /// sweep around a task's verification commands).
    pub fn end_sweep_as(
        &self,
        ctx: &TaskContext,
        origin: SnapshotOrigin,
    ) -> Result<Vec<EditSnapshot>, GateError> {
        self.end_sweep_by(ctx, origin, SweepWriters::Anyone)
    }

    /// Removes version-control metadata an agent command made (a new
    /// `sub/.git` folder, a `.git` file naming another folder): its hooks
    /// and settings would run in the person's own git later, outside any
    /// sandbox. Recorded as the task's own deletes, so a rollback stays
    /// whole; the only change cocode makes in metadata for an agent, and
    /// only ever a removal. Each root must be a metadata entry itself.
    pub fn remove_made_metadata(
        &self,
        ctx: &TaskContext,
        roots: &[NormalizedPath],
    ) -> Result<Vec<EditSnapshot>, GateError> {
        let mut st = self.lock();
        self.prepare(&mut st)?;
        let mut plan = Plan {
            metadata_removal: true,
            ..Plan::default()
        };
        for root in roots {
            if !cocode_core::path::is_version_control_name(root.file_name()) {
                return Err(refuse(
                    WorkspaceErrorCode::PathNotWritable,
                    "delete",
                    root,
                    "not a version-control metadata folder or file",
                ));
            }
            self.plan_delete(&mut plan, root)?;
        }
        self.commit(&mut st, ctx, &plan, SnapshotOrigin::Gate)
    }

    /// [`Self::end_sweep_as`], saying who may have written the workspace
    /// since the sweep began: for [`SweepWriters::ConfinedCommands`] with
    /// a watcher that lost nothing, only what it reported is looked at.
    pub fn end_sweep_by(
        &self,
        ctx: &TaskContext,
        origin: SnapshotOrigin,
        writers: SweepWriters,
    ) -> Result<Vec<EditSnapshot>, GateError> {
        let mut st = self.lock();
        self.prepare(&mut st)?;
        let changes = if let Some(changes) = self.scan_reported(&mut st, writers)? {
            changes
        } else {
            let before = st.sweep.clone();
            // Judged by the ignore rules in force before: a `.gitignore`
            // written meanwhile hides nothing.
            self.scan(&mut st, crate::sweep::IgnoreRules::AsKept)?;
            before.changes_to(&st.sweep)
        };
        // A sweep ends a command, an external agent's turn or a
        // verification: what was held goes to the indexes, where another
        // process reads it.
        if let Err(e) = self.store.checkpoint() {
            tracing::warn!(error = %e, "a checkpoint of the history failed; the next one retries");
        }
        if changes.is_empty() {
            return Ok(Vec::new());
        }
        self.record_observed(&mut st, ctx, changes, origin)
    }

    /// The narrowed scan after a command, when `writers` and the watcher
    /// allow it: what changed. Stored blobs are noted for the next barrier.
    fn scan_reported(
        &self,
        st: &mut GateState,
        writers: SweepWriters,
    ) -> Result<Option<Vec<crate::sweep::ObservedChange>>, GateError> {
        if writers != SweepWriters::ConfinedCommands || !st.sweep.can_narrow() {
            return Ok(None);
        }
        let root = self.layout.workspace_root();
        let scanned = self.scanning(st, |sweep, store_blob| {
            sweep.scan_reported(root, &self.sweep_limits, store_blob)
        })?;
        Ok(scanned.map(|(stats, changes)| {
            st.last_scan = stats;
            changes
        }))
    }

    fn record_observed(
        &self,
        st: &mut GateState,
        ctx: &TaskContext,
        changes: Vec<crate::sweep::ObservedChange>,
        origin: SnapshotOrigin,
    ) -> Result<Vec<EditSnapshot>, GateError> {
        let changes: Vec<Change> = changes
            .into_iter()
            .map(|c| Change {
                path: c.transition.path,
                previous_path: None,
                base: c.transition.before,
                result: c.transition.after,
                unkept: c.unkept,
            })
            .collect();
        let (_, _, records) = self.reserve(st, (&ctx.task_id, ctx.attempt_no), &changes, origin)?;
        // The blobs were stored by the scans; the change already happened on
        // disk, so there is nothing to journal: the records go straight in.
        self.store
            .append_task_records(&records)
            .and_then(|()| self.store.append_path_records(&records))
            .map_err(|e| store_failed("sweep", &e))?;
        self.note_indexes(st, &records);
        st.tasks.insert(
            ctx.task_id.clone(),
            TaskCursor {
                last_seq: records.last().map(EditSnapshot::seq),
                last_attempt: ctx.attempt_no,
            },
        );
        Ok(records)
    }

    /// Finished operations (writes and rollbacks) whose journals wait for
    /// the next barrier.
    pub fn unsynced_operations(&self) -> usize {
        let st = self.lock();
        st.settled_unsynced.len()
            + st.rollbacks_unsynced.len()
            + st.checkpointed_unsynced.len()
            + self.store.held_operations()
    }
}

/// The paths an operation holds in `held` (blocked or excluded); an
/// operation holding none is unknown.
fn paths_of(
    held: &BTreeMap<NormalizedPath, OpId>,
    op: &OpId,
    what: &str,
) -> Result<Vec<NormalizedPath>, GateError> {
    let paths: Vec<NormalizedPath> = held
        .iter()
        .filter(|(_, o)| *o == op)
        .map(|(p, _)| p.clone())
        .collect();
    if paths.is_empty() {
        return Err(GateError {
            code: WorkspaceErrorCode::FileNotFound,
            ..internal("abandon", "", &format!("no {what} {op}"))
        });
    }
    Ok(paths)
}

/// Splits a recorded (real) path into its folder segments and name.
fn split(path: &NormalizedPath) -> (Vec<String>, String) {
    let mut segments: Vec<String> = path.segments().map(ToOwned::to_owned).collect();
    let name = segments.pop().unwrap_or_default();
    (segments, name)
}

fn rollback_failed(e: &impl std::fmt::Display) -> RollbackError {
    RollbackError::Failed(e.to_string())
}

impl Gate {
    /// Whether `query` can roll `task` back now: the targets, or why not.
    pub fn rollback_availability(
        &self,
        task: &TaskId,
        query: &RollbackQuery,
    ) -> RollbackAvailability {
        let mut st = self.lock();
        if let Err(e) = self.prepare(&mut st) {
            return RollbackAvailability::Unavailable(rollback_failed(&e));
        }
        match self.rollback_targets(&st, task, query, None) {
            Ok(targets) => RollbackAvailability::Available { targets },
            Err(e) => RollbackAvailability::Unavailable(e),
        }
    }

    /// The targets of a rollback, prechecked. `stamps` receives the stamp
    /// of each file the precheck read.
    fn rollback_targets(
        &self,
        st: &GateState,
        task: &TaskId,
        query: &RollbackQuery,
        mut stamps: Option<&mut HashMap<NormalizedPath, Stamp>>,
    ) -> Result<Vec<RollbackTarget>, RollbackError> {
        if let Some(marker) = self
            .store
            .retention_marker(task)
            .map_err(|e| rollback_failed(&e))?
        {
            return Err(RollbackError::Collected {
                removed_at_ms: marker.removed_at.as_millis(),
                reason: marker.reason,
            });
        }
        let records = self
            .store
            .snapshots_of_task(task)
            .map_err(|e| rollback_failed(&e))?;
        let selected = rollback::select(&records, query)?;
        let targets = rollback::targets(&selected);
        if targets.is_empty() {
            return Err(RollbackError::NothingToRollBack);
        }
        for t in &targets {
            if st.blocked.contains_key(&t.path) {
                return Err(RollbackError::RecoveryPending(t.path.clone()));
            }
            if let Some(op) = st.exclusion.get(&t.path) {
                return Err(RollbackError::InProgress(op.clone()));
            }
        }
        // Both questions of every path first, spread over the cores (reads
        // and hashing), then the precheck decides on the answers.
        let answers: HashMap<&NormalizedPath, _> = parallel_map(&targets, |t| {
            (
                self.store
                    .last_snapshot_of_path(&t.path)
                    .map(|last| last.map(|r| r.task_id().clone())),
                self.current_stamped(&t.path),
            )
        })
        .into_iter()
        .zip(&targets)
        .map(|(answer, t)| (&t.path, answer))
        .collect();
        let mut lookup_error = None;
        let conflicts = rollback::precheck(
            task,
            &targets,
            &mut |path| match &answers[path].0 {
                Ok(owner) => owner.clone(),
                Err(e) => {
                    lookup_error = Some(e.clone());
                    None
                }
            },
            &mut |path| {
                let (hash, stamp) = answers[path].1?;
                if let (Some(stamps), Some(stamp)) = (stamps.as_deref_mut(), stamp) {
                    stamps.insert(path.clone(), stamp);
                }
                Ok(hash)
            },
        );
        if let Some(e) = lookup_error {
            return Err(rollback_failed(&e));
        }
        if conflicts.is_empty() {
            Ok(targets)
        } else {
            Err(RollbackError::Conflicts(conflicts))
        }
    }

    /// Rolls `task` back atomically. Every path is prechecked first; one
    /// conflict and nothing is touched. The undo is recorded as the task's own
    /// `rollback` snapshots. Returns them (none when the selection changes no
    /// file, e.g. a file the task created and deleted again).
    pub fn rollback(
        &self,
        task: &TaskId,
        query: &RollbackQuery,
    ) -> Result<Vec<EditSnapshot>, RollbackError> {
        let mut st = self.lock();
        self.prepare(&mut st).map_err(|e| rollback_failed(&e))?;
        // Read before the precheck: a file whose stamp settled before this
        // reading and is unchanged right before its replacement was not
        // changed since the precheck read it (no second read needed).
        let clock = disk::fs_clock(&self.layout.clock_file()).ok();
        let mut stamps = HashMap::new();
        let targets = match self.rollback_targets(&st, task, query, Some(&mut stamps)) {
            // Created then deleted, or already rolled back: nothing to do.
            Err(RollbackError::NothingToRollBack) => None,
            other => Some(other?),
        };
        // A record cut from the task's index would be left undone while the
        // rollback reported success: the path indexes must agree. (Read
        // whole here, where a rollback runs, not where one is only offered.)
        let records = self
            .store
            .snapshots_of_task(task)
            .map_err(|e| rollback_failed(&e))?;
        let missing = self
            .store
            .missing_from_task_index(task, &records)
            .map_err(|e| rollback_failed(&e))?;
        if !missing.is_empty() {
            return Err(RollbackError::Damaged(missing));
        }
        let Some(targets) = targets else {
            return Ok(Vec::new());
        };
        let attempt = self
            .cursor(&mut st, task)
            .map_err(|e| rollback_failed(&e))?
            .last_attempt;
        let changes: Vec<Change> = targets
            .iter()
            .map(|t| Change {
                path: t.path.clone(),
                previous_path: None,
                base: t.expected,
                result: t.target,
                unkept: Unkept::NONE,
            })
            .collect();
        let (op_id, ts, records) = self
            .reserve(&mut st, (task, attempt), &changes, SnapshotOrigin::Rollback)
            .map_err(|e| rollback_failed(&e))?;
        let items: Vec<RollbackItem> = targets
            .iter()
            .enumerate()
            .map(|(n, t)| {
                let (dir, name) = split(&t.path);
                RollbackItem {
                    path: t.path.clone(),
                    prior: t.expected,
                    target: t.target,
                    staging: t.target.map(|_| {
                        dir.iter()
                            .cloned()
                            .chain(std::iter::once(format!(
                                ".{name}.cocode-rollback-{op_id}-{n}.tmp"
                            )))
                            .collect::<Vec<_>>()
                            .join("/")
                    }),
                }
            })
            .collect();
        let journal = RollbackJournal {
            version: ROLLBACK_JOURNAL_VERSION,
            op_id: op_id.clone(),
            task_id: task.clone(),
            created_at: ts,
            items,
            records,
        };
        // Journal first, then staging next to each target, then one barrier.
        let journal_file = self
            .store
            .write_rollback_journal(&journal)
            .map_err(|e| rollback_failed(&e))?;
        self.note_written(&mut st, journal_file);
        fail::fail_point!("rollback::after_journal");
        let staged = self.stage_rollback(&mut st, &journal);
        let synced = staged.and_then(|()| {
            fail::fail_point!("rollback::after_stage");
            self.barrier(&mut st).map_err(|e| rollback_failed(&e))
        });
        if let Err(e) = synced {
            self.discard_rollback(&journal);
            return Err(e);
        }
        for item in &journal.items {
            st.exclusion.insert(item.path.clone(), op_id.clone());
        }
        stamps.retain(|_, stamp| clock.is_some_and(|c| stamp.settled_before(&c)));
        match self.replay_rollback(&mut st, &journal, Some(&stamps)) {
            Ok(()) => Ok(journal.records),
            Err(path) => Err(RollbackError::Failed(format!(
                "the rollback stopped at {path}; it stays pending until finished at the next start or abandoned"
            ))),
        }
    }

    fn stage_rollback(
        &self,
        st: &mut GateState,
        journal: &RollbackJournal,
    ) -> Result<(), RollbackError> {
        // Blobs are unpacked and files created on several threads: both are
        // work for the processor (the kernel's inode allocation included).
        let staged = by_folder(
            &journal.items,
            |item| folder_of(&item.path),
            |item| {
                let (Some(target), Some(staging)) = (item.target, &item.staging) else {
                    return Ok(None);
                };
                let bytes = self
                    .store
                    .read_blob(&target)
                    .map_err(|e| rollback_failed(&e))?;
                let (dir, name) = split(&item.path);
                let temp = staging.rsplit('/').next().unwrap_or(staging);
                self.disk
                    .stage(&dir, &name, temp, &bytes)
                    .map_err(|e| rollback_failed(&disk_failed("rollback", &item.path, &e)))?;
                Ok(Some(self.full_path(&dir, temp)))
            },
        )?;
        for full in staged.into_iter().flatten() {
            self.note_written(st, full);
        }
        Ok(())
    }

    /// Removes the journal and staging files of a rollback that failed before
    /// any file changed.
    fn discard_rollback(&self, journal: &RollbackJournal) {
        for staging in journal.items.iter().filter_map(|i| i.staging.as_deref()) {
            let segments: Vec<String> = staging.split('/').map(ToOwned::to_owned).collect();
            if let Some((name, dir)) = segments.split_last() {
                let _ = self.disk.unlink(dir, name);
            }
        }
        if let Err(e) = self.store.remove_rollback_journal(&journal.op_id) {
            tracing::warn!(op = %journal.op_id, error = %e, "could not remove the journal of a failed rollback");
        }
    }

    /// Brings every item of a rollback journal to its target — deletions
    /// first, then restorations — skipping items already there, appends the
    /// rollback's records and removes the journal. Used by a running rollback
    /// and by startup replay alike (`unchanged` is given by a running
    /// rollback: its staging files were written and synced by this process,
    /// and it holds the settled stamps its precheck saw). Stops at the first
    /// path in neither its prior nor its target state (returned); its
    /// journal's paths stay excluded until a person abandons it.
    fn replay_rollback(
        &self,
        st: &mut GateState,
        journal: &RollbackJournal,
        unchanged: Option<&HashMap<NormalizedPath, Stamp>>,
    ) -> Result<(), NormalizedPath> {
        let staged_ready = unchanged.is_some();
        if journal.items.is_empty() {
            // Nothing to restore; a journal without items only needs to go.
            let _ = self.store.remove_rollback_journal(&journal.op_id);
            return Ok(());
        }
        for item in &journal.items {
            st.exclusion
                .insert(item.path.clone(), journal.op_id.clone());
        }
        let order: Vec<&RollbackItem> = journal
            .items
            .iter()
            .filter(|i| i.target.is_none())
            .chain(journal.items.iter().filter(|i| i.target.is_some()))
            .collect();
        if !staged_ready {
            // After a restart the staged files may be missing or torn.
            self.restage_rollback(st, journal, &order)?;
        }
        // Deletions first, then restorations; inside each, folder by folder.
        let (deletions, restorations): (Vec<&RollbackItem>, Vec<&RollbackItem>) =
            order.into_iter().partition(|i| i.target.is_none());
        let started = AtomicBool::new(false);
        // Staging files their rename did not consume (items already at target).
        let mut leftover: Vec<&str> = Vec::new();
        for phase in [deletions, restorations] {
            for (item, changed) in self.apply_rollback_phase(&phase, unchanged, &started)? {
                if changed {
                    let (dir, name) = split(&item.path);
                    let full = self.full_path(&dir, &name);
                    self.note_entry_of(st, &full);
                } else {
                    leftover.extend(item.staging.as_deref());
                }
            }
        }
        fail::fail_point!("rollback::after_apply");
        for staging in leftover {
            let segments: Vec<String> = staging.split('/').map(ToOwned::to_owned).collect();
            if let Some((name, dir)) = segments.split_last() {
                let _ = self.disk.unlink(dir, name);
            }
        }
        // A running rollback's records are new; a replay may find some
        // already appended by the run it finishes.
        let appended = if staged_ready {
            self.store
                .append_task_records(&journal.records)
                .and_then(|()| self.store.append_path_records(&journal.records))
        } else {
            self.store.append_missing(&journal.records)
        };
        // The journal goes after the next barrier, which also makes these
        // appends durable; until then a replay finds every item at target.
        let finished = appended.map_err(|e| e.to_string()).map(|()| {
            self.note_indexes(st, &journal.records);
            fail::fail_point!("rollback::after_records");
            st.rollbacks_unsynced.push(journal.op_id.clone());
        });
        if let Err(e) = finished {
            tracing::error!(op = %journal.op_id, error = %e, "could not finish the rollback's records");
            return Err(journal.items[0].path.clone());
        }
        for item in &journal.items {
            st.exclusion.remove(&item.path);
            st.sweep
                .record(self.layout.workspace_root(), &item.path, item.target);
        }
        st.tasks.remove(&journal.task_id);
        Ok(())
    }

    /// Applies one phase of a rollback (its deletions, or its restorations),
    /// folder by folder ([`by_folder`]). Returns each item with whether it was
    /// changed (else it already was at its target); stops at the first item
    /// in neither state.
    fn apply_rollback_phase<'j>(
        &self,
        items: &[&'j RollbackItem],
        unchanged: Option<&HashMap<NormalizedPath, Stamp>>,
        started: &AtomicBool,
    ) -> Result<Vec<(&'j RollbackItem, bool)>, NormalizedPath> {
        by_folder(
            items,
            |item| folder_of(&item.path),
            |item| {
                if started.swap(true, Ordering::Relaxed) {
                    fail::fail_point!("rollback::between_items");
                }
                self.apply_rollback_item(item, unchanged)
                    .map(|changed| (*item, changed))
            },
        )
    }

    /// Checks one item right before its change and puts it at its target:
    /// `Ok(true)` when changed, `Ok(false)` when it already was there, the
    /// path when it is in neither its prior nor its target state. A file
    /// someone else changed meanwhile is never overwritten. A settled stamp
    /// that still holds (checked in the folder the change is made in) proves
    /// the content the precheck read; otherwise the file is read.
    fn apply_rollback_item(
        &self,
        item: &RollbackItem,
        unchanged: Option<&HashMap<NormalizedPath, Stamp>>,
    ) -> Result<bool, NormalizedPath> {
        let (dir, name) = split(&item.path);
        let stamp = unchanged.and_then(|u| u.get(&item.path));
        let done = match stamp.map(|s| self.restore_item(item, &dir, &name, Some(s))) {
            Some(Ok(true)) => Ok(()),
            Some(Err(e)) => Err(e),
            None | Some(Ok(false)) => {
                match self.current(&item.path) {
                    Ok(cur) if cur == item.target => return Ok(false),
                    Ok(cur) if cur == item.prior => {}
                    _ => return Err(item.path.clone()),
                }
                self.restore_item(item, &dir, &name, None).map(drop)
            }
        };
        done.map(|()| true).map_err(|e| {
            tracing::error!(path = %item.path, error = %e, "rollback step failed");
            item.path.clone()
        })
    }

    /// Puts one rollback item at its target (removal or staged restoration);
    /// with `stamp`, only while the file still has it (`false` otherwise).
    fn restore_item(
        &self,
        item: &RollbackItem,
        dir: &[String],
        name: &str,
        stamp: Option<&Stamp>,
    ) -> io::Result<bool> {
        match (item.target, &item.staging, stamp) {
            (None, _, Some(stamp)) => self.disk.unlink_if(dir, name, stamp),
            (None, _, None) => self.disk.unlink(dir, name).map(|()| true),
            (Some(_), Some(staging), stamp) => self.disk.commit_if(
                &Staged {
                    dir: dir.to_vec(),
                    temp_name: staging.rsplit('/').next().unwrap_or(staging).to_owned(),
                    name: name.to_owned(),
                },
                stamp,
            ),
            (Some(_), None, _) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a restoration without a staging file",
            )),
        }
    }

    /// Stages every restoration still to do from its blob, then one barrier.
    fn restage_rollback(
        &self,
        st: &mut GateState,
        journal: &RollbackJournal,
        order: &[&RollbackItem],
    ) -> Result<(), NormalizedPath> {
        for item in order {
            let (Some(target), Some(staging)) = (item.target, &item.staging) else {
                continue;
            };
            if self.current(&item.path) != Ok(item.prior) {
                continue;
            }
            let (dir, name) = split(&item.path);
            let temp = staging.rsplit('/').next().unwrap_or(staging);
            let staged = self
                .store
                .read_blob(&target)
                .map_err(|e| e.to_string())
                .and_then(|bytes| {
                    self.disk
                        .stage(&dir, &name, temp, &bytes)
                        .map_err(|e| e.to_string())
                });
            if let Err(e) = staged {
                tracing::error!(op = %journal.op_id, path = %item.path, error = %e, "rollback staging failed");
                return Err(item.path.clone());
            }
            let full = self.full_path(&dir, temp);
            self.note_written(st, full);
        }
        if let Err(e) = self.barrier(st) {
            tracing::error!(op = %journal.op_id, error = %e, "rollback barrier failed");
            return Err(order[0].path.clone());
        }
        Ok(())
    }

    /// A person accepts the current state of an interrupted rollback's
    /// paths: the journal moves to `journal/abandoned/`, the paths are free.
    pub fn abandon_pending_journal(&self, op: &OpId) -> Result<Vec<NormalizedPath>, GateError> {
        let mut st = self.lock();
        let paths = paths_of(&st.exclusion, op, "pending rollback journal")?;
        let journals = self
            .store
            .rollback_journals()
            .map_err(|e| store_failed("abandon", &e))?;
        for journal in journals
            .into_iter()
            .filter_map(|j| j.content.ok())
            .filter(|j| j.op_id == *op)
        {
            for staging in journal.items.iter().filter_map(|i| i.staging.as_deref()) {
                let (dir, name) = split(&self.policy.normalize("abandon", staging)?);
                self.disk
                    .unlink(&dir, &name)
                    .map_err(|e| internal("abandon", staging, &e.to_string()))?;
            }
        }
        self.store
            .abandon_rollback_journal(op)
            .map_err(|e| store_failed("abandon", &e))?;
        st.exclusion.retain(|_, o| o != op);
        Ok(paths)
    }
}

/// What a retention run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionReport {
    pub plan: RetentionPlan,
    /// Tasks an interrupted earlier run had marked and this run finished.
    pub finished_earlier: Vec<TaskId>,
    pub blobs_removed: usize,
    /// Blob collection was skipped because a journal cannot be read (its
    /// references are unknown, so nothing may go).
    pub blobs_kept_for_unreadable_journal: bool,
}

impl Gate {
    /// Bytes the history takes on disk (for the cap-exceeded trigger).
    pub fn history_bytes(&self) -> u64 {
        self.store.history_bytes()
    }

    /// Retention P1–P7, inside the serial section. `lives` tells which tasks
    /// are terminal and since when; a task it does not list is never touched.
    pub fn run_retention(
        &self,
        lives: &[TaskLife],
        trigger: RetentionTrigger,
        config: RetentionConfig,
    ) -> Result<RetentionReport, GateError> {
        let mut st = self.lock();
        self.prepare(&mut st)?;
        // Held operations go to the indexes and their journals go: a
        // journal left then is an unresolved one, whose blobs stay.
        self.flush_locked(&mut st)?;
        let failed = |e: StoreError| store_failed("retention", &e);
        let mut report = RetentionReport::default();
        let terminated: HashMap<&TaskId, Timestamp> = lives
            .iter()
            .filter_map(|l| l.terminated_at.map(|t| (&l.task_id, t)))
            .collect();
        let mut histories = Vec::new();
        for task in self.store.task_ids().map_err(failed)? {
            let index = self.layout.task_index(&task);
            if !index.exists() {
                continue;
            }
            let records = self.store.snapshots_of_task(&task).map_err(failed)?;
            if self
                .store
                .retention_marker(&task)
                .map_err(failed)?
                .is_some()
            {
                // An earlier run marked it and stopped: finish the removal.
                self.remove_task_history(&task, &records).map_err(failed)?;
                report.finished_earlier.push(task);
                continue;
            }
            histories.push(TaskHistory {
                terminated_at: terminated.get(&task).copied(),
                index_bytes: std::fs::metadata(&index).map_or(0, |m| m.len()),
                task_id: task,
                records,
            });
        }
        let (journal_blobs, journals_readable) = self.journal_blobs().map_err(failed)?;
        let (stored, _) = self.store.blob_names().map_err(failed)?;
        let blob_sizes: BTreeMap<ContentHash, u64> = stored
            .iter()
            .map(|h| (*h, self.store.blob_size(h)))
            .collect();
        let plan = retention::plan(
            &histories,
            &blob_sizes,
            &journal_blobs,
            self.store.history_bytes(),
            config,
        );
        for task in &plan.remove {
            let Some(h) = histories.iter().find(|h| h.task_id == *task) else {
                continue;
            };
            let marker = RetentionMarker {
                version: 1,
                removed_at: now(),
                reason: format!(
                    "history over its {} MiB cap (retention ran on {}); this task's snapshots were removed",
                    config.byte_cap / (1024 * 1024),
                    trigger.as_str()
                ),
                snapshots_removed: h.records.len(),
                bytes_freed: 0,
            };
            self.store
                .write_retention_marker(task, &marker)
                .map_err(failed)?;
            fail::fail_point!("retention::after_marker");
            self.remove_task_history(task, &h.records).map_err(failed)?;
            st.tasks.remove(task);
        }
        if journals_readable {
            // The sweep's base blobs of files no record names yet stay too: a
            // command may still change those files and be recorded against them.
            let mut keep = journal_blobs;
            keep.extend(st.sweep.hashes());
            report.blobs_removed = self.collect_blobs(&keep).map_err(failed)?;
        } else {
            report.blobs_kept_for_unreadable_journal = true;
        }
        report.plan = plan;
        // A task ended or the app started: the next process starts from here.
        self.save_sweep_cache(&st);
        Ok(report)
    }

    /// Removes a task's records from every path index, then its own index.
    fn remove_task_history(
        &self,
        task: &TaskId,
        records: &[EditSnapshot],
    ) -> Result<(), StoreError> {
        let paths: BTreeSet<&NormalizedPath> = records
            .iter()
            .flat_map(crate::store::record_paths)
            .collect();
        self.store.remove_task_from_path_indexes(paths, task)?;
        self.store.remove_task_index(task)
    }

    /// Blobs the pending journals reference; `false` when a journal cannot be read.
    fn journal_blobs(&self) -> Result<(BTreeSet<ContentHash>, bool), StoreError> {
        let mut blobs = BTreeSet::new();
        let mut readable = true;
        for j in self.store.write_journals()? {
            match j.content {
                Ok(j) => blobs.extend(
                    j.records
                        .iter()
                        .flat_map(|r| [r.base(), r.result()])
                        .flatten(),
                ),
                Err(_) => readable = false,
            }
        }
        for j in self.store.rollback_journals()? {
            match j.content {
                Ok(j) => {
                    blobs.extend(j.items.iter().flat_map(|i| [i.prior, i.target]).flatten());
                    blobs.extend(
                        j.records
                            .iter()
                            .flat_map(|r| [r.base(), r.result()])
                            .flatten(),
                    );
                }
                Err(_) => readable = false,
            }
        }
        Ok((blobs, readable))
    }

    /// P5: removes blobs no record references and `keep` does not hold.
    fn collect_blobs(&self, keep: &BTreeSet<ContentHash>) -> Result<usize, StoreError> {
        let mut referenced: BTreeSet<ContentHash> = keep.clone();
        for file in self.store.path_index_files()? {
            for r in self.store.read_path_index(&file)? {
                referenced.extend([r.base(), r.result()].into_iter().flatten());
            }
        }
        for task in self.store.task_ids()? {
            for r in self.store.snapshots_of_task(&task)? {
                referenced.extend([r.base(), r.result()].into_iter().flatten());
            }
        }
        let (stored, _) = self.store.blob_names()?;
        let mut removed = 0;
        for hash in stored {
            if !referenced.contains(&hash) {
                self.store.remove_blob(&hash)?;
                removed += 1;
            }
        }
        self.store.compact_packs()?;
        Ok(removed)
    }
}

impl WorkspaceFileGate for Gate {
    fn apply(&self, ctx: &TaskContext, op: GateOp) -> Result<GateOutcome, GateError> {
        let mut st = self.lock();
        self.prepare(&mut st)?;
        let plan = self.plan(&st, &op)?;
        let protected = self.protected(&plan);
        if !protected.is_empty() {
            return Ok(GateOutcome::Held {
                pending_change: PendingChange {
                    ctx: ctx.clone(),
                    op,
                    protected,
                },
            });
        }
        let snapshots = self.commit(&mut st, ctx, &plan, SnapshotOrigin::Gate)?;
        Ok(GateOutcome::Applied { snapshots })
    }

    fn save_user_file(&self, path: &NormalizedPath, bytes: &[u8]) -> Result<(), GateError> {
        let mut st = self.lock();
        let target = self.policy.resolve("save", path)?;
        match self.kind(&target)? {
            None | Some(EntryKind::File) => {}
            Some(_) => {
                return Err(refuse(
                    WorkspaceErrorCode::FileTypeConflict,
                    "save",
                    path,
                    "not a regular file",
                ));
            }
        }
        let temp = format!(".{}.cocode-save-{}.tmp", target.name, std::process::id());
        let staged = self
            .disk
            .stage(&target.dir, &target.name, &temp, bytes)
            .map_err(|e| disk_failed("save", path, &e))?;
        let done = self
            .disk
            .sync_staged(&staged)
            .and_then(|()| self.disk.commit(&staged));
        if let Err(e) = done {
            let _ = self.disk.unlink(&target.dir, &temp);
            return Err(disk_failed("save", path, &e));
        }
        // A person's save is never attributed to a running task by the sweep.
        st.sweep.refresh(self.layout.workspace_root(), &target.path);
        Ok(())
    }
}

/// A person's file operation from the Explorer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserOp {
    /// A new empty file.
    CreateFile(NormalizedPath),
    CreateFolder(NormalizedPath),
    /// A file or folder moved or renamed.
    Rename {
        from: NormalizedPath,
        to: NormalizedPath,
    },
    /// A file, link or folder (with everything in it) removed.
    Delete(NormalizedPath),
    /// New contents for several files at once (replace in files): each
    /// only while it still has the content the new one was made from; all
    /// or none.
    Rewrite(Vec<UserWrite>),
}

/// One file of a [`UserOp::Rewrite`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserWrite {
    pub path: NormalizedPath,
    /// The hash of the content the new bytes were made from.
    pub expected: ContentHash,
    pub bytes: Vec<u8>,
}

impl UserOp {
    /// Every path the operation touches.
    pub fn touched_paths(&self) -> Vec<&NormalizedPath> {
        match self {
            Self::CreateFile(p) | Self::CreateFolder(p) | Self::Delete(p) => vec![p],
            Self::Rename { from, to } => vec![from, to],
            Self::Rewrite(files) => files.iter().map(|f| &f.path).collect(),
        }
    }
}

impl Gate {
    /// A person's file operation (the Explorer's new file, new folder,
    /// rename and delete): like a save, no snapshot — the person did it —
    /// but through the same policy (never `.cocode/`, never outside the
    /// workspace, no link followed), and the sweep's cache is brought up to
    /// date so a command running meanwhile is never charged with it.
    pub fn apply_user_op(&self, op: &UserOp) -> Result<(), GateError> {
        let mut st = self.lock();
        let root = self.layout.workspace_root().to_path_buf();
        match op {
            UserOp::CreateFile(path) => self.user_create_file(&mut st, path)?,
            UserOp::Rewrite(files) => self.user_rewrite(&mut st, files)?,
            UserOp::CreateFolder(path) => {
                let target = self.policy.resolve("create folder", path)?;
                self.disk
                    .make_dir(&target.dir, &target.name)
                    .map_err(|e| match e.kind() {
                        io::ErrorKind::AlreadyExists => refuse(
                            WorkspaceErrorCode::FileConflict,
                            "create folder",
                            path,
                            "something by that name is already there",
                        ),
                        _ => disk_failed("create folder", path, &e),
                    })?;
            }
            UserOp::Rename { from, to } => {
                let source = self.policy.resolve("rename", from)?;
                let target = self.policy.resolve("rename", to)?;
                if self.kind(&source)?.is_none() {
                    return Err(refuse(
                        WorkspaceErrorCode::FileNotFound,
                        "rename",
                        from,
                        "there is nothing by that name",
                    ));
                }
                if self.kind(&target)?.is_some() {
                    return Err(refuse(
                        WorkspaceErrorCode::FileConflict,
                        "rename",
                        to,
                        "something by that name is already there",
                    ));
                }
                if source.path.contains(&target.path) {
                    return Err(refuse(
                        WorkspaceErrorCode::PathInvalid,
                        "rename",
                        to,
                        "a folder cannot move into itself",
                    ));
                }
                self.disk
                    .rename((&source.dir, &source.name), (&target.dir, &target.name))
                    .map_err(|e| disk_failed("rename", from, &e))?;
                st.sweep.refresh_tree(&root, &source.path);
                st.sweep.refresh_tree(&root, &target.path);
            }
            UserOp::Delete(path) => {
                let target = self.policy.resolve("delete", path)?;
                match self.kind(&target)? {
                    None => {
                        return Err(refuse(
                            WorkspaceErrorCode::FileNotFound,
                            "delete",
                            path,
                            "there is nothing by that name",
                        ));
                    }
                    Some(EntryKind::Dir) => {
                        let mut inside = target.dir.clone();
                        inside.push(target.name.clone());
                        self.remove_tree(&inside, path)?;
                        self.disk
                            .rmdir_if_empty(&target.dir, &target.name)
                            .map_err(|e| disk_failed("delete", path, &e))?;
                    }
                    Some(_) => self
                        .disk
                        .unlink(&target.dir, &target.name)
                        .map_err(|e| disk_failed("delete", path, &e))?,
                }
                st.sweep.refresh_tree(&root, &target.path);
            }
        }
        Ok(())
    }

    /// A new empty file (never over an existing entry).
    fn user_create_file(&self, st: &mut GateState, path: &NormalizedPath) -> Result<(), GateError> {
        let root = self.layout.workspace_root().to_path_buf();
        let target = self.policy.resolve("create", path)?;
        if self.kind(&target)?.is_some() {
            return Err(refuse(
                WorkspaceErrorCode::FileConflict,
                "create",
                path,
                "something by that name is already there",
            ));
        }
        let temp = format!(".{}.cocode-new-{}.tmp", target.name, std::process::id());
        let staged = self
            .disk
            .stage(&target.dir, &target.name, &temp, &[])
            .map_err(|e| disk_failed("create", path, &e))?;
        if let Err(e) = self
            .disk
            .rename((&target.dir, &temp), (&target.dir, &target.name))
        {
            let _ = self.disk.unlink(&staged.dir, &temp);
            return Err(disk_failed("create", path, &e));
        }
        st.sweep.refresh(&root, &target.path);
        Ok(())
    }

    /// New contents for several files, all or none: every file must still
    /// hold what its new content was made from (checked under the gate's
    /// lock), all are staged and synced, then all are committed.
    fn user_rewrite(&self, st: &mut GateState, files: &[UserWrite]) -> Result<(), GateError> {
        let root = self.layout.workspace_root().to_path_buf();
        let mut targets = Vec::with_capacity(files.len());
        for file in files {
            let target = self.policy.resolve("replace", &file.path)?;
            if targets.iter().any(|t: &Resolved| t.path == target.path) {
                return Err(refuse(
                    WorkspaceErrorCode::FileConflict,
                    "replace",
                    &file.path,
                    "the file is named twice",
                ));
            }
            let now = match self.kind(&target)? {
                Some(EntryKind::File) => self.read(&target, "replace")?,
                _ => {
                    return Err(refuse(
                        WorkspaceErrorCode::FileNotFound,
                        "replace",
                        &file.path,
                        "not a file any more",
                    ));
                }
            };
            if ContentHash::of(&now) != file.expected {
                return Err(refuse(
                    WorkspaceErrorCode::FileConflict,
                    "replace",
                    &file.path,
                    "the file changed since it was searched; search again",
                ));
            }
            targets.push(target);
        }
        let mut staged = Vec::with_capacity(files.len());
        let cleanup = |staged: &[(Resolved, Staged, String)]| {
            for (target, _, temp) in staged {
                let _ = self.disk.unlink(&target.dir, temp);
            }
        };
        for (file, target) in files.iter().zip(&targets) {
            let temp = format!(".{}.cocode-replace-{}.tmp", target.name, std::process::id());
            match self
                .disk
                .stage(&target.dir, &target.name, &temp, &file.bytes)
                .and_then(|s| self.disk.sync_staged(&s).map(|()| s))
            {
                Ok(s) => staged.push((target.clone(), s, temp)),
                Err(e) => {
                    cleanup(&staged);
                    return Err(disk_failed("replace", &file.path, &e));
                }
            }
        }
        for (i, (target, s, _)) in staged.iter().enumerate() {
            if let Err(e) = self.disk.commit(s) {
                cleanup(&staged[i..]);
                return Err(disk_failed("replace", &target.path, &e));
            }
            st.sweep.refresh(&root, &target.path);
        }
        Ok(())
    }

    /// Removes everything inside the folder `dir` (links are removed, never
    /// followed).
    fn remove_tree(&self, dir: &[String], shown: &NormalizedPath) -> Result<(), GateError> {
        let failed = |e: &io::Error| disk_failed("delete", shown, e);
        for (name, kind) in self.disk.list(dir).map_err(|e| failed(&e))? {
            if kind == EntryKind::Dir {
                let mut inner = dir.to_vec();
                inner.push(name.clone());
                self.remove_tree(&inner, shown)?;
                self.disk
                    .rmdir_if_empty(dir, &name)
                    .map_err(|e| failed(&e))?;
            } else {
                self.disk.unlink(dir, &name).map_err(|e| failed(&e))?;
            }
        }
        Ok(())
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let mut st = self.lock();
        if let Err(e) = self.flush_locked(&mut st) {
            tracing::warn!(error = %e, "could not flush the gate on close; recovery settles it at the next start");
        }
        self.save_sweep_cache(&st);
    }
}

#[cfg(test)]
mod io_codes {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn disk_errors_keep_their_kind_and_only_the_disk_failing_is_retryable() {
        use WorkspaceErrorCode as C;
        use io::ErrorKind as K;
        let path = NormalizedPath::try_from("a.txt".to_owned()).unwrap();
        let code = |kind: io::ErrorKind| {
            let e = disk_failed("write", &path, &io::Error::from(kind));
            (e.code, e.code.retryable(), e.io_kind)
        };
        assert_eq!(
            code(K::NotFound),
            (C::FileNotFound, false, Some(K::NotFound))
        );
        assert_eq!(
            code(K::AlreadyExists),
            (C::FileConflict, false, Some(K::AlreadyExists))
        );
        for kind in [K::InvalidInput, K::PermissionDenied, K::ReadOnlyFilesystem] {
            assert_eq!(code(kind), (C::PathNotWritable, false, Some(kind)));
        }
        for kind in [K::StorageFull, K::Other, K::Interrupted] {
            assert_eq!(code(kind), (C::IoFailed, true, Some(kind)));
        }
        let store = store_failed(
            "append",
            &StoreError::Io {
                message: "fsync failed".into(),
                kind: Some(K::StorageFull),
            },
        );
        assert_eq!(
            (store.code, store.code.retryable(), store.io_kind),
            (C::IoFailed, true, Some(K::StorageFull))
        );
    }
}
