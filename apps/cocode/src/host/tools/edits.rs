//! Edits: checked against the revision the agent read, held under leases,
//! previewed for approval, and written through the gate.

use std::sync::Arc;

use cocode_core::WorkspaceErrorCode;
use cocode_core::gate::{
    EditLockRegistry, GateOp, GateOutcome, TaskContext, WorkspaceFileGate, with_leases,
};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::EditSnapshot;
use cocode_tool_protocol::args::{ApplyEditsArgs, EditArgs, EditOp, Occurrence};
use cocode_tool_protocol::catalog::{self, SOURCE_LIMIT_BYTES};
use cocode_tool_protocol::{ToolError, ToolOutput};

use serde_json::{Value, json};

// Tests build it with its parent under `cfg(test)`, where the lint is quiet.
#[cfg_attr(
    not(test),
    expect(
        clippy::wildcard_imports,
        reason = "a part of its parent's impl, cut out of one file: it names what the parent names"
    )
)]
use super::*;

impl WorkspaceTools {
    /// Runs a gate operation under leases over `touched`; `prepare` runs
    /// inside the lease (reads for patches and revision checks) and builds
    /// the operation. The snapshots it recorded, or `None` when the gate held
    /// it for approval (the task is told).
    pub(super) async fn gated(
        self: Arc<Self>,
        ctx: TaskContext,
        touched: Vec<NormalizedPath>,
        prepare: impl FnOnce(&Self) -> Result<GateOp, ToolError> + Send + 'static,
    ) -> Result<Option<Vec<EditSnapshot>>, ToolError> {
        let this = Arc::clone(&self);
        let ctx2 = ctx.clone();
        let outcome = with_leases(
            self.leases.as_ref() as &dyn EditLockRegistry,
            &touched,
            &ctx,
            async move {
                tokio::task::spawn_blocking(move || {
                    let op = prepare(&this)?;
                    WorkspaceFileGate::apply(&this.workspace.gate, &ctx2, op).map_err(gate_error)
                })
                .await
                .map_err(|e| ToolError::handler("TOOL_EXECUTION_FAILED", e.to_string(), false))?
            },
        )
        .await
        .map_err(|e| {
            ToolError::handler(WorkspaceErrorCode::Locked.as_str(), e.to_string(), true)
        })??;
        match outcome {
            GateOutcome::Applied { snapshots } => Ok(Some(snapshots)),
            GateOutcome::Held { pending_change } => {
                self.tasks.notify_held(HeldEdit {
                    change: pending_change,
                });
                Ok(None)
            }
        }
    }

    /// A single-file edit: `touched[0]` is the path the result names.
    pub(super) async fn edit(
        self: Arc<Self>,
        ctx: TaskContext,
        touched: Vec<NormalizedPath>,
        prepare: impl FnOnce(&Self) -> Result<GateOp, ToolError> + Send + 'static,
    ) -> Result<ToolOutput, ToolError> {
        let path = touched
            .first()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_default();
        match self.gated(ctx, touched, prepare).await? {
            Some(snapshots) => {
                let revision = snapshots
                    .last()
                    .and_then(EditSnapshot::result)
                    .map(|h| format!("sha256:{}", h.to_hex()));
                ToolOutput::json(&json!({"path": path, "outcome": "applied", "revision": revision}))
            }
            None => ToolOutput::json(
                &json!({"path": path, "outcome": "held_for_approval", "revision": null}),
            ),
        }
    }

    /// `applyEdits`: every edit is prepared inside one lease over all their
    /// paths, exactly as its single-file tool would, then applied as one
    /// gate batch (all or nothing).
    pub(super) async fn edit_set(
        self: Arc<Self>,
        ctx: TaskContext,
        args: ApplyEditsArgs,
    ) -> Result<ToolOutput, ToolError> {
        let edits = self.edit_items(args)?;
        let touched = edits
            .iter()
            .flat_map(|e| std::iter::once(e.path.clone()).chain(e.to.clone()))
            .collect();
        let prepare = move |this: &Self| {
            let mut ops = Vec::with_capacity(edits.len());
            let mut total = 0usize;
            for e in &edits {
                let op = match &e.to {
                    Some(to) => GateOp::Rename {
                        from: e.path.clone(),
                        to: to.clone(),
                    },
                    None => this.prepare(&e.edit, &e.path)?,
                };
                if let GateOp::Write { path, bytes } = &op {
                    total += bytes.len();
                    if total > catalog::EDIT_BATCH_BYTES_LIMIT {
                        return Err(ws_error(
                            WorkspaceErrorCode::SourceLimit,
                            "edits",
                            path.as_str(),
                            format!(
                                "the edits would write more than {} bytes together",
                                catalog::EDIT_BATCH_BYTES_LIMIT
                            ),
                        ));
                    }
                }
                ops.push(op);
            }
            Ok(GateOp::Batch { ops })
        };
        let Some(snapshots) = self.gated(ctx, touched, prepare).await? else {
            return ToolOutput::json(&json!({"outcome": "held_for_approval", "files": []}));
        };
        let files: Vec<Value> = snapshots
            .iter()
            .map(|s| {
                json!({
                    "path": s.path().as_str(),
                    "revision": s.result().map(|h| format!("sha256:{}", h.to_hex()))
                })
            })
            .collect();
        ToolOutput::json(&json!({"outcome": "applied", "files": files}))
    }

