//! OpenAI-compatible Chat Completions — a protocol, not a vendor: `OpenAI`,
//! `OpenRouter`, Ollama, LM Studio, vLLM, Groq, … `Authorization: Bearer`,
//! `tools` of type function, streamed `tool_calls` deltas.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{HttpRequestSpec, StreamDecoder, StreamDelta, error_message, parse_data};
use crate::conversation::{Message, RawAssistant, RawToolCall, json_kind};
use crate::error::{ProviderError, ProviderErrorCode};

/// `OpenRouter`'s data policy, sent as provider routing options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataPolicy {
    /// Any provider, including ones that may keep or train on prompts.
    #[default]
    Allow,
    /// Only providers that do not collect data.
    Deny,
    /// Only zero-data-retention endpoints.
    Zdr,
}

/// Options only some servers understand; each is sent only when set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerOptions {
    /// `OpenRouter`: `provider` routing options for the data policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_policy: Option<DataPolicy>,
    /// Ollama: the context size (`options.num_ctx`). Ollama's small default
    /// silently truncates long tool-calling conversations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_size: Option<u32>,
    /// `max_tokens`, when the server needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Ask for the token counts at the end of the stream
    /// (`stream_options.include_usage`; not every compatible server takes
    /// the field, so only where it is known to).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_usage: bool,
}

/// What one request carries.
#[derive(Debug, Clone, Copy)]
pub struct RequestParts<'a> {
    pub base_url: &'a str,
    /// `None` for local servers that need no key.
    pub api_key: Option<&'a str>,
    pub model: &'a str,
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [Value],
    pub options: ServerOptions,
}

fn auth(api_key: Option<&str>) -> Vec<(&'static str, String)> {
    api_key
        .map(|k| vec![("authorization", format!("Bearer {k}"))])
        .unwrap_or_default()
}

/// Encodes a streaming chat completion request.
pub fn request(parts: &RequestParts<'_>) -> HttpRequestSpec {
    let mut messages = vec![json!({"role": "system", "content": parts.system})];
    for message in parts.messages {
        match message {
            Message::User(text) => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant(a) => {
                let content = if a.text.is_empty() {
                    Value::Null
                } else {
                    Value::String(a.text.clone())
                };
                let mut m = json!({"role": "assistant", "content": content});
                if !a.tool_calls.is_empty() {
                    m["tool_calls"] = a
                        .tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id, "type": "function",
                                "function": {
                                    "name": c.provider_name,
                                    "arguments": Value::Object(c.arguments.clone()).to_string()
                                }
                            })
                        })
                        .collect();
                }
                messages.push(m);
            }
            Message::ToolResults(results) => {
                for r in results {
                    messages.push(
                        json!({"role": "tool", "tool_call_id": r.call_id, "content": r.content}),
                    );
                }
            }
        }
    }
    let mut body = json!({"model": parts.model, "messages": messages, "stream": true});
    if parts.options.include_usage {
        body["stream_options"] = json!({"include_usage": true});
    }
    if !parts.tools.is_empty() {
        body["tools"] = Value::Array(parts.tools.to_vec());
    }
    match parts.options.data_policy {
        None => {}
        Some(DataPolicy::Allow) => body["provider"] = json!({"data_collection": "allow"}),
        Some(DataPolicy::Deny) => body["provider"] = json!({"data_collection": "deny"}),
        Some(DataPolicy::Zdr) => {
            body["provider"] = json!({"data_collection": "deny", "zdr": true});
        }
    }
    if let Some(n) = parts.options.context_size {
        body["options"] = json!({"num_ctx": n});
    }
    if let Some(n) = parts.options.max_tokens {
        body["max_tokens"] = json!(n);
    }
    HttpRequestSpec {
        url: format!("{}/chat/completions", parts.base_url.trim_end_matches('/')),
        headers: auth(parts.api_key),
        body,
    }
}

