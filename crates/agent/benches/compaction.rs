//! A long task within a small context window: 60 reads of 6,000-byte files,
//! a patch and `task.finish`, against the tests' fake model (`OpenAI` wire
//! shape, counting four bytes a token, refusing requests over 20,000).
//!
//! - `agent_60_calls_request_bytes`: every byte the session sent, summary
//!   requests included, with compaction (`ours`) against the same task
//!   without a window, where nothing is compacted and no request refused
//!   (`peer`). Reported by `cargo xtask bench` as ours ÷ peer.
//! - `agent_compaction_time`: one compaction's own work on the conversation
//!   as it stands before the first one (leaving old results out, cutting
//!   and rebuilding it around a summary, keeping what it was as JSON for
//!   the task's record) against writing that conversation once as JSON, as
//!   every request does. Reported, not checked.
#![expect(clippy::unwrap_used, reason = "a bench's setup")]

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{Criterion, Throughput};

#[allow(
    dead_code,
    reason = "the tests' helpers; the bench uses the fake model and its runtime"
)]
#[path = "../tests/suite/common.rs"]
mod common;

use cocode_agent::LoopLimits;
use cocode_agent::context::{
    KEEP_TURNS, LARGE_RESULT_BYTES, kept_from, leave_out_results, rebuilt,
};
use cocode_agent::conversation::{
    AssistantMessage, Message, StopReason, ToolCall, ToolResultMessage,
};
use cocode_core::agent::{AgentEvent, TurnEndReason};
use cocode_tool_protocol::ApprovalDecision;
use common::{
    MockServer, Wire, auto_approve, ending, fake_model, fast_retries, provider, recording_registry,
    run_once, runtime_with_window, turn_ended,
};

const WINDOW: u64 = 20_000;

/// The bytes one run of the task sent (`window`: the session's window).
fn task_bytes(window: Option<u64>) -> u64 {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let limit = window.unwrap_or(u64::MAX);
        let server = MockServer::start_with(fake_model(Wire::OpenAi, limit, 60)).await;
        let (tools, _) = recording_registry();
        auto_approve(&tools, ApprovalDecision::Approve);
        let runtime = runtime_with_window(
            &server.base_url,
            tools,
            LoopLimits {
                max_turns: 120,
                max_tool_calls: 200,
                max_identical_calls: 3,
            },
            fast_retries(),
            window,
        );
        let (events, _session) =
            run_once(&runtime, provider("openai", "m"), "tidy the crate").await;
        assert_eq!(ending(&events), turn_ended(TurnEndReason::Finished));
        let compacted = events
            .iter()
            .any(|e| matches!(e, AgentEvent::Compacted { .. }));
        assert_eq!(compacted, window.is_some());
        server.requests().iter().map(|r| r.bytes as u64).sum()
    })
}

/// Bytes as a criterion measurement.
struct Bytes;

struct BytesFormatter;

impl ValueFormatter for BytesFormatter {
    fn scale_values(&self, _: f64, _: &mut [f64]) -> &'static str {
        "B"
    }

    fn scale_throughputs(&self, _: f64, _: &Throughput, _: &mut [f64]) -> &'static str {
        "B"
    }

    fn scale_for_machines(&self, _: &mut [f64]) -> &'static str {
        "B"
    }
}

/// Values are `f64`: criterion asks for billions of iterations of a value
/// that costs nothing to give, and bytes × iterations would overflow `u64`.
impl Measurement for Bytes {
    type Intermediate = ();
    type Value = f64;

    fn start(&self) {}

    fn end(&self, (): ()) -> f64 {
        0.0
    }

    fn add(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }

    fn zero(&self) -> f64 {
        0.0
    }

    fn to_f64(&self, value: &f64) -> f64 {
        *value
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &BytesFormatter
    }
}

/// The conversation of the task after `n` reads (about where the first
/// compaction comes with a 20,000-token window).
fn conversation(n: usize) -> Vec<Message> {
    let mut messages = vec![Message::User("tidy the crate".into())];
    for k in 0..n {
        let id = format!("call_{k}");
        messages.push(Message::Assistant(AssistantMessage {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: id.clone(),
                provider_name: "workspace__readFile".into(),
                arguments: serde_json::json!({"path": format!("big/f{k}.rs")})
                    .as_object()
                    .unwrap()
                    .clone(),
            }],
            stop: StopReason::ToolUse,
        }));
        messages.push(Message::ToolResults(vec![ToolResultMessage {
            call_id: id,
            content: "x".repeat(6_000),
            is_error: false,
        }]));
    }
    messages
}

fn main() {
    let ours = task_bytes(Some(WINDOW));
    let peer = task_bytes(None);
    let mut sizes = Criterion::default()
        .with_measurement(Bytes)
        .configure_from_args();
    {
        let mut group = sizes.benchmark_group("agent_60_calls_request_bytes");
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(10))
            .measurement_time(Duration::from_millis(10));
        for (name, bytes) in [("ours", ours), ("peer", peer)] {
            #[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
            group.bench_function(name, |b| {
                b.iter_custom(|iters| bytes as f64 * iters as f64);
            });
        }
        group.finish();
    }
    sizes.final_summary();

    let mut times = Criterion::default().configure_from_args();
    {
        let before = conversation(10);
        let mut group = times.benchmark_group("agent_compaction_time");
        group.bench_function("ours", |b| {
            b.iter(|| {
                let mut messages = before.clone();
                let from = kept_from(&messages, KEEP_TURNS).unwrap();
                let seen = cocode_agent::context::messages_json(&messages);
                leave_out_results(&mut messages, from, LARGE_RESULT_BYTES);
                black_box((seen, rebuilt(&messages, from, "Goal: tidy the crate.")))
            });
        });
        group.bench_function("peer", |b| {
            b.iter(|| {
                let messages = before.clone();
                black_box(cocode_agent::context::messages_json(&messages).to_string())
            });
        });
        group.finish();
    }
    times.final_summary();
}
