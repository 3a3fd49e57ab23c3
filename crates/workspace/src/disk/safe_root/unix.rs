//! [`SafeRoot`] on Unix: every folder opened relative to its parent (or
//! with one `openat2` on Linux), never through a symlink.

use super::{Entry, Hashed, SafeRoot, Staged};
use crate::disk::regular::{EntryKind, read_all};
use crate::disk::stamp::{Stamp, wide};
use cocode_core::snapshot::{ContentHash, Form};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
#[cfg(target_os = "linux")]
use rustix::fs::ResolveFlags;
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicBool, Ordering};

/// A name of cocode's paths as its bytes on disk (a stand-in character
/// turned back into its byte, see [`cocode_core::disk_name`]).
fn os(name: &str) -> std::borrow::Cow<'_, std::ffi::OsStr> {
    use std::os::unix::ffi::OsStringExt as _;
    match cocode_core::disk_name::to_bytes(name) {
        std::borrow::Cow::Borrowed(b) => std::borrow::Cow::Borrowed(std::ffi::OsStr::from_bytes(b)),
        std::borrow::Cow::Owned(v) => std::borrow::Cow::Owned(std::ffi::OsString::from_vec(v)),
    }
}

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

/// A stat's mode as a number (narrower than `u32` on some systems).
#[allow(
    clippy::useless_conversion,
    reason = "the mode is a u16 on macOS and a u32 on Linux"
)]
fn mode_of(st: &rfs::Stat) -> u32 {
    u32::from(st.st_mode)
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
    match rfs::statat(d.as_fd(), &*os(name), AtFlags::SYMLINK_NOFOLLOW) {
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
        Some(file) => read_all(file).map(Some),
        None => Ok(None),
    }
}

