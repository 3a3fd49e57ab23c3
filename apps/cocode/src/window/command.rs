//! What views ask for: the dockable panels' ids and the [`Command`]s a frame
//! collects and applies once at its end.

use std::path::PathBuf;

use cocode_ui::Theme;

use crate::window::new_brick::BrickDialogChange;
pub use crate::window::panel::PanelId;

/// What an editor asks of its language server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LspAsk {
    /// The hover card for char `at` of tab `id`.
    Hover { id: u32, at: usize },
    /// The completion list at the primary cursor.
    Complete { id: u32, trigger: Option<char> },
    /// Go to the definition of the symbol at char `at`.
    Definition { id: u32, at: usize },
    /// Start a stopped server again.
    Restart(String),
    /// The person trusts the command this folder's configuration names for
    /// a server: recorded, then the server starts.
    Trust {
        server: String,
        command: Vec<String>,
    },
}

/// What the Providers page asks of its worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderAction {
    /// Store the typed key (`session_only`: keep it in memory instead).
    SaveKey {
        id: String,
        session_only: bool,
    },
    DeleteKey(String),
    /// Use the typed address (`reset`: the preset's again).
    SaveUrl {
        id: String,
        reset: bool,
    },
    /// Fetch the model list (test the connection).
    Models(String),
}

/// What to do with unsaved changes when an editor tab closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseEditor {
    /// Ask first when there are unsaved changes.
    Ask,
    Save,
    Discard,
}

/// Changes requested by views during a frame, applied once at its end,
/// by area: each area's commands are applied in its own file, with a
/// match that names every one of them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Command {
    Window(WindowCommand),
    Folder(FolderCommand),
    Brick(BrickCommand),
    Explorer(ExplorerCommand),
    Editor(EditorCommand),
    Agent(AgentCommand),
    Terminal(TerminalCommand),
    /// Ask the language servers (hover, completion, definition).
    Lsp(LspAsk),
    /// The Source Control panel's asks.
    Git(crate::window::scm::GitCommand),
    /// The Review panel's asks.
    Review(crate::window::review::ReviewCommand),
}

/// The window's own commands: the keymap's, the palette, notices, zoom,
/// Settings, panels, the theme, crash reports and quitting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowCommand {
    /// Run a command of the keymap (from the palette, a menu or its key).
    Run(crate::window::keymap::Action),
    /// Show (or hide) the command palette.
    Palette,
    /// Stop showing what the person's keybindings file got wrong.
    DismissKeymapNotice,
    /// Stop showing why the saved window state was not used.
    DismissStateNotice,
    /// The interface's zoom, in percent.
    SetZoom(u32),
    /// The editor's font size in whole points (`None`: the interface's).
    SetEditorFontSize(Option<u16>),
    /// Lines each terminal keeps above its screen.
    SetScrollback(usize),
    /// One change of the Settings page.
    EditSettings(crate::host::settings::SettingsEdit),
    /// Store (or with `None` remove) an agent's secret variable.
    StoreAgentSecret {
        agent: String,
        name: String,
        value: Option<cocode_core::services::Secret>,
    },
    /// Allow (or keep off) one grant of the folder's settings.
    DecideGrant {
        grant: crate::host::trust::Grant,
        allow: bool,
    },
    /// Take a workspace off the recent list (`None`: every one).
    ForgetRecent(Option<PathBuf>),
    ResetLayout,
    ShowPanel(PanelId),
    /// Empty the Trace panel's trace.
    ClearTrace,
    /// Save the trace's metadata to a file the person chooses.
    SaveTrace,
    /// The save dialog answered.
    SaveTraceTo(crate::window::system_dialog::Picked),
    SetTheme(Theme),
    /// Follow the system's light or dark setting.
    FollowSystemTheme,
    /// Run a read-only tool of the catalog with these arguments.
    RunToolSample {
        name: String,
        arguments: serde_json::Map<String, serde_json::Value>,
    },
    /// Show Settings, at one part of it (`None`: all of it).
    ShowSettings(Option<crate::window::settings::Section>),
    /// Show the crash reports' folder (and stop announcing them).
    OpenCrashFolder,
    /// Stop announcing the crash reports.
    DismissCrashNotice,
    Quit,
}

/// Opening a folder: the Open Folder dialog and switching folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderCommand {
    /// The system's folder picker (the typed-path dialog where there is
    /// none).
    ShowOpenFolder,
    /// The typed-path dialog.
    ShowTypedOpenFolder,
    /// The system's folder picker answered.
    SystemPicked(crate::window::system_dialog::Picked),
    /// Folder picker navigation.
    PickerBrowse(PathBuf),
    /// Resolve and open a folder (via the IO thread).
    OpenFolder(PathBuf),
    /// Open what the system or a drop asked for: a folder replaces the
    /// open one, a file of the open folder opens in an editor.
    OpenPath(PathBuf),
    /// The folder picker's path field changed.
    PickerTyped(String),
    CloseOpenFolder,
    /// Open the waiting folder now, dropping unsaved changes and stopping
    /// what runs.
    SwitchNow,
    /// Save every file with unsaved changes, then open the waiting folder.
    SwitchSaving,
    /// Keep the open folder.
    CancelSwitch,
}

