//! `cargo xtask windows-check`: the Windows build runs, not only compiles.
//!
//! Cross-builds `cocode.exe` and its release zip (`dist`'s build), installs
//! Wine when missing, and under a private Wine prefix and a private Xvfb
//! does what a first user does: unpacks the zip, asks the version, lists
//! the tools, stores and removes a key in the credential store, runs a
//! local-agent task that edits a file (verified by a command) and one that
//! runs a command writing a file, shows a task, rolls both back (checked
//! byte for byte from Linux), asks `doctor`, and opens the window until it
//! shows, with a screenshot. Wine is not Windows, but it runs the Windows
//! code paths: the GUI subsystem's console attach, `MoveFileExW` replaces,
//! the launcher's processes through `cmd.exe`, the credential manager,
//! drive-letter paths.
//!
//! Every step's output is kept in `<target>/windows-check/` (`NN-step.out`
//! and `.err`); a failure names its step and stops the check.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};

use crate::install_check::{Stopped, free_display, wait_for};

/// Debian packages the check needs (Wine runs the 64-bit program alone).
const PACKAGES: [&str; 7] = [
    "wine",
    "wine64",
    "xvfb",
    "xauth",
    "x11-utils",
    "xdotool",
    "imagemagick",
];

/// How long one program run under Wine may take (the first run in a fresh
/// prefix starts Wine's own services too).
const STEP_LIMIT: Duration = Duration::from_mins(3);

/// The notes file the edit task changes, in Windows line endings.
const NOTES: &[u8] = b"first line\r\na draft of the notes\r\n";
const NOTES_EDITED: &[u8] = b"first line\r\na final of the notes\r\n";

/// The workspace's settings: verification runs `find`, which fails when
/// the notes do not say "final". (Wine's `find` takes the string unquoted,
/// Windows' own wants it in quotes; Wine's `findstr` finds everything —
/// docs/decisions.md.)
const WORKSPACE_JSON: &str =
    r#"{"version": 1, "verification": {"tests": ["find", "final", "notes.txt"]}}"#;

/// What one program run under Wine did.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn said(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code
                .map_or_else(|| "none (stopped)".to_owned(), |c| c.to_string()),
            self.stdout,
            self.stderr
        )
    }
}

/// The check's state: its folder, the prefix, the display, and each
/// step's name and time.
struct Check {
    dir: PathBuf,
    prefix: PathBuf,
    display: String,
    runs: usize,
    times: Vec<(String, Duration)>,
    /// Steps skipped because of Wine, each with the reason.
    skipped: Vec<String>,
    /// The window, once open (ended with the check).
    app: Option<Stopped>,
}

impl Check {
    /// `cocode.exe` unpacked from the zip, as Linux sees it.
    fn exe(&self) -> PathBuf {
        self.prefix.join("drive_c/Program Files/cocode/cocode.exe")
    }

    /// The workspace, as Linux sees it (`C:\ws` in Wine).
    fn workspace(&self) -> PathBuf {
        self.prefix.join("drive_c/ws")
    }

    fn wine_env(&self, command: &mut Command) {
        command
            .env("WINEPREFIX", &self.prefix)
            .env("WINEARCH", "win64")
            // No Mono or Gecko installer dialogs in a fresh prefix.
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
            .env(
                "WINEDEBUG",
                std::env::var("WINEDEBUG").unwrap_or_else(|_| "-all".to_owned()),
            )
            .env("DISPLAY", &self.display)
            .env_remove("WAYLAND_DISPLAY");
    }

