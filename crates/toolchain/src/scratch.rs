//! Folders outside the workspace that the launcher's callers make for
//! agent commands: private temp folders, and lasting build folders.
//!
//! An agent command gets its own folder below the system temp folder
//! (`TMPDIR`, `TMP` and `TEMP` point at it) instead of a write grant on the
//! whole temp folder: a workspace that lies in `/tmp` would otherwise have
//! its `.cocode/` inside the grant, and commands of other tasks and other
//! programs' files would be in reach. The folder is made for the person
//! only (`0700`) and removed, without following links, when the command's
//! handle finishes or is dropped.

#![expect(
    clippy::disallowed_methods,
    reason = "the launcher's folders outside the workspace (boundaries.yaml lists this file as a writer)"
)]

use std::path::{Path, PathBuf};

use cocode_core::process::LaunchError;

/// The prefix of every private temp folder's name.
pub const PREFIX: &str = "cocode-cmd-";

/// One launch's private temp folder; removed when dropped.
#[derive(Debug)]
pub struct PrivateTemp {
    path: PathBuf,
}

impl PrivateTemp {
    /// Makes a new folder with a random name below `base`.
    pub fn create(base: &Path) -> Result<Self, LaunchError> {
        let mut random = [0u8; 8];
        getrandom::fill(&mut random)
            .map_err(|e| LaunchError::Sandbox(format!("no randomness for a temp folder: {e}")))?;
        let name = random.iter().fold(String::new(), |mut out, b| {
            use std::fmt::Write as _;
            let _ = write!(out, "{b:02x}");
            out
        });
        let path = base.join(format!("{PREFIX}{name}"));
        let mut builder = std::fs::DirBuilder::new();
        // A fresh name: its parent must exist and the folder must not.
        builder.recursive(false);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&path).map_err(|e| {
            LaunchError::Sandbox(format!(
                "the command's temp folder {} could not be made: {e}",
                path.display()
            ))
        })?;
        // The canonical path: Landlock is given paths without links.
        let path = dunce::canonicalize(&path).unwrap_or(path);
        Ok(Self { path })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateTemp {
    fn drop(&mut self) {
        // `remove_dir_all` does not follow links out of the folder.
        if let Err(e) = std::fs::remove_dir_all(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(
                "the command's temp folder {} stays: {e}",
                self.path.display()
            );
        }
    }
}

/// Makes (if missing) a lasting folder outside the workspace that one kind
/// of step writes, such as Cargo's build output below the temp folder, and
/// returns its canonical path. The folder and every folder made for it are
/// the person's only (`0700`); one that is a link, or (on Unix) belongs to
/// someone else — another user could have placed it in a shared temp
/// folder to redirect the writes — is refused.
pub fn lasting_folder(path: &Path) -> Result<PathBuf, LaunchError> {
    let refuse = |why: String| {
        LaunchError::Sandbox(format!(
            "the folder {} cannot be used: {why}",
            path.display()
        ))
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path).map_err(|e| refuse(e.to_string()))?;
    let meta = std::fs::symlink_metadata(path).map_err(|e| refuse(e.to_string()))?;
    if !meta.is_dir() {
        return Err(refuse("it is a link or not a folder".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me {
            return Err(refuse(format!("it belongs to user {}", meta.uid())));
        }
    }
    dunce::canonicalize(path).map_err(|e| refuse(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "fills the folder as a command would"
    )]
    fn the_folder_is_private_and_goes_away_with_everything_in_it_but_not_what_links_point_to() {
        let base = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep.txt"), "keep").unwrap();
        let temp = PrivateTemp::create(base.path()).unwrap();
        let path = temp.path().to_path_buf();
        assert!(
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(PREFIX)
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
            std::os::unix::fs::symlink(outside.path(), path.join("link")).unwrap();
        }
        std::fs::create_dir_all(path.join("a/b")).unwrap();
        std::fs::write(path.join("a/b/c.txt"), "x").unwrap();
        let other = PrivateTemp::create(base.path()).unwrap();
        assert_ne!(other.path(), path.as_path());
        drop(temp);
        assert!(!path.exists());
        assert!(other.path().is_dir());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("keep.txt")).unwrap(),
            "keep"
        );
    }

    #[test]
    #[cfg(unix)]
    fn a_lasting_folder_is_made_once_kept_and_never_a_link() {
        let base = tempfile::tempdir().unwrap();
        let target = base.path().join("verify-target/project-1");
        let made = lasting_folder(&target).unwrap();
        assert_eq!(made, target.canonicalize().unwrap());
        std::fs::write(target.join("kept"), "x").unwrap();
        assert_eq!(lasting_folder(&target).unwrap(), made);
        assert!(target.join("kept").exists());
        let elsewhere = tempfile::tempdir().unwrap();
        let planted = base.path().join("planted");
        std::os::unix::fs::symlink(elsewhere.path(), &planted).unwrap();
        let refused = lasting_folder(&planted).unwrap_err();
        assert_eq!(
            refused,
            LaunchError::Sandbox(format!(
                "the folder {} cannot be used: it is a link or not a folder",
                planted.display()
            ))
        );
    }
}
