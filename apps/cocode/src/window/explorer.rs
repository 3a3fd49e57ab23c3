//! The Explorer's model: a lazily loaded, gitignore-aware folder tree.
//! Listings arrive from the IO thread; the model never touches the disk.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::window::io_worker::{IoRequest, ListFilter, Listing};

/// The load state of one folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderState {
    Loading,
    Loaded(Listing),
    Failed(String),
}

/// The tree of one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explorer {
    root: PathBuf,
    folders: BTreeMap<PathBuf, FolderState>,
    expanded: BTreeSet<PathBuf>,
    selected: Option<PathBuf>,
}

impl Explorer {
    /// A tree rooted at `root`, with the request that loads the root.
    pub fn new(root: PathBuf) -> (Self, IoRequest) {
        let request = list(&root);
        let mut folders = BTreeMap::new();
        folders.insert(root.clone(), FolderState::Loading);
        let mut expanded = BTreeSet::new();
        expanded.insert(root.clone());
        (
            Self {
                root,
                folders,
                expanded,
                selected: None,
            },
            request,
        )
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn folder(&self, dir: &Path) -> Option<&FolderState> {
        self.folders.get(dir)
    }

    pub fn is_expanded(&self, dir: &Path) -> bool {
        self.expanded.contains(dir)
    }

    pub fn selected(&self) -> Option<&Path> {
        self.selected.as_deref()
    }

    /// Opens or closes a folder; opening an unloaded folder asks for its listing.
    pub fn toggle(&mut self, dir: &Path) -> Option<IoRequest> {
        if self.expanded.remove(dir) {
            return None;
        }
        self.expanded.insert(dir.to_path_buf());
        match self.folders.get(dir) {
            Some(FolderState::Loaded(_) | FolderState::Loading) => None,
            Some(FolderState::Failed(_)) | None => {
                self.folders.insert(dir.to_path_buf(), FolderState::Loading);
                Some(list(dir))
            }
        }
    }

    pub fn select(&mut self, path: &Path) {
        self.selected = Some(path.to_path_buf());
    }

    /// Reloads every open folder (listings are replaced when they arrive,
    /// so the tree does not flicker to "loading").
    pub fn refresh(&mut self) -> Vec<IoRequest> {
        // Forget folders that are closed: they reload when opened again.
        let expanded = &self.expanded;
        self.folders.retain(|dir, _| expanded.contains(dir));
        self.expanded.iter().map(|dir| list(dir)).collect()
    }

    /// Applies a listing from the IO thread. Listings of folders outside
    /// this tree (a previous workspace) are ignored.
    pub fn on_listed(&mut self, dir: &Path, result: Result<Listing, String>) {
        if !dir.starts_with(&self.root) {
            return;
        }
        let state = match result {
            Ok(listing) => FolderState::Loaded(listing),
            Err(message) => FolderState::Failed(message),
        };
        self.folders.insert(dir.to_path_buf(), state);
    }
}

fn list(dir: &Path) -> IoRequest {
    IoRequest::List {
        dir: dir.to_path_buf(),
        filter: ListFilter::Workspace,
    }
}

/// What the Explorer marks on open files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileMarks {
    /// Open with unsaved changes.
    pub dirty: BTreeSet<PathBuf>,
    /// Being changed by a running task: the task's id.
    pub held: BTreeMap<PathBuf, String>,
    /// What git says of the folder's files, when it is in a repository.
    pub git: Option<std::sync::Arc<cocode_git::RepoState>>,
}

/// A file operation the person started in the Explorer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileAction {
    NewFile { parent: PathBuf },
    NewFolder { parent: PathBuf },
    Rename { path: PathBuf },
    Delete { path: PathBuf, folder: bool },
}

/// The Explorer's name prompt (or delete confirmation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePrompt {
    pub action: FileAction,
    /// The name typed so far (a rename starts with the current name).
    pub name: String,
    pub error: Option<String>,
    /// Sent to the host; waiting for the answer.
    pub busy: bool,
}

impl FilePrompt {
    pub fn new(action: FileAction) -> Self {
        let name = match &action {
            FileAction::Rename { path } => path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            _ => String::new(),
        };
        Self {
            action,
            name,
            error: None,
            busy: false,
        }
    }

    /// The path the operation creates or renames to, or why the typed name
    /// cannot be one.
    pub fn target(&self) -> Result<Option<PathBuf>, String> {
        let parent = match &self.action {
            FileAction::NewFile { parent } | FileAction::NewFolder { parent } => parent.clone(),
            FileAction::Rename { path } => path.parent().map(Path::to_path_buf).unwrap_or_default(),
            FileAction::Delete { .. } => return Ok(None),
        };
        let name = self.name.trim();
        if name.is_empty() {
            return Err("Type a name.".to_owned());
        }
        if name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
            return Err(format!("“{name}” cannot be a file or folder name."));
        }
        Ok(Some(parent.join(name)))
    }
}

