//! The keymap's commands in the window: which can run now (menus grey the
//! others out, the palette leaves them out, their keys pass through), and
//! what each one does.

use std::path::{Path, PathBuf};

use cocode_ui::Theme;

use crate::window::app::CocodeApp;
use crate::window::command::{
    AgentCommand, BrickCommand, CloseEditor, Command, EditorCommand, ExplorerCommand,
    FolderCommand, PanelId, TerminalCommand, WindowCommand,
};
use crate::window::keymap::{Action, EditorAction};
use crate::window::workspace_service::ServiceRequest;

impl CocodeApp {
    /// The window's own commands: the keymap's, the palette, notices,
    /// zoom, the Settings page's changes and the recent folders.
    pub(super) fn run_shell(&mut self, command: WindowCommand, ctx: &egui::Context) {
        match command {
            WindowCommand::Run(action) => self.run_action(action, ctx),
            WindowCommand::Palette => {
                if self.palette.open {
                    self.palette.close();
                } else {
                    self.quick_open.close();
                    self.palette.show();
                }
            }
            WindowCommand::DismissKeymapNotice => self.keymap_notice_dismissed = true,
            WindowCommand::DismissStateNotice => self.saved_notice = None,
            WindowCommand::SetZoom(percent) => {
                #[expect(clippy::cast_precision_loss, reason = "a percentage")]
                ctx.set_zoom_factor(percent as f32 / 100.0);
            }
            WindowCommand::FollowSystemTheme => {
                self.theme_source = crate::window::app::ThemeSource::System;
                cocode_ui::follow_system_theme(ctx);
                self.theme = cocode_ui::current_theme(ctx);
            }
            WindowCommand::SetEditorFontSize(points) => {
                let size = points.map(f32::from);
                self.saved.editor_font_size = size;
                cocode_ui::set_editor_font_size(ctx, size);
            }
            WindowCommand::SetScrollback(lines) => {
                self.saved.terminal_scrollback = Some(lines);
                self.terminals.set_scrollback(lines);
            }
            WindowCommand::EditSettings(edit) => self.edit_settings(edit),
            WindowCommand::StoreAgentSecret { agent, name, value } => {
                self.ensure_service();
                self.settings.error = None;
                self.settings.busy = true;
                self.send_task(ServiceRequest::StoreAgentSecret { agent, name, value });
            }
            WindowCommand::DecideGrant { grant, allow } => {
                self.ensure_service();
                self.send_task(ServiceRequest::DecideGrants(vec![(grant, allow)]));
            }
            WindowCommand::ForgetRecent(root) => self.forget_recent(root.as_deref()),
            WindowCommand::ResetLayout => self.dock = crate::window::app::default_layout(),
            WindowCommand::RunToolSample { name, arguments } => {
                self.ensure_service();
                self.send_task(ServiceRequest::RunToolSample { name, arguments });
            }
            WindowCommand::ShowPanel(panel) => self.show_panel(panel),
            WindowCommand::ShowSettings(section) => {
                self.settings.section = section;
                self.show_panel(PanelId::Settings);
            }
            WindowCommand::ClearTrace => self.send_task(ServiceRequest::ClearTrace),
            WindowCommand::SaveTrace => self.save_trace(),
            WindowCommand::SaveTraceTo(picked) => self.save_trace_to(picked),
            WindowCommand::SetTheme(theme) => {
                self.theme = theme;
                self.theme_source = crate::window::app::ThemeSource::Chosen;
                cocode_ui::apply_theme(ctx, theme);
            }
            WindowCommand::OpenCrashFolder => self.end_crash_notice(true),
            WindowCommand::DismissCrashNotice => self.end_crash_notice(false),
            WindowCommand::Quit => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
        }
    }

    /// Asks where to save the trace's metadata: the system's save dialog,
    /// or (without one) a new file in the Downloads folder.
    fn save_trace(&mut self) {
        let dialog = self.system.dialogs().save_file(
            "Save trace metadata".to_owned(),
            TRACE_FILE.to_owned(),
            export_folder(),
        );
        self.system
            .ask(&self.runtime, &self.waker, dialog, |picked| {
                Command::Window(WindowCommand::SaveTraceTo(picked))
            });
    }

    fn save_trace_to(&mut self, picked: crate::window::system_dialog::Picked) {
        use crate::window::system_dialog::Picked;
        let (path, replace) = match picked {
            Picked::Chosen(path) => (path, true),
            Picked::Cancelled => return,
            Picked::Unavailable(_) => {
                let Some(dir) = export_folder() else {
                    self.trace.saved = Some(Err(
                        "there is no save dialog here and no Downloads or home folder".to_owned(),
                    ));
                    return;
                };
                (dir.join(TRACE_FILE), false)
            }
        };
        self.io
            .send(crate::window::io_worker::IoRequest::SaveExport {
                path,
                text: self.trace.export(),
                replace,
            });
    }

