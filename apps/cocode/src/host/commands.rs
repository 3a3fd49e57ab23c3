//! Agents' commands as they run, for whoever watches them (the window shows
//! each in a read-only terminal tab). Every command an agent runs — the
//! built-in agent's `terminal.run`, an ACP agent's terminal — passes
//! through the one handler that launches it, which reports here.
//!
//! Reports wait for room in a bounded channel, so a watcher that falls
//! behind slows the command's output instead of growing memory; with no
//! watcher (the command line) nothing is sent.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use cocode_core::TaskId;
use cocode_core::process::ExitStatus;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Room for reports not yet taken by the watcher.
const CAPACITY: usize = 256;

/// What happens to an agent's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandEvent {
    Started {
        id: u64,
        task_id: TaskId,
        argv: Vec<String>,
        cwd: PathBuf,
    },
    /// Output as the program wrote it (stdout and stderr interleaved).
    Output { id: u64, bytes: Vec<u8> },
    /// `None`: the command did not start, or it was stopped.
    Ended { id: u64, status: Option<ExitStatus> },
}

/// The watch over agents' commands, shared by the tool handlers and the
/// window's workspace service.
#[derive(Debug, Default)]
pub struct CommandWatch {
    watcher: Mutex<Option<mpsc::Sender<CommandEvent>>>,
    next: AtomicU64,
    /// Stop switches of running commands.
    running: Mutex<BTreeMap<u64, CancellationToken>>,
}

impl CommandWatch {
    /// Starts watching; a later call replaces the earlier watcher.
    pub fn watch(&self) -> mpsc::Receiver<CommandEvent> {
        let (tx, rx) = mpsc::channel(CAPACITY);
        *self.watcher.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
        rx
    }

    async fn emit(&self, event: CommandEvent) {
        let tx = self
            .watcher
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(tx) = tx {
            let _ = tx.send(event).await;
        }
    }

    /// A command starts: its id, and the switch that stops it.
    pub async fn started(
        &self,
        task_id: &TaskId,
        argv: &[String],
        cwd: &std::path::Path,
    ) -> (u64, CancellationToken) {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let stop = CancellationToken::new();
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, stop.clone());
        self.emit(CommandEvent::Started {
            id,
            task_id: task_id.clone(),
            argv: argv.to_vec(),
            cwd: cwd.to_path_buf(),
        })
        .await;
        (id, stop)
    }

    pub async fn output(&self, id: u64, bytes: &[u8]) {
        self.emit(CommandEvent::Output {
            id,
            bytes: bytes.to_vec(),
        })
        .await;
    }

    pub async fn ended(&self, id: u64, status: Option<ExitStatus>) {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        self.emit(CommandEvent::Ended { id, status }).await;
    }

    /// Stops a running command (a person pressed Stop on its tab); the
    /// agent gets the cancellation as the command's result. False when it
    /// already ended.
    pub fn stop(&self, id: u64) -> bool {
        let token = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .cloned();
        token.is_some_and(|t| {
            t.cancel();
            true
        })
    }
}
