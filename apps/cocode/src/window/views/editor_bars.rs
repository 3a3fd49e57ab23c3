//! An editor tab's bars: the disk-conflict banner, the find bar and the
//! go-to-line field.

use cocode_editor::commands::{line_end, line_of, line_start};
use cocode_editor::{Document, Selection};
use cocode_ui::Tone;
use egui::text::CCursor;
use egui::{Key, Ui};

use crate::window::command::{Command, EditorCommand};
use crate::window::editors::{EditorTab, FindBar};

pub(super) fn banners(ui: &mut Ui, tab: &mut EditorTab, dirty: bool, commands: &mut Vec<Command>) {
    if let Some(conflict) = &tab.conflict {
        ui.horizontal_wrapped(|ui| {
            let what = if conflict.theirs.is_some() {
                "This file changed on disk while you have unsaved changes."
            } else {
                "This file was deleted on disk while you have unsaved changes."
            };
            cocode_ui::badge(ui, what, Tone::Warning);
            if ui.button("Keep mine").clicked() {
                commands.push(Command::Editor(EditorCommand::KeepMine(tab.id)));
            }
            if conflict.theirs.is_some() && ui.button("Load theirs").clicked() {
                commands.push(Command::Editor(EditorCommand::LoadTheirs(tab.id)));
            }
            let label = if conflict.comparison.is_some() {
                "Hide comparison"
            } else {
                "Compare"
            };
            if ui.button(label).clicked() {
                commands.push(Command::Editor(EditorCommand::ToggleCompare(tab.id)));
            }
        });
    }
    if let Some(reason) = tab.locked() {
        cocode_ui::badge(ui, &reason, Tone::Neutral);
    }
    if let Some(notice) = &tab.notice {
        ui.horizontal_wrapped(|ui| {
            let tone = if notice.error {
                Tone::Danger
            } else {
                Tone::Neutral
            };
            cocode_ui::badge(ui, &notice.text, tone);
            if ui.small_button("Dismiss").clicked() {
                commands.push(Command::Editor(EditorCommand::DismissEditorNotice(tab.id)));
            }
        });
    }
    if tab.saving.is_some() && dirty {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("Saving…");
        });
    }
}

/// The disk's text against the buffer's, as a unified diff with its
/// lines coloured (removed: only on disk; added: only in the buffer).
pub(super) fn compare(ui: &mut Ui, id: u32, diff: &str) {
    ui.label("On disk (−) against your unsaved text (+):");
    let height = ui.available_height() * 0.4;
    crate::window::views::diff::show(ui, ("compare", id), diff, height);
    ui.separator();
}

#[expect(
    clippy::too_many_lines,
    reason = "the bar's two rows and what their buttons do"
)]
pub(super) fn find_bar(ui: &mut Ui, tab: &mut EditorTab, doc: &mut Document) {
    let read_only = tab.locked().is_some();
    let Some(find) = &mut tab.find else { return };
    let mut close = false;
    let mut step: Option<bool> = None;
    ui.horizontal(|ui| {
        let field = ui
            .add(
                egui::TextEdit::singleline(&mut find.query.text)
                    .hint_text("Find")
                    .desired_width(220.0)
                    .id_salt(("find", tab.id)),
            )
            .on_hover_text("Find (Enter: next, Shift+Enter: previous)");

        if find.focus {
            // The field opens with its text selected: typing replaces it.
            field.request_focus();
            if let Some(mut state) = egui::TextEdit::load_state(ui.ctx(), field.id) {
                let all = egui::text::CCursorRange::two(
                    CCursor::new(0),
                    CCursor::new(find.query.text.chars().count()),
                );
                state.cursor.set_char_range(Some(all));
                state.store(ui.ctx(), field.id);
            }
            find.focus = false;
        }
        if field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
            step = Some(ui.input(|i| i.modifiers.shift));
            field.request_focus();
        }
        if (field.has_focus() || field.lost_focus()) && ui.input(|i| i.key_pressed(Key::Escape)) {
            close = true;
        }
        crate::window::views::search::query_toggles(ui, &mut find.query);
        let status = match find.matcher() {
            Err(cocode_editor::SearchError::Empty) => String::new(),
            Err(e) => e.to_string(),
            Ok(_) => {
                let primary = doc.selection().primary();
                let found = find.matches_in(doc);
                let at = found
                    .iter()
                    .position(|m| *m == (primary.from(), primary.to()));
                match (found.len(), at) {
                    (0, _) => "No results".to_owned(),
                    (n, Some(i)) => format!("{} of {n}", i + 1),
                    (n, None) => format!("{n} found"),
                }
            }
        };
        ui.label(status);
        if ui
            .small_button("↑")
            .on_hover_text("Previous match (Shift+Enter)")
            .clicked()
        {
            step = Some(true);
        }
        if ui
            .small_button("↓")
            .on_hover_text("Next match (Enter)")
            .clicked()
        {
            step = Some(false);
        }
        if ui
            .small_button("×")
            .on_hover_text("Close (Escape)")
            .clicked()
        {
            close = true;
        }
    });
    let mut replace: Option<bool> = None;
    if find.show_replace && !read_only {
        ui.horizontal(|ui| {
            ui.add(
                egui::TextEdit::singleline(&mut find.replace_with)
                    .hint_text("Replace")
                    .desired_width(220.0)
                    .id_salt(("replace", tab.id)),
            );
            if ui.button("Replace").clicked() {
                replace = Some(false);
            }
            if ui.button("Replace All").clicked() {
                replace = Some(true);
            }
        });
    }
    if let Ok(matcher) = find.matcher() {
        if let Some(backward) = step {
            doc.find_next(&matcher, backward);
            tab.reveal = true;
        }
        match replace {
            Some(false) => {
                doc.replace_match(&matcher, &find.replace_with);
                tab.reveal = true;
            }
            Some(true) => {
                let n = doc.replace_all_matches(&matcher, &find.replace_with);
                tab.notice = Some(crate::window::editors::Notice {
                    text: format!("Replaced {n} occurrence(s)."),
                    error: false,
                });
            }
            None => {}
        }
    }
    if close {
        tab.find = None;
        tab.focus = true;
    }
}

