//! The window: menu bar, docked panels, status bar and the Open Folder dialog.
//!
//! Views read state and return [`Command`]s; the frame applies them once at
//! the end. All disk access goes through the IO thread, so the frame never
//! waits on the file system, and nothing requests a repaint while idle.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cocode_platform::open_requests::OpenRequests;
use cocode_platform::{Os, Shortcut};
use cocode_ui::Theme;
use egui::{Key, KeyboardShortcut, Modifiers};
use egui_dock::{DockArea, DockState, NodeIndex, Style, TabViewer};

use crate::window::agent::AgentPanel;
use crate::window::brick_service::{BrickRequest, BrickResponse, BrickService};
use crate::window::command::{CloseEditor, Command, PanelId, ProviderAction};
use crate::window::crash_notice::CrashNotice;
use crate::window::disk_watch::DiskWatch;
use crate::window::editors::Editors;
use crate::window::explorer::{Explorer, WorkspaceView};
use crate::window::io_worker::{IoRequest, IoResponse, IoWorker, ListFilter, OpenTarget};
use crate::window::link::Waker;
use crate::window::new_brick::NewFromBrickDialog;
use crate::window::open_folder::{Losses, OpenFolderDialog, SwitchChoice, Switching};
use crate::window::providers::{ProviderRequest, ProviderSetup, ProvidersPanel};
use crate::window::quick_open::QuickOpen;
use crate::window::search::Search;
use crate::window::task_service::{ServiceEvent, ServiceRequest, TaskService};
use crate::window::terminals::Terminals;
use crate::window::views;

/// The application state.
pub struct CocodeApp {
    pub(crate) workspace: Option<WorkspaceView>,
    /// The editor tabs and their documents (shared with the task host).
    pub(crate) editors: Editors,
    /// Changes on disk in the open folder.
    watch: Option<DiskWatch>,
    /// Quick open (Ctrl/Cmd+P) and its worker.
    pub(crate) quick_open: QuickOpen,
    /// The Search panel and its worker.
    pub(crate) search: Search,
    pub(crate) dialog: Option<OpenFolderDialog>,
    /// Paths the system (macOS: the Dock, Finder) asked to open; the
    /// window takes them each frame, with what is dropped on it.
    pub(crate) open_requests: OpenRequests,
    /// Another folder waits to open until the person says what becomes of
    /// this one's unsaved files, running tasks and programs.
    pub(crate) switching: Option<Switching>,
    pub(crate) new_brick: Option<NewFromBrickDialog>,
    /// The brick worker of the open "New Workspace from Brick" dialog.
    bricks: Option<BrickService>,
    pub(crate) dock: DockState<PanelId>,
    pub(crate) theme: Theme,
    pub(crate) os: Os,
    pub(crate) agent: AgentPanel,
    /// Settings → Providers, and its worker (started on the first frame).
    pub(crate) providers: ProvidersPanel,
    /// Where provider keys and settings live.
    pub(crate) provider_setup: ProviderSetup,
    /// The providers as the person last changed them in this window (a
    /// task service started later gets them too).
    provider_registry: Option<cocode_agent::LlmProviderRegistry>,
    /// The person's shells and agents' commands, each a dock tab.
    pub(crate) terminals: Terminals,
    tasks: Option<TaskService>,
    /// Task services of folders this window left, until each has let go of
    /// its folder.
    closing: std::collections::HashMap<PathBuf, tokio::sync::watch::Receiver<bool>>,
    /// The open folder's language servers.
    pub(crate) lsp: Option<crate::window::lsp::LspClient>,
    /// Crash reports of earlier runs, announced once.
    pub(crate) crash_notice: Option<CrashNotice>,
    io: IoWorker,
    /// The process's runtime: the task service and the brick worker run on it.
    runtime: tokio::runtime::Handle,
    /// The context the workers wake; bound on the first frame.
    repaint: Arc<OnceLock<egui::Context>>,
    /// The one waker every worker shares: a repaint of the bound context.
    waker: Waker,
    commands: Vec<Command>,
    /// The window was asked to close while files had unsaved changes.
    quitting: bool,
    /// Close the window on the next frame (the person agreed).
    quit_now: bool,
}

impl std::fmt::Debug for CocodeApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CocodeApp")
            .field("workspace", &self.workspace.as_ref().map(|w| &w.root))
            .field("theme", &self.theme)
            .finish_non_exhaustive()
    }
}

/// Explorer on the left, the editor area in the middle, Agent on the right.
pub fn default_layout() -> DockState<PanelId> {
    let mut dock = DockState::new(vec![PanelId::Welcome]);
    let [editor_area, _] = dock.main_surface_mut().split_left(
        NodeIndex::root(),
        0.2,
        vec![PanelId::Explorer, PanelId::Search],
    );
    dock.main_surface_mut()
        .split_right(editor_area, 0.68, vec![PanelId::Agent]);
    dock
}

const OPEN_FOLDER: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::O);
/// As in VS Code, Ctrl (not Cmd) on every platform.
const FOCUS_TERMINAL: KeyboardShortcut = KeyboardShortcut::new(Modifiers::CTRL, Key::Backtick);
const NEW_TERMINAL: KeyboardShortcut =
    KeyboardShortcut::new(Modifiers::CTRL.plus(Modifiers::SHIFT), Key::Backtick);
const SAVE: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);
const QUICK_OPEN: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::P);
const SEARCH: KeyboardShortcut =
    KeyboardShortcut::new(Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::F);
const CLOSE_EDITOR: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::W);
const REOPEN_EDITOR: KeyboardShortcut =
    KeyboardShortcut::new(Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::T);

impl CocodeApp {
    /// Builds the app; `folder` (canonical) opens immediately.
    pub fn new(folder: Option<PathBuf>, runtime: tokio::runtime::Handle) -> std::io::Result<Self> {
        Self::with_keys(folder, runtime, ProviderSetup::system())
    }

    /// [`Self::new`] with provider keys and settings kept where `keys`
    /// says (tests keep them away from the person's).
    pub fn with_keys(
        folder: Option<PathBuf>,
        runtime: tokio::runtime::Handle,
        keys: ProviderSetup,
    ) -> std::io::Result<Self> {
        let repaint = Arc::new(OnceLock::<egui::Context>::new());
        let wake = Arc::clone(&repaint);
        let waker = Waker::new(move || {
            if let Some(ctx) = wake.get() {
                ctx.request_repaint();
            }
        });
        let io = IoWorker::spawn(waker.clone())?;
        let quick_open = QuickOpen::spawn(waker.clone())?;
        let search = Search::spawn(waker.clone())?;
        let mut app = Self {
            workspace: None,
            editors: Editors::new(Arc::new(cocode_editor::OpenDocuments::new())),
            watch: None,
            quick_open,
            search,
            dialog: None,
            open_requests: OpenRequests::new(),
            switching: None,
            new_brick: None,
            bricks: None,
            dock: default_layout(),
            theme: Theme::default(),
            os: Os::current(),
            agent: AgentPanel::default(),
            providers: ProvidersPanel::default(),
            provider_setup: keys,
            provider_registry: None,
            terminals: Terminals::new(runtime.clone(), waker.clone()),
            tasks: None,
            closing: std::collections::HashMap::new(),
            lsp: None,
            crash_notice: crate::host::crash::data_dir()
                .and_then(|d| CrashNotice::scan(&crate::host::crash::crash_dir(&d))),
            io,
            runtime,
            repaint,
            waker,
            commands: Vec::new(),
            quitting: false,
            quit_now: false,
        };
        if let Some(root) = folder {
            app.open_workspace(root);
        }
        Ok(app)
    }

