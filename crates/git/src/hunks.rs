//! A text's changes against an older one as unified-diff hunks (what the
//! Source Control panel shows, and what `git apply` takes to stage or
//! unstage one of them), from a line diff by `similar`.

use std::fmt::Write as _;

use similar::{Algorithm, ChangeTag, TextDiff};

/// Lines of unchanged text around each change, as `git diff` shows.
pub const CONTEXT_LINES: usize = 3;

/// What a line of a hunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineSign {
    Context,
    Added,
    Removed,
}

impl LineSign {
    /// The mark a unified diff puts before the line.
    pub const fn mark(self) -> char {
        match self {
            Self::Context => ' ',
            Self::Added => '+',
            Self::Removed => '-',
        }
    }
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HunkLine {
    pub sign: LineSign,
    /// The line as it is in the file, with its line ending (none on a last
    /// line without one).
    pub text: String,
}

impl HunkLine {
    /// The line without its line ending, for showing.
    pub fn shown(&self) -> &str {
        self.text
            .strip_suffix('\n')
            .map_or(self.text.as_str(), |t| t.strip_suffix('\r').unwrap_or(t))
    }
}

/// A run of changes with the unchanged lines around it. Line numbers are
/// 0-based; a range of length 0 sits before its start line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<HunkLine>,
}

impl Hunk {
    /// The hunk's header as git writes it (`@@ -3,7 +3,8 @@`).
    pub fn header(&self) -> String {
        format!(
            "@@ -{} +{} @@",
            range(self.old_start, self.old_len),
            range(self.new_start, self.new_len)
        )
    }

    /// How many lines it adds and removes.
    pub fn counts(&self) -> (usize, usize) {
        let count = |sign| self.lines.iter().filter(|l| l.sign == sign).count();
        (count(LineSign::Added), count(LineSign::Removed))
    }

