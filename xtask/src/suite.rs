//! `cargo xtask test`: the one test command (README, CI).
//!
//! Installs the system packages the suites need when it can (root with
//! apt-get; otherwise it says what is missing and goes on), then runs
//! formatting, clippy (which also enforces `clippy.toml`'s only-place rules),
//! every test of the workspace, `layers` and `boundaries`. Any failure makes
//! the command fail; every step runs so one report shows everything.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context as _, Result};

use crate::{boundaries, cross, layers};

/// Debian packages the test suites and the app need at run time:
/// a virtual X server for the window smoke test, X11/GL client libraries
/// for eframe (glow through Mesa), tools to inspect and capture windows.
pub const APT_PACKAGES: [&str; 22] = [
    // The policy proxy's tests drive real curl through it.
    "curl",
    // The proxy benches' peer.
    "tinyproxy",
    // The terminal tests run a real interactive bash and `tput`.
    "bash",
    "ncurses-bin",
    // The credential vault's tests use a real Secret Service in a private
    // D-Bus session.
    "gnome-keyring",
    "dbus-x11",
    "libsecret-tools",
    "xvfb",
    "xauth",
    "x11-utils",
    "imagemagick",
    "libx11-6",
    "libx11-xcb1",
    "libxcursor1",
    "libxi6",
    "libxkbcommon-x11-0",
    "libegl1",
    "libegl-mesa0",
    "libgl1-mesa-dri",
    "ca-certificates",
    // The tarball's desktop entry is checked with desktop-file-validate,
    // and the installed `.deb`'s entry is started with `gio launch`.
    "desktop-file-utils",
    "libglib2.0-bin",
];

/// Seconds each fuzz target runs in the suite (a smoke run; `cargo xtask
/// fuzz --seconds N` runs longer).
const FUZZ_SECONDS: u32 = 30;

struct Step {
    name: &'static str,
    ok: bool,
    seconds: f64,
}

/// Runs the suite; true when everything passed.
pub fn run(root: &Path, install: bool) -> Result<bool> {
    if install {
        install_system_packages();
        ensure_rust_components();
        cross::install(root);
        crate::fuzz::install();
    } else {
        println!("test: skipping installation (--no-install)");
    }

    let mut steps = Vec::new();
    let mut step = |name: &'static str, f: &mut dyn FnMut() -> Result<bool>| -> Result<()> {
        println!("\n== {name} ==");
        let started = Instant::now();
        let ok = f()?;
        steps.push(Step {
            name,
            ok,
            seconds: started.elapsed().as_secs_f64(),
        });
        Ok(())
    };

    step("fmt", &mut || {
        cargo(root, &["fmt", "--all", "--", "--check"])
    })?;
    step("clippy", &mut || {
        cargo(
            root,
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--locked",
                "--",
                "-D",
                "warnings",
            ],
        )
    })?;
    step("cross-check", &mut || cross::run(root, false))?;
    let (skipped_dir, config_dir) = test_folders(root)?;
    let envs = [
        ("COCODE_SKIPPED_DIR", skipped_dir.as_os_str()),
        ("XDG_CONFIG_HOME", config_dir.as_os_str()),
    ];
    step("tests", &mut || {
        if has_nextest(root) {
            cargo_env(
                root,
                &envs,
                &[
                    "nextest",
                    "run",
                    "--workspace",
                    "--all-targets",
                    "--locked",
                    "--no-fail-fast",
                ],
            )
        } else {
            println!("test: cargo-nextest not found, using cargo test");
            cargo_env(
                root,
                &envs,
                &[
                    "test",
                    "--workspace",
                    "--all-targets",
                    "--locked",
                    "--no-fail-fast",
                ],
            )
        }
    })?;
    // The `.deb` installed into this system: only as root, where dpkg may
    // change it (CI); elsewhere said and skipped.
    if is_root() && cfg!(target_os = "linux") && have("dpkg") {
        step("package", &mut || {
            crate::install_check::run(root, &target_dir(root).join("debug/cocode"))
        })?;
    } else {
        println!("\n== package ==\ntest: skipped (installing the .deb needs root and dpkg)");
    }
    step("fuzz", &mut || crate::fuzz::run(root, FUZZ_SECONDS))?;
    step("layers", &mut || {
        Ok(crate::report("layers", &layers::run(root)?))
    })?;
    step("boundaries", &mut || {
        Ok(crate::report("boundaries", &boundaries::run(root)?))
    })?;

    println!("\n== summary ==");
    for s in &steps {
        println!(
            "{:<12} {:<6} {:>7.1}s",
            s.name,
            if s.ok { "ok" } else { "FAILED" },
            s.seconds
        );
    }
    if let Some(line) = skipped_line(&read_skips(&skipped_dir)) {
        println!("{line}");
    }
    Ok(steps.iter().all(|s| s.ok))
}

/// The target folder cargo builds into.
pub fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), Into::into)
}

/// Every skip the tests recorded, sorted.
fn read_skips(dir: &Path) -> Vec<String> {
    let mut skips: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .flat_map(|text| text.lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|l| !l.trim().is_empty())
        .collect();
    skips.sort();
    skips
}