    /// Binds the app to its egui context: fonts, theme, and the context the
    /// IO thread wakes. Idempotent; also done by the first frame.
    pub fn bind(&self, ctx: &egui::Context) {
        if self.repaint.set(ctx.clone()).is_ok() {
            let wake = ctx.clone();
            self.open_requests.set_waker(move || wake.request_repaint());
            cocode_ui::install_fonts(ctx);
            cocode_ui::apply_theme(ctx, self.theme);
            // Work that finished before binding is drained on the next frame.
            ctx.request_repaint();
        }
    }

    pub fn workspace_root(&self) -> Option<&PathBuf> {
        self.workspace.as_ref().map(|w| &w.root)
    }

    /// One frame.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        self.bind(ui.ctx());
        self.apply_io();
        self.take_open_requests(ui.ctx());
        self.apply_disk_changes();
        self.quick_open.poll();
        self.search.poll();
        if let Some(plan) = self.search.plan.take() {
            self.apply_replace_plan(plan);
        }
        self.apply_bricks();
        self.terminals.poll();
        self.apply_service_events();
        self.advance_switch();
        self.apply_providers();
        self.apply_lsp();
        if ui.ctx().input_mut(|i| i.consume_shortcut(&OPEN_FOLDER)) {
            self.commands.push(Command::ShowOpenFolder);
        }
        if ui.ctx().input_mut(|i| i.consume_shortcut(&SEARCH)) {
            self.commands.push(Command::ShowSearch);
        }
        if ui.ctx().input_mut(|i| i.consume_shortcut(&QUICK_OPEN)) {
            self.commands.push(Command::QuickOpen);
        }
        // The longer shortcut first: Ctrl+Shift+T would also match Ctrl+T.
        if ui.ctx().input_mut(|i| i.consume_shortcut(&REOPEN_EDITOR)) {
            self.commands.push(Command::ReopenClosedEditor);
        }
        if let Some(id) = self.active_editor() {
            if ui.ctx().input_mut(|i| i.consume_shortcut(&SAVE)) {
                self.commands.push(Command::Save(id));
            }
            if ui.ctx().input_mut(|i| i.consume_shortcut(&CLOSE_EDITOR)) {
                self.commands.push(Command::CloseEditor {
                    id,
                    action: CloseEditor::Ask,
                });
            }
        }
        // The longer shortcut first: Ctrl+` would also match Ctrl+Shift+`.
        if ui.ctx().input_mut(|i| i.consume_shortcut(&NEW_TERMINAL)) {
            self.commands.push(Command::NewTerminal);
        } else if ui.ctx().input_mut(|i| i.consume_shortcut(&FOCUS_TERMINAL)) {
            self.commands.push(Command::FocusTerminal);
        }
        let mut commands = std::mem::take(&mut self.commands);

        egui::Panel::top("menu").show(ui, |ui| {
            egui::MenuBar::new().ui(ui, |ui| self.menu(ui, &mut commands));
        });
        if let Some(notice) = &self.crash_notice {
            egui::Panel::top("crash-notice").show(ui, |ui| {
                crate::window::crash_notice::show(ui, notice, &mut commands);
            });
        }
        egui::Panel::bottom("status").show(ui, |ui| self.status_bar(ui, &mut commands));
        egui::CentralPanel::default().show(ui, |ui| {
            let mut viewer = Viewer {
                workspace: self.workspace.as_ref(),
                editors: &mut self.editors,
                search: &mut self.search,
                agent: &self.agent,
                providers: &self.providers,
                terminals: &mut self.terminals,
                lsp: self.lsp.as_ref(),
                commands: &mut commands,
                os: self.os,
                theme: self.theme,
            };
            DockArea::new(&mut self.dock)
                .style(Style::from_egui(ui.style().as_ref()))
                .show_leaf_collapse_buttons(false)
                .show_leaf_close_all_buttons(false)
                .show_inside(ui, &mut viewer);
        });
        if let Some(dialog) = &self.dialog {
            views::open_folder::show(ui.ctx(), dialog, &mut commands);
        }
        if let Some(dialog) = &self.new_brick {
            views::new_from_brick::show(ui.ctx(), dialog, &mut commands);
        }
        if let Some(prompt) = self.workspace.as_ref().and_then(|w| w.prompt.as_ref()) {
            views::explorer::prompt(ui.ctx(), prompt, &mut commands);
        }
        views::terminal::prompts(ui.ctx(), &self.terminals, &mut commands);
        if let Some(ws) = &self.workspace {
            views::quick_open::show(ui.ctx(), &mut self.quick_open, &ws.root, &mut commands);
        }
        self.unsaved_prompt(ui.ctx(), &mut commands);
        if ui.ctx().input(|i| !i.raw.hovered_files.is_empty()) {
            views::open_folder::drop_overlay(ui.ctx(), self.workspace.is_some());
        }
        self.note_active_editor();

