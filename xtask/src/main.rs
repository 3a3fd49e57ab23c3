//! Project automation, reached through `cargo xtask <command>`.

#![expect(
    clippy::disallowed_methods,
    reason = "developer tooling: runs cargo, apt-get and the app, and writes reports; it is not product code"
)]
#![expect(clippy::print_stdout, reason = "a command-line tool reports on stdout")]

mod bench;
mod boundaries;
mod bundle;
mod cross;
mod dist;
mod fuzz;
mod icons;
mod install_check;
mod layers;
mod modules;
mod pe_check;
mod screenshot;
mod suite;
mod windows_check;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "xtask", about = "cocode project automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check the crate ladder in `dependency_layers.yaml`.
    Layers,
    /// Check the "only place" rules (launcher, writer, pure core, task status,
    /// one composition root, no circle between the files of a crate).
    Boundaries {
        /// Also print each crate's module graph in numbers (files, edges,
        /// circles) and its largest product files.
        #[arg(long)]
        graph: bool,
    },
    /// Check the Windows and macOS code paths (installs the targets first).
    CrossCheck {
        /// Do not install the targets or the MinGW compiler.
        #[arg(long)]
        no_install: bool,
    },
    /// Install test peers when possible, then run every test suite and check.
    Test {
        /// Skip installing system packages and test peers.
        #[arg(long)]
        no_install: bool,
    },
    /// Run the criterion benches and print peer ratios.
    Bench {
        /// Only report ratios from the last run, do not run benches.
        #[arg(long)]
        report_only: bool,
        /// Fail when a ratio misses its bar (the table in TESTING.md).
        #[arg(long)]
        check: bool,
    },
    /// Run every fuzz target briefly (installs nightly and cargo-fuzz first).
    Fuzz {
        /// Seconds per target.
        #[arg(long, default_value_t = 60)]
        seconds: u32,
        /// Do not install the nightly toolchain or cargo-fuzz.
        #[arg(long)]
        no_install: bool,
    },
    /// Build the packages this machine can build into `dist/` under the
    /// target folder (Linux: the tarball and the `.deb`; a Mac: the app
    /// bundle and its disk image; `--target x86_64-pc-windows-gnu`: the
    /// checked Windows executable).
    Dist {
        /// Cross-build for this target instead of the host.
        #[arg(long)]
        target: Option<String>,
        /// Build with the quick `dist-check` profile (release behaviour,
        /// debug build speed) to check the packages' shape.
        #[arg(long)]
        quick: bool,
    },
    /// Run the Windows build under Wine: cross-build `cocode.exe` and its
    /// zip, then in a private Wine prefix and Xvfb ask its version, list
    /// the tools, use the credential store, run and roll back two
    /// local-agent tasks, ask `doctor` and open the window (a screenshot).
    /// Installs Wine when missing; each step's output is kept.
    WindowsCheck {
        /// Build with the quick `dist-check` profile instead of release.
        #[arg(long)]
        quick: bool,
        /// Do not install Wine, Xvfb and the X tools.
        #[arg(long)]
        no_install: bool,
    },
    /// As root: install the `.deb` built around a build of the app, start
    /// it from its desktop entry under Xvfb, then purge it and check nothing
    /// is left (the `package` step of `test`).
    InstallCheck {
        /// The program to package (default: the debug build).
        #[arg(long)]
        binary: Option<PathBuf>,
    },
    /// Render the application icon (`assets/icon/cocode.svg`) into its PNG,
    /// `.ico` and `.icns` files.
    Icons,
    /// Start the release app under Xvfb and save a screenshot.
    Screenshot {
        /// Folder to open.
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Output PNG.
        #[arg(long, default_value = "screenshots/cocode.png")]
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<bool> {
    let root = repo_root()?;
    match command {
        Command::Layers => Ok(report("layers", &layers::run(&root)?)),
        Command::Boundaries { graph } => {
            if graph {
                boundaries::print_graph(&root)?;
            }
            Ok(report("boundaries", &boundaries::run(&root)?))
        }
        Command::CrossCheck { no_install } => cross::run(&root, !no_install),
        Command::Test { no_install } => suite::run(&root, !no_install),
        Command::Bench { report_only, check } => bench::run(&root, report_only, check),
        Command::Fuzz {
            seconds,
            no_install,
        } => {
            if !no_install {
                fuzz::install();
            }
            fuzz::run(&root, seconds)
        }
        Command::Icons => icons::run(&root),
        Command::Dist { target, quick } => dist::run(&root, target.as_deref(), quick),
        Command::WindowsCheck { quick, no_install } => {
            windows_check::run(&root, quick, !no_install)
        }
        Command::InstallCheck { binary } => install_check::run(
            &root,
            &binary.unwrap_or_else(|| suite::target_dir(&root).join("debug/cocode")),
        ),
        Command::Screenshot { workspace, out } => {
            screenshot::run(&root, workspace, &out).map(|()| true)
        }
    }
}

/// Prints findings; true when there are none.
fn report<T: std::fmt::Display>(name: &str, findings: &[T]) -> bool {
    if findings.is_empty() {
        println!("{name}: ok");
        return true;
    }
    for finding in findings {
        println!("{name}: {finding}");
    }
    println!("{name}: {} violation(s)", findings.len());
    false
}

/// The repository root (the parent of this crate's manifest directory).
fn repo_root() -> Result<PathBuf> {
    // `cargo run` names the package's folder at run time too; prefer it, so
    // that a binary built from another checkout of the same target folder
    // still checks the checkout it was run in.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest
        .parent()
        .map(Path::to_path_buf)
        .context("xtask has no parent directory")
}

/// Every `.rs` file under `dir`, honouring `.gitignore` (so `target/` is skipped).
pub fn source_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ignore::WalkBuilder::new(dir)
        .hidden(true)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(ignore::DirEntry::into_path)
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| !p.components().any(|c| c.as_os_str() == "target"))
        .collect();
    files.sort();
    files
}
