//! The Trace panel's state: the open folder's tool calls as the workspace
//! service last reported them (arguments redacted), and the session the
//! person filters by.

use cocode_tool_protocol::observe::{LifecyclePhase, TraceEntry};

/// What the Trace panel shows.
#[derive(Debug, Default)]
pub struct TracePanel {
    /// Every kept event, oldest first.
    pub rows: Vec<TraceEntry>,
    /// Only events of sessions whose id holds this text.
    pub filter: String,
}

impl TracePanel {
    /// The rows the filter lets through, newest first.
    pub fn shown(&self) -> Vec<&TraceEntry> {
        let filter = self.filter.trim();
        self.rows
            .iter()
            .rev()
            .filter(|e| filter.is_empty() || e.session_id.contains(filter))
            .collect()
    }

    /// The shown rows' metadata as JSON, without any argument.
    pub fn export(&self) -> String {
        let shown = self.shown();
        let rows = cocode_tool_protocol::observe::metadata_of(shown.into_iter().rev());
        serde_json::to_string_pretty(&rows).unwrap_or_default()
    }
}

/// A phase in words.
pub fn phase_words(phase: LifecyclePhase) -> &'static str {
    match phase {
        LifecyclePhase::Started => "started",
        LifecyclePhase::Completed => "completed",
        LifecyclePhase::Failed => "failed",
        LifecyclePhase::Cancelled => "cancelled",
        LifecyclePhase::Unknown => "ended without an outcome",
    }
}
