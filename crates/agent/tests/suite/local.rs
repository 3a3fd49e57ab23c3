//! The local agent through a real `ToolRegistry`, approvals included.

use cocode_agent::LoopLimits;
use cocode_core::agent::{AgentEvent, SessionTarget, TurnEndReason};
use cocode_tool_protocol::{ApprovalDecision, ToolSource};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{
    REVISION, auto_approve, ending, fast_retries, recording_registry, run_once, runtime, turn_ended,
};

async fn local(
    text: &str,
    decision: ApprovalDecision,
) -> (Vec<AgentEvent>, Vec<(String, Value)>, Vec<String>) {
    let (tools, seen) = recording_registry();
    let asked = auto_approve(&tools, decision);
    // The local agent needs no server: the URL is never contacted.
    let rt = runtime(
        "http://127.0.0.1:9",
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _s) = run_once(&rt, SessionTarget::Local, text).await;
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.iter().all(|s| s.source == ToolSource::LocalFallback),
        "every call is marked local_fallback"
    );
    let calls = seen.into_iter().map(|s| (s.tool, s.arguments)).collect();
    let asked = asked
        .lock()
        .unwrap()
        .iter()
        .map(|a| a.tool.clone())
        .collect();
    (events, calls, asked)
}

fn text(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageDelta(t) => Some(format!("{t}\n")),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_inspects_reads_patches_with_the_revision_and_finishes() {
    let (events, calls, asked) = local(
        r#"replace "fn a" with "fn b" in src/lib.rs"#,
        ApprovalDecision::Approve,
    )
    .await;
    assert_eq!(ending(&events), turn_ended(TurnEndReason::Finished));
    assert_eq!(
        calls,
        vec![
            ("workspace.getStatus".into(), json!({})),
            ("workspace.listFiles".into(), json!({})),
            ("workspace.readFile".into(), json!({"path": "src/lib.rs"})),
            (
                "workspace.applyPatch".into(),
                json!({"path": "src/lib.rs", "search": "fn a", "replace": "fn b",
                       "occurrence": "first", "expectedRevision": REVISION})
            ),
            (
                "task.finish".into(),
                json!({"summary": "Replaced the first occurrence of the requested text in src/lib.rs."})
            ),
        ]
    );
    assert_eq!(asked, vec!["workspace.applyPatch"]);
    assert_eq!(
        text(&events),
        "Checking the workspace.\nListing files.\nReading src/lib.rs.\nReplacing text in src/lib.rs.\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_edit_is_reported_and_the_attempt_is_not_finished() {
    let (events, calls, asked) = local(
        r#"create notes/한글.md with "안녕""#,
        ApprovalDecision::Deny,
    )
    .await;
    assert_eq!(ending(&events), turn_ended(TurnEndReason::EndTurn));
    let tools: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, vec!["workspace.getStatus", "workspace.listFiles"]);
    assert_eq!(asked, vec!["workspace.createFile"]);
    assert!(
        text(&events).contains("workspace.createFile failed with TOOL_APPROVAL_DENIED"),
        "{}",
        text(&events)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_delete_and_run_map_to_their_tools() {
    let (_, calls, _) = local("rename a.txt to b.txt", ApprovalDecision::Approve).await;
    assert_eq!(
        calls[2],
        (
            "workspace.renameFile".into(),
            json!({"from": "a.txt", "to": "b.txt"})
        )
    );
    assert_eq!(calls.len(), 4);

    let (_, calls, _) = local("delete src/lib.rs", ApprovalDecision::Approve).await;
    assert_eq!(
        calls[3],
        (
            "workspace.deleteFile".into(),
            json!({"path": "src/lib.rs", "expectedRevision": REVISION})
        )
    );

    let (events, calls, asked) = local(r#"run "echo hi""#, ApprovalDecision::Approve).await;
    let shell = if cfg!(windows) {
        json!(["cmd", "/C", "echo hi"])
    } else {
        json!(["sh", "-c", "echo hi"])
    };
    assert_eq!(calls[2], ("terminal.run".into(), json!({"argv": shell})));
    assert_eq!(asked, vec!["terminal.run"]);
    assert_eq!(ending(&events), turn_ended(TurnEndReason::Finished));

    let (_, calls, _) = local("run the tests", ApprovalDecision::Approve).await;
    assert_eq!(
        calls[2],
        ("terminal.run".into(), json!({"argv": ["cargo", "test"]}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_request_gets_help_and_no_calls() {
    let (events, calls, _) = local("make it faster", ApprovalDecision::Approve).await;
    assert!(calls.is_empty());
    assert_eq!(ending(&events), turn_ended(TurnEndReason::EndTurn));
    assert_eq!(text(&events), format!("{}\n", cocode_agent::local::HELP));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_turn_can_be_sent_as_soon_as_a_turn_has_ended() {
    use cocode_core::agent::{AgentRuntime as _, UserTurn};
    use futures_util::StreamExt as _;

    let (tools, _) = recording_registry();
    let rt = runtime(
        "http://127.0.0.1:9",
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let mut session = rt
        .start_session(super::common::session_request(SessionTarget::Local))
        .await
        .unwrap();
    let mut events = session.events();
    for round in 0..20 {
        session
            .send(UserTurn {
                text: "what can you do?".into(),
            })
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        loop {
            let event = events.next().await.unwrap();
            if matches!(event, AgentEvent::TurnEnded { .. }) {
                break;
            }
        }
    }
}
