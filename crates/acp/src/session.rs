//! `AcpRuntime`: external agents over the Agent Client Protocol (client
//! side, protocol version 1).
//!
//! The agent is launched through the host's launcher with the agent profile
//! (stdio only; stderr kept apart as the agent's log). `session/update`
//! becomes `AgentEvent`s; `fs/read_text_file`, `fs/write_text_file`,
//! `terminal/create` and `session/request_permission` become
//! `AgentRequest`s the host completes — this crate decides nothing about
//! them.
//!
//! Terminals: `terminal/create` answers with a terminal id at once and asks
//! the host to run the command (one `Command` request, which the host
//! completes when the command has ended — after an approval, sandboxed,
//! recorded by the sweep). `terminal/output` reports the output streamed so
//! far (the host passes it on while the command runs) and the exit once it
//! ended, `terminal/wait_for_exit` waits for it, `terminal/kill` and
//! `terminal/release` of a running command withdraw the request so the
//! host stops it. A command the host refused answers `wait_for_exit` and
//! `output` with the refusal's code.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Agent, Client, Lines, Responder, V1};
use async_trait::async_trait;
use cocode_core::agent::{
    AgentBackendKind, AgentCapabilities, AgentError, AgentEvent, AgentProvider, AgentRequest,
    AgentRequestKind, AgentRuntime, AgentSession, EventStream, FileEditOp, PermissionOption,
    PermissionOptionKind, RequestCompletion, SessionRequest, SessionTarget, TurnEndReason,
    UserTurn,
};
use cocode_core::output::OutputBuffer;
use cocode_core::process::{LaunchIo, LaunchSpec, ProcessHandle, ProcessLauncher, SandboxProfile};
use cocode_core::services::{CredentialVault, Secret};
use cocode_core::{CancelReason, ProviderId, RequestId};
use futures::{SinkExt as _, StreamExt as _};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::registry::{AcpAgentConfig, AcpAgentRegistry};
use crate::updates::UpdateMapper;

mod runtime;
mod session_impl;
mod terminals;

/// The most stderr kept per agent (the newest bytes).
const LOG_LIMIT: usize = 256 * 1024;

/// Most lines from the agent queued for the protocol.
const INCOMING_QUEUE: usize = 64;

/// Most commands (a prompt, a cancel) queued for the connection task; one
/// turn runs at a time, so the queue is never long.
const COMMAND_QUEUE: usize = 4;

/// How long a cancelled agent may take to stop before it is killed.
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// The ACP backend.
pub struct AcpRuntime {
    launcher: Arc<dyn ProcessLauncher>,
    /// Replaced whole when the person's decisions about a workspace's own
    /// entries change ([`Self::set_agents`]).
    agents: std::sync::RwLock<AcpAgentRegistry>,
    grace: Duration,
    /// Where declared secret variables get their values (none: no agent
    /// gets a secret).
    secrets: Option<Arc<dyn CredentialVault>>,
}

impl std::fmt::Debug for AcpRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpRuntime")
            .field("agents", &self.agents)
            .finish_non_exhaustive()
    }
}

impl AcpRuntime {
    pub fn new(launcher: Arc<dyn ProcessLauncher>, agents: AcpAgentRegistry) -> Self {
        Self {
            launcher,
            agents: std::sync::RwLock::new(agents),
            grace: CANCEL_GRACE,
            secrets: None,
        }
    }

    /// Declared secret variables come from this store (entries named by
    /// [`crate::registry::secret_account`]).
    #[must_use]
    pub fn with_secrets(mut self, vault: Arc<dyn CredentialVault>) -> Self {
        self.secrets = Some(vault);
        self
    }

    /// The agent's declared secret variables that have a value, and why
    /// any could not be read (shown if the agent then fails to start).
    fn secret_env(&self, agent: &AcpAgentConfig) -> (BTreeMap<String, Secret>, Vec<String>) {
        let mut values = BTreeMap::new();
        let mut problems = Vec::new();
        let Some(vault) = &self.secrets else {
            return (values, problems);
        };
        for name in &agent.secret_env {
            let Ok(account) = crate::registry::secret_account(&agent.id, name) else {
                problems.push(format!("{name} is not a valid variable name"));
                continue;
            };
            match vault.get(&account) {
                Ok(Some(value)) => {
                    values.insert(name.clone(), value);
                }
                Ok(None) => {}
                Err(e) => problems.push(format!("{name} could not be read: {} {e}", e.code())),
            }
        }
        (values, problems)
    }

