//! A long task against a fake model with a small context window: each
//! provider's wire shape, its token counts, and its own "too long" error
//! for a request over the limit.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cocode_agent::LoopLimits;
use cocode_core::agent::{AgentEvent, AgentRuntime as _, TurnEndReason, UserTurn};
use cocode_tool_protocol::ApprovalDecision;
use futures_util::StreamExt as _;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{
    MockServer, Wire, auto_approve, counted, ending, failed_code, fake_model, fast_retries,
    is_summary, provider, recording_registry, run_once, runtime_with_window, session_request,
    streamed, turn_ended,
};

fn limits() -> LoopLimits {
    LoopLimits {
        max_turns: 120,
        max_tool_calls: 200,
        max_identical_calls: 3,
    }
}

fn compactions(events: &[AgentEvent]) -> Vec<(u64, u64, usize, usize, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Compacted {
                before,
                after,
                left_out,
                summarized,
                summary,
                replaced,
            } => {
                assert!(replaced.as_array().is_some_and(|m| !m.is_empty()));
                Some((*before, *after, *left_out, *summarized, summary.is_some()))
            }
            _ => None,
        })
        .collect()
}

async fn long_task(wire: Wire) {
    const WINDOW: u64 = 20_000;
    let server = MockServer::start_with(fake_model(wire, WINDOW, 60)).await;
    let (tools, seen) = recording_registry();
    auto_approve(&tools, ApprovalDecision::Approve);
    let rt = runtime_with_window(
        &server.base_url,
        tools,
        limits(),
        fast_retries(),
        Some(WINDOW),
    );
    let target = match wire {
        Wire::OpenAi => provider("openai", "m"),
        Wire::Anthropic => provider("anthropic", "m"),
    };
    let (events, _session) = run_once(&rt, target, "tidy the crate").await;
    assert_eq!(ending(&events), turn_ended(TurnEndReason::Finished));
    // 60 reads of 6,000 bytes (about 90,000 tokens) went through a window of
    // 20,000: compacted, and no request was ever over the limit.
    let done = compactions(&events);
    assert!(!done.is_empty(), "never compacted");
    // Leaving old results out was not always enough: the model summarized.
    assert!(done.iter().any(|d| d.3 > 0 && d.4), "{done:?}");
    for (before, after, left_out, _, _) in &done {
        assert!(after < before, "{done:?}");
        assert!(*left_out > 0, "{done:?}");
    }
    let requests = server.requests();
    let over: Vec<u64> = requests
        .iter()
        .map(counted)
        .filter(|t| *t > WINDOW)
        .collect();
    assert_eq!(over, Vec::<u64>::new(), "requests over the window");
    // The final edit is right, after every read.
    let ran: Vec<(String, Value)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| (s.tool.clone(), s.arguments.clone()))
        .collect();
    assert_eq!(
        ran.len(),
        62,
        "{:?}",
        ran.iter()
            .map(|(t, a)| format!("{t} {a}"))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        ran[60],
        (
            "workspace.applyPatch".to_owned(),
            json!({"path":"src/lib.rs","search":"fn a() {}","replace":"fn a() -> u8 { 1 }"})
        )
    );
    assert_eq!(ran[61].0, "task.finish");
    // The meter: the window's size with each request's count.
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::ContextUsage { used, size: WINDOW } if *used > 0 && *used <= WINDOW
    )));
    // Every later request still starts with the person's request.
    let last = requests.iter().rev().find(|r| !is_summary(r)).unwrap();
    let text = last.body.to_string();
    assert!(text.contains("tidy the crate"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sixty_call_task_compacts_within_an_openai_window_and_finishes() {
    long_task(Wire::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sixty_call_task_compacts_within_an_anthropic_window_and_finishes() {
    long_task(Wire::Anthropic).await;
}

/// The window cocode knows is larger than the server's: the server's own
/// error compacts the conversation and the request goes once more; a
/// server whose window cannot hold even the compacted request fails the
/// run with the reason.
async fn refused(wire: Wire) {
    let server = MockServer::start_with(fake_model(wire, 12_000, 30)).await;
    let (tools, seen) = recording_registry();
    auto_approve(&tools, ApprovalDecision::Approve);
    let rt = runtime_with_window(
        &server.base_url,
        tools.clone(),
        limits(),
        fast_retries(),
        Some(1_000_000),
    );
    let target = |wire| match wire {
        Wire::OpenAi => provider("openai", "m"),
        Wire::Anthropic => provider("anthropic", "m"),
    };
    let (events, _session) = run_once(&rt, target(wire), "tidy the crate").await;
    assert_eq!(ending(&events), turn_ended(TurnEndReason::Finished));
    let refusals = server
        .requests()
        .iter()
        .filter(|r| counted(r) > 12_000)
        .count();
    assert!(refusals >= 1, "the server never refused");
    assert!(!compactions(&events).is_empty());
    assert_eq!(seen.lock().unwrap().len(), 32);

    // A window smaller than the instructions and tools alone.
    let server = MockServer::start_with(fake_model(wire, 500, 30)).await;
    let rt = runtime_with_window(
        &server.base_url,
        tools,
        limits(),
        fast_retries(),
        Some(1_000_000),
    );
    let (events, _session) = run_once(&rt, target(wire), "tidy the crate").await;
    let end = ending(&events);
    assert_eq!(
        failed_code(&end),
        Some("PROVIDER_CONTEXT_TOO_LONG"),
        "{end:?}"
    );
    let AgentEvent::Failed { message, .. } = end else {
        unreachable!()
    };
    assert!(
        message.starts_with(
            "the conversation is longer than the model's context window even after compacting it (HTTP 400: "
        ),
        "{message}"
    );
    // Sent twice: the request, and once more after compacting.
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_too_long_error_compacts_and_retries_once_then_fails_with_its_reason() {
    refused(Wire::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_too_long_error_compacts_and_retries_once_then_fails_with_its_reason() {
    refused(Wire::Anthropic).await;
}

/// Three reads, a question (the turn ends), then the finish; a summary
/// request gets a summary.
fn asking_model(reads: usize) -> Arc<super::common::Responder> {
    let turn = AtomicUsize::new(0);
    Arc::new(move |request: &super::common::Captured| {
        let tokens = counted(request);
        if is_summary(request) {
            return Some(streamed(
                Wire::OpenAi,
                "Goal: tidy. Files: big/f0.rs, big/f1.rs, big/f2.rs read.",
                &[],
                tokens,
            ));
        }
        let k = turn.fetch_add(1, Ordering::SeqCst);
        let id = format!("call_{k}");
        let args = format!(r#"{{"path":"big/f{k}.rs"}}"#);
        Some(match k.cmp(&reads) {
            std::cmp::Ordering::Less => streamed(
                Wire::OpenAi,
                "",
                &[(&id, "workspace__readFile", &args)],
                tokens,
            ),
            std::cmp::Ordering::Equal => streamed(Wire::OpenAi, "Which one first?", &[], tokens),
            std::cmp::Ordering::Greater => streamed(
                Wire::OpenAi,
                "",
                &[(&id, "task__finish", r#"{"summary":"tidied"}"#)],
                tokens,
            ),
        })
    })
}

/// Events up to the end of the turn.
async fn until_turn_ends(events: &mut cocode_core::agent::EventStream) -> Vec<AgentEvent> {
    let mut seen = Vec::new();
    while let Some(event) = tokio::time::timeout(std::time::Duration::from_secs(30), events.next())
        .await
        .unwrap()
    {
        let last = matches!(
            event,
            AgentEvent::TurnEnded { .. } | AgentEvent::Failed { .. }
        );
        seen.push(event);
        if last {
            break;
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_now_between_turns_summarizes_and_the_next_turn_starts_from_the_summary() {
    let server = MockServer::start_with(asking_model(3)).await;
    let (tools, _) = recording_registry();
    auto_approve(&tools, ApprovalDecision::Approve);
    let rt = runtime_with_window(
        &server.base_url,
        tools,
        limits(),
        fast_retries(),
        Some(100_000),
    );
    let mut session = rt
        .start_session(session_request(provider("openai", "m")))
        .await
        .unwrap();
    let mut events = session.events();
    session
        .send(UserTurn {
            text: "tidy the crate".into(),
        })
        .await
        .unwrap();
    let first = until_turn_ends(&mut events).await;
    assert_eq!(ending(&first), turn_ended(TurnEndReason::EndTurn));
    assert_eq!(compactions(&first), vec![], "nothing near the window yet");

    session.compact().await.unwrap();
    let mut said = Vec::new();
    while let Some(Some(event)) = futures_util::FutureExt::now_or_never(events.next()) {
        said.push(event);
    }
    let done = compactions(&said);
    assert_eq!(done.len(), 1, "{said:?}");
    let (before, after, left_out, summarized, summary) = done[0];
    assert!(after < before);
    assert_eq!((left_out, summarized, summary), (2, 5, true));
    assert!(
        said.iter()
            .any(|e| matches!(e, AgentEvent::ContextUsage { size: 100_000, .. }))
    );

    session
        .send(UserTurn {
            text: "the first".into(),
        })
        .await
        .unwrap();
    let second = until_turn_ends(&mut events).await;
    assert_eq!(ending(&second), turn_ended(TurnEndReason::Finished));
    let last = server.requests().last().unwrap().body.clone();
    let request = last["messages"][1]["content"].as_str().unwrap();
    assert!(
        request.starts_with(
            "tidy the crate\n\n[The conversation so far was summarized to stay within the model's context. Summary:]\nGoal: tidy."
        ),
        "{request}"
    );

    // A conversation of one turn has nothing old enough to compact.
    let server = MockServer::start_with(asking_model(0)).await;
    let (tools, _) = recording_registry();
    let rt = runtime_with_window(
        &server.base_url,
        tools,
        limits(),
        fast_retries(),
        Some(100_000),
    );
    let (_, session) = run_once(&rt, provider("openai", "m"), "tidy").await;
    let refused = session.compact().await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "AGENT_NOTHING_TO_COMPACT: the conversation is too short to compact: the last turns stay whole"
    );
}