/// `GET {base_url}/models` (`OpenRouter`'s list includes capabilities and prices).
pub fn models_request(base_url: &str, api_key: Option<&str>) -> HttpRequestSpec {
    HttpRequestSpec {
        url: format!("{}/models", base_url.trim_end_matches('/')),
        headers: auth(api_key),
        body: Value::Null,
    }
}

/// A model of an `OpenRouter` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogModel {
    pub id: String,
    pub name: String,
    pub free: bool,
}

fn is_zero_price(v: Option<&Value>) -> bool {
    match v {
        Some(Value::String(s)) => s.parse::<f64>().is_ok_and(|p| p == 0.0),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|p| p == 0.0),
        _ => false,
    }
}

/// The tool-capable models of an `OpenRouter` `/models` body; with
/// `free_only`, only those whose prompt and completion prices are zero.
pub fn decode_openrouter_models(
    body: &Value,
    free_only: bool,
) -> Result<Vec<CatalogModel>, ProviderError> {
    let data = body
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::invalid_response("the model list has no data array"))?;
    Ok(data
        .iter()
        .filter(|m| {
            m.get("supported_parameters")
                .and_then(Value::as_array)
                .is_some_and(|p| p.iter().any(|p| p.as_str() == Some("tools")))
        })
        .filter_map(|m| {
            let id = m.get("id").and_then(Value::as_str)?.to_owned();
            let free = is_zero_price(m.pointer("/pricing/prompt"))
                && is_zero_price(m.pointer("/pricing/completion"));
            let name = m
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or(&id)
                .to_owned();
            (!free_only || free).then_some(CatalogModel { id, name, free })
        })
        .collect())
}

/// Model ids of an OpenAI-style `/models` body (`data[].id`).
pub fn decode_models(body: &Value) -> Result<Vec<String>, ProviderError> {
    super::anthropic::decode_models(body)
}

