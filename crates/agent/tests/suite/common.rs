//! A scripted loopback provider, SSE builders, a recording tool registry.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use cocode_agent::{
    BuiltInRuntime, LlmProviderRegistry, LoopLimits, ProviderConfig, RetryPolicy, Transport,
};
use cocode_core::agent::{
    AgentEvent, AgentRuntime, AgentSession, SessionRequest, SessionTarget, TurnEndReason, UserTurn,
};
use cocode_core::services::{CredentialVault, Secret, VaultError};
use cocode_core::{ProviderId, SessionId, TaskId};
use cocode_tool_protocol::catalog::{self, workspace_tools};
use cocode_tool_protocol::{
    ApprovalDecision, ApprovalEvent, ApprovalQueue, RegistryOptions, ToolError, ToolOutput,
    ToolRegistry,
};
use futures_util::StreamExt;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::Frame;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// One scripted reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// An event stream: (event name, data) pairs; `hang` keeps the
    /// connection open after the last event without ending the body.
    Sse {
        events: Vec<(Option<String>, String)>,
        hang: bool,
    },
    /// Any status with headers and a body.
    Status {
        code: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
}

impl Reply {
    pub fn sse(events: Vec<(Option<String>, String)>) -> Self {
        Self::Sse {
            events,
            hang: false,
        }
    }

