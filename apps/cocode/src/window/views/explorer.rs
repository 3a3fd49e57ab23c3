//! The Explorer panel: the workspace's folder tree.

use std::path::{Path, PathBuf};

use cocode_platform::{Os, Shortcut};
use cocode_ui::{Tone, icons};
use egui::{RichText, Ui};

use crate::window::command::Command;
use crate::window::explorer::{Explorer, FolderState, WorkspaceView};
use crate::window::io_worker::EntryKind;

/// One visible row of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    Entry {
        depth: usize,
        name: String,
        path: PathBuf,
        kind: EntryKind,
        expanded: bool,
    },
    Loading {
        depth: usize,
    },
    Failed {
        depth: usize,
        message: String,
    },
    Omitted {
        depth: usize,
        count: usize,
    },
}

/// The rows currently visible: the open folders, depth first.
pub fn visible_rows(explorer: &Explorer) -> Vec<Row> {
    let mut rows = Vec::new();
    push_folder(explorer, explorer.root(), 0, &mut rows);
    rows
}

fn push_folder(explorer: &Explorer, dir: &Path, depth: usize, rows: &mut Vec<Row>) {
    match explorer.folder(dir) {
        None => {}
        Some(FolderState::Loading) => rows.push(Row::Loading { depth }),
        Some(FolderState::Failed(message)) => rows.push(Row::Failed {
            depth,
            message: message.clone(),
        }),
        Some(FolderState::Loaded(listing)) => {
            for entry in &listing.entries {
                let expanded = entry.kind == EntryKind::Dir && explorer.is_expanded(&entry.path);
                rows.push(Row::Entry {
                    depth,
                    name: entry.name.clone(),
                    path: entry.path.clone(),
                    kind: entry.kind,
                    expanded,
                });
                if expanded {
                    push_folder(explorer, &entry.path, depth + 1, rows);
                }
            }
            if listing.omitted > 0 {
                rows.push(Row::Omitted {
                    depth,
                    count: listing.omitted,
                });
            }
        }
    }
}

const INDENT: f32 = 14.0;

fn indent(ui: &mut Ui, depth: usize) {
    // Depth is tiny; saturate instead of casting.
    let depth = u16::try_from(depth).unwrap_or(u16::MAX);
    ui.add_space(INDENT * f32::from(depth));
}

/// Draws the panel.
pub fn show(ui: &mut Ui, workspace: Option<&WorkspaceView>, commands: &mut Vec<Command>, os: Os) {
    let Some(ws) = workspace else {
        cocode_ui::empty_state(
            ui,
            "No folder is open",
            &format!(
                "Open a folder to browse its files ({}).",
                Shortcut::primary("O").label(os)
            ),
        );
        ui.vertical_centered(|ui| {
            if ui.button("Open Folder…").clicked() {
                commands.push(Command::ShowOpenFolder);
            }
            if ui.button("New from Brick…").clicked() {
                commands.push(Command::ShowNewFromBrick);
            }
        });
        return;
    };
    ui.horizontal(|ui| {
        let name = ws.root.file_name().map_or_else(
            || ws.root.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        cocode_ui::section_header(ui, &name).on_hover_text(ws.root.display().to_string());
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if ui
                .small_button(icons::REFRESH)
                .on_hover_text("Refresh")
                .clicked()
            {
                commands.push(Command::Refresh);
            }
        });
    });
    ui.separator();

    let rows = visible_rows(&ws.explorer);
    let selected = ws.explorer.selected();
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    egui::ScrollArea::both()
        .auto_shrink([false, false])
        .show_rows(ui, row_height, rows.len(), |ui, range| {
            for row in &rows[range] {
                show_row(ui, row, selected, commands);
            }
        });
}

fn show_row(ui: &mut Ui, row: &Row, selected: Option<&Path>, commands: &mut Vec<Command>) {
    match row {
        Row::Entry {
            depth,
            name,
            path,
            kind,
            expanded,
        } => {
            ui.horizontal(|ui| {
                indent(ui, *depth);
                match kind {
                    EntryKind::Dir => {
                        let arrow = if *expanded {
                            icons::FOLDER_OPEN
                        } else {
                            icons::FOLDER_CLOSED
                        };
                        if ui
                            .selectable_label(false, format!("{arrow} {name}"))
                            .clicked()
                        {
                            commands.push(Command::ToggleFolder(path.clone()));
                        }
                    }
                    EntryKind::File => {
                        let is_selected = selected == Some(path.as_path());
                        if ui
                            .selectable_label(is_selected, format!("  {name}"))
                            .clicked()
                        {
                            commands.push(Command::OpenFile(path.clone()));
                        }
                    }
                    EntryKind::Symlink | EntryKind::Other => {
                        let marker = if *kind == EntryKind::Symlink {
                            "↪"
                        } else {
                            "·"
                        };
                        ui.label(RichText::new(format!("{marker} {name}")).italics())
                            .on_hover_text(if *kind == EntryKind::Symlink {
                                "Symbolic link (not followed)"
                            } else {
                                "Special file"
                            });
                    }
                }
            });
        }
        Row::Loading { depth } => {
            ui.horizontal(|ui| {
                indent(ui, *depth);
                ui.spinner();
                ui.label("Loading…");
            });
        }
        Row::Failed { depth, message } => {
            ui.horizontal(|ui| {
                indent(ui, *depth);
                cocode_ui::badge(ui, "Cannot list folder", Tone::Danger).on_hover_text(message);
            });
        }
        Row::Omitted { depth, count } => {
            ui.horizontal(|ui| {
                indent(ui, *depth);
                cocode_ui::badge(
                    ui,
                    &format!("{count} more entries not shown"),
                    Tone::Neutral,
                );
            });
        }
    }
}
