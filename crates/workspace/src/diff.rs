//! Diffs derived on read, never stored: Myers line diff with 3 context
//! lines; absent content is empty; a pure rename is a header; binary
//! content (the one rule, `looks_binary`: a NUL in the first 8 KiB) is a
//! notice.

use std::fmt::Write as _;

use cocode_core::path::{NormalizedPath, looks_binary};
use similar::TextDiff;

/// Lines of context around each change.
pub const CONTEXT_LINES: usize = 3;

/// A unified diff of one path between two states (`None` = absent).
/// `renamed_from` names the old path of a rename.
pub fn unified(
    path: &NormalizedPath,
    renamed_from: Option<&NormalizedPath>,
    before: Option<&[u8]>,
    after: Option<&[u8]>,
) -> String {
    let old_name = renamed_from.unwrap_or(path);
    let mut out = String::new();
    if let Some(from) = renamed_from {
        let _ = write!(out, "rename from {from}\nrename to {path}\n");
    }
    let (a, b) = (before.unwrap_or_default(), after.unwrap_or_default());
    if a == b {
        return out;
    }
    let old_label = if before.is_some() {
        format!("a/{old_name}")
    } else {
        "/dev/null".to_owned()
    };
    let new_label = if after.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".to_owned()
    };
    if looks_binary(a) || looks_binary(b) {
        let _ = writeln!(out, "Binary files {old_label} and {new_label} differ");
        return out;
    }
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let diff = TextDiff::from_lines(a.as_ref(), b.as_ref());
    out.push_str(
        &diff
            .unified_diff()
            .context_radius(CONTEXT_LINES)
            .missing_newline_hint(true)
            .header(&old_label, &new_label)
            .to_string(),
    );
    out
}

/// What a line of a hunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Context,
    Removed,
    Added,
}

/// One line of a hunk, with its line ending (none on a last line that has
/// none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    pub kind: LineKind,
    pub text: String,
}

/// One hunk of a line diff with [`CONTEXT_LINES`] of context, as a unified
/// diff numbers it: starts are 1-based, and a side with no line starts at
/// the line before the hunk (0 at the top).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextHunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<HunkLine>,
}

impl TextHunk {
    /// `@@ -3,4 +3,5 @@`, as git writes it.
    pub fn header(&self) -> String {
        fn side(start: usize, len: usize) -> String {
            if len == 1 {
                start.to_string()
            } else {
                format!("{start},{len}")
            }
        }
        format!(
            "@@ -{} +{} @@",
            side(self.old_start, self.old_len),
            side(self.new_start, self.new_len)
        )
    }

    /// Lines removed and added.
    pub fn counts(&self) -> (usize, usize) {
        self.lines.iter().fold((0, 0), |(r, a), l| match l.kind {
            LineKind::Removed => (r + 1, a),
            LineKind::Added => (r, a + 1),
            LineKind::Context => (r, a),
        })
    }
}

/// The hunks turning `before` into `after`, in file order.
pub fn text_hunks(before: &str, after: &str) -> Vec<TextHunk> {
    let diff = TextDiff::from_lines(before, after);
    let (old, new) = (diff.old_slices(), diff.new_slices());
    diff.grouped_ops(CONTEXT_LINES)
        .iter()
        .filter_map(|group| {
            let (first, last) = (group.first()?, group.last()?);
            let (old_range, new_range) = (
                first.old_range().start..last.old_range().end,
                first.new_range().start..last.new_range().end,
            );
            let mut lines = Vec::new();
            for op in group {
                let (tag, o, n) = op.as_tag_tuple();
                let line = |kind, text: &&str| HunkLine {
                    kind,
                    text: (*text).to_owned(),
                };
                match tag {
                    similar::DiffTag::Equal => {
                        lines.extend(old[o].iter().map(|t| line(LineKind::Context, t)));
                    }
                    similar::DiffTag::Delete => {
                        lines.extend(old[o].iter().map(|t| line(LineKind::Removed, t)));
                    }
                    similar::DiffTag::Insert => {
                        lines.extend(new[n].iter().map(|t| line(LineKind::Added, t)));
                    }
                    similar::DiffTag::Replace => {
                        lines.extend(old[o].iter().map(|t| line(LineKind::Removed, t)));
                        lines.extend(new[n].iter().map(|t| line(LineKind::Added, t)));
                    }
                }
            }
            let start = |range: &std::ops::Range<usize>| {
                if range.is_empty() {
                    range.start
                } else {
                    range.start + 1
                }
            };
            Some(TextHunk {
                old_start: start(&old_range),
                old_len: old_range.len(),
                new_start: start(&new_range),
                new_len: new_range.len(),
                lines,
            })
        })
        .collect()
}

