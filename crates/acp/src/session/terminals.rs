//! The agent's terminals: commands it asks the client to run, their live
//! output, waits for their exit, and their end.

use super::*;

impl Shared {
    /// `terminal/create`: the id now, the command through the host.
    pub(super) fn create_terminal(&self, r: &acp::CreateTerminalRequest) -> String {
        let n = self.next_terminal.fetch_add(1, Ordering::Relaxed);
        let terminal_id = format!("term-{n}");
        let request = self.next_id();
        let cwd = r
            .cwd
            .as_ref()
            .map(|c| self.relative(c))
            .filter(|c| !c.is_empty());
        let kind = AgentRequestKind::Command {
            argv: command_argv(&r.command, &r.args),
            cwd,
            env: r
                .env
                .iter()
                .map(|e| (e.name.clone(), e.value.clone()))
                .collect(),
            output_limit: r.output_byte_limit,
        };
        self.lock_terminals().insert(
            terminal_id.clone(),
            Terminal {
                request: request.clone(),
                end: None,
                waiters: Vec::new(),
                killed: false,
                live: OutputBuffer::new(Some(
                    r.output_byte_limit
                        .and_then(|l| usize::try_from(l).ok())
                        .unwrap_or(LIVE_OUTPUT_LIMIT)
                        .min(LIVE_OUTPUT_LIMIT),
                )),
            },
        );
        self.send_request(
            request,
            kind,
            Pending::Command {
                terminal_id: terminal_id.clone(),
            },
        );
        terminal_id
    }

    /// Output of a terminal's running command, kept for `terminal/output`.
    pub(super) fn request_output(&self, id: &RequestId, chunk: &[u8]) {
        let terminal_id = match self.lock_pending().get(id) {
            Some(Pending::Command { terminal_id }) => terminal_id.clone(),
            _ => return,
        };
        if let Some(terminal) = self.lock_terminals().get_mut(&terminal_id)
            && terminal.end.is_none()
        {
            terminal.live.push(chunk);
        }
    }

    /// `terminal/output`: the output so far, and the exit once it ended.
    pub(super) fn terminal_output(
        &self,
        id: &acp::TerminalId,
    ) -> Result<acp::TerminalOutputResponse, agent_client_protocol::Error> {
        let terminals = self.lock_terminals();
        let terminal = terminals.get(&*id.0).ok_or_else(|| unknown_terminal(id))?;
        match &terminal.end {
            None => Ok(acp::TerminalOutputResponse::new(
                String::from_utf8_lossy(terminal.live.bytes()),
                terminal.live.trimmed() > 0,
            )),
            Some(Ok(end)) => Ok(acp::TerminalOutputResponse::new(
                end.output.clone(),
                end.truncated,
            )
            .exit_status(end.status.clone())),
            Some(Err(code)) => Err(failure(code)),
        }
    }

    /// `terminal/wait_for_exit`: answered now when the command has ended,
    /// otherwise when it ends.
    pub(super) fn wait_for_exit(
        &self,
        id: &acp::TerminalId,
        responder: Responder<acp::WaitForTerminalExitResponse, V1>,
    ) -> Result<(), agent_client_protocol::Error> {
        let mut terminals = self.lock_terminals();
        let Some(terminal) = terminals.get_mut(&*id.0) else {
            return responder.respond_with_error(unknown_terminal(id));
        };
        match &terminal.end {
            None => {
                terminal.waiters.push(responder);
                Ok(())
            }
            Some(Ok(end)) => {
                responder.respond(acp::WaitForTerminalExitResponse::new(end.status.clone()))
            }
            Some(Err(code)) => responder.respond_with_error(failure(code)),
        }
    }

    /// `terminal/kill`, or with `release` `terminal/release` (which also
    /// forgets the terminal). A running command's request is withdrawn.
    pub(super) fn stop_terminal(
        &self,
        id: &acp::TerminalId,
        release: bool,
    ) -> Result<(), agent_client_protocol::Error> {
        let mut terminals = self.lock_terminals();
        let terminal = terminals
            .get_mut(&*id.0)
            .ok_or_else(|| unknown_terminal(id))?;
        let withdraw = terminal.end.is_none() && !terminal.killed;
        terminal.killed |= terminal.end.is_none();
        let request = terminal.request.clone();
        if release && let Some(terminal) = terminals.remove(&*id.0) {
            for waiter in terminal.waiters {
                let _ = waiter.respond_with_error(unknown_terminal(id));
            }
        }
        drop(terminals);
        if withdraw {
            self.emit(AgentEvent::RequestWithdrawn { id: request });
        }
        Ok(())
    }

    /// The host ran (or refused) a terminal's command.
    pub(super) fn terminal_ended(&self, terminal_id: &str, completion: RequestCompletion) {
        let mut terminals = self.lock_terminals();
        // A released terminal is gone; a command still running then was
        // stopped by its release.
        let killed = terminals.get(terminal_id).is_none_or(|t| t.killed);
        let end = match completion {
            RequestCompletion::Success(v) => {
                let code = v
                    .get("exitCode")
                    .and_then(serde_json::Value::as_i64)
                    .and_then(|c| i32::try_from(c).ok());
                let timed_out = v.get("timedOut") == Some(&serde_json::json!(true));
                let signal = if code.is_none() && (killed || timed_out) {
                    Some("SIGKILL".to_owned())
                } else {
                    v.get("signal")
                        .and_then(serde_json::Value::as_i64)
                        .map(signal_name)
                };
                Ok(TerminalEnd {
                    output: v
                        .get("output")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    truncated: v.get("truncated") == Some(&serde_json::json!(true)),
                    code,
                    status: acp::TerminalExitStatus::new()
                        .exit_code(code.map(i32::cast_unsigned))
                        .signal(signal),
                })
            }
            // A kill the host answered with its cancellation.
            _ if killed => Ok(TerminalEnd {
                output: String::new(),
                truncated: false,
                code: None,
                status: acp::TerminalExitStatus::new().signal("SIGKILL".to_owned()),
            }),
            RequestCompletion::Refused { code } | RequestCompletion::Error { code, .. } => {
                Err(code)
            }
        };
        if let Ok(end) = &end {
            self.emit(AgentEvent::TerminalOutput {
                terminal_id: terminal_id.to_owned(),
                output: end.output.clone(),
                exit_code: end.code,
                truncated: end.truncated,
            });
        }
        let Some(terminal) = terminals.get_mut(terminal_id) else {
            return;
        };
        for waiter in terminal.waiters.drain(..) {
            let _ = match &end {
                Ok(end) => {
                    waiter.respond(acp::WaitForTerminalExitResponse::new(end.status.clone()))
                }
                Err(code) => waiter.respond_with_error(failure(code)),
            };
        }
        terminal.end = Some(end);
    }
}
