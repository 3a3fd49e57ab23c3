//! A checked operation before it is made: the changes it records and the
//! actions on disk behind them.

use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{ContentHash, Forms, PathTransition, Unkept};

use crate::policy::Resolved;

/// One change the gate will make on disk.
#[derive(Debug)]
pub(super) enum Action {
    Put { target: Resolved, bytes: Vec<u8> },
    Remove { target: Resolved },
    Move { from: Resolved, to: Resolved },
}

/// Where an action's new content is staged: (folder, target name, temp name).
pub(super) type StagedName = (Vec<String>, String, String);

/// One recorded change: a path's before/after, or a rename.
#[derive(Debug, Clone)]
pub(super) struct Change {
    pub(super) path: NormalizedPath,
    pub(super) previous_path: Option<NormalizedPath>,
    pub(super) base: Option<ContentHash>,
    pub(super) result: Option<ContentHash>,
    /// Sides recorded by hash only (the sweep's files above the ceiling).
    pub(super) unkept: Unkept,
    /// What each side is when it is not a plain regular file (the sweep's
    /// links, FIFOs, empty folders and mode bits).
    pub(super) forms: Forms,
}

/// A checked operation: the records it will write and the actions behind them.
#[derive(Debug, Default)]
pub(super) struct Plan {
    pub(super) changes: Vec<Change>,
    pub(super) actions: Vec<Action>,
    /// Contents to store as blobs before anything is touched.
    pub(super) blobs: Vec<Vec<u8>>,
    /// Folders emptied by a directory delete or rename, deepest first.
    pub(super) emptied_dirs: Vec<(Vec<String>, String)>,
    /// A removal of version-control metadata an agent command made
    /// (`Gate::remove_made_metadata`), the one change there planned.
    pub(super) metadata_removal: bool,
}

impl Plan {
    pub(super) fn transitions(&self) -> Vec<PathTransition> {
        let mut out = Vec::new();
        for Change {
            path,
            previous_path,
            base,
            result,
            ..
        } in &self.changes
        {
            match previous_path {
                Some(from) => {
                    out.push(PathTransition {
                        path: from.clone(),
                        before: *base,
                        after: None,
                    });
                    out.push(PathTransition {
                        path: path.clone(),
                        before: None,
                        after: *result,
                    });
                }
                None => out.push(PathTransition {
                    path: path.clone(),
                    before: *base,
                    after: *result,
                }),
            }
        }
        out
    }
}
