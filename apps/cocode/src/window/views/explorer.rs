//! The Explorer panel: the workspace's folder tree.

use std::path::{Path, PathBuf};

use cocode_git::Kind;
use cocode_platform::{Os, Shortcut};
use cocode_ui::{Tone, icons};
use egui::{RichText, Ui};

use crate::window::command::{BrickCommand, Command, ExplorerCommand, FolderCommand};
use crate::window::explorer::{
    Explorer, FileAction, FileMarks, FilePrompt, FolderState, WorkspaceView,
};
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
pub fn show(
    ui: &mut Ui,
    workspace: Option<&WorkspaceView>,
    marks: &FileMarks,
    commands: &mut Vec<Command>,
    os: Os,
) {
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
                commands.push(Command::Folder(FolderCommand::ShowOpenFolder));
            }
            if ui.button("New from Brick…").clicked() {
                commands.push(Command::Brick(BrickCommand::ShowNewFromBrick));
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
                commands.push(Command::Explorer(ExplorerCommand::Refresh));
            }
            if ui
                .small_button("+📁")
                .on_hover_text("New Folder…")
                .clicked()
            {
                commands.push(Command::Explorer(ExplorerCommand::FileAction(
                    FileAction::NewFolder {
                        parent: ws.root.clone(),
                    },
                )));
            }
            if ui.small_button("+").on_hover_text("New File…").clicked() {
                commands.push(Command::Explorer(ExplorerCommand::FileAction(
                    FileAction::NewFile {
                        parent: ws.root.clone(),
                    },
                )));
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
                show_row(ui, row, selected, marks, &ws.root, commands);
            }
        });
}

/// The colour of a git state in the Explorer (VS Code's).
pub fn git_color(kind: Kind, dark: bool) -> egui::Color32 {
    let (dark_rgb, light_rgb) = match kind {
        Kind::Modified | Kind::TypeChanged => ([0xE2, 0xC0, 0x8D], [0x89, 0x55, 0x03]),
        Kind::Added | Kind::Untracked | Kind::Renamed => ([0x73, 0xC9, 0x91], [0x58, 0x7C, 0x0C]),
        Kind::Deleted => ([0xC7, 0x4E, 0x39], [0xAD, 0x07, 0x07]),
        Kind::Conflicted => ([0xE4, 0x67, 0x6B], [0xAD, 0x07, 0x07]),
        Kind::Ignored => ([0x8C, 0x8C, 0x8C], [0x8E, 0x8E, 0x90]),
    };
    let [r, g, b] = if dark { dark_rgb } else { light_rgb };
    egui::Color32::from_rgb(r, g, b)
}

/// The git state of `path` (a folder's rolled up), when git knows it.
fn git_kind(marks: &FileMarks, root: &Path, path: &Path, folder: bool) -> Option<Kind> {
    let git = marks.git.as_ref()?;
    let rel = cocode_git::relative_path(root, path)?;
    if folder {
        git.folder_kind(&rel)
    } else {
        git.file_kind(&rel)
    }
}

/// `text` in the colour of `kind`, with its letter at the row's end (a
/// folder shows only the colour, as VS Code's Explorer does).
fn git_text(ui: &Ui, text: String, kind: Option<Kind>, folder: bool) -> egui::WidgetText {
    let Some(kind) = kind else {
        return text.into();
    };
    let color = git_color(kind, ui.visuals().dark_mode);
    let shown = if folder || kind == Kind::Ignored {
        text
    } else {
        format!("{text}  {}", kind.letter())
    };
    RichText::new(shown).color(color).into()
}

