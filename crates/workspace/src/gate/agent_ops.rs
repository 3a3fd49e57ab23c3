//! An agent's operations: planning a write, delete, rename or batch against
//! the disk (every check before anything is touched), applying one a
//! person approved, and abandoning an unresolved write journal.

use std::collections::BTreeSet;

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{GateError, GateOp, TaskContext};
use cocode_core::ids::OpId;
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{
    ContentHash, EditSnapshot, Forms, PathTransition, SnapshotOrigin, Unkept,
};

use super::errors::{disk_failed, refuse, store_failed};
use super::paths::{disjoint, outside_metadata, paths_of, rename_apart};
use super::plan::{Action, Change, Plan};
use super::state::{Gate, GateState};
use crate::disk::{Entry, EntryKind};
use crate::policy::Resolved;

impl Gate {
    /// A person accepts the current state of the paths an unresolved journal
    /// names: the journal moves to `journal/writes/abandoned/` and the paths
    /// are unblocked. Its records never enter the history.
    pub fn abandon_write_journal(&self, op: &OpId) -> Result<Vec<NormalizedPath>, GateError> {
        let mut st = self.lock();
        let paths = paths_of(&st.blocked, op, "unresolved write journal")?;
        self.store
            .abandon_write_journal(op)
            .map_err(|e| store_failed("abandon", &e))?;
        st.blocked.retain(|_, o| o != op);
        Ok(paths)
    }

    /// Applies a change a person approved after the gate held it: the same
    /// protocol, without test-file protection.
    pub fn apply_approved(
        &self,
        ctx: &TaskContext,
        op: &GateOp,
    ) -> Result<Vec<EditSnapshot>, GateError> {
        let mut st = self.lock();
        self.prepare(&mut st)?;
        let plan = self.plan(&st, op)?;
        self.commit(&mut st, ctx, &plan, SnapshotOrigin::Gate)
    }

    pub(super) fn plan(&self, st: &GateState, op: &GateOp) -> Result<Plan, GateError> {
        let mut plan = Plan::default();
        match op {
            GateOp::Batch { ops } => {
                disjoint(ops)?;
                for item in ops {
                    self.plan_item(&mut plan, item)?;
                }
                // Two spellings can reach one file through a link inside
                // the workspace; the resolved paths must differ too.
                let mut seen = BTreeSet::new();
                for change in &plan.changes {
                    for p in std::iter::once(&change.path).chain(&change.previous_path) {
                        if !seen.insert(p) {
                            return Err(refuse(
                                WorkspaceErrorCode::FileConflict,
                                "batch",
                                p,
                                "two items of one batch reach this file",
                            ));
                        }
                    }
                }
            }
            single => self.plan_item(&mut plan, single)?,
        }
        for change in &plan.changes {
            for p in std::iter::once(&change.path).chain(&change.previous_path) {
                if let Some(op) = st.blocked.get(p) {
                    return Err(refuse(
                        WorkspaceErrorCode::RecoveryPending,
                        "recover",
                        p,
                        &format!(
                            "an interrupted edit ({op}) left this file in an unknown state; accept or restore it first"
                        ),
                    ));
                }
                if let Some(op) = st.exclusion.get(p) {
                    return Err(refuse(
                        WorkspaceErrorCode::RollbackInProgress,
                        "rollback",
                        p,
                        &format!("a rollback ({op}) is restoring this file"),
                    ));
                }
            }
        }
        Ok(plan)
    }

    /// Plans one operation that is not a batch (a batch item).
    fn plan_item(&self, plan: &mut Plan, op: &GateOp) -> Result<(), GateError> {
        match op {
            GateOp::Write { path, bytes } => self.plan_write(plan, path, bytes),
            GateOp::Delete { path } => self.plan_delete(plan, path),
            GateOp::Rename { from, to } => self.plan_rename(plan, from, to),
            GateOp::Batch { ops } => Err(GateError {
                code: WorkspaceErrorCode::FileConflict,
                operation: "batch",
                path: ops
                    .first()
                    .and_then(|o| o.touched_paths().first().map(|p| p.as_str().to_owned()))
                    .unwrap_or_default(),
                message: "a batch item cannot itself be a batch".to_owned(),
                io_kind: None,
            }),
        }
    }

