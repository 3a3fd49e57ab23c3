//! Background file-system reads for the UI: directory listings and the
//! files the editor opens run on one named thread, never on the UI thread. Each finished
//! job wakes the UI once (`request_repaint`), so an idle window stays idle.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::thread;

use cocode_core::gate::GateError;
use cocode_core::path::{CaseSensitivity, NormalizeOptions, NormalizedPath, looks_binary};
use cocode_workspace::{FilePrefix, IgnoreFilter, WorkspaceReader};
use ignore::WalkBuilder;

use crate::window::link::{Coalesce, UiEnd, Waker, link};

/// Most entries listed for one directory; the rest are counted, not shown.
pub const MAX_DIR_ENTRIES: usize = 10_000;

pub use crate::host::files::hidden_dir;

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

/// What a path asked to be opened is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenTarget {
    /// A folder (canonical): the window opens it.
    Folder(PathBuf),
    /// A file, in its folder's canonical path (a link to a file stays a
    /// link, so a file of the open folder is found there): an editor.
    File(PathBuf),
}

/// Most bytes the editor opens.
pub const MAX_OPEN_BYTES: u64 = 1 << 30;

/// What opening a file for the editor found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    Text {
        rel: NormalizedPath,
        rope: ropey::Rope,
    },
    /// Opened read-only, without its text.
    Binary { rel: NormalizedPath, size: u64 },
    /// Opened read-only, decoded with replacement characters.
    NotUtf8 {
        rel: NormalizedPath,
        text: String,
        size: u64,
    },
}

/// Work for the IO thread.
#[derive(Debug, Clone, PartialEq)]
pub enum IoRequest {
    List {
        dir: PathBuf,
        filter: ListFilter,
    },
    /// Resolve a folder the person wants to open (canonical, must be a directory).
    ResolveFolder {
        path: PathBuf,
    },
    /// Find what a path the system or a drop asked to open is: a folder
    /// to open, or a file to edit.
    ResolveOpen {
        path: PathBuf,
    },
    /// Open `path` for the editor (the whole file).
    Open {
        root: PathBuf,
        path: PathBuf,
    },
    /// Read an open file again after it changed on disk.
    Reread {
        root: PathBuf,
        path: PathBuf,
    },
    /// Whether the folder at `root` already has cocode history (a
    /// `.cocode` folder).
    History {
        root: PathBuf,
    },
    /// Read the Settings page's view of the folder at `root` (nothing is
    /// created).
    ReadSettings {
        root: PathBuf,
    },
    /// Write an export (the trace's metadata) to `path`: replacing what is
    /// there when the person chose it, else under the first free name.
    SaveExport {
        path: PathBuf,
        text: String,
        replace: bool,
    },
    /// Write the window's saved state to `file` (replaced atomically).
    SaveState {
        file: PathBuf,
        state: Box<crate::window::saved::SavedState>,
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
    FolderResolved {
        requested: PathBuf,
        result: Result<PathBuf, String>,
    },
    OpenResolved {
        requested: PathBuf,
        result: Result<OpenTarget, String>,
    },
    Opened {
        path: PathBuf,
        result: Result<Opened, String>,
    },
    /// The file's bytes now (`None`: it is gone).
    Reread {
        path: PathBuf,
        result: Result<Option<Vec<u8>>, String>,
    },
    /// Whether `root` has cocode history.
    History { root: PathBuf, present: bool },
    /// The Settings page's view of the folder at `root`.
    Settings {
        root: PathBuf,
        result: Result<Box<crate::host::settings::SettingsView>, String>,
    },
    /// The saved state was written (or why not).
    StateSaved { result: Result<(), String> },
    /// Where an export went (or why it did not).
    ExportSaved { result: Result<PathBuf, String> },
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
        IoRequest::ResolveFolder { path } => {
            let result = resolve_folder(&path);
            IoResponse::FolderResolved {
                requested: path,
                result,
            }
        }
        IoRequest::ResolveOpen { path } => {
            let result = resolve_open(&path);
            IoResponse::OpenResolved {
                requested: path,
                result,
            }
        }
        IoRequest::Open { root, path } => {
            let result = open_file(&root, &path);
            IoResponse::Opened { path, result }
        }
        IoRequest::Reread { root, path } => {
            let result = read_whole(&root, &path);
            IoResponse::Reread { path, result }
        }
        IoRequest::History { root } => {
            let present = root.join(cocode_core::path::COCODE_DIR).is_dir();
            IoResponse::History { root, present }
        }
        IoRequest::ReadSettings { root } => IoResponse::Settings {
            result: crate::host::settings::read_config(&root).map(|(config, exists)| {
                Box::new(crate::host::settings::view_of(&root, config, exists, None))
            }),
            root,
        },
        IoRequest::SaveExport {
            path,
            text,
            replace,
        } => IoResponse::ExportSaved {
            result: crate::host::config_file::write_text(&path, &text, replace)
                .map_err(|e| format!("{e:#}")),
        },
        IoRequest::SaveState { file, state } => IoResponse::StateSaved {
            result: crate::host::config_file::replace_json(&file, &state)
                .map_err(|e| format!("{e:#}")),
        },
    }
}

