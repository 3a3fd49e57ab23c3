//! Selections: one or more ranges of char offsets, each with an anchor (where
//! it started) and a head (where the cursor is). They survive edits by being
//! mapped through change sets.

use crate::change::ChangeSet;

/// A range of the text; `anchor == head` is a plain cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Range {
    pub anchor: usize,
    pub head: usize,
}

impl Range {
    pub const fn new(anchor: usize, head: usize) -> Self {
        Self { anchor, head }
    }

    /// A cursor at `pos`.
    pub const fn point(pos: usize) -> Self {
        Self {
            anchor: pos,
            head: pos,
        }
    }

    pub fn from(self) -> usize {
        self.anchor.min(self.head)
    }

    pub fn to(self) -> usize {
        self.anchor.max(self.head)
    }

    pub fn is_empty(self) -> bool {
        self.anchor == self.head
    }

    /// The range after a change set (both ends mapped).
    #[must_use]
    pub fn map(self, set: &ChangeSet) -> Self {
        Self {
            anchor: set.map_offset(self.anchor),
            head: set.map_offset(self.head),
        }
    }

    /// Moves the head to `pos`, keeping the anchor when `extend`.
    #[must_use]
    pub fn moved(self, pos: usize, extend: bool) -> Self {
        if extend {
            Self::new(self.anchor, pos)
        } else {
            Self::point(pos)
        }
    }
}

/// One or more ranges, sorted by their start, never overlapping; one of
/// them is the primary (the one the view follows).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Selection {
    ranges: Vec<Range>,
    primary: usize,
}

impl Default for Selection {
    fn default() -> Self {
        Self::point(0)
    }
}

impl Selection {
    /// A single cursor.
    pub fn point(pos: usize) -> Self {
        Self::single(Range::point(pos))
    }

    pub fn single(range: Range) -> Self {
        Self {
            ranges: vec![range],
            primary: 0,
        }
    }

    /// Sorts and merges `ranges` (overlapping or identical ranges become
    /// one); `primary` indexes `ranges` as given. An empty list is a cursor
    /// at 0.
    pub fn new(ranges: Vec<Range>, primary: usize) -> Self {
        if ranges.is_empty() {
            return Self::point(0);
        }
        let primary = primary.min(ranges.len() - 1);
        let mut indexed: Vec<(usize, Range)> = ranges.into_iter().enumerate().collect();
        indexed.sort_by_key(|(_, r)| (r.from(), r.to()));
        let mut merged: Vec<Range> = Vec::with_capacity(indexed.len());
        let mut primary_at = 0;
        for (i, range) in indexed {
            match merged.last_mut() {
                Some(last)
                    if range.from() < last.to()
                        || (range.from() == last.from() && range.to() == last.to()) =>
                {
                    let (from, to) = (last.from(), last.to().max(range.to()));
                    // Keep the direction of the range that was there first.
                    *last = if last.head < last.anchor {
                        Range::new(to, from)
                    } else {
                        Range::new(from, to)
                    };
                }
                _ => merged.push(range),
            }
            if i == primary {
                primary_at = merged.len() - 1;
            }
        }
        Self {
            ranges: merged,
            primary: primary_at,
        }
    }

    pub fn ranges(&self) -> &[Range] {
        &self.ranges
    }

    pub fn primary(&self) -> Range {
        self.ranges[self.primary]
    }

    pub fn primary_index(&self) -> usize {
        self.primary
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Never true: a selection has at least one range.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The selection after a change set.
    #[must_use]
    pub fn map(&self, set: &ChangeSet) -> Self {
        Self::new(
            self.ranges.iter().map(|r| r.map(set)).collect(),
            self.primary,
        )
    }

    /// Each range transformed by `f` (then sorted and merged).
    #[must_use]
    pub fn transform(&self, f: impl FnMut(Range) -> Range) -> Self {
        Self::new(self.ranges.iter().copied().map(f).collect(), self.primary)
    }

    /// Adds a range and makes it the primary.
    #[must_use]
    pub fn with(&self, range: Range) -> Self {
        let mut ranges = self.ranges.clone();
        ranges.push(range);
        let primary = ranges.len() - 1;
        Self::new(ranges, primary)
    }

    /// Only the primary range.
    #[must_use]
    pub fn primary_only(&self) -> Self {
        Self::single(self.primary())
    }

    /// Clamps every offset to a text of `len` chars.
    #[must_use]
    pub fn clamped(self, len: usize) -> Self {
        if self.ranges.iter().all(|r| r.to() <= len) {
            return self;
        }
        self.transform(|r| Range::new(r.anchor.min(len), r.head.min(len)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::Change;
    use pretty_assertions::assert_eq;

    #[test]
    fn overlapping_and_identical_ranges_merge_and_the_primary_follows() {
        let sel = Selection::new(
            vec![
                Range::new(8, 4),
                Range::point(1),
                Range::new(6, 10),
                Range::point(1),
            ],
            2,
        );
        assert_eq!(sel.ranges(), &[Range::point(1), Range::new(10, 4)]);
        assert_eq!(sel.primary(), Range::new(10, 4));
        // Touching ranges stay apart: a cursor at a selection's edge is its own.
        let sel = Selection::new(vec![Range::new(0, 3), Range::point(3)], 1);
        assert_eq!(sel.ranges(), &[Range::new(0, 3), Range::point(3)]);
        assert_eq!(sel.primary_index(), 1);
    }

    #[test]
    fn ranges_map_through_edits_before_inside_and_after_them() {
        let sel = Selection::new(vec![Range::point(2), Range::new(5, 7)], 0);
        let set = ChangeSet::new(vec![Change::insert(0, "ab"), Change::delete(6, 9)]).unwrap();
        assert_eq!(sel.map(&set).ranges(), &[Range::point(4), Range::new(7, 8)]);
    }
}
