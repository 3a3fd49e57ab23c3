//! Changed-line marks of a text against an older one (the gutter's marks
//! against HEAD), from a line diff by `similar`.

use similar::{Algorithm, DiffTag, TextDiff};

/// What happened to a run of lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkKind {
    /// Lines that are new.
    Added,
    /// Lines that replace others.
    Modified,
    /// Lines were removed above `start` (an empty run).
    Deleted,
}

/// One run of changed lines of the current text, 0-based and end-exclusive
/// (`start == end` for [`MarkKind::Deleted`]: the lines were removed just
/// above line `start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineMark {
    pub kind: MarkKind,
    pub start: usize,
    pub end: usize,
    /// Where the lines it replaces or removes began in the older text.
    pub old_start: usize,
    /// How many lines of the older text this run replaces or removes.
    pub old_lines: usize,
}

/// The marks of `current` against `base`, in line order.
pub fn line_marks(base: &str, current: &str) -> Vec<LineMark> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .diff_lines(base, current);
    diff.ops()
        .iter()
        .filter_map(|op| {
            let (tag, old, new) = op.as_tag_tuple();
            let kind = match tag {
                DiffTag::Equal => return None,
                DiffTag::Insert => MarkKind::Added,
                DiffTag::Delete => MarkKind::Deleted,
                DiffTag::Replace => MarkKind::Modified,
            };
            Some(LineMark {
                kind,
                start: new.start,
                end: new.end,
                old_start: old.start,
                old_lines: old.len(),
            })
        })
        .collect()
}

/// The edit that puts `mark`'s lines of `current` back to what they were
/// in `base` (the gutter's "Revert Change"): the char range of `current`
/// to replace, and the text of `base` that replaces it. Lines end at `\n`,
/// as [`line_marks`] counts them.
pub fn revert_change(base: &str, current: &str, mark: &LineMark) -> (usize, usize, String) {
    let char_offset = |line: usize| -> usize {
        current
            .split_inclusive('\n')
            .take(line)
            .map(|l| l.chars().count())
            .sum()
    };
    let old: String = base
        .split_inclusive('\n')
        .skip(mark.old_start)
        .take(mark.old_lines)
        .collect();
    (char_offset(mark.start), char_offset(mark.end), old)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn mark(kind: MarkKind, start: usize, end: usize, old: (usize, usize)) -> LineMark {
        LineMark {
            kind,
            start,
            end,
            old_start: old.0,
            old_lines: old.1,
        }
    }

    #[test]
    fn added_modified_and_deleted_lines_are_marked_where_they_are_now() {
        let base = "a\nb\nc\nd\ne\n";
        let current = "new\na\nB\nc\ne\n";
        assert_eq!(
            line_marks(base, current),
            [
                mark(MarkKind::Added, 0, 1, (0, 0)),
                mark(MarkKind::Modified, 2, 3, (1, 1)),
                mark(MarkKind::Deleted, 4, 4, (3, 1)),
            ]
        );
        assert_eq!(line_marks(base, base), []);
        // Everything new in an empty file; everything gone from a full one.
        assert_eq!(
            line_marks("", "x\ny\n"),
            [mark(MarkKind::Added, 0, 2, (0, 0))]
        );
        assert_eq!(
            line_marks("x\ny\n", ""),
            [mark(MarkKind::Deleted, 0, 0, (0, 2))]
        );
    }

    #[test]
    fn reverting_each_mark_puts_back_exactly_the_base_lines() {
        let base = "a\nb\nc\nd\ne\n";
        let current = "new\na\nB 한\nc\ne\n";
        let revert = |mark: &LineMark| {
            let (from, to, text) = revert_change(base, current, mark);
            let chars: Vec<char> = current.chars().collect();
            let mut out: String = chars[..from].iter().collect();
            out.push_str(&text);
            out.extend(&chars[to..]);
            out
        };
        let marks = line_marks(base, current);
        assert_eq!(
            marks.iter().map(revert).collect::<Vec<_>>(),
            [
                "a\nB 한\nc\ne\n",
                "new\na\nb\nc\ne\n",
                "new\na\nB 한\nc\nd\ne\n",
            ]
        );
        // Each agrees with the whole-text revert.
        for mark in &marks {
            assert_eq!(
                revert(mark),
                crate::revert_lines(
                    base,
                    current,
                    mark.old_start..mark.old_start + mark.old_lines,
                    mark.start..mark.end
                )
            );
        }
        // A last line that gained its newline loses it again.
        let marks = line_marks("a\nb", "a\nb\n");
        assert_eq!(
            revert_change("a\nb", "a\nb\n", &marks[0]),
            (2, 4, "b".to_owned())
        );
    }

    #[test]
    fn a_last_line_without_a_newline_gaining_one_is_a_modification() {
        assert_eq!(
            line_marks("a\nb", "a\nb\n"),
            [mark(MarkKind::Modified, 1, 2, (1, 1))]
        );
    }
}
