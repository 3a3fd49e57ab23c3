//! The window's brick worker: a named thread with its own small runtime
//! that lists the bricks, validates the dialog's request as the person
//! types (the checks stat the disk) and scaffolds (hooks may run for a
//! while), so the UI thread never waits on any of it. Each answer wakes the
//! UI once.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;

use cocode_bricks::Bricks;
use cocode_core::services::{BrickEngine, BrickInfo, ScaffoldError, ScaffoldRequest};
use cocode_toolchain::{Launcher, WritableRoots};

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

/// Handle to the brick thread; dropping it ends the thread.
#[derive(Debug)]
pub struct BrickService {
    requests: Sender<BrickRequest>,
    responses: Receiver<BrickResponse>,
}

fn message(e: &ScaffoldError) -> String {
    match e {
        ScaffoldError::RejectedBeforeStart(m) => m.clone(),
        ScaffoldError::FailedInProgress { .. } => e.to_string(),
    }
}

impl BrickService {
    pub fn spawn(wake: Arc<dyn Fn() + Send + Sync>) -> std::io::Result<Self> {
        let (req_tx, req_rx) = mpsc::channel::<BrickRequest>();
        let (resp_tx, resp_rx) = mpsc::channel::<BrickResponse>();
        thread::Builder::new()
            .name("cocode-bricks".into())
            .spawn(move || {
                let send = |response| {
                    let sent = resp_tx.send(response).is_ok();
                    wake();
                    sent
                };
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = send(BrickResponse::Listed {
                            bricks: Vec::new(),
                            problems: vec![format!("the brick worker could not start: {e}")],
                        });
                        return;
                    }
                };
                let (catalog, problems) = match crate::bricks_cli::catalog() {
                    Ok((catalog, problems)) => {
                        (catalog, problems.iter().map(ToString::to_string).collect())
                    }
                    Err(e) => (
                        cocode_bricks::BrickCatalog::default(),
                        vec![format!("{e:#}")],
                    ),
                };
                let launcher =
                    Launcher::new(runtime.handle().clone(), None, WritableRoots::default());
                let engine = Bricks::new(catalog, Arc::new(launcher));
                if !send(BrickResponse::Listed {
                    bricks: engine.bricks(),
                    problems,
                }) {
                    return;
                }
                for request in req_rx {
                    let response = match request {
                        BrickRequest::Validate { seq, request } => BrickResponse::Validated {
                            seq,
                            result: engine.validate(&request).map_err(|e| message(&e)),
                        },
                        BrickRequest::Scaffold(request) => BrickResponse::Scaffolded(
                            runtime
                                .block_on(engine.scaffold(request))
                                .map_err(|e| message(&e)),
                        ),
                    };
                    if !send(response) {
                        break;
                    }
                }
            })?;
        Ok(Self {
            requests: req_tx,
            responses: resp_rx,
        })
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