/// The open workspace.
#[derive(Debug)]
pub struct WorkspaceView {
    pub root: PathBuf,
    pub explorer: Explorer,
    /// The file operation being named or confirmed.
    pub prompt: Option<FilePrompt>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::io_worker::{DirEntryInfo, EntryKind};
    use pretty_assertions::assert_eq;

    #[test]
    fn prompt_names_are_checked_before_anything_is_asked_of_the_host() {
        let mut p = FilePrompt::new(FileAction::NewFile {
            parent: "/w/src".into(),
        });
        assert_eq!(p.target(), Err("Type a name.".to_owned()));
        p.name = "a/b".into();
        assert_eq!(
            p.target(),
            Err("“a/b” cannot be a file or folder name.".to_owned())
        );
        p.name = " 새 파일.rs ".into();
        assert_eq!(p.target(), Ok(Some("/w/src/새 파일.rs".into())));
        let r = FilePrompt::new(FileAction::Rename {
            path: "/w/src/old.rs".into(),
        });
        assert_eq!(r.name, "old.rs");
        assert_eq!(r.target(), Ok(Some("/w/src/old.rs".into())));
        let d = FilePrompt::new(FileAction::Delete {
            path: "/w/x".into(),
            folder: true,
        });
        assert_eq!(d.target(), Ok(None));
    }

    fn listing(names: &[&str]) -> Listing {
        Listing {
            entries: names
                .iter()
                .map(|n| DirEntryInfo {
                    name: (*n).to_owned(),
                    path: PathBuf::from("/w").join(n),
                    kind: EntryKind::Dir,
                    size: 0,
                })
                .collect(),
            omitted: 0,
        }
    }

    #[test]
    fn folders_load_once_when_first_opened() {
        let (mut ex, first) = Explorer::new(PathBuf::from("/w"));
        assert_eq!(
            first,
            IoRequest::List {
                dir: "/w".into(),
                filter: ListFilter::Workspace
            }
        );
        assert_eq!(ex.folder(Path::new("/w")), Some(&FolderState::Loading));
        ex.on_listed(Path::new("/w"), Ok(listing(&["src"])));
        let src = Path::new("/w/src");
        assert_eq!(
            ex.toggle(src),
            Some(IoRequest::List {
                dir: src.into(),
                filter: ListFilter::Workspace
            })
        );
        assert!(ex.is_expanded(src));
        assert_eq!(ex.toggle(src), None, "closing asks for nothing");
        assert!(!ex.is_expanded(src));
        assert_eq!(ex.toggle(src), None, "still loading: no second request");
        ex.on_listed(src, Err("permission denied".into()));
        ex.toggle(src);
        assert_eq!(
            ex.toggle(src),
            Some(IoRequest::List {
                dir: src.into(),
                filter: ListFilter::Workspace
            }),
            "a failed folder retries"
        );
    }

    #[test]
    fn refresh_reloads_open_folders_and_forgets_closed_ones() {
        let (mut ex, _) = Explorer::new(PathBuf::from("/w"));
        ex.on_listed(Path::new("/w"), Ok(listing(&["a", "b"])));
        ex.toggle(Path::new("/w/a"));
        ex.on_listed(Path::new("/w/a"), Ok(listing(&[])));
        ex.toggle(Path::new("/w/b"));
        ex.on_listed(Path::new("/w/b"), Ok(listing(&[])));
        ex.toggle(Path::new("/w/b"));
        let requests = ex.refresh();
        assert_eq!(
            requests,
            vec![
                IoRequest::List {
                    dir: "/w".into(),
                    filter: ListFilter::Workspace
                },
                IoRequest::List {
                    dir: "/w/a".into(),
                    filter: ListFilter::Workspace
                },
            ]
        );
        assert!(
            matches!(ex.folder(Path::new("/w/a")), Some(FolderState::Loaded(_))),
            "no flicker"
        );
        assert_eq!(ex.folder(Path::new("/w/b")), None);
    }

    #[test]
    fn listings_from_another_workspace_are_ignored() {
        let (mut ex, _) = Explorer::new(PathBuf::from("/w"));
        ex.on_listed(Path::new("/old"), Ok(listing(&["x"])));
        assert_eq!(ex.folder(Path::new("/old")), None);
    }
}
