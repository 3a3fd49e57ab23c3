//! The Agent panel's transcript: lines of text, the last one open while the
//! agent streams into it, kept to a bound so a long run cannot grow memory
//! without limit. The view draws only the rows in sight.

use std::collections::VecDeque;

/// Lines kept; older ones are dropped and counted.
pub const MAX_TRANSCRIPT_LINES: usize = 20_000;

/// Bounded transcript rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    lines: VecDeque<String>,
    /// The last line has no newline yet (a streamed message goes on).
    open: bool,
    /// Lines dropped from the start to stay within the bound.
    dropped: usize,
}

impl Transcript {
    /// Appends text; each `\n` ends a line.
    pub fn push(&mut self, text: &str) {
        let mut parts = text.split('\n');
        let Some(first) = parts.next() else { return };
        match self.lines.back_mut() {
            Some(last) if self.open => last.push_str(first),
            _ => self.lines.push_back(first.to_owned()),
        }
        self.open = true;
        for part in parts {
            self.lines.push_back(part.to_owned());
        }
        // A text ending in `\n` leaves an empty open line: the next push
        // starts there.
        while self.rows() > MAX_TRANSCRIPT_LINES {
            self.lines.pop_front();
            self.dropped += 1;
        }
    }

    /// Ends an open line (a streamed message that stopped mid-line).
    pub fn end_line(&mut self) {
        if self.open && self.lines.back().is_some_and(|l| !l.is_empty()) {
            self.push("\n");
        }
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Rows to draw: complete lines and the open one (an empty open line
    /// after a final `\n` is not a row).
    pub fn rows(&self) -> usize {
        let trailing_empty = self.open && self.lines.back().is_some_and(String::is_empty);
        self.lines.len() - usize::from(trailing_empty)
    }

    /// Row `i` of [`Self::rows`].
    pub fn row(&self, i: usize) -> &str {
        self.lines.get(i).map_or("", String::as_str)
    }

    /// Lines dropped from the start.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The kept text, one `\n` after each row.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for i in 0..self.rows() {
            text.push_str(self.row(i));
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn streamed_text_joins_its_line_and_newlines_end_rows() {
        let mut t = Transcript::default();
        t.push("task t1 created\n");
        t.push("I will ");
        t.push("edit it.");
        t.end_line();
        t.push("  verify tests: passed\n");
        assert_eq!(t.rows(), 3);
        assert_eq!(
            t.text(),
            "task t1 created\nI will edit it.\n  verify tests: passed\n"
        );
        t.end_line();
        assert_eq!(t.rows(), 3, "ending a closed line adds nothing");
        t.clear();
        assert_eq!((t.rows(), t.dropped(), t.text()), (0, 0, String::new()));
    }

    #[test]
    fn the_bound_drops_the_oldest_lines_and_counts_them() {
        let mut t = Transcript::default();
        for i in 0..MAX_TRANSCRIPT_LINES + 5 {
            t.push(&format!("line {i}\n"));
        }
        assert_eq!(t.dropped(), 5);
        assert_eq!(t.rows(), MAX_TRANSCRIPT_LINES);
        assert_eq!(t.row(0), "line 5");
        assert_eq!(
            t.row(t.rows() - 1),
            format!("line {}", MAX_TRANSCRIPT_LINES + 4)
        );
    }
}
