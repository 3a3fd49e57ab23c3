//! Lifecycle events, provenance, redaction and a bounded trace store.
//! Traces are UI state; what they keep is redacted and bounded, and exports
//! are metadata only.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::types::{ToolCallContext, ToolMode, ToolSource};

/// Where a call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LifecyclePhase {
    Started,
    Completed,
    Failed,
    Cancelled,
    /// Timed out or otherwise ended without a known outcome.
    Unknown,
}

/// What a trace row stands for: a discovery of the tools, one call of a
/// tool, or one request to an agent (a prompt and the turn it started),
/// so a provider error before any tool call still shows in the trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TraceMethod {
    #[serde(rename = "tools/list")]
    ToolsList,
    #[default]
    #[serde(rename = "tools/call")]
    ToolsCall,
    #[serde(rename = "agent.request")]
    AgentRequest,
}

impl TraceMethod {
    /// The method's wire name (`tools/list`, `tools/call`, `agent.request`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ToolsList => "tools/list",
            Self::ToolsCall => "tools/call",
            Self::AgentRequest => "agent.request",
        }
    }
}

/// Who ran what, for audit (`cocode-tool-execution-provenance.v1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    pub schema: String,
    pub trace_id: u64,
    pub tool: String,
    pub source: ToolSource,
    pub mode: ToolMode,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    pub started_at_ms: u64,
}

/// The provenance record's schema name.
pub const PROVENANCE_SCHEMA: &str = "cocode-tool-execution-provenance.v1";

impl Provenance {
    pub fn new(trace_id: u64, tool: &str, ctx: &ToolCallContext, started_at_ms: u64) -> Self {
        Self {
            schema: PROVENANCE_SCHEMA.into(),
            trace_id,
            tool: tool.into(),
            source: ctx.source,
            mode: ctx.mode,
            session_id: ctx.session_id.clone(),
            task_id: ctx.task_id.clone(),
            started_at_ms,
        }
    }
}

/// One lifecycle event. `trace_id` is unique per call, so started and
/// completed correlate even when a provider reuses or omits call ids.
/// `arguments` are raw: observers that keep them must redact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolLifecycleEvent {
    /// `tools/call` for the registry's calls.
    #[serde(default)]
    pub method: TraceMethod,
    pub trace_id: u64,
    pub phase: LifecyclePhase,
    pub call_id: String,
    pub tool: String,
    pub source: ToolSource,
    pub mode: ToolMode,
    pub session_id: String,
    pub arguments: Value,
    pub duration_ms: u64,
    pub result_bytes: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Whether a failed call may succeed when tried again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// The outcome, on the event that ends a row (raw: observers that
    /// keep it must redact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    pub provenance: Provenance,
}

impl ToolLifecycleEvent {
    /// A copy with the arguments and the result redacted by `policy`,
    /// without cloning the raw ones (they may be whole files).
    #[must_use]
    pub fn redacted(&self, policy: &ObservabilityPolicy) -> Self {
        Self {
            method: self.method,
            trace_id: self.trace_id,
            phase: self.phase,
            call_id: self.call_id.clone(),
            tool: self.tool.clone(),
            source: self.source,
            mode: self.mode,
            session_id: self.session_id.clone(),
            arguments: policy.redact(&self.arguments),
            duration_ms: self.duration_ms,
            result_bytes: self.result_bytes,
            error_code: self.error_code.clone(),
            retryable: self.retryable,
            result: self.result.as_ref().map(|r| policy.redact(r)),
            provenance: self.provenance.clone(),
        }
    }
}

/// Receives lifecycle events (synchronously, so keep it cheap).
pub trait ToolObserver: Send + Sync {
    fn on_event(&self, event: &ToolLifecycleEvent);
}

/// Redaction and bounds for anything kept from arguments or results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservabilityPolicy {
    pub max_depth: usize,
    pub max_items: usize,
    pub max_string_chars: usize,
    pub max_total_bytes: usize,
}

impl Default for ObservabilityPolicy {
    fn default() -> Self {
        Self {
            max_depth: 6,
            max_items: 50,
            max_string_chars: 200,
            max_total_bytes: 16 * 1024,
        }
    }
}

/// Fields that hold a file's text or what a command printed: kept as
/// their size only.
const SOURCE_LIKE: [&str; 9] = [
    "source", "content", "search", "replace", "text", "output", "stdout", "stderr", "preview",
];
const CREDENTIAL_LIKE: [&str; 7] = [
    "key",
    "secret",
    "token",
    "password",
    "credential",
    "authorization",
    "cookie",
];

