//! cocode-git (layer L2): what git says of the workspace's repository, read
//! with gitoxide (`gix`) and never written: the branch or detached HEAD,
//! ahead and behind its upstream, a merge in progress, each file's staged
//! and unstaged state ([`RepoState`], [`read`]), a file's content at HEAD
//! ([`head_content`]) and the changed-line marks of a text against it
//! ([`line_marks`]). Writes to `.git` are the person's own `git`.

mod error;
mod lines;
mod status;

pub use error::GitError;
pub use lines::{LineMark, MarkKind, line_marks};
pub use status::{FileState, Head, Kind, RepoState, Upstream, head_content, read, relative_path};
