//! The provider-neutral conversation, the raw decoded response, its
//! validation, and the transcript projection the UI shows.
//!
//! Adapters decode their wire format into a [`RawAssistant`] without judging
//! it; [`validate`] is the one place that decides whether a response may
//! reach the tool loop. Nothing is repaired: arguments that are not a JSON
//! object are refused, never replaced by `{}`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::error::{ProviderError, ProviderErrorCode};

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    Refusal,
    /// Anything else the provider reported, kept verbatim.
    Other(String),
}

impl StopReason {
    /// Normalizes both providers' spellings.
    pub fn parse(raw: Option<&str>) -> Self {
        match raw {
            None | Some("end_turn" | "stop" | "stop_sequence") => Self::EndTurn,
            Some("tool_use" | "tool_calls" | "function_call") => Self::ToolUse,
            Some("max_tokens" | "length") => Self::MaxTokens,
            Some("refusal" | "content_filter") => Self::Refusal,
            Some(other) => Self::Other(other.to_owned()),
        }
    }
}

/// One validated tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's id; every result pairs with it.
    pub id: String,
    /// The name as the provider spelled it (sent back in the next turn).
    pub provider_name: String,
    pub arguments: Map<String, Value>,
}

/// A validated assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub struct AssistantMessage {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub stop: StopReason,
}

/// A tool result on its way back to the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResultMessage {
    pub call_id: String,
    /// The canonical result serialized as JSON text (including the error's
    /// `code`, `retryable` and `details`).
    pub content: String,
    pub is_error: bool,
}

/// The conversation as the provider sees it; appended turn by turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    User(String),
    Assistant(AssistantMessage),
    ToolResults(Vec<ToolResultMessage>),
}

/// A tool call as decoded, before validation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawToolCall {
    pub id: Option<String>,
    /// `function` (`OpenAI`) or `tool_use` (Anthropic); anything else is refused.
    pub kind: Option<String>,
    pub name: Option<String>,
    /// The arguments as JSON text, exactly as received.
    pub arguments: String,
}

/// A response as decoded, before validation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawAssistant {
    pub role: Option<String>,
    pub text: String,
    /// Set when the content had a type the protocol does not allow.
    pub invalid_content: Option<String>,
    pub tool_calls: Vec<RawToolCall>,
    pub stop_reason: Option<String>,
    /// Tokens the provider counted for this request, when it says.
    pub usage: Option<Usage>,
    /// The model the server says answered, when it says.
    pub model: Option<String>,
}

/// Tokens one request used, as the provider reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// The prompt, cached parts included.
    pub input: u64,
    pub output: u64,
    /// Of the prompt: read from the provider's cache.
    pub cache_read: u64,
    /// Of the prompt: written to the provider's cache (Anthropic).
    pub cache_write: u64,
}

