//! Recovery: settling the write journals a crash or a failure left (judged
//! by what the disk shows), replaying interrupted rollbacks, and blocking
//! the paths neither explains.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cocode_core::gate::{GateError, StoreError};
use cocode_core::ids::{AttemptNo, OpId, TaskId};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{ContentHash, Form, SnapshotOrigin};

use crate::rollback::Found;

use super::errors::store_failed;
use super::state::{Gate, GateState, TaskCursor};
use crate::disk::{EntryKind, Stamp};
use crate::store::WriteJournal;

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
    /// Commands or agent turns cocode ended during (a crash, a kill, two
    /// Ctrl-Cs): what changed since the look before them was recorded with
    /// their tasks, or the task was marked not fully recorded.
    pub sweeps_recovered: Vec<RecoveredSweep>,
}

/// A command or turn cocode ended during, as recovery settled it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredSweep {
    pub task_id: TaskId,
    /// The changes recorded with the task.
    pub recorded: usize,
    /// Why its changes could not be recorded, if they could not.
    pub unrecorded: Option<String>,
}

/// How recovery settles a journal's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The change is on disk: its index lines are completed.
    Complete,
    /// Nothing of it happened: it leaves no index line.
    Dropped,
    /// The disk shows neither: its paths are blocked.
    Unresolved,
}

impl Gate {
    /// Runs recovery now (idempotent; the first gate operation also runs it).
    pub fn recover(&self) -> Result<RecoveryReport, StoreError> {
        let mut st = self.lock();
        self.recover_locked(&mut st)
    }

    pub(super) fn prepare(&self, st: &mut GateState) -> Result<(), GateError> {
        if !st.recovered {
            self.recover_locked(st)
                .map_err(|e| store_failed("recover", &e))?;
        }
        Ok(())
    }

    pub(super) fn recover_after_failure(&self, st: &mut GateState, journal: &WriteJournal) {
        let mut report = RecoveryReport::default();
        let outcomes = self.judge(&[journal]).remove(0);
        if let Err(e) = self.recover_journal(st, journal, &outcomes, &mut report) {
            tracing::error!(op = %journal.op_id, error = %e, "in-process recovery failed; the journal stays for startup recovery");
        }
        if let Some(first) = journal.records.first() {
            st.tasks.remove(first.task_id());
        }
    }

    #[tracing::instrument(level = "debug", skip_all, name = "gate.recover")]
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
        self.recover_sweeps(st, &mut report)?;
        Ok(report)
    }

    /// Settles the sweeps whose command or turn cocode ended during: with
    /// one such sweep and the look before it restored whole, a look now
    /// records every change since with its task; otherwise (several at
    /// once, the look lost) each task is marked not fully recorded.
    fn recover_sweeps(
        &self,
        st: &mut GateState,
        report: &mut RecoveryReport,
    ) -> Result<(), StoreError> {
        let mut journals = Vec::new();
        for file in self.store.sweep_journals()? {
            match file.content {
                Ok(journal) => journals.push(journal),
                Err(reason) => report.corrupt_journals.push((file.path, reason)),
            }
        }
        if journals.is_empty() {
            return Ok(());
        }
        let alone = journals.len() == 1 && st.restored_whole;
        for journal in journals {
            let ctx = &journal.ctx;
            let recorded = if alone {
                let before = st.sweep.clone();
                self.scan(
                    st,
                    crate::sweep::IgnoreRules::AsKept,
                    &crate::sweep::SweepBudget::UNLIMITED,
                )
                .and_then(|_| {
                    let changes = before.changes_to(&st.sweep);
                    if changes.is_empty() {
                        Ok(Vec::new())
                    } else {
                        self.record_observed(st, ctx, changes, SnapshotOrigin::Observed)
                    }
                })
                .map_err(|e| format!("recording its changes failed: {}", e.message))
            } else if st.restored_whole {
                Err("cocode ended while several commands or agent turns ran at once, so their changes cannot be told apart".to_owned())
            } else {
                Err("cocode ended during a command, and the look at the workspace before it was lost".to_owned())
            };
            let settled = match recorded {
                Ok(records) => {
                    self.store.remove_sweep_journal(&ctx.task_id)?;
                    RecoveredSweep {
                        task_id: ctx.task_id.clone(),
                        recorded: records.len(),
                        unrecorded: None,
                    }
                }
                Err(reason) => {
                    self.mark_unrecorded(ctx, &reason);
                    RecoveredSweep {
                        task_id: ctx.task_id.clone(),
                        recorded: 0,
                        unrecorded: Some(reason),
                    }
                }
            };
            tracing::info!(task = %settled.task_id, recorded = settled.recorded, "a command cocode ended during was settled");
            report.sweeps_recovered.push(settled);
        }
        Ok(())
    }

    /// The disk content of a recorded (real) path: `Ok(None)` absent,
    /// `Err(())` when it is not a regular file or cannot be read.
    pub(super) fn current(&self, path: &NormalizedPath) -> Result<Option<ContentHash>, ()> {
        match self.current_stamped(path)? {
            (None, _) => Ok(None),
            (Some((hash, None | Some(Form::File { .. }))), _) => Ok(Some(hash)),
            (Some(_), _) => Err(()),
        }
    }

    /// What is at a recorded path, in any form (see [`Found`]): `Err(())`
    /// when it is something no record names (a folder with things in it)
    /// or cannot be read.
    pub(super) fn current_entry(&self, path: &NormalizedPath) -> Result<Found, ()> {
        self.current_stamped(path).map(|(found, _)| found)
    }

    /// What is at a path and the stamp a regular file had when read.
    pub(super) fn current_stamped(
        &self,
        path: &NormalizedPath,
    ) -> Result<(Found, Option<Stamp>), ()> {
        let segments: Vec<String> = path.segments().map(ToOwned::to_owned).collect();
        let Some((name, dir)) = segments.split_last() else {
            return Err(());
        };
        // A file above the ceiling is named by its identity, as the sweep
        // named it, never read whole.
        match self
            .disk
            .stamped_hash(dir, name, self.sweep_limits.max_file_bytes)
        {
            Ok(None) => Ok((None, None)),
            Ok(Some((Ok(found), stamp))) => Ok((Some(found), stamp)),
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
}
