//! The write-commit protocol of one operation (see [`crate::gate`]):
//! reserve, blobs, journal, stage, barrier, apply, hold.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{GateError, StoreError, TaskContext};
use cocode_core::ids::{AttemptNo, OpId, Seq, SnapshotId, TaskId, Timestamp};
use cocode_core::snapshot::{ContentHash, EditSnapshot, EditSnapshotParts, SnapshotOrigin};

use super::errors::{disk_failed, internal, io_failed, refuse, store_failed};
use super::ids::new_op_id;
use super::plan::{Action, Change, Plan, StagedName};
use super::state::{Gate, GateState, TaskCursor};
use crate::disk::Staged;
use crate::parallel::{by_folder, folder_of};
use crate::store::{
    HELD_BLOB_MAX, JOURNAL_BLOBS_MAX, JournalBlob, WRITE_JOURNAL_VERSION, WriteJournal,
};

impl Gate {
    pub(super) fn cursor(
        &self,
        st: &mut GateState,
        task: &TaskId,
    ) -> Result<TaskCursor, StoreError> {
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
    pub(super) fn reserve(
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
        let ts = self.clock.now();
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
                forms: change.forms,
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

    pub(super) fn commit(
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
    pub(super) fn note_indexes(&self, st: &mut GateState, records: &[EditSnapshot]) {
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
}
