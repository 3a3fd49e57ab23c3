//! The ACP host against the scripted in-repo agent (`tests/agents/
//! scripted_agent.py`): every request kind, refusals, permissions, cancel,
//! a dying agent and a version mismatch — through the real launcher with
//! the agent profile (policy proxy; Landlock on Linux).
#![cfg(unix)]
#![expect(clippy::unwrap_used, reason = "test helpers")]
#![expect(clippy::disallowed_methods, reason = "tests build a workspace")]

#[path = "../../../tests/support/require.rs"]
mod peers;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cocode_acp::{AcpAgentConfig, AcpAgentRegistry, AcpRuntime};
use cocode_core::agent::{
    AgentError, AgentEvent, AgentRequestKind, AgentRuntime, AgentSession, FileEditOp,
    PermissionOption, PermissionOptionKind, RequestCompletion, SessionRequest, SessionTarget,
    ToolCallStatus, TurnEndReason, UserTurn,
};
use cocode_core::services::{CredentialVault, Secret};
use cocode_core::{AcpAgentId, CancelReason, SessionId, TaskId};
use cocode_toolchain::{HostPolicy, Launcher, PolicyProxy, WritableRoots};
use futures::StreamExt as _;
use pretty_assertions::assert_eq;
use serde_json::json;

struct Fixture {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    runtime: AcpRuntime,
}

/// The real launcher with the agent profile's policy proxy (nothing
/// allowed) and `root` as the workspace.
async fn agent_launcher(root: &Path) -> Launcher {
    let proxy = Arc::new(
        PolicyProxy::start(HostPolicy::new(Vec::new()))
            .await
            .unwrap(),
    );
    Launcher::new(
        tokio::runtime::Handle::current(),
        Some(proxy),
        WritableRoots {
            workspace: Some(root.to_path_buf()),
            exceptions: Vec::new(),
        },
    )
}

async fn fixture(args: &[&str]) -> Fixture {
    fixture_with(args, Vec::new(), None, None).await
}

async fn fixture_with(
    args: &[&str],
    secret_env: Vec<String>,
    vault: Option<Arc<dyn CredentialVault>>,
    auth_method: Option<&str>,
) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "hello").unwrap();
    let launcher = agent_launcher(&root).await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/scripted_agent.py");
    let mut command = vec!["python3".to_owned(), script.to_string_lossy().into_owned()];
    command.extend(args.iter().map(|a| (*a).to_owned()));
    let mut agents = AcpAgentRegistry::default();
    agents.insert(AcpAgentConfig {
        id: AcpAgentId::new("scripted").unwrap(),
        display_name: "Scripted agent".into(),
        command,
        env: std::collections::BTreeMap::default(),
        model_hosts: Vec::new(),
        secret_env,
        state_dirs: Vec::new(),
        auth_method: auth_method.map(str::to_owned),
    });
    let mut runtime =
        AcpRuntime::new(Arc::new(launcher), agents).with_cancel_grace(Duration::from_millis(500));
    if let Some(vault) = vault {
        runtime = runtime.with_secrets(vault);
    }
    Fixture {
        _dir: dir,
        root,
        runtime,
    }
}

fn request(root: &Path) -> SessionRequest {
    SessionRequest {
        task_id: TaskId::new("task-acp").unwrap(),
        session_id: SessionId::new("session-acp").unwrap(),
        workspace_root: root.to_path_buf(),
        target: SessionTarget::Acp {
            agent_id: AcpAgentId::new("scripted").unwrap(),
        },
        request_timeout: Duration::from_secs(20),
        instructions: cocode_core::agent::Instructions::default(),
    }
}

async fn next(events: &mut cocode_core::agent::EventStream) -> AgentEvent {
    tokio::time::timeout(Duration::from_secs(20), events.next())
        .await
        .unwrap_or_else(|_| panic!("no event within 20 s"))
        .unwrap_or_else(|| panic!("the event stream ended"))
}

/// The session's next host request (other events skipped).
async fn first_request(
    events: &mut cocode_core::agent::EventStream,
) -> cocode_core::agent::AgentRequest {
    loop {
        if let AgentEvent::Request(r) = next(events).await {
            return r;
        }
    }
}

/// Events until the turn ends (inclusive), answering nothing.
async fn until_turn_end(events: &mut cocode_core::agent::EventStream) -> Vec<AgentEvent> {
    let mut seen = Vec::new();
    loop {
        let e = next(events).await;
        let end = matches!(
            e,
            AgentEvent::TurnEnded { .. } | AgentEvent::TransportClosed { .. }
        );
        seen.push(e);
        if end {
            return seen;
        }
    }
}

