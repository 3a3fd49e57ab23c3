//! Editing commands on a document and its selection: every command works on
//! all cursors at once and is one change set (one undo step, typing aside).

use ropey::Rope;
use unicode_segmentation::UnicodeSegmentation;

use crate::change::{Change, ChangeSet};
use crate::document::{Document, EditKind};
use crate::selection::{Range, Selection};

/// Where a cursor moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Motion {
    Left,
    Right,
    WordLeft,
    WordRight,
    Up,
    Down,
    /// To the first non-blank character, or to column 0 when already there.
    LineStart,
    LineEnd,
    DocStart,
    DocEnd,
    PageUp(usize),
    PageDown(usize),
}

/// The kinds of characters word motions tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Word,
    Space,
    LineBreak,
    Punct,
}

fn class(ch: char) -> Class {
    if ch == '\n' || ch == '\r' {
        Class::LineBreak
    } else if ch.is_whitespace() {
        Class::Space
    } else if ch.is_alphanumeric() || ch == '_' {
        Class::Word
    } else {
        Class::Punct
    }
}

/// The brackets bracket matching and auto-indent know.
const PAIRS: [(char, char); 3] = [('(', ')'), ('[', ']'), ('{', '}')];

/// The line `pos` is on.
pub fn line_of(rope: &Rope, pos: usize) -> usize {
    rope.char_to_line(pos.min(rope.len_chars()))
}

/// The first char of `line`.
pub fn line_start(rope: &Rope, line: usize) -> usize {
    rope.line_to_char(line.min(rope.len_lines().saturating_sub(1)))
}

/// Where `line`'s text ends, before its line break (`\n` or `\r\n`).
pub fn line_end(rope: &Rope, line: usize) -> usize {
    let line = line.min(rope.len_lines().saturating_sub(1));
    let start = rope.line_to_char(line);
    let slice = rope.line(line);
    let mut len = slice.len_chars();
    if len > 0 && slice.char(len - 1) == '\n' {
        len -= 1;
        if len > 0 && slice.char(len - 1) == '\r' {
            len -= 1;
        }
    }
    start + len
}

/// The text of `line` without its line break.
pub fn line_text(rope: &Rope, line: usize) -> String {
    rope.slice(line_start(rope, line)..line_end(rope, line))
        .to_string()
}

/// The column (in chars) of `pos` on its line.
pub fn column(rope: &Rope, pos: usize) -> usize {
    pos - line_start(rope, line_of(rope, pos))
}

/// Grapheme boundaries of a line's text, as char offsets within it.
fn grapheme_stops(text: &str) -> Vec<usize> {
    let mut stops = Vec::new();
    let mut chars = 0;
    for g in text.graphemes(true) {
        stops.push(chars);
        chars += g.chars().count();
    }
    stops.push(chars);
    stops
}

/// The grapheme boundary after `pos` (a line break counts as one step).
pub fn next_boundary(rope: &Rope, pos: usize) -> usize {
    let len = rope.len_chars();
    if pos >= len {
        return len;
    }
    let line = line_of(rope, pos);
    let (start, end) = (line_start(rope, line), line_end(rope, line));
    if pos >= end {
        return line_start(rope, line + 1).max(pos + 1).min(len);
    }
    let stops = grapheme_stops(&line_text(rope, line));
    stops
        .into_iter()
        .map(|s| start + s)
        .find(|s| *s > pos)
        .unwrap_or(end)
}

/// The grapheme boundary before `pos`.
pub fn prev_boundary(rope: &Rope, pos: usize) -> usize {
    if pos == 0 {
        return 0;
    }
    let pos = pos.min(rope.len_chars());
    let line = line_of(rope, pos);
    let start = line_start(rope, line);
    if pos == start {
        return line_end(rope, line - 1);
    }
    let end = line_end(rope, line);
    if pos > end {
        // Between `\r` and `\n`: the break is one unit.
        return end;
    }
    let stops = grapheme_stops(&line_text(rope, line));
    stops
        .into_iter()
        .rev()
        .map(|s| start + s)
        .find(|s| *s < pos)
        .unwrap_or(start)
}

