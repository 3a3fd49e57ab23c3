//! The Review panel's commands and the reviews the workspace service
//! reads for it.

use crate::host::task_review::ReviewScope;
use crate::window::review::{HunkLayout, ReviewCommand, ReviewPanel};
use crate::window::review_service::{ReviewAction, ReviewLoaded};
use crate::window::workspace_service::ServiceRequest;

// Tests build it with its parent under `cfg(test)`, where the lint is quiet.
#[cfg_attr(
    not(test),
    expect(
        clippy::wildcard_imports,
        reason = "a part of its parent's impl, cut out of one file: it names what the parent names"
    )
)]
use super::*;

impl CocodeApp {
    /// Applies one of the Review panel's commands.
    pub(super) fn run_review(&mut self, command: ReviewCommand) {
        match command {
            ReviewCommand::Open(task_id) => {
                // A new task starts at what the person has not seen yet.
                if self.review.task_id.as_deref() != Some(task_id.as_str()) {
                    self.review = ReviewPanel {
                        task_id: Some(task_id),
                        scope: Some(ReviewScope::SinceReview),
                        layout: HunkLayout::of_saved(self.saved.review_side_by_side),
                        ..ReviewPanel::default()
                    };
                }
                self.review.note = None;
                self.review.error = None;
                self.review.keys_here = true;
                self.show_panel(PanelId::Review);
                self.review_request(ReviewAction::Load);
            }
            ReviewCommand::Scope(scope) => {
                self.review.scope = Some(scope);
                self.review.cursor = None;
                self.review_request(ReviewAction::Load);
            }
            ReviewCommand::Undo { path, hunk } => {
                self.review_request(ReviewAction::Undo { path, hunk });
            }
            ReviewCommand::Keep { path, hunk } => {
                self.review_request(ReviewAction::Keep { path, hunk });
            }
            ReviewCommand::Viewed { path, viewed } => {
                self.review_request(ReviewAction::Viewed { path, viewed });
            }
            ReviewCommand::MarkReviewed => self.review_request(ReviewAction::MarkReviewed),
            ReviewCommand::Layout(layout) => {
                self.review.layout = layout;
                self.saved.review_side_by_side = layout == HunkLayout::SideBySide;
            }
            ReviewCommand::Step { forward } => self.review.step(forward),
            ReviewCommand::KeepAtCursor => {
                if let Some((path, Some(hunk))) = self.review.at_cursor() {
                    self.review_request(ReviewAction::Keep { path, hunk });
                }
            }
            ReviewCommand::UndoAtCursor => {
                if let Some((path, hunk)) = self.review.at_cursor() {
                    self.review_request(ReviewAction::Undo { path, hunk });
                }
            }
            ReviewCommand::Select { file, hunk } => {
                self.review.cursor = Some(crate::window::review::Cursor { file, hunk });
            }
            ReviewCommand::OpenAt { path, line } => {
                if let Some(root) = self.workspace_root().cloned() {
                    let full = root.join(&path);
                    self.open_file(&full);
                    if let Some(id) = self.editors.by_path(&full) {
                        let line = line.saturating_sub(1);
                        // The hunk a few lines below the top, not at the
                        // bottom edge where a reveal would leave it.
                        if let Some(tab) = self.editors.get_mut(id) {
                            tab.pending_first_line = Some(line.saturating_sub(6));
                        }
                        self.editors.select_range(id, line, 0, 0);
                        if let Some(tab) = self.editors.get_mut(id) {
                            tab.reveal = false;
                        }
                    }
                }
            }
            ReviewCommand::AskRestore(k) => self.review.confirm_restore = Some(k),
            ReviewCommand::CancelRestore => self.review.confirm_restore = None,
            ReviewCommand::ConfirmRestore => {
                if let Some(k) = self.review.confirm_restore.take() {
                    self.review.restoring = Some(k);
                    self.review_request(ReviewAction::RestoreBefore(k));
                }
            }
        }
    }

    /// A task's run ended: unless the person is reviewing another task
    /// that still has files to look at, its review is read (the panel is
    /// not shown), so the status bar can say how many files wait.
    pub(super) fn review_after_run(&mut self, task_id: String) {
        let busy_elsewhere = self.review.task_id.as_ref().is_some_and(|t| *t != task_id)
            && self.review.unviewed() > 0;
        if busy_elsewhere {
            return;
        }
        if self.review.task_id.as_deref() != Some(task_id.as_str()) {
            self.review = ReviewPanel {
                task_id: Some(task_id),
                scope: Some(ReviewScope::SinceReview),
                ..ReviewPanel::default()
            };
        }
        self.review_request(ReviewAction::Load);
    }

    /// Asks for a rollback of a task; when it is the task under review,
    /// its review is read again after it (the service answers in order).
    pub(super) fn send_rollback(&mut self, task_id: &str, to: crate::host::review::RollbackTo) {
        self.send_task(ServiceRequest::Rollback {
            task_id: task_id.to_owned(),
            to,
        });
        if self.review.task_id.as_deref() == Some(task_id) {
            self.review_request(ReviewAction::Load);
        }
    }

    /// Asks the workspace service to do `action` on the task under review
    /// and read its review again.
    fn review_request(&mut self, action: ReviewAction) {
        let (Some(task_id), Some(scope)) = (self.review.task_id.clone(), self.review.scope) else {
            return;
        };
        if self.tasks.is_none() {
            self.review.error = Some("open a folder first".to_owned());
            return;
        }
        self.review.loading = true;
        self.send_task(ServiceRequest::Review {
            task_id,
            scope,
            action,
        });
    }

    /// A review the service read: shown when it is still the task and the
    /// scope under review.
    pub(super) fn on_review_loaded(&mut self, loaded: ReviewLoaded) {
        if self.review.task_id.as_deref() != Some(loaded.task_id.as_str()) {
            return;
        }
        let files_changed = loaded
            .outcome
            .as_ref()
            .is_some_and(|o| o.as_ref().is_ok_and(|s| !s.is_empty()));
        self.review.loading = false;
        self.review.prompt = loaded.prompt;
        self.review.attempts = loaded.attempts;
        self.review.messages = loaded.messages;
        self.review.calls = loaded.calls;
        match loaded.outcome {
            Some(Ok(note)) if !note.is_empty() => {
                self.review.note = Some(note);
                self.review.error = None;
            }
            Some(Err(why)) => {
                self.review.error = Some(why);
                self.review.note = None;
            }
            _ => {}
        }
        if Some(loaded.scope) != self.review.scope {
            return;
        }
        let before = self.review.cursor_index();
        match loaded.review {
            Ok(review) => {
                self.review.review = Some(review);
                self.review.settle_cursor(before);
            }
            Err(why) => {
                self.review.review = None;
                self.review.error = Some(why);
            }
        }
        // The open editors show the hunks left to review.
        self.editors.set_review_marks(self.review.review.as_ref());
        // Restored to before a message: the message goes back into the
        // composer, to be edited and run again from the files as they were.
        if let Some(k) = self.review.restoring.take()
            && self.review.error.is_none()
            && let Some(mark) = self.review.messages.iter().find(|m| m.number == k)
        {
            self.agent.prompt.clone_from(&mark.text);
            self.agent.note = Some(format!(
                "The files are as they were before message {k}; its text is in the composer to edit and run again."
            ));
            self.show_panel(PanelId::Agent);
        }
        // The task's detail, when shown, follows an undo or a restore.
        if files_changed
            && let Some(detail) = &self.agent.detail
            && detail.id == loaded.task_id
        {
            let task_id = detail.id.clone();
            self.send_task(ServiceRequest::Detail { task_id });
        }
    }
}
