//! The Trace panel: every tool call of the open folder's tasks, newest
//! first, with its phase, session, duration and error code; its redacted
//! arguments open under each row. The metadata (no argument values) can
//! be copied as JSON; Clear empties the trace while no task runs.

use egui::{RichText, Ui};

use crate::window::command::{Command, WindowCommand};
use crate::window::trace::{TracePanel, phase_words};

pub fn show(ui: &mut Ui, panel: &mut TracePanel, running: bool, commands: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        ui.label("Session");
        ui.add(
            egui::TextEdit::singleline(&mut panel.filter)
                .hint_text("every session")
                .desired_width(200.0),
        );
        if ui
            .add_enabled(
                !panel.rows.is_empty(),
                egui::Button::new("Copy metadata JSON"),
            )
            .on_hover_text(
                "Each call's tool, session, phase, duration and error code; no arguments",
            )
            .clicked()
        {
            ui.ctx().copy_text(panel.export());
        }
        let clear = ui.add_enabled(
            !running && !panel.rows.is_empty(),
            egui::Button::new("Clear"),
        );
        let clear = if running {
            clear.on_disabled_hover_text("A task is running")
        } else {
            clear
        };
        if clear.clicked() {
            commands.push(Command::Window(WindowCommand::ClearTrace));
        }
    });
    ui.separator();
    let shown = panel.shown();
    if shown.is_empty() {
        ui.label(if panel.rows.is_empty() {
            "No tool calls yet: the calls of this folder's tasks show here."
        } else {
            "No call of a session with that id."
        });
        return;
    }
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            for entry in shown {
                let mut line = format!(
                    "{}  {}  {}  {} ms",
                    entry.tool,
                    phase_words(entry.phase),
                    entry.session_id,
                    entry.duration_ms
                );
                if let Some(code) = &entry.error_code {
                    line.push_str("  ");
                    line.push_str(code);
                }
                egui::CollapsingHeader::new(RichText::new(line).monospace())
                    .id_salt(("trace", entry.trace_id, phase_words(entry.phase)))
                    .show(ui, |ui| {
                        let text =
                            serde_json::to_string_pretty(&entry.arguments).unwrap_or_default();
                        ui.label(RichText::new(text).monospace());
                    });
            }
        });
}