/// The whole file at `path` of the workspace at `root`, through the
/// workspace's safe read path; `None` when it does not exist.
fn read_whole(root: &Path, path: &Path) -> Result<Option<Vec<u8>>, String> {
    let (reader, normalized) = reader_for(root, path, "open")?;
    let describe = |e: GateError| format!("{}: {}", e.message, path.display());
    let Some(FilePrefix { bytes, size }) = reader
        .read_prefix("open", &normalized, MAX_OPEN_BYTES)
        .map_err(describe)?
    else {
        return Ok(None);
    };
    if size > MAX_OPEN_BYTES {
        return Err(too_large(path, size));
    }
    Ok(Some(bytes))
}

/// Opens a file for the editor: text as a rope; binary and other encodings
/// read-only with the reason. Text is read in pieces straight into the
/// rope (checked as UTF-8 piece by piece), so opening a big file never
/// holds its bytes and its rope at once.
pub fn open_file(root: &Path, path: &Path) -> Result<Opened, String> {
    let (reader, rel) = reader_for(root, path, "open")?;
    let Some(file) = reader
        .open_regular("open", &rel)
        .map_err(|e| format!("{}: {}", e.message, path.display()))?
    else {
        return Err(format!("no such file: {}", path.display()));
    };
    let failed = |e: std::io::Error| format!("{e}: {}", path.display());
    let size = file.metadata().map_err(failed)?.len();
    if size > MAX_OPEN_BYTES {
        return Err(too_large(path, size));
    }
    let mut head = Vec::with_capacity(BINARY_PROBE);
    (&file)
        .take(BINARY_PROBE as u64)
        .read_to_end(&mut head)
        .map_err(failed)?;
    if looks_binary(&head) {
        return Ok(Opened::Binary { rel, size });
    }
    let rest = MAX_OPEN_BYTES - head.len() as u64;
    match ropey::Rope::from_reader(head.as_slice().chain((&file).take(rest))) {
        Ok(rope) => Ok(Opened::Text { rel, rope }),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            // Not UTF-8: read again from the start, whole, to show it lossily.
            (&file).seek(SeekFrom::Start(0)).map_err(failed)?;
            let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
            (&file)
                .take(MAX_OPEN_BYTES)
                .read_to_end(&mut bytes)
                .map_err(failed)?;
            Ok(Opened::NotUtf8 {
                rel,
                text: String::from_utf8_lossy(&bytes).into_owned(),
                size: bytes.len() as u64,
            })
        }
        Err(e) => Err(failed(e)),
    }
}

/// How much of a file's start decides whether it is binary.
const BINARY_PROBE: usize = 8192;

fn too_large(path: &Path, size: u64) -> String {
    format!(
        "{} is too large to open ({}; the editor opens files up to {})",
        path.display(),
        human_size(size),
        human_size(MAX_OPEN_BYTES)
    )
}

/// The workspace reader of `root` and `path` relative to it.
fn reader_for(
    root: &Path,
    path: &Path,
    operation: &'static str,
) -> Result<(WorkspaceReader, NormalizedPath), String> {
    let rel = path
        .strip_prefix(root)
        .map_err(|_| format!("not in the open folder: {}", path.display()))?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    // Explorer paths carry each name as it is on disk, so they are looked
    // up as spelled whatever the volume does with case.
    let options = NormalizeOptions::native(CaseSensitivity::Sensitive);
    let reader =
        WorkspaceReader::open(root, options).map_err(|e| format!("{e}: {}", root.display()))?;
    let normalized = reader
        .normalize(operation, &rel)
        .map_err(|e| format!("{}: {}", e.message, path.display()))?;
    Ok((reader, normalized))
}

fn resolve_folder(path: &Path) -> Result<PathBuf, String> {
    let canonical = dunce::canonicalize(path).map_err(|e| format!("{e}: {}", path.display()))?;
    if canonical.is_dir() {
        Ok(canonical)
    } else {
        Err(format!("not a folder: {}", canonical.display()))
    }
}

/// A folder to open or a file to edit; anything else (a FIFO, a device,
/// nothing at all) is refused, saying what it is.
fn resolve_open(path: &Path) -> Result<OpenTarget, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{e}: {}", path.display()))?;
    if meta.is_dir() {
        return resolve_folder(path).map(OpenTarget::Folder);
    }
    if !meta.is_file() {
        return Err(format!("not a file or a folder: {}", path.display()));
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(format!("not a file or a folder: {}", path.display()));
    };
    // A bare name is in the current folder.
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let folder = dunce::canonicalize(parent).map_err(|e| format!("{e}: {}", path.display()))?;
    Ok(OpenTarget::File(folder.join(name)))
}

/// Lists one directory level.
pub fn list_dir(dir: &Path, filter: ListFilter) -> Result<Listing, String> {
    // Surface an unreadable directory as an error instead of an empty list.
    std::fs::read_dir(dir).map_err(|e| format!("{e}: {}", dir.display()))?;
    let rules = (filter == ListFilter::Workspace).then(|| IgnoreFilter::with_parents_of(dir));
    let walker = WalkBuilder::new(dir)
        .max_depth(Some(1))
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            e.depth() == 0
                || !((is_dir && hidden_dir(e.file_name()))
                    || rules.as_ref().is_some_and(|r| r.ignores(e.path(), is_dir)))
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

/// `1.5 KiB`-style sizes.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes;
    let mut unit = 0;
    let mut remainder = 0;
    while value >= 1024 && unit < UNITS.len() - 1 {
        remainder = value % 1024;
        value /= 1024;
        unit += 1;
    }
    if unit == 0 {
        format!("{value} {}", UNITS[0])
    } else {
        format!("{value}.{} {}", remainder * 10 / 1024, UNITS[unit])
    }
}

#[cfg(test)]
#[path = "io_worker_tests.rs"]
mod tests;
