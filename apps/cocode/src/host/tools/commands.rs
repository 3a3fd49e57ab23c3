//! The agent's commands, through the launcher between two sweeps, and the
//! language servers' diagnostics.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument as _;

use cocode_core::TaskId;
use cocode_core::gate::{GateError, TaskContext};
use cocode_core::process::{ExitStatus, LaunchIo, LaunchSpec, SandboxProfile};
use cocode_tool_protocol::args::TerminalRunArgs;
use cocode_tool_protocol::catalog::{self};
use cocode_tool_protocol::{HandlerContext, ToolError, ToolErrorCode, ToolOutput};

use crate::host::log::LogErr as _;
use crate::host::sweep_budget::{sweep_budget, sweep_stop};
use serde_json::json;

// Tests build it with its parent under `cfg(test)`, where the lint is quiet.
#[cfg_attr(
    not(test),
    expect(
        clippy::wildcard_imports,
        reason = "a part of its parent's impl, cut out of one file: it names what the parent names"
    )
)]
use super::*;

impl WorkspaceTools {
    pub(super) async fn run_command(
        self: Arc<Self>,
        args: TerminalRunArgs,
        cx: HandlerContext,
    ) -> Result<ToolOutput, ToolError> {
        let ctx = self.context(&cx)?;
        // The folder is resolved like a read: its real path must be inside
        // the workspace and outside `.cocode/`.
        let cwd = match args.cwd.as_deref() {
            Some(c) if c != "." => {
                let p = self.normalize(c)?;
                self.real_folder("run", &p)?
            }
            _ => self.root().to_path_buf(),
        };
        let timeout = Duration::from_secs(
            args.timeout_secs
                .unwrap_or(600)
                .min(catalog::COMMAND_TIMEOUT_LIMIT_SECS),
        );
        let output_limit = args
            .output_limit_bytes
            .unwrap_or(catalog::COMMAND_OUTPUT_LIMIT_BYTES)
            .min(catalog::COMMAND_OUTPUT_LIMIT_BYTES);
        let command = args.argv;
        let env_overrides = args.env;
        // In a swept turn the agent may have written files itself since the
        // turn began: those are recorded as its own before the command's
        // picture is taken, never absorbed into it.
        let in_turn = self.tasks.turn_swept(&ctx.task_id);
        let this = Arc::clone(&self);
        let (sweep_ctx, cancel) = (ctx.clone(), cx.cancel.clone());
        tokio::task::spawn_blocking(move || this.sweep_before_command(&sweep_ctx, in_turn, cancel))
            .await
            .map_err(|e| ToolError::handler("TOOL_EXECUTION_FAILED", e.to_string(), false))?
            .map_err(gate_error)?;
        let spec = LaunchSpec {
            argv: command,
            cwd,
            env_overrides,
            profile: SandboxProfile::Agent {
                task_id: ctx.task_id.clone(),
            },
            io: LaunchIo::Piped,
            timeout: Some(timeout),
            output_byte_limit: usize::try_from(output_limit).ok(),
            extra_writable: Vec::new(),
            secret_env: BTreeMap::new(),
            extra_hosts: Vec::new(),
        };
        let outcome = self.launch(spec, output_limit, &cx, &ctx.task_id).await;
        // The sweep runs whatever the command did, so its changes are
        // recorded even when it failed; a repository it made goes again.
        let this = Arc::clone(&self);
        let (sweep_ctx, cancel) = (ctx.clone(), cx.cancel.clone());
        let note = tokio::task::spawn_blocking(move || {
            this.sweep_after_command(&sweep_ctx, in_turn, cancel)
        })
        .await
        .map_err(|e| ToolError::handler("TOOL_EXECUTION_FAILED", e.to_string(), false))?
        .map_err(gate_error)?;
        outcome.map(|mut out| {
            for text in note {
                out.content
                    .push(cocode_tool_protocol::ContentBlock::Text { text });
            }
            out
        })
    }

