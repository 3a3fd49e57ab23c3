//! The ACP conformance suite: one macro, run against every agent that runs
//! offline here — the scripted in-repo agent (corner cases), the ACP
//! TypeScript SDK's example agent, and Claude Code's ACP adapter pointed at
//! a loopback fake of the Anthropic Messages API. Each agent runs through
//! the real host: the launcher with the agent profile (policy proxy,
//! Landlock), requests completed by the host's use cases (tool registry,
//! approvals, leases, the gate), so a write shows up as a snapshot.
//!
//! A scenario an agent cannot be asked for (the SDK example agent calls no
//! `fs/*` or `terminal/*` method) is left out of that agent's list. The
//! real agents are installed by `cargo xtask test` (npm); elsewhere their
//! tests pass without running unless `CI` is set.
#![cfg(target_os = "linux")]
#![expect(
    clippy::disallowed_methods,
    reason = "tests build workspaces, find installed agents and kill agents"
)]
#![expect(clippy::unwrap_used, reason = "test helpers")]

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cocode::host::workspace_host::{HostOptions, WorkspaceHost};
use cocode_core::agent::{
    AgentEvent, AgentRequestKind, AgentRuntime as _, AgentSession, FileEditOp, SessionRequest,
    SessionTarget, TurnEndReason, UserTurn,
};
use cocode_core::services::{CredentialVault, Secret};
use cocode_core::{AcpAgentId, AttemptNo, CancelReason, SessionId, SnapshotOrigin, TaskId};
use cocode_tool_protocol::{ApprovalDecision, ApprovalEvent};
use futures_util::StreamExt as _;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

const NOTES: &str = "line one of notes\n";
const PLAN: &str = "the plan\n";

