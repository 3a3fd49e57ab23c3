//! A model provider on 127.0.0.1 for the window's tests: it answers in
//! the OpenAI-compatible or Anthropic wire format from a script and keeps
//! what it was sent.
#![expect(
    clippy::unwrap_used,
    reason = "test support: a loopback socket that cannot be made fails the test"
)]

/// A request the loopback provider received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: std::collections::BTreeMap<String, String>,
    pub body: String,
}

/// One scripted answer of the loopback provider.
#[derive(Debug, Clone)]
pub enum Answer {
    /// An event stream of these `data:` payloads.
    Sse(Vec<String>),
    /// An event stream of named events: (`event:`, `data:`).
    Events(Vec<(String, String)>),
    /// A status with a JSON body.
    Json(u16, String),
}

/// A provider on 127.0.0.1 speaking HTTP/1.1, answering requests in
/// order from its script (a request past the script gets a 500 saying so).
pub struct Loopback {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    pub seen: std::sync::Arc<std::sync::Mutex<Vec<Seen>>>,
}

impl Loopback {
    pub fn start(script: Vec<Answer>) -> Self {
        use std::io::{BufRead as _, BufReader, Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = std::sync::Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut script = script.into_iter();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let mut parts = line.split_whitespace();
                let (method, path) = (
                    parts.next().unwrap_or_default().to_owned(),
                    parts.next().unwrap_or_default().to_owned(),
                );
                let mut headers = std::collections::BTreeMap::new();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':') {
                        headers.insert(k.trim().to_lowercase(), v.trim().to_owned());
                    }
                }
                let length = headers
                    .get("content-length")
                    .and_then(|l| l.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                log.lock().unwrap().push(Seen {
                    method,
                    path,
                    headers,
                    body: String::from_utf8_lossy(&body).into_owned(),
                });
                let reply = match script.next() {
                    Some(Answer::Sse(events)) => {
                        let mut out = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n".to_owned();
                        for e in events {
                            let _ =
                                std::fmt::Write::write_fmt(&mut out, format_args!("data: {e}\n\n"));
                        }
                        out
                    }
                    Some(Answer::Events(events)) => {
                        let mut out = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n".to_owned();
                        for (name, data) in events {
                            let _ = std::fmt::Write::write_fmt(
                                &mut out,
                                format_args!("event: {name}\ndata: {data}\n\n"),
                            );
                        }
                        out
                    }
                    Some(Answer::Json(code, body)) => format!(
                        "HTTP/1.1 {code} Scripted\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    ),
                    None => {
                        let body = r#"{"error":{"message":"past the script"}}"#;
                        format!(
                            "HTTP/1.1 500 Past\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    }
                };
                let _ = stream.write_all(reply.as_bytes());
                let _ = stream.flush();
            }
        });
        Self { base_url, seen }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The requests received, each as "METHOD path".
    pub fn requests(&self) -> Vec<String> {
        self.seen()
            .iter()
            .map(|s| format!("{} {}", s.method, s.path))
            .collect()
    }
}

/// `openai_answer` counting `prompt_tokens` for the request.
pub fn openai_answer_counting(
    text: &str,
    calls: &[(&str, &str, &str)],
    prompt_tokens: u64,
) -> Answer {
    match openai_answer(text, calls) {
        Answer::Sse(events) => Answer::Sse(
            events
                .into_iter()
                .map(|e| {
                    e.replace(
                        r#""prompt_tokens":1200"#,
                        &format!(r#""prompt_tokens":{prompt_tokens}"#),
                    )
                })
                .collect(),
        ),
        other => other,
    }
}

/// An OpenAI-compatible streamed answer: `text`, then tool `calls`
/// (id, provider name, JSON arguments), then its token counts (1,200 in,
/// 30 out); it ends the turn when there are no calls.
pub fn openai_answer(text: &str, calls: &[(&str, &str, &str)]) -> Answer {
    use serde_json::{Value, json};
    let chunk = |delta: Value, finish: Value| {
        json!({"id":"c1","object":"chat.completion.chunk","model":"m",
               "choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
        .to_string()
    };
    let mut out = vec![chunk(json!({"role":"assistant","content":""}), Value::Null)];
    if !text.is_empty() {
        out.push(chunk(json!({ "content": text }), Value::Null));
    }
    for (i, (id, name, args)) in calls.iter().enumerate() {
        out.push(chunk(
            json!({"tool_calls":[{"index":i,"id":id,"type":"function","function":{"name":name,"arguments":args}}]}),
            Value::Null,
        ));
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push(chunk(json!({}), json!(finish)));
    // The counts OpenAI sends last when asked (`stream_options`).
    out.push(
        json!({"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],
               "usage":{"prompt_tokens":1200,"completion_tokens":30,"total_tokens":1230}})
        .to_string(),
    );
    out.push("[DONE]".to_owned());
    Answer::Sse(out)
}

/// An Anthropic streamed answer: `text`, then tool `calls` (id, provider
/// name, JSON arguments), with its token counts (900 in, 20 out); it ends
/// the turn when there are no calls.
pub fn anthropic_answer(text: &str, calls: &[(&str, &str, &str)]) -> Answer {
    use serde_json::json;
    let mut out = vec![(
        "message_start",
        json!({"type":"message_start","message":{"role":"assistant","content":[],
               "usage":{"input_tokens":900,"output_tokens":1}}}),
    )];
    let mut index = 0;
    if !text.is_empty() {
        out.push((
            "content_block_start",
            json!({"index":index,"content_block":{"type":"text","text":""}}),
        ));
        out.push((
            "content_block_delta",
            json!({"index":index,"delta":{"type":"text_delta","text":text}}),
        ));
        out.push(("content_block_stop", json!({ "index": index })));
        index += 1;
    }
    for (id, name, args) in calls {
        out.push((
            "content_block_start",
            json!({"index":index,"content_block":{"type":"tool_use","id":id,"name":name,"input":{}}}),
        ));
        out.push((
            "content_block_delta",
            json!({"index":index,"delta":{"type":"input_json_delta","partial_json":args}}),
        ));
        out.push(("content_block_stop", json!({ "index": index })));
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.push((
        "message_delta",
        json!({"delta":{"stop_reason":stop},"usage":{"output_tokens":20}}),
    ));
    out.push(("message_stop", json!({})));
    Answer::Events(
        out.into_iter()
            .map(|(name, data)| (name.to_owned(), data.to_string()))
            .collect(),
    )
}