    /// Runs `program args` under Wine, its output kept as
    /// `NN-name.out`/`.err` (files, not pipes: Wine's server outlives the
    /// program and would hold a pipe open).
    fn wine(&mut self, name: &str, args: &[&str], stdin: Option<&str>) -> Result<Ran> {
        self.runs += 1;
        let stem = format!("{:02}-{}", self.runs, name.replace(' ', "-"));
        let out = self.dir.join(format!("{stem}.out"));
        let err = self.dir.join(format!("{stem}.err"));
        let mut command = Command::new("wine");
        command
            .arg(self.exe())
            .args(args)
            .stdout(std::fs::File::create(&out)?)
            .stderr(std::fs::File::create(&err)?)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            });
        self.wine_env(&mut command);
        let mut child = command.spawn().context("starting wine")?;
        if let Some(text) = stdin {
            use std::io::Write as _;
            let mut pipe = child.stdin.take().context("the program's input")?;
            pipe.write_all(text.as_bytes())?;
        }
        let code = wait_with_limit(&mut child, STEP_LIMIT)?;
        Ok(Ran {
            code,
            stdout: std::fs::read_to_string(&out)?,
            stderr: std::fs::read_to_string(&err)?,
        })
    }

    /// Runs a step, timing it; an error names it.
    fn step(&mut self, name: &str, f: impl FnOnce(&mut Self) -> Result<String>) -> Result<()> {
        let started = Instant::now();
        println!("windows-check: {name} …");
        let said = f(self).with_context(|| format!("step `{name}` failed"))?;
        let took = started.elapsed();
        let outcome = if said.starts_with("skipped") {
            ""
        } else {
            "ok in "
        };
        println!(
            "windows-check: {name}: {outcome}{:.1} s — {said}",
            took.as_secs_f64()
        );
        self.times.push((name.to_owned(), took));
        Ok(())
    }
}

/// Waits for `child` at most `limit`; its exit code (`None` when it had
/// to be killed or ended by a signal).
fn wait_with_limit(child: &mut Child, limit: Duration) -> Result<Option<i32>> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status.code());
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Wine's server for the prefix, ended (with every program of the prefix)
/// on every way out.
struct WineServer {
    prefix: PathBuf,
}

