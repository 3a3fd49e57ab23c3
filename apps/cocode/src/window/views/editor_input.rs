//! The editor's input: where the mouse hits, selections by mouse, the
//! clipboard, and the keys of VS Code.

use cocode_editor::commands::{line_end, line_of, line_start, word_at};
use cocode_editor::{Document, EditKind, Motion, Range, Selection};
use cocode_platform::Os;
use egui::{Event, ImeEvent, Key, Modifiers, Pos2, Ui, Vec2};

use crate::window::command::Command;
use crate::window::editors::EditorTab;
use crate::window::keymap::{EditorAction, Keymap};
use crate::window::views::editor_bars::{open_find, step_find};
use crate::window::views::editor_lsp;

/// Geometry of the text area in one frame.
///
/// Positions below line 0 are worked out in `f64`: two million lines
/// down, line 0's top is some 40 million pixels above the screen, where an
/// `f32` steps by 4 pixels and rows worked out in it overlap or gap.
#[derive(Clone, Copy)]
pub(super) struct Geometry {
    /// Top-left of line 0's text.
    pub(super) origin: Pos2,
    pub(super) row: f32,
}

impl Geometry {
    /// The line under screen height `y`.
    pub(super) fn line_at(self, y: f32, lines: usize) -> usize {
        self.line_at_depth(f64::from(y) - f64::from(self.origin.y), lines)
    }

    /// The line `depth` pixels below line 0's top.
    pub(super) fn line_at_depth(self, depth: f64, lines: usize) -> usize {
        let row = (depth / f64::from(self.row)).floor();
        if row <= 0.0 {
            0
        } else {
            // Truncation is wanted: a row index from a non-negative float.
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "clamped below"
            )]
            let r = row as usize;
            r.min(lines.saturating_sub(1))
        }
    }

    /// Screen height of `line`'s top.
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        reason = "line numbers are far below 2^53; a shown line's top is on screen"
    )]
    pub(super) fn line_top(self, line: usize) -> f32 {
        (f64::from(self.origin.y) + line as f64 * f64::from(self.row)) as f32
    }
}

/// The char offset under `pos`.
pub(super) fn hit(
    doc: &Document,
    geo: Geometry,
    galleys: &[(usize, std::sync::Arc<egui::Galley>)],
    pos: Pos2,
) -> usize {
    let rope = doc.rope();
    let line = geo.line_at(pos.y, rope.len_lines());
    let start = line_start(rope, line);
    let end = line_end(rope, line);
    let col = galleys
        .iter()
        .find(|(l, _)| *l == line)
        .map_or(0, |(_, g)| {
            g.cursor_from_pos(Vec2::new(pos.x - geo.origin.x, 0.0))
                .index
                .into()
        });
    (start + col).min(end)
}

pub(super) fn mouse(
    ui: &Ui,
    response: &egui::Response,
    tab: &mut EditorTab,
    doc: &mut Document,
    geo: Geometry,
    galleys: &[(usize, std::sync::Arc<egui::Galley>)],
    os: Os,
) {
    let Some(pos) = response.interact_pointer_pos() else {
        if !ui.input(|i| i.pointer.primary_down()) {
            tab.drag_anchor = None;
        }
        return;
    };
    let modifiers = ui.input(|i| i.modifiers);
    let at = hit(doc, geo, galleys, pos);
    let add_cursor = if os == Os::MacOs {
        modifiers.alt
    } else {
        modifiers.alt && !modifiers.ctrl
    };
    if response.triple_clicked() {
        let rope = doc.rope();
        let line = line_of(rope, at);
        let end = if line + 1 < rope.len_lines() {
            line_start(rope, line + 1)
        } else {
            rope.len_chars()
        };
        doc.set_selection(Selection::single(Range::new(line_start(rope, line), end)));
        response.request_focus();
    } else if response.double_clicked() {
        if let Some((a, b)) = word_at(doc.rope(), at) {
            doc.set_selection(Selection::single(Range::new(a, b)));
        }
        response.request_focus();
    } else if add_cursor {
        // Alt+click adds (or removes) a cursor; the press must not first
        // collapse the selection to one cursor.
        if response.clicked() {
            response.request_focus();
            doc.toggle_cursor_at(at);
        }
    } else if response.drag_started() || response.clicked() {
        response.request_focus();
        if modifiers.shift {
            let anchor = doc.selection().primary().anchor;
            doc.set_selection(Selection::single(Range::new(anchor, at)));
            tab.drag_anchor = Some(anchor);
        } else {
            doc.set_selection(Selection::point(at));
            tab.drag_anchor = Some(at);
        }
    } else if response.dragged()
        && let Some(anchor) = tab.drag_anchor
    {
        doc.set_selection(Selection::single(Range::new(anchor, at)));
        tab.reveal = true;
    }
}

