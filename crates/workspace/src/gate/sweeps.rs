//! The sweep around a command or an agent's turn: the scan before, the
//! scan after and its changes recorded as observed snapshots, the
//! metadata census, and the stat cache kept for the next process.

use std::io::{self, Read, Write};

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{GateError, GateOp, PendingChange, StoreError, TaskContext};
use cocode_core::ids::TaskId;
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{ContentHash, EditSnapshot, Form, SnapshotOrigin};

use super::errors::{io_failed, refuse, store_failed};
use super::plan::{Change, Plan};
use super::state::{Gate, GateState, TaskCursor};
use crate::disk;
use crate::parallel::lock_ignoring_poison;
use crate::store::{SWEEP_JOURNAL_VERSION, SweepJournal, UnrecordedMarker};
use crate::sweep::{ScanError, StatCache, SweepBudget};

/// How soon after a look ended the look before a command may be narrowed
/// to what the watcher reported (the command's verification after it, the
/// next command of a quick agent). The one change no watcher reports is a
/// write through a hard link a person made from outside the workspace
/// meanwhile; the next full look takes it, as the person's, unless the task
/// changes that file too. Kept short so that window stays small.
pub const NARROW_BEFORE_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

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

impl Gate {
    /// Refreshes the stat cache before a command or an agent turn, storing a
    /// base blob of every file it hashes (so the change can be rolled back).
    /// No task's: nothing is kept for a later process (see
    /// [`Self::begin_task_sweep`]).
    pub fn begin_sweep(&self) -> Result<crate::sweep::SweepStats, GateError> {
        let mut st = self.lock();
        self.prepare(&mut st)?;
        self.begin_locked(&mut st, &SweepBudget::UNLIMITED, false)
    }

    /// The look before `ctx`'s command or turn, within `budget`. The look
    /// is kept for a later process with a note that the command runs from
    /// it, so that if cocode ends before the look after it, the next start
    /// records what the command changed with the task (see
    /// [`crate::store::SweepJournal`]).
    #[tracing::instrument(level = "debug", skip_all, name = "sweep.begin")]
    pub fn begin_task_sweep(
        &self,
        ctx: &TaskContext,
        budget: &SweepBudget<'_>,
    ) -> Result<crate::sweep::SweepStats, GateError> {
        let mut st = self.lock();
        self.prepare(&mut st)?;
        let stats = self.begin_locked(&mut st, budget, true)?;
        self.journal_sweep(&mut st, ctx)?;
        Ok(stats)
    }

    /// The next look before a command walks the whole tree, as after a
    /// pause (for measuring that look).
    pub fn forget_recent_look(&self) {
        self.lock().sweep.forget_recent_look();
    }

    /// The look before a command: narrowed to what the watcher reported
    /// when `narrow` and a look ended less than [`NARROW_BEFORE_WITHIN`]
    /// ago (see [`crate::sweep::StatCache::scan_reported_before`]), else
    /// the whole tree by the rules on disk.
    fn begin_locked(
        &self,
        st: &mut GateState,
        budget: &SweepBudget<'_>,
        narrow: bool,
    ) -> Result<crate::sweep::SweepStats, GateError> {
        let narrowed = if narrow {
            let root = self.layout.workspace_root();
            self.scanning(st, |sweep, store_blob| {
                sweep.scan_reported_before(
                    root,
                    &self.sweep_limits,
                    NARROW_BEFORE_WITHIN,
                    budget,
                    store_blob,
                )
            })?
        } else {
            None
        };
        let stats = match narrowed {
            Some(stats) => {
                st.last_scan = stats;
                stats
            }
            None => self.scan(st, crate::sweep::IgnoreRules::OnDisk, budget)?,
        };
        st.begun_incomplete = stats.incomplete(self.sweep_limits.max_files);
        st.metadata_before = self.metadata_census(st.sweep.census());
        Ok(stats)
    }

    /// Keeps the look the cache holds for a later process, and notes that
    /// `ctx`'s command or turn runs from it.
    #[tracing::instrument(level = "debug", skip_all, name = "sweep.journal")]
    fn journal_sweep(&self, st: &mut GateState, ctx: &TaskContext) -> Result<(), GateError> {
        self.keep_sweep_look(st).map_err(|e| {
            io_failed(
                "sweep",
                &format!("could not keep the look at the workspace before the command: {e}"),
                Some(e.kind()),
            )
        })?;
        self.store
            .write_sweep_journal(&SweepJournal {
                version: SWEEP_JOURNAL_VERSION,
                ctx: ctx.clone(),
                began_at: self.clock.now(),
            })
            .map_err(|e| store_failed("sweep", &e))
    }

