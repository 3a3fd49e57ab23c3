//! The workspace tool catalog's handlers: every tool an agent calls ends in
//! a host use case here — reads from disk, edits through leases and the
//! gate, commands through the launcher between two sweeps.
//!
//! `lsp.diagnostics` is registered only when a language server is
//! installed for the workspace: a model never sees a tool that can only
//! fail.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cocode_core::gate::{
    EditLockRegistry, GateError, GateOp, GateOutcome, PendingChange, TaskContext,
    WorkspaceFileGate, with_leases,
};
use cocode_core::path::{NormalizedPath, normalize};
use cocode_core::process::{ExitStatus, LaunchIo, LaunchSpec, ProcessLauncher, SandboxProfile};
use cocode_core::services::TextDocumentSource;
use cocode_core::snapshot::EditSnapshot;
use cocode_core::{AttemptNo, ContentHash, SessionId, TaskId, WorkspaceErrorCode};
use cocode_tool_protocol::args::{
    ApplyEditsArgs, ApplyPatchArgs, CreateFileArgs, DeleteFileArgs, EditArgs, EditOp,
    GetStatusArgs, ListFilesArgs, Occurrence, ReadFileArgs, RenameFileArgs, SearchArgs,
    TaskFinishArgs, TerminalRunArgs, WriteFileArgs,
};
use cocode_tool_protocol::catalog::{self, SOURCE_LIMIT_BYTES};
use cocode_tool_protocol::{
    HandlerContext, RegistrationError, ToolError, ToolErrorCode, ToolHandler, ToolOutput,
    ToolRegistry,
};
use cocode_workspace::{LeaseRegistry, OpenWorkspace};

use crate::host::log::LogErr as _;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

/// The catalog tools this host serves (all but `lsp.diagnostics`, which
/// needs a running language server).
pub fn served_tools() -> Vec<cocode_tool_protocol::ToolDefinition> {
    catalog::workspace_tools()
        .into_iter()
        .filter(|t| t.name != catalog::LSP_DIAGNOSTICS)
        .collect()
}

/// How long `lsp.diagnostics` waits for the servers' reports.
const LSP_TOOL_WAIT: Duration = Duration::from_secs(20);

/// The attempt each running task is on, and the test edits held for it.
/// The orchestrator writes it; handlers read it to build a `TaskContext`.
#[derive(Debug, Default)]
pub struct TaskDirectory {
    attempts: Mutex<BTreeMap<TaskId, AttemptNo>>,
    held: Mutex<BTreeMap<String, TaskId>>,
    listeners: Mutex<BTreeMap<TaskId, mpsc::UnboundedSender<HeldEdit>>>,
    /// Tasks whose agent writes files itself during its turn (an external
    /// agent): the workspace is swept around each turn.
    turn_sweeps: Mutex<std::collections::BTreeSet<TaskId>>,
    /// Actions a person approved through an external agent's permission
    /// request: the host request that carries one out is not asked about
    /// again (see `requests`). They end with the task.
    person_grants: Mutex<std::collections::BTreeSet<(TaskId, String)>>,
}

impl TaskDirectory {
    pub fn set_attempt(&self, task: &TaskId, attempt: AttemptNo) {
        self.lock().insert(task.clone(), attempt);
    }

    pub fn remove(&self, task: &TaskId) {
        self.lock().remove(task);
        self.release_held(task);
        self.person_grants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(t, _)| t != task);
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(task);
    }

    /// Where the test edits `task`'s agent makes are reported when the gate
    /// holds them.
    /// Notes that a person approved the action `key` of `task`'s agent.
    pub fn grant(&self, task: &TaskId, key: String) {
        self.person_grants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((task.clone(), key));
    }

    /// Whether a person approved the action `key` already (used once).
    pub fn take_grant(&self, task: &TaskId, key: String) -> bool {
        self.person_grants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&(task.clone(), key))
    }

    /// Marks whether `task`'s agent is in a swept turn.
    pub fn set_turn_swept(&self, task: &TaskId, swept: bool) {
        let mut set = self
            .turn_sweeps
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if swept {
            set.insert(task.clone());
        } else {
            set.remove(task);
        }
    }

    /// Whether `task`'s agent is in a swept turn.
    pub fn turn_swept(&self, task: &TaskId) -> bool {
        self.turn_sweeps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(task)
    }

    pub fn held_edits(&self, task: &TaskId) -> mpsc::UnboundedReceiver<HeldEdit> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(task.clone(), tx);
        rx
    }

    fn notify_held(&self, edit: HeldEdit) {
        let task = edit.change.ctx.task_id.clone();
        self.hold(
            &task,
            edit.change
                .op
                .touched_paths()
                .iter()
                .map(|p| p.as_str().to_owned()),
        );
        if let Some(tx) = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&task)
        {
            let _ = tx.send(edit);
        }
    }

    /// Forgets the held edits of `task` (approved, rejected or ended).
    pub fn release_held(&self, task: &TaskId) {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, t| t != task);
    }

    fn hold(&self, task: &TaskId, paths: impl IntoIterator<Item = String>) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        for p in paths {
            held.insert(p, task.clone());
        }
    }

    /// Paths with an edit waiting for a person's approval.
    pub fn held_paths(&self) -> Vec<String> {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<TaskId, AttemptNo>> {
        self.attempts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn attempt(&self, task: &TaskId) -> Option<AttemptNo> {
        self.lock().get(task).copied()
    }
}

/// A test-file edit the gate held, on its way to the orchestrator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldEdit {
    pub change: PendingChange,
}

