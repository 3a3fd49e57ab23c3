//! A file above the ceiling for kept content is never read whole. History
//! does not keep its content anyway, so it is named by an identity of its
//! metadata and a sample of it: its size, modification and change times,
//! inode, its first and last MiB, and where its data lies (the extents
//! `SEEK_DATA` / `SEEK_HOLE` report, so a sparse file of two terabytes
//! costs a few system calls, never a read of its zeros).
//!
//! Any write moves the change time, which no program can set back, so a
//! rewrite of the middle of the file (which the sample does not cover) still
//! gives another identity; and an unchanged file gives the same identity
//! whenever it is looked at, which is what the sweep and the rollback's
//! precheck compare.

use std::fs::File;
use std::io;

use cocode_core::snapshot::{ContentHash, ContentHasher};

use crate::sweep_entry::Stat;

/// How much of each end of the file is read.
const SAMPLE: u64 = 1 << 20;

/// At most this many data extents are named; past it, that there were
/// more.
const MAX_EXTENTS: usize = 1 << 14;

/// What names a file's content: its content hash when it is at most
/// `ceiling` bytes (read whole), else its [`identity`].
pub(crate) fn hash_file(file: &File, ceiling: u64) -> io::Result<(ContentHash, bool)> {
    let len = file.metadata()?.len();
    if len > ceiling {
        return Ok((identity(file)?, false));
    }
    let bytes = crate::disk::read_all(file.try_clone()?)?;
    Ok((ContentHash::of(&bytes), true))
}

/// The identity of a file too large to keep (see the module's
/// documentation); reads at most two MiB of it.
pub(crate) fn identity(file: &File) -> io::Result<ContentHash> {
    let meta = file.metadata()?;
    let stat = Stat::of(&meta);
    let mut hasher = ContentHasher::new();
    hasher.update(b"cocode large file identity 1\0");
    hasher.update(&stat.len.to_le_bytes());
    let mtime = stat
        .mtime
        .and_then(|m| m.duration_since(std::time::SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    hasher.update(&mtime.to_le_bytes());
    let (csecs, cnanos) = stat.ctime.unwrap_or_default();
    hasher.update(&csecs.to_le_bytes());
    hasher.update(&cnanos.to_le_bytes());
    hasher.update(&stat.ino.to_le_bytes());
    let head = stat.len.min(SAMPLE);
    hasher.update(&read_at(file, 0, head)?);
    let tail = stat.len.saturating_sub(head).min(SAMPLE);
    hasher.update(&read_at(file, stat.len - tail, tail)?);
    extents(file, stat.len, &mut hasher)?;
    Ok(hasher.finish())
}

/// `len` bytes of `file` from `at` (fewer when the file is shorter now).
fn read_at(file: &File, at: u64, len: u64) -> io::Result<Vec<u8>> {
    let mut buffer = vec![0; usize::try_from(len).unwrap_or(usize::MAX)];
    let mut filled = 0;
    while filled < buffer.len() {
        let offset = at + filled as u64;
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(file, &mut buffer[filled..], offset);
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(file, &mut buffer[filled..], offset);
        match n {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buffer.truncate(filled);
    Ok(buffer)
}

/// Names where the file's data lies, extent by extent, where the system
/// can say (Linux, and other systems with `SEEK_DATA`); elsewhere nothing
/// is added (the times, the size and the samples still name the file).
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn extents(file: &File, len: u64, hasher: &mut ContentHasher) -> io::Result<()> {
    use rustix::fs::{SeekFrom, seek};
    use rustix::io::Errno;
    let mut at = 0;
    let mut named = 0;
    while at < len {
        if named == MAX_EXTENTS {
            hasher.update(b"more");
            break;
        }
        let start = match seek(file, SeekFrom::Data(at)) {
            Ok(start) => start,
            // No data from here on.
            Err(Errno::NXIO) => break,
            // A file system that cannot say: the whole file is data.
            Err(Errno::INVAL | Errno::OPNOTSUPP) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let end = match seek(file, SeekFrom::Hole(start)) {
            Ok(end) => end,
            Err(Errno::NXIO) => len,
            Err(e) => return Err(e.into()),
        };
        hasher.update(&start.to_le_bytes());
        hasher.update(&end.to_le_bytes());
        named += 1;
        if end <= start {
            break;
        }
        at = end;
    }
    Ok(())
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn extents(_file: &File, _len: u64, _hasher: &mut ContentHasher) -> io::Result<()> {
    let _ = MAX_EXTENTS;
    Ok(())
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "the tests make the files they look at"
)]
mod tests {
    use super::*;
    use std::io::{Seek as _, SeekFrom, Write as _};

    #[test]
    fn a_sparse_file_of_two_terabytes_is_named_without_reading_it_and_any_write_renames_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sparse.bin");
        let file = File::create(&path).unwrap();
        // Two TiB where the file system allows it (tmpfs and ext4 do).
        let len = 2u64 << 40;
        if file.set_len(len).is_err() {
            file.set_len(1 << 33).unwrap();
        }
        drop(file);
        let read = File::open(&path).unwrap();
        let first = identity(&read).unwrap();
        assert_eq!(
            identity(&read).unwrap(),
            first,
            "the same file, the same name"
        );
        let (hash, kept) = hash_file(&read, 1 << 20).unwrap();
        assert_eq!((hash, kept), (first, false));
        // One byte in the middle, far from both samples.
        let mut write = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let len = write.metadata().unwrap().len();
        write.seek(SeekFrom::Start(len / 2)).unwrap();
        write.write_all(b"x").unwrap();
        drop(write);
        let second = identity(&File::open(&path).unwrap()).unwrap();
        assert_ne!(second, first, "a write in the middle gives another name");
    }

    #[test]
    fn a_file_at_most_the_ceiling_is_named_by_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small.txt");
        std::fs::write(&path, b"hello").unwrap();
        let file = File::open(&path).unwrap();
        assert_eq!(
            hash_file(&file, 5).unwrap(),
            (ContentHash::of(b"hello"), true)
        );
        assert!(!hash_file(&file, 4).unwrap().1);
    }
}
