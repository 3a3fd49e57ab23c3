//! Provider wire formats: request encoding and response decoding.
//!
//! Decoders are pure: they take server-sent events (or a whole body) and
//! produce a [`RawAssistant`] plus the deltas to show while it streams. They
//! never judge the response — [`crate::conversation::validate`] does.

pub mod anthropic;
pub mod openai;

use serde_json::Value;

use crate::conversation::RawAssistant;
use crate::error::ProviderError;

/// Something to show while a response streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamDelta {
    Text(String),
    Thought(String),
    /// A tool call began (its arguments are still streaming).
    ToolCallStarted {
        id: String,
        name: String,
    },
}

/// An incremental decoder of one streamed response.
pub trait StreamDecoder: Send {
    /// Feeds one server-sent event (`event` is `message` when unnamed).
    fn on_event(&mut self, event: &str, data: &str) -> Result<Vec<StreamDelta>, ProviderError>;
    /// Whether the stream announced its own end (no more events expected).
    fn is_done(&self) -> bool;
    /// The whole response. Fails when the stream ended before the protocol's
    /// end marker (`PROVIDER_NETWORK`, so the request is sent again).
    fn finish(self: Box<Self>) -> Result<RawAssistant, ProviderError>;
}

/// An HTTP request ready for the transport. Header values may hold the API
/// key, so this type never prints them.
#[derive(Clone)]
pub struct HttpRequestSpec {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Value,
}

impl std::fmt::Debug for HttpRequestSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| *n).collect();
        f.debug_struct("HttpRequestSpec")
            .field("url", &self.url)
            .field("headers", &names)
            .finish_non_exhaustive()
    }
}

/// Parses one event's JSON data.
pub(crate) fn parse_data(data: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(data)
        .map_err(|e| ProviderError::invalid_response(format!("a streamed event is not JSON ({e})")))
}

/// The human-readable message inside a provider's error JSON, if any.
pub fn error_message(body: &Value) -> Option<String> {
    let error = body.get("error").unwrap_or(body);
    match error {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| o.get("error").and_then(Value::as_str).map(str::to_owned)),
        _ => None,
    }
}

/// A prefix of untrusted text, safe to put in a message.
pub fn snippet(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect();
    if text.chars().count() > 200 {
        format!("{clean}…")
    } else {
        clean
    }
}
