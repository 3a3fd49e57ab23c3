//! One keymap: every command a person can run by name (its id, its words,
//! its area) and its shortcuts on this system. Menus, the command palette,
//! the window's keyboard handler and the editor all read this table, and a
//! person's overrides in `<config dir>/cocode/keybindings.json` change it
//! for all of them at once.
//!
//! Overrides use VS Code's shape: a list of `{"key": "ctrl+k", "command":
//! "view.commandPalette"}`; a command prefixed with `-` removes a binding
//! (`{"key": "ctrl+shift+p", "command": "-view.commandPalette"}`, or every
//! binding of the command when `key` is left out). A person's binding comes
//! before the defaults, and a key a person binds means only their command.
//! Every entry that cannot be used is reported in words; the others apply.

use std::path::{Path, PathBuf};

use cocode_platform::Os;
use egui::{Key, Modifiers};

use crate::window::panel::PanelId;

/// What the editor does on a key of the table (the focused editor, or the
/// last one used when the palette runs it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EditorAction {
    Undo,
    Redo,
    SelectAll,
    SelectLine,
    AddNextOccurrence,
    DeleteLines,
    ToggleComment,
    Indent,
    Outdent,
    Find,
    Replace,
    GoToLine,
    FindNext,
    FindPrevious,
}

/// A command a person can run by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    OpenFolder,
    /// The typed-path Open Folder dialog (where the system has no picker,
    /// or for a person who would rather type).
    OpenFolderByPath,
    NewFromBrick,
    GoToFile,
    Save,
    SaveAll,
    CloseEditor,
    ReopenClosedEditor,
    RefreshExplorer,
    Quit,
    CommandPalette,
    /// Show a panel (Search puts the keyboard in its field).
    Show(PanelId),
    ResetLayout,
    ToggleTheme,
    NewTerminal,
    FocusTerminal,
    NewConversation,
    StopTask,
    Editor(EditorAction),
}

/// Where a command belongs: its menu and the palette's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Area {
    File,
    Edit,
    View,
    Terminal,
    Agent,
}

impl Area {
    pub fn title(self) -> &'static str {
        match self {
            Self::File => "File",
            Self::Edit => "Edit",
            Self::View => "View",
            Self::Terminal => "Terminal",
            Self::Agent => "Agent",
        }
    }
}

impl EditorAction {
    pub const ALL: [Self; 14] = [
        Self::Undo,
        Self::Redo,
        Self::SelectAll,
        Self::SelectLine,
        Self::AddNextOccurrence,
        Self::DeleteLines,
        Self::ToggleComment,
        Self::Indent,
        Self::Outdent,
        Self::Find,
        Self::Replace,
        Self::GoToLine,
        Self::FindNext,
        Self::FindPrevious,
    ];

    /// Whether the action changes the text (refused in a read-only editor).
    pub fn edits(self) -> bool {
        matches!(
            self,
            Self::Undo
                | Self::Redo
                | Self::DeleteLines
                | Self::ToggleComment
                | Self::Indent
                | Self::Outdent
                | Self::Replace
        )
    }
}

impl Action {
    /// Every command, in the order menus and an empty palette list them.
    pub fn all() -> Vec<Self> {
        let mut all = vec![
            Self::OpenFolder,
            Self::OpenFolderByPath,
            Self::NewFromBrick,
            Self::GoToFile,
            Self::Save,
            Self::SaveAll,
            Self::CloseEditor,
            Self::ReopenClosedEditor,
            Self::RefreshExplorer,
            Self::Quit,
            Self::CommandPalette,
        ];
        all.extend(PanelId::ALL.into_iter().map(Self::Show));
        all.extend([
            Self::ResetLayout,
            Self::ToggleTheme,
            Self::NewTerminal,
            Self::FocusTerminal,
            Self::NewConversation,
            Self::StopTask,
        ]);
        all.extend(EditorAction::ALL.into_iter().map(Self::Editor));
        all
    }

