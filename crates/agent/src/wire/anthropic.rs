//! Anthropic Messages: `x-api-key`, `anthropic-version`, `tools` with
//! `input_schema`, `tool_use` / `tool_result` blocks, SSE streaming.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{HttpRequestSpec, StreamDecoder, StreamDelta, error_message, parse_data};
use crate::conversation::{Message, RawAssistant, RawToolCall};
use crate::error::{ProviderError, ProviderErrorCode};

pub const API_VERSION: &str = "2023-06-01";
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// What one request carries.
#[derive(Debug, Clone, Copy)]
pub struct RequestParts<'a> {
    pub base_url: &'a str,
    pub api_key: &'a str,
    pub model: &'a str,
    pub max_tokens: u32,
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [Value],
}

/// Encodes a streaming Messages request. Consecutive messages of one role
/// are merged (tool results followed by the next user text form one user
/// message) and empty assistant messages are left out, as the API requires.
pub fn request(parts: &RequestParts<'_>) -> HttpRequestSpec {
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in parts.messages {
        let (role, blocks) = match message {
            Message::User(text) => ("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant(a) => {
                let mut blocks = Vec::new();
                if !a.text.is_empty() {
                    blocks.push(json!({"type": "text", "text": a.text}));
                }
                for call in &a.tool_calls {
                    blocks.push(json!({
                        "type": "tool_use", "id": call.id,
                        "name": call.provider_name, "input": call.arguments
                    }));
                }
                ("assistant", blocks)
            }
            Message::ToolResults(results) => (
                "user",
                results
                    .iter()
                    .map(|r| {
                        json!({
                            "type": "tool_result", "tool_use_id": r.call_id,
                            "content": r.content, "is_error": r.is_error
                        })
                    })
                    .collect(),
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    // Cache breakpoints at the stable prefix: the tools, the system prompt
    // and the conversation up to its last block (the next turn starts with
    // all of it), three of the four the API allows.
    if let Some((_, blocks)) = messages.last_mut()
        && let Some(Value::Object(last)) = blocks.last_mut()
    {
        last.insert("cache_control".to_owned(), ephemeral());
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": parts.model,
        "max_tokens": parts.max_tokens,
        "system": if parts.system.is_empty() {
            Value::Array(Vec::new())
        } else {
            json!([{"type": "text", "text": parts.system, "cache_control": ephemeral()}])
        },
        "messages": messages,
        "stream": true,
    });
    if !parts.tools.is_empty() {
        let mut tools = parts.tools.to_vec();
        if let Some(Value::Object(last)) = tools.last_mut() {
            last.insert("cache_control".to_owned(), ephemeral());
        }
        body["tools"] = Value::Array(tools);
    }
    HttpRequestSpec {
        url: format!("{}/v1/messages", parts.base_url.trim_end_matches('/')),
        headers: vec![
            ("x-api-key", parts.api_key.to_owned()),
            ("anthropic-version", API_VERSION.to_owned()),
        ],
        body,
    }
}

/// A cache breakpoint (`cache_control` of five minutes).
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The model list request (`GET /v1/models`).
pub fn models_request(base_url: &str, api_key: &str) -> HttpRequestSpec {
    HttpRequestSpec {
        url: format!("{}/v1/models?limit=1000", base_url.trim_end_matches('/')),
        headers: vec![
            ("x-api-key", api_key.to_owned()),
            ("anthropic-version", API_VERSION.to_owned()),
        ],
        body: Value::Null,
    }
}

/// Maps an `error` event's (or body's) `error.type` to a code.
pub fn error_code(kind: Option<&str>) -> ProviderErrorCode {
    match kind {
        Some("overloaded_error" | "api_error") => ProviderErrorCode::Unavailable,
        Some("rate_limit_error") => ProviderErrorCode::RateLimited,
        Some("authentication_error" | "permission_error") => ProviderErrorCode::Auth,
        Some("invalid_request_error" | "not_found_error" | "request_too_large") => {
            ProviderErrorCode::BadRequest
        }
        _ => ProviderErrorCode::InvalidResponse,
    }
}

fn error_from(value: &Value) -> ProviderError {
    let kind = value.pointer("/error/type").and_then(Value::as_str);
    ProviderError::new(
        error_code(kind),
        error_message(value).unwrap_or_else(|| "the provider reported an error".to_owned()),
    )
}

#[derive(Debug)]
enum Block {
    Text(String),
    ToolUse {
        id: Option<String>,
        name: Option<String>,
        /// `input` of `content_block_start`, used when no JSON deltas follow.
        start_input: Value,
        json: String,
    },
    /// Thinking and block types this client does not use.
    Other,
}

/// Decodes a Messages SSE stream.
#[derive(Debug, Default)]
pub struct Decoder {
    role: Option<String>,
    blocks: BTreeMap<u64, Block>,
    stop_reason: Option<String>,
    usage: Option<crate::conversation::Usage>,
    model: Option<String>,
    started: bool,
    stopped: bool,
}

impl Decoder {
    /// The stop reason, and the token counts so far (the output count is
    /// cumulative; the input stays as `message_start` said unless repeated).
    fn on_message_delta(&mut self, value: &Value) {
        if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
            self.stop_reason = Some(reason.to_owned());
        }
        if let Some(output) = value
            .pointer("/usage/output_tokens")
            .and_then(Value::as_u64)
        {
            let usage = self.usage.get_or_insert_default();
            usage.output = output;
            if let Some(input) = value
                .pointer("/usage/input_tokens")
                .and_then(Value::as_u64)
                .filter(|i| *i > 0)
            {
                usage.input = input;
            }
        }
    }

    fn index(value: &Value) -> Result<u64, ProviderError> {
        value
            .get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| ProviderError::invalid_response("a content block event has no index"))
    }
}

