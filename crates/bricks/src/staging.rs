//! The bricks staging target, on the writer list of `boundaries.yaml`
//! beside the workspace's disk layer. A scaffold is built in a folder beside its
//! destination (`<parent>/.cocode-staging-<brick>-<stamp>`, so on the same
//! volume), made durable, and moved into place with one rename that never
//! replaces anything; on failure the staging folder is removed.
#![expect(
    clippy::disallowed_methods,
    reason = "the bricks staging target is an allowlisted writer (boundaries.yaml)"
)]

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The prefix of every staging folder's name.
pub const STAGING_PREFIX: &str = ".cocode-staging-";

/// A staging folder being filled.
#[derive(Debug)]
pub struct Staging {
    path: PathBuf,
    /// Folders created so far (made durable before the commit).
    dirs: Vec<PathBuf>,
}

impl Staging {
    /// Creates a new, empty staging folder in `parent`.
    pub fn create(parent: &Path, brick: &str) -> io::Result<Self> {
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let path = parent.join(format!(
            "{STAGING_PREFIX}{brick}-{stamp}-{:08x}",
            fastrand::u32(..)
        ));
        fs::create_dir(&path)?;
        Ok(Self {
            dirs: vec![path.clone()],
            path,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one file (`rel` is `/`-separated and already checked to stay
    /// inside); never replaces a file that is already there.
    pub fn write_file(&mut self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        let target = rel.split('/').fold(self.path.clone(), |acc, s| acc.join(s));
        if let Some(parent) = target.parent() {
            let mut missing = Vec::new();
            let mut cursor = parent;
            while cursor != self.path && !cursor.exists() {
                missing.push(cursor.to_path_buf());
                match cursor.parent() {
                    Some(up) => cursor = up,
                    None => break,
                }
            }
            for dir in missing.into_iter().rev() {
                fs::create_dir(&dir)?;
                self.dirs.push(dir);
            }
        }
        let mut file = fs::File::create_new(&target)
            .map_err(|e| io::Error::new(e.kind(), format!("{rel}: {e}")))?;
        file.write_all(bytes)?;
        file.sync_all()
    }

    /// Moves the staging folder to `destination`, which must not exist; the
    /// rename refuses to replace anything where the OS can say so
    /// atomically (Linux `RENAME_NOREPLACE`). On error the staging folder
    /// is handed back for removal.
    pub fn commit(self, destination: &Path) -> Result<(), (Self, io::Error)> {
        // Files were synced as written; their folder entries now.
        for dir in &self.dirs {
            if let Err(e) = sync_dir(dir) {
                return Err((self, e));
            }
        }
        if let Err(e) = rename_no_replace(&self.path, destination) {
            return Err((self, e));
        }
        if let Some(parent) = destination.parent() {
            // The rename is done; a failed sync of the parent cannot undo it.
            let _ = sync_dir(parent);
        }
        Ok(())
    }

    /// Removes the staging folder and everything in it; whether it is gone.
    pub fn remove(self) -> bool {
        fs::remove_dir_all(&self.path).is_ok() || !self.path.exists()
    }
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    // Windows cannot open a folder as a file to flush it; NTFS journals
    // its metadata.
    Ok(())
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE).map_err(io::Error::from)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    // macOS and Windows: a folder rename onto an existing non-empty folder
    // fails; the check narrows the window for an empty one.
    if to.symlink_metadata().is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} already exists", to.display()),
        ));
    }
    fs::rename(from, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_land_in_nested_folders_and_the_commit_never_replaces() {
        let parent = tempfile::tempdir().unwrap();
        let mut staging = Staging::create(parent.path(), "demo").unwrap();
        staging.write_file("a/b/c.txt", b"deep").unwrap();
        staging.write_file("top.txt", b"top").unwrap();
        let err = staging.write_file("top.txt", b"again").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        let occupied = parent.path().join("occupied");
        fs::create_dir(&occupied).unwrap();
        let (staging, err) = staging.commit(&occupied).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        let dest = parent.path().join("dest");
        staging.commit(&dest).unwrap();
        assert_eq!(fs::read(dest.join("a/b/c.txt")).unwrap(), b"deep");
        assert_eq!(fs::read(dest.join("top.txt")).unwrap(), b"top");
        let mut names: Vec<_> = fs::read_dir(parent.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["dest", "occupied"]);
    }
}