/// The end of the word at or after `pos` (VS Code's Ctrl+Right).
pub fn word_right(rope: &Rope, pos: usize) -> usize {
    let len = rope.len_chars();
    let mut p = pos;
    // Over spaces, and at most one line break.
    let mut breaks = 0;
    while p < len {
        let c = class(rope.char(p));
        if c == Class::Space || (c == Class::LineBreak && breaks == 0) {
            if c == Class::LineBreak && rope.char(p) == '\n' {
                breaks += 1;
            }
            p += 1;
        } else {
            break;
        }
    }
    if p < len && class(rope.char(p)) == Class::LineBreak {
        return p;
    }
    if p < len {
        let run = class(rope.char(p));
        while p < len && class(rope.char(p)) == run {
            p += 1;
        }
    }
    p
}

/// The start of the word at or before `pos` (VS Code's Ctrl+Left).
pub fn word_left(rope: &Rope, pos: usize) -> usize {
    let mut p = pos.min(rope.len_chars());
    let mut breaks = 0;
    while p > 0 {
        let c = class(rope.char(p - 1));
        if c == Class::Space || (c == Class::LineBreak && breaks == 0) {
            if rope.char(p - 1) == '\n' {
                breaks += 1;
            }
            p -= 1;
        } else {
            break;
        }
    }
    if p > 0 && class(rope.char(p - 1)) == Class::LineBreak {
        return p;
    }
    if p > 0 {
        let run = class(rope.char(p - 1));
        while p > 0 && class(rope.char(p - 1)) == run {
            p -= 1;
        }
    }
    p
}

/// The word (letters, digits, `_`) around `pos`, if any.
pub fn word_at(rope: &Rope, pos: usize) -> Option<(usize, usize)> {
    let len = rope.len_chars();
    let is_word = |p: usize| p < len && class(rope.char(p)) == Class::Word;
    let mut start = pos.min(len);
    if !is_word(start) && (start == 0 || !is_word(start - 1)) {
        return None;
    }
    while start > 0 && is_word(start - 1) {
        start -= 1;
    }
    let mut end = pos.min(len);
    while is_word(end) {
        end += 1;
    }
    Some((start, end))
}

/// The bracket matching the one at `pos` (or just before it), scanning at
/// most `limit` chars.
pub fn matching_bracket(rope: &Rope, pos: usize, limit: usize) -> Option<(usize, usize)> {
    let len = rope.len_chars();
    let at = |p: usize| (p < len).then(|| rope.char(p));
    let candidates = [Some(pos), pos.checked_sub(1)];
    for p in candidates.into_iter().flatten() {
        let Some(ch) = at(p) else { continue };
        for (open, close) in PAIRS {
            if ch == open {
                let mut depth = 0usize;
                for (i, c) in rope.chars_at(p).enumerate().take(limit) {
                    if c == open {
                        depth += 1;
                    } else if c == close {
                        depth -= 1;
                        if depth == 0 {
                            return Some((p, p + i));
                        }
                    }
                }
                return None;
            }
            if ch == close {
                let mut depth = 0usize;
                let mut q = p + 1;
                let mut steps = 0;
                while q > 0 && steps < limit {
                    q -= 1;
                    steps += 1;
                    let c = rope.char(q);
                    if c == close {
                        depth += 1;
                    } else if c == open {
                        depth -= 1;
                        if depth == 0 {
                            return Some((p, q));
                        }
                    }
                }
                return None;
            }
        }
    }
    None
}

/// The leading spaces and tabs of a line's text.
fn leading_whitespace(text: &str) -> &str {
    &text[..text.len() - text.trim_start_matches([' ', '\t']).len()]
}

/// The visual column of `col` chars into `text` (tabs to the next stop).
fn visual_column(text: &str, col: usize, tab: usize) -> usize {
    text.chars().take(col).fold(0, |v, c| {
        if c == '\t' {
            (v / tab + 1) * tab
        } else {
            v + 1
        }
    })
}

/// The lines a range covers: a selection ending at column 0 of a line does
/// not cover that line.
fn covered_lines(rope: &Rope, r: Range) -> (usize, usize) {
    let first = line_of(rope, r.from());
    let mut last = line_of(rope, r.to());
    if last > first && r.to() == line_start(rope, last) {
        last -= 1;
    }
    (first, last)
}

