//! The disk layer under the gate and the store: every create, write, rename
//! and removal in the product ends up in this file (the single-writer rule;
//! `boundaries.yaml` lists it next to `gate.rs` and `store.rs`).
//!
//! Two kinds of writes live here:
//! - `.cocode/` state (blobs, indexes, journals, config): plain paths, since
//!   agents cannot write under `.cocode/` and the folder is ours;
//! - workspace files, through [`SafeRoot`]: on Unix every directory on the
//!   way is opened relative to its parent with `O_NOFOLLOW`, so a directory
//!   swapped for a symlink between the policy check and the write makes the
//!   operation fail instead of writing outside the workspace.
//!
//! Durability: writes are not synced one by one. The gate collects what it
//! wrote and calls [`barrier`] once per operation, after the blobs, the
//! journal and the staged file contents are written and before the first
//! visible change.
#![expect(
    clippy::disallowed_methods,
    reason = "the disk layer of the workspace gate and store: the single writer"
)]

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek as _, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temp-file name next to `path` that no other writer in this or another
/// process picks.
fn temp_sibling(path: &Path) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}-{n}.tmp", std::process::id()))
}

/// Writes `bytes` to `path` through a same-directory temp file and a rename,
/// so readers see the old or the new content, never a mix. Not synced: the
/// caller's [`barrier`] makes it durable.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let temp = temp_sibling(path);
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.flush()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Like [`write_atomic`], through `spare`, a file that already exists: its
/// start is overwritten with `bytes`, it is cut to their length, and it is
/// renamed to `path`. No inode is allocated or freed (a journal-less ext4
/// scans past every inode freed in the last minutes on each allocation).
/// Not synced: the caller's [`barrier`] makes it durable. On an error the
/// spare is left where it was, its content undefined.
pub(crate) fn write_atomic_reusing(spare: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let file = OpenOptions::new().write(true).open(spare)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt as _;
        file.write_all_at(bytes, 0)?;
    }
    #[cfg(not(unix))]
    {
        let mut file = &file;
        file.seek(io::SeekFrom::Start(0))?;
        file.write_all(bytes)?;
    }
    file.set_len(bytes.len() as u64)?;
    drop(file);
    fs::rename(spare, path)
}

/// Like [`write_atomic`] and synced before the rename (config files and
/// other one-off writes that have no barrier of their own).
pub(crate) fn write_atomic_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let temp = temp_sibling(path);
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)?;
        sync_dir(path.parent().unwrap_or(path))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Appends one or more complete lines in one write, creating the file's
/// folder when missing and starting a new (empty) file with `header`. When
/// the write fails part-way, the file is cut back to its old length so a
/// later line never glues onto half of this one (a crash mid-write is
/// handled by [`repair_torn_tail`] during recovery).
pub(crate) fn append(path: &Path, header: Option<&[u8]>, bytes: &[u8]) -> io::Result<()> {
    let open = || OpenOptions::new().create(true).append(true).open(path);
    let mut file = match open() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir)?;
            }
            open()?
        }
        other => other?,
    };
    let before = file.metadata()?.len();
    let joined;
    let bytes = match header {
        Some(header) if before == 0 => {
            joined = [header, bytes].concat();
            &joined[..]
        }
        _ => bytes,
    };
    let written = file.write_all(bytes).and_then(|()| file.flush());
    if written.is_err() {
        let _ = file.set_len(before);
    }
    written
}

/// Writes `bytes` at offset `at` of `path` (created when missing) in one
/// write, first cutting off anything past `at` (a torn tail a crash left);
/// a failed write is cut back to `at`. Not synced: the caller's
/// [`barrier`] makes it durable.
pub(crate) fn append_at(path: &Path, at: u64, bytes: &[u8]) -> io::Result<()> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    if file.metadata()?.len() != at {
        file.set_len(at)?;
    }
    #[cfg(unix)]
    let written = {
        use std::os::unix::fs::FileExt as _;
        file.write_all_at(bytes, at)
    };
    #[cfg(not(unix))]
    let written = {
        use std::io::Seek as _;
        let mut file = &file;
        file.seek(io::SeekFrom::Start(at))
            .and_then(|_| file.write_all(bytes))
    };
    if written.is_err() {
        let _ = file.set_len(at);
    }
    written
}

/// Mends a file that does not end with `\n`: a last line that `complete`
/// accepts (a whole record whose newline alone is missing) gets its
/// newline; anything else after the last `\n` (an append cut short) is cut
/// off. Returns whether the file changed.
pub(crate) fn repair_torn_tail(path: &Path, complete: impl Fn(&[u8]) -> bool) -> io::Result<bool> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut f) => f.read_to_end(&mut bytes)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(false);
    }
    let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let mut file = OpenOptions::new().write(true).open(path)?;
    if complete(&bytes[keep..]) {
        file.seek(io::SeekFrom::End(0))?;
        file.write_all(b"\n")?;
    } else {
        file.set_len(keep as u64)?;
    }
    file.sync_all()?;
    Ok(true)
}

/// An exclusive lock on a file, held until dropped (an OS file lock: it
/// ends with the process, whatever way the process ends).
#[derive(Debug)]
pub(crate) struct FileLock {
    _file: File,
}

