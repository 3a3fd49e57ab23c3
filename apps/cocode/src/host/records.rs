//! Task records under `.cocode/history/tasks/<id>/`: `task.json` (written
//! through the history store, atomic and synced) and `runner.json`, the
//! process that runs the task.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cocode_core::{DelegatedTask, TaskId};
use cocode_workspace::{OpenWorkspace, TaskLife};

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
