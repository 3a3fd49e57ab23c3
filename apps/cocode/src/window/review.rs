//! The Review panel's state: one task's changes in a chosen scope, the hunk
//! the keyboard is on, and what the person's last action said. The model
//! (hunks, undo, keep, checkpoints) is the host's `task_review`; this is
//! what the window remembers between frames.

use crate::host::task_review::{CallMark, MessageMark, ReviewScope, TaskReview};
use cocode_workspace::diff::{LineKind, TextHunk};

/// What the Review panel asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewCommand {
    /// Review this task (since the person's last review).
    Open(String),
    /// Show another part of the task.
    Scope(ReviewScope),
    /// Put the hunk back as it was (`hunk` `None`: the whole file).
    Undo {
        path: String,
        hunk: Option<usize>,
    },
    /// Mark the hunk reviewed as it is.
    Keep {
        path: String,
        hunk: usize,
    },
    /// Tick (or untick) a file's "viewed".
    Viewed {
        path: String,
        viewed: bool,
    },
    /// Everything shown is reviewed: "since last review" starts after it.
    MarkReviewed,
    /// The keyboard's cursor to the next (or previous) hunk.
    Step {
        forward: bool,
    },
    /// Keep, or undo, the hunk under the keyboard's cursor.
    KeepAtCursor,
    UndoAtCursor,
    /// Put the cursor on a hunk (file index, hunk number; `None`: the file).
    Select {
        file: usize,
        hunk: Option<usize>,
    },
    /// Draw hunks side by side, or unified.
    Layout(HunkLayout),
    /// Open the file in the editor at a line (1-based).
    OpenAt {
        path: String,
        line: usize,
    },
    /// Ask before restoring the files to before message K.
    AskRestore(usize),
    /// The person confirmed (or cancelled) the restore asked about.
    ConfirmRestore,
    CancelRestore,
}

/// One place the keyboard's cursor can be: a hunk, or a file shown whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// Index into the review's files.
    pub file: usize,
    /// The hunk's number (1-based); `None` for a file without hunks.
    pub hunk: Option<usize>,
}

/// The Review panel.
#[derive(Debug, Default)]
pub struct ReviewPanel {
    /// The task under review.
    pub task_id: Option<String>,
    pub prompt: String,
    pub scope: Option<ReviewScope>,
    pub review: Option<TaskReview>,
    /// The task's attempts (1-based count) and checkpoints, for the scope
    /// picker and "Restore to before".
    pub attempts: u32,
    pub messages: Vec<MessageMark>,
    /// The tool calls that changed files, for the scope picker.
    pub calls: Vec<CallMark>,
    /// A request is on its way.
    pub loading: bool,
    pub cursor: Option<Cursor>,
    /// What the last action did, or why it was refused.
    pub note: Option<String>,
    pub error: Option<String>,
    /// A restore to before message K waits for the person's yes.
    pub confirm_restore: Option<usize>,
    /// A restore to before message K is on its way: once done, the
    /// message goes back into the composer to be edited and sent again.
    pub restoring: Option<usize>,
    /// Scroll the cursor's hunk into view on the next frame.
    pub scroll_to_cursor: bool,
    /// The panel has the keyboard: the person last clicked in it, or just
    /// opened it.
    pub keys_here: bool,
    /// How hunks are drawn (kept in `window.json` across reviews and
    /// sessions).
    pub layout: HunkLayout,
}

/// How the Review panel draws a hunk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HunkLayout {
    /// One column, removed lines above the added ones.
    #[default]
    Unified,
    /// Two columns, before and after, a removal facing what replaced it.
    SideBySide,
}

impl HunkLayout {
    pub fn of_saved(side_by_side: bool) -> Self {
        if side_by_side {
            Self::SideBySide
        } else {
            Self::Unified
        }
    }
}

impl ReviewPanel {
    /// Every place the cursor can go, in file order (files marked viewed
    /// are passed over).
    pub fn stops(&self) -> Vec<Cursor> {
        let Some(review) = &self.review else {
            return Vec::new();
        };
        review
            .files
            .iter()
            .enumerate()
            // A file marked viewed is folded away, as GitHub folds it.
            .filter(|(_, f)| !f.viewed)
            .flat_map(|(i, f)| {
                let hunks = f.hunks();
                if hunks.is_empty() {
                    vec![Cursor {
                        file: i,
                        hunk: None,
                    }]
                } else {
                    hunks
                        .iter()
                        .map(|h| Cursor {
                            file: i,
                            hunk: Some(h.number),
                        })
                        .collect()
                }
            })
            .collect()
    }

