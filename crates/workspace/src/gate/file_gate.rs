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
use super::state::Gate;
use crate::disk::EntryKind;

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
