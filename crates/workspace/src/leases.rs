//! Edit leases (AC-12, AC-18): one lease per gate operation, acquired over
//! every touched path at once, served first come first served, released on
//! every exit.
//!
//! Two path sets conflict when a path of one equals or contains a path of the
//! other (a folder operation conflicts with writes below it). A waiter is
//! granted when it conflicts with no held lease and with no *earlier* waiter:
//! conflicting requests are served strictly in arrival order (nobody
//! overtakes), independent ones proceed at once. Acquisition is all or
//! nothing, so no one holds some paths while waiting for others, and
//! waiting cannot deadlock.
//!
//! `.cocode/locks/edit_locks.json` records the complete lease set on every
//! change, for post-mortem reading only: a new registry (app start)
//! discards whatever it finds there.

use cocode_core::clock::Clock;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use cocode_core::gate::{EditLease, EditLockRegistry, LeaseError, LeaseGuard, TaskContext};
use cocode_core::ids::{SessionId, TaskId, Timestamp};
use cocode_core::path::NormalizedPath;
use serde::{Deserialize, Serialize};

use crate::store::HistoryStore;

/// Current format version of `edit_locks.json`.
pub const EDIT_LOCKS_VERSION: u32 = 1;

/// The persisted lease set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditLocksFile {
    pub version: u32,
    pub leases: Vec<PersistedLease>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersistedLease {
    pub path: NormalizedPath,
    #[serde(flatten)]
    pub lease: EditLease,
}

struct Held {
    id: u64,
    paths: Vec<NormalizedPath>,
    lease: EditLease,
}

struct Waiter {
    id: u64,
    paths: Vec<NormalizedPath>,
    ctx: TaskContext,
    waker: Option<Waker>,
    outcome: Option<Result<(), LeaseError>>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    held: Vec<Held>,
    waiters: VecDeque<Waiter>,
}

fn conflict(a: &[NormalizedPath], b: &[NormalizedPath]) -> Option<NormalizedPath> {
    a.iter()
        .find(|x| b.iter().any(|y| x.contains(y) || y.contains(x)))
        .cloned()
}

impl State {
    /// Grants every waiter that conflicts with no held lease and no earlier
    /// waiter, in arrival order.
    fn grant(&mut self, now: Timestamp) {
        let mut ahead: Vec<NormalizedPath> = Vec::new();
        let mut granted = Vec::new();
        for w in &mut self.waiters {
            if w.outcome.is_some() {
                continue;
            }
            let blocked = self
                .held
                .iter()
                .any(|h| conflict(&h.paths, &w.paths).is_some())
                || conflict(&ahead, &w.paths).is_some();
            // Granted or not, later requests must not conflict with it.
            ahead.extend(w.paths.iter().cloned());
            if blocked {
                continue;
            }
            w.outcome = Some(Ok(()));
            granted.push(Held {
                id: w.id,
                paths: w.paths.clone(),
                lease: EditLease {
                    task_id: w.ctx.task_id.clone(),
                    session_id: w.ctx.session_id.clone(),
                    renewed_at: now,
                },
            });
            if let Some(waker) = w.waker.take() {
                waker.wake();
            }
        }
        self.held.extend(granted);
    }

    fn snapshot(&self) -> Vec<(NormalizedPath, EditLease)> {
        let mut out: Vec<(NormalizedPath, EditLease)> = self
            .held
            .iter()
            .flat_map(|h| h.paths.iter().map(|p| (p.clone(), h.lease.clone())))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

struct Inner {
    state: Mutex<State>,
    store: Option<HistoryStore>,
    /// What grants are stamped with.
    clock: Arc<dyn Clock>,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes the complete lease set (best effort: it is a post-mortem aid).
    fn persist(&self, state: &State) {
        let Some(store) = &self.store else { return };
        let file = EditLocksFile {
            version: EDIT_LOCKS_VERSION,
            leases: state
                .snapshot()
                .into_iter()
                .map(|(path, lease)| PersistedLease { path, lease })
                .collect(),
        };
        let written = serde_json::to_vec_pretty(&file)
            .map_err(|e| e.to_string())
            .and_then(|bytes| store.write_lease_file(&bytes).map_err(|e| e.to_string()));
        if let Err(e) = written {
            tracing::warn!(error = %e, "could not record the lease set");
        }
    }

    fn release(&self, id: u64) {
        let mut st = self.lock();
        let before = st.held.len();
        st.held.retain(|h| h.id != id);
        if st.held.len() != before {
            st.grant(self.clock.now());
            self.persist(&st);
        }
    }
}

/// An acquisition waiting for another task's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseWait {
    /// The task waiting.
    pub task: TaskId,
    /// The first of its paths in conflict.
    pub path: NormalizedPath,
    /// The task it waits for.
    pub holder: TaskId,
}

/// The lease registry of one open workspace.
pub struct LeaseRegistry {
    inner: Arc<Inner>,
    startup_sweep_completed: AtomicBool,
}

impl std::fmt::Debug for LeaseRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseRegistry")
            .field("leases", &self.leases().len())
            .finish()
    }
}

impl LeaseRegistry {
    /// A registry that records its lease set in `edit_locks.json`. Leases
    /// left by an earlier run are discarded (they cannot be held by anyone
    /// now); afterwards [`Self::startup_sweep_completed`] is true.
    pub fn open(store: HistoryStore) -> Self {
        Self::open_with_clock(store, cocode_core::clock::system())
    }