/// What a call waiting for approval would do, shown on its card: edits as
/// diffs against the files as they are now (computed exactly as the call
/// will compute them, without writing), commands with their folder and
/// confinement.
pub struct Previewer {
    pub tools: Arc<WorkspaceTools>,
    /// How agent commands are confined here, in words.
    pub confinement: String,
}

impl std::fmt::Debug for Previewer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Previewer")
            .field("confinement", &self.confinement)
            .finish_non_exhaustive()
    }
}

/// How agent commands are confined, in words.
pub fn describe_confinement(confinement: &cocode_core::process::Confinement, port: u16) -> String {
    use cocode_core::process::Confinement;
    match confinement {
        Confinement::Landlock => format!(
            "Landlock: writes only inside the workspace; network only through the policy proxy (port {port})"
        ),
        Confinement::Seatbelt => format!(
            "Seatbelt: writes only inside the workspace; network only through the policy proxy (port {port})"
        ),
        Confinement::Unconfined { reason } => format!(
            "not confined by the OS ({reason}); network through the policy proxy (port {port})"
        ),
    }
}

impl cocode_tool_protocol::ApprovalPreviewer for Previewer {
    fn preview(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Option<cocode_tool_protocol::ApprovalPreview> {
        use cocode_tool_protocol::ApprovalPreview;
        let t = &self.tools;
        let args = arguments.clone();
        let ops = match tool {
            catalog::WRITE_FILE
            | catalog::CREATE_FILE
            | catalog::APPLY_PATCH
            | catalog::DELETE_FILE => single_edit(tool, args).and_then(|edit| {
                let path = t.normalize(&edit.path)?;
                t.prepare(&edit, &path).map(|op| vec![op])
            }),
            catalog::APPLY_EDITS => typed::<ApplyEditsArgs>(args)
                .and_then(|a| t.edit_items(a))
                .and_then(|items| {
                    items
                        .iter()
                        .map(|e| match &e.to {
                            Some(to) => Ok(GateOp::Rename {
                                from: e.path.clone(),
                                to: to.clone(),
                            }),
                            None => t.prepare(&e.edit, &e.path),
                        })
                        .collect()
                }),
            catalog::RENAME_FILE => typed::<RenameFileArgs>(args).and_then(|a| {
                Ok(vec![GateOp::Rename {
                    from: t.normalize(&a.from)?,
                    to: t.normalize(&a.to)?,
                }])
            }),
            catalog::TERMINAL_RUN => {
                return typed::<TerminalRunArgs>(args)
                    .ok()
                    .map(|a| ApprovalPreview::Command {
                        argv: a.argv,
                        cwd: a.cwd.unwrap_or_else(|| ".".to_owned()),
                        confinement: self.confinement.clone(),
                    });
            }
            _ => return None,
        };
        Some(match ops {
            Ok(ops) => {
                ApprovalPreview::Changes(ops.iter().flat_map(|op| t.change_previews(op)).collect())
            }
            Err(e) => ApprovalPreview::Note(format!("As it stands this call fails: {}", e.message)),
        })
    }
}

/// Everything the handlers reach.
pub struct WorkspaceTools {
    pub workspace: Arc<OpenWorkspace>,
    pub leases: Arc<LeaseRegistry>,
    pub launcher: Arc<dyn ProcessLauncher>,
    pub tasks: Arc<TaskDirectory>,
    /// Unsaved editor text, which an agent reads instead of the disk.
    pub documents: Arc<dyn TextDocumentSource>,
    /// The listings `listFiles` cursors page through.
    pub listings: Listings,
    /// Agents' commands as they run, for the window.
    pub commands: Arc<crate::host::commands::CommandWatch>,
    /// The workspace's language servers (the window's own), which
    /// `lsp.diagnostics` asks.
    pub lsp: Option<cocode_lsp::LanguageServers>,
    /// Who may write the workspace while an agent's command runs: with
    /// Landlock and the seccomp filter, only confined processes that make
    /// no hard links, so the sweep after it looks at what its watcher
    /// reported.
    pub command_writers: cocode_workspace::SweepWriters,
}

/// How many listings `listFiles` keeps for their cursors; an older cursor
/// is refused ("list again") rather than paging a new listing.
const KEPT_LISTINGS: usize = 8;

/// A listing of `listFiles`: sorted paths with their sizes.
type Listing = Arc<Vec<(String, u64)>>;

/// The most recent listings, each under its own id; a cursor is
/// `ID:OFFSET`.
#[derive(Debug, Default)]
pub struct Listings {
    kept: Mutex<(u64, std::collections::VecDeque<(u64, Listing)>)>,
}

impl Listings {
    /// Keeps a listing and returns its id.
    fn keep(&self, files: Listing) -> u64 {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.0 += 1;
        let id = kept.0;
        kept.1.push_back((id, files));
        while kept.1.len() > KEPT_LISTINGS {
            kept.1.pop_front();
        }
        id
    }

    /// The listing and offset a cursor names, if it is still kept.
    fn page(&self, cursor: &str) -> Option<(u64, Listing, usize)> {
        let (id, offset) = cursor.split_once(':')?;
        let (id, offset): (u64, usize) = (id.parse().ok()?, offset.parse().ok()?);
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let files = kept.1.iter().find(|(k, _)| *k == id)?.1.clone();
        (offset <= files.len()).then_some((id, files, offset))
    }
}

impl std::fmt::Debug for WorkspaceTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceTools")
            .field("root", &self.workspace.workspace.root)
            .finish_non_exhaustive()
    }
}