impl Drop for WineServer {
    fn drop(&mut self) {
        let _ = Command::new("wineserver")
            .arg("-k")
            .env("WINEPREFIX", &self.prefix)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// The task id `task run` prints first (`task ID created`).
fn created_task(ran: &Ran) -> Result<String> {
    ran.stdout
        .lines()
        .find_map(|l| l.strip_prefix("task ")?.strip_suffix(" created"))
        .map(str::to_owned)
        .with_context(|| format!("no `task … created` line:\n{}", ran.said()))
}

fn expect_code(ran: &Ran, code: i32) -> Result<()> {
    ensure!(
        ran.code == Some(code),
        "expected exit {code}:\n{}",
        ran.said()
    );
    Ok(())
}

fn expect_line(ran: &Ran, line: &str) -> Result<()> {
    ensure!(
        ran.stdout.lines().any(|l| l.trim_end() == line),
        "expected the line {line:?}:\n{}",
        ran.said()
    );
    Ok(())
}

pub fn run(root: &Path, quick: bool, install: bool) -> Result<bool> {
    let started = Instant::now();
    let target = crate::suite::target_dir(root);
    let dir = target.join("windows-check");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let version = crate::dist::version(root)?;
    let out = target.join("dist");
    std::fs::create_dir_all(&out)?;
    let profile = if quick { "dist-check" } else { "release" };
    if install {
        crate::cross::install_windows(root);
        let missing = crate::suite::missing_packages(&PACKAGES);
        if !missing.is_empty() {
            crate::suite::apt_install(&missing);
        }
    }
    println!("windows-check: building cocode.exe ({profile}) and its zip");
    let built_at = Instant::now();
    let built = crate::dist::windows(root, profile, &out, &version)?;
    ensure!(
        built.problems.is_empty(),
        "step `build` failed: {}",
        built.problems.join("; ")
    );
    let build_time = built_at.elapsed();
    for program in [
        "wine",
        "wineserver",
        "Xvfb",
        "xwininfo",
        "xdotool",
        "import",
        "python3",
        "x86_64-w64-mingw32-gcc",
    ] {
        ensure!(
            crate::suite::have(program),
            "step `tools` failed: {program} is missing (install: {} gcc-mingw-w64-x86-64)",
            PACKAGES.join(" ")
        );
    }
    let display = free_display()?;
    // Taller than the window: Wine without a window manager puts it below
    // the screen's top edge, and the status bar must show.
    let xvfb = Stopped::start_xvfb(&display, "1280x900")?;
    let mut check = Check {
        prefix: dir.join("prefix"),
        dir,
        display,
        runs: 0,
        times: vec![("build".to_owned(), build_time)],
        skipped: Vec::new(),
        app: None,
    };
    let server = WineServer {
        prefix: check.prefix.clone(),
    };
    let result = steps(&mut check, &built, &version);
    drop(check.app.take());
    drop(server);
    drop(xvfb);
    if let Err(e) = result {
        println!("windows-check: {e:#}");
        println!(
            "windows-check: every step's output is in {}",
            check.dir.display()
        );
        return Ok(false);
    }
    println!(
        "windows-check: passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    for (name, took) in &check.times {
        println!("  {name:<22} {:>6.1} s", took.as_secs_f64());
    }
    for skipped in &check.skipped {
        println!("windows-check: skipped {skipped}");
    }
    println!(
        "windows-check: the window's screenshots: {}",
        check.dir.join("window*.png").display()
    );
    Ok(true)
}

fn steps(check: &mut Check, built: &crate::dist::WindowsDist, version: &str) -> Result<()> {
    check.step("prefix", |c| {
        let mut command = Command::new("wineboot");
        command
            .arg("--init")
            .stdout(std::fs::File::create(c.dir.join("00-wineboot.out"))?)
            .stderr(std::fs::File::create(c.dir.join("00-wineboot.err"))?);
        c.wine_env(&mut command);
        let mut child = command.spawn().context("starting wineboot")?;
        let code = wait_with_limit(&mut child, STEP_LIMIT)?;
        ensure!(code == Some(0), "wineboot --init ended with {code:?}");
        ensure!(
            c.prefix.join("drive_c/windows/system32").is_dir(),
            "the prefix has no system32 folder"
        );
        let filled = fill_wine_gaps(c)?;
        Ok(format!("a fresh prefix in {}{filled}", c.prefix.display()))
    })?;
    check.step("zip", |c| unpack(c, built))?;
    check.step("version", |c| {
        let ran = c.wine("version", &["--version"], None)?;
        expect_code(&ran, 0)?;
        expect_line(&ran, &format!("cocode {version}"))?;
        Ok(format!(
            "printed `cocode {version}` through the attached console"
        ))
    })?;
    check.step("tools list", tools_list)?;
    check.step("credential store", credential_store)?;
    check.step("workspace", |c| {
        let ws = c.workspace();
        std::fs::create_dir_all(ws.join(".cocode/config"))?;
        std::fs::create_dir_all(ws.join("out"))?;
        std::fs::write(ws.join("notes.txt"), NOTES)?;
        std::fs::write(ws.join(".cocode/config/workspace.json"), WORKSPACE_JSON)?;
        let ran = c.wine(
            "verify-trust",
            &["verify", "--workspace", r"C:\ws", "--trust"],
            None,
        )?;
        // The notes say "draft" yet: findstr finds nothing, the check fails.
        expect_code(&ran, 1)?;
        expect_line(&ran, r"trusted in C:\ws: tests: find final notes.txt")?;
        Ok("C:\\ws made; its verification command trusted".to_owned())
    })?;
    let edit = tasks(check)?;
    check.step("task show", |c| {
        let ran = c.wine(
            "task-show",
            &["task", "show", &edit, "--workspace", r"C:\ws"],
            None,
        )?;
        expect_code(&ran, 0)?;
        expect_line(&ran, "  status:   rolled back: its changes were undone")?;
        expect_line(
            &ran,
            "    1. modified notes.txt · attempt 1 · recorded before the change",
        )?;
        expect_line(
            &ran,
            "    2. modified notes.txt · attempt 1 · rolled back by a person",
        )?;
        Ok("rolled back, its edit and its rollback listed".to_owned())
    })?;
    check.step("doctor", |c| {
        let ran = c.wine("doctor", &["doctor", "--workspace", r"C:\ws"], None)?;
        expect_code(&ran, 0)?;
        expect_line(
            &ran,
            "confinement: none — Windows offers no confinement cocode can apply; agent commands run with the person's rights, limited only by the policy proxy",
        )?;
        expect_line(&ran, "policy proxy: self-test passed")?;
        let lacks: Vec<&str> = ran
            .stdout
            .lines()
            .filter(|l| l.contains(": not active"))
            .filter_map(|l| l.split(':').next())
            .collect();
        ensure!(
            !lacks.is_empty(),
            "doctor does not name the protections Windows lacks:\n{}",
            ran.said()
        );
        Ok(format!("no confinement; not active: {}", lacks.join("; ")))
    })?;
    check.step("window", window)?;
    check.step("editor", editor)?;
    check.step("terminal", terminal)
}

/// `bcryptprimitives.dll` as Windows 10 and later have it: `ProcessPrng`,
/// which the Rust standard library imports for its random numbers, over
/// `BCryptGenRandom` (which Wine has).
const PROCESS_PRNG_SHIM: &str = r"#include <windows.h>
#include <bcrypt.h>
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
";

/// Supplies what every Windows 10 has and this Wine lacks; what it did,
/// for the step's line. Wine 8.0 has no `bcryptprimitives.dll`, so no
/// program built by Rust 1.78 or later starts under it (a hello-world
/// shows it: docs/decisions.md); a shim built with MinGW goes into the
/// prefix's `system32`, never into the zip.
fn fill_wine_gaps(c: &Check) -> Result<String> {
    let system32 = c.prefix.join("drive_c/windows/system32");
    let dll = system32.join("bcryptprimitives.dll");
    if dll.exists() {
        return Ok(String::new());
    }
    let source = c.dir.join("bcryptprimitives-shim.c");
    std::fs::write(&source, PROCESS_PRNG_SHIM)?;
    let built = Command::new("x86_64-w64-mingw32-gcc")
        .args(["-shared", "-O2", "-s", "-o"])
        .arg(&dll)
        .arg(&source)
        .arg("-lbcrypt")
        .output()
        .context("x86_64-w64-mingw32-gcc (install gcc-mingw-w64-x86-64)")?;
    ensure!(
        built.status.success(),
        "the bcryptprimitives.dll shim did not build: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    Ok("; this Wine lacks bcryptprimitives.dll (Windows 10 has it): a ProcessPrng shim put in system32".to_owned())
}

/// Unpacks the release zip into `C:\Program Files\cocode` and checks its
/// layout and that every library the program loads is Windows' own.
fn unpack(c: &mut Check, built: &crate::dist::WindowsDist) -> Result<String> {
    let into = c.exe().parent().context("a folder")?.to_path_buf();
    std::fs::create_dir_all(&into)?;
    let listed = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\n\
             print('\\n'.join(z.namelist()))\nz.extractall(sys.argv[2])",
        ])
        .arg(&built.zip)
        .arg(&into)
        .output()
        .context("python3")?;
    ensure!(listed.status.success(), "python3 could not unpack the zip");
    let names = String::from_utf8_lossy(&listed.stdout);
    ensure!(
        names.lines().collect::<Vec<_>>() == ["cocode.exe"],
        "the zip holds {names:?}, not cocode.exe alone"
    );
    ensure!(
        std::fs::read(c.exe())? == std::fs::read(&built.exe)?,
        "the unpacked program differs from the built one"
    );
    let system32 = c.prefix.join("drive_c/windows/system32");
    let present: Vec<String> = std::fs::read_dir(&system32)?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_ascii_lowercase())
        .collect();
    let foreign: Vec<&String> = built
        .imports
        .iter()
        .filter(|dll| !dll.starts_with("api-ms-win-") && !present.contains(dll))
        .collect();
    ensure!(
        foreign.is_empty(),
        "cocode.exe loads libraries Windows does not have and the zip does not carry: {foreign:?}"
    );
    Ok(format!(
        "cocode.exe alone, loading only system libraries ({})",
        built.imports.join(", ")
    ))
}