    /// The stable id a person's keybindings name.
    pub fn id(self) -> &'static str {
        match self {
            Self::OpenFolder => "file.openFolder",
            Self::OpenFolderByPath => "file.openFolderByPath",
            Self::NewFromBrick => "file.newFromBrick",
            Self::GoToFile => "file.goToFile",
            Self::Save => "file.save",
            Self::SaveAll => "file.saveAll",
            Self::CloseEditor => "file.closeEditor",
            Self::ReopenClosedEditor => "file.reopenClosedEditor",
            Self::RefreshExplorer => "file.refreshExplorer",
            Self::Quit => "file.quit",
            Self::CommandPalette => "view.commandPalette",
            Self::Show(panel) => panel_id(panel),
            Self::ResetLayout => "view.resetLayout",
            Self::ToggleTheme => "view.toggleTheme",
            Self::NewTerminal => "terminal.new",
            Self::FocusTerminal => "terminal.focus",
            Self::NewConversation => "agent.newConversation",
            Self::StopTask => "agent.stopTask",
            Self::Editor(e) => match e {
                EditorAction::Undo => "editor.undo",
                EditorAction::Redo => "editor.redo",
                EditorAction::SelectAll => "editor.selectAll",
                EditorAction::SelectLine => "editor.selectLine",
                EditorAction::AddNextOccurrence => "editor.addNextOccurrence",
                EditorAction::DeleteLines => "editor.deleteLines",
                EditorAction::ToggleComment => "editor.toggleComment",
                EditorAction::Indent => "editor.indent",
                EditorAction::Outdent => "editor.outdent",
                EditorAction::Find => "editor.find",
                EditorAction::Replace => "editor.replace",
                EditorAction::GoToLine => "editor.goToLine",
                EditorAction::FindNext => "editor.findNext",
                EditorAction::FindPrevious => "editor.findPrevious",
            },
        }
    }

    /// The command with this id.
    pub fn from_id(id: &str) -> Option<Self> {
        Self::all().into_iter().find(|a| a.id() == id)
    }

    /// What the command does, in a person's words.
    pub fn title(self) -> &'static str {
        match self {
            Self::OpenFolder => "Open Folder…",
            Self::OpenFolderByPath => "Open Folder by Path…",
            Self::NewFromBrick => "New Workspace from Brick…",
            Self::GoToFile => "Go to File…",
            Self::Save => "Save",
            Self::SaveAll => "Save All",
            Self::CloseEditor => "Close Editor",
            Self::ReopenClosedEditor => "Reopen Closed Editor",
            Self::RefreshExplorer => "Refresh Explorer",
            Self::Quit => "Quit",
            Self::CommandPalette => "Command Palette…",
            Self::Show(panel) => panel_title(panel),
            Self::ResetLayout => "Reset Layout",
            Self::ToggleTheme => "Toggle Light/Dark Theme",
            Self::NewTerminal => "New Terminal",
            Self::FocusTerminal => "Focus Terminal",
            Self::NewConversation => "New Conversation",
            Self::StopTask => "Stop the Shown Task",
            Self::Editor(e) => match e {
                EditorAction::Undo => "Undo",
                EditorAction::Redo => "Redo",
                EditorAction::SelectAll => "Select All",
                EditorAction::SelectLine => "Select Line",
                EditorAction::AddNextOccurrence => "Add Next Occurrence as a Cursor",
                EditorAction::DeleteLines => "Delete Lines",
                EditorAction::ToggleComment => "Toggle Line Comment",
                EditorAction::Indent => "Indent Lines",
                EditorAction::Outdent => "Outdent Lines",
                EditorAction::Find => "Find",
                EditorAction::Replace => "Replace",
                EditorAction::GoToLine => "Go to Line…",
                EditorAction::FindNext => "Find Next",
                EditorAction::FindPrevious => "Find Previous",
            },
        }
    }

    pub fn area(self) -> Area {
        match self {
            Self::OpenFolder
            | Self::OpenFolderByPath
            | Self::NewFromBrick
            | Self::GoToFile
            | Self::Save
            | Self::SaveAll
            | Self::CloseEditor
            | Self::ReopenClosedEditor
            | Self::RefreshExplorer
            | Self::Quit => Area::File,
            Self::CommandPalette | Self::Show(_) | Self::ResetLayout | Self::ToggleTheme => {
                Area::View
            }
            Self::NewTerminal | Self::FocusTerminal => Area::Terminal,
            Self::NewConversation | Self::StopTask => Area::Agent,
            Self::Editor(_) => Area::Edit,
        }
    }

    /// `Area: Title`, as the palette lists it.
    pub fn palette_text(self) -> String {
        format!("{}: {}", self.area().title(), self.title())
    }
}

