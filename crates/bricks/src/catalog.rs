//! Where bricks come from: the built-in ones compiled into the binary from
//! `assets/bricks/`, and folders on disk holding the person's own.
//!
//! A brick is a folder with `brick.toml` and a `template/` folder; every
//! file below `template/` becomes a file of the new workspace.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cocode_core::services::BrickInfo;
use include_dir::{Dir, include_dir};

use crate::manifest::{self, Manifest};
use crate::render::TemplateFile;

static BUILTIN: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../assets/bricks");

/// Where a brick was loaded from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrickSource {
    BuiltIn,
    Folder(PathBuf),
}

/// A loaded brick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Brick {
    pub manifest: Manifest,
    pub files: Vec<TemplateFile>,
    pub source: BrickSource,
}

/// Why a brick could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("brick at {location}: {message}")]
pub struct LoadError {
    pub location: String,
    pub message: String,
}

impl LoadError {
    fn new(location: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            location: location.into(),
            message: message.into(),
        }
    }
}

/// What [`BrickCatalog::add_folder`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FolderLoad {
    pub added: Vec<String>,
    pub problems: Vec<LoadError>,
}

/// The bricks on offer, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrickCatalog {
    bricks: BTreeMap<String, Brick>,
}

impl BrickCatalog {
    /// The built-in bricks.
    pub fn builtin() -> Result<Self, LoadError> {
        let mut catalog = Self::default();
        for dir in BUILTIN.dirs() {
            let location = format!("built-in {}", dir.path().display());
            let toml = dir
                .get_file(dir.path().join("brick.toml"))
                .and_then(|f| f.contents_utf8())
                .ok_or_else(|| LoadError::new(&location, "no brick.toml"))?;
            let manifest =
                manifest::parse(toml).map_err(|e| LoadError::new(&location, e.to_string()))?;
            let template_root = dir.path().join("template");
            let mut files = Vec::new();
            if let Some(template) = dir.get_dir(&template_root) {
                collect_embedded(template, &template_root, &mut files);
            }
            files.sort_by(|a, b| a.path.cmp(&b.path));
            catalog.insert(
                Brick {
                    manifest,
                    files,
                    source: BrickSource::BuiltIn,
                },
                &location,
            )?;
        }
        Ok(catalog)
    }

    /// Adds the brick in `dir` (when it holds `brick.toml`) or else every
    /// brick in its sub-folders. A brick that does not load is reported and
    /// left out without stopping the others; a name already offered is
    /// such a problem, so a person's brick never silently replaces a
    /// built-in one.
    pub fn add_folder(&mut self, dir: &Path) -> FolderLoad {
        let mut load = FolderLoad::default();
        let dirs = if dir.join("brick.toml").is_file() {
            vec![dir.to_path_buf()]
        } else {
            match std::fs::read_dir(dir) {
                Ok(entries) => {
                    let mut dirs: Vec<PathBuf> = entries
                        .filter_map(Result::ok)
                        .map(|e| e.path())
                        .filter(|p| p.join("brick.toml").is_file())
                        .collect();
                    dirs.sort();
                    dirs
                }
                Err(e) => {
                    load.problems
                        .push(LoadError::new(dir.display().to_string(), e.to_string()));
                    return load;
                }
            }
        };
        for sub in dirs {
            let location = sub.display().to_string();
            match load_folder(&sub).and_then(|brick| {
                let name = brick.manifest.name.clone();
                self.insert(brick, &location).map(|()| name)
            }) {
                Ok(name) => load.added.push(name),
                Err(e) => load.problems.push(e),
            }
        }
        load
    }

    fn insert(&mut self, brick: Brick, location: &str) -> Result<(), LoadError> {
        let name = brick.manifest.name.clone();
        if self.bricks.contains_key(&name) {
            return Err(LoadError::new(
                location,
                format!("a brick named {name:?} is already offered"),
            ));
        }
        self.bricks.insert(name, brick);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Brick> {
        self.bricks.get(name)
    }

    /// The bricks in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Brick> {
        self.bricks.values()
    }

    /// What each brick offers, in name order.
    pub fn infos(&self) -> Vec<BrickInfo> {
        self.iter()
            .map(|b| BrickInfo {
                name: b.manifest.name.clone(),
                description: b.manifest.description.clone(),
                variables: b.manifest.variables.clone(),
            })
            .collect()
    }
}

fn collect_embedded(dir: &Dir<'static>, root: &Path, out: &mut Vec<TemplateFile>) {
    for file in dir.files() {
        if let Ok(rel) = file.path().strip_prefix(root) {
            out.push(TemplateFile {
                path: slash_path(rel),
                bytes: file.contents().to_vec(),
            });
        }
    }
    for sub in dir.dirs() {
        collect_embedded(sub, root, out);
    }
}

fn slash_path(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Loads one brick folder. Symbolic links inside `template/` are refused:
/// a brick's files are its own, never something elsewhere on the disk.
pub fn load_folder(dir: &Path) -> Result<Brick, LoadError> {
    let location = dir.display().to_string();
    let toml = std::fs::read_to_string(dir.join("brick.toml"))
        .map_err(|e| LoadError::new(&location, format!("brick.toml: {e}")))?;
    let manifest = manifest::parse(&toml).map_err(|e| LoadError::new(&location, e.to_string()))?;
    let root = dir.join("template");
    let mut files = Vec::new();
    if root.is_dir() {
        collect_folder(&root, &root, &mut files)
            .map_err(|message| LoadError::new(&location, message))?;
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Brick {
        manifest,
        files,
        source: BrickSource::Folder(dir.to_path_buf()),
    })
}

fn collect_folder(dir: &Path, root: &Path, out: &mut Vec<TemplateFile>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if kind.is_symlink() {
            return Err(format!("{} is a symbolic link", path.display()));
        } else if kind.is_dir() {
            collect_folder(&path, root, out)?;
        } else if kind.is_file() {
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let rel = path.strip_prefix(root).map_err(|e| e.to_string())?;
            out.push(TemplateFile {
                path: slash_path(rel),
                bytes,
            });
        }
    }
    Ok(())
}