/// The catalog as JSON, with the file and terminal tools in it.
fn tools_list(c: &mut Check) -> Result<String> {
    let ran = c.wine("tools-list", &["tools", "list"], None)?;
    expect_code(&ran, 0)?;
    let tools: serde_json::Value =
        serde_json::from_str(&ran.stdout).with_context(|| format!("not JSON:\n{}", ran.said()))?;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .or_else(|| tools.as_array())
        .context("no tool list")?
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    ensure!(
        names.contains(&"workspace.readFile") && names.contains(&"terminal.run"),
        "the catalog lacks workspace.readFile or terminal.run: {names:?}"
    );
    Ok(format!("{} tools", names.len()))
}

/// Stores a key, sees it listed as stored, removes it.
fn credential_store(c: &mut Check) -> Result<String> {
    let stored = |c: &mut Check, name: &str| -> Result<String> {
        let ran = c.wine(name, &["provider", "list"], None)?;
        expect_code(&ran, 0)?;
        ran.stdout
            .lines()
            .find_map(|l| l.strip_prefix("openai\t")?.split('\t').nth(1))
            .map(str::to_owned)
            .with_context(|| format!("no openai line:\n{}", ran.said()))
    };
    let before = stored(c, "provider-list")?;
    let ran = c.wine(
        "set-key",
        &["provider", "set-key", "openai"],
        Some("sk-windows-check-0000\n"),
    )?;
    expect_code(&ran, 0)?;
    let with_key = stored(c, "provider-list-stored")?;
    let ran = c.wine("delete-key", &["provider", "delete-key", "openai"], None)?;
    expect_code(&ran, 0)?;
    let after = stored(c, "provider-list-removed")?;
    ensure!(
        [before.as_str(), with_key.as_str(), after.as_str()]
            == ["no key stored", "key stored", "no key stored"],
        "the key's state did not follow: before {before:?}, stored {with_key:?}, removed {after:?}"
    );
    Ok(format!("openai: {before} → {with_key} → {after}"))
}

