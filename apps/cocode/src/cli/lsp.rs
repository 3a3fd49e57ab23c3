//! `cocode lsp servers`, `cocode lsp trust` and `cocode lsp diagnostics`.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use cocode_core::path::normalize;
use cocode_lsp::{LanguageServers, ServerState, Severity};
use cocode_workspace::OpenWorkspace;
use tokio::runtime::Handle;

use crate::cli::args::LspCommand;
use crate::host::lsp::{
    DiagnosticsReport, diagnostic_lines, language_servers, query_diagnostics, query_files,
    query_texts, read_entries, registry, user_config_file,
};

/// Runs `cocode lsp …`.
pub fn lsp_command(action: &LspCommand, rt: &Handle, out: &mut dyn Write) -> anyhow::Result<u8> {
    match action {
        LspCommand::Servers { workspace, check } => servers(workspace, *check, rt, out),
        LspCommand::Trust {
            workspace,
            servers: ids,
        } => trust(workspace, ids, rt, out),
        LspCommand::Diagnostics {
            workspace,
            paths,
            format,
            timeout,
        } => {
            if format != "text" && format != "json" {
                bail!("--format “{format}”: use text or json");
            }
            diagnostics(
                workspace,
                paths,
                format == "json",
                Duration::from_secs(*timeout),
                rt,
                out,
            )
        }
    }
}

fn open(dir: &Path, rt: &Handle) -> anyhow::Result<(OpenWorkspace, LanguageServers)> {
    let ws = OpenWorkspace::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    // The person's own entries: a broken file is an error here, not a
    // silent fallback to the built-in list.
    let user = match user_config_file() {
        Some(file) => read_entries(&file)?,
        None => Vec::new(),
    };
    let launcher = crate::host::lsp::launcher(&ws.workspace.root, rt);
    let servers = language_servers(
        &ws.workspace.root,
        ws.workspace.options(),
        registry(&ws.workspace.root, &ws.config, &user),
        launcher,
        Arc::default(),
        rt.clone(),
        // A command line's query looks at the files it names (or every
        // file it opens), nothing else.
        cocode_lsp::Scope::OpenDocuments,
    );
    Ok((ws, servers))
}

/// The folder's language servers, read without creating anything in it
/// (no `.cocode/`): listing them is only looking.
fn look(dir: &Path, rt: &Handle) -> anyhow::Result<LanguageServers> {
    let folder =
        cocode_workspace::peek(dir).with_context(|| format!("reading {}", dir.display()))?;
    let user = match user_config_file() {
        Some(file) => read_entries(&file)?,
        None => Vec::new(),
    };
    let launcher = crate::host::lsp::launcher(&folder.root, rt);
    Ok(language_servers(
        &folder.root,
        cocode_core::path::NormalizeOptions::native(cocode_core::path::CaseSensitivity::Sensitive),
        registry(&folder.root, &folder.config, &user),
        launcher,
        Arc::default(),
        rt.clone(),
        cocode_lsp::Scope::Workspace,
    ))
}

/// `cocode lsp servers [--check]`: each server, its files, its command and
/// its state; with `--check`, each installed one is started and asked to
/// initialize (exit 1 when one does not start).
fn servers(dir: &Path, check: bool, rt: &Handle, out: &mut dyn Write) -> anyhow::Result<u8> {
    let servers = look(dir, rt)?;
    let mut started: std::collections::BTreeMap<String, Result<(), String>> =
        std::collections::BTreeMap::new();
    if check {
        let idle: Vec<String> = servers
            .statuses()
            .into_iter()
            .filter(|s| matches!(s.state, ServerState::Idle { .. }))
            .map(|s| s.id)
            .collect();
        rt.block_on(async {
            for id in idle {
                let result = servers.restart(&id).await.map_err(|e| e.to_string());
                started.insert(id, result);
            }
            servers.shutdown().await;
        });
    }
    let mut failed = 0u8;
    for status in servers.statuses() {
        let files = status
            .extensions
            .iter()
            .map(|e| format!(".{e}"))
            .collect::<Vec<_>>()
            .join(" ");
        let state = match (&status.state, started.get(&status.id)) {
            (_, Some(Ok(()))) => "starts".to_owned(),
            (_, Some(Err(reason))) => {
                failed = failed.saturating_add(1);
                format!("does not start: {reason}")
            }
            (ServerState::Idle { program }, None) => format!("installed: {}", program.display()),
            (other, None) => other.describe(),
        };
        let state = match &status.note {
            Some(note) => format!("{state} · {note}"),
            None => state,
        };
        let command = if status.command.is_empty() {
            "(turned off)".to_owned()
        } else {
            cocode_core::shown::command(&status.command)
        };
        writeln!(out, "{}\t{files}\t{command}\t{state}", status.id)?;
    }
    Ok(u8::from(failed > 0))
}

