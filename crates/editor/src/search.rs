//! Find and replace in one document: plain or regular-expression queries,
//! case and whole-word options, matches as char ranges.

use regex::Regex;
use ropey::Rope;

use crate::change::{Change, ChangeSet};
use crate::document::{Document, EditKind};
use crate::selection::{Range, Selection};

/// What the find bar asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchQuery {
    pub text: String,
    pub case_sensitive: bool,
    pub whole_word: bool,
    pub regex: bool,
}

/// Why a query cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("type something to find")]
    Empty,
    #[error("not a valid regular expression: {0}")]
    BadRegex(String),
}

impl SearchError {
    /// A stable code for the find bar.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Empty => "SEARCH_EMPTY",
            Self::BadRegex(_) => "SEARCH_BAD_REGEX",
        }
    }
}

/// A compiled query.
#[derive(Debug, Clone)]
pub struct Matcher {
    regex: Regex,
    whole_word: bool,
    expand: bool,
    case_insensitive: bool,
}

/// At most this many matches are found in one document.
pub const MATCH_LIMIT: usize = 20_000;

impl SearchQuery {
    pub fn compile(&self) -> Result<Matcher, SearchError> {
        if self.text.is_empty() {
            return Err(SearchError::Empty);
        }
        let pattern = if self.regex {
            self.text.clone()
        } else {
            regex::escape(&self.text)
        };
        let regex = regex::RegexBuilder::new(&pattern)
            .case_insensitive(!self.case_sensitive)
            .multi_line(true)
            .size_limit(1 << 22)
            .build()
            .map_err(|e| SearchError::BadRegex(first_line(&e.to_string())))?;
        Ok(Matcher {
            regex,
            whole_word: self.whole_word,
            expand: self.regex,
            case_insensitive: !self.case_sensitive,
        })
    }
}

fn first_line(s: &str) -> String {
    s.lines().last().unwrap_or(s).trim().to_owned()
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Matcher {
    /// Every match in `rope` as char ranges, in order, at most
    /// [`MATCH_LIMIT`]; empty matches are skipped.
    pub fn find_all(&self, rope: &Rope) -> Vec<(usize, usize)> {
        self.find_in_str(&rope.to_string(), MATCH_LIMIT)
    }

    /// The matches within one line or string, as char ranges (at most
    /// `limit`).
    pub fn find_in_str(&self, text: &str, limit: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let (mut byte_at, mut char_at) = (0usize, 0usize);
        for m in self.regex.find_iter(text) {
            if m.start() == m.end() {
                continue;
            }
            if !self.stands_alone(text, m.start(), m.end()) {
                continue;
            }
            char_at += text[byte_at..m.start()].chars().count();
            let a = char_at;
            char_at += text[m.start()..m.end()].chars().count();
            byte_at = m.end();
            out.push((a, char_at));
            if out.len() >= limit {
                break;
            }
        }
        out
    }

    /// `text` with every match replaced (`$1` and `${name}` expand in
    /// regular-expression mode), and how many were.
    pub fn replace_in_str(&self, text: &str, with: &str) -> (String, usize) {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        let mut count = 0;
        for caps in self.regex.captures_iter(text) {
            let Some(m) = caps.get(0) else { continue };
            if m.start() == m.end() {
                continue;
            }
            if !self.stands_alone(text, m.start(), m.end()) {
                continue;
            }
            out.push_str(&text[last..m.start()]);
            if self.expand {
                caps.expand(with, &mut out);
            } else {
                out.push_str(with);
            }
            last = m.end();
            count += 1;
        }
        out.push_str(&text[last..]);
        (out, count)
    }

    /// Whether the match `start..end` of `text` counts: always, or in
    /// whole-word mode only with no letter, digit or `_` on either side.
    fn stands_alone(&self, text: &str, start: usize, end: usize) -> bool {
        !self.whole_word
            || !(text[..start].chars().next_back().is_some_and(is_word)
                || text[end..].chars().next().is_some_and(is_word))
    }

    /// The regular expression the query compiled to (for line-oriented
    /// searchers that prefilter with it).
    pub fn pattern(&self) -> &str {
        self.regex.as_str()
    }

    /// Whether the query ignores case.
    pub fn ignores_case(&self) -> bool {
        self.case_insensitive
    }

    /// The replacement text for the match at `range` (`$1` and `${name}`
    /// expand in regular-expression mode).
    fn replacement(&self, matched: &str, with: &str) -> String {
        if !self.expand {
            return with.to_owned();
        }
        match self.regex.captures(matched) {
            Some(caps) => {
                let mut out = String::new();
                caps.expand(with, &mut out);
                out
            }
            None => with.to_owned(),
        }
    }
}

impl Document {
    /// Selects the next match after the primary selection (the previous one
    /// before it when `backward`), wrapping around; whether one was found.
    pub fn find_next(&mut self, matcher: &Matcher, backward: bool) -> bool {
        let found = matcher.find_all(self.rope());
        let primary = self.selection().primary();
        let found = if backward {
            found
                .iter()
                .rev()
                .find(|(a, _)| *a < primary.from())
                .or(found.last())
        } else {
            found
                .iter()
                .find(|(a, b)| *a >= primary.to() && (*a, *b) != (primary.from(), primary.to()))
                .or(found.first())
        };
        match found {
            Some(&(a, b)) => {
                self.set_selection(Selection::single(Range::new(a, b)));
                true
            }
            None => false,
        }
    }

    /// Replaces the match the primary selection holds and selects the next
    /// one; without a selected match, only selects the next one.
    pub fn replace_match(&mut self, matcher: &Matcher, with: &str) -> bool {
        let primary = self.selection().primary();
        let found = matcher.find_all(self.rope());
        if found.contains(&(primary.from(), primary.to())) {
            let old = self.rope().slice(primary.from()..primary.to()).to_string();
            let text = matcher.replacement(&old, with);
            let n = text.chars().count();
            if let Ok(set) = ChangeSet::single(Change::replace(primary.from(), primary.to(), text))
            {
                let after = Selection::point(primary.from() + n);
                let _ = self.apply_selecting(&set, EditKind::Other, after);
            }
        }
        self.find_next(matcher, false)
    }

    /// Replaces every match as one undo step; how many.
    pub fn replace_all_matches(&mut self, matcher: &Matcher, with: &str) -> usize {
        let found = matcher.find_all(self.rope());
        let rope = self.rope().clone();
        let changes: Vec<Change> = found
            .iter()
            .map(|&(a, b)| {
                let old = rope.slice(a..b).to_string();
                Change::replace(a, b, matcher.replacement(&old, with))
            })
            .collect();
        let n = changes.len();
        match ChangeSet::new(changes) {
            Ok(set) if n > 0 => {
                let _ = self.apply(&set, EditKind::Other);
                n
            }
            _ => 0,
        }
    }
}