fn panel_id(panel: PanelId) -> &'static str {
    match panel {
        PanelId::Explorer => "view.explorer",
        PanelId::Search => "view.search",
        PanelId::Welcome => "view.welcome",
        PanelId::Agent => "view.agent",
        PanelId::Problems => "view.problems",
        PanelId::Settings => "view.settings",
        PanelId::Trace => "view.trace",
        PanelId::ToolCatalog => "view.toolCatalog",
        PanelId::Approvals => "view.approvals",
        PanelId::SourceControl => "view.scm",
        PanelId::Review => "view.review",
        PanelId::Terminal(_) | PanelId::Editor(_) => "view.tab",
    }
}

fn panel_title(panel: PanelId) -> &'static str {
    match panel {
        PanelId::Explorer => "Show Explorer",
        PanelId::Search => "Search in Files",
        PanelId::Welcome => "Show Welcome",
        PanelId::Agent => "Show Agent",
        PanelId::Problems => "Show Problems",
        PanelId::Settings => "Open Settings",
        PanelId::Trace => "Show Trace",
        PanelId::ToolCatalog => "Show Tool Catalog",
        PanelId::Approvals => "Show Approvals",
        PanelId::SourceControl => "Show Source Control",
        PanelId::Review => "Show Review",
        PanelId::Terminal(_) => "Terminal",
        PanelId::Editor(_) => "Editor",
    }
}

/// A key with its modifiers. `primary` is Cmd on macOS and Ctrl elsewhere;
/// `ctrl` is the Control key on macOS, where it is a key of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[expect(clippy::struct_excessive_bools, reason = "a key's four modifiers")]
pub struct Chord {
    pub primary: bool,
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
    pub key: Key,
}

impl Chord {
    const fn new(key: Key) -> Self {
        Self {
            primary: false,
            ctrl: false,
            alt: false,
            shift: false,
            key,
        }
    }

    pub(crate) const fn primary(key: Key) -> Self {
        Self {
            primary: true,
            ..Self::new(key)
        }
    }

    const fn primary_shift(key: Key) -> Self {
        Self {
            primary: true,
            shift: true,
            ..Self::new(key)
        }
    }

    /// The Control key on every system (Control and the backtick open the
    /// terminal on macOS too, as in VS Code).
    const fn control(os: Os, key: Key) -> Self {
        if matches!(os, Os::MacOs) {
            Self {
                ctrl: true,
                ..Self::new(key)
            }
        } else {
            Self::primary(key)
        }
    }

    const fn with_shift(self) -> Self {
        Self {
            shift: true,
            ..self
        }
    }

    const fn with_alt(self) -> Self {
        Self { alt: true, ..self }
    }

    /// Whether a key press with `m` is this chord on `os` (exactly: Ctrl+P
    /// is not Ctrl+Shift+P).
    pub fn matches(&self, key: Key, m: Modifiers, os: Os) -> bool {
        let (primary, ctrl) = if matches!(os, Os::MacOs) {
            (m.mac_cmd || m.command, m.ctrl)
        } else {
            (m.ctrl || m.command, false)
        };
        key == self.key
            && primary == self.primary
            && ctrl == self.ctrl
            && m.alt == self.alt
            && m.shift == self.shift
    }

