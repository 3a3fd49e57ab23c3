//! Where agent children may write: a name the launcher, its policy and the
//! confinement share.

use std::path::PathBuf;

/// Where agent children may write (besides the temp folder).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WritableRoots {
    pub workspace: Option<PathBuf>,
    pub exceptions: Vec<PathBuf>,
}
