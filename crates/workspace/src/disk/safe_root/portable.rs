//! Path-based fallback: every directory on the way is checked with
//! `symlink_metadata` just before use. A window between the check and the
//! write remains (Windows has no `openat`); Windows needs administrator
//! rights or developer mode to create symlinks at all.

use super::{Entry, Hashed, SafeRoot, Staged};
use crate::disk::regular::EntryKind;
use crate::disk::replace::replace_with_retry;
use crate::disk::stamp::Stamp;
use cocode_core::snapshot::{ContentHash, Form};
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

    /// What is at `name` now (see [`Hashed`]): above `ceiling` a file is
    /// named by its identity (see [`crate::large_file`]), a link by its
    /// target. No stamp: without `openat` a stamp could describe another
    /// file than the one read, so every check reads the file. No mode bits
    /// (this system keeps none of them).
    pub(crate) fn stamped_hash(
        &self,
        dir: &[String],
        name: &str,
        ceiling: u64,
    ) -> io::Result<Option<Hashed>> {
        let nothing = ContentHash::of(b"");
        let found = match self.kind(dir, name)? {
            None => return Ok(None),
            Some(EntryKind::File) => match self.open_regular(dir, name)? {
                Some(file) => {
                    let (hash, _) = crate::large_file::hash_file(&file, ceiling)?;
                    Ok((hash, None))
                }
                None => return Ok(None),
            },
            Some(EntryKind::Symlink) => {
                let target = fs::read_link(self.dir(dir, false)?.join(name))?;
                Ok((
                    ContentHash::of(target.as_os_str().as_encoded_bytes()),
                    Some(Form::Symlink),
                ))
            }
            Some(EntryKind::Dir) => Ok((nothing, Some(Form::Folder))),
            Some(EntryKind::Other) => Ok((nothing, Some(Form::Special))),
        };
        Ok(Some((found, None)))
    }

    /// Links are made by a rollback only where the system lets any
    /// process make them (Unix).
    pub(crate) fn stage_symlink(
        &self,
        _dir: &[String],
        _name: &str,
        _temp_name: &str,
        _target: &[u8],
    ) -> io::Result<Staged> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "links are not made again on this system",
        ))
    }

    /// This system has no FIFOs in its file system.
    pub(crate) fn stage_fifo(
        &self,
        _dir: &[String],
        _name: &str,
        _temp_name: &str,
    ) -> io::Result<Staged> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this system has no FIFOs",
        ))
    }

    /// Removes an empty directory; one with anything in it is an error.
    pub(crate) fn remove_empty_dir(&self, dir: &[String], name: &str) -> io::Result<()> {
        match fs::remove_dir(self.dir(dir, false)?.join(name)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// This system keeps no permission bits cocode reads.
    pub(crate) fn file_mode(&self, _dir: &[String], _name: &str) -> io::Result<Option<u32>> {
        Ok(None)
    }

    /// This system keeps no executable or set-id bits: nothing to set.
    pub(crate) fn set_mode_bits(
        &self,
        _dir: &[String],
        _name: &str,
        _mask: u32,
        _bits: u32,
    ) -> io::Result<()> {
        Ok(())
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

    pub(crate) fn open_regular(&self, dir: &[String], name: &str) -> io::Result<Option<fs::File>> {
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
        replace_with_retry(&d.join(&staged.temp_name), &d.join(&staged.name))
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

    pub(crate) fn rename(&self, from: (&[String], &str), to: (&[String], &str)) -> io::Result<()> {
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