/// The covered line blocks of a selection, merged when they touch.
fn line_blocks(rope: &Rope, sel: &Selection) -> Vec<(usize, usize)> {
    let mut blocks: Vec<(usize, usize)> = Vec::new();
    for r in sel.ranges() {
        let (a, b) = covered_lines(rope, *r);
        match blocks.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => blocks.push((a, b)),
        }
    }
    blocks
}

impl Document {
    /// Replaces each range by its change; the cursor of each goes to
    /// `offset` chars into its replacement. Changes that would overlap an
    /// earlier one are cut to fit.
    fn replace_each(&mut self, kind: EditKind, edits: Vec<(Change, usize)>) {
        let mut kept: Vec<(Change, usize)> = Vec::with_capacity(edits.len());
        for (mut change, offset) in edits {
            if let Some((last, _)) = kept.last() {
                change.start = change.start.max(last.end);
                change.end = change.end.max(change.start);
            }
            kept.push((change, offset));
        }
        let mut shift = 0isize;
        let mut cursors = Vec::with_capacity(kept.len());
        for (c, offset) in &kept {
            let start = c.start.saturating_add_signed(shift);
            cursors.push(Range::point(start + offset));
            shift += to_signed(c.text.chars().count()) - to_signed(c.end - c.start);
        }
        let primary = self.selection().primary_index();
        let Ok(set) = ChangeSet::new(kept.into_iter().map(|(c, _)| c).collect()) else {
            return;
        };
        let after = Selection::new(cursors, primary);
        // The changes come from the document's own ranges, so they fit it.
        let _ = self.apply_selecting(&set, kind, after);
    }

    /// Types `text` at every cursor, replacing what is selected.
    pub fn insert_text(&mut self, text: &str, kind: EditKind) {
        let n = text.chars().count();
        let edits = self
            .selection()
            .ranges()
            .iter()
            .map(|r| (Change::replace(r.from(), r.to(), text), n))
            .collect();
        self.replace_each(kind, edits);
    }

    /// Pastes `text`; with as many cursors as the text has lines, each
    /// cursor gets one line (as VS Code does).
    pub fn paste(&mut self, text: &str) {
        let ranges = self.selection().ranges().to_vec();
        let lines: Vec<&str> = text.lines().collect();
        if ranges.len() > 1 && lines.len() == ranges.len() {
            let edits = ranges
                .iter()
                .zip(lines)
                .map(|(r, l)| (Change::replace(r.from(), r.to(), l), l.chars().count()))
                .collect();
            self.replace_each(EditKind::Other, edits);
        } else {
            let le = self.line_ending().as_str();
            let text = if le == "\r\n" {
                text.replace("\r\n", "\n").replace('\n', "\r\n")
            } else {
                text.replace("\r\n", "\n")
            };
            self.insert_text(&text, EditKind::Other);
        }
    }

    /// Enter: a line break in the document's line ending, indented like the
    /// line; one level more after an opening bracket, and a closing bracket
    /// right after the cursor goes to its own line.
    pub fn newline(&mut self) {
        let rope = self.rope().clone();
        let le = self.line_ending().as_str();
        let unit = self.indent().unit();
        let edits = self
            .selection()
            .ranges()
            .iter()
            .map(|r| {
                let line = line_of(&rope, r.from());
                let start = line_start(&rope, line);
                let before: String = rope.slice(start..r.from()).to_string();
                let indent = leading_whitespace(&before).to_owned();
                let opener = before.trim_end().chars().last();
                let after = (r.to() < rope.len_chars()).then(|| rope.char(r.to()));
                let pair = PAIRS.iter().find(|(o, _)| Some(*o) == opener);
                let (text, offset) = match pair {
                    Some((_, close)) if after == Some(*close) => {
                        let inner = format!("{le}{indent}{unit}");
                        let n = inner.chars().count();
                        (format!("{inner}{le}{indent}"), n)
                    }
                    Some(_) => {
                        let t = format!("{le}{indent}{unit}");
                        let n = t.chars().count();
                        (t, n)
                    }
                    None => {
                        let t = format!("{le}{indent}");
                        let n = t.chars().count();
                        (t, n)
                    }
                };
                (Change::replace(r.from(), r.to(), text), offset)
            })
            .collect();
        self.replace_each(EditKind::Typing, edits);
    }

