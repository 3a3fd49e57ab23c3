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
    // The system prompt is one text block, a cache breakpoint.
    assert_eq!(first.body["system"][0]["type"], "text");
    assert!(
        first.body["system"][0]["text"]
            .as_str()
            .unwrap()
            .contains("task.finish")
    );
    assert_eq!(
        first.body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    let tools = first.body["tools"].as_array().unwrap();
    let tool_names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(tool_names.contains(&"workspace__readFile") && tool_names.contains(&"task__finish"));
    // The tools end at a breakpoint: only the last one carries it.
    let marked: Vec<usize> = tools
        .iter()
        .enumerate()
        .filter(|(_, t)| t.get("cache_control").is_some())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(marked, vec![tools.len() - 1]);
    // Three breakpoints in all: tools, system, the conversation's end.
    assert_eq!(first.body.to_string().matches("cache_control").count(), 3);

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
    // The conversation's last block is the next turn's stable prefix; the
    // earlier ones carry no breakpoint.
    assert_eq!(result["cache_control"], json!({"type": "ephemeral"}));
    assert!(messages[1]["content"][1].get("cache_control").is_none());
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

/// A priced model's request says its cost: cache reads and writes at their
/// own prices, the rest of the prompt and the answer at theirs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_priced_models_request_says_what_it_cost() {
    let events: Vec<(Option<String>, String)> = anthropic_sse("Done.", &[])
        .into_iter()
        .map(|(n, d)| {
            let mut value: Value = serde_json::from_str(&d).unwrap();
            match n.as_deref() {
                Some("message_start") => {
                    value["message"]["usage"] = json!({"input_tokens": 2_000,
                        "cache_creation_input_tokens": 1_000,
                        "cache_read_input_tokens": 7_000, "output_tokens": 1});
                }
                Some("message_delta") => value["usage"] = json!({"output_tokens": 400}),
                _ => {}
            }
            (n, value.to_string())
        })
        .collect();
    let server = MockServer::start(vec![Reply::sse(events)]).await;
    let (tools, _) = recording_registry();
    let rt = super::common::runtime_configured(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
        |p| {
            p.prices.insert(
                "m".into(),
                cocode_agent::ModelPrice {
                    input: 3.0,
                    output: 15.0,
                    cache_read: Some(0.3),
                    cache_write: Some(3.75),
                },
            );
        },
    );
    let (events, _session) = run_once(&rt, provider("anthropic", "m"), "hi").await;
    let usage: Vec<&AgentEvent> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::TokenUsage { .. }))
        .collect();
    assert_eq!(
        usage,
        vec![&AgentEvent::TokenUsage {
            input: 10_000,
            output: 400,
            cached: 7_000,
            // 2,000 × 3 + 1,000 × 3.75 + 7,000 × 0.3 + 400 × 15 millionths.
            cost_micros: Some(6_000 + 3_750 + 2_100 + 6_000),
        }]
    );
}
