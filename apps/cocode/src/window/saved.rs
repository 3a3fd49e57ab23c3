//! What the window remembers between runs, in
//! `<config dir>/cocode/window.json`: the theme and zoom, the window's size
//! and place, the last workspace and the recent ones, the commands run
//! lately from the palette, and per workspace the dock layout with its open
//! editors (file, cursor). It is written whole and atomically when a
//! folder opens and when the window closes. A file that cannot be read,
//! is broken or comes from a newer cocode is set aside (kept beside it as
//! `window.json.broken`) and the window starts with the defaults and a
//! notice saying so: never a crash, never a silent reset.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The format written; an older one is read, a newer one is refused.
pub const VERSION: u32 = 1;
/// Most recent workspaces remembered.
pub const MAX_RECENT: usize = 10;

/// The window's size and place, in points.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Geometry {
    pub size: [f32; 2],
    #[serde(default)]
    pub position: Option<[f32; 2]>,
    #[serde(default)]
    pub maximized: bool,
}

/// One open editor of a workspace's layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedEditor {
    /// The tab's id in the saved layout.
    pub tab: u32,
    /// The workspace path (`/`-separated).
    pub path: String,
    /// The primary cursor: line and column (chars), from 0.
    #[serde(default)]
    pub line: usize,
    #[serde(default)]
    pub column: usize,
    /// The first line shown, from 0.
    #[serde(default)]
    pub first_line: usize,
}

/// A workspace's layout and editors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedWorkspace {
    /// The dock (`egui_dock`'s own form); terminals are not kept.
    #[serde(default)]
    pub layout: Option<serde_json::Value>,
    #[serde(default)]
    pub editors: Vec<SavedEditor>,
}

/// Everything remembered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SavedState {
    pub version: u32,
    /// `dark` or `light`.
    pub theme: Option<String>,
    /// The interface's zoom (Ctrl/Cmd with + and -).
    pub zoom: Option<f32>,
    /// The editor's font size in points (`None`: the interface's
    /// monospace size).
    pub editor_font_size: Option<f32>,
    /// Lines each terminal keeps above its screen (`None`: the default).
    pub terminal_scrollback: Option<usize>,
    /// The Review panel shows hunks side by side rather than unified.
    pub review_side_by_side: bool,
    pub window: Option<Geometry>,
    pub last_workspace: Option<PathBuf>,
    /// The latest first.
    pub recent: Vec<PathBuf>,
    /// Command ids run lately from the palette, the latest first.
    pub palette_recent: Vec<String>,
    /// By the workspace's path.
    pub workspaces: BTreeMap<String, SavedWorkspace>,
}

impl Default for SavedState {
    fn default() -> Self {
        Self {
            version: VERSION,
            theme: None,
            zoom: None,
            editor_font_size: None,
            terminal_scrollback: None,
            review_side_by_side: false,
            window: None,
            last_workspace: None,
            recent: Vec::new(),
            palette_recent: Vec::new(),
            workspaces: BTreeMap::new(),
        }
    }
}

/// `<config dir>/cocode/window.json`.
pub fn state_file() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.config_dir().join("cocode").join("window.json"))
}

/// What loading found.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub state: SavedState,
    /// Why the defaults are used instead of the file, in words.
    pub notice: Option<String>,
}

impl SavedState {
    /// Reads `text` (the file's contents).
    pub fn parse(text: &str) -> Result<Self, String> {
        let state: Self =
            serde_json::from_str(text).map_err(|e| format!("it is not valid ({e})"))?;
        if state.version > VERSION {
            return Err(format!(
                "it was written by a newer cocode (format {}, this one reads {VERSION})",
                state.version
            ));
        }
        Ok(state)
    }