    fn plan_write(
        &self,
        plan: &mut Plan,
        path: &NormalizedPath,
        bytes: &[u8],
    ) -> Result<(), GateError> {
        let target = self.policy.resolve("write", path)?;
        outside_metadata("write", path, &target)?;
        let found = self
            .disk
            .entry(&target.dir, &target.name)
            .map_err(|e| disk_failed("write", &target.path, &e))?;
        let base = match found {
            None => None,
            Some(Entry::File(bytes)) => Some(bytes),
            Some(Entry::Other(_)) => {
                return Err(refuse(
                    WorkspaceErrorCode::FileTypeConflict,
                    "write",
                    path,
                    "not a regular file (a folder, symlink or device)",
                ));
            }
        };
        let result = ContentHash::of(bytes);
        let base_hash = base.as_deref().map(ContentHash::of);
        if base_hash != Some(result) {
            plan.changes.push(Change {
                path: target.path.clone(),
                previous_path: None,
                base: base_hash,
                result: Some(result),
                unkept: Unkept::NONE,
                forms: Forms::NONE,
            });
            if let Some(b) = base {
                plan.blobs.push(b);
            }
            plan.blobs.push(bytes.to_vec());
            plan.actions.push(Action::Put {
                target,
                bytes: bytes.to_vec(),
            });
        }
        Ok(())
    }

    pub(super) fn plan_delete(
        &self,
        plan: &mut Plan,
        path: &NormalizedPath,
    ) -> Result<(), GateError> {
        let target = self.policy.resolve("delete", path)?;
        if !plan.metadata_removal {
            outside_metadata("delete", path, &target)?;
        }
        match self.kind(&target)? {
            None => {
                return Err(refuse(
                    WorkspaceErrorCode::FileNotFound,
                    "delete",
                    path,
                    "nothing to delete",
                ));
            }
            Some(EntryKind::File) => self.plan_delete_file(plan, target)?,
            Some(EntryKind::Dir) => {
                for file in self.files_below(&target, "delete")? {
                    self.plan_delete_file(plan, file)?;
                }
                self.plan_emptied_dirs(plan, &target, "delete")?;
            }
            Some(_) => {
                return Err(refuse(
                    WorkspaceErrorCode::FileTypeConflict,
                    "delete",
                    path,
                    "not a regular file (a symlink or device)",
                ));
            }
        }

        Ok(())
    }

    fn plan_rename(
        &self,
        plan: &mut Plan,
        from: &NormalizedPath,
        to: &NormalizedPath,
    ) -> Result<(), GateError> {
        let source = self.policy.resolve("rename", from)?;
        let dest = self.policy.resolve("rename", to)?;
        // A folder holding a repository moves whole, as an agent command
        // may move it; what is moved into or out of metadata is refused.
        outside_metadata("rename", from, &source)?;
        outside_metadata("rename", to, &dest)?;
        rename_apart(&source, &dest, to)?;
        if self.kind(&dest)?.is_some() {
            return Err(refuse(
                WorkspaceErrorCode::FileConflict,
                "rename",
                to,
                "the target exists; rename never overwrites",
            ));
        }
        match self.kind(&source)? {
            None => {
                return Err(refuse(
                    WorkspaceErrorCode::FileNotFound,
                    "rename",
                    from,
                    "nothing to rename",
                ));
            }
            Some(EntryKind::File) => self.plan_move_file(plan, source, dest)?,
            Some(EntryKind::Dir) => {
                let prefix = format!("{}/", source.path.as_str());
                for file in self.files_below(&source, "rename")? {
                    let rest = file
                        .path
                        .as_str()
                        .strip_prefix(&prefix)
                        .unwrap_or(file.path.as_str());
                    let target_path = self
                        .policy
                        .normalize("rename", &format!("{}/{rest}", dest.path))?;
                    let target = self.policy.resolve("rename", &target_path)?;
                    if self.kind(&target)?.is_some() {
                        return Err(refuse(
                            WorkspaceErrorCode::FileConflict,
                            "rename",
                            &target_path,
                            "the target exists",
                        ));
                    }
                    self.plan_move_file(plan, file, target)?;
                }
                self.plan_emptied_dirs(plan, &source, "rename")?;
            }
            Some(_) => {
                return Err(refuse(
                    WorkspaceErrorCode::FileTypeConflict,
                    "rename",
                    from,
                    "not a regular file (a symlink or device)",
                ));
            }
        }

        Ok(())
    }

    fn plan_delete_file(&self, plan: &mut Plan, target: Resolved) -> Result<(), GateError> {
        let bytes = self.read(&target, "delete")?;
        plan.changes.push(Change {
            path: target.path.clone(),
            previous_path: None,
            base: Some(ContentHash::of(&bytes)),
            result: None,
            unkept: Unkept::NONE,
            forms: Forms::NONE,
        });
        plan.blobs.push(bytes);
        plan.actions.push(Action::Remove { target });
        Ok(())
    }