/// Why a lock was not taken.
#[derive(Debug)]
pub(crate) enum LockRefused {
    /// Another holder has it; what it wrote in the file.
    Held(String),
    Io(io::Error),
}

/// Takes the exclusive lock on `path` (created if missing) without waiting,
/// and writes `holder` into it for whoever finds it taken.
pub(crate) fn try_lock_file(path: &Path, holder: &str) -> Result<FileLock, LockRefused> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(LockRefused::Io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            return Err(LockRefused::Held(text.trim().to_owned()));
        }
        Err(fs::TryLockError::Error(e)) => return Err(LockRefused::Io(e)),
    }
    let written = file
        .set_len(0)
        .and_then(|()| file.seek(io::SeekFrom::Start(0)))
        .and_then(|_| file.write_all(holder.as_bytes()))
        .and_then(|()| file.flush());
    written.map_err(LockRefused::Io)?;
    Ok(FileLock { _file: file })
}

pub(crate) fn create_dir_all(path: &Path) -> io::Result<()> {
    fs::create_dir_all(path)
}

/// Removes a file; an absent file is not an error (removal is idempotent).
pub(crate) fn remove_file(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Removes a folder if it is empty; anything else is left alone.
pub(crate) fn remove_empty_dir(path: &Path) -> io::Result<()> {
    match fs::remove_dir(path) {
        Ok(()) => Ok(()),
        Err(e)
            if e.kind() == io::ErrorKind::NotFound
                || e.kind() == io::ErrorKind::DirectoryNotEmpty =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

pub(crate) fn rename(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)
}

/// Creates an empty file that must not exist yet (the case probe).
pub(crate) fn create_new_empty(path: &Path) -> io::Result<()> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map(drop)
}

/// What tells one file or folder from another at the same path: its inode
/// and its birth time (a folder removed and made again often gets the
/// freed inode back).
pub(crate) type EntryId = (u64, std::time::SystemTime);

/// The identity of what is at `path`; `None` when nothing is there, or
/// where the file system or the standard library does not tell a birth
/// time (every entry then counts as new).
pub(crate) fn entry_id(path: &Path) -> Option<EntryId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let meta = fs::symlink_metadata(path).ok()?;
        Some((meta.ino(), meta.created().ok()?))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        // Windows cannot open a directory for flushing; NTFS journals the
        // rename itself.
        let _ = dir;
        Ok(())
    }
}

/// Makes the named files' contents and the named folders' entries durable
/// (the caller's ordering point). Linux syncs the file system of `anchor`
/// (the workspace's, where all of them are) with one `syncfs`: measured
/// here in one session, 1,000 separate gate writes took 0.96 s this way
/// against 1.63 s with an fsync per file and folder (five files and three
/// folders an operation) and 1.74 s with those fsyncs on eight threads.
/// Elsewhere each file is synced, then each folder, so a rename or
/// creation recorded in a folder never outlives its content. The lists
/// are kept on Linux too: the tests audit them there.
pub(crate) fn barrier(
    anchor: &Path,
    files: &BTreeSet<PathBuf>,
    dirs: &BTreeSet<PathBuf>,
) -> io::Result<()> {
    #[cfg(test)]
    BARRIER_WATCH.with(|watch| {
        if let Some(seen) = watch.borrow_mut().as_mut() {
            seen(files, dirs);
        }
    });
    #[cfg(target_os = "linux")]
    {
        let _ = (files, dirs);
        rustix::fs::syncfs(File::open(anchor)?)?;
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = anchor;
        for path in files {
            match sync_file(path) {
                // Renamed away or removed since it was written: nothing to keep.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                other => other?,
            }
        }
        for dir in dirs {
            match sync_dir(dir) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                other => other?,
            }
        }
        Ok(())
    }
}

/// What each [`barrier`] on this thread was given (the audit in tests).
#[cfg(test)]
pub(crate) type BarrierWatch = Box<dyn FnMut(&BTreeSet<PathBuf>, &BTreeSet<PathBuf>)>;

#[cfg(test)]
thread_local! {
    pub(crate) static BARRIER_WATCH: std::cell::RefCell<Option<BarrierWatch>> =
        const { std::cell::RefCell::new(None) };
}

#[cfg(not(target_os = "linux"))]
fn sync_file(path: &Path) -> io::Result<()> {
    // Windows flushes only handles opened for writing.
    #[cfg(windows)]
    let file = OpenOptions::new().write(true).open(path)?;
    #[cfg(not(windows))]
    let file = File::open(path)?;
    file.sync_data()
}

/// What is at a workspace path, without following a final symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

