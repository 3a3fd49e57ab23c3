//! The sweep's own file watcher (Linux inotify).
//!
//! A full scan adds a watch to every folder it lists, before listing it;
//! the scan after a command then looks only at what the watches reported
//! (see [`crate::sweep`]). The watcher knows which folders it watches, so
//! it knows when its picture has a hole: a queue overflow, a watch the
//! kernel refused, a flood of paths. Each hole bumps [`Watch::losses`];
//! a narrowed scan is allowed only while that count has not moved since
//! the full scan it narrows.
//!
//! Completeness needs no sync marker: the kernel queues a file's event in
//! the write (or rename, or close) call itself, before it returns, so
//! once the command's processes are gone every event they caused is in
//! the queue, and [`Watch::drain`] reads the queue to its end.
//!
//! What the kernel does not report is handled by the sweep, not here: a
//! write through a hard link whose other name lies in an unwatched folder
//! (the files with more than one link are looked at every time, and
//! confined commands cannot make links), files in folders no scan watched
//! (looked at every time), and folders created after the scan (walked
//! whole).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rustix::fd::{AsFd as _, OwnedFd};
use rustix::fs::inotify::{self, ReadFlags, WatchFlags};

use cocode_core::path::COCODE_DIR;

/// More reported paths than this between two scans count as a loss: the
/// next scan walks the tree instead of looking at each.
const MAX_DIRTY: usize = 100_000;

/// Why a folder could not be watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unwatched {
    /// It is gone, or no longer a folder (a link swapped in): there is
    /// nothing to list.
    Gone,
    /// The kernel refused (the watch limit, no permission): the folder is
    /// listed, and scans cannot be narrowed until a full one watches it.
    Refused,
}

/// What the watches reported since the last [`Watch::take`].
#[derive(Debug, Default)]
struct Reported {
    /// Watch descriptor → the folder it watches, relative to the root.
    folders: HashMap<i32, PathBuf>,
    /// Paths relative to the root that something happened to.
    dirty: BTreeSet<PathBuf>,
    /// How many times events were lost since the watcher started.
    losses: u64,
}

/// A recursive watch of a workspace, folder by folder.
#[derive(Debug)]
pub struct Watch {
    root: PathBuf,
    fd: Arc<OwnedFd>,
    reported: Arc<Mutex<Reported>>,
    /// Written on drop: the reading thread stops.
    stop: Arc<OwnedFd>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Watch {
    /// Starts watching `root` (no folder yet: scans add them). A thread
    /// reads the queue as it fills, so a long wait between two scans does
    /// not overflow it.
    pub fn start(root: &Path) -> std::io::Result<Self> {
        let fd = Arc::new(inotify::init(
            inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK,
        )?);
        let stop = Arc::new(rustix::event::eventfd(
            0,
            rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
        )?);
        let reported = Arc::new(Mutex::new(Reported::default()));
        let reader = {
            let (fd, stop, reported) = (Arc::clone(&fd), Arc::clone(&stop), Arc::clone(&reported));
            std::thread::Builder::new()
                .name("cocode-sweep-watch".into())
                .spawn(move || read_until_stopped(&fd, &stop, &reported))?
        };
        Ok(Self {
            root: root.to_path_buf(),
            fd,
            reported,
            stop,
            reader: Some(reader),
        })
    }

    fn reported(&self) -> MutexGuard<'_, Reported> {
        self.reported.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Watches the folder `rel` (relative to the root). Call it before
    /// listing the folder: whatever changes after the listing is reported.
    pub(crate) fn add_folder(&self, rel: &Path) -> Result<(), Unwatched> {
        let flags = WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
            | WatchFlags::DONT_FOLLOW;
        // Held across the call: the reading thread must not meet an event
        // of the new watch before its folder is known.
        let mut reported = self.reported();
        match inotify::add_watch(
            self.fd.as_fd(),
            &*crate::disk::reach(&self.root, rel),
            flags,
        ) {
            Ok(wd) => {
                // The same folder watched again keeps its descriptor; a
                // folder renamed since is named anew here.
                reported.folders.insert(wd, rel.to_path_buf());
                Ok(())
            }
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
                Err(Unwatched::Gone)
            }
            Err(_) => Err(Unwatched::Refused),
        }
    }

    /// How many times events were lost since the watcher started.
    #[cfg(test)]
    fn losses(&self) -> u64 {
        self.take().1
    }

    /// Every event queued so far: the paths reported since the last call
    /// (relative to the root) and the loss count after them.
    pub(crate) fn take(&self) -> (BTreeSet<PathBuf>, u64) {
        let mut reported = self.reported();
        drain_into(&self.fd, &mut reported);
        (std::mem::take(&mut reported.dirty), reported.losses)
    }

