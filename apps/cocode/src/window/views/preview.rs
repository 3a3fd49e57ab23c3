//! The Preview panel: a read-only, virtualized view of the selected file.

use cocode_ui::Tone;
use egui::{RichText, TextStyle, Ui};

use crate::window::preview::{Preview, PreviewState, human_size};

/// Draws the panel.
pub fn show(ui: &mut Ui, preview: &Preview) {
    match preview.state() {
        PreviewState::Empty => {
            cocode_ui::empty_state(
                ui,
                "Nothing selected",
                "Select a file in the Explorer to preview it.",
            );
        }
        PreviewState::Loading(path) => {
            header(ui, &path.display().to_string(), None);
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Loading…");
            });
        }
        PreviewState::Unsupported { path, reason } => {
            header(ui, &path.display().to_string(), None);
            cocode_ui::badge(ui, reason, Tone::Neutral);
        }
        PreviewState::Failed { path, message } => {
            header(ui, &path.display().to_string(), None);
            cocode_ui::badge(ui, "Cannot read file", Tone::Danger);
            ui.label(message);
        }
        PreviewState::Text {
            path,
            lines,
            truncated,
            size,
        } => {
            let mut facts = format!("{} lines · {} · read-only", lines.len(), human_size(*size));
            if *truncated {
                facts.push_str(" · showing the beginning only");
            }
            header(ui, &path.display().to_string(), Some(&facts));
            text_rows(ui, lines);
        }
    }
}

fn header(ui: &mut Ui, path: &str, facts: Option<&str>) {
    ui.horizontal(|ui| {
        cocode_ui::section_header(ui, path);
        if let Some(facts) = facts {
            cocode_ui::badge(ui, facts, Tone::Neutral);
        }
    });
    ui.separator();
}

/// Only the visible rows are laid out, so a 100,000-line file costs the
/// same per frame as a short one.
fn text_rows(ui: &mut Ui, lines: &[String]) {
    let row_height = ui.text_style_height(&TextStyle::Monospace);
    let gutter_digits = lines.len().to_string().len();
    egui::ScrollArea::both()
        .auto_shrink([false, false])
        .show_rows(ui, row_height, lines.len(), |ui, range| {
            for index in range {
                ui.horizontal(|ui| {
                    ui.label(
                        RichText::new(format!("{:>gutter_digits$}", index + 1))
                            .monospace()
                            .weak(),
                    );
                    ui.label(RichText::new(&lines[index]).monospace());
                });
            }
        });
}
