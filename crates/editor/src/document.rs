//! A text document: a rope, its edit history with undo and redo, and
//! whether it differs from what was last saved.

use ropey::Rope;

use crate::change::{ChangeSet, EditError};
use crate::selection::Selection;

/// How an edit joins the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditKind {
    /// A typed character: consecutive typing at the cursor is one undo step
    /// (a typed line break is the step's last character).
    Typing,
    /// Anything else (paste, delete, replace, an external reload) is its
    /// own step.
    Other,
}

/// The line ending a document was read with, kept when it is saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    Lf,
    CrLf,
}

impl LineEnding {
    /// The first line break decides; a text without one is `Lf`.
    pub fn detect(text: &str) -> Self {
        match text.find('\n') {
            Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => Self::CrLf,
            _ => Self::Lf,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lf => "\n",
            Self::CrLf => "\r\n",
        }
    }
}

/// One undo step: the change sets applied, with their inverses, and the
/// states before and after.
#[derive(Debug, Clone)]
struct Step {
    applied: Vec<(ChangeSet, ChangeSet)>,
    before: u64,
    after: u64,
    /// Still taking typed characters, and where the next one must land.
    open_at: Option<Vec<usize>>,
    /// The selection before the step and after it (restored by undo and
    /// redo).
    selection_before: Selection,
    selection_after: Selection,
}

/// How a document indents: soft tabs of `width` spaces, or tab characters
/// shown `width` columns wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Indent {
    pub tabs: bool,
    pub width: usize,
}

impl Default for Indent {
    fn default() -> Self {
        Self {
            tabs: false,
            width: 4,
        }
    }
}

impl Indent {
    /// Guesses from the text: tabs when more indented lines start with a
    /// tab than with spaces; the width is the smallest space indent seen
    /// (2, 4 or 8), 4 otherwise.
    pub fn detect(text: &str) -> Self {
        let (mut tabs, mut spaces, mut smallest) = (0usize, 0usize, usize::MAX);
        for line in text.lines().take(10_000) {
            if line.starts_with('\t') {
                tabs += 1;
            } else if line.starts_with(' ') {
                let n = line.len() - line.trim_start_matches(' ').len();
                if !line.trim_start().is_empty() && !line.trim_start().starts_with('*') {
                    spaces += 1;
                    smallest = smallest.min(n);
                }
            }
        }
        let width = match smallest {
            2 | 4 | 8 => smallest,
            _ => 4,
        };
        Self {
            tabs: tabs > spaces,
            width,
        }
    }

    /// One level of indentation as text.
    pub fn unit(self) -> String {
        if self.tabs {
            "\t".to_owned()
        } else {
            " ".repeat(self.width)
        }
    }
}

/// A document.
#[derive(Debug, Clone)]
pub struct Document {
    rope: Rope,
    line_ending: LineEnding,
    indent: Indent,
    selection: Selection,
    /// The columns vertical motion aims at, one per range, kept while the
    /// cursors only move up and down.
    goals: Option<Vec<usize>>,
    /// Increases with every change (the LSP document version).
    version: i32,
    /// Identifies the current text among the states the history can reach.
    state: u64,
    next_state: u64,
    saved_state: u64,
    undo: Vec<Step>,
    redo: Vec<Step>,
    /// The change sets of the last versions, in order, for listeners that
    /// follow edits incrementally (syntax trees, language servers).
    log: std::collections::VecDeque<(i32, Vec<ChangeSet>)>,
}

/// How many versions [`Document::changes_since`] can replay.
const LOG_VERSIONS: usize = 512;

impl Document {
    /// A document holding `text` as saved on disk.
    pub fn from_text(text: &str) -> Self {
        Self::from_rope(Rope::from_str(text))
    }

    /// A document holding `rope` as saved on disk (line ending and
    /// indentation guessed from its first 64 KiB).
    pub fn from_rope(rope: Rope) -> Self {
        let head = rope.slice(..rope.len_chars().min(1 << 16)).to_string();
        Self {
            line_ending: LineEnding::detect(&head),
            indent: Indent::detect(&head),
            rope,
            selection: Selection::point(0),
            goals: None,
            version: 0,
            state: 0,
            next_state: 1,
            saved_state: 0,
            undo: Vec::new(),
            redo: Vec::new(),
            log: std::collections::VecDeque::new(),
        }
    }

    pub fn rope(&self) -> &Rope {
        &self.rope
    }

    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    pub fn version(&self) -> i32 {
        self.version
    }

    pub fn line_ending(&self) -> LineEnding {
        self.line_ending
    }

    pub fn indent(&self) -> Indent {
        self.indent
    }

    pub fn set_indent(&mut self, indent: Indent) {
        self.indent = indent;
    }

    pub fn selection(&self) -> &Selection {
        &self.selection
    }

    /// Replaces the selection (clamped to the text).
    pub fn set_selection(&mut self, selection: Selection) {
        self.selection = selection.clamped(self.rope.len_chars());
        self.goals = None;
    }

