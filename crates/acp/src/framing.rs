//! Newline-delimited JSON-RPC framing of an agent's standard output: each
//! chunk is scanned once (only the bytes that arrived since the last
//! look), and a line longer than [`MAX_LINE`] is refused with a clear
//! error instead of growing without bound.

/// The longest line an agent may send (64 MiB): a file's whole text fits.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// What the framing found in what arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framed {
    /// One line without its end (`\n`, and a `\r` before it), not empty.
    Line(String),
    /// A line grew past the limit; what had arrived of it is dropped.
    TooLong { limit: usize },
}

/// Lines out of a byte stream.
#[derive(Debug)]
pub struct LineFramer {
    pending: Vec<u8>,
    /// How far `pending` has been looked at for a line end.
    scanned: usize,
    max: usize,
    /// A line past the limit is being dropped up to its end.
    skipping: bool,
}

impl Default for LineFramer {
    fn default() -> Self {
        Self::with_limit(MAX_LINE)
    }
}

impl LineFramer {
    pub fn with_limit(max: usize) -> Self {
        Self {
            pending: Vec::new(),
            scanned: 0,
            max,
            skipping: false,
        }
    }

    /// Takes `chunk` and appends what it completes to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<Framed>) {
        self.pending.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(at) = self.pending[self.scanned..]
            .iter()
            .position(|b| *b == b'\n')
        {
            let end = self.scanned + at;
            if self.skipping {
                self.skipping = false;
            } else {
                let text = String::from_utf8_lossy(&self.pending[start..end]);
                let text = text.trim_end();
                if !text.is_empty() {
                    out.push(Framed::Line(text.to_owned()));
                }
            }
            start = end + 1;
            self.scanned = start;
        }
        self.pending.drain(..start);
        self.scanned = self.pending.len();
        if self.pending.len() > self.max {
            if !self.skipping {
                out.push(Framed::TooLong { limit: self.max });
            }
            self.skipping = true;
            self.pending.clear();
            self.scanned = 0;
        }
    }

    /// Bytes held for a line not yet ended.
    pub fn held(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn frame(chunks: &[&[u8]], max: usize) -> Vec<Framed> {
        let mut framer = LineFramer::with_limit(max);
        let mut out = Vec::new();
        for chunk in chunks {
            framer.push(chunk, &mut out);
        }
        out
    }

    #[test]
    fn lines_split_anywhere_come_out_whole() {
        assert_eq!(
            frame(&[b"{\"a\":", b"1}\r\n\n{\"b\"", b":2}\n{\"c\":3"], 1024),
            vec![
                Framed::Line("{\"a\":1}".into()),
                Framed::Line("{\"b\":2}".into())
            ]
        );
        // Hangul split inside a character.
        let text = "{\"t\":\"한글\"}\n".as_bytes();
        assert_eq!(
            frame(&[&text[..8], &text[8..]], 1024),
            vec![Framed::Line("{\"t\":\"한글\"}".into())]
        );
    }

    #[test]
    fn a_line_past_the_limit_is_refused_once_and_memory_stays_bounded() {
        let mut framer = LineFramer::with_limit(1024 * 1024);
        let mut out = Vec::new();
        let chunk = vec![b'x'; 64 * 1024];
        // 100 MB without a line end, then one, then a good line.
        for _ in 0..1600 {
            framer.push(&chunk, &mut out);
            assert!(framer.held() <= 1024 * 1024 + chunk.len());
        }
        framer.push(b"tail\n{\"ok\":true}\n", &mut out);
        assert_eq!(
            out,
            vec![
                Framed::TooLong { limit: 1024 * 1024 },
                Framed::Line("{\"ok\":true}".into())
            ]
        );
        assert_eq!(framer.held(), 0);
    }
}
