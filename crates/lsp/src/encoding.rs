//! Positions: the editor counts characters, a server counts UTF-16 code
//! units unless it agreed to UTF-8 bytes or UTF-32 (characters).

use lsp_types::{Position, PositionEncodingKind};
use ropey::Rope;
use serde::Serialize;

/// The unit a server counts columns in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PositionEncoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl PositionEncoding {
    /// What the server chose in its `InitializeResult` (UTF-16 when it said
    /// nothing, as the protocol defines).
    pub fn from_kind(kind: Option<&PositionEncodingKind>) -> Self {
        Self::from_name(kind.map(PositionEncodingKind::as_str))
    }

    /// The same from the kind's name.
    pub fn from_name(name: Option<&str>) -> Self {
        match name {
            Some("utf-8") => Self::Utf8,
            Some("utf-32") => Self::Utf32,
            _ => Self::Utf16,
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Self::Utf8 => PositionEncodingKind::UTF8,
            Self::Utf16 => PositionEncodingKind::UTF16,
            Self::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    fn units(self, c: char) -> u32 {
        match self {
            Self::Utf8 => u32::try_from(c.len_utf8()).unwrap_or(4),
            Self::Utf16 => u32::try_from(c.len_utf16()).unwrap_or(2),
            Self::Utf32 => 1,
        }
    }
}

/// A place in a text as a person counts it: 0-based line and 0-based
/// character column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct TextPos {
    pub line: u32,
    pub column: u32,
}

/// A range of [`TextPos`]es.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct TextRange {
    pub start: TextPos,
    pub end: TextPos,
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The characters of line `line`, without its line break.
fn line_chars(rope: &Rope, line: usize) -> impl Iterator<Item = char> + '_ {
    let slice = if line < rope.len_lines() {
        Some(rope.line(line))
    } else {
        None
    };
    slice
        .into_iter()
        .flat_map(|s| s.chars())
        .take_while(|c| *c != '\n' && *c != '\r')
}

/// The server's position of character `column` of `line` (clamped to the
/// line's end).
pub fn to_lsp(rope: &Rope, pos: TextPos, encoding: PositionEncoding) -> Position {
    let units = line_chars(rope, pos.line as usize)
        .take(pos.column as usize)
        .map(|c| encoding.units(c))
        .sum();
    Position {
        line: pos.line,
        character: units,
    }
}

/// The character column of a server's position. A position past the
/// line's end is the line's end; one inside a character (half of a
/// surrogate pair, inside a UTF-8 sequence) is that character's start; a
/// line past the end is the text's end.
pub fn from_lsp(rope: &Rope, pos: Position, encoding: PositionEncoding) -> TextPos {
    let last = rope.len_lines().saturating_sub(1);
    if pos.line as usize > last {
        let column = line_chars(rope, last).count();
        return TextPos {
            line: to_u32(last),
            column: to_u32(column),
        };
    }
    let mut units = 0u32;
    let mut column = 0usize;
    for c in line_chars(rope, pos.line as usize) {
        let next = units + encoding.units(c);
        if next > pos.character {
            break;
        }
        units = next;
        column += 1;
    }
    TextPos {
        line: pos.line,
        column: to_u32(column),
    }
}

/// The char offset in the whole text of a [`TextPos`] (clamped).
pub fn char_index(rope: &Rope, pos: TextPos) -> usize {
    let line = (pos.line as usize).min(rope.len_lines().saturating_sub(1));
    let len = line_chars(rope, line).count();
    rope.line_to_char(line) + (pos.column as usize).min(len)
}

/// The [`TextPos`] of a char offset (clamped to the text).
pub fn text_pos(rope: &Rope, char_idx: usize) -> TextPos {
    let idx = char_idx.min(rope.len_chars());
    let line = rope.char_to_line(idx);
    TextPos {
        line: to_u32(line),
        column: to_u32(idx - rope.line_to_char(line)),
    }
}

