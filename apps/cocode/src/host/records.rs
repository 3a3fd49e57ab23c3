//! Task records under `.cocode/history/tasks/<id>/`: `task.json` (written
//! through the history store, atomic and synced), `runner.json`, the
//! process that runs the task, and `held.json`, a test-file change the gate
//! held for a person (kept until the person decides, across restarts).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cocode_core::{DelegatedTask, TaskId};
use cocode_workspace::{OpenWorkspace, TaskLife};

/// Where the workspace's repository stood when a task started (`git.json`
/// in the task's folder): `cocode task show` names it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartedOn {
    pub version: u32,
    /// The branch (`None`: a detached HEAD).
    pub branch: Option<String>,
    /// HEAD's commit, full hex (`None`: the branch has no commit yet).
    pub head: Option<String>,
}

impl StartedOn {
    /// In words: `branch main at 3f2a1bc`.
    pub fn words(&self) -> String {
        let at = self.head.as_deref().map_or_else(
            || "before its first commit".to_owned(),
            |id| format!("at {}", id.get(..7).unwrap_or(id)),
        );
        match &self.branch {
            Some(branch) => format!("branch {branch} {at}"),
            None => format!("a detached HEAD {at}"),
        }
    }
}

/// The file recording where the repository stood when a task started.
pub(crate) fn started_on_path(ws: &OpenWorkspace, id: &TaskId) -> PathBuf {
    ws.layout.task_dir(id).join("git.json")
}

