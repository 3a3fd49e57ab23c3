//! Headless commands (no window): `cocode verify DIR` and `cocode doctor DIR`.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use cocode_core::ids::{AttemptNo, TaskId};
use cocode_core::process::Confinement;
use cocode_core::services::{VerificationRequest, VerificationRunner};
use cocode_core::verification::VerificationVerdict;
use cocode_toolchain::verify::OrchestratingVerificationRunner;
use cocode_toolchain::{Launcher, PolicyProxy, WritableRoots};

use crate::host::{runtime, write_exceptions};
use cocode_workspace::{HistoryIntegrityChecker, OpenWorkspace};

/// Runs self-verification over the whole workspace and prints one JSON
/// record per line, then the verdict. Exit code 0 pass, 1 fail, 2 when the
/// records cannot complete a task.
pub fn verify(dir: &Path, out: &mut dyn Write) -> anyhow::Result<u8> {
    let ws = OpenWorkspace::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    let root = ws.workspace.root.clone();
    let hosts = cocode_toolchain::allowed::compose(&root, &ws.config.allowed_hosts);
    let rt = runtime()?;
    let records = rt.block_on(async {
        let proxy =
            Arc::new(PolicyProxy::start(cocode_toolchain::allowed::policy_for(&hosts, &[])).await?);
        let launcher = Launcher::new(
            tokio::runtime::Handle::current(),
            Some(Arc::clone(&proxy)),
            WritableRoots {
                workspace: Some(root.clone()),
                exceptions: write_exceptions(),
            },
        );
        let blocked = Arc::clone(&proxy);
        let runner = OrchestratingVerificationRunner::new(
            Arc::new(launcher),
            cocode_toolchain::parsers::builtin_registry()?,
            ws.config.limits,
            Arc::new(move |t| blocked.blocked_hosts(t).len()),
        );
        let req = VerificationRequest {
            task_id: TaskId::new("cli-verify")?,
            attempt_no: AttemptNo(0),
            workspace_root: root.clone(),
            edited_paths: Vec::new(),
        };
        anyhow::Ok(runner.verify(req).await?)
    })?;
    for record in &records {
        writeln!(out, "{}", serde_json::to_string(record)?)?;
    }
    let verdict = VerificationVerdict::evaluate(&records, AttemptNo(0));
    writeln!(out, "verdict: {verdict:?}")?;
    Ok(match verdict {
        VerificationVerdict::Pass => 0,
        VerificationVerdict::Fail { .. } => 1,
        VerificationVerdict::NotCompletable(_) => 2,
    })
}

/// Checks the machine and the workspace's history; exit code 1 on problems.
pub fn doctor(dir: &Path, out: &mut dyn Write) -> anyhow::Result<u8> {
    let ws = OpenWorkspace::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    let report = runtime()?.block_on(cocode_toolchain::doctor::check());
    let mut problems = 0u8;
    match &report.confinement {
        Confinement::Landlock => writeln!(
            out,
            "confinement: Landlock (writes and connections of agent commands are confined)"
        )?,
        Confinement::Seatbelt => writeln!(out, "confinement: Seatbelt")?,
        Confinement::Unconfined { reason } => writeln!(out, "confinement: none — {reason}")?,
    }
    match &report.vault {
        Ok(()) => writeln!(out, "credential store: available")?,
        Err(e) => writeln!(out, "credential store: {} — {e}", e.code())?,
    }
    match &report.proxy {
        Ok(()) => writeln!(out, "policy proxy: self-test passed")?,
        Err(e) => {
            problems += 1;
            writeln!(out, "policy proxy: self-test FAILED — {e}")?;
        }
    }
    let integrity = HistoryIntegrityChecker::new(ws.gate.store()).check()?;
    writeln!(
        out,
        "history: {} problem(s); {} path(s) changed since their last record",
        integrity.problems(),
        integrity.current_differs.len()
    )?;
    if integrity.problems() > 0 {
        problems += 1;
        writeln!(out, "{integrity:#?}")?;
    }
    Ok(u8::from(problems > 0))
}