    /// Whether `action` can run now.
    pub(crate) fn action_available(&self, action: Action) -> bool {
        match action {
            Action::OpenFolder
            | Action::OpenFolderByPath
            | Action::NewFromBrick
            | Action::ReopenClosedEditor
            | Action::Quit
            | Action::CommandPalette
            | Action::Show(_)
            | Action::ResetLayout
            | Action::ToggleTheme
            | Action::NewTerminal
            | Action::FocusTerminal
            | Action::NewConversation => true,
            Action::GoToFile | Action::RefreshExplorer => self.workspace.is_some(),
            Action::Save | Action::CloseEditor | Action::Editor(_) => {
                self.active_editor().is_some()
            }
            Action::SaveAll => !self.editors.docs.dirty_paths().is_empty(),
            Action::StopTask => self.agent.current().running,
        }
    }

    /// The commands that can run now, in the keymap's order.
    pub(crate) fn available_actions(&self) -> Vec<Action> {
        Action::all()
            .into_iter()
            .filter(|a| self.action_available(*a))
            .collect()
    }

    /// Runs `action` (nothing when it cannot run now).
    pub(crate) fn run_action(&mut self, action: Action, ctx: &egui::Context) {
        if !self.action_available(action) {
            return;
        }
        let editor = self.active_editor();
        let command = match action {
            Action::OpenFolder => Command::Folder(FolderCommand::ShowOpenFolder),
            Action::OpenFolderByPath => Command::Folder(FolderCommand::ShowTypedOpenFolder),
            Action::NewFromBrick => Command::Brick(BrickCommand::ShowNewFromBrick),
            Action::GoToFile => Command::Editor(EditorCommand::QuickOpen),
            Action::Save => match editor {
                Some(id) => Command::Editor(EditorCommand::Save(id)),
                None => return,
            },
            Action::SaveAll => Command::Editor(EditorCommand::SaveAll),
            Action::CloseEditor => match editor {
                Some(id) => Command::Editor(EditorCommand::CloseEditor {
                    id,
                    action: CloseEditor::Ask,
                }),
                None => return,
            },
            Action::ReopenClosedEditor => Command::Editor(EditorCommand::ReopenClosedEditor),
            Action::RefreshExplorer => Command::Explorer(ExplorerCommand::Refresh),
            Action::Quit => Command::Window(WindowCommand::Quit),
            Action::CommandPalette => Command::Window(WindowCommand::Palette),
            Action::Show(PanelId::Search) => Command::Editor(EditorCommand::ShowSearch),
            Action::Show(panel) => Command::Window(WindowCommand::ShowPanel(panel)),
            Action::ResetLayout => Command::Window(WindowCommand::ResetLayout),
            Action::ToggleTheme => Command::Window(WindowCommand::SetTheme(match self.theme {
                Theme::Dark => Theme::Light,
                Theme::Light => Theme::Dark,
            })),
            Action::NewTerminal => Command::Terminal(TerminalCommand::NewTerminal),
            Action::FocusTerminal => Command::Terminal(TerminalCommand::FocusTerminal),
            Action::NewConversation => {
                self.show_panel(PanelId::Agent);
                Command::Agent(AgentCommand::NewConversation)
            }
            Action::StopTask => Command::Agent(AgentCommand::StopTask),
            Action::Editor(e) => {
                if let Some(id) = editor {
                    self.run_editor_action(id, e);
                }
                return;
            }
        };
        self.run(command, ctx);
    }

    /// Runs an editor command on editor `id` and shows that editor.
    fn run_editor_action(&mut self, id: u32, action: EditorAction) {
        let docs = std::sync::Arc::clone(&self.editors.docs);
        if let Some(tab) = self.editors.get_mut(id)
            && let Some(rel) = tab.rel.clone()
        {
            let writable = tab.locked().is_none();
            docs.with_document(&rel, |doc| {
                crate::window::views::editor_input::run_action(doc, tab, action, writable);
            });
            tab.reveal = true;
        }
        self.show_panel(PanelId::Editor(id));
    }
}

/// The file name a trace export is offered under.
const TRACE_FILE: &str = "cocode-trace.json";

/// Where exports go by default: the Downloads folder, else home.
fn export_folder() -> Option<PathBuf> {
    let dirs = directories::UserDirs::new()?;
    Some(
        dirs.download_dir()
            .map_or_else(|| dirs.home_dir().to_path_buf(), Path::to_path_buf),
    )
}
