//! The editor area's other faces: the status bar's editor fields, the
//! welcome page, and the prompts before closing unsaved work.

use cocode_editor::commands::{column, line_of};
use egui::{Key, Ui};

use crate::window::command::{Command, EditorCommand, FolderCommand, WindowCommand};
use crate::window::editors::Editors;

/// The status bar's facts about a tab: line and column, selections, line
/// count, language, line ending, indentation.
pub fn status(editors: &Editors, id: u32) -> Option<Vec<String>> {
    let tab = editors.get(id)?;
    let rel = tab.rel.as_ref()?;
    editors.docs.with_document(rel, |doc| {
        let rope = doc.rope();
        let primary = doc.selection().primary();
        let line = line_of(rope, primary.head);
        let mut facts = vec![format!(
            "Ln {}, Col {}",
            line + 1,
            column(rope, primary.head) + 1
        )];
        let n = doc.selection().len();
        if n > 1 {
            facts.push(format!("{n} selections"));
        } else if !primary.is_empty() {
            facts.push(format!("{} selected", primary.to() - primary.from()));
        }
        facts.push(format!("{} lines", rope.len_lines()));
        facts.push(
            tab.language()
                .map_or("Plain Text", cocode_editor::Language::name)
                .to_owned(),
        );
        facts.push(match doc.line_ending() {
            cocode_editor::LineEnding::Lf => "LF".to_owned(),
            cocode_editor::LineEnding::CrLf => "CRLF".to_owned(),
        });
        let indent = doc.indent();
        facts.push(if indent.tabs {
            format!("Tab Size: {}", indent.width)
        } else {
            format!("Spaces: {}", indent.width)
        });
        if let Some(syntax) = &tab.syntax
            && let cocode_editor::SyntaxState::Plain(reason) = syntax.state()
        {
            facts.push(reason.clone());
        }
        if let Some(reason) = tab.locked() {
            facts.push(format!("Read-only: {reason}"));
        }
        facts
    })
}

/// The editor area before a file is open: what to do next. With no
/// folder open: Open Folder, New Workspace from Brick and the recent
/// workspaces (each can be taken off the list).
pub fn welcome(
    ui: &mut Ui,
    folder_open: bool,
    recent: &[std::path::PathBuf],
    keys: &crate::window::keymap::Keymap,
    commands: &mut Vec<Command>,
) {
    use crate::window::command::PanelId;
    use crate::window::keymap::{Action, EditorAction as E};
    if !folder_open {
        cocode_ui::empty_state(
            ui,
            "Welcome to cocode",
            "Open a folder to edit its files, run terminals and give tasks to agents.",
        );
        ui.vertical_centered(|ui| {
            ui.horizontal(|ui| {
                // Centred: the row is as wide as its two buttons.
                let width = ui.available_width();
                ui.add_space((width - 380.0).max(0.0) / 2.0);
                let open =
                    egui::Button::new("Open Folder…").shortcut_text(keys.label(Action::OpenFolder));
                if ui.add(open).clicked() {
                    commands.push(Command::Window(WindowCommand::Run(Action::OpenFolder)));
                }
                if ui.button("New Workspace from Brick…").clicked() {
                    commands.push(Command::Window(WindowCommand::Run(Action::NewFromBrick)));
                }
            });
            ui.add_space(12.0);
            if recent.is_empty() {
                ui.weak("Folders you open are listed here.");
            } else {
                ui.strong("Recent");
                egui::Grid::new("welcome-recent").show(ui, |ui| {
                    for root in recent {
                        let name = root.file_name().map_or_else(
                            || root.display().to_string(),
                            |n| n.to_string_lossy().into_owned(),
                        );
                        if ui
                            .link(name)
                            .on_hover_text(root.display().to_string())
                            .clicked()
                        {
                            commands.push(Command::Folder(FolderCommand::OpenFolder(root.clone())));
                        }
                        ui.weak(root.display().to_string());
                        if ui
                            .small_button("×")
                            .on_hover_text("Remove from the list")
                            .clicked()
                        {
                            commands.push(Command::Window(WindowCommand::ForgetRecent(Some(
                                root.clone(),
                            ))));
                        }
                        ui.end_row();
                    }
                });
            }
        });
        return;
    }
    cocode_ui::empty_state(
        ui,
        "No file is open",
        "Open a file from the Explorer or by name:",
    );
    // The keys, centred under the title, as the keymap binds them now.
    ui.vertical_centered(|ui| {
        egui::Grid::new("welcome-keys")
            .striped(true)
            .show(ui, |ui| {
                for action in [
                    Action::CommandPalette,
                    Action::GoToFile,
                    Action::Show(PanelId::Search),
                    Action::Save,
                    Action::Editor(E::Find),
                    Action::Editor(E::GoToLine),
                    Action::Editor(E::AddNextOccurrence),
                    Action::Editor(E::ToggleComment),
                    Action::CloseEditor,
                    Action::ReopenClosedEditor,
                    Action::FocusTerminal,
                ] {
                    let label = keys.label(action);
                    if label.is_empty() {
                        continue;
                    }
                    ui.label(action.title());
                    ui.label(label);
                    ui.end_row();
                }
            });
    });
}

/// "Save changes to … before closing?"
pub fn close_prompt(ctx: &egui::Context, id: u32, name: &str, commands: &mut Vec<Command>) {
    use crate::window::command::CloseEditor;
    egui::Modal::new(egui::Id::new("close-editor")).show(ctx, |ui| {
        ui.heading(format!("Save changes to {name}?"));
        ui.label("Your changes are lost if you close without saving.");
        ui.horizontal(|ui| {
            let save = ui.button("Save");
            if save.clicked() {
                commands.push(Command::Editor(EditorCommand::CloseEditor {
                    id,
                    action: CloseEditor::Save,
                }));
            }
            let discard = ui.button("Don't Save");
            if discard.clicked() {
                commands.push(Command::Editor(EditorCommand::CloseEditor {
                    id,
                    action: CloseEditor::Discard,
                }));
            }
            let cancel = ui.button("Cancel");
            if cancel.clicked() || ui.input(|i| i.key_pressed(Key::Escape)) {
                commands.push(Command::Editor(EditorCommand::CancelCloseEditor));
            }
            crate::window::views::keep_focus_on(ui, &[&save, &discard, &cancel]);
        });
    });
}

/// The window is closing with unsaved files.
pub fn quit_prompt(ctx: &egui::Context, files: usize, commands: &mut Vec<Command>) {
    egui::Modal::new(egui::Id::new("quit-unsaved")).show(ctx, |ui| {
        ui.heading(if files == 1 {
            "1 file has unsaved changes".to_owned()
        } else {
            format!("{files} files have unsaved changes")
        });
        ui.label("Save them before closing?");
        ui.horizontal(|ui| {
            let save = ui.button("Save All and Close");
            if save.clicked() {
                commands.push(Command::Editor(EditorCommand::QuitSaving));
            }
            let discard = ui.button("Close Without Saving");
            if discard.clicked() {
                commands.push(Command::Editor(EditorCommand::QuitDiscarding));
            }
            let cancel = ui.button("Cancel");
            if cancel.clicked() || ui.input(|i| i.key_pressed(Key::Escape)) {
                commands.push(Command::Editor(EditorCommand::CancelCloseEditor));
            }
            crate::window::views::keep_focus_on(ui, &[&save, &discard, &cancel]);
        });
    });
}