impl Usage {
    /// `usage` of an `OpenAI`-compatible response or chunk.
    pub fn of_openai(usage: &Value) -> Option<Self> {
        let count = |k: &str| usage.get(k).and_then(Value::as_u64);
        Some(Self {
            input: count("prompt_tokens")?,
            output: count("completion_tokens").unwrap_or(0),
            cache_read: usage
                .pointer("/prompt_tokens_details/cached_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            cache_write: 0,
        })
    }

    /// `usage` of an Anthropic message (input, cache writes and cache
    /// reads together).
    pub fn of_anthropic(usage: &Value) -> Option<Self> {
        let count = |k: &str| usage.get(k).and_then(Value::as_u64);
        let cache_write = count("cache_creation_input_tokens").unwrap_or(0);
        let cache_read = count("cache_read_input_tokens").unwrap_or(0);
        Some(Self {
            input: count("input_tokens")? + cache_write + cache_read,
            output: count("output_tokens").unwrap_or(0),
            cache_read,
            cache_write,
        })
    }
}

/// Checks a decoded response before the loop sees it.
///
/// - role must be `assistant`; content a string or null (else
///   `PROVIDER_INVALID_RESPONSE`);
/// - every tool call: a non-empty id, unique in the response (else
///   `PROVIDER_INVALID_RESPONSE`); kind `function`/`tool_use`, a non-empty name
///   and arguments that parse to a JSON object (else
///   `PROVIDER_INVALID_TOOL_CALL`).
pub fn validate(raw: RawAssistant) -> Result<AssistantMessage, ProviderError> {
    match raw.role.as_deref() {
        Some("assistant") => {}
        Some(other) => {
            return Err(ProviderError::invalid_response(format!(
                "the response's role is {other:?}, not \"assistant\""
            )));
        }
        None => return Err(ProviderError::invalid_response("the response has no role")),
    }
    if let Some(kind) = raw.invalid_content {
        return Err(ProviderError::invalid_response(format!(
            "the response's content is {kind}, not text"
        )));
    }
    let mut ids = BTreeSet::new();
    for call in &raw.tool_calls {
        let id = call.id.as_deref().unwrap_or_default();
        if id.is_empty() {
            return Err(ProviderError::invalid_response("a tool call has no id"));
        }
        if !ids.insert(id) {
            return Err(ProviderError::invalid_response(format!(
                "tool call id {id:?} appears twice in one response"
            )));
        }
    }
    let mut tool_calls = Vec::with_capacity(raw.tool_calls.len());
    for call in raw.tool_calls {
        let id = call.id.unwrap_or_default();
        let invalid = |why: String| {
            ProviderError::new(
                ProviderErrorCode::InvalidToolCall,
                format!("tool call {id:?}: {why}"),
            )
        };
        match call.kind.as_deref() {
            Some("function" | "tool_use") => {}
            other => return Err(invalid(format!("type {other:?} is not a function call"))),
        }
        let name = call.name.unwrap_or_default();
        if name.is_empty() {
            return Err(invalid("it has no tool name".to_owned()));
        }
        let arguments = match serde_json::from_str::<Value>(&call.arguments) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(invalid(format!(
                    "its arguments are {}, not a JSON object",
                    json_kind(&other)
                )));
            }
            Err(e) => return Err(invalid(format!("its arguments are not valid JSON ({e})"))),
        };
        tool_calls.push(ToolCall {
            id: id.clone(),
            provider_name: name,
            arguments,
        });
    }
    let stop = StopReason::parse(raw.stop_reason.as_deref());
    Ok(AssistantMessage {
        text: raw.text,
        tool_calls,
        stop,
    })
}

/// The JSON type name of a value, for messages.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One row of the transcript the UI shows. It is a projection: the
/// conversation sent to the provider keeps every message verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptEntry {
    User(String),
    Assistant(String),
    ToolCall {
        id: String,
        /// Canonical when the registry knows the name, else as the model wrote it.
        tool: String,
        /// The `path`/`from`/`to`/`argv` values, never file contents.
        summary: String,
    },
    ToolResult {
        id: String,
        is_error: bool,
        /// The error code, or the result's size.
        summary: String,
    },
}

/// Projects a conversation for the UI. `canonical` maps provider tool names
/// back to canonical ones.
pub fn transcript(
    messages: &[Message],
    canonical: &dyn Fn(&str) -> Option<String>,
) -> Vec<TranscriptEntry> {
    let mut rows = Vec::new();
    for message in messages {
        match message {
            Message::User(text) => rows.push(TranscriptEntry::User(text.clone())),
            Message::Assistant(a) => {
                if !a.text.is_empty() {
                    rows.push(TranscriptEntry::Assistant(a.text.clone()));
                }
                for call in &a.tool_calls {
                    rows.push(TranscriptEntry::ToolCall {
                        id: call.id.clone(),
                        tool: canonical(&call.provider_name)
                            .unwrap_or_else(|| call.provider_name.clone()),
                        summary: call_summary(&call.arguments),
                    });
                }
            }
            Message::ToolResults(results) => {
                for r in results {
                    let summary = if r.is_error {
                        serde_json::from_str::<Value>(&r.content)
                            .ok()
                            .and_then(|v| {
                                v.pointer("/error/code")
                                    .and_then(Value::as_str)
                                    .map(str::to_owned)
                            })
                            .unwrap_or_else(|| "error".to_owned())
                    } else {
                        format!("{} bytes", r.content.len())
                    };
                    rows.push(TranscriptEntry::ToolResult {
                        id: r.call_id.clone(),
                        is_error: r.is_error,
                        summary,
                    });
                }
            }
        }
    }
    rows
}