/// Model names of Ollama's `GET /api/tags`.
pub fn decode_ollama_tags(body: &Value) -> Result<Vec<String>, ProviderError> {
    let models = body
        .get("models")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::invalid_response("the Ollama tag list has no models"))?;
    Ok(models
        .iter()
        .filter_map(|m| {
            m.get("name")
                .or_else(|| m.get("model"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect())
}

#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    kind: Option<String>,
    name: String,
    arguments: String,
}

/// Decodes a chat completion SSE stream (`data: {chunk}` … `data: [DONE]`).
#[derive(Debug, Default)]
pub struct Decoder {
    role: Option<String>,
    text: String,
    invalid_content: Option<String>,
    calls: BTreeMap<u64, PartialCall>,
    finish_reason: Option<String>,
    usage: Option<crate::conversation::Usage>,
    model: Option<String>,
    done: bool,
}

impl Decoder {
    fn on_chunk(&mut self, chunk: &Value) -> Result<Vec<StreamDelta>, ProviderError> {
        if chunk.get("error").is_some() {
            return Err(stream_error(chunk));
        }
        let mut out = Vec::new();
        if let Some(usage) = chunk
            .get("usage")
            .and_then(crate::conversation::Usage::of_openai)
        {
            self.usage = Some(usage);
        }
        if self.model.is_none() {
            self.model = model_of(chunk);
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            // Usage-only and keep-alive chunks carry no choice.
            return Ok(out);
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(out);
        };
        if let Some(role) = delta.get("role").and_then(Value::as_str) {
            self.role = Some(role.to_owned());
        }
        match delta.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => {
                if !s.is_empty() {
                    self.text.push_str(s);
                    out.push(StreamDelta::Text(s.clone()));
                }
            }
            Some(other) => self.invalid_content = Some(json_kind(other).to_owned()),
        }
        for key in ["reasoning", "reasoning_content"] {
            if let Some(Value::String(t)) = delta.get(key)
                && !t.is_empty()
            {
                out.push(StreamDelta::Thought(t.clone()));
            }
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (position, call) in calls.iter().enumerate() {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(position as u64);
                let entry = self.calls.entry(index).or_default();
                let was_named = !entry.name.is_empty();
                if let Some(id) = call.get("id").and_then(Value::as_str)
                    && !id.is_empty()
                    && entry.id.is_none()
                {
                    entry.id = Some(id.to_owned());
                }
                if let Some(kind) = call.get("type").and_then(Value::as_str) {
                    entry.kind = Some(kind.to_owned());
                }
                let function = call.get("function").unwrap_or(&Value::Null);
                if let Some(name) = function.get("name").and_then(Value::as_str)
                    && entry.name != name
                {
                    // Servers that resend the whole name each chunk are not
                    // doubled; servers that stream it in pieces are joined.
                    entry.name.push_str(name);
                }
                match function.get("arguments") {
                    Some(Value::String(piece)) => entry.arguments.push_str(piece),
                    // Some servers send the arguments as an object in one piece.
                    Some(v @ Value::Object(_)) => entry.arguments = v.to_string(),
                    Some(Value::Null) | None => {}
                    Some(other) => entry.arguments.push_str(&other.to_string()),
                }
                if !was_named && !entry.name.is_empty() {
                    out.push(StreamDelta::ToolCallStarted {
                        id: entry.id.clone().unwrap_or_default(),
                        name: entry.name.clone(),
                    });
                }
            }
        }
        Ok(out)
    }
}

fn stream_error(body: &Value) -> ProviderError {
    let status = body.pointer("/error/code").and_then(|c| {
        c.as_u64()
            .or_else(|| c.as_str().and_then(|s| s.parse().ok()))
    });
    let code = match status {
        Some(401 | 403) => ProviderErrorCode::Auth,
        Some(429) => ProviderErrorCode::RateLimited,
        Some(500..=599) => ProviderErrorCode::Unavailable,
        _ => ProviderErrorCode::InvalidResponse,
    };
    ProviderError::new(
        code,
        error_message(body).unwrap_or_else(|| "the provider reported an error".to_owned()),
    )
}

impl StreamDecoder for Decoder {
    fn on_event(&mut self, _event: &str, data: &str) -> Result<Vec<StreamDelta>, ProviderError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(Vec::new());
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        self.on_chunk(&parse_data(data)?)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(self: Box<Self>) -> Result<RawAssistant, ProviderError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(ProviderError::new(
                ProviderErrorCode::Network,
                "the response stream ended before a finish reason or [DONE]",
            ));
        }
        Ok(RawAssistant {
            role: self.role,
            text: self.text,
            invalid_content: self.invalid_content,
            tool_calls: self
                .calls
                .into_values()
                .map(|c| RawToolCall {
                    id: c.id,
                    kind: c.kind.or_else(|| Some("function".to_owned())),
                    name: Some(c.name),
                    arguments: c.arguments,
                })
                .collect(),
            stop_reason: self.finish_reason,
            usage: self.usage,
            model: self.model,
        })
    }
}

/// The `model` a chunk or body names (empty names none).
fn model_of(value: &Value) -> Option<String> {
    value
        .get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.trim().is_empty())
        .map(str::to_owned)
}

