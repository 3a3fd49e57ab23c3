//! The approval queue: calls whose policy is `ask` wait here for a person.
//! Abort, drop or window close resolve pending requests as deny.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use crate::types::{ToolMode, ToolSource};

/// A person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    Approve,
    /// Approve, and run this tool without asking for the rest of the task.
    ApproveForTask,
    Deny,
}

impl ApprovalDecision {
    /// Whether the call may run.
    pub fn approves(self) -> bool {
        matches!(self, Self::Approve | Self::ApproveForTask)
    }
}

/// What a card shows of the call it asks about, in full: the change with
/// its diff, or the command line. For the person's own window only: it is
/// never serialized (`ApprovalSnapshot` skips it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalPreview {
    /// File changes, each against the file as it is now.
    Changes(Vec<ChangePreview>),
    /// A command and where and how it runs.
    Command {
        argv: Vec<String>,
        cwd: String,
        confinement: String,
    },
    /// The call as it stands cannot work (the reason), or what else there
    /// is to say.
    Note(String),
}

/// One file of a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangePreview {
    pub path: String,
    pub kind: ChangeKind,
    /// A unified diff against the current content (a new file: all added).
    pub diff: String,
    /// The path matches the workspace's test patterns: the change is held
    /// for a person's approval of its own.
    pub test_file: bool,
}

/// What a change does to its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    Create,
    Modify,
    Delete,
    Rename { from: String },
}

/// Computes the preview of a call that waits for approval (the host
/// knows what its tools would change).
pub trait ApprovalPreviewer: Send + Sync + 'static {
    fn preview(&self, tool: &str, arguments: &Map<String, Value>) -> Option<ApprovalPreview>;
}

/// What the approval UI shows: metadata and a safe summary of the
/// arguments — never raw file contents when serialized; the window also
/// gets the in-process `preview`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalSnapshot {
    pub id: u64,
    pub method: String,
    pub provider_call_id: String,
    pub session_id: String,
    pub source: ToolSource,
    pub mode: ToolMode,
    pub tool: String,
    pub safe_argument_summary: Value,
    pub created_at_ms: u64,
    #[serde(skip)]
    pub preview: Option<Box<ApprovalPreview>>,
}

/// Queue notifications.
#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalEvent {
    Requested(ApprovalSnapshot),
    Resolved { id: u64, decision: ApprovalDecision },
}

/// Summarizes arguments: key names always, values only for numbers, booleans
/// and the string arguments (or lists of strings, like a command's `argv`)
/// named in `safe_names`; every other value becomes its size. Shown
/// strings are cut at 200 characters and lists at 32 items.
/// The most list items an approval shows.
const SHOWN_ITEMS: usize = 32;

pub fn safe_argument_summary(
    arguments: &Map<String, Value>,
    safe_names: &BTreeSet<String>,
) -> Value {
    let summary = arguments
        .iter()
        .map(|(key, value)| {
            let shown = match value {
                Value::String(s) if safe_names.contains(key) => {
                    Value::String(s.chars().take(200).collect())
                }
                Value::String(s) => serde_json::json!({"chars": s.chars().count()}),
                Value::Array(a) if safe_names.contains(key) && a.iter().all(Value::is_string) => {
                    let mut shown: Vec<Value> = a
                        .iter()
                        .take(SHOWN_ITEMS)
                        .filter_map(Value::as_str)
                        .map(|s| Value::String(s.chars().take(200).collect()))
                        .collect();
                    if a.len() > SHOWN_ITEMS {
                        shown.push(Value::String(format!("… {} more", a.len() - SHOWN_ITEMS)));
                    }
                    Value::Array(shown)
                }
                Value::Array(a) => serde_json::json!({"items": a.len()}),
                Value::Object(o) => serde_json::json!({"keys": o.len()}),
                Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
            };
            (key.clone(), shown)
        })
        .collect();
    Value::Object(summary)
}

struct Pending {
    snapshot: ApprovalSnapshot,
    answer: oneshot::Sender<ApprovalDecision>,
}

struct Inner {
    next_id: u64,
    pending: BTreeMap<u64, Pending>,
}

/// The queue. Cheap to share behind an `Arc`.
pub struct ApprovalQueue {
    inner: Mutex<Inner>,
    events: broadcast::Sender<ApprovalEvent>,
}