/// Opens `name` in `d` for reading: never through a symlink, and only a
/// regular file. `O_NONBLOCK` keeps a FIFO swapped in after a `stat`
/// from blocking the open; the `fstat` of what was opened refuses it.
fn open_regular_in(d: &DirFd<'_>, name: &str) -> io::Result<Option<File>> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let fd = match rfs::openat(d.as_fd(), &*os(name), flags, Mode::empty()) {
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
            &*os(&dir.join("/")),
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
            // Deeper than one call takes: a segment at a time.
            Err(Errno::NAMETOOLONG) => None,
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
        match rfs::openat2(self.fd.as_fd(), &*os(&path), flags, mode, BENEATH) {
            Ok(fd) => Some(Ok(fd)),
            Err(Errno::NOSYS | Errno::PERM | Errno::INVAL) => {
                OPENAT2_UNAVAILABLE.store(true, Ordering::Relaxed);
                None
            }
            Err(Errno::NOENT | Errno::NAMETOOLONG) => None,
            Err(Errno::XDEV) => Some(Err(map(Errno::LOOP))),
            Err(e) => Some(Err(map(e))),
        }
    }

    /// Opens `dir` one segment at a time from the root.
    fn walk(&self, dir: &[String], create: bool) -> io::Result<DirFd<'_>> {
        let mut current = DirFd::Root(self.fd.as_fd());
        for segment in dir {
            let next = match rfs::openat(current.as_fd(), &*os(segment), DIR_FLAGS, Mode::empty()) {
                Err(Errno::NOENT) if create => {
                    match rfs::mkdirat(
                        current.as_fd(),
                        &*os(segment),
                        Mode::from_bits_truncate(0o777),
                    ) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(map(e)),
                    }
                    rfs::openat(current.as_fd(), &*os(segment), DIR_FLAGS, Mode::empty())
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

    /// What is at `name` now (see [`Hashed`]), with the stamp a regular
    /// file had just before it was read: above `ceiling` a file is named by
    /// its identity (never read whole, see [`crate::large_file`]); a link
    /// by its target (never followed); a FIFO or a device never opened; a
    /// folder as a folder, whatever it holds.
    pub(crate) fn stamped_hash(
        &self,
        dir: &[String],
        name: &str,
        ceiling: u64,
    ) -> io::Result<Option<Hashed>> {
        let Some(d) = self.existing_dir(dir)? else {
            return Ok(None);
        };
        let Some(st) = stat_in(&d, name)? else {
            return Ok(None);
        };
        let nothing = ContentHash::of(b"");
        let found = match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => match open_regular_in(&d, name)? {
                Some(file) => {
                    let (hash, _) = crate::large_file::hash_file(&file, ceiling)?;
                    let form = Form::of_file_mode(mode_of(&st));
                    return Ok(Some((Ok((hash, form)), Some(stamp_of(&st)))));
                }
                None => return Ok(None),
            },
            FileType::Symlink => {
                let target = rfs::readlinkat(d.as_fd(), &*os(name), Vec::new()).map_err(map)?;
                Ok((ContentHash::of(target.as_bytes()), Some(Form::Symlink)))
            }
            FileType::Directory => Ok((nothing, Some(Form::Folder))),
            FileType::Fifo => Ok((nothing, Some(Form::Fifo))),
            _ => Ok((nothing, Some(Form::Special))),
        };
        Ok(Some((found, None)))
    }

    /// Stages a link to `target` under `temp_name` (for a rollback that
    /// puts a link back); [`Self::commit`] puts it in place.
    pub(crate) fn stage_symlink(
        &self,
        dir: &[String],
        name: &str,
        temp_name: &str,
        target: &[u8],
    ) -> io::Result<Staged> {
        let d = self.dir(dir, true)?;
        match rfs::unlinkat(d.as_fd(), &*os(temp_name), AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(map(e)),
        }
        let target = std::ffi::OsStr::from_bytes(target);
        rfs::symlinkat(target, d.as_fd(), &*os(temp_name)).map_err(map)?;
        Ok(Staged {
            dir: dir.to_vec(),
            temp_name: temp_name.to_owned(),
            name: name.to_owned(),
        })
    }

    /// Stages a FIFO under `temp_name` (for a rollback that puts one back).
    #[cfg(not(target_vendor = "apple"))]
    pub(crate) fn stage_fifo(
        &self,
        dir: &[String],
        name: &str,
        temp_name: &str,
    ) -> io::Result<Staged> {
        let d = self.dir(dir, true)?;
        match rfs::unlinkat(d.as_fd(), &*os(temp_name), AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(map(e)),
        }
        rfs::mkfifoat(d.as_fd(), &*os(temp_name), Mode::from_bits_truncate(0o666)).map_err(map)?;
        Ok(Staged {
            dir: dir.to_vec(),
            temp_name: temp_name.to_owned(),
            name: name.to_owned(),
        })
    }

    /// macOS has no `mkfifoat` that rustix reaches: a FIFO is not made
    /// again there (said as an error, never skipped).
    #[cfg(target_vendor = "apple")]
    pub(crate) fn stage_fifo(
        &self,
        _dir: &[String],
        _name: &str,
        _temp_name: &str,
    ) -> io::Result<Staged> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "a FIFO is not made again on this system",
        ))
    }

    /// Sets the bits of `mask` of `name`'s mode (a regular file, never
    /// through a link) to `bits`, keeping the others.
    pub(crate) fn set_mode_bits(
        &self,
        dir: &[String],
        name: &str,
        mask: u32,
        bits: u32,
    ) -> io::Result<()> {
        let d = self.dir(dir, false)?;
        let Some(file) = open_regular_in(&d, name)? else {
            return Err(io::Error::new(io::ErrorKind::NotFound, "the file is gone"));
        };
        let st = rfs::fstat(&file).map_err(map)?;
        let mode = (mode_of(&st) & 0o7777 & !mask) | (bits & mask);
        rfs::fchmod(&file, Mode::from_raw_mode(mode as rfs::RawMode)).map_err(map)
    }

    /// The permission bits of the regular file at `name` (read, write and
    /// execute for each class, and the set-id bits), if one is there.
    pub(crate) fn file_mode(&self, dir: &[String], name: &str) -> io::Result<Option<u32>> {
        let Some(d) = self.existing_dir(dir)? else {
            return Ok(None);
        };
        Ok(stat_in(&d, name)?
            .filter(|st| kind_of(st) == EntryKind::File)
            .map(|st| mode_of(&st) & 0o7777))
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
            let bytes = entry.file_name().to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            let Some(name) = cocode_core::disk_name::to_text(bytes) else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a name holds a character cocode uses for a name's bytes",
                ));
            };
            let name = name.into_owned();
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
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mode = Mode::from_bits_truncate(0o666);
        #[cfg(target_os = "linux")]
        let opened = self.create_beneath(dir, temp_name, flags, mode);
        #[cfg(not(target_os = "linux"))]
        let opened: Option<io::Result<OwnedFd>> = None;
        let fd = if let Some(fd) = opened {
            fd?
        } else {
            let d = self.dir(dir, true)?;
            rfs::openat(d.as_fd(), &*os(temp_name), flags, mode).map_err(map)?
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
            &*os(&staged.temp_name),
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
            &*os(&staged.temp_name),
            d.as_fd(),
            &*os(&staged.name),
        )
        .map_err(map)?;
        Ok(true)
    }

    /// Removes `name` while it still has `stamp`; `false` and nothing
    /// done otherwise.
    pub(crate) fn unlink_if(&self, dir: &[String], name: &str, stamp: &Stamp) -> io::Result<bool> {
        let d = self.dir(dir, false)?;
        if stat_in(&d, name)?.map(|st| stamp_of(&st)).as_ref() != Some(stamp) {
            return Ok(false);
        }
        rfs::unlinkat(d.as_fd(), &*os(name), AtFlags::empty()).map_err(map)?;
        Ok(true)
    }

    pub(crate) fn unlink(&self, dir: &[String], name: &str) -> io::Result<()> {
        let d = self.dir(dir, false)?;
        match rfs::unlinkat(d.as_fd(), &*os(name), AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(map(e)),
        }
    }

    /// Removes an empty directory; one with anything in it is an error.
    pub(crate) fn remove_empty_dir(&self, dir: &[String], name: &str) -> io::Result<()> {
        let d = self.dir(dir, false)?;
        match rfs::unlinkat(d.as_fd(), &*os(name), AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(map(e)),
        }
    }

    /// Removes an empty directory; a non-empty or absent one is left alone.
    pub(crate) fn rmdir_if_empty(&self, dir: &[String], name: &str) -> io::Result<()> {
        let d = self.dir(dir, false)?;
        match rfs::unlinkat(d.as_fd(), &*os(name), AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT | Errno::NOTEMPTY | Errno::EXIST) => Ok(()),
            Err(e) => Err(map(e)),
        }
    }

    /// Creates the folder `name` (and the folders above it); an
    /// existing entry of that name is `AlreadyExists`.
    pub(crate) fn make_dir(&self, dir: &[String], name: &str) -> io::Result<()> {
        let d = self.dir(dir, true)?;
        rfs::mkdirat(d.as_fd(), &*os(name), Mode::from_bits_truncate(0o777)).map_err(map)
    }

    /// Moves a file; refuses to replace an existing target.
    pub(crate) fn rename(&self, from: (&[String], &str), to: (&[String], &str)) -> io::Result<()> {
        let src = self.dir(from.0, false)?;
        let dst = self.dir(to.0, true)?;
        if rfs::statat(dst.as_fd(), &*os(to.1), AtFlags::SYMLINK_NOFOLLOW).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "rename target exists",
            ));
        }
        rfs::renameat(src.as_fd(), &*os(from.1), dst.as_fd(), &*os(to.1)).map_err(map)
    }
}
