//! A person's file operations from the Explorer ([`UserOp`]): no snapshot,
//! but the same policy and path checks as an agent's, and the sweep's cache
//! kept up to date.

use std::io;

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::GateError;
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::ContentHash;

use super::errors::{disk_failed, refuse};
use super::paths::rename_apart;
use super::state::{Gate, GateState};
use crate::disk::{EntryKind, Staged};
use crate::policy::Resolved;

/// A person's file operation from the Explorer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserOp {
    /// A new empty file.
    CreateFile(NormalizedPath),
    CreateFolder(NormalizedPath),
    /// A file or folder moved or renamed.
    Rename {
        from: NormalizedPath,
        to: NormalizedPath,
    },
    /// A file, link or folder (with everything in it) removed.
    Delete(NormalizedPath),
    /// New contents for several files at once (replace in files): each
    /// only while it still has the content the new one was made from; all
    /// or none.
    Rewrite(Vec<UserWrite>),
    /// Discard changes (the Source Control panel): what the files hold is
    /// kept and the discard recorded under `id`, so it can be undone.
    Discard {
        id: u64,
        files: Vec<super::DiscardFile>,
    },
    /// Undo the discard recorded under `id`, which named `paths`.
    UndoDiscard {
        id: u64,
        paths: Vec<NormalizedPath>,
    },
}

/// One file of a [`UserOp::Rewrite`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserWrite {
    pub path: NormalizedPath,
    /// The hash of the content the new bytes were made from.
    pub expected: ContentHash,
    pub bytes: Vec<u8>,
}

impl UserOp {
    /// Every path the operation touches.
    pub fn touched_paths(&self) -> Vec<&NormalizedPath> {
        match self {
            Self::CreateFile(p) | Self::CreateFolder(p) | Self::Delete(p) => vec![p],
            Self::Rename { from, to } => vec![from, to],
            Self::Rewrite(files) => files.iter().map(|f| &f.path).collect(),
            Self::Discard { files, .. } => files.iter().map(|f| &f.path).collect(),
            Self::UndoDiscard { paths, .. } => paths.iter().collect(),
        }
    }
}

impl Gate {
    /// A person's file operation (the Explorer's new file, new folder,
    /// rename and delete): like a save, no snapshot — the person did it —
    /// but through the same policy (never `.cocode/`, never outside the
    /// workspace, no link followed), and the sweep's cache is brought up to
    /// date so a command running meanwhile is never charged with it.
    pub fn apply_user_op(&self, op: &UserOp) -> Result<(), GateError> {
        let mut st = self.lock();
        let root = self.layout.workspace_root().to_path_buf();
        match op {
            UserOp::CreateFile(path) => self.user_create_file(&mut st, path)?,
            UserOp::Rewrite(files) => self.user_rewrite(&mut st, files)?,
            UserOp::Discard { id, files } => {
                self.user_discard(&mut st, *id, files)?;
            }
            UserOp::UndoDiscard { id, paths } => self.user_undo_discard(&mut st, *id, paths)?,
            UserOp::CreateFolder(path) => {
                let target = self.policy.resolve("create folder", path)?;
                self.disk
                    .make_dir(&target.dir, &target.name)
                    .map_err(|e| match e.kind() {
                        io::ErrorKind::AlreadyExists => refuse(
                            WorkspaceErrorCode::FileConflict,
                            "create folder",
                            path,
                            "something by that name is already there",
                        ),
                        _ => disk_failed("create folder", path, &e),
                    })?;
            }
            UserOp::Rename { from, to } => {
                let source = self.policy.resolve("rename", from)?;
                let target = self.policy.resolve("rename", to)?;
                if self.kind(&source)?.is_none() {
                    return Err(refuse(
                        WorkspaceErrorCode::FileNotFound,
                        "rename",
                        from,
                        "there is nothing by that name",
                    ));
                }
                if self.kind(&target)?.is_some() {
                    return Err(refuse(
                        WorkspaceErrorCode::FileConflict,
                        "rename",
                        to,
                        "something by that name is already there",
                    ));
                }
                rename_apart(&source, &target, to)?;
                self.disk
                    .rename((&source.dir, &source.name), (&target.dir, &target.name))
                    .map_err(|e| disk_failed("rename", from, &e))?;
                st.sweep.refresh_tree(&root, &source.path);
                st.sweep.refresh_tree(&root, &target.path);
            }
            UserOp::Delete(path) => {
                let target = self.policy.resolve("delete", path)?;
                match self.kind(&target)? {
                    None => {
                        return Err(refuse(
                            WorkspaceErrorCode::FileNotFound,
                            "delete",
                            path,
                            "there is nothing by that name",
                        ));
                    }
                    Some(EntryKind::Dir) => {
                        let mut inside = target.dir.clone();
                        inside.push(target.name.clone());
                        self.remove_tree(&inside, path)?;
                        self.disk
                            .rmdir_if_empty(&target.dir, &target.name)
                            .map_err(|e| disk_failed("delete", path, &e))?;
                    }
                    Some(_) => self
                        .disk
                        .unlink(&target.dir, &target.name)
                        .map_err(|e| disk_failed("delete", path, &e))?,
                }
                st.sweep.refresh_tree(&root, &target.path);
            }
        }
        Ok(())
    }

