//! A person's review of a task: undoing some of its changes (a hunk, a
//! whole file) as the task's own `review` snapshots, so the task's history
//! stays whole and a later rollback to its start still restores the bytes
//! it began with.

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{GateError, GateOp, TaskContext};
use cocode_core::ids::{SessionId, TaskId};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{ContentHash, EditSnapshot, Form, SnapshotOrigin};

use super::errors::{internal, refuse, store_failed};
use super::state::Gate;

/// One path a review undo changes: what must be there now (the revision the
/// review was computed against) and what it becomes (`None` deletes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewChange {
    pub path: NormalizedPath,
    /// The content the review showed as the file's current content.
    pub expected: Option<ContentHash>,
    /// The new content (`None`: the file is removed).
    pub content: Option<Vec<u8>>,
}

impl Gate {
    /// Applies a review undo of `task`: every path is checked first — the
    /// task made the path's last recorded change (no other task changed it
    /// since) and its content is still `expected` (nobody changed it since
    /// the review was computed) — then all of them are written as one
    /// operation recorded as the task's `review` snapshots. One path that
    /// fails a check and nothing is touched (`WORKSPACE_REVISION_CONFLICT`).
    pub fn apply_review(
        &self,
        task: &TaskId,
        changes: &[ReviewChange],
    ) -> Result<Vec<EditSnapshot>, GateError> {
        let mut st = self.lock();
        self.prepare(&mut st)?;
        for change in changes {
            self.check_reviewed(task, change)?;
        }
        let mut ops: Vec<GateOp> = changes
            .iter()
            .map(|c| match &c.content {
                Some(bytes) => GateOp::Write {
                    path: c.path.clone(),
                    bytes: bytes.clone(),
                },
                None => GateOp::Delete {
                    path: c.path.clone(),
                },
            })
            .collect();
        let op = if ops.len() == 1 {
            ops.remove(0)
        } else {
            GateOp::Batch { ops }
        };
        let plan = self.plan(&st, &op)?;
        let attempt = self
            .cursor(&mut st, task)
            .map_err(|e| store_failed("review", &e))?
            .last_attempt;
        let ctx = TaskContext {
            task_id: task.clone(),
            session_id: SessionId::new(format!("{task}-review"))
                .map_err(|e| internal("review", task.as_str(), &e.to_string()))?,
            attempt_no: attempt,
        };
        self.commit(&mut st, &ctx, &plan, SnapshotOrigin::Review)
    }

    /// The checks of one path of a review undo (inside the serial section).
    fn check_reviewed(&self, task: &TaskId, change: &ReviewChange) -> Result<(), GateError> {
        let conflict = |why: &str| {
            refuse(
                WorkspaceErrorCode::RevisionConflict,
                "review",
                &change.path,
                why,
            )
        };
        match self
            .store
            .last_snapshot_of_path(&change.path)
            .map_err(|e| store_failed("review", &e))?
        {
            Some(last) if last.task_id() == task => {}
            Some(last) => {
                return Err(conflict(&format!(
                    "task {} changed this file after the task under review; undo refused",
                    last.task_id()
                )));
            }
            None => return Err(conflict("the task under review never changed this file")),
        }
        let found = self
            .current_stamped(&change.path)
            .map_err(|()| conflict("the file is no longer a regular file; undo refused"))?
            .0;
        match found {
            Some((_, Some(form))) if !matches!(form, Form::File { .. }) => {
                Err(conflict("the file is not a plain file; undo refused"))
            }
            found if found.map(|(hash, _)| hash) != change.expected => Err(conflict(
                "the file changed since the review was computed; nothing was touched",
            )),
            _ => Ok(()),
        }
    }
}
