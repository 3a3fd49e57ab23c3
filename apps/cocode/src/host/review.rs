//! What a person reviews about a task — its record, its snapshots with their
//! diffs, whether it can be rolled back — and the rollback itself, shared by
//! the `cocode rollback` command and the window.

use cocode_core::gate::SnapshotStore as _;
use cocode_core::task::{RollbackScope, TransitionContext};
use cocode_core::{DelegatedTask, TaskEvent, TaskId, TaskStatus, TaskTransition};
use cocode_workspace::{OpenWorkspace, RollbackAvailability, RollbackError, RollbackQuery};

use crate::host::orchestrator::describe_end;
use crate::host::records::{load_task_record, save_task_record};

/// A diff shown in full up to this many characters, then cut with a note.
const DIFF_LIMIT_CHARS: usize = 64 * 1024;

/// One snapshot, ready to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotRow {
    /// The snapshot's id (a rollback to it names it).
    pub id: String,
    pub seq: u64,
    pub attempt: u32,
    /// `create`, `modify`, `delete` or `rename`.
    pub kind: String,
    /// `gate`, `observed`, `review` or `rollback`.
    pub origin: String,
    pub path: String,
    pub diff: String,
}

/// A task as the review view shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskDetail {
    pub id: String,
    pub state: String,
    pub prompt: String,
    pub attempt: u32,
    pub retries: u8,
    /// One line per verification record: attempt, method, result.
    pub checks: Vec<String>,
    pub snapshots: Vec<SnapshotRow>,
    /// How many paths a rollback to the start would restore, or why it
    /// cannot run now.
    pub rollback: Result<usize, String>,
    /// Hosts the policy proxy refused for this task (kept in memory while
    /// the app runs).
    pub blocked_hosts: Vec<String>,
    /// Why a refused host a lockfile names is not allowed (an agent task's
    /// edit put it there), by host.
    pub held_hosts: std::collections::BTreeMap<String, String>,
    /// Paths a rollback to the start would revert that changed while the
    /// task's commands or agent ran: who changed them is unknown, so the
    /// rollback asks first.
    pub unknown_authors: Vec<String>,
    /// Where the workspace's repository stood when the task started (none
    /// outside a repository).
    pub started_on: Option<crate::host::records::StartedOn>,
    /// Each of the task's files against HEAD as it is now (path, diff),
    /// beside the task's own changes: what a commit would hold. `None`
    /// outside a repository; files with no change since HEAD are left out.
    pub since_head: Option<Vec<(String, String)>>,
    /// The conversation's checkpoints: one per message a person sent.
    pub messages: Vec<crate::host::task_review::MessageMark>,
}

/// One snapshot as the review and the transcript show it: its change as a
/// diff (cut past [`DIFF_LIMIT_CHARS`]).
pub fn snapshot_row(ws: &OpenWorkspace, s: &cocode_core::EditSnapshot) -> SnapshotRow {
    let store = ws.gate.store();
    let parts = s.parts();
    let mut diff = if parts.unkept.is_none() {
        store
            .diff_between(&parts.path, parts.base.as_ref(), parts.result.as_ref())
            .unwrap_or_else(|e| format!("(the diff cannot be shown: {e})"))
    } else {
        let side = match (parts.unkept.base, parts.unkept.result) {
            (true, true) => "before and after",
            (true, false) => "before",
            _ => "after",
        };
        format!(
            "(the content {side} the change was too large to keep: history holds only its hash)"
        )
    };
    if diff.chars().count() > DIFF_LIMIT_CHARS {
        diff = diff.chars().take(DIFF_LIMIT_CHARS).collect::<String>() + "\n… (diff cut)";
    }
    if let Some(from) = &parts.previous_path {
        diff = format!("renamed from {from}\n{diff}");
    }
    SnapshotRow {
        id: parts.snapshot_id.to_string(),
        seq: parts.seq.0,
        attempt: parts.attempt_no.ordinal(),
        kind: s.kind().phrase().to_owned(),
        origin: parts.origin.phrase().to_owned(),
        path: parts.path.to_string(),
        diff,
    }
}

