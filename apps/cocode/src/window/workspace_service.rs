//! The window's workspace service: a task on the process's runtime that owns
//! the open folder's `WorkspaceHost`. It runs delegated tasks, and the
//! person's saves and Explorer operations, which go through the same gate
//! on the same queue (so they keep the order the person made them in). The
//! UI sends requests and drains events; every event wakes the UI once, so
//! the frame never waits and nothing repaints while idle.
//!
//! Several tasks run at once, each in its own conversation: the window
//! numbers conversations and the service tags what each run reports with
//! its number.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use cocode_agent::{LlmProviderRegistry, LoopLimits, RetryPolicy};
use cocode_core::agent::AgentEvent;
use cocode_core::path::NormalizedPath;
use cocode_core::task::CompletionModePolicy;
use cocode_core::{DelegatedTask, PendingApprovalKind, TaskId};
use cocode_editor::OpenDocuments;
use cocode_tool_protocol::{ApprovalDecision, ApprovalEvent, ApprovalSnapshot};
use cocode_toolchain::vault::LayeredVault;

use crate::window::providers::ProviderSetup;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::host::commands::CommandEvent;
use crate::host::orchestrator::{
    Decision, Progress, Reply, TaskApprover, TaskOrchestrator, TaskSpec, describe_end,
};
use crate::host::review::{RollbackOutcome, SnapshotRow, TaskDetail};
use crate::host::workspace_host::{HostOptions, WorkspaceHost};
use crate::window::link::{Coalesce, Events, UiEnd, Waker, link};
use crate::window::person_files;

/// What the UI asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum ServiceRequest {
    /// Run a task in conversation `conv`.
    Run {
        conv: u64,
        prompt: String,
        backend: String,
        /// The provider's model (`None`: its default).
        model: Option<String>,
    },
    /// The providers changed (a base URL): new tasks use these.
    Providers(LlmProviderRegistry),
    /// Stop conversation `conv`'s task.
    Stop(u64),
    /// Stop one agent command (from its terminal tab).
    StopCommand(u64),
    ToolDecision {
        id: u64,
        decision: ApprovalDecision,
    },
    TaskDecision {
        conv: u64,
        approve: bool,
    },
    /// The person's answer to an agent waiting for a reply.
    Reply {
        conv: u64,
        reply: Reply,
    },
    /// Load a task's review detail.
    Detail {
        task_id: String,
    },
    /// Roll a task back (to its start, an attempt, a snapshot or a
    /// message).
    Rollback {
        task_id: String,
        to: crate::host::review::RollbackTo,
    },
    /// What a rollback would do, before anything moves.
    PreviewRollback {
        task_id: String,
        to: crate::host::review::RollbackTo,
    },
    /// The Review panel: do `action` on a task, then read its review in
    /// `scope`.
    Review {
        task_id: String,
        scope: crate::host::task_review::ReviewScope,
        action: crate::window::review_service::ReviewAction,
    },
    /// Allow a host the proxy refused for a task, then run the task's
    /// prompt again as a new task in conversation `conv`.
    AllowAndRerun {
        conv: u64,
        task_id: String,
        host: String,
    },
    /// Save an open document through the gate's user save.
    Save {
        path: NormalizedPath,
    },
    /// A person's new file, new folder, rename or delete.
    UserOp(cocode_workspace::UserOp),
    /// Empty the trace of tool calls.
    ClearTrace,
    /// The person's decisions on what the folder's `workspace.json`
    /// grants (allowed or kept off).
    DecideGrants(Vec<(crate::host::trust::Grant, bool)>),
    /// Send the Settings page's view of `workspace.json`.
    LoadSettings,
    /// One change of the Settings page.
    EditSettings(crate::host::settings::SettingsEdit),
    /// Store (or with `None` remove) an agent's secret variable.
    StoreAgentSecret {
        agent: String,
        name: String,
        value: Option<cocode_core::services::Secret>,
    },
    /// Run a read-only tool of the catalog with these arguments.
    RunToolSample {
        name: String,
        arguments: serde_json::Map<String, serde_json::Value>,
    },
}

/// One row of the task list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRow {
    pub id: String,
    pub state: String,
    pub prompt: String,
}

/// What one conversation's run reports.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    Progress(Progress),
    TaskApproval {
        task_id: TaskId,
        kind: PendingApprovalKind,
        /// The question in words, with what verification said.
        question: String,
    },
    /// The agent ended its turn unfinished: the task waits for the
    /// person's reply.
    AwaitingReply {
        task_id: TaskId,
    },
    Finished {
        summary: String,
        /// The stable code of the agent error that ended the task.
        agent_error: Option<String>,
    },
    /// The run could not start, or broke off outside the agent.
    Failed(String),
    /// The changes recorded while a tool call ran (`call_id`; empty when
    /// they came at the end of a turn), with their diffs.
    Changes {
        call_id: String,
        rows: Vec<SnapshotRow>,
    },
    /// The task waits for another task's lease, in words ("waiting for
    /// task X's lease on path"); `None` once it no longer waits.
    LeaseWait(Option<String>),
}

