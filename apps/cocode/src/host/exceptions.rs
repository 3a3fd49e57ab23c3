//! The folders outside the workspace that agent children (and the
//! confined language servers) may write: the toolchains' download caches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cocode_toolchain::TargetOs;

/// The toolchain caches agent children may write. The cache folders of a
/// toolchain whose home exists are made when missing (`~/.cargo/git`
/// appears only with a first git dependency, which would then fail to
/// download); the caches of a toolchain that is not there are left out.
pub fn write_exceptions() -> Vec<PathBuf> {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let home = std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from);
    cocode_toolchain::allowed::write_exceptions(&env, home.as_deref(), TargetOs::current())
        .into_iter()
        .filter_map(|x| {
            if !x.path.exists()
                && x.path.parent().is_some_and(Path::is_dir)
                && let Err(e) = cocode_toolchain::scratch::lasting_folder(&x.path)
            {
                tracing::warn!("{e}");
            }
            dunce::canonicalize(&x.path).ok()
        })
        .collect()
}