    /// A patch of this hunk alone to the file at `repo_path` (relative to
    /// the repository's work tree, `/` separated), for `git apply`.
    pub fn patch(&self, repo_path: &str) -> String {
        let a = quoted(&format!("a/{repo_path}"));
        let b = quoted(&format!("b/{repo_path}"));
        let mut out = format!("diff --git {a} {b}\n--- {a}\n+++ {b}\n{}\n", self.header());
        for line in &self.lines {
            out.push(line.sign.mark());
            out.push_str(&line.text);
            if !line.text.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
        out
    }
}

/// A unified-diff range: 1-based start and length, the start of an empty
/// range being the line before it.
fn range(start: usize, len: usize) -> String {
    match len {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{len}", start + 1),
    }
}

/// A path as git quotes it in a patch: plain unless it holds a quote, a
/// backslash or a control character.
fn quoted(path: &str) -> String {
    if !path
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_control())
    {
        return path.to_owned();
    }
    let mut out = String::from("\"");
    for c in path.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for byte in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(out, "\\{byte:03o}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The hunks of `new` against `old`, with [`CONTEXT_LINES`] of context,
/// in line order.
pub fn diff_hunks(old: &str, new: &str) -> Vec<Hunk> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .diff_lines(old, new);
    diff.grouped_ops(CONTEXT_LINES)
        .iter()
        .filter(|group| !group.is_empty())
        .map(|group| {
            let first = group[0];
            let last = group[group.len() - 1];
            let lines = group
                .iter()
                .flat_map(|op| diff.iter_changes(op))
                .map(|change| HunkLine {
                    sign: match change.tag() {
                        ChangeTag::Equal => LineSign::Context,
                        ChangeTag::Insert => LineSign::Added,
                        ChangeTag::Delete => LineSign::Removed,
                    },
                    text: change.value().to_owned(),
                })
                .collect();
            Hunk {
                old_start: first.old_range().start,
                old_len: last.old_range().end - first.old_range().start,
                new_start: first.new_range().start,
                new_len: last.new_range().end - first.new_range().start,
                lines,
            }
        })
        .collect()
}

/// `current` with the lines `new_start..new_end` put back to what they were
/// in `base` (lines `old_start..old_end`): the gutter's "Revert hunk".
pub fn revert_lines(
    base: &str,
    current: &str,
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
) -> String {
    let base_lines: Vec<&str> = base.split_inclusive('\n').collect();
    let current_lines: Vec<&str> = current.split_inclusive('\n').collect();
    let keep_before = current_lines.get(..new.start).unwrap_or(&current_lines);
    let put_back = base_lines.get(old.clone()).unwrap_or(&[]);
    let keep_after = current_lines.get(new.end..).unwrap_or(&[]);
    let mut out = String::with_capacity(current.len());
    for line in keep_before.iter().chain(put_back).chain(keep_after) {
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn line(sign: LineSign, text: &str) -> HunkLine {
        HunkLine {
            sign,
            text: text.to_owned(),
        }
    }

    #[test]
    fn changes_far_apart_are_two_hunks_with_three_lines_of_context() {
        let lines = |skip: usize, two: &str| {
            (1..=20usize)
                .filter(|n| *n != skip)
                .map(|n| {
                    if n == 2 {
                        two.to_owned()
                    } else {
                        n.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        };
        let old = lines(0, "2");
        let new = lines(18, "two");
        let hunks = diff_hunks(&old, &new);
        assert_eq!(hunks.len(), 2);
        assert_eq!(hunks[0].header(), "@@ -1,5 +1,5 @@");
        assert_eq!(
            hunks[0].lines,
            [
                line(LineSign::Context, "1\n"),
                line(LineSign::Removed, "2\n"),
                line(LineSign::Added, "two\n"),
                line(LineSign::Context, "3\n"),
                line(LineSign::Context, "4\n"),
                line(LineSign::Context, "5\n"),
            ]
        );
        assert_eq!(hunks[1].header(), "@@ -15,6 +15,5 @@");
        assert_eq!(hunks[1].counts(), (0, 1));
        assert_eq!(hunks[0].counts(), (1, 1));
    }

    #[test]
    fn a_patch_marks_a_last_line_without_a_newline_and_quotes_odd_paths() {
        let hunks = diff_hunks("a\nb", "a\nc");
        assert_eq!(
            hunks[0].patch("dir/x.txt"),
            "diff --git a/dir/x.txt b/dir/x.txt\n--- a/dir/x.txt\n+++ b/dir/x.txt\n\
             @@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        assert_eq!(
            diff_hunks("", "new\n")[0].patch("say \"hi\"\t.txt"),
            "diff --git \"a/say \\\"hi\\\"\\t.txt\" \"b/say \\\"hi\\\"\\t.txt\"\n\
             --- \"a/say \\\"hi\\\"\\t.txt\"\n+++ \"b/say \\\"hi\\\"\\t.txt\"\n@@ -0,0 +1 @@\n+new\n"
        );
    }

    #[test]
    fn shown_lines_lose_their_line_ending_only() {
        assert_eq!(line(LineSign::Added, "x\r\n").shown(), "x");
        assert_eq!(line(LineSign::Added, "x\n").shown(), "x");
        assert_eq!(line(LineSign::Added, "x").shown(), "x");
        assert_eq!(line(LineSign::Added, "x\r").shown(), "x\r");
    }

    #[test]
    fn reverting_lines_puts_back_exactly_the_old_ones() {
        let base = "a\nb\nc\nd\n";
        let current = "a\nB\nB2\nc\n";
        // b became B, B2; d was removed.
        assert_eq!(revert_lines(base, current, 1..2, 1..3), "a\nb\nc\n");
        assert_eq!(revert_lines(base, current, 3..4, 4..4), "a\nB\nB2\nc\nd\n");
        // An added line at the top goes away.
        assert_eq!(revert_lines("x\n", "new\nx\n", 0..0, 0..1), "x\n");
    }
}
