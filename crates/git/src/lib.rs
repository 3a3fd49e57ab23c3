//! cocode-git (layer L2): what git says of the workspace's repository, read
//! with gitoxide (`gix`): the branch or detached HEAD, ahead and behind its
//! upstream, a merge in progress, each file's staged and unstaged state
//! ([`RepoState`], [`read`]), a file's content at HEAD and in the index
//! ([`head_content`], [`index_content`]), the changed-line marks of a text
//! against it ([`line_marks`]), its hunks ([`diff_hunks`]), the last
//! commits and the branches. gix never writes: writes to `.git` are the
//! person's own `git`, run through the launcher ([`perform`]).

mod error;
mod history;
mod hunks;
mod lines;
mod run;
mod status;

pub use error::GitError;
pub use history::{CommitSummary, local_branches, recent_commits};
pub use hunks::{CONTEXT_LINES, Hunk, HunkLine, LineSign, diff_hunks, revert_lines};
pub use lines::{LineMark, MarkKind, line_marks, revert_change};
pub use run::{GitAction, perform};
pub use status::{
    FileState, Head, Kind, RepoState, Upstream, absolute_path, head, head_content, head_contents,
    index_content, index_contents, read, relative_path, repo_path, workdir, workspace_in_repo,
};
