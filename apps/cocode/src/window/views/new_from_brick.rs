//! The "New Workspace from Brick" dialog: pick a brick, say where, fill in
//! its variables (checked as they are typed), create. Escape closes unless
//! the workspace is being created; Enter creates when the check passed.

use cocode_core::services::{BrickInfo, BrickVariable, BrickVariableKind};
use cocode_ui::Tone;
use egui::{Context, Key, RichText, Ui};

use crate::window::command::{BrickCommand, Command};
use crate::window::new_brick::{BrickDialogChange, NewFromBrickDialog};

/// Draws the dialog.
pub fn show(ctx: &Context, dialog: &NewFromBrickDialog, commands: &mut Vec<Command>) {
    let mut changes = Vec::new();
    let modal = egui::Modal::new(egui::Id::new("new-from-brick")).show(ctx, |ui| {
        ui.set_width(520.0);
        ui.heading("New Workspace from Brick");
        let Some(bricks) = &dialog.bricks else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Loading bricks…");
            });
            return;
        };
        ui.add_enabled_ui(!dialog.creating, |ui| {
            egui::Grid::new("brick-fields")
                .num_columns(2)
                .spacing([12.0, 6.0])
                .show(ui, |ui| fields(ui, dialog, bricks, &mut changes));
        });
        for problem in &dialog.problems {
            cocode_ui::badge(ui, &format!("Not loaded: {problem}"), Tone::Warning);
        }
        ui.separator();
        footer(ui, dialog, commands);
    });
    if modal.should_close() && !dialog.creating {
        commands.push(Command::Brick(BrickCommand::CloseNewFromBrick));
    }
    commands.extend(
        changes
            .into_iter()
            .map(|c| Command::Brick(BrickCommand::BrickDialog(c))),
    );
}

fn fields(
    ui: &mut Ui,
    dialog: &NewFromBrickDialog,
    bricks: &[BrickInfo],
    changes: &mut Vec<BrickDialogChange>,
) {
    ui.label("Brick");
    let current = dialog.brick().map_or("", |b| b.name.as_str());
    egui::ComboBox::from_id_salt("brick-choice")
        .selected_text(current)
        .show_ui(ui, |ui| {
            for (i, brick) in bricks.iter().enumerate() {
                if ui
                    .selectable_label(i == dialog.selected, &brick.name)
                    .clicked()
                {
                    changes.push(BrickDialogChange::Brick(i));
                }
            }
        });
    ui.end_row();
    ui.label("");
    ui.label(RichText::new(dialog.brick().map_or("", |b| b.description.as_str())).small());
    ui.end_row();
    text_row(ui, "Location", &dialog.parent, "", |t| {
        changes.push(BrickDialogChange::Parent(t));
    });
    let name = text_row(ui, "Folder name", &dialog.name, "my-project", |t| {
        changes.push(BrickDialogChange::Name(t));
    });
    // Typing starts in the folder name.
    if !ui.ctx().memory(|m| m.focused().is_some()) {
        name.request_focus();
    }
    for var in dialog.brick().map_or(&[][..], |b| b.variables.as_slice()) {
        variable_row(ui, dialog, var, changes);
    }
}

fn variable_row(
    ui: &mut Ui,
    dialog: &NewFromBrickDialog,
    var: &BrickVariable,
    changes: &mut Vec<BrickDialogChange>,
) {
    let label = if var.description.is_empty() {
        &var.name
    } else {
        &var.description
    };
    ui.label(label).on_hover_text(&var.name);
    let mut set = |value: String| {
        changes.push(BrickDialogChange::Value {
            name: var.name.clone(),
            value,
        });
    };
    match var.kind {
        BrickVariableKind::Bool => {
            let mut on = dialog.value_of(var) == "true";
            if ui.checkbox(&mut on, "").changed() {
                set(on.to_string());
            }
        }
        BrickVariableKind::Choice => {
            let chosen = dialog.value_of(var);
            egui::ComboBox::from_id_salt(("brick-var", &var.name))
                .selected_text(&chosen)
                .show_ui(ui, |ui| {
                    for choice in &var.choices {
                        if ui.selectable_label(*choice == chosen, choice).clicked() {
                            set(choice.clone());
                        }
                    }
                });
        }
        BrickVariableKind::String | BrickVariableKind::Integer => {
            let value = dialog.values.get(&var.name).map_or("", String::as_str);
            let hint = dialog.default_of(var).unwrap_or_default();
            if let (Some(text), _) = text_field(ui, value, &hint) {
                set(text);
            }
        }
    }
    ui.end_row();
}

/// The check's state, the last error, and the buttons.
fn footer(ui: &mut Ui, dialog: &NewFromBrickDialog, commands: &mut Vec<Command>) {
    match (&dialog.check, dialog.creating) {
        (_, true) => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("Creating {}…", dialog.destination().display()));
            });
        }
        (None, false) => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Checking…");
            });
        }
        (Some(Err(message)), false) => {
            cocode_ui::badge(ui, message, Tone::Danger);
        }
        (Some(Ok(())), false) => {
            cocode_ui::badge(
                ui,
                &format!("Creates {}", dialog.destination().display()),
                Tone::Success,
            );
        }
    }
    if let Some(error) = &dialog.error {
        cocode_ui::badge(ui, error, Tone::Danger);
    }
    ui.horizontal(|ui| {
        let enter = ui.input(|i| i.key_pressed(Key::Enter));
        if ui
            .add_enabled(dialog.can_create(), egui::Button::new("Create"))
            .clicked()
            || (enter && dialog.can_create())
        {
            commands.push(Command::Brick(BrickCommand::CreateFromBrick));
        }
        if ui
            .add_enabled(!dialog.creating, egui::Button::new("Cancel"))
            .clicked()
        {
            commands.push(Command::Brick(BrickCommand::CloseNewFromBrick));
        }
    });
}

/// A labelled single-line field in the grid.
fn text_row(
    ui: &mut Ui,
    label: &str,
    value: &str,
    hint: &str,
    mut changed: impl FnMut(String),
) -> egui::Response {
    ui.label(label);
    let (text, response) = text_field(ui, value, hint);
    if let Some(text) = text {
        changed(text);
    }
    ui.end_row();
    response
}

/// A full-width single-line field: the new text when it changed.
fn text_field(ui: &mut Ui, value: &str, hint: &str) -> (Option<String>, egui::Response) {
    let mut text = value.to_owned();
    let response = ui.add(
        egui::TextEdit::singleline(&mut text)
            .desired_width(f32::INFINITY)
            .hint_text(hint),
    );
    (response.changed().then_some(text), response)
}