/// What to ask an agent for each scenario.
#[derive(Debug, Default, Clone, Copy)]
struct Prompts {
    read: &'static str,
    /// The prompt and the content the agent writes to `out.txt`.
    write: (&'static str, &'static str),
    terminal: &'static str,
    /// The prompt, and how the agent shows it was allowed and refused.
    permission: (&'static str, Shows, Shows),
    /// A turn that takes long enough to cancel or kill.
    slow: &'static str,
}

/// How an agent shows what became of a permission request.
#[derive(Debug, Default, Clone, Copy)]
enum Shows {
    /// Its message contains this.
    #[default]
    Nothing,
    Says(&'static str),
    /// It marks the tool call failed (and says nothing more).
    CallFailed,
}

/// An agent under test.
struct Subject {
    /// Its `acp_agents` entry (id `subject`).
    entry: Value,
    /// Declared secret variables and their values.
    secrets: Vec<(&'static str, &'static str)>,
    prompts: Prompts,
    /// A helper process (the fake model API), killed with the subject.
    peer: Option<std::process::Child>,
    _home: Option<tempfile::TempDir>,
}

impl Drop for Subject {
    fn drop(&mut self) {
        if let Some(peer) = &mut self.peer {
            let _ = peer.kill();
            let _ = peer.wait();
        }
    }
}

/// Whether a real agent is missing; under CI that is a failure.
fn missing(what: &str) -> bool {
    !peers::require(what, false)
}

#[path = "../../../tests/support/require.rs"]
mod peers;

#[path = "../../../tests/support/processes.rs"]
mod processes;

fn npm_root() -> Option<PathBuf> {
    let out = std::process::Command::new("npm")
        .args(["root", "-g"])
        .output()
        .ok()?;
    let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    root.is_dir().then_some(root)
}

fn agents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crates/acp/tests/agents")
}

fn scripted(_root: &Path) -> Option<Subject> {
    let script = agents_dir().join("scripted_agent.py").canonicalize().ok()?;
    Some(Subject {
        entry: json!({"command": ["python3", script]}),
        secrets: Vec::new(),
        prompts: Prompts {
            read: "read notes.txt",
            write: ("write out.txt written by the agent", "written by the agent"),
            terminal: "run echo hi",
            permission: (
                "permission",
                Shows::Says("selected allow"),
                Shows::Says("selected reject"),
            ),
            slow: "hang",
        },
        peer: None,
        _home: None,
    })
}

/// The ACP TypeScript SDK's example agent (`typescript/examples/agent.ts`
/// of npm `@zed-industries/agent-client-protocol` 0.4.5, run with `tsx`):
/// a simulation that asks one permission and never touches files.
fn sdk_example(_root: &Path) -> Option<Subject> {
    let agent = npm_root()
        .map(|r| r.join("@zed-industries/agent-client-protocol/typescript/examples/agent.ts"))
        .filter(|p| p.is_file());
    let (Some(agent), true) = (agent, peers::on_path("tsx")) else {
        missing("the ACP SDK example agent (npm @zed-industries/agent-client-protocol, tsx)");
        return None;
    };
    Some(Subject {
        entry: json!({"command": ["tsx", agent]}),
        secrets: Vec::new(),
        prompts: Prompts {
            permission: (
                "change the configuration",
                Shows::Says("Perfect!"),
                Shows::Says("I'll skip"),
            ),
            slow: "change the configuration",
            ..Prompts::default()
        },
        peer: None,
        _home: None,
    })
}

/// Starts a loopback fake of a model API (`script` in the agents folder);
/// its port.
fn fake_model(script: &str, root: &Path) -> (std::process::Child, u16) {
    let mut peer = std::process::Command::new("python3")
        .arg(agents_dir().join(script))
        .arg(root)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(peer.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line
        .trim()
        .strip_prefix("listening ")
        .unwrap()
        .parse()
        .unwrap();
    (peer, port)
}

/// A preset under test: started from an empty home folder (its `HOME`),
/// with a loopback fake of its model API (`script`) as its only model host,
/// reachable through the proxy by the agent's own process alone, and its
/// key as a declared secret. The fake's port comes back with it (for the
/// agent's base-URL setting). `None` (a failure under CI) when the
/// preset's program is not installed.
fn from_preset(
    root: &Path,
    (preset, package): (&cocode_acp::AcpAgentConfig, &str),
    script: &str,
    secret: (&'static str, &'static str),
    prompts: Prompts,
) -> Option<(Subject, u16)> {
    if !peers::on_path(&preset.command[0]) {
        missing(&format!("{} (npm {package})", preset.display_name));
        return None;
    }
    let (peer, port) = fake_model(script, root);
    let home = tempfile::tempdir().unwrap();
    let mut entry = serde_json::to_value(preset).unwrap();
    entry["env"]["HOME"] = json!(home.path());
    entry["model_hosts"] = json!([format!("127.0.0.1:{port}")]);
    let subject = Subject {
        entry,
        secrets: vec![secret],
        prompts,
        peer: Some(peer),
        _home: Some(home),
    };
    Some((subject, port))
}

/// Gemini CLI from its preset (npm `@google/gemini-cli`), started from an
/// empty home folder, against a loopback fake of the Gemini API reached
/// through the policy proxy; its key is the declared secret, which selects
/// the preset's API-key login. It writes through the host (reading a new
/// file's path first), and reads and runs commands with its own tools, the
/// commands in a pseudo-terminal.
fn gemini(root: &Path) -> Option<Subject> {
    let (mut subject, port) = from_preset(
        root,
        (&cocode_acp::registry::gemini(), "@google/gemini-cli"),
        "fake_gemini.py",
        ("GEMINI_API_KEY", "gemini-loopback-key"),
        Prompts {
            read: "read notes.txt",
            write: ("create out.txt", "made by gemini\n"),
            terminal: "run echo hi",
            permission: (
                "create out.txt",
                Shows::Says("result: Successfully"),
                Shows::Says("was canceled by the user"),
            ),
            slow: "slow",
        },
    )?;
    subject.entry["env"]["GOOGLE_GEMINI_BASE_URL"] = json!(format!("http://127.0.0.1:{port}"));
    Some(subject)
}

/// Codex from its preset (npm `@zed-industries/codex-acp`), started from an
/// empty home folder, against a loopback fake of the `OpenAI` Responses API
/// reached through the policy proxy; its key is the declared secret, which
/// selects the preset's `openai-api-key` login. It runs commands in its own
/// process and asks permission for those it does not trust.
fn codex(root: &Path) -> Option<Subject> {
    let preset = cocode_acp::registry::codex();
    let (mut subject, port) = from_preset(
        root,
        (&preset, "@zed-industries/codex-acp"),
        "fake_openai.py",
        ("OPENAI_API_KEY", "sk-openai-loopback"),
        Prompts {
            terminal: "run echo hi",
            permission: ("run make", Shows::Says("result:"), Shows::Nothing),
            slow: "slow",
            ..Prompts::default()
        },
    )?;
    let mut command = preset.command;
    command.extend([
        "-c".to_owned(),
        format!("openai_base_url=\"http://127.0.0.1:{port}/v1\""),
    ]);
    subject.entry["command"] = json!(command);
    Some(subject)
}

/// A Claude ACP adapter from its preset, started from an empty home folder,
/// against a loopback fake of the Anthropic Messages API reached through
/// the policy proxy. Its key is a declared secret variable.
fn claude_adapter(
    root: &Path,
    preset: &cocode_acp::AcpAgentConfig,
    package: &str,
    prompts: Prompts,
) -> Option<Subject> {
    let (mut subject, port) = from_preset(
        root,
        (preset, package),
        "fake_anthropic.py",
        ("ANTHROPIC_API_KEY", "sk-ant-loopback"),
        prompts,
    )?;
    // The preset keeps its settings inside its state folder
    // (`CLAUDE_CONFIG_DIR=~/.claude`).
    for (name, value) in [
        ("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}")),
        ("IS_SANDBOX", "1".into()),
        ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_ERROR_REPORTING", "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
    ] {
        subject.entry["env"][name] = json!(value);
    }
    Some(subject)
}

/// Claude through its current ACP adapter, the `claude` preset (npm
/// `@agentclientprotocol/claude-agent-acp`). It reads, writes and runs
/// commands with its own tools, in its own confined process (no `fs/*` or
/// `terminal/*` requests), and asks permission before writing.
fn claude_agent(root: &Path) -> Option<Subject> {
    claude_adapter(
        root,
        &cocode_acp::registry::claude(),
        "@agentclientprotocol/claude-agent-acp",
        Prompts {
            read: "read notes.txt",
            terminal: "run echo hi",
            permission: (
                "remove docs/plan.txt",
                Shows::Says("result:"),
                Shows::CallFailed,
            ),
            slow: "slow",
            ..Prompts::default()
        },
    )
}

/// Claude Code's older ACP adapter, the `claude-code` preset (npm
/// `@zed-industries/claude-code-acp`).
fn claude_code(root: &Path) -> Option<Subject> {
    claude_adapter(
        root,
        &cocode_acp::registry::claude_code(),
        "@zed-industries/claude-code-acp",
        Prompts {
            read: "read notes.txt",
            write: ("write out.txt", "written by the agent\n"),
            terminal: "run echo hi",
            permission: ("write out.txt", Shows::Says("result:"), Shows::CallFailed),
            slow: "slow",
        },
    )
}

struct Harness {
    _dir: tempfile::TempDir,
    root: PathBuf,
    host: Arc<WorkspaceHost>,
    subject: Subject,
    approve: Arc<AtomicBool>,
    task: TaskId,
}

async fn harness(setup: fn(&Path) -> Option<Subject>) -> Option<Harness> {
    harness_with(setup, |_| {}).await
}

/// … with the agent's entry changed first.
async fn harness_with(
    setup: fn(&Path) -> Option<Subject>,
    change: fn(&mut Value),
) -> Option<Harness> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), NOTES).unwrap();
    std::fs::create_dir(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/plan.txt"), PLAN).unwrap();
    let subject = setup(&root)?;
    // The agent is configured in workspace.json, as a person would.
    drop(cocode_workspace::OpenWorkspace::open(&root).unwrap());
    let config_path = root.join(".cocode/config/workspace.json");
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    let mut entry = subject.entry.clone();
    entry["id"] = json!("subject");
    entry["display_name"] = json!("Agent under test");
    change(&mut entry);
    config["acp_agents"] = json!([entry]);
    std::fs::write(&config_path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    // The person who wrote the entry allows it.
    let written: cocode_core::workspace::WorkspaceConfig =
        serde_json::from_value(config.clone()).unwrap();
    let decisions: Vec<_> = cocode::host::trust::grants_of(&written)
        .into_iter()
        .map(|g| (g, true))
        .collect();
    cocode::host::trust::decide_grants(&root, &decisions).unwrap();

    let vault = cocode_toolchain::vault::SessionVault::default();
    let agent = AcpAgentId::new("subject").unwrap();
    for (name, value) in &subject.secrets {
        vault
            .set(
                &cocode_acp::registry::secret_account(&agent, name).unwrap(),
                &Secret::new(*value),
            )
            .unwrap();
    }
    let host = Arc::new(
        WorkspaceHost::open(
            &root,
            HostOptions {
                vault: Arc::new(vault),
                providers: cocode_agent::LlmProviderRegistry::with_presets().unwrap(),
                retry: cocode_agent::RetryPolicy::default(),
                limits: cocode_agent::LoopLimits::default(),
                documents: Arc::new(cocode_editor::OpenDocuments::new()),
                lsp: None,
            },
        )
        .await
        .unwrap(),
    );
    let task = TaskId::new("task-conformance").unwrap();
    host.tasks.set_attempt(&task, AttemptNo::FIRST);
    // Every approval (tool calls and the agent's permission requests) is
    // answered by the test's current choice.
    let approve = Arc::new(AtomicBool::new(true));
    let queue = Arc::clone(host.tools.approvals());
    let mut approvals = queue.subscribe();
    let choice = Arc::clone(&approve);
    tokio::spawn(async move {
        while let Ok(event) = approvals.recv().await {
            if let ApprovalEvent::Requested(s) = event {
                let decision = if choice.load(Ordering::SeqCst) {
                    ApprovalDecision::Approve
                } else {
                    ApprovalDecision::Deny
                };
                queue.resolve(s.id, decision);
            }
        }
    });
    Some(Harness {
        _dir: dir,
        root,
        host,
        subject,
        approve,
        task,
    })
}

impl Harness {
    fn request(&self) -> SessionRequest {
        SessionRequest {
            task_id: self.task.clone(),
            session_id: SessionId::new("session-conformance").unwrap(),
            workspace_root: self.root.clone(),
            target: SessionTarget::Acp {
                agent_id: AcpAgentId::new("subject").unwrap(),
            },
            request_timeout: Duration::from_mins(1),
            instructions: cocode_core::agent::Instructions::default(),
        }
    }

    async fn start(&self) -> Box<dyn AgentSession> {
        match self.host.acp.start_session(self.request()).await {
            Ok(session) => session,
            Err(e) => panic!("the session did not start: {e}"),
        }
    }

    /// Kills every process running in the workspace (the agent and its
    /// children), as a crash would.
    fn kill_agent(&self) {
        let agents = processes::in_folder(&self.root);
        assert!(!agents.is_empty(), "no agent process ran in the workspace");
        for pid in agents {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    }

    /// One turn, requests completed by the host; an interrupt two seconds
    /// in. Returns every event up to the turn's end or the transport's.
    async fn turn(&self, prompt: &str, interrupt: Interrupt) -> Vec<AgentEvent> {
        let mut session = self.start().await;
        let mut events = session.events();
        session
            .send(UserTurn {
                text: prompt.to_owned(),
            })
            .await
            .unwrap();
        let mut seen = Vec::new();
        let mut requests = JoinSet::new();
        let mut tokens = std::collections::BTreeMap::new();
        let interrupt_at = tokio::time::sleep(Duration::from_secs(2));
        tokio::pin!(interrupt_at);
        let mut interrupted = interrupt == Interrupt::None;
        loop {
            tokio::select! {
                event = tokio::time::timeout(Duration::from_mins(2), events.next()) => {
                    let event = event
                        .unwrap_or_else(|_| panic!("no event for 120 s after {seen:?}"))
                        .unwrap_or_else(|| panic!("the events ended after {seen:?}"));
                    match &event {
                        AgentEvent::Request(r) => {
                            let token = CancellationToken::new();
                            tokens.insert(r.id.clone(), token.clone());
                            let (host, task, id, kind) =
                                (Arc::clone(&self.host), self.task.clone(), r.id.clone(), r.kind.clone());
                            let session_id = SessionId::new("session-conformance").unwrap();
                            requests.spawn(async move {
                                (id, host.complete_request(&task, &session_id, kind, &token, None).await)
                            });
                        }
                        AgentEvent::RequestWithdrawn { id } => {
                            if let Some(t) = tokens.get(id) {
                                t.cancel();
                            }
                        }
                        _ => {}
                    }
                    let end = matches!(
                        event,
                        AgentEvent::TurnEnded { .. }
                            | AgentEvent::TransportClosed { .. }
                            | AgentEvent::Failed { .. }
                    );
                    seen.push(event);
                    if end {
                        break;
                    }
                }
                Some(done) = requests.join_next(), if !requests.is_empty() => {
                    let (id, completion) = done.unwrap();
                    session.complete(id, completion).await.unwrap();
                }
                () = &mut interrupt_at, if !interrupted => {
                    interrupted = true;
                    match interrupt {
                        Interrupt::Cancel => session.cancel(CancelReason::UserStopped).await.unwrap(),
                        Interrupt::Kill => self.kill_agent(),
                        Interrupt::None => {}
                    }
                }
            }
        }
        session.dispose().await;
        seen
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interrupt {
    None,
    Cancel,
    Kill,
}

fn said(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn requests(events: &[AgentEvent]) -> Vec<&AgentRequestKind> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Request(r) => Some(&r.kind),
            _ => None,
        })
        .collect()
}

async fn initializes_and_starts_a_session(h: Harness) {
    let session = h.start().await;
    session.dispose().await;
}

async fn reads_a_file_through_the_host(h: Harness) {
    let events = h.turn(h.subject.prompts.read, Interrupt::None).await;
    assert!(
        requests(&events)
            .iter()
            .any(|k| matches!(k, AgentRequestKind::FileRead { path, .. } if path == "notes.txt")),
        "{events:?}"
    );
    assert!(said(&events).contains(NOTES.trim_end()), "{events:?}");
}

async fn writes_a_file_through_the_gate(h: Harness) {
    let (prompt, content) = h.subject.prompts.write;
    let events = h.turn(prompt, Interrupt::None).await;
    assert!(
        requests(&events).iter().any(|k| matches!(
            k,
            AgentRequestKind::FileEdit(FileEditOp::Write { path, .. }) if path == "out.txt"
        )),
        "{events:?}"
    );
    assert_eq!(
        std::fs::read_to_string(h.root.join("out.txt")).unwrap(),
        content
    );
    let snapshots = h
        .host
        .workspace
        .gate
        .store()
        .snapshots_of_task(&h.task)
        .unwrap();
    let recorded: Vec<(&str, SnapshotOrigin)> = snapshots
        .iter()
        .map(|s| (s.path().as_str(), s.origin()))
        .collect();
    assert_eq!(recorded, vec![("out.txt", SnapshotOrigin::Gate)]);
}

async fn runs_a_terminal_command(h: Harness) {
    let events = h.turn(h.subject.prompts.terminal, Interrupt::None).await;
    assert!(
        requests(&events)
            .iter()
            .any(|k| matches!(k, AgentRequestKind::Command { .. })),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(
            e,
            AgentEvent::TerminalOutput { output, exit_code: Some(0), .. } if output == "hi\n"
        )),
        "{events:?}"
    );
    assert!(said(&events).contains("hi"), "{events:?}");
}

/// An agent that reads with its own tools: no host request, the content
/// in its answer.
async fn reads_a_file_with_its_own_tools(h: Harness) {
    let events = h.turn(h.subject.prompts.read, Interrupt::None).await;
    assert!(requests(&events).is_empty(), "{events:?}");
    assert!(said(&events).contains(NOTES.trim_end()), "{events:?}");
}

/// An agent that runs commands in its own (confined) process.
async fn runs_a_command_in_its_own_process(h: Harness) {
    let events = h.turn(h.subject.prompts.terminal, Interrupt::None).await;
    assert!(requests(&events).is_empty(), "{events:?}");
    assert!(said(&events).contains("result: hi"), "{events:?}");
}

async fn permission(h: Harness, allow: bool) {
    let (prompt, allowed, refused) = h.subject.prompts.permission;
    h.approve.store(allow, Ordering::SeqCst);
    let events = h.turn(prompt, Interrupt::None).await;
    assert!(
        requests(&events)
            .iter()
            .any(|k| matches!(k, AgentRequestKind::Permission { .. })),
        "{events:?}"
    );
    let shows = if allow { allowed } else { refused };
    match shows {
        Shows::Says(text) => assert!(said(&events).contains(text), "{events:?}"),
        Shows::CallFailed => assert!(
            events.iter().any(|e| matches!(
                e,
                AgentEvent::ToolCallUpdate(u) if u.status == cocode_core::agent::ToolCallStatus::Failed
            )),
            "{events:?}"
        ),
        Shows::Nothing => unreachable!("every listed agent shows the outcome"),
    }
    if !allow {
        assert!(!h.root.join("out.txt").exists(), "a refusal wrote nothing");
        assert_eq!(
            std::fs::read_to_string(h.root.join("docs/plan.txt")).unwrap(),
            PLAN,
            "a refusal removed nothing"
        );
        if let Shows::Says(other) = allowed {
            assert!(!said(&events).contains(other), "{events:?}");
        }
    }
    assert!(
        matches!(
            events.last(),
            Some(AgentEvent::TurnEnded {
                reason: TurnEndReason::EndTurn
            })
        ),
        "{events:?}"
    );
}

async fn a_permission_allowed(h: Harness) {
    permission(h, true).await;
}

async fn a_permission_refused(h: Harness) {
    permission(h, false).await;
}

async fn cancels_mid_turn(h: Harness) {
    let events = h.turn(h.subject.prompts.slow, Interrupt::Cancel).await;
    assert_eq!(
        events.last(),
        Some(&AgentEvent::TurnEnded {
            reason: TurnEndReason::Cancelled
        }),
        "{events:?}"
    );
}

async fn dying_mid_turn_closes_the_transport(h: Harness) {
    let events = h.turn(h.subject.prompts.slow, Interrupt::Kill).await;
    assert!(
        matches!(events.last(), Some(AgentEvent::TransportClosed { .. })),
        "{events:?}"
    );
}

/// The suite for one agent: `conformance!(module, setup, [scenario, …])`.
macro_rules! conformance {
    ($agent:ident, $setup:path, [$($scenario:ident),+ $(,)?]) => {
        mod $agent {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    if let Some(h) = super::harness($setup).await {
                        super::$scenario(h).await;
                    }
                }
            )+
        }
    };
}

