//! One tracked file in the sweep's stat cache: its stat and its content's
//! hash. The sweep and the cache's saved form ([`crate::sweep_file`]) both
//! use it.

use std::time::SystemTime;

use cocode_core::snapshot::{ContentHash, Form};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) stat: Stat,
    pub(crate) hash: ContentHash,
    /// mtime or ctime not older than the scan that recorded it: hash again
    /// next time.
    pub(crate) racy: bool,
    /// History holds the content (false: above the ceiling, hash only).
    pub(crate) kept: bool,
    /// What it is when not a plain regular file (a folder, a link, a FIFO,
    /// a device, a file with mode bits).
    pub(crate) form: Option<Form>,
}

/// What a file's metadata says of its content. The change time is part of
/// it: any write sets it to the file system's "now", and no program can
/// set it back, so a rewrite that restores the size and the mtime (`touch
/// -d`) is still seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) len: u64,
    pub(crate) mtime: Option<SystemTime>,
    /// Seconds and nanoseconds since the epoch (Unix only).
    pub(crate) ctime: Option<(i64, i64)>,
    pub(crate) ino: u64,
}

impl Stat {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        let (ctime, ino) = {
            use std::os::unix::fs::MetadataExt as _;
            (Some((meta.ctime(), meta.ctime_nsec())), meta.ino())
        };
        #[cfg(not(unix))]
        let (ctime, ino) = (None, 0);
        Self {
            len: meta.len(),
            mtime: meta.modified().ok(),
            ctime,
            ino,
        }
    }

    /// The form an entry of this metadata has: its mode bits for a
    /// regular file, the kind of anything else.
    pub(crate) fn form_of(meta: &std::fs::Metadata) -> Option<Form> {
        let kind = meta.file_type();
        if kind.is_symlink() {
            return Some(Form::Symlink);
        }
        if kind.is_dir() {
            return Some(Form::Folder);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _};
            if kind.is_fifo() {
                return Some(Form::Fifo);
            }
            if kind.is_file() {
                return Form::of_file_mode(meta.permissions().mode());
            }
        }
        if kind.is_file() {
            None
        } else {
            Some(Form::Special)
        }
    }

    /// Whether a write within the same clock tick as `started` could leave
    /// this stat as it is (git's "racy clean" rule): hash it again.
    pub(crate) fn racy_since(&self, started: SystemTime) -> bool {
        let ctime_racy = self.ctime.is_some_and(|(secs, nanos)| {
            let since = started
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default();
            let started = (
                i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
                i64::from(since.subsec_nanos()),
            );
            (secs, nanos) >= started
        });
        ctime_racy || self.mtime.is_none_or(|m| m >= started)
    }
}