    /// Moves the cursor one stop on (or back), wrapping; the first stop
    /// when there was none.
    pub fn step(&mut self, forward: bool) {
        let stops = self.stops();
        if stops.is_empty() {
            self.cursor = None;
            return;
        }
        let at = self.cursor.and_then(|c| stops.iter().position(|s| *s == c));
        let next = match (at, forward) {
            (None, true) => 0,
            (None, false) => stops.len() - 1,
            (Some(i), true) => (i + 1) % stops.len(),
            (Some(i), false) => (i + stops.len() - 1) % stops.len(),
        };
        self.cursor = Some(stops[next]);
        self.scroll_to_cursor = true;
    }

    /// Keeps the cursor on a stop that still exists after the review was
    /// computed again: the same one, else the one now at its place, else
    /// the last.
    pub fn settle_cursor(&mut self, before: Option<usize>) {
        let stops = self.stops();
        if stops.is_empty() {
            self.cursor = None;
            return;
        }
        if self.cursor.is_some_and(|c| stops.contains(&c)) {
            return;
        }
        let at = before.unwrap_or(0).min(stops.len() - 1);
        self.cursor = Some(stops[at]);
    }

    /// Where the cursor is among the stops.
    pub fn cursor_index(&self) -> Option<usize> {
        let c = self.cursor?;
        self.stops().iter().position(|s| *s == c)
    }

    /// The file path and hunk under the cursor.
    pub fn at_cursor(&self) -> Option<(String, Option<usize>)> {
        let c = self.cursor?;
        let file = self.review.as_ref()?.files.get(c.file)?;
        Some((file.path.to_string(), c.hunk))
    }

    /// "N files to review" for the status bar: files not marked viewed in
    /// the review since the last one.
    pub fn unviewed(&self) -> usize {
        self.review
            .as_ref()
            .map_or(0, |r| r.files.iter().filter(|f| !f.viewed).count())
    }
}

/// Each line's number before and after (1-based): a context line has both,
/// a removed line only the one before, an added line only the one after.
pub fn line_numbers(hunk: &TextHunk) -> Vec<(Option<usize>, Option<usize>)> {
    let (mut old, mut new) = (hunk.old_start.max(1), hunk.new_start.max(1));
    hunk.lines
        .iter()
        .map(|line| match line.kind {
            LineKind::Context => {
                old += 1;
                new += 1;
                (Some(old - 1), Some(new - 1))
            }
            LineKind::Removed => {
                old += 1;
                (Some(old - 1), None)
            }
            LineKind::Added => {
                new += 1;
                (None, Some(new - 1))
            }
        })
        .collect()
}