/// Opens `path` for reading only if it is a regular file (`None` when
/// nothing is there): a link in the last place is not followed, and a FIFO
/// or a device that replaced the file is refused without blocking.
pub(crate) fn open_regular_file(path: &Path) -> io::Result<Option<File>> {
    #[cfg(unix)]
    {
        use rustix::fs::{FileType, Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd = match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let st = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        Ok(Some(File::from(fd)))
    }
    #[cfg(not(unix))]
    {
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.is_file() => File::open(path).map(Some),
            Ok(_) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            )),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Everything `file` holds, read without asking its size first: two reads
/// for a small file (the content, then the end), where `fs::read` adds a
/// `statx` and an `lseek`.
pub(crate) fn read_all(file: File) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(16 * 1024);
    // `Take` hides the `File`, whose own `read_to_end` asks for the size.
    file.take(u64::MAX).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// One state of a file, known without reading it: device, inode, size,
/// mode and both timestamps. Any change to a file sets its ctime to the file
/// system's "now", which no program can set back, so an equal stamp whose
/// ctime lies before a [`FsClock`] reading means the file did not change
/// since that reading (git's "racy clean" rule, with the file system's own
/// clock and granularity as the reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: i128,
    ino: i128,
    size: i128,
    mode: i128,
    mtime: (i128, i128),
    ctime: (i128, i128),
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
    dev: i128,
    ctime: (i128, i128),
}