/// What the service reports.
#[derive(Debug, Clone, PartialEq)]
pub enum ServiceEvent {
    /// Conversation `conv`'s run.
    Run {
        conv: u64,
        event: RunEvent,
    },
    ToolApproval(ApprovalSnapshot),
    ToolApprovalGone(u64),
    Tasks(Vec<TaskRow>),
    /// The external (ACP) agents the workspace can run: (id, name).
    AcpAgents(Vec<AcpAgentRow>),
    Detail(TaskDetail),
    /// What a rollback would do (its precheck), for the task's detail.
    RollbackPreview(Box<crate::host::review::RollbackPreview>),
    /// A task's review, read after the Review panel's action.
    Review(Box<crate::window::review_service::ReviewLoaded>),
    /// How agent commands are confined here and the policy proxy's port,
    /// for the status bar.
    Sandbox {
        confinement: cocode_core::process::Confinement,
        proxy_port: u16,
    },
    /// A short outcome line (rollbacks).
    Note(String),
    Error(String),
    /// An agent's command started, wrote output, or ended.
    Command(CommandEvent),
    /// A save finished (the error as the person reads it).
    Saved {
        path: NormalizedPath,
        result: Result<(), String>,
    },
    /// The files a running task has changed so far (empty once it
    /// ended): their editor tabs are read-only meanwhile.
    TaskFiles {
        task_id: String,
        paths: Vec<NormalizedPath>,
    },
    /// A person's file operation finished.
    UserOpDone {
        op: cocode_workspace::UserOp,
        result: Result<(), String>,
    },
    /// The trace of tool calls as it is now (arguments redacted).
    Trace(Vec<cocode_tool_protocol::observe::TraceEntry>),
    /// Conversation `conv`'s run did not start: the folder's
    /// `workspace.json` grants what the person has not confirmed.
    ConfirmGrants {
        conv: u64,
        grants: Vec<crate::host::trust::Grant>,
    },
    /// The Settings page's view of `workspace.json` as it is now.
    Settings(Box<crate::host::settings::SettingsView>),
    /// Why a change of the Settings page was refused (nothing changed).
    SettingsRefused(String),
    /// What a tool run from the catalog returned (as pretty JSON), or why
    /// it did not run.
    ToolSample {
        name: String,
        result: Result<String, String>,
    },
}

/// The UI's handle on the service.
#[derive(Debug)]
pub struct WorkspaceService {
    link: UiEnd<ServiceRequest, ServiceEvent>,
    root: PathBuf,
    /// Becomes true once the service has ended and let go of the
    /// workspace (its writer lock with it).
    closed: tokio::sync::watch::Receiver<bool>,
}

/// The service's way to report.
type Out = Events<ServiceEvent>;

impl Coalesce for ServiceEvent {
    /// Streamed text of the agent arrives as many small deltas; a frame
    /// shows them as one.
    fn merge(&mut self, next: Self) -> Option<Self> {
        match (self, next) {
            (
                Self::Run {
                    conv,
                    event: RunEvent::Progress(Progress::Agent(AgentEvent::MessageDelta(text))),
                },
                Self::Run {
                    conv: next_conv,
                    event: RunEvent::Progress(Progress::Agent(AgentEvent::MessageDelta(more))),
                },
            ) if *conv == next_conv => {
                text.push_str(&more);
                None
            }
            // A command's output chunks become one per frame.
            (
                Self::Command(CommandEvent::Output { id, bytes }),
                Self::Command(CommandEvent::Output {
                    id: next,
                    bytes: more,
                }),
            ) if *id == next => {
                bytes.extend_from_slice(&more);
                None
            }
            // Only the newest trace matters.
            (Self::Trace(rows), Self::Trace(newer)) => {
                *rows = newer;
                None
            }
            (_, next) => Some(next),
        }
    }
}

/// What the running task waits for from the person: a decision on a
/// task-level approval, or a reply to the agent.
#[derive(Debug, Default)]
struct Waits {
    decision: Mutex<Option<oneshot::Sender<Decision>>>,
    reply: Mutex<Option<oneshot::Sender<Reply>>>,
}

/// Task-level approvals answered by a person in the window.
struct WindowApprover {
    conv: u64,
    out: Out,
    waiting: Arc<Waits>,
}