fn invalid(message: impl Into<String>) -> ToolError {
    ToolError::handler(WorkspaceErrorCode::PathInvalid.as_str(), message, false)
}

/// A malformed edit of an `applyEdits` call (beyond what its schema says).
fn edit_invalid(message: impl Into<String>) -> ToolError {
    ToolError::new(ToolErrorCode::ValidationFailed, message)
}

/// One checked edit of an `applyEdits` call: its path (for a rename, the
/// source and `to`) and its arguments.
struct EditItem {
    path: NormalizedPath,
    to: Option<NormalizedPath>,
    edit: EditArgs,
}

/// Reads a tool's typed arguments. The registry validated them against the
/// schema generated from the same type, so a failure here means a bug.
fn typed<T: serde::de::DeserializeOwned>(args: Map<String, Value>) -> Result<T, ToolError> {
    cocode_tool_protocol::args::parse(args).map_err(|e| {
        ToolError::new(
            ToolErrorCode::ValidationFailed,
            format!("the arguments do not fit the tool: {e}"),
        )
    })
}

fn ws_error(
    code: WorkspaceErrorCode,
    operation: &str,
    path: &str,
    message: impl Into<String>,
) -> ToolError {
    ToolError::handler(code.as_str(), message, code.retryable())
        .with_details(json!({"operation": operation, "path": path}))
}

fn gate_error(e: GateError) -> ToolError {
    let error = ws_error(e.code, e.operation, &e.path, e.message);
    match e.io_kind {
        // The disk's own word for what failed, for an agent deciding to retry.
        Some(kind) => {
            let mut details = error.details.clone();
            details["ioError"] = json!(kind.to_string());
            error.with_details(details)
        }
        None => error,
    }
}

/// A single-file edit tool's typed arguments as the edit they make.
fn single_edit(tool: &str, args: Map<String, Value>) -> Result<EditArgs, ToolError> {
    Ok(match tool {
        catalog::WRITE_FILE => typed::<WriteFileArgs>(args)?.into(),
        catalog::CREATE_FILE => typed::<CreateFileArgs>(args)?.into(),
        catalog::APPLY_PATCH => typed::<ApplyPatchArgs>(args)?.into(),
        _ => typed::<DeleteFileArgs>(args)?.into(),
    })
}

/// The revision string of some content.
pub fn revision_of(bytes: &[u8]) -> String {
    format!("sha256:{}", ContentHash::of(bytes).to_hex())
}

/// What agents may not read or patch as text: binary by the one rule
/// (`looks_binary`), or not UTF-8.
fn is_binary(bytes: &[u8]) -> bool {
    cocode_core::path::looks_binary(bytes) || std::str::from_utf8(bytes).is_err()
}

type HandlerFuture = cocode_tool_protocol::registry::BoxFuture<Result<ToolOutput, ToolError>>;

impl WorkspaceTools {
    fn root(&self) -> &Path {
        &self.workspace.workspace.root
    }

    fn normalize(&self, raw: &str) -> Result<NormalizedPath, ToolError> {
        normalize(raw, self.workspace.workspace.options())
            .map_err(|e| invalid(format!("{raw:?}: {e}")))
    }

    /// A workspace file through the one safe read path: inside the root
    /// after resolving links, never under `.cocode/`, read without following
    /// a link (`WORKSPACE_FILE_NOT_FOUND` when nothing is there).
    fn read_file(
        &self,
        operation: &'static str,
        path: &NormalizedPath,
    ) -> Result<Vec<u8>, ToolError> {
        self.read_current(path, operation)?.ok_or_else(|| {
            ws_error(
                WorkspaceErrorCode::FileNotFound,
                operation,
                path.as_str(),
                "no such file",
            )
        })
    }

    fn context(&self, cx: &HandlerContext) -> Result<TaskContext, ToolError> {
        let task = cx
            .ctx
            .task_id
            .as_deref()
            .and_then(|t| TaskId::new(t).ok())
            .ok_or_else(|| {
                ToolError::handler(
                    "TASK_CONTEXT_MISSING",
                    "edits belong to a task; none is named",
                    false,
                )
            })?;
        let attempt_no = self.tasks.attempt(&task).ok_or_else(|| {
            ToolError::handler(
                "TASK_NOT_RUNNING",
                format!("task {task} is not running"),
                false,
            )
        })?;
        let session_id = SessionId::new(cx.ctx.session_id.clone())
            .map_err(|e| ToolError::handler("TASK_CONTEXT_MISSING", e.to_string(), false))?;
        Ok(TaskContext {
            task_id: task,
            session_id,
            attempt_no,
        })
    }

    fn read_current(
        &self,
        path: &NormalizedPath,
        operation: &'static str,
    ) -> Result<Option<Vec<u8>>, ToolError> {
        self.workspace
            .gate
            .read_file(operation, path)
            .map_err(gate_error)
    }

