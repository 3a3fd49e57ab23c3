//! What the command line prints is text for a terminal, and some of it
//! comes from a model or a file (paths, prompts, streamed replies, command
//! output). A control character in it would be obeyed by the terminal — an
//! escape sequence can retitle the window, move the cursor to overwrite
//! earlier lines, or hide text — and a bidirectional override turns text
//! around on screen, so every such character but line feed and tab is
//! printed as a visible escape in JSON's notation (`\u001b`, `\u009b`,
//! `\u202e`), which reads plainly and keeps `--json` output valid JSON.
//! Paths and titles, where a line feed would forge a line, are escaped
//! whole where they are printed (`cocode_core::shown::line`).

use std::io::{self, Write};

/// A writer that escapes control and bidirectional formatting characters
/// (`cocode_core::shown`) on their way to `inner`; line feed and tab pass.
#[derive(Debug)]
pub struct Printable<W: Write> {
    inner: W,
    /// The start of a UTF-8 sequence cut by the end of a write, held until
    /// the next write shows which character it is.
    pending: Vec<u8>,
}

impl<W: Write> Printable<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::new(),
        }
    }
}

/// Appends `text` with its escaped characters shown.
fn push_shown(out: &mut Vec<u8>, text: &str) {
    let mut escaped = String::new();
    for c in text.chars() {
        if cocode_core::shown::is_escaped(c, true) {
            cocode_core::shown::push_escape(&mut escaped, c);
        } else {
            escaped.push(c);
        }
    }
    out.extend_from_slice(escaped.as_bytes());
}

impl<W: Write> Write for Printable<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(buf);
        let mut out = Vec::with_capacity(bytes.len());
        let mut rest = bytes.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    push_shown(&mut out, text);
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // `valid_up_to` ends the valid part, so this never fails.
                    push_shown(&mut out, std::str::from_utf8(valid).unwrap_or_default());
                    // Bytes that are no character pass as they came; a
                    // sequence cut by the end of this write waits.
                    if let Some(n) = e.error_len() {
                        out.extend_from_slice(&after[..n]);
                        rest = &after[n..];
                    } else {
                        self.pending = after.to_vec();
                        break;
                    }
                }
            }
        }
        self.inner.write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Drop for Printable<W> {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            let _ = self.inner.write_all(&self.pending);
        }
        let _ = self.inner.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn printed(chunks: &[&[u8]]) -> String {
        let mut bytes = Vec::new();
        {
            let mut p = Printable::new(&mut bytes);
            for chunk in chunks {
                p.write_all(chunk).unwrap();
            }
        }
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn control_characters_are_shown_and_text_lines_and_tabs_pass() {
        assert_eq!(
            printed(&[b"\x1b]0;owned\x07task\tdone\r\n\x1b[2J\x7f"]),
            "\\u001b]0;owned\\u0007task\tdone\\u000d\n\\u001b[2J\\u007f"
        );
        // Korean, accents and symbols pass untouched; C1 controls do not,
        // even split across two writes.
        assert_eq!(
            printed(&[
                "한글 é ©".as_bytes(),
                b"a\xc2",
                b"\x9b31m",
                "\u{a0}".as_bytes()
            ]),
            "한글 é ©a\\u009b31m\u{a0}"
        );
        // A right-to-left override split across three writes.
        assert_eq!(
            printed(&[b"txt.\xe2", b"\x80", b"\xaeexe"]),
            "txt.\\u202eexe"
        );
        // Bytes that are no character pass as they came.
        let mut bytes = Vec::new();
        {
            let mut p = Printable::new(&mut bytes);
            p.write_all(b"a\xff\x1bb").unwrap();
        }
        assert_eq!(bytes, b"a\xff\\u001bb");
        // A lead byte at the very end is passed on as it came.
        let mut bytes = Vec::new();
        {
            let mut p = Printable::new(&mut bytes);
            p.write_all(b"end \xc2").unwrap();
        }
        assert_eq!(bytes, b"end \xc2");
    }
}