impl StreamDecoder for Decoder {
    fn on_event(&mut self, event: &str, data: &str) -> Result<Vec<StreamDelta>, ProviderError> {
        let mut out = Vec::new();
        match event {
            "error" => return Err(error_from(&parse_data(data)?)),
            "message_start" => {
                let value = parse_data(data)?;
                self.started = true;
                self.role = value
                    .pointer("/message/role")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.usage = value
                    .pointer("/message/usage")
                    .and_then(crate::conversation::Usage::of_anthropic);
                self.model = value
                    .pointer("/message/model")
                    .and_then(Value::as_str)
                    .filter(|m| !m.trim().is_empty())
                    .map(str::to_owned);
            }
            "content_block_start" => {
                let value = parse_data(data)?;
                let index = Self::index(&value)?;
                let block = value.get("content_block").unwrap_or(&Value::Null);
                let block = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = block
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned();
                        if !text.is_empty() {
                            out.push(StreamDelta::Text(text.clone()));
                        }
                        Block::Text(text)
                    }
                    Some("tool_use") => {
                        let id = block.get("id").and_then(Value::as_str).map(str::to_owned);
                        let name = block.get("name").and_then(Value::as_str).map(str::to_owned);
                        out.push(StreamDelta::ToolCallStarted {
                            id: id.clone().unwrap_or_default(),
                            name: name.clone().unwrap_or_default(),
                        });
                        Block::ToolUse {
                            id,
                            name,
                            start_input: block.get("input").cloned().unwrap_or(Value::Null),
                            json: String::new(),
                        }
                    }
                    _ => Block::Other,
                };
                self.blocks.insert(index, block);
            }
            "content_block_delta" => {
                let value = parse_data(data)?;
                let index = Self::index(&value)?;
                let delta = value.get("delta").unwrap_or(&Value::Null);
                let kind = delta.get("type").and_then(Value::as_str);
                match (self.blocks.get_mut(&index), kind) {
                    (Some(Block::Text(text)), Some("text_delta")) => {
                        let piece = delta
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        text.push_str(piece);
                        out.push(StreamDelta::Text(piece.to_owned()));
                    }
                    (Some(Block::ToolUse { json, .. }), Some("input_json_delta")) => {
                        json.push_str(
                            delta
                                .get("partial_json")
                                .and_then(Value::as_str)
                                .unwrap_or_default(),
                        );
                    }
                    (Some(Block::Other), Some("thinking_delta")) => {
                        if let Some(t) = delta.get("thinking").and_then(Value::as_str) {
                            out.push(StreamDelta::Thought(t.to_owned()));
                        }
                    }
                    (Some(Block::Other), _) => {}
                    (None, _) => {
                        return Err(ProviderError::invalid_response(format!(
                            "a delta for content block {index}, which never started"
                        )));
                    }
                    (Some(_), kind) => {
                        return Err(ProviderError::invalid_response(format!(
                            "a {kind:?} delta does not fit content block {index}"
                        )));
                    }
                }
            }
            "message_delta" => self.on_message_delta(&parse_data(data)?),
            "message_stop" => self.stopped = true,
            // ping, content_block_stop and event types added later carry nothing
            // this client needs.
            _ => {}
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.stopped
    }

    fn finish(self: Box<Self>) -> Result<RawAssistant, ProviderError> {
        if !self.started || !self.stopped {
            return Err(ProviderError::new(
                ProviderErrorCode::Network,
                "the response stream ended before message_stop",
            ));
        }
        let mut raw = RawAssistant {
            role: self.role,
            stop_reason: self.stop_reason,
            usage: self.usage,
            model: self.model,
            ..RawAssistant::default()
        };
        for block in self.blocks.into_values() {
            match block {
                Block::Text(text) => raw.text.push_str(&text),
                Block::ToolUse {
                    id,
                    name,
                    start_input,
                    json,
                } => raw.tool_calls.push(RawToolCall {
                    id,
                    kind: Some("tool_use".to_owned()),
                    name,
                    arguments: if json.is_empty() {
                        start_input.to_string()
                    } else {
                        json
                    },
                }),
                Block::Other => {}
            }
        }
        Ok(raw)
    }
}

