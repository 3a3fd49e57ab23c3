//! The gate itself ([`Gate`]): what it holds, the state its serial section
//! guards, its construction and accessors, and its close.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use cocode_core::clock::Clock;
use cocode_core::gate::GateError;
use cocode_core::ids::{AttemptNo, OpId, Seq, TaskId};
use cocode_core::path::NormalizedPath;

use crate::disk::{self, SafeRoot};
use crate::layout::Layout;
use crate::parallel::lock_ignoring_poison;
use crate::policy::{PathPolicy, TestPatterns};
use crate::store::HistoryStore;
use crate::sweep::{StatCache, SweepLimits};

/// Where a task's numbering stands.
#[derive(Debug, Clone, Copy)]
pub(super) struct TaskCursor {
    pub(super) last_seq: Option<Seq>,
    pub(super) last_attempt: AttemptNo,
}

/// What the gate's serial section guards (behind [`Gate::lock`]).
pub(super) struct GateState {
    pub(super) recovered: bool,
    /// Paths of unresolved write journals.
    pub(super) blocked: BTreeMap<NormalizedPath, OpId>,
    /// Paths of a running or interrupted rollback.
    pub(super) exclusion: BTreeMap<NormalizedPath, OpId>,
    pub(super) tasks: HashMap<TaskId, TaskCursor>,
    /// Numbering held by unresolved journals, so new records never reuse it.
    pub(super) held_by_journals: HashMap<TaskId, TaskCursor>,
    /// Committed operations whose journals go after the next barrier.
    pub(super) settled_unsynced: Vec<OpId>,
    /// Checkpointed operations the next barrier makes durable: then their
    /// journals are settled.
    pub(super) checkpointed_unsynced: Vec<OpId>,
    /// Finished rollbacks whose journals go after the next barrier.
    pub(super) rollbacks_unsynced: Vec<OpId>,
    /// Files written and folders changed since the last barrier.
    pub(super) unsynced_files: BTreeSet<PathBuf>,
    pub(super) unsynced_dirs: BTreeSet<PathBuf>,
    /// Folders and appended files whose entry was looked at since the last
    /// barrier, with their identity then (see [`disk::entry_id`]).
    pub(super) entries_seen: HashMap<PathBuf, Option<disk::EntryId>>,
    /// Folders and appended files whose entry in their folder a barrier
    /// made durable, with their identity then: while it is the same, their
    /// folder need not be synced for them.
    pub(super) durable_entries: HashMap<PathBuf, disk::EntryId>,
    pub(super) sweep: StatCache,
    /// What the last scan of the sweep did.
    pub(super) last_scan: crate::sweep::SweepStats,
    /// The version-control metadata the workspace held when the sweep
    /// began (`metadata_census`), or `None` when it was too large to count.
    pub(super) metadata_before: Option<BTreeSet<NormalizedPath>>,
    /// Why the look before the running command did not track everything
    /// it met, if it did not.
    pub(super) begun_incomplete: Option<String>,
    /// The stat cache the last process left was taken whole (every entry
    /// of it; a missing file is not whole).
    pub(super) restored_whole: bool,
    /// Changes of protected test files sweeps put back and hold, until
    /// their task takes them ([`Gate::take_sweep_held`]).
    pub(super) sweep_held: Vec<cocode_core::gate::PendingChange>,
    /// The hash of the stat cache file this process last wrote (a delta
    /// beside it names it).
    pub(super) sweep_file_hash: Option<cocode_core::snapshot::ContentHash>,
}

/// The gate over one open workspace.
pub struct Gate {
    pub(super) layout: Layout,
    pub(super) store: HistoryStore,
    pub(super) policy: PathPolicy,
    pub(super) tests: TestPatterns,
    pub(super) disk: SafeRoot,
    pub(super) sweep_limits: SweepLimits,
    pub(super) state: Mutex<GateState>,
    /// What records and journals are stamped with.
    pub(super) clock: Arc<dyn Clock>,
    /// Tasks whose changes are not all recorded, and why (also in their
    /// marker files, when those could be written). Apart from the serial
    /// section: a task asks after every event, even while a sweep runs.
    pub(super) unrecorded: Mutex<HashMap<TaskId, String>>,
    /// The process ends once the gate is closed: its caches' memory is
    /// left to the system (see [`Gate::process_ends_after_close`]).
    pub(super) process_ends: std::sync::atomic::AtomicBool,
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
            clock: cocode_core::clock::system(),
            unrecorded: Mutex::new(HashMap::new()),
            process_ends: std::sync::atomic::AtomicBool::new(false),
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
                begun_incomplete: None,
                restored_whole: false,
                sweep_held: Vec::new(),
                sweep_file_hash: None,
            }),
        })
    }

    /// Replaces the sweep's size and count limits.
    #[must_use]
    pub fn with_sweep_limits(mut self, limits: SweepLimits) -> Self {
        self.sweep_limits = limits;
        self
    }

    /// Stamps records and journals with `clock` from now on (the host's
    /// one clock; the system's until then).
    pub fn use_clock(&mut self, clock: Arc<dyn Clock>) {
        self.clock = clock;
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

    pub(super) fn lock(&self) -> MutexGuard<'_, GateState> {
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
}

impl Gate {
    /// Says the process ends once this gate is closed (a command line's
    /// run): closing it still flushes and saves everything, but leaves the
    /// stat cache's memory (two maps of every file) to the system instead
    /// of freeing it entry by entry — 10–15 ms at the end of a task run in
    /// a 24,000-file tree.
    pub fn process_ends_after_close(&self) {
        self.process_ends
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let mut st = self.lock();
        if let Err(e) = self.flush_locked(&mut st) {
            tracing::warn!(error = %e, "could not flush the gate on close; recovery settles it at the next start");
        }
        self.save_sweep_cache(&mut st);
        if self.process_ends.load(std::sync::atomic::Ordering::SeqCst) {
            std::mem::take(&mut st.sweep).leave_to_exit();
        }
    }
}