    pub fn json(code: u16, body: &Value) -> Self {
        Self::Status {
            code,
            headers: vec![("content-type", "application/json".into())],
            body: body.to_string(),
        }
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Captured {
    pub method: String,
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: Value,
    /// The body's length on the wire.
    pub bytes: usize,
    pub at: Instant,
}

/// Makes the reply to one request.
pub type Responder = dyn Fn(&Captured) -> Option<Reply> + Send + Sync;

/// The loopback provider.
#[derive(Debug, Clone)]
pub struct MockServer {
    pub base_url: String,
    pub requests: Arc<Mutex<Vec<Captured>>>,
}

impl MockServer {
    /// Serves `script` in order; a request beyond the script gets a 500
    /// whose body says so (and the test sees the extra request).
    pub async fn start(script: Vec<Reply>) -> Self {
        let script = Mutex::new(script.into_iter());
        Self::start_with(Arc::new(move |_: &Captured| script.lock().unwrap().next())).await
    }

    /// Answers each request with what `responder` makes of it (`None`: a
    /// 500 saying the script has no more replies).
    pub async fn start_with(responder: Arc<Responder>) -> Self {
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = responder;
        let captured = Arc::clone(&requests);
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let script = Arc::clone(&script);
                let captured = Arc::clone(&captured);
                tokio::spawn(async move {
                    let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                        let script = Arc::clone(&script);
                        let captured = Arc::clone(&captured);
                        async move {
                            let method = req.method().to_string();
                            let path = req
                                .uri()
                                .path_and_query()
                                .map(ToString::to_string)
                                .unwrap_or_default();
                            let headers = req
                                .headers()
                                .iter()
                                .map(|(k, v)| {
                                    (k.to_string(), v.to_str().unwrap_or_default().to_owned())
                                })
                                .collect();
                            let bytes = req.into_body().collect().await.unwrap().to_bytes();
                            let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                            let request = Captured {
                                method,
                                path,
                                headers,
                                body,
                                bytes: bytes.len(),
                                at: Instant::now(),
                            };
                            let reply = script(&request);
                            captured.lock().unwrap().push(request);
                            Ok::<_, Infallible>(respond(reply))
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self {
            base_url: format!("http://{addr}"),
            requests,
        }
    }

    pub fn requests(&self) -> Vec<Captured> {
        self.requests.lock().unwrap().clone()
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn respond(reply: Option<Reply>) -> Response<Body> {
    match reply {
        None => Response::builder()
            .status(500)
            .body(Full::new(Bytes::from("the script has no more replies")).boxed())
            .unwrap(),
        Some(Reply::Status {
            code,
            headers,
            body,
        }) => {
            let mut r = Response::builder().status(code);
            for (k, v) in headers {
                r = r.header(k, v);
            }
            r.body(Full::new(Bytes::from(body)).boxed()).unwrap()
        }
        Some(Reply::Sse { events, hang }) => {
            let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
            for (name, data) in events {
                let mut frame = String::new();
                if let Some(name) = name {
                    let _ = writeln!(frame, "event: {name}");
                }
                for line in data.lines() {
                    let _ = writeln!(frame, "data: {line}");
                }
                frame.push('\n');
                tx.send(Bytes::from(frame)).unwrap();
            }
            if hang {
                // Keep the sender alive forever: the body never ends.
                std::mem::forget(tx);
            }
            let stream = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv()
                    .await
                    .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
            });
            Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(BodyExt::boxed(StreamBody::new(stream)))
                .unwrap()
        }
    }
}

/// Anthropic SSE for one response: optional text, then `tool_use` blocks
/// (id, provider tool name, arguments JSON text).
pub fn anthropic_sse(text: &str, calls: &[(&str, &str, &str)]) -> Vec<(Option<String>, String)> {
    let mut events = vec![(
        "message_start",
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null}}),
    )];
    let mut index = 0;
    if !text.is_empty() {
        events.push((
            "content_block_start",
            json!({"type":"content_block_start","index":index,"content_block":{"type":"text","text":""}}),
        ));
        // Split the text in two deltas, as a real stream would.
        let mid = text
            .char_indices()
            .nth(text.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        for piece in [&text[..mid], &text[mid..]] {
            events.push((
                "content_block_delta",
                json!({"type":"content_block_delta","index":index,"delta":{"type":"text_delta","text":piece}}),
            ));
        }
        events.push((
            "content_block_stop",
            json!({"type":"content_block_stop","index":index}),
        ));
        index += 1;
    }
    for (id, name, args) in calls {
        events.push((
            "content_block_start",
            json!({"type":"content_block_start","index":index,"content_block":{"type":"tool_use","id":id,"name":name,"input":{}}}),
        ));
        let mid = args.len() / 2;
        for piece in [&args[..mid], &args[mid..]] {
            events.push((
                "content_block_delta",
                json!({"type":"content_block_delta","index":index,"delta":{"type":"input_json_delta","partial_json":piece}}),
            ));
        }
        events.push((
            "content_block_stop",
            json!({"type":"content_block_stop","index":index}),
        ));
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    events.push((
        "message_delta",
        json!({"type":"message_delta","delta":{"stop_reason":stop},"usage":{"output_tokens":5}}),
    ));
    events.push(("message_stop", json!({"type":"message_stop"})));
    events
        .into_iter()
        .map(|(n, d)| (Some(n.to_owned()), d.to_string()))
        .collect()
}

/// `OpenAI` chat completion chunks for one response.
pub fn openai_sse(text: &str, calls: &[(&str, &str, &str)]) -> Vec<(Option<String>, String)> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id":"c1","object":"chat.completion.chunk","model":"m",
               "choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
        .to_string()
    };
    let mut out = vec![chunk(json!({"role":"assistant","content":""}), Value::Null)];
    if !text.is_empty() {
        let mid = text
            .char_indices()
            .nth(text.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        for piece in [&text[..mid], &text[mid..]] {
            out.push(chunk(json!({"content": piece}), Value::Null));
        }
    }
    for (i, (id, name, args)) in calls.iter().enumerate() {
        out.push(chunk(
            json!({"tool_calls":[{"index":i,"id":id,"type":"function","function":{"name":name,"arguments":""}}]}),
            Value::Null,
        ));
        let mid = args.len() / 2;
        for piece in [&args[..mid], &args[mid..]] {
            out.push(chunk(
                json!({"tool_calls":[{"index":i,"function":{"arguments":piece}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push(chunk(json!({}), json!(finish)));
    out.push("[DONE]".to_owned());
    out.into_iter().map(|d| (None, d)).collect()
}

/// Keys in memory.
#[derive(Debug, Default)]
pub struct MemoryVault(pub Mutex<BTreeMap<String, String>>);

impl CredentialVault for MemoryVault {
    fn get(&self, provider: &ProviderId) -> Result<Option<Secret>, VaultError> {
        Ok(self
            .0
            .lock()
            .unwrap()
            .get(provider.as_str())
            .map(Secret::new))
    }
    fn set(&self, provider: &ProviderId, secret: &Secret) -> Result<(), VaultError> {
        self.0
            .lock()
            .unwrap()
            .insert(provider.as_str().to_owned(), secret.expose().to_owned());
        Ok(())
    }
    fn delete(&self, provider: &ProviderId) -> Result<(), VaultError> {
        self.0.lock().unwrap().remove(provider.as_str());
        Ok(())
    }
}

pub const REVISION: &str =
    "sha256:2222222222222222222222222222222222222222222222222222222222222222";

/// A tool call a handler saw.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub tool: String,
    pub call_id: String,
    pub arguments: Value,
    pub source: cocode_tool_protocol::ToolSource,
    pub session_id: String,
}

/// The workspace catalog with recording handlers that answer like the
/// app's would (shapes from the catalog's output schemas).
pub fn recording_registry() -> (Arc<ToolRegistry>, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut registry =
        ToolRegistry::new(RegistryOptions::default(), Arc::new(ApprovalQueue::new()));
    for def in workspace_tools() {
        let name = def.name.clone();
        let log = Arc::clone(&seen);
        registry
            .register(
                def,
                Arc::new(
                    move |args: serde_json::Map<String, Value>,
                          cx: cocode_tool_protocol::HandlerContext| {
                        let name = name.clone();
                        let log = Arc::clone(&log);
                        async move {
                            log.lock().unwrap().push(Seen {
                                tool: name.clone(),
                                call_id: cx.call_id.clone(),
                                arguments: Value::Object(args.clone()),
                                source: cx.ctx.source,
                                session_id: cx.ctx.session_id.clone(),
                            });
                            answer(&name, &args)
                        }
                    },
                ),
            )
            .unwrap();
    }
    (Arc::new(registry), seen)
}

fn answer(tool: &str, args: &serde_json::Map<String, Value>) -> Result<ToolOutput, ToolError> {
    let path = args.get("path").and_then(Value::as_str).unwrap_or_default();
    let value = match tool {
        catalog::GET_STATUS => json!({"root": "demo", "heldPaths": [], "lockedPaths": [],
            "projects": [{"kind": "cargo", "path": ".", "testCommand": ["cargo", "test"]}]}),
        catalog::LIST_FILES => json!({"files": [{"path": "Cargo.toml", "size": 10},
            {"path": "src/lib.rs", "size": 20}]}),
        // A file under `big/` is 6,000 bytes: reading many fills a context.
        catalog::READ_FILE if path.starts_with("big/") => {
            let line = format!("// {path}: a line of a large file to fill the context\n");
            let content = line.repeat(6_000 / line.len() + 1)[..6_000].to_owned();
            json!({"path": path, "content": content, "revision": REVISION,
                "startLine": 1, "endLine": 100, "totalLines": 100})
        }
        catalog::READ_FILE => json!({"path": path, "content": "fn a() {}\n", "revision": REVISION,
            "startLine": 1, "endLine": 1, "totalLines": 1}),
        catalog::TERMINAL_RUN => {
            json!({"exitCode": 0, "output": "ok\n", "truncated": false, "timedOut": false})
        }
        catalog::APPLY_PATCH | catalog::WRITE_FILE | catalog::CREATE_FILE => {
            json!({"path": path, "outcome": "applied", "revision": REVISION})
        }
        _ => json!({"ok": true}),
    };
    ToolOutput::json(&value)
}

/// Answers every approval request with `decision` and records the tools asked about.
pub fn auto_approve(
    registry: &Arc<ToolRegistry>,
    decision: ApprovalDecision,
) -> Arc<Mutex<Vec<cocode_tool_protocol::ApprovalSnapshot>>> {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    let queue = Arc::clone(registry.approvals());
    let mut events = queue.subscribe();
    tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            if let ApprovalEvent::Requested(snapshot) = event {
                log.lock().unwrap().push(snapshot.clone());
                queue.resolve(snapshot.id, decision);
            }
        }
    });
    asked
}

pub fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        max_retry_after: Duration::from_secs(5),
        request_timeout: Duration::from_secs(10),
    }
}

/// A runtime whose Anthropic and `OpenAI` entries point at `base_url`.
pub fn runtime(
    base_url: &str,
    tools: Arc<ToolRegistry>,
    limits: LoopLimits,
    retry: RetryPolicy,
) -> BuiltInRuntime {
    runtime_with_window(base_url, tools, limits, retry, None)
}

/// `runtime` with both providers' context window set to `window` tokens.
pub fn runtime_with_window(
    base_url: &str,
    tools: Arc<ToolRegistry>,
    limits: LoopLimits,
    retry: RetryPolicy,
    window: Option<u64>,
) -> BuiltInRuntime {
    runtime_configured(base_url, tools, limits, retry, |p| {
        p.context_window = window;
        if window.is_some() && p.adapter == cocode_agent::AdapterKind::Anthropic {
            // A small model's window with room for a small answer.
            p.max_tokens = 1_024;
        }
    })
}

/// `runtime` with both providers' entries changed by `configure`.
pub fn runtime_configured(
    base_url: &str,
    tools: Arc<ToolRegistry>,
    limits: LoopLimits,
    retry: RetryPolicy,
    configure: impl Fn(&mut ProviderConfig),
) -> BuiltInRuntime {
    let mut anthropic = ProviderConfig::anthropic();
    anthropic.base_url = Some(base_url.to_owned());
    configure(&mut anthropic);
    let mut openai = ProviderConfig::openai();
    openai.base_url = Some(format!("{base_url}/v1"));
    configure(&mut openai);
    let providers =
        LlmProviderRegistry::new(vec![ProviderConfig::local(), anthropic, openai]).unwrap();
    let vault = MemoryVault::default();
    vault
        .0
        .lock()
        .unwrap()
        .insert("anthropic".into(), "sk-ant-test".into());
    vault
        .0
        .lock()
        .unwrap()
        .insert("openai".into(), "sk-oai-test".into());
    BuiltInRuntime::new(
        Arc::new(providers),
        tools,
        Transport::new(retry).unwrap(),
        Arc::new(vault),
        limits,
    )
}

pub fn session_request(target: SessionTarget) -> SessionRequest {
    SessionRequest {
        task_id: TaskId::new("task-1").unwrap(),
        session_id: SessionId::new("session-1").unwrap(),
        workspace_root: std::path::PathBuf::from("/work/demo"),
        target,
        request_timeout: Duration::from_secs(30),
        instructions: cocode_core::agent::Instructions::default(),
    }
}

pub fn provider(id: &str, model: &str) -> SessionTarget {
    SessionTarget::Provider {
        provider: ProviderId::new(id).unwrap(),
        model: model.into(),
    }
}

/// Starts a session, sends one turn and collects events up to the end of
/// the run (`TurnEnded` or `Failed`).
pub async fn run_once(
    runtime: &BuiltInRuntime,
    target: SessionTarget,
    text: &str,
) -> (Vec<AgentEvent>, Box<dyn AgentSession>) {
    let mut session = runtime
        .start_session(session_request(target))
        .await
        .unwrap();
    let mut events = session.events();
    session.send(UserTurn { text: text.into() }).await.unwrap();
    let mut seen = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(30), events.next())
        .await
        .unwrap_or_else(|_| panic!("the run did not end within 30 s"))
    {
        let last = matches!(
            event,
            AgentEvent::TurnEnded { .. } | AgentEvent::Failed { .. }
        );
        seen.push(event);
        if last {
            break;
        }
    }
    (seen, session)
}

/// The last event: how the run ended.
pub fn ending(events: &[AgentEvent]) -> AgentEvent {
    events.last().cloned().unwrap()
}

pub fn turn_ended(reason: TurnEndReason) -> AgentEvent {
    AgentEvent::TurnEnded { reason }
}

pub fn failed_code(event: &AgentEvent) -> Option<&str> {
    match event {
        AgentEvent::Failed { code, .. } => Some(code),
        _ => None,
    }
}

/// Every tool result in a captured request pairs with a call made before it,
/// in either provider's format. Returns (call ids, result ids).
pub fn pairing(body: &Value) -> (Vec<String>, Vec<String>) {
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        if let Some(tool_calls) = message.get("tool_calls").and_then(Value::as_array) {
            calls.extend(
                tool_calls
                    .iter()
                    .map(|c| c["id"].as_str().unwrap().to_owned()),
            );
        }
        if message["role"] == "tool" {
            let id = message["tool_call_id"].as_str().unwrap().to_owned();
            assert!(calls.contains(&id), "result {id} before its call");
            results.push(id);
        }
        if let Some(blocks) = message.get("content").and_then(Value::as_array) {
            for b in blocks {
                if b["type"] == "tool_use" {
                    calls.push(b["id"].as_str().unwrap().to_owned());
                }
                if b["type"] == "tool_result" {
                    let id = b["tool_use_id"].as_str().unwrap().to_owned();
                    assert!(calls.contains(&id), "result {id} before its call");
                    results.push(id);
                }
            }
        }
    }
    (calls, results)
}

// A fake model with a small context window (compaction tests and bench).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

/// The fake model's count of a request's tokens: four bytes each.
pub fn counted(request: &Captured) -> u64 {
    request.bytes as u64 / 4
}

/// The provider's own error for a request over `limit`.
fn too_long(wire: Wire, limit: u64, tokens: u64) -> Reply {
    match wire {
        Wire::OpenAi => Reply::json(
            400,
            &json!({"error": {
                "message": format!("This model's maximum context length is {limit} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded"
            }}),
        ),
        Wire::Anthropic => Reply::json(
            400,
            &json!({"type": "error", "error": {
                "type": "invalid_request_error",
                "message": format!("prompt is too long: {tokens} tokens > {limit} maximum")
            }}),
        ),
    }
}

/// A streamed answer that reports `input` tokens, as both providers do.
pub fn streamed(wire: Wire, text: &str, calls: &[(&str, &str, &str)], input: u64) -> Reply {
    match wire {
        Wire::OpenAi => {
            let mut events = openai_sse(text, calls);
            let done = events.pop().unwrap();
            events.push((
                None,
                json!({"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],
                       "usage":{"prompt_tokens":input,"completion_tokens":5}})
                .to_string(),
            ));
            events.push(done);
            Reply::sse(events)
        }
        Wire::Anthropic => Reply::sse(
            anthropic_sse(text, calls)
                .into_iter()
                .map(|(n, d)| {
                    (
                        n,
                        d.replace(
                            r#""usage":{"output_tokens":5}"#,
                            &format!(r#""usage":{{"input_tokens":{input},"output_tokens":5}}"#),
                        ),
                    )
                })
                .collect(),
        ),
    }
}

fn tool(wire: Wire, name: &str) -> String {
    // Both projections spell `workspace.readFile` as `workspace__readFile`.
    let _ = wire;
    name.replace('.', "__")
}

/// Whether a request is the summary request (it offers no tools).
pub fn is_summary(request: &Captured) -> bool {
    request
        .body
        .get("tools")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
}

/// The fake model: over `limit` tokens it refuses with its own error; a
/// summary request gets a summary; the task's requests get, in turn,
/// `reads` reads of large files, then one patch, then `task.finish`.
pub fn fake_model(wire: Wire, limit: u64, reads: usize) -> Arc<Responder> {
    let turn = AtomicUsize::new(0);
    Arc::new(move |request: &Captured| {
        let tokens = counted(request);
        if tokens > limit {
            return Some(too_long(wire, limit, tokens));
        }
        if is_summary(request) {
            return Some(streamed(
                wire,
                "Goal: tidy the crate. Files: big/f*.rs read (revision sha256:2222…). State: reading done, patch next.",
                &[],
                tokens,
            ));
        }
        let k = turn.fetch_add(1, Ordering::SeqCst);
        let id = format!("call_{k}");
        Some(match k.cmp(&reads) {
            std::cmp::Ordering::Less => {
                let args = format!(r#"{{"path":"big/f{k}.rs"}}"#);
                streamed(
                    wire,
                    "",
                    &[(&id, &tool(wire, "workspace.readFile"), &args)],
                    tokens,
                )
            }
            std::cmp::Ordering::Equal => streamed(
                wire,
                "",
                &[(
                    &id,
                    &tool(wire, "workspace.applyPatch"),
                    r#"{"path":"src/lib.rs","search":"fn a() {}","replace":"fn a() -> u8 { 1 }"}"#,
                )],
                tokens,
            ),
            std::cmp::Ordering::Greater => streamed(
                wire,
                "",
                &[(&id, &tool(wire, "task.finish"), r#"{"summary":"tidied"}"#)],
                tokens,
            ),
        })
    })
}