    /// The edits of an `applyEdits` call, each checked for the arguments its
    /// `op` takes (and no others).
    pub(super) fn edit_items(&self, args: ApplyEditsArgs) -> Result<Vec<EditItem>, ToolError> {
        let mut items = Vec::with_capacity(args.edits.len());
        for (n, edit) in args.edits.into_iter().enumerate() {
            if let Err(problem) = edit.check() {
                return Err(edit_invalid(format!(
                    "edit {n} ({}) {problem}",
                    edit.op.as_str()
                )));
            }
            let path = self.normalize(&edit.path)?;
            let to = match (&edit.to, edit.op) {
                (Some(to), EditOp::Rename) => Some(self.normalize(to)?),
                _ => None,
            };
            items.push(EditItem { path, to, edit });
        }
        Ok(items)
    }

    /// Builds a file edit inside its lease: revision checks and patches
    /// read the file as it is now.
    pub(super) fn prepare(
        &self,
        edit: &EditArgs,
        path: &NormalizedPath,
    ) -> Result<GateOp, ToolError> {
        let operation = match edit.op {
            EditOp::Create => "create",
            EditOp::Delete => "delete",
            EditOp::Patch => "patch",
            EditOp::Write | EditOp::Rename => "write",
        };
        let current = self.read_current(path, operation)?;
        self.check_revision(
            current.as_deref(),
            edit.expected_revision.as_deref(),
            operation,
            path,
        )?;
        let bytes = match edit.op {
            EditOp::Delete => return Ok(GateOp::Delete { path: path.clone() }),
            EditOp::Create if current.is_some() => {
                return Err(ws_error(
                    WorkspaceErrorCode::FileConflict,
                    operation,
                    path.as_str(),
                    "the file exists",
                ));
            }
            EditOp::Patch => {
                let Some(current) = current else {
                    return Err(ws_error(
                        WorkspaceErrorCode::FileNotFound,
                        operation,
                        path.as_str(),
                        "no such file",
                    ));
                };
                if is_binary(&current) {
                    return Err(ws_error(
                        WorkspaceErrorCode::BinaryFile,
                        operation,
                        path.as_str(),
                        "binary or non-UTF-8 file",
                    ));
                }
                let text = String::from_utf8_lossy(&current);
                let search = edit.search.as_deref().unwrap_or_default();
                let replace = edit.replace.as_deref().unwrap_or_default();
                if search.is_empty() || !text.contains(search) {
                    return Err(ws_error(
                        WorkspaceErrorCode::PatchNotFound,
                        operation,
                        path.as_str(),
                        "the search text does not occur in the file",
                    ));
                }
                if edit.occurrence == Some(Occurrence::All) {
                    text.replace(search, replace).into_bytes()
                } else {
                    text.replacen(search, replace, 1).into_bytes()
                }
            }
            EditOp::Write | EditOp::Create | EditOp::Rename => edit
                .content
                .as_deref()
                .unwrap_or_default()
                .as_bytes()
                .to_vec(),
        };
        if bytes.len() > SOURCE_LIMIT_BYTES {
            return Err(ws_error(
                WorkspaceErrorCode::SourceLimit,
                operation,
                path.as_str(),
                format!(
                    "the result would have {} bytes; the limit is {SOURCE_LIMIT_BYTES}",
                    bytes.len()
                ),
            ));
        }
        Ok(GateOp::Write {
            path: path.clone(),
            bytes,
        })
    }

    /// What `op` would change, file by file, against the files as they are.
    pub(super) fn change_previews(&self, op: &GateOp) -> Vec<cocode_tool_protocol::ChangePreview> {
        use cocode_tool_protocol::{ChangeKind, ChangePreview};
        let test_file = |p: &NormalizedPath| self.workspace.gate.is_test_file(p);
        let current = |p: &NormalizedPath| self.read_current(p, "preview").ok().flatten();
        match op {
            GateOp::Write { path, bytes } => {
                let before = current(path);
                vec![ChangePreview {
                    path: path.as_str().to_owned(),
                    kind: if before.is_some() {
                        ChangeKind::Modify
                    } else {
                        ChangeKind::Create
                    },
                    diff: cocode_workspace::diff::unified(
                        path,
                        None,
                        before.as_deref(),
                        Some(bytes),
                    ),
                    test_file: test_file(path),
                }]
            }
            GateOp::Delete { path } => {
                let before = current(path);
                vec![ChangePreview {
                    path: path.as_str().to_owned(),
                    kind: ChangeKind::Delete,
                    diff: cocode_workspace::diff::unified(path, None, before.as_deref(), None),
                    test_file: test_file(path),
                }]
            }
            GateOp::Rename { from, to } => {
                let content = current(from);
                vec![ChangePreview {
                    path: to.as_str().to_owned(),
                    kind: ChangeKind::Rename {
                        from: from.as_str().to_owned(),
                    },
                    diff: cocode_workspace::diff::unified(
                        to,
                        Some(from),
                        content.as_deref(),
                        content.as_deref(),
                    ),
                    test_file: test_file(from) || test_file(to),
                }]
            }
            GateOp::Batch { ops } => ops.iter().flat_map(|o| self.change_previews(o)).collect(),
        }
    }
}
