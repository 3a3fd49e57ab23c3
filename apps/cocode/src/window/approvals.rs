//! The Approvals panel's state: which waiting tool call is selected, and
//! whether the panel takes the keyboard on its next frame.

/// The Approvals panel.
#[derive(Debug, Default)]
pub struct ApprovalsPanel {
    /// The selected approval (the first when none is, or it was answered).
    pub selected: Option<u64>,
    /// Take the keyboard on the next frame (the panel was just shown).
    pub focus: bool,
}

impl ApprovalsPanel {
    /// The selection among `ids` (the waiting approvals, in order): kept
    /// while it still waits, else the first.
    pub fn settle(&mut self, ids: &[u64]) -> Option<u64> {
        self.selected = self
            .selected
            .filter(|s| ids.contains(s))
            .or_else(|| ids.first().copied());
        self.selected
    }

    /// Moves the selection one row down (or up) among `ids`, stopping at
    /// the ends.
    pub fn step(&mut self, ids: &[u64], down: bool) {
        let at = self
            .settle(ids)
            .and_then(|s| ids.iter().position(|i| *i == s));
        if let Some(at) = at {
            let next = if down {
                (at + 1).min(ids.len() - 1)
            } else {
                at.saturating_sub(1)
            };
            self.selected = Some(ids[next]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selection_follows_what_still_waits() {
        let mut panel = ApprovalsPanel::default();
        assert_eq!(panel.settle(&[]), None);
        assert_eq!(panel.settle(&[4, 7, 9]), Some(4));
        panel.step(&[4, 7, 9], true);
        panel.step(&[4, 7, 9], true);
        panel.step(&[4, 7, 9], true);
        assert_eq!(panel.selected, Some(9));
        panel.step(&[4, 7, 9], false);
        assert_eq!(panel.selected, Some(7));
        // 7 was answered: the first still waiting is selected.
        assert_eq!(panel.settle(&[4, 9]), Some(4));
        panel.step(&[4, 9], false);
        assert_eq!(panel.selected, Some(4));
    }
}