/// The edit task and the command task, then both rolled back; the edit
/// task's id.
fn tasks(check: &mut Check) -> Result<String> {
    let mut edit = String::new();
    check.step("task edit", |c| {
        let ran = c.wine(
            "task-edit",
            &[
                "task",
                "run",
                "--workspace",
                r"C:\ws",
                "--prompt",
                r#"replace "draft" with "final" in notes.txt"#,
                "--completion-mode",
                "self_verification",
                "--yes",
            ],
            None,
        )?;
        expect_code(&ran, 0)?;
        edit = created_task(&ran)?;
        expect_line(
            &ran,
            &format!("task {edit}: completed: verification passed"),
        )?;
        let now = std::fs::read(c.workspace().join("notes.txt"))?;
        ensure!(
            now == NOTES_EDITED,
            "notes.txt reads {:?}",
            String::from_utf8_lossy(&now)
        );
        Ok(format!("{edit}: notes.txt edited, `find` verified it"))
    })?;
    let mut command = String::new();
    check.step("task command", |c| {
        let ran = c.wine(
            "task-command",
            &[
                "task",
                "run",
                "--workspace",
                r"C:\ws",
                "--prompt",
                r#"run "echo ran by cmd> out\\log.txt""#,
                "--yes",
            ],
            None,
        )?;
        expect_code(&ran, 0)?;
        command = created_task(&ran)?;
        let log = std::fs::read(c.workspace().join("out/log.txt"))
            .with_context(|| format!("no out\\log.txt:\n{}", ran.said()))?;
        ensure!(
            log == b"ran by cmd\r\n",
            "out\\log.txt reads {:?}",
            String::from_utf8_lossy(&log)
        );
        Ok(format!("{command}: cmd.exe wrote out\\log.txt"))
    })?;
    check.step("rollback", |c| rollback(c, &edit, &command))?;
    Ok(edit)
}