    pub(crate) fn goal_columns(&self) -> Option<Vec<usize>> {
        self.goals.clone()
    }

    pub(crate) fn set_goal_columns(&mut self, goals: Option<Vec<usize>>) {
        self.goals = goals;
    }

    /// Whether the text differs from the last save (undoing back to the
    /// saved text makes it clean again).
    pub fn is_dirty(&self) -> bool {
        self.state != self.saved_state
    }

    /// Records that the current text is what is on disk now.
    pub fn mark_saved(&mut self) {
        self.saved_state = self.state;
    }

    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// Applies a change set and records it for undo; the selection is
    /// mapped through it (cursors stay with their text).
    pub fn apply(&mut self, set: &ChangeSet, kind: EditKind) -> Result<(), EditError> {
        let after = self.selection.map(set);
        self.apply_selecting(set, kind, after)
    }

    /// Applies a change set and sets the selection after it to `after`
    /// (an editing command knows where its cursors go).
    pub fn apply_selecting(
        &mut self,
        set: &ChangeSet,
        kind: EditKind,
        after: Selection,
    ) -> Result<(), EditError> {
        if set.is_empty() {
            self.set_selection(after);
            return Ok(());
        }
        let inverse = set.invert(&self.rope)?;
        set.apply(&mut self.rope)?;
        self.redo.clear();
        self.version += 1;
        self.log_version(vec![set.clone()]);
        // Where the next typed characters must land to join this step: the
        // end of each typed insertion (several with several cursors).
        let typed_at = (kind == EditKind::Typing
            && set.changes().iter().all(|c| !c.text.contains('\n')))
        .then(|| {
            let mut shift = 0isize;
            set.changes()
                .iter()
                .map(|c| {
                    let inserted = c.text.chars().count();
                    let end = (c.start + inserted).saturating_add_signed(shift);
                    shift += signed(inserted) - signed(c.end - c.start);
                    end
                })
                .collect::<Vec<_>>()
        });
        let joins = kind == EditKind::Typing
            && set.changes().iter().all(|c| c.start == c.end)
            && self.undo.last().is_some_and(|step| {
                step.open_at.as_deref().is_some_and(|at| {
                    at.len() == set.changes().len()
                        && at.iter().zip(set.changes()).all(|(a, c)| *a == c.start)
                })
            });
        self.goals = None;
        let selection_before =
            std::mem::replace(&mut self.selection, after.clamped(self.rope.len_chars()));
        if joins {
            if let Some(step) = self.undo.last_mut() {
                step.applied.push((set.clone(), inverse));
                step.open_at = typed_at;
                self.state = self.next_state;
                step.after = self.state;
                step.selection_after = self.selection.clone();
            }
        } else {
            let before = self.state;
            self.state = self.next_state;
            self.undo.push(Step {
                applied: vec![(set.clone(), inverse)],
                before,
                after: self.state,
                open_at: typed_at,
                selection_before,
                selection_after: self.selection.clone(),
            });
        }
        self.next_state += 1;
        Ok(())
    }

    /// Notes the change sets that made the current version.
    fn log_version(&mut self, sets: Vec<ChangeSet>) {
        if self.log.len() == LOG_VERSIONS {
            self.log.pop_front();
        }
        self.log.push_back((self.version, sets));
    }

    /// The change sets applied since `version`, in order (each relative to
    /// the text before it); `None` when that version is too old to replay
    /// (the listener reads the whole text again).
    pub fn changes_since(&self, version: i32) -> Option<Vec<ChangeSet>> {
        if version == self.version {
            return Some(Vec::new());
        }
        let first = self.log.iter().position(|(v, _)| *v == version + 1)?;
        Some(
            self.log
                .iter()
                .skip(first)
                .flat_map(|(_, sets)| sets.iter().cloned())
                .collect(),
        )
    }

    /// Undoes the last step; whether there was one.
    pub fn undo(&mut self) -> bool {
        let Some(mut step) = self.undo.pop() else {
            return false;
        };
        for (_, inverse) in step.applied.iter().rev() {
            // Inverses were computed against exactly these texts.
            if inverse.apply(&mut self.rope).is_err() {
                return false;
            }
        }
        step.open_at = None;
        self.state = step.before;
        self.selection = step.selection_before.clone().clamped(self.rope.len_chars());
        self.version += 1;
        self.log_version(
            step.applied
                .iter()
                .rev()
                .map(|(_, inv)| inv.clone())
                .collect(),
        );
        self.redo.push(step);
        true
    }

    /// Redoes the last undone step; whether there was one.
    pub fn redo(&mut self) -> bool {
        let Some(step) = self.redo.pop() else {
            return false;
        };
        for (set, _) in &step.applied {
            if set.apply(&mut self.rope).is_err() {
                return false;
            }
        }
        self.state = step.after;
        self.selection = step.selection_after.clone().clamped(self.rope.len_chars());
        self.version += 1;
        self.log_version(step.applied.iter().map(|(set, _)| set.clone()).collect());
        self.undo.push(step);
        true
    }