impl WindowApprover {
    /// Leaves the answer's sender in `slot`, tells the window, and waits;
    /// `nobody` when the run is gone before an answer.
    async fn wait_for<T>(
        &self,
        slot: &Mutex<Option<oneshot::Sender<T>>>,
        asked: RunEvent,
        nobody: T,
    ) -> T {
        let (tx, rx) = oneshot::channel();
        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
        self.out
            .send(ServiceEvent::Run {
                conv: self.conv,
                event: asked,
            })
            .await;
        rx.await.unwrap_or(nobody)
    }
}

#[async_trait::async_trait]
impl TaskApprover for WindowApprover {
    async fn decide(&self, task: &DelegatedTask, kind: PendingApprovalKind) -> Decision {
        let asked = RunEvent::TaskApproval {
            task_id: task.task_id().clone(),
            kind,
            question: crate::host::orchestrator::approval_question(task, kind),
        };
        self.wait_for(&self.waiting.decision, asked, Decision::Defer)
            .await
    }

    fn converses(&self) -> bool {
        true
    }

    async fn reply(&self, task: &DelegatedTask) -> Reply {
        let asked = RunEvent::AwaitingReply {
            task_id: task.task_id().clone(),
        };
        self.wait_for(&self.waiting.reply, asked, Reply::End).await
    }
}

/// [`rows`] on the blocking pool: the records are read from disk.
async fn rows_off_thread(host: &Arc<WorkspaceHost>) -> Vec<TaskRow> {
    let host = Arc::clone(host);
    tokio::task::spawn_blocking(move || rows(&host))
        .await
        .unwrap_or_else(|e| {
            tracing::warn!("the task list could not be read: {e}");
            Vec::new()
        })
}

fn rows(host: &WorkspaceHost) -> Vec<TaskRow> {
    host.load_tasks()
        .into_iter()
        .map(|r| match r {
            Ok(t) => TaskRow {
                id: t.task_id().to_string(),
                state: describe_end(&t),
                prompt: t.prompt().chars().take(80).collect(),
            },
            Err(e) => TaskRow {
                id: "?".into(),
                state: "broken record".into(),
                prompt: format!("{e:#}"),
            },
        })
        .collect()
}

impl WorkspaceService {
    /// Starts the service for the workspace at `root` on the process's
    /// runtime; `waker` wakes the UI after every event. With `after`, the
    /// workspace is opened only once that earlier service of the same
    /// folder has let go of it (requests wait in the queue meanwhile).
    /// `parts` are what the host opens with: the window's open documents
    /// (agents read unsaved text from them, saves write them), its
    /// language servers (which agents' `lsp.diagnostics` shares), the
    /// provider setup and the composition root's clock.
    pub fn start(
        root: PathBuf,
        parts: HostParts,
        waker: Waker,
        rt: &tokio::runtime::Handle,
        after: Option<tokio::sync::watch::Receiver<bool>>,
    ) -> Self {
        let (ui, mut worker) = link(waker);
        let (closed_tx, closed) = tokio::sync::watch::channel(false);
        let folder = root.clone();
        rt.spawn(async move {
            if let Some(mut earlier) = after {
                // An error means that service is gone too.
                let _ = earlier.wait_for(|closed| *closed).await;
            }
            serve(folder, parts, worker.events, &mut worker.requests).await;
            let _ = closed_tx.send(true);
        });
        Self {
            link: ui,
            root,
            closed,
        }
    }

    /// The folder this service serves.
    pub fn root(&self) -> &std::path::Path {
        &self.root
    }

    /// Turns true once the service has ended (dropped) and let go of its
    /// workspace.
    pub fn closed(&self) -> tokio::sync::watch::Receiver<bool> {
        self.closed.clone()
    }

    /// Queues a request; never blocks.
    pub fn send(&self, request: ServiceRequest) {
        self.link.send(request);
    }

    /// Everything reported since the last frame (streamed text merged).
    pub fn drain(&mut self) -> Vec<ServiceEvent> {
        self.link.drain()
    }
}

/// Opens the workspace's host; reports why not.
async fn open_host(
    root: &std::path::Path,
    (documents, lsp, keys, clock): HostParts,
) -> Result<(Arc<WorkspaceHost>, LlmProviderRegistry), String> {
    // The person's provider settings (a file read: off the runtime's
    // workers); a settings file that cannot be used leaves the presets,
    // and the Providers page says why.
    let setup = keys.clone();
    let providers = tokio::task::spawn_blocking(move || setup.load().1)
        .await
        .map_err(|e| e.to_string())?;
    let options = HostOptions {
        // Keys kept for this session only come first, then the store's.
        vault: Arc::new(LayeredVault {
            run: Arc::clone(&keys.session),
            store: Arc::clone(&keys.store),
        }),
        providers: providers.clone(),
        retry: RetryPolicy::default(),
        limits: LoopLimits::default(),
        documents,
        lsp,
    };
    match WorkspaceHost::open_with_clock(root, options, clock).await {
        Ok(h) => Ok((Arc::new(h), providers)),
        Err(e) => Err(format!("{e:#}")),
    }
}

