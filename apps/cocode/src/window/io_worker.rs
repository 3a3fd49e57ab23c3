//! Background file-system reads for the UI: directory listings and file
//! previews run on one named thread, never on the UI thread. Each finished
//! job wakes the UI once (`request_repaint`), so an idle window stays idle.

use std::path::{Path, PathBuf};
use std::thread;

use cocode_core::gate::GateError;
use cocode_core::path::{CaseSensitivity, NormalizeOptions, is_cocode_name, looks_binary};
use cocode_workspace::{FilePrefix, WorkspaceReader};
use ignore::WalkBuilder;

use crate::window::link::{Coalesce, UiEnd, Waker, link};

/// Most entries listed for one directory; the rest are counted, not shown.
pub const MAX_DIR_ENTRIES: usize = 10_000;
/// Most bytes a preview reads.
pub const MAX_PREVIEW_BYTES: u64 = 4 * 1024 * 1024;

/// Folders never listed: the VCS's and cocode's own state (`.cocode` in
/// any spelling).
fn hidden_dir(name: &std::ffi::OsStr) -> bool {
    name == ".git" || name.to_str().is_some_and(is_cocode_name)
}

/// Which entries a listing includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFilter {
    /// Explorer: gitignore-aware, files and folders.
    Workspace,
    /// Folder picker: folders only, nothing ignored.
    FoldersOnly,
}

/// The kind of a listed entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EntryKind {
    Dir,
    File,
    Symlink,
    Other,
}

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntryInfo {
    pub name: String,
    pub path: PathBuf,
    pub kind: EntryKind,
    pub size: u64,
}

/// A directory's entries, folders first, then by name (case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub entries: Vec<DirEntryInfo>,
    /// Entries beyond [`MAX_DIR_ENTRIES`], not shown.
    pub omitted: usize,
}

/// What a preview read found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContent {
    Text {
        text: String,
        truncated: bool,
        size: u64,
    },
    Binary {
        size: u64,
    },
    NotUtf8 {
        size: u64,
    },
}

/// Work for the IO thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IoRequest {
    List {
        dir: PathBuf,
        filter: ListFilter,
    },
    /// Preview `path`, a file of the workspace at `root`.
    Read {
        root: PathBuf,
        path: PathBuf,
    },
    /// Resolve a folder the person wants to open (canonical, must be a directory).
    ResolveFolder {
        path: PathBuf,
    },
}

/// Results, in request order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IoResponse {
    Listed {
        dir: PathBuf,
        filter: ListFilter,
        result: Result<Listing, String>,
    },
    Read {
        path: PathBuf,
        result: Result<FileContent, String>,
    },
    FolderResolved {
        requested: PathBuf,
        result: Result<PathBuf, String>,
    },
}

/// Handle to the IO thread; dropping it ends the thread.
#[derive(Debug)]
pub struct IoWorker {
    link: UiEnd<IoRequest, IoResponse>,
}

impl Coalesce for IoResponse {}

impl IoWorker {
    /// Starts the thread; `waker` wakes the UI after every response.
    pub fn spawn(waker: Waker) -> std::io::Result<Self> {
        let (ui, mut worker) = link(waker);
        thread::Builder::new()
            .name("cocode-io".into())
            .spawn(move || {
                while let Some(request) = worker.requests.blocking_recv() {
                    if !worker.events.blocking_send(handle(request)) {
                        break;
                    }
                }
            })?;
        Ok(Self { link: ui })
    }

    /// Queues a request; never blocks.
    pub fn send(&self, request: IoRequest) {
        self.link.send(request);
    }

    /// Responses that arrived since the last call; never blocks.
    pub fn drain(&mut self) -> Vec<IoResponse> {
        self.link.drain()
    }
}

/// Runs one request on the calling thread.
pub fn handle(request: IoRequest) -> IoResponse {
    match request {
        IoRequest::List { dir, filter } => {
            let result = list_dir(&dir, filter);
            IoResponse::Listed {
                dir,
                filter,
                result,
            }
        }
        IoRequest::Read { root, path } => {
            let result = read_preview(&root, &path);
            IoResponse::Read { path, result }
        }
        IoRequest::ResolveFolder { path } => {
            let result = resolve_folder(&path);
            IoResponse::FolderResolved {
                requested: path,
                result,
            }
        }
    }
}

