//! `cargo xtask dist [--target T]`: the packages this machine can build,
//! written to `dist/` under the target folder (`CARGO_TARGET_DIR`
//! honoured). On Linux: the portable tarball — the release binary, the
//! desktop entry, the icons in the hicolor sizes, and an install script for
//! the person's own `~/.local` with its uninstaller — and a `.deb`
//! (`dpkg-deb`) installing the same into `/usr`; with `--target
//! x86_64-pc-windows-gnu`, `cocode.exe` cross-built with MinGW, its
//! subsystem and resources checked (`pe_check.rs`), in the release zip's
//! layout (`windows_check.rs` runs it under Wine). On a Mac: `cocode.app`
//! (`bundle.rs`) in a disk image.

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

/// An empty folder at `dir` (an earlier one removed).
fn fresh(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    Ok(())
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to.parent().context("a parent folder")?)?;
    std::fs::copy(from, to).with_context(|| format!("copying {}", from.display()))?;
    Ok(())
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// What every package installs, below `prefix` as a Unix prefix lays it
/// out: `bin/cocode`, the desktop entry and the hicolor icons in `share/`.
fn lay_out(root: &Path, binary: &Path, prefix: &Path) -> Result<()> {
    copy(binary, &prefix.join("bin/cocode"))?;
    #[cfg(unix)]
    make_executable(&prefix.join("bin/cocode"))?;
    copy(
        &root.join("assets/linux/cocode.desktop"),
        &prefix.join("share/applications/cocode.desktop"),
    )?;
    for size in crate::icons::SIZES {
        copy(
            &root.join(format!("assets/icon/png/{size}.png")),
            &prefix.join(format!("share/icons/hicolor/{size}x{size}/apps/cocode.png")),
        )?;
    }
    copy(
        &root.join("assets/icon/cocode.svg"),
        &prefix.join("share/icons/hicolor/scalable/apps/cocode.svg"),
    )
}

/// Lays out the tarball's folder `out/<name>/` from `binary`, with the
/// install and uninstall scripts; its path.
pub fn stage(root: &Path, binary: &Path, out: &Path, name: &str) -> Result<PathBuf> {
    let dir = out.join(name);
    fresh(&dir)?;
    lay_out(root, binary, &dir)?;
    // The AppArmor profile's template: install.sh fills in where the
    // program went.
    copy(
        &root.join("assets/linux/apparmor-cocode"),
        &dir.join("share/cocode/apparmor-cocode.in"),
    )?;
    for script in ["install.sh", "uninstall.sh"] {
        copy(&root.join("assets/linux").join(script), &dir.join(script))?;
        #[cfg(unix)]
        make_executable(&dir.join(script))?;
    }
    Ok(dir)
}

/// The runtime libraries the window needs on Debian and Ubuntu (the
/// README's list).
const DEB_DEPENDS: &str = "libc6, libx11-6, libx11-xcb1, libxcursor1, libxi6, libxkbcommon-x11-0, libegl1, libgl1-mesa-dri";

