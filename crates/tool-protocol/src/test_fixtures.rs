//! Fixtures shared by this crate's tests.

use serde_json::json;

use crate::types::{ToolAnnotations, ToolCallContext, ToolDefinition, ToolMode, ToolSource};

/// A tool taking `{path: string, n?: integer ≥ 0}` and nothing else.
pub fn definition(name: &str, read_only: bool) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        title: name.into(),
        description: format!("{name} tool"),
        input_schema: json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "n": {"type": "integer", "minimum": 0}},
            "required": ["path"],
            "additionalProperties": false
        }),
        output_schema: None,
        annotations: ToolAnnotations {
            read_only,
            ..ToolAnnotations::default()
        },
    }
}

/// A call context of session `s1`, task `t1`.
pub fn context(source: ToolSource, mode: ToolMode) -> ToolCallContext {
    ToolCallContext {
        source,
        mode,
        session_id: "s1".into(),
        task_id: Some("t1".into()),
        revision: None,
    }
}