impl std::fmt::Debug for ApprovalQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalQueue")
            .field("pending", &self.snapshot().len())
            .finish()
    }
}

impl Default for ApprovalQueue {
    fn default() -> Self {
        Self::new()
    }
}

/// What a request is about (the queue assigns the id and time).
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalInput {
    pub provider_call_id: String,
    pub session_id: String,
    pub source: ToolSource,
    pub mode: ToolMode,
    pub tool: String,
    pub safe_argument_summary: Value,
    pub preview: Option<Box<ApprovalPreview>>,
}

impl ApprovalQueue {
    pub fn new() -> Self {
        let (events, _) = broadcast::channel(256);
        Self {
            inner: Mutex::new(Inner {
                next_id: 1,
                pending: BTreeMap::new(),
            }),
            events,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for a decision. Cancellation, or the queue dropping the request
    /// (`deny_all`, drop), answers `Deny`.
    pub async fn request(
        &self,
        input: ApprovalInput,
        cancel: &CancellationToken,
    ) -> ApprovalDecision {
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut inner = self.lock();
            let id = inner.next_id;
            inner.next_id += 1;
            let snapshot = ApprovalSnapshot {
                id,
                method: "tools/call".into(),
                provider_call_id: input.provider_call_id,
                session_id: input.session_id,
                source: input.source,
                mode: input.mode,
                tool: input.tool,
                safe_argument_summary: input.safe_argument_summary,
                created_at_ms: now_ms(),
                preview: input.preview,
            };
            let _ = self.events.send(ApprovalEvent::Requested(snapshot.clone()));
            inner.pending.insert(
                id,
                Pending {
                    snapshot,
                    answer: tx,
                },
            );
            id
        };
        // If this future is dropped (the caller went away), the guard takes
        // the request out of the queue as denied.
        let guard = PendingGuard { queue: self, id };
        let decision = tokio::select! {
            answer = rx => answer.unwrap_or(ApprovalDecision::Deny),
            () = cancel.cancelled() => ApprovalDecision::Deny,
        };
        guard.finish(decision);
        decision
    }

    fn withdraw(&self, id: u64, decision: ApprovalDecision) {
        if self.lock().pending.remove(&id).is_some() {
            let _ = self.events.send(ApprovalEvent::Resolved { id, decision });
        }
    }

    /// Answers one request; false when it is no longer pending.
    pub fn resolve(&self, id: u64, decision: ApprovalDecision) -> bool {
        let Some(pending) = self.lock().pending.remove(&id) else {
            return false;
        };
        let _ = self.events.send(ApprovalEvent::Resolved { id, decision });
        pending.answer.send(decision).is_ok()
    }

    /// Denies everything pending (window close, workspace closing).
    pub fn deny_all(&self) {
        let pending = std::mem::take(&mut self.lock().pending);
        for (id, p) in pending {
            let _ = self.events.send(ApprovalEvent::Resolved {
                id,
                decision: ApprovalDecision::Deny,
            });
            let _ = p.answer.send(ApprovalDecision::Deny);
        }
    }

    /// The pending requests, oldest first.
    pub fn snapshot(&self) -> Vec<ApprovalSnapshot> {
        self.lock()
            .pending
            .values()
            .map(|p| p.snapshot.clone())
            .collect()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<ApprovalEvent> {
        self.events.subscribe()
    }
}

/// Removes a request from the queue when its waiter finishes or is dropped.
struct PendingGuard<'a> {
    queue: &'a ApprovalQueue,
    id: u64,
}

impl PendingGuard<'_> {
    fn finish(self, decision: ApprovalDecision) {
        self.queue.withdraw(self.id, decision);
        std::mem::forget(self);
    }
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.queue.withdraw(self.id, ApprovalDecision::Deny);
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::sync::Arc;

    fn input() -> ApprovalInput {
        ApprovalInput {
            provider_call_id: "call-1".into(),
            session_id: "s1".into(),
            source: ToolSource::Model,
            mode: ToolMode::Agent,
            tool: "workspace.writeFile".into(),
            safe_argument_summary: Value::Null,
            preview: None,
        }
    }