/// "N skipped: …" for the summary, or nothing when no test skipped.
fn skipped_line(skips: &[String]) -> Option<String> {
    (!skips.is_empty()).then(|| format!("{} skipped: {}", skips.len(), skips.join("; ")))
}

fn cargo(root: &Path, args: &[&str]) -> Result<bool> {
    cargo_env(root, &[], args)
}

/// The folders the test run gets fresh: where tests that skip for a
/// missing peer record it (see tests/support/require.rs; the summary counts
/// and names them), and the tests' own configuration folder, so that what
/// they trust, save and remember never lands in the person's
/// `~/.config/cocode` and no earlier run's leftovers change a result.
fn test_folders(root: &Path) -> Result<(PathBuf, PathBuf)> {
    let skipped_dir = target_dir(root).join("skipped-peers");
    let config_dir = target_dir(root).join("test-config");
    for dir in [&skipped_dir, &config_dir] {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok((skipped_dir, config_dir))
}

fn cargo_env(root: &Path, envs: &[(&str, &std::ffi::OsStr)], args: &[&str]) -> Result<bool> {
    let status = Command::new(env_cargo())
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(root)
        .status()
        .with_context(|| format!("running cargo {}", args.join(" ")))?;
    Ok(status.success())
}

fn env_cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn has_nextest(root: &Path) -> bool {
    Command::new(env_cargo())
        .args(["nextest", "--version"])
        .current_dir(root)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

pub fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The `packages` that are not installed (all of them where `dpkg-query`
/// does not exist).
pub fn missing_packages(packages: &[&'static str]) -> Vec<&'static str> {
    packages
        .iter()
        .copied()
        .filter(|p| {
            !Command::new("dpkg-query")
                .args(["-W", "-f=${Status}", p])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        })
        .collect()
}

fn install_system_packages() {
    let missing = missing_packages(&APT_PACKAGES);
    if missing.is_empty() {
        println!("test: system packages present");
    } else {
        apt_install(&missing);
    }
    install_python_packages();
    install_npm_packages();
    install_rust_analyzer();
}

/// rust-analyzer for the real-server LSP tests: a rustup component.
fn install_rust_analyzer() {
    let works = Command::new("rust-analyzer")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return;
    }
    println!("test: installing rust-analyzer with rustup");
    let added = Command::new("rustup")
        .args(["component", "add", "rust-analyzer"])
        .status();
    if !added.is_ok_and(|s| s.success()) {
        println!("test: rustup could not add rust-analyzer");
    }
}

/// Third-party ACP agents the ACP tests drive (pinned): Gemini CLI
/// (`gemini --acp`), the ACP TypeScript SDK's example agent (run with
/// `tsx`), both Claude ACP adapters and Codex's; and the language servers
/// the real-server LSP tests drive: pyright and typescript-language-server
/// (with TypeScript 5).
const NPM_PACKAGES: [&str; 9] = [
    "@google/gemini-cli@0.61.0",
    "tsx@4.20.6",
    "@zed-industries/agent-client-protocol@0.4.5",
    "@zed-industries/claude-code-acp@0.16.2",
    "@agentclientprotocol/claude-agent-acp@0.49.0",
    "@zed-industries/codex-acp@0.16.0",
    "pyright@1.1.414",
    "typescript-language-server@5.3.0",
    "typescript@5.9.3",
];

/// The global folder npm installs packages into.
fn npm_root() -> Option<PathBuf> {
    let out = Command::new("npm").args(["root", "-g"]).output().ok()?;
    let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    root.is_dir().then_some(root)
}

/// A package spec's name (`name@version` → `name`, scopes kept).
fn package_name(spec: &str) -> &str {
    match spec.rfind('@') {
        Some(at) if at > 0 => &spec[..at],
        _ => spec,
    }
}

/// A package spec's version (`name@1.2.3` → `1.2.3`).
fn package_version(spec: &str) -> Option<&str> {
    match spec.rfind('@') {
        Some(at) if at > 0 => Some(&spec[at + 1..]),
        _ => None,
    }
}

/// Whether the installed package in `dir` is the pinned version: a peer
/// of another version on the machine (a global TypeScript 7 beside the
/// suite's 5) is replaced, not taken as present.
fn installed_at_version(dir: &Path, spec: &str) -> bool {
    let Some(manifest) = std::fs::read(dir.join("package.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return false;
    };
    let found = manifest.get("version").and_then(|v| v.as_str());
    package_version(spec).is_none_or(|wanted| found == Some(wanted))
}

fn install_npm_packages() {
    if !have("npm") {
        println!(
            "test: no npm here; the ACP agent tests need {}",
            NPM_PACKAGES.join(" ")
        );
        return;
    }
    let root = npm_root();
    let missing: Vec<&str> = NPM_PACKAGES
        .iter()
        .copied()
        .filter(|spec| {
            root.as_ref()
                .is_none_or(|r| !installed_at_version(&r.join(package_name(spec)), spec))
        })
        .collect();
    if missing.is_empty() {
        println!("test: npm packages present at their pinned versions");
    } else {
        println!("test: installing {} with npm", missing.join(" "));
        let installed = Command::new("npm")
            .args(["install", "-g", "--no-fund", "--no-audit"])
            .args(&missing)
            .status();
        if !installed.is_ok_and(|s| s.success()) {
            println!("test: npm install failed for {}", missing.join(" "));
            return;
        }
    }
    // A first run creates the agent's state folder (~/.gemini), as it would
    // on a person's machine; a confined agent may write there but cannot
    // create it.
    let _ = Command::new("gemini").arg("--version").output();
}

/// Installs the pinned `name` of [`NPM_PACKAGES`] with npm (the benches'
/// pyright), saying so when npm is missing or the install fails.
pub fn install_npm_package(name: &str) {
    let Some(spec) = NPM_PACKAGES.iter().find(|s| package_name(s) == name) else {
        println!("bench: {name} is not one of the pinned npm packages");
        return;
    };
    if !have("npm") {
        println!("bench: no npm here to install {spec}");
        return;
    }
    println!("bench: installing {spec} with npm");
    let installed = Command::new("npm")
        .args(["install", "-g", "--no-fund", "--no-audit", spec])
        .status();
    if !installed.is_ok_and(|s| s.success()) {
        println!("bench: npm install failed for {spec}");
    }
}

/// Python test peers: the verification runner's fixture runs pytest.
const PIP_PACKAGES: [&str; 1] = ["pytest"];

fn install_python_packages() {
    let present = Command::new("python3")
        .args(["-c", "import pytest"])
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return;
    }
    println!("test: installing {} with pip", PIP_PACKAGES.join(" "));
    let installed = Command::new("python3")
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
        .args(PIP_PACKAGES)
        .status();
    if !installed.is_ok_and(|s| s.success()) {
        println!("test: pip install failed for {}", PIP_PACKAGES.join(" "));
    }
}

/// Installs Debian packages when this is root with apt-get; otherwise says
/// what is missing and goes on (tests that need them say so themselves).
pub fn apt_install(packages: &[&str]) {
    if !have("apt-get") {
        println!(
            "test: no apt-get here; install yourself if tests need them: {}",
            packages.join(" ")
        );
        return;
    }
    if !is_root() {
        println!("test: not root, cannot install: {}", packages.join(" "));
        return;
    }
    println!("test: installing {}", packages.join(" "));
    let update = Command::new("apt-get").args(["update", "-qq"]).status();
    if !update.is_ok_and(|s| s.success()) {
        println!("test: apt-get update failed; trying to install from the current lists");
    }
    let installed = Command::new("apt-get")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(packages)
        .status();
    if !installed.is_ok_and(|s| s.success()) {
        println!("test: apt-get install failed for {}", packages.join(" "));
    }
}

fn ensure_rust_components() {
    for (component, probe) in [("clippy", "clippy"), ("rustfmt", "fmt")] {
        let present = Command::new(env_cargo())
            .args([probe, "--version"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !present && have("rustup") {
            println!("test: installing rustup component {component}");
            let _ = Command::new("rustup")
                .args(["component", "add", component])
                .status();
        }
    }
}

#[cfg(test)]
mod npm_tests {
    #[test]
    #[expect(clippy::disallowed_methods, reason = "the test lays out a package")]
    fn a_peer_of_another_version_is_not_present() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("package.json"),
            r#"{"name": "typescript", "version": "7.0.2"}"#,
        )
        .unwrap();
        assert!(!super::installed_at_version(dir.path(), "typescript@5.9.3"));
        assert!(super::installed_at_version(dir.path(), "typescript@7.0.2"));
        assert!(super::installed_at_version(dir.path(), "typescript"));
        assert!(!super::installed_at_version(
            &dir.path().join("none"),
            "typescript@5.9.3"
        ));
        assert_eq!(super::package_version("@scope/x@1.2.3"), Some("1.2.3"));
    }

    #[test]
    fn package_names_drop_the_version_and_keep_the_scope() {
        assert_eq!(super::package_name("tsx@4.20.6"), "tsx");
        assert_eq!(
            super::package_name("@zed-industries/claude-code-acp@0.16.2"),
            "@zed-industries/claude-code-acp"
        );
        assert_eq!(
            super::package_name("@google/gemini-cli"),
            "@google/gemini-cli"
        );
    }
}

#[cfg(test)]
mod skip_tests {
    use pretty_assertions::assert_eq;

    #[test]
    fn recorded_skips_are_counted_and_named_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(super::skipped_line(&super::read_skips(dir.path())), None);
        #[expect(clippy::disallowed_methods, reason = "the test plants skip files")]
        {
            std::fs::write(
                dir.path().join("7-0"),
                "suite::verify::pytest_case: pytest\n",
            )
            .unwrap();
            std::fs::write(dir.path().join("9-0"), "headless: npm\n").unwrap();
        }
        assert_eq!(
            super::skipped_line(&super::read_skips(dir.path())),
            Some("2 skipped: headless: npm; suite::verify::pytest_case: pytest".to_owned())
        );
    }
}
