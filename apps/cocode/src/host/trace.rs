//! The trace of one workspace host (seed 000's Trace panel model): every
//! `tools/list` and `tools/call` of its registry, and every request to an
//! agent (`agent.request`: a prompt and the turn it started, whichever
//! backend runs it), redacted and bounded, with a counter that turns over
//! on each change so a view learns that it changed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use cocode_tool_protocol::ToolCallContext;
use cocode_tool_protocol::observe::{
    LifecyclePhase, ObservabilityPolicy, Provenance, ToolLifecycleEvent, ToolObserver, TraceMethod,
    TraceStore,
};
use serde_json::json;

/// How many events the trace keeps (the oldest go first).
const TRACE_ENTRIES: usize = 2_000;

/// A host's trace: the store, its change counter and the ids of agent
/// requests (counted apart from the registry's calls).
#[derive(Debug)]
pub struct HostTrace {
    pub store: Arc<TraceStore>,
    changed: tokio::sync::watch::Sender<u64>,
    agent_requests: AtomicU64,
}

impl Default for HostTrace {
    fn default() -> Self {
        Self {
            store: Arc::new(TraceStore::new(
                ObservabilityPolicy::default(),
                TRACE_ENTRIES,
            )),
            changed: tokio::sync::watch::Sender::new(0),
            agent_requests: AtomicU64::new(1),
        }
    }
}

impl ToolObserver for HostTrace {
    fn on_event(&self, event: &ToolLifecycleEvent) {
        self.store.on_event(event);
        self.changed.send_modify(|n| *n += 1);
    }
}

impl HostTrace {
    /// Turns over each time the trace changes.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Empties the trace.
    pub fn clear(&self) {
        self.store.clear();
        self.changed.send_modify(|n| *n += 1);
    }

    /// Opens the `agent.request` row of one prompt sent to `agent` (its
    /// label: "local agent", "acp:gemini", a provider and model) under
    /// the run's `ctx`; the row shows as running until
    /// [`AgentRequestTrace::end`], or as cancelled when the run lets it go
    /// first.
    pub fn agent_request(
        self: &Arc<Self>,
        ctx: &ToolCallContext,
        agent: &str,
        prompt: &str,
    ) -> AgentRequestTrace {
        let trace_id = self.agent_requests.fetch_add(1, Ordering::Relaxed);
        let event = ToolLifecycleEvent {
            method: TraceMethod::AgentRequest,
            trace_id,
            phase: LifecyclePhase::Started,
            call_id: String::new(),
            tool: agent.to_owned(),
            source: ctx.source,
            mode: ctx.mode,
            session_id: ctx.session_id.clone(),
            // Kept as its size only (the policy's source-like `text`).
            arguments: json!({"text": prompt}),
            duration_ms: 0,
            result_bytes: 0,
            error_code: None,
            retryable: None,
            result: None,
            provenance: Provenance::new(
                trace_id,
                TraceMethod::AgentRequest.as_str(),
                ctx,
                now_ms(),
            ),
        };
        self.on_event(&event);
        AgentRequestTrace {
            trace: Arc::clone(self),
            event: Some(event),
            started: Instant::now(),
        }
    }
}

/// An open `agent.request` row.
#[derive(Debug)]
pub struct AgentRequestTrace {
    trace: Arc<HostTrace>,
    /// The started event; taken when the row ends.
    event: Option<ToolLifecycleEvent>,
    started: Instant,
}

/// How an agent request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestEnd {
    /// The turn ended; `reason` in words.
    Ended { reason: String },
    /// The turn was cancelled (a stop, a time limit).
    Cancelled,
    /// The agent or its provider failed with `code`.
    Failed { code: String, message: String },
}

impl AgentRequestTrace {
    /// Ends the row.
    pub fn end(mut self, end: &RequestEnd) {
        self.close(end);
    }

    fn close(&mut self, end: &RequestEnd) {
        let Some(mut event) = self.event.take() else {
            return;
        };
        let (phase, result, code) = match end {
            RequestEnd::Ended { reason } => (
                LifecyclePhase::Completed,
                json!({"turnEnded": reason}),
                None,
            ),
            RequestEnd::Cancelled => (LifecyclePhase::Cancelled, json!({"cancelled": true}), None),
            RequestEnd::Failed { code, message } => (
                LifecyclePhase::Failed,
                json!({"error": {"code": code, "message": message}}),
                Some(code.clone()),
            ),
        };
        event.phase = phase;
        event.duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        event.result_bytes = serde_json::to_vec(&result).map_or(0, |v| v.len());
        event.error_code = code;
        event.result = Some(result);
        self.trace.on_event(&event);
    }
}

impl Drop for AgentRequestTrace {
    fn drop(&mut self) {
        self.close(&RequestEnd::Cancelled);
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