/// Loads the AppArmor profile when AppArmor is running (a system without
/// it, or a container, has nothing to load it into).
const DEB_POSTINST: &str = "#!/bin/sh
set -e
if [ \"$1\" = configure ] && [ -d /sys/kernel/security/apparmor ] \\
    && command -v apparmor_parser >/dev/null 2>&1; then
    apparmor_parser -r -T -W /etc/apparmor.d/cocode || true
fi
";

/// Unloads the profile before its file goes.
const DEB_PRERM: &str = "#!/bin/sh
set -e
if [ \"$1\" = remove ] && [ -d /sys/kernel/security/apparmor ] \\
    && command -v apparmor_parser >/dev/null 2>&1; then
    apparmor_parser -R /etc/apparmor.d/cocode 2>/dev/null || true
fi
";

/// Debian's name of this machine's architecture.
fn deb_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// Builds `cocode_<version>_<arch>.deb` in `out` around `binary`: the
/// program in `/usr/bin`, the desktop entry and the hicolor icons in
/// `/usr/share`, the AppArmor profile in `/etc/apparmor.d`; its path.
pub fn deb(root: &Path, binary: &Path, out: &Path, version: &str) -> Result<PathBuf> {
    let name = format!("cocode_{version}_{}", deb_arch());
    let dir = out.join(&name);
    fresh(&dir)?;
    lay_out(root, binary, &dir.join("usr"))?;
    let size_kib = std::fs::metadata(binary)?.len().div_ceil(1024) + 256;
    std::fs::create_dir_all(dir.join("DEBIAN"))?;
    std::fs::write(
        dir.join("DEBIAN/control"),
        format!(
            "Package: cocode\n\
             Version: {version}\n\
             Section: devel\n\
             Priority: optional\n\
             Architecture: {arch}\n\
             Maintainer: cocode maintainers <maintainers@cocode.invalid>\n\
             Installed-Size: {size_kib}\n\
             Depends: {DEB_DEPENDS}\n\
             Description: Agentic Development Environment\n \
             Edit code, run terminals and delegate tasks to agents in one window;\n \
             every agent edit is recorded and reversible, and agents write only\n \
             where allowed and reach only allowed hosts.\n",
            arch = deb_arch()
        ),
    )?;
    // The AppArmor profile that lets /usr/bin/cocode make user namespaces
    // where Ubuntu restricts them; loaded when the package is configured,
    // unloaded when it is removed.
    let profile = std::fs::read_to_string(root.join("assets/linux/apparmor-cocode"))?
        .replace("@COCODE_PATH@", "/usr/bin/cocode");
    std::fs::create_dir_all(dir.join("etc/apparmor.d"))?;
    std::fs::write(dir.join("etc/apparmor.d/cocode"), profile)?;
    std::fs::write(dir.join("DEBIAN/conffiles"), "/etc/apparmor.d/cocode\n")?;
    for (script, text) in [("postinst", DEB_POSTINST), ("prerm", DEB_PRERM)] {
        std::fs::write(dir.join("DEBIAN").join(script), text)?;
        #[cfg(unix)]
        make_executable(&dir.join("DEBIAN").join(script))?;
    }
    let deb = out.join(format!("{name}.deb"));
    let built = Command::new("dpkg-deb")
        .args(["--root-owner-group", "--build"])
        .arg(&dir)
        .arg(&deb)
        .output()
        .context("dpkg-deb (install the dpkg package)")?;
    if !built.status.success() {
        bail!(
            "dist: dpkg-deb failed: {}",
            String::from_utf8_lossy(&built.stderr)
        );
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(deb)
}

/// The Windows target cross-built here with MinGW.
pub const WINDOWS_GNU: &str = "x86_64-pc-windows-gnu";

/// Builds `cocode` with `profile` (for `target`, or the host); the
/// program's path.
fn build(root: &Path, target: Option<&str>, profile: &str) -> Result<PathBuf> {
    let mut command = Command::new(env!("CARGO"));
    command
        .args([
            "build",
            "--locked",
            "-p",
            "cocode",
            "--bin",
            "cocode",
            "--profile",
            profile,
        ])
        .current_dir(root);
    if let Some(target) = target {
        command.args(["--target", target]);
    }
    if !command.status()?.success() {
        bail!("dist: the {profile} build failed");
    }
    let dir = crate::suite::target_dir(root);
    let dir = target.map_or(dir.clone(), |t| dir.join(t));
    let name = if target.is_some_and(|t| t.contains("windows")) {
        "cocode.exe"
    } else {
        "cocode"
    };
    Ok(dir.join(profile).join(name))
}

/// The Windows program cross-built here, and its release zip.
pub struct WindowsDist {
    /// `cocode.exe` as cargo built it.
    pub exe: PathBuf,
    /// `cocode-<version>-x86_64-windows.zip`: `cocode.exe` at its root, as
    /// the release workflow's zip holds it.
    pub zip: PathBuf,
    /// What `objdump -p` says of the program, for people.
    pub facts: String,
    /// What a double-clickable `cocode.exe` lacks (`pe_check.rs`).
    pub problems: Vec<String>,
    /// The system libraries the program loads (its import table).
    pub imports: Vec<String>,
}

/// Cross-builds `cocode.exe` with `profile`, checks it and zips it into
/// `out`.
pub fn windows(root: &Path, profile: &str, out: &Path, version: &str) -> Result<WindowsDist> {
    let exe = build(root, Some(WINDOWS_GNU), profile)?;
    let facts = crate::pe_check::inspect(&exe)?;
    let zip = out.join(format!("cocode-{version}-x86_64-windows.zip"));
    let _ = std::fs::remove_file(&zip);
    // Python's zipfile: the zip holds the program under its own name.
    let folder = exe.parent().context("the program's folder")?;
    let made = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\n\
             with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n    \
             z.write(sys.argv[2], 'cocode.exe')",
        ])
        .arg(&zip)
        .arg(folder.join("cocode.exe"))
        .status()
        .context("python3 (it writes the zip)")?;
    if !made.success() {
        bail!("dist: python3 could not write {}", zip.display());
    }
    Ok(WindowsDist {
        problems: facts.problems(),
        imports: facts.imports.iter().cloned().collect(),
        facts: facts.describe(),
        exe,
        zip,
    })
}

/// Builds the packages for `target` (the host when `None`) into `dist/`
/// and prints their paths. `quick` builds with the `dist-check` profile
/// (release behaviour, debug speed) to check a package's shape.
pub fn run(root: &Path, target: Option<&str>, quick: bool) -> Result<bool> {
    let profile = if quick { "dist-check" } else { "release" };
    let out = crate::suite::target_dir(root).join("dist");
    std::fs::create_dir_all(&out)?;
    let version = version(root)?;
    match target {
        Some(WINDOWS_GNU) => {
            let built = windows(root, profile, &out, &version)?;
            for problem in &built.problems {
                println!("dist: {}: {problem}", built.exe.display());
            }
            println!(
                "dist: {} ({}; the installer is made by the release workflow)",
                built.zip.display(),
                built.facts
            );
            Ok(built.problems.is_empty())
        }
        None if cfg!(target_os = "macos") => {
            let binary = build(root, None, profile)?;
            let app = crate::bundle::lay_out(root, &binary, &out, &version)?;
            let dmg = out.join(format!(
                "cocode-{version}-{}-macos.dmg",
                std::env::consts::ARCH
            ));
            let _ = std::fs::remove_file(&dmg);
            let made = Command::new("hdiutil")
                .args([
                    "create",
                    "-volname",
                    "cocode",
                    "-format",
                    "UDZO",
                    "-srcfolder",
                ])
                .arg(&app)
                .arg(&dmg)
                .status()
                .context("hdiutil")?;
            if !made.success() {
                bail!("dist: hdiutil could not make the disk image");
            }
            println!("dist: {}", app.display());
            println!("dist: {}", dmg.display());
            Ok(true)
        }
        None if cfg!(target_os = "linux") => {
            linux(root, &build(root, None, profile)?, &out, &version)
        }
        None => bail!("dist: on Windows the release workflow builds the zip and the installer"),
        Some(other) => bail!(
            "dist: {other} is not built here; this machine builds the host's packages and {WINDOWS_GNU}"
        ),
    }
}

/// The Linux tarball and `.deb` around `binary`.
fn linux(root: &Path, binary: &Path, out: &Path, version: &str) -> Result<bool> {
    let name = format!("cocode-{version}-{}-linux", std::env::consts::ARCH);
    stage(root, binary, out, &name)?;
    let tarball = out.join(format!("{name}.tar.gz"));
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&tarball)
        .arg("-C")
        .arg(out)
        .arg(&name)
        .status()?;
    if !status.success() {
        bail!("dist: tar failed");
    }
    println!("dist: {}", tarball.display());
    let deb = deb(root, binary, out, version)?;
    println!("dist: {}", deb.display());
    Ok(true)
}

#[cfg(test)]
#[path = "dist_tests.rs"]
pub(crate) mod tests;