/// The selected texts, or the whole lines of empty cursors (VS Code's
/// copy without a selection), joined with the document's line ending.
pub(super) fn clipboard_text(doc: &Document) -> (String, bool) {
    let rope = doc.rope();
    let le = doc.line_ending().as_str();
    let sel = doc.selection();
    if sel.ranges().iter().all(|r| r.is_empty()) {
        let mut lines: Vec<usize> = sel.ranges().iter().map(|r| line_of(rope, r.head)).collect();
        lines.dedup();
        let mut text = String::new();
        for l in lines {
            text.extend(rope.slice(line_start(rope, l)..line_end(rope, l)).chunks());
            text.push_str(le);
        }
        (text, true)
    } else {
        let parts: Vec<String> = sel
            .ranges()
            .iter()
            .filter(|r| !r.is_empty())
            .map(|r| rope.slice(r.from()..r.to()).to_string())
            .collect();
        (parts.join(le), false)
    }
}

pub(super) fn keyboard(
    ui: &Ui,
    tab: &mut EditorTab,
    doc: &mut Document,
    page: usize,
    keys: &Keymap,
    commands: &mut Vec<Command>,
) {
    let events = editor_lsp::intercept(ui.input(|i| i.events.clone()), tab, doc, commands);
    let writable = tab.locked().is_none();
    let before = doc.version();
    let selection_before = doc.selection().clone();
    let mut typed = String::new();
    for event in events {
        match event {
            Event::Text(text) if writable && tab.preedit.is_empty() => {
                doc.insert_text(&text, EditKind::Typing);
                typed.push_str(&text);
            }
            Event::Ime(ImeEvent::Preedit { text, .. }) => tab.preedit = text,
            Event::Ime(ImeEvent::Commit(text)) => {
                tab.preedit.clear();
                if writable && !text.is_empty() {
                    doc.insert_text(&text, EditKind::Typing);
                }
            }
            Event::Copy => ui.ctx().copy_text(clipboard_text(doc).0),
            Event::Cut => {
                let (text, whole_lines) = clipboard_text(doc);
                ui.ctx().copy_text(text);
                if writable {
                    if whole_lines {
                        doc.delete_lines();
                    } else {
                        doc.insert_text("", EditKind::Other);
                    }
                }
            }
            Event::Paste(text) if writable => doc.paste(&text),
            Event::Key {
                key,
                pressed: true,
                modifiers,
                ..
            } => key_press(doc, tab, key, modifiers, page, keys, writable),
            _ => {}
        }
    }
    let triggers = tab.triggers.clone();
    editor_lsp::after_keys(tab, doc, &typed, &triggers, commands);
    if doc.version() != before || *doc.selection() != selection_before {
        tab.reveal = true;
        tab.hover = None;
    }
}

