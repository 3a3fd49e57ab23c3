//! A person's discards (the Source Control panel's "Discard changes"): the
//! content a discard removes is kept in the history's blob store and the
//! discard is recorded in `.cocode/discards.json`, so it can be undone —
//! byte for byte, and only while the files are still as the discard left
//! them.

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::GateError;
use cocode_core::ids::Timestamp;
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::ContentHash;
use serde::{Deserialize, Serialize};

use super::errors::{disk_failed, refuse, store_failed};
use super::state::{Gate, GateState};
use crate::disk::{EntryKind, Staged};
use crate::policy::Resolved;

/// How many discards are kept; older ones are forgotten (and their
/// content goes with the next retention run).
pub const DISCARDS_KEPT: usize = 100;

/// One file of a discard, as the person asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscardFile {
    pub path: NormalizedPath,
    /// The content the person saw (`None`: the file was absent, a deletion
    /// to discard). The discard is refused when the file holds anything
    /// else by then.
    pub expected: Option<ContentHash>,
    /// What the file becomes (`None`: it is removed, an untracked file).
    pub restore: Option<Vec<u8>>,
}

/// One file of a recorded discard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscardedFile {
    pub path: NormalizedPath,
    /// The content discarded (kept as a blob); `None`: the file was absent.
    pub before: Option<ContentHash>,
    /// The content the discard left; `None`: it removed the file.
    pub after: Option<ContentHash>,
}

/// A recorded discard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscardRecord {
    /// Chosen by the caller, unique among the kept discards.
    pub id: u64,
    pub at: Timestamp,
    pub files: Vec<DiscardedFile>,
}

/// The discards file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DiscardsFile {
    version: u32,
    discards: Vec<DiscardRecord>,
}

impl Gate {
    /// The kept discards, oldest first.
    pub fn discards(&self) -> Result<Vec<DiscardRecord>, GateError> {
        Ok(self.read_discards()?.discards)
    }

    /// Every blob the kept discards hold (retention keeps them).
    pub(super) fn discard_blobs(&self) -> Result<Vec<ContentHash>, GateError> {
        Ok(self
            .read_discards()?
            .discards
            .iter()
            .flat_map(|d| d.files.iter().filter_map(|f| f.before))
            .collect())
    }

    fn read_discards(&self) -> Result<DiscardsFile, GateError> {
        read_discards_file(&self.layout.discards_file())
    }

    fn write_discards(&self, file: &DiscardsFile) -> Result<(), GateError> {
        let bytes = serde_json::to_vec_pretty(file).map_err(|e| GateError {
            code: WorkspaceErrorCode::IoFailed,
            operation: "record discard",
            path: ".cocode/discards.json".to_owned(),
            message: e.to_string(),
            io_kind: None,
        })?;
        self.store
            .write_state_file(&self.layout.discards_file(), &bytes)
            .map_err(|e| store_failed("record discard", &e))
    }

    /// The regular file (or nothing) at `target`; anything else is refused.
    fn file_or_nothing(
        &self,
        target: &Resolved,
        operation: &'static str,
    ) -> Result<Option<Vec<u8>>, GateError> {
        match self.kind(target)? {
            None => Ok(None),
            Some(EntryKind::File) => self.read(target, operation).map(Some),
            Some(_) => Err(refuse(
                WorkspaceErrorCode::FileTypeConflict,
                operation,
                &target.path,
                "only files are discarded here",
            )),
        }
    }

