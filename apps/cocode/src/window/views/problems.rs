//! The Problems panel: every diagnostic the language servers reported,
//! grouped by file, errors first; choosing one opens the file with the
//! cursor on it. Below, each server that is not running well says why,
//! with a way to start it again or to install it.

use std::path::Path;

use cocode_lsp::{FileDiagnostics, ServerState, ServerStatus, Severity};
use cocode_ui::Theme;
use egui::Ui;

use crate::window::command::{Command, EditorCommand, LspAsk};
use crate::window::views::editor_lsp::severity_color;

/// Counts of errors and warnings, for the status bar.
pub fn counts(problems: &[FileDiagnostics]) -> (usize, usize) {
    let all = problems.iter().flat_map(|f| &f.diagnostics);
    let errors = all
        .clone()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = all.filter(|d| d.severity == Severity::Warning).count();
    (errors, warnings)
}

/// Each server that is not running well, with why and a way on: not
/// installed (while files wait on it), stopped, restarting, or held until
/// the person trusts the command this folder names.
fn server_troubles(
    ui: &mut Ui,
    servers: &[ServerStatus],
    theme: Theme,
    commands: &mut Vec<Command>,
) {
    for s in servers {
        let trouble = match &s.state {
            ServerState::NotInstalled { install } if s.documents > 0 => Some((
                format!(
                    "{} is not installed, so open files get no diagnostics — {install}",
                    s.id
                ),
                false,
            )),
            ServerState::Failed { reason } => Some((format!("{} stopped: {reason}", s.id), true)),
            ServerState::Restarting { reason } => {
                Some((format!("{} is restarting ({reason})", s.id), false))
            }
            ServerState::Untrusted { command } => {
                ui.horizontal_wrapped(|ui| {
                    ui.colored_label(
                        severity_color(Severity::Warning, theme),
                        format!(
                            "{} is not started: this folder's .cocode/config/workspace.json names its command, {}. Start it only if you trust this folder.",
                            s.id,
                            cocode_core::shown::command(command)
                        ),
                    );
                    if ui
                        .small_button("Trust and start")
                        .on_hover_text("Remember this command as trusted for this folder, and start it")
                        .clicked()
                    {
                        commands.push(Command::Lsp(LspAsk::Trust {
                            server: s.id.clone(),
                            command: command.clone(),
                        }));
                    }
                });
                None
            }
            _ => None,
        };
        if let Some((text, restart)) = trouble {
            ui.horizontal_wrapped(|ui| {
                ui.colored_label(severity_color(Severity::Warning, theme), text);
                if restart && ui.small_button("Restart").clicked() {
                    commands.push(Command::Lsp(LspAsk::Restart(s.id.clone())));
                }
            });
        }
    }
}

pub fn show(
    ui: &mut Ui,
    problems: &[FileDiagnostics],
    servers: &[ServerStatus],
    root: Option<&Path>,
    theme: Theme,
    commands: &mut Vec<Command>,
) {
    let Some(root) = root else {
        ui.weak("Open a folder to see the problems its language servers find.");
        return;
    };
    let (errors, warnings) = counts(problems);
    let total: usize = problems.iter().map(|f| f.diagnostics.len()).sum();
    ui.horizontal(|ui| {
        ui.strong(format!("{errors} errors"));
        ui.label(format!("{warnings} warnings"));
        let files = problems.len();
        ui.weak(format!(
            "{total} in all, {files} {}",
            if files == 1 { "file" } else { "files" }
        ));
    });
    server_troubles(ui, servers, theme, commands);
    ui.separator();
    if problems.is_empty() {
        ui.weak("No problems have been found in the open files.");
        return;
    }
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            for file in problems {
                let n = file.diagnostics.len();
                egui::CollapsingHeader::new(format!("{}  ({n})", file.path.as_str()))
                    .id_salt(("problems", file.path.as_str()))
                    .default_open(true)
                    .show(ui, |ui| {
                        for d in &file.diagnostics {
                            let (line, column) = cocode_lsp::features::one_based(d.range.start);
                            ui.horizontal(|ui| {
                                ui.colored_label(
                                    severity_color(d.severity, theme),
                                    d.severity.word(),
                                );
                                let text = format!(
                                    "[{line}:{column}]  {}{}",
                                    crate::host::lsp::one_line(&d.message),
                                    d.source
                                        .as_deref()
                                        .map(|s| format!("  · {s}"))
                                        .unwrap_or_default(),
                                );
                                if ui
                                    .add(egui::Button::new(text).frame(false))
                                    .on_hover_text("Open at this place")
                                    .clicked()
                                {
                                    commands.push(Command::Editor(EditorCommand::OpenAt {
                                        path: root.join(file.path.as_str()),
                                        line: d.range.start.line as usize,
                                        start: d.range.start.column as usize,
                                        end: if d.range.end.line == d.range.start.line {
                                            d.range.end.column as usize
                                        } else {
                                            d.range.start.column as usize
                                        },
                                    }));
                                }
                            });
                        }
                    });
            }
        });
}