    /// The label menus and the palette show (`Ctrl+Shift+P`, `⇧⌘P`).
    pub fn label(&self, os: Os) -> String {
        let key = key_label(self.key, os);
        if matches!(os, Os::MacOs) {
            let mut s = String::new();
            for (on, sign) in [
                (self.ctrl, "⌃"),
                (self.alt, "⌥"),
                (self.shift, "⇧"),
                (self.primary, "⌘"),
            ] {
                if on {
                    s.push_str(sign);
                }
            }
            s + &key
        } else {
            let mut s = String::new();
            for (on, name) in [
                (self.primary, "Ctrl+"),
                (self.alt, "Alt+"),
                (self.shift, "Shift+"),
            ] {
                if on {
                    s.push_str(name);
                }
            }
            s + &key
        }
    }

    /// Reads `ctrl+shift+p`, `cmd+s`, `alt+up`, `f3` and the like.
    pub fn parse(text: &str, os: Os) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("the key is empty".to_owned());
        }
        if text.contains(' ') {
            return Err(format!(
                "“{text}” is a sequence of keys; cocode binds one key with its modifiers"
            ));
        }
        let mac = matches!(os, Os::MacOs);
        let parts: Vec<&str> = text.split('+').collect();
        // `ctrl++` names the plus key.
        let (mods, key) = if text.ends_with("++") {
            (&parts[..parts.len() - 2], "+")
        } else {
            let (key, mods) = parts.split_last().unwrap_or((&"", &[]));
            (mods, *key)
        };
        let mut chord = Self::new(
            parse_key(key)
                .ok_or_else(|| format!("“{key}” in “{text}” is not a key cocode knows"))?,
        );
        for m in mods {
            match m.to_ascii_lowercase().as_str() {
                "ctrl" | "control" => {
                    if mac {
                        chord.ctrl = true;
                    } else {
                        chord.primary = true;
                    }
                }
                "cmd" | "command" | "meta" | "super" | "win" if mac => chord.primary = true,
                "cmd" | "command" | "meta" | "super" | "win" => {
                    return Err(format!(
                        "“{m}” in “{text}” is the macOS Command key; on this system write “ctrl”"
                    ));
                }
                "shift" => chord.shift = true,
                "alt" | "option" | "opt" => chord.alt = true,
                other => {
                    return Err(format!("“{other}” in “{text}” is not a modifier"));
                }
            }
        }
        Ok(chord)
    }
}

fn parse_key(name: &str) -> Option<Key> {
    if name.is_empty() {
        return None;
    }
    Key::from_name(name).or_else(|| {
        Key::ALL.iter().copied().find(|k| {
            k.name().eq_ignore_ascii_case(name) || k.symbol_or_name().eq_ignore_ascii_case(name)
        })
    })
}

fn key_label(key: Key, os: Os) -> String {
    let mac = matches!(os, Os::MacOs);
    match key {
        Key::ArrowUp => (if mac { "↑" } else { "Up" }).to_owned(),
        Key::ArrowDown => (if mac { "↓" } else { "Down" }).to_owned(),
        Key::ArrowLeft => (if mac { "←" } else { "Left" }).to_owned(),
        Key::ArrowRight => (if mac { "→" } else { "Right" }).to_owned(),
        other => other.symbol_or_name().to_owned(),
    }
}

/// The shortcuts of this system, the person's overrides applied, and what
/// in those overrides could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    pub os: Os,
    /// Earlier bindings win: a person's come before the defaults.
    bindings: Vec<(Chord, Action)>,
    /// Why entries of the overrides were not used, in words.
    pub problems: Vec<String>,
    /// The person's keybindings file it read (or would have).
    pub file: Option<PathBuf>,
}

/// One entry of `keybindings.json`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(default)]
    key: Option<String>,
    command: String,
}

/// `<config dir>/cocode/keybindings.json`.
pub fn overrides_file() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.config_dir().join("cocode").join("keybindings.json"))
}

