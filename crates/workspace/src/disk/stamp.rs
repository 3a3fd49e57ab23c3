//! A file's state known without reading it ([`Stamp`]) and the file
//! system's own clock ([`FsClock`]) it is compared with.

#[cfg(unix)]
use std::fs::OpenOptions;
use std::io;
use std::path::Path;

/// One state of a file, known without reading it: device, inode, size,
/// mode and both timestamps. Any change to a file sets its ctime to the file
/// system's "now", which no program can set back, so an equal stamp whose
/// ctime lies before a [`FsClock`] reading means the file did not change
/// since that reading (git's "racy clean" rule, with the file system's own
/// clock and granularity as the reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(super) dev: i128,
    pub(super) ino: i128,
    pub(super) size: i128,
    pub(super) mode: i128,
    pub(super) mtime: (i128, i128),
    pub(super) ctime: (i128, i128),
}

impl Stamp {
    /// True when every later change to the file would change this stamp.
    pub(crate) fn settled_before(&self, clock: &FsClock) -> bool {
        self.dev == clock.dev && self.ctime < clock.ctime
    }
}

/// The file system's "now" on one device: the ctime it gives a file it
/// changes ([`fs_clock`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FsClock {
    pub(super) dev: i128,
    pub(super) ctime: (i128, i128),
}

/// Widens any integer field of a `stat` (their types differ by platform).
#[cfg(unix)]
pub(super) fn wide<T: TryInto<i128>>(v: T) -> i128 {
    v.try_into().unwrap_or(-1)
}

/// Reads the file system's clock by changing `path`'s timestamps (the file
/// is created when missing).
pub(crate) fn fs_clock(path: &Path) -> io::Result<FsClock> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        file.set_modified(std::time::SystemTime::now())?;
        let meta = file.metadata()?;
        Ok(FsClock {
            dev: wide(meta.dev()),
            ctime: (wide(meta.ctime()), wide(meta.ctime_nsec())),
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "file stamps are only compared on Unix",
        ))
    }
}
