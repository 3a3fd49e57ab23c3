//! What the language servers add to an editor tab: squiggles under
//! diagnostics and marks in the gutter, the hover card (the diagnostics
//! under the pointer and the server's hover text), the completion list
//! (Ctrl+Space or a trigger character; arrows, Enter or Tab, Escape), and
//! go to definition (F12 or Ctrl+click).

use cocode_editor::{Change, ChangeSet, Document, EditKind, Selection};
use cocode_lsp::{Diagnostic, Severity, TextPos};
use cocode_ui::{Theme, Tone};
use egui::{Color32, Event, Key, Painter, Pos2, Rect, Stroke, Ui, Vec2};

use crate::window::command::{Command, LspAsk};
use crate::window::editors::{CompletionPopup, EditorTab};

/// How long the pointer rests before the hover card shows.
pub const HOVER_AFTER: f64 = 0.5;
/// Rows of the completion list shown at once.
const LIST_ROWS: usize = 10;

/// The colour kind of a semantic token type (the protocol's standard
/// names; others as tree-sitter names them).
pub fn semantic_highlight(token_type: &str) -> Option<cocode_editor::Highlight> {
    use cocode_editor::Highlight;
    Some(match token_type {
        "class" | "struct" | "enum" | "interface" | "type" | "typeParameter" | "builtinType"
        | "typeAlias" | "selfTypeKeyword" => Highlight::Type,
        "namespace" | "module" => Highlight::Module,
        "parameter" | "variable" | "selfKeyword" => Highlight::Variable,
        "property" => Highlight::Property,
        "enumMember" | "macro" | "constant" | "boolean" => Highlight::Constant,
        "decorator" | "attribute" | "derive" => Highlight::Attribute,
        "regexp" => Highlight::String,
        "lifetime" => Highlight::Label,
        other => return Highlight::of_capture(other),
    })
}

pub fn severity_color(severity: Severity, theme: Theme) -> Color32 {
    match severity {
        Severity::Error => Tone::Danger.color(theme),
        Severity::Warning => Tone::Warning.color(theme),
        Severity::Information => Tone::Info.color(theme),
        Severity::Hint => Tone::Neutral.color(theme),
    }
}

/// The char offset of a diagnostic's position in the document.
fn offset(doc: &Document, pos: TextPos) -> usize {
    cocode_lsp::encoding::char_index(doc.rope(), pos)
}

/// The diagnostics of the tab touching chars `start..=end` of one line, as
/// char ranges (an empty range covers one character, as editors show it).
pub fn on_line(
    tab: &EditorTab,
    doc: &Document,
    start: usize,
    end: usize,
) -> Vec<(usize, usize, Severity)> {
    tab.diagnostics
        .iter()
        .filter_map(|d| {
            let a = offset(doc, d.range.start);
            let mut b = offset(doc, d.range.end);
            if b == a {
                b = (a + 1).min(doc.rope().len_chars().max(a));
            }
            (b >= start && a <= end).then_some((
                a.max(start),
                b.min(end.max(start + 1)),
                d.severity,
            ))
        })
        .collect()
}

/// A squiggle under `x0..x1` at the bottom of a row.
pub fn squiggle(painter: &Painter, x0: f32, x1: f32, bottom: f32, color: Color32) {
    let x1 = x1.max(x0 + 4.0);
    let step = 2.0;
    let mut points = Vec::new();
    let mut x = x0;
    let mut up = true;
    while x <= x1 {
        points.push(Pos2::new(x, if up { bottom - 2.0 } else { bottom }));
        x += step;
        up = !up;
    }
    painter.add(egui::Shape::line(points, Stroke::new(1.0, color)));
}

/// The most serious diagnostic starting on `line`, for the gutter.
pub fn gutter_severity(tab: &EditorTab, line: usize) -> Option<Severity> {
    tab.diagnostics
        .iter()
        .filter(|d| d.range.start.line as usize == line)
        .map(|d| d.severity)
        .min()
}

/// The diagnostics covering char `at`.
fn at_char<'a>(tab: &'a EditorTab, doc: &Document, at: usize) -> Vec<&'a Diagnostic> {
    tab.diagnostics
        .iter()
        .filter(|d| {
            let a = offset(doc, d.range.start);
            let b = offset(doc, d.range.end).max(a + 1);
            (a..b).contains(&at)
        })
        .collect()
}

/// The pointer over the text: Ctrl+click (Cmd on macOS) goes to the
/// definition; resting asks for the hover card.
pub fn pointer(
    ui: &Ui,
    response: &egui::Response,
    tab: &mut EditorTab,
    at: Option<usize>,
    commands: &mut Vec<Command>,
) {
    let Some(at) = at else {
        tab.hover_wait = None;
        tab.hover = None;
        return;
    };
    if response.clicked() && ui.input(|i| i.modifiers.command) && !ui.input(|i| i.modifiers.alt) {
        commands.push(Command::Lsp(LspAsk::Definition { id: tab.id, at }));
        return;
    }
    let now = ui.input(|i| i.time);
    match tab.hover_wait {
        Some((char_at, since)) if char_at == at => {
            if since >= 0.0 && now - since >= HOVER_AFTER {
                // Asked once per resting place (a negative time marks it).
                tab.hover_wait = Some((at, -1.0));
                commands.push(Command::Lsp(LspAsk::Hover { id: tab.id, at }));
            } else if since >= 0.0 {
                ui.ctx()
                    .request_repaint_after(std::time::Duration::from_secs_f64(
                        HOVER_AFTER - (now - since),
                    ));
            }
        }
        _ => {
            tab.hover_wait = Some((at, now));
            if tab.hover.as_ref().is_some_and(|(h, _)| *h != at) {
                tab.hover = None;
            }
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_secs_f64(HOVER_AFTER));
        }
    }
}

