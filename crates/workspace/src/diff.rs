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
}
