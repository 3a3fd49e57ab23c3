//! Rolling a task back: what is available, the precheck, the rollback
//! journal, its replay (also at startup), and abandoning an interrupted one.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use cocode_core::gate::GateError;
use cocode_core::ids::{OpId, TaskId};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{EditSnapshot, Form, Forms, SnapshotOrigin, Unkept};

use super::errors::{disk_failed, internal, store_failed};
use super::paths::{paths_of, split};
use super::plan::Change;
use super::state::{Gate, GateState};
use crate::disk::{self, EntryKind, Staged, Stamp};
use crate::parallel::{by_folder, folder_of, parallel_map};
use crate::rollback::{
    self, RollbackAvailability, RollbackError, RollbackQuery, RollbackTarget, is_as_recorded,
};
use crate::store::{ROLLBACK_JOURNAL_VERSION, RollbackItem, RollbackJournal};

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
        if let Some(reason) = self.unrecorded_reason(task) {
            return Err(RollbackError::NotFullyRecorded(reason));
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
                let (found, stamp) = answers[path].1?;
                if let (Some(stamps), Some(stamp)) = (stamps.as_deref_mut(), stamp) {
                    stamps.insert(path.clone(), stamp);
                }
                Ok(found)
            },
        );
        if let Some(e) = lookup_error {
            return Err(rollback_failed(&e));
        }
        let mut conflicts = conflicts;
        conflicts.extend(self.folders_left_holding(&targets));
        if conflicts.is_empty() {
            Ok(targets)
        } else {
            Err(RollbackError::Conflicts(conflicts))
        }
    }

    /// The folders a rollback would remove that hold something it does not
    /// remove (a person's file put there since): each a conflict, so
    /// nothing is touched.
    fn folders_left_holding(&self, targets: &[RollbackTarget]) -> Vec<rollback::PathConflict> {
        let removed: std::collections::BTreeSet<&str> = targets
            .iter()
            .filter(|t| t.target.is_none())
            .map(|t| t.path.as_str())
            .collect();
        let mut conflicts = Vec::new();
        for t in targets {
            if t.target.is_some() || t.expected_form != Some(Form::Folder) {
                continue;
            }
            let segments: Vec<String> = t.path.segments().map(ToOwned::to_owned).collect();
            let Ok(names) = self.disk.list(&segments) else {
                continue;
            };
            let others = names
                .iter()
                .any(|(name, _)| !removed.contains(format!("{}/{name}", t.path).as_str()));
            if others {
                conflicts.push(rollback::PathConflict {
                    path: t.path.clone(),
                    reason: rollback::ConflictReason::HoldsOthers,
                });
            }
        }
        conflicts
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
                forms: Forms {
                    base: t.expected.and(t.expected_form),
                    result: t.target.and(t.target_form),
                },
            })
            .collect();
        let (op_id, ts, records) = self
            .reserve(&mut st, (task, attempt), &changes, SnapshotOrigin::Rollback)
            .map_err(|e| rollback_failed(&e))?;
        let items = rollback_items(&targets, &op_id);
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
            Ok(()) => {
                self.check_restored(&journal)?;
                Ok(journal.records)
            }
            Err(path) => Err(RollbackError::Failed(format!(
                "the rollback stopped at {path}; it stays pending until finished at the next start or abandoned"
            ))),
        }
    }

    /// Looks at every path a finished rollback restored: a rollback never
    /// says it undid the task while a path differs from its target (a
    /// process that wrote it meanwhile, a disk that lost the write).
    fn check_restored(&self, journal: &RollbackJournal) -> Result<(), RollbackError> {
        let found = parallel_map(&journal.items, |item| self.current_entry(&item.path));
        let differ: Vec<String> = journal
            .items
            .iter()
            .zip(found)
            .filter(|(item, found)| {
                !found
                    .as_ref()
                    .is_ok_and(|f| is_as_recorded(item.target, item.target_form, *f))
            })
            .map(|(item, found)| match found {
                Ok(None) => format!("{} is missing", item.path),
                Ok(Some(_)) if item.target.is_none() => format!("{} is still there", item.path),
                Ok(Some(_)) => format!("{} holds other content", item.path),
                Err(()) => format!("{} is no longer a regular file", item.path),
            })
            .collect();
        if differ.is_empty() {
            Ok(())
        } else {
            Err(RollbackError::Failed(format!(
                "after restoring, the workspace differs from the task's start: {}",
                differ.join("; ")
            )))
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
                self.stage_item(item)
                    .map_err(|e| rollback_failed(&disk_failed("rollback", &item.path, &e)))
            },
        )?;
        for full in staged.into_iter().flatten() {
            self.note_written(st, full);
        }
        Ok(())
    }

    /// Stages one restoration from its blob, in the form it goes back to (a
    /// file with its mode bits, a link, a FIFO); returns the staged file's
    /// full path (nothing for a removal).
    fn stage_item(&self, item: &RollbackItem) -> io::Result<Option<std::path::PathBuf>> {
        let (Some(target), Some(staging)) = (item.target, &item.staging) else {
            return Ok(None);
        };
        let (dir, name) = split(&item.path);
        let temp = staging.rsplit('/').next().unwrap_or(staging);
        let bytes = || {
            self.store
                .read_blob(&target)
                .map_err(|e| io::Error::other(e.to_string()))
        };
        match item.target_form {
            Some(Form::Symlink) => {
                self.disk.stage_symlink(&dir, &name, temp, &bytes()?)?;
            }
            Some(Form::Fifo) => {
                self.disk.stage_fifo(&dir, &name, temp)?;
            }
            // Made in place when its turn comes: nothing to stage.
            Some(Form::Folder) => return Ok(None),
            Some(Form::Special) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a socket or a device is never made",
                ));
            }
            form @ (None | Some(Form::File { .. })) => {
                self.disk.stage(&dir, &name, temp, &bytes()?)?;
                let bits = match form {
                    Some(Form::File { mode }) => mode,
                    _ => 0,
                };
                // A file that stays keeps its read and write bits (a `664`
                // file is not made `644` by putting its content back); the
                // executable and set-id bits are the recorded ones.
                let (mask, bits) = match self.disk.file_mode(&dir, &name)? {
                    Some(now) => (0o7777, (now & 0o666) | bits),
                    None => (Form::MODE_BITS, bits),
                };
                self.disk.set_mode_bits(&dir, temp, mask, bits)?;
            }
        }
        Ok(Some(self.full_path(&dir, temp)))
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
    pub(super) fn replay_rollback(
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
        // Folders go after what they hold (deepest first) and come back
        // before it (shallowest first), one at a time.
        let (deletions, restorations): (Vec<&RollbackItem>, Vec<&RollbackItem>) =
            order.into_iter().partition(|i| i.target.is_none());
        let is_folder = |form: Option<Form>| form == Some(Form::Folder);
        let (mut folders_gone, files_gone): (Vec<&RollbackItem>, Vec<&RollbackItem>) =
            deletions.into_iter().partition(|i| is_folder(i.prior_form));
        let (mut folders_back, files_back): (Vec<&RollbackItem>, Vec<&RollbackItem>) = restorations
            .into_iter()
            .partition(|i| is_folder(i.target_form));
        let depth = |i: &&RollbackItem| i.path.segments().count();
        folders_gone.sort_by_key(|i| std::cmp::Reverse(depth(i)));
        folders_back.sort_by_key(depth);
        let started = AtomicBool::new(false);
        // Staging files their rename did not consume (items already at target).
        let mut leftover: Vec<&str> = Vec::new();
        let phases = [
            (files_gone, false),
            (folders_gone, true),
            (folders_back, true),
            (files_back, false),
        ];
        for (phase, one_at_a_time) in phases {
            let done = if one_at_a_time {
                phase
                    .iter()
                    .map(|item| {
                        self.apply_rollback_item(item, unchanged)
                            .map(|changed| (*item, changed))
                    })
                    .collect::<Result<Vec<_>, _>>()?
            } else {
                self.apply_rollback_phase(&phase, unchanged, &started)?
            };
            for (item, changed) in done {
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
                match self.current_entry(&item.path) {
                    Ok(cur) if is_as_recorded(item.target, item.target_form, cur) => {
                        return Ok(false);
                    }
                    Ok(cur) if is_as_recorded(item.prior, item.prior_form, cur) => {}
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
            (None, _, _) if item.prior_form == Some(Form::Folder) => {
                self.disk.remove_empty_dir(dir, name).map(|()| true)
            }
            (None, _, Some(stamp)) => self.disk.unlink_if(dir, name, stamp),
            (None, _, None) => self.disk.unlink(dir, name).map(|()| true),
            (Some(_), None, _) if item.target_form == Some(Form::Folder) => {
                match self.disk.make_dir(dir, name) {
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        // A folder already: what the rollback wants.
                        match self.disk.kind(dir, name)? {
                            Some(EntryKind::Dir) => Ok(true),
                            _ => Err(e),
                        }
                    }
                    other => other.map(|()| true),
                }
            }
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
            if item.staging.is_none()
                || !self
                    .current_entry(&item.path)
                    .is_ok_and(|cur| is_as_recorded(item.prior, item.prior_form, cur))
            {
                continue;
            }
            match self.stage_item(item) {
                Ok(Some(full)) => self.note_written(st, full),
                Ok(None) => {}
                Err(e) => {
                    tracing::error!(op = %journal.op_id, path = %item.path, error = %e, "rollback staging failed");
                    return Err(item.path.clone());
                }
            }
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

/// The rollback journal's items for `targets`: each restoration staged
/// next to its target under a name of `op_id`.
fn rollback_items(targets: &[RollbackTarget], op_id: &OpId) -> Vec<RollbackItem> {
    targets
        .iter()
        .enumerate()
        .map(|(n, t)| {
            let (dir, name) = split(&t.path);
            RollbackItem {
                path: t.path.clone(),
                prior: t.expected,
                target: t.target,
                // A folder is made in place: nothing to stage.
                staging: t
                    .target
                    .filter(|_| t.target_form != Some(Form::Folder))
                    .map(|_| {
                        dir.iter()
                            .cloned()
                            .chain(std::iter::once(format!(
                                ".{name}.cocode-rollback-{op_id}-{n}.tmp"
                            )))
                            .collect::<Vec<_>>()
                            .join("/")
                    }),
                prior_form: t.expected.and(t.expected_form),
                target_form: t.target.and(t.target_form),
            }
        })
        .collect()
}
