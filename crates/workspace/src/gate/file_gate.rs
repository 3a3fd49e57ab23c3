//! The gate as the [`WorkspaceFileGate`] the rest of cocode writes through:
//! an agent's operation (held when it touches a protected test file) and a
//! person's save.

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{
    GateError, GateOp, GateOutcome, PendingChange, TaskContext, WorkspaceFileGate,
};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::SnapshotOrigin;

use super::errors::{disk_failed, refuse};
use super::state::{Gate, GateState};
use crate::disk::EntryKind;
use crate::policy::Resolved;

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
        // A person's save is never attributed to a running task by the sweep.
        self.write_outside_records(&mut st, "save", &target, bytes)
    }
}

impl Gate {
    /// Writes `bytes` at `target` outside any record (a person's save; a
    /// held test file going back to its base): staged beside it, synced,
    /// renamed in place, and taken by the sweep's picture so the look
    /// after a command never gives it to the command.
    pub(super) fn write_outside_records(
        &self,
        st: &mut GateState,
        operation: &'static str,
        target: &Resolved,
        bytes: &[u8],
    ) -> Result<(), GateError> {
        let temp = format!(
            ".{}.cocode-{operation}-{}.tmp",
            target.name,
            std::process::id()
        );
        let staged = self
            .disk
            .stage(&target.dir, &target.name, &temp, bytes)
            .map_err(|e| disk_failed(operation, &target.path, &e))?;
        let done = self
            .disk
            .sync_staged(&staged)
            .and_then(|()| self.disk.commit(&staged));
        if let Err(e) = done {
            let _ = self.disk.unlink(&target.dir, &temp);
            return Err(disk_failed(operation, &target.path, &e));
        }
        st.sweep.refresh(self.layout.workspace_root(), &target.path);
        Ok(())
    }
}