/// Decodes a whole (non-streamed) Messages response body.
pub fn decode_body(body: &Value) -> Result<RawAssistant, ProviderError> {
    if body.get("type").and_then(Value::as_str) == Some("error") {
        return Err(error_from(body));
    }
    let mut raw = RawAssistant {
        role: body.get("role").and_then(Value::as_str).map(str::to_owned),
        stop_reason: body
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        usage: body
            .get("usage")
            .and_then(crate::conversation::Usage::of_anthropic),
        model: body
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.trim().is_empty())
            .map(str::to_owned),
        ..RawAssistant::default()
    };
    let Some(content) = body.get("content").and_then(Value::as_array) else {
        return Err(ProviderError::invalid_response(
            "the response has no content array",
        ));
    };
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => match block.get("text") {
                Some(Value::String(t)) => raw.text.push_str(t),
                Some(other) => {
                    raw.invalid_content = Some(crate::conversation::json_kind(other).to_owned());
                }
                None => {}
            },
            Some("tool_use") => raw.tool_calls.push(RawToolCall {
                id: block.get("id").and_then(Value::as_str).map(str::to_owned),
                kind: Some("tool_use".to_owned()),
                name: block.get("name").and_then(Value::as_str).map(str::to_owned),
                arguments: block.get("input").unwrap_or(&Value::Null).to_string(),
            }),
            _ => {}
        }
    }
    Ok(raw)
}