/// Rolls back the command task (its write named first), then the edit
/// task; both checked from Linux.
fn rollback(c: &mut Check, edit: &str, command: &str) -> Result<String> {
    // Unconfined on Windows, a command's writes cannot be told from
    // someone else's: the rollback names them and wants `--yes`.
    let ran = c.wine(
        "rollback-command-asks",
        &["rollback", "--workspace", r"C:\ws", "--task", command],
        None,
    )?;
    expect_code(&ran, 1)?;
    expect_line(&ran, "  out/log.txt")?;
    ensure!(
        c.workspace().join("out/log.txt").exists(),
        "the refused rollback removed out\\log.txt"
    );
    let ran = c.wine(
        "rollback-command",
        &[
            "rollback",
            "--workspace",
            r"C:\ws",
            "--task",
            command,
            "--yes",
        ],
        None,
    )?;
    expect_code(&ran, 0)?;
    ensure!(
        !c.workspace().join("out/log.txt").exists(),
        "out\\log.txt is still there:\n{}",
        ran.said()
    );
    let ran = c.wine(
        "rollback-edit",
        &["rollback", "--workspace", r"C:\ws", "--task", edit],
        None,
    )?;
    expect_code(&ran, 0)?;
    let now = std::fs::read(c.workspace().join("notes.txt"))?;
    ensure!(
        now == NOTES,
        "notes.txt is not as it was: {:?}",
        String::from_utf8_lossy(&now)
    );
    Ok("out\\log.txt named, then removed with --yes; notes.txt byte for byte as before".to_owned())
}

/// Opens the window on the workspace until a window named cocode shows,
/// then takes a screenshot of the screen; the window stays open.
fn window(c: &mut Check) -> Result<String> {
    let out = c.dir.join("window.out");
    let err = c.dir.join("window.err");
    let mut command = Command::new("wine");
    command
        .arg(c.exe())
        .args(["open", r"C:\ws"])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out)?)
        .stderr(std::fs::File::create(&err)?);
    c.wine_env(&mut command);
    c.app = Some(Stopped(command.spawn().context("starting wine")?));
    let display = c.display.clone();
    let seen = wait_for(Duration::from_mins(2), || window_id(&display).is_some());
    if !seen {
        bail!(
            "no window named cocode within two minutes; its output:\n{}",
            std::fs::read_to_string(&err).unwrap_or_default()
        );
    }
    // The first frames: fonts load and the workspace's tree is listed.
    std::thread::sleep(Duration::from_secs(8));
    let shot = screenshot(c, "window.png")?;
    Ok(format!(
        "a window named cocode; screenshot {}",
        shot.display()
    ))
}

/// The X window id of the window named cocode, if one shows.
fn window_id(display: &str) -> Option<String> {
    let out = Command::new("xdotool")
        .args(["search", "--name", "^cocode"])
        .env("DISPLAY", display)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .map(str::to_owned)
}

fn screenshot(c: &Check, name: &str) -> Result<PathBuf> {
    let shot = c.dir.join(name);
    let taken = Command::new("import")
        .args(["-window", "root"])
        .arg(&shot)
        .env("DISPLAY", &c.display)
        .status()
        .context("import (imagemagick)")?;
    ensure!(taken.success() && shot.is_file(), "no screenshot was taken");
    Ok(shot)
}

/// `xdotool ARGS` on the check's display; whether it worked.
fn xdotool(c: &Check, args: &[&str]) -> Result<()> {
    let done = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", &c.display)
        .status()
        .context("xdotool")?;
    ensure!(done.success(), "xdotool {} failed", args.join(" "));
    Ok(())
}

