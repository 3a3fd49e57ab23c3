//! The workspace tool catalog's handlers: every tool an agent calls ends in
//! a host use case here — reads from disk, edits through leases and the
//! gate, commands through the launcher between two sweeps.
//!
//! `lsp.diagnostics` is registered only when a language server is
//! installed for the workspace: a model never sees a tool that can only
//! fail.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cocode_core::gate::{GateError, GateOp, TaskContext};
use cocode_core::path::{NormalizedPath, normalize};
use cocode_core::process::ProcessLauncher;
use cocode_core::services::TextDocumentSource;
use cocode_core::snapshot::EditSnapshot;
use cocode_core::{ContentHash, SessionId, TaskId, WorkspaceErrorCode};
use cocode_tool_protocol::args::{
    ApplyEditsArgs, ApplyPatchArgs, CreateFileArgs, DeleteFileArgs, EditArgs, GetStatusArgs,
    ListFilesArgs, ReadFileArgs, RenameFileArgs, SearchArgs, TaskFinishArgs, TerminalRunArgs,
    WriteFileArgs,
};
use cocode_tool_protocol::catalog::{self};
use cocode_tool_protocol::{
    HandlerContext, RegistrationError, ToolError, ToolErrorCode, ToolHandler, ToolOutput,
    ToolRegistry,
};
use cocode_workspace::{LeaseRegistry, OpenWorkspace};

use serde_json::{Map, Value, json};

mod commands;
mod directory;
mod edits;
mod listing;
mod reads;

pub use directory::{HeldEdit, TaskDirectory};

/// The catalog tools this host serves (all but `lsp.diagnostics`, which
/// needs a running language server).
pub fn served_tools() -> Vec<cocode_tool_protocol::ToolDefinition> {
    catalog::workspace_tools()
        .into_iter()
        .filter(|t| t.name != catalog::LSP_DIAGNOSTICS)
        .collect()
}

/// A format the catalog is exported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogFormat {
    Mcp,
    OpenAi,
    Anthropic,
}

impl CatalogFormat {
    pub const ALL: [Self; 3] = [Self::Mcp, Self::OpenAi, Self::Anthropic];

    /// The format by its command-line name (`mcp`, `openai`, `anthropic`).
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Its command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Mcp => "mcp",
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
        }
    }

    /// Its name as a person reads it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Mcp => "MCP",
            Self::OpenAi => "OpenAI",
            Self::Anthropic => "Anthropic",
        }
    }
}

/// The served catalog as `format`'s JSON, pretty-printed: what
/// `cocode tools list --format` prints and the Tool catalog panel copies.
pub fn catalog_json(format: CatalogFormat) -> String {
    use cocode_tool_protocol::projection::{to_anthropic_tools, to_mcp_tools, to_openai_tools};
    let tools = served_tools();
    let value = match format {
        CatalogFormat::Mcp => to_mcp_tools(&tools),
        CatalogFormat::OpenAi => to_openai_tools(&tools),
        CatalogFormat::Anthropic => to_anthropic_tools(&tools),
    };
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// How long `lsp.diagnostics` waits for the servers' reports.
const LSP_TOOL_WAIT: Duration = Duration::from_secs(20);

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

/// A listing of `listFiles`: paths in order, walked as far as its pages
/// asked (sizes are read per page).
type Listing = Arc<Mutex<listing::LazyListing>>;

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
        let found = files.lock().unwrap_or_else(PoisonError::into_inner).found();
        (offset <= found).then_some((id, files, offset))
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