    fn plan_move_file(
        &self,
        plan: &mut Plan,
        from: Resolved,
        to: Resolved,
    ) -> Result<(), GateError> {
        let bytes = self.read(&from, "rename")?;
        let hash = ContentHash::of(&bytes);
        plan.changes.push(Change {
            path: to.path.clone(),
            previous_path: Some(from.path.clone()),
            base: Some(hash),
            result: Some(hash),
            unkept: Unkept::NONE,
            forms: Forms::NONE,
        });
        plan.blobs.push(bytes);
        plan.actions.push(Action::Move { from, to });
        Ok(())
    }

    fn plan_emptied_dirs(
        &self,
        plan: &mut Plan,
        top: &Resolved,
        operation: &'static str,
    ) -> Result<(), GateError> {
        let mut dirs = Vec::new();
        self.collect_dirs(top, &mut dirs, operation)?;
        dirs.reverse();
        // A plan may delete several folders (every repository a command
        // made): each one's emptied folders are kept, not the last one's.
        plan.emptied_dirs.extend(dirs);
        Ok(())
    }

    fn collect_dirs(
        &self,
        dir: &Resolved,
        out: &mut Vec<(Vec<String>, String)>,
        operation: &'static str,
    ) -> Result<(), GateError> {
        out.push((dir.dir.clone(), dir.name.clone()));
        let mut inner = dir.dir.clone();
        inner.push(dir.name.clone());
        for (name, kind) in self
            .disk
            .list(&inner)
            .map_err(|e| disk_failed(operation, &dir.path, &e))?
        {
            if kind == EntryKind::Dir {
                let child = self.child(dir, &name, operation)?;
                self.collect_dirs(&child, out, operation)?;
            }
        }
        Ok(())
    }

    fn child(
        &self,
        dir: &Resolved,
        name: &str,
        operation: &'static str,
    ) -> Result<Resolved, GateError> {
        let path = self
            .policy
            .normalize(operation, &format!("{}/{name}", dir.path))?;
        let mut parent = dir.dir.clone();
        parent.push(dir.name.clone());
        Ok(Resolved {
            path,
            dir: parent,
            name: name.to_owned(),
        })
    }

    /// Every regular file below a folder; any symlink or device makes the
    /// whole operation refused (all or nothing).
    fn files_below(
        &self,
        dir: &Resolved,
        operation: &'static str,
    ) -> Result<Vec<Resolved>, GateError> {
        let mut out = Vec::new();
        let mut inner = dir.dir.clone();
        inner.push(dir.name.clone());
        for (name, kind) in self
            .disk
            .list(&inner)
            .map_err(|e| disk_failed(operation, &dir.path, &e))?
        {
            let child = self.child(dir, &name, operation)?;
            if child.path.is_in_cocode_dir() {
                return Err(refuse(
                    WorkspaceErrorCode::PathNotWritable,
                    operation,
                    &child.path,
                    "inside .cocode",
                ));
            }
            match kind {
                EntryKind::File => out.push(child),
                EntryKind::Dir => out.extend(self.files_below(&child, operation)?),
                EntryKind::Symlink | EntryKind::Other => {
                    return Err(refuse(
                        WorkspaceErrorCode::FileTypeConflict,
                        operation,
                        &child.path,
                        "the folder holds a symlink or device; nothing was changed",
                    ));
                }
            }
        }
        Ok(out)
    }

    pub(super) fn kind(&self, target: &Resolved) -> Result<Option<EntryKind>, GateError> {
        self.disk
            .kind(&target.dir, &target.name)
            .map_err(|e| disk_failed("stat", &target.path, &e))
    }

    pub(super) fn read(
        &self,
        target: &Resolved,
        operation: &'static str,
    ) -> Result<Vec<u8>, GateError> {
        match self.disk.read(&target.dir, &target.name) {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => Err(refuse(
                WorkspaceErrorCode::FileNotFound,
                operation,
                &target.path,
                "the file vanished",
            )),
            Err(e) => Err(disk_failed(operation, &target.path, &e)),
        }
    }

    /// Projected transitions that would change or delete an existing
    /// protected test file.
    pub(super) fn protected(&self, plan: &Plan) -> Vec<PathTransition> {
        plan.transitions()
            .into_iter()
            .filter(|t| t.before.is_some() && self.tests.is_protected(&t.path))
            .collect()
    }
}
