//! The Trace panel: the open folder's discoveries, tool calls and agent
//! requests, newest first, one row each with its state, origin, session,
//! duration and a safe summary of its result; its redacted arguments and
//! result open under each row, and the full ids show on hover. The session
//! selector narrows the rows; Copy and Save take the whole trace's
//! metadata (no argument, no result); Clear empties it while no task runs.

use egui::{RichText, Ui};

use crate::window::command::{Command, WindowCommand};
use crate::window::trace::{TracePanel, origin_words, phase_words, subject, summary};

pub fn show(ui: &mut Ui, panel: &mut TracePanel, running: bool, commands: &mut Vec<Command>) {
    toolbar(ui, panel, running, commands);
    match &panel.saved {
        Some(Ok(path)) => {
            ui.label(format!("Saved to {}", path.display()));
        }
        Some(Err(why)) => {
            cocode_ui::badge(ui, &format!("Not saved: {why}"), cocode_ui::Tone::Danger);
        }
        None => {}
    }
    ui.separator();
    rows(ui, panel);
}

/// The session selector, Copy, Save and Clear.
fn toolbar(ui: &mut Ui, panel: &mut TracePanel, running: bool, commands: &mut Vec<Command>) {
    ui.horizontal_wrapped(|ui| {
        let sessions: Vec<String> = panel.sessions().into_iter().map(str::to_owned).collect();
        ui.label("Session");
        let chosen = panel
            .session
            .clone()
            .unwrap_or_else(|| "every session".to_owned());
        egui::ComboBox::from_id_salt("trace-session")
            .selected_text(chosen)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut panel.session, None, "every session");
                for session in sessions {
                    ui.selectable_value(&mut panel.session, Some(session.clone()), session);
                }
            });
        let any = !panel.rows.is_empty();
        if ui
            .add_enabled(any, egui::Button::new("Copy metadata JSON"))
            .on_hover_text(
                "Every row's method, tool, session, state, duration and error code; no arguments, no results",
            )
            .clicked()
        {
            ui.ctx().copy_text(panel.export());
        }
        if ui
            .add_enabled(any, egui::Button::new("Save metadata JSON…"))
            .on_hover_text("The same JSON, saved to a file you choose")
            .clicked()
        {
            commands.push(Command::Window(WindowCommand::SaveTrace));
        }
        let clear = ui.add_enabled(!running && any, egui::Button::new("Clear"));
        let clear = if running {
            clear.on_disabled_hover_text("A task is running: its rows stay until it ends")
        } else {
            clear
        };
        if clear.clicked() {
            commands.push(Command::Window(WindowCommand::ClearTrace));
        }
    });
}

/// The rows of the chosen session, newest first.
fn rows(ui: &mut Ui, panel: &TracePanel) {
    let shown = panel.shown();
    if shown.is_empty() {
        ui.label(if panel.rows.is_empty() {
            "No tool calls yet: the calls of this folder's tasks show here."
        } else {
            "No row of that session."
        });
        return;
    }
    // Rows are as wide as what they say: scrolled sideways, never cut.
    egui::ScrollArea::both()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            for entry in shown {
                let mut line = format!(
                    "{}  {}  {}  {}  {} ms",
                    subject(entry),
                    phase_words(entry.phase),
                    origin_words(entry),
                    entry.session_id,
                    entry.duration_ms
                );
                let said = summary(entry);
                if !said.is_empty() {
                    line.push_str("  ");
                    line.push_str(&said);
                }
                let mut ids = format!(
                    "{} · trace id {} · session {}",
                    entry.method.as_str(),
                    entry.trace_id,
                    entry.session_id
                );
                if !entry.call_id.is_empty() {
                    ids.push_str(" · call id ");
                    ids.push_str(&entry.call_id);
                }
                egui::CollapsingHeader::new(RichText::new(line).monospace())
                    .id_salt(("trace", entry.method.as_str(), entry.trace_id))
                    .show(ui, |ui| {
                        ui.label(RichText::new("arguments").strong());
                        let text =
                            serde_json::to_string_pretty(&entry.arguments).unwrap_or_default();
                        ui.label(RichText::new(text).monospace());
                        if let Some(result) = &entry.result {
                            ui.label(RichText::new("result").strong());
                            let text = serde_json::to_string_pretty(result).unwrap_or_default();
                            ui.label(RichText::new(text).monospace());
                        }
                    })
                    .header_response
                    .on_hover_text(ids);
            }
        });
}
