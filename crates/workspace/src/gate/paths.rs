//! The gate's path checks: a batch's items kept apart and version-control
//! metadata left alone (an agent's operations), a rename that moves
//! something somewhere else (one check for an agent's renames and a
//! person's); the paths an operation holds, and splitting a recorded path.

use std::collections::{BTreeMap, HashMap};

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{GateError, GateOp};
use cocode_core::ids::OpId;
use cocode_core::path::NormalizedPath;

use super::errors::{internal, refuse};
use crate::policy::Resolved;

/// Refuses a batch in which two items touch the same path or one item's
/// path contains another's: every item is planned against the disk as it is
/// before the batch, so items must not see each other's effects.
pub(super) fn disjoint(ops: &[GateOp]) -> Result<(), GateError> {
    let mut owner: HashMap<&str, usize> = HashMap::new();
    for (n, op) in ops.iter().enumerate() {
        for path in op.touched_paths() {
            match owner.insert(path.as_str(), n) {
                Some(other) if other != n => {
                    return Err(refuse(
                        WorkspaceErrorCode::FileConflict,
                        "batch",
                        path,
                        "two items of one batch touch this path",
                    ));
                }
                _ => {}
            }
        }
    }
    for (n, op) in ops.iter().enumerate() {
        for path in op.touched_paths() {
            let key = path.as_str();
            let inside_another = key
                .match_indices('/')
                .any(|(i, _)| owner.get(&key[..i]).is_some_and(|&o| o != n));
            if inside_another {
                return Err(refuse(
                    WorkspaceErrorCode::FileConflict,
                    "batch",
                    path,
                    "another item of the batch works on a folder containing this path",
                ));
            }
        }
    }
    Ok(())
}

/// Agents write no version-control metadata, at any depth, by the path
/// they named or by the real one it resolves to: a hook or a configuration
/// (`core.fsmonitor`, a filter driver) written there runs in the person's
/// own git later, outside any sandbox. The person's own saves are not
/// judged here.
pub(super) fn outside_metadata(
    operation: &'static str,
    asked: &NormalizedPath,
    target: &Resolved,
) -> Result<(), GateError> {
    if asked.is_in_version_control_metadata() || target.path.is_in_version_control_metadata() {
        return Err(refuse(
            WorkspaceErrorCode::PathNotWritable,
            operation,
            asked,
            "version-control metadata (.git and the like) is the person's: a hook or setting written there would run in their own git, outside any sandbox",
        ));
    }
    Ok(())
}

/// A rename moves something somewhere else: not onto itself, not into a
/// folder inside itself, not onto a folder it is in. The one check of this
/// for an agent's renames and a person's.
pub(super) fn rename_apart(
    source: &Resolved,
    dest: &Resolved,
    to: &NormalizedPath,
) -> Result<(), GateError> {
    if source.path == dest.path
        || source.path.contains(&dest.path)
        || dest.path.contains(&source.path)
    {
        return Err(refuse(
            WorkspaceErrorCode::FileConflict,
            "rename",
            to,
            "a rename onto itself or into itself",
        ));
    }
    Ok(())
}

/// The paths an operation holds in `held` (blocked or excluded); an
/// operation holding none is unknown.
pub(super) fn paths_of(
    held: &BTreeMap<NormalizedPath, OpId>,
    op: &OpId,
    what: &str,
) -> Result<Vec<NormalizedPath>, GateError> {
    let paths: Vec<NormalizedPath> = held
        .iter()
        .filter(|(_, o)| *o == op)
        .map(|(p, _)| p.clone())
        .collect();
    if paths.is_empty() {
        return Err(GateError {
            code: WorkspaceErrorCode::FileNotFound,
            ..internal("abandon", "", &format!("no {what} {op}"))
        });
    }
    Ok(paths)
}

/// Splits a recorded (real) path into its folder segments and name.
pub(super) fn split(path: &NormalizedPath) -> (Vec<String>, String) {
    let mut segments: Vec<String> = path.segments().map(ToOwned::to_owned).collect();
    let name = segments.pop().unwrap_or_default();
    (segments, name)
}