async fn start(f: &Fixture) -> (Box<dyn AgentSession>, cocode_core::agent::EventStream) {
    let mut session = f.runtime.start_session(request(&f.root)).await.unwrap();
    let events = session.events();
    (session, events)
}

fn messages(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageDelta(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_read_becomes_a_host_request_and_its_answer_reaches_the_agent() {
    let f = fixture(&[]).await;
    let (session, mut events) = start(&f).await;
    session
        .send(UserTurn {
            text: "read a.txt".into(),
        })
        .await
        .unwrap();
    let AgentEvent::Request(r) = next(&mut events).await else {
        panic!("a request first")
    };
    assert_eq!(
        r.kind,
        AgentRequestKind::FileRead {
            path: "a.txt".into(),
            line: None,
            limit: None
        }
    );
    session
        .complete(
            r.id.clone(),
            RequestCompletion::Success(json!({"content": "hello"})),
        )
        .await
        .unwrap();
    let rest = until_turn_end(&mut events).await;
    assert_eq!(messages(&rest), vec!["read: hello"]);
    assert_eq!(
        rest.last(),
        Some(&AgentEvent::TurnEnded {
            reason: TurnEndReason::EndTurn
        })
    );
    // Exactly once.
    assert_eq!(
        session
            .complete(r.id.clone(), RequestCompletion::Success(json!({})))
            .await,
        Err(AgentError::AlreadyCompleted(r.id))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_is_a_file_edit_request_and_a_refusal_reaches_the_agent_with_its_code() {
    let f = fixture(&[]).await;
    let (session, mut events) = start(&f).await;
    session
        .send(UserTurn {
            text: "write out.txt data here".into(),
        })
        .await
        .unwrap();
    let mut seen = Vec::new();
    let request = loop {
        match next(&mut events).await {
            AgentEvent::Request(r) => break r,
            other => seen.push(other),
        }
    };
    assert_eq!(
        request.kind,
        AgentRequestKind::FileEdit(FileEditOp::Write {
            path: "out.txt".into(),
            content: "data here".into()
        })
    );
    let AgentEvent::ToolCallUpdate(call) = &seen[0] else {
        panic!("{seen:?}")
    };
    assert_eq!(
        (call.title.as_deref(), call.status, call.locations.clone()),
        (
            Some("Write out.txt"),
            ToolCallStatus::Pending,
            vec!["out.txt".to_owned()]
        )
    );
    session
        .complete(
            request.id,
            RequestCompletion::Refused {
                code: "WORKSPACE_PATH_NOT_WRITABLE".into(),
            },
        )
        .await
        .unwrap();
    let rest = until_turn_end(&mut events).await;
    assert_eq!(
        messages(&rest),
        vec!["write failed: WORKSPACE_PATH_NOT_WRITABLE"]
    );
    let statuses: Vec<ToolCallStatus> = rest
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallUpdate(u) => Some(u.status),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, vec![ToolCallStatus::Failed]);
    assert!(
        !f.root.join("out.txt").exists(),
        "the backend never writes by itself"
    );
}

async fn permission(answer: RequestCompletion) -> Vec<String> {
    let f = fixture(&[]).await;
    let (session, mut events) = start(&f).await;
    session
        .send(UserTurn {
            text: "permission".into(),
        })
        .await
        .unwrap();
    let request = first_request(&mut events).await;
    assert_eq!(
        request.kind,
        AgentRequestKind::Permission {
            title: "Run rm".into(),
            options: vec![
                PermissionOption {
                    id: "allow".into(),
                    name: "Allow".into(),
                    kind: PermissionOptionKind::AllowOnce
                },
                PermissionOption {
                    id: "reject".into(),
                    name: "Reject".into(),
                    kind: PermissionOptionKind::RejectOnce
                },
            ],
            locations: vec!["danger.txt".into()],
        }
    );
    session.complete(request.id, answer).await.unwrap();
    messages(&until_turn_end(&mut events).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permissions_are_answered_with_the_agents_own_options() {
    assert_eq!(
        permission(RequestCompletion::Success(json!({"optionId": "allow"}))).await,
        vec!["permission: selected allow"]
    );
    assert_eq!(
        permission(RequestCompletion::Refused {
            code: "TOOL_APPROVAL_DENIED".into()
        })
        .await,
        vec!["permission: selected reject"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_answers_pending_permissions_and_ends_the_turn_as_cancelled() {
    let f = fixture(&[]).await;
    let (session, mut events) = start(&f).await;
    session
        .send(UserTurn {
            text: "permission".into(),
        })
        .await
        .unwrap();
    loop {
        if let AgentEvent::Request(_) = next(&mut events).await {
            break;
        }
    }
    session.cancel(CancelReason::UserStopped).await.unwrap();
    let rest = until_turn_end(&mut events).await;
    assert_eq!(messages(&rest), vec!["permission: cancelled"]);
    assert!(
        rest.iter().any(|e| matches!(e, AgentEvent::ToolCallUpdate(u) if u.call_id == "call-2" && u.status == ToolCallStatus::Cancelled)),
        "{rest:?}"
    );
    assert_eq!(
        rest.last(),
        Some(&AgentEvent::TurnEnded {
            reason: TurnEndReason::Cancelled
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_turn_is_honoured_and_a_stubborn_agent_is_killed() {
    let f = fixture(&[]).await;
    let (session, mut events) = start(&f).await;
    session
        .send(UserTurn {
            text: "hang".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        next(&mut events).await,
        AgentEvent::ThoughtDelta("thinking".into())
    );
    session.cancel(CancelReason::UserStopped).await.unwrap();
    assert_eq!(
        next(&mut events).await,
        AgentEvent::TurnEnded {
            reason: TurnEndReason::Cancelled
        }
    );

    let (session, mut events) = start(&f).await;
    session
        .send(UserTurn {
            text: "stubborn".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        next(&mut events).await,
        AgentEvent::ThoughtDelta("thinking".into())
    );
    session.cancel(CancelReason::UserStopped).await.unwrap();
    let rest = until_turn_end(&mut events).await;
    assert!(
        matches!(rest.last(), Some(AgentEvent::TransportClosed { .. })),
        "killed after the grace period: {rest:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_dying_mid_turn_closes_the_transport_and_keeps_its_log() {
    let f = fixture(&[]).await;
    let mut session = f.runtime.start_session(request(&f.root)).await.unwrap();
    let mut events = session.events();
    session.send(UserTurn { text: "die".into() }).await.unwrap();
    let rest = until_turn_end(&mut events).await;
    assert_eq!(messages(&rest), vec!["about to die"]);
    let Some(AgentEvent::TransportClosed { reason }) = rest.last() else {
        panic!("{rest:?}")
    };
    assert!(
        reason.contains("Code(3)") && reason.contains("scripted agent: dying"),
        "{reason}"
    );
    assert_eq!(
        session
            .send(UserTurn {
                text: "again".into()
            })
            .await,
        Err(AgentError::Closed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_speaking_another_protocol_version_is_refused() {
    let f = fixture(&["v2"]).await;
    let Err(err) = f.runtime.start_session(request(&f.root)).await else {
        panic!("a v2 agent started")
    };
    let AgentError::Backend { code, message, .. } = err else {
        panic!("{err:?}")
    };
    assert_eq!(code, "ACP_VERSION_MISMATCH", "{message}");
    assert!(message.contains("cocode speaks version 1"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_needs_a_login_names_its_methods() {
    let f = fixture(&["auth"]).await;
    let Err(err) = f.runtime.start_session(request(&f.root)).await else {
        panic!("started without a login")
    };
    let AgentError::Backend { code, message, .. } = err else {
        panic!("{err:?}")
    };
    assert_eq!(code, "ACP_AUTH_REQUIRED", "{message}");
    assert!(
        message.starts_with("the agent needs a login first: Log in with a browser"),
        "{message}"
    );
}

/// A `session/new` failure that is not the protocol's `auth_required`
/// keeps its own cause, even from an agent that lists logins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_fails_for_another_reason_is_not_called_a_missing_login() {
    let f = fixture(&["broken"]).await;
    let Err(err) = f.runtime.start_session(request(&f.root)).await else {
        panic!("a broken agent started")
    };
    let AgentError::Backend { code, message, .. } = err else {
        panic!("{err:?}")
    };
    assert_eq!(code, "ACP_SESSION_FAILED", "{message}");
    assert!(message.contains("Internal error"), "{message}");
    assert!(
        message.contains("EACCES: permission denied, open '/home/u/.claude.json'"),
        "{message}"
    );
}

/// The Gemini CLI preset against the real `gemini` (npm `@google/gemini-cli`,
/// installed by `cargo xtask test`): with no key it completes `initialize`
/// and names its login methods instead of starting a session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gemini_cli_preset_initializes_and_names_its_logins_without_a_key() {
    if !peers::require_program("gemini") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let launcher = agent_launcher(&root).await;
    // The preset, with a home of its own so the machine's Gemini settings
    // are neither read nor changed.
    let home = tempfile::tempdir().unwrap();
    let mut gemini = cocode_acp::registry::gemini();
    gemini
        .env
        .insert("HOME".into(), home.path().to_string_lossy().into_owned());
    let mut presets = AcpAgentRegistry::with_presets();
    presets.insert(gemini);
    let runtime = AcpRuntime::new(Arc::new(launcher), presets.clone());
    let mut req = request(&root);
    req.target = SessionTarget::Acp {
        agent_id: AcpAgentId::new("gemini").unwrap(),
    };
    let Err(err) = runtime.start_session(req).await else {
        panic!("a session started without a key")
    };
    let AgentError::Backend { code, message, .. } = err else {
        panic!("{err:?}")
    };
    assert_eq!(code, "ACP_AUTH_REQUIRED", "{message}");
    assert!(
        message.starts_with("the agent needs a login first: "),
        "{message}"
    );
    eprintln!("{message}");

    // With its key supplied as the declared secret, the preset selects the
    // API-key login and the session starts.
    let vault = cocode_toolchain::vault::SessionVault::default();
    vault
        .set(
            &cocode_acp::registry::secret_account(
                &AcpAgentId::new("gemini").unwrap(),
                "GEMINI_API_KEY",
            )
            .unwrap(),
            &Secret::new("AIza-not-a-real-key"),
        )
        .unwrap();
    let launcher = agent_launcher(&root).await;
    let runtime = AcpRuntime::new(Arc::new(launcher), presets).with_secrets(Arc::new(vault));
    let mut req = request(&root);
    req.target = SessionTarget::Acp {
        agent_id: AcpAgentId::new("gemini").unwrap(),
    };
    match runtime.start_session(req).await {
        Ok(session) => session.dispose().await,
        Err(e) => panic!("the keyed session did not start: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_runs_its_shell_line_as_one_host_command_and_its_end_reaches_the_agent() {
    let f = fixture(&[]).await;
    let (session, mut events) = start(&f).await;
    session
        .send(UserTurn {
            text: "run echo hi | tr a-z A-Z".into(),
        })
        .await
        .unwrap();
    let request = first_request(&mut events).await;
    assert_eq!(
        request.kind,
        AgentRequestKind::Command {
            argv: vec!["sh".into(), "-c".into(), "echo hi | tr a-z A-Z".into()],
            cwd: None,
            env: Vec::new(),
            output_limit: None,
        }
    );
    session
        .complete(
            request.id,
            RequestCompletion::Success(json!({
                "exitCode": 0, "output": "HI\n", "truncated": false, "timedOut": false, "signal": null
            })),
        )
        .await
        .unwrap();
    let rest = until_turn_end(&mut events).await;
    assert_eq!(
        messages(&rest),
        vec!["exit 0 signal None truncated False released ACP_UNKNOWN_TERMINAL: HI\n"]
    );
    assert!(
        rest.contains(&AgentEvent::TerminalOutput {
            terminal_id: "term-1".into(),
            output: "HI\n".into(),
            exit_code: Some(0),
            truncated: false,
        }),
        "{rest:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_a_running_terminal_withdraws_its_request_and_reports_the_signal() {
    let f = fixture(&[]).await;
    let (session, mut events) = start(&f).await;
    session
        .send(UserTurn {
            text: "kill".into(),
        })
        .await
        .unwrap();
    let request = first_request(&mut events).await;
    assert_eq!(
        request.kind,
        AgentRequestKind::Command {
            argv: vec!["sleep".into(), "30".into()],
            cwd: None,
            env: Vec::new(),
            output_limit: None,
        }
    );
    let withdrawn = loop {
        match next(&mut events).await {
            AgentEvent::RequestWithdrawn { id } => break id,
            AgentEvent::ToolCallUpdate(u) => assert_eq!(
                u.content,
                vec![cocode_core::agent::ToolCallContent::Terminal {
                    terminal_id: "term-1".into()
                }]
            ),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(withdrawn, request.id);
    // The host stops the command and completes the request with its
    // cancellation, as for any cancelled tool call.
    session
        .complete(
            request.id,
            RequestCompletion::Error {
                code: "TOOL_CANCELLED".into(),
                retryable: false,
            },
        )
        .await
        .unwrap();
    let rest = until_turn_end(&mut events).await;
    assert_eq!(
        messages(&rest),
        vec!["exit None signal SIGKILL truncated False released ACP_UNKNOWN_TERMINAL: "]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_command_answers_the_agents_wait_with_the_code() {
    let f = fixture(&[]).await;
    let (session, mut events) = start(&f).await;
    session
        .send(UserTurn {
            text: "run rm -rf /".into(),
        })
        .await
        .unwrap();
    let request = first_request(&mut events).await;
    session
        .complete(
            request.id,
            RequestCompletion::Refused {
                code: "TOOL_APPROVAL_DENIED".into(),
            },
        )
        .await
        .unwrap();
    let rest = until_turn_end(&mut events).await;
    assert_eq!(messages(&rest), vec!["wait failed: TOOL_APPROVAL_DENIED"]);
    assert!(
        !rest
            .iter()
            .any(|e| matches!(e, AgentEvent::TerminalOutput { .. })),
        "{rest:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_secret_reaches_its_agent_and_nothing_else_does() {
    let vault = cocode_toolchain::vault::SessionVault::default();
    let agent = AcpAgentId::new("scripted").unwrap();
    for (name, value) in [("SCRIPTED_API_KEY", "s3cret"), ("UNDECLARED_TOKEN", "nope")] {
        vault
            .set(
                &cocode_acp::registry::secret_account(&agent, name).unwrap(),
                &Secret::new(value),
            )
            .unwrap();
    }
    let f = fixture_with(
        &[],
        vec!["SCRIPTED_API_KEY".into(), "MISSING_API_KEY".into()],
        Some(Arc::new(vault)),
        None,
    )
    .await;
    let mut said = Vec::new();
    for name in ["SCRIPTED_API_KEY", "UNDECLARED_TOKEN", "MISSING_API_KEY"] {
        let (session, mut events) = start(&f).await;
        session
            .send(UserTurn {
                text: format!("env {name}"),
            })
            .await
            .unwrap();
        said.extend(messages(&until_turn_end(&mut events).await));
    }
    assert_eq!(said, vec!["env: s3cret", "env: unset", "env: unset"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_login_method_is_selected_when_the_secret_is_supplied() {
    let agent = AcpAgentId::new("scripted").unwrap();
    let account = cocode_acp::registry::secret_account(&agent, "SCRIPTED_API_KEY").unwrap();
    let with_key = cocode_toolchain::vault::SessionVault::default();
    with_key.set(&account, &Secret::new("k")).unwrap();
    let f = fixture_with(
        &["auth"],
        vec!["SCRIPTED_API_KEY".into()],
        Some(Arc::new(with_key)),
        Some("api-key"),
    )
    .await;
    let (session, mut events) = start(&f).await;
    session
        .send(UserTurn {
            text: "env SCRIPTED_API_KEY".into(),
        })
        .await
        .unwrap();
    assert_eq!(messages(&until_turn_end(&mut events).await), vec!["env: k"]);

    // Without the key the login is left to the person.
    let f = fixture_with(
        &["auth"],
        vec!["SCRIPTED_API_KEY".into()],
        Some(Arc::new(cocode_toolchain::vault::SessionVault::default())),
        Some("api-key"),
    )
    .await;
    let Err(AgentError::Backend { code, .. }) = f.runtime.start_session(request(&f.root)).await
    else {
        panic!("started without a key")
    };
    assert_eq!(code, "ACP_AUTH_REQUIRED");

    // A method the agent does not offer is a configuration error.
    let with_key = cocode_toolchain::vault::SessionVault::default();
    with_key.set(&account, &Secret::new("k")).unwrap();
    let f = fixture_with(
        &["auth"],
        vec!["SCRIPTED_API_KEY".into()],
        Some(Arc::new(with_key)),
        Some("oauth"),
    )
    .await;
    let Err(AgentError::Backend { code, message, .. }) =
        f.runtime.start_session(request(&f.root)).await
    else {
        panic!("started with an unknown login method")
    };
    assert_eq!(code, "ACP_CONFIG");
    assert!(
        message.starts_with("the agent offers no login method oauth"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_prompt_is_reported_and_the_session_takes_the_next_one() {
    let f = fixture(&[]).await;
    let (session, mut events) = start(&f).await;
    session
        .send(UserTurn {
            text: "fail".into(),
        })
        .await
        .unwrap();
    let AgentEvent::Failed { code, message } = next(&mut events).await else {
        panic!("a failure first")
    };
    assert_eq!(code, "ACP_PROMPT_FAILED");
    assert!(message.contains("model unreachable"), "{message}");
    session
        .send(UserTurn {
            text: "env NOTHING_SET_HERE".into(),
        })
        .await
        .unwrap();
    let rest = until_turn_end(&mut events).await;
    assert_eq!(messages(&rest), vec!["env: unset"]);
    assert_eq!(
        rest.last(),
        Some(&AgentEvent::TurnEnded {
            reason: TurnEndReason::EndTurn
        })
    );
}