    /// [`Self::open`], stamping grants with `clock`.
    pub fn open_with_clock(store: HistoryStore, clock: Arc<dyn Clock>) -> Self {
        let registry = Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                store: Some(store),
                clock,
            }),
            startup_sweep_completed: AtomicBool::new(false),
        };
        if let Some(store) = &registry.inner.store {
            let discarded = std::fs::read(store.layout().edit_locks_file())
                .ok()
                .and_then(|b| serde_json::from_slice::<EditLocksFile>(&b).ok())
                .map_or(0, |f| f.leases.len());
            if discarded > 0 {
                tracing::info!(discarded, "discarded the leases of the previous run");
            }
        }
        registry.inner.persist(&registry.inner.lock());
        registry
            .startup_sweep_completed
            .store(true, Ordering::Release);
        registry
    }

    /// A registry that keeps nothing on disk.
    pub fn in_memory() -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                store: None,
                clock: cocode_core::clock::system(),
            }),
            startup_sweep_completed: AtomicBool::new(true),
        }
    }

    /// True once leases from an earlier run are gone; the UI shows lock
    /// counts only after this.
    pub fn startup_sweep_completed(&self) -> bool {
        self.startup_sweep_completed.load(Ordering::Acquire)
    }

    /// The acquisitions waiting, in arrival order, each with the first of
    /// its paths in conflict and the task it waits for (the holder of a
    /// lease over it, or an earlier waiter for it).
    pub fn waits(&self) -> Vec<LeaseWait> {
        let st = self.inner.lock();
        let mut out = Vec::new();
        let pending: Vec<&Waiter> = st.waiters.iter().filter(|w| w.outcome.is_none()).collect();
        for (i, w) in pending.iter().enumerate() {
            let held = st.held.iter().find_map(|h| {
                conflict(&w.paths, &h.paths).map(|path| (path, h.lease.task_id.clone()))
            });
            let ahead = || {
                pending[..i].iter().find_map(|e| {
                    conflict(&w.paths, &e.paths).map(|path| (path, e.ctx.task_id.clone()))
                })
            };
            if let Some((path, holder)) = held.or_else(ahead) {
                out.push(LeaseWait {
                    task: w.ctx.task_id.clone(),
                    path,
                    holder,
                });
            }
        }
        out
    }

    /// How many acquisitions are waiting.
    pub fn waiting(&self) -> usize {
        self.inner
            .lock()
            .waiters
            .iter()
            .filter(|w| w.outcome.is_none())
            .count()
    }

    fn cancel_where(
        &self,
        matches: &dyn Fn(&EditLease) -> bool,
        waiter: &dyn Fn(&TaskContext) -> bool,
    ) {
        let mut st = self.inner.lock();
        st.held.retain(|h| !matches(&h.lease));
        for w in &mut st.waiters {
            if w.outcome.is_none() && waiter(&w.ctx) {
                w.outcome = Some(Err(LeaseError::Cancelled));
                if let Some(waker) = w.waker.take() {
                    waker.wake();
                }
            }
        }
        st.grant(self.inner.clock.now());
        self.inner.persist(&st);
    }
}

struct Guard {
    inner: Arc<Inner>,
    id: u64,
}

impl LeaseGuard for Guard {}

impl Drop for Guard {
    fn drop(&mut self) {
        self.inner.release(self.id);
    }
}

/// Waits for one acquisition; dropping it before it completes withdraws
/// the request (and releases the lease if it was granted meanwhile).
struct Acquire {
    inner: Arc<Inner>,
    id: u64,
    finished: bool,
}

impl Future for Acquire {
    type Output = Result<Box<dyn LeaseGuard>, LeaseError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = Arc::clone(&self.inner);
        let mut st = inner.lock();
        let Some(pos) = st.waiters.iter().position(|w| w.id == self.id) else {
            self.finished = true;
            return Poll::Ready(Err(LeaseError::Cancelled));
        };
        match st.waiters[pos].outcome.clone() {
            None => {
                st.waiters[pos].waker = Some(cx.waker().clone());
                Poll::Pending
            }
            Some(outcome) => {
                st.waiters.remove(pos);
                self.finished = true;
                drop(st);
                Poll::Ready(
                    outcome.map(|()| Box::new(Guard { inner, id: self.id }) as Box<dyn LeaseGuard>),
                )
            }
        }
    }
}

impl Drop for Acquire {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let mut st = self.inner.lock();
        let granted = st
            .waiters
            .iter()
            .position(|w| w.id == self.id)
            .and_then(|pos| st.waiters.remove(pos))
            .is_some_and(|w| matches!(w.outcome, Some(Ok(()))));
        if granted {
            st.held.retain(|h| h.id != self.id);
        }
        st.grant(self.inner.clock.now());
        self.inner.persist(&st);
    }
}

#[async_trait::async_trait]
impl EditLockRegistry for LeaseRegistry {
    async fn acquire(
        &self,
        paths: &[NormalizedPath],
        ctx: &TaskContext,
    ) -> Result<Box<dyn LeaseGuard>, LeaseError> {
        let id = {
            let mut st = self.inner.lock();
            st.next_id += 1;
            let id = st.next_id;
            st.waiters.push_back(Waiter {
                id,
                paths: paths.to_vec(),
                ctx: ctx.clone(),
                waker: None,
                outcome: None,
            });
            st.grant(self.inner.clock.now());
            self.inner.persist(&st);
            id
        };
        Acquire {
            inner: Arc::clone(&self.inner),
            id,
            finished: false,
        }
        .await
    }

    fn release_session(&self, session: &SessionId) {
        self.cancel_where(&|l| l.session_id == *session, &|c| c.session_id == *session);
    }

    fn release_task(&self, task: &TaskId) {
        self.cancel_where(&|l| l.task_id == *task, &|c| c.task_id == *task);
    }

    fn leases(&self) -> Vec<(NormalizedPath, EditLease)> {
        self.inner.lock().snapshot()
    }
}
