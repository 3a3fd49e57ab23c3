//! The command line: argument parsing and the headless commands (`task`,
//! `rollback`, `tools`, `bricks`, `new`, `acp`, `provider`, `lsp`,
//! `verify`, `doctor`). With no subcommand, or with `open DIR`, `cocode`
//! opens the window instead.
//!
//! `cli` uses `host`; it never reaches into the window.

pub mod acp;
pub mod args;
pub mod bricks;
pub mod check;
pub mod lsp;
pub mod printable;
pub mod provider;
pub mod review;
pub mod task;

use std::io::Write as _;
use std::process::ExitCode;

use crate::cli::args::CliCommand;

/// Runs a headless command and prints its output to standard output.
///
/// `verify` and `doctor` use 1 and 2 for findings, so their own errors are
/// 3; task commands use 3 for "awaiting approval", so theirs are 1.
pub fn run(command: &CliCommand, root: &crate::host::root::HostRoot) -> ExitCode {
    let rt = root.runtime();
    // Paths, prompts and replies can hold terminal escape sequences.
    let out = &mut printable::Printable::new(std::io::stdout());
    let (result, error_code) = match command {
        CliCommand::Verify {
            workspace,
            json,
            trust,
        } => (check::verify(workspace, *json, *trust, rt, out), 3),
        CliCommand::Doctor {
            workspace,
            abandon: None,
        } => (check::doctor(workspace, rt, out), 3),
        CliCommand::Doctor {
            workspace,
            abandon: Some(journal),
        } => (check::abandon(workspace, journal, out), 3),
        CliCommand::Task { action } => (task::task_command(action, root, out), 1),
        CliCommand::Rollback {
            workspace,
            task,
            to_attempt,
            to_snapshot,
            to_message,
            yes,
        } => (
            task::rollback(
                workspace,
                task,
                (*to_attempt, to_snapshot.as_deref(), *to_message),
                *yes,
                out,
            ),
            1,
        ),
        CliCommand::Tools { action } => (task::tools_command(action, out), 1),
        CliCommand::Acp { action } => (
            acp::acp_command(
                action,
                root.credentials().as_ref(),
                &mut std::io::stdin().lock(),
                out,
            ),
            1,
        ),
        CliCommand::Provider { action } => (
            provider::provider_command(
                action,
                root.credentials().as_ref(),
                &mut std::io::stdin().lock(),
                out,
            ),
            1,
        ),
        CliCommand::Lsp { action } => (lsp::lsp_command(action, rt, out), 3),
        CliCommand::New { dest, brick, vars } => {
            (bricks::new_workspace(dest, brick, vars, root, out), 1)
        }
        CliCommand::Bricks => (bricks::list(out), 1),
        CliCommand::Open { .. } => {
            eprintln!("cocode: `open` starts the window, not a headless command");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let mut err_out = printable::Printable::new(std::io::stderr());
            let _ = writeln!(err_out, "cocode: {err:#}");
            ExitCode::from(error_code)
        }
    }
}