/// Where the repository stood when task `id` started, when it was in one
/// (and the record reads).
pub fn started_on(ws: &OpenWorkspace, id: &TaskId) -> Option<StartedOn> {
    let bytes = std::fs::read(started_on_path(ws, id)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Other models than the one asked for that the server said answered a
/// task's requests (`models.json`): the record and `cocode task show` say
/// which model really worked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelsAnswered {
    pub version: u32,
    pub asked: String,
    /// In the order the server first named each.
    pub answered: Vec<String>,
}

impl ModelsAnswered {
    /// In words: `asked for gpt-4.1; the server answered with gpt-4o-mini`.
    pub fn words(&self) -> String {
        format!(
            "asked for {}; the server answered with {}",
            self.asked,
            self.answered.join(", ")
        )
    }
}

/// Where the task keeps what the model saw before each compaction:
/// `context/compaction-<n>.json`, numbered from 1.
pub fn compactions_dir(ws: &OpenWorkspace, id: &TaskId) -> PathBuf {
    ws.layout.task_dir(id).join("context")
}

/// What a task's model requests used and cost, added up (`usage.json`).
pub fn usage_path(ws: &OpenWorkspace, id: &TaskId) -> PathBuf {
    ws.layout.task_dir(id).join("usage.json")
}

/// Task `id`'s tokens and cost so far, when its agent reported any.
pub fn usage(ws: &OpenWorkspace, id: &TaskId) -> Option<crate::host::spent::Spent> {
    let bytes = std::fs::read(usage_path(ws, id)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

pub(crate) fn models_path(ws: &OpenWorkspace, id: &TaskId) -> PathBuf {
    ws.layout.task_dir(id).join("models.json")
}

/// The other models that answered task `id`, when there were any (and the
/// record reads).
pub fn models_answered(ws: &OpenWorkspace, id: &TaskId) -> Option<ModelsAnswered> {
    let bytes = std::fs::read(models_path(ws, id)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The file naming the process that runs a task.
pub(crate) fn runner_path(ws: &OpenWorkspace, id: &TaskId) -> PathBuf {
    ws.layout.task_dir(id).join("runner.json")
}

/// Whether the process that recorded itself as `id`'s runner still exists
/// (and is not this process, which has no run of it yet). No record: not alive.
pub fn runner_alive(ws: &OpenWorkspace, id: &TaskId) -> bool {
    let Ok(bytes) = std::fs::read(runner_path(ws, id)) else {
        return false;
    };
    let pid = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| v.get("pid").and_then(serde_json::Value::as_u64))
        .and_then(|p| u32::try_from(p).ok());
    pid.is_some_and(|pid| pid != std::process::id() && cocode_toolchain::process_alive(pid))
}

/// A held test-file change as saved: the operation with its contents.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct HeldRecord {
    version: u32,
    session_id: cocode_core::SessionId,
    attempt_no: cocode_core::AttemptNo,
    op: HeldOp,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum HeldOp {
    Write {
        path: cocode_core::NormalizedPath,
        /// The new contents, base64.
        contents: String,
    },
    Delete {
        path: cocode_core::NormalizedPath,
    },
    Rename {
        from: cocode_core::NormalizedPath,
        to: cocode_core::NormalizedPath,
    },
    Batch {
        ops: Vec<HeldOp>,
    },
}

impl HeldOp {
    fn of(op: &cocode_core::gate::GateOp) -> Self {
        use base64::Engine as _;
        use cocode_core::gate::GateOp;
        match op {
            GateOp::Write { path, bytes } => Self::Write {
                path: path.clone(),
                contents: base64::engine::general_purpose::STANDARD.encode(bytes),
            },
            GateOp::Delete { path } => Self::Delete { path: path.clone() },
            GateOp::Rename { from, to } => Self::Rename {
                from: from.clone(),
                to: to.clone(),
            },
            GateOp::Batch { ops } => Self::Batch {
                ops: ops.iter().map(Self::of).collect(),
            },
        }
    }

    fn op(self) -> anyhow::Result<cocode_core::gate::GateOp> {
        use base64::Engine as _;
        use cocode_core::gate::GateOp;
        Ok(match self {
            Self::Write { path, contents } => GateOp::Write {
                path,
                bytes: base64::engine::general_purpose::STANDARD
                    .decode(contents)
                    .context("the held change's contents are damaged")?,
            },
            Self::Delete { path } => GateOp::Delete { path },
            Self::Rename { from, to } => GateOp::Rename { from, to },
            Self::Batch { ops } => GateOp::Batch {
                ops: ops
                    .into_iter()
                    .map(Self::op)
                    .collect::<anyhow::Result<_>>()?,
            },
        })
    }
}

fn held_path(ws: &OpenWorkspace, id: &TaskId) -> PathBuf {
    ws.layout.task_dir(id).join("held.json")
}

/// Saves the test-file change held for a person with its task (atomic,
/// synced), so it outlives the process until the person decides.
pub fn save_held(
    ws: &OpenWorkspace,
    change: &cocode_core::gate::PendingChange,
) -> anyhow::Result<()> {
    let record = HeldRecord {
        version: 1,
        session_id: change.ctx.session_id.clone(),
        attempt_no: change.ctx.attempt_no,
        op: HeldOp::of(&change.op),
    };
    let bytes = serde_json::to_vec_pretty(&record)?;
    ws.gate
        .store()
        .write_state_file(&held_path(ws, &change.ctx.task_id), &bytes)?;
    Ok(())
}

/// The test-file change held for `id`'s person, if one waits.
pub fn load_held(
    ws: &OpenWorkspace,
    id: &TaskId,
) -> anyhow::Result<Option<cocode_core::gate::PendingChange>> {
    let path = held_path(ws, id);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let record: HeldRecord = serde_json::from_slice(&bytes)
        .with_context(|| format!("the held change {} is damaged", path.display()))?;
    Ok(Some(cocode_core::gate::PendingChange {
        ctx: cocode_core::gate::TaskContext {
            task_id: id.clone(),
            session_id: record.session_id,
            attempt_no: record.attempt_no,
        },
        op: record.op.op()?,
        protected: Vec::new(),
    }))
}

/// Forgets the held change of `id` once a person decided it.
pub fn remove_held(ws: &OpenWorkspace, id: &TaskId) -> anyhow::Result<()> {
    ws.gate.store().remove_state(&held_path(ws, id))?;
    Ok(())
}

/// Saves a task record through the history store (atomic, synced).
pub fn save_task_record(ws: &OpenWorkspace, task: &DelegatedTask) -> anyhow::Result<()> {
    let path = ws.layout.task_record(task.task_id());
    let bytes = serde_json::to_vec_pretty(task)?;
    ws.gate.store().write_state_file(&path, &bytes)?;
    Ok(())
}

/// Loads one task record of an open workspace.
pub fn load_task_record(ws: &OpenWorkspace, id: &TaskId) -> anyhow::Result<DelegatedTask> {
    load_record(&ws.layout.task_record(id))
}

pub(crate) fn load_record(path: &Path) -> anyhow::Result<DelegatedTask> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a valid task record", path.display()))
}

/// Task records of a workspace without opening a host (for `task list`).
pub fn load_all(layout: &cocode_workspace::Layout) -> Vec<anyhow::Result<DelegatedTask>> {
    let Ok(entries) = std::fs::read_dir(layout.tasks_dir()) else {
        return Vec::new();
    };
    let mut records: Vec<anyhow::Result<DelegatedTask>> = entries
        .flatten()
        .map(|e| e.path().join("task.json"))
        .filter(|p| p.exists())
        .map(|p| load_record(&p))
        .collect();
    records.sort_by_key(|r| std::cmp::Reverse(r.as_ref().map(DelegatedTask::created_at).ok()));
    records
}

/// What retention needs to know of each task: whether it ended, and since
/// when — the time of its record's last save, which for an ended task is
/// the save of its terminal transition. A record that cannot be read is
/// left out, and retention never touches a task it is not told about.
pub fn task_lives(ws: &OpenWorkspace) -> Vec<TaskLife> {
    let Ok(entries) = std::fs::read_dir(ws.layout.tasks_dir()) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let path = entry.path().join("task.json");
            let task = load_record(&path).ok()?;
            let terminated_at = if task.status().is_terminal() {
                let saved = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
                let millis = saved
                    .duration_since(std::time::UNIX_EPOCH)
                    .ok()?
                    .as_millis();
                Some(cocode_core::Timestamp(i64::try_from(millis).ok()?))
            } else {
                None
            };
            Some(TaskLife {
                task_id: task.task_id().clone(),
                terminated_at,
            })
        })
        .collect()
}