/// A hunk's rows side by side: (line before, line after) as indices into
/// its lines. Context lines face themselves; a run of removed lines and the
/// run of added lines after it share rows, first with first, as GitHub and
/// VS Code pair them, and the longer run's rest faces nothing.
pub fn side_by_side_rows(hunk: &TextHunk) -> Vec<(Option<usize>, Option<usize>)> {
    let lines = &hunk.lines;
    let run = |from: usize, kind: LineKind| {
        from + lines[from..].iter().take_while(|l| l.kind == kind).count()
    };
    let mut rows = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        if lines[i].kind == LineKind::Context {
            rows.push((Some(i), Some(i)));
            i += 1;
            continue;
        }
        let removed_end = run(i, LineKind::Removed);
        let added_end = run(removed_end, LineKind::Added);
        let (removed, added) = (i..removed_end, removed_end..added_end);
        for k in 0..removed.len().max(added.len()) {
            let left = (k < removed.len()).then(|| removed.start + k);
            let right = (k < added.len()).then(|| added.start + k);
            rows.push((left, right));
        }
        i = added_end;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::task_review::{FileChange, FileContent, ReviewFile, ReviewHunk, ReviewScope};
    use cocode_workspace::diff::text_hunks;
    use pretty_assertions::assert_eq;

    fn file(path: &str, hunks: usize, viewed: bool) -> ReviewFile {
        let lines: Vec<String> = (0..hunks * 10).map(|i| i.to_string()).collect();
        let before = lines.join("\n") + "\n";
        let after = lines
            .iter()
            .enumerate()
            .map(|(i, l)| if i % 10 == 5 { "x" } else { l.as_str() })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n";
        let hunks: Vec<ReviewHunk> = text_hunks(&before, &after)
            .into_iter()
            .enumerate()
            .map(|(i, hunk)| ReviewHunk {
                number: i + 1,
                hunk,
                kept: false,
                fingerprint: String::new(),
                spans: Vec::new(),
            })
            .collect();
        ReviewFile {
            path: cocode_core::NormalizedPath::try_from(path.to_owned()).unwrap(),
            previous_path: None,
            change: FileChange::Modified,
            content: if hunks.is_empty() {
                FileContent::Binary
            } else {
                FileContent::Text(hunks)
            },
            counts: (0, 0),
            before: None,
            after: None,
            undo: Ok(()),
            viewed,
        }
    }

    #[expect(
        clippy::unnecessary_wraps,
        reason = "compared with the panel's cursor, an Option"
    )]
    fn at(file: usize, hunk: Option<usize>) -> Option<Cursor> {
        Some(Cursor { file, hunk })
    }

    #[test]
    fn the_cursor_goes_round_the_hunks_passing_over_viewed_files() {
        let mut panel = ReviewPanel {
            review: Some(TaskReview {
                task_id: cocode_core::TaskId::new("t1").unwrap(),
                scope: ReviewScope::All,
                files: vec![
                    file("a.txt", 2, false),
                    file("b.txt", 3, true),
                    file("c.bin", 0, false),
                ],
                newest_seq: Some(3),
                reviewed_upto: None,
            }),
            ..ReviewPanel::default()
        };
        assert_eq!(panel.unviewed(), 2);
        let mut seen = Vec::new();
        for _ in 0..4 {
            panel.step(true);
            seen.push(panel.cursor);
        }
        assert_eq!(
            seen,
            vec![at(0, Some(1)), at(0, Some(2)), at(2, None), at(0, Some(1))]
        );
        panel.step(false);
        assert_eq!(panel.cursor, at(2, None));
        assert_eq!(panel.at_cursor(), Some(("c.bin".to_owned(), None)));
        // After an undo the review has one hunk fewer: the cursor keeps
        // its place, or takes the one now there.
        panel.cursor = at(0, Some(2));
        if let Some(r) = panel.review.as_mut() {
            r.files[0] = file("a.txt", 1, false);
        }
        panel.settle_cursor(Some(1));
        assert_eq!(panel.cursor, at(2, None));
    }

    #[test]
    fn side_by_side_pairs_a_removal_with_the_additions_after_it_and_numbers_each_side() {
        let before = "a\nb\nc\nd\ne\nf\n";
        let after = "a\nB\nc\nd\nX\nY\nZ\n";
        let hunks = text_hunks(before, after);
        assert_eq!(hunks.len(), 1);
        let hunk = &hunks[0];
        let texts: Vec<String> = hunk
            .lines
            .iter()
            .map(|l| format!("{:?}:{}", l.kind, l.text.trim_end()))
            .collect();
        assert_eq!(
            texts,
            [
                "Context:a",
                "Removed:b",
                "Added:B",
                "Context:c",
                "Context:d",
                "Removed:e",
                "Removed:f",
                "Added:X",
                "Added:Y",
                "Added:Z"
            ]
        );
        assert_eq!(
            side_by_side_rows(hunk),
            vec![
                (Some(0), Some(0)),
                (Some(1), Some(2)),
                (Some(3), Some(3)),
                (Some(4), Some(4)),
                (Some(5), Some(7)),
                (Some(6), Some(8)),
                (None, Some(9)),
            ]
        );
        assert_eq!(
            line_numbers(hunk),
            vec![
                (Some(1), Some(1)),
                (Some(2), None),
                (None, Some(2)),
                (Some(3), Some(3)),
                (Some(4), Some(4)),
                (Some(5), None),
                (Some(6), None),
                (None, Some(5)),
                (None, Some(6)),
                (None, Some(7)),
            ]
        );
        // Only additions (a new file): each faces nothing before.
        let new = &text_hunks("", "x\ny\n")[0];
        assert_eq!(
            side_by_side_rows(new),
            vec![(None, Some(0)), (None, Some(1))]
        );
        assert_eq!(line_numbers(new), vec![(None, Some(1)), (None, Some(2))]);
    }
}
