//! Names on disk that are not text. A Unix file name is bytes: it may hold
//! a sequence that is not UTF-8, or a backslash, which cocode's paths take
//! for a separator. Such a name is carried in a path as text all the same:
//! each byte that is not part of UTF-8 text, and each backslash, becomes
//! one character of Unicode's last private-use block (U+10FF00 + the
//! byte), shown to people as `\xNN` ([`crate::shown`]) and turned back
//! into the same byte at every system call ([`to_bytes`]). A name that
//! already holds such a character could not be told apart: it has no text
//! ([`to_text`] gives `None`), and whoever meets it says so. A path whose
//! stand-ins are not the ones its own bytes give ([`is_canonical`]) is not
//! a path ([`crate::path::normalize`] refuses it).

use std::borrow::Cow;

/// The first character that stands for a byte.
const BASE: u32 = 0x10_FF00;

/// The byte `c` stands for, if it stands for one: only a backslash and
/// the bytes that cannot begin or continue ASCII text (0x80 to 0xFF), so
/// no stand-in ever makes a `/` or a NUL.
pub const fn byte_of(c: char) -> Option<u8> {
    let n = c as u32;
    let [.., byte] = n.to_be_bytes();
    if n == BASE + 0x5C || (n >= BASE + 0x80 && n <= BASE + 0xFF) {
        Some(byte)
    } else {
        None
    }
}

/// Whether `text` is the text [`to_text`] gives for its own bytes: a name
/// spelled with stand-ins for bytes that are UTF-8 text together (`é` as
/// two stand-ins) would be a second spelling of one file, and is not.
pub fn is_canonical(text: &str) -> bool {
    if !text.chars().any(|c| byte_of(c).is_some()) {
        return true;
    }
    to_text(&to_bytes(text)).is_some_and(|back| back == text)
}

fn stand_in(byte: u8) -> char {
    char::from_u32(BASE + u32::from(byte)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The text of a name as it is on disk (see the module's documentation),
/// or `None` for a name that holds a stand-in character itself.
pub fn to_text(bytes: &[u8]) -> Option<Cow<'_, str>> {
    if let Ok(text) = std::str::from_utf8(bytes)
        && !text.contains('\\')
    {
        return (!text.chars().any(|c| byte_of(c).is_some())).then_some(Cow::Borrowed(text));
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if byte_of(c).is_some() {
                return None;
            }
            if c == '\\' {
                out.push(stand_in(b'\\'));
            } else {
                out.push(c);
            }
        }
        for &b in chunk.invalid() {
            out.push(stand_in(b));
        }
    }
    Some(Cow::Owned(out))
}

/// The bytes on disk of a name's text: each stand-in character turned
/// back into its byte.
pub fn to_bytes(text: &str) -> Cow<'_, [u8]> {
    if !text.chars().any(|c| byte_of(c).is_some()) {
        return Cow::Borrowed(text.as_bytes());
    }
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        match byte_of(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_not_text_go_there_and_back_and_text_stays_as_it_is() {
        for bytes in [
            &b"plain.txt"[..],
            "한글 파일.rs".as_bytes(),
            b"caf\xe9.txt",
            b"\xff\xfe",
            b"a\\b",
            b"half \xe2\x82 of a euro",
        ] {
            let text = to_text(bytes).unwrap();
            assert_eq!(&*to_bytes(&text), bytes, "{text:?}");
        }
        assert!(matches!(
            to_text(b"plain.txt"),
            Some(Cow::Borrowed("plain.txt"))
        ));
        assert_eq!(
            to_text(b"caf\xe9.txt").unwrap(),
            "caf\u{10ffe9}.txt".to_owned()
        );
        assert_eq!(to_text(b"a\\b").unwrap(), "a\u{10ff5c}b".to_owned());
        // A stand-in character in a real name could not be told apart;
        // other characters of the block are characters.
        assert_eq!(to_text("x\u{10ff80}".as_bytes()), None);
        assert!(matches!(
            to_text("x\u{10ff2f}".as_bytes()),
            Some(Cow::Borrowed(_))
        ));
        // No stand-in makes a separator or a NUL.
        assert_eq!(
            &*to_bytes("a\u{10ff2f}b\u{10ff00}"),
            "a\u{10ff2f}b\u{10ff00}".as_bytes()
        );
        // `é` spelled as the stand-ins of its two bytes is not canonical.
        assert!(!is_canonical("caf\u{10ffc3}\u{10ffa9}"));
        assert!(is_canonical("caf\u{10ffe9}.txt"));
        assert!(is_canonical("café"));
        assert_eq!(to_text(b"\xe9 x\xf4\x8f\xbe\x80"), None);
    }
}