/// Without a host, every request is answered with why there is none.
async fn refuse_all(why: String, out: &Out, inbox: &mut mpsc::Receiver<ServiceRequest>) {
    out.send(ServiceEvent::Error(why.clone())).await;
    while let Some(request) = inbox.recv().await {
        match request {
            ServiceRequest::Save { path } => {
                out.send(ServiceEvent::Saved {
                    path,
                    result: Err(person_files::unsaved(&why)),
                })
                .await;
            }
            ServiceRequest::UserOp(op) => {
                out.send(ServiceEvent::UserOpDone {
                    op,
                    result: Err(person_files::undone(&why)),
                })
                .await;
            }
            _ => {}
        }
    }
}

/// An external agent in the backend picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcpAgentRow {
    pub id: String,
    pub name: String,
    /// Set when its program is not installed: how to install it
    /// ("not installed — npm install -g …").
    pub missing: Option<String>,
}

/// The Settings page's view, or why it cannot be read.
async fn send_settings(host: &WorkspaceHost, out: &Out) {
    out.send(match host.settings_view() {
        Ok(view) => ServiceEvent::Settings(Box::new(view)),
        Err(e) => ServiceEvent::SettingsRefused(format!("{e:#}")),
    })
    .await;
}

/// The workspace's external agents, for the backend picker, with whether
/// each program is installed (looked up here, off the UI thread).
fn acp_agents(host: &WorkspaceHost) -> ServiceEvent {
    let path_var = std::env::var_os("PATH");
    ServiceEvent::AcpAgents(
        host.acp
            .agents()
            .iter()
            .map(|a| AcpAgentRow {
                id: a.id.to_string(),
                name: a.display_name.clone(),
                missing: match cocode_acp::registry::program(a, path_var.as_deref()) {
                    cocode_acp::registry::Program::Installed(_) => None,
                    missing @ cocode_acp::registry::Program::Missing { .. } => {
                        Some(missing.to_string())
                    }
                },
            })
            .collect(),
    )
}

/// Tool approvals go to the window's cards.
fn forward_approvals(host: &WorkspaceHost, out: &Out) {
    let mut approvals = host.tools.approvals().subscribe();
    let out = out.clone();
    tokio::spawn(async move {
        while let Ok(event) = approvals.recv().await {
            out.send(match event {
                ApprovalEvent::Requested(s) => ServiceEvent::ToolApproval(s),
                ApprovalEvent::Resolved { id, .. } => ServiceEvent::ToolApprovalGone(id),
            })
            .await;
        }
    });
}

/// The trace goes to the Trace panel each time it changes (the newest
/// only, when several changes come between two looks).
fn forward_traces(host: &WorkspaceHost, out: &Out) {
    let mut changes = host.trace_changes();
    let traces = Arc::clone(&host.traces);
    let out = out.clone();
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            out.send(ServiceEvent::Trace(traces.entries())).await;
        }
    });
}

/// Agents' commands go to their terminal tabs.
fn forward_commands(host: &WorkspaceHost, out: &Out) {
    let mut commands = host.commands.watch();
    let out = out.clone();
    tokio::spawn(async move {
        while let Some(event) = commands.recv().await {
            if !out.send(ServiceEvent::Command(event)).await {
                return;
            }
        }
    });
}

/// What the host is opened with besides its folder: the window's open
/// documents, its language servers, the provider setup and the one clock.
pub type HostParts = (
    Arc<OpenDocuments>,
    Option<cocode_lsp::LanguageServers>,
    ProviderSetup,
    Arc<dyn cocode_core::clock::Clock>,
);

