//! The command palette (Ctrl/Cmd+Shift+P): every command of the keymap,
//! matched fuzzily by its words, with its shortcut; the ones used lately
//! first. The list is short (some fifty commands), so matching runs in the
//! frame.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use crate::window::keymap::Action;

/// Most commands remembered as used lately.
pub const MAX_RECENT: usize = 12;

/// One row of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub action: Action,
    /// `Area: Title`.
    pub text: String,
    /// Char indices of `text` that matched the query.
    pub indices: Vec<u32>,
    /// Used lately.
    pub recent: bool,
}

/// The palette's state.
#[derive(Debug, Default)]
pub struct Palette {
    pub open: bool,
    pub query: String,
    pub selected: usize,
    /// Give the field the keyboard focus on the next frame.
    pub focus: bool,
    /// Commands run from the palette, the latest first.
    pub recent: Vec<Action>,
}

impl Palette {
    pub fn show(&mut self) {
        self.open = true;
        self.query.clear();
        self.selected = 0;
        self.focus = true;
    }

    pub fn close(&mut self) {
        self.open = false;
    }

    /// Notes that `action` ran from the palette.
    pub fn used(&mut self, action: Action) {
        self.recent.retain(|a| *a != action);
        self.recent.insert(0, action);
        self.recent.truncate(MAX_RECENT);
    }

    /// The rows for the query among `available` commands: with no query,
    /// those used lately then the rest in the keymap's order; otherwise the
    /// best matches, the ones used lately first among equals.
    pub fn rows(&self, available: &[Action]) -> Vec<Row> {
        let recent_rank = |a: Action| {
            self.recent
                .iter()
                .position(|r| *r == a)
                .unwrap_or(usize::MAX)
        };
        let query = self.query.trim();
        if query.is_empty() {
            let mut rows: Vec<Row> = available
                .iter()
                .map(|a| Row {
                    action: *a,
                    text: a.palette_text(),
                    indices: Vec::new(),
                    recent: recent_rank(*a) != usize::MAX,
                })
                .collect();
            // Stable: the keymap's order among the rest.
            rows.sort_by_key(|r| recent_rank(r.action));
            return rows;
        }
        let mut matcher = Matcher::new(Config::DEFAULT);
        let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
        let mut buf = Vec::new();
        let mut scored: Vec<(u32, usize, Row)> = available
            .iter()
            .filter_map(|a| {
                let text = a.palette_text();
                let mut indices = Vec::new();
                let score =
                    pattern.indices(Utf32Str::new(&text, &mut buf), &mut matcher, &mut indices)?;
                indices.sort_unstable();
                indices.dedup();
                Some((
                    score,
                    recent_rank(*a),
                    Row {
                        action: *a,
                        text,
                        indices,
                        recent: recent_rank(*a) != usize::MAX,
                    },
                ))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().map(|(_, _, row)| row).collect()
    }

    /// Moves the selection among `count` rows (wrapping).
    pub fn move_selection(&mut self, down: bool, count: usize) {
        if count == 0 {
            self.selected = 0;
        } else if down {
            self.selected = (self.selected + 1) % count;
        } else {
            self.selected = (self.selected + count - 1) % count;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::command::PanelId;
    use crate::window::keymap::EditorAction;

    #[test]
    fn typed_words_find_the_command_and_recent_ones_come_first() {
        let all = Action::all();
        let mut palette = Palette {
            query: "togcom".into(),
            ..Palette::default()
        };
        let rows = palette.rows(&all);
        assert_eq!(
            rows.first().map(|r| r.action),
            Some(Action::Editor(EditorAction::ToggleComment))
        );
        assert_eq!(rows[0].text, "Edit: Toggle Line Comment");
        palette.query = "no such thing at all".into();
        assert_eq!(palette.rows(&all), Vec::new());

        palette.query.clear();
        let plain: Vec<Action> = palette.rows(&all).into_iter().map(|r| r.action).collect();
        assert_eq!(plain, all);
        palette.used(Action::Show(PanelId::Trace));
        palette.used(Action::NewTerminal);
        palette.used(Action::Show(PanelId::Trace));
        let rows = palette.rows(&all);
        let first: Vec<(Action, bool)> =
            rows.iter().take(3).map(|r| (r.action, r.recent)).collect();
        assert_eq!(
            first,
            vec![
                (Action::Show(PanelId::Trace), true),
                (Action::NewTerminal, true),
                (Action::OpenFolder, false),
            ]
        );
        // Only what is available is listed.
        let rows = palette.rows(&[Action::Save]);
        assert_eq!(rows.len(), 1);
    }

    #[test]
    fn the_selection_wraps_and_recent_commands_are_bounded() {
        let mut palette = Palette::default();
        palette.move_selection(false, 3);
        assert_eq!(palette.selected, 2);
        palette.move_selection(true, 3);
        assert_eq!(palette.selected, 0);
        palette.move_selection(true, 0);
        assert_eq!(palette.selected, 0);
        for action in Action::all() {
            palette.used(action);
        }
        assert_eq!(palette.recent.len(), MAX_RECENT);
        assert_eq!(palette.recent[0], *Action::all().last().unwrap());
    }
}
