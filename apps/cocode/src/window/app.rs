//! The window: menu bar, docked panels, status bar and the Open Folder dialog.
//!
//! Views read state and return [`Command`]s; the frame applies them once at
//! the end. All disk access goes through the IO thread, so the frame never
//! waits on the file system, and nothing requests a repaint while idle.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use cocode_platform::Os;
use cocode_platform::open_requests::OpenRequests;
use cocode_ui::Theme;
use egui_dock::{DockArea, DockState, NodeIndex, Style, TabViewer};

use crate::host::root::HostRoot;
use crate::window::agent::AgentPanel;
use crate::window::brick_service::BrickService;
use crate::window::command::{Command, FolderCommand, PanelId, WindowCommand};
use crate::window::crash_notice::CrashNotice;
use crate::window::disk_watch::DiskWatch;
use crate::window::editors::Editors;
use crate::window::explorer::WorkspaceView;
use crate::window::io_worker::IoWorker;
use crate::window::keymap::{Action, Keymap};
use crate::window::link::Waker;
use crate::window::new_brick::NewFromBrickDialog;
use crate::window::open_folder::{Losses, OpenFolderDialog, Switching};
use crate::window::providers::{ProviderSetup, ProvidersPanel};
use crate::window::quick_open::QuickOpen;
use crate::window::search::Search;
use crate::window::terminals::Terminals;
use crate::window::views;
use crate::window::workspace_service::{ServiceRequest, WorkspaceService};

/// The application state.
pub struct CocodeApp {
    pub(crate) workspace: Option<WorkspaceView>,
    /// The editor tabs and their documents (shared with the workspace host).
    pub(crate) editors: Editors,
    /// Changes on disk in the open folder.
    watch: Option<DiskWatch>,
    /// The open folder's git reader.
    git: Option<crate::window::git_service::GitService>,
    /// What git says of the open folder (`None`: not known yet, or not in
    /// a repository).
    pub(crate) git_state: Option<Arc<cocode_git::RepoState>>,
    /// Why git's state could not be read, if it could not.
    pub(crate) git_problem: Option<String>,
    /// The Source Control panel.
    pub(crate) scm: crate::window::scm::SourceControl,
    /// The Review panel: one task's changes, hunk by hunk.
    pub(crate) review: crate::window::review::ReviewPanel,
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
    /// Whether the theme is the person's choice or follows the system's
    /// light or dark setting.
    pub(crate) theme_source: ThemeSource,
    pub(crate) os: Os,
    /// The shortcuts of every command (the person's overrides applied).
    pub(crate) keymap: Keymap,
    /// What the person's keybindings file got wrong was seen and dismissed.
    pub(crate) keymap_notice_dismissed: bool,
    /// The command palette (Ctrl/Cmd+Shift+P).
    pub(crate) palette: crate::window::palette::Palette,
    /// What the window remembers between runs.
    pub(crate) saved: crate::window::saved::SavedState,
    /// Where it is written (`None`: nowhere, as in tests).
    pub(crate) state_file: Option<PathBuf>,
    /// Why the saved state was not used, until dismissed.
    pub(crate) saved_notice: Option<String>,
    pub(crate) agent: AgentPanel,
    /// The Approvals panel: its selection.
    pub(crate) approvals: crate::window::approvals::ApprovalsPanel,
    /// The Trace panel: the folder's tool calls.
    pub(crate) trace: crate::window::trace::TracePanel,
    /// The Tool catalog panel.
    pub(crate) catalog: crate::window::catalog::CatalogPanel,
    /// Settings → Providers, and its worker (started on the first frame).
    pub(crate) providers: ProvidersPanel,
    /// The Settings page.
    pub(crate) settings: crate::window::settings::SettingsPanel,
    /// Where provider keys and settings live.
    pub(crate) provider_setup: ProviderSetup,
    /// The providers as the person last changed them in this window (a
    /// workspace service started later gets them too).
    provider_registry: Option<cocode_agent::LlmProviderRegistry>,
    /// The person's shells and agents' commands, each a dock tab.
    pub(crate) terminals: Terminals,
    tasks: Option<WorkspaceService>,
    /// Workspace services of folders this window left, until each has let go of
    /// its folder.
    closing: std::collections::HashMap<PathBuf, tokio::sync::watch::Receiver<bool>>,
    /// The open folder's language servers.
    pub(crate) lsp: Option<crate::window::lsp::LspClient>,
    /// Crash reports of earlier runs, announced once.
    pub(crate) crash_notice: Option<CrashNotice>,
    pub(crate) io: IoWorker,
    /// The system's folder picker and save dialog.
    pub(crate) system: crate::window::system_dialog::DialogRunner<Command>,
    /// The process's runtime: the workspace service and the brick worker run on it.
    runtime: tokio::runtime::Handle,
    /// The composition root: launchers, credentials, bricks.
    pub(crate) root: HostRoot,
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

/// Where the window's theme comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThemeSource {
    /// The person chose dark or light.
    Chosen,
    /// The system's light or dark setting, followed as it changes.
    System,
}