/// Model ids of a `GET /v1/models` response.
pub fn decode_models(body: &Value) -> Result<Vec<String>, ProviderError> {
    let data = body
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::invalid_response("the model list has no data array"))?;
    Ok(data
        .iter()
        .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{AssistantMessage, StopReason, ToolCall, ToolResultMessage};
    use pretty_assertions::assert_eq;

    fn feed(events: &[(&str, Value)]) -> (Vec<StreamDelta>, Result<RawAssistant, ProviderError>) {
        let mut d = Box::new(Decoder::default());
        let mut deltas = Vec::new();
        for (name, data) in events {
            match d.on_event(name, &data.to_string()) {
                Ok(mut more) => deltas.append(&mut more),
                Err(e) => return (deltas, Err(e)),
            }
        }
        (deltas, d.finish())
    }

    #[test]
    fn a_tool_use_stream_decodes_text_and_arguments() {
        let (deltas, raw) = feed(&[
            (
                "message_start",
                json!({"type":"message_start","message":{"role":"assistant","content":[],
                       "usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}}}),
            ),
            (
                "content_block_start",
                json!({"index":0,"content_block":{"type":"text","text":""}}),
            ),
            (
                "content_block_delta",
                json!({"index":0,"delta":{"type":"text_delta","text":"Let me "}}),
            ),
            (
                "content_block_delta",
                json!({"index":0,"delta":{"type":"text_delta","text":"look."}}),
            ),
            ("content_block_stop", json!({"index":0})),
            (
                "content_block_start",
                json!({"index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"workspace__readFile","input":{}}}),
            ),
            (
                "content_block_delta",
                json!({"index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}),
            ),
            (
                "content_block_delta",
                json!({"index":1,"delta":{"type":"input_json_delta","partial_json":"th\":\"a.rs\"}"}}),
            ),
            ("ping", json!({})),
            (
                "message_delta",
                json!({"delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}),
            ),
            ("message_stop", json!({})),
        ]);
        assert_eq!(
            deltas,
            vec![
                StreamDelta::Text("Let me ".into()),
                StreamDelta::Text("look.".into()),
                StreamDelta::ToolCallStarted {
                    id: "toolu_1".into(),
                    name: "workspace__readFile".into()
                },
            ]
        );
        assert_eq!(
            raw.unwrap(),
            RawAssistant {
                role: Some("assistant".into()),
                text: "Let me look.".into(),
                invalid_content: None,
                tool_calls: vec![RawToolCall {
                    id: Some("toolu_1".into()),
                    kind: Some("tool_use".into()),
                    name: Some("workspace__readFile".into()),
                    arguments: r#"{"path":"a.rs"}"#.into(),
                }],
                stop_reason: Some("tool_use".into()),
                // message_start's input (cache reads too), message_delta's
                // cumulative output.
                usage: Some(crate::conversation::Usage {
                    input: 15,
                    output: 7,
                    cache_read: 5,
                    cache_write: 0,
                }),
                model: None,
            }
        );
    }

    #[test]
    fn a_stream_cut_before_message_stop_is_a_network_error() {
        let (_, raw) = feed(&[("message_start", json!({"message":{"role":"assistant"}}))]);
        assert_eq!(raw.unwrap_err().code, ProviderErrorCode::Network);
    }

    #[test]
    fn an_error_event_maps_to_its_code() {
        let (_, raw) = feed(&[(
            "error",
            json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
        )]);
        let err = raw.unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (ProviderErrorCode::Unavailable, "Overloaded")
        );
    }

    #[test]
    fn the_request_merges_roles_and_pairs_results() {
        let messages = vec![
            Message::User("go".into()),
            Message::Assistant(AssistantMessage {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "t1".into(),
                    provider_name: "task__finish".into(),
                    arguments: serde_json::from_str(r#"{"summary":"s"}"#).unwrap(),
                }],
                stop: StopReason::ToolUse,
            }),
            Message::ToolResults(vec![ToolResultMessage {
                call_id: "t1".into(),
                content: "{}".into(),
                is_error: false,
            }]),
            Message::User("again".into()),
        ];
        let spec = request(&RequestParts {
            base_url: "http://h/",
            api_key: "k",
            model: "m",
            max_tokens: 100,
            system: "sys",
            messages: &messages,
            tools: &[],
        });
        assert_eq!(spec.url, "http://h/v1/messages");
        assert_eq!(
            spec.body,
            json!({
                "model": "m", "max_tokens": 100, "stream": true,
                "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "go"}]},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "task__finish", "input": {"summary": "s"}}]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "{}", "is_error": false},
                        {"type": "text", "text": "again", "cache_control": {"type": "ephemeral"}}
                    ]}
                ]
            })
        );
    }
}
