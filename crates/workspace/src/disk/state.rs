//! Writes of cocode's own state under `.cocode/` (blobs, indexes,
//! journals, config, the writer lock) by plain paths, and the barrier that
//! makes what the gate wrote durable.

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
            // The holder writes its name just after it takes the lock: an
            // empty file is read again for a moment before it is said to
            // name nobody.
            let mut text = String::new();
            for _ in 0..20 {
                text.clear();
                let _ = file
                    .seek(io::SeekFrom::Start(0))
                    .and_then(|_| file.read_to_string(&mut text));
                if !text.trim().is_empty() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
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