    /// The agent's launch (agent profile, stdio apart, its secrets, state
    /// folders and model hosts), why any secret is missing, and the login
    /// method to select: a declared one only when every secret the agent
    /// declares has a value (otherwise the person logs in).
    fn launch_spec(
        &self,
        agent: &AcpAgentConfig,
        req: &SessionRequest,
    ) -> Result<(LaunchSpec, Vec<String>, Option<String>), AgentError> {
        let (secret_env, secret_problems) = self.secret_env(agent);
        let auth_method = agent.auth_method.clone().filter(|_| {
            !agent.secret_env.is_empty()
                && agent.secret_env.iter().all(|n| secret_env.contains_key(n))
        });
        let extra_hosts = agent
            .model_hosts
            .iter()
            .map(|h| cocode_core::workspace::HostPattern::parse(h))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                backend(
                    "ACP_CONFIG",
                    format!("{}: model host {e}", agent.display_name),
                    false,
                )
            })?;
        // `~` is the agent's home: the one its entry sets, or the person's.
        let agent_home = agent.env.get("HOME").map(PathBuf::from).or_else(home);
        let env_overrides = agent
            .env
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    crate::registry::expand_home(v, agent_home.as_deref()),
                )
            })
            .collect();
        let spec = LaunchSpec {
            argv: agent.command.clone(),
            cwd: req.workspace_root.clone(),
            env_overrides,
            profile: SandboxProfile::Agent {
                task_id: req.task_id.clone(),
            },
            io: LaunchIo::PipedSplit,
            timeout: None,
            output_byte_limit: None,
            extra_writable: crate::registry::state_paths(agent, agent_home.as_deref()),
            secret_env,
            // The agent's own model API, for its process alone (not for the
            // commands it runs through the host).
            extra_hosts,
        };
        Ok((spec, secret_problems, auth_method))
    }

    /// Every configured agent.
    pub fn agents(&self) -> Vec<AcpAgentConfig> {
        self.registry().agents().cloned().collect()
    }

    /// The configured agent `id`.
    pub fn agent(&self, id: &cocode_core::AcpAgentId) -> Option<AcpAgentConfig> {
        self.registry().get(id).cloned()
    }

    /// Replaces the configured agents (sessions already started keep
    /// theirs).
    pub fn set_agents(&self, agents: AcpAgentRegistry) {
        *self.agents.write().unwrap_or_else(PoisonError::into_inner) = agents;
    }

    fn registry(&self) -> std::sync::RwLockReadGuard<'_, AcpAgentRegistry> {
        self.agents.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long a cancelled agent may take before it is killed.
    #[must_use]
    pub fn with_cancel_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }
}

fn backend(code: &str, message: impl Into<String>, retryable: bool) -> AgentError {
    AgentError::Backend {
        code: code.to_owned(),
        message: message.into(),
        retryable,
    }
}

/// A request the agent waits on.
enum Pending {
    Read(Responder<acp::ReadTextFileResponse, V1>),
    Write(Responder<acp::WriteTextFileResponse, V1>),
    Permission {
        responder: Responder<acp::RequestPermissionResponse, V1>,
        options: Vec<(String, PermissionOptionKind)>,
    },
    /// A terminal's command; the agent asks about it with `terminal/*`.
    Command {
        terminal_id: String,
    },
}

/// How a terminal's command ended.
#[derive(Debug, Clone)]
struct TerminalEnd {
    output: String,
    truncated: bool,
    code: Option<i32>,
    status: acp::TerminalExitStatus,
}