    /// Discards a person's changes: each file must still hold what they
    /// saw; what it holds is kept and the discard recorded (durably) before
    /// any file changes; then every file becomes its `restore` content or
    /// is removed. All files are checked before any changes.
    pub(super) fn user_discard(
        &self,
        st: &mut GateState,
        id: u64,
        files: &[DiscardFile],
    ) -> Result<DiscardRecord, GateError> {
        const OP: &str = "discard";
        let Some(first) = files.first() else {
            return Err(nothing(OP));
        };
        let mut record = self.read_discards()?;
        if record.discards.iter().any(|d| d.id == id) {
            return Err(refuse(
                WorkspaceErrorCode::FileConflict,
                OP,
                &first.path,
                "a discard with this id is recorded already",
            ));
        }
        let mut targets = Vec::with_capacity(files.len());
        let mut discarded = Vec::with_capacity(files.len());
        for file in files {
            let target = self.policy.resolve(OP, &file.path)?;
            if targets.iter().any(|t: &Resolved| t.path == target.path) {
                return Err(refuse(
                    WorkspaceErrorCode::FileConflict,
                    OP,
                    &file.path,
                    "the file is named twice",
                ));
            }
            let now = self.file_or_nothing(&target, OP)?;
            if now.as_deref().map(ContentHash::of) != file.expected {
                return Err(refuse(
                    WorkspaceErrorCode::FileConflict,
                    OP,
                    &file.path,
                    "the file changed since its changes were shown; nothing was discarded",
                ));
            }
            let after = file.restore.as_deref().map(ContentHash::of);
            if now.as_deref().map(ContentHash::of) == after {
                return Err(refuse(
                    WorkspaceErrorCode::FileConflict,
                    OP,
                    &file.path,
                    "the file has no change to discard",
                ));
            }
            let before = match &now {
                Some(bytes) => {
                    let (hash, written) = self
                        .store
                        .put_blob(bytes)
                        .map_err(|e| store_failed(OP, &e))?;
                    if let Some(written) = written {
                        self.note_blob(st, written);
                    }
                    Some(hash)
                }
                None => None,
            };
            discarded.push(DiscardedFile {
                path: file.path.clone(),
                before,
                after,
            });
            targets.push(target);
        }
        // The kept content is durable before the record names it, and the
        // record before any file changes.
        self.barrier(st)
            .map_err(|e| disk_failed(OP, &first.path, &e))?;
        let entry = DiscardRecord {
            id,
            at: self.clock.now(),
            files: discarded,
        };
        let previous = record.clone();
        record.discards.push(entry.clone());
        let overflow = record.discards.len().saturating_sub(DISCARDS_KEPT);
        record.discards.drain(..overflow);
        self.write_discards(&record)?;
        let contents: Vec<Option<&[u8]>> = files.iter().map(|f| f.restore.as_deref()).collect();
        if let Err(e) = self.put_contents(st, &targets, &contents, OP) {
            // Nothing (or not everything) changed: the record goes again,
            // so an undo never "restores" a file the discard never touched.
            let _ = self.write_discards(&previous);
            return Err(e);
        }
        Ok(entry)
    }

    /// Undoes a recorded discard: every file must still be as the discard
    /// left it; then each gets its discarded content back (or is removed
    /// again when it was absent), and the discard is forgotten.
    pub(super) fn user_undo_discard(
        &self,
        st: &mut GateState,
        id: u64,
        paths: &[NormalizedPath],
    ) -> Result<(), GateError> {
        const OP: &str = "undo discard";
        let Some(first) = paths.first() else {
            return Err(nothing(OP));
        };
        let mut record = self.read_discards()?;
        let Some(at) = record.discards.iter().position(|d| d.id == id) else {
            return Err(refuse(
                WorkspaceErrorCode::FileNotFound,
                OP,
                first,
                "this discard is not recorded (any more)",
            ));
        };
        let entry = record.discards[at].clone();
        let named: Vec<&NormalizedPath> = entry.files.iter().map(|f| &f.path).collect();
        if named != paths.iter().collect::<Vec<_>>() {
            return Err(refuse(
                WorkspaceErrorCode::FileConflict,
                OP,
                first,
                "the discard names other files",
            ));
        }
        let mut targets = Vec::with_capacity(entry.files.len());
        let mut contents = Vec::with_capacity(entry.files.len());
        for file in &entry.files {
            let target = self.policy.resolve(OP, &file.path)?;
            let now = self.file_or_nothing(&target, OP)?;
            if now.as_deref().map(ContentHash::of) != file.after {
                return Err(refuse(
                    WorkspaceErrorCode::FileConflict,
                    OP,
                    &file.path,
                    "the file changed since the discard; nothing was put back",
                ));
            }
            let bytes = match file.before {
                Some(hash) => Some(
                    self.store
                        .read_blob(&hash)
                        .map_err(|e| store_failed(OP, &e))?,
                ),
                None => None,
            };
            contents.push(bytes);
            targets.push(target);
        }
        let borrowed: Vec<Option<&[u8]>> = contents.iter().map(Option::as_deref).collect();
        self.put_contents(st, &targets, &borrowed, OP)?;
        record.discards.remove(at);
        self.write_discards(&record)
    }