/// `after` with hunk `index` (0-based, as [`text_hunks`] orders them) put
/// back as it was in `before`: every other change stays. `None` when there
/// is no such hunk.
pub fn revert_hunk(before: &str, after: &str, index: usize) -> Option<String> {
    let diff = TextDiff::from_lines(before, after);
    let (old, new) = (diff.old_slices(), diff.new_slices());
    let groups = diff.grouped_ops(CONTEXT_LINES);
    let group = groups.get(index)?;
    let reverted: Vec<(usize, usize)> = group
        .iter()
        .filter(|op| op.tag() != similar::DiffTag::Equal)
        .map(|op| (op.old_range().start, op.new_range().start))
        .collect();
    let mut out = String::with_capacity(after.len());
    for op in diff.ops() {
        let (tag, o, n) = op.as_tag_tuple();
        let back = tag != similar::DiffTag::Equal && reverted.contains(&(o.start, n.start));
        let lines = if back { &old[o] } else { &new[n] };
        for line in lines {
            out.push_str(line);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn p(s: &str) -> NormalizedPath {
        NormalizedPath::try_from(s.to_owned()).unwrap()
    }

    #[test]
    fn modification_has_three_lines_of_context() {
        let before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        assert_eq!(
            unified(
                &p("src/a.txt"),
                None,
                Some(before.as_bytes()),
                Some(after.as_bytes())
            ),
            "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn creation_and_deletion_diff_against_empty() {
        assert_eq!(
            unified(&p("n.txt"), None, None, Some(b"x\n")),
            "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n"
        );
        assert_eq!(
            unified(&p("n.txt"), None, Some(b"x\n"), None),
            "--- a/n.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        );
    }

    #[test]
    fn rename_is_a_header_and_binary_is_a_notice() {
        assert_eq!(
            unified(
                &p("b.txt"),
                Some(&p("a.txt")),
                Some(b"same\n"),
                Some(b"same\n")
            ),
            "rename from a.txt\nrename to b.txt\n"
        );
        assert_eq!(
            unified(&p("img.bin"), None, Some(b"\0\x01"), Some(b"\0\x02")),
            "Binary files a/img.bin and b/img.bin differ\n"
        );
    }

    const THREE: &str = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\no\np\nq\nr\ns\nt\n";

    fn three_changes() -> String {
        THREE
            .replace("b\n", "B\n")
            .replace("j\n", "J\nJ2\n")
            .replace("s\n", "")
    }

    #[test]
    fn hunks_number_each_change_with_its_context() {
        let after = three_changes();
        let hunks = text_hunks(THREE, &after);
        assert_eq!(
            hunks
                .iter()
                .map(|h| (h.header(), h.counts()))
                .collect::<Vec<_>>(),
            vec![
                ("@@ -1,5 +1,5 @@".to_owned(), (1, 1)),
                ("@@ -7,7 +7,8 @@".to_owned(), (1, 2)),
                ("@@ -16,5 +17,4 @@".to_owned(), (1, 0)),
            ]
        );
        assert_eq!(
            hunks[2].lines,
            ["p\n", "q\n", "r\n"]
                .iter()
                .map(|t| HunkLine {
                    kind: LineKind::Context,
                    text: (*t).to_owned()
                })
                .chain([HunkLine {
                    kind: LineKind::Removed,
                    text: "s\n".to_owned()
                }])
                .chain([HunkLine {
                    kind: LineKind::Context,
                    text: "t\n".to_owned()
                }])
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn reverting_one_hunk_keeps_the_others() {
        let after = three_changes();
        assert_eq!(
            revert_hunk(THREE, &after, 1).unwrap(),
            THREE.replace("b\n", "B\n").replace("s\n", "")
        );
        assert_eq!(
            revert_hunk(THREE, &after, 0).unwrap(),
            THREE.replace("j\n", "J\nJ2\n").replace("s\n", "")
        );
        assert_eq!(
            revert_hunk(THREE, &after, 2).unwrap(),
            THREE.replace("b\n", "B\n").replace("j\n", "J\nJ2\n")
        );
        assert_eq!(revert_hunk(THREE, &after, 3), None);
    }

    #[test]
    fn reverting_keeps_line_endings_and_a_missing_last_newline() {
        let before = "one\r\ntwo\r\nthree";
        let after = "one\r\nTWO\r\nthree\r\nfour";
        assert_eq!(text_hunks(before, after).len(), 1);
        assert_eq!(revert_hunk(before, after, 0).unwrap(), before);
        assert_eq!(revert_hunk("", "new\n", 0).unwrap(), "");
        assert_eq!(text_hunks("", "new\n")[0].header(), "@@ -0,0 +1 @@");
    }
}