/// Focuses the window and types as a person: Ctrl+P, the file's name,
/// Enter, Ctrl+End, a line, Ctrl+S; the saved file is checked from Linux.
fn editor(c: &mut Check) -> Result<String> {
    let id = window_id(&c.display).context("the window is gone")?;
    xdotool(c, &["windowfocus", "--sync", &id])?;
    xdotool(c, &["key", "ctrl+p"])?;
    std::thread::sleep(Duration::from_secs(1));
    xdotool(c, &["type", "--delay", "50", "notes.txt"])?;
    std::thread::sleep(Duration::from_secs(1));
    xdotool(c, &["key", "Return"])?;
    std::thread::sleep(Duration::from_secs(2));
    xdotool(c, &["key", "ctrl+End"])?;
    xdotool(c, &["type", "--delay", "50", "typed under Wine"])?;
    xdotool(c, &["key", "ctrl+s"])?;
    let file = c.workspace().join("notes.txt");
    let mut want = NOTES.to_vec();
    want.extend_from_slice(b"typed under Wine");
    let saved = wait_for(Duration::from_secs(20), || {
        std::fs::read(&file).is_ok_and(|now| now == want)
    });
    // The frame that shows the save.
    std::thread::sleep(Duration::from_secs(2));
    let shot = screenshot(c, "window-editor.png")?;
    ensure!(
        saved,
        "notes.txt was not saved with the typed words: {:?} (screenshot {})",
        String::from_utf8_lossy(&std::fs::read(&file)?),
        shot.display()
    );
    Ok(format!(
        "Ctrl+P opened notes.txt, the typed line was saved with Ctrl+S; screenshot {}",
        shot.display()
    ))
}

/// Whether a pseudo console reaches the program started on it: the
/// documented sequence (`CreatePseudoConsole`, then `CreateProcessW` with
/// the pseudo-console attribute) runs `cmd.exe /d /c echo conpty-probe`,
/// and the probe reads the console's output pipe for it. Exit 0 when it
/// arrives, 1 when not.
const CONPTY_PROBE: &str = r#"#include <windows.h>
#include <stdio.h>
#include <string.h>
typedef void *HPCON;
HRESULT WINAPI CreatePseudoConsole(COORD, HANDLE, HANDLE, DWORD, HPCON *);
#define PSEUDOCONSOLE_ATTRIBUTE 0x00020016
int main(void) {
    HANDLE in_read, in_write, out_read, out_write;
    CreatePipe(&in_read, &in_write, NULL, 0);
    CreatePipe(&out_read, &out_write, NULL, 0);
    HPCON console;
    COORD size = {80, 24};
    HRESULT made = CreatePseudoConsole(size, in_read, out_write, 0, &console);
    printf("CreatePseudoConsole: 0x%lx\n", (unsigned long)made);
    SIZE_T bytes = 0;
    InitializeProcThreadAttributeList(NULL, 1, 0, &bytes);
    LPPROC_THREAD_ATTRIBUTE_LIST list = HeapAlloc(GetProcessHeap(), 0, bytes);
    InitializeProcThreadAttributeList(list, 1, 0, &bytes);
    UpdateProcThreadAttribute(list, 0, PSEUDOCONSOLE_ATTRIBUTE, console, sizeof(console), NULL, NULL);
    STARTUPINFOEXW info;
    ZeroMemory(&info, sizeof(info));
    info.StartupInfo.cb = sizeof(info);
    info.lpAttributeList = list;
    PROCESS_INFORMATION process;
    wchar_t line[] = L"cmd.exe /d /c echo conpty-probe";
    BOOL started = CreateProcessW(NULL, line, NULL, NULL, FALSE, EXTENDED_STARTUPINFO_PRESENT,
                                  NULL, NULL, &info.StartupInfo, &process);
    printf("CreateProcessW: %d\n", started);
    CloseHandle(in_read);
    CloseHandle(out_write);
    char seen[8192] = {0};
    DWORD total = 0;
    for (int i = 0; i < 50 && !strstr(seen, "conpty-probe"); i++) {
        DWORD ready = 0, n = 0;
        if (PeekNamedPipe(out_read, NULL, 0, NULL, &ready, NULL) && ready > 0
            && ReadFile(out_read, seen + total, sizeof(seen) - 1 - total, &n, NULL)) {
            total += n;
        } else {
            Sleep(100);
        }
    }
    int reached = strstr(seen, "conpty-probe") != NULL;
    for (DWORD i = 0; i < total; i++) {
        if ((unsigned char)seen[i] < 0x20) seen[i] = '.';
    }
    printf("%s: the pseudo console's output was %lu bytes: %s\n",
           reached ? "reached" : "not reached", (unsigned long)total, seen);
    return reached ? 0 : 1;
}
"#;