/// A server's range as characters.
pub fn range_from_lsp(
    rope: &Rope,
    range: lsp_types::Range,
    encoding: PositionEncoding,
) -> TextRange {
    TextRange {
        start: from_lsp(rope, range.start, encoding),
        end: from_lsp(rope, range.end, encoding),
    }
}

/// A character range as the server counts it.
pub fn range_to_lsp(rope: &Rope, range: TextRange, encoding: PositionEncoding) -> lsp_types::Range {
    lsp_types::Range {
        start: to_lsp(rope, range.start, encoding),
        end: to_lsp(rope, range.end, encoding),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const LINE: &str = "let 한글 = \"🙂\"; x\nsecond\r\nthird";

    fn pos(line: u32, column: u32) -> TextPos {
        TextPos { line, column }
    }

    fn lsp(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn hangul_and_emoji_count_as_each_encoding_counts_them() {
        let rope = Rope::from_str(LINE);
        let x = LINE
            .lines()
            .next()
            .unwrap()
            .chars()
            .position(|c| c == 'x')
            .unwrap();
        let x = u32::try_from(x).unwrap();
        assert_eq!(x, 14);
        assert_eq!(
            to_lsp(&rope, pos(0, x), PositionEncoding::Utf32),
            lsp(0, 14)
        );
        // Hangul is one UTF-16 unit each, the emoji two.
        assert_eq!(
            to_lsp(&rope, pos(0, x), PositionEncoding::Utf16),
            lsp(0, 15)
        );
        // Hangul is three bytes each, the emoji four.
        assert_eq!(to_lsp(&rope, pos(0, x), PositionEncoding::Utf8), lsp(0, 21));
        for enc in [
            PositionEncoding::Utf8,
            PositionEncoding::Utf16,
            PositionEncoding::Utf32,
        ] {
            for column in 0..=17 {
                let there = to_lsp(&rope, pos(0, column), enc);
                assert_eq!(
                    from_lsp(&rope, there, enc),
                    pos(0, column.min(15)),
                    "{enc:?}"
                );
            }
        }
    }

    #[test]
    fn positions_inside_a_character_or_past_the_end_are_clamped() {
        let rope = Rope::from_str(LINE);
        // The emoji is character 10; UTF-16 unit 11 is its second half.
        assert_eq!(
            from_lsp(&rope, lsp(0, 11), PositionEncoding::Utf16),
            pos(0, 10)
        );
        // Byte 5 is inside '한' (bytes 4..7).
        assert_eq!(
            from_lsp(&rope, lsp(0, 5), PositionEncoding::Utf8),
            pos(0, 4)
        );
        // Past the line's end (the CR is not part of the line).
        assert_eq!(
            from_lsp(&rope, lsp(1, 99), PositionEncoding::Utf16),
            pos(1, 6)
        );
        assert_eq!(
            to_lsp(&rope, pos(1, 99), PositionEncoding::Utf16),
            lsp(1, 6)
        );
        // Past the last line.
        assert_eq!(
            from_lsp(&rope, lsp(9, 0), PositionEncoding::Utf16),
            pos(2, 5)
        );
        assert_eq!(char_index(&rope, pos(9, 9)), rope.len_chars());
        assert_eq!(text_pos(&rope, char_index(&rope, pos(1, 3))), pos(1, 3));
    }

    #[test]
    fn the_encoding_a_server_names_is_the_one_used() {
        assert_eq!(PositionEncoding::from_kind(None), PositionEncoding::Utf16);
        assert_eq!(
            PositionEncoding::from_kind(Some(&PositionEncodingKind::UTF8)),
            PositionEncoding::Utf8
        );
        assert_eq!(
            PositionEncoding::from_kind(Some(&PositionEncodingKind::UTF32)),
            PositionEncoding::Utf32
        );
        assert_eq!(PositionEncoding::Utf8.kind(), PositionEncodingKind::UTF8);
    }
}