/// `cocode lsp trust`: records the held commands (or those of `ids`) as
/// trusted in this folder.
fn trust(dir: &Path, ids: &[String], rt: &Handle, out: &mut dyn Write) -> anyhow::Result<u8> {
    let (ws, servers) = open(dir, rt)?;
    let held: Vec<_> = servers
        .statuses()
        .into_iter()
        .filter_map(|s| match s.state {
            ServerState::Untrusted { command } => Some((s.id, command)),
            _ => None,
        })
        .collect();
    if let Some(unknown) = ids.iter().find(|id| !held.iter().any(|(h, _)| h == *id)) {
        bail!(
            "{unknown} is not held: this workspace names no command of its own for it, or it is trusted already (see cocode lsp servers)"
        );
    }
    let chosen: Vec<_> = held
        .into_iter()
        .filter(|(id, _)| ids.is_empty() || ids.contains(id))
        .collect();
    if chosen.is_empty() {
        writeln!(
            out,
            "nothing to trust: this workspace names no language-server command that waits for trust"
        )?;
        return Ok(0);
    }
    for (id, command) in &chosen {
        crate::host::trust::trust_command(&ws.workspace.root, command)?;
        writeln!(
            out,
            "trusted in {}: {id}: {}",
            ws.workspace.root.display(),
            cocode_core::shown::command(command)
        )?;
    }
    Ok(0)
}

fn diagnostics(
    dir: &Path,
    paths: &[String],
    json: bool,
    timeout: Duration,
    rt: &Handle,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let (ws, servers) = open(dir, rt)?;
    let options = ws.workspace.options();
    let root = ws.workspace.root.clone();
    let mut wanted = Vec::new();
    for p in paths {
        let rel = Path::new(p)
            .strip_prefix(&root)
            .map_or_else(|_| p.clone(), |r| r.to_string_lossy().into_owned());
        wanted.push(normalize(&rel, options).map_err(|e| anyhow::anyhow!("{p}: {e}"))?);
    }
    let (files, omitted) = query_files(&servers, &root, options, &wanted);
    let reader = cocode_workspace::WorkspaceReader::open(&root, options)
        .with_context(|| format!("reading {}", root.display()))?;
    let texts = query_texts(&reader, &cocode_editor::OpenDocuments::new(), &files);
    let (found, unanswered) = rt.block_on(async {
        let result = query_diagnostics(&servers, texts, timeout).await;
        servers.shutdown().await;
        result
    });
    let report = DiagnosticsReport {
        checked: files.len(),
        omitted,
        files: found,
        unanswered,
    };
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&crate::host::lsp::report_json(&report))?
        )?;
    } else {
        for line in diagnostic_lines(&report.files) {
            writeln!(out, "{line}")?;
        }
        let mut err = crate::cli::printable::Printable::new(std::io::stderr());
        for u in &report.unanswered {
            writeln!(err, "cocode: {}: {}", u.path, u.reason)?;
        }
        if report.omitted > 0 {
            writeln!(
                err,
                "cocode: checked {} files; {} more were left out (name them to check them)",
                report.checked, report.omitted
            )?;
        }
    }
    let errors = report
        .files
        .iter()
        .flat_map(|f| &f.diagnostics)
        .any(|d| d.severity == Severity::Error);
    Ok(if errors {
        1
    } else if report.unanswered.is_empty() {
        0
    } else {
        2
    })
}
