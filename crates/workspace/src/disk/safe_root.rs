//! Race-safe access to workspace files below the canonical root
//! ([`SafeRoot`]), what it finds and what it stages; the Unix and the
//! portable ways are its two child modules.

#[cfg(not(unix))]
use std::path::PathBuf;

use super::regular::EntryKind;
use super::stamp::Stamp;

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

/// What names what is at a path: its content hash (a regular file's, or
/// its identity above the ceiling; a link's target; nothing for a folder,
/// a FIFO or a device) and its form, or the kind of what no record names;
/// with the stamp a regular file had when it was read, where the system
/// gives one.
pub(crate) type Hashed = (
    Result<
        (
            cocode_core::snapshot::ContentHash,
            Option<cocode_core::snapshot::Form>,
        ),
        EntryKind,
    >,
    Option<Stamp>,
);

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
