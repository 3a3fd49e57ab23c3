//! The repository's state as `git status` would show it, for one workspace
//! folder (which may be the repository's work tree or a folder inside it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gix::bstr::{BStr, ByteSlice as _};
use gix::status::index_worktree;
use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};

use crate::GitError;

/// Where HEAD points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// On a branch (its short name).
    Branch(String),
    /// On a branch with no commit yet.
    Unborn(String),
    /// At a commit with no branch (its abbreviated id).
    Detached(String),
}

/// The branch's upstream and how far apart they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// Its short name (`origin/main`).
    pub name: String,
    /// Commits on the branch that the upstream lacks.
    pub ahead: usize,
    /// Commits on the upstream that the branch lacks.
    pub behind: usize,
}

/// What changed about a path, on one side (staged or not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Ignored,
    Untracked,
    Added,
    Modified,
    TypeChanged,
    Renamed,
    Deleted,
    Conflicted,
}

impl Kind {
    /// The letter the Explorer and the Source Control panel show (VS
    /// Code's letters).
    pub const fn letter(self) -> char {
        match self {
            Self::Ignored => 'I',
            Self::Untracked => 'U',
            Self::Added => 'A',
            Self::Modified => 'M',
            Self::TypeChanged => 'T',
            Self::Renamed => 'R',
            Self::Deleted => 'D',
            Self::Conflicted => 'C',
        }
    }

    /// The word for people.
    pub const fn words(self) -> &'static str {
        match self {
            Self::Ignored => "ignored",
            Self::Untracked => "untracked",
            Self::Added => "added",
            Self::Modified => "modified",
            Self::TypeChanged => "type changed",
            Self::Renamed => "renamed",
            Self::Deleted => "deleted",
            Self::Conflicted => "in conflict",
        }
    }
}

/// A path's state: staged (HEAD to index) and unstaged (index to the
/// work tree, or not tracked at all).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileState {
    pub staged: Option<Kind>,
    pub unstaged: Option<Kind>,
    /// For a staged rename: the path it came from (workspace-relative).
    pub renamed_from: Option<String>,
    /// An untracked or ignored folder shown whole (`target/`).
    pub is_folder: bool,
}

impl FileState {
    /// The one kind a file shows: a conflict first, then its unstaged
    /// change, then its staged one.
    pub fn shown(&self) -> Option<Kind> {
        if self.staged == Some(Kind::Conflicted) || self.unstaged == Some(Kind::Conflicted) {
            return Some(Kind::Conflicted);
        }
        self.unstaged.or(self.staged)
    }
}

/// What git says of the repository holding a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoState {
    /// The repository's work tree.
    pub workdir: PathBuf,
    pub head: Head,
    /// HEAD's commit (full hex id); `None` on a branch with no commit yet.
    /// It changes with every commit even when the branch does not.
    pub head_id: Option<String>,
    pub upstream: Option<Upstream>,
    /// A merge (or rebase, cherry-pick, revert…) is in progress.
    pub operation: Option<String>,
    /// Every path with a state, relative to the workspace folder, `/`
    /// separated, in path order. cocode's own `.cocode/` is left out.
    pub files: BTreeMap<String, FileState>,
}

impl RepoState {
    /// The state the Explorer shows for a file: its own, or that of an
    /// untracked or ignored folder holding it.
    pub fn file_kind(&self, rel: &str) -> Option<Kind> {
        if let Some(state) = self.files.get(rel) {
            return state.shown();
        }
        let mut at = rel;
        while let Some((parent, _)) = at.rsplit_once('/') {
            if let Some(state) = self.files.get(parent).filter(|s| s.is_folder) {
                return state.shown();
            }
            at = parent;
        }
        None
    }

