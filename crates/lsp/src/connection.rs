//! JSON-RPC with one server process: numbered requests with timeouts and
//! `$/cancelRequest`, notifications both ways, and answers to the requests
//! a server sends the client.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cocode_core::process::ProcessHandle;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};

use crate::error::LspError;
use crate::framing::{Decoder, encode};

type Reply = Result<Value, LspError>;
type Pending = Arc<Mutex<HashMap<i64, (String, oneshot::Sender<Reply>)>>>;

/// A notification from the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub method: String,
    pub params: Value,
}

/// How much of a server's stderr is kept for the reason it stopped.
const LOG_LIMIT: usize = 16 * 1024;

/// What cocode answers for one section of `workspace/configuration`
/// (`Value::Null`: the server's defaults).
pub type Settings = Arc<dyn Fn(&str) -> Value + Send + Sync>;

/// Requests from the server that the servers' state also hears of, as a
/// notification after they are answered: a server registering or dropping
/// pull diagnostics, or asking for its reports to be pulled again.
pub const HEARD_REQUESTS: [&str; 3] = [
    "client/registerCapability",
    "client/unregisterCapability",
    "workspace/diagnostic/refresh",
];

/// The requests a server sends the client, answered here: what cocode does
/// not offer is declined in the protocol's words, never left unanswered.
fn answer(
    method: &str,
    params: &Value,
    root_uri: &str,
    settings: &dyn Fn(&str) -> Value,
) -> Result<Value, (i64, String)> {
    match method {
        // One answer per asked section.
        "workspace/configuration" => Ok(Value::Array(
            params["items"]
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .map(|item| settings(item["section"].as_str().unwrap_or("")))
                        .collect()
                })
                .unwrap_or_default(),
        )),
        "workspace/workspaceFolders" => Ok(json!([{ "uri": root_uri, "name": "workspace" }])),
        "client/registerCapability"
        | "client/unregisterCapability"
        | "window/workDoneProgress/create"
        | "window/showMessageRequest"
        | "workspace/diagnostic/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/codeLens/refresh" => Ok(Value::Null),
        "workspace/applyEdit" => Ok(json!({
            "applied": false,
            "failureReason": "cocode applies a server's edits only when the person accepts them in the editor"
        })),
        _ => Err((-32601, format!("cocode does not handle {method}"))),
    }
}

/// How long the end of a server waits for the rest of its stderr.
const STDERR_DRAIN: Duration = Duration::from_secs(2);

/// Most notifications queued for the reader before the server's output
/// is read no further (a server publishing diagnostics for a whole tree
/// waits in its pipe rather than filling memory).
const NOTIFICATION_QUEUE: usize = 256;

/// The client side of one server's connection.
pub struct Connection {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Pending,
    next_id: AtomicI64,
    /// `Some(reason)` once the server's output ended.
    ended: watch::Receiver<Option<String>>,
    kill: watch::Sender<bool>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("ended", &*self.ended.borrow())
            .finish_non_exhaustive()
    }
}

impl Drop for Connection {
    /// Nobody can talk to the server any more: its process group ends.
    fn drop(&mut self) {
        let _ = self.kill.send(true);
    }
}

/// Removes a request from the pending table when its caller stops waiting
/// (a timeout, or the caller dropped the future) and tells the server it
/// may stop working on it.
struct InFlight<'a> {
    conn: &'a Connection,
    id: i64,
    done: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let removed = self
            .conn
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
        if removed.is_some() {
            self.conn
                .notify("$/cancelRequest", &json!({ "id": self.id }));
        }
    }
}