/// Loads everything the review view shows about `id`.
pub fn detail(ws: &OpenWorkspace, id: &TaskId) -> anyhow::Result<TaskDetail> {
    let task = load_task_record(ws, id)?;
    let store = ws.gate.store();
    let records = store.snapshots_of_task(id)?;
    let snapshots = records.iter().map(|s| snapshot_row(ws, s)).collect();
    let mut snapshots_paths: Vec<cocode_core::NormalizedPath> =
        records.iter().map(|s| s.parts().path.clone()).collect();
    snapshots_paths.sort();
    snapshots_paths.dedup();
    let checks = task
        .verification_log()
        .iter()
        .map(|r| {
            let mut line = format!(
                "attempt {} · {} · {}",
                r.attempt_no().ordinal(),
                r.method().phrase(),
                r.phrase()
            );
            for detail in r.detail_lines() {
                line.push_str("\n    ");
                line.push_str(&detail);
            }
            line
        })
        .collect();
    let rollback = match ws.gate.rollback_availability(id, &RollbackQuery::TaskStart) {
        RollbackAvailability::Available { targets } => Ok(targets.len()),
        RollbackAvailability::Unavailable(e) => Err(unavailable(&e)),
    };
    Ok(TaskDetail {
        id: id.to_string(),
        state: describe_end(&task),
        prompt: task.prompt().to_owned(),
        attempt: task.attempt_no().ordinal(),
        retries: task.retry_count(),
        checks,
        snapshots,
        rollback,
        blocked_hosts: Vec::new(),
        held_hosts: std::collections::BTreeMap::new(),
        unknown_authors: unknown_authors(ws, id, &RollbackQuery::TaskStart),
        started_on: crate::host::records::started_on(ws, id),
        since_head: since_head(ws, &snapshots_paths),
        messages: crate::host::task_review::messages(ws, id).unwrap_or_default(),
    })
}

/// `paths` (workspace-relative) against HEAD: each one's diff from its
/// content at HEAD to its content now; `None` outside a repository.
fn since_head(
    ws: &OpenWorkspace,
    paths: &[cocode_core::NormalizedPath],
) -> Option<Vec<(String, String)>> {
    let root = ws.layout.workspace_root();
    cocode_git::head(root).ok().flatten()?;
    // HEAD's tree is read once for all the files.
    let rels: Vec<&str> = paths
        .iter()
        .map(cocode_core::NormalizedPath::as_str)
        .collect();
    let at_head = match cocode_git::head_contents(root, &rels) {
        Ok(contents) => contents,
        Err(e) => {
            let why = format!("(HEAD's content cannot be read: {e})");
            return Some(paths.iter().map(|p| (p.to_string(), why.clone())).collect());
        }
    };
    let mut out = Vec::new();
    for (path, at_head) in paths.iter().zip(at_head) {
        let file = cocode_git::absolute_path(root, path.as_str());
        let now = match std::fs::symlink_metadata(&file) {
            Ok(meta) if meta.is_file() => std::fs::read(&file).ok(),
            _ => None,
        };
        let mut diff =
            cocode_workspace::diff::unified(path, None, at_head.as_deref(), now.as_deref());
        if diff.is_empty() {
            continue;
        }
        if diff.chars().count() > DIFF_LIMIT_CHARS {
            diff = diff.chars().take(DIFF_LIMIT_CHARS).collect::<String>() + "\n… (diff cut)";
        }
        out.push((path.to_string(), diff));
    }
    Some(out)
}

