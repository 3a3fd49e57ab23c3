//! A run's sweeps around the agent's commands and turns, and its
//! verification and verdict.

use std::sync::Arc;

use cocode_core::services::{VerificationRequest, VerificationRunner};
use cocode_core::task::TaskBackend;
use cocode_core::verification::{VerificationOutcome, VerificationVerdict};
use cocode_core::{CompletionMode, TaskEvent, TaskStatus};

// Tests build it with its parent under `cfg(test)`, where the lint is quiet.
#[cfg_attr(
    not(test),
    expect(
        clippy::wildcard_imports,
        reason = "a part of its parent's impl, cut out of one file: it names what the parent names"
    )
)]
use super::*;

impl Run<'_> {
    /// Whether the agent writes files with its own tools (an external ACP
    /// agent may, besides `fs/write_text_file`): its turns are swept.
    pub(super) fn sweeps_turns(&self) -> bool {
        matches!(self.task.backend(), TaskBackend::Acp { .. })
    }

    /// Takes the workspace's picture as an external agent's turn begins.
    pub(super) async fn turn_sweep_begin(&mut self) {
        if !self.sweeps_turns() || self.host.tasks.turn_swept(self.task.task_id()) {
            return;
        }
        self.sweep_begin().await;
        self.host.tasks.set_turn_swept(self.task.task_id(), true);
    }

    /// Records what an external agent changed itself during its turn as
    /// observed snapshots of the task.
    pub(super) async fn turn_sweep_end(&mut self) {
        if !self.host.tasks.turn_swept(self.task.task_id()) {
            return;
        }
        self.host.tasks.set_turn_swept(self.task.task_id(), false);
        self.record_sweep(
            cocode_core::SnapshotOrigin::Observed,
            "the agent changed {} file(s) itself; recorded with the task",
            "what the agent changed itself could not be recorded",
        )
        .await;
    }

    /// Refreshes the sweep's picture before verification commands run (or
    /// an external agent's turn), kept for a later start in case cocode
    /// ends before the look after them.
    pub(super) async fn sweep_begin(&mut self) {
        let host = Arc::clone(&self.host);
        let ctx = self.sweep_context();
        let cancel = self.stop.clone();
        let began = tokio::task::spawn_blocking(move || {
            let stop = crate::host::sweep_budget::sweep_stop(cancel);
            let limit = host.workspace.config.limits.attempt_time_limit();
            let budget = crate::host::sweep_budget::sweep_budget(limit, &stop);
            host.workspace.gate.begin_task_sweep(&ctx, &budget)
        })
        .await;
        if let Ok(Err(e)) = began {
            self.say(Progress::Note(format!(
                "the workspace could not be swept before verification: {e}"
            )));
        }
    }

    /// Who a sweep's records belong to.
    fn sweep_context(&self) -> cocode_core::gate::TaskContext {
        cocode_core::gate::TaskContext {
            task_id: self.task.task_id().clone(),
            session_id: self.session_id.clone(),
            attempt_no: self.task.attempt_no(),
        }
    }

    /// Ends the task when a sweep could not record all of its changes (a
    /// look out of time or stopped, the history's disk failing): it says
    /// why, and the task fails (`RecordingFailed`), since its rollback is
    /// refused from now on. Returns whether it did.
    pub(super) async fn fail_if_unrecorded(&mut self) -> Result<bool, OrchestratorError> {
        if self.task.status().is_terminal() {
            return Ok(false);
        }
        let Some(reason) = self.host.workspace.gate.unrecorded_now(self.task.task_id()) else {
            return Ok(false);
        };
        self.say(Progress::Note(format!(
            "cocode could not record all of this task's changes ({reason}); the task stops, and it cannot be rolled back"
        )));
        self.apply(TaskEvent::RecordingFailed).await?;
        Ok(true)
    }

    /// Records what verification commands changed as the task's own changes.
    pub(super) async fn sweep_end(&mut self) {
        self.record_sweep(
            cocode_core::SnapshotOrigin::Verification,
            "verification changed {} file(s); recorded with the task",
            "what verification changed could not be recorded",
        )
        .await;
    }

    /// Ends a sweep: what changed since its picture becomes the task's
    /// snapshots with `origin`; `changed` (with `{}` for the count) and
    /// `failed` say so.
    pub(super) async fn record_sweep(
        &mut self,
        origin: cocode_core::SnapshotOrigin,
        changed: &str,
        failed: &str,
    ) {
        let host = Arc::clone(&self.host);
        let ctx = self.sweep_context();
        // The agent's own writes and verification's commands both come from
        // confined processes, as an agent's commands do.
        let writers = host.command_writers;
        let cancel = self.stop.clone();
        let ended = tokio::task::spawn_blocking(move || {
            let stop = crate::host::sweep_budget::sweep_stop(cancel);
            let limit = host.workspace.config.limits.attempt_time_limit();
            let budget = crate::host::sweep_budget::sweep_budget(limit, &stop);
            let records = host
                .workspace
                .gate
                .end_sweep_within(&ctx, origin, writers, &budget)?;
            // A repository the agent or a check made goes again, as after
            // an agent's command.
            let removed = crate::host::tools::remove_made_metadata(&host.workspace, &ctx, &records);
            // A test file the agent changed itself went back to its base;
            // the change waits for a person.
            for change in host.workspace.gate.take_sweep_held(&ctx.task_id) {
                host.tasks.notify_held(HeldEdit { change });
            }
            Ok::<_, cocode_core::gate::GateError>((records, removed))
        })
        .await;
        match ended {
            Ok(Ok((records, removed))) => {
                if !records.is_empty() {
                    let text = changed.replace("{}", &records.len().to_string());
                    self.say(Progress::Note(text));
                }
                if let Some(note) = removed {
                    self.say(Progress::Note(note));
                }
            }
            Ok(Err(e)) => self.say(Progress::Note(format!("{failed}: {e}"))),
            Err(_) => {}
        }
    }

    /// The agent declared the attempt done: verify, then decide.
    pub(super) async fn verify(&mut self) -> Result<(), OrchestratorError> {
        if self.task.status() == TaskStatus::Running {
            self.apply(TaskEvent::AgentTurnEnded).await?;
        }
        let (commands, unread) = self.host.verification_commands();
        if let Some(note) = unread {
            self.say(Progress::Note(note));
        }
        let untrusted = crate::host::trust::untrusted_verification(self.host.root(), &commands);
        let request = VerificationRequest {
            task_id: self.task.task_id().clone(),
            attempt_no: self.task.attempt_no(),
            workspace_root: self.host.root().to_path_buf(),
            edited_paths: self.edited_paths(),
            commands,
            untrusted,
        };
        self.say(Progress::Note("verifying".into()));
        // Verification commands write files too (a test that leaves output
        // behind): swept like agent commands, recorded as the task's own
        // changes (`verification`), so a rollback undoes them.
        self.sweep_begin().await;
        let verified = self.host.runner.verify(request).await;
        self.sweep_end().await;
        if self.fail_if_unrecorded().await? {
            return Ok(());
        }
        match verified {
            Ok(records) => {
                for record in records {
                    self.say(Progress::Verification(record.clone()));
                    if matches!(record.outcome(), VerificationOutcome::Fail(_))
                        && let cocode_toolchain::verify::RawNotice::Present(bytes) = self
                            .host
                            .runner
                            .raw_output(self.task.task_id(), record.attempt_no(), record.method())
                    {
                        let excerpt = cocode_toolchain::verify::failure_excerpt(
                            &String::from_utf8_lossy(&bytes),
                            EXCERPT_LINES,
                            EXCERPT_BYTES,
                        );
                        if !excerpt.is_empty() {
                            self.say(Progress::VerificationOutput {
                                method: record.method(),
                                excerpt,
                                named: !record.findings().is_empty(),
                            });
                        }
                    }
                    if let Err(e) = self.task.record_verification(record) {
                        self.say(Progress::Note(format!(
                            "a verification record was refused: {e}"
                        )));
                    }
                }
                self.persist()?;
            }
            Err(e) => {
                self.say(Progress::Note(format!("verification could not run: {e}")));
                self.apply(TaskEvent::EnvironmentExhausted).await?;
                return Ok(());
            }
        }
        self.decide_verdict().await
    }

    /// Turns the verdict into the transition the completion mode allows:
    /// environment failures end the task in both modes; in human-approval
    /// mode every other verdict goes to a person (the log is shown, not a
    /// gate); in self-verification mode pass completes, a code defect
    /// retries, and an incomplete verdict goes to a person.
    pub(super) async fn decide_verdict(&mut self) -> Result<(), OrchestratorError> {
        let verdict = self.task.verdict();
        if let VerificationVerdict::Fail { class } = verdict
            && !class.spends_retry()
        {
            self.apply(TaskEvent::EnvironmentExhausted).await?;
            return Ok(());
        }
        match (self.task.completion_mode(), verdict) {
            (CompletionMode::HumanApproval, _) => {
                self.apply(TaskEvent::VerificationDone).await?;
                self.ask().await?;
            }
            (CompletionMode::SelfVerification, VerificationVerdict::Fail { .. }) => {
                self.apply(TaskEvent::VerdictFail).await?;
            }
            (CompletionMode::SelfVerification, VerificationVerdict::Pass) => {
                self.apply(TaskEvent::VerdictPass).await?;
            }
            (CompletionMode::SelfVerification, VerificationVerdict::NotCompletable(_)) => {
                self.apply(TaskEvent::VerdictIncomplete).await?;
                self.ask().await?;
            }
        }
        Ok(())
    }
}
