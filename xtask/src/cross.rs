//! `cargo xtask cross-check`: compiles the Windows and macOS code paths here.
//!
//! Only Linux runs on this machine, so `#[cfg(windows)]` and
//! `#[cfg(target_os = "macos")]` code would rot unseen. This installs the two
//! Rust targets (and the MinGW C compiler for crates that build C) when it
//! can, then runs `cargo check --workspace --all-targets` for each target
//! with warnings denied in our crates (dependencies keep their lints capped).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result};

/// A target checked on every test run.
#[derive(Debug, Clone, Copy)]
pub struct CrossTarget {
    pub triple: &'static str,
    /// Crates left out for this target, with the reason (see [`EXCEPTIONS`]).
    pub exclude: &'static [(&'static str, &'static str)],
}

/// Crates left out of a target's `--all-targets` pass (their library is
/// then checked alone), with the reason. Empty: the C code some crates
/// build (criterion's `alloca` shim, tree-sitter grammars) compiles for
/// macOS with `zig cc`, which ships the macOS C headers, so no macOS SDK is
/// needed. Keep it empty; an entry needs its reason.
pub const EXCEPTIONS: &[(&str, &str)] = &[];

pub const TARGETS: [CrossTarget; 2] = [
    CrossTarget {
        triple: "x86_64-pc-windows-gnu",
        exclude: &[],
    },
    CrossTarget {
        triple: "aarch64-apple-darwin",
        exclude: EXCEPTIONS,
    },
];

/// Zig from `PyPI`: its `zig cc` compiles C for macOS without a macOS SDK.
const ZIG_PIP: &str = "ziglang==0.17.1";

