//! The Open Folder dialog's state.

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
}