impl Connection {
    /// Starts the IO task of a launched server. Notifications arrive on the
    /// returned receiver, which ends when the server's output ends.
    pub fn start(
        handle: Box<dyn ProcessHandle>,
        root_uri: String,
        settings: Settings,
    ) -> (Self, mpsc::Receiver<Notification>) {
        let (out_tx, out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let (note_tx, note_rx) = mpsc::channel(NOTIFICATION_QUEUE);
        let (ended_tx, ended_rx) = watch::channel(None);
        let (kill_tx, kill_rx) = watch::channel(false);
        let pending: Pending = Arc::default();
        tokio::spawn(pump(
            handle,
            Pump {
                out_rx,
                out_tx: out_tx.clone(),
                notes: note_tx,
                pending: Arc::clone(&pending),
                ended: ended_tx,
                kill: kill_rx,
                root_uri,
                settings,
            },
        ));
        (
            Self {
                out: out_tx,
                pending,
                next_id: AtomicI64::new(1),
                ended: ended_rx,
                kill: kill_tx,
            },
            note_rx,
        )
    }

    fn send(&self, message: &Value) {
        let _ = self.out.send(encode(message.to_string().as_bytes()));
    }

    pub fn notify(&self, method: &str, params: &Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Whether the server's output has ended, and why.
    pub fn ended(&self) -> Option<String> {
        self.ended.borrow().clone()
    }

    /// Waits until the server's output ends; the reason.
    pub async fn closed(&self) -> String {
        let mut ended = self.ended.clone();
        loop {
            if let Some(reason) = ended.borrow_and_update().clone() {
                return reason;
            }
            if ended.changed().await.is_err() {
                return "the connection ended".into();
            }
        }
    }

    /// Kills the server's process group.
    pub fn kill(&self) {
        let _ = self.kill.send(true);
    }

    /// Sends a request and waits up to `timeout` for its answer. Past the
    /// timeout, or when the caller drops the future, the server is sent
    /// `$/cancelRequest`.
    /// A request asked again (up to three times in all) while the server
    /// answers that the content changed under it (`ContentModified`,
    /// -32801) or that it cancelled the request itself
    /// (`ServerCancelled`, -32802), as rust-analyzer does while it reloads
    /// the workspace: the protocol's way of saying "ask again".
    pub async fn request_retried(&self, method: &str, params: Value, timeout: Duration) -> Reply {
        let mut tries = 0;
        loop {
            tries += 1;
            match self.request(method, params.clone(), timeout).await {
                Err(LspError::Server { code, .. })
                    if tries < 3 && (code == -32801 || code == -32802) =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                reply => return reply,
            }
        }
    }

    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Reply {
        if let Some(reason) = self.ended() {
            return Err(LspError::Closed { reason });
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, (method.to_owned(), tx));
        let mut guard = InFlight {
            conn: self,
            id,
            done: false,
        };
        if let Some(reason) = self.ended() {
            return Err(LspError::Closed { reason });
        }
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let reply = tokio::time::timeout(timeout, rx).await;
        match reply {
            Ok(Ok(reply)) => {
                guard.done = true;
                reply
            }
            Ok(Err(_)) => {
                guard.done = true;
                Err(LspError::Closed {
                    reason: self
                        .ended()
                        .unwrap_or_else(|| "the connection ended".into()),
                })
            }
            Err(_) => Err(LspError::Timeout {
                method: method.to_owned(),
                after_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }
}

struct Pump {
    out_rx: mpsc::UnboundedReceiver<Vec<u8>>,
    out_tx: mpsc::UnboundedSender<Vec<u8>>,
    notes: mpsc::Sender<Notification>,
    pending: Pending,
    ended: watch::Sender<Option<String>>,
    kill: watch::Receiver<bool>,
    root_uri: String,
    settings: Settings,
}

enum Step {
    Out(Option<Vec<u8>>),
    In(Option<Vec<u8>>),
    Kill,
}

impl Pump {
    /// Routes one message from the server; a notification is returned for
    /// the caller to queue.
    fn dispatch(&self, body: &[u8]) -> Option<Notification> {
        let Ok(message) = serde_json::from_slice::<Value>(body) else {
            tracing::warn!("a language server sent a message that is not JSON");
            return None;
        };
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").filter(|id| !id.is_null());
        match (method, id) {
            (Some(method), Some(id)) => {
                let params = &message["params"];
                let response = match answer(method, params, &self.root_uri, &*self.settings) {
                    Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
                    Err((code, text)) => json!({
                        "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": text }
                    }),
                };
                let _ = self.out_tx.send(encode(response.to_string().as_bytes()));
                if HEARD_REQUESTS.contains(&method) {
                    return Some(Notification {
                        method: method.to_owned(),
                        params: params.clone(),
                    });
                }
            }
            (Some(method), None) => {
                return Some(Notification {
                    method: method.to_owned(),
                    params: message.get("params").cloned().unwrap_or(Value::Null),
                });
            }
            (None, Some(id)) => {
                let id = id.as_i64()?;
                let waiting = self
                    .pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
                let (method, tx) = waiting?;
                let reply = match message.get("error") {
                    Some(error) => Err(LspError::Server {
                        method,
                        code: error["code"].as_i64().unwrap_or(0),
                        message: error["message"].as_str().unwrap_or("").to_owned(),
                    }),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = tx.send(reply);
            }
            (None, None) => {}
        }
        None
    }
}

/// A server's last words: the last three lines it wrote to stderr.
fn last_words(log: &Mutex<Vec<u8>>) -> Option<String> {
    let buf = log.lock().unwrap_or_else(PoisonError::into_inner);
    let text = String::from_utf8_lossy(&buf);
    let mut last: Vec<&str> = text
        .lines()
        .rev()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    last.reverse();
    (!last.is_empty()).then(|| cocode_core::shown::line(&last.join(" / ")).into_owned())
}

/// Moves bytes between the process and the connection until the process's
/// output ends or the connection is killed.
async fn pump(mut handle: Box<dyn ProcessHandle>, mut p: Pump) {
    let log = Arc::new(Mutex::new(Vec::<u8>::new()));
    let stderr_reader = handle.take_stderr().map(|mut stderr| {
        let log = Arc::clone(&log);
        tokio::spawn(async move {
            use std::future::poll_fn;
            while let Some(chunk) = poll_fn(|cx| stderr.as_mut().poll_next(cx)).await {
                let mut buf = log.lock().unwrap_or_else(PoisonError::into_inner);
                buf.extend_from_slice(&chunk);
                if buf.len() > LOG_LIMIT {
                    let cut = buf.len() - LOG_LIMIT;
                    buf.drain(..cut);
                }
            }
        })
    });
    let mut decoder = Decoder::default();
    let mut writing = true;
    let mut broken = None;
    loop {
        let step = tokio::select! {
            bytes = p.out_rx.recv(), if writing => Step::Out(bytes),
            chunk = handle.read_output() => Step::In(chunk),
            _ = p.kill.changed() => Step::Kill,
        };
        match step {
            Step::Out(Some(bytes)) => {
                if handle.write_stdin(&bytes).await.is_err() {
                    writing = false;
                }
            }
            Step::Out(None) => writing = false,
            Step::In(Some(chunk)) => {
                decoder.push(&chunk);
                loop {
                    match decoder.next_frame() {
                        Ok(Some(body)) => {
                            // Back-pressure: while the reader of notifications
                            // is behind, the server's output waits in its pipe.
                            if let Some(note) = p.dispatch(&body) {
                                let _ = p.notes.send(note).await;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            broken = Some(e.to_string());
                            break;
                        }
                    }
                }
                if broken.is_some() {
                    let _ = handle.kill().await;
                    break;
                }
            }
            Step::In(None) => break,
            Step::Kill => {
                let _ = handle.kill().await;
                break;
            }
        }
    }
    let status = handle.wait().await;
    // Its stderr ends with it: what it wrote last is read before its last
    // words are taken (bounded, for a child of its that keeps the pipe).
    if let Some(reader) = stderr_reader {
        let _ = tokio::time::timeout(STDERR_DRAIN, reader).await;
    }
    let tail = last_words(&log);
    let mut reason = match (broken, status) {
        (Some(e), _) => format!("it broke the protocol ({e})"),
        (None, Ok(cocode_core::process::ExitStatus::Code(0))) => "it exited".to_owned(),
        (None, Ok(cocode_core::process::ExitStatus::Code(n))) => {
            format!("it exited with status {n}")
        }
        (None, Ok(cocode_core::process::ExitStatus::Signal(n))) => {
            format!("it was ended by signal {n}")
        }
        (None, Ok(cocode_core::process::ExitStatus::Killed)) => "it was stopped".to_owned(),
        (None, Ok(cocode_core::process::ExitStatus::TimedOut)) => "it ran out of time".to_owned(),
        (None, Err(e)) => format!("its output ended ({e})"),
    };
    if let Some(tail) = tail {
        reason.push_str(": ");
        reason.push_str(&tail);
    }
    // Ended first, then the unanswered requests: a request either sees the
    // end when it checks after registering, or is here to be answered.
    let _ = p.ended.send(Some(reason.clone()));
    let unanswered: Vec<_> = p
        .pending
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain()
        .collect();
    for (_, (_, tx)) in unanswered {
        let _ = tx.send(Err(LspError::Closed {
            reason: reason.clone(),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn requests_cocode_does_not_serve_are_declined_not_ignored() {
        let root = "file:///w";
        let none = |_: &str| Value::Null;
        let answer = |method: &str, params: &Value, root: &str| answer(method, params, root, &none);
        assert_eq!(
            answer(
                "workspace/configuration",
                &json!({"items": [{"section": "a"}, {"section": "b"}]}),
                root
            ),
            Ok(json!([null, null]))
        );
        assert_eq!(
            answer("workspace/workspaceFolders", &Value::Null, root),
            Ok(json!([{"uri": "file:///w", "name": "workspace"}]))
        );
        assert_eq!(
            answer("workspace/applyEdit", &json!({}), root).unwrap()["applied"],
            json!(false)
        );
        assert_eq!(
            answer("custom/thing", &Value::Null, root),
            Err((-32601, "cocode does not handle custom/thing".to_owned()))
        );
    }
}