/// Whether `python3 -m ziglang` runs.
fn zig_ready() -> bool {
    Command::new("python3")
        .args(["-m", "ziglang", "version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn install_zig() {
    println!("cross-check: installing {ZIG_PIP} with pip (zig cc builds C for macOS)");
    let pip = |extra: &[&str]| {
        Command::new("python3")
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .args(extra)
            .arg(ZIG_PIP)
            .status()
            .is_ok_and(|s| s.success())
    };
    // Debian's Python refuses system-wide installs unless told otherwise.
    if !pip(&[]) && !pip(&["--break-system-packages"]) {
        println!("cross-check: pip could not install {ZIG_PIP}");
    }
}

/// The `CC` and `AR` wrappers for the macOS target: `zig cc -target
/// aarch64-macos`, without the Apple-only flags cc-rs adds (`-arch`,
/// `--target=`, the minimum-version flag), which zig takes from its target.
fn macos_c_tools(root: &Path) -> Result<(PathBuf, PathBuf)> {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let dir = target.join("xtask-cross");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let cc = dir.join("zig-cc-aarch64-macos");
    let ar = dir.join("zig-ar");
    std::fs::write(
        &cc,
        "#!/bin/sh\n\
         # cc-rs adds Apple flags that zig takes from its -target instead.\n\
         for a in \"$@\"; do\n\
         \x20 shift\n\
         \x20 if [ \"${skip:-}\" = 1 ]; then skip=; continue; fi\n\
         \x20 case \"$a\" in\n\
         \x20   -arch) skip=1; continue;;\n\
         \x20   --target=*|-mmacosx-version-min=*|-mmacos-version-min=*) continue;;\n\
         \x20 esac\n\
         \x20 set -- \"$@\" \"$a\"\n\
         done\n\
         exec python3 -m ziglang cc -target aarch64-macos \"$@\"\n",
    )?;
    std::fs::write(&ar, "#!/bin/sh\nexec python3 -m ziglang ar \"$@\"\n")?;
    #[cfg(unix)]
    for tool in [&cc, &ar] {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(tool, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok((cc, ar))
}

/// The MinGW C compiler and the Debian package that provides it.
const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";
const MINGW_PACKAGE: &str = "gcc-mingw-w64-x86-64";

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// Installed targets of the active toolchain.
pub fn installed_targets(root: &Path) -> Vec<String> {
    Command::new("rustup")
        .args(["target", "list", "--installed"])
        .current_dir(root)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Adds the targets (rustup) and the MinGW compiler (apt, as root) if missing.
pub fn install(root: &Path) {
    let installed = installed_targets(root);
    for target in TARGETS {
        if !installed.iter().any(|t| t == target.triple) {
            println!("cross-check: rustup target add {}", target.triple);
            let ok = Command::new("rustup")
                .args(["target", "add", target.triple])
                .current_dir(root)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                println!(
                    "cross-check: could not add {} (is rustup installed?)",
                    target.triple
                );
            }
        }
    }
    if !crate::suite::have(MINGW_GCC) {
        crate::suite::apt_install(&[MINGW_PACKAGE]);
    }
    if !zig_ready() {
        install_zig();
    }
}

/// Adds the Windows target (rustup) and the MinGW compiler (apt, as root)
/// if missing: what `cargo xtask dist --target x86_64-pc-windows-gnu`
/// needs.
pub fn install_windows(root: &Path) {
    let triple = crate::dist::WINDOWS_GNU;
    if !installed_targets(root).iter().any(|t| t == triple) {
        println!("rustup target add {triple}");
        let ok = Command::new("rustup")
            .args(["target", "add", triple])
            .current_dir(root)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            println!("could not add {triple} (is rustup installed?)");
        }
    }
    if !crate::suite::have(MINGW_GCC) {
        crate::suite::apt_install(&[MINGW_PACKAGE]);
    }
}

/// Checks every target; true when all pass.
pub fn run(root: &Path, install_first: bool) -> Result<bool> {
    if install_first {
        install(root);
    }
    let installed = installed_targets(root);
    let mut ok = true;
    if !zig_ready() {
        println!(
            "cross-check: `python3 -m ziglang` is missing (pip install {ZIG_PIP}); the macOS check needs zig cc"
        );
        ok = false;
    }
    let (macos_cc, macos_ar) = macos_c_tools(root)?;
    for target in TARGETS {
        if !installed.iter().any(|t| t == target.triple) {
            println!("cross-check: target {} is not installed", target.triple);
            ok = false;
            continue;
        }
        for (krate, reason) in target.exclude {
            println!(
                "cross-check: {} checks only the library of {krate}: {reason}",
                target.triple
            );
        }
        let mut args = vec![
            "check",
            "--workspace",
            "--all-targets",
            "--locked",
            "--target",
            target.triple,
        ];
        for (krate, _) in target.exclude {
            args.extend(["--exclude", krate]);
        }
        let mut passes = vec![args];
        for (krate, _) in target.exclude {
            passes.push(vec![
                "check",
                "--locked",
                "--target",
                target.triple,
                "-p",
                krate,
                "--lib",
            ]);
        }
        for pass in passes {
            println!("cross-check: cargo {}", pass.join(" "));
            let status = Command::new(cargo())
                .args(&pass)
                .current_dir(root)
                // Our crates fail on warnings; cargo caps lints of dependencies.
                .env("RUSTFLAGS", "-D warnings")
                .env("CC_x86_64_pc_windows_gnu", MINGW_GCC)
                .env("CC_aarch64_apple_darwin", &macos_cc)
                .env("AR_aarch64_apple_darwin", &macos_ar)
                .status()
                .with_context(|| format!("running cargo check for {}", target.triple))?;
            if !status.success() {
                println!("cross-check: {} FAILED", target.triple);
                ok = false;
            }
        }
    }
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-crate workspace whose only error is inside `#[cfg(windows)]`.
    fn fixture(body: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"planted\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), body).unwrap();
        dir
    }

    fn check(dir: &Path, target: Option<&str>) -> bool {
        Command::new(cargo())
            .args(["check", "--quiet"])
            .args(target.map(|t| ["--target", t]).into_iter().flatten())
            .current_dir(dir)
            .env("RUSTFLAGS", "-D warnings")
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .status()
            .unwrap()
            .success()
    }

    #[test]
    fn a_windows_only_error_fails_the_windows_check_and_not_the_host_build() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        if !installed_targets(root)
            .iter()
            .any(|t| t == "x86_64-pc-windows-gnu")
        {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI installs x86_64-pc-windows-gnu before the tests (cargo xtask test)"
            );
            eprintln!("skipped: rustup target add x86_64-pc-windows-gnu to run this test");
            return;
        }
        let planted = fixture("#[cfg(windows)]\npub fn width() -> u32 { \"wide\" }\n");
        assert!(
            check(planted.path(), None),
            "the host does not compile the Windows block"
        );
        assert!(
            !check(planted.path(), Some("x86_64-pc-windows-gnu")),
            "the Windows check must fail"
        );

        let warning = fixture("#[cfg(windows)]\npub fn f() { let unused = 1; }\n");
        assert!(
            !check(warning.path(), Some("x86_64-pc-windows-gnu")),
            "warnings fail too"
        );

        let fixed = fixture("#[cfg(windows)]\npub fn width() -> u32 { 2 }\n");
        assert!(check(fixed.path(), Some("x86_64-pc-windows-gnu")));
    }
}
