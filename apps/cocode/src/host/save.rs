//! `SaveUserFile`: a person's save of an open document. It goes through the
//! gate's user save (same-folder temp file, sync, atomic replace; never a
//! snapshot, so a later rollback treats the saved text as a person's change
//! and refuses to overwrite it), and is refused while an agent's edit holds
//! the file.

use cocode_core::WorkspaceErrorCode;
use cocode_core::gate::{EditLockRegistry as _, GateError, WorkspaceFileGate as _};
use cocode_core::path::NormalizedPath;

use crate::host::workspace_host::WorkspaceHost;

/// Why a save did not happen. Nothing was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SaveError {
    #[error("{0} is not open in the editor")]
    NotOpen(String),
    #[error(transparent)]
    Gate(#[from] GateError),
}

impl SaveError {
    /// The stable code shown to the person.
    pub fn code(&self) -> WorkspaceErrorCode {
        match self {
            Self::NotOpen(_) => WorkspaceErrorCode::FileNotFound,
            Self::Gate(e) => e.code,
        }
    }
}

/// Whether the document was clean after the save.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    /// The text on disk is the document's text.
    Clean,
    /// The person typed while the save ran: the saved text is on disk and
    /// the document stays dirty with the newer text.
    ChangedMeanwhile,
}

impl WorkspaceHost {
    /// A person's new file, new folder, rename or delete from the Explorer,
    /// through the gate (no snapshot; never charged to an agent's command);
    /// refused while an agent's edit holds any path it touches.
    pub fn user_op(&self, op: &cocode_workspace::UserOp) -> Result<(), SaveError> {
        for path in op.touched_paths() {
            if let Some((held, lease)) = self
                .leases
                .leases()
                .into_iter()
                .find(|(held, _)| held.contains(path) || path.contains(held))
            {
                return Err(SaveError::Gate(GateError {
                    code: WorkspaceErrorCode::Locked,
                    operation: "change",
                    path: path.as_str().to_owned(),
                    message: format!(
                        "task {} is editing {} right now; try again when its edit is done",
                        lease.task_id,
                        held.as_str()
                    ),
                    io_kind: None,
                }));
            }
        }
        self.workspace.gate.apply_user_op(op)?;
        Ok(())
    }

    /// Saves the open document at `path`.
    pub fn save_user_file(&self, path: &NormalizedPath) -> Result<Saved, SaveError> {
        let (text, version) = self
            .documents
            .with_document(path, |d| (d.text(), d.version()))
            .ok_or_else(|| SaveError::NotOpen(path.as_str().to_owned()))?;
        if let Some((held, lease)) = self
            .leases
            .leases()
            .into_iter()
            .find(|(held, _)| held.contains(path))
        {
            return Err(SaveError::Gate(GateError {
                code: WorkspaceErrorCode::Locked,
                operation: "save",
                path: path.as_str().to_owned(),
                message: format!(
                    "task {} is editing {} right now; save again when its edit is done",
                    lease.task_id,
                    held.as_str()
                ),
                io_kind: None,
            }));
        }
        self.workspace.gate.save_user_file(path, text.as_bytes())?;
        let clean = self
            .documents
            .with_document(path, |d| {
                let same = d.version() == version;
                if same {
                    d.mark_saved();
                }
                same
            })
            .unwrap_or(false);
        Ok(if clean {
            Saved::Clean
        } else {
            Saved::ChangedMeanwhile
        })
    }
}