    /// Loads `file`: missing is the defaults; broken is the defaults with a
    /// notice, the file set aside so nothing of it is lost.
    pub fn load(file: &Path) -> Loaded {
        let problem = match std::fs::read_to_string(file) {
            Ok(text) => match Self::parse(&text) {
                Ok(state) => {
                    return Loaded {
                        state,
                        notice: None,
                    };
                }
                Err(problem) => problem,
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Loaded {
                    state: Self::default(),
                    notice: None,
                };
            }
            Err(e) => format!("it cannot be read ({e})"),
        };
        let kept = match crate::host::config_file::set_aside(file, "broken") {
            Ok(aside) => format!(" It was kept as {}.", aside.display()),
            Err(e) => format!(" It could not be set aside ({e:#}) and will be replaced."),
        };
        Loaded {
            state: Self::default(),
            notice: Some(format!(
                "The saved window state {} was not used: {problem}. The default layout is shown.{kept}",
                file.display()
            )),
        }
    }

    /// Puts `root` first among the recent workspaces and makes it the last.
    pub fn opened(&mut self, root: &Path) {
        self.recent.retain(|r| r != root);
        self.recent.insert(0, root.to_path_buf());
        self.recent.truncate(MAX_RECENT);
        self.last_workspace = Some(root.to_path_buf());
    }

    /// Forgets `root` as a recent workspace (its layout too).
    pub fn forget(&mut self, root: &Path) {
        self.recent.retain(|r| r != root);
        if self.last_workspace.as_deref() == Some(root) {
            self.last_workspace = None;
        }
        self.workspaces.remove(&key(root));
    }

    pub fn workspace(&self, root: &Path) -> Option<&SavedWorkspace> {
        self.workspaces.get(&key(root))
    }

    pub fn set_workspace(&mut self, root: &Path, saved: SavedWorkspace) {
        self.workspaces.insert(key(root), saved);
    }
}

fn key(root: &Path) -> String {
    root.to_string_lossy().into_owned()
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "tests lay out and break the file"
)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn recent_workspaces_are_latest_first_without_repeats_and_bounded() {
        let mut state = SavedState::default();
        for n in 0..12 {
            state.opened(Path::new(&format!("/w/{n}")));
        }
        state.opened(Path::new("/w/5"));
        assert_eq!(state.recent.len(), MAX_RECENT);
        assert_eq!(state.recent[0], PathBuf::from("/w/5"));
        assert_eq!(state.recent[1], PathBuf::from("/w/11"));
        assert_eq!(state.recent.iter().filter(|r| r.ends_with("5")).count(), 1);
        assert_eq!(state.last_workspace, Some(PathBuf::from("/w/5")));
        state.set_workspace(Path::new("/w/5"), SavedWorkspace::default());
        state.forget(Path::new("/w/5"));
        assert_eq!(state.last_workspace, None);
        assert!(state.workspace(Path::new("/w/5")).is_none());
        assert!(!state.recent.contains(&PathBuf::from("/w/5")));
    }

    #[test]
    fn a_broken_or_newer_file_falls_back_with_a_notice_and_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("window.json");
        assert_eq!(
            SavedState::load(&file),
            Loaded {
                state: SavedState::default(),
                notice: None
            }
        );
        std::fs::write(&file, "{ \"recent\": [1, 2").unwrap();
        let loaded = SavedState::load(&file);
        assert_eq!(loaded.state, SavedState::default());
        let notice = loaded.notice.unwrap();
        assert!(notice.contains("was not used: it is not valid"), "{notice}");
        assert!(notice.contains("window.json.broken"), "{notice}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("window.json.broken")).unwrap(),
            "{ \"recent\": [1, 2"
        );
        assert!(!file.exists());
        std::fs::write(&file, "{ \"version\": 99 }").unwrap();
        let notice = SavedState::load(&file).notice.unwrap();
        assert!(
            notice.contains("written by a newer cocode (format 99"),
            "{notice}"
        );
        // An older file without the newer fields reads as it was.
        std::fs::write(&file, "{ \"version\": 1, \"theme\": \"light\" }").unwrap();
        let loaded = SavedState::load(&file);
        assert_eq!(loaded.notice, None);
        assert_eq!(loaded.state.theme.as_deref(), Some("light"));
    }
}
