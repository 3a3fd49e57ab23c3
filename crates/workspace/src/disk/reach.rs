//! Paths of any depth below the workspace root, as the system takes them.
//!
//! A path longer than the system's longest (`PATH_MAX`, 4,096 bytes on
//! Linux) cannot be given to a call whole. On Linux such a path is reached
//! one folder at a time from the root (`openat` with `O_NOFOLLOW`, so no
//! link on the way is followed) and named through the folder's descriptor
//! as `/proc/self/fd/N/name`: a short path every call of the standard
//! library takes, valid while the [`Reach`] holds the descriptor. Elsewhere
//! (or without `/proc`) such a path stays what it is, and calls answer that
//! it is too long; the sweep then says the workspace is not fully recorded.

use std::path::{Path, PathBuf};

/// The longest path the system takes (bytes, with its end).
#[cfg(target_os = "macos")]
pub(crate) const PATH_MAX: usize = 1024;
#[cfg(all(unix, not(target_os = "macos")))]
pub(crate) const PATH_MAX: usize = 4096;
#[cfg(not(unix))]
pub(crate) const PATH_MAX: usize = 32_767;

/// A path below the root that calls take, whatever its depth (see the
/// module's documentation).
#[derive(Debug)]
pub(crate) struct Reach {
    path: PathBuf,
    /// The folder the path is named through, held open while it is used.
    #[cfg(target_os = "linux")]
    _folder: Option<rustix::fd::OwnedFd>,
}

impl std::ops::Deref for Reach {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Reach {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// Whether `root/rel` is longer than the system takes in one call.
pub(crate) fn too_long(root: &Path, rel: &Path) -> bool {
    root.as_os_str().len() + 1 + rel.as_os_str().len() >= PATH_MAX
}

/// Whether paths longer than [`PATH_MAX`] can be reached here (Linux with
/// `/proc` mounted).
pub(crate) fn reaches_deep() -> bool {
    #[cfg(target_os = "linux")]
    {
        static PROC: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *PROC.get_or_init(|| Path::new("/proc/self/fd").is_dir())
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// `root/rel` as calls take it: the path itself when it is short enough,
/// else its name in its folder's descriptor (Linux). A folder on the way
/// that is a link, or gone, leaves the long path, which calls refuse.
pub(crate) fn reach(root: &Path, rel: &Path) -> Reach {
    let full = root.join(rel);
    #[cfg(target_os = "linux")]
    {
        if full.as_os_str().len() < PATH_MAX || !reaches_deep() {
            return Reach {
                path: full,
                _folder: None,
            };
        }
        if let (Some(parent), Some(name)) = (rel.parent(), rel.file_name())
            && let Ok(folder) = open_folder(root, parent)
        {
            use rustix::fd::AsRawFd as _;
            let mut path = PathBuf::from(format!("/proc/self/fd/{}", folder.as_raw_fd()));
            path.push(name);
            return Reach {
                path,
                _folder: Some(folder),
            };
        }
        Reach {
            path: full,
            _folder: None,
        }
    }
    #[cfg(not(target_os = "linux"))]
    Reach { path: full }
}

/// The folder `rel` below `root`, opened one name at a time, no link
/// followed, as a handle for naming what it holds.
#[cfg(target_os = "linux")]
fn open_folder(root: &Path, rel: &Path) -> std::io::Result<rustix::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut folder = rustix::fs::open(root, flags, Mode::empty())?;
    for part in rel.components() {
        folder = rustix::fs::openat(&folder, part.as_os_str(), flags, Mode::empty())?;
    }
    Ok(folder)
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// A folder chain past `PATH_MAX` below `root`, made one level at a
    /// time through descriptors; returns its relative path.
    fn deep_chain(root: &Path, levels: usize) -> PathBuf {
        use rustix::fs::{Mode, OFlags};
        let name = "d".repeat(200);
        let mut folder = rustix::fs::open(root, OFlags::DIRECTORY, Mode::empty()).unwrap();
        let mut rel = PathBuf::new();
        for _ in 0..levels {
            rustix::fs::mkdirat(&folder, name.as_str(), Mode::from_bits_truncate(0o755)).unwrap();
            folder = rustix::fs::openat(&folder, name.as_str(), OFlags::DIRECTORY, Mode::empty())
                .unwrap();
            rel.push(&name);
        }
        rustix::fs::mkdirat(&folder, "leaf", Mode::from_bits_truncate(0o755)).unwrap();
        let file = rustix::fs::openat(
            &folder,
            "f.txt",
            OFlags::CREATE | OFlags::WRONLY,
            Mode::from_bits_truncate(0o644),
        )
        .unwrap();
        rustix::io::write(&file, b"deep").unwrap();
        rel
    }

    #[test]
    fn a_path_past_the_longest_is_reached_through_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let chain = deep_chain(dir.path(), 25);
        let rel = chain.join("f.txt");
        assert!(too_long(dir.path(), &rel));
        // The path itself is refused by the system…
        let whole = std::fs::read(dir.path().join(&rel)).unwrap_err();
        assert_eq!(whole.raw_os_error(), Some(36), "{whole}");
        // …and reached through its folder.
        let reached = reach(dir.path(), &rel);
        assert!(
            reached.starts_with("/proc/self/fd/"),
            "{}",
            reached.display()
        );
        assert_eq!(std::fs::read(&*reached).unwrap(), b"deep");
        let mut names: Vec<String> = std::fs::read_dir(&*reach(dir.path(), &chain))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["f.txt", "leaf"]);
        // A short path is itself.
        let short = reach(dir.path(), Path::new("a/b"));
        assert_eq!(&*short, dir.path().join("a/b"));
    }

    #[test]
    fn a_link_on_the_way_down_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let chain = deep_chain(outside.path(), 25);
        // The workspace's first folder is a link to the outside tree.
        let first = chain.components().next().unwrap().as_os_str().to_owned();
        std::os::unix::fs::symlink(outside.path().join(&first), dir.path().join(&first)).unwrap();
        let rel = chain.join("f.txt");
        let reached = reach(dir.path(), &rel);
        assert!(!reached.starts_with("/proc"), "{}", reached.display());
        assert!(std::fs::read(&*reached).is_err());
    }
}