/// A terminal the agent created.
struct Terminal {
    /// The host request running its command.
    request: RequestId,
    /// Set when the host completed the request; `Err` holds the refusal's
    /// or error's code.
    end: Option<Result<TerminalEnd, String>>,
    waiters: Vec<Responder<acp::WaitForTerminalExitResponse, V1>>,
    /// The agent killed or released it while it ran.
    killed: bool,
    /// Output so far while the command runs (the newest bytes).
    live: OutputBuffer,
}

/// The most live output kept per terminal when the agent names no limit.
const LIVE_OUTPUT_LIMIT: usize = 256 * 1024;

/// An ACP error carrying a stable code.
fn failure(code: &str) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(-32000, code.to_owned())
        .data(serde_json::json!({"code": code}))
}

fn unknown_terminal(id: &acp::TerminalId) -> agent_client_protocol::Error {
    agent_client_protocol::Error::invalid_params().data(serde_json::json!({
        "code": "ACP_UNKNOWN_TERMINAL",
        "terminalId": id.0.to_string(),
    }))
}

/// The conventional name of a Unix signal number.
fn signal_name(n: i64) -> String {
    match n {
        1 => "SIGHUP".into(),
        2 => "SIGINT".into(),
        3 => "SIGQUIT".into(),
        6 => "SIGABRT".into(),
        9 => "SIGKILL".into(),
        11 => "SIGSEGV".into(),
        13 => "SIGPIPE".into(),
        15 => "SIGTERM".into(),
        n => format!("SIG{n}"),
    }
}

/// Characters that make a `command` a shell line rather than a program.
const SHELL_SYNTAX: &[char] = &[
    ' ', '\t', '|', '&', ';', '<', '>', '(', ')', '$', '`', '"', '\'', '*', '?', '~', '\n',
];

/// The argv of a `terminal/create` on this machine; see [`command_argv_for`].
pub fn command_argv(command: &str, args: &[String]) -> Vec<String> {
    command_argv_for(cfg!(windows), command, args)
}

/// The argv of a `terminal/create` (on Windows when `windows`). Agents send either a program
/// and its arguments or, with no arguments, a whole shell line
/// (`"npm test | tail"`); a line runs through the platform shell, as a
/// person's terminal would: `sh -c`, or `cmd.exe /D /S /C` on Windows (no
/// `AutoRun` commands; the line is taken as typed).
pub fn command_argv_for(windows: bool, command: &str, args: &[String]) -> Vec<String> {
    if !args.is_empty() || !command.contains(SHELL_SYNTAX) {
        return std::iter::once(command.to_owned())
            .chain(args.iter().cloned())
            .collect();
    }
    if windows {
        vec![
            "cmd.exe".into(),
            "/D".into(),
            "/S".into(),
            "/C".into(),
            command.to_owned(),
        ]
    } else {
        vec!["sh".into(), "-c".into(), command.to_owned()]
    }
}

/// State shared by the session handle, the protocol handlers and the IO task.
struct Shared {
    root: PathBuf,
    events: mpsc::UnboundedSender<AgentEvent>,
    pending: Mutex<BTreeMap<RequestId, Pending>>,
    next_request: AtomicU64,
    terminals: Mutex<BTreeMap<String, Terminal>>,
    next_terminal: AtomicU64,
    /// Maps updates; knows the open tool calls.
    updates: Mutex<UpdateMapper>,
    log: Mutex<Vec<u8>>,
    /// Set once: the transport's end is told once.
    closed: AtomicBool,
    /// The login method to select before `session/new`, when the agent's
    /// secrets were supplied.
    auth_method: Option<String>,
}