/// A key press in the editor: the keymap's editor commands first, then
/// the motions and edits of plain keys.
pub(super) fn key_press(
    doc: &mut Document,
    tab: &mut EditorTab,
    key: Key,
    m: Modifiers,
    page: usize,
    keys: &Keymap,
    writable: bool,
) {
    if let Some(action) = keys.editor_action(key, m) {
        run_action(doc, tab, action, writable);
        return;
    }
    let os = keys.os;
    let cmd = m.command;
    let shift = m.shift;
    // Word-wise motion: Ctrl on Linux and Windows, Option on macOS.
    let word = if os == Os::MacOs { m.alt } else { m.ctrl };
    match key {
        Key::ArrowLeft | Key::ArrowRight if os == Os::MacOs && m.mac_cmd => {
            let motion = if key == Key::ArrowLeft {
                Motion::LineStart
            } else {
                Motion::LineEnd
            };
            doc.move_cursors(motion, shift);
        }
        Key::ArrowLeft => {
            doc.move_cursors(if word { Motion::WordLeft } else { Motion::Left }, shift);
        }
        Key::ArrowRight => doc.move_cursors(
            if word {
                Motion::WordRight
            } else {
                Motion::Right
            },
            shift,
        ),
        Key::ArrowUp | Key::ArrowDown => {
            let down = key == Key::ArrowDown;
            if m.alt && shift && writable {
                doc.duplicate_lines(down);
            } else if m.alt && (m.ctrl || (os == Os::MacOs && m.mac_cmd)) {
                doc.add_cursor_vertical(down);
            } else if m.alt && writable {
                doc.move_lines(down);
            } else if cmd && os == Os::MacOs {
                doc.move_cursors(
                    if down {
                        Motion::DocEnd
                    } else {
                        Motion::DocStart
                    },
                    shift,
                );
            } else {
                doc.move_cursors(if down { Motion::Down } else { Motion::Up }, shift);
            }
        }
        Key::Home => doc.move_cursors(
            if cmd {
                Motion::DocStart
            } else {
                Motion::LineStart
            },
            shift,
        ),
        Key::End => doc.move_cursors(if cmd { Motion::DocEnd } else { Motion::LineEnd }, shift),
        Key::PageUp => doc.move_cursors(Motion::PageUp(page), shift),
        Key::PageDown => doc.move_cursors(Motion::PageDown(page), shift),
        Key::Enter if writable && !cmd => doc.newline(),
        Key::Tab if writable && shift => doc.outdent_lines(),
        Key::Tab if writable && !cmd => doc.tab(),
        Key::Backspace if writable => {
            if word || (os == Os::MacOs && m.alt) {
                doc.delete_word(true);
            } else {
                doc.backspace();
            }
        }
        Key::Delete if writable => {
            if word {
                doc.delete_word(false);
            } else {
                doc.delete_forward();
            }
        }
        Key::Escape => {
            if tab.find.is_some() {
                tab.find = None;
            } else {
                let only = doc.selection().primary_only();
                let collapsed = if only.len() == 1 && doc.selection().len() == 1 {
                    Selection::point(only.primary().head)
                } else {
                    only
                };
                doc.set_selection(collapsed);
            }
        }
        _ => {}
    }
}

/// Runs one of the keymap's editor commands (a key of the table, or the
/// command palette on the last editor used).
pub fn run_action(doc: &mut Document, tab: &mut EditorTab, action: EditorAction, writable: bool) {
    if action.edits() && !writable {
        return;
    }
    match action {
        EditorAction::Undo => {
            doc.undo();
        }
        EditorAction::Redo => {
            doc.redo();
        }
        EditorAction::SelectAll => doc.select_all(),
        EditorAction::SelectLine => doc.select_line(),
        EditorAction::AddNextOccurrence => doc.add_next_occurrence(),
        EditorAction::DeleteLines => doc.delete_lines(),
        EditorAction::ToggleComment => {
            // Plain text and languages without line comments: nothing.
            if let Some(token) = tab
                .language()
                .and_then(cocode_editor::Language::line_comment)
            {
                doc.toggle_comment(token);
            }
        }
        EditorAction::Indent => doc.indent_lines(),
        EditorAction::Outdent => doc.outdent_lines(),
        EditorAction::Find => open_find(tab, doc, false),
        EditorAction::Replace => open_find(tab, doc, true),
        EditorAction::GoToLine => tab.go_to_line = Some(String::new()),
        EditorAction::FindNext => step_find(tab, doc, false),
        EditorAction::FindPrevious => step_find(tab, doc, true),
    }
}
