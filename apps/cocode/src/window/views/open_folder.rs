//! The Open Folder dialog: type a path or browse folders. Enter opens the
//! typed path, Escape closes, and focus stays inside the dialog.

use std::path::PathBuf;

use cocode_ui::{Tone, icons};
use egui::{Context, Key};

use crate::window::command::Command;
use crate::window::open_folder::OpenFolderDialog;

/// Draws the dialog.
pub fn show(ctx: &Context, dialog: &OpenFolderDialog, commands: &mut Vec<Command>) {
    let mut typed = dialog.typed.clone();
    let modal = egui::Modal::new(egui::Id::new("open-folder")).show(ctx, |ui| {
        ui.set_width(480.0);
        ui.heading("Open Folder");
        // Enter in the path field opens the typed path. The field gives up
        // its focus on Enter, so whether it had focus is read before it is
        // drawn (afterwards the dialog would take the focus back for it).
        let field_id = egui::Id::new("open-folder-path");
        let enter = ui.memory(|m| m.has_focus(field_id)) && ui.input(|i| i.key_pressed(Key::Enter));
        let field = ui.add(
            egui::TextEdit::singleline(&mut typed)
                .id(field_id)
                .desired_width(f32::INFINITY)
                .hint_text("Folder path"),
        );
        if !enter && !field.has_focus() && !ui.ctx().memory(|m| m.focused().is_some()) {
            field.request_focus();
        }
        if let Some(error) = &dialog.error {
            cocode_ui::badge(ui, error, Tone::Danger);
        }
        ui.separator();
        ui.horizontal(|ui| {
            if let Some(parent) = dialog.browsing.parent()
                && ui.button(format!("{} Up", icons::UP)).clicked()
            {
                commands.push(Command::PickerBrowse(parent.to_path_buf()));
            }
            ui.label(dialog.browsing.display().to_string());
        });
        egui::ScrollArea::vertical()
            .max_height(260.0)
            .show(ui, |ui| match &dialog.subfolders {
                None => {
                    ui.spinner();
                }
                Some(Err(message)) => {
                    cocode_ui::badge(ui, message, Tone::Danger);
                }
                Some(Ok(folders)) if folders.is_empty() => {
                    ui.label("No subfolders.");
                }
                Some(Ok(folders)) => {
                    for (name, path) in folders {
                        if ui
                            .selectable_label(false, format!("{} {name}", icons::FOLDER))
                            .clicked()
                        {
                            commands.push(Command::PickerBrowse(path.clone()));
                        }
                    }
                }
            });
        ui.separator();
        ui.horizontal(|ui| {
            if ui.button("Open").clicked() || enter {
                commands.push(Command::OpenFolder(PathBuf::from(typed.trim())));
            }
            if ui.button("Cancel").clicked() {
                commands.push(Command::CloseOpenFolder);
            }
        });
    });
    if modal.should_close() {
        commands.push(Command::CloseOpenFolder);
    }
    if typed != dialog.typed {
        commands.push(Command::PickerTyped(typed));
    }
}
