//! The one shape of traffic between the window and a worker (the IO
//! thread, the workspace service, the brick worker).
//!
//! - Requests go down a bounded channel. The UI never blocks: when the
//!   channel is full, a request waits in the UI's own queue, in order, and
//!   is handed over on a later frame. Nothing is dropped.
//! - Events come up a bounded channel. A worker waits for room (`send`
//!   from async code, `blocking_send` from a thread), so a window that
//!   stops drawing slows its workers instead of growing memory.
//! - One [`Waker`] asks egui for a repaint after each event; nothing
//!   repaints while no event arrives.
//! - A frame drains everything queued and merges what [`Coalesce`] allows
//!   (streamed text deltas become one event per frame).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc::{self, error::TrySendError};

/// Room in each direction of a link.
pub const LINK_CAPACITY: usize = 256;

/// Asks the window for a repaint. The app makes one and clones it into
/// every worker.
#[derive(Clone)]
pub struct Waker(Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for Waker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waker").finish_non_exhaustive()
    }
}

impl Waker {
    pub fn new(wake: impl Fn() + Send + Sync + 'static) -> Self {
        Self(Arc::new(wake))
    }

    pub fn wake(&self) {
        (self.0)();
    }
}

/// Events that may merge with the one before them in a frame's drain.
pub trait Coalesce: Sized {
    /// Merges `next` into `self`, or gives it back to be kept apart.
    fn merge(&mut self, next: Self) -> Option<Self> {
        Some(next)
    }
}

/// The window's end of a link.
#[derive(Debug)]
pub struct UiEnd<Req, Ev> {
    requests: mpsc::Sender<Req>,
    /// Requests that found the channel full, oldest first.
    waiting: Mutex<VecDeque<Req>>,
    events: mpsc::Receiver<Ev>,
}

/// The worker's end of a link.
#[derive(Debug)]
pub struct WorkerEnd<Req, Ev> {
    pub requests: mpsc::Receiver<Req>,
    pub events: Events<Ev>,
}

/// A worker's way to report; cheap to clone into the worker's tasks.
#[derive(Debug)]
pub struct Events<Ev> {
    tx: mpsc::Sender<Ev>,
    waker: Waker,
}

impl<Ev> Clone for Events<Ev> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
            waker: self.waker.clone(),
        }
    }
}

impl<Ev> Events<Ev> {
    /// Reports an event, waiting for room; false once the window is gone.
    pub async fn send(&self, event: Ev) -> bool {
        let sent = self.tx.send(event).await.is_ok();
        if sent {
            self.waker.wake();
        }
        sent
    }

    /// [`Self::send`] for a worker on its own thread (never inside the
    /// runtime).
    pub fn blocking_send(&self, event: Ev) -> bool {
        let sent = self.tx.blocking_send(event).is_ok();
        if sent {
            self.waker.wake();
        }
        sent
    }
}

/// A new link whose events wake `waker`.
pub fn link<Req, Ev>(waker: Waker) -> (UiEnd<Req, Ev>, WorkerEnd<Req, Ev>) {
    let (req_tx, req_rx) = mpsc::channel(LINK_CAPACITY);
    let (ev_tx, ev_rx) = mpsc::channel(LINK_CAPACITY);
    (
        UiEnd {
            requests: req_tx,
            waiting: Mutex::new(VecDeque::new()),
            events: ev_rx,
        },
        WorkerEnd {
            requests: req_rx,
            events: Events { tx: ev_tx, waker },
        },
    )
}

impl<Req, Ev: Coalesce> UiEnd<Req, Ev> {
    /// Queues a request; never blocks and never drops it.
    pub fn send(&self, request: Req) {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        waiting.push_back(request);
        Self::hand_over(&self.requests, &mut waiting);
    }

    /// Hands waiting requests to the worker while there is room.
    fn hand_over(requests: &mpsc::Sender<Req>, waiting: &mut VecDeque<Req>) {
        while let Some(request) = waiting.pop_front() {
            match requests.try_send(request) {
                Ok(()) => {}
                Err(TrySendError::Full(request)) => {
                    waiting.push_front(request);
                    return;
                }
                // The worker has ended; its requests have nowhere to go.
                Err(TrySendError::Closed(_)) => {
                    waiting.clear();
                    return;
                }
            }
        }
    }

    /// Requests still waiting for room (for tests and the status bar).
    pub fn waiting(&self) -> usize {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Everything reported since the last frame, merged where it may be;
    /// hands over requests that were waiting for room. Never blocks.
    pub fn drain(&mut self) -> Vec<Ev> {
        {
            let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
            Self::hand_over(&self.requests, &mut waiting);
        }
        let mut events: Vec<Ev> = Vec::new();
        while let Ok(event) = self.events.try_recv() {
            match events.last_mut() {
                Some(last) => {
                    if let Some(apart) = last.merge(event) {
                        events.push(apart);
                    }
                }
                None => events.push(event),
            }
        }
        if !events.is_empty() {
            // Room was made: requests queued meanwhile may go now.
            let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
            Self::hand_over(&self.requests, &mut waiting);
        }
        events
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