/// The hover card at the pointer: the diagnostics under it, then the
/// server's text.
pub fn hover_card(ui: &Ui, tab: &EditorTab, doc: &Document, theme: Theme) {
    let Some((at, since)) = tab.hover_wait else {
        return;
    };
    if since >= 0.0 {
        return;
    }
    let found = at_char(tab, doc, at);
    let text = tab
        .hover
        .as_ref()
        .filter(|(h, _)| *h == at)
        .map(|(_, t)| t.as_str());
    if found.is_empty() && text.is_none() {
        return;
    }
    let Some(pointer) = ui.ctx().pointer_hover_pos() else {
        return;
    };
    egui::Area::new(ui.id().with(("hover-card", tab.id)))
        .order(egui::Order::Tooltip)
        .fixed_pos(pointer + Vec2::new(12.0, 16.0))
        .interactable(false)
        .show(ui.ctx(), |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_max_width(560.0);
                for d in &found {
                    ui.horizontal_wrapped(|ui| {
                        ui.colored_label(severity_color(d.severity, theme), d.severity.word());
                        ui.label(&d.message);
                        if let Some(source) = &d.source {
                            ui.weak(format!("[{source}]"));
                        }
                    });
                }
                if let Some(text) = text {
                    if !found.is_empty() {
                        ui.separator();
                    }
                    for block in hover_blocks(text) {
                        match block {
                            (true, code) => {
                                ui.label(egui::RichText::new(code).monospace());
                            }
                            (false, prose) => {
                                ui.label(prose);
                            }
                        }
                    }
                }
            });
        });
}

/// A hover's Markdown as code blocks (`true`) and prose, fences removed.
pub fn hover_blocks(text: &str) -> Vec<(bool, String)> {
    let mut blocks: Vec<(bool, String)> = Vec::new();
    let mut in_code = false;
    let mut current = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            if !current.trim().is_empty() {
                blocks.push((in_code, current.trim_end().to_owned()));
            }
            current.clear();
            in_code = !in_code;
            continue;
        }
        if line.trim() == "---" && !in_code {
            if !current.trim().is_empty() {
                blocks.push((false, current.trim_end().to_owned()));
            }
            current.clear();
            continue;
        }
        current.push_str(line);
        current.push('\n');
    }
    if !current.trim().is_empty() {
        blocks.push((in_code, current.trim_end().to_owned()));
    }
    blocks
}

/// What was typed since the completion list opened.
fn typed(doc: &Document, popup: &CompletionPopup) -> String {
    let head = doc.selection().primary().head;
    if head < popup.start {
        return String::new();
    }
    doc.rope().slice(popup.start..head).to_string()
}

/// Keys the completion list and the language features take before the
/// editor: arrows, Enter, Tab and Escape while the list is open; F12 and
/// Ctrl+Space always. The events left are the editor's.
pub fn intercept(
    events: Vec<Event>,
    tab: &mut EditorTab,
    doc: &mut Document,
    commands: &mut Vec<Command>,
) -> Vec<Event> {
    let mut rest = Vec::with_capacity(events.len());
    for event in events {
        if let Event::Key {
            key,
            pressed: true,
            modifiers,
            ..
        } = &event
        {
            let at = doc.selection().primary().head;
            match key {
                Key::F12 => {
                    commands.push(Command::Lsp(LspAsk::Definition { id: tab.id, at }));
                    continue;
                }
                Key::Space if modifiers.ctrl => {
                    open_list(tab, doc);
                    commands.push(Command::Lsp(LspAsk::Complete {
                        id: tab.id,
                        trigger: None,
                    }));
                    continue;
                }
                _ => {}
            }
            if let Some(popup) = &mut tab.completion {
                let shown = popup.visible(&typed(doc, popup));
                match key {
                    Key::Escape => {
                        tab.completion = None;
                        continue;
                    }
                    Key::ArrowDown | Key::ArrowUp if !shown.is_empty() => {
                        let n = shown.len();
                        popup.selected = if *key == Key::ArrowDown {
                            (popup.selected + 1) % n
                        } else {
                            (popup.selected + n - 1) % n
                        };
                        continue;
                    }
                    Key::Enter | Key::Tab if !shown.is_empty() => {
                        let item = shown[popup.selected.min(shown.len() - 1)];
                        accept(tab, doc, item);
                        continue;
                    }
                    _ => {}
                }
            }
        }
        rest.push(event);
    }
    rest
}

