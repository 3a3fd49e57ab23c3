//! The `cocode` executable: the window, or a headless command.

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
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("COCODE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    // The one runtime of the process: the command line blocks on it, the
    // window's workers spawn onto it.
    let runtime = match cocode::host::runtime::build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("cocode: {err:#}");
            return ExitCode::FAILURE;
        }
    };
    let handle = runtime.handle().clone();
    match &cli.command {
        Some(CliCommand::Open { dir }) => cocode::window::run(Some(dir), handle),
        None => cocode::window::run(None, handle),
        Some(command) => cocode::cli::run(command, &handle),
    }
}
