//! A run's agent events and the host requests it answers.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;

use cocode_core::agent::{AgentEvent, RequestCompletion, TurnEndReason, UserTurn};
use cocode_core::task::{TaskBackend, UnresponsiveSignal};
use cocode_core::{RequestId, TaskEvent};
use cocode_tool_protocol::OutputSink;

use crate::host::trace::RequestEnd;

use super::*;

impl Run<'_> {
    /// Sends one turn (a prompt, a reply, a failure summary) to the agent:
    /// its own changes are swept from here on, and the trace shows the
    /// request until the turn ends.
    pub(super) async fn send_turn(
        &mut self,
        text: String,
    ) -> Result<(), cocode_core::agent::AgentError> {
        self.turn_sweep_begin().await;
        let Some(session) = &self.session else {
            return Ok(());
        };
        let ctx = cocode_tool_protocol::ToolCallContext {
            source: match self.task.backend() {
                TaskBackend::Local => cocode_tool_protocol::ToolSource::LocalFallback,
                TaskBackend::BuiltIn { .. } => cocode_tool_protocol::ToolSource::Model,
                TaskBackend::Acp { .. } => cocode_tool_protocol::ToolSource::Acp,
            },
            mode: cocode_tool_protocol::ToolMode::Agent,
            session_id: self.session_id.to_string(),
            task_id: Some(self.task.task_id().to_string()),
            revision: None,
        };
        let agent = match self.task.backend() {
            TaskBackend::Local => "local agent".to_owned(),
            TaskBackend::BuiltIn { provider, model } => format!("{provider} · {model}"),
            TaskBackend::Acp { agent_id } => format!("acp:{agent_id}"),
        };
        let trace = self.host.trace.agent_request(&ctx, &agent, &text);
        match session.send(UserTurn { text }).await {
            Ok(()) => {
                // A row still open ends first: nothing more comes of it.
                self.request_trace = Some(trace);
                Ok(())
            }
            Err(e) => {
                trace.end(&RequestEnd::Failed {
                    code: "AGENT_SEND_FAILED".to_owned(),
                    message: e.to_string(),
                });
                Err(e)
            }
        }
    }

    /// Ends the open trace row of the agent's turn.
    fn end_request_trace(&mut self, end: &RequestEnd) {
        if let Some(trace) = self.request_trace.take() {
            trace.end(end);
        }
    }

    /// A tool call began (or said more of itself): the task's newest
    /// change now is where its own changes start.
    fn call_began(&mut self, call_id: &str, title: Option<&str>) {
        if let Some((known, _)) = self.call_starts.get_mut(call_id) {
            if let Some(title) = title {
                title.clone_into(known);
            }
            return;
        }
        let ws = &self.host.workspace;
        match crate::host::task_review::newest_seq(ws, self.task.task_id()) {
            Ok(now) => {
                // No later than the last mark: the call may already have
                // run when its start is read (`None`, no change, is least).
                let after = self.seq_mark.min(now);
                self.call_starts.insert(
                    call_id.to_owned(),
                    (title.unwrap_or(call_id).to_owned(), after),
                );
            }
            Err(e) => tracing::warn!("a tool call's start is not recorded: {e:#}"),
        }
    }

    /// Notes the task's newest change as the point the next call's changes
    /// start from at the earliest (set at the start, after the baseline's
    /// sweep, which is not the agent's).
    pub(super) fn mark_seq(&mut self) {
        match crate::host::task_review::newest_seq(&self.host.workspace, self.task.task_id()) {
            Ok(now) => self.seq_mark = now,
            Err(e) => tracing::warn!("the task's newest change is not read: {e:#}"),
        }
    }

    /// A tool call ended: the changes recorded while it ran are its own
    /// (kept with the task when there were any).
    fn call_ended(&mut self, call_id: &str, title: Option<&str>) {
        let Some((known, after)) = self.call_starts.remove(call_id) else {
            return;
        };
        let title = title.unwrap_or(&known);
        let ws = &self.host.workspace;
        if let Err(e) =
            crate::host::task_review::record_call(ws, self.task.task_id(), (call_id, title), after)
        {
            tracing::warn!("a tool call's changes are not recorded apart: {e:#}");
        }
        self.mark_seq();
    }

    /// Acts on the end of the agent's turn.
    async fn turn_ended(&mut self, reason: TurnEndReason) -> Result<(), OrchestratorError> {
        match reason {
            TurnEndReason::Finished => {
                self.attempt_done().await?;
            }
            TurnEndReason::Cancelled => self.turn_cancelled().await?,
            // An agent without `task.finish` (an external one) cannot
            // say it is done. With a person there (the window,
            // `--interactive`) its turn's end is theirs to answer, as in
            // any ACP client: reply and the conversation goes on, or
            // finish and verify. Without one, the end of its turn is the
            // end of the attempt.
            TurnEndReason::EndTurn
                if !self
                    .session
                    .as_ref()
                    .is_some_and(|s| s.capabilities().finish_tool) =>
            {
                if self.approver.converses() && self.task.status() == TaskStatus::Running {
                    self.say(Progress::Note(
                        "the agent's turn ended: reply to go on, or finish and verify".into(),
                    ));
                    self.apply(TaskEvent::AwaitReply).await?;
                    self.converse().await?;
                } else {
                    self.attempt_done().await?;
                }
            }
            reason => {
                self.say(Progress::Note(format!(
                    "the agent ended its turn ({}) without finishing the attempt",
                    reason.phrase()
                )));
                if self.approver.converses() {
                    self.apply(TaskEvent::AwaitReply).await?;
                    self.converse().await?;
                } else {
                    self.apply(TaskEvent::AgentEndedUnfinished).await?;
                }
            }
        }
        Ok(())
    }

    /// The person asked to compact the conversation while the task waits
    /// for them: the session compacts, and what it said about it (the
    /// marker, the window's use, the summary request's tokens) is shown and
    /// kept now rather than after their reply.
    pub(super) async fn compact_now(&mut self) {
        let Some(session) = self.session.as_ref() else {
            return;
        };
        if let Err(e) = session.compact().await {
            self.say(Progress::Note(format!(
                "the conversation was not compacted: {e}"
            )));
        }
        while let Some(Some(event)) = self
            .events
            .as_mut()
            .and_then(|events| futures_util::FutureExt::now_or_never(events.next()))
        {
            self.say(Progress::Agent(event.clone()));
            self.keep_in_record(event);
        }
    }

    /// Keeps what the session reported about its model in the task's
    /// record: what the model saw before a compaction, another model
    /// answering, the tokens and cost of each request.
    fn keep_in_record(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::TokenUsage { .. } => {
                if let Some(spent) = crate::host::spent::Spent::of(&event)
                    && let Err(e) = self.host.record_usage(self.task.task_id(), spent)
                {
                    tracing::warn!("the task's tokens are not recorded: {e:#}");
                }
            }
            AgentEvent::Compacted {
                before,
                after,
                left_out,
                summarized,
                summary,
                replaced,
            } => {
                let record = serde_json::json!({
                    "version": 1,
                    "estimated_tokens_before": before,
                    "estimated_tokens_after": after,
                    "results_left_out": left_out,
                    "messages_summarized": summarized,
                    "summary": summary,
                    "conversation_before": replaced,
                });
                if let Err(e) = self.host.record_compaction(self.task.task_id(), &record) {
                    self.say(Progress::Note(format!(
                        "what the model saw before the compaction could not be kept: {e:#}"
                    )));
                }
            }
            AgentEvent::ModelMismatch { asked, answered } => {
                if let Err(e) =
                    self.host
                        .record_answered_model(self.task.task_id(), &asked, &answered)
                {
                    tracing::warn!("the model that answered is not recorded: {e:#}");
                }
            }
            _ => {}
        }
    }

    /// Acts on one session event.
    pub(super) async fn on_event(
        &mut self,
        event: AgentEvent,
        calls_in_flight: &mut BTreeSet<String>,
    ) -> Result<(), OrchestratorError> {
        if matches!(
            event,
            AgentEvent::TurnEnded { .. }
                | AgentEvent::Failed { .. }
                | AgentEvent::TransportClosed { .. }
        ) {
            // What the agent wrote itself during the turn is its own change
            // (and part of what verification looks at).
            self.turn_sweep_end().await;
            self.end_request_trace(&request_end(&event));
            // A test file it changed itself went back to its base: a person
            // decides before the attempt goes on (approval applies it).
            // (Asked only then: an edit taken here is always decided.)
            if matches!(event, AgentEvent::TurnEnded { .. })
                && self.task.status() == TaskStatus::Running
                && let Ok(edit) = self.held.try_recv()
            {
                self.on_held(edit).await?;
                if self.task.status() != TaskStatus::Running {
                    return Ok(());
                }
            }
        }
        match event {
            AgentEvent::ToolCallUpdate(u) => {
                use cocode_core::agent::ToolCallStatus as S;
                match u.status {
                    S::Pending | S::InProgress => {
                        self.call_began(&u.call_id, u.title.as_deref());
                        calls_in_flight.insert(u.call_id);
                    }
                    S::Completed | S::Failed | S::Cancelled => {
                        self.call_ended(&u.call_id, u.title.as_deref());
                        calls_in_flight.remove(&u.call_id);
                    }
                }
            }
            AgentEvent::TurnEnded { reason } => self.turn_ended(reason).await?,
            AgentEvent::Failed { code, .. } => {
                self.apply(TaskEvent::AgentError { code }).await?;
            }
            e @ (AgentEvent::Compacted { .. }
            | AgentEvent::ModelMismatch { .. }
            | AgentEvent::TokenUsage { .. }) => {
                self.keep_in_record(e);
            }
            AgentEvent::Request(request) => {
                // Completed through the tool registry, answered by the pump
                // when done; time spent on it is not idleness.
                let token = self.stop.child_token();
                self.request_tokens
                    .insert(request.id.clone(), token.clone());
                let host = Arc::clone(&self.host);
                let task = self.task.task_id().clone();
                let session = self.session_id.clone();
                let id = request.id.clone();
                let sink = {
                    let (tx, id) = (self.request_output.0.clone(), id.clone());
                    OutputSink(Arc::new(move |chunk: &[u8]| {
                        let _ = tx.send((id.clone(), chunk.to_vec()));
                    }))
                };
                let handle = self.requests.spawn(async move {
                    let completion = host
                        .complete_request(&task, &session, request.kind, &token, Some(sink))
                        .await;
                    (request.id, completion)
                });
                self.request_tasks.insert(handle.id(), id);
            }
            AgentEvent::RequestWithdrawn { id } => {
                if let Some(token) = self.request_tokens.get(&id) {
                    token.cancel();
                }
            }
            AgentEvent::TransportClosed { .. } => {
                self.apply(TaskEvent::Unresponsive(UnresponsiveSignal::TransportClosed))
                    .await?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Answers the agent once the host completed one of its requests.
    pub(super) async fn answer(
        &mut self,
        done: Result<(tokio::task::Id, (RequestId, RequestCompletion)), tokio::task::JoinError>,
    ) {
        let (id, completion) = match done {
            Ok((task, done)) => {
                self.request_tasks.remove(&task);
                done
            }
            // Every request is answered exactly once, even when its
            // handler failed.
            Err(e) => {
                let Some(id) = self.request_tasks.remove(&e.id()) else {
                    return;
                };
                self.say(Progress::Note(format!("a request's handler failed: {e}")));
                (
                    id,
                    RequestCompletion::Error {
                        code: "TOOL_EXECUTION_FAILED".into(),
                        retryable: false,
                    },
                )
            }
        };
        self.request_tokens.remove(&id);
        if let RequestCompletion::Refused { code } = &completion {
            self.last_refusal = Some(code.clone());
        }
        if let Some(session) = &self.session
            && let Err(e) = session.complete(id, completion).await
        {
            self.say(Progress::Note(format!(
                "a request could not be answered: {e}"
            )));
        }
    }

    /// What to say when the agent has been quiet for [`QUIET`]: and which
    /// places the proxy refused it, with the setting that allows each kind.
    pub(super) fn quiet_note(&self) -> String {
        let mut note = format!(
            "no word from the agent for {} s; it is still running",
            QUIET.as_secs()
        );
        let refused = self.host.proxy.blocked_places(self.task.task_id());
        if !refused.is_empty() {
            let _ = write!(note, "; the proxy refused it {}", refused.join(", "));
            if matches!(self.task.backend(), TaskBackend::Acp { .. }) {
                note.push_str(
                    " (an external agent's own model API belongs in model_hosts of its acp_agents entry)",
                );
            }
        }
        note
    }
}

/// How the event that ends a turn ends its trace row.
fn request_end(event: &AgentEvent) -> RequestEnd {
    match event {
        AgentEvent::TurnEnded {
            reason: TurnEndReason::Cancelled,
        } => RequestEnd::Cancelled,
        AgentEvent::TurnEnded { reason } => RequestEnd::Ended {
            reason: reason.phrase().to_owned(),
        },
        AgentEvent::Failed { code, message } => RequestEnd::Failed {
            code: code.clone(),
            message: message.clone(),
        },
        _ => RequestEnd::Failed {
            code: "AGENT_TRANSPORT_CLOSED".to_owned(),
            message: "the connection to the agent closed".to_owned(),
        },
    }
}
