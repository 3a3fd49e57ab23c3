//! The editor area's other faces: the status bar's editor fields, the
//! welcome page, and the prompts before closing unsaved work.

use cocode_editor::commands::{column, line_of};
use cocode_platform::Os;
use egui::{Key, Ui};

use crate::window::command::Command;
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

/// The editor area before a file is open: what to do next.
pub fn welcome(ui: &mut Ui, folder_open: bool, os: Os) {
    use cocode_platform::Shortcut;
    if !folder_open {
        cocode_ui::empty_state(
            ui,
            "Nothing to edit yet",
            &format!(
                "Open a folder ({}) to edit its files.",
                Shortcut::primary("O").label(os)
            ),
        );
        return;
    }
    cocode_ui::empty_state(
        ui,
        "No file is open",
        "Open a file from the Explorer or by name:",
    );
    // The keys, centred under the title.
    ui.vertical_centered(|ui| {
        egui::Grid::new("welcome-keys")
            .striped(true)
            .show(ui, |ui| {
                for (what, keys) in [
                    ("Go to file", Shortcut::primary("P")),
                    ("Search in files", Shortcut::primary_shift("F")),
                    ("Save", Shortcut::primary("S")),
                    ("Find / Replace", Shortcut::primary("F")),
                    ("Go to line", Shortcut::primary("G")),
                    ("Next occurrence as a cursor", Shortcut::primary("D")),
                    ("Toggle comment", Shortcut::primary("/")),
                    ("Close editor", Shortcut::primary("W")),
                    ("Reopen closed editor", Shortcut::primary_shift("T")),
                ] {
                    ui.label(what);
                    ui.label(keys.label(os).to_string());
                    ui.end_row();
                }
                ui.label("Terminal");
                ui.label("Ctrl+`");
                ui.end_row();
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
                commands.push(Command::CloseEditor {
                    id,
                    action: CloseEditor::Save,
                });
            }
            let discard = ui.button("Don't Save");
            if discard.clicked() {
                commands.push(Command::CloseEditor {
                    id,
                    action: CloseEditor::Discard,
                });
            }
            let cancel = ui.button("Cancel");
            if cancel.clicked() || ui.input(|i| i.key_pressed(Key::Escape)) {
                commands.push(Command::CancelCloseEditor);
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
                commands.push(Command::QuitSaving);
            }
            let discard = ui.button("Close Without Saving");
            if discard.clicked() {
                commands.push(Command::QuitDiscarding);
            }
            let cancel = ui.button("Cancel");
            if cancel.clicked() || ui.input(|i| i.key_pressed(Key::Escape)) {
                commands.push(Command::CancelCloseEditor);
            }
            crate::window::views::keep_focus_on(ui, &[&save, &discard, &cancel]);
        });
    });
}