impl Shared {
    fn emit(&self, event: AgentEvent) {
        let _ = self.events.send(event);
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, BTreeMap<RequestId, Pending>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn mapper(&self) -> std::sync::MutexGuard<'_, UpdateMapper> {
        self.updates.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn relative(&self, path: &Path) -> String {
        self.mapper().relative(path)
    }

    fn next_id(&self) -> RequestId {
        let n = self.next_request.fetch_add(1, Ordering::Relaxed);
        RequestId::new(format!("acp-{n}")).unwrap_or_else(|_| unreachable!("a valid id"))
    }

    fn request(&self, kind: AgentRequestKind, pending: Pending) {
        let id = self.next_id();
        self.send_request(id, kind, pending);
    }

    fn send_request(&self, id: RequestId, kind: AgentRequestKind, pending: Pending) {
        self.lock_pending().insert(id.clone(), pending);
        self.emit(AgentEvent::Request(AgentRequest { id, kind }));
    }

    fn lock_terminals(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Terminal>> {
        self.terminals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn close(&self, reason: String) {
        if !self.closed.swap(true, Ordering::AcqRel) {
            self.emit(AgentEvent::TransportClosed { reason });
        }
    }

    fn on_update(&self, notification: acp::SessionNotification) {
        let event = self.mapper().map(notification.update);
        if let Some(event) = event {
            self.emit(event);
        }
    }

    /// Answers every pending permission request with `cancelled` and marks
    /// every open tool call cancelled.
    fn cancel_pending(&self) {
        let mut pending = self.lock_pending();
        let ids: Vec<RequestId> = pending
            .iter()
            .filter(|(_, p)| matches!(p, Pending::Permission { .. }))
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            if let Some(Pending::Permission { responder, .. }) = pending.remove(&id) {
                let _ = responder.respond(acp::RequestPermissionResponse::new(
                    acp::RequestPermissionOutcome::Cancelled,
                ));
            }
        }
        drop(pending);
        let cancelled = self.mapper().cancel_open();
        for event in cancelled {
            self.emit(event);
        }
    }
}

fn permission_kind(kind: acp::PermissionOptionKind) -> PermissionOptionKind {
    match kind {
        acp::PermissionOptionKind::AllowOnce => PermissionOptionKind::AllowOnce,
        acp::PermissionOptionKind::AllowAlways => PermissionOptionKind::AllowAlways,
        acp::PermissionOptionKind::RejectAlways => PermissionOptionKind::RejectAlways,
        // Reject once, or a kind added to the protocol later (never taken
        // for an allow).
        _ => PermissionOptionKind::RejectOnce,
    }
}

/// Commands from the session handle to the connection task.
enum Command {
    Prompt(String),
    Cancel,
}

/// A running ACP session.
pub struct AcpSession {
    shared: Arc<Shared>,
    events: Option<mpsc::UnboundedReceiver<AgentEvent>>,
    commands: mpsc::Sender<Command>,
    /// Ends the IO task (and with it the agent's process).
    kill: CancellationToken,
    capabilities: AgentCapabilities,
    grace: Duration,
    turn_running: Arc<AtomicBool>,
}

impl std::fmt::Debug for AcpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpSession")
            .field("root", &self.shared.root)
            .finish_non_exhaustive()
    }
}

impl AcpSession {
    /// The agent's stderr so far (the newest bytes, bounded).
    pub fn log(&self) -> String {
        String::from_utf8_lossy(
            &self
                .shared
                .log
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
        .into_owned()
    }
}

struct Receiver(mpsc::UnboundedReceiver<AgentEvent>);

impl futures::Stream for Receiver {
    type Item = AgentEvent;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.0.poll_recv(cx)
    }
}

/// Adds the agent's own last words to why it could not start.
fn with_log(error: AgentError, shared: &Shared) -> AgentError {
    match error {
        AgentError::Backend {
            code,
            message,
            retryable,
        } => {
            let log = tail(shared);
            AgentError::Backend {
                code,
                message: if log.is_empty() {
                    message
                } else {
                    format!("{message}; the agent's log: {log}")
                },
                retryable,
            }
        }
        other => other,
    }
}

