//! An ACP session as the host sees it: turns sent, requests completed,
//! cancel and dispose.

use super::*;

#[async_trait]
impl AgentSession for AcpSession {
    fn capabilities(&self) -> AgentCapabilities {
        self.capabilities
    }

    fn events(&mut self) -> EventStream {
        match self.events.take() {
            Some(rx) => Box::pin(Receiver(rx)),
            None => Box::pin(Receiver(mpsc::unbounded_channel().1)),
        }
    }

    async fn send(&self, turn: UserTurn) -> Result<(), AgentError> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(AgentError::Closed);
        }
        if self
            .turn_running
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(backend(
                "AGENT_BUSY",
                "the agent is still working on the previous turn",
                true,
            ));
        }
        self.commands
            .send(Command::Prompt(turn.text))
            .await
            .map_err(|_| AgentError::Closed)
    }

    fn request_output(&self, id: &RequestId, chunk: &[u8]) {
        self.shared.request_output(id, chunk);
    }

    async fn complete(
        &self,
        id: RequestId,
        completion: RequestCompletion,
    ) -> Result<(), AgentError> {
        let pending = self
            .shared
            .lock_pending()
            .remove(&id)
            .ok_or_else(|| AgentError::AlreadyCompleted(id.clone()))?;
        let sent = match (pending, completion) {
            (Pending::Command { terminal_id }, completion) => {
                self.shared.terminal_ended(&terminal_id, completion);
                Ok(())
            }
            (Pending::Read(r), RequestCompletion::Success(value)) => {
                let content = value
                    .get("content")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                r.respond(acp::ReadTextFileResponse::new(content))
            }
            (Pending::Write(r), RequestCompletion::Success(_)) => {
                r.respond(acp::WriteTextFileResponse::new())
            }
            (Pending::Permission { responder, options }, completion) => {
                let chosen = match &completion {
                    RequestCompletion::Success(v) => v
                        .get("optionId")
                        .and_then(serde_json::Value::as_str)
                        .filter(|id| options.iter().any(|(o, _)| o == id))
                        .map(str::to_owned),
                    // A refusal picks the agent's own reject option when it has one.
                    _ => options
                        .iter()
                        .find(|(_, k)| {
                            matches!(
                                k,
                                PermissionOptionKind::RejectOnce
                                    | PermissionOptionKind::RejectAlways
                            )
                        })
                        .map(|(o, _)| o.clone()),
                };
                let outcome = chosen.map_or(acp::RequestPermissionOutcome::Cancelled, |id| {
                    acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(id))
                });
                responder.respond(acp::RequestPermissionResponse::new(outcome))
            }
            (
                Pending::Read(r),
                RequestCompletion::Refused { code } | RequestCompletion::Error { code, .. },
            ) => r.respond_with_error(failure(&code)),
            (
                Pending::Write(r),
                RequestCompletion::Refused { code } | RequestCompletion::Error { code, .. },
            ) => r.respond_with_error(failure(&code)),
        };
        sent.map_err(|e| backend("ACP_TRANSPORT_CLOSED", e.to_string(), false))
    }

    async fn cancel(&self, _reason: CancelReason) -> Result<(), AgentError> {
        let running = self.turn_running.load(Ordering::Acquire);
        // During a turn the connection sends `session/cancel` first and then
        // answers the pending permissions, so the agent learns of the cancel
        // before it sees the answers.
        let sent = running && self.commands.send(Command::Cancel).await.is_ok();
        if !sent {
            self.shared.cancel_pending();
        }
        if running {
            // The agent answers the prompt with `cancelled`; one that does not
            // within the grace period is killed.
            let flag = Arc::clone(&self.turn_running);
            let kill = self.kill.clone();
            let grace = self.grace;
            tokio::spawn(async move {
                tokio::time::sleep(grace).await;
                if flag.load(Ordering::Acquire) {
                    kill.cancel();
                }
            });
        }
        Ok(())
    }

    async fn dispose(self: Box<Self>) {
        let _ = self.cancel(CancelReason::WorkspaceClosing).await;
        self.kill.cancel();
    }
}