    /// Takes the text now on disk (an agent's edit, another program's) as
    /// one undoable step made of only the lines that differ, so cursors
    /// elsewhere stay put, and marks it saved. Returns the lines of the new
    /// text that changed (for marking them). Texts over 4 MiB are replaced
    /// whole.
    pub fn reload(&mut self, text: &str) -> Vec<usize> {
        let old = self.text();
        if old == text {
            self.mark_saved();
            return Vec::new();
        }
        let mut changes = Vec::new();
        let mut lines = Vec::new();
        if old.len().max(text.len()) > 4 << 20 {
            changes.push(crate::change::Change::replace(
                0,
                self.rope.len_chars(),
                text,
            ));
            lines.extend(0..Rope::from_str(text).len_lines());
        } else {
            let new_rope = Rope::from_str(text);
            let diff = similar::TextDiff::configure()
                .timeout(std::time::Duration::from_millis(200))
                .diff_lines(old.as_str(), text);
            for op in diff.ops() {
                let (old_range, new_range) = (op.old_range(), op.new_range());
                if matches!(op, similar::DiffOp::Equal { .. }) {
                    continue;
                }
                let start = self.rope.line_to_char(old_range.start);
                let end = self.rope.line_to_char(old_range.end);
                let from = new_rope.line_to_char(new_range.start);
                let to = new_rope.line_to_char(new_range.end);
                changes.push(crate::change::Change::replace(
                    start,
                    end,
                    new_rope.slice(from..to).to_string(),
                ));
                lines.extend(new_range);
            }
        }
        let applied = ChangeSet::new(changes).and_then(|set| self.apply(&set, EditKind::Other));
        if applied.is_err() {
            // Cannot happen with ranges from the diff; replace whole then.
            let _ = self.replace_all(text);
        }
        self.mark_saved();
        lines
    }

    /// Replaces the whole text as one undoable step (a reload from disk
    /// after an agent's edit, say).
    pub fn replace_all(&mut self, text: &str) -> Result<(), EditError> {
        let set = ChangeSet::single(crate::change::Change::replace(
            0,
            self.rope.len_chars(),
            text,
        ))?;
        self.apply(&set, EditKind::Other)
    }
}

fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::Change;
    use pretty_assertions::assert_eq;

    fn typed(doc: &mut Document, at: usize, s: &str) {
        doc.apply(
            &ChangeSet::single(Change::insert(at, s)).unwrap(),
            EditKind::Typing,
        )
        .unwrap();
    }

    #[test]
    fn consecutive_typing_is_one_undo_step_and_a_line_break_ends_it() {
        let mut doc = Document::from_text("");
        for (i, ch) in ["안", "녕", " ", "x"].iter().enumerate() {
            typed(&mut doc, i, ch);
        }
        typed(&mut doc, 4, "\n");
        typed(&mut doc, 5, "y");
        assert_eq!(doc.text(), "안녕 x\ny");
        // The line break closes the step it was typed in.
        assert!(doc.undo());
        assert_eq!(doc.text(), "안녕 x\n");
        assert!(doc.undo());
        assert_eq!(doc.text(), "");
        assert!(!doc.undo());
        assert!(doc.redo());
        assert_eq!(doc.text(), "안녕 x\n");
        assert!(doc.redo() && !doc.redo());
        assert_eq!(doc.text(), "안녕 x\ny");
    }

    #[test]
    fn typing_elsewhere_or_another_edit_starts_a_new_step() {
        let mut doc = Document::from_text("ab");
        typed(&mut doc, 2, "c");
        typed(&mut doc, 0, "z");
        doc.apply(
            &ChangeSet::single(Change::delete(0, 1)).unwrap(),
            EditKind::Other,
        )
        .unwrap();
        typed(&mut doc, 3, "d");
        assert_eq!(doc.text(), "abcd");
        let mut texts = Vec::new();
        while doc.undo() {
            texts.push(doc.text());
        }
        assert_eq!(texts, ["abc", "zabc", "abc", "ab"]);
    }

    #[test]
    fn dirtiness_follows_the_saved_text_through_undo_and_redo() {
        let mut doc = Document::from_text("v1\r\nline\r\n");
        assert_eq!(doc.line_ending(), LineEnding::CrLf);
        assert!(!doc.is_dirty());
        doc.replace_all("v2\r\n").unwrap();
        assert!(doc.is_dirty());
        doc.mark_saved();
        assert!(!doc.is_dirty());
        assert!(doc.undo());
        assert!(doc.is_dirty());
        assert_eq!(doc.text(), "v1\r\nline\r\n");
        assert!(doc.redo());
        assert!(!doc.is_dirty());
        // A new edit after an undo drops the redo branch.
        assert!(doc.undo());
        typed(&mut doc, 0, "x");
        assert!(!doc.can_redo());
        assert!(doc.is_dirty());
        assert_eq!(doc.version(), 5);
    }
}