impl Keymap {
    /// The defaults of `os` (Cmd on macOS where others use Ctrl), as VS
    /// Code binds them.
    pub fn defaults(os: Os) -> Self {
        use EditorAction as E;
        let mac = matches!(os, Os::MacOs);
        let mut bindings = vec![
            (Chord::primary(Key::O), Action::OpenFolder),
            (Chord::primary(Key::P), Action::GoToFile),
            (Chord::primary(Key::S), Action::Save),
            (Chord::primary(Key::S).with_alt(), Action::SaveAll),
            (Chord::primary(Key::W), Action::CloseEditor),
            (Chord::primary_shift(Key::T), Action::ReopenClosedEditor),
            (Chord::primary(Key::Q), Action::Quit),
            (Chord::primary_shift(Key::P), Action::CommandPalette),
            (Chord::new(Key::F1), Action::CommandPalette),
            (Chord::primary_shift(Key::F), Action::Show(PanelId::Search)),
            (
                Chord::primary_shift(Key::E),
                Action::Show(PanelId::Explorer),
            ),
            (
                Chord::primary_shift(Key::M),
                Action::Show(PanelId::Problems),
            ),
            (Chord::primary_shift(Key::I), Action::Show(PanelId::Agent)),
            // VS Code's: Ctrl+Shift+G, and ⌃⇧G on macOS (⇧⌘G finds the
            // previous match there).
            (
                Chord::control(os, Key::G).with_shift(),
                Action::Show(PanelId::SourceControl),
            ),
            (Chord::primary(Key::Comma), Action::Show(PanelId::Settings)),
            (
                Chord::control(os, Key::Backtick).with_shift(),
                Action::NewTerminal,
            ),
            (Chord::control(os, Key::Backtick), Action::FocusTerminal),
            (Chord::primary(Key::Z), Action::Editor(E::Undo)),
            (Chord::primary_shift(Key::Z), Action::Editor(E::Redo)),
            (Chord::primary(Key::A), Action::Editor(E::SelectAll)),
            (Chord::primary(Key::L), Action::Editor(E::SelectLine)),
            (Chord::primary(Key::D), Action::Editor(E::AddNextOccurrence)),
            (Chord::primary_shift(Key::K), Action::Editor(E::DeleteLines)),
            (Chord::primary(Key::Slash), Action::Editor(E::ToggleComment)),
            (Chord::primary(Key::CloseBracket), Action::Editor(E::Indent)),
            (Chord::primary(Key::OpenBracket), Action::Editor(E::Outdent)),
            (Chord::primary(Key::F), Action::Editor(E::Find)),
            (Chord::new(Key::F3), Action::Editor(E::FindNext)),
            (
                Chord::new(Key::F3).with_shift(),
                Action::Editor(E::FindPrevious),
            ),
        ];
        if mac {
            // ⌘H hides the app and ⌘G finds the next match on macOS.
            bindings.extend([
                (
                    Chord::primary(Key::F).with_alt(),
                    Action::Editor(E::Replace),
                ),
                (Chord::control(os, Key::G), Action::Editor(E::GoToLine)),
                (Chord::primary(Key::G), Action::Editor(E::FindNext)),
                (
                    Chord::primary_shift(Key::G),
                    Action::Editor(E::FindPrevious),
                ),
            ]);
        } else {
            bindings.extend([
                (Chord::primary(Key::H), Action::Editor(E::Replace)),
                (Chord::primary(Key::G), Action::Editor(E::GoToLine)),
                (Chord::primary(Key::Y), Action::Editor(E::Redo)),
            ]);
        }
        Self {
            os,
            bindings,
            problems: Vec::new(),
            file: None,
        }
    }

    /// The defaults with the overrides in `text` applied.
    pub fn with_overrides(os: Os, text: &str) -> Self {
        let mut map = Self::defaults(os);
        let entries: Vec<serde_json::Value> = match serde_json::from_str(text) {
            Ok(serde_json::Value::Array(list)) => list,
            Ok(_) => {
                map.problems
                    .push("keybindings.json is not a list of bindings; the defaults apply".into());
                return map;
            }
            Err(e) => {
                map.problems.push(format!(
                    "keybindings.json is not JSON ({e}); the defaults apply"
                ));
                return map;
            }
        };
        let mut added = Vec::new();
        for (n, value) in entries.into_iter().enumerate() {
            let at = n + 1;
            if let Err(problem) = map.apply(value, &mut added) {
                map.problems
                    .push(format!("keybindings.json, entry {at}: {problem}"));
            }
        }
        added.extend(std::mem::take(&mut map.bindings));
        map.bindings = added;
        map
    }

