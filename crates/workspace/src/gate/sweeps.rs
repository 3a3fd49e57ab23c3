//! The sweep around a command or an agent's turn: the scan before, the
//! scan after and its changes recorded as observed snapshots, the
//! metadata census, and the stat cache kept for the next process.

use std::io::{self, Read, Write};

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{GateError, StoreError, TaskContext};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{EditSnapshot, SnapshotOrigin};

use super::errors::{refuse, store_failed};
use super::plan::{Change, Plan};
use super::state::{Gate, GateState, TaskCursor};
use crate::disk;
use crate::sweep::StatCache;

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

    /// Takes over the stat cache the last process left, so files whose
    /// stat did not change are not read (and their content not stored)
    /// again. Missing or damaged, it is simply not used.
    pub(super) fn restore_sweep_cache(&self, st: &mut GateState) {
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
    pub(super) fn save_sweep_cache(&self, st: &GateState) {
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
}