        for command in commands {
            self.run(command, ui.ctx());
        }
    }

    fn menu(&self, ui: &mut egui::Ui, commands: &mut Vec<Command>) {
        ui.menu_button("File", |ui| {
            let label = format!("Open Folder…    {}", Shortcut::primary("O").label(self.os));
            if ui.button(label).clicked() {
                commands.push(Command::ShowOpenFolder);
            }
            if ui.button("New Workspace from Brick…").clicked() {
                commands.push(Command::ShowNewFromBrick);
            }
            if ui
                .add_enabled(
                    self.workspace.is_some(),
                    egui::Button::new("Refresh Explorer"),
                )
                .clicked()
            {
                commands.push(Command::Refresh);
            }
            ui.separator();
            let go = format!("Go to File…    {}", Shortcut::primary("P").label(self.os));
            if ui
                .add_enabled(self.workspace.is_some(), egui::Button::new(go))
                .clicked()
            {
                commands.push(Command::QuickOpen);
            }
            let active = self.active_editor();
            let save = format!("Save    {}", Shortcut::primary("S").label(self.os));
            if ui
                .add_enabled(active.is_some(), egui::Button::new(save))
                .clicked()
                && let Some(id) = active
            {
                commands.push(Command::Save(id));
            }
            if ui
                .add_enabled(
                    !self.editors.docs.dirty_paths().is_empty(),
                    egui::Button::new("Save All"),
                )
                .clicked()
            {
                commands.push(Command::SaveAll);
            }
            let close = format!("Close Editor    {}", Shortcut::primary("W").label(self.os));
            if ui
                .add_enabled(active.is_some(), egui::Button::new(close))
                .clicked()
                && let Some(id) = active
            {
                commands.push(Command::CloseEditor {
                    id,
                    action: CloseEditor::Ask,
                });
            }
            let reopen = format!(
                "Reopen Closed Editor    {}",
                Shortcut::primary_shift("T").label(self.os)
            );
            if ui.button(reopen).clicked() {
                commands.push(Command::ReopenClosedEditor);
            }
            ui.separator();
            if ui.button("Quit").clicked() {
                commands.push(Command::Quit);
            }
        });
        ui.menu_button("Terminal", |ui| {
            if ui.button("New Terminal    Ctrl+Shift+`").clicked() {
                commands.push(Command::NewTerminal);
            }
            if ui.button("Focus Terminal    Ctrl+`").clicked() {
                commands.push(Command::FocusTerminal);
            }
        });
        ui.menu_button("View", |ui| {
            for panel in PanelId::ALL {
                if ui.button(panel.title()).clicked() {
                    commands.push(Command::ShowPanel(panel));
                }
            }
            ui.separator();
            if ui.button("Reset Layout").clicked() {
                commands.push(Command::ResetLayout);
            }
            let (label, next) = match self.theme {
                Theme::Dark => ("Light Theme", Theme::Light),
                Theme::Light => ("Dark Theme", Theme::Dark),
            };
            if ui.button(label).clicked() {
                commands.push(Command::SetTheme(next));
            }
        });
    }

    fn status_bar(&self, ui: &mut egui::Ui, commands: &mut Vec<Command>) {
        ui.horizontal(|ui| {
            let Some(ws) = &self.workspace else {
                ui.label("No folder open");
                return;
            };
            ui.label(ws.root.display().to_string());
            if let Some(lsp) = &self.lsp {
                ui.separator();
                let (errors, warnings) = views::problems::counts(&lsp.problems);
                if ui
                    .add(egui::Button::new(format!("⊗ {errors}  ⚠ {warnings}")).frame(false))
                    .on_hover_text("Problems")
                    .clicked()
                {
                    commands.push(Command::ShowPanel(PanelId::Problems));
                }
                // A server that stopped leaves its files without
                // diagnostics: the count above would read as clean.
                for status in &lsp.statuses {
                    if let cocode_lsp::ServerState::Failed { reason } = &status.state {
                        ui.separator();
                        let label = format!("{} stopped", status.id);
                        let text = cocode_ui::badge_text(ui, &label, cocode_ui::Tone::Danger);
                        if ui
                            .add(egui::Button::new(text).frame(false))
                            .on_hover_text(format!(
                                "{reason}\nIts files get no diagnostics. The Problems panel can restart it."
                            ))
                            .clicked()
                        {
                            commands.push(Command::ShowPanel(PanelId::Problems));
                        }
                    }
                }
            }
            if let Some(facts) = self
                .active_editor()
                .and_then(|id| views::editor::status(&self.editors, id))
            {
                for fact in facts {
                    ui.separator();
                    ui.label(fact);
                }
            }
            if let Some(notice) = &self.terminals.notice {
                ui.separator();
                cocode_ui::badge(ui, notice, cocode_ui::Tone::Warning);
            }
            match self.agent.running() {
                0 => {}
                1 => {
                    ui.separator();
                    ui.label("1 task running");
                }
                n => {
                    ui.separator();
                    ui.label(format!("{n} tasks running"));
                }
            }
            if let Some((confinement, port)) = &self.agent.sandbox {
                ui.separator();
                let (text, tone, hover) = sandbox_status(confinement, *port);
                cocode_ui::badge(ui, &text, tone).on_hover_text(hover);
            }
        });
    }

    /// The Agent panel's and the Providers page's commands.
    fn run_agent_command(&mut self, command: Command) {
        match command {
            Command::AgentPrompt(text) => self.agent.prompt = text,
            Command::RunTask => self.run_task(),
            Command::CloseTask => self.agent.detail = None,
            Command::SendReply
            | Command::FinishAndVerify
            | Command::TaskDecision { .. }
            | Command::StopTask => {
                if let Some(request) = self.agent.request_for(&command) {
                    self.send_task(request);
                }
            }
            Command::ToolDecision { id, decision } => {
                self.send_task(ServiceRequest::ToolDecision { id, decision });
            }
            Command::RollbackTask(task_id) => {
                self.agent.error = None;
                self.agent.note = None;
                self.send_task(ServiceRequest::Rollback { task_id });
            }
            Command::AllowAndRerun { task_id, host } => {
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
            Command::NewConversation => self.agent.new_conversation(),
            Command::ShowConversation(i) => self.agent.show_conversation(i),
            Command::CloseConversation(i) => self.agent.close_conversation(i),
            Command::ShowTask(task_id) => {
                self.send_task(ServiceRequest::Detail { task_id });
            }
            Command::RetryTask { local } => {
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
            Command::AgentBackend(backend) => {
                self.agent.model = self.providers.row(&backend).and_then(|r| r.model.clone());
                self.agent.backend = backend;
            }
            Command::AgentModel(model) => {
                self.providers.send(ProviderRequest::SetModel {
                    id: self.agent.backend.clone(),
                    model: model.clone(),
                });
                self.agent.model = model;
            }
            Command::ProviderKeyDraft { id, text } => {
                self.providers
                    .key_drafts
                    .insert(id, crate::window::providers::KeyDraft(text));
            }
            Command::ProviderUrlDraft { id, text } => {
                self.providers.url_drafts.insert(id, text);
            }
            Command::Provider(action) => self.provider_action(action),
            _ => {}
        }
    }

    /// Starts the Providers worker once; hands a changed set of providers
    /// to the task service.
    fn apply_providers(&mut self) {
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
    fn provider_action(&mut self, action: ProviderAction) {
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

    /// When the window closes: every running task is stopped as a
    /// person's stop is (the agent asked to cancel, then ended with every
    /// process it started), and the window waits for them, at most
    /// `limit`, so each is saved as stopped rather than found interrupted
    /// at the next start. Whatever is left ends with the process (the
    /// launcher's keepers).
    pub fn stop_running_tasks(&mut self, limit: std::time::Duration) {
        let running: Vec<u64> = self
            .agent
            .conversations
            .iter()
            .filter(|c| c.running)
            .map(|c| c.id)
            .collect();
        for conv in &running {
            self.send_task(ServiceRequest::Stop(*conv));
        }
        let deadline = std::time::Instant::now() + limit;
        while self.agent.running() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
            self.apply_service_events();
        }
    }

    /// What the task service reported since the last frame.
    fn apply_service_events(&mut self) {
        let events = self
            .tasks
            .as_mut()
            .map(TaskService::drain)
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
                other => self.agent.on_event(other),
            }
        }
    }

    fn apply_io(&mut self) {
        for response in self.io.drain() {
            match response {
                IoResponse::Listed {
                    dir,
                    filter: ListFilter::Workspace,
                    result,
                } => {
                    if let Some(ws) = &mut self.workspace {
                        ws.explorer.on_listed(&dir, result);
                    }
                }
                IoResponse::Listed {
                    dir,
                    filter: ListFilter::FoldersOnly,
                    result,
                } => {
                    if let Some(dialog) = &mut self.dialog
                        && dialog.browsing == dir
                    {
                        dialog.subfolders =
                            Some(result.map(|l| {
                                l.entries.into_iter().map(|e| (e.name, e.path)).collect()
                            }));
                    }
                }
                IoResponse::Opened { path, result } => self.editors.on_opened(&path, result),
                IoResponse::Reread { path, result } => match result {
                    Ok(bytes) => self.editors.on_disk_changed(&path, bytes),
                    Err(message) => {
                        tracing::warn!(path = %path.display(), "cannot read the changed file: {message}");
                    }
                },
                IoResponse::FolderResolved { requested, result } => match result {
                    Ok(root) => {
                        self.dialog = None;
                        self.switch_to(root);
                    }
                    Err(message) => {
                        if let Some(dialog) = &mut self.dialog {
                            dialog.error = Some(message);
                        } else {
                            tracing::warn!(path = %requested.display(), "cannot open folder: {message}");
                        }
                    }
                },
                IoResponse::OpenResolved { requested, result } => {
                    self.on_open_resolved(&requested, result);
                }
            }
        }
    }

    /// Paths the system asked to open and those dropped on the window,
    /// in the order they came.
    fn take_open_requests(&mut self, ctx: &egui::Context) {
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        for path in self.open_requests.take().into_iter().chain(dropped) {
            self.commands.push(Command::OpenPath(path));
        }
    }

    /// A folder asked to open replaces the open one; a file of the open
    /// folder opens in an editor. Anything else is said in the Open Folder
    /// dialog, at the nearest folder, so the person can go on from there.
    fn on_open_resolved(&mut self, requested: &Path, result: Result<OpenTarget, String>) {
        let message = match result {
            Ok(OpenTarget::Folder(root)) => {
                self.dialog = None;
                self.switch_to(root);
                return;
            }
            Ok(OpenTarget::File(path)) => match self.workspace_root() {
                Some(root) if path.starts_with(root) => {
                    self.open_file(&path);
                    return;
                }
                Some(root) => format!(
                    "{} is not in the open folder ({}); open its folder to edit it",
                    path.display(),
                    root.display()
                ),
                None => format!(
                    "{} is a file; open the folder it is in to edit it",
                    path.display()
                ),
            },
            Err(message) => message,
        };
        let start = requested
            .ancestors()
            .skip(1)
            .find(|dir| !dir.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .or_else(|| self.workspace_root().cloned())
            .or_else(home_dir)
            .unwrap_or_else(|| PathBuf::from("/"));
        self.browse(start);
        if let Some(dialog) = &mut self.dialog {
            dialog.error = Some(message);
        }
    }

    /// Opens the waiting folder once what the person chose is done: the
    /// files saved (if they asked) and every task stopped, each saved as
    /// stopped by its own run.
    fn advance_switch(&mut self) {
        let Some(switching) = &self.switching else {
            return;
        };
        let ready = match switching.chosen {
            None => false,
            Some(SwitchChoice::SaveFirst) => {
                self.editors.docs.dirty_paths().is_empty() && self.agent.running() == 0
            }
            Some(SwitchChoice::Discard) => self.agent.running() == 0,
        };
        if ready && let Some(switching) = self.switching.take() {
            self.open_workspace(switching.to);
        }
    }

    /// Asks every running task to stop, as the person's Stop does.
    fn request_stop_all(&self) {
        for conv in self.agent.conversations.iter().filter(|c| c.running) {
            self.send_task(ServiceRequest::Stop(conv.id));
        }
    }

    /// What closing the open folder now would end.
    pub(crate) fn losses(&self) -> Losses {
        Losses {
            unsaved: self.editors.docs.dirty_paths().len(),
            tasks: self.agent.running(),
            programs: self
                .terminals
                .shells()
                .filter(|id| self.terminals.busy(*id))
                .count(),
        }
    }

    /// Opens `root` in place of the open folder, once the person has said
    /// what becomes of anything that would be lost; the folder already
    /// open is left as it is.
    fn switch_to(&mut self, root: PathBuf) {
        if self.workspace_root() == Some(&root) {
            self.switching = None;
            return;
        }
        if self.losses().any() {
            // A later request takes the place of one still waiting, with
            // what was chosen for it.
            let chosen = self.switching.take().and_then(|s| s.chosen);
            self.switching = Some(Switching { to: root, chosen });
        } else {
            self.open_workspace(root);
        }
    }

    fn open_workspace(&mut self, root: PathBuf) {
        self.switching = None;
        // A new folder gets its own task service, started on the first task:
        // dropping this one stops the old folder's runs. Until it has let
        // go of its folder, a new service of that folder waits for it (it
        // holds the folder's writer lock).
        if let Some(old) = self.tasks.take() {
            self.closing.retain(|_, closed| !*closed.borrow());
            self.closing.insert(old.root().to_path_buf(), old.closed());
        }
        self.agent = AgentPanel::default();
        // The old folder's terminals end with it.
        for id in self.terminals.clear() {
            if let Some(path) = self.dock.find_tab(&PanelId::Terminal(id)) {
                self.dock.remove_tab(path);
            }
        }
        let (explorer, request) = Explorer::new(root.clone());
        self.io.send(request);
        for id in self.editors.clear() {
            if let Some(path) = self.dock.find_tab(&PanelId::Editor(id)) {
                self.dock.remove_tab(path);
            }
        }
        self.watch = match DiskWatch::start(&root, self.waker.clone()) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(root = %root.display(), "changes on disk will not show until reopened: {e}");
                None
            }
        };
        self.start_lsp(&root);
        // A folder that already has cocode history shows its tasks at once;
        // any other folder is left untouched until its first task.
        if root.join(cocode_core::path::COCODE_DIR).is_dir() {
            self.start_tasks(root.clone());
        }
        self.workspace = Some(WorkspaceView {
            root,
            explorer,
            prompt: None,
        });
    }

    pub(crate) fn run(&mut self, command: Command, ctx: &egui::Context) {
        match command {
            Command::ShowOpenFolder
            | Command::PickerBrowse(_)
            | Command::OpenFolder(_)
            | Command::OpenPath(_)
            | Command::PickerTyped(_)
            | Command::CloseOpenFolder
            | Command::SwitchNow
            | Command::SwitchSaving
            | Command::CancelSwitch => self.run_open_folder(command),
            Command::ShowNewFromBrick
            | Command::BrickDialog(_)
            | Command::CreateFromBrick
            | Command::CloseNewFromBrick => self.run_brick_dialog(command),
            Command::ToggleFolder(dir) => {
                if let Some(request) = self
                    .workspace
                    .as_mut()
                    .and_then(|w| w.explorer.toggle(&dir))
                {
                    self.io.send(request);
                }
            }
            Command::OpenFile(path) => self.open_file(&path),
            Command::Save(_)
            | Command::SaveAll
            | Command::CloseEditor { .. }
            | Command::CancelCloseEditor
            | Command::ReopenClosedEditor
            | Command::KeepMine(_)
            | Command::LoadTheirs(_)
            | Command::ToggleCompare(_)
            | Command::DismissEditorNotice(_)
            | Command::QuitDiscarding
            | Command::QuitSaving
            | Command::QuickOpen
            | Command::ShowSearch
            | Command::ReplaceInFiles
            | Command::OpenAt { .. } => self.run_editor(command, ctx),
            Command::FileAction(_)
            | Command::FilePromptName(_)
            | Command::FilePromptSubmit
            | Command::FilePromptCancel => self.run_file_prompt(command),
            Command::Refresh => {
                if let Some(ws) = &mut self.workspace {
                    for request in ws.explorer.refresh() {
                        self.io.send(request);
                    }
                }
            }
            Command::ResetLayout => self.dock = default_layout(),
            Command::ShowPanel(panel) => self.show_panel(panel),
            Command::Lsp(ask) => self.run_lsp(&ask),
            Command::OpenCrashFolder => self.end_crash_notice(true),
            Command::DismissCrashNotice => self.end_crash_notice(false),
            Command::SetTheme(theme) => {
                self.theme = theme;
                cocode_ui::apply_theme(ctx, theme);
            }
            Command::AgentPrompt(_)
            | Command::SendReply
            | Command::FinishAndVerify
            | Command::ToolDecision { .. }
            | Command::TaskDecision { .. }
            | Command::ShowTask(_)
            | Command::RunTask
            | Command::CloseTask
            | Command::RetryTask { .. }
            | Command::NewConversation
            | Command::ShowConversation(_)
            | Command::CloseConversation(_)
            | Command::AgentBackend(_)
            | Command::AgentModel(_)
            | Command::ProviderKeyDraft { .. }
            | Command::ProviderUrlDraft { .. }
            | Command::Provider(_)
            | Command::StopTask
            | Command::RollbackTask(_)
            | Command::AllowAndRerun { .. } => self.run_agent_command(command),
            Command::FocusTerminal
            | Command::NewTerminal
            | Command::CloseTerminal { .. }
            | Command::CancelCloseTerminal
            | Command::StopAgentCommand(_)
            | Command::AskOpenLink { .. }
            | Command::OpenLink
            | Command::CancelOpenLink => self.run_terminal(command, ctx),
            Command::Quit => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
        }
    }

    /// The Open Folder dialog's commands.
    fn run_open_folder(&mut self, command: Command) {
        match command {
            // One dialog at a time: the brick dialog stays until it closes.
            Command::ShowOpenFolder if self.new_brick.is_some() => {}
            Command::ShowOpenFolder => {
                let start = self
                    .workspace
                    .as_ref()
                    .map(|w| w.root.clone())
                    .or_else(home_dir)
                    .unwrap_or_else(|| PathBuf::from("/"));
                self.browse(start);
            }
            Command::PickerBrowse(dir) => self.browse(dir),
            Command::OpenFolder(path) => self.io.send(IoRequest::ResolveFolder { path }),
            Command::OpenPath(path) => self.io.send(IoRequest::ResolveOpen { path }),
            Command::SwitchNow => {
                if let Some(switching) = &mut self.switching {
                    switching.chosen = Some(SwitchChoice::Discard);
                    self.request_stop_all();
                    self.advance_switch();
                }
            }
            Command::SwitchSaving => {
                if let Some(switching) = &mut self.switching {
                    switching.chosen = Some(SwitchChoice::SaveFirst);
                    for id in self.editors.dirty_ids() {
                        self.save(id);
                    }
                    self.request_stop_all();
                    self.advance_switch();
                }
            }
            Command::CancelSwitch => self.switching = None,
            Command::PickerTyped(text) => {
                if let Some(dialog) = &mut self.dialog {
                    dialog.typed = text;
                    dialog.error = None;
                }
            }
            Command::CloseOpenFolder => self.dialog = None,
            _ => {}
        }
    }

    /// The terminals' commands.
    fn run_terminal(&mut self, command: Command, ctx: &egui::Context) {
        match command {
            Command::FocusTerminal => {
                let existing = self
                    .terminals
                    .last_used
                    .or_else(|| self.terminals.shells().last());
                match existing {
                    Some(id) => {
                        self.show_panel(PanelId::Terminal(id));
                        self.terminals.focus = Some(id);
                    }
                    None => self.new_terminal(),
                }
                ctx.request_repaint();
            }
            Command::NewTerminal => {
                self.new_terminal();
                ctx.request_repaint();
            }
            Command::CloseTerminal { id, confirmed } => {
                if confirmed || !self.terminals.busy(id) {
                    if let Some(path) = self.dock.find_tab(&PanelId::Terminal(id)) {
                        self.dock.remove_tab(path);
                    }
                    self.terminals.close(id);
                } else {
                    self.terminals.close_prompt = Some(id);
                }
            }
            Command::CancelCloseTerminal => self.terminals.close_prompt = None,
            Command::StopAgentCommand(id) => self.send_task(ServiceRequest::StopCommand(id)),
            Command::AskOpenLink { url, from_agent } => {
                self.terminals.link_prompt = Some((url, from_agent));
            }
            Command::OpenLink => {
                if let Some((url, _)) = self.terminals.link_prompt.take() {
                    self.terminals.open_link(&url);
                }
            }
            Command::CancelOpenLink => self.terminals.link_prompt = None,
            _ => {}
        }
    }

    /// The "New Workspace from Brick" dialog's commands.
    fn run_brick_dialog(&mut self, command: Command) {
        match command {
            Command::ShowNewFromBrick => self.show_new_from_brick(),
            Command::BrickDialog(change) => {
                if let Some(dialog) = &mut self.new_brick {
                    dialog.apply(change);
                }
                self.recheck_brick();
            }
            Command::CreateFromBrick => {
                if let (Some(dialog), Some(service)) = (&mut self.new_brick, &self.bricks)
                    && dialog.can_create()
                    && let Some(request) = dialog.request()
                {
                    dialog.creating = true;
                    dialog.error = None;
                    service.send(BrickRequest::Scaffold(request));
                }
            }
            Command::CloseNewFromBrick if !self.new_brick.as_ref().is_some_and(|d| d.creating) => {
                self.new_brick = None;
                self.bricks = None;
            }
            _ => {}
        }
    }

    /// Opens the dialog with a fresh brick worker (so bricks added to the
    /// person's folder since the last time are offered).
    fn show_new_from_brick(&mut self) {
        let parent = self
            .workspace
            .as_ref()
            .and_then(|w| w.root.parent().map(Path::to_path_buf))
            .or_else(home_dir)
            .unwrap_or_else(|| PathBuf::from("/"));
        self.dialog = None;
        let dialog = NewFromBrickDialog::new(&parent);
        self.bricks = Some(BrickService::spawn(self.waker.clone(), &self.runtime));
        self.new_brick = Some(dialog);
    }

    /// Sends the dialog's request for checking (or shows why there is none).
    fn recheck_brick(&mut self) {
        if let Some(dialog) = &mut self.new_brick
            && let Some((seq, request)) = dialog.recheck()
            && let Some(service) = &self.bricks
        {
            service.send(BrickRequest::Validate { seq, request });
        }
    }

    fn apply_bricks(&mut self) {
        let Some(service) = &mut self.bricks else {
            return;
        };
        let mut recheck = false;
        for response in service.drain() {
            let Some(dialog) = &mut self.new_brick else {
                continue;
            };
            match response {
                BrickResponse::Listed { bricks, problems } => {
                    dialog.bricks = Some(bricks);
                    dialog.problems = problems;
                    recheck = true;
                }
                BrickResponse::Validated { seq, result } => {
                    dialog.on_checked(seq, result);
                }
                BrickResponse::Scaffolded(Ok(root)) => {
                    self.new_brick = None;
                    self.bricks = None;
                    self.switch_to(root);
                    return;
                }
                BrickResponse::Scaffolded(Err(message)) => {
                    dialog.creating = false;
                    dialog.error = Some(message);
                    recheck = true;
                }
            }
        }
        if recheck {
            self.recheck_brick();
        }
    }

    /// The editor commands.
    fn run_editor(&mut self, command: Command, ctx: &egui::Context) {
        match command {
            Command::Save(id) => self.save(id),
            Command::SaveAll => {
                let ids = self.editors.dirty_ids();
                for id in ids {
                    self.save(id);
                }
            }
            Command::CloseEditor { id, action } => match action {
                CloseEditor::Ask if self.editors.is_dirty(id) => {
                    self.editors.close_prompt = Some(id);
                }
                CloseEditor::Save if self.editors.is_dirty(id) => {
                    self.editors.close_prompt = None;
                    if let Some(tab) = self.editors.get_mut(id) {
                        tab.close_after_save = true;
                    }
                    self.save(id);
                }
                _ => self.close_editor_tab(id),
            },
            Command::CancelCloseEditor => {
                self.editors.close_prompt = None;
                self.quitting = false;
            }
            Command::ReopenClosedEditor => {
                if let Some(path) = self.editors.reopen_closed() {
                    self.open_file(&path);
                }
            }
            Command::QuickOpen => {
                if self.quick_open.open {
                    self.quick_open.close();
                } else if let Some(ws) = &self.workspace {
                    self.quick_open.show(&ws.root);
                }
            }
            Command::ShowSearch => {
                self.show_panel(PanelId::Search);
                self.search.focus = true;
            }
            Command::ReplaceInFiles => {
                if let Some(ws) = &self.workspace {
                    let root = ws.root.clone();
                    self.search.plan_replace(&root);
                }
            }
            Command::OpenAt {
                path,
                line,
                start,
                end,
            } => {
                self.open_file(&path);
                if let Some(id) = self.editors.by_path(&path) {
                    self.editors.select_range(id, line, start, end);
                }
            }
            Command::KeepMine(id) => self.editors.keep_mine(id),
            Command::ToggleCompare(id) => self.editors.toggle_compare(id),
            Command::LoadTheirs(id) => self.editors.take_theirs(id),
            Command::DismissEditorNotice(id) => {
                if let Some(tab) = self.editors.get_mut(id) {
                    tab.notice = None;
                }
            }
            Command::QuitDiscarding => {
                self.quit_now = true;
                ctx.request_repaint();
            }
            Command::QuitSaving => {
                let ids = self.editors.dirty_ids();
                for id in ids {
                    if let Some(tab) = self.editors.get_mut(id) {
                        tab.close_after_save = true;
                    }
                    self.save(id);
                }
            }
            _ => {}
        }
        ctx.request_repaint();
    }

    /// The Explorer's file operations: ask, check the name, send to the
    /// host (started if need be, as for a save).
    fn run_file_prompt(&mut self, command: Command) {
        let Some(ws) = &mut self.workspace else {
            return;
        };
        match command {
            Command::FileAction(action) => {
                ws.prompt = Some(crate::window::explorer::FilePrompt::new(action));
            }
            Command::FilePromptName(name) => {
                if let Some(p) = &mut ws.prompt {
                    p.name = name;
                    p.error = None;
                }
            }
            Command::FilePromptCancel => ws.prompt = None,
            Command::FilePromptSubmit => {
                let Some(prompt) = &mut ws.prompt else { return };
                if prompt.busy {
                    return;
                }
                let op = match user_op_of(&ws.root, prompt) {
                    Ok(op) => op,
                    Err(message) => {
                        prompt.error = Some(message);
                        return;
                    }
                };
                prompt.busy = true;
                let root = ws.root.clone();
                if self.tasks.is_none() {
                    self.start_tasks(root);
                }
                self.send_task(ServiceRequest::UserOp(op));
            }
            _ => {}
        }
    }

    /// A person's file operation finished: the Explorer and the editors
    /// follow it.
    fn on_user_op(&mut self, op: &cocode_workspace::UserOp, result: Result<(), String>) {
        use cocode_workspace::UserOp;
        let Some(ws) = &mut self.workspace else {
            return;
        };
        if let UserOp::Rewrite(files) = op {
            self.search.replacing = false;
            self.search.note = Some(match result {
                Ok(()) => format!(
                    "Replaced {} occurrence(s) in {} file(s).",
                    self.search.pending_occurrences,
                    files.len()
                ),
                Err(message) => format!("Nothing was replaced: {message}"),
            });
            let root = ws.root.clone();
            self.search.start(&root);
            return;
        }
        if let Err(message) = result {
            if let Some(p) = &mut ws.prompt {
                p.busy = false;
                p.error = Some(message);
            }
            return;
        }
        ws.prompt = None;
        let root = ws.root.clone();
        let abs = |p: &cocode_core::path::NormalizedPath| {
            p.segments().fold(root.clone(), |acc, s| acc.join(s))
        };
        for request in ws.explorer.refresh() {
            self.io.send(request);
        }
        match op {
            UserOp::CreateFile(p) => self.open_file(&abs(p)),
            UserOp::CreateFolder(_) | UserOp::Rewrite(_) => {}
            UserOp::Rename { from, to } => {
                let base = root.clone();
                self.editors
                    .on_renamed(&abs(from), &abs(to), |path| rel_path(&base, path).ok());
            }
            UserOp::Delete(p) => {
                for id in self.editors.on_deleted(&abs(p)) {
                    self.close_editor_tab(id);
                }
            }
        }
    }

    /// A replace-in-files plan arrived: files open with unsaved changes
    /// stop it (the person's text would be overwritten); otherwise every
    /// file goes to the gate as one operation.
    fn apply_replace_plan(&mut self, plan: crate::window::search::ReplacePlan) {
        let occurrences = plan.occurrences();
        let Some(ws) = &self.workspace else { return };
        let root = ws.root.clone();
        if plan.files.is_empty() {
            self.search.replacing = false;
            self.search.note = Some("Nothing to replace.".to_owned());
            return;
        }
        let dirty: Vec<&str> = plan
            .files
            .iter()
            .filter(|f| {
                self.editors
                    .by_path(&root.join(&f.path))
                    .is_some_and(|id| self.editors.is_dirty(id))
            })
            .map(|f| f.path.as_str())
            .collect();
        if !dirty.is_empty() {
            self.search.replacing = false;
            self.search.note = Some(format!(
                "Nothing was replaced: save or close these first, they have unsaved changes: {}",
                dirty.join(", ")
            ));
            return;
        }
        let mut writes = Vec::with_capacity(plan.files.len());
        for f in plan.files {
            match rel_path(&root, &root.join(&f.path)) {
                Ok(path) => writes.push(cocode_workspace::UserWrite {
                    path,
                    expected: f.expected,
                    bytes: f.bytes,
                }),
                Err(message) => {
                    self.search.replacing = false;
                    self.search.note = Some(format!("Nothing was replaced: {message}"));
                    return;
                }
            }
        }
        self.search.pending_occurrences = occurrences;
        if self.tasks.is_none() {
            self.start_tasks(root);
        }
        self.send_task(ServiceRequest::UserOp(cocode_workspace::UserOp::Rewrite(
            writes,
        )));
    }

    /// Opens a file of the workspace in an editor tab beside the other
    /// editors (or shows the tab that has it), with the keyboard focus.
    fn open_file(&mut self, path: &Path) {
        let Some(ws) = &mut self.workspace else {
            return;
        };
        ws.explorer.select(path);
        let (id, request) = self.editors.open(&ws.root, path);
        if let Some(request) = request {
            self.io.send(request);
        }
        let tab = PanelId::Editor(id);
        if let Some(found) = self.dock.find_tab(&tab) {
            let _ = self.dock.set_active_tab(found);
            return;
        }
        let beside = self
            .dock
            .iter_all_tabs()
            .find(|(_, t)| matches!(t, PanelId::Editor(_)))
            .map(|(path, _)| path)
            .or_else(|| self.dock.find_tab(&PanelId::Welcome));
        match beside {
            Some(path) => {
                let leaf = &mut self.dock[path.surface][path.node];
                leaf.append_tab(tab);
                if let Some(found) = self.dock.find_tab(&tab) {
                    let _ = self.dock.set_active_tab(found);
                }
            }
            None => self.dock.push_to_focused_leaf(tab),
        }
    }

    /// Saves an editor tab's text through the task host's user save (the
    /// host starts if it has not: saves are known to the recording).
    fn save(&mut self, id: u32) {
        if !self.editors.is_dirty(id) {
            // Nothing differs from disk; a tab waiting to close just closes.
            if self.editors.get(id).is_some_and(|t| t.close_after_save) {
                self.close_editor_tab(id);
            }
            return;
        }
        let Some(rel) = self.editors.begin_save(id) else {
            return;
        };
        if self.tasks.is_none()
            && let Some(root) = self.workspace_root().cloned()
        {
            self.start_tasks(root);
        }
        self.send_task(ServiceRequest::Save { path: rel });
    }

    fn close_editor_tab(&mut self, id: u32) {
        if let Some(path) = self.dock.find_tab(&PanelId::Editor(id)) {
            self.dock.remove_tab(path);
        }
        self.editors.close(id);
        if self.quitting && self.editors.docs.dirty_paths().is_empty() {
            self.quit_now = true;
        }
    }

    /// The editor tab the person works in: the focused one, else the last
    /// one they used that is still open.
    pub(crate) fn active_editor(&self) -> Option<u32> {
        self.editors
            .active
            .filter(|id| self.editors.get(*id).is_some())
    }

    /// Remembers the focused dock tab when it is an editor.
    fn note_active_editor(&mut self) {
        if let Some((_, PanelId::Editor(id))) = self.dock.find_active_focused() {
            self.editors.active = Some(*id);
        }
    }

    /// Files changed on disk: open tabs read them again, the Explorer lists
    /// again when entries came or went.
    fn apply_disk_changes(&mut self) {
        let Some(watch) = &self.watch else { return };
        let changes = watch.drain();
        let Some(ws) = &mut self.workspace else {
            return;
        };
        for path in &changes.changed {
            if self.editors.by_path(path).is_some() {
                self.io.send(IoRequest::Reread {
                    root: ws.root.clone(),
                    path: path.clone(),
                });
            }
        }
        if changes.listing {
            for request in ws.explorer.refresh() {
                self.io.send(request);
            }
        }
    }

    /// "Save changes?" before an editor tab with unsaved text closes, and
    /// before the window closes with any.
    fn unsaved_prompt(&mut self, ctx: &egui::Context, commands: &mut Vec<Command>) {
        if ctx.input(|i| i.viewport().close_requested()) && !self.quit_now {
            let dirty = self.editors.docs.dirty_paths();
            if !dirty.is_empty() {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
                self.quitting = true;
            }
        }
        if self.quit_now {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if self.quitting {
            let n = self.editors.docs.dirty_paths().len();
            views::editor::quit_prompt(ctx, n, commands);
            return;
        }
        if let Some(switching) = &self.switching {
            let from = self.workspace_root().cloned();
            views::open_folder::switch_prompt(
                ctx,
                &views::open_folder::SwitchPrompt {
                    from: from.as_deref(),
                    to: &switching.to,
                    losses: self.losses(),
                    chosen: switching.chosen,
                },
                commands,
            );
            return;
        }
        if let Some(id) = self.editors.close_prompt {
            let name = self
                .editors
                .get(id)
                .map(crate::window::editors::EditorTab::name)
                .unwrap_or_default();
            views::editor::close_prompt(ctx, id, &name, commands);
        }
    }

    fn send_task(&self, request: ServiceRequest) {
        if let Some(service) = &self.tasks {
            service.send(request);
        }
    }

    /// Starts the task service of the workspace at `root`, after the
    /// service this window had for it before has let go of it.
    fn start_tasks(&mut self, root: PathBuf) {
        self.closing.retain(|_, closed| !*closed.borrow());
        let after = self.closing.get(&root).cloned();
        self.tasks = Some(TaskService::start(
            root,
            Arc::clone(&self.editors.docs),
            self.lsp.as_ref().map(|l| l.servers.clone()),
            self.provider_setup.clone(),
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

    /// Starts the workspace's task service if needed and runs the prompt.
    fn run_task(&mut self) {
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
    fn start_run(&mut self, conv: u64, (prompt, backend, model): (String, String, Option<String>)) {
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

    fn browse(&mut self, dir: PathBuf) {
        self.io.send(IoRequest::List {
            dir: dir.clone(),
            filter: ListFilter::FoldersOnly,
        });
        self.dialog = Some(OpenFolderDialog {
            typed: dir.display().to_string(),
            browsing: dir,
            subfolders: None,
            error: None,
        });
    }

    /// Opens a shell in the workspace root (or the home folder) in a new
    /// tab with the keyboard focus.
    fn new_terminal(&mut self) {
        let cwd = self
            .workspace_root()
            .cloned()
            .or_else(home_dir)
            .unwrap_or_else(|| PathBuf::from("/"));
        let id = self.terminals.open_shell(&cwd);
        self.add_terminal_tab(id);
    }

    /// Puts a terminal tab beside the other terminals, or in a new area
    /// below the editor area (where VS Code keeps its panel).
    fn add_terminal_tab(&mut self, id: u32) {
        self.add_bottom_tab(PanelId::Terminal(id));
    }

    /// Puts a tab in the editor area (beside the open files).
    fn add_editor_area_tab(&mut self, tab: PanelId) {
        let area = self
            .dock
            .iter_all_tabs()
            .find(|(p, t)| {
                matches!(t, PanelId::Editor(_) | PanelId::Welcome)
                    && p.surface == egui_dock::SurfaceIndex::main()
            })
            .map(|(p, _)| p.node);
        match area {
            Some(node) => self.dock.main_surface_mut()[node].append_tab(tab),
            None => self.dock.push_to_focused_leaf(tab),
        }
    }

    /// Puts a tab beside the terminals or Problems, or in a new area below
    /// the editor area.
    fn add_bottom_tab(&mut self, tab: PanelId) {
        let beside = self
            .dock
            .iter_all_tabs()
            .find(|(_, t)| matches!(t, PanelId::Terminal(_) | PanelId::Problems))
            .map(|(path, _)| path);
        let editor_area = self
            .dock
            .iter_all_tabs()
            .find(|(p, t)| {
                matches!(t, PanelId::Editor(_)) && p.surface == egui_dock::SurfaceIndex::main()
            })
            .map(|(p, _)| p.node)
            .or_else(|| {
                self.dock
                    .find_main_surface_tab(&PanelId::Welcome)
                    .map(|(n, _)| n)
            });
        match beside {
            Some(path) => self.dock[path.surface][path.node].append_tab(tab),
            None => match editor_area {
                Some(node) => {
                    self.dock
                        .main_surface_mut()
                        .split_below(node, 0.6, vec![tab]);
                }
                None => self.dock.push_to_focused_leaf(tab),
            },
        }
    }

    /// Focuses a panel, re-adding it if the person closed it (Problems
    /// below the editors, beside the terminals, as in VS Code).
    fn show_panel(&mut self, panel: PanelId) {
        if panel == PanelId::Providers {
            // A credential store may have come (or gone) since the last look.
            self.providers.send(ProviderRequest::Refresh);
        }
        if self.dock.find_tab(&panel).is_none() {
            match panel {
                PanelId::Problems => self.add_bottom_tab(panel),
                // Settings open where files do, as in VS Code.
                PanelId::Providers => self.add_editor_area_tab(panel),
                _ => self.dock.push_to_focused_leaf(panel),
            }
        }
        if let Some(path) = self.dock.find_tab(&panel) {
            // The path was just found, so focusing it cannot fail.
            let _ = self.dock.set_active_tab(path);
        }
    }
}

/// The status bar's sandbox badge: what confines agent commands here, and
/// the proxy they must go through.
pub fn sandbox_status(
    confinement: &cocode_core::process::Confinement,
    port: u16,
) -> (String, cocode_ui::Tone, String) {
    use cocode_core::process::Confinement;
    match confinement {
        Confinement::Landlock => (
            format!("Landlock active · proxy :{port}"),
            cocode_ui::Tone::Success,
            "Agent commands write only inside the workspace and reach the network only through the policy proxy.".to_owned(),
        ),
        Confinement::Seatbelt => (
            format!("Seatbelt active · proxy :{port}"),
            cocode_ui::Tone::Success,
            "Agent commands run under a Seatbelt profile and reach the network only through the policy proxy.".to_owned(),
        ),
        Confinement::Unconfined { reason } => (
            format!("Proxy only · proxy :{port}"),
            cocode_ui::Tone::Warning,
            format!("Agent commands are not confined by the OS ({reason}); their network goes through the policy proxy."),
        ),
    }
}

/// A workspace path for an absolute path under `root`.
fn rel_path(root: &Path, path: &Path) -> Result<cocode_core::path::NormalizedPath, String> {
    use cocode_core::path::{CaseSensitivity, NormalizeOptions, normalize};
    let rel = path
        .strip_prefix(root)
        .map_err(|_| format!("not in the open folder: {}", path.display()))?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    normalize(&rel, NormalizeOptions::native(CaseSensitivity::Sensitive)).map_err(|e| e.to_string())
}

/// The host operation a filled-in prompt asks for.
fn user_op_of(
    root: &Path,
    prompt: &crate::window::explorer::FilePrompt,
) -> Result<cocode_workspace::UserOp, String> {
    use crate::window::explorer::FileAction;
    use cocode_workspace::UserOp;
    let target = prompt.target()?;
    Ok(match (&prompt.action, target) {
        (FileAction::NewFile { .. }, Some(t)) => UserOp::CreateFile(rel_path(root, &t)?),
        (FileAction::NewFolder { .. }, Some(t)) => UserOp::CreateFolder(rel_path(root, &t)?),
        (FileAction::Rename { path }, Some(t)) => UserOp::Rename {
            from: rel_path(root, path)?,
            to: rel_path(root, &t)?,
        },
        (FileAction::Delete { path, .. }, _) => UserOp::Delete(rel_path(root, path)?),
        (_, None) => return Err("Type a name.".to_owned()),
    })
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" }).map(PathBuf::from)
}

struct Viewer<'a> {
    workspace: Option<&'a WorkspaceView>,
    editors: &'a mut Editors,
    search: &'a mut Search,
    agent: &'a AgentPanel,
    providers: &'a ProvidersPanel,
    terminals: &'a mut Terminals,
    lsp: Option<&'a crate::window::lsp::LspClient>,
    commands: &'a mut Vec<Command>,
    os: Os,
    theme: Theme,
}

impl TabViewer for Viewer<'_> {
    type Tab = PanelId;

    fn title(&mut self, tab: &mut PanelId) -> egui::WidgetText {
        match tab {
            PanelId::Terminal(id) => self
                .terminals
                .get(*id)
                .map_or_else(
                    || "Terminal".to_owned(),
                    crate::window::terminals::TerminalTab::title,
                )
                .into(),
            PanelId::Editor(id) => self.editors.title(*id).into(),
            _ => tab.title().into(),
        }
    }

    fn on_close(&mut self, tab: &mut PanelId) -> egui_dock::tab_viewer::OnCloseResponse {
        use egui_dock::tab_viewer::OnCloseResponse;
        if let PanelId::Terminal(id) = *tab {
            if self.terminals.busy(id) {
                // The person is asked first; the tab stays until they agree.
                self.terminals.close_prompt = Some(id);
                return OnCloseResponse::Ignore;
            }
            self.terminals.close(id);
        }
        if let PanelId::Editor(id) = *tab {
            if self.editors.is_dirty(id) {
                self.editors.close_prompt = Some(id);
                return OnCloseResponse::Ignore;
            }
            self.editors.close(id);
        }
        OnCloseResponse::Close
    }

    fn id(&mut self, tab: &mut PanelId) -> egui::Id {
        egui::Id::new(("panel", *tab))
    }

    fn ui(&mut self, ui: &mut egui::Ui, tab: &mut PanelId) {
        match tab {
            PanelId::Explorer => {
                let marks = self.editors.marks();
                views::explorer::show(ui, self.workspace, &marks, self.commands, self.os);
            }
            PanelId::Welcome => views::editor::welcome(ui, self.workspace.is_some(), self.os),
            PanelId::Search => views::search::show(
                ui,
                self.search,
                self.workspace.map(|w| w.root.as_path()),
                self.commands,
            ),
            PanelId::Editor(id) => {
                views::editor::show(ui, self.editors, *id, self.theme, self.os, self.commands);
            }
            PanelId::Agent => {
                views::agent::show(
                    ui,
                    self.agent,
                    self.providers,
                    self.workspace.is_some(),
                    self.commands,
                );
            }
            PanelId::Providers => views::providers::show(ui, self.providers, self.commands),
            PanelId::Problems => views::problems::show(
                ui,
                self.lsp.map_or(&[], |l| l.problems.as_slice()),
                self.lsp.map_or(&[], |l| l.statuses.as_slice()),
                self.workspace.map(|w| w.root.as_path()),
                self.theme,
                self.commands,
            ),
            PanelId::Terminal(id) => {
                let id = *id;
                let focus = self.terminals.focus == Some(id);
                let Some(tab) = self.terminals.get_mut(id) else {
                    ui.label("This terminal has closed.");
                    return;
                };
                let live = tab.session().is_some();
                let shell = tab.kind == crate::window::terminals::TabKind::Shell;
                let focused = views::terminal::show(
                    ui,
                    tab,
                    self.theme,
                    self.os,
                    focus && live,
                    self.commands,
                );
                if focus && live {
                    self.terminals.focus = None;
                }
                if focused && shell {
                    self.terminals.last_used = Some(id);
                }
            }
        }
    }

    fn scroll_bars(&self, _tab: &PanelId) -> [bool; 2] {
        // Panels scroll their own content (the editor virtualizes rows).
        [false, false]
    }
}

impl eframe::App for CocodeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        CocodeApp::ui(self, ui);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.stop_running_tasks(std::time::Duration::from_secs(5));
    }
}

#[path = "app_lsp.rs"]
mod app_lsp;

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "terminal_tests.rs"]
mod terminal_tests;

#[cfg(test)]
#[path = "editor_tests.rs"]
mod editor_tests;

#[cfg(test)]
#[path = "lsp_tests.rs"]
mod lsp_tests;