/// The paths a rollback by `query` would revert whose change was found by
/// a sweep (`observed`: made while the task's commands or agent ran):
/// the task's, or a person's in an editor outside cocode, or another
/// program's — cocode cannot tell.
pub fn unknown_authors(ws: &OpenWorkspace, id: &TaskId, query: &RollbackQuery) -> Vec<String> {
    let Ok(records) = ws.gate.store().snapshots_of_task(id) else {
        return Vec::new();
    };
    let Ok(selected) = cocode_workspace::rollback::select(&records, query) else {
        return Vec::new();
    };
    let reverted: std::collections::BTreeSet<_> = cocode_workspace::rollback::targets(&selected)
        .into_iter()
        .map(|t| t.path)
        .collect();
    let mut paths: Vec<String> = selected
        .iter()
        .filter(|r| r.origin() == cocode_core::SnapshotOrigin::Observed)
        .flat_map(|r| r.transitions())
        .filter(|t| reverted.contains(&t.path))
        .map(|t| t.path.to_string())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Why a rollback cannot run, in words: conflicts name each path with its
/// reason (the count alone tells a person nothing).
fn unavailable(e: &RollbackError) -> String {
    match e {
        RollbackError::Conflicts(conflicts) => format!(
            "{} path(s) conflict: {}",
            conflicts.len(),
            conflicts
                .iter()
                .map(|c| format!("{} ({})", c.path, c.reason.describe()))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        other => other.to_string(),
    }
}

/// Where a rollback takes a task back to, as a person picks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RollbackTo {
    /// Its start: every change undone, and the task ends rolled back.
    Start,
    /// Before attempt K (1-based): it and every later attempt undone.
    Attempt(u32),
    /// Before this snapshot (id, seq): it and every later one undone.
    Snapshot(String, u64),
    /// Before message K of its conversation (1-based).
    Message(usize),
}

impl RollbackTo {
    /// In words, for a menu and a note.
    pub fn words(&self) -> String {
        match self {
            Self::Start => "the start".to_owned(),
            Self::Attempt(k) => format!("before attempt {k}"),
            Self::Snapshot(_, seq) => format!("before change #{seq}"),
            Self::Message(k) => format!("before message {k}"),
        }
    }

    /// Why nothing moves when [`Self::query`] finds nothing after the
    /// point.
    pub fn nothing_after(&self) -> String {
        format!(
            "nothing changed {}: nothing to undo",
            self.words().replacen("before", "after", 1)
        )
    }

    /// The rollback's query; `None` when nothing changed after the point
    /// (a message the agent changed nothing after).
    pub fn query(&self, ws: &OpenWorkspace, id: &TaskId) -> anyhow::Result<Option<RollbackQuery>> {
        Ok(Some(match self {
            Self::Start => RollbackQuery::TaskStart,
            Self::Attempt(0) => {
                anyhow::bail!("attempts are numbered from 1 (the first attempt is attempt 1)")
            }
            Self::Attempt(k) => RollbackQuery::ToAttempt(cocode_core::AttemptNo(k - 1)),
            Self::Snapshot(s, _) => RollbackQuery::ToSnapshot(
                cocode_core::SnapshotId::new(s)
                    .map_err(|_| anyhow::anyhow!("“{s}” is not a snapshot id"))?,
            ),
            Self::Message(k) => return crate::host::task_review::before_message(ws, id, *k),
        }))
    }
}

/// What a rollback would do, read before anything moves: the paths it
/// would restore or remove, or the paths that conflict (then it would
/// touch nothing), or why it cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollbackPreview {
    pub task_id: String,
    pub to: RollbackTo,
    pub changes: Vec<(String, Undone)>,
    /// (path, reason) per conflict.
    pub conflicts: Vec<(String, String)>,
    /// Why it cannot run at all (nothing to undo, not fully recorded…).
    pub refused: Option<String>,
    /// Paths it would revert that changed while the task's commands or
    /// agent ran (cocode cannot tell who changed them).
    pub unknown_authors: Vec<String>,
}