/// Opens a terminal (Ctrl+\`) and types a command that writes a file; the
/// file is checked from Linux. Skipped, with the probe's words, where
/// Wine's pseudo consoles do not reach the programs started on them.
fn terminal(c: &mut Check) -> Result<String> {
    let source = c.dir.join("conpty-probe.c");
    let probe = c.dir.join("conpty-probe.exe");
    std::fs::write(&source, CONPTY_PROBE)?;
    let built = Command::new("x86_64-w64-mingw32-gcc")
        .args(["-O2", "-o"])
        .arg(&probe)
        .arg(&source)
        .output()
        .context("x86_64-w64-mingw32-gcc")?;
    ensure!(
        built.status.success(),
        "the pseudo-console probe did not build: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let mut command = Command::new("wine");
    command
        .arg(&probe)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(c.dir.join("conpty-probe.out"))?)
        .stderr(Stdio::null());
    c.wine_env(&mut command);
    let code = wait_with_limit(&mut command.spawn()?, Duration::from_secs(30))?;
    if code != Some(0) {
        let said = std::fs::read_to_string(c.dir.join("conpty-probe.out"))?;
        let reason = format!(
            "terminal: this Wine's pseudo consoles do not reach the program started on them (conpty-probe.exe said: {}); docs/decisions.md",
            said.lines().last().unwrap_or("no output").trim()
        );
        c.skipped.push(reason.clone());
        return Ok(format!("skipped after the probe — {reason}"));
    }
    let id = window_id(&c.display).context("the window is gone")?;
    xdotool(c, &["windowfocus", "--sync", &id])?;
    xdotool(c, &["key", "ctrl+grave"])?;
    std::thread::sleep(Duration::from_secs(5));
    xdotool(
        c,
        &[
            "type",
            "--delay",
            "50",
            r"echo typed in the terminal> out\term.txt",
        ],
    )?;
    xdotool(c, &["key", "Return"])?;
    let file = c.workspace().join("out/term.txt");
    let written = wait_for(Duration::from_secs(20), || file.is_file());
    let shot = screenshot(c, "window-terminal.png")?;
    ensure!(
        written,
        "the terminal's command wrote no out\\term.txt (screenshot {})",
        shot.display()
    );
    let text = std::fs::read_to_string(&file)?;
    ensure!(
        text == "typed in the terminal\r\n",
        "out\\term.txt reads {text:?}"
    );
    Ok(format!(
        "cmd.exe in the terminal wrote out\\term.txt; screenshot {}",
        shot.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ran(code: Option<i32>, stdout: &str) -> Ran {
        Ran {
            code,
            stdout: stdout.to_owned(),
            stderr: String::new(),
        }
    }

    #[test]
    fn the_task_id_is_read_from_the_created_line_and_its_absence_is_an_error() {
        let printed = "task task-17-ab12 created\r\n  checking the project\r\n";
        assert_eq!(
            created_task(&ran(Some(0), printed)).unwrap(),
            "task-17-ab12"
        );
        let refused = ran(Some(1), "error: the workspace is busy\n");
        let error = created_task(&refused).unwrap_err().to_string();
        assert!(error.contains("error: the workspace is busy"), "{error}");
    }

    #[test]
    fn expectations_name_the_exit_code_and_the_missing_line() {
        let done = ran(Some(0), "status:   completed\r\n");
        assert!(expect_code(&done, 0).is_ok());
        assert!(expect_line(&done, "status:   completed").is_ok());
        let error = expect_code(&ran(None, ""), 0).unwrap_err().to_string();
        assert!(
            error.starts_with("expected exit 0:\nexit none (stopped)"),
            "{error}"
        );
        let error = expect_line(&done, "status:   failed")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("expected the line \"status:   failed\""),
            "{error}"
        );
    }
}