/// The safe, short description of a call's arguments.
pub fn call_summary(arguments: &Map<String, Value>) -> String {
    let mut parts = Vec::new();
    for key in ["path", "from", "to"] {
        if let Some(Value::String(v)) = arguments.get(key) {
            parts.push(format!("{key}={v}"));
        }
    }
    if let Some(Value::Array(argv)) = arguments.get("argv") {
        let line: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
        let mut line = line.join(" ");
        if line.chars().count() > 120 {
            line = line.chars().take(117).collect::<String>() + "...";
        }
        parts.push(format!("argv={line}"));
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn call(id: &str, args: &str) -> RawToolCall {
        RawToolCall {
            id: Some(id.into()),
            kind: Some("function".into()),
            name: Some("workspace__readFile".into()),
            arguments: args.into(),
        }
    }

    fn raw(calls: Vec<RawToolCall>) -> RawAssistant {
        RawAssistant {
            role: Some("assistant".into()),
            tool_calls: calls,
            stop_reason: Some("tool_calls".into()),
            ..RawAssistant::default()
        }
    }

    #[test]
    fn a_good_response_becomes_typed_calls() {
        let ok = validate(raw(vec![call("a", r#"{"path":"x"}"#)])).unwrap();
        assert_eq!(ok.stop, StopReason::ToolUse);
        assert_eq!(
            ok.tool_calls,
            vec![ToolCall {
                id: "a".into(),
                provider_name: "workspace__readFile".into(),
                arguments: serde_json::from_str(r#"{"path":"x"}"#).unwrap(),
            }]
        );
    }

    #[test]
    fn bad_calls_are_refused_with_their_codes() {
        use ProviderErrorCode::{InvalidResponse, InvalidToolCall};
        let cases: Vec<(RawAssistant, ProviderErrorCode)> = vec![
            (raw(vec![call("a", "{")]), InvalidToolCall),
            (raw(vec![call("a", "")]), InvalidToolCall),
            (raw(vec![call("a", "[1]")]), InvalidToolCall),
            (raw(vec![call("a", "\"{}\"")]), InvalidToolCall),
            (raw(vec![call("a", "{}"), call("a", "{}")]), InvalidResponse),
            (raw(vec![call("", "{}")]), InvalidResponse),
            (
                raw(vec![RawToolCall {
                    id: None,
                    ..call("x", "{}")
                }]),
                InvalidResponse,
            ),
            (
                raw(vec![RawToolCall {
                    name: Some(String::new()),
                    ..call("x", "{}")
                }]),
                InvalidToolCall,
            ),
            (
                raw(vec![RawToolCall {
                    kind: Some("custom".into()),
                    ..call("x", "{}")
                }]),
                InvalidToolCall,
            ),
            (
                RawAssistant {
                    role: Some("user".into()),
                    ..raw(vec![])
                },
                InvalidResponse,
            ),
            (
                RawAssistant {
                    invalid_content: Some("an array".into()),
                    ..raw(vec![])
                },
                InvalidResponse,
            ),
        ];
        for (input, code) in cases {
            let err = validate(input.clone()).unwrap_err();
            assert_eq!(err.code, code, "{input:?}");
        }
    }

    #[test]
    fn the_transcript_shows_paths_and_codes_never_contents() {
        let messages = vec![
            Message::User("fix it".into()),
            Message::Assistant(AssistantMessage {
                text: "Looking.".into(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    provider_name: "workspace__writeFile".into(),
                    arguments: serde_json::from_str(r#"{"path":"a.rs","content":"SECRET"}"#)
                        .unwrap(),
                }],
                stop: StopReason::ToolUse,
            }),
            Message::ToolResults(vec![ToolResultMessage {
                call_id: "c1".into(),
                content: r#"{"isError":true,"error":{"code":"TOOL_POLICY_DENIED"}}"#.into(),
                is_error: true,
            }]),
        ];
        let rows = transcript(&messages, &|n| Some(n.replace("__", ".")));
        assert_eq!(
            rows,
            vec![
                TranscriptEntry::User("fix it".into()),
                TranscriptEntry::Assistant("Looking.".into()),
                TranscriptEntry::ToolCall {
                    id: "c1".into(),
                    tool: "workspace.writeFile".into(),
                    summary: "path=a.rs".into()
                },
                TranscriptEntry::ToolResult {
                    id: "c1".into(),
                    is_error: true,
                    summary: "TOOL_POLICY_DENIED".into()
                },
            ]
        );
    }
}