    #[test]
    fn summaries_never_show_contents() {
        let args = serde_json::json!({"path": "src/a.rs", "content": "secret source", "lines": [1, 2], "force": true, "n": 3});
        let safe = BTreeSet::from(["path".to_owned()]);
        assert_eq!(
            safe_argument_summary(args.as_object().unwrap(), &safe),
            serde_json::json!({"path": "src/a.rs", "content": {"chars": 13}, "lines": {"items": 2}, "force": true, "n": 3})
        );
        let none = safe_argument_summary(args.as_object().unwrap(), &BTreeSet::new());
        assert_eq!(none["path"], serde_json::json!({"chars": 8}));
        // A command line named safe is shown item by item, within bounds.
        let long: Vec<String> = (0..40).map(|i| format!("a{i}")).collect();
        let args =
            serde_json::json!({"argv": ["sh", "-c", "x".repeat(300)], "env": ["A"], "many": long});
        let safe = BTreeSet::from(["argv".to_owned(), "many".to_owned()]);
        let shown = safe_argument_summary(args.as_object().unwrap(), &safe);
        assert_eq!(
            shown["argv"],
            serde_json::json!(["sh", "-c", "x".repeat(200)])
        );
        assert_eq!(shown["env"], serde_json::json!({"items": 1}));
        assert_eq!(shown["many"].as_array().unwrap().len(), 33);
        assert_eq!(shown["many"][32], serde_json::json!("… 8 more"));
    }

    /// A waiting request on `queue` and the snapshot it was announced with.
    async fn waiter(
        queue: &Arc<ApprovalQueue>,
    ) -> (
        tokio::task::JoinHandle<ApprovalDecision>,
        ApprovalSnapshot,
        broadcast::Receiver<ApprovalEvent>,
    ) {
        let mut events = queue.subscribe();
        let q = Arc::clone(queue);
        let handle =
            tokio::spawn(async move { q.request(input(), &CancellationToken::new()).await });
        let ApprovalEvent::Requested(snapshot) = events.recv().await.unwrap() else {
            panic!("expected a request")
        };
        (handle, snapshot, events)
    }

    #[tokio::test]
    async fn resolve_answers_the_waiting_request() {
        let queue = Arc::new(ApprovalQueue::new());
        let (waiter, snapshot, _events) = waiter(&queue).await;
        assert_eq!(
            (snapshot.method.as_str(), snapshot.tool.as_str()),
            ("tools/call", "workspace.writeFile")
        );
        assert_eq!(queue.snapshot().len(), 1);
        assert!(queue.resolve(snapshot.id, ApprovalDecision::Approve));
        assert_eq!(waiter.await.unwrap(), ApprovalDecision::Approve);
        assert!(queue.snapshot().is_empty());
        assert!(
            !queue.resolve(snapshot.id, ApprovalDecision::Approve),
            "answered once"
        );
    }

    #[tokio::test]
    async fn a_dropped_waiter_leaves_the_queue_denied() {
        let queue = Arc::new(ApprovalQueue::new());
        let (waiter, s, mut events) = waiter(&queue).await;
        waiter.abort();
        let _ = waiter.await;
        assert!(queue.snapshot().is_empty());
        assert_eq!(
            events.recv().await.unwrap(),
            ApprovalEvent::Resolved {
                id: s.id,
                decision: ApprovalDecision::Deny
            }
        );
        assert!(
            !queue.resolve(s.id, ApprovalDecision::Approve),
            "nothing left to approve"
        );
    }

    #[tokio::test]
    async fn cancel_and_deny_all_deny() {
        let queue = Arc::new(ApprovalQueue::new());
        let cancel = CancellationToken::new();
        let (q, c) = (Arc::clone(&queue), cancel.clone());
        let waiter = tokio::spawn(async move { q.request(input(), &c).await });
        tokio::task::yield_now().await;
        while queue.snapshot().is_empty() {
            tokio::task::yield_now().await;
        }
        cancel.cancel();
        assert_eq!(waiter.await.unwrap(), ApprovalDecision::Deny);
        assert!(
            queue.snapshot().is_empty(),
            "a cancelled request leaves the queue"
        );

        let q = Arc::clone(&queue);
        let waiter =
            tokio::spawn(async move { q.request(input(), &CancellationToken::new()).await });
        while queue.snapshot().is_empty() {
            tokio::task::yield_now().await;
        }
        queue.deny_all();
        assert_eq!(waiter.await.unwrap(), ApprovalDecision::Deny);
    }
}