/// Widens any integer field of a `stat` (their types differ by platform).
#[cfg(unix)]
fn wide<T: TryInto<i128>>(v: T) -> i128 {
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

#[cfg(unix)]
mod unix {
    use super::{Entry, EntryKind, SafeRoot, Staged, Stamp, wide};
    use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
    #[cfg(target_os = "linux")]
    use rustix::fs::ResolveFlags;
    use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;
    use std::fs::File;
    use std::io::{self, Write};
    use std::path::Path;
    #[cfg(target_os = "linux")]
    use std::sync::atomic::{AtomicBool, Ordering};

    fn map(e: Errno) -> io::Error {
        if e == Errno::LOOP || e == Errno::NOTDIR {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "a directory on the path is a symlink or not a directory",
            )
        } else {
            e.into()
        }
    }

    /// A directory handle: the root's own, or one opened below it.
    enum DirFd<'a> {
        Root(BorrowedFd<'a>),
        Owned(OwnedFd),
    }

    impl AsFd for DirFd<'_> {
        fn as_fd(&self) -> BorrowedFd<'_> {
            match self {
                Self::Root(fd) => *fd,
                Self::Owned(fd) => fd.as_fd(),
            }
        }
    }

    fn kind_of(st: &rfs::Stat) -> EntryKind {
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => EntryKind::File,
            FileType::Directory => EntryKind::Dir,
            FileType::Symlink => EntryKind::Symlink,
            _ => EntryKind::Other,
        }
    }

    /// The kind of `name` in `d`, without following a symlink.
    fn kind_in(d: &DirFd<'_>, name: &str) -> io::Result<Option<EntryKind>> {
        Ok(stat_in(d, name)?.map(|st| kind_of(&st)))
    }

    /// The `stat` of `name` in `d`, without following a symlink.
    fn stat_in(d: &DirFd<'_>, name: &str) -> io::Result<Option<rfs::Stat>> {
        match rfs::statat(d.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(st)),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(map(e)),
        }
    }

    fn stamp_of(st: &rfs::Stat) -> Stamp {
        Stamp {
            dev: wide(st.st_dev),
            ino: wide(st.st_ino),
            size: wide(st.st_size),
            mode: wide(st.st_mode),
            mtime: (wide(st.st_mtime), wide(st.st_mtime_nsec)),
            ctime: (wide(st.st_ctime), wide(st.st_ctime_nsec)),
        }
    }

    /// The content of `name` in `d` (never through a symlink).
    fn read_in(d: &DirFd<'_>, name: &str) -> io::Result<Option<Vec<u8>>> {
        match open_regular_in(d, name)? {
            Some(file) => super::read_all(file).map(Some),
            None => Ok(None),
        }
    }

    /// Opens `name` in `d` for reading: never through a symlink, and only a
    /// regular file. `O_NONBLOCK` keeps a FIFO swapped in after a `stat`
    /// from blocking the open; the `fstat` of what was opened refuses it.
    fn open_regular_in(d: &DirFd<'_>, name: &str) -> io::Result<Option<File>> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd = match rfs::openat(d.as_fd(), name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(map(e)),
        };
        let st = rfs::fstat(&fd).map_err(map)?;
        if kind_of(&st) != EntryKind::File {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        Ok(Some(File::from(fd)))
    }

    /// A folder's names, or why it could not be opened (tests).
    #[cfg(test)]
    type Listing = Result<Vec<String>, io::ErrorKind>;

    /// Set once `openat2` failed as missing or filtered: walks from then on.
    #[cfg(target_os = "linux")]
    static OPENAT2_UNAVAILABLE: AtomicBool = AtomicBool::new(false);

    /// How `openat2` resolves workspace paths: below the root, no symlink
    /// anywhere (not even the last segment), no magic links.
    #[cfg(target_os = "linux")]
    const BENEATH: ResolveFlags = ResolveFlags::BENEATH
        .union(ResolveFlags::NO_SYMLINKS)
        .union(ResolveFlags::NO_MAGICLINKS);

    const DIR_FLAGS: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);

    impl SafeRoot {
        pub(crate) fn open(root: &Path) -> io::Result<Self> {
            let fd = rfs::open(root, DIR_FLAGS, Mode::empty()).map_err(map)?;
            Ok(Self { fd })
        }

        /// Opens the directory `dir` (segments), optionally creating missing
        /// ones. On Linux one `openat2` that refuses every symlink and any
        /// escape from the root opens the whole path; elsewhere (or where the
        /// kernel lacks it) one `openat` per segment, each with `O_NOFOLLOW`.
        fn dir(&self, dir: &[String], create: bool) -> io::Result<DirFd<'_>> {
            if dir.is_empty() {
                return Ok(DirFd::Root(self.fd.as_fd()));
            }
            #[cfg(target_os = "linux")]
            if let Some(opened) = self.open_beneath(dir, create) {
                return opened;
            }
            self.walk(dir, create)
        }

        /// The directory through `openat2`; `None` when the walk must do it
        /// (the kernel has no `openat2`, or a folder must be created).
        #[cfg(target_os = "linux")]
        fn open_beneath(&self, dir: &[String], create: bool) -> Option<io::Result<DirFd<'_>>> {
            if OPENAT2_UNAVAILABLE.load(Ordering::Relaxed) {
                return None;
            }
            match rfs::openat2(
                self.fd.as_fd(),
                dir.join("/"),
                DIR_FLAGS,
                Mode::empty(),
                BENEATH,
            ) {
                Ok(fd) => Some(Ok(DirFd::Owned(fd))),
                // Not in this kernel, or filtered (containers).
                Err(Errno::NOSYS | Errno::PERM | Errno::INVAL) => {
                    OPENAT2_UNAVAILABLE.store(true, Ordering::Relaxed);
                    None
                }
                Err(Errno::NOENT) if create => None,
                Err(Errno::XDEV) => Some(Err(map(Errno::LOOP))),
                Err(e) => Some(Err(map(e))),
            }
        }

        /// How each way of opening `dir` answers: (through `openat2`, one
        /// segment at a time), each as the names found in the folder or the
        /// error kind. Both ways must agree.
        #[cfg(test)]
        pub(crate) fn both_ways(&self, dir: &[String]) -> (Option<Listing>, Listing) {
            let names = |d: io::Result<DirFd<'_>>| {
                d.map_err(|e| e.kind()).map(|d| {
                    let mut names: Vec<String> = rfs::Dir::read_from(d.as_fd())
                        .unwrap()
                        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                        .filter(|n| n != "." && n != "..")
                        .collect();
                    names.sort();
                    names
                })
            };
            #[cfg(target_os = "linux")]
            let beneath = self.open_beneath(dir, false).map(names);
            #[cfg(not(target_os = "linux"))]
            let beneath = None;
            (beneath, names(self.walk(dir, false)))
        }

        /// Creates `name` in `dir` with one `openat2` (no symlink anywhere
        /// on the path); `None` when the folder must be made first or the
        /// kernel has no `openat2`.
        #[cfg(target_os = "linux")]
        fn create_beneath(
            &self,
            dir: &[String],
            name: &str,
            flags: OFlags,
            mode: Mode,
        ) -> Option<io::Result<OwnedFd>> {
            if OPENAT2_UNAVAILABLE.load(Ordering::Relaxed) {
                return None;
            }
            let mut path = dir.join("/");
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(name);
            match rfs::openat2(self.fd.as_fd(), path, flags, mode, BENEATH) {
                Ok(fd) => Some(Ok(fd)),
                Err(Errno::NOSYS | Errno::PERM | Errno::INVAL) => {
                    OPENAT2_UNAVAILABLE.store(true, Ordering::Relaxed);
                    None
                }
                Err(Errno::NOENT) => None,
                Err(Errno::XDEV) => Some(Err(map(Errno::LOOP))),
                Err(e) => Some(Err(map(e))),
            }
        }

        /// Opens `dir` one segment at a time from the root.
        fn walk(&self, dir: &[String], create: bool) -> io::Result<DirFd<'_>> {
            let mut current = DirFd::Root(self.fd.as_fd());
            for segment in dir {
                let next = match rfs::openat(
                    current.as_fd(),
                    segment.as_str(),
                    DIR_FLAGS,
                    Mode::empty(),
                ) {
                    Err(Errno::NOENT) if create => {
                        match rfs::mkdirat(
                            current.as_fd(),
                            segment.as_str(),
                            Mode::from_bits_truncate(0o777),
                        ) {
                            Ok(()) | Err(Errno::EXIST) => {}
                            Err(e) => return Err(map(e)),
                        }
                        rfs::openat(current.as_fd(), segment.as_str(), DIR_FLAGS, Mode::empty())
                            .map_err(map)?
                    }
                    other => other.map_err(map)?,
                };
                current = DirFd::Owned(next);
            }
            Ok(current)
        }

        /// The directory `dir`, `None` when it does not exist.
        fn existing_dir(&self, dir: &[String]) -> io::Result<Option<DirFd<'_>>> {
            match self.dir(dir, false) {
                Ok(d) => Ok(Some(d)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            }
        }

        /// What is at `name`: a regular file's content, another kind, or
        /// nothing. One walk down the directories for both questions.
        pub(crate) fn entry(&self, dir: &[String], name: &str) -> io::Result<Option<Entry>> {
            Ok(self.stamped_entry(dir, name)?.map(|(entry, _)| entry))
        }

        /// [`Self::entry`] with the stamp the file had just before it was
        /// read.
        pub(crate) fn stamped_entry(
            &self,
            dir: &[String],
            name: &str,
        ) -> io::Result<Option<(Entry, Option<Stamp>)>> {
            let Some(d) = self.existing_dir(dir)? else {
                return Ok(None);
            };
            let Some(st) = stat_in(&d, name)? else {
                return Ok(None);
            };
            match kind_of(&st) {
                EntryKind::File => {
                    Ok(read_in(&d, name)?.map(|bytes| (Entry::File(bytes), Some(stamp_of(&st)))))
                }
                kind => Ok(Some((Entry::Other(kind), None))),
            }
        }

        /// The stamp of whatever is at `name` now.
        #[cfg(test)]
        pub(crate) fn stamp(&self, dir: &[String], name: &str) -> io::Result<Option<Stamp>> {
            match self.existing_dir(dir)? {
                Some(d) => Ok(stat_in(&d, name)?.map(|st| stamp_of(&st))),
                None => Ok(None),
            }
        }

        pub(crate) fn kind(&self, dir: &[String], name: &str) -> io::Result<Option<EntryKind>> {
            match self.existing_dir(dir)? {
                Some(d) => kind_in(&d, name),
                None => Ok(None),
            }
        }

        /// The content of a regular file, `None` when absent.
        pub(crate) fn read(&self, dir: &[String], name: &str) -> io::Result<Option<Vec<u8>>> {
            match self.existing_dir(dir)? {
                Some(d) => read_in(&d, name),
                None => Ok(None),
            }
        }

        /// A regular file opened for reading (never through a symlink);
        /// `None` when absent.
        pub(crate) fn open_regular(&self, dir: &[String], name: &str) -> io::Result<Option<File>> {
            match self.existing_dir(dir)? {
                Some(d) => open_regular_in(&d, name),
                None => Ok(None),
            }
        }

        /// Names in a directory (no `.`/`..`), with their kinds.
        pub(crate) fn list(&self, dir: &[String]) -> io::Result<Vec<(String, EntryKind)>> {
            let d = self.dir(dir, false)?;
            let mut out = Vec::new();
            for entry in rfs::Dir::read_from(d.as_fd()).map_err(map)? {
                let entry = entry.map_err(map)?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if name == "." || name == ".." {
                    continue;
                }
                let kind = self.kind(dir, &name)?.unwrap_or(EntryKind::Other);
                out.push((name, kind));
            }
            out.sort();
            Ok(out)
        }

        /// Writes `bytes` to a temp file in the target's directory (created
        /// when missing). Nothing visible changes until [`Self::commit`].
        pub(crate) fn stage(
            &self,
            dir: &[String],
            name: &str,
            temp_name: &str,
            bytes: &[u8],
        ) -> io::Result<Staged> {
            let flags = OFlags::WRONLY
                | OFlags::CREATE
                | OFlags::TRUNC
                | OFlags::NOFOLLOW
                | OFlags::CLOEXEC;
            let mode = Mode::from_bits_truncate(0o666);
            #[cfg(target_os = "linux")]
            let opened = self.create_beneath(dir, temp_name, flags, mode);
            #[cfg(not(target_os = "linux"))]
            let opened: Option<io::Result<OwnedFd>> = None;
            let fd = if let Some(fd) = opened {
                fd?
            } else {
                let d = self.dir(dir, true)?;
                rfs::openat(d.as_fd(), temp_name, flags, mode).map_err(map)?
            };
            let mut file = File::from(fd);
            file.write_all(bytes)?;
            file.flush()?;
            Ok(Staged {
                dir: dir.to_vec(),
                temp_name: temp_name.to_owned(),
                name: name.to_owned(),
            })
        }

        /// Fsyncs a staged file (human saves, which have no barrier).
        pub(crate) fn sync_staged(&self, staged: &Staged) -> io::Result<()> {
            let d = self.dir(&staged.dir, false)?;
            let fd = rfs::openat(
                d.as_fd(),
                staged.temp_name.as_str(),
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(map)?;
            rfs::fsync(&fd)?;
            Ok(())
        }

        /// Atomically replaces the target with the staged file.
        pub(crate) fn commit(&self, staged: &Staged) -> io::Result<()> {
            self.commit_if(staged, None).map(drop)
        }

        /// [`Self::commit`], only while the target still has `stamp` (checked
        /// in the same open folder); `false` and nothing done otherwise.
        pub(crate) fn commit_if(&self, staged: &Staged, stamp: Option<&Stamp>) -> io::Result<bool> {
            let d = self.dir(&staged.dir, false)?;
            if let Some(stamp) = stamp
                && stat_in(&d, &staged.name)?.map(|st| stamp_of(&st)).as_ref() != Some(stamp)
            {
                return Ok(false);
            }
            rfs::renameat(
                d.as_fd(),
                staged.temp_name.as_str(),
                d.as_fd(),
                staged.name.as_str(),
            )
            .map_err(map)?;
            Ok(true)
        }

        /// Removes `name` while it still has `stamp`; `false` and nothing
        /// done otherwise.
        pub(crate) fn unlink_if(
            &self,
            dir: &[String],
            name: &str,
            stamp: &Stamp,
        ) -> io::Result<bool> {
            let d = self.dir(dir, false)?;
            if stat_in(&d, name)?.map(|st| stamp_of(&st)).as_ref() != Some(stamp) {
                return Ok(false);
            }
            rfs::unlinkat(d.as_fd(), name, AtFlags::empty()).map_err(map)?;
            Ok(true)
        }

        pub(crate) fn unlink(&self, dir: &[String], name: &str) -> io::Result<()> {
            let d = self.dir(dir, false)?;
            match rfs::unlinkat(d.as_fd(), name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => Ok(()),
                Err(e) => Err(map(e)),
            }
        }

        /// Removes an empty directory; a non-empty or absent one is left alone.
        pub(crate) fn rmdir_if_empty(&self, dir: &[String], name: &str) -> io::Result<()> {
            let d = self.dir(dir, false)?;
            match rfs::unlinkat(d.as_fd(), name, AtFlags::REMOVEDIR) {
                Ok(()) | Err(Errno::NOENT | Errno::NOTEMPTY | Errno::EXIST) => Ok(()),
                Err(e) => Err(map(e)),
            }
        }

        /// Creates the folder `name` (and the folders above it); an
        /// existing entry of that name is `AlreadyExists`.
        pub(crate) fn make_dir(&self, dir: &[String], name: &str) -> io::Result<()> {
            let d = self.dir(dir, true)?;
            rfs::mkdirat(d.as_fd(), name, Mode::from_bits_truncate(0o777)).map_err(map)
        }

        /// Moves a file; refuses to replace an existing target.
        pub(crate) fn rename(
            &self,
            from: (&[String], &str),
            to: (&[String], &str),
        ) -> io::Result<()> {
            let src = self.dir(from.0, false)?;
            let dst = self.dir(to.0, true)?;
            if rfs::statat(dst.as_fd(), to.1, AtFlags::SYMLINK_NOFOLLOW).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "rename target exists",
                ));
            }
            rfs::renameat(src.as_fd(), from.1, dst.as_fd(), to.1).map_err(map)
        }
    }
}

