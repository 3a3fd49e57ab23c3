//! The `.deb` installed for real: `cargo xtask test` (as root, with dpkg)
//! builds the package around the suite's own build of the app, installs it
//! with `dpkg -i`, checks the installed desktop entry, starts the app from
//! that entry under a virtual X server and sees its window, runs `cocode
//! --version`, purges the package and checks that no file it brought is
//! left on the system.
//!
//! The package holds the test profile's binary, not a release build: the
//! packaging, install, launch and removal are what is checked, and a release
//! build would add a quarter of an hour to every cold run. `cargo xtask
//! dist` packages the release binary the same way.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

/// Where a package's files land; listed before and after to see that
/// nothing is left.
const SYSTEM_FOLDERS: [&str; 6] = ["/usr", "/etc", "/opt", "/var/lib/dpkg/info", "/bin", "/lib"];

/// Runs the check with `binary` (the app the suite built); false when a
/// part of it failed (each failure is printed).
pub fn run(root: &Path, binary: &Path) -> Result<bool> {
    for program in [
        "dpkg",
        "dpkg-deb",
        "desktop-file-validate",
        "gio",
        "Xvfb",
        "xwininfo",
    ] {
        if !crate::suite::have(program) {
            bail!("package: {program} is missing (the suite installs it with apt as root)");
        }
    }
    if !binary.is_file() {
        bail!("package: {} was not built", binary.display());
    }
    // A cocode the person installed is theirs: the check would purge it.
    let present = Command::new("dpkg")
        .args(["-s", "cocode"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    if present.success() {
        println!("package: skipped: a cocode package is installed here already");
        return Ok(true);
    }
    let work = tempfile::tempdir()?;
    let version = crate::dist::version(root)?;
    let deb = crate::dist::deb(root, binary, work.path(), &version)?;
    let before = system_files();
    let mut failures = Vec::new();
    let installed = Command::new("dpkg")
        .arg("-i")
        .arg(&deb)
        .output()
        .context("dpkg -i")?;
    if installed.status.success() {
        check_installed(&version, work.path(), &mut failures)?;
    } else {
        failures.push(format!(
            "dpkg -i failed: {}",
            String::from_utf8_lossy(&installed.stderr)
        ));
    }
    let purged = Command::new("dpkg")
        .args(["--purge", "cocode"])
        .output()
        .context("dpkg --purge")?;
    if !purged.status.success() {
        failures.push(format!(
            "dpkg --purge failed: {}",
            String::from_utf8_lossy(&purged.stderr)
        ));
    }
    let after = system_files();
    let left: Vec<&PathBuf> = after.difference(&before).collect();
    let gone: Vec<&PathBuf> = before.difference(&after).collect();
    if !left.is_empty() || !gone.is_empty() {
        failures.push(format!(
            "the system differs after the purge: left {left:?}, gone {gone:?}"
        ));
    }
    for failure in &failures {
        println!("package: {failure}");
    }
    if failures.is_empty() {
        println!(
            "package: {} installed, validated, launched from its desktop entry, ran --version and was purged without a trace",
            deb.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    Ok(failures.is_empty())
}

/// The checks on the installed package.
fn check_installed(version: &str, work: &Path, failures: &mut Vec<String>) -> Result<()> {
    let entry = Path::new("/usr/share/applications/cocode.desktop");
    let validated = Command::new("desktop-file-validate").arg(entry).output()?;
    if !validated.status.success() || !validated.stdout.is_empty() {
        failures.push(format!(
            "desktop-file-validate: {}{}",
            String::from_utf8_lossy(&validated.stdout),
            String::from_utf8_lossy(&validated.stderr)
        ));
    }
    let ran = Command::new("/usr/bin/cocode").arg("--version").output()?;
    let said = String::from_utf8_lossy(&ran.stdout);
    if said != format!("cocode {version}\n") {
        failures.push(format!("cocode --version said {said:?}"));
    }
    if let Err(e) = launch_from_entry(entry, work) {
        failures.push(format!("{e:#}"));
    }
    Ok(())
}

/// Starts the app with `gio launch` on its entry under a private Xvfb and
/// waits (at most two minutes) for a window named `cocode`; then ends it.
fn launch_from_entry(entry: &Path, work: &Path) -> Result<()> {
    let display = free_display()?;
    let xvfb = Stopped::start_xvfb(&display, "1280x800")?;
    let home = work.join("home");
    std::fs::create_dir_all(&home)?;
    // The app inherits gio's output: a file, not a pipe read to its end.
    let log = work.join("app.log");
    let launched = Command::new("gio")
        .arg("launch")
        .arg(entry)
        .env("DISPLAY", &display)
        .env("HOME", &home)
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log)?)
        .status()
        .context("gio launch")?;
    let seen = launched.success()
        && wait_for(Duration::from_mins(2), || {
            Command::new("xwininfo")
                .args(["-root", "-tree"])
                .env("DISPLAY", &display)
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("\"cocode\""))
        });
    end_installed_app();
    drop(xvfb);
    if !seen {
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = said.lines().rev().take(20).collect();
        bail!(
            "no window named cocode appeared on {display} within two minutes of gio launch ({}); its output:\n{}",
            if launched.success() {
                "launched"
            } else {
                "gio failed"
            },
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    Ok(())
}

/// A display no other X server holds (no lock file), as `:N`.
pub(crate) fn free_display() -> Result<String> {
    (90..400)
        .map(|n| n + std::process::id() % 100)
        .find(|n| !Path::new(&format!("/tmp/.X{n}-lock")).exists())
        .map(|n| format!(":{n}"))
        .context("no free X display number")
}

/// Whether `done` turns true within `limit` (asked every half second).
pub(crate) fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    false
}

/// Ends every process running the installed program (the one `gio`
/// started): asked to stop, then killed.
fn end_installed_app() {
    for signal in ["-TERM", "-KILL"] {
        let pids: Vec<String> = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                std::fs::read_link(e.path().join("exe"))
                    .is_ok_and(|exe| exe == Path::new("/usr/bin/cocode"))
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if pids.is_empty() {
            return;
        }
        let _ = Command::new("kill").arg(signal).args(&pids).status();
        std::thread::sleep(Duration::from_secs(2));
    }
}

/// A child asked to stop when dropped (the X server on every way out),
/// so it removes its lock file; killed if it has not ended in 5 s.
pub(crate) struct Stopped(pub(crate) Child);

impl Stopped {
    /// A private Xvfb on `display` with a screen of `size` (`1280x800`),
    /// once it answers (the app must find the server answering: started
    /// too early, it fails to open its window and ends).
    pub(crate) fn start_xvfb(display: &str, size: &str) -> Result<Self> {
        let screen = format!("{size}x24");
        let xvfb = Self(
            Command::new("Xvfb")
                .args([display, "-screen", "0", &screen, "-nolisten", "tcp"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .context("starting Xvfb")?,
        );
        if !wait_for(Duration::from_secs(30), || {
            Command::new("xwininfo")
                .arg("-root")
                .env("DISPLAY", display)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        }) {
            bail!("Xvfb did not answer on {display} within 30 s");
        }
        Ok(xvfb)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        if !wait_for(Duration::from_secs(5), || {
            self.0.try_wait().is_ok_and(|s| s.is_some())
        }) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Every file and folder under [`SYSTEM_FOLDERS`] (links not followed).
fn system_files() -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack: Vec<PathBuf> = SYSTEM_FOLDERS.iter().map(PathBuf::from).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path.clone());
            }
            out.insert(path);
        }
    }
    out
}
