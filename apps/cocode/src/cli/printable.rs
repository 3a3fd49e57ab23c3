//! What the command line prints is text for a terminal, and some of it
//! comes from a model or a file (paths, prompts, streamed replies, command
//! output). A control character in it would be obeyed by the terminal — an
//! escape sequence can retitle the window, move the cursor to overwrite
//! earlier lines, or hide text — so every control character but line feed
//! and tab is printed as a visible escape in JSON's notation (`\u001b`,
//! `\u009b`), which reads plainly and keeps `--json` output valid JSON.

use std::io::{self, Write};

/// A writer that escapes control characters on their way to `inner`.
#[derive(Debug)]
pub struct Printable<W: Write> {
    inner: W,
    /// The first byte of a two-byte UTF-8 sequence that could be a C1
    /// control (U+0080–U+009F), held until the next byte shows which.
    lead: bool,
}

impl<W: Write> Printable<W> {
    pub fn new(inner: W) -> Self {
        Self { inner, lead: false }
    }
}

/// The lead byte of U+0080–U+00BF in UTF-8.
const C2: u8 = 0xc2;

impl<W: Write> Write for Printable<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut out = Vec::with_capacity(buf.len());
        for &byte in buf {
            if std::mem::take(&mut self.lead) {
                if (0x80..=0x9f).contains(&byte) {
                    let _ = write!(out, "\\u{byte:04x}");
                    continue;
                }
                out.push(C2);
            }
            match byte {
                b'\n' | b'\t' => out.push(byte),
                0x00..=0x1f | 0x7f => {
                    let _ = write!(out, "\\u{byte:04x}");
                }
                C2 => self.lead = true,
                _ => out.push(byte),
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
        if self.lead {
            let _ = self.inner.write_all(&[C2]);
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
        // A lead byte at the very end is passed on as it came.
        let mut bytes = Vec::new();
        {
            let mut p = Printable::new(&mut bytes);
            p.write_all(b"end \xc2").unwrap();
        }
        assert_eq!(bytes, b"end \xc2");
    }
}