#[cfg(not(unix))]
mod portable {
    //! Path-based fallback: every directory on the way is checked with
    //! `symlink_metadata` just before use. A window between the check and the
    //! write remains (Windows has no `openat`); Windows needs administrator
    //! rights or developer mode to create symlinks at all.
    use super::{Entry, EntryKind, SafeRoot, Staged, Stamp};
    use std::fs::{self, OpenOptions};
    use std::io::{self, Write};
    use std::path::{Path, PathBuf};

    impl SafeRoot {
        pub(crate) fn open(root: &Path) -> io::Result<Self> {
            Ok(Self {
                root: root.to_path_buf(),
            })
        }

        fn dir(&self, dir: &[String], create: bool) -> io::Result<PathBuf> {
            let mut current = self.root.clone();
            for segment in dir {
                current.push(segment);
                match fs::symlink_metadata(&current) {
                    Ok(m) if m.is_dir() && !m.file_type().is_symlink() => {}
                    Ok(_) => {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            "a directory on the path is a symlink or not a directory",
                        ));
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                        fs::create_dir(&current)?;
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(current)
        }

        pub(crate) fn kind(&self, dir: &[String], name: &str) -> io::Result<Option<EntryKind>> {
            let d = match self.dir(dir, false) {
                Ok(d) => d,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(e),
            };
            match fs::symlink_metadata(d.join(name)) {
                Ok(m) => Ok(Some(if m.file_type().is_symlink() {
                    EntryKind::Symlink
                } else if m.is_file() {
                    EntryKind::File
                } else if m.is_dir() {
                    EntryKind::Dir
                } else {
                    EntryKind::Other
                })),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            }
        }

        pub(crate) fn entry(&self, dir: &[String], name: &str) -> io::Result<Option<Entry>> {
            match self.kind(dir, name)? {
                None => Ok(None),
                Some(EntryKind::File) => match self.read(dir, name)? {
                    Some(bytes) => Ok(Some(Entry::File(bytes))),
                    None => Ok(None),
                },
                Some(kind) => Ok(Some(Entry::Other(kind))),
            }
        }

        /// Without `openat` a stamp could describe another file than the
        /// one read, so none is given and every check reads the file.
        pub(crate) fn stamped_entry(
            &self,
            dir: &[String],
            name: &str,
        ) -> io::Result<Option<(Entry, Option<Stamp>)>> {
            Ok(self.entry(dir, name)?.map(|entry| (entry, None)))
        }

        pub(crate) fn read(&self, dir: &[String], name: &str) -> io::Result<Option<Vec<u8>>> {
            match self.kind(dir, name)? {
                None => Ok(None),
                Some(EntryKind::File) => fs::read(self.dir(dir, false)?.join(name)).map(Some),
                Some(_) => Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a regular file",
                )),
            }
        }

