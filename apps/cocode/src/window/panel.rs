//! The dockable panels' ids.

use serde::{Deserialize, Serialize};

/// The dockable panels. Small serialisable ids; the viewer borrows the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PanelId {
    Explorer,
    /// Search in the folder's files.
    Search,
    /// The editor area's start page (shown until a file opens beside it).
    Welcome,
    Agent,
    /// A terminal tab: a person's shell or an agent's command.
    Terminal(u32),
    /// An editor tab.
    Editor(u32),
    /// Every file's diagnostics, and the language servers' states.
    Problems,
    /// Settings: the window's, the providers' (keys, addresses, models)
    /// and the open folder's.
    Settings,
    /// Every tool call of the folder's tasks.
    Trace,
    /// The tools agents call, as the catalog defines them.
    ToolCatalog,
    /// Every tool call waiting for the person, across the tasks.
    Approvals,
    /// Git: the changed files, staging, commits, branches.
    SourceControl,
    /// A task's changes hunk by hunk: keep or undo, viewed, checkpoints.
    Review,
}

impl PanelId {
    pub const ALL: [Self; 11] = [
        Self::Explorer,
        Self::Search,
        Self::SourceControl,
        Self::Welcome,
        Self::Agent,
        Self::Review,
        Self::Approvals,
        Self::Problems,
        Self::Settings,
        Self::Trace,
        Self::ToolCatalog,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Self::Explorer => "Explorer",
            Self::Search => "Search",
            Self::Welcome => "Welcome",
            Self::Agent => "Agent",
            Self::Terminal(_) => "Terminal",
            Self::Editor(_) => "Editor",
            Self::Problems => "Problems",
            Self::Settings => "Settings",
            Self::Trace => "Trace",
            Self::ToolCatalog => "Tool catalog",
            Self::Approvals => "Approvals",
            Self::SourceControl => "Source Control",
            Self::Review => "Review",
        }
    }
}