pub(super) fn go_to_line_bar(ui: &mut Ui, tab: &mut EditorTab, doc: &mut Document) {
    let Some(text) = &mut tab.go_to_line else {
        return;
    };
    let lines = doc.rope().len_lines();
    let mut done = None;
    ui.horizontal(|ui| {
        ui.label(format!("Go to line (1–{lines}):"));
        let field = ui.add(
            egui::TextEdit::singleline(text)
                .desired_width(120.0)
                .id_salt(("goto", tab.id)),
        );
        if !field.has_focus() && !field.lost_focus() {
            field.request_focus();
        }
        if field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
            done = Some(true);
        }
        if ui.input(|i| i.key_pressed(Key::Escape)) {
            done = Some(false);
        }
    });
    match done {
        Some(true) => {
            if let Some((line, col)) = parse_line_col(text) {
                doc.go_to_line(line.saturating_sub(1));
                if let Some(col) = col {
                    let rope = doc.rope();
                    let l = line_of(rope, doc.selection().primary().head);
                    let pos = (line_start(rope, l) + col.saturating_sub(1)).min(line_end(rope, l));
                    doc.set_selection(Selection::point(pos));
                }
                tab.reveal = true;
            }
            tab.go_to_line = None;
            tab.focus = true;
        }
        Some(false) => {
            tab.go_to_line = None;
            tab.focus = true;
        }
        None => {}
    }
}

/// `12` or `12:5` (1-based line and column).
pub fn parse_line_col(text: &str) -> Option<(usize, Option<usize>)> {
    let mut parts = text.trim().splitn(2, [':', ',']);
    let line = parts.next()?.trim().parse().ok()?;
    let col = match parts.next() {
        Some(c) => Some(c.trim().parse().ok()?),
        None => None,
    };
    Some((line, col))
}

/// Ctrl+F / Ctrl+H: opens the find bar with the selected text.
pub(super) fn open_find(tab: &mut EditorTab, doc: &Document, replace: bool) {
    let find = tab.find.get_or_insert_with(FindBar::default);
    let primary = doc.selection().primary();
    if !primary.is_empty() && primary.to() - primary.from() < 200 {
        let text = doc.rope().slice(primary.from()..primary.to()).to_string();
        if !text.contains('\n') {
            find.query.text = text;
        }
    }
    find.show_replace |= replace;
    find.focus = true;
}

pub(super) fn step_find(tab: &mut EditorTab, doc: &mut Document, backward: bool) {
    if let Some(find) = &tab.find
        && let Ok(matcher) = find.matcher()
    {
        doc.find_next(&matcher, backward);
    }
}