fn show_row(
    ui: &mut Ui,
    row: &Row,
    selected: Option<&Path>,
    marks: &FileMarks,
    root: &Path,
    commands: &mut Vec<Command>,
) {
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
                        let kind = git_kind(marks, root, path, true);
                        let mut label = ui.selectable_label(
                            false,
                            git_text(ui, format!("{arrow} {name}"), kind, true),
                        );
                        if let Some(kind) = kind {
                            label = label.on_hover_text(format!("Holds {} files", kind.words()));
                        }
                        if label.clicked() {
                            commands.push(Command::Explorer(ExplorerCommand::ToggleFolder(
                                path.clone(),
                            )));
                        }
                        label.context_menu(|ui| entry_menu(ui, path, true, commands));
                    }
                    EntryKind::File => {
                        let is_selected = selected == Some(path.as_path());
                        // An open file with unsaved changes shows a dot; one a
                        // running task is changing says so.
                        let dot = if marks.dirty.contains(path) {
                            "●"
                        } else {
                            " "
                        };
                        let held = marks.held.get(path);
                        let text = match held {
                            Some(_) => format!("{dot} {name}  (task)"),
                            None => format!("{dot} {name}"),
                        };
                        let kind = git_kind(marks, root, path, false);
                        let mut label =
                            ui.selectable_label(is_selected, git_text(ui, text, kind, false));
                        if let Some(task) = held {
                            label =
                                label.on_hover_text(format!("Task {task} is changing this file"));
                        } else if let Some(kind) = kind {
                            label = label.on_hover_text(format!("Git: {}", kind.words()));
                        }
                        if label.clicked() {
                            commands
                                .push(Command::Explorer(ExplorerCommand::OpenFile(path.clone())));
                        }
                        label.context_menu(|ui| entry_menu(ui, path, false, commands));
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

/// The right-click menu of an entry.
fn entry_menu(ui: &mut Ui, path: &Path, folder: bool, commands: &mut Vec<Command>) {
    let parent = if folder {
        path.to_path_buf()
    } else {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    if ui.button("New File…").clicked() {
        commands.push(Command::Explorer(ExplorerCommand::FileAction(
            FileAction::NewFile {
                parent: parent.clone(),
            },
        )));
        ui.close();
    }
    if ui.button("New Folder…").clicked() {
        commands.push(Command::Explorer(ExplorerCommand::FileAction(
            FileAction::NewFolder { parent },
        )));
        ui.close();
    }
    ui.separator();
    if ui.button("Rename…").clicked() {
        commands.push(Command::Explorer(ExplorerCommand::FileAction(
            FileAction::Rename {
                path: path.to_path_buf(),
            },
        )));
        ui.close();
    }
    if ui.button("Delete…").clicked() {
        commands.push(Command::Explorer(ExplorerCommand::FileAction(
            FileAction::Delete {
                path: path.to_path_buf(),
                folder,
            },
        )));
        ui.close();
    }
}

/// The name prompt of a new file, new folder or rename, or the question
/// before a delete.
pub fn prompt(ctx: &egui::Context, prompt: &FilePrompt, commands: &mut Vec<Command>) {
    let name_of = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    let title = match &prompt.action {
        FileAction::NewFile { .. } => "New File".to_owned(),
        FileAction::NewFolder { .. } => "New Folder".to_owned(),
        FileAction::Rename { path } => format!("Rename {}", name_of(path)),
        FileAction::Delete { path, folder } => format!(
            "Delete {} “{}”?",
            if *folder { "the folder" } else { "the file" },
            name_of(path)
        ),
    };
    egui::Modal::new(egui::Id::new("explorer-prompt")).show(ctx, |ui| {
        ui.heading(title);
        let delete = matches!(prompt.action, FileAction::Delete { .. });
        if delete {
            ui.label(match &prompt.action {
                FileAction::Delete { folder: true, .. } => {
                    "The folder and everything in it are removed from the disk. This cannot be undone."
                }
                _ => "The file is removed from the disk. This cannot be undone.",
            });
        } else {
            let mut name = prompt.name.clone();
            let field = ui.add(
                egui::TextEdit::singleline(&mut name)
                    .hint_text("Name")
                    .desired_width(320.0),
            );
            if !field.has_focus() && !field.lost_focus() && !prompt.busy {
                field.request_focus();
            }
            if name != prompt.name {
                commands.push(Command::Explorer(ExplorerCommand::FilePromptName(name)));
            }
            if field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                commands.push(Command::Explorer(ExplorerCommand::FilePromptSubmit));
            }
        }
        if let Some(error) = &prompt.error {
            cocode_ui::badge(ui, error, Tone::Danger);
        }
        ui.horizontal(|ui| {
            let ok = if delete { "Delete" } else { "OK" };
            if ui.add_enabled(!prompt.busy, egui::Button::new(ok)).clicked() {
                commands.push(Command::Explorer(ExplorerCommand::FilePromptSubmit));
            }
            if ui.button("Cancel").clicked() || ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                commands.push(Command::Explorer(ExplorerCommand::FilePromptCancel));
            }
            if prompt.busy {
                ui.spinner();
            }
        });
    });
}
