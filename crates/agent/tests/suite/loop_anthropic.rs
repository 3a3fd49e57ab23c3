//! A two-turn tool loop against a loopback Anthropic Messages server.

use cocode_agent::LoopLimits;
use cocode_core::agent::{AgentEvent, ToolCallStatus, TurnEndReason};
use cocode_tool_protocol::{ApprovalDecision, ToolSource};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{
    MockServer, Reply, anthropic_sse, auto_approve, ending, fast_retries, pairing, provider,
    recording_registry, run_once, runtime, turn_ended,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_turns_read_then_patch_and_finish() {
    let server = MockServer::start(vec![
        Reply::sse(anthropic_sse(
            "Let me read it.",
            &[("toolu_1", "workspace__readFile", r#"{"path":"src/lib.rs"}"#)],
        )),
        Reply::sse(anthropic_sse(
            "",
            &[
                (
                    "toolu_2",
                    "workspace__applyPatch",
                    r#"{"path":"src/lib.rs","search":"a","replace":"b"}"#,
                ),
                ("toolu_3", "task__finish", r#"{"summary":"renamed a"}"#),
            ],
        )),
    ])
    .await;
    let (tools, seen) = recording_registry();
    let asked = auto_approve(&tools, ApprovalDecision::Approve);
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _session) =
        run_once(&rt, provider("anthropic", "claude-test"), "rename a to b").await;

    assert_eq!(ending(&events), turn_ended(TurnEndReason::Finished));
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Let me read it.");

    // The tools ran in order, as model calls of this session.
    let seen = seen.lock().unwrap().clone();
    let order: Vec<(&str, &str)> = seen
        .iter()
        .map(|s| (s.tool.as_str(), s.call_id.as_str()))
        .collect();
    assert_eq!(
        order,
        vec![
            ("workspace.readFile", "toolu_1"),
            ("workspace.applyPatch", "toolu_2"),
            ("task.finish", "toolu_3"),
        ]
    );
    assert!(
        seen.iter()
            .all(|s| s.source == ToolSource::Model && s.session_id == "session-1")
    );
    // The mutation waited for an approval; the reads did not.
    let asked: Vec<String> = asked
        .lock()
        .unwrap()
        .iter()
        .map(|a| a.tool.clone())
        .collect();
    assert_eq!(asked, vec!["workspace.applyPatch"]);

    // Each completed call reported InProgress then Completed.
    let finals: Vec<(String, ToolCallStatus)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallUpdate(u)
                if u.status != ToolCallStatus::InProgress
                    && u.status != ToolCallStatus::Pending =>
            {
                Some((u.call_id.clone(), u.status))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        finals,
        vec![
            ("toolu_1".into(), ToolCallStatus::Completed),
            ("toolu_2".into(), ToolCallStatus::Completed),
            ("toolu_3".into(), ToolCallStatus::Completed),
        ]
    );

    check_requests(&server.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_call_goes_back_to_the_model_as_an_error_result() {
    let server = MockServer::start(vec![
        Reply::sse(anthropic_sse(
            "",
            &[(
                "toolu_1",
                "workspace__writeFile",
                r#"{"path":"a.txt","content":"x"}"#,
            )],
        )),
        Reply::sse(anthropic_sse("I was not allowed to write.", &[])),
    ])
    .await;
    let (tools, seen) = recording_registry();
    auto_approve(&tools, ApprovalDecision::Deny);
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _session) = run_once(&rt, provider("anthropic", "m"), "write a").await;
    assert_eq!(ending(&events), turn_ended(TurnEndReason::EndTurn));
    assert!(
        seen.lock().unwrap().is_empty(),
        "a denied call never reaches its handler"
    );
    let second = &server.requests()[1].body;
    let result = &second["messages"][2]["content"][0];
    assert_eq!(result["is_error"], true);
    let content: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["error"]["code"], "TOOL_APPROVAL_DENIED");
    assert_eq!(content["error"]["retryable"], json!(false));
}

/// What the loopback server received: the headers, the tools, and the
/// second request carrying the first turn with its paired result.
fn check_requests(requests: &[super::common::Captured]) {
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(
        (first.method.as_str(), first.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(first.headers["x-api-key"], "sk-ant-test");
    assert_eq!(first.headers["anthropic-version"], "2023-06-01");
    assert_eq!(first.body["model"], "claude-test");
    assert_eq!(first.body["stream"], true);
    assert!(
        first.body["system"]
            .as_str()
            .unwrap()
            .contains("task.finish")
    );
    let tool_names: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tool_names.contains(&"workspace__readFile") && tool_names.contains(&"task__finish"));

    // The second request carries the whole first turn and its paired result.
    let second = &requests[1].body;
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me read it."},
            {"type": "tool_use", "id": "toolu_1", "name": "workspace__readFile", "input": {"path": "src/lib.rs"}}
        ]})
    );
    let result = &messages[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_1");
    assert_eq!(result["is_error"], false);
    let content: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["result"]["path"], "src/lib.rs");
    let (calls, results) = pairing(second);
    assert_eq!(
        (calls, results),
        (vec!["toolu_1".to_owned()], vec!["toolu_1".to_owned()])
    );
}
