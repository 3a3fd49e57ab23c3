//! Reading by plain paths without following a link: what is at a path,
//! opening only a regular file, and reading a file whole.

#[cfg(not(unix))]
use std::fs;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

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
