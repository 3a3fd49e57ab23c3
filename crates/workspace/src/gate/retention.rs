//! Retention inside the gate's serial section: which tasks' histories go,
//! their markers and index lines, and the blobs nothing references any more.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use cocode_core::gate::{GateError, StoreError};
use cocode_core::ids::{TaskId, Timestamp};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{ContentHash, EditSnapshot};
use cocode_core::workspace::RetentionConfig;

use super::errors::store_failed;
use super::state::Gate;
use crate::retention::{self, RetentionPlan, RetentionTrigger, TaskHistory, TaskLife};
use crate::store::RetentionMarker;

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
    #[tracing::instrument(level = "debug", skip_all, name = "gate.retention")]
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
        // Due only over the cap or with a removal an earlier run left
        // unfinished: under the cap nothing is removed (P4), and blobs no
        // record names wait for a run that is due (they count toward the
        // cap, so they go before any task's history would).
        let bytes = self.store.history_bytes();
        if bytes <= config.byte_cap && !self.unfinished_removal().map_err(failed)? {
            report.plan.bytes_before = bytes;
            report.plan.bytes_after = bytes;
            self.save_sweep_cache(&mut st);
            return Ok(report);
        }
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
        // The sweep's base blobs of files no record names yet stay too: a
        // command may still change those files and be recorded against them.
        let mut keep = journal_blobs.clone();
        keep.extend(st.sweep.hashes());
        // A person's discards stay undoable.
        keep.extend(self.discard_blobs()?);
        if journals_readable {
            // Blobs nothing names go first: a task's history goes only if
            // the history is still over the cap without them.
            report.blobs_removed = self.collect_blobs(&keep).map_err(failed)?;
        }
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
                removed_at: self.clock.now(),
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
            if !plan.remove.is_empty() {
                report.blobs_removed += self.collect_blobs(&keep).map_err(failed)?;
            }
        } else {
            report.blobs_kept_for_unreadable_journal = true;
        }
        report.plan = plan;
        // A task ended or the app started: the next process starts from here.
        self.save_sweep_cache(&mut st);
        Ok(report)
    }

    /// Whether an earlier run marked a task's history for removal and
    /// stopped before it was gone.
    fn unfinished_removal(&self) -> Result<bool, StoreError> {
        for task in self.store.task_ids()? {
            if self.store.retention_marker(&task)?.is_some()
                && self.layout.task_index(&task).exists()
            {
                return Ok(true);
            }
        }
        Ok(false)
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