/// Prechecks a rollback of `id` to `to` without touching anything.
pub fn preview(ws: &OpenWorkspace, id: &TaskId, to: &RollbackTo) -> RollbackPreview {
    let mut preview = RollbackPreview {
        task_id: id.to_string(),
        to: to.clone(),
        changes: Vec::new(),
        conflicts: Vec::new(),
        refused: None,
        unknown_authors: Vec::new(),
    };
    let query = match to.query(ws, id) {
        Ok(Some(query)) => query,
        Ok(None) => {
            preview.refused = Some(to.nothing_after());
            return preview;
        }
        Err(e) => {
            preview.refused = Some(format!("{e:#}"));
            return preview;
        }
    };
    match ws.gate.rollback_availability(id, &query) {
        RollbackAvailability::Available { targets } => {
            preview.changes = targets
                .iter()
                .map(|t| {
                    let how = if t.target.is_some() {
                        Undone::Restored
                    } else {
                        Undone::Removed
                    };
                    (t.path.to_string(), how)
                })
                .collect();
            preview.unknown_authors = unknown_authors(ws, id, &query);
        }
        RollbackAvailability::Unavailable(RollbackError::Conflicts(conflicts)) => {
            preview.conflicts = conflicts
                .iter()
                .map(|c| (c.path.to_string(), c.reason.describe()))
                .collect();
        }
        RollbackAvailability::Unavailable(e) => preview.refused = Some(e.to_string()),
    }
    preview
}

/// What a rollback did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RollbackOutcome {
    /// Undid these paths, each restored or removed (none when nothing was
    /// left to undo).
    Done {
        restored: Vec<(String, Undone)>,
        task: DelegatedTask,
    },
    /// Refused; nothing was touched. (path, reason) per conflict.
    Conflicts(Vec<(String, String)>),
    Refused(String),
}

/// What a rollback did to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undone {
    /// Its earlier content is back (a file the task removed comes back).
    Restored,
    /// Gone: the task made it.
    Removed,
}

impl Undone {
    /// The line a person reads for `path`.
    pub fn line(self, path: &str) -> String {
        match self {
            Self::Restored => format!("restored {path}"),
            Self::Removed => format!("removed {path} (the task made it)"),
        }
    }
}

/// Rolls `id` back; a rollback to the start (or to attempt 0) also ends the
/// task as `rolled_back`.
pub fn rollback(
    ws: &OpenWorkspace,
    id: &TaskId,
    query: &RollbackQuery,
) -> anyhow::Result<RollbackOutcome> {
    let mut record = load_task_record(ws, id)?;
    let full = matches!(
        query,
        RollbackQuery::TaskStart | RollbackQuery::ToAttempt(cocode_core::AttemptNo(0))
    );
    match ws.gate.rollback(id, query) {
        Ok(restored) => {
            if full && record.status() != TaskStatus::RolledBack {
                let ctx = TransitionContext {
                    limits: ws.config.limits,
                };
                TaskTransition::apply(
                    &mut record,
                    &TaskEvent::RollbackSucceeded(RollbackScope::TaskStart),
                    &ctx,
                )?;
                save_task_record(ws, &record)?;
            }
            ws.gate.flush()?;
            Ok(RollbackOutcome::Done {
                restored: restored
                    .iter()
                    .map(|s| {
                        let how = if s.result().is_some() {
                            Undone::Restored
                        } else {
                            Undone::Removed
                        };
                        (s.parts().path.to_string(), how)
                    })
                    .collect(),
                task: record,
            })
        }
        Err(RollbackError::Conflicts(conflicts)) => Ok(RollbackOutcome::Conflicts(
            conflicts
                .iter()
                .map(|c| (c.path.to_string(), c.reason.describe()))
                .collect(),
        )),
        Err(e) => Ok(RollbackOutcome::Refused(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use cocode_workspace::rollback::{ConflictReason, PathConflict};

    use super::*;

    #[test]
    fn an_unavailable_rollback_names_each_conflicting_path_and_its_reason() {
        let path = |p: &str| cocode_core::NormalizedPath::try_from(p.to_owned()).unwrap();
        let e = RollbackError::Conflicts(vec![
            PathConflict {
                path: path("data/big.bin"),
                reason: ConflictReason::TooLargeToKeep,
            },
            PathConflict {
                path: path("a.txt"),
                reason: ConflictReason::NotAFile,
            },
        ]);
        assert_eq!(
            unavailable(&e),
            "2 path(s) conflict: data/big.bin (its content before the task was too large to keep; \
             history holds only its hash); a.txt (it is no longer a regular file)"
        );
        assert_eq!(
            unavailable(&RollbackError::NothingToRollBack),
            "nothing to roll back: the selection changes no file"
        );
    }
}
