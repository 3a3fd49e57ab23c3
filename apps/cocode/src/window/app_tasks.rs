//! The window's tasks: the Agent panel's commands, the providers, the
//! workspace service's events, and starting runs.

use std::path::PathBuf;
use std::sync::Arc;

use crate::window::command::{AgentCommand, ProviderAction};
use crate::window::providers::ProviderRequest;
use crate::window::workspace_service::{RunEvent, ServiceEvent, ServiceRequest, WorkspaceService};

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
    /// The Agent panel's and the Providers page's commands.
    pub(super) fn run_agent_command(&mut self, command: AgentCommand) {
        match command {
            AgentCommand::AgentPrompt(text) => self.agent.prompt = text,
            AgentCommand::RunTask => self.run_task(),
            AgentCommand::CloseTask => self.agent.detail = None,
            AgentCommand::SendReply
            | AgentCommand::FinishAndVerify
            | AgentCommand::CompactNow
            | AgentCommand::TaskDecision { .. }
            | AgentCommand::StopTask => {
                if let Some(request) = self.agent.request_for(&command) {
                    self.send_task(request);
                }
            }
            AgentCommand::ToolDecision { id, decision } => {
                self.send_task(ServiceRequest::ToolDecision { id, decision });
            }
            AgentCommand::RollbackTask(task_id) => {
                self.roll_back(&task_id, crate::host::review::RollbackTo::Start);
            }
            AgentCommand::PreviewRollback { task_id, to } => {
                self.agent.rollback_preview = None;
                self.send_task(ServiceRequest::PreviewRollback { task_id, to });
            }
            AgentCommand::RollbackTo { task_id, to } => self.roll_back(&task_id, to),
            AgentCommand::AllowAndRerun { task_id, host } => {
                self.agent.error = None;
                self.agent.note = None;
                // The re-run's tab is named after the task's prompt; a
                // Retry there uses the backend picked now.
                let prompt = self.agent.detail.as_ref().map(|d| d.prompt.clone());
                let picked = (self.agent.backend.clone(), self.agent.model.clone());
                let conv = self.agent.conversation_for_run();
                conv.running = true;
                conv.last_run = prompt.map(|p| (p, picked.0, picked.1));
                conv.transcript.push_note(&format!(
                    "allowed {host}; running task {task_id}'s prompt again"
                ));
                let conv = conv.id;
                self.agent.detail = None;
                self.send_task(ServiceRequest::AllowAndRerun {
                    conv,
                    task_id,
                    host,
                });
            }
            AgentCommand::GrantToggle(i) => self.toggle_grant(i),
            AgentCommand::DecideGrants => self.decide_grants(),
            AgentCommand::CancelGrants => self.cancel_grants(),
            AgentCommand::NewConversation => self.agent.new_conversation(),
            AgentCommand::ShowConversation(i) => self.agent.show_conversation(i),
            AgentCommand::CloseConversation(i) => self.agent.close_conversation(i),
            AgentCommand::ShowTask(task_id) => {
                self.send_task(ServiceRequest::Detail { task_id });
            }
            AgentCommand::RetryTask { local } => {
                let conv = self.agent.current();
                if let Some((prompt, backend, model)) = conv.last_run.clone()
                    && !conv.running
                {
                    let run = if local {
                        "local".clone_into(&mut self.agent.backend);
                        self.agent.model = None;
                        (prompt, "local".to_owned(), None)
                    } else {
                        (prompt, backend, model)
                    };
                    // Again in the same tab.
                    let conv = self.agent.current().id;
                    self.start_run(conv, run);
                }
            }
            AgentCommand::AgentBackend(backend) => {
                self.agent.model = self.providers.row(&backend).and_then(|r| r.model.clone());
                self.agent.backend = backend;
            }
            AgentCommand::AgentModel(model) => {
                self.providers.send(ProviderRequest::SetModel {
                    id: self.agent.backend.clone(),
                    model: model.clone(),
                });
                self.agent.model = model;
            }
            AgentCommand::ProviderKeyDraft { id, text } => {
                self.providers
                    .key_drafts
                    .insert(id, crate::window::providers::KeyDraft(text));
            }
            AgentCommand::ProviderUrlDraft { id, text } => {
                self.providers.url_drafts.insert(id, text);
            }
            AgentCommand::Provider(action) => self.provider_action(action),
        }
    }

    /// Rolls a task back; the Review panel, when it shows the task, reads
    /// it again after.
    fn roll_back(&mut self, task_id: &str, to: crate::host::review::RollbackTo) {
        self.agent.error = None;
        self.agent.note = None;
        self.agent.rollback_preview = None;
        self.send_rollback(task_id, to);
    }

    /// Starts the Providers worker once; hands a changed set of providers
    /// to the workspace service.
    pub(super) fn apply_providers(&mut self) {
        self.providers
            .start(&self.provider_setup, &self.waker, &self.runtime);
        let had_rows = !self.providers.rows.is_empty();
        if let Some(registry) = self.providers.drain() {
            self.send_task(ServiceRequest::Providers(registry.clone()));
            self.provider_registry = Some(registry);
        }
        if !had_rows && self.agent.model.is_none() {
            // The remembered model of the chosen provider, once known.
            self.agent.model = self
                .providers
                .row(&self.agent.backend)
                .and_then(|r| r.model.clone());
        }
    }

    /// Carries out a Providers page action; a typed key leaves its draft
    /// here and goes straight to the worker.
    pub(super) fn provider_action(&mut self, action: ProviderAction) {
        let request = match action {
            ProviderAction::SaveKey { id, session_only } => {
                let key = self.providers.key_drafts.remove(&id).unwrap_or_default();
                ProviderRequest::SetKey {
                    id,
                    key: cocode_core::services::Secret::new(key.0),
                    session_only,
                }
            }
            ProviderAction::DeleteKey(id) => ProviderRequest::DeleteKey { id },
            ProviderAction::SaveUrl { id, reset } => {
                let typed = self.providers.url_drafts.remove(&id);
                ProviderRequest::SetBaseUrl {
                    id,
                    url: if reset { None } else { typed },
                }
            }
            ProviderAction::Models(id) => ProviderRequest::Models { id },
        };
        self.providers.send(request);
    }

    /// Ticks (or unticks) grant `i` of the folder-settings question.
    fn toggle_grant(&mut self, i: usize) {
        if let Some(tick) = self
            .agent
            .grant_prompt
            .as_mut()
            .and_then(|p| p.allow.get_mut(i))
        {
            *tick = !*tick;
        }
    }

    /// Records the ticked grants as allowed and the others as kept off,
    /// then starts the run that waited.
    fn decide_grants(&mut self) {
        if let Some(prompt) = self.agent.grant_prompt.take() {
            let decisions = prompt.grants.into_iter().zip(prompt.allow).collect();
            self.send_task(ServiceRequest::DecideGrants(decisions));
            let run = self
                .agent
                .conversations
                .iter()
                .find(|c| c.id == prompt.conv)
                .and_then(|c| c.last_run.clone());
            if let Some(run) = run {
                self.start_run(prompt.conv, run);
            }
        }
    }

    /// Closes the folder-settings question; the run does not start.
    fn cancel_grants(&mut self) {
        if let Some(prompt) = self.agent.grant_prompt.take()
            && let Some(c) = self
                .agent
                .conversations
                .iter_mut()
                .find(|c| c.id == prompt.conv)
        {
            c.transcript
                .push_note("not run: this folder's settings were not decided on");
        }
    }

    /// What the workspace service reported since the last frame.
    pub(super) fn apply_service_events(&mut self) {
        let events = self
            .tasks
            .as_mut()
            .map(WorkspaceService::drain)
            .unwrap_or_default();
        for event in events {
            match event {
                ServiceEvent::Command(command) => {
                    if let Some(id) = self.terminals.on_command(command) {
                        self.add_terminal_tab(id);
                    }
                }
                ServiceEvent::Saved { path, result } => {
                    if result.is_ok()
                        && let Some(lsp) = &self.lsp
                    {
                        lsp.saved(&path);
                    }
                    if let Some(id) = self.editors.on_saved(&path, result) {
                        self.close_editor_tab(id);
                    }
                }
                ServiceEvent::UserOpDone { op, result } => self.on_user_op(&op, result),
                ServiceEvent::TaskFiles { task_id, paths } => {
                    self.editors.on_task_files(&task_id, &paths);
                }
                ServiceEvent::Trace(rows) => {
                    if rows.is_empty() {
                        self.trace.session = None;
                    }
                    self.trace.rows = rows;
                }
                ServiceEvent::Settings(view) => self.settings.on_view(*view),
                ServiceEvent::ToolSample { name, result } => {
                    self.catalog.running = None;
                    self.catalog.results.insert(name, result);
                }
                ServiceEvent::SettingsRefused(why) => {
                    self.settings.busy = false;
                    self.settings.error = Some(why);
                }
                ServiceEvent::Review(loaded) => self.on_review_loaded(*loaded),
                ServiceEvent::Run {
                    conv,
                    event: event @ RunEvent::Finished { .. },
                } => {
                    self.agent.on_event(ServiceEvent::Run { conv, event });
                    let task = self
                        .agent
                        .conversations
                        .iter()
                        .find(|c| c.id == conv)
                        .and_then(|c| c.task.clone());
                    if let Some(task) = task {
                        self.review_after_run(task.to_string());
                    }
                }
                other => self.agent.on_event(other),
            }
        }
    }

    pub(super) fn send_task(&self, request: ServiceRequest) {
        if let Some(service) = &self.tasks {
            service.send(request);
        }
    }

    /// Starts the workspace service of the workspace at `root`, after the
    /// service this window had for it before has let go of it.
    pub(super) fn start_tasks(&mut self, root: PathBuf) {
        self.closing.retain(|_, closed| !*closed.borrow());
        let after = self.closing.get(&root).cloned();
        self.tasks = Some(WorkspaceService::start(
            root,
            (
                Arc::clone(&self.editors.docs),
                self.lsp.as_ref().map(|l| l.servers.clone()),
                self.provider_setup.clone(),
                self.root.clock(),
            ),
            self.waker.clone(),
            &self.runtime,
            after,
        ));
        // Providers changed in this window before the service started win
        // over the settings file it reads (which may not be kept at all).
        if let Some(registry) = self.provider_registry.clone() {
            self.send_task(ServiceRequest::Providers(registry));
        }
    }

    /// Starts the folder's workspace service if needed and runs the prompt.
    pub(super) fn run_task(&mut self) {
        let Some(root) = self.workspace_root().cloned() else {
            return;
        };
        if self.agent.prompt.trim().is_empty() {
            return;
        }
        if self.tasks.is_none() {
            self.start_tasks(root);
        }
        // The message moves from the composer into the conversation.
        let run = (
            std::mem::take(&mut self.agent.prompt).trim().to_owned(),
            self.agent.backend.clone(),
            self.agent.model.clone(),
        );
        let conv = self.agent.conversation_for_run().id;
        self.start_run(conv, run);
    }

    /// Runs `(prompt, backend, model)` as a new task in conversation
    /// `conv` (which starts over).
    pub(super) fn start_run(
        &mut self,
        conv: u64,
        (prompt, backend, model): (String, String, Option<String>),
    ) {
        self.agent.error = None;
        self.agent.detail = None;
        let Some(c) = self.agent.conversations.iter_mut().find(|c| c.id == conv) else {
            return;
        };
        c.failure = None;
        c.error = None;
        c.task = None;
        c.running = true;
        c.transcript.clear();
        c.transcript.push_user(&prompt);
        c.last_run = Some((prompt.clone(), backend.clone(), model.clone()));
        self.send_task(ServiceRequest::Run {
            conv,
            prompt,
            backend,
            model,
        });
    }
}
