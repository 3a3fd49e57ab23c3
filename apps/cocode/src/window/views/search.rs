//! The Search panel: a query with case, whole-word and regex toggles, and
//! the matching lines grouped by file (only the rows on screen are laid
//! out). Choosing a line opens the file with the match selected.

use std::path::Path;

use egui::text::LayoutJob;
use egui::{Key, TextFormat, TextStyle, Ui};

use crate::window::command::{Command, EditorCommand};
use crate::window::search::{Search, SearchProgress};

/// One row of the list: a file header or one of its lines.
enum Row {
    File(usize),
    Line(usize, usize),
}

/// The case, whole-word and regex toggles of a query (the find bar's and
/// the Search panel's).
pub fn query_toggles(ui: &mut Ui, query: &mut cocode_editor::SearchQuery) {
    ui.toggle_value(&mut query.case_sensitive, "Aa")
        .on_hover_text("Match case");
    ui.toggle_value(&mut query.whole_word, "ab")
        .on_hover_text("Match whole word");
    ui.toggle_value(&mut query.regex, ".*")
        .on_hover_text("Use regular expression");
}

/// The replacement field, "Replace All" and its question.
fn replace_row(ui: &mut Ui, search: &mut Search, commands: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        let arrow = if search.show_replace { "⏷" } else { "⏵" };
        if ui
            .small_button(arrow)
            .on_hover_text("Replace in files")
            .clicked()
        {
            search.show_replace = !search.show_replace;
        }
        if search.show_replace {
            ui.add(
                egui::TextEdit::singleline(&mut search.replace_with)
                    .hint_text("Replace")
                    .desired_width(ui.available_width() - 90.0),
            );
            let can = !search.results.is_empty() && !search.replacing;
            if ui
                .add_enabled(can, egui::Button::new("Replace All"))
                .clicked()
            {
                search.confirm = true;
            }
        }
    });
    if search.confirm && search.show_replace {
        let lines = search.line_count();
        let files = search.results.len();
        ui.horizontal_wrapped(|ui| {
            ui.label(format!(
                "Replace the matches on {lines} line(s) in {files} file(s) with “{}”?",
                search.replace_with
            ));
            if ui.button("Replace").clicked() {
                commands.push(Command::Editor(EditorCommand::ReplaceInFiles));
            }
            if ui.button("Cancel").clicked() {
                search.confirm = false;
            }
        });
    }
    if search.replacing {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("Replacing…");
        });
    }
    if let Some(note) = &search.note {
        ui.label(note);
    }
}

/// Where the search is, in words.
fn status_line(ui: &mut Ui, search: &Search) {
    match &search.progress {
        SearchProgress::Idle => {}
        SearchProgress::Running => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("Searching… {} results so far", search.line_count()));
            });
        }
        SearchProgress::Done { searched, capped } => {
            let lines = search.line_count();
            let mut text = format!(
                "{lines} result{} in {} file{} ({searched} searched)",
                if lines == 1 { "" } else { "s" },
                search.results.len(),
                if search.results.len() == 1 { "" } else { "s" },
            );
            if *capped {
                text.push_str(" — only the first results are shown");
            }
            ui.label(text);
        }
        SearchProgress::Failed(message) => {
            cocode_ui::badge(ui, message, cocode_ui::Tone::Danger);
        }
    }
}

/// Draws the panel.
pub fn show(ui: &mut Ui, search: &mut Search, root: Option<&Path>, commands: &mut Vec<Command>) {
    let Some(root) = root else {
        cocode_ui::empty_state(
            ui,
            "No folder is open",
            "Open a folder to search its files.",
        );
        return;
    };
    let before = search.query.clone();
    let field = ui.add(
        egui::TextEdit::singleline(&mut search.query.text)
            .hint_text("Search in files")
            .desired_width(f32::INFINITY),
    );
    if search.focus {
        field.request_focus();
        search.focus = false;
    }
    ui.horizontal(|ui| query_toggles(ui, &mut search.query));
    replace_row(ui, search, commands);
    let rerun = field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
    if search.query != before || rerun {
        search.start(root);
    }
    status_line(ui, search);
    ui.separator();
    let mut rows = Vec::new();
    for (f, file) in search.results.iter().enumerate() {
        rows.push(Row::File(f));
        rows.extend((0..file.lines.len()).map(|l| Row::Line(f, l)));
    }
    let row_height = ui.text_style_height(&TextStyle::Body) + 4.0;
    let font = TextStyle::Monospace.resolve(ui.style());
    let accent = ui.visuals().selection.bg_fill;
    let normal = ui.visuals().text_color();
    egui::ScrollArea::both()
        .auto_shrink([false, false])
        .show_rows(ui, row_height, rows.len(), |ui, range| {
            // One row each: long lines scroll sideways instead of wrapping
            // (the list's rows must keep one height).
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
            for row in &rows[range] {
                match row {
                    Row::File(f) => {
                        let file = &search.results[*f];
                        ui.strong(format!("{}  ({})", file.path, file.lines.len()));
                    }
                    Row::Line(f, l) => {
                        let file = &search.results[*f];
                        let hit = &file.lines[*l];
                        let mut job = LayoutJob::default();
                        let number =
                            TextFormat::simple(font.clone(), ui.visuals().weak_text_color());
                        job.append(&format!("{:>5}  ", hit.line + 1), 0.0, number);
                        // Leading indentation is left out of the preview.
                        let all: Vec<char> = hit.preview.chars().collect();
                        let skip = all.iter().take_while(|c| c.is_whitespace()).count();
                        let chars = &all[skip..];
                        let mut at = 0;
                        let plain = TextFormat::simple(font.clone(), normal);
                        let mut marked = plain.clone();
                        marked.background = accent;
                        for &(a, b) in &hit.ranges {
                            let (a, b) = (
                                a.saturating_sub(skip).min(chars.len()),
                                b.saturating_sub(skip).min(chars.len()),
                            );
                            if a < at {
                                continue;
                            }
                            job.append(
                                &chars[at..a].iter().collect::<String>(),
                                0.0,
                                plain.clone(),
                            );
                            job.append(
                                &chars[a..b].iter().collect::<String>(),
                                0.0,
                                marked.clone(),
                            );
                            at = b;
                        }
                        job.append(&chars[at..].iter().collect::<String>(), 0.0, plain.clone());
                        if ui.add(egui::Button::selectable(false, job)).clicked() {
                            let (start, end) = hit.ranges.first().copied().unwrap_or((0, 0));
                            commands.push(Command::Editor(EditorCommand::OpenAt {
                                path: root.join(&file.path),
                                line: hit.line,
                                start,
                                end,
                            }));
                        }
                    }
                }
            }
        });
}