        pub(crate) fn open_regular(
            &self,
            dir: &[String],
            name: &str,
        ) -> io::Result<Option<fs::File>> {
            match self.kind(dir, name)? {
                None => Ok(None),
                Some(EntryKind::File) => fs::File::open(self.dir(dir, false)?.join(name)).map(Some),
                Some(_) => Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a regular file",
                )),
            }
        }

        pub(crate) fn list(&self, dir: &[String]) -> io::Result<Vec<(String, EntryKind)>> {
            let d = self.dir(dir, false)?;
            let mut out = Vec::new();
            for entry in fs::read_dir(d)? {
                let name = entry?.file_name().to_string_lossy().into_owned();
                let kind = self.kind(dir, &name)?.unwrap_or(EntryKind::Other);
                out.push((name, kind));
            }
            out.sort();
            Ok(out)
        }

        pub(crate) fn stage(
            &self,
            dir: &[String],
            name: &str,
            temp_name: &str,
            bytes: &[u8],
        ) -> io::Result<Staged> {
            let d = self.dir(dir, true)?;
            let mut file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(d.join(temp_name))?;
            file.write_all(bytes)?;
            file.flush()?;
            Ok(Staged {
                dir: dir.to_vec(),
                temp_name: temp_name.to_owned(),
                name: name.to_owned(),
            })
        }

        pub(crate) fn sync_staged(&self, staged: &Staged) -> io::Result<()> {
            let d = self.dir(&staged.dir, false)?;
            OpenOptions::new()
                .write(true)
                .open(d.join(&staged.temp_name))?
                .sync_all()
        }

        pub(crate) fn commit(&self, staged: &Staged) -> io::Result<()> {
            let d = self.dir(&staged.dir, false)?;
            super::replace_with_retry(&d.join(&staged.temp_name), &d.join(&staged.name))
        }

        /// No stamps here: a stamped change is never made (the caller reads
        /// the file and uses the plain call).
        pub(crate) fn commit_if(&self, staged: &Staged, stamp: Option<&Stamp>) -> io::Result<bool> {
            match stamp {
                Some(_) => Ok(false),
                None => self.commit(staged).map(|()| true),
            }
        }

        pub(crate) fn unlink_if(
            &self,
            _dir: &[String],
            _name: &str,
            _stamp: &Stamp,
        ) -> io::Result<bool> {
            Ok(false)
        }

        pub(crate) fn unlink(&self, dir: &[String], name: &str) -> io::Result<()> {
            let d = self.dir(dir, false)?;
            match fs::remove_file(d.join(name)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            }
        }

        pub(crate) fn rmdir_if_empty(&self, dir: &[String], name: &str) -> io::Result<()> {
            let d = self.dir(dir, false)?;
            let _ = fs::remove_dir(d.join(name));
            Ok(())
        }

        pub(crate) fn make_dir(&self, dir: &[String], name: &str) -> io::Result<()> {
            let d = self.dir(dir, true)?;
            fs::create_dir(d.join(name))
        }

        pub(crate) fn rename(
            &self,
            from: (&[String], &str),
            to: (&[String], &str),
        ) -> io::Result<()> {
            let src = self.dir(from.0, false)?.join(from.1);
            let dst = self.dir(to.0, true)?.join(to.1);
            if fs::symlink_metadata(&dst).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "rename target exists",
                ));
            }
            fs::rename(src, dst)
        }
    }
}

