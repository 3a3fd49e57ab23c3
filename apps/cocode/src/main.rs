//! The `cocode` executable.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser as _;
use cocode::app::CocodeApp;
use cocode::cli::{Cli, CliCommand};

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("COCODE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let headless = match &cli.command {
        Some(CliCommand::Verify { dir }) => {
            Some(cocode::headless::verify(dir, &mut std::io::stdout()))
        }
        Some(CliCommand::Doctor { dir }) => {
            Some(cocode::headless::doctor(dir, &mut std::io::stdout()))
        }
        Some(CliCommand::Task { action }) => Some(cocode::tasks_cli::task_command(
            action,
            &mut std::io::stdout(),
        )),
        Some(CliCommand::Rollback {
            workspace,
            task,
            to_attempt,
            to_snapshot,
        }) => Some(cocode::tasks_cli::rollback(
            workspace,
            task,
            *to_attempt,
            to_snapshot.as_deref(),
            &mut std::io::stdout(),
        )),
        Some(CliCommand::Tools { action }) => Some(cocode::tasks_cli::tools_command(
            action,
            &mut std::io::stdout(),
        )),
        Some(CliCommand::Acp { action }) => Some(cocode::acp_cli::acp_command(
            action,
            &cocode_toolchain::vault::KeyringVault,
            &mut std::io::stdin().lock(),
            &mut std::io::stdout(),
        )),
        Some(CliCommand::New { dest, brick, vars }) => Some(cocode::bricks_cli::new_workspace(
            dest,
            brick,
            vars,
            &mut std::io::stdout(),
        )),
        Some(CliCommand::Bricks) => Some(cocode::bricks_cli::list(&mut std::io::stdout())),
        Some(CliCommand::Open { .. }) | None => None,
    };
    // `verify` and `doctor` use 1 and 2 for findings, so their own errors
    // are 3; task commands use 3 for "awaiting approval", so theirs are 1.
    let error_code = match &cli.command {
        Some(
            CliCommand::Task { .. }
            | CliCommand::Rollback { .. }
            | CliCommand::Tools { .. }
            | CliCommand::Acp { .. }
            | CliCommand::New { .. }
            | CliCommand::Bricks,
        ) => 1,
        _ => 3,
    };
    if let Some(result) = headless {
        return match result {
            Ok(code) => ExitCode::from(code),
            Err(err) => {
                eprintln!("cocode: {err:#}");
                ExitCode::from(error_code)
            }
        };
    }
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("cocode: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    let folder = match cli.folder() {
        Some(dir) => {
            let canonical = std::fs::canonicalize(dir)
                .with_context(|| format!("cannot open folder {}", dir.display()))?;
            anyhow::ensure!(canonical.is_dir(), "not a folder: {}", canonical.display());
            Some(canonical)
        }
        None => None,
    };
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("cocode")
            .with_app_id("cocode")
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([480.0, 320.0]),
        ..Default::default()
    };
    eframe::run_native(
        "cocode",
        options,
        Box::new(move |cc| {
            let app = CocodeApp::new(folder)?;
            app.bind(&cc.egui_ctx);
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("the window could not start: {e}"))
}