fn is_credential_like(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    CREDENTIAL_LIKE.iter().any(|c| lower.contains(c))
}

impl ObservabilityPolicy {
    /// A redacted, bounded copy: credential-like fields are removed,
    /// source-like fields become their size, and depth, collection size,
    /// string length and total size are capped.
    pub fn redact(&self, value: &Value) -> Value {
        let redacted = self.redact_at(value, 0);
        let size = serde_json::to_vec(&redacted).map_or(0, |v| v.len());
        if size > self.max_total_bytes {
            json!({"truncated": true, "bytes": size})
        } else {
            redacted
        }
    }

    fn redact_at(&self, value: &Value, depth: usize) -> Value {
        if depth >= self.max_depth {
            return json!({"truncated": "depth"});
        }
        match value {
            Value::Object(map) => {
                let mut out = Map::new();
                for (key, v) in map.iter().take(self.max_items) {
                    let kept = if is_credential_like(key) {
                        Value::String("[redacted]".into())
                    } else if SOURCE_LIKE.contains(&key.as_str()) {
                        match v {
                            Value::String(s) => json!({"chars": s.chars().count()}),
                            other => json!({"redacted": type_name(other)}),
                        }
                    } else {
                        self.redact_at(v, depth + 1)
                    };
                    out.insert(key.clone(), kept);
                }
                if map.len() > self.max_items {
                    out.insert("…".into(), json!({"omitted": map.len() - self.max_items}));
                }
                Value::Object(out)
            }
            Value::Array(items) => {
                let mut out: Vec<Value> = items
                    .iter()
                    .take(self.max_items)
                    .map(|v| self.redact_at(v, depth + 1))
                    .collect();
                if items.len() > self.max_items {
                    out.push(json!({"omitted": items.len() - self.max_items}));
                }
                Value::Array(out)
            }
            Value::String(s) if s.chars().count() > self.max_string_chars => {
                let kept: String = s.chars().take(self.max_string_chars).collect();
                Value::String(format!("{kept}…"))
            }
            other => other.clone(),
        }
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The metadata of trace rows, without any argument: what an export of the
/// trace holds.
pub fn metadata_of<'a>(entries: impl IntoIterator<Item = &'a TraceEntry>) -> Value {
    let rows: Vec<Value> = entries
        .into_iter()
        .map(|e| {
            json!({"method": e.method, "traceId": e.trace_id, "phase": e.phase, "callId": e.call_id,
                "tool": e.tool, "source": e.source, "mode": e.mode, "sessionId": e.session_id,
                "durationMs": e.duration_ms, "resultBytes": e.result_bytes, "errorCode": e.error_code,
                "retryable": e.retryable})
        })
        .collect();
    Value::Array(rows)
}

/// One kept trace row: the event with its arguments redacted.
pub type TraceEntry = ToolLifecycleEvent;

/// A bounded, redacting trace store (the Trace panel's model).
#[derive(Debug)]
pub struct TraceStore {
    policy: ObservabilityPolicy,
    max_entries: usize,
    /// Entries whose call started longer ago than this are dropped.
    retention_ms: Option<u64>,
    entries: Mutex<VecDeque<TraceEntry>>,
}

impl TraceStore {
    pub fn new(policy: ObservabilityPolicy, max_entries: usize) -> Self {
        Self {
            policy,
            max_entries: max_entries.max(1),
            retention_ms: None,
            entries: Mutex::new(VecDeque::new()),
        }
    }