fn resolve_folder(path: &Path) -> Result<PathBuf, String> {
    let canonical = std::fs::canonicalize(path).map_err(|e| format!("{e}: {}", path.display()))?;
    if canonical.is_dir() {
        Ok(canonical)
    } else {
        Err(format!("not a folder: {}", canonical.display()))
    }
}

/// Lists one directory level.
pub fn list_dir(dir: &Path, filter: ListFilter) -> Result<Listing, String> {
    // Surface an unreadable directory as an error instead of an empty list.
    std::fs::read_dir(dir).map_err(|e| format!("{e}: {}", dir.display()))?;
    let respect_ignores = filter == ListFilter::Workspace;
    let walker = WalkBuilder::new(dir)
        .max_depth(Some(1))
        .hidden(false)
        .git_ignore(respect_ignores)
        .git_exclude(respect_ignores)
        .git_global(false)
        .ignore(respect_ignores)
        .parents(respect_ignores)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| {
            !(e.depth() == 1
                && e.file_type().is_some_and(|t| t.is_dir())
                && hidden_dir(e.file_name()))
        })
        .build();
    let mut entries = Vec::new();
    for entry in walker {
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let kind = match entry.file_type() {
            Some(t) if t.is_dir() => EntryKind::Dir,
            Some(t) if t.is_file() => EntryKind::File,
            Some(t) if t.is_symlink() => EntryKind::Symlink,
            _ => EntryKind::Other,
        };
        if filter == ListFilter::FoldersOnly && kind != EntryKind::Dir {
            continue;
        }
        let size = if kind == EntryKind::File {
            entry.metadata().map_or(0, |m| m.len())
        } else {
            0
        };
        entries.push(DirEntryInfo {
            name: entry.file_name().to_string_lossy().into_owned(),
            path: entry.into_path(),
            kind,
            size,
        });
    }
    entries.sort_by(|a, b| {
        (a.kind != EntryKind::Dir)
            .cmp(&(b.kind != EntryKind::Dir))
            .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
            .then_with(|| a.name.cmp(&b.name))
    });
    let omitted = entries.len().saturating_sub(MAX_DIR_ENTRIES);
    entries.truncate(MAX_DIR_ENTRIES);
    Ok(Listing { entries, omitted })
}

/// Reads at most [`MAX_PREVIEW_BYTES`] of a file of the workspace at
/// `root` for the read-only preview, through the workspace's one safe read
/// path (inside the root, never under `.cocode/`, through no link swapped
/// in meanwhile).
pub fn read_preview(root: &Path, path: &Path) -> Result<FileContent, String> {
    let rel = path
        .strip_prefix(root)
        .map_err(|_| format!("not in the open folder: {}", path.display()))?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    // Explorer paths carry each name as it is on disk, so they are looked
    // up as spelled whatever the volume does with case.
    let options = NormalizeOptions::native(CaseSensitivity::Sensitive);
    let reader =
        WorkspaceReader::open(root, options).map_err(|e| format!("{e}: {}", root.display()))?;
    let describe = |e: GateError| format!("{}: {}", e.message, path.display());
    let normalized = reader.normalize("preview", &rel).map_err(describe)?;
    let Some(FilePrefix { bytes, size }) = reader
        .read_prefix("preview", &normalized, MAX_PREVIEW_BYTES)
        .map_err(describe)?
    else {
        return Err(format!("no such file: {}", path.display()));
    };
    let truncated = size > bytes.len() as u64;
    if looks_binary(&bytes) {
        return Ok(FileContent::Binary { size });
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            // A cut through a multi-byte character at the read limit is not
            // an encoding problem: keep the valid prefix.
            let valid = err.utf8_error().valid_up_to();
            let incomplete_tail = err.utf8_error().error_len().is_none();
            if truncated && incomplete_tail {
                let mut bytes = err.into_bytes();
                bytes.truncate(valid);
                String::from_utf8(bytes).map_err(|_| "unexpected encoding state".to_owned())?
            } else {
                return Ok(FileContent::NotUtf8 { size });
            }
        }
    };
    Ok(FileContent::Text {
        text,
        truncated,
        size,
    })
}

#[cfg(test)]
#[path = "io_worker_tests.rs"]
mod tests;