conformance!(
    scripted_agent,
    super::scripted,
    [
        initializes_and_starts_a_session,
        reads_a_file_through_the_host,
        writes_a_file_through_the_gate,
        runs_a_terminal_command,
        a_permission_allowed,
        a_permission_refused,
        cancels_mid_turn,
        dying_mid_turn_closes_the_transport,
    ]
);

conformance!(
    sdk_example_agent,
    super::sdk_example,
    [
        initializes_and_starts_a_session,
        a_permission_allowed,
        a_permission_refused,
        cancels_mid_turn,
        dying_mid_turn_closes_the_transport,
    ]
);

conformance!(
    gemini_cli,
    super::gemini,
    [
        initializes_and_starts_a_session,
        reads_a_file_with_its_own_tools,
        writes_a_file_through_the_gate,
        runs_a_command_in_its_own_process,
        a_permission_allowed,
        a_permission_refused,
        cancels_mid_turn,
        dying_mid_turn_closes_the_transport,
    ]
);

conformance!(
    codex_adapter,
    super::codex,
    [
        initializes_and_starts_a_session,
        runs_a_command_in_its_own_process,
        a_permission_allowed,
        cancels_mid_turn,
        dying_mid_turn_closes_the_transport,
    ]
);

conformance!(
    claude_agent_adapter,
    super::claude_agent,
    [
        initializes_and_starts_a_session,
        reads_a_file_with_its_own_tools,
        runs_a_command_in_its_own_process,
        a_permission_allowed,
        a_permission_refused,
        cancels_mid_turn,
        dying_mid_turn_closes_the_transport,
    ]
);

