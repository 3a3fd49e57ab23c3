//! The person's own file work in an open folder: saves of editor tabs and
//! the Explorer's new file, new folder, rename and delete. Each goes
//! through the workspace host's gate on the blocking pool and comes back
//! as the words the person reads. The workspace service queues them with
//! agents' work, so they keep the order the person made them in.

use std::sync::Arc;

use cocode_core::path::NormalizedPath;
use cocode_workspace::UserOp;

use crate::host::workspace_host::WorkspaceHost;

/// Saves the open document at `path` (its text from the shared open
/// documents) through the gate's user save.
pub async fn save(host: &Arc<WorkspaceHost>, path: &NormalizedPath) -> Result<(), String> {
    let saver = Arc::clone(host);
    let target = path.clone();
    tokio::task::spawn_blocking(move || saver.save_user_file(&target))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| {
            r.map(|_| ())
                .map_err(|e| format!("not saved ({}): {e}", e.code().as_str()))
        })
}

/// Carries out a person's new file, new folder, rename or delete.
pub async fn user_op(host: &Arc<WorkspaceHost>, op: &UserOp) -> Result<(), String> {
    let doer = Arc::clone(host);
    let asked = op.clone();
    tokio::task::spawn_blocking(move || doer.user_op(&asked))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| format!("{} ({})", e, e.code().as_str())))
}

/// Why a save could not be done without a host.
pub fn unsaved(why: &str) -> String {
    format!("not saved: {why}")
}

/// Why a file operation could not be done without a host.
pub fn undone(why: &str) -> String {
    format!("not done: {why}")
}
