//! The Open Folder dialog: type a path or browse folders. Enter opens the
//! typed path, Escape closes, and focus stays inside the dialog.

use std::path::PathBuf;

use cocode_ui::{Tone, icons};
use egui::{Context, Key};

use crate::window::command::{Command, FolderCommand};
use crate::window::open_folder::{Losses, OpenFolderDialog, SwitchChoice};

/// Draws the dialog.
pub fn show(ctx: &Context, dialog: &OpenFolderDialog, commands: &mut Vec<Command>) {
    let mut typed = dialog.typed.clone();
    let modal = egui::Modal::new(egui::Id::new("open-folder")).show(ctx, |ui| {
        ui.set_width(480.0);
        ui.heading("Open Folder");
        if let Some(note) = &dialog.note {
            ui.colored_label(ui.visuals().warn_fg_color, note);
        }
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
                commands.push(Command::Folder(FolderCommand::PickerBrowse(
                    parent.to_path_buf(),
                )));
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
                            commands
                                .push(Command::Folder(FolderCommand::PickerBrowse(path.clone())));
                        }
                    }
                }
            });
        ui.separator();
        ui.horizontal(|ui| {
            if ui.button("Open").clicked() || enter {
                commands.push(Command::Folder(FolderCommand::OpenFolder(PathBuf::from(
                    typed.trim(),
                ))));
            }
            if ui.button("Cancel").clicked() {
                commands.push(Command::Folder(FolderCommand::CloseOpenFolder));
            }
        });
    });
    if modal.should_close() {
        commands.push(Command::Folder(FolderCommand::CloseOpenFolder));
    }
    if typed != dialog.typed {
        commands.push(Command::Folder(FolderCommand::PickerTyped(typed)));
    }
}

/// What the prompt before opening another folder shows.
#[derive(Debug, Clone, Copy)]
pub struct SwitchPrompt<'a> {
    /// The folder open now (none: only terminals are open).
    pub from: Option<&'a std::path::Path>,
    /// The folder asked for.
    pub to: &'a std::path::Path,
    pub losses: Losses,
    /// What the person chose (saves and stops under way).
    pub chosen: Option<SwitchChoice>,
}

/// The lines that say what closing the open folder ends.
pub fn switch_lines(losses: Losses) -> Vec<String> {
    let mut lines = Vec::new();
    match losses.unsaved {
        0 => {}
        1 => lines.push("1 file has unsaved changes".to_owned()),
        n => lines.push(format!("{n} files have unsaved changes")),
    }
    match losses.tasks {
        0 => {}
        1 => lines.push("1 agent task is running; it will be stopped".to_owned()),
        n => lines.push(format!("{n} agent tasks are running; they will be stopped")),
    }
    match losses.programs {
        0 => {}
        1 => lines.push("1 terminal is running a program; it will be ended".to_owned()),
        n => lines.push(format!(
            "{n} terminals are running programs; they will be ended"
        )),
    }
    lines
}

/// Asks before another folder replaces the open one when that would lose
/// unsaved changes or end what runs: save and open, open anyway, or keep
/// the open folder (Escape).
pub fn switch_prompt(ctx: &Context, prompt: &SwitchPrompt<'_>, commands: &mut Vec<Command>) {
    let name = |path: &std::path::Path| {
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    egui::Modal::new(egui::Id::new("switch-folder")).show(ctx, |ui| {
        ui.set_max_width(480.0);
        ui.heading(format!("Open {}?", name(prompt.to)));
        ui.label(match prompt.from {
            Some(from) => format!("{} closes in this window:", from.display()),
            None => "Opening it ends in this window:".to_owned(),
        });
        for line in switch_lines(prompt.losses) {
            ui.label(format!("• {line}"));
        }
        let waiting = prompt.chosen.is_some();
        if waiting {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(match prompt.chosen {
                    Some(SwitchChoice::SaveFirst) if prompt.losses.unsaved > 0 => "Saving…",
                    _ => "Stopping the tasks…",
                });
            });
        }
        ui.add_space(4.0);
        ui.horizontal_wrapped(|ui| {
            let mut buttons = Vec::new();
            if prompt.losses.unsaved > 0 {
                let save = ui.add_enabled(!waiting, egui::Button::new("Save All and Open"));
                if save.clicked() {
                    commands.push(Command::Folder(FolderCommand::SwitchSaving));
                }
                buttons.push(save);
                // Also once saving was chosen: a save that fails leaves
                // this way out besides Cancel.
                let discarding = prompt.chosen == Some(SwitchChoice::Discard);
                let discard = ui.add_enabled(!discarding, egui::Button::new("Open Without Saving"));
                if discard.clicked() {
                    commands.push(Command::Folder(FolderCommand::SwitchNow));
                }
                buttons.push(discard);
            } else {
                let open = ui.add_enabled(!waiting, egui::Button::new("Open"));
                if open.clicked() {
                    commands.push(Command::Folder(FolderCommand::SwitchNow));
                }
                buttons.push(open);
            }
            let cancel = ui.button("Cancel");
            if cancel.clicked() || ui.input(|i| i.key_pressed(Key::Escape)) {
                commands.push(Command::Folder(FolderCommand::CancelSwitch));
            }
            buttons.push(cancel);
            crate::window::views::keep_focus_on(ui, &buttons.iter().collect::<Vec<_>>());
        });
    });
}

/// Shown while files are dragged over the window: what a drop does.
pub fn drop_overlay(ctx: &Context, has_folder: bool) {
    let rect = ctx.content_rect();
    let painter = ctx.layer_painter(egui::LayerId::new(
        egui::Order::Foreground,
        egui::Id::new("drop-overlay"),
    ));
    let visuals = ctx.global_style().visuals.clone();
    painter.rect_filled(rect, 0.0, visuals.extreme_bg_color.gamma_multiply(0.85));
    painter.rect_stroke(
        rect.shrink(8.0),
        8.0,
        egui::Stroke::new(2.0, visuals.selection.stroke.color),
        egui::StrokeKind::Inside,
    );
    let text = if has_folder {
        "Drop a folder to open it, or a file of this folder to edit it"
    } else {
        "Drop a folder to open it"
    };
    // A label (not painted text), so assistive technology reads it too.
    egui::Area::new(egui::Id::new("drop-overlay-text"))
        .order(egui::Order::Tooltip)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .interactable(false)
        .show(ctx, |ui| {
            ui.label(egui::RichText::new(text).size(20.0).strong());
        });
}
