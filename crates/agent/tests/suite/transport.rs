//! Status classification, retries, Retry-After, cancel.

use std::time::Duration;

use cocode_agent::LoopLimits;
use cocode_core::CancelReason;
use cocode_core::agent::{AgentError, AgentEvent, AgentRuntime, TurnEndReason, UserTurn};
use futures_util::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::{
    MockServer, Reply, anthropic_sse, ending, failed_code, fast_retries, openai_sse, provider,
    recording_registry, run_once, runtime, session_request, turn_ended,
};

fn retries(events: &[AgentEvent]) -> Vec<(u32, u32, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying { attempt, max, code } => Some((*attempt, *max, code.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthorized_is_not_retried() {
    let server = MockServer::start(vec![Reply::json(
        401,
        &json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
    )])
    .await;
    let (tools, _) = recording_registry();
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _s) = run_once(&rt, provider("anthropic", "m"), "hi").await;
    let AgentEvent::Failed { code, message } = ending(&events) else {
        panic!("{events:?}")
    };
    assert_eq!(code, "PROVIDER_AUTH");
    assert_eq!(message, "HTTP 401: invalid x-api-key");
    assert!(
        !message.contains("sk-ant-test"),
        "the key never appears in messages"
    );
    assert_eq!(server.requests().len(), 1);
    assert!(retries(&events).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_honour_retry_after_twice_then_surface() {
    let limited = || Reply::Status {
        code: 429,
        headers: vec![
            ("retry-after", "1".into()),
            ("content-type", "application/json".into()),
        ],
        body: json!({"error": {"message": "Rate limit reached", "type": "requests"}}).to_string(),
    };
    let server = MockServer::start(vec![limited(), limited(), limited()]).await;
    let (tools, _) = recording_registry();
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _s) = run_once(&rt, provider("openai", "m"), "hi").await;
    assert_eq!(failed_code(&ending(&events)), Some("PROVIDER_RATE_LIMITED"));
    assert_eq!(
        retries(&events),
        vec![
            (1, 2, "PROVIDER_RATE_LIMITED".to_owned()),
            (2, 2, "PROVIDER_RATE_LIMITED".to_owned())
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "one try and two retries");
    for pair in requests.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(
            gap >= Duration::from_millis(950),
            "Retry-After honoured: {gap:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unavailable_is_retried_twice_then_surfaced() {
    let down = || Reply::json(503, &json!({"error": {"message": "upstream down"}}));
    let server = MockServer::start(vec![down(), down(), down()]).await;
    let (tools, _) = recording_registry();
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _s) = run_once(&rt, provider("openai", "m"), "hi").await;
    assert_eq!(failed_code(&ending(&events)), Some("PROVIDER_UNAVAILABLE"));
    assert_eq!(retries(&events).len(), 2);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_that_succeeds_continues_the_run() {
    let server = MockServer::start(vec![
        Reply::json(529, &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
        Reply::sse(anthropic_sse("Fine now.", &[])),
    ])
    .await;
    let (tools, _) = recording_registry();
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _s) = run_once(&rt, provider("anthropic", "m"), "hi").await;
    assert_eq!(ending(&events), turn_ended(TurnEndReason::EndTurn));
    assert_eq!(
        retries(&events),
        vec![(1, 2, "PROVIDER_UNAVAILABLE".to_owned())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_short_is_retried_as_a_network_error() {
    let mut cut = anthropic_sse("partial", &[]);
    cut.truncate(3);
    let server = MockServer::start(vec![
        Reply::sse(cut),
        Reply::sse(anthropic_sse("whole", &[])),
    ])
    .await;
    let (tools, _) = recording_registry();
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _s) = run_once(&rt, provider("anthropic", "m"), "hi").await;
    assert_eq!(ending(&events), turn_ended(TurnEndReason::EndTurn));
    assert_eq!(
        retries(&events),
        vec![(1, 2, "PROVIDER_NETWORK".to_owned())]
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_is_not_json_is_a_clear_error() {
    let server = MockServer::start(vec![Reply::Status {
        code: 200,
        headers: vec![("content-type", "text/html".into())],
        body: "<html>captive portal</html>".into(),
    }])
    .await;
    let (tools, _) = recording_registry();
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let (events, _s) = run_once(&rt, provider("openai", "m"), "hi").await;
    let AgentEvent::Failed { code, message } = ending(&events) else {
        panic!("{events:?}")
    };
    assert_eq!(code, "PROVIDER_INVALID_RESPONSE");
    assert_eq!(
        message,
        "the response is neither an event stream nor JSON: <html>captive portal</html>"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_stream_ends_the_run_and_sends_nothing_more() {
    let mut events = openai_sse("streaming forever", &[]);
    events.truncate(2); // role chunk and the first text piece; no end.
    let server = MockServer::start(vec![
        Reply::Sse { events, hang: true },
        Reply::sse(openai_sse("never asked for", &[])),
    ])
    .await;
    let (tools, _) = recording_registry();
    let rt = runtime(
        &server.base_url,
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let mut session = rt
        .start_session(session_request(provider("openai", "m")))
        .await
        .unwrap();
    let mut stream = session.events();
    session.send(UserTurn { text: "hi".into() }).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first, AgentEvent::MessageDelta("streamin".into()));
    session.cancel(CancelReason::UserStopped).await.unwrap();
    let next = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next, turn_ended(TurnEndReason::Cancelled));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.requests().len(), 1, "no request after the cancel");
    // Cancel is idempotent.
    session.cancel(CancelReason::UserStopped).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_without_a_key_cannot_start() {
    let (tools, _) = recording_registry();
    let rt = runtime(
        "http://127.0.0.1:9",
        tools,
        LoopLimits::default(),
        fast_retries(),
    );
    let mut target = session_request(provider("openai", "m"));
    target.target = provider("nope", "m");
    let Err(err) = rt.start_session(target).await else {
        panic!("an unknown provider started")
    };
    assert!(
        matches!(err, AgentError::Backend { ref code, .. } if code == "PROVIDER_CONFIG"),
        "{err:?}"
    );
    let providers = rt.describe_providers().await;
    let available: Vec<(String, bool)> = providers
        .iter()
        .map(|p| (p.id.to_string(), p.available))
        .collect();
    assert_eq!(
        available,
        vec![
            ("local".into(), true),
            ("anthropic".into(), true),
            ("openai".into(), true)
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_needs_a_key_refuses_to_start_without_one() {
    use std::sync::Arc;

    use cocode_agent::{BuiltInRuntime, LlmProviderRegistry, ProviderConfig, Transport};

    let (tools, _) = recording_registry();
    let providers =
        LlmProviderRegistry::new(vec![ProviderConfig::local(), ProviderConfig::anthropic()])
            .unwrap();
    let rt = BuiltInRuntime::new(
        Arc::new(providers),
        tools,
        Transport::new(fast_retries()).unwrap(),
        Arc::new(super::common::MemoryVault::default()),
        LoopLimits::default(),
    );
    let Err(err) = rt
        .start_session(session_request(provider("anthropic", "m")))
        .await
    else {
        panic!("started without a key")
    };
    let AgentError::Backend {
        code,
        message,
        retryable,
    } = err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (code.as_str(), message.as_str(), retryable),
        (
            "PROVIDER_AUTH",
            "no API key is stored for Anthropic; add one in Settings → Providers",
            false
        )
    );
    let available: Vec<bool> = rt
        .describe_providers()
        .await
        .iter()
        .map(|p| p.available)
        .collect();
    assert_eq!(available, vec![true, false]);
}
