//! The window's brick worker: a task on the process's runtime that lists
//! the bricks, validates the dialog's request as the person
//! types (the checks stat the disk) and scaffolds (hooks may run for a
//! while), so the UI thread never waits on any of it. Each answer wakes the
//! UI once.

use std::path::PathBuf;
use std::sync::Arc;

use cocode_core::services::{BrickEngine, BrickInfo, ScaffoldError, ScaffoldRequest};

use crate::host::root::HostRoot;

use crate::window::link::{Coalesce, UiEnd, Waker, link};

/// Work for the brick thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrickRequest {
    /// Check a request; `seq` orders the answers to the latest one.
    Validate {
        seq: u64,
        request: ScaffoldRequest,
    },
    Scaffold(ScaffoldRequest),
}

/// Answers, in request order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrickResponse {
    /// Sent once when the thread starts: the bricks on offer and the
    /// person's bricks that did not load.
    Listed {
        bricks: Vec<BrickInfo>,
        problems: Vec<String>,
    },
    Validated {
        seq: u64,
        result: Result<(), String>,
    },
    Scaffolded(Result<PathBuf, String>),
}

/// Handle to the brick worker; dropping it ends the worker.
#[derive(Debug)]
pub struct BrickService {
    link: UiEnd<BrickRequest, BrickResponse>,
}

impl Coalesce for BrickResponse {}

fn message(e: &ScaffoldError) -> String {
    match e {
        ScaffoldError::RejectedBeforeStart(m) => m.clone(),
        ScaffoldError::FailedInProgress { .. } => e.to_string(),
    }
}

impl BrickService {
    /// Starts the worker on the process's runtime.
    pub fn spawn(waker: Waker, root: &HostRoot) -> Self {
        let (ui, mut worker) = link(waker);
        let root = root.clone();
        root.runtime().clone().spawn(async move {
            let events = worker.events;
            // Reading the person's bricks folder touches the disk.
            let loaded = tokio::task::spawn_blocking(crate::host::bricks::catalog).await;
            let (catalog, problems) = match loaded {
                Ok(Ok((catalog, problems))) => {
                    (catalog, problems.iter().map(ToString::to_string).collect())
                }
                Ok(Err(e)) => (
                    cocode_bricks::BrickCatalog::default(),
                    vec![format!("{e:#}")],
                ),
                Err(e) => (
                    cocode_bricks::BrickCatalog::default(),
                    vec![format!("the bricks could not be read: {e}")],
                ),
            };
            let engine = Arc::new(root.bricks(catalog));
            let listed = BrickResponse::Listed {
                bricks: engine.bricks(),
                problems,
            };
            if !events.send(listed).await {
                return;
            }
            while let Some(request) = worker.requests.recv().await {
                let response = match request {
                    BrickRequest::Validate { seq, request } => {
                        // The checks stat the disk: off the runtime's workers.
                        let engine = Arc::clone(&engine);
                        let result = tokio::task::spawn_blocking(move || {
                            engine.validate(&request).map_err(|e| message(&e))
                        })
                        .await
                        .unwrap_or_else(|e| Err(format!("the check stopped: {e}")));
                        BrickResponse::Validated { seq, result }
                    }
                    BrickRequest::Scaffold(request) => BrickResponse::Scaffolded(
                        engine.scaffold(request).await.map_err(|e| message(&e)),
                    ),
                };
                if !events.send(response).await {
                    break;
                }
            }
        });
        Self { link: ui }
    }

    /// Queues a request; never blocks.
    pub fn send(&self, request: BrickRequest) {
        self.link.send(request);
    }

    /// Answers that arrived since the last call; never blocks.
    pub fn drain(&mut self) -> Vec<BrickResponse> {
        self.link.drain()
    }
}