#[expect(
    clippy::too_many_lines,
    reason = "the service's one request loop, a branch per request"
)]
async fn serve(
    root: PathBuf,
    documents: HostParts,
    out: Out,
    inbox: &mut mpsc::Receiver<ServiceRequest>,
) {
    let (host, mut providers) = match open_host(&root, documents).await {
        Ok(opened) => opened,
        Err(why) => return refuse_all(why, &out, inbox).await,
    };
    // Tasks that were live when the app last stopped have lost their
    // session: they fail with `app_restarted`.
    match TaskOrchestrator::new(Arc::clone(&host)).fail_interrupted() {
        Ok(ids) if !ids.is_empty() => {
            out.send(ServiceEvent::Note(if ids.len() == 1 {
                "1 task was interrupted when cocode last stopped and is marked failed".to_owned()
            } else {
                format!(
                    "{} tasks were interrupted when cocode last stopped and are marked failed",
                    ids.len()
                )
            }))
            .await;
        }
        Ok(_) => {}
        Err(e) => {
            out.send(ServiceEvent::Error(format!("interrupted tasks: {e}")))
                .await;
        }
    }
    out.send(ServiceEvent::Sandbox {
        confinement: host.launcher.agent_confinement(),
        proxy_port: host.proxy.port(),
    })
    .await;
    out.send(ServiceEvent::Tasks(rows_off_thread(&host).await))
        .await;
    out.send(acp_agents(&host)).await;
    forward_approvals(&host, &out);
    forward_commands(&host, &out);
    forward_traces(&host, &out);
    let queue = Arc::clone(host.tools.approvals());
    let mut runs: HashMap<u64, RunSlot> = HashMap::new();
    // Runs over for the window whose tasks may still be finishing.
    let mut finishing: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    while let Some(request) = inbox.recv().await {
        // A run that told its end is over for the window, though its task
        // may still be refreshing the list.
        let over: Vec<u64> = runs
            .iter()
            .filter(|(_, r)| r.ended.load(Ordering::Acquire) || r.handle.is_finished())
            .map(|(conv, _)| *conv)
            .collect();
        finishing.retain(|h| !h.is_finished());
        finishing.extend(
            over.iter()
                .filter_map(|conv| runs.remove(conv))
                .map(|r| r.handle),
        );
        match request {
            ServiceRequest::Providers(registry) => {
                host.agent.set_providers(Arc::new(registry.clone()));
                providers = registry;
            }
            ServiceRequest::Run {
                conv,
                prompt,
                backend,
                model,
            } => {
                // No agent runs before the person decided on what the
                // folder's own settings grant.
                let grants = host.pending_grants();
                if !grants.is_empty() {
                    out.send(ServiceEvent::ConfirmGrants { conv, grants }).await;
                    continue;
                }
                let backend =
                    crate::host::backend::backend_of(&backend, model.as_deref(), &providers);
                // The setting as it is now (Settings may have changed it).
                let mode = host
                    .workspace
                    .current_config()
                    .map_or(host.workspace.config.completion_mode, |c| c.completion_mode);
                let spec = backend.map(|backend| TaskSpec {
                    prompt,
                    backend,
                    completion_mode: CompletionModePolicy::decide(mode),
                });
                start_run(&host, conv, spec, &out, &mut runs).await;
            }
            ServiceRequest::AllowAndRerun {
                conv,
                task_id,
                host: allowed,
            } => {
                let spec = match host.allow_host(&allowed) {
                    Ok(()) => rerun_spec(&host, &task_id).await,
                    Err(e) => Err(e),
                };
                if spec.is_ok() {
                    out.send(ServiceEvent::Note(format!(
                        "{allowed} is allowed from now on (workspace.json); running the task again"
                    )))
                    .await;
                }
                start_run(&host, conv, spec, &out, &mut runs).await;
            }
            ServiceRequest::Stop(conv) => {
                if let Some(run) = runs.get(&conv) {
                    run.stop.cancel();
                }
            }
            ServiceRequest::Save { path } => {
                let result = person_files::save(&host, &path).await;
                out.send(ServiceEvent::Saved { path, result }).await;
            }
            ServiceRequest::UserOp(op) => {
                let result = person_files::user_op(&host, &op).await;
                out.send(ServiceEvent::UserOpDone { op, result }).await;
            }
            ServiceRequest::StopCommand(id) => {
                host.commands.stop(id);
            }
            ServiceRequest::ClearTrace => host.clear_trace(),
            ServiceRequest::DecideGrants(decisions) => {
                if let Err(e) = host.decide_grants(&decisions) {
                    out.send(ServiceEvent::Error(format!(
                        "your decision on this folder's settings was not saved: {e:#}"
                    )))
                    .await;
                }
                // An external agent allowed now is one to pick.
                out.send(acp_agents(&host)).await;
                send_settings(&host, &out).await;
            }
            ServiceRequest::LoadSettings => send_settings(&host, &out).await,
            ServiceRequest::RunToolSample { name, arguments } => {
                let result = host
                    .run_tool_sample(&name, arguments)
                    .await
                    .map(|r| serde_json::to_string_pretty(&r).unwrap_or_default());
                out.send(ServiceEvent::ToolSample { name, result }).await;
            }
            ServiceRequest::StoreAgentSecret { agent, name, value } => {
                let stored = {
                    let host = Arc::clone(&host);
                    tokio::task::spawn_blocking(move || {
                        host.store_agent_secret(&agent, &name, value.as_ref())
                    })
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|r| r)
                };
                if let Err(why) = stored {
                    out.send(ServiceEvent::SettingsRefused(why)).await;
                }
                out.send(acp_agents(&host)).await;
                send_settings(&host, &out).await;
            }
            ServiceRequest::EditSettings(edit) => {
                match host.edit_settings(&edit) {
                    Ok(Ok(())) => {}
                    Ok(Err(why)) => {
                        out.send(ServiceEvent::SettingsRefused(why)).await;
                    }
                    Err(e) => {
                        out.send(ServiceEvent::SettingsRefused(format!("{e:#}")))
                            .await;
                    }
                }
                out.send(acp_agents(&host)).await;
                send_settings(&host, &out).await;
            }
            ServiceRequest::ToolDecision { id, decision } => {
                queue.resolve(id, decision);
            }
            ServiceRequest::Detail { task_id } => {
                out.send(match detail_of(&host, &task_id).await {
                    Ok(d) => ServiceEvent::Detail(d),
                    Err(e) => ServiceEvent::Error(format!("{e:#}")),
                })
                .await;
            }
            ServiceRequest::PreviewRollback { task_id, to } => {
                let ws = Arc::clone(&host.workspace);
                let preview = tokio::task::spawn_blocking(move || {
                    let id = TaskId::new(&task_id)
                        .map_err(|_| format!("“{task_id}” is not a task id"))?;
                    Ok::<_, String>(crate::host::review::preview(&ws, &id, &to))
                })
                .await;
                let event = match preview {
                    Ok(Ok(p)) => ServiceEvent::RollbackPreview(Box::new(p)),
                    Ok(Err(e)) => ServiceEvent::Error(e),
                    Err(e) => ServiceEvent::Error(e.to_string()),
                };
                out.send(event).await;
            }
            ServiceRequest::Rollback { task_id, to } => {
                if !runs.is_empty() {
                    out.send(ServiceEvent::Error(
                        "stop the running tasks before a rollback".into(),
                    ))
                    .await;
                    continue;
                }
                out.send(rollback_of(&host, &task_id, to).await).await;
                out.send(ServiceEvent::Tasks(rows_off_thread(&host).await))
                    .await;
                if let Ok(d) = detail_of(&host, &task_id).await {
                    out.send(ServiceEvent::Detail(d)).await;
                }
            }
            ServiceRequest::Review {
                task_id,
                scope,
                action,
            } => {
                let changes = action.changes_files();
                let loaded = crate::window::review_service::review_of(
                    &host,
                    task_id,
                    scope,
                    action,
                    !runs.is_empty(),
                )
                .await;
                out.send(ServiceEvent::Review(Box::new(loaded))).await;
                if changes {
                    out.send(ServiceEvent::Tasks(rows_off_thread(&host).await))
                        .await;
                }
            }
            ServiceRequest::Reply { conv, reply } => {
                if let Some(tx) = runs.get(&conv).and_then(|r| r.waiting.take_reply()) {
                    let _ = tx.send(reply);
                }
            }
            ServiceRequest::TaskDecision { conv, approve } => {
                if let Some(tx) = runs.get(&conv).and_then(|r| r.waiting.take_decision()) {
                    let _ = tx.send(if approve {
                        Decision::Approve
                    } else {
                        Decision::Reject
                    });
                }
            }
        }
    }
    // The window closed (or opened another folder): deny what still
    // waits, stop the runs and wait for them, then let go of the workspace,
    // so the same folder can be opened again at once.
    for run in runs.values() {
        run.stop.cancel();
    }
    queue.deny_all();
    for handle in runs.into_values().map(|r| r.handle).chain(finishing) {
        let _ = handle.await;
    }
    let mut waited = 0;
    while Arc::strong_count(&host) > 1 && waited < 500 {
        // Work of a run's own (a list refresh on the blocking pool).
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        waited += 1;
    }
    if Arc::strong_count(&host) > 1 {
        tracing::warn!(root = %root.display(), "the workspace is still held 5 s after its service ended");
    }
}