/// Decodes a whole (non-streamed) chat completion body — some compatible
/// servers ignore `stream: true`.
pub fn decode_body(body: &Value) -> Result<RawAssistant, ProviderError> {
    if body.get("error").is_some() {
        return Err(stream_error(body));
    }
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| ProviderError::invalid_response("the response has no choices"))?;
    let message = choice
        .get("message")
        .ok_or_else(|| ProviderError::invalid_response("the choice has no message"))?;
    let mut raw = RawAssistant {
        role: message
            .get("role")
            .and_then(Value::as_str)
            .map(str::to_owned),
        stop_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        usage: body
            .get("usage")
            .and_then(crate::conversation::Usage::of_openai),
        model: model_of(body),
        ..RawAssistant::default()
    };
    match message.get("content") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => raw.text.clone_from(s),
        Some(other) => raw.invalid_content = Some(json_kind(other).to_owned()),
    }
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for call in calls {
            let function = call.get("function").unwrap_or(&Value::Null);
            raw.tool_calls.push(RawToolCall {
                id: call.get("id").and_then(Value::as_str).map(str::to_owned),
                kind: call.get("type").and_then(Value::as_str).map(str::to_owned),
                name: function
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                arguments: match function.get("arguments") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                },
            });
        }
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn feed(chunks: &[&str]) -> Result<RawAssistant, ProviderError> {
        let mut d = Box::new(Decoder::default());
        for c in chunks {
            d.on_event("message", c)?;
        }
        d.finish()
    }

    #[test]
    fn streamed_tool_call_deltas_are_joined_by_index() {
        let raw = feed(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"workspace__readFile","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"workspace__getStatus","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.rs\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ])
        .unwrap();
        assert_eq!(
            raw.tool_calls,
            vec![
                RawToolCall {
                    id: Some("call_a".into()),
                    kind: Some("function".into()),
                    name: Some("workspace__readFile".into()),
                    arguments: r#"{"path":"a.rs"}"#.into()
                },
                RawToolCall {
                    id: Some("call_b".into()),
                    kind: Some("function".into()),
                    name: Some("workspace__getStatus".into()),
                    arguments: "{}".into()
                },
            ]
        );
        assert_eq!(raw.stop_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn a_stream_without_an_end_is_a_network_error() {
        let err =
            feed(&[r#"{"choices":[{"delta":{"role":"assistant","content":"hi"}}]}"#]).unwrap_err();
        assert_eq!(err.code, ProviderErrorCode::Network);
    }

    #[test]
    fn an_error_chunk_is_surfaced_with_its_status() {
        let err = feed(&[r#"{"error":{"code":429,"message":"slow down"}}"#]).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (ProviderErrorCode::RateLimited, "slow down")
        );
    }

    #[test]
    fn routing_and_context_options_are_sent_only_when_set() {
        let base = RequestParts {
            base_url: "http://h/v1",
            api_key: None,
            model: "m",
            system: "s",
            messages: &[],
            tools: &[],
            options: ServerOptions::default(),
        };
        let plain = request(&base);
        assert_eq!(
            plain.body,
            json!({"model":"m","stream":true,"messages":[{"role":"system","content":"s"}]})
        );
        assert!(plain.headers.is_empty());
        let tuned = request(&RequestParts {
            api_key: Some("k"),
            options: ServerOptions {
                data_policy: Some(DataPolicy::Zdr),
                context_size: Some(32768),
                max_tokens: None,
                include_usage: true,
            },
            ..base
        });
        assert_eq!(
            tuned.body["provider"],
            json!({"data_collection":"deny","zdr":true})
        );
        assert_eq!(tuned.body["options"], json!({"num_ctx":32768}));
        assert_eq!(tuned.body["stream_options"], json!({"include_usage": true}));
        assert_eq!(
            tuned.headers,
            vec![("authorization", "Bearer k".to_owned())]
        );
    }

    #[test]
    fn openrouter_lists_only_tool_capable_models_and_filters_free_ones() {
        let body = json!({"data":[
            {"id":"a/free","name":"A","supported_parameters":["tools"],"pricing":{"prompt":"0","completion":"0"}},
            {"id":"b/paid","name":"B","supported_parameters":["tools","temperature"],"pricing":{"prompt":"0.000001","completion":"0.000002"}},
            {"id":"c/notools","name":"C","supported_parameters":["temperature"],"pricing":{"prompt":"0","completion":"0"}}
        ]});
        let all: Vec<String> = decode_openrouter_models(&body, false)
            .unwrap()
            .into_iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(all, vec!["a/free", "b/paid"]);
        assert_eq!(
            decode_openrouter_models(&body, true).unwrap(),
            vec![CatalogModel {
                id: "a/free".into(),
                name: "A".into(),
                free: true
            }]
        );
    }
}
