//! The `cocode` executable: the window, or a headless command.
// A release build on Windows is a GUI program: no console window opens
// behind the app; commands attach to the terminal that started them.
#![cfg_attr(all(windows, not(debug_assertions)), windows_subsystem = "windows")]

use std::process::ExitCode;

use clap::Parser as _;
use cocode::cli::args::{Cli, CliCommand};

fn main() -> ExitCode {
    // SAFETY: the first statement of `main`: no other thread exists yet.
    #[expect(
        unsafe_code,
        reason = "seals the process's secrets before any thread exists"
    )]
    unsafe {
        cocode::host::secrets::seal();
    }
    // Before anything prints (`--help`, a parse error): started from a
    // terminal, the output goes there; double-clicked, nothing happens.
    cocode_platform::console::attach_parent_console();
    let cli = Cli::parse();
    let window = matches!(cli.command, None | Some(CliCommand::Open { .. }));
    if window
        || matches!(
            cli.command,
            Some(CliCommand::Task {
                action: cocode::cli::args::TaskCommand::Run { .. }
            })
        )
    {
        // What the kernel offers launches, measured while the rest starts.
        cocode_toolchain::confine::measure_in_background();
    }
    let data = cocode::host::crash::data_dir();
    if let Some(data) = &data {
        cocode::host::crash::install_hook(
            cocode::host::crash::crash_dir(data),
            cocode::host::secrets::values(),
        );
    }
    // Every process logs to a file a day in the data folder. Library logs
    // go to stderr only from the window or when COCODE_LOG asks for them,
    // so a command's output is its own (and colour only on a terminal).
    let (file_log, _flush) = match &data {
        Some(data) => match cocode::host::crash::log_writer(&cocode::host::crash::log_dir(data)) {
            Ok((writer, guard)) => (Some(writer), Some(guard)),
            Err(e) => {
                if window {
                    eprintln!("cocode: no log file: {e}");
                }
                (None, None)
            }
        },
        None => (None, None),
    };
    {
        use std::io::IsTerminal as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        let asked = std::env::var_os("COCODE_LOG").is_some();
        let filter =
            tracing_subscriber::EnvFilter::try_from_env("COCODE_LOG").unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new(if window { "info" } else { "warn" })
            });
        tracing_subscriber::registry()
            .with(filter)
            .with((window || asked).then(|| {
                tracing_subscriber::fmt::layer()
                    .with_ansi(std::io::stderr().is_terminal())
                    .with_writer(std::io::stderr)
                    // Asked for, the phases' spans say how long each took
                    // (`COCODE_LOG=debug`: opening, recovery, each sweep,
                    // the stat cache, retention, listings).
                    .with_span_events(if asked {
                        tracing_subscriber::fmt::format::FmtSpan::CLOSE
                    } else {
                        tracing_subscriber::fmt::format::FmtSpan::NONE
                    })
            }))
            .with(file_log.map(|w| {
                tracing_subscriber::fmt::layer()
                    .with_ansi(false)
                    .with_writer(w)
            }))
            .init();
    }
    // The one runtime of the process: the command line blocks on it, the
    // window's workers spawn onto it.
    let runtime = match cocode::host::runtime::build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("cocode: {err:#}");
            return ExitCode::FAILURE;
        }
    };
    // The composition root: launchers, the credential store and the brick
    // engine are built there, once, for whichever front end runs.
    let root = cocode::host::root::HostRoot::new(runtime.handle().clone());
    match &cli.command {
        Some(CliCommand::Open { dir }) => cocode::window::run(dir.as_deref(), root),
        None => cocode::window::run(None, root),
        Some(command) => cocode::cli::run(command, &root),
    }
}
