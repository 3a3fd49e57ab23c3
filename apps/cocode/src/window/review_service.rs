//! The Review panel's work on the workspace service's side, off the UI
//! thread: an action (undo, keep, viewed, mark reviewed, restore to before
//! a message) and the review computed again after it.

use std::sync::Arc;

use cocode_core::TaskId;

use crate::host::review::RollbackOutcome;
use crate::host::task_review::{self, CallMark, MessageMark, ReviewScope, TaskReview};
use crate::host::workspace_host::WorkspaceHost;

/// What the Review panel asks the service to do before it reads the
/// review again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewAction {
    Load,
    Undo {
        path: String,
        hunk: Option<usize>,
    },
    Keep {
        path: String,
        hunk: usize,
    },
    Viewed {
        path: String,
        viewed: bool,
    },
    MarkReviewed,
    /// Restore the task's files to before message K.
    RestoreBefore(usize),
}

impl ReviewAction {
    /// Whether the action may have changed files (the task list and the
    /// task's detail are read again).
    pub fn changes_files(&self) -> bool {
        matches!(self, Self::Undo { .. } | Self::RestoreBefore(_))
    }
}

/// A review as the service read it, with what the action did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewLoaded {
    pub task_id: String,
    pub prompt: String,
    /// How many attempts the task has had.
    pub attempts: u32,
    pub scope: ReviewScope,
    pub review: Result<TaskReview, String>,
    pub messages: Vec<MessageMark>,
    /// The tool calls that changed files.
    pub calls: Vec<CallMark>,
    /// What the action did (`Ok`) or why it was refused (`Err`); `None`
    /// for a plain load.
    pub outcome: Option<Result<String, String>>,
}

/// Runs `action` on task `task_id`, then reads its review in `scope`.
/// `running`: a task runs now (a restore waits until none does).
pub async fn review_of(
    host: &Arc<WorkspaceHost>,
    task_id: String,
    scope: ReviewScope,
    action: ReviewAction,
    running: bool,
) -> ReviewLoaded {
    let host = Arc::clone(host);
    let rt = tokio::runtime::Handle::current();
    let fallback = (task_id.clone(), scope);
    tokio::task::spawn_blocking(move || load(&host, &rt, &task_id, scope, &action, running))
        .await
        .unwrap_or_else(|e| ReviewLoaded {
            task_id: fallback.0,
            prompt: String::new(),
            attempts: 0,
            scope: fallback.1,
            review: Err(format!("the review could not be read: {e}")),
            messages: Vec::new(),
            calls: Vec::new(),
            outcome: None,
        })
}

fn load(
    host: &WorkspaceHost,
    rt: &tokio::runtime::Handle,
    task_id: &str,
    scope: ReviewScope,
    action: &ReviewAction,
    running: bool,
) -> ReviewLoaded {
    let mut loaded = ReviewLoaded {
        task_id: task_id.to_owned(),
        prompt: String::new(),
        attempts: 0,
        scope,
        review: Err(String::new()),
        messages: Vec::new(),
        calls: Vec::new(),
        outcome: None,
    };
    let Ok(id) = TaskId::new(task_id) else {
        loaded.review = Err(format!("“{task_id}” is not a task id"));
        return loaded;
    };
    let ws = &host.workspace;
    if *action != ReviewAction::Load {
        loaded.outcome = Some(act(host, rt, &id, scope, action, running));
    }
    match crate::host::records::load_task_record(ws, &id) {
        Ok(task) => {
            task.prompt().clone_into(&mut loaded.prompt);
            loaded.attempts = task.attempt_no().ordinal();
        }
        Err(e) => {
            loaded.review = Err(format!("{e:#}"));
            return loaded;
        }
    }
    loaded.messages = task_review::messages(ws, &id).unwrap_or_default();
    loaded.calls = task_review::calls(ws, &id).unwrap_or_default();
    loaded.review = task_review::review(ws, &id, scope)
        .map(|mut review| {
            task_review::highlight(ws, &mut review);
            review
        })
        .map_err(|e| format!("{e:#}"));
    loaded
}

/// Carries out one action; its outcome in words.
fn act(
    host: &WorkspaceHost,
    rt: &tokio::runtime::Handle,
    id: &TaskId,
    scope: ReviewScope,
    action: &ReviewAction,
    running: bool,
) -> Result<String, String> {
    let ws = &host.workspace;
    if let ReviewAction::RestoreBefore(k) = action {
        if running {
            return Err("stop the running tasks before restoring files".to_owned());
        }
        let query = match task_review::before_message(ws, id, *k) {
            Ok(Some(query)) => query,
            Ok(None) => {
                return Ok(crate::host::review::RollbackTo::Message(*k).nothing_after());
            }
            Err(e) => return Err(format!("{e:#}")),
        };
        return match crate::host::review::rollback(ws, id, &query) {
            Ok(RollbackOutcome::Done { restored, .. }) => Ok(format!(
                "restored {} path(s) to before message {k}",
                restored.len()
            )),
            Ok(RollbackOutcome::Conflicts(c)) => Err(format!(
                "restore refused, nothing was touched: {}",
                c.iter()
                    .map(|(p, why)| format!("{p} ({why})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Ok(RollbackOutcome::Refused(why)) => Err(format!("restore refused: {why}")),
            Err(e) => Err(format!("{e:#}")),
        };
    }
    let review = task_review::review(ws, id, scope).map_err(|e| format!("{e:#}"))?;
    match action {
        ReviewAction::Undo { path, hunk } => {
            rt.block_on(task_review::undo(
                ws,
                host.leases.as_ref(),
                &review,
                path,
                *hunk,
            ))
            .map_err(|e| match e {
                task_review::UndoError::Failed(why) => format!("the undo did not run: {why}"),
                refused => format!("undo refused: {refused}; nothing was touched"),
            })?;
            ws.gate
                .flush()
                .map_err(|e| format!("the undo is done but not yet safe on disk: {e}"))?;
            Ok(match hunk {
                Some(n) => format!("undid hunk {n} of {path}"),
                None => format!("undid the task's change to {path}"),
            })
        }
        ReviewAction::Keep { path, hunk } => task_review::keep(ws, &review, path, *hunk)
            .map(|()| format!("kept hunk {hunk} of {path}"))
            .map_err(|e| format!("{e:#}")),
        ReviewAction::Viewed { path, viewed } => {
            task_review::set_viewed(ws, &review, path, *viewed)
                .map(|()| String::new())
                .map_err(|e| format!("{e:#}"))
        }
        ReviewAction::MarkReviewed => task_review::mark_reviewed(ws, &review)
            .map(|()| "marked reviewed: the next review shows what changes after this".to_owned())
            .map_err(|e| format!("{e:#}")),
        ReviewAction::Load | ReviewAction::RestoreBefore(_) => Ok(String::new()),
    }
}