    /// How many folders are watched.
    pub fn folders(&self) -> usize {
        self.reported().folders.len()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = rustix::io::write(self.stop.as_fd(), &1u64.to_ne_bytes());
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// The reading thread: waits for events or the stop signal.
fn read_until_stopped(fd: &OwnedFd, stop: &OwnedFd, reported: &Mutex<Reported>) {
    use rustix::event::{PollFd, PollFlags, poll};
    loop {
        let mut fds = [
            PollFd::new(fd, PollFlags::IN),
            PollFd::new(stop, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
        }
        if !fds[1].revents().is_empty() {
            return;
        }
        let mut reported = reported.lock().unwrap_or_else(PoisonError::into_inner);
        drain_into(fd, &mut reported);
    }
}

/// Reads the queue until it is empty, noting what each event names.
fn drain_into(fd: &OwnedFd, reported: &mut Reported) {
    let mut buffer = vec![std::mem::MaybeUninit::<u8>::uninit(); 64 * 1024];
    let mut events = inotify::Reader::new(fd.as_fd(), &mut buffer);
    loop {
        let event = match events.next() {
            Ok(event) => event,
            Err(rustix::io::Errno::INTR) => continue,
            // Empty (`AGAIN`), or a read error: an error loses events.
            Err(rustix::io::Errno::AGAIN) => return,
            Err(_) => {
                reported.losses += 1;
                return;
            }
        };
        let flags = event.events();
        if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
            reported.losses += 1;
            continue;
        }
        let Some(folder) = reported.folders.get(&event.wd()).cloned() else {
            // No watch of ours has this descriptor (descriptors are not
            // reused): what it names is unknown, so it counts as a loss.
            reported.losses += 1;
            continue;
        };
        if flags.contains(ReadFlags::IGNORED) {
            // The folder is gone (or unmounted): its watch is removed.
            reported.folders.remove(&event.wd());
            continue;
        }
        let path = match event.file_name() {
            Some(name) => {
                use std::os::unix::ffi::OsStrExt as _;
                folder.join(std::ffi::OsStr::from_bytes(name.to_bytes()))
            }
            None => folder,
        };
        if outside_the_sweep(&path) {
            continue;
        }
        reported.dirty.insert(path);
        if reported.dirty.len() > MAX_DIRTY {
            reported.dirty.clear();
            reported.losses += 1;
        }
    }
}

/// `.git/` and `.cocode/` at the root: no scan looks there.
fn outside_the_sweep(rel: &Path) -> bool {
    rel.components().next().is_some_and(|first| {
        let first = first.as_os_str();
        first == ".git" || first.to_string_lossy().eq_ignore_ascii_case(COCODE_DIR)
    })
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "the tests change a watched folder the way other programs do"
)]
mod tests {
    use super::*;

    fn watch_of(dir: &Path) -> Watch {
        let watch = Watch::start(dir).unwrap();
        watch.add_folder(Path::new("")).unwrap();
        watch
    }

    #[test]
    fn every_event_a_finished_write_caused_is_taken_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let watch = watch_of(dir.path());
        watch.add_folder(Path::new("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "a").unwrap();
        std::fs::create_dir(dir.path().join("new")).unwrap();
        std::fs::write(dir.path().join(".cocode"), "state").unwrap();
        let (dirty, losses) = watch.take();
        assert_eq!(
            dirty,
            BTreeSet::from([PathBuf::from("new"), PathBuf::from("src/a.rs")])
        );
        assert_eq!(losses, 0);
        assert_eq!(watch.take().0, BTreeSet::new());
    }

    #[test]
    fn a_folder_that_is_gone_or_a_link_is_not_watched() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/", dir.path().join("escape")).unwrap();
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let watch = watch_of(dir.path());
        assert_eq!(watch.add_folder(Path::new("missing")), Err(Unwatched::Gone));
        assert_eq!(watch.add_folder(Path::new("escape")), Err(Unwatched::Gone));
        assert_eq!(watch.add_folder(Path::new("file")), Err(Unwatched::Gone));
        assert_eq!(watch.folders(), 1);
    }

    #[test]
    fn a_removed_folder_drops_its_watch_and_a_renamed_one_is_named_anew() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        std::fs::create_dir_all(dir.path().join("gone")).unwrap();
        let watch = watch_of(dir.path());
        watch.add_folder(Path::new("a")).unwrap();
        watch.add_folder(Path::new("gone")).unwrap();
        std::fs::remove_dir(dir.path().join("gone")).unwrap();
        std::fs::rename(dir.path().join("a"), dir.path().join("b")).unwrap();
        watch.add_folder(Path::new("b")).unwrap();
        let (dirty, _) = watch.take();
        assert_eq!(
            dirty,
            BTreeSet::from([
                PathBuf::from("a"),
                PathBuf::from("b"),
                PathBuf::from("gone")
            ])
        );
        std::fs::write(dir.path().join("b/f"), "x").unwrap();
        assert_eq!(watch.take().0, BTreeSet::from([PathBuf::from("b/f")]));
        assert_eq!(watch.folders(), 2);
    }

    #[test]
    fn an_overflowing_queue_is_counted_as_a_loss() {
        // A queue of a few events, when this process may set it (it is
        // read when the watcher starts; other watchers are unaffected).
        let limit = Path::new("/proc/sys/fs/inotify/max_queued_events");
        let Ok(before) = std::fs::read_to_string(limit) else {
            return;
        };
        if std::fs::write(limit, "8").is_err() {
            eprintln!("skipped: the inotify queue length cannot be set here (not root)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let watch = Watch::start(dir.path());
        std::fs::write(limit, before.trim()).unwrap();
        let watch = watch.unwrap();
        watch.add_folder(Path::new("")).unwrap();
        // Hold the reading thread off the queue while it fills.
        let held = watch.reported();
        for i in 0..64 {
            std::fs::write(dir.path().join(format!("f{i}")), "x").unwrap();
        }
        drop(held);
        assert_eq!(watch.losses(), 1);
    }
}
