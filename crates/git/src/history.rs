//! The last commits on HEAD and the local branches, for the Source Control
//! panel and the status bar's branch picker.

use std::path::Path;

use gix::bstr::ByteSlice as _;

use crate::GitError;
use crate::status::open;

/// One commit as the panel lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitSummary {
    /// The abbreviated id (7 hex digits).
    pub id: String,
    /// The message's first line.
    pub summary: String,
    pub author: String,
    /// Seconds since the Unix epoch of the author's time.
    pub time: i64,
}

fn history_error(e: impl std::fmt::Display) -> GitError {
    GitError::History {
        message: e.to_string(),
    }
}

/// Up to `limit` commits reached from HEAD along first parents, newest
/// first; empty when the workspace is in no repository or HEAD has no
/// commit yet.
pub fn recent_commits(workspace: &Path, limit: usize) -> Result<Vec<CommitSummary>, GitError> {
    let Some((repo, _)) = open(workspace)? else {
        return Ok(Vec::new());
    };
    let Ok(head) = repo.head_id() else {
        return Ok(Vec::new());
    };
    let walk = repo
        .rev_walk([head.detach()])
        .first_parent_only()
        .all()
        .map_err(history_error)?;
    let mut out = Vec::new();
    for info in walk.take(limit) {
        let info = info.map_err(history_error)?;
        let commit = info.object().map_err(history_error)?;
        let message = commit.message().map_err(history_error)?;
        let author = commit.author().map_err(history_error)?;
        out.push(CommitSummary {
            id: info.id.to_hex_with_len(7).to_string(),
            summary: message.summary().to_str_lossy().into_owned(),
            author: author.name.trim().to_str_lossy().into_owned(),
            time: author.seconds(),
        });
    }
    Ok(out)
}

/// The local branches' short names, in name order; empty when the
/// workspace is in no repository.
pub fn local_branches(workspace: &Path) -> Result<Vec<String>, GitError> {
    let Some((repo, _)) = open(workspace)? else {
        return Ok(Vec::new());
    };
    let refs = repo.references().map_err(history_error)?;
    let mut names = Vec::new();
    for reference in refs.local_branches().map_err(history_error)? {
        let reference = reference.map_err(history_error)?;
        names.push(reference.name().shorten().to_str_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}
