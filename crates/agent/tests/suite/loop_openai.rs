//! A two-turn tool loop against a loopback OpenAI-compatible server.

use cocode_agent::LoopLimits;
use cocode_core::agent::TurnEndReason;
use cocode_tool_protocol::ApprovalDecision;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{
    MockServer, Reply, auto_approve, ending, fast_retries, openai_sse, pairing, provider,
    recording_registry, run_once, runtime, turn_ended,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_turns_with_parallel_calls_then_finish() {
    let server = MockServer::start(vec![
        Reply::sse(openai_sse(
            "Checking.",
            &[
                ("call_a", "workspace__getStatus", "{}"),
                ("call_b", "workspace__readFile", r#"{"path":"src/lib.rs"}"#),
            ],
        )),
        Reply::sse(openai_sse(
            "",
            &[("call_c", "task__finish", r#"{"summary":"nothing to do"}"#)],
        )),
    ])
    .await;
    let (tools, seen) = recording_registry();
    auto_approve(&tools, ApprovalDecision::Approve);
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _session) = run_once(&rt, provider("openai", "gpt-test"), "look around").await;
    assert_eq!(ending(&events), turn_ended(TurnEndReason::Finished));
    let ran: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.tool.clone())
        .collect();
    assert_eq!(
        ran,
        vec!["workspace.getStatus", "workspace.readFile", "task.finish"]
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].headers["authorization"], "Bearer sk-oai-test");
    assert_eq!(requests[0].body["messages"][0]["role"], "system");
    assert_eq!(
        requests[0].body["messages"][1],
        json!({"role": "user", "content": "look around"})
    );
    assert_eq!(requests[0].body["tools"][0]["type"], "function");

    let second = &requests[1].body;
    let messages = second["messages"].as_array().unwrap();
    // system, user, assistant with two calls, two tool results.
    assert_eq!(messages.len(), 5);
    assert_eq!(messages[2]["content"], "Checking.");
    assert_eq!(
        messages[2]["tool_calls"][1],
        json!({"id": "call_b", "type": "function",
               "function": {"name": "workspace__readFile", "arguments": "{\"path\":\"src/lib.rs\"}"}})
    );
    assert_eq!(messages[3]["tool_call_id"], "call_a");
    assert_eq!(messages[4]["tool_call_id"], "call_b");
    let read: Value = serde_json::from_str(messages[4]["content"].as_str().unwrap()).unwrap();
    assert_eq!(read["result"]["revision"], super::common::REVISION);
    let (calls, results) = pairing(second);
    assert_eq!(
        calls, results,
        "every call has exactly one result, in order"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_name_is_answered_with_not_found_and_the_loop_goes_on() {
    let server = MockServer::start(vec![
        Reply::sse(openai_sse(
            "",
            &[("call_x", "shell__exec", r#"{"cmd":"rm -rf /"}"#)],
        )),
        Reply::sse(openai_sse("Sorry.", &[])),
    ])
    .await;
    let (tools, seen) = recording_registry();
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _session) = run_once(&rt, provider("openai", "m"), "go").await;
    assert_eq!(ending(&events), turn_ended(TurnEndReason::EndTurn));
    assert!(seen.lock().unwrap().is_empty());
    let result = &server.requests()[1].body["messages"][3];
    let body: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "TOOL_NOT_FOUND");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_stream_is_decoded_whole() {
    let server = MockServer::start(vec![Reply::json(
        200,
        &json!({"id": "x", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "All good."}, "finish_reason": "stop"}]}),
    )])
    .await;
    let (tools, _) = recording_registry();
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _session) = run_once(&rt, provider("openai", "m"), "hi").await;
    assert_eq!(
        events,
        vec![
            cocode_core::agent::AgentEvent::MessageDelta("All good.".into()),
            turn_ended(TurnEndReason::EndTurn)
        ]
    );
}

/// `openai_sse` with the chunks naming `model` as the one that answered.
fn answered_by(model: &str, text: &str, calls: &[(&str, &str, &str)]) -> Reply {
    Reply::sse(
        openai_sse(text, calls)
            .into_iter()
            .map(|(n, d)| {
                (
                    n,
                    d.replace(r#""model":"m""#, &format!(r#""model":"{model}""#)),
                )
            })
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_model_answering_is_said_once_and_a_snapshot_of_the_asked_one_is_not() {
    let server = MockServer::start(vec![
        answered_by(
            "gpt-4o-mini",
            "",
            &[("call_a", "workspace__getStatus", "{}")],
        ),
        answered_by("gpt-4o-mini", "Done.", &[]),
    ])
    .await;
    let (tools, _) = recording_registry();
    auto_approve(&tools, ApprovalDecision::Approve);
    let rt = runtime(
        &server.base_url,
        tools.clone(),
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _session) = run_once(&rt, provider("openai", "gpt-4.1"), "go").await;
    let said: Vec<&cocode_core::agent::AgentEvent> = events
        .iter()
        .filter(|e| matches!(e, cocode_core::agent::AgentEvent::ModelMismatch { .. }))
        .collect();
    assert_eq!(
        said,
        vec![&cocode_core::agent::AgentEvent::ModelMismatch {
            asked: "gpt-4.1".into(),
            answered: "gpt-4o-mini".into(),
        }]
    );
    assert_eq!(ending(&events), turn_ended(TurnEndReason::EndTurn));

    // A dated snapshot of the model asked for is that model.
    let server = MockServer::start(vec![answered_by("gpt-4.1-2025-04-14", "Done.", &[])]).await;
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _session) = run_once(&rt, provider("openai", "gpt-4.1"), "go").await;
    // (The meter of the model's known window aside.)
    let events: Vec<_> = events
        .into_iter()
        .filter(|e| !matches!(e, cocode_core::agent::AgentEvent::ContextUsage { .. }))
        .collect();
    assert_eq!(
        events,
        vec![
            cocode_core::agent::AgentEvent::MessageDelta("Do".into()),
            cocode_core::agent::AgentEvent::MessageDelta("ne.".into()),
            turn_ended(TurnEndReason::EndTurn)
        ]
    );
}
