//! The window's brick worker: a task on the process's runtime that lists
//! the bricks, validates the dialog's request as the person
//! types (the checks stat the disk) and scaffolds (hooks may run for a
//! while), so the UI thread never waits on any of it. Each answer wakes the
//! UI once.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};

use cocode_bricks::Bricks;
use cocode_core::services::{BrickEngine, BrickInfo, ScaffoldError, ScaffoldRequest};
use cocode_toolchain::{Launcher, WritableRoots};
use tokio::runtime::Handle;

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
    requests: tokio::sync::mpsc::UnboundedSender<BrickRequest>,
    responses: Receiver<BrickResponse>,
}

fn message(e: &ScaffoldError) -> String {
    match e {
        ScaffoldError::RejectedBeforeStart(m) => m.clone(),
        ScaffoldError::FailedInProgress { .. } => e.to_string(),
    }
}

impl BrickService {
    /// Starts the worker on the process's runtime.
    pub fn spawn(wake: Arc<dyn Fn() + Send + Sync>, rt: &Handle) -> Self {
        let (req_tx, mut req_rx) = tokio::sync::mpsc::unbounded_channel::<BrickRequest>();
        let (resp_tx, resp_rx) = mpsc::channel::<BrickResponse>();
        let handle = rt.clone();
        rt.spawn(async move {
            let send = |response| {
                let sent = resp_tx.send(response).is_ok();
                wake();
                sent
            };
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
            let launcher = Launcher::new(handle, None, WritableRoots::default());
            let engine = Arc::new(Bricks::new(catalog, Arc::new(launcher)));
            if !send(BrickResponse::Listed {
                bricks: engine.bricks(),
                problems,
            }) {
                return;
            }
            while let Some(request) = req_rx.recv().await {
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
                if !send(response) {
                    break;
                }
            }
        });
        Self {
            requests: req_tx,
            responses: resp_rx,
        }
    }

    /// Queues a request; never blocks.
    pub fn send(&self, request: BrickRequest) {
        // The thread stops only when this handle drops.
        let _ = self.requests.send(request);
    }

    /// Answers that arrived since the last call; never blocks.
    pub fn drain(&self) -> Vec<BrickResponse> {
        self.responses.try_iter().collect()
    }
}
