//! A text with its selection written inline, for tests and examples:
//! `|` is the primary cursor, `¦` another cursor, and `«…»` marks the
//! selected text around a cursor (`«abc|»` selects `abc` with the cursor
//! at its end, `«|abc»` at its start).

use crate::selection::{Range, Selection};

/// Why a markup string cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarkupError {
    #[error("the markup has no primary cursor `|`")]
    NoPrimary,
    #[error("the markup has more than one primary cursor `|`")]
    TwoPrimaries,
    #[error("a `«…»` selection at char {0} has no cursor at either end")]
    NoHead(usize),
    #[error("a `«` at char {0} is not closed")]
    Unclosed(usize),
}

/// The text and the selection a markup string describes.
pub fn parse(markup: &str) -> Result<(String, Selection), MarkupError> {
    let mut text = String::with_capacity(markup.len());
    let mut pos = 0;
    let mut ranges = Vec::new();
    let mut primary = None;
    // The open `«`: its offset and the head seen inside it.
    let mut open: Option<(usize, Option<(usize, bool)>)> = None;
    for ch in markup.chars() {
        match ch {
            '|' | '¦' => {
                let is_primary = ch == '|';
                if let Some((_, head)) = &mut open {
                    *head = Some((pos, is_primary));
                } else {
                    if is_primary {
                        if primary.is_some() {
                            return Err(MarkupError::TwoPrimaries);
                        }
                        primary = Some(ranges.len());
                    }
                    ranges.push(Range::point(pos));
                }
            }
            '«' => open = Some((pos, None)),
            '»' => {
                let (start, head) = open.take().ok_or(MarkupError::Unclosed(pos))?;
                let (head, is_primary) = head.ok_or(MarkupError::NoHead(start))?;
                let anchor = if head == start { pos } else { start };
                if is_primary {
                    if primary.is_some() {
                        return Err(MarkupError::TwoPrimaries);
                    }
                    primary = Some(ranges.len());
                }
                ranges.push(Range::new(anchor, head));
            }
            _ => {
                text.push(ch);
                pos += 1;
            }
        }
    }
    if let Some((start, _)) = open {
        return Err(MarkupError::Unclosed(start));
    }
    let primary = primary.ok_or(MarkupError::NoPrimary)?;
    Ok((text, Selection::new(ranges, primary)))
}

/// `text` with `selection` written in.
pub fn render(text: &str, selection: &Selection) -> String {
    let mut out = String::with_capacity(text.len() + 8 * selection.len());
    let ranges = selection.ranges();
    let primary = selection.primary_index();
    let mark = |i: usize| if i == primary { '|' } else { '¦' };
    let chars: Vec<char> = text.chars().collect();
    for pos in 0..=chars.len() {
        for (i, r) in ranges.iter().enumerate() {
            if r.to() == pos && !r.is_empty() {
                if r.head == pos {
                    out.push(mark(i));
                }
                out.push('»');
            }
        }
        for (i, r) in ranges.iter().enumerate() {
            if r.from() == pos {
                if r.is_empty() {
                    out.push(mark(i));
                } else {
                    out.push('«');
                    if r.head == pos {
                        out.push(mark(i));
                    }
                }
            }
        }
        if let Some(ch) = chars.get(pos) {
            out.push(*ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn markup_round_trips() {
        for m in ["a|b", "«ab|»c¦", "¦x«|yz»", "|", "한«글|»¦", "«a|»«¦b»"] {
            let (text, sel) = parse(m).unwrap();
            assert_eq!(render(&text, &sel), m);
        }
        let (text, sel) = parse("ab«|cd»").unwrap();
        assert_eq!(text, "abcd");
        assert_eq!(sel.primary(), Range::new(4, 2));
    }

    #[test]
    fn bad_markup_is_refused() {
        assert_eq!(parse("ab"), Err(MarkupError::NoPrimary));
        assert_eq!(parse("|a|"), Err(MarkupError::TwoPrimaries));
        assert_eq!(parse("«ab»|"), Err(MarkupError::NoHead(0)));
        assert_eq!(parse("x«ab|"), Err(MarkupError::Unclosed(1)));
    }
}