/// Windows error codes a replace can hit while another process (a virus
/// scanner, an indexer, an editor) briefly holds the target open:
/// `ERROR_ACCESS_DENIED` (5), `ERROR_SHARING_VIOLATION` (32),
/// `ERROR_LOCK_VIOLATION` (33).
pub(crate) fn is_transient_replace_error(raw_os_error: Option<i32>) -> bool {
    matches!(raw_os_error, Some(5 | 32 | 33))
}

/// Waits between replace attempts: 5 tries spread over about 0.3 s.
pub(crate) const REPLACE_RETRY_DELAYS_MS: [u64; 4] = [10, 30, 80, 180];

/// What to do after a failed replace attempt `attempt` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplaceStep {
    RetryAfterMs(u64),
    GiveUp,
}

pub(crate) fn next_replace_step(
    attempt: usize,
    raw_os_error: Option<i32>,
    target_read_only: bool,
) -> ReplaceStep {
    if target_read_only || !is_transient_replace_error(raw_os_error) {
        return ReplaceStep::GiveUp;
    }
    REPLACE_RETRY_DELAYS_MS
        .get(attempt)
        .map_or(ReplaceStep::GiveUp, |ms| ReplaceStep::RetryAfterMs(*ms))
}

/// Renames `from` over `to`, retrying transient sharing violations and
/// refusing a read-only target (Windows would refuse it anyway, with an
/// error that looks transient).
#[cfg_attr(
    unix,
    expect(
        dead_code,
        reason = "used by the Windows disk layer; its policy is tested everywhere"
    )
)]
pub(crate) fn replace_with_retry(from: &Path, to: &Path) -> io::Result<()> {
    let mut attempt = 0;
    loop {
        match fs::rename(from, to) {
            Ok(()) => return Ok(()),
            Err(e) => {
                let read_only = fs::metadata(to).is_ok_and(|m| m.permissions().readonly());
                match next_replace_step(attempt, e.raw_os_error(), read_only) {
                    ReplaceStep::RetryAfterMs(ms) => {
                        std::thread::sleep(std::time::Duration::from_millis(ms));
                        attempt += 1;
                    }
                    ReplaceStep::GiveUp if read_only => {
                        return Err(io::Error::new(
                            io::ErrorKind::PermissionDenied,
                            "the target file is read-only",
                        ));
                    }
                    ReplaceStep::GiveUp => return Err(e),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[cfg(unix)]
    #[test]
    fn a_stamp_is_settled_only_when_it_predates_the_file_systems_clock() {
        let dir = tempfile::tempdir().unwrap();
        let safe = SafeRoot::open(dir.path()).unwrap();
        fs::write(dir.path().join("f"), "one").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let clock = fs_clock(&dir.path().join("clock")).unwrap();
        let before = safe.stamp(&[], "f").unwrap().unwrap();
        // Rewritten after the reading: same size, the old mtime put back.
        let mtime = fs::metadata(dir.path().join("f"))
            .unwrap()
            .modified()
            .unwrap();
        fs::write(dir.path().join("f"), "two").unwrap();
        File::options()
            .write(true)
            .open(dir.path().join("f"))
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let after = safe.stamp(&[], "f").unwrap().unwrap();
        assert_eq!(
            (
                before.settled_before(&clock),
                after.settled_before(&clock),
                before == after
            ),
            (true, false, false)
        );
        // A later reading of the clock is later.
        std::thread::sleep(std::time::Duration::from_millis(30));
        let later = fs_clock(&dir.path().join("clock")).unwrap();
        assert!(later.ctime > clock.ctime && after.settled_before(&later));
    }

    #[cfg(unix)]
    #[test]
    fn folders_open_only_without_symlinks_on_the_way_whichever_way_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        let outside = dir.path().join("outside");
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/f.txt"), "f").unwrap();
        fs::create_dir_all(outside.join("b")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("inner")).unwrap();
        fs::write(root.join("file"), "x").unwrap();
        let safe = SafeRoot::open(&root).unwrap();
        let seg = |p: &str| p.split('/').map(str::to_owned).collect::<Vec<_>>();
        let found: Vec<_> = ["a/b", "link/b", "inner/b", "a/missing", "file/b"]
            .into_iter()
            .map(|p| (p, safe.both_ways(&seg(p))))
            .collect();
        let names = Ok(vec!["f.txt".to_owned()]);
        let symlink: Result<Vec<String>, _> = Err(io::ErrorKind::InvalidInput);
        let want = [
            ("a/b", names),
            ("link/b", symlink.clone()),
            ("inner/b", symlink.clone()),
            ("a/missing", Err(io::ErrorKind::NotFound)),
            ("file/b", symlink),
        ];
        let both: Vec<_> = want
            .into_iter()
            .map(|(p, r)| (p, (cfg!(target_os = "linux").then(|| r.clone()), r)))
            .collect();
        assert_eq!(found, both);
    }

    #[test]
    fn replace_retries_only_transient_windows_errors_and_never_read_only_targets() {
        let steps: Vec<ReplaceStep> = (0..6)
            .map(|a| next_replace_step(a, Some(32), false))
            .collect();
        assert_eq!(
            steps,
            vec![
                ReplaceStep::RetryAfterMs(10),
                ReplaceStep::RetryAfterMs(30),
                ReplaceStep::RetryAfterMs(80),
                ReplaceStep::RetryAfterMs(180),
                ReplaceStep::GiveUp,
                ReplaceStep::GiveUp,
            ]
        );
        assert_eq!(next_replace_step(0, Some(5), true), ReplaceStep::GiveUp);
        assert_eq!(next_replace_step(0, Some(2), false), ReplaceStep::GiveUp);
        assert_eq!(next_replace_step(0, None, false), ReplaceStep::GiveUp);
        assert_eq!(
            next_replace_step(1, Some(33), false),
            ReplaceStep::RetryAfterMs(30)
        );
    }

    #[test]
    fn a_torn_tail_is_cut_back_and_a_whole_last_record_gets_its_newline() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("index.jsonl");
        let whole = |tail: &[u8]| serde_json::from_slice::<serde_json::Value>(tail).is_ok();
        fs::write(&p, b"{\"a\":1}\n{\"b\":").unwrap();
        assert!(repair_torn_tail(&p, whole).unwrap());
        append(&p, Some(b"{\"h\":0}\n"), b"{\"c\":3}\n").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"c\":3}\n");
        assert!(!repair_torn_tail(&p, whole).unwrap());
        // A whole record that lacks only its newline is kept.
        fs::write(&p, b"{\"a\":1}\n{\"b\":2}").unwrap();
        assert!(repair_torn_tail(&p, whole).unwrap());
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"b\":2}\n");
    }

    #[test]
    fn an_append_creates_the_folder_and_heads_only_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("files/k/versions.jsonl");
        append(&p, Some(b"{\"path\":\"a\"}\n"), b"1\n").unwrap();
        append(&p, Some(b"{\"path\":\"a\"}\n"), b"2\n").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"path\":\"a\"}\n1\n2\n");
        // A file left empty (created, nothing written) still gets its header.
        let empty = dir.path().join("files/e/versions.jsonl");
        fs::create_dir_all(empty.parent().unwrap()).unwrap();
        fs::write(&empty, b"").unwrap();
        append(&empty, Some(b"{\"path\":\"e\"}\n"), b"1\n").unwrap();
        assert_eq!(fs::read_to_string(&empty).unwrap(), "{\"path\":\"e\"}\n1\n");
    }
}
