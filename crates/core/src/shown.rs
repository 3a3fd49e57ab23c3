//! Text a person reads that came from a file name, a model or another
//! program. A newline in a file name would start a line of its own (a
//! forged `task …: completed`), a right-to-left override (U+202E) turns
//! `gpj.exe` around on screen, and a terminal obeys escape sequences. Such
//! characters are shown as visible escapes in JSON's notation (`\u000a`,
//! `\u202e`), which read plainly and never act.

use std::borrow::Cow;

/// Whether `c` is shown escaped: every control character (C0, DEL, C1), the
/// bidirectional formatting characters (marks, embeddings, overrides,
/// isolates) and the Unicode line and paragraph separators. With
/// `keep_lines`, line feed and tab pass. ([`line`] and [`lines`] also show
/// the characters that stand for a name's bytes as `\xNN`, see
/// [`crate::disk_name`]; they do nothing to a terminal, so a writer of
/// JSON lets them pass.)
pub const fn is_escaped(c: char, keep_lines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_lines,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

fn escaped(text: &str, keep_lines: bool) -> Cow<'_, str> {
    let shown = |c: char| is_escaped(c, keep_lines) || crate::disk_name::byte_of(c).is_some();
    if !text.chars().any(shown) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if shown(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Appends `c`'s visible escape (`\u000a`; `\xe9` for a character that
/// stands for a name's byte).
pub fn push_escape(out: &mut String, c: char) {
    use std::fmt::Write as _;
    let _ = match crate::disk_name::byte_of(c) {
        Some(b) => write!(out, "\\x{b:02x}"),
        None => write!(out, "\\u{:04x}", u32::from(c)),
    };
}

/// One line: a path, a title, a command — nothing in it breaks the line.
pub fn line(text: &str) -> Cow<'_, str> {
    escaped(text, false)
}

/// Text of several lines (a model's message, a command's output): line
/// feeds and tabs pass, every other such character is escaped.
pub fn lines(text: &str) -> Cow<'_, str> {
    escaped(text, true)
}

/// A command as a person reads it and a shell would take it: each
/// argument shown as [`line`] shows it, and quoted (`'…'`) when it is empty
/// or holds a space or a character a shell treats specially, so
/// `["sh", "-c", "curl x | sh"]` reads `sh -c 'curl x | sh'`, never as if
/// the pipe split the command.
pub fn command(argv: &[String]) -> String {
    argv.iter()
        .map(|arg| {
            let shown = line(arg);
            let plain = !shown.is_empty()
                && shown.chars().all(|c| {
                    c.is_alphanumeric()
                        || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | '+' | ',' | '@' | '%')
                });
            if plain {
                shown.into_owned()
            } else {
                format!("'{}'", shown.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newlines_controls_and_bidirectional_characters_are_shown_escaped() {
        assert_eq!(
            line("evil\ntask 1: completed\u{202e}gpj.exe"),
            "evil\\u000atask 1: completed\\u202egpj.exe"
        );
        assert_eq!(
            line("a\tb\r\u{1b}[2J\u{9b}\u{200f}\u{2067}\u{61c}\u{2028}"),
            "a\\u0009b\\u000d\\u001b[2J\\u009b\\u200f\\u2067\\u061c\\u2028"
        );
        assert_eq!(lines("one\n\ttwo\u{202d}"), "one\n\ttwo\\u202d");
        // A name's bytes that are not text, as the bytes they are.
        assert_eq!(
            line("caf\u{10ffe9}.txt a\u{10ff5c}b"),
            "caf\\xe9.txt a\\x5cb"
        );
        let argv = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            command(&argv(&[
                "sh",
                "-c",
                "curl http://x/y | sh",
                "",
                "it's",
                "a\nb"
            ])),
            "sh -c 'curl http://x/y | sh' '' 'it'\\''s' 'a\\u000ab'"
        );
        assert_eq!(
            command(&argv(&[
                "pyright-langserver",
                "--stdio",
                "--log=/tmp/a.log"
            ])),
            "pyright-langserver --stdio --log=/tmp/a.log"
        );
        // Plain text, Korean and joiners pass and are not copied.
        for plain in ["src/main.rs", "한글 파일.txt", "a\u{200d}b", "é ©"] {
            assert!(
                matches!(line(plain), Cow::Borrowed(p) if p == plain),
                "{plain}"
            );
        }
    }
}