    /// Backspace: deletes the selection, or the grapheme before each
    /// cursor; in leading soft-tab indentation, back to the previous stop.
    pub fn backspace(&mut self) {
        let rope = self.rope().clone();
        let indent = self.indent();
        let edits = self
            .selection()
            .ranges()
            .iter()
            .map(|r| {
                if !r.is_empty() {
                    return (Change::delete(r.from(), r.to()), 0);
                }
                let p = r.head;
                let line = line_of(&rope, p);
                let start = line_start(&rope, line);
                let before = rope.slice(start..p).to_string();
                let from = if !indent.tabs && !before.is_empty() && before.chars().all(|c| c == ' ')
                {
                    let col = before.chars().count();
                    let stop = (col - 1) / indent.width * indent.width;
                    start + stop
                } else {
                    prev_boundary(&rope, p)
                };
                (Change::delete(from, p), 0)
            })
            .collect();
        self.replace_each(EditKind::Other, edits);
    }

    /// Delete: the selection, or the grapheme after each cursor.
    pub fn delete_forward(&mut self) {
        let rope = self.rope().clone();
        let edits = self
            .selection()
            .ranges()
            .iter()
            .map(|r| {
                let to = if r.is_empty() {
                    next_boundary(&rope, r.head)
                } else {
                    r.to()
                };
                (Change::delete(r.from(), to), 0)
            })
            .collect();
        self.replace_each(EditKind::Other, edits);
    }

    /// Ctrl+Backspace / Ctrl+Delete: the selection, or to the word edge.
    pub fn delete_word(&mut self, backward: bool) {
        let rope = self.rope().clone();
        let edits = self
            .selection()
            .ranges()
            .iter()
            .map(|r| {
                let (from, to) = match (r.is_empty(), backward) {
                    (false, _) => (r.from(), r.to()),
                    (true, true) => (word_left(&rope, r.head), r.head),
                    (true, false) => (r.head, word_right(&rope, r.head)),
                };
                (Change::delete(from, to), 0)
            })
            .collect();
        self.replace_each(EditKind::Other, edits);
    }

