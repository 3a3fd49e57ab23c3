//! The canonical protocol types and the untrusted-JSON shape validators.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ToolError, ToolErrorCode};

/// Hints about a tool's effects. `destructive` is a UI hint; enforcement is the policy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "the four independent MCP annotation hints"
)]
pub struct ToolAnnotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

/// A tool's canonical definition; provider formats are projections of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolDefinition {
    /// Namespaced: `workspace.readFile`, `terminal.run`, …
    pub name: String,
    pub title: String,
    pub description: String,
    /// A JSON Schema for the arguments (an object schema).
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub annotations: ToolAnnotations,
}

/// `tools/list` request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolListRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `tools/list` result page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolListResult {
    pub tools: Vec<ToolDefinition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `tools/call` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallRequest {
    /// The caller's id for this call (a provider's tool-call id).
    pub id: String,
    pub name: String,
    pub arguments: Map<String, Value>,
}

/// Who is calling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolSource {
    Model,
    LocalFallback,
    Palette,
    Acp,
    Test,
}

/// Whether a person invoked the tool directly or an agent did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolMode {
    Agent,
    Direct,
}

/// The context of one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallContext {
    pub source: ToolSource,
    pub mode: ToolMode,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
}

/// One content block of a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ContentBlock {
    Text { text: String },
    Json { json: Value },
}

/// `tools/call` result. Every result carries the id of its call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallResult {
    pub tool_call_id: String,
    pub content: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

impl ToolCallResult {
    /// An error result: one text block with the message, and the structured error.
    pub fn failure(tool_call_id: impl Into<String>, error: ToolError) -> Self {
        Self {
            tool_call_id: tool_call_id.into(),
            content: vec![ContentBlock::Text {
                text: error.to_string(),
            }],
            structured_content: None,
            is_error: true,
            error: Some(error),
        }
    }

    /// The UTF-8 size of the content and structured content, as serialized.
    pub fn output_bytes(&self) -> usize {
        let content = serde_json::to_vec(&self.content).map_or(0, |v| v.len());
        let structured = self
            .structured_content
            .as_ref()
            .and_then(|v| serde_json::to_vec(v).ok())
            .map_or(0, |v| v.len());
        content + structured
    }
}

/// Renders every content block for text-only consumers; JSON blocks are
/// printed, never dropped.
pub fn stringify_tool_content(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Json { json } => json.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn optional_string(object: &Map<String, Value>, key: &str) -> bool {
    // Omitted is fine; present must be a string (null is not "omitted").
    object.get(key).is_none_or(Value::is_string)
}

fn only_keys(object: &Map<String, Value>, allowed: &[&str]) -> bool {
    object.keys().all(|k| allowed.contains(&k.as_str()))
}

/// Whether untrusted JSON is a well-formed `tools/list` request.
pub fn is_tool_list_request(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|o| only_keys(o, &["cursor"]) && optional_string(o, "cursor"))
}

/// Whether untrusted JSON is a well-formed `tools/call` request.
pub fn is_tool_call_request(value: &Value) -> bool {
    value.as_object().is_some_and(|o| {
        only_keys(o, &["id", "name", "arguments"])
            && o.get("id")
                .is_some_and(|v| v.as_str().is_some_and(|s| !s.is_empty()))
            && o.get("name")
                .is_some_and(|v| v.as_str().is_some_and(|s| !s.is_empty()))
            && o.get("arguments").is_some_and(Value::is_object)
    })
}

/// Whether untrusted JSON is a well-formed `tools/call` result.
pub fn is_tool_call_result(value: &Value) -> bool {
    let Some(o) = value.as_object() else {
        return false;
    };
    let blocks_ok = o
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            blocks.iter().all(|b| {
                b.as_object()
                    .is_some_and(|b| match b.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            only_keys(b, &["type", "text"])
                                && b.get("text").is_some_and(Value::is_string)
                        }
                        Some("json") => only_keys(b, &["type", "json"]) && b.contains_key("json"),
                        _ => false,
                    })
            })
        });
    let is_error = o.get("isError").and_then(Value::as_bool);
    let error_ok = match (is_error, o.get("error")) {
        (Some(true), Some(e)) => serde_json::from_value::<ToolError>(e.clone()).is_ok(),
        (Some(false), None) => true,
        _ => false,
    };
    only_keys(
        o,
        &[
            "toolCallId",
            "content",
            "structuredContent",
            "isError",
            "error",
        ],
    ) && o.get("toolCallId").is_some_and(Value::is_string)
        && blocks_ok
        && error_ok
        && o.get("structuredContent").is_none_or(|v| !v.is_null())
}

#[cfg(test)]
#[path = "types_tests.rs"]
mod tests;

/// A handler's successful output.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolOutput {
    pub content: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::Text { text: text.into() }],
            structured_content: None,
        }
    }

    /// A structured result, also shown as a JSON block. A value that cannot
    /// be serialized is `TOOL_RESULT_SERIALIZATION_FAILED`.
    pub fn json<T: Serialize>(value: &T) -> Result<Self, ToolError> {
        let json = serde_json::to_value(value).map_err(|e| {
            ToolError::new(
                ToolErrorCode::ResultSerializationFailed,
                format!("result is not serializable: {e}"),
            )
        })?;
        Ok(Self {
            content: vec![ContentBlock::Json { json: json.clone() }],
            structured_content: Some(json),
        })
    }
}