/// Adds why a declared secret was missing to why the agent did not start.
fn with_notes(error: AgentError, notes: &[String]) -> AgentError {
    match error {
        AgentError::Backend {
            code,
            message,
            retryable,
        } if !notes.is_empty() => AgentError::Backend {
            code,
            message: format!("{message}; secrets not supplied: {}", notes.join("; ")),
            retryable,
        },
        other => other,
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" }).map(PathBuf::from)
}

fn tail(shared: &Shared) -> String {
    let log = shared.log.lock().unwrap_or_else(PoisonError::into_inner);
    let text = String::from_utf8_lossy(&log);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

type OutgoingSink = futures::sink::SinkMapErr<
    futures::channel::mpsc::UnboundedSender<String>,
    fn(futures::channel::mpsc::SendError) -> io::Error,
>;
type IncomingStream = futures::channel::mpsc::Receiver<io::Result<String>>;

fn to_io(e: futures::channel::mpsc::SendError) -> io::Error {
    io::Error::other(e)
}

/// One step of the IO task.
enum Io {
    Out(Option<String>),
    In(Option<Vec<u8>>),
    Kill,
}

/// Bridges the child's stdio and the protocol's lines; keeps stderr as the
/// agent's log; reports the end of the transport.
fn spawn_io(
    mut handle: Box<dyn ProcessHandle>,
    shared: Arc<Shared>,
    kill: CancellationToken,
) -> (
    Lines<OutgoingSink, IncomingStream>,
    tokio::task::JoinHandle<()>,
) {
    let (out_tx, mut out_rx) = futures::channel::mpsc::unbounded::<String>();
    // Bounded: while the protocol is behind, the agent's output waits in
    // its pipe.
    let (mut in_tx, in_rx) = futures::channel::mpsc::channel::<io::Result<String>>(INCOMING_QUEUE);
    if let Some(mut stderr) = handle.take_stderr() {
        let log = Arc::clone(&shared);
        tokio::spawn(async move {
            while let Some(chunk) = stderr.next().await {
                let mut buf = log.log.lock().unwrap_or_else(PoisonError::into_inner);
                buf.extend_from_slice(&chunk);
                if buf.len() > LOG_LIMIT {
                    let cut = buf.len() - LOG_LIMIT;
                    buf.drain(..cut);
                }
            }
        });
    }
    let task = tokio::spawn(async move {
        let mut framer = crate::framing::LineFramer::default();
        let mut arrived = Vec::new();
        let mut writing = true;
        loop {
            let step = tokio::select! {
                line = out_rx.next(), if writing => Io::Out(line),
                chunk = handle.read_output() => Io::In(chunk),
                () = kill.cancelled() => Io::Kill,
            };
            match step {
                Io::Out(Some(line)) => {
                    let mut bytes = line.into_bytes();
                    bytes.push(b'\n');
                    if handle.write_stdin(&bytes).await.is_err() {
                        writing = false;
                    }
                }
                Io::Out(None) => writing = false,
                Io::In(Some(chunk)) => {
                    framer.push(&chunk, &mut arrived);
                    let mut too_long = None;
                    for item in arrived.drain(..) {
                        match item {
                            crate::framing::Framed::Line(text) => {
                                let _ = in_tx.send(Ok(text)).await;
                            }
                            crate::framing::Framed::TooLong { limit } => too_long = Some(limit),
                        }
                    }
                    // A message past the limit cannot be read: the
                    // connection ends with the reason.
                    if let Some(limit) = too_long {
                        let _ = handle.kill().await;
                        shared.close(format!(
                            "the agent sent a message longer than {} MiB, which cocode does not read",
                            limit / (1024 * 1024)
                        ));
                        break;
                    }
                }
                Io::In(None) => break,
                Io::Kill => {
                    let _ = handle.kill().await;
                    break;
                }
            }
        }
        in_tx.close_channel();
        let status = handle.wait().await;
        shared.cancel_pending();
        shared.close(match status {
            Ok(s) => format!("the agent exited ({s:?}); {}", tail(&shared)),
            Err(e) => format!("the agent's output ended: {e}"),
        });
    });
    let sink = out_tx.sink_map_err(to_io as fn(futures::channel::mpsc::SendError) -> io::Error);
    (Lines::new(sink, in_rx), task)
}

/// Runs the protocol: initialize, new session, then prompts and cancels.
#[expect(
    clippy::too_many_lines,
    reason = "one builder chain registers every client method the host serves"
)]
async fn connect(
    transport: Lines<OutgoingSink, IncomingStream>,
    shared: Arc<Shared>,
    mut commands: mpsc::Receiver<Command>,
    ready: oneshot::Sender<Result<AgentCapabilities, AgentError>>,
    turn_running: Arc<AtomicBool>,
) {
    let on_update = Arc::clone(&shared);
    let on_read = Arc::clone(&shared);
    let on_write = Arc::clone(&shared);
    let on_permission = Arc::clone(&shared);
    let on_create = Arc::clone(&shared);
    let on_output = Arc::clone(&shared);
    let on_wait = Arc::clone(&shared);
    let on_kill = Arc::clone(&shared);
    let on_release = Arc::clone(&shared);
    let session = Arc::clone(&shared);
    let result = Client
        .v1()
        .name("cocode")
        .on_receive_notification(
            async move |n: acp::SessionNotification, _cx: ConnectionTo<Agent>| {
                on_update.on_update(n);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: acp::ReadTextFileRequest,
                        responder: Responder<acp::ReadTextFileResponse, V1>,
                        _cx: ConnectionTo<Agent>| {
                let kind = AgentRequestKind::FileRead {
                    path: on_read.relative(&r.path),
                    line: r.line,
                    limit: r.limit,
                };
                on_read.request(kind, Pending::Read(responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: acp::WriteTextFileRequest,
                        responder: Responder<acp::WriteTextFileResponse, V1>,
                        _cx: ConnectionTo<Agent>| {
                let kind = AgentRequestKind::FileEdit(FileEditOp::Write {
                    path: on_write.relative(&r.path),
                    content: r.content,
                });
                on_write.request(kind, Pending::Write(responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: acp::RequestPermissionRequest,
                        responder: Responder<acp::RequestPermissionResponse, V1>,
                        _cx: ConnectionTo<Agent>| {
                let offered: Vec<PermissionOption> = r
                    .options
                    .iter()
                    .map(|o| PermissionOption {
                        id: o.option_id.0.to_string(),
                        name: o.name.clone(),
                        kind: permission_kind(o.kind),
                    })
                    .collect();
                let options: Vec<(String, PermissionOptionKind)> =
                    offered.iter().map(|o| (o.id.clone(), o.kind)).collect();
                let title = r
                    .tool_call
                    .fields
                    .title
                    .clone()
                    .unwrap_or_else(|| r.tool_call.tool_call_id.0.to_string());
                let locations = r
                    .tool_call
                    .fields
                    .locations
                    .iter()
                    .flatten()
                    .map(|l| on_permission.relative(&l.path))
                    .collect();
                on_permission.request(
                    AgentRequestKind::Permission {
                        title,
                        options: offered,
                        locations,
                    },
                    Pending::Permission { responder, options },
                );
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: acp::CreateTerminalRequest,
                        responder: Responder<acp::CreateTerminalResponse, V1>,
                        _cx: ConnectionTo<Agent>| {
                let id = on_create.create_terminal(&r);
                responder.respond(acp::CreateTerminalResponse::new(id))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: acp::TerminalOutputRequest,
                        responder: Responder<acp::TerminalOutputResponse, V1>,
                        _cx: ConnectionTo<Agent>| {
                match on_output.terminal_output(&r.terminal_id) {
                    Ok(answer) => responder.respond(answer),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: acp::WaitForTerminalExitRequest,
                        responder: Responder<acp::WaitForTerminalExitResponse, V1>,
                        _cx: ConnectionTo<Agent>| {
                on_wait.wait_for_exit(&r.terminal_id, responder)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: acp::KillTerminalRequest,
                        responder: Responder<acp::KillTerminalResponse, V1>,
                        _cx: ConnectionTo<Agent>| {
                match on_kill.stop_terminal(&r.terminal_id, false) {
                    Ok(()) => responder.respond(acp::KillTerminalResponse::new()),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: acp::ReleaseTerminalRequest,
                        responder: Responder<acp::ReleaseTerminalResponse, V1>,
                        _cx: ConnectionTo<Agent>| {
                match on_release.stop_terminal(&r.terminal_id, true) {
                    Ok(()) => responder.respond(acp::ReleaseTerminalResponse::new()),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            run_protocol(&cx, &session, &mut commands, ready, &turn_running).await;
            Ok(())
        })
        .await;
    if let Err(e) = result {
        shared.close(format!("the connection failed: {e}"));
    }
}

/// An agent's error on one line, as a person reads it: its message, then
/// the detail its data carries (a string, or an object's `details` or
/// `message`), else the data as compact JSON.
fn error_text(e: &agent_client_protocol::Error) -> String {
    let detail = match &e.data {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(data) => Some(
            ["details", "message"]
                .iter()
                .find_map(|k| data.get(k).and_then(serde_json::Value::as_str))
                .map_or_else(|| data.to_string(), str::to_owned),
        ),
    };
    let message = if e.message.is_empty() {
        e.code.value().to_string()
    } else {
        e.message.clone()
    };
    match detail {
        Some(d) if !d.is_empty() && d != message => format!("{message}: {d}"),
        _ => message,
    }
}

/// Selects a login method the agent lists (`authenticate`).
async fn authenticate(
    cx: &ConnectionTo<Agent>,
    method: &str,
    offered: &[acp::AuthMethod],
) -> Result<(), AgentError> {
    if !offered.iter().any(|m| m.id().0.as_ref() == method) {
        return Err(backend(
            "ACP_CONFIG",
            format!("the agent offers no login method {method}"),
            false,
        ));
    }
    cx.send_request(acp::AuthenticateRequest::new(method.to_owned()))
        .block_task()
        .await
        .map(|_| ())
        .map_err(|e| {
            backend(
                "ACP_AUTH_FAILED",
                format!("the login with {method} failed: {e}"),
                false,
            )
        })
}

/// `initialize` and `session/new`; the session id and what the agent can do.
async fn handshake(
    cx: &ConnectionTo<Agent>,
    shared: &Shared,
) -> Result<(acp::SessionId, AgentCapabilities), AgentError> {
    let init = acp::InitializeRequest::new(ProtocolVersion::V1)
        .client_capabilities(
            acp::ClientCapabilities::new()
                .fs(acp::FileSystemCapabilities::new()
                    .read_text_file(true)
                    .write_text_file(true))
                .terminal(true),
        )
        .client_info(acp::Implementation::new(
            "cocode",
            env!("CARGO_PKG_VERSION"),
        ));
    let init = match cx.send_request(init).block_task().await {
        Ok(r) => r,
        Err(e) => {
            let text = e.to_string();
            // The SDK refuses a peer that negotiated another version itself.
            let error = if text.contains("protocol version") {
                backend(
                    "ACP_VERSION_MISMATCH",
                    format!(
                        "the agent negotiated another ACP protocol version; cocode speaks version 1 ({text})"
                    ),
                    false,
                )
            } else {
                backend("ACP_INITIALIZE_FAILED", error_text(&e), false)
            };
            return Err(error);
        }
    };
    if init.protocol_version != ProtocolVersion::V1 {
        return Err(backend(
            "ACP_VERSION_MISMATCH",
            format!(
                "the agent speaks ACP version {:?}; cocode speaks version 1",
                init.protocol_version
            ),
            false,
        ));
    }
    if let Some(method) = &shared.auth_method {
        authenticate(cx, method, &init.auth_methods).await?;
    }
    let session = match cx
        .send_request(acp::NewSessionRequest::new(shared.root.clone()))
        .block_task()
        .await
    {
        Ok(s) => s.session_id,
        // An agent that wants a login says how (the protocol's
        // `auth_required` error); cocode stores no ACP agent's token, so
        // the person logs in with the agent's own command. Any other
        // failure keeps its own cause.
        Err(e) if e.code == agent_client_protocol::ErrorCode::AUTH_REQUIRED => {
            let methods: Vec<String> = init
                .auth_methods
                .iter()
                .map(|m| match m {
                    acp::AuthMethod::Terminal(t) => format!(
                        "{} (in a terminal: {})",
                        t.name,
                        std::iter::once("the agent's command".to_owned())
                            .chain(t.args.iter().cloned())
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                    other => other.name().to_owned(),
                })
                .collect();
            return Err(backend(
                "ACP_AUTH_REQUIRED",
                if methods.is_empty() {
                    format!("the agent needs a login first ({e})")
                } else {
                    format!(
                        "the agent needs a login first: {} ({e})",
                        methods.join("; ")
                    )
                },
                false,
            ));
        }
        Err(e) => return Err(backend("ACP_SESSION_FAILED", error_text(&e), false)),
    };
    let capabilities = AgentCapabilities {
        load_session: init.agent_capabilities.load_session,
        images: init.agent_capabilities.prompt_capabilities.image,
        streaming: true,
        // ACP has no way for an agent to say an attempt is done.
        finish_tool: false,
    };
    Ok((session, capabilities))
}

async fn run_protocol(
    cx: &ConnectionTo<Agent>,
    shared: &Arc<Shared>,
    commands: &mut mpsc::Receiver<Command>,
    ready: oneshot::Sender<Result<AgentCapabilities, AgentError>>,
    turn_running: &AtomicBool,
) {
    let session = match handshake(cx, shared).await {
        Ok((session, capabilities)) => {
            if ready.send(Ok(capabilities)).is_err() {
                return;
            }
            session
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    'commands: while let Some(command) = commands.recv().await {
        let Command::Prompt(text) = command else {
            continue;
        };
        let prompt = acp::PromptRequest::new(
            session.clone(),
            vec![acp::ContentBlock::Text(acp::TextContent::new(text))],
        );
        let mut answer = std::pin::pin!(cx.send_request(prompt).block_task());
        let reason = loop {
            tokio::select! {
                r = &mut answer => break match r {
                    Ok(r) => match r.stop_reason {
                        acp::StopReason::MaxTokens => TurnEndReason::MaxTokens,
                        acp::StopReason::MaxTurnRequests => TurnEndReason::MaxTurns,
                        acp::StopReason::Refusal => TurnEndReason::Refusal,
                        acp::StopReason::Cancelled => TurnEndReason::Cancelled,
                        // End turn, or a reason added to the protocol later.
                        _ => TurnEndReason::EndTurn,
                    },
                    // The agent is gone: the transport's end says so
                    // (`TransportClosed`, with its exit and log).
                    Err(e) if agent_client_protocol::is_incoming_transport_closed(&e) => {
                        turn_running.store(false, Ordering::Release);
                        return;
                    }
                    Err(e) => {
                        // Free for the next turn before anyone hears of the
                        // failure (a caller may send again at once).
                        turn_running.store(false, Ordering::Release);
                        shared.emit(AgentEvent::Failed {
                            code: "ACP_PROMPT_FAILED".into(),
                            message: error_text(&e),
                        });
                        continue 'commands;
                    }
                },
                c = commands.recv() => match c {
                    Some(Command::Cancel) => {
                        let _ = cx.send_notification(acp::CancelNotification::new(session.clone()));
                        shared.cancel_pending();
                    }
                    Some(Command::Prompt(_)) => shared.emit(AgentEvent::Failed {
                        code: "AGENT_BUSY".into(),
                        message: "the agent is still working on the previous turn".into(),
                    }),
                    None => return,
                },
            }
        };
        turn_running.store(false, Ordering::Release);
        shared.emit(AgentEvent::TurnEnded { reason });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn argv(windows: bool, command: &str, args: &[&str]) -> Vec<String> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        command_argv_for(windows, command, &args)
    }

    #[test]
    fn a_shell_line_runs_through_each_platforms_shell_and_a_program_runs_as_given() {
        assert_eq!(
            argv(false, "npm test | tail -5", &[]),
            vec!["sh", "-c", "npm test | tail -5"]
        );
        assert_eq!(argv(false, "echo hi", &[]), vec!["sh", "-c", "echo hi"]);
        assert_eq!(
            argv(true, "dir /b && echo done", &[]),
            vec!["cmd.exe", "/D", "/S", "/C", "dir /b && echo done"]
        );
        // A program with arguments, or a bare program, is never re-parsed.
        assert_eq!(
            argv(true, "cargo", &["test", "a b"]),
            vec!["cargo", "test", "a b"]
        );
        assert_eq!(argv(false, "pytest", &[]), vec!["pytest"]);
        assert_eq!(
            argv(false, "sh", &["-c", "echo $HOME"]),
            vec!["sh", "-c", "echo $HOME"]
        );
    }
}
