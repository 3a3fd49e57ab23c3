//! Responses refused before any tool runs.

use cocode_agent::LoopLimits;
use pretty_assertions::assert_eq;

use super::common::{
    MockServer, Reply, anthropic_sse, ending, failed_code, fast_retries, openai_sse, provider,
    recording_registry, run_once, runtime,
};

async fn refused(reply: Reply, target: &str, limits: LoopLimits) -> (String, usize, usize) {
    let server = MockServer::start(vec![reply]).await;
    let (tools, seen) = recording_registry();
    let rt = runtime(&server.base_url, tools, limits, fast_retries());
    let (events, _session) = run_once(&rt, provider(target, "m"), "go").await;
    let code = failed_code(&ending(&events)).unwrap_or("none").to_owned();
    let ran = seen.lock().unwrap().len();
    (code, ran, server.requests().len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_json_arguments_are_refused_before_any_call() {
    let reply = Reply::sse(openai_sse(
        "",
        &[
            ("call_1", "workspace__getStatus", "{}"),
            ("call_2", "workspace__readFile", r#"{"path": "a"#),
        ],
    ));
    assert_eq!(
        refused(reply, "openai", LoopLimits::default()).await,
        ("PROVIDER_INVALID_TOOL_CALL".to_owned(), 0, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_object_argument_is_refused() {
    let reply = Reply::sse(anthropic_sse(
        "",
        &[("t1", "workspace__readFile", r#"["a.rs"]"#)],
    ));
    assert_eq!(
        refused(reply, "anthropic", LoopLimits::default()).await,
        ("PROVIDER_INVALID_TOOL_CALL".to_owned(), 0, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_ids_are_refused() {
    let reply = Reply::sse(openai_sse(
        "",
        &[
            ("same", "workspace__getStatus", "{}"),
            ("same", "workspace__listFiles", "{}"),
        ],
    ));
    assert_eq!(
        refused(reply, "openai", LoopLimits::default()).await,
        ("PROVIDER_INVALID_RESPONSE".to_owned(), 0, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_over_budget_response_runs_none_of_its_calls() {
    let reply = Reply::sse(anthropic_sse(
        "",
        &[
            ("t1", "workspace__getStatus", "{}"),
            ("t2", "workspace__listFiles", "{}"),
            ("t3", "workspace__readFile", r#"{"path":"a"}"#),
        ],
    ));
    let limits = LoopLimits {
        max_tool_calls: 2,
        ..LoopLimits::default()
    };
    assert_eq!(
        refused(reply, "anthropic", limits).await,
        ("PROVIDER_TOOL_CALL_LIMIT".to_owned(), 0, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_call_three_times_in_a_row_stops_the_run() {
    let same = || Reply::sse(openai_sse("", &[("c", "workspace__listFiles", "{}")]));
    let server = MockServer::start(vec![
        Reply::sse(openai_sse("", &[("c1", "workspace__listFiles", "{}")])),
        Reply::sse(openai_sse("", &[("c2", "workspace__listFiles", "{}")])),
        same(),
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
    assert_eq!(failed_code(&ending(&events)), Some("PROVIDER_REPETITION"));
    assert_eq!(
        seen.lock().unwrap().len(),
        2,
        "the third identical call never ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_limit_ends_the_run() {
    let server = MockServer::start(vec![
        Reply::sse(openai_sse("", &[("c1", "workspace__listFiles", "{}")])),
        Reply::sse(openai_sse("", &[("c2", "workspace__getStatus", "{}")])),
    ])
    .await;
    let (tools, _) = recording_registry();
    let limits = LoopLimits {
        max_turns: 2,
        ..LoopLimits::default()
    };
    let rt = runtime(&server.base_url, tools, limits, fast_retries());
    let (events, _session) = run_once(&rt, provider("openai", "m"), "go").await;
    assert_eq!(
        ending(&events),
        super::common::turn_ended(cocode_core::agent::TurnEndReason::MaxTurns)
    );
    assert_eq!(server.requests().len(), 2);
}
