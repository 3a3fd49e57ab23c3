//! Which attempt each running task is on, the test edits held for it, and
//! the person's grants through an external agent: what the orchestrator
//! writes and the handlers read.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use cocode_core::gate::PendingChange;
use cocode_core::{AttemptNo, TaskId};
use tokio::sync::mpsc;

/// The attempt each running task is on, and the test edits held for it.
/// The orchestrator writes it; handlers read it to build a `TaskContext`.
#[derive(Debug, Default)]
pub struct TaskDirectory {
    attempts: Mutex<BTreeMap<TaskId, AttemptNo>>,
    held: Mutex<BTreeMap<String, TaskId>>,
    listeners: Mutex<BTreeMap<TaskId, mpsc::UnboundedSender<HeldEdit>>>,
    /// Tasks whose agent writes files itself during its turn (an external
    /// agent): the workspace is swept around each turn.
    turn_sweeps: Mutex<std::collections::BTreeSet<TaskId>>,
    /// Actions a person approved through an external agent's permission
    /// request: the host request that carries one out is not asked about
    /// again (see `requests`). They end with the task.
    person_grants: Mutex<std::collections::BTreeSet<(TaskId, String)>>,
}

impl TaskDirectory {
    pub fn set_attempt(&self, task: &TaskId, attempt: AttemptNo) {
        self.lock().insert(task.clone(), attempt);
    }

    pub fn remove(&self, task: &TaskId) {
        self.lock().remove(task);
        self.release_held(task);
        self.person_grants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(t, _)| t != task);
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(task);
    }

    /// Where the test edits `task`'s agent makes are reported when the gate
    /// holds them.
    /// Notes that a person approved the action `key` of `task`'s agent.
    pub fn grant(&self, task: &TaskId, key: String) {
        self.person_grants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((task.clone(), key));
    }

    /// Whether a person approved the action `key` already (used once).
    pub fn take_grant(&self, task: &TaskId, key: String) -> bool {
        self.person_grants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&(task.clone(), key))
    }

    /// Marks whether `task`'s agent is in a swept turn.
    pub fn set_turn_swept(&self, task: &TaskId, swept: bool) {
        let mut set = self
            .turn_sweeps
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if swept {
            set.insert(task.clone());
        } else {
            set.remove(task);
        }
    }

    /// Whether `task`'s agent is in a swept turn.
    pub fn turn_swept(&self, task: &TaskId) -> bool {
        self.turn_sweeps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(task)
    }

    pub fn held_edits(&self, task: &TaskId) -> mpsc::UnboundedReceiver<HeldEdit> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(task.clone(), tx);
        rx
    }

    pub(crate) fn notify_held(&self, edit: HeldEdit) {
        let task = edit.change.ctx.task_id.clone();
        self.hold(
            &task,
            edit.change
                .op
                .touched_paths()
                .iter()
                .map(|p| p.as_str().to_owned()),
        );
        if let Some(tx) = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&task)
        {
            let _ = tx.send(edit);
        }
    }

    /// Forgets the held edits of `task` (approved, rejected or ended).
    pub fn release_held(&self, task: &TaskId) {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, t| t != task);
    }

    pub(crate) fn hold(&self, task: &TaskId, paths: impl IntoIterator<Item = String>) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        for p in paths {
            held.insert(p, task.clone());
        }
    }

    /// Paths with an edit waiting for a person's approval.
    pub fn held_paths(&self) -> Vec<String> {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<TaskId, AttemptNo>> {
        self.attempts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn attempt(&self, task: &TaskId) -> Option<AttemptNo> {
        self.lock().get(task).copied()
    }
}

/// A test-file edit the gate held, on its way to the orchestrator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldEdit {
    pub change: PendingChange,
}
