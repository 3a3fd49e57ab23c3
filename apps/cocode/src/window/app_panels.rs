//! The window's panels: terminals, the New from Brick dialog and where
//! tabs go in the dock.

use std::path::{Path, PathBuf};

use crate::window::brick_service::{BrickRequest, BrickResponse, BrickService};
use crate::window::command::{BrickCommand, PanelId, TerminalCommand};
use crate::window::io_worker::IoRequest;
use crate::window::new_brick::NewFromBrickDialog;
use crate::window::providers::ProviderRequest;
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
    /// The terminals' commands.
    pub(super) fn run_terminal(&mut self, command: TerminalCommand, ctx: &egui::Context) {
        match command {
            TerminalCommand::FocusTerminal => {
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
            TerminalCommand::NewTerminal => {
                self.new_terminal();
                ctx.request_repaint();
            }
            TerminalCommand::CloseTerminal { id, confirmed } => {
                if confirmed || !self.terminals.busy(id) {
                    if let Some(path) = self.dock.find_tab(&PanelId::Terminal(id)) {
                        self.dock.remove_tab(path);
                    }
                    self.terminals.close(id);
                } else {
                    self.terminals.close_prompt = Some(id);
                }
            }
            TerminalCommand::CancelCloseTerminal => self.terminals.close_prompt = None,
            TerminalCommand::StopAgentCommand(id) => {
                self.send_task(ServiceRequest::StopCommand(id));
            }
            TerminalCommand::AskOpenLink { url, from_agent } => {
                self.terminals.link_prompt = Some((url, from_agent));
            }
            TerminalCommand::OpenLink => {
                if let Some((url, _)) = self.terminals.link_prompt.take() {
                    self.terminals.open_link(&url);
                }
            }
            TerminalCommand::CancelOpenLink => self.terminals.link_prompt = None,
        }
    }

    /// The "New Workspace from Brick" dialog's commands.
    pub(super) fn run_brick_dialog(&mut self, command: BrickCommand) {
        match command {
            BrickCommand::ShowNewFromBrick => self.show_new_from_brick(),
            BrickCommand::BrickDialog(change) => {
                if let Some(dialog) = &mut self.new_brick {
                    dialog.apply(change);
                }
                self.recheck_brick();
            }
            BrickCommand::CreateFromBrick => {
                if let (Some(dialog), Some(service)) = (&mut self.new_brick, &self.bricks)
                    && dialog.can_create()
                    && let Some(request) = dialog.request()
                {
                    dialog.creating = true;
                    dialog.error = None;
                    service.send(BrickRequest::Scaffold(request));
                }
            }
            BrickCommand::CloseNewFromBrick => {
                // While the workspace is being created the dialog stays:
                // its outcome is reported there.
                if !self.new_brick.as_ref().is_some_and(|d| d.creating) {
                    self.new_brick = None;
                    self.bricks = None;
                }
            }
        }
    }

    /// Opens the dialog with a fresh brick worker (so bricks added to the
    /// person's folder since the last time are offered).
    pub(super) fn show_new_from_brick(&mut self) {
        let parent = self
            .workspace
            .as_ref()
            .and_then(|w| w.root.parent().map(Path::to_path_buf))
            .or_else(home_dir)
            .unwrap_or_else(|| PathBuf::from("/"));
        self.dialog = None;
        let dialog = NewFromBrickDialog::new(&parent);
        self.bricks = Some(BrickService::spawn(self.waker.clone(), &self.root));
        self.new_brick = Some(dialog);
    }

    /// Sends the dialog's request for checking (or shows why there is none).
    pub(super) fn recheck_brick(&mut self) {
        if let Some(dialog) = &mut self.new_brick
            && let Some((seq, request)) = dialog.recheck()
            && let Some(service) = &self.bricks
        {
            service.send(BrickRequest::Validate { seq, request });
        }
    }

    pub(super) fn apply_bricks(&mut self) {
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

    /// Opens a shell in the workspace root (or the home folder) in a new
    /// tab with the keyboard focus.
    pub(super) fn new_terminal(&mut self) {
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
    pub(super) fn add_terminal_tab(&mut self, id: u32) {
        self.add_bottom_tab(PanelId::Terminal(id));
    }

    /// Puts a tab in the editor area (beside the open files).
    pub(super) fn add_editor_area_tab(&mut self, tab: PanelId) {
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
    pub(super) fn add_bottom_tab(&mut self, tab: PanelId) {
        let beside = self
            .dock
            .iter_all_tabs()
            .find(|(_, t)| matches!(t, PanelId::Terminal(_) | PanelId::Problems | PanelId::Trace))
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
    pub(crate) fn show_panel(&mut self, panel: PanelId) {
        if panel == PanelId::Approvals {
            // Its keys (arrows, Enter, Escape) work at once.
            self.approvals.focus = true;
        }
        if panel == PanelId::SourceControl {
            // The message is what one writes next, as in VS Code.
            self.scm.focus = Some(crate::window::scm::Focus::Message);
        }
        if panel == PanelId::Settings {
            // A credential store may have come (or gone) since the last look.
            self.providers.send(ProviderRequest::Refresh);
            self.load_settings();
            // Typing finds a setting at once, as in VS Code.
            self.settings.focus_search = true;
        }
        if self.dock.find_tab(&panel).is_none() {
            match panel {
                PanelId::Problems | PanelId::Trace => self.add_bottom_tab(panel),
                // Settings open where files do, as in VS Code; a review
                // is read as a diff editor is.
                PanelId::Settings | PanelId::ToolCatalog | PanelId::Review => {
                    self.add_editor_area_tab(panel);
                }
                // In the side bar, beside the Explorer, as in VS Code.
                PanelId::SourceControl => match self.dock.find_tab(&PanelId::Explorer) {
                    Some(path) => self.dock[path.surface][path.node].append_tab(panel),
                    None => self.dock.push_to_focused_leaf(panel),
                },
                // Beside the conversations it answers for.
                PanelId::Approvals => match self.dock.find_tab(&PanelId::Agent) {
                    Some(path) => self.dock[path.surface][path.node].append_tab(panel),
                    None => self.dock.push_to_focused_leaf(panel),
                },
                _ => self.dock.push_to_focused_leaf(panel),
            }
        }
        if let Some(path) = self.dock.find_tab(&panel) {
            // The path was just found, so focusing it cannot fail.
            let _ = self.dock.set_active_tab(path);
        }
    }

    /// Reads the open folder's settings for the Settings page: from its
    /// workspace service when it runs, else from the file on the IO
    /// thread (nothing is created by looking).
    pub(super) fn load_settings(&mut self) {
        let Some(root) = self.workspace_root().cloned() else {
            self.settings.view = None;
            return;
        };
        self.settings.busy = true;
        if self.tasks.is_some() {
            self.send_task(ServiceRequest::LoadSettings);
        } else {
            self.io.send(IoRequest::ReadSettings { root });
        }
    }

    /// Starts the open folder's workspace service when it has none.
    pub(super) fn ensure_service(&mut self) {
        if self.tasks.is_none()
            && let Some(root) = self.workspace_root().cloned()
        {
            self.start_tasks(root);
        }
    }

    /// Makes one change of the Settings page through the folder's
    /// workspace service (started for it: the change creates the
    /// folder's settings when it has none).
    pub(super) fn edit_settings(&mut self, edit: crate::host::settings::SettingsEdit) {
        self.ensure_service();
        self.settings.error = None;
        self.settings.busy = true;
        self.send_task(ServiceRequest::EditSettings(edit));
    }
}