    /// Applies one entry: a person's binding goes to `added`, a removal
    /// takes bindings out of the defaults and of what was added before.
    fn apply(
        &mut self,
        value: serde_json::Value,
        added: &mut Vec<(Chord, Action)>,
    ) -> Result<(), String> {
        let entry: Entry = serde_json::from_value(value).map_err(|e| e.to_string())?;
        let (remove, id) = match entry.command.strip_prefix('-') {
            Some(id) => (true, id),
            None => (false, entry.command.as_str()),
        };
        let action = Action::from_id(id).ok_or_else(|| format!("“{id}” is not a command"))?;
        let chord = entry
            .key
            .as_deref()
            .map(|k| Chord::parse(k, self.os))
            .transpose()?;
        if remove {
            let keep = |(c, a): &(Chord, Action)| *a != action || chord.is_some_and(|k| k != *c);
            self.bindings.retain(keep);
            added.retain(keep);
            return Ok(());
        }
        let chord = chord.ok_or("a binding needs a “key”")?;
        // The key now means the person's command only.
        self.bindings.retain(|(c, _)| *c != chord);
        added.retain(|(c, _)| *c != chord);
        added.push((chord, action));
        Ok(())
    }

    /// The person's keymap: the defaults, with `file`'s overrides when it
    /// exists (an unreadable file is reported, never a failure).
    pub fn load(os: Os, file: Option<&Path>) -> Self {
        let Some(file) = file else {
            return Self::defaults(os);
        };
        let mut map = match std::fs::read_to_string(file) {
            Ok(text) => Self::with_overrides(os, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::defaults(os),
            Err(e) => {
                let mut map = Self::defaults(os);
                map.problems.push(format!(
                    "{} cannot be read ({e}); the defaults apply",
                    file.display()
                ));
                map
            }
        };
        map.file = Some(file.to_path_buf());
        map
    }

    /// The first shortcut of `action`.
    pub fn chord(&self, action: Action) -> Option<Chord> {
        self.bindings
            .iter()
            .find(|(_, a)| *a == action)
            .map(|(c, _)| *c)
    }

    /// The label of the first shortcut of `action` (empty when it has none).
    pub fn label(&self, action: Action) -> String {
        self.chord(action)
            .map(|c| c.label(self.os))
            .unwrap_or_default()
    }

    /// The command a key press means.
    pub fn find(&self, key: Key, m: Modifiers) -> Option<Action> {
        self.bindings
            .iter()
            .find(|(c, _)| c.matches(key, m, self.os))
            .map(|(_, a)| *a)
    }

    /// The editor command a key press means.
    pub fn editor_action(&self, key: Key, m: Modifiers) -> Option<EditorAction> {
        match self.find(key, m) {
            Some(Action::Editor(e)) => Some(e),
            _ => None,
        }
    }

    /// Takes this frame's first key press that means a window command (not
    /// an editor's) for which `available` holds, and returns the command.
    pub fn take_window_action(
        &self,
        input: &mut egui::InputState,
        available: impl Fn(Action) -> bool,
    ) -> Option<Action> {
        let mut found = None;
        let index = input.events.iter().position(|event| {
            let egui::Event::Key {
                key,
                pressed: true,
                modifiers,
                ..
            } = event
            else {
                return false;
            };
            match self.find(*key, *modifiers) {
                Some(Action::Editor(_)) | None => false,
                Some(action) if available(action) => {
                    found = Some(action);
                    true
                }
                Some(_) => false,
            }
        })?;
        input.events.remove(index);
        found
    }
}

#[cfg(test)]
#[path = "keymap_tests.rs"]
mod tests;
