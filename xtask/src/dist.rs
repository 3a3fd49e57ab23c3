//! `cargo xtask dist`: the packages this machine can build, written to
//! `dist/` under the target folder (`CARGO_TARGET_DIR` honoured). Here: the
//! portable Linux tarball — the release binary, the desktop entry, the
//! icons in the hicolor sizes, and an install script for the person's own
//! `~/.local` with its uninstaller.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// The version every package carries (the workspace's).
pub fn version(root: &Path) -> Result<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))?;
    let value: toml::Value = toml::from_str(&manifest)?;
    value
        .get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("version"))
        .and_then(toml::Value::as_str)
        .map(str::to_owned)
        .context("the workspace's package version")
}

/// Lays out the tarball's folder `out/<name>/` from `binary`; its path.
pub fn stage(root: &Path, binary: &Path, out: &Path, name: &str) -> Result<PathBuf> {
    let dir = out.join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let copy = |from: &Path, to: &Path| -> Result<()> {
        std::fs::create_dir_all(to.parent().context("a parent folder")?)?;
        std::fs::copy(from, to).with_context(|| format!("copying {}", from.display()))?;
        Ok(())
    };
    copy(binary, &dir.join("bin/cocode"))?;
    copy(
        &root.join("assets/linux/cocode.desktop"),
        &dir.join("share/applications/cocode.desktop"),
    )?;
    for size in crate::icons::SIZES {
        copy(
            &root.join(format!("assets/icon/png/{size}.png")),
            &dir.join(format!("share/icons/hicolor/{size}x{size}/apps/cocode.png")),
        )?;
    }
    copy(
        &root.join("assets/icon/cocode.svg"),
        &dir.join("share/icons/hicolor/scalable/apps/cocode.svg"),
    )?;
    for script in ["install.sh", "uninstall.sh"] {
        copy(&root.join("assets/linux").join(script), &dir.join(script))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        for exe in ["bin/cocode", "install.sh", "uninstall.sh"] {
            std::fs::set_permissions(dir.join(exe), std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(dir)
}

/// Builds the release binary and the tarball; prints the package's path.
pub fn run(root: &Path) -> Result<bool> {
    if !cfg!(target_os = "linux") {
        bail!(
            "dist: this machine builds the Linux tarball; the other packages are built by the release workflow"
        );
    }
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--locked", "-p", "cocode"])
        .current_dir(root)
        .status()?;
    if !status.success() {
        bail!("dist: the release build failed");
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let version = version(root)?;
    let name = format!("cocode-{version}-{}-linux", std::env::consts::ARCH);
    let out = target.join("dist");
    std::fs::create_dir_all(&out)?;
    stage(root, &target.join("release/cocode"), &out, &name)?;
    let tarball = out.join(format!("{name}.tar.gz"));
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&tarball)
        .arg("-C")
        .arg(&out)
        .arg(&name)
        .status()?;
    if !status.success() {
        bail!("dist: tar failed");
    }
    println!("dist: {}", tarball.display());
    Ok(true)
}

#[cfg(test)]
#[path = "dist_tests.rs"]
mod tests;