    /// A new empty file (never over an existing entry).
    fn user_create_file(&self, st: &mut GateState, path: &NormalizedPath) -> Result<(), GateError> {
        let root = self.layout.workspace_root().to_path_buf();
        let target = self.policy.resolve("create", path)?;
        if self.kind(&target)?.is_some() {
            return Err(refuse(
                WorkspaceErrorCode::FileConflict,
                "create",
                path,
                "something by that name is already there",
            ));
        }
        let temp = format!(".{}.cocode-new-{}.tmp", target.name, std::process::id());
        let staged = self
            .disk
            .stage(&target.dir, &target.name, &temp, &[])
            .map_err(|e| disk_failed("create", path, &e))?;
        if let Err(e) = self
            .disk
            .rename((&target.dir, &temp), (&target.dir, &target.name))
        {
            let _ = self.disk.unlink(&staged.dir, &temp);
            return Err(disk_failed("create", path, &e));
        }
        st.sweep.refresh(&root, &target.path);
        Ok(())
    }

    /// New contents for several files, all or none: every file must still
    /// hold what its new content was made from (checked under the gate's
    /// lock), all are staged and synced, then all are committed.
    fn user_rewrite(&self, st: &mut GateState, files: &[UserWrite]) -> Result<(), GateError> {
        let root = self.layout.workspace_root().to_path_buf();
        let mut targets = Vec::with_capacity(files.len());
        for file in files {
            let target = self.policy.resolve("replace", &file.path)?;
            if targets.iter().any(|t: &Resolved| t.path == target.path) {
                return Err(refuse(
                    WorkspaceErrorCode::FileConflict,
                    "replace",
                    &file.path,
                    "the file is named twice",
                ));
            }
            let now = match self.kind(&target)? {
                Some(EntryKind::File) => self.read(&target, "replace")?,
                _ => {
                    return Err(refuse(
                        WorkspaceErrorCode::FileNotFound,
                        "replace",
                        &file.path,
                        "not a file any more",
                    ));
                }
            };
            if ContentHash::of(&now) != file.expected {
                return Err(refuse(
                    WorkspaceErrorCode::FileConflict,
                    "replace",
                    &file.path,
                    "the file changed since it was searched; search again",
                ));
            }
            targets.push(target);
        }
        let mut staged = Vec::with_capacity(files.len());
        let cleanup = |staged: &[(Resolved, Staged, String)]| {
            for (target, _, temp) in staged {
                let _ = self.disk.unlink(&target.dir, temp);
            }
        };
        for (file, target) in files.iter().zip(&targets) {
            let temp = format!(".{}.cocode-replace-{}.tmp", target.name, std::process::id());
            match self
                .disk
                .stage(&target.dir, &target.name, &temp, &file.bytes)
                .and_then(|s| self.disk.sync_staged(&s).map(|()| s))
            {
                Ok(s) => staged.push((target.clone(), s, temp)),
                Err(e) => {
                    cleanup(&staged);
                    return Err(disk_failed("replace", &file.path, &e));
                }
            }
        }
        for (i, (target, s, _)) in staged.iter().enumerate() {
            if let Err(e) = self.disk.commit(s) {
                cleanup(&staged[i..]);
                return Err(disk_failed("replace", &target.path, &e));
            }
            st.sweep.refresh(&root, &target.path);
        }
        Ok(())
    }

    /// Removes everything inside the folder `dir` (links are removed, never
    /// followed).
    fn remove_tree(&self, dir: &[String], shown: &NormalizedPath) -> Result<(), GateError> {
        let failed = |e: &io::Error| disk_failed("delete", shown, e);
        for (name, kind) in self.disk.list(dir).map_err(|e| failed(&e))? {
            if kind == EntryKind::Dir {
                let mut inner = dir.to_vec();
                inner.push(name.clone());
                self.remove_tree(&inner, shown)?;
                self.disk
                    .rmdir_if_empty(dir, &name)
                    .map_err(|e| failed(&e))?;
            } else {
                self.disk.unlink(dir, &name).map_err(|e| failed(&e))?;
            }
        }
        Ok(())
    }
}