    /// Keeps entries only for `retention` after their call started.
    #[must_use]
    pub fn with_retention(mut self, retention: std::time::Duration) -> Self {
        self.retention_ms = Some(u64::try_from(retention.as_millis()).unwrap_or(u64::MAX));
        self
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<TraceEntry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn entries(&self) -> Vec<TraceEntry> {
        self.lock().iter().cloned().collect()
    }

    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Metadata-only export: no arguments at all.
    pub fn export_metadata(&self) -> Value {
        metadata_of(self.lock().iter())
    }
}

impl ToolObserver for TraceStore {
    fn on_event(&self, event: &ToolLifecycleEvent) {
        let entry = event.redacted(&self.policy);
        let newest = entry.provenance.started_at_ms;
        let mut entries = self.lock();
        entries.push_back(entry);
        while entries.len() > self.max_entries {
            entries.pop_front();
        }
        if let Some(retention) = self.retention_ms {
            entries.retain(|e| newest.saturating_sub(e.provenance.started_at_ms) <= retention);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn redaction_removes_sources_and_credentials_and_bounds_the_rest() {
        let policy = ObservabilityPolicy {
            max_depth: 3,
            max_items: 2,
            max_string_chars: 5,
            max_total_bytes: 4096,
        };
        let value = json!({
            "path": "src/a.rs",
            "content": "fn main() { secret_sauce() }",
        });
        assert_eq!(
            policy.redact(&value),
            json!({"content": {"chars": 28}, "path": "src/a…"})
        );
        let creds = json!({"apiKey": "sk-1", "nested": {"Authorization": "Bearer x"}});
        let out = policy.redact(&creds);
        assert_eq!(
            out,
            json!({"apiKey": "[redacted]", "nested": {"Authorization": "[redacted]"}})
        );
        let deep = json!({"a": {"b": {"c": {"d": 1}}}});
        assert_eq!(
            policy.redact(&deep),
            json!({"a": {"b": {"c": {"truncated": "depth"}}}})
        );
        let wide = json!([1, 2, 3, 4]);
        assert_eq!(policy.redact(&wide), json!([1, 2, {"omitted": 2}]));
        let tiny = ObservabilityPolicy {
            max_total_bytes: 10,
            ..ObservabilityPolicy::default()
        };
        assert_eq!(
            tiny.redact(&json!({"path": "0123456789"})),
            json!({"truncated": true, "bytes": 21})
        );
    }

    fn event(trace_id: u64, started_at_ms: u64) -> ToolLifecycleEvent {
        let ctx = crate::test_fixtures::context(ToolSource::Model, ToolMode::Agent);
        ToolLifecycleEvent {
            method: TraceMethod::ToolsCall,
            trace_id,
            phase: LifecyclePhase::Completed,
            call_id: "c".into(),
            tool: "workspace.readFile".into(),
            source: ctx.source,
            mode: ctx.mode,
            session_id: "s".into(),
            arguments: json!({"path": "a"}),
            duration_ms: 1,
            result_bytes: 2,
            error_code: None,
            retryable: None,
            result: Some(json!({"path": "a", "content": "fn main() {}", "revision": "r1"})),
            provenance: Provenance::new(trace_id, "workspace.readFile", &ctx, started_at_ms),
        }
    }

    #[test]
    fn the_store_keeps_arguments_and_results_without_the_text_they_carry() {
        let store = TraceStore::new(ObservabilityPolicy::default(), 10);
        let mut call = event(1, 0);
        call.arguments = json!({"path": "a", "search": "old", "replace": "new"});
        call.result = Some(json!({"exitCode": 0, "output": "secret line", "truncated": false}));
        store.on_event(&call);
        let kept = &store.entries()[0];
        assert_eq!(
            kept.arguments,
            json!({"path": "a", "search": {"chars": 3}, "replace": {"chars": 3}})
        );
        assert_eq!(
            kept.result,
            Some(json!({"exitCode": 0, "output": {"chars": 11}, "truncated": false}))
        );
        let export = serde_json::to_string(&store.export_metadata()).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&export).unwrap(),
            json!([{"method": "tools/call", "traceId": 1, "phase": "completed", "callId": "c",
                "tool": "workspace.readFile", "source": "model", "mode": "agent", "sessionId": "s",
                "durationMs": 1, "resultBytes": 2, "errorCode": null, "retryable": null}])
        );
    }

    #[test]
    fn the_store_keeps_at_most_max_entries_within_retention() {
        let store = TraceStore::new(ObservabilityPolicy::default(), 3)
            .with_retention(std::time::Duration::from_secs(10));
        for (id, at) in [(1, 0), (2, 1_000), (3, 2_000), (4, 3_000)] {
            store.on_event(&event(id, at));
        }
        let ids: Vec<u64> = store.entries().iter().map(|e| e.trace_id).collect();
        assert_eq!(ids, [2, 3, 4], "bounded by max_entries");
        store.on_event(&event(5, 12_500));
        let ids: Vec<u64> = store.entries().iter().map(|e| e.trace_id).collect();
        assert_eq!(ids, [4, 5], "older than the retention window");
        store.clear();
        assert!(store.entries().is_empty());
    }
}