    /// The look before a command, within the attempt's time limit (blocking).
    /// In a swept turn what the agent wrote itself so far is recorded first,
    /// and the turn's sweep goes on from there.
    fn sweep_before_command(
        &self,
        ctx: &TaskContext,
        in_turn: bool,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<(), GateError> {
        let stop = sweep_stop(cancel);
        let limit = self.workspace.config.limits.attempt_time_limit();
        let budget = sweep_budget(limit, &stop);
        let gate = &self.workspace.gate;
        if !in_turn {
            return gate.begin_task_sweep(ctx, &budget).map(drop);
        }
        // The ACP agent's own writes: it runs confined like commands.
        let observed = gate.record_sweep_so_far(
            ctx,
            cocode_core::SnapshotOrigin::Observed,
            self.command_writers,
            &budget,
        )?;
        if let Some(note) = remove_made_metadata(&self.workspace, ctx, &observed) {
            tracing::info!("{note}");
        }
        for change in gate.take_sweep_held(&ctx.task_id) {
            self.tasks.notify_held(HeldEdit { change });
        }
        Ok(())
    }

    /// The look after a command (blocking): what it changed is recorded
    /// with the task. Returns what the agent is told besides the command's
    /// output (test files held for a person, a repository removed).
    fn sweep_after_command(
        &self,
        ctx: &TaskContext,
        in_turn: bool,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<Vec<String>, GateError> {
        let stop = sweep_stop(cancel);
        let limit = self.workspace.config.limits.attempt_time_limit();
        let budget = sweep_budget(limit, &stop);
        let gate = &self.workspace.gate;
        let origin = cocode_core::SnapshotOrigin::Observed;
        // In a swept turn the turn's sweep goes on past the command.
        let observed = if in_turn {
            gate.record_sweep_so_far(ctx, origin, self.command_writers, &budget)
        } else {
            gate.end_sweep_within(ctx, origin, self.command_writers, &budget)
        }?;
        // A test file the command changed went back to its base; the
        // change waits for a person, and the agent is told.
        let mut notes: Vec<String> = Vec::new();
        for change in gate.take_sweep_held(&ctx.task_id) {
            let paths: Vec<&str> = change.protected.iter().map(|t| t.path.as_str()).collect();
            notes.push(format!(
                "the command changed protected test file(s) {}: each is back as it was, and the change waits for a person's approval",
                paths.join(", ")
            ));
            self.tasks.notify_held(HeldEdit { change });
        }
        notes.extend(remove_made_metadata(&self.workspace, ctx, &observed));
        Ok(notes)
    }

    pub(super) async fn launch(
        &self,
        spec: LaunchSpec,
        output_limit: u64,
        cx: &HandlerContext,
        task: &TaskId,
    ) -> Result<ToolOutput, ToolError> {
        let (watch_id, stop) = self.commands.started(task, &spec.argv, &spec.cwd).await;
        let outcome = self
            .launch_watched(spec, output_limit, cx, watch_id, &stop)
            .instrument(tracing::debug_span!("command.run"))
            .await;
        if outcome.is_err() {
            self.commands.ended(watch_id, None).await;
        }
        outcome
    }

    pub(super) async fn launch_watched(
        &self,
        spec: LaunchSpec,
        output_limit: u64,
        cx: &HandlerContext,
        watch_id: u64,
        stop: &tokio_util::sync::CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let mut handle = tracing::debug_span!("command.launch")
            .in_scope(|| self.launcher.launch(spec))
            .map_err(|e| match e {
                cocode_core::process::LaunchError::NotFound(p) => ToolError::handler(
                    "COMMAND_NOT_FOUND",
                    format!("program not found: {p}"),
                    false,
                ),
                other => ToolError::handler("COMMAND_LAUNCH_FAILED", other.to_string(), false),
            })?;
        let mut output = cocode_toolchain::OutputBuffer::new(usize::try_from(output_limit).ok());
        loop {
            tokio::select! {
                () = cx.cancel.cancelled() => {
                    handle.kill().await.log_err("stopping a cancelled command");
                    return Err(ToolError::new(ToolErrorCode::Cancelled, "the command was cancelled"));
                }
                () = stop.cancelled() => {
                    handle.kill().await.log_err("stopping a command a person stopped");
                    return Err(ToolError::new(ToolErrorCode::Cancelled, "a person stopped the command"));
                }
                chunk = handle.read_output() => match chunk {
                    Some(bytes) => {
                        if let Some(sink) = &cx.output {
                            (sink.0)(&bytes);
                        }
                        self.commands.output(watch_id, &bytes).await;
                        output.push(&bytes);
                    }
                    None => break,
                },
            }
        }
        let status = handle
            .wait()
            .instrument(tracing::debug_span!("command.wait"))
            .await
            .map_err(|e| ToolError::handler("COMMAND_LAUNCH_FAILED", e.to_string(), false))?;
        self.commands.ended(watch_id, Some(status)).await;
        let (code, timed_out, signal) = match status {
            ExitStatus::Code(c) => (Some(c), false, None),
            ExitStatus::TimedOut => (None, true, None),
            ExitStatus::Signal(n) => (None, false, Some(n)),
            ExitStatus::Killed => (None, false, None),
        };
        ToolOutput::json(&json!({
            "exitCode": code, "output": String::from_utf8_lossy(output.bytes()),
            "truncated": output.trimmed() > 0,
            "timedOut": timed_out,
            "signal": signal
        }))
    }

    /// `lsp.diagnostics`: opens the file (or every file a server takes)
    /// with its server, waits for the reports and returns them.
    pub(super) async fn diagnostics(
        &self,
        args: cocode_tool_protocol::args::LspDiagnosticsArgs,
    ) -> Result<ToolOutput, ToolError> {
        let Some(servers) = &self.lsp else {
            return Err(ToolError::handler(
                "LSP_UNAVAILABLE",
                "no language server runs for this workspace",
                false,
            ));
        };
        let root = self.workspace.workspace.root.clone();
        let options = self.workspace.workspace.options();
        let paths = match &args.path {
            Some(p) => vec![self.normalize(p)?],
            None => Vec::new(),
        };
        if let [path] = paths.as_slice()
            && servers.spec_for(path).is_none()
        {
            return Err(ToolError::handler(
                "LSP_NO_SERVER",
                format!("no language server is set up for {}", path.as_str()),
                false,
            ));
        }
        let (texts, omitted) = {
            let servers = servers.clone();
            let documents = Arc::clone(&self.documents);
            tokio::task::spawn_blocking(move || {
                let (files, omitted) =
                    crate::host::lsp::query_files(&servers, &root, options, &paths);
                let reader = cocode_workspace::WorkspaceReader::open(&root, options)
                    .map_err(|e| e.to_string())?;
                let texts = crate::host::lsp::query_texts(&reader, documents.as_ref(), &files);
                Ok::<_, String>((texts, omitted))
            })
            .await
            .map_err(|e| ToolError::handler("LSP_FAILED", e.to_string(), true))?
            .map_err(|e| ToolError::handler("LSP_FAILED", e, true))?
        };
        let checked = texts.len();
        let (found, unanswered) =
            crate::host::lsp::query_diagnostics(servers, texts, LSP_TOOL_WAIT).await;
        ToolOutput::json(&crate::host::lsp::report_json(
            &crate::host::lsp::DiagnosticsReport {
                checked,
                omitted,
                files: found,
                unanswered,
            },
        ))
    }
}