    /// Gives each target its content (`None`: removes it): all new
    /// contents are staged and synced first, then committed in place and
    /// the removals made.
    fn put_contents(
        &self,
        st: &mut GateState,
        targets: &[Resolved],
        contents: &[Option<&[u8]>],
        operation: &'static str,
    ) -> Result<(), GateError> {
        let root = self.layout.workspace_root().to_path_buf();
        let mut staged: Vec<(&Resolved, Staged, String)> = Vec::new();
        let cleanup = |staged: &[(&Resolved, Staged, String)]| {
            for (target, _, temp) in staged {
                let _ = self.disk.unlink(&target.dir, temp);
            }
        };
        for (target, content) in targets.iter().zip(contents) {
            let Some(bytes) = content else { continue };
            let temp = format!(".{}.cocode-discard-{}.tmp", target.name, std::process::id());
            match self
                .disk
                .stage(&target.dir, &target.name, &temp, bytes)
                .and_then(|s| self.disk.sync_staged(&s).map(|()| s))
            {
                Ok(s) => staged.push((target, s, temp)),
                Err(e) => {
                    cleanup(&staged);
                    return Err(disk_failed(operation, &target.path, &e));
                }
            }
        }
        for (i, (target, s, _)) in staged.iter().enumerate() {
            if let Err(e) = self.disk.commit(s) {
                cleanup(&staged[i..]);
                return Err(disk_failed(operation, &target.path, &e));
            }
            st.sweep.refresh(&root, &target.path);
        }
        for (target, content) in targets.iter().zip(contents) {
            if content.is_none() && self.kind(target)?.is_some() {
                self.disk
                    .unlink(&target.dir, &target.name)
                    .map_err(|e| disk_failed(operation, &target.path, &e))?;
                st.sweep.refresh(&root, &target.path);
            }
        }
        Ok(())
    }
}

/// The discards recorded in the workspace laid out as `layout`, oldest
/// first, read without its gate (the Source Control panel lists them when
/// the folder opens). Reads only.
pub fn recorded_discards(layout: &crate::Layout) -> Result<Vec<DiscardRecord>, GateError> {
    Ok(read_discards_file(&layout.discards_file())?.discards)
}

fn read_discards_file(path: &std::path::Path) -> Result<DiscardsFile, GateError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| GateError {
            code: WorkspaceErrorCode::IoFailed,
            operation: "read discards",
            path: ".cocode/discards.json".to_owned(),
            message: format!("the record of discards cannot be read: {e}"),
            io_kind: None,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DiscardsFile {
            version: 1,
            discards: Vec::new(),
        }),
        Err(e) => Err(GateError {
            code: WorkspaceErrorCode::IoFailed,
            operation: "read discards",
            path: ".cocode/discards.json".to_owned(),
            message: e.to_string(),
            io_kind: Some(e.kind()),
        }),
    }
}

/// A discard that names no file.
fn nothing(operation: &'static str) -> GateError {
    GateError {
        code: WorkspaceErrorCode::FileNotFound,
        operation,
        path: String::new(),
        message: "no file was named".to_owned(),
        io_kind: None,
    }
}