/// A conversation's run under way.
struct RunSlot {
    stop: CancellationToken,
    handle: tokio::task::JoinHandle<()>,
    waiting: Arc<Waits>,
    /// Set right before the run tells the window how it ended.
    ended: Arc<AtomicBool>,
}

impl Waits {
    fn take_reply(&self) -> Option<oneshot::Sender<Reply>> {
        self.reply
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn take_decision(&self) -> Option<oneshot::Sender<Decision>> {
        self.decision
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// The files task `task` has changed so far, and the snapshots recorded
/// after sequence number `after` as rows with their diffs.
async fn changes_of(
    host: &Arc<WorkspaceHost>,
    task: &TaskId,
    after: u64,
) -> (Vec<NormalizedPath>, Vec<SnapshotRow>) {
    let ws = Arc::clone(&host.workspace);
    let id = task.clone();
    tokio::task::spawn_blocking(move || {
        let records = ws.gate.store().snapshots_of_task(&id).unwrap_or_default();
        let mut paths: Vec<NormalizedPath> = records.iter().map(|r| r.path().clone()).collect();
        paths.sort();
        paths.dedup();
        let rows = records
            .iter()
            .filter(|r| r.parts().seq.0 > after)
            .map(|r| crate::host::review::snapshot_row(&ws, r))
            .collect();
        (paths, rows)
    })
    .await
    .unwrap_or_default()
}

async fn detail_of(host: &Arc<WorkspaceHost>, task_id: &str) -> anyhow::Result<TaskDetail> {
    let id = TaskId::new(task_id)?;
    let ws = Arc::clone(&host.workspace);
    let blocked_hosts = host.proxy.blocked_hosts(&id);
    let shown = blocked_hosts.clone();
    let reader = Arc::clone(host);
    let (mut detail, held) = tokio::task::spawn_blocking(move || {
        let held = reader.held_reasons(&blocked_hosts);
        crate::host::review::detail(&ws, &id).map(|d| (d, held))
    })
    .await??;
    detail.blocked_hosts = shown;
    detail.held_hosts = held;
    Ok(detail)
}

/// Starts a run of `spec` in conversation `conv`, unless it cannot start
/// (the conversation says why).
async fn start_run(
    host: &Arc<WorkspaceHost>,
    conv: u64,
    spec: anyhow::Result<TaskSpec>,
    out: &Out,
    runs: &mut HashMap<u64, RunSlot>,
) {
    if runs.contains_key(&conv) {
        // The window starts runs only in conversations without one.
        out.send(ServiceEvent::Error(
            "this conversation's task is still running".into(),
        ))
        .await;
        return;
    }
    let spec = match spec {
        Ok(spec) => spec,
        Err(e) => {
            let event = RunEvent::Failed(format!("{e:#}"));
            out.send(ServiceEvent::Run { conv, event }).await;
            return;
        }
    };
    let stop = CancellationToken::new();
    let waiting = Arc::new(Waits::default());
    let ended = Arc::new(AtomicBool::new(false));
    let handle = tokio::spawn(run_one(
        Arc::clone(host),
        spec,
        WindowApprover {
            conv,
            out: out.clone(),
            waiting: Arc::clone(&waiting),
        },
        (stop.clone(), Arc::clone(&ended)),
    ));
    runs.insert(
        conv,
        RunSlot {
            stop,
            handle,
            waiting,
            ended,
        },
    );
}

/// The spec of a new run of an earlier task (same prompt, backend and
/// completion mode).
async fn rerun_spec(host: &Arc<WorkspaceHost>, task_id: &str) -> anyhow::Result<TaskSpec> {
    let id = TaskId::new(task_id)?;
    let ws = Arc::clone(&host.workspace);
    let task =
        tokio::task::spawn_blocking(move || crate::host::records::load_task_record(&ws, &id))
            .await??;
    Ok(TaskSpec {
        prompt: task.prompt().to_owned(),
        backend: task.backend().clone(),
        completion_mode: task.completion_mode(),
    })
}

async fn rollback_of(
    host: &Arc<WorkspaceHost>,
    task_id: &str,
    to: crate::host::review::RollbackTo,
) -> ServiceEvent {
    let Ok(id) = TaskId::new(task_id) else {
        return ServiceEvent::Error(format!("“{task_id}” is not a task id"));
    };
    let ws = Arc::clone(&host.workspace);
    let (words, nothing) = (to.words(), to.nothing_after());
    let outcome = tokio::task::spawn_blocking(move || match to.query(&ws, &id)? {
        Some(query) => crate::host::review::rollback(&ws, &id, &query).map(Some),
        None => Ok(None),
    })
    .await;
    match outcome {
        Ok(Ok(None)) => ServiceEvent::Note(nothing),
        Ok(Ok(Some(RollbackOutcome::Done { restored, task }))) => ServiceEvent::Note(format!(
            "rolled back {} path(s) to {words}; task {}: {}",
            restored.len(),
            task.task_id(),
            describe_end(&task)
        )),
        Ok(Ok(Some(RollbackOutcome::Conflicts(c)))) => ServiceEvent::Error(format!(
            "rollback refused, nothing was touched: {}",
            c.iter()
                .map(|(p, why)| format!("{p} ({why})"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Ok(Ok(Some(RollbackOutcome::Refused(why)))) => {
            ServiceEvent::Error(format!("rollback refused: {why}"))
        }
        Ok(Err(e)) => ServiceEvent::Error(format!("{e:#}")),
        Err(e) => ServiceEvent::Error(e.to_string()),
    }
}

/// How often a running task's lease waits are looked at.
const LEASE_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// Tells conversation `conv` when its task waits for another task's lease
/// (and when it no longer does), until `done`.
async fn watch_leases(
    leases: Arc<cocode_workspace::LeaseRegistry>,
    conv: u64,
    task: TaskId,
    out: Out,
    done: CancellationToken,
) {
    let mut shown: Option<String> = None;
    loop {
        let wait = leases
            .waits()
            .into_iter()
            .find(|w| w.task == task)
            .map(|w| format!("waiting for task {}'s lease on {}", w.holder, w.path));
        if wait != shown {
            shown.clone_from(&wait);
            let event = RunEvent::LeaseWait(wait);
            if !out.send(ServiceEvent::Run { conv, event }).await {
                return;
            }
        }
        tokio::select! {
            () = done.cancelled() => return,
            () = tokio::time::sleep(LEASE_POLL) => {}
        }
    }
}

/// Runs one task; `ended` is set right before the window hears how it
/// ended.
async fn run_one(
    host: Arc<WorkspaceHost>,
    spec: TaskSpec,
    approver: WindowApprover,
    (stop, ended): (CancellationToken, Arc<AtomicBool>),
) {
    let (conv, out) = (approver.conv, approver.out.clone());
    let tagged = move |event| ServiceEvent::Run { conv, event };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let forward_out = out.clone();
    let files_host = Arc::clone(&host);
    let watching = CancellationToken::new();
    let watch_done = watching.clone();
    let forward = tokio::spawn(async move {
        let mut task: Option<TaskId> = None;
        // The last snapshot shown in the transcript.
        let mut shown_seq = 0;
        while let Some(p) = rx.recv().await {
            let ended_call = match &p {
                Progress::Created(id) => {
                    task = Some(id.clone());
                    tokio::spawn(watch_leases(
                        Arc::clone(&files_host.leases),
                        conv,
                        id.clone(),
                        forward_out.clone(),
                        watch_done.clone(),
                    ));
                    None
                }
                Progress::Agent(AgentEvent::ToolCallUpdate(u)) => matches!(
                    u.status,
                    cocode_core::agent::ToolCallStatus::Completed
                        | cocode_core::agent::ToolCallStatus::Failed
                )
                .then(|| u.call_id.clone()),
                Progress::Agent(AgentEvent::TurnEnded { .. }) => Some(String::new()),
                _ => None,
            };
            let created = matches!(p, Progress::Created(_));
            forward_out.send(tagged(RunEvent::Progress(p))).await;
            if created {
                // The new task joins the list.
                forward_out
                    .send(ServiceEvent::Tasks(rows_off_thread(&files_host).await))
                    .await;
            }
            if let (Some(call_id), Some(id)) = (ended_call, &task) {
                let (paths, rows) = changes_of(&files_host, id, shown_seq).await;
                if let Some(last) = rows.last() {
                    shown_seq = last.seq;
                    forward_out
                        .send(tagged(RunEvent::Changes { call_id, rows }))
                        .await;
                }
                forward_out
                    .send(ServiceEvent::TaskFiles {
                        task_id: id.to_string(),
                        paths,
                    })
                    .await;
            }
        }
        task
    });
    let result = TaskOrchestrator::new(Arc::clone(&host))
        .run(spec, &approver, &tx, stop)
        .await;
    drop(tx);
    let task = forward.await.ok().flatten();
    watching.cancel();
    // The task is over: its files are the person's again.
    if let Some(id) = task {
        out.send(ServiceEvent::TaskFiles {
            task_id: id.to_string(),
            paths: Vec::new(),
        })
        .await;
    }
    let event = match result {
        Ok(task) => {
            let agent_error = match task.terminal_reason() {
                Some(cocode_core::task::TerminalReason::AgentError { code }) => Some(code.clone()),
                _ => None,
            };
            RunEvent::Finished {
                summary: format!("task {}: {}", task.task_id(), describe_end(&task)),
                agent_error,
            }
        }
        Err(e) => RunEvent::Failed(e.to_string()),
    };
    ended.store(true, Ordering::Release);
    out.send(tagged(event)).await;
    out.send(ServiceEvent::Tasks(rows_off_thread(&host).await))
        .await;
}

#[cfg(test)]
#[path = "workspace_service_tests.rs"]
mod tests;