fn open_list(tab: &mut EditorTab, doc: &Document) {
    let head = doc.selection().primary().head;
    tab.completion = Some(CompletionPopup {
        start: cocode_lsp::features::word_start(doc.rope(), head),
        items: Vec::new(),
        answered: false,
        selected: 0,
    });
}

/// After the editor took the frame's keys: a trigger character opens the
/// list; leaving the word (or moving before it) closes it.
pub fn after_keys(
    tab: &mut EditorTab,
    doc: &Document,
    typed_text: &str,
    triggers: &[String],
    commands: &mut Vec<Command>,
) {
    if let Some(last) = typed_text.chars().last()
        && triggers.iter().any(|t| t.ends_with(last))
        && doc.selection().len() == 1
    {
        open_list(tab, doc);
        commands.push(Command::Lsp(LspAsk::Complete {
            id: tab.id,
            trigger: Some(last),
        }));
        return;
    }
    if let Some(popup) = &tab.completion {
        let head = doc.selection().primary().head;
        let word = typed(doc, popup);
        if head < popup.start
            || doc.selection().len() != 1
            || word
                .chars()
                .any(|c| !(c.is_alphanumeric() || c == '_' || c == '$'))
        {
            tab.completion = None;
        }
    }
}

/// Applies completion item `index`: its edit (stretched over what was
/// typed since the list opened) and its additional edits, as one undo
/// step, the cursor after the inserted text.
pub fn accept(tab: &mut EditorTab, doc: &mut Document, index: usize) {
    let Some(popup) = tab.completion.take() else {
        return;
    };
    let Some(item) = popup.items.get(index) else {
        return;
    };
    let head = doc.selection().primary().head;
    let start = item.edit.start.min(head);
    let end = head.max(item.edit.end.min(doc.rope().len_chars()));
    let mut changes = vec![Change::replace(start, end, item.edit.text.clone())];
    for extra in &item.additional {
        // Extra edits that overlap the main one are dropped, never mangled.
        if extra.end <= start || extra.start >= end {
            changes.push(Change::replace(extra.start, extra.end, extra.text.clone()));
        }
    }
    let Ok(set) = ChangeSet::new(changes) else {
        return;
    };
    let inserted = item.edit.text.chars().count();
    // The cursor ends after the main text, shifted by extra edits before it.
    let shift: isize = item
        .additional
        .iter()
        .filter(|e| e.end <= start)
        .map(|e| {
            isize::try_from(e.text.chars().count()).unwrap_or(0)
                - isize::try_from(e.end - e.start).unwrap_or(0)
        })
        .sum();
    let cursor = (start + inserted).saturating_add_signed(shift);
    if doc
        .apply_selecting(&set, EditKind::Other, Selection::point(cursor))
        .is_ok()
    {
        tab.reveal = true;
    }
}

/// The completion list under the cursor.
pub fn completion_list(
    ui: &Ui,
    tab: &mut EditorTab,
    doc: &mut Document,
    caret: Option<Pos2>,
    row: f32,
) {
    let (Some(popup), Some(caret)) = (&tab.completion, caret) else {
        return;
    };
    let shown = popup.visible(&typed(doc, popup));
    let answered = popup.answered;
    let selected = popup.selected.min(shown.len().saturating_sub(1));
    let mut picked = None;
    egui::Area::new(ui.id().with(("completion", tab.id)))
        .order(egui::Order::Foreground)
        .fixed_pos(caret + Vec2::new(0.0, row))
        .show(ui.ctx(), |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_min_width(280.0);
                if shown.is_empty() {
                    ui.weak(if answered {
                        "No suggestions"
                    } else {
                        "Loading…"
                    });
                    return;
                }
                let first = selected.saturating_sub(LIST_ROWS - 1);
                for (row_index, &i) in shown.iter().enumerate().skip(first).take(LIST_ROWS) {
                    let item = &popup.items[i];
                    let text = match item.kind {
                        Some(kind) => format!("{}  · {kind}", item.label),
                        None => item.label.clone(),
                    };
                    let r = ui.selectable_label(row_index == selected, text);
                    let r = match &item.detail {
                        Some(detail) => r.on_hover_text(detail),
                        None => r,
                    };
                    if r.clicked() {
                        picked = Some(i);
                    }
                }
                ui.weak("Enter: insert · Esc: close");
            });
        });
    if let Some(i) = picked {
        accept(tab, doc, i);
    }
}

/// Where the gutter mark of a line goes.
pub fn gutter_dot(painter: &Painter, gutter: Rect, top: f32, row: f32, color: Color32) {
    painter.circle_filled(Pos2::new(gutter.min.x + 6.0, top + row / 2.0), 3.0, color);
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn hover_markdown_splits_into_code_and_prose() {
        let text = "```python\ndef greet(who: str) -> str\n```\n---\nSays hello.\n\nTwice.";
        assert_eq!(
            hover_blocks(text),
            vec![
                (true, "def greet(who: str) -> str".to_owned()),
                (false, "Says hello.\n\nTwice.".to_owned()),
            ]
        );
    }
}