/// Explorer on the left, the editor area in the middle, Agent on the right.
pub fn default_layout() -> DockState<PanelId> {
    let mut dock = DockState::new(vec![PanelId::Welcome]);
    let [editor_area, _] = dock.main_surface_mut().split_left(
        NodeIndex::root(),
        0.2,
        vec![PanelId::Explorer, PanelId::Search, PanelId::SourceControl],
    );
    dock.main_surface_mut()
        .split_right(editor_area, 0.68, vec![PanelId::Agent]);
    dock
}

impl CocodeApp {
    /// Builds the app; `folder` (canonical) opens immediately.
    pub fn new(folder: Option<PathBuf>, root: HostRoot) -> std::io::Result<Self> {
        let keys = ProviderSetup::system(root.credentials());
        let mut app = Self::with_keys(folder, root, keys)?;
        // The system's dialogs (tests keep to the typed path).
        app.system = crate::window::system_dialog::DialogRunner::new(Arc::new(
            crate::window::system_dialog::Native,
        ));
        // The person's own keybindings (tests keep the defaults).
        app.keymap = Keymap::load(
            Os::current(),
            crate::window::keymap::overrides_file().as_deref(),
        );
        Ok(app)
    }

    /// [`Self::new`] with provider keys and settings kept where `keys`
    /// says (tests keep them away from the person's).
    pub fn with_keys(
        folder: Option<PathBuf>,
        root: HostRoot,
        keys: ProviderSetup,
    ) -> std::io::Result<Self> {
        let runtime = root.runtime().clone();
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
            git: None,
            git_state: None,
            git_problem: None,
            scm: crate::window::scm::SourceControl::default(),
            review: crate::window::review::ReviewPanel::default(),
            quick_open,
            search,
            dialog: None,
            open_requests: OpenRequests::new(),
            switching: None,
            new_brick: None,
            bricks: None,
            dock: default_layout(),
            theme: Theme::default(),
            theme_source: ThemeSource::Chosen,
            os: Os::current(),
            keymap: Keymap::defaults(Os::current()),
            keymap_notice_dismissed: false,
            palette: crate::window::palette::Palette::default(),
            saved: crate::window::saved::SavedState::default(),
            state_file: None,
            saved_notice: None,
            agent: AgentPanel::default(),
            approvals: crate::window::approvals::ApprovalsPanel::default(),
            trace: crate::window::trace::TracePanel::default(),
            catalog: crate::window::catalog::CatalogPanel::default(),
            providers: ProvidersPanel::default(),
            settings: crate::window::settings::SettingsPanel::default(),
            provider_setup: keys,
            provider_registry: None,
            terminals: Terminals::new(runtime.clone(), root.person_launcher(), waker.clone()),
            tasks: None,
            closing: std::collections::HashMap::new(),
            lsp: None,
            crash_notice: crate::host::crash::data_dir()
                .and_then(|d| CrashNotice::scan(&crate::host::crash::crash_dir(&d))),
            io,
            system: crate::window::system_dialog::DialogRunner::off(),
            runtime,
            root,
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
            if self.theme_source == ThemeSource::System {
                cocode_ui::follow_system_theme(ctx);
            } else {
                cocode_ui::apply_theme(ctx, self.theme);
            }
            if let Some(zoom) = self.saved.zoom.filter(|z| (0.5..=3.0).contains(z)) {
                ctx.set_zoom_factor(zoom);
            }
            cocode_ui::set_editor_font_size(ctx, self.saved.editor_font_size);
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
        if self.theme_source == ThemeSource::System {
            self.theme = cocode_ui::current_theme(ui.ctx());
        }
        self.apply_io();
        self.take_open_requests(ui.ctx());
        self.apply_disk_changes();
        self.apply_git();
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
        let answers = self.system.drain();
        self.commands.extend(answers);
        // The keymap's window commands (an editor's keys reach the editor).
        while let Some(action) = ui.ctx().input_mut(|i| {
            self.keymap
                .take_window_action(i, |a| self.action_available(a))
        }) {
            self.commands
                .push(Command::Window(WindowCommand::Run(action)));
        }
        let mut commands = std::mem::take(&mut self.commands);

        egui::Panel::top("menu").show(ui, |ui| {
            egui::MenuBar::new().ui(ui, |ui| self.menu(ui, &mut commands));
        });
        self.notices(ui, &mut commands);
        egui::Panel::bottom("status").show(ui, |ui| self.status_bar(ui, &mut commands));
        egui::CentralPanel::default().show(ui, |ui| {
            let mut viewer = Viewer {
                workspace: self.workspace.as_ref(),
                editors: &mut self.editors,
                search: &mut self.search,
                agent: &self.agent,
                approvals: &mut self.approvals,
                trace: &mut self.trace,
                catalog: &mut self.catalog,
                providers: &self.providers,
                settings: &mut self.settings,
                zoom: zoom_percent(ui.ctx()),
                editor_font: self.saved.editor_font_size,
                terminals: &mut self.terminals,
                lsp: self.lsp.as_ref(),
                git_state: self.git_state.as_ref(),
                git_problem: self.git_problem.as_deref(),
                scm: &mut self.scm,
                review: &mut self.review,
                commands: &mut commands,
                os: self.os,
                keymap: &self.keymap,
                recent: &self.saved.recent,
                theme: self.theme,
                follows_system: self.theme_source == ThemeSource::System,
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
        if let Some(prompt) = &self.agent.grant_prompt {
            views::agent::grant_prompt(ui.ctx(), prompt, &mut commands);
        }
        if let Some(ws) = &self.workspace {
            views::quick_open::show(ui.ctx(), &mut self.quick_open, &ws.root, &mut commands);
        }
        if self.palette.open {
            let available = self.available_actions();
            views::palette::show(
                ui.ctx(),
                &mut self.palette,
                &available,
                &self.keymap,
                &mut commands,
            );
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

    /// The bars above the dock: crash reports, a saved state that was not
    /// used, keybindings that could not be.
    fn notices(&self, ui: &mut egui::Ui, commands: &mut Vec<Command>) {
        if let Some(notice) = &self.crash_notice {
            egui::Panel::top("crash-notice").show(ui, |ui| {
                crate::window::crash_notice::show(ui, notice, commands);
            });
        }
        if let Some(notice) = &self.saved_notice {
            egui::Panel::top("state-notice").show(ui, |ui| {
                ui.horizontal_wrapped(|ui| {
                    cocode_ui::badge(ui, "Layout", cocode_ui::Tone::Warning);
                    ui.label(notice);
                    if ui.button("Dismiss").clicked() {
                        commands.push(Command::Window(WindowCommand::DismissStateNotice));
                    }
                });
            });
        }
        if !self.keymap.problems.is_empty() && !self.keymap_notice_dismissed {
            egui::Panel::top("keymap-notice").show(ui, |ui| {
                keymap_notice(ui, &self.keymap.problems, commands);
            });
        }
    }

    fn menu(&self, ui: &mut egui::Ui, commands: &mut Vec<Command>) {
        use crate::window::keymap::EditorAction as E;
        let item = |ui: &mut egui::Ui, action: Action, commands: &mut Vec<Command>| {
            let label = self.keymap.label(action);
            let mut button = egui::Button::new(action.title());
            if !label.is_empty() {
                button = button.shortcut_text(label);
            }
            if ui
                .add_enabled(self.action_available(action), button)
                .clicked()
            {
                commands.push(Command::Window(WindowCommand::Run(action)));
                ui.close();
            }
        };
        ui.menu_button("File", |ui| {
            item(ui, Action::OpenFolder, commands);
            ui.add_enabled_ui(!self.saved.recent.is_empty(), |ui| {
                ui.menu_button("Open Recent", |ui| {
                    for root in &self.saved.recent {
                        if ui.button(root.display().to_string()).clicked() {
                            commands.push(Command::Folder(FolderCommand::OpenFolder(root.clone())));
                            ui.close();
                        }
                    }
                    ui.separator();
                    if ui.button("Clear Recently Opened").clicked() {
                        commands.push(Command::Window(WindowCommand::ForgetRecent(None)));
                        ui.close();
                    }
                });
            });
            item(ui, Action::NewFromBrick, commands);
            item(ui, Action::RefreshExplorer, commands);
            ui.separator();
            for action in [
                Action::GoToFile,
                Action::Save,
                Action::SaveAll,
                Action::CloseEditor,
                Action::ReopenClosedEditor,
            ] {
                item(ui, action, commands);
            }
            ui.separator();
            item(ui, Action::Quit, commands);
        });
        ui.menu_button("Edit", |ui| {
            for group in [
                &[E::Undo, E::Redo][..],
                &[E::SelectAll, E::SelectLine, E::AddNextOccurrence][..],
                &[E::DeleteLines, E::ToggleComment, E::Indent, E::Outdent][..],
                &[
                    E::Find,
                    E::Replace,
                    E::FindNext,
                    E::FindPrevious,
                    E::GoToLine,
                ][..],
            ] {
                for e in group {
                    item(ui, Action::Editor(*e), commands);
                }
                ui.separator();
            }
            item(ui, Action::Show(PanelId::Search), commands);
        });
        ui.menu_button("View", |ui| {
            item(ui, Action::CommandPalette, commands);
            ui.separator();
            for panel in PanelId::ALL {
                if panel != PanelId::Search {
                    item(ui, Action::Show(panel), commands);
                }
            }
            ui.separator();
            item(ui, Action::ResetLayout, commands);
            item(ui, Action::ToggleTheme, commands);
        });
        ui.menu_button("Terminal", |ui| {
            item(ui, Action::NewTerminal, commands);
            item(ui, Action::FocusTerminal, commands);
        });
        ui.menu_button("Agent", |ui| {
            item(ui, Action::NewConversation, commands);
            item(ui, Action::StopTask, commands);
            item(ui, Action::Show(PanelId::Approvals), commands);
        });
    }

    /// The status bar's count of a task's files the person has not looked
    /// at; a click shows them in the Review panel.
    fn to_review(&self, ui: &mut egui::Ui, commands: &mut Vec<Command>) {
        let count = self.review.unviewed();
        if count == 0 {
            return;
        }
        ui.separator();
        if ui
            .add(egui::Button::new(format!("{count} file(s) to review")).frame(false))
            .on_hover_text(format!(
                "Task {}: its changes since your last review",
                self.review.task_id.as_deref().unwrap_or_default()
            ))
            .clicked()
        {
            commands.push(Command::Window(WindowCommand::ShowPanel(PanelId::Review)));
        }
    }

    fn status_bar(&self, ui: &mut egui::Ui, commands: &mut Vec<Command>) {
        ui.horizontal(|ui| {
            let Some(ws) = &self.workspace else {
                ui.label("No folder open");
                return;
            };
            ui.label(ws.root.display().to_string());
            if let Some(git) = &self.git_state {
                ui.separator();
                let (text, hover) = crate::window::scm::branch_label(git);
                if ui
                    .add(egui::Button::new(text).frame(false))
                    .on_hover_text(format!("{hover}\nClick to switch or create a branch."))
                    .clicked()
                {
                    commands.push(Command::Git(crate::window::scm::GitCommand::PickBranch));
                }
            } else if let Some(problem) = &self.git_problem {
                ui.separator();
                cocode_ui::badge(ui, "git unreadable", cocode_ui::Tone::Warning)
                    .on_hover_text(problem);
            }
            self.to_review(ui, commands);
            if let Some(lsp) = &self.lsp {
                ui.separator();
                let (errors, warnings) = views::problems::counts(&lsp.problems);
                if ui
                    .add(egui::Button::new(format!("⊗ {errors}  ⚠ {warnings}")).frame(false))
                    .on_hover_text("Problems")
                    .clicked()
                {
                    commands.push(Command::Window(WindowCommand::ShowPanel(PanelId::Problems)));
                }
                // Each server at work or in trouble; a stopped one leaves
                // its files without diagnostics, which the count above
                // would read as clean.
                for status in &lsp.statuses {
                    if let Some((label, tone, hover)) = server_badge(status) {
                        ui.separator();
                        let text = cocode_ui::badge_text(ui, &label, tone);
                        if ui
                            .add(egui::Button::new(text).frame(false))
                            .on_hover_text(hover)
                            .clicked()
                        {
                            commands
                                .push(Command::Window(WindowCommand::ShowPanel(PanelId::Problems)));
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
            let waiting = self.agent.waiting();
            if waiting > 0 {
                ui.separator();
                let label = if waiting == 1 {
                    "1 approval waiting".to_owned()
                } else {
                    format!("{waiting} approvals waiting")
                };
                let text = cocode_ui::badge_text(ui, &label, cocode_ui::Tone::Warning);
                if ui
                    .add(egui::Button::new(text).frame(false))
                    .on_hover_text("Show the Approvals panel")
                    .clicked()
                {
                    commands.push(Command::Window(WindowCommand::ShowPanel(
                        PanelId::Approvals,
                    )));
                }
            }
            if let Some((confinement, port)) = &self.agent.sandbox {
                ui.separator();
                let (text, tone, hover) = sandbox_status(confinement, *port);
                cocode_ui::badge(ui, &text, tone).on_hover_text(hover);
            }
        });
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

    /// Applies one command: each area's in its own file.
    pub(crate) fn run(&mut self, command: Command, ctx: &egui::Context) {
        match command {
            Command::Window(c) => self.run_shell(c, ctx),
            Command::Folder(c) => self.run_open_folder(c),
            Command::Brick(c) => self.run_brick_dialog(c),
            Command::Explorer(c) => self.run_file_prompt(c),
            Command::Editor(c) => self.run_editor(c, ctx),
            Command::Agent(c) => self.run_agent_command(c),
            Command::Terminal(c) => self.run_terminal(c, ctx),
            Command::Lsp(ask) => self.run_lsp(&ask),
            Command::Git(c) => self.run_git(c),
            Command::Review(c) => self.run_review(c),
        }
    }

    /// The editor tab the person works in: the focused one, else the last
    /// one they used that is still open.
    pub(crate) fn active_editor(&self) -> Option<u32> {
        self.editors
            .active
            .filter(|id| self.editors.get(*id).is_some())
    }
}

/// A language server in the status bar: starting, at work (with its own
/// words and progress), ready, restarting or stopped (with why); nothing
/// for one that is not in use.
pub fn server_badge(
    status: &cocode_lsp::ServerStatus,
) -> Option<(String, cocode_ui::Tone, String)> {
    use cocode_lsp::ServerState;
    use cocode_ui::Tone;
    let id = &status.id;
    match &status.state {
        ServerState::Starting => Some((
            format!("{id} starting…"),
            Tone::Neutral,
            format!("{id} is starting."),
        )),
        ServerState::Running => Some(match &status.work {
            Some(work) => (
                format!("{id}: {work}"),
                Tone::Neutral,
                format!("{id} is at work; its diagnostics may still change."),
            ),
            None => (format!("{id} ✓"), Tone::Success, format!("{id} is ready.")),
        }),
        ServerState::Restarting { reason } => Some((
            format!("{id} restarting"),
            Tone::Warning,
            format!("{reason}\nIt starts again shortly."),
        )),
        ServerState::Failed { reason } => Some((
            format!("{id} stopped"),
            Tone::Danger,
            format!("{reason}\nIts files get no diagnostics. The Problems panel can restart it."),
        )),
        ServerState::NotInstalled { install } if status.documents > 0 => Some((
            format!("{id} not installed"),
            Tone::Warning,
            format!("Its files get no diagnostics. To install it: {install}"),
        )),
        ServerState::NotInstalled { .. }
        | ServerState::Idle { .. }
        | ServerState::Untrusted { .. } => None,
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

/// The interface's zoom, in whole percent.
fn zoom_percent(ctx: &egui::Context) -> u32 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "zoom is a small positive factor"
    )]
    let percent = (ctx.zoom_factor() * 100.0).round() as u32;
    percent
}

/// What the person's keybindings file got wrong; the rest of it applies.
fn keymap_notice(ui: &mut egui::Ui, problems: &[String], commands: &mut Vec<Command>) {
    ui.horizontal_wrapped(|ui| {
        cocode_ui::badge(ui, "Keybindings", cocode_ui::Tone::Warning);
        ui.label(format!(
            "{} entr{} of your keybindings could not be used; the others apply.",
            problems.len(),
            if problems.len() == 1 { "y" } else { "ies" }
        ));
        if ui.button("Dismiss").clicked() {
            commands.push(Command::Window(WindowCommand::DismissKeymapNotice));
        }
    });
    for problem in problems {
        ui.label(problem);
    }
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" }).map(PathBuf::from)
}

struct Viewer<'a> {
    workspace: Option<&'a WorkspaceView>,
    editors: &'a mut Editors,
    search: &'a mut Search,
    agent: &'a AgentPanel,
    approvals: &'a mut crate::window::approvals::ApprovalsPanel,
    trace: &'a mut crate::window::trace::TracePanel,
    catalog: &'a mut crate::window::catalog::CatalogPanel,
    providers: &'a ProvidersPanel,
    settings: &'a mut crate::window::settings::SettingsPanel,
    /// The interface's zoom in percent.
    zoom: u32,
    /// The person's editor font size, if they chose one.
    editor_font: Option<f32>,
    terminals: &'a mut Terminals,
    lsp: Option<&'a crate::window::lsp::LspClient>,
    git_state: Option<&'a Arc<cocode_git::RepoState>>,
    git_problem: Option<&'a str>,
    scm: &'a mut crate::window::scm::SourceControl,
    review: &'a mut crate::window::review::ReviewPanel,
    commands: &'a mut Vec<Command>,
    os: Os,
    keymap: &'a Keymap,
    recent: &'a [PathBuf],
    theme: Theme,
    follows_system: bool,
}

impl Viewer<'_> {
    fn source_control(&mut self, ui: &mut egui::Ui) {
        let cx = views::scm::Context {
            root: self.workspace.map(|w| w.root.as_path()),
            state: self.git_state.map(AsRef::as_ref),
            problem: self.git_problem,
            os: self.os,
        };
        views::scm::show(ui, self.scm, &cx, self.commands);
    }
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
            // A short name that fits the side bar beside the Explorer and
            // Search, and how many files have changes, as VS Code's badge
            // says.
            PanelId::SourceControl => match self.git_state.map(|s| s.changed_count()) {
                Some(n) if n > 0 => format!("Git ({n})").into(),
                _ => "Git".into(),
            },
            // Files left to look at, as Source Control counts its own.
            PanelId::Review => match self.review.unviewed() {
                0 => "Review".into(),
                n => format!("Review ({n})").into(),
            },
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
                let mut marks = self.editors.marks();
                marks.git = self.git_state.cloned();
                views::explorer::show(ui, self.workspace, &marks, self.commands, self.os);
            }
            PanelId::Welcome => views::editor::welcome(
                ui,
                self.workspace.is_some(),
                self.recent,
                self.keymap,
                self.commands,
            ),
            PanelId::SourceControl => self.source_control(ui),
            PanelId::Review => views::review::show(ui, self.review, self.commands),
            PanelId::Search => views::search::show(
                ui,
                self.search,
                self.workspace.map(|w| w.root.as_path()),
                self.commands,
            ),
            PanelId::Editor(id) => {
                views::editor::show(
                    ui,
                    self.editors,
                    *id,
                    self.theme,
                    self.keymap,
                    self.commands,
                );
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
            PanelId::Settings => {
                let cx = views::settings::Context {
                    providers: self.providers,
                    folder: self.workspace.map(|w| w.root.as_path()),
                    theme: self.theme,
                    follows_system: self.follows_system,
                    zoom: self.zoom,
                    editor_font: self.editor_font,
                    scrollback: self.terminals.scrollback(),
                    keys: self.keymap,
                };
                views::settings::show(ui, self.settings, &cx, self.commands);
            }
            PanelId::Approvals => {
                views::approvals::show(ui, self.agent, self.approvals, self.commands);
            }
            PanelId::ToolCatalog => {
                views::catalog::show(ui, self.catalog, self.workspace.is_some(), self.commands);
            }
            PanelId::Trace => {
                let running = self.agent.running() > 0;
                views::trace::show(ui, self.trace, running, self.commands);
            }
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
        self.save_state_now();
    }
}

#[path = "app_actions.rs"]
mod app_actions;

#[path = "app_saved.rs"]
mod app_saved;

#[path = "app_files.rs"]
mod app_files;

#[path = "app_folders.rs"]
mod app_folders;

#[path = "app_lsp.rs"]
mod app_lsp;

#[path = "app_git.rs"]
mod app_git;

#[cfg(test)]
#[path = "git_tests.rs"]
mod git_tests;

#[path = "app_panels.rs"]
mod app_panels;

#[path = "app_tasks.rs"]
mod app_tasks;

#[path = "app_review.rs"]
mod app_review;

#[cfg(test)]
#[path = "review_tests.rs"]
mod review_tests;

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

#[cfg(all(test, target_os = "linux"))]
#[path = "trace_tests.rs"]
mod trace_tests;

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod catalog_tests;

#[cfg(test)]
#[path = "shell_tests.rs"]
mod shell_tests;

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod snapshot_tests;
