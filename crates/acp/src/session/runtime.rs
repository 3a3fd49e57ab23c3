//! The ACP runtime as the host sees it: its agents as providers, and a
//! session started (launched, connected, handshaken).

use super::*;

#[async_trait]
impl AgentRuntime for AcpRuntime {
    fn kind(&self) -> AgentBackendKind {
        AgentBackendKind::Acp
    }

    async fn describe_providers(&self) -> Vec<AgentProvider> {
        self.agents()
            .into_iter()
            .filter_map(|a| {
                Some(AgentProvider {
                    id: ProviderId::new(a.id.as_str()).ok()?,
                    display_name: a.display_name.clone(),
                    // Whether the program is installed shows when it launches.
                    available: true,
                    models: Vec::new(),
                })
            })
            .collect()
    }

    async fn start_session(
        &self,
        req: SessionRequest,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let SessionTarget::Acp { agent_id } = &req.target else {
            return Err(backend(
                "ACP_CONFIG",
                "the ACP backend runs ACP agents only",
                false,
            ));
        };
        let agent = self.agent(agent_id).ok_or_else(|| {
            backend(
                "ACP_CONFIG",
                format!("no ACP agent {agent_id} is configured"),
                false,
            )
        })?;
        let (spec, secret_problems, auth_method) = self.launch_spec(&agent, &req)?;
        let handle = self.launcher.launch(spec).map_err(|e| {
            backend(
                "ACP_LAUNCH_FAILED",
                format!("{}: {e}", agent.display_name),
                false,
            )
        })?;
        let (events, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            root: req.workspace_root.clone(),
            events,
            pending: Mutex::new(BTreeMap::new()),
            next_request: AtomicU64::new(1),
            terminals: Mutex::new(BTreeMap::new()),
            next_terminal: AtomicU64::new(1),
            updates: Mutex::new(UpdateMapper::new(req.workspace_root.clone())),
            log: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
            auth_method,
        });
        let kill = CancellationToken::new();
        let (transport, _io) = spawn_io(handle, Arc::clone(&shared), kill.clone());
        let (commands, command_rx) = mpsc::channel(COMMAND_QUEUE);
        let (ready_tx, ready_rx) = oneshot::channel();
        let turn_running = Arc::new(AtomicBool::new(false));
        tokio::spawn(connect(
            transport,
            Arc::clone(&shared),
            command_rx,
            ready_tx,
            Arc::clone(&turn_running),
        ));
        let ready = tokio::time::timeout(req.request_timeout, ready_rx).await;
        let capabilities = match ready {
            Ok(Ok(Ok(caps))) => caps,
            Ok(Ok(Err(e))) => {
                kill.cancel();
                return Err(with_notes(with_log(e, &shared), &secret_problems));
            }
            Ok(Err(_)) => {
                kill.cancel();
                return Err(backend(
                    "ACP_TRANSPORT_CLOSED",
                    format!(
                        "{} exited before the session started: {}",
                        agent.display_name,
                        tail(&shared)
                    ),
                    false,
                ));
            }
            Err(_) => {
                kill.cancel();
                return Err(backend(
                    "ACP_TIMEOUT",
                    format!("{} did not start a session in time", agent.display_name),
                    true,
                ));
            }
        };
        Ok(Box::new(AcpSession {
            shared,
            events: Some(rx),
            commands,
            kill,
            capabilities,
            grace: self.grace,
            turn_running,
        }))
    }
}
