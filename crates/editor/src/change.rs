//! Edits as data: a change set replaces char ranges of a rope, and its
//! inverse (computed against the text before) undoes it exactly.

use ropey::Rope;

/// Replaces the chars `start..end` (offsets in the text before the whole
/// change set) with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

impl Change {
    pub fn insert(at: usize, text: impl Into<String>) -> Self {
        Self {
            start: at,
            end: at,
            text: text.into(),
        }
    }

    pub fn delete(start: usize, end: usize) -> Self {
        Self {
            start,
            end,
            text: String::new(),
        }
    }

    pub fn replace(start: usize, end: usize, text: impl Into<String>) -> Self {
        Self {
            start,
            end,
            text: text.into(),
        }
    }
}

/// Why a change set cannot be made or applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("change {start}..{end} is reversed")]
    Reversed { start: usize, end: usize },
    #[error("changes at {0} overlap")]
    Overlap(usize),
    #[error("change ends at {end}, past the end of the text ({len} chars)")]
    OutOfBounds { end: usize, len: usize },
}

/// Non-overlapping changes in ascending order, all relative to one text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    changes: Vec<Change>,
}

impl ChangeSet {
    /// Sorts the changes; refuses reversed and overlapping ranges (two
    /// insertions at one offset are kept in the given order).
    pub fn new(mut changes: Vec<Change>) -> Result<Self, EditError> {
        for c in &changes {
            if c.start > c.end {
                return Err(EditError::Reversed {
                    start: c.start,
                    end: c.end,
                });
            }
        }
        changes.sort_by_key(|c| c.start);
        for pair in changes.windows(2) {
            if pair[1].start < pair[0].end {
                return Err(EditError::Overlap(pair[1].start));
            }
        }
        Ok(Self { changes })
    }

    pub fn single(change: Change) -> Result<Self, EditError> {
        Self::new(vec![change])
    }

    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    pub fn is_empty(&self) -> bool {
        self.changes
            .iter()
            .all(|c| c.start == c.end && c.text.is_empty())
    }

    /// Checks the ranges against a text of `len` chars.
    pub fn check(&self, len: usize) -> Result<(), EditError> {
        match self.changes.last() {
            Some(last) if last.end > len => Err(EditError::OutOfBounds { end: last.end, len }),
            _ => Ok(()),
        }
    }

    /// Applies the set to `rope` (all or nothing: bounds are checked first).
    pub fn apply(&self, rope: &mut Rope) -> Result<(), EditError> {
        self.check(rope.len_chars())?;
        // Back to front, so earlier offsets stay valid.
        for c in self.changes.iter().rev() {
            if c.end > c.start {
                rope.remove(c.start..c.end);
            }
            if !c.text.is_empty() {
                rope.insert(c.start, &c.text);
            }
        }
        Ok(())
    }

    /// The change set that undoes this one, given the text it applies to.
    pub fn invert(&self, before: &Rope) -> Result<Self, EditError> {
        self.check(before.len_chars())?;
        let mut shift: isize = 0;
        let mut inverse = Vec::with_capacity(self.changes.len());
        for c in &self.changes {
            let inserted = c.text.chars().count();
            let start = offset(c.start, shift);
            inverse.push(Change {
                start,
                end: start + inserted,
                text: before.slice(c.start..c.end).to_string(),
            });
            shift += signed(inserted) - signed(c.end - c.start);
        }
        Ok(Self { changes: inverse })
    }

    /// Where a char offset of the text before ends up after the set
    /// (a cursor at an insertion point moves past the inserted text).
    pub fn map_offset(&self, pos: usize) -> usize {
        let mut shift: isize = 0;
        for c in &self.changes {
            if c.start > pos || (c.start == pos && c.end > pos) {
                break;
            }
            if c.end > pos {
                // Inside a replaced range: to the end of its replacement.
                return offset(c.start, shift) + c.text.chars().count();
            }
            shift += signed(c.text.chars().count()) - signed(c.end - c.start);
        }
        offset(pos, shift)
    }
}

fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

fn offset(pos: usize, shift: isize) -> usize {
    pos.saturating_add_signed(shift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    #[test]
    fn several_changes_apply_against_the_original_offsets() {
        let mut rope = Rope::from_str("hello 세상 world");
        let set = ChangeSet::new(vec![
            Change::replace(6, 8, "wide"),
            Change::insert(0, ">> "),
            Change::delete(8, 14),
        ])
        .unwrap();
        let before = rope.clone();
        set.apply(&mut rope).unwrap();
        assert_eq!(rope.to_string(), ">> hello wide");
        set.invert(&before).unwrap().apply(&mut rope).unwrap();
        assert_eq!(rope, before);
    }

    #[test]
    fn bad_sets_are_refused_and_leave_the_text_alone() {
        assert_eq!(
            ChangeSet::new(vec![Change::delete(3, 1)]),
            Err(EditError::Reversed { start: 3, end: 1 })
        );
        assert_eq!(
            ChangeSet::new(vec![Change::delete(0, 4), Change::insert(2, "x")]),
            Err(EditError::Overlap(2))
        );
        let mut rope = Rope::from_str("abc");
        let set = ChangeSet::new(vec![Change::insert(0, "x"), Change::delete(2, 9)]).unwrap();
        assert_eq!(
            set.apply(&mut rope),
            Err(EditError::OutOfBounds { end: 9, len: 3 })
        );
        assert_eq!(rope.to_string(), "abc");
    }

    #[test]
    fn offsets_map_through_insertions_and_deletions() {
        let set = ChangeSet::new(vec![Change::insert(2, "XY"), Change::delete(4, 6)]).unwrap();
        // "abcdefg" -> "abXYcdg"
        assert_eq!(
            (0..=7).map(|p| set.map_offset(p)).collect::<Vec<_>>(),
            [0, 1, 4, 5, 6, 6, 6, 7]
        );
    }

    fn arb_set(len: usize) -> impl Strategy<Value = ChangeSet> {
        proptest::collection::vec((0..=len, 0..=len, "[a-z가-힣\n]{0,4}"), 0..5).prop_map(
            move |raw| {
                let mut changes: Vec<Change> = Vec::new();
                let mut points: Vec<(usize, usize, String)> = raw
                    .into_iter()
                    .map(|(a, b, t)| (a.min(b), a.max(b), t))
                    .collect();
                points.sort();
                let mut floor = 0;
                for (a, b, t) in points {
                    if a >= floor {
                        changes.push(Change::replace(a, b, t));
                        floor = b.max(a + 1);
                    }
                }
                ChangeSet::new(changes).unwrap_or_default()
            },
        )
    }

    proptest! {
        #[test]
        fn the_inverse_restores_the_text_exactly(
            (text, set) in "[a-z한글 \n]{0,40}".prop_flat_map(|t| {
                let len = t.chars().count();
                (Just(t), arb_set(len))
            })
        ) {
            let before = Rope::from_str(&text);
            let mut rope = before.clone();
            set.apply(&mut rope).unwrap();
            let inverse = set.invert(&before).unwrap();
            inverse.apply(&mut rope).unwrap();
            prop_assert_eq!(rope.to_string(), text);
        }
    }
}