conformance!(
    claude_code_adapter,
    super::claude_code,
    [
        initializes_and_starts_a_session,
        reads_a_file_through_the_host,
        writes_a_file_through_the_gate,
        runs_a_terminal_command,
        a_permission_allowed,
        a_permission_refused,
        cancels_mid_turn,
        dying_mid_turn_closes_the_transport,
    ]
);

/// The model API is reachable as the agent's declared model host only:
/// without it the proxy refuses the agent's requests (so the agent really
/// goes through the proxy) and the turn fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_reaches_its_model_only_as_a_declared_model_host() {
    let Some(h) = harness_with(claude_code, |entry| entry["model_hosts"] = json!([])).await else {
        return;
    };
    let events = h.turn("read notes.txt", Interrupt::None).await;
    assert!(
        matches!(events.last(), Some(AgentEvent::Failed { .. })),
        "{events:?}"
    );
    assert!(requests(&events).is_empty(), "{events:?}");
    let blocked = h.host.proxy.blocked_hosts(&h.task);
    assert!(blocked.contains(&"127.0.0.1".to_owned()), "{blocked:?}");
}

/// `cocode task run` in `root` with the Codex preset's entry replaced by
/// `subject`'s, with `prompt` and an approval flag; its exit code and
/// output, and how long it took.
fn codex_task_run(
    root: &Path,
    subject: &Subject,
    prompt: &str,
    approval: &str,
) -> (Option<i32>, String, Duration) {
    drop(cocode_workspace::OpenWorkspace::open(root).unwrap());
    let config_path = root.join(".cocode/config/workspace.json");
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    // The preset's own id: this entry replaces it.
    let mut entry = subject.entry.clone();
    entry["id"] = json!("codex");
    config["acp_agents"] = json!([entry]);
    std::fs::write(&config_path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    let started = std::time::Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args(["task", "run", "--workspace"])
        .arg(root)
        .args([
            "--prompt",
            prompt,
            "--backend",
            "acp:codex",
            approval,
            "--pass-env",
            "OPENAI_API_KEY",
            "--trust-workspace",
        ])
        .env("OPENAI_API_KEY", "sk-openai-loopback")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), shown, started.elapsed())
}

