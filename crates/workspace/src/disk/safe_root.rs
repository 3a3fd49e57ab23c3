//! Race-safe access to workspace files below the canonical root
//! ([`SafeRoot`]), what it finds and what it stages; the Unix and the
//! portable ways are its two child modules.

#[cfg(not(unix))]
use std::path::PathBuf;

use super::regular::EntryKind;

#[cfg(not(unix))]
mod portable;
#[cfg(unix)]
mod unix;

/// What [`SafeRoot::entry`] found at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A regular file and its content.
    File(Vec<u8>),
    /// Anything else (never a `File`).
    Other(EntryKind),
}

/// A workspace file staged next to its target, waiting for [`SafeRoot::commit`].
#[derive(Debug)]
pub(crate) struct Staged {
    pub(crate) dir: Vec<String>,
    pub(crate) temp_name: String,
    pub(crate) name: String,
}

/// Race-safe access below the canonical workspace root. Paths are segment
/// lists relative to the root that the caller already resolved to real
/// (symlink-free) paths; any symlink met on the way is refused with
/// `ErrorKind::InvalidInput` ("the tree changed under us").
pub(crate) struct SafeRoot {
    #[cfg(not(unix))]
    root: PathBuf,
    #[cfg(unix)]
    fd: rustix::fd::OwnedFd,
}