    /// The version-control metadata made since the sweep began (or since
    /// this was last asked): a repository at a root that had none, or in a
    /// folder the sweep ignores, which its records do not show. The census
    /// is taken again, so each entry is named once.
    pub fn metadata_made_since_sweep(&self) -> Vec<NormalizedPath> {
        // The walk of ignored folders runs outside the serial section.
        let census = self.lock().sweep.census();
        let now = self.metadata_census(census);
        let mut st = self.lock();
        let made = match (&st.metadata_before, &now) {
            (Some(before), Some(after)) => crate::metadata_census::made(before, after),
            _ => Vec::new(),
        };
        st.metadata_before = now;
        made
    }

    /// The version-control metadata in the workspace: from what the looks
    /// know (`census`), or by a walk of the whole tree before any look.
    fn metadata_census(
        &self,
        census: Option<crate::sweep::Census>,
    ) -> Option<std::collections::BTreeSet<NormalizedPath>> {
        let (root, options) = (self.layout.workspace_root(), self.policy.options());
        match census {
            Some(census) => census.take(root, options),
            None => crate::metadata_census::take(root, options),
        }
    }

    /// One stat-cache scan; stored blobs are noted for the next barrier.
    #[tracing::instrument(level = "debug", skip_all, name = "sweep.scan")]
    pub(super) fn scan(
        &self,
        st: &mut GateState,
        rules: crate::sweep::IgnoreRules,
        budget: &SweepBudget<'_>,
    ) -> Result<crate::sweep::SweepStats, GateError> {
        let root = self.layout.workspace_root();
        let stats = self.scanning(st, |sweep, store_blob| {
            sweep.scan(root, &self.sweep_limits, rules, budget, store_blob)
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
        ) -> Result<R, ScanError>,
    ) -> Result<R, GateError> {
        let store = &self.store;
        let mut stored = Vec::new();
        let done = scan(&mut st.sweep, &mut |bytes| {
            let (_, path) = store.put_blob(bytes)?;
            stored.extend(path);
            Ok(())
        });
        // Blobs stored before a failure are still noted: they are history's.
        for path in stored {
            self.note_blob(st, path);
        }
        done.map_err(|e| match e {
            ScanError::Store(e) => store_failed("sweep", &e),
            ScanError::Stopped(stopped) => GateError {
                code: WorkspaceErrorCode::NotFullyRecorded,
                operation: "sweep",
                path: String::new(),
                message: stopped.describe().to_owned(),
                io_kind: None,
            },
        })
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
        self.end_sweep_within(ctx, origin, writers, &SweepBudget::UNLIMITED)
    }

    /// [`Self::end_sweep_by`] within `budget`. A look that cannot finish
    /// (out of time, stopped, the store failing, more files than the
    /// sweep tracks) marks the task "not fully recorded" and says so
    /// (`WORKSPACE_NOT_FULLY_RECORDED`, `WORKSPACE_IO_FAILED`); what was
    /// recorded stays, and a rollback of the task is refused with that
    /// reason.
    #[tracing::instrument(level = "debug", skip_all, name = "sweep.end")]
    pub fn end_sweep_within(
        &self,
        ctx: &TaskContext,
        origin: SnapshotOrigin,
        writers: SweepWriters,
        budget: &SweepBudget<'_>,
    ) -> Result<Vec<EditSnapshot>, GateError> {
        self.end_task_sweep(ctx, origin, writers, budget, false)
    }

    /// [`Self::end_sweep_within`] where the sweep goes on: what the task
    /// changed so far is recorded, and the next command of the turn runs
    /// from this look (kept for a later process, as
    /// [`Self::begin_task_sweep`] keeps it).
    pub fn record_sweep_so_far(
        &self,
        ctx: &TaskContext,
        origin: SnapshotOrigin,
        writers: SweepWriters,
        budget: &SweepBudget<'_>,
    ) -> Result<Vec<EditSnapshot>, GateError> {
        self.end_task_sweep(ctx, origin, writers, budget, true)
    }

    fn end_task_sweep(
        &self,
        ctx: &TaskContext,
        origin: SnapshotOrigin,
        writers: SweepWriters,
        budget: &SweepBudget<'_>,
        goes_on: bool,
    ) -> Result<Vec<EditSnapshot>, GateError> {
        let mut st = self.lock();
        self.prepare(&mut st)?;
        let records = match self.end_locked(&mut st, ctx, origin, writers, budget) {
            Ok(records) => records,
            Err(e) => {
                let reason = match e.code {
                    WorkspaceErrorCode::NotFullyRecorded => e.message.clone(),
                    _ => format!("recording its changes failed: {}", e.message),
                };
                self.mark_unrecorded(ctx, &reason);
                return Err(e);
            }
        };
        let incomplete = st
            .begun_incomplete
            .clone()
            .or_else(|| st.last_scan.incomplete(self.sweep_limits.max_files));
        if let Some(reason) = incomplete {
            self.mark_unrecorded(ctx, &reason);
            return Err(GateError {
                code: WorkspaceErrorCode::NotFullyRecorded,
                operation: "sweep",
                path: String::new(),
                message: format!("{reason}; {} change(s) were recorded", records.len()),
                io_kind: None,
            });
        }
        if goes_on {
            self.journal_sweep(&mut st, ctx)?;
        } else if let Err(e) = self.store.remove_sweep_journal(&ctx.task_id) {
            tracing::warn!(error = %e, "could not remove a finished sweep's journal; the next start looks again");
        }
        Ok(records)
    }

    fn end_locked(
        &self,
        st: &mut GateState,
        ctx: &TaskContext,
        origin: SnapshotOrigin,
        writers: SweepWriters,
        budget: &SweepBudget<'_>,
    ) -> Result<Vec<EditSnapshot>, GateError> {
        let changes = if let Some(changes) = self.scan_reported(st, writers, budget)? {
            changes
        } else {
            let before = st.sweep.clone();
            // Judged by the ignore rules in force before: a `.gitignore`
            // written meanwhile hides nothing.
            self.scan(st, crate::sweep::IgnoreRules::AsKept, budget)?;
            before.changes_to(&st.sweep)
        };
        // A sweep ends a command, an external agent's turn or a
        // verification: what was held goes to the indexes, where another
        // process reads it.
        if let Err(e) = self.store.checkpoint() {
            tracing::warn!(error = %e, "a checkpoint of the history failed; the next one retries");
        }
        // A command or an agent's own write that changed an existing test
        // file waits for a person, as the agent's gated edit would.
        let changes = if origin == SnapshotOrigin::Observed {
            self.hold_protected(st, ctx, changes)
        } else {
            changes
        };
        if changes.is_empty() {
            return Ok(Vec::new());
        }
        self.record_observed(st, ctx, changes, origin)
    }

    /// Takes the changes of existing protected test files out of
    /// `changes`: each file goes back to its base, and the change waits
    /// for a person as one held operation of `ctx`'s task (approval
    /// applies the recorded result byte for byte; denial keeps the base).
    /// A change with a side too large to keep cannot be put back or
    /// re-applied: it stays in `changes`, recorded like any other.
    fn hold_protected(
        &self,
        st: &mut GateState,
        ctx: &TaskContext,
        changes: Vec<crate::sweep::ObservedChange>,
    ) -> Vec<crate::sweep::ObservedChange> {
        // Content changes of files: a link, a FIFO or a mode change is
        // recorded as any change (a held operation writes bytes).
        let file = |form: Option<Form>| matches!(form, None | Some(Form::File { .. }));
        let (protected, mut rest): (Vec<_>, Vec<_>) = changes.into_iter().partition(|c| {
            c.transition.before.is_some()
                && c.transition.before != c.transition.after
                && c.unkept.is_none()
                && file(c.forms.base)
                && file(c.forms.result)
                && self.tests.is_protected(&c.transition.path)
        });
        let mut ops = Vec::new();
        let mut held = Vec::new();
        for change in protected {
            let t = &change.transition;
            let base = t.before.map(|h| self.store.read_blob(&h)).transpose();
            let result = t.after.map(|h| self.store.read_blob(&h)).transpose();
            let (Ok(Some(base)), Ok(result)) = (base, result) else {
                // History lacks a side: recorded as it is.
                rest.push(change);
                continue;
            };
            let path = t.path.clone();
            if let Err(e) = self.put_back(st, &path, &base) {
                tracing::warn!(path = %path, error = %e, "a held test file could not be put back; its change is recorded");
                rest.push(change);
                continue;
            }
            ops.push(match result {
                Some(bytes) => GateOp::Write { path, bytes },
                None => GateOp::Delete { path },
            });
            held.push(t.clone());
        }
        if !ops.is_empty() {
            let op = if ops.len() == 1 {
                ops.remove(0)
            } else {
                GateOp::Batch { ops }
            };
            st.sweep_held.push(PendingChange {
                ctx: ctx.clone(),
                op,
                protected: held,
            });
        }
        rest.sort_by(|a, b| a.transition.path.cmp(&b.transition.path));
        rest
    }

    /// Writes `bytes` back at `path` (a held test file going back to its
    /// base), outside any record: history already holds that state as the
    /// path's last. The sweep's picture takes it.
    fn put_back(
        &self,
        st: &mut GateState,
        path: &NormalizedPath,
        bytes: &[u8],
    ) -> Result<(), GateError> {
        let target = self.policy.resolve("hold", path)?;
        self.write_outside_records(st, "hold", &target, bytes)
    }

    /// The changes of protected test files sweeps of `task` held since
    /// this was last asked (see [`Self::hold_protected`]), for the task to
    /// wait for a person's decision.
    pub fn take_sweep_held(&self, task: &TaskId) -> Vec<PendingChange> {
        let mut st = self.lock();
        let (mine, others) = std::mem::take(&mut st.sweep_held)
            .into_iter()
            .partition(|held| held.ctx.task_id == *task);
        st.sweep_held = others;
        mine
    }

    /// Marks `ctx`'s task "not fully recorded" with `reason`: in this
    /// process at once, and in a synced marker file; when that cannot be
    /// written (a full disk) the sweep's journal stays, so the next start
    /// looks again.
    pub(super) fn mark_unrecorded(&self, ctx: &TaskContext, reason: &str) {
        tracing::warn!(task = %ctx.task_id, reason, "a task's changes are not all recorded");
        lock_ignoring_poison(&self.unrecorded)
            .entry(ctx.task_id.clone())
            .or_insert_with(|| reason.to_owned());
        let marker = UnrecordedMarker {
            version: 1,
            at: self.clock.now(),
            attempt_no: ctx.attempt_no,
            reason: reason.to_owned(),
        };
        let kept = match self.store.unrecorded_marker(&ctx.task_id) {
            // The first reason stands.
            Ok(Some(_)) => Ok(()),
            _ => self.store.write_unrecorded_marker(&ctx.task_id, &marker),
        };
        match kept {
            Ok(()) => {
                if let Err(e) = self.store.remove_sweep_journal(&ctx.task_id) {
                    tracing::warn!(error = %e, "could not remove a sweep's journal");
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "could not mark a task not fully recorded; its sweep journal stays for the next start");
            }
        }
    }

    /// Why `task`'s changes are not all recorded, if a sweep of it could
    /// not finish.
    pub fn unrecorded_reason(&self, task: &TaskId) -> Option<String> {
        if let Some(reason) = self.unrecorded_now(task) {
            return Some(reason);
        }
        match self.store.unrecorded_marker(task) {
            Ok(marker) => marker.map(|m| m.reason),
            Err(e) => Some(format!("its marker cannot be read: {e}")),
        }
    }

    /// [`Self::unrecorded_reason`] as this process knows it: no file is
    /// read and the gate's serial section is not entered, so asking after
    /// every event of a task never waits for a sweep that is running.
    pub fn unrecorded_now(&self, task: &TaskId) -> Option<String> {
        lock_ignoring_poison(&self.unrecorded).get(task).cloned()
    }

    /// The narrowed scan after a command, when `writers` and the watcher
    /// allow it: what changed. Stored blobs are noted for the next barrier.
    fn scan_reported(
        &self,
        st: &mut GateState,
        writers: SweepWriters,
        budget: &SweepBudget<'_>,
    ) -> Result<Option<Vec<crate::sweep::ObservedChange>>, GateError> {
        if writers != SweepWriters::ConfinedCommands || !st.sweep.can_narrow() {
            return Ok(None);
        }
        let root = self.layout.workspace_root();
        let scanned = self.scanning(st, |sweep, store_blob| {
            sweep.scan_reported(root, &self.sweep_limits, budget, store_blob)
        })?;
        Ok(scanned.map(|(stats, changes)| {
            st.last_scan = stats;
            changes
        }))
    }

    pub(super) fn record_observed(
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
                forms: c.forms,
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

    /// Takes over the stat cache the last process left, so files whose
    /// stat did not change are not read (and their content not stored)
    /// again. Missing or damaged, it is simply not used.
    #[tracing::instrument(level = "debug", skip_all, name = "sweep.restore_cache")]
    pub(super) fn restore_sweep_cache(&self, st: &mut GateState) {
        let path = self.layout.sweep_cache_file();
        let Ok(file_bytes) = std::fs::read(&path) else {
            return;
        };
        let mut bytes = Vec::new();
        if Read::read_to_end(
            &mut flate2::read::GzDecoder::new(&file_bytes[..]),
            &mut bytes,
        )
        .is_err()
        {
            return;
        }
        let store = &self.store;
        let packed = store.packed_by_prefix();
        let (taken, whole) = st
            .sweep
            .restore(&bytes, &|h| store.has_blob_cached(h), &|prefix| {
                packed.get(prefix).copied().flatten()
            });
        // The file as it is serves this process too: what its looks change
        // is kept as a delta against it, not as a new file of the tree.
        let file_hash = ContentHash::of(&file_bytes);
        st.sweep.mark_saved();
        st.sweep_file_hash = Some(file_hash);
        // What changed since the file was written, when a delta names it.
        let delta = std::fs::read(self.layout.sweep_delta_file()).ok();
        let applied = match delta.as_deref().and_then(|d| d.split_first_chunk::<32>()) {
            Some((hash, rest)) if *hash == *file_hash.as_bytes() => {
                st.sweep.apply_delta(rest, &|h| store.has_blob_cached(h))
            }
            _ => true,
        };
        st.restored_whole = whole && applied;
        tracing::debug!(entries = taken, whole, applied, "stat cache restored");
    }

    /// Leaves the stat cache for the next process (best effort, not
    /// synced: a lost or stale cache only costs a full read). Without a
    /// scan in this process it is what the file already holds: nothing is
    /// written (retention at start-up follows the restore at once).
    #[tracing::instrument(level = "debug", skip_all, name = "sweep.save_cache")]
    pub(super) fn save_sweep_cache(&self, st: &mut GateState) {
        if !st.sweep.is_populated() || st.sweep.is_empty() {
            return;
        }
        // A small change since the file was written goes as its delta.
        if let Err(e) = self.keep_sweep_look(st) {
            tracing::warn!(error = %e, "could not keep the stat cache");
        }
    }

    /// Keeps the look the stat cache holds for a later process: what
    /// changed since the cache file was written, as a small delta beside it
    /// (a command's look costs what changed, not the tree), or the whole
    /// cache when there is no file of this process yet or the delta grew.
    fn keep_sweep_look(&self, st: &mut GateState) -> io::Result<()> {
        let most = (st.sweep.len() / 8).max(4096);
        if let (Some(full), Some(delta)) = (st.sweep_file_hash, st.sweep.delta_bytes(most)) {
            let mut bytes = full.as_bytes().to_vec();
            bytes.extend(delta);
            return disk::write_atomic(&self.layout.sweep_delta_file(), &bytes);
        }
        self.write_sweep_cache(st)
    }

    /// Writes the stat cache as it is (an empty one too: it is the look
    /// a later process compares with), and drops any delta of an older
    /// file.
    fn write_sweep_cache(&self, st: &mut GateState) -> io::Result<()> {
        let path = self.layout.sweep_cache_file();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let store = &self.store;
        let bytes = st.sweep.to_bytes(&|h| store.is_packed_cached(h));
        let packed = Write::write_all(&mut gz, &bytes).and_then(|()| gz.finish())?;
        disk::write_atomic(&path, &packed)?;
        // A delta names the file it goes with; an older one is never used,
        // and goes.
        let _ = disk::remove_file(&self.layout.sweep_delta_file());
        st.sweep_file_hash = Some(ContentHash::of(&packed));
        st.sweep.mark_saved();
        Ok(())
    }
}