/// The "New Workspace from Brick" dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrickCommand {
    /// Open the "New Workspace from Brick" dialog.
    ShowNewFromBrick,
    /// A change in that dialog.
    BrickDialog(BrickDialogChange),
    CreateFromBrick,
    CloseNewFromBrick,
}

/// The Explorer: folders, opening files, the person's file operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExplorerCommand {
    ToggleFolder(PathBuf),
    /// Open a file in an editor tab (or show the tab that has it).
    OpenFile(PathBuf),
    /// Start a file operation in the Explorer (ask for a name or confirm).
    FileAction(crate::window::explorer::FileAction),
    /// The Explorer prompt's name changed.
    FilePromptName(String),
    FilePromptSubmit,
    FilePromptCancel,
    Refresh,
}

/// Editor tabs: saving, closing, disk conflicts, quick open and search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorCommand {
    Save(u32),
    SaveAll,
    CloseEditor {
        id: u32,
        action: CloseEditor,
    },
    CancelCloseEditor,
    ReopenClosedEditor,
    /// Disk conflict: keep the buffer's text.
    KeepMine(u32),
    /// Disk conflict: take the text on disk.
    LoadTheirs(u32),
    /// Disk conflict: show (or hide) the disk's text against the buffer's.
    ToggleCompare(u32),
    DismissEditorNotice(u32),
    /// Put HEAD's lines back in place of a gutter mark's (version: the
    /// document's when the change was shown).
    RevertGitChange {
        id: u32,
        mark: cocode_git::LineMark,
        version: i32,
    },
    /// Close the window, dropping unsaved changes.
    QuitDiscarding,
    /// Save every file with unsaved changes, then close the window.
    QuitSaving,
    /// Show (or hide) quick open.
    QuickOpen,
    /// Show the Search panel with the keyboard in its field.
    ShowSearch,
    /// Replace every match of the Search panel's query in the folder.
    ReplaceInFiles,
    /// Open a file with a range of one line selected (a search result).
    OpenAt {
        path: PathBuf,
        line: usize,
        start: usize,
        end: usize,
    },
}

/// The Agent panel and the Providers page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentCommand {
    /// The Agent panel's prompt changed.
    AgentPrompt(String),
    AgentBackend(String),
    /// Send the composer's text as the reply the agent waits for.
    SendReply,
    /// Verify the waiting task's attempt as it stands.
    FinishAndVerify,
    /// Compact the waiting task's conversation now (the built-in agent).
    CompactNow,
    /// Run the last task's prompt again as a new task (`local`: with the
    /// local agent).
    RetryTask {
        local: bool,
    },
    /// The composer's model for the chosen provider (`None`: its default).
    AgentModel(Option<String>),
    /// A key being typed on the Providers page.
    ProviderKeyDraft {
        id: String,
        text: String,
    },
    /// An address being typed on the Providers page.
    ProviderUrlDraft {
        id: String,
        text: String,
    },
    /// Work for the Providers page's worker (the typed key is taken from
    /// its draft when the command is applied, never carried here).
    Provider(ProviderAction),
    /// Run the composer's text as a new task (in the tab shown while
    /// nothing was asked in it, otherwise in a new tab).
    RunTask,
    /// Stop the task of the tab shown.
    StopTask,
    /// Open an empty conversation tab.
    NewConversation,
    /// Show conversation tab N.
    ShowConversation(usize),
    /// Close conversation tab N (not while its task runs).
    CloseConversation(usize),
    ToolDecision {
        id: u64,
        decision: cocode_tool_protocol::ApprovalDecision,
    },
    TaskDecision {
        approve: bool,
    },
    /// Open a task's review detail.
    ShowTask(String),
    CloseTask,
    /// Roll the task back to its start.
    RollbackTask(String),
    /// Read what a rollback of the detail's task to this point would do.
    PreviewRollback {
        task_id: String,
        to: crate::host::review::RollbackTo,
    },
    /// Roll the task back to the point previewed.
    RollbackTo {
        task_id: String,
        to: crate::host::review::RollbackTo,
    },
    /// Allow a host the proxy refused for a task and run the task again.
    AllowAndRerun {
        task_id: String,
        host: String,
    },
    /// Tick (or untick) grant N of the folder-settings question.
    GrantToggle(usize),
    /// Record the ticked grants as allowed and the others as kept off,
    /// then start the run that waited.
    DecideGrants,
    /// Close the folder-settings question; the run does not start.
    CancelGrants,
}

/// Terminal tabs and the links they show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalCommand {
    /// Focus a terminal, opening one in the workspace root if none is open.
    FocusTerminal,
    /// Open another terminal.
    NewTerminal,
    /// Close a terminal tab; `confirmed` once the person agreed to end its
    /// running program.
    CloseTerminal {
        id: u32,
        confirmed: bool,
    },
    CancelCloseTerminal,
    /// Stop an agent's command (from its terminal tab).
    StopAgentCommand(u64),
    /// Ask before opening a link in the browser: one a terminal printed
    /// (`from_agent` false) or one in an agent's message.
    AskOpenLink {
        url: String,
        from_agent: bool,
    },
    OpenLink,
    CancelOpenLink,
}
