//! The Open Folder dialog's state, and another folder waiting to replace
//! the open one.

use std::path::PathBuf;

/// State of the Open Folder dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenFolderDialog {
    /// The folder whose subfolders are listed.
    pub browsing: PathBuf,
    /// The path text field.
    pub typed: String,
    pub subfolders: Option<Result<Vec<(String, PathBuf)>, String>>,
    pub error: Option<String>,
    /// Why this dialog shows instead of the system's folder picker.
    pub note: Option<String>,
}

/// A folder waiting to replace the open one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switching {
    /// The folder to open (canonical).
    pub to: PathBuf,
    /// What the person chose; `None` while they are asked.
    pub chosen: Option<SwitchChoice>,
}

/// How the open folder is left for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchChoice {
    /// Save every file first; the folder opens once none is left unsaved
    /// and every task has stopped.
    SaveFirst,
    /// Drop unsaved changes; the folder opens once every task has stopped.
    Discard,
}

/// What closing the open folder would end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Losses {
    /// Files with unsaved changes.
    pub unsaved: usize,
    /// Agent tasks running (they are stopped).
    pub tasks: usize,
    /// Terminals running a program (it is ended).
    pub programs: usize,
}

impl Losses {
    pub fn any(self) -> bool {
        self.unsaved + self.tasks + self.programs > 0
    }
}