    /// Moves every cursor (extending the selections when `extend`).
    pub fn move_cursors(&mut self, motion: Motion, extend: bool) {
        let rope = self.rope().clone();
        let goals = self.goal_columns();
        let mut new_goals = Vec::new();
        let ranges: Vec<Range> = self
            .selection()
            .ranges()
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let head = r.head;
                let vertical = |lines: isize| {
                    let line = line_of(&rope, head);
                    let goal = goals
                        .as_ref()
                        .and_then(|g| g.get(i).copied())
                        .unwrap_or_else(|| column(&rope, head));
                    let target = line.saturating_add_signed(lines);
                    let last = rope.len_chars();
                    let pos = if lines < 0 && line == 0 {
                        0
                    } else if lines > 0 && target >= rope.len_lines() {
                        last
                    } else {
                        let target = target.min(rope.len_lines() - 1);
                        let start = line_start(&rope, target);
                        (start + goal).min(line_end(&rope, target))
                    };
                    (pos, goal)
                };
                let pos = match motion {
                    Motion::Left if !r.is_empty() && !extend => r.from(),
                    Motion::Right if !r.is_empty() && !extend => r.to(),
                    Motion::Left => prev_boundary(&rope, head),
                    Motion::Right => next_boundary(&rope, head),
                    Motion::WordLeft => word_left(&rope, head),
                    Motion::WordRight => word_right(&rope, head),
                    Motion::Up | Motion::Down | Motion::PageUp(_) | Motion::PageDown(_) => {
                        let lines = match motion {
                            Motion::Up => -1,
                            Motion::Down => 1,
                            Motion::PageUp(n) => -to_signed(n.max(1)),
                            Motion::PageDown(n) => to_signed(n.max(1)),
                            _ => 0,
                        };
                        let (pos, goal) = vertical(lines);
                        new_goals.push(goal);
                        pos
                    }
                    Motion::LineStart => {
                        let line = line_of(&rope, head);
                        let start = line_start(&rope, line);
                        let text = line_text(&rope, line);
                        let first = start + leading_whitespace(&text).chars().count();
                        if head == first { start } else { first }
                    }
                    Motion::LineEnd => line_end(&rope, line_of(&rope, head)),
                    Motion::DocStart => 0,
                    Motion::DocEnd => rope.len_chars(),
                };
                r.moved(pos, extend)
            })
            .collect();
        let primary = self.selection().primary_index();
        self.set_selection(Selection::new(ranges, primary));
        if new_goals.len() == self.selection().len() {
            self.set_goal_columns(Some(new_goals));
        }
    }

    /// Ctrl+A.
    pub fn select_all(&mut self) {
        let len = self.rope().len_chars();
        self.set_selection(Selection::single(Range::new(0, len)));
    }

    /// Ctrl+L: selects each cursor's whole line (with its break); again,
    /// the next line too.
    pub fn select_line(&mut self) {
        let rope = self.rope().clone();
        let sel = self.selection().transform(|r| {
            let (first, last) = covered_lines(&rope, r);
            let start = line_start(&rope, first);
            let whole_end = line_start(&rope, last + 1);
            let end = if last + 1 >= rope.len_lines() {
                rope.len_chars()
            } else {
                whole_end
            };
            if r.from() == start && r.to() == end && end < rope.len_chars() {
                let next_end = if last + 2 >= rope.len_lines() {
                    rope.len_chars()
                } else {
                    line_start(&rope, last + 2)
                };
                Range::new(start, next_end)
            } else {
                Range::new(start, end)
            }
        });
        self.set_selection(sel);
    }

    /// Ctrl+Alt+Up/Down: a new cursor on the line above or below the
    /// primary, at the same column.
    pub fn add_cursor_vertical(&mut self, down: bool) {
        let rope = self.rope().clone();
        let sel = self.selection().clone();
        let r = if down {
            sel.ranges()[sel.len() - 1]
        } else {
            sel.ranges()[0]
        };
        let line = line_of(&rope, r.head);
        let target = if down {
            line + 1
        } else if line == 0 {
            return;
        } else {
            line - 1
        };
        if target >= rope.len_lines() {
            return;
        }
        let col = column(&rope, r.head);
        let pos = (line_start(&rope, target) + col).min(line_end(&rope, target));
        self.set_selection(sel.with(Range::point(pos)));
    }

    /// Alt+click: a new cursor at `pos` (or removes the cursor there).
    pub fn toggle_cursor_at(&mut self, pos: usize) {
        let sel = self.selection().clone();
        let ranges = sel.ranges();
        if ranges.len() > 1
            && let Some(i) = ranges.iter().position(|r| r.is_empty() && r.head == pos)
        {
            let mut rest = ranges.to_vec();
            rest.remove(i);
            let last = rest.len() - 1;
            self.set_selection(Selection::new(rest, last));
            return;
        }
        self.set_selection(sel.with(Range::point(pos)));
    }

    /// Ctrl+D: selects the word at the cursor, or adds the next occurrence
    /// of the primary selection's text as a new selection (wrapping).
    pub fn add_next_occurrence(&mut self) {
        let rope = self.rope().clone();
        let sel = self.selection().clone();
        let primary = sel.primary();
        if primary.is_empty() {
            if let Some((a, b)) = word_at(&rope, primary.head) {
                let mut ranges = sel.ranges().to_vec();
                ranges[sel.primary_index()] = Range::new(a, b);
                self.set_selection(Selection::new(ranges, sel.primary_index()));
            }
            return;
        }
        let needle: String = rope.slice(primary.from()..primary.to()).to_string();
        let text = rope.to_string();
        let after = rope.char_to_byte(sel.ranges().last().map_or(0, |r| r.to()));
        let found = text[after..]
            .find(&needle)
            .map(|i| i + after)
            .or_else(|| text.find(&needle));
        if let Some(byte) = found {
            let a = rope.byte_to_char(byte);
            let b = a + needle.chars().count();
            let range = Range::new(a, b);
            if !sel.ranges().iter().any(|r| r.from() == a && r.to() == b) {
                self.set_selection(sel.with(range));
            }
        }
    }

    /// Tab: indents the covered lines when a selection spans lines,
    /// otherwise inserts indentation up to the next tab stop.
    pub fn tab(&mut self) {
        let rope = self.rope().clone();
        let spans_lines = self
            .selection()
            .ranges()
            .iter()
            .any(|r| covered_lines(&rope, *r).0 != covered_lines(&rope, *r).1);
        if spans_lines {
            self.indent_lines();
            return;
        }
        let indent = self.indent();
        let edits = self
            .selection()
            .ranges()
            .iter()
            .map(|r| {
                let text = if indent.tabs {
                    "\t".to_owned()
                } else {
                    let line = line_of(&rope, r.from());
                    let col = visual_column(
                        &line_text(&rope, line),
                        column(&rope, r.from()),
                        indent.width,
                    );
                    " ".repeat(indent.width - col % indent.width)
                };
                let n = text.chars().count();
                (Change::replace(r.from(), r.to(), text), n)
            })
            .collect();
        self.replace_each(EditKind::Typing, edits);
    }

    /// Indents every covered, non-empty line by one level.
    pub fn indent_lines(&mut self) {
        let rope = self.rope().clone();
        let unit = self.indent().unit();
        let mut changes = Vec::new();
        for (a, b) in line_blocks(&rope, self.selection()) {
            for line in a..=b {
                if line_start(&rope, line) != line_end(&rope, line) {
                    changes.push(Change::insert(line_start(&rope, line), unit.clone()));
                }
            }
        }
        self.apply_lines(changes);
    }

    /// Shift+Tab: removes one level of indentation from the covered lines.
    pub fn outdent_lines(&mut self) {
        let rope = self.rope().clone();
        let width = self.indent().width;
        let mut changes = Vec::new();
        for (a, b) in line_blocks(&rope, self.selection()) {
            for line in a..=b {
                let text = line_text(&rope, line);
                let n = if text.starts_with('\t') {
                    1
                } else {
                    text.chars().take(width).take_while(|c| *c == ' ').count()
                };
                if n > 0 {
                    let start = line_start(&rope, line);
                    changes.push(Change::delete(start, start + n));
                }
            }
        }
        self.apply_lines(changes);
    }

    /// Applies line-start changes, mapping the selection through them (a
    /// selection starting at column 0 keeps starting there).
    fn apply_lines(&mut self, changes: Vec<Change>) {
        let Ok(set) = ChangeSet::new(changes) else {
            return;
        };
        let rope = self.rope().clone();
        let after = self.selection().transform(|r| {
            let keep = |p: usize| {
                if p == line_start(&rope, line_of(&rope, p)) && p != r.head {
                    p
                } else {
                    set.map_offset(p)
                }
            };
            let (a, h) = (keep(r.anchor), set.map_offset(r.head));
            Range::new(a, h)
        });
        let _ = self.apply_selecting(&set, EditKind::Other, after);
    }

    /// Ctrl+/: comments the covered lines out with `token` (at their
    /// common indentation), or back in when all of them are comments.
    pub fn toggle_comment(&mut self, token: &str) {
        let rope = self.rope().clone();
        let mut lines = Vec::new();
        for (a, b) in line_blocks(&rope, self.selection()) {
            lines.extend(a..=b);
        }
        let texts: Vec<(usize, String)> = lines
            .iter()
            .map(|l| (*l, line_text(&rope, *l)))
            .filter(|(_, t)| !t.trim().is_empty())
            .collect();
        if texts.is_empty() {
            return;
        }
        let all = texts.iter().all(|(_, t)| t.trim_start().starts_with(token));
        let mut changes = Vec::new();
        if all {
            for (l, t) in &texts {
                let lead = leading_whitespace(t).chars().count();
                let rest = &t.trim_start()[token.len()..];
                let n = token.chars().count() + usize::from(rest.starts_with(' '));
                let at = line_start(&rope, *l) + lead;
                changes.push(Change::delete(at, at + n));
            }
        } else {
            let col = texts
                .iter()
                .map(|(_, t)| leading_whitespace(t).chars().count())
                .min()
                .unwrap_or(0);
            for (l, _) in &texts {
                changes.push(Change::insert(
                    line_start(&rope, *l) + col,
                    format!("{token} "),
                ));
            }
        }
        let Ok(set) = ChangeSet::new(changes) else {
            return;
        };
        let _ = self.apply(&set, EditKind::Other);
    }

    /// Alt+Up/Down: moves the covered lines one line up or down.
    pub fn move_lines(&mut self, down: bool) {
        let rope = self.rope().clone();
        let le = self.line_ending().as_str();
        let blocks = line_blocks(&rope, self.selection());
        let last_line = rope.len_lines() - 1;
        let mut changes = Vec::new();
        let mut shifts: Vec<(usize, usize, isize)> = Vec::new();
        for (a, b) in blocks {
            let (lo, hi) = if down {
                if b >= last_line {
                    continue;
                }
                (a, b + 1)
            } else {
                if a == 0 {
                    continue;
                }
                (a - 1, b)
            };
            let block: Vec<String> = (a..=b).map(|l| line_text(&rope, l)).collect();
            let other = line_text(&rope, if down { hi } else { lo });
            let mut lines = Vec::new();
            if down {
                lines.push(other.clone());
                lines.extend(block);
            } else {
                lines.extend(block);
                lines.push(other.clone());
            }
            let start = line_start(&rope, lo);
            let end = line_end(&rope, hi);
            changes.push(Change::replace(start, end, lines.join(le)));
            let step = to_signed(other.chars().count() + le.chars().count());
            shifts.push((
                line_start(&rope, a),
                line_end(&rope, b),
                if down { step } else { -step },
            ));
        }
        let Ok(set) = ChangeSet::new(changes) else {
            return;
        };
        let after = self.selection().transform(|r| {
            let shift = |p: usize| {
                shifts
                    .iter()
                    .find(|(s, e, _)| p >= *s && p <= *e)
                    .map_or(p, |(_, _, d)| p.saturating_add_signed(*d))
            };
            Range::new(shift(r.anchor), shift(r.head))
        });
        let _ = self.apply_selecting(&set, EditKind::Other, after);
    }

    /// Shift+Alt+Up/Down: copies the covered lines above or below; the
    /// cursors go with the copy below.
    pub fn duplicate_lines(&mut self, down: bool) {
        let rope = self.rope().clone();
        let le = self.line_ending().as_str();
        let mut changes = Vec::new();
        let mut shifts = Vec::new();
        for (a, b) in line_blocks(&rope, self.selection()) {
            let text = rope
                .slice(line_start(&rope, a)..line_end(&rope, b))
                .to_string();
            let at = line_end(&rope, b);
            let inserted = format!("{le}{text}");
            let n = to_signed(inserted.chars().count());
            changes.push(Change::insert(at, inserted));
            shifts.push((line_start(&rope, a), at, n));
        }
        let Ok(set) = ChangeSet::new(changes) else {
            return;
        };
        // A cursor in block j moves by the copies inserted before it, and
        // by its own block's copy when the cursors go with the copy below.
        let after = self.selection().transform(|r| {
            let place = |p: usize| {
                let mut q = p;
                for (s, e, n) in &shifts {
                    if *e < p || (down && (*s..=*e).contains(&p)) {
                        q = q.saturating_add_signed(*n);
                    }
                }
                q
            };
            Range::new(place(r.anchor), place(r.head))
        });
        let _ = self.apply_selecting(&set, EditKind::Other, after);
    }

    /// Ctrl+Shift+K: deletes the covered lines.
    pub fn delete_lines(&mut self) {
        let rope = self.rope().clone();
        let len = rope.len_chars();
        let mut edits = Vec::new();
        for (a, b) in line_blocks(&rope, self.selection()) {
            let (from, to) = if b + 1 < rope.len_lines() {
                (line_start(&rope, a), line_start(&rope, b + 1))
            } else if a > 0 {
                // The last line takes the break before it instead.
                (line_end(&rope, a - 1), len)
            } else {
                (0, len)
            };
            edits.push((Change::delete(from, to), 0));
        }
        self.replace_each(EditKind::Other, edits);
    }

    /// Moves the cursor to the start of `line` (0-based, clamped).
    pub fn go_to_line(&mut self, line: usize) {
        let rope = self.rope();
        let line = line.min(rope.len_lines().saturating_sub(1));
        let pos = line_start(rope, line);
        self.set_selection(Selection::point(pos));
    }
}

fn to_signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}
