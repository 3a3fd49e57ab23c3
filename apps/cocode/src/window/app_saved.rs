//! What the window remembers between runs ([`SavedState`]): taken in at
//! start, a workspace's layout and editors put back when it opens, and
//! written when a folder opens and when the window closes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cocode_ui::Theme;
use egui_dock::DockState;

use crate::window::app::CocodeApp;
use crate::window::command::PanelId;
use crate::window::io_worker::IoRequest;
use crate::window::keymap::Action;
use crate::window::saved::{Geometry, Loaded, SavedEditor, SavedState, SavedWorkspace};

impl CocodeApp {
    /// Takes in the saved state read from `file` (and writes there from
    /// now on): theme, the palette's recent commands, and what a notice
    /// must say about a file that could not be used.
    pub fn adopt_saved(&mut self, file: PathBuf, loaded: Loaded) {
        let Loaded { state, notice } = loaded;
        self.theme = match state.theme.as_deref() {
            Some("light") => Theme::Light,
            _ => Theme::Dark,
        };
        self.theme_source = if state.theme.as_deref() == Some("system") {
            crate::window::app::ThemeSource::System
        } else {
            crate::window::app::ThemeSource::Chosen
        };
        self.palette.recent = state
            .palette_recent
            .iter()
            .filter_map(|id| Action::from_id(id))
            .collect();
        if let Some(lines) = state.terminal_scrollback {
            self.terminals.set_scrollback(lines);
        }
        self.saved = state;
        self.saved_notice = notice;
        self.state_file = Some(file);
    }

    /// Puts back the layout and editors saved for `root` (a layout that
    /// no longer reads keeps today's).
    pub(super) fn restore_workspace(&mut self, root: &Path) {
        let Some(saved) = self.saved.workspace(root).cloned() else {
            return;
        };
        let mut ids = HashMap::new();
        for editor in &saved.editors {
            let path = root.join(&editor.path);
            let (id, request) = self.editors.open(root, &path);
            if let Some(request) = request {
                self.io.send(request);
            }
            if let Some(tab) = self.editors.get_mut(id) {
                tab.pending_select = Some((editor.line, editor.column, editor.column));
                tab.pending_first_line = Some(editor.first_line);
            }
            ids.insert(editor.tab, id);
        }
        let layout = saved
            .layout
            .map(serde_json::from_value::<DockState<PanelId>>);
        match layout {
            Some(Ok(mut dock)) => {
                // Terminals are not kept; editors have new ids.
                dock.retain_tabs(|tab| match tab {
                    PanelId::Terminal(_) => false,
                    PanelId::Editor(old) => match ids.get(old) {
                        Some(new) => {
                            *tab = PanelId::Editor(*new);
                            true
                        }
                        None => false,
                    },
                    _ => true,
                });
                self.dock = dock;
            }
            Some(Err(e)) => {
                tracing::warn!(root = %root.display(), "the saved layout is not used: {e}");
            }
            None => {}
        }
        // Editors the layout did not place go beside the others.
        for id in ids.into_values() {
            if self.dock.find_tab(&PanelId::Editor(id)).is_none() {
                self.add_editor_area_tab(PanelId::Editor(id));
            }
        }
    }

    /// The open workspace's layout and editors as they are now.
    fn workspace_now(&self) -> SavedWorkspace {
        let mut editors = Vec::new();
        for (_, tab) in self.dock.iter_all_tabs() {
            let PanelId::Editor(id) = tab else { continue };
            let Some(editor) = self.editors.get(*id) else {
                continue;
            };
            let Some(rel) = &editor.rel else { continue };
            let (line, column) = self
                .editors
                .docs
                .with_document(rel, |doc| {
                    let rope = doc.rope();
                    let head = doc.selection().primary().head.min(rope.len_chars());
                    let line = rope.char_to_line(head);
                    (line, head - rope.line_to_char(line))
                })
                .unwrap_or((0, 0));
            editors.push(SavedEditor {
                tab: *id,
                path: rel.as_str().to_owned(),
                line,
                column,
                first_line: editor.first_line,
            });
        }
        SavedWorkspace {
            layout: serde_json::to_value(&self.dock).ok(),
            editors,
        }
    }

    /// The saved state with what is open now.
    pub(crate) fn state_now(&self) -> SavedState {
        let mut state = self.saved.clone();
        state.theme = Some(
            match self.theme {
                _ if self.theme_source == crate::window::app::ThemeSource::System => "system",
                Theme::Light => "light",
                Theme::Dark => "dark",
            }
            .to_owned(),
        );
        state.palette_recent = self
            .palette
            .recent
            .iter()
            .map(|a| a.id().to_owned())
            .collect();
        if let Some(ctx) = self.repaint.get() {
            state.zoom = Some(ctx.zoom_factor());
            let (inner, outer, maximized) = ctx.input(|i| {
                let v = i.viewport();
                (v.inner_rect, v.outer_rect, v.maximized.unwrap_or(false))
            });
            if let Some(inner) = inner {
                state.window = Some(Geometry {
                    size: [inner.width(), inner.height()],
                    position: outer.map(|o| [o.min.x, o.min.y]),
                    maximized,
                });
            }
        }
        if let Some(root) = self.workspace_root() {
            state.set_workspace(root, self.workspace_now());
        }
        state
    }

    /// Notes the open workspace's layout before another one replaces it.
    pub(super) fn remember_workspace(&mut self) {
        if let Some(root) = self.workspace_root().cloned() {
            let now = self.workspace_now();
            self.saved.set_workspace(&root, now);
        }
    }

    /// Writes the saved state on the IO thread.
    pub(crate) fn save_state(&mut self) {
        self.saved = self.state_now();
        if let Some(file) = &self.state_file {
            self.io.send(IoRequest::SaveState {
                file: file.clone(),
                state: Box::new(self.saved.clone()),
            });
        }
    }

    /// Writes the saved state now (the window is closing: the IO thread
    /// may not get to it).
    pub(crate) fn save_state_now(&mut self) {
        self.saved = self.state_now();
        if let Some(file) = &self.state_file
            && let Err(e) = crate::host::config_file::replace_json(file, &self.saved)
        {
            tracing::warn!("the window's state was not saved: {e:#}");
        }
    }

    /// Forgets a recent workspace (`None`: all of them).
    pub(super) fn forget_recent(&mut self, root: Option<&Path>) {
        match root {
            Some(root) => self.saved.forget(root),
            None => {
                for root in std::mem::take(&mut self.saved.recent) {
                    self.saved.forget(&root);
                }
            }
        }
        self.save_state();
    }
}