    /// The state a folder shows: its own when git shows it whole
    /// (untracked or ignored), else the strongest of the files inside it
    /// (ignored files do not colour the folders above them).
    pub fn folder_kind(&self, rel: &str) -> Option<Kind> {
        if let Some(kind) = self.file_kind(rel) {
            return Some(kind);
        }
        let prefix = format!("{rel}/");
        self.files
            .range::<str, _>((
                std::ops::Bound::Included(prefix.as_str()),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(path, _)| path.starts_with(&prefix))
            .filter_map(|(_, state)| state.shown())
            .filter(|kind| *kind != Kind::Ignored)
            .max_by_key(|kind| rank(*kind))
    }

    /// How many paths have a change (ignored ones not counted).
    pub fn changed_count(&self) -> usize {
        self.files
            .values()
            .filter(|s| s.shown().is_some_and(|k| k != Kind::Ignored))
            .count()
    }
}

/// Which kind colours a folder when its files differ: a conflict over a
/// change over something new.
const fn rank(kind: Kind) -> u8 {
    match kind {
        Kind::Ignored => 0,
        Kind::Untracked => 1,
        Kind::Added => 2,
        Kind::Renamed => 3,
        Kind::TypeChanged => 4,
        Kind::Modified => 5,
        Kind::Deleted => 6,
        Kind::Conflicted => 7,
    }
}

fn status_error(e: impl std::fmt::Display) -> GitError {
    GitError::Status {
        message: e.to_string(),
    }
}

fn head_error(e: impl std::fmt::Display) -> GitError {
    GitError::Head {
        message: e.to_string(),
    }
}

/// The repository holding `workspace`, or `None` when it is in none (or
/// only in a bare one).
pub(crate) fn open(workspace: &Path) -> Result<Option<(gix::Repository, String)>, GitError> {
    let repo = match gix::discover(workspace) {
        Ok(repo) => repo,
        Err(e)
            if e.downcast_any_ref::<gix::discover::upwards::Error>()
                .is_some_and(|found| {
                    matches!(
                        found,
                        gix::discover::upwards::Error::NoGitRepository { .. }
                            | gix::discover::upwards::Error::NoGitRepositoryWithinCeiling { .. }
                            | gix::discover::upwards::Error::NoGitRepositoryWithinFs { .. }
                    )
                }) =>
        {
            return Ok(None);
        }
        Err(e) => {
            return Err(GitError::Open {
                path: workspace.display().to_string(),
                message: e.to_string(),
            });
        }
    };
    let Some(workdir) = repo.workdir() else {
        return Ok(None);
    };
    let workdir = real(workdir);
    let inside = relative_path(&workdir, &real(workspace)).unwrap_or_default();
    Ok(Some((repo, inside)))
}

/// `path` relative to `root`, `/` separated (`""` for the root itself);
/// `None` when it is not inside `root`.
pub fn relative_path(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    Some(
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// `path` made absolute and free of links, as far as it exists.
fn real(path: &Path) -> PathBuf {
    dunce::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// What git says of the repository holding `workspace` (`None`: not in a
/// repository). Reads only: the index's refreshed stat data is not
/// written back.
pub fn read(workspace: &Path) -> Result<Option<RepoState>, GitError> {
    let Some((repo, inside)) = open(workspace)? else {
        return Ok(None);
    };
    let head = head_of(&repo)?;
    let upstream = upstream_of(&repo)?;
    let operation = repo.state().map(|s| operation_words(&s).to_owned());
    let mut files: BTreeMap<String, FileState> = BTreeMap::new();
    let into_workspace = |repo_rel: &BStr| -> Option<String> {
        let path = repo_rel.to_str_lossy();
        let rel = if inside.is_empty() {
            path.into_owned()
        } else {
            path.strip_prefix(&format!("{inside}/"))?.to_owned()
        };
        let rel = rel.trim_end_matches('/').to_owned();
        (rel != ".cocode" && !rel.starts_with(".cocode/") && !rel.is_empty()).then_some(rel)
    };
    let iter = repo
        .status(gix::progress::Discard)
        .map_err(status_error)?
        .index_worktree_options_mut(|opts| {
            opts.rewrites = None;
            opts.sorting = Some(
                gix::status::plumbing::index_as_worktree_with_renames::Sorting::ByPathCaseSensitive,
            );
            if let Some(walk) = opts.dirwalk_options.as_mut() {
                walk.set_emit_ignored(Some(gix::dir::walk::EmissionMode::CollapseDirectory));
            }
        })
        .index_worktree_submodules(gix::status::Submodule::AsConfigured { check_dirty: false })
        .into_iter(Vec::<gix::bstr::BString>::new())
        .map_err(status_error)?;
    for item in iter {
        let item = item.map_err(status_error)?;
        match item {
            gix::status::Item::TreeIndex(change) => {
                let Some(rel) = into_workspace(change.location()) else {
                    continue;
                };
                let (kind, from) = match &change {
                    gix::diff::index::Change::Addition { .. } => (Kind::Added, None),
                    gix::diff::index::Change::Deletion { .. } => (Kind::Deleted, None),
                    gix::diff::index::Change::Modification { .. } => (Kind::Modified, None),
                    gix::diff::index::Change::Rewrite {
                        source_location, ..
                    } => (Kind::Renamed, into_workspace(source_location.as_ref())),
                };
                let state = files.entry(rel).or_default();
                state.staged = Some(kind);
                state.renamed_from = from;
            }
            gix::status::Item::IndexWorktree(index_worktree::Item::Modification {
                rela_path,
                status,
                ..
            }) => {
                let Some(rel) = into_workspace(rela_path.as_ref()) else {
                    continue;
                };
                let kind = match status {
                    EntryStatus::Conflict { .. } => Kind::Conflicted,
                    EntryStatus::Change(Change::Removed) => Kind::Deleted,
                    EntryStatus::Change(Change::Type { .. }) => Kind::TypeChanged,
                    EntryStatus::Change(
                        Change::Modification { .. } | Change::SubmoduleModification(_),
                    ) => Kind::Modified,
                    EntryStatus::IntentToAdd => Kind::Added,
                    EntryStatus::NeedsUpdate(_) => continue,
                };
                files.entry(rel).or_default().unstaged = Some(kind);
            }
            gix::status::Item::IndexWorktree(index_worktree::Item::DirectoryContents {
                entry,
                ..
            }) => {
                let kind = match entry.status {
                    gix::dir::entry::Status::Untracked => Kind::Untracked,
                    gix::dir::entry::Status::Ignored(_) => Kind::Ignored,
                    gix::dir::entry::Status::Tracked | gix::dir::entry::Status::Pruned => {
                        continue;
                    }
                };
                let Some(rel) = into_workspace(entry.rela_path.as_ref()) else {
                    continue;
                };
                let state = files.entry(rel).or_default();
                state.unstaged = Some(kind);
                state.is_folder = entry.disk_kind.is_some_and(|k| k.is_dir());
            }
            gix::status::Item::IndexWorktree(index_worktree::Item::Rewrite { .. }) => {}
        }
    }
    Ok(Some(RepoState {
        workdir: repo.workdir().map(real).unwrap_or_default(),
        head,
        head_id: repo.head_id().ok().map(|id| id.to_string()),
        upstream,
        operation,
        files,
    }))
}

/// Where HEAD of the repository holding `workspace` points, and its
/// commit (full hex id; `None` on a branch with no commit yet), without
/// reading the status of any file; `None` when it is in no repository.
pub fn head(workspace: &Path) -> Result<Option<(Head, Option<String>)>, GitError> {
    let Some((repo, _)) = open(workspace)? else {
        return Ok(None);
    };
    let head = head_of(&repo)?;
    Ok(Some((head, repo.head_id().ok().map(|id| id.to_string()))))
}

/// The words for an operation under way.
fn operation_words(state: &gix::state::InProgress) -> &'static str {
    use gix::state::InProgress;
    match state {
        InProgress::ApplyMailbox => "patch application",
        InProgress::ApplyMailboxRebase => "rebase with patches",
        InProgress::Bisect => "bisect",
        InProgress::CherryPick | InProgress::CherryPickSequence => "cherry-pick",
        InProgress::Merge => "merge",
        InProgress::Rebase | InProgress::RebaseInteractive => "rebase",
        InProgress::Revert | InProgress::RevertSequence => "revert",
    }
}

fn head_of(repo: &gix::Repository) -> Result<Head, GitError> {
    let head = repo.head().map_err(head_error)?;
    let short = |name: &gix::refs::FullNameRef| name.shorten().to_str_lossy().into_owned();
    if head.is_detached() {
        let id = head
            .id()
            .ok_or_else(|| head_error("a detached HEAD without a commit"))?;
        return Ok(Head::Detached(id.to_hex_with_len(7).to_string()));
    }
    let name = head
        .referent_name()
        .ok_or_else(|| head_error("HEAD names no branch"))?;
    Ok(if head.is_unborn() {
        Head::Unborn(short(name))
    } else {
        Head::Branch(short(name))
    })
}

fn upstream_of(repo: &gix::Repository) -> Result<Option<Upstream>, GitError> {
    let Some(branch) = repo.head_name().map_err(head_error)? else {
        return Ok(None);
    };
    let Some(tracking) =
        repo.branch_remote_tracking_ref_name(branch.as_ref(), gix::remote::Direction::Fetch)
    else {
        return Ok(None);
    };
    let tracking = tracking.map_err(head_error)?;
    let Ok(mut upstream_ref) = repo.find_reference(tracking.as_ref()) else {
        // Configured but never fetched.
        return Ok(None);
    };
    let upstream_id = upstream_ref.peel_to_id().map_err(head_error)?.detach();
    let Ok(head_id) = repo.head_id() else {
        return Ok(None);
    };
    let head_id = head_id.detach();
    let count = |from: gix::ObjectId, hidden: gix::ObjectId| -> Result<usize, GitError> {
        let walk = repo
            .rev_walk([from])
            .with_hidden([hidden])
            .all()
            .map_err(head_error)?;
        let mut n = 0;
        for commit in walk {
            commit.map_err(head_error)?;
            n += 1;
        }
        Ok(n)
    };
    Ok(Some(Upstream {
        name: tracking.shorten().to_str_lossy().into_owned(),
        ahead: count(head_id, upstream_id)?,
        behind: count(upstream_id, head_id)?,
    }))
}

/// The error of reading `rel`'s content from the repository.
fn blob_error(rel: &str) -> impl Fn(&dyn std::fmt::Display) -> GitError + '_ {
    move |e| GitError::Blob {
        path: rel.to_owned(),
        message: e.to_string(),
    }
}

/// The content of `rel` (workspace-relative, `/` separated) in HEAD's
/// commit; `None` when the workspace is in no repository, HEAD has no
/// commit, or the file is not in it.
pub fn head_content(workspace: &Path, rel: &str) -> Result<Option<Vec<u8>>, GitError> {
    Ok(head_contents(workspace, &[rel])?.pop().flatten())
}

/// [`head_content`] of each of `rels`, in order, with the repository
/// opened and HEAD's tree read once.
pub fn head_contents(workspace: &Path, rels: &[&str]) -> Result<Vec<Option<Vec<u8>>>, GitError> {
    let none = || vec![None; rels.len()];
    let Some((repo, inside)) = open(workspace)? else {
        return Ok(none());
    };
    let Ok(commit) = repo.head_commit() else {
        return Ok(none());
    };
    let tree = commit
        .tree()
        .map_err(|e| blob_error(rels.first().copied().unwrap_or_default())(&e))?;
    let mut out = Vec::with_capacity(rels.len());
    for rel in rels {
        let failed = blob_error(rel);
        let in_repo = repo_path(&inside, rel);
        let entry = tree
            .lookup_entry_by_path(Path::new(&in_repo))
            .map_err(|e| failed(&e))?;
        out.push(match entry {
            Some(entry) if entry.mode().is_blob() => {
                Some(entry.object().map_err(|e| failed(&e))?.detach().data)
            }
            _ => None,
        });
    }
    Ok(out)
}

/// The content of `rel` (workspace-relative, `/` separated) in the index
/// (staged); `None` when the workspace is in no repository, or the file is
/// not in the index or is in conflict there.
pub fn index_content(workspace: &Path, rel: &str) -> Result<Option<Vec<u8>>, GitError> {
    Ok(index_contents(workspace, &[rel])?.pop().flatten())
}

/// [`index_content`] of each of `rels`, in order, with the repository
/// opened and the index read once (discarding many files).
pub fn index_contents(workspace: &Path, rels: &[&str]) -> Result<Vec<Option<Vec<u8>>>, GitError> {
    let Some((repo, inside)) = open(workspace)? else {
        return Ok(vec![None; rels.len()]);
    };
    let index = repo
        .index_or_empty()
        .map_err(|e| blob_error(rels.first().copied().unwrap_or_default())(&e))?;
    let mut out = Vec::with_capacity(rels.len());
    for rel in rels {
        let in_repo = repo_path(&inside, rel);
        let entry = index.entry_by_path_and_stage(
            in_repo.as_bytes().as_bstr(),
            gix::index::entry::Stage::Unconflicted,
        );
        out.push(match entry {
            Some(entry)
                if matches!(
                    entry.mode,
                    gix::index::entry::Mode::FILE | gix::index::entry::Mode::FILE_EXECUTABLE
                ) =>
            {
                let object = repo
                    .find_object(entry.id)
                    .map_err(|e| blob_error(rel)(&e))?;
                Some(object.detach().data)
            }
            _ => None,
        });
    }
    Ok(out)
}

/// The work tree of the repository holding `workspace`, without reading
/// any file's status; `None` when it is in no repository.
pub fn workdir(workspace: &Path) -> Result<Option<PathBuf>, GitError> {
    Ok(open(workspace)?.and_then(|(repo, _)| repo.workdir().map(real)))
}

/// `rel` (`/` separated, relative to `root`) as a path under `root`; the
/// other way round from [`relative_path`].
pub fn absolute_path(root: &Path, rel: &str) -> PathBuf {
    rel.split('/')
        .filter(|s| !s.is_empty())
        .fold(root.to_path_buf(), |p, s| p.join(s))
}

/// A workspace-relative path made relative to the repository's work tree,
/// given where the workspace sits in it (`inside`, `""` at the top; see
/// [`workspace_in_repo`]).
pub fn repo_path(inside: &str, rel: &str) -> String {
    if inside.is_empty() {
        rel.to_owned()
    } else {
        format!("{inside}/{rel}")
    }
}

/// Where the workspace folder sits in its repository's work tree (`""` at
/// the top); `None` when it is in no repository.
pub fn workspace_in_repo(workspace: &Path) -> Result<Option<String>, GitError> {
    Ok(open(workspace)?.map(|(_, inside)| inside))
}