    fn check_revision(
        &self,
        current: Option<&[u8]>,
        expected: Option<&str>,
        operation: &str,
        path: &NormalizedPath,
    ) -> Result<(), ToolError> {
        let Some(expected) = expected else {
            return Ok(());
        };
        let actual = current.map(revision_of);
        if actual.as_deref() != Some(expected) {
            // A read returns the editor's unsaved text and its revision; the
            // edit would replace the file on disk, which differs.
            let message = if self.documents.has_unsaved(path) {
                "the file has unsaved changes in the editor; they must be saved or discarded before it can be edited"
            } else {
                "the file changed since it was read; read it again"
            };
            return Err(ToolError::handler(
                WorkspaceErrorCode::RevisionConflict.as_str(),
                message,
                true,
            )
            .with_details(json!({"operation": operation, "path": path.as_str(),
                                 "expected": expected, "current": actual})));
        }
        Ok(())
    }

    /// Runs a gate operation under leases over `touched`; `prepare` runs
    /// inside the lease (reads for patches and revision checks) and builds
    /// the operation. The snapshots it recorded, or `None` when the gate held
    /// it for approval (the task is told).
    async fn gated(
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
    async fn edit(
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
    async fn edit_set(
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
    fn edit_items(&self, args: ApplyEditsArgs) -> Result<Vec<EditItem>, ToolError> {
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

    fn status(&self) -> Result<ToolOutput, ToolError> {
        let root = self.root();
        let projects: Vec<Value> = cocode_toolchain::verify::detect(root, &[])
            .into_iter()
            .map(|p| {
                let rel = p
                    .dir
                    .strip_prefix(root)
                    .map(|r| r.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                let kind = match p.kind {
                    cocode_toolchain::verify::ProjectKind::Cargo => "cargo",
                    cocode_toolchain::verify::ProjectKind::Python => "python",
                    cocode_toolchain::verify::ProjectKind::Node => "node",
                    cocode_toolchain::verify::ProjectKind::Dart => "dart",
                    cocode_toolchain::verify::ProjectKind::Configured => "configured",
                };
                let test = cocode_toolchain::verify::test_command(&p).unwrap_or_default();
                json!({"kind": kind, "path": if rel.is_empty() { ".".to_owned() } else { rel }, "testCommand": test})
            })
            .collect();
        let locked: Vec<String> = self
            .leases
            .leases()
            .into_iter()
            .map(|(p, _)| p.as_str().to_owned())
            .collect();
        let held = self.tasks.held_paths();
        let recovery: Vec<String> = self
            .workspace
            .gate
            .blocked_paths()
            .into_iter()
            .map(|(p, _)| p.as_str().to_owned())
            .collect();
        let name = root
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        ToolOutput::json(&json!({
            "root": name, "projects": projects, "heldPaths": held, "lockedPaths": locked,
            "recoveryPendingPaths": recovery, "history": "recorded"
        }))
    }

    /// The files under `base` (default: the workspace), gitignore-aware,
    /// without `.git/` and `.cocode/`, sorted, with their sizes.
    fn walk_files(&self, base: Option<&NormalizedPath>) -> Result<Vec<(String, u64)>, ToolError> {
        // A folder given by the agent is resolved like a read: its real
        // path must be inside the workspace and outside `.cocode/`.
        let dir = match base {
            None => self.root().to_path_buf(),
            Some(p) => self.real_folder("list", p)?,
        };
        let mut files = Vec::new();
        let rules = cocode_workspace::IgnoreFilter::with_parents_of(&dir);
        let walker = ignore::WalkBuilder::new(&dir)
            .standard_filters(false)
            .follow_links(false)
            .filter_entry(move |e| {
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                e.depth() == 0
                    || !((is_dir && crate::host::files::hidden_dir(e.file_name()))
                        || rules.ignores(e.path(), is_dir))
            })
            .build();
        for entry in walker.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(self.root()) else {
                continue;
            };
            let size = entry.metadata().map_or(0, |m| m.len());
            files.push((rel.to_string_lossy().replace('\\', "/"), size));
        }
        files.sort();
        Ok(files)
    }

    /// The real path of a folder the agent names, resolved like a read.
    fn real_folder(
        &self,
        operation: &'static str,
        path: &NormalizedPath,
    ) -> Result<std::path::PathBuf, ToolError> {
        let resolved = self
            .workspace
            .gate
            .policy()
            .resolve_read(operation, path)
            .map_err(gate_error)?
            .ok_or_else(|| {
                ws_error(
                    WorkspaceErrorCode::FileNotFound,
                    operation,
                    path.as_str(),
                    "no such folder",
                )
            })?;
        Ok(resolved
            .path
            .segments()
            .fold(self.root().to_path_buf(), |d, s| d.join(s)))
    }

    /// `listFiles`: the first page walks the tree once and keeps that
    /// listing; a cursor pages through the same listing, so files created
    /// or removed meanwhile neither repeat nor vanish between pages.
    fn list(&self, args: &ListFilesArgs) -> Result<ToolOutput, ToolError> {
        let limit =
            usize::try_from(args.limit.unwrap_or(500).min(catalog::LIST_PAGE_LIMIT)).unwrap_or(500);
        let (snapshot, files, start) = if let Some(cursor) = &args.cursor {
            self.listings.page(cursor).ok_or_else(|| {
                ToolError::handler(
                    "TOOL_VALIDATION_FAILED",
                    "unknown or expired cursor; list again without one",
                    false,
                )
            })?
        } else {
            let base = match args.path.as_deref() {
                Some(p) if p != "." => Some(self.normalize(p)?),
                _ => None,
            };
            let files = Arc::new(self.walk_files(base.as_ref())?);
            (self.listings.keep(Arc::clone(&files)), files, 0)
        };
        let page: Vec<Value> = files
            .iter()
            .skip(start)
            .take(limit)
            .map(|(path, size)| json!({"path": path, "size": size}))
            .collect();
        let next = start + page.len();
        let next_cursor = (next < files.len()).then(|| format!("{snapshot}:{next}"));
        ToolOutput::json(&json!({"files": page, "nextCursor": next_cursor}))
    }

    fn read(&self, args: &ReadFileArgs) -> Result<ToolOutput, ToolError> {
        let path = self.normalize(&args.path)?;
        // The editor's unsaved text wins over the disk (ACP's
        // `fs/read_text_file` promises it too); its revision is that of the
        // text returned. The path passes the same policy either way.
        let unsaved = self.documents.unsaved_text(&path);
        let bytes = match &unsaved {
            Some(text) => {
                self.workspace
                    .gate
                    .policy()
                    .resolve_read("read", &path)
                    .map_err(gate_error)?;
                text.clone().into_bytes()
            }
            None => self.read_file("read", &path)?,
        };
        if is_binary(&bytes) {
            return Err(ws_error(
                WorkspaceErrorCode::BinaryFile,
                "read",
                path.as_str(),
                "binary or non-UTF-8 file",
            ));
        }
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let total = lines.len();
        let start = args
            .start_line
            .map_or(1, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let end = args
            .end_line
            .map_or(total, |n| usize::try_from(n).unwrap_or(usize::MAX))
            .min(total);
        let ranged = args.start_line.is_some() || args.end_line.is_some();
        if !ranged && bytes.len() > SOURCE_LIMIT_BYTES {
            return Err(ws_error(
                WorkspaceErrorCode::SourceLimit,
                "read",
                path.as_str(),
                format!("the file has {} bytes; read it by line range", bytes.len()),
            ));
        }
        let content: String = if start > end || start > total {
            String::new()
        } else {
            lines[start - 1..end].concat()
        };
        if content.len() > SOURCE_LIMIT_BYTES {
            return Err(ws_error(
                WorkspaceErrorCode::SourceLimit,
                "read",
                path.as_str(),
                "the range is larger than the source limit",
            ));
        }
        let mut result = json!({
            "path": path.as_str(), "content": content, "revision": revision_of(&bytes),
            "startLine": start, "endLine": end.max(start.saturating_sub(1)), "totalLines": total
        });
        if unsaved.is_some() {
            result["unsaved"] = Value::Bool(true);
        }
        ToolOutput::json(&result)
    }

    /// `search`: one walk of the tree (or of `path`), each file read
    /// through the safe read path.
    fn search(&self, args: &SearchArgs) -> Result<ToolOutput, ToolError> {
        let query = args.query.as_str();
        let pattern = if args.regex == Some(true) {
            query.to_owned()
        } else {
            regex::escape(query)
        };
        // ripgrep's matcher and searcher: a match never spans lines. Binary
        // files (the one rule, below) are left out before the search.
        let line_matcher = grep_regex::RegexMatcherBuilder::new()
            .line_terminator(Some(b'\n'))
            .build(&pattern)
            .map_err(|e| {
                ToolError::handler(
                    "TOOL_VALIDATION_FAILED",
                    format!("invalid regular expression: {e}"),
                    false,
                )
            })?;
        let mut searcher = grep_searcher::SearcherBuilder::new()
            .line_number(true)
            .build();
        let max = args
            .max_results
            .unwrap_or(100)
            .min(catalog::SEARCH_RESULT_LIMIT);
        let base = match args.path.as_deref() {
            Some(p) if p != "." => Some(self.normalize(p)?),
            _ => None,
        };
        let files: Vec<String> = self
            .walk_files(base.as_ref())?
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        let mut matches = Vec::new();
        let mut truncated = false;
        for rel in files {
            let Ok(path) = self.normalize(&rel) else {
                continue;
            };
            let Ok(Some(bytes)) = self.workspace.gate.read_file("search", &path) else {
                continue;
            };
            if bytes.len() > SOURCE_LIMIT_BYTES || is_binary(&bytes) {
                continue;
            }
            let outcome = searcher.search_slice(
                &line_matcher,
                &bytes,
                grep_searcher::sinks::UTF8(|line_number, line| {
                    if matches.len() as u64 >= max {
                        truncated = true;
                        return Ok(false);
                    }
                    let preview: String = line.trim().chars().take(200).collect();
                    matches.push(json!({"path": rel, "line": line_number, "preview": preview}));
                    Ok(true)
                }),
            );
            if let Err(e) = outcome {
                tracing::warn!(path = %rel, "search skipped a file: {e}");
            }
            if truncated {
                break;
            }
        }
        ToolOutput::json(&json!({"matches": matches, "truncated": truncated}))
    }

    async fn run_command(
        self: Arc<Self>,
        args: TerminalRunArgs,
        cx: HandlerContext,
    ) -> Result<ToolOutput, ToolError> {
        let ctx = self.context(&cx)?;
        // The folder is resolved like a read: its real path must be inside
        // the workspace and outside `.cocode/`.
        let cwd = match args.cwd.as_deref() {
            Some(c) if c != "." => {
                let p = self.normalize(c)?;
                self.real_folder("run", &p)?
            }
            _ => self.root().to_path_buf(),
        };
        let timeout = Duration::from_secs(
            args.timeout_secs
                .unwrap_or(600)
                .min(catalog::COMMAND_TIMEOUT_LIMIT_SECS),
        );
        let output_limit = args
            .output_limit_bytes
            .unwrap_or(catalog::COMMAND_OUTPUT_LIMIT_BYTES)
            .min(catalog::COMMAND_OUTPUT_LIMIT_BYTES);
        let command = args.argv;
        let env_overrides = args.env;
        let this = Arc::clone(&self);
        // In a swept turn the agent may have written files itself since the
        // turn began: those are recorded as its own before the command's
        // picture is taken, never absorbed into it.
        let in_turn = self.tasks.turn_swept(&ctx.task_id);
        let begin_ctx = ctx.clone();
        let writers = self.command_writers;
        tokio::task::spawn_blocking(move || {
            if in_turn {
                // The ACP agent's own writes: it runs confined like commands.
                let observed = this.workspace.gate.end_sweep_by(
                    &begin_ctx,
                    cocode_core::SnapshotOrigin::Observed,
                    writers,
                )?;
                if let Some(note) = remove_made_metadata(&this.workspace, &begin_ctx, &observed) {
                    tracing::info!("{note}");
                }
                Ok(())
            } else {
                this.workspace.gate.begin_sweep().map(drop)
            }
        })
        .await
        .map_err(|e| ToolError::handler("TOOL_EXECUTION_FAILED", e.to_string(), false))?
        .map_err(gate_error)?;
        let spec = LaunchSpec {
            argv: command,
            cwd,
            env_overrides,
            profile: SandboxProfile::Agent {
                task_id: ctx.task_id.clone(),
            },
            io: LaunchIo::Piped,
            timeout: Some(timeout),
            output_byte_limit: usize::try_from(output_limit).ok(),
            extra_writable: Vec::new(),
            secret_env: BTreeMap::new(),
            extra_hosts: Vec::new(),
        };
        let outcome = self.launch(spec, output_limit, &cx, &ctx.task_id).await;
        // The sweep runs whatever the command did, so its changes are
        // recorded even when it failed; a repository it made goes again.
        let this = Arc::clone(&self);
        let sweep_ctx = ctx.clone();
        let note = tokio::task::spawn_blocking(move || {
            let observed = this.workspace.gate.end_sweep_by(
                &sweep_ctx,
                cocode_core::SnapshotOrigin::Observed,
                writers,
            )?;
            Ok::<_, GateError>(remove_made_metadata(&this.workspace, &sweep_ctx, &observed))
        })
        .await
        .map_err(|e| ToolError::handler("TOOL_EXECUTION_FAILED", e.to_string(), false))?
        .map_err(gate_error)?;
        outcome.map(|mut out| {
            if let Some(note) = note {
                out.content
                    .push(cocode_tool_protocol::ContentBlock::Text { text: note });
            }
            out
        })
    }

    async fn launch(
        &self,
        spec: LaunchSpec,
        output_limit: u64,
        cx: &HandlerContext,
        task: &TaskId,
    ) -> Result<ToolOutput, ToolError> {
        let (watch_id, stop) = self.commands.started(task, &spec.argv, &spec.cwd).await;
        let outcome = self
            .launch_watched(spec, output_limit, cx, watch_id, &stop)
            .await;
        if outcome.is_err() {
            self.commands.ended(watch_id, None).await;
        }
        outcome
    }

    async fn launch_watched(
        &self,
        spec: LaunchSpec,
        output_limit: u64,
        cx: &HandlerContext,
        watch_id: u64,
        stop: &tokio_util::sync::CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let mut handle = self.launcher.launch(spec).map_err(|e| match e {
            cocode_core::process::LaunchError::NotFound(p) => ToolError::handler(
                "COMMAND_NOT_FOUND",
                format!("program not found: {p}"),
                false,
            ),
            other => ToolError::handler("COMMAND_LAUNCH_FAILED", other.to_string(), false),
        })?;
        let mut output = cocode_toolchain::OutputBuffer::new(usize::try_from(output_limit).ok());
        loop {
            tokio::select! {
                () = cx.cancel.cancelled() => {
                    handle.kill().await.log_err("stopping a cancelled command");
                    return Err(ToolError::new(ToolErrorCode::Cancelled, "the command was cancelled"));
                }
                () = stop.cancelled() => {
                    handle.kill().await.log_err("stopping a command a person stopped");
                    return Err(ToolError::new(ToolErrorCode::Cancelled, "a person stopped the command"));
                }
                chunk = handle.read_output() => match chunk {
                    Some(bytes) => {
                        if let Some(sink) = &cx.output {
                            (sink.0)(&bytes);
                        }
                        self.commands.output(watch_id, &bytes).await;
                        output.push(&bytes);
                    }
                    None => break,
                },
            }
        }
        let status = handle
            .wait()
            .await
            .map_err(|e| ToolError::handler("COMMAND_LAUNCH_FAILED", e.to_string(), false))?;
        self.commands.ended(watch_id, Some(status)).await;
        let (code, timed_out, signal) = match status {
            ExitStatus::Code(c) => (Some(c), false, None),
            ExitStatus::TimedOut => (None, true, None),
            ExitStatus::Signal(n) => (None, false, Some(n)),
            ExitStatus::Killed => (None, false, None),
        };
        ToolOutput::json(&json!({
            "exitCode": code, "output": String::from_utf8_lossy(output.bytes()),
            "truncated": output.trimmed() > 0,
            "timedOut": timed_out,
            "signal": signal
        }))
    }

    /// `lsp.diagnostics`: opens the file (or every file a server takes)
    /// with its server, waits for the reports and returns them.
    async fn diagnostics(
        &self,
        args: cocode_tool_protocol::args::LspDiagnosticsArgs,
    ) -> Result<ToolOutput, ToolError> {
        let Some(servers) = &self.lsp else {
            return Err(ToolError::handler(
                "LSP_UNAVAILABLE",
                "no language server runs for this workspace",
                false,
            ));
        };
        let root = self.workspace.workspace.root.clone();
        let options = self.workspace.workspace.options();
        let paths = match &args.path {
            Some(p) => vec![self.normalize(p)?],
            None => Vec::new(),
        };
        if let [path] = paths.as_slice()
            && servers.spec_for(path).is_none()
        {
            return Err(ToolError::handler(
                "LSP_NO_SERVER",
                format!("no language server is set up for {}", path.as_str()),
                false,
            ));
        }
        let (texts, omitted) = {
            let servers = servers.clone();
            let documents = Arc::clone(&self.documents);
            tokio::task::spawn_blocking(move || {
                let (files, omitted) =
                    crate::host::lsp::query_files(&servers, &root, options, &paths);
                let reader = cocode_workspace::WorkspaceReader::open(&root, options)
                    .map_err(|e| e.to_string())?;
                let texts = crate::host::lsp::query_texts(&reader, documents.as_ref(), &files);
                Ok::<_, String>((texts, omitted))
            })
            .await
            .map_err(|e| ToolError::handler("LSP_FAILED", e.to_string(), true))?
            .map_err(|e| ToolError::handler("LSP_FAILED", e, true))?
        };
        let checked = texts.len();
        let (found, unanswered) =
            crate::host::lsp::query_diagnostics(servers, texts, LSP_TOOL_WAIT).await;
        ToolOutput::json(&crate::host::lsp::report_json(
            &crate::host::lsp::DiagnosticsReport {
                checked,
                omitted,
                files: found,
                unanswered,
            },
        ))
    }

    fn handler(self: &Arc<Self>, tool: &'static str) -> Arc<dyn ToolHandler> {
        let this = Arc::clone(self);
        Arc::new(
            move |args: Map<String, Value>, cx: HandlerContext| -> HandlerFuture {
                let this = Arc::clone(&this);
                Box::pin(async move { this.call(tool, args, cx).await })
            },
        )
    }

    async fn call(
        self: Arc<Self>,
        tool: &'static str,
        args: Map<String, Value>,
        cx: HandlerContext,
    ) -> Result<ToolOutput, ToolError> {
        match tool {
            // Read-only tools read the disk: they run on the blocking pool,
            // never on the runtime's workers.
            catalog::GET_STATUS => {
                typed::<GetStatusArgs>(args)?;
                self.blocking(Self::status).await
            }
            catalog::LIST_FILES => {
                let args: ListFilesArgs = typed(args)?;
                self.blocking(move |this| this.list(&args)).await
            }
            catalog::READ_FILE => {
                let args: ReadFileArgs = typed(args)?;
                self.blocking(move |this| this.read(&args)).await
            }
            catalog::SEARCH => {
                let args: SearchArgs = typed(args)?;
                self.blocking(move |this| this.search(&args)).await
            }
            catalog::TERMINAL_RUN => self.run_command(typed(args)?, cx).await,
            catalog::LSP_DIAGNOSTICS => self.diagnostics(typed(args)?).await,
            catalog::TASK_FINISH => {
                typed::<TaskFinishArgs>(args)?;
                self.context(&cx)?;
                ToolOutput::json(&json!({"accepted": true}))
            }
            catalog::WRITE_FILE
            | catalog::CREATE_FILE
            | catalog::APPLY_PATCH
            | catalog::DELETE_FILE => {
                let edit = single_edit(tool, args)?;
                let ctx = self.context(&cx)?;
                let path = self.normalize(&edit.path)?;
                let touched = vec![path.clone()];
                self.edit(ctx, touched, move |this| this.prepare(&edit, &path))
                    .await
            }
            catalog::APPLY_EDITS => {
                let args = typed(args)?;
                let ctx = self.context(&cx)?;
                self.edit_set(ctx, args).await
            }
            catalog::RENAME_FILE => {
                let args: RenameFileArgs = typed(args)?;
                let ctx = self.context(&cx)?;
                let from = self.normalize(&args.from)?;
                let to = self.normalize(&args.to)?;
                let touched = vec![from.clone(), to.clone()];
                self.edit(ctx, touched, move |_| Ok(GateOp::Rename { from, to }))
                    .await
            }
            other => Err(ToolError::new(
                ToolErrorCode::NotFound,
                format!("no handler for {other}"),
            )),
        }
    }

    /// Runs a read-only tool on the blocking pool.
    async fn blocking(
        self: Arc<Self>,
        work: impl FnOnce(&Self) -> Result<ToolOutput, ToolError> + Send + 'static,
    ) -> Result<ToolOutput, ToolError> {
        tokio::task::spawn_blocking(move || work(&self))
            .await
            .map_err(|e| ToolError::handler("TOOL_EXECUTION_FAILED", e.to_string(), false))?
    }

    /// Builds a file edit inside its lease: revision checks and patches
    /// read the file as it is now.
    fn prepare(&self, edit: &EditArgs, path: &NormalizedPath) -> Result<GateOp, ToolError> {
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
    fn change_previews(&self, op: &GateOp) -> Vec<cocode_tool_protocol::ChangePreview> {
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

    /// Registers a handler for every catalog tool this host can serve, and
    /// the previews of calls waiting for approval (`confined`: how agent
    /// commands are confined here, and the policy proxy's port).
    pub fn register(
        self: &Arc<Self>,
        registry: &mut ToolRegistry,
        confined: &(cocode_core::process::Confinement, u16),
    ) -> Result<(), RegistrationError> {
        registry.set_previewer(Arc::new(Previewer {
            tools: Arc::clone(self),
            confinement: describe_confinement(&confined.0, confined.1),
        }));
        for def in served_tools() {
            let tool: &'static str = match def.name.as_str() {
                catalog::GET_STATUS => catalog::GET_STATUS,
                catalog::LIST_FILES => catalog::LIST_FILES,
                catalog::READ_FILE => catalog::READ_FILE,
                catalog::SEARCH => catalog::SEARCH,
                catalog::WRITE_FILE => catalog::WRITE_FILE,
                catalog::APPLY_PATCH => catalog::APPLY_PATCH,
                catalog::CREATE_FILE => catalog::CREATE_FILE,
                catalog::RENAME_FILE => catalog::RENAME_FILE,
                catalog::DELETE_FILE => catalog::DELETE_FILE,
                catalog::APPLY_EDITS => catalog::APPLY_EDITS,
                catalog::TERMINAL_RUN => catalog::TERMINAL_RUN,
                catalog::TASK_FINISH => catalog::TASK_FINISH,
                _ => continue,
            };
            registry.register(def, self.handler(tool))?;
        }
        let installed = self.lsp.as_ref().is_some_and(|servers| {
            servers
                .statuses()
                .iter()
                .any(|s| !matches!(s.state, cocode_lsp::ServerState::NotInstalled { .. }))
        });
        if installed
            && let Some(def) = catalog::workspace_tools()
                .into_iter()
                .find(|t| t.name == catalog::LSP_DIAGNOSTICS)
        {
            registry.register(def, self.handler(catalog::LSP_DIAGNOSTICS))?;
        }
        Ok(())
    }
}

/// The version-control metadata a command made, as the sweep after it
/// recorded it: each `…/.git` (or `.hg`, …) folder every file of which the
/// command created, and each such file it created. Metadata that was there
/// before is not one (read-only to commands wherever a mount namespace
/// keeps it so).
fn made_metadata(ws: &OpenWorkspace, observed: &[EditSnapshot]) -> Vec<NormalizedPath> {
    let created: std::collections::BTreeSet<&str> = observed
        .iter()
        .filter(|s| s.kind() == cocode_core::SnapshotKind::Create)
        .map(|s| s.parts().path.as_str())
        .collect();
    let mut roots = std::collections::BTreeSet::new();
    for path in &created {
        let segments: Vec<&str> = path.split('/').collect();
        if let Some(at) = segments
            .iter()
            .position(|s| cocode_core::path::is_version_control_name(s))
        {
            roots.insert(segments[..=at].join("/"));
        }
    }
    let base = &ws.workspace.root;
    roots
        .into_iter()
        .filter(|root| {
            let mut files = Vec::new();
            let all_made = list_files(&base.join(root), root, &mut files)
                && files.iter().all(|f| created.contains(f.as_str()));
            all_made && !files.is_empty()
        })
        .filter_map(|root| normalize(&root, ws.workspace.options()).ok())
        .collect()
}

/// The files below `dir` (or `dir` itself, a file) as workspace paths
/// under `rel`; false when something there is neither (a link, a device),
/// which is then left as it is.
fn list_files(dir: &Path, rel: &str, out: &mut Vec<String>) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    if meta.is_file() {
        out.push(rel.to_owned());
        return true;
    }
    if !meta.is_dir() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().all(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        list_files(&e.path(), &format!("{rel}/{name}"), out)
    })
}

/// Removes the metadata a command made (see [`made_metadata`]) through the
/// gate, recorded with the task; the words the agent and the person read,
/// when there was any.
pub(crate) fn remove_made_metadata(
    ws: &OpenWorkspace,
    ctx: &TaskContext,
    observed: &[EditSnapshot],
) -> Option<String> {
    // What the sweep's records show, and what it does not look at: a
    // repository at a root that had none, or in an ignored folder.
    let mut made: Vec<NormalizedPath> = made_metadata(ws, observed);
    for path in ws.gate.metadata_made_since_sweep() {
        if !made.iter().any(|m| path.as_str().starts_with(m.as_str())) {
            made.push(path);
        }
    }
    if made.is_empty() {
        return None;
    }
    let names: Vec<String> = made
        .iter()
        .map(|p| cocode_core::shown::line(p.as_str()).into_owned())
        .collect();
    Some(match ws.gate.remove_made_metadata(ctx, &made) {
        Ok(_) => format!(
            "cocode removed {}, made by the agent's work: a repository's hooks and settings run in the person's own git, outside any sandbox. Agents do not create repositories; ask the person to.",
            names.join(", ")
        ),
        Err(e) => {
            tracing::warn!("removing {}: {e}", names.join(", "));
            format!(
                "the agent's work made {}, and cocode could not remove it ({}): tell the person before they run git there.",
                names.join(", "),
                e.message
            )
        }
    })
}
