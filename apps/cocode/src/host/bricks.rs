//! New workspaces from bricks: the catalog and the engine the host
//! registers; `cli` and the window's brick worker use them too.
//!
//! Bricks come from the built-in set and from the person's bricks folder:
//! `COCODE_BRICKS_DIR` when set, otherwise `cocode/bricks` in the OS
//! configuration folder (`~/.config/cocode/bricks` on Linux,
//! `~/Library/Application Support/cocode/bricks` on macOS,
//! `%APPDATA%\cocode\bricks` on Windows). A brick there that does not load
//! is reported and left out; the others stay available.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use cocode_bricks::{BrickCatalog, Bricks, LoadError};
use cocode_core::process::ProcessLauncher;

/// The person's bricks folder.
pub fn user_bricks_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("COCODE_BRICKS_DIR") {
        return Some(PathBuf::from(dir));
    }
    directories::BaseDirs::new().map(|d| d.config_dir().join("cocode").join("bricks"))
}

/// The built-in bricks and the person's, with the problems of those that
/// did not load.
pub fn catalog() -> anyhow::Result<(BrickCatalog, Vec<LoadError>)> {
    let mut catalog = BrickCatalog::builtin().context("the built-in bricks")?;
    let problems = match user_bricks_dir() {
        Some(dir) if dir.is_dir() => catalog.add_folder(&dir).problems,
        _ => Vec::new(),
    };
    Ok((catalog, problems))
}

/// The engine, with hooks run by `launcher`; bricks that did not load are
/// logged.
pub fn engine(launcher: Arc<dyn ProcessLauncher>) -> anyhow::Result<Bricks> {
    let (catalog, problems) = catalog()?;
    for problem in problems {
        tracing::warn!("{problem}");
    }
    Ok(Bricks::new(catalog, launcher))
}
