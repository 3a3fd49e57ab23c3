//! The Trace panel's state: the open folder's trace as the workspace
//! service last reported it — discoveries (`tools/list`), tool calls
//! (`tools/call`) and requests to agents (`agent.request`), arguments and
//! results redacted — one row per call with its latest event, and the
//! session the person narrows the rows to.

use std::collections::HashMap;
use std::path::PathBuf;

use cocode_tool_protocol::observe::{LifecyclePhase, TraceEntry, TraceMethod};
use serde_json::Value;

/// What the Trace panel shows.
#[derive(Debug, Default)]
pub struct TracePanel {
    /// Every kept event, oldest first.
    pub rows: Vec<TraceEntry>,
    /// Only rows of this session (`None`: every session).
    pub session: Option<String>,
    /// Where the last save went, or why it did not.
    pub saved: Option<Result<PathBuf, String>>,
}

impl TracePanel {
    /// One row per call, discovery or agent request, with its latest
    /// event (a call that only started is running), oldest first.
    pub fn calls(&self) -> Vec<&TraceEntry> {
        let mut at: HashMap<(TraceMethod, u64), usize> = HashMap::new();
        let mut calls: Vec<&TraceEntry> = Vec::new();
        for event in &self.rows {
            if let Some(&i) = at.get(&(event.method, event.trace_id)) {
                calls[i] = event;
            } else {
                at.insert((event.method, event.trace_id), calls.len());
                calls.push(event);
            }
        }
        calls
    }

    /// The sessions in the trace, in the order they first appear.
    pub fn sessions(&self) -> Vec<&str> {
        let mut sessions: Vec<&str> = Vec::new();
        for event in &self.rows {
            if !sessions.contains(&event.session_id.as_str()) {
                sessions.push(&event.session_id);
            }
        }
        sessions
    }

    /// The rows of the chosen session, newest first.
    pub fn shown(&self) -> Vec<&TraceEntry> {
        let mut shown: Vec<&TraceEntry> = self
            .calls()
            .into_iter()
            .filter(|e| self.session.as_ref().is_none_or(|s| *s == e.session_id))
            .collect();
        shown.reverse();
        shown
    }

    /// The whole trace's rows (every session: the selector only narrows
    /// what is shown) as metadata JSON, oldest first, without any argument
    /// or result.
    pub fn export(&self) -> String {
        let rows = cocode_tool_protocol::observe::metadata_of(self.calls());
        serde_json::to_string_pretty(&rows).unwrap_or_default()
    }
}

/// A row's phase in words.
pub fn phase_words(phase: LifecyclePhase) -> &'static str {
    match phase {
        LifecyclePhase::Started => "running",
        LifecyclePhase::Completed => "completed",
        LifecyclePhase::Failed => "failed",
        LifecyclePhase::Cancelled => "cancelled",
        LifecyclePhase::Unknown => "ended without an outcome",
    }
}

/// Who made the call, in words (`local agent · agent`, `model · agent`,
/// `palette · direct`).
pub fn origin_words(entry: &TraceEntry) -> String {
    use cocode_tool_protocol::{ToolMode, ToolSource};
    let source = match entry.source {
        ToolSource::Model => "model",
        ToolSource::LocalFallback => "local agent",
        ToolSource::Palette => "catalog",
        ToolSource::Acp => "external agent",
        ToolSource::Test => "test",
    };
    let mode = match entry.mode {
        ToolMode::Agent => "agent",
        ToolMode::Direct => "direct",
    };
    format!("{source} · {mode}")
}

/// The row's name: the tool called, the agent asked, or "tools/list".
pub fn subject(entry: &TraceEntry) -> String {
    match entry.method {
        TraceMethod::ToolsList => "tools/list".to_owned(),
        TraceMethod::ToolsCall => entry.tool.clone(),
        TraceMethod::AgentRequest => format!("agent.request {}", entry.tool),
    }
}

/// A short, safe summary of what a finished row returned: the path and
/// revision, how many files, matches or tools, a command's exit code, an
/// error's code and whether it may be retried. Never any text of a file.
pub fn summary(entry: &TraceEntry) -> String {
    let mut parts: Vec<String> = Vec::new();
    let Some(result) = &entry.result else {
        return String::new();
    };
    if let Some(error) = result.get("error") {
        if let Some(code) = error.get("code").and_then(Value::as_str) {
            parts.push(code.to_owned());
        }
        match entry.retryable {
            Some(true) => parts.push("retryable".to_owned()),
            Some(false) => parts.push("not retryable".to_owned()),
            None => {}
        }
        return parts.join(" · ");
    }
    if let Some(path) = result.get("path").and_then(Value::as_str) {
        parts.push(path.to_owned());
    }
    if let Some(revision) = result.get("revision").and_then(Value::as_str) {
        let short: String = revision.chars().take(12).collect();
        parts.push(format!("revision {short}"));
    }
    let counted = [
        ("files", "file", "files"),
        ("matches", "match", "matches"),
        ("tools", "tool", "tools"),
    ];
    for (key, one, many) in counted {
        if let Some(list) = result.get(key).and_then(Value::as_array) {
            let n = list.len();
            parts.push(format!("{n} {}", if n == 1 { one } else { many }));
        }
    }
    if let Some(code) = result.get("exitCode").and_then(Value::as_i64) {
        parts.push(format!("exit code {code}"));
    }
    if let Some(reason) = result.get("turnEnded").and_then(Value::as_str) {
        parts.push(format!("turn ended: {reason}"));
    }
    parts.join(" · ")
}