/// Codex ends its turn as `cancelled` after a refused permission: under
/// `--deny-all`, `cocode task run` with the Codex preset (from an empty
/// home) ends the task within a minute, naming the refusal.
#[test]
fn codex_under_deny_all_ends_the_task_promptly_with_the_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), NOTES).unwrap();
    let Some(subject) = codex(&root) else {
        return;
    };
    let (code, shown, took) = codex_task_run(&root, &subject, "run make", "--deny-all");
    assert!(took < Duration::from_mins(1), "{shown}");
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("the agent cancelled its own turn after a refusal (TOOL_APPROVAL_DENIED)"),
        "{shown}"
    );
    assert!(
        shown.contains(": rejected: a person rejected its result\n"),
        "{shown}"
    );
    drop(subject);
}

/// Codex writes files in its own process (its shell, not the client's
/// file methods), one of them new at the workspace root: the turn's sweep
/// records both changes as the task's observed snapshots, and `cocode
/// rollback` restores the files byte for byte.
#[test]
fn codexs_own_file_writes_are_recorded_and_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), NOTES).unwrap();
    let Some(subject) = codex(&root) else {
        return;
    };
    let (code, shown, _) = codex_task_run(&root, &subject, "write files", "--yes");
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("the agent changed 2 file(s) itself; recorded with the task"),
        "{shown}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("made.txt")).unwrap(),
        "made by codex\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        format!("{NOTES}more\n")
    );
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cocode"))
            .args(args)
            .args(["--workspace", root.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let list = cli(&["task", "list"]);
    let id = list.split('\t').next().unwrap().to_owned();
    let task: Value = serde_json::from_str(&cli(&["task", "show", &id, "--json"])).unwrap();
    let recorded: Vec<(&str, &str)> = task["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"].as_str().unwrap(), s["origin"].as_str().unwrap()))
        .collect();
    assert_eq!(
        recorded,
        vec![("made.txt", "observed"), ("notes.txt", "observed")]
    );
    cli(&["rollback", "--task", &id, "--yes"]);
    assert!(!root.join("made.txt").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        NOTES
    );
    drop(subject);
}
