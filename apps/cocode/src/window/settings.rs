//! The Settings page's state: the search, the open folder's settings as
//! last read, what is being typed, and why the last change was refused.

use crate::host::settings::SettingsView;

/// What is being typed on the page, before it is applied.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Drafts {
    pub host: String,
    pub exception_name: String,
    pub exception_path: String,
    pub time_limit: String,
    pub retries: String,
    pub keep_per_path: String,
    pub cap_mib: String,
    pub max_kept: String,
    /// Terminal scrollback lines (empty: what is set now).
    pub scrollback: String,
    /// The agent entry being added or edited.
    pub agent: Option<crate::host::agent_settings::AgentDraft>,
    /// Secret values typed, by agent and variable, until stored.
    pub secrets: std::collections::HashMap<(String, String), String>,
}

impl std::fmt::Debug for Drafts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Typed secret values never show.
        f.debug_struct("Drafts")
            .field("host", &self.host)
            .field("agent", &self.agent)
            .field("secrets typed", &self.secrets.len())
            .finish_non_exhaustive()
    }
}

/// A part of the Settings page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The window's look and keys.
    Window,
    /// The open folder's `workspace.json`.
    Folder,
    /// The built-in agent's providers.
    Providers,
}

impl Section {
    pub const ALL: [Self; 3] = [Self::Window, Self::Folder, Self::Providers];

    pub fn title(self) -> &'static str {
        match self {
            Self::Window => "Window",
            Self::Folder => "This folder",
            Self::Providers => "Providers",
        }
    }
}

/// The Settings page.
#[derive(Debug, Default)]
pub struct SettingsPanel {
    /// Only settings whose words hold it are shown.
    pub query: String,
    /// The one part shown (`None`: all of them).
    pub section: Option<Section>,
    /// The open folder's settings (`None` until read).
    pub view: Option<SettingsView>,
    /// Reading them, or a change under way.
    pub busy: bool,
    /// Why the last change was refused, or the settings could not be read.
    pub error: Option<String>,
    pub drafts: Drafts,
    /// Give the search field the keyboard on the next frame.
    pub focus_search: bool,
}

impl SettingsPanel {
    /// Takes in the folder's settings as they are now: the fields show
    /// them again, what was being typed for lists stays.
    pub fn on_view(&mut self, view: SettingsView) {
        let c = &view.config;
        self.drafts.time_limit = c.limits.attempt_time_limit().as_secs().to_string();
        self.drafts.retries = c.limits.max_retries().to_string();
        self.drafts.keep_per_path = c.retention.keep_recent_per_path.to_string();
        self.drafts.cap_mib = (c.retention.byte_cap / (1024 * 1024)).to_string();
        self.drafts.max_kept = c.max_kept_file_mib.to_string();
        self.view = Some(view);
        self.busy = false;
    }

    /// Whether `section` is shown.
    pub fn shows_section(&self, section: Section) -> bool {
        self.section.is_none_or(|s| s == section)
    }

    /// Whether a setting with these words is shown for the search.
    pub fn shows(&self, words: &[&str]) -> bool {
        matches(&self.query, words)
    }
}

/// Whether every word of `query` is in one of `words` (any case, any
/// order); an empty query matches everything.
pub fn matches(query: &str, words: &[&str]) -> bool {
    let query = query.trim().to_lowercase();
    query
        .split_whitespace()
        .all(|q| words.iter().any(|w| w.to_lowercase().contains(q)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_matches_every_word_in_any_order() {
        let mut panel = SettingsPanel::default();
        assert!(panel.shows(&["Theme", "dark or light"]));
        panel.query = "LIGHT theme".into();
        assert!(panel.shows(&["Theme", "dark or light"]));
        panel.query = "theme retention".into();
        assert!(!panel.shows(&["Theme", "dark or light"]));
    }
}
