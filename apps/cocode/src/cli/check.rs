//! Headless commands (no window): `cocode verify` and `cocode doctor` (each `--workspace DIR`).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use cocode_core::ids::{AttemptNo, TaskId};
use cocode_core::process::Confinement;
use cocode_core::services::{VerificationRequest, VerificationRunner};
use cocode_core::verification::{VerificationOutcome, VerificationVerdict};
use cocode_toolchain::PolicyProxy;
use cocode_toolchain::verify::OrchestratingVerificationRunner;

use cocode_workspace::{HistoryIntegrityChecker, IntegrityReport, OpenWorkspace};
use tokio::runtime::Handle;

/// Where the window's logs and the crash reports are.
fn own_files(out: &mut dyn Write) -> anyhow::Result<()> {
    let Some(data) = crate::host::crash::data_dir() else {
        writeln!(out, "logs: no per-user data folder on this system")?;
        return Ok(());
    };
    writeln!(
        out,
        "logs: {} (the window's, a file a day, the last 7 kept)",
        crate::host::crash::log_dir(&data).display()
    )?;
    let crashes = crate::host::crash::crash_dir(&data);
    let unseen = crate::host::crash::unseen(&crashes).len();
    writeln!(
        out,
        "crash reports: {}{}",
        crashes.display(),
        match unseen {
            0 => String::new(),
            1 => " (1 not yet shown)".to_owned(),
            n => format!(" ({n} not yet shown)"),
        }
    )?;
    Ok(())
}

/// Runs self-verification over the whole workspace and prints each
/// method's outcome in words with what it found (`--json`: one record per
/// line), then the verdict. Exit code 0 pass, 1 fail, 2 when the
/// records cannot complete a task.
/// One record in words: the method, its outcome with counts and exit code,
/// what it found, and the output's failing lines when it named nothing.
fn print_record(
    record: &cocode_core::verification::VerificationRecord,
    excerpt: Option<&str>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let facts = record.facts();
    let mut told = Vec::new();
    if let Some(counts) = facts.diagnostics_count {
        told.push(format!(
            "{} error(s), {} warning(s)",
            counts.error, counts.warning
        ));
    }
    if let Some(code) = facts.exit_code {
        told.push(format!("exit code {code}"));
    }
    let told = if told.is_empty() {
        String::new()
    } else {
        format!(" ({})", told.join(", "))
    };
    writeln!(
        out,
        "{}: {}{told}",
        record.method().phrase(),
        record.phrase()
    )?;
    let details = record.detail_lines();
    for line in &details {
        writeln!(out, "    {line}")?;
    }
    // The output's failing lines when nothing more precise was found.
    let named = !record.findings().is_empty();
    for line in excerpt.iter().filter(|_| !named).flat_map(|e| e.lines()) {
        if line.is_empty() {
            writeln!(out, "    |")?;
        } else {
            writeln!(out, "    | {line}")?;
        }
    }
    Ok(())
}

/// Trusts each command the workspace's `verification` settings name,
/// printing it.
fn trust_verification(
    root: &Path,
    commands: &cocode_core::workspace::VerificationCommands,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    for method in cocode_core::verification::VerificationMethod::EXECUTION_ORDER {
        if let Some(command) = commands.for_method(method).filter(|c| !c.is_empty()) {
            crate::host::trust::trust_command(root, command)?;
            writeln!(
                out,
                "trusted in {}: {}: {}",
                root.display(),
                method.phrase(),
                cocode_core::shown::command(command)
            )?;
        }
    }
    Ok(())
}

/// With `trust`, the commands the workspace's `verification` settings name
/// are trusted first (each printed); without it, one not trusted yet is
/// not run and fails as "not trusted yet".
pub fn verify(
    dir: &Path,
    json: bool,
    trust: bool,
    rt: &Handle,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let ws = OpenWorkspace::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    let root = ws.workspace.root.clone();
    let commands = ws.config.verification.clone();
    if trust {
        trust_verification(&root, &commands, out)?;
    }
    let untrusted = crate::host::trust::untrusted_verification(&root, &commands);
    let hosts = crate::host::workspace_host::allowed_hosts(&ws, &ws.config.allowed_hosts);
    let records = rt.block_on(async {
        let proxy =
            Arc::new(PolicyProxy::start(cocode_toolchain::allowed::policy_for(&hosts, &[])).await?);
        let launcher = crate::host::root::workspace_launcher(
            Handle::current(),
            root.clone(),
            Arc::clone(&proxy),
        );
        let blocked = Arc::clone(&proxy);
        let runner = OrchestratingVerificationRunner::new(
            Arc::new(launcher),
            cocode_toolchain::parsers::builtin_registry()?,
            ws.config.limits,
            Arc::new(move |t| blocked.blocked_hosts(t).len()),
        );
        let task = TaskId::new("cli-verify")?;
        let req = VerificationRequest {
            task_id: task.clone(),
            attempt_no: AttemptNo(0),
            workspace_root: root.clone(),
            edited_paths: Vec::new(),
            commands,
            untrusted,
        };
        let records = runner.verify(req).await?;
        // What each failed method printed, for the words below.
        let excerpts: Vec<Option<String>> = records
            .iter()
            .map(|r| {
                match (
                    r.outcome(),
                    runner.raw_output(&task, AttemptNo(0), r.method()),
                ) {
                    (
                        VerificationOutcome::Fail(_),
                        cocode_toolchain::verify::RawNotice::Present(bytes),
                    ) => Some(cocode_toolchain::verify::failure_excerpt(
                        &String::from_utf8_lossy(&bytes),
                        40,
                        4000,
                    )),
                    _ => None,
                }
            })
            .collect();
        anyhow::Ok((records, excerpts))
    })?;
    let (records, excerpts) = records;
    for (record, excerpt) in records.iter().zip(&excerpts) {
        if json {
            writeln!(out, "{}", serde_json::to_string(record)?)?;
            continue;
        }
        print_record(record, excerpt.as_deref(), out)?;
    }
    let verdict = VerificationVerdict::evaluate(&records, AttemptNo(0));
    writeln!(out, "verdict: {}", verdict.phrase())?;
    Ok(match verdict {
        VerificationVerdict::Pass => 0,
        VerificationVerdict::Fail { .. } => 1,
        VerificationVerdict::NotCompletable(_) => 2,
    })
}

/// Checks the machine and the workspace's history; exit code 1 on problems.
pub fn doctor(dir: &Path, rt: &Handle, out: &mut dyn Write) -> anyhow::Result<u8> {
    // A folder cocode has not worked in is only looked at: nothing is
    // created there.
    let folder =
        cocode_workspace::peek(dir).with_context(|| format!("reading {}", dir.display()))?;
    let ws = if folder.has_history {
        Some(OpenWorkspace::open(dir).with_context(|| format!("opening {}", dir.display()))?)
    } else {
        None
    };
    let report = rt.block_on(cocode_toolchain::doctor::check());
    let mut problems = 0u8;
    agent_protections(&folder.root, ws.as_ref(), &report.confinement, out)?;
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
    own_files(out)?;
    let Some(ws) = ws else {
        writeln!(
            out,
            "history: none — cocode has not worked in this folder yet (its first task starts it)"
        )?;
        return Ok(u8::from(problems > 0));
    };
    // Recovery (as any start of cocode runs it) finds the paths an
    // interrupted operation left in neither their old nor their new state —
    // unless another process writes the workspace now: its journals are
    // live, not leftovers.
    let writer = match ws.lock_for_writing(&crate::host::workspace_host::holder_description()) {
        Ok(lock) => Some(lock),
        Err(cocode_workspace::OpenError::Busy { holder }) => {
            writeln!(
                out,
                "recovery: not run — the workspace is open for writing in another cocode process ({holder})"
            )?;
            None
        }
        Err(e) => return Err(e.into()),
    };
    let recovery = if writer.is_some() {
        ws.gate
            .recover()
            .context("recovering interrupted operations")?
    } else {
        cocode_workspace::RecoveryReport::default()
    };
    let mut blocked: Vec<(String, String)> = ws
        .gate
        .blocked_paths()
        .into_iter()
        .map(|(path, op)| (path.to_string(), op.to_string()))
        .chain(
            recovery
                .rollbacks_incomplete
                .iter()
                .map(|(op, path)| (path.to_string(), op.to_string())),
        )
        .collect();
    blocked.sort();
    blocked.dedup();
    if blocked.is_empty() {
        writeln!(out, "blocked paths: none")?;
    } else {
        problems += 1;
        writeln!(
            out,
            "blocked paths: {} (an interrupted operation left them in neither their old nor their new state)",
            blocked.len()
        )?;
        for (path, op) in &blocked {
            writeln!(
                out,
                "  {path} — journal {op}; keep the file as it is now with: cocode doctor --abandon {op} --workspace {}",
                dir.display()
            )?;
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
        for line in integrity_problems(&integrity) {
            writeln!(out, "  {line}")?;
        }
    }
    Ok(u8::from(problems > 0))
}

/// How agent commands are kept in their lane here: the confinement and
/// each protection, the workspace's refused top-level links and the hosts
/// held for a person.
fn agent_protections(
    root: &Path,
    ws: Option<&OpenWorkspace>,
    confinement: &Confinement,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    match confinement {
        Confinement::Landlock => writeln!(
            out,
            "confinement: Landlock (writes and connections of agent commands are confined)"
        )?,
        Confinement::Seatbelt => writeln!(out, "confinement: Seatbelt")?,
        Confinement::Unconfined { reason } => writeln!(out, "confinement: none — {reason}")?,
    }
    for line in protection_lines(
        confinement,
        cocode_toolchain::confine::protections(),
        cocode_platform::seal::undumpable(),
    ) {
        writeln!(out, "{line}")?;
    }
    let grants = cocode_toolchain::confine::workspace_grants(root);
    if grants.refused.is_empty() {
        writeln!(out, "top-level links: none refused")?;
    } else {
        writeln!(
            out,
            "top-level links: {} not writable by agent commands",
            grants.refused.len()
        )?;
        for link in &grants.refused {
            writeln!(
                out,
                "  {} → {} ({})",
                link.path.display(),
                link.target.display(),
                link.reason.phrase()
            )?;
        }
    }
    let Some(ws) = ws else {
        return Ok(());
    };
    let hosts = crate::host::workspace_host::allowed_hosts(ws, &ws.config.allowed_hosts);
    if hosts.held.is_empty() {
        writeln!(out, "hosts held for a person: none")?;
    } else {
        writeln!(
            out,
            "hosts held for a person: {} (named in a lockfile by an agent task's edit; allow them in allowed_hosts of .cocode/config/workspace.json)",
            hosts.held.len()
        )?;
        for held in &hosts.held {
            writeln!(
                out,
                "  {} — in {}, by task {}",
                held.host, held.file, held.task
            )?;
        }
    }
    Ok(())
}

/// Whether Ubuntu's AppArmor refuses unprivileged user namespaces to
/// programs without a profile (Ubuntu 24.04 and later).
fn apparmor_restricts_userns() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
        .is_ok_and(|v| v.trim() == "1")
}

/// Why agent commands get no namespaces of their own here.
fn no_namespaces_reason(apparmor_restricts: bool) -> &'static str {
    if apparmor_restricts {
        "AppArmor refuses user namespaces to this program (kernel.apparmor_restrict_unprivileged_userns = 1); the .deb installs a profile that allows them for /usr/bin/cocode, and install.sh prints how an administrator installs one for its install"
    } else {
        "this system does not let cocode make user namespaces"
    }
}

/// The protections of agent commands on this machine, one line each, as
/// active or not.
fn protection_lines(
    confinement: &Confinement,
    protections: cocode_toolchain::confine::Protections,
    undumpable: bool,
) -> Vec<String> {
    let state = |on: bool| if on { "active" } else { "not active" };
    let confined = !matches!(confinement, Confinement::Unconfined { .. });
    let protected = cocode_toolchain::confine::PROTECTED.join(", ");
    let mut lines = vec![
        if protections.metadata_mounts && confined {
            format!(
                "read-only to agent commands: active — {protected} at any depth, bound read-only in each command's mount namespace; the rest of the workspace, its root included, is writable (new files at the root work)"
            )
        } else if confined {
            format!(
                "read-only to agent commands: active — {protected} at the top level, and top-level links that point out of the workspace; without mount namespaces here, only existing top-level entries are writable, so a command cannot create a new file at the workspace root"
            )
        } else {
            format!(
                "read-only to agent commands: not active — {protected} are not protected from agent commands"
            )
        },
        format!("private temp folder per agent command: {}", state(confined)),
    ];
    if cfg!(target_os = "linux") {
        lines.push(format!(
            "socket filter (only TCP and Unix stream sockets; no UDP, raw or netlink sockets, no Unix datagrams): {}",
            state(protections.socket_filter && confined)
        ));
        lines.push(format!(
            "no hard links and no opening files by handle (a write through another name would go unrecorded): {}",
            state(protections.socket_filter && confined)
        ));
        lines.push(format!(
            "scoping (no abstract Unix sockets, no signals to processes outside a command): {}",
            state(protections.scoping && confined)
        ));
        lines.push(format!(
            "connections decided by cocode (Unix sockets only in folders the command may write; TCP only to the proxy): {}",
            state(protections.connect_broker && confined)
        ));
        lines.push(format!(
            "command lifetime (a PID namespace per agent command; nothing it starts outlives it or cocode): {}",
            if protections.pid_namespace {
                "active".to_owned()
            } else {
                format!("not active — {}", no_namespaces_reason(apparmor_restricts_userns()))
            }
        ));
        lines.push(format!(
            "processes out of sight (a private /proc per agent command; cocode, its parent and other users' processes are not visible): {}",
            if protections.private_proc {
                "active"
            } else {
                "not active — an agent command can list other processes in /proc and read what their owner may read"
            }
        ));
        lines.push(format!(
            "the person's sockets (session bus, ssh and gpg agents, displays, container engines) hidden from agent commands: {}",
            state(protections.pid_namespace)
        ));
        lines.push(format!(
            "pseudo-terminals of its own per agent command (a private devpts; none of the person's): {}",
            state(protections.pid_namespace && confined)
        ));
        lines.push(format!(
            "cocode's own environment sealed (undumpable, keys taken out): {}",
            state(undumpable)
        ));
        let network = "network (a namespace per agent command with only loopback and the proxy in it; no other address answers)";
        lines.push(if protections.pid_namespace {
            format!("{network}: active")
        } else if protections.connect_broker && confined {
            format!("{network}: not active — cocode still refuses every connection but the proxy's")
        } else {
            format!("{network}: not active — TCP to another address on the proxy's port is not prevented (the kernel checks the port only)")
        });
    }
    lines
}

/// `cocode doctor --abandon JOURNAL`: a person accepts the current state of
/// the paths an interrupted operation's journal names. The journal moves to
/// the history's `abandoned` folder (kept, never deleted) and the paths can
/// be written again.
pub fn abandon(dir: &Path, journal: &str, out: &mut dyn Write) -> anyhow::Result<u8> {
    let ws = OpenWorkspace::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    let _writer = ws.lock_for_writing(&crate::host::workspace_host::holder_description())?;
    let op = cocode_core::OpId::new(journal)
        .with_context(|| format!("“{journal}” is not a journal id"))?;
    ws.gate
        .recover()
        .context("recovering interrupted operations")?;
    let is_write = ws.gate.blocked_paths().iter().any(|(_, o)| *o == op);
    let released = if is_write {
        ws.gate.abandon_write_journal(&op)?
    } else {
        ws.gate.abandon_pending_journal(&op).map_err(|e| {
            anyhow::anyhow!(
                "no interrupted operation {op} blocks a path here (`cocode doctor --workspace {}` lists them): {e}",
                dir.display()
            )
        })?
    };
    let paths: Vec<String> = released.iter().map(ToString::to_string).collect();
    writeln!(
        out,
        "released {}: kept as {} now",
        paths.join(", "),
        if paths.len() == 1 {
            "it is"
        } else {
            "they are"
        }
    )?;
    writeln!(
        out,
        "journal {op} is kept in the history's abandoned folder"
    )?;
    Ok(0)
}

/// Each problem of a history check as a line a person reads.
fn integrity_problems(report: &IntegrityReport) -> Vec<String> {
    fn words<T: std::fmt::Display>(items: &[T]) -> Vec<String> {
        items.iter().map(ToString::to_string).collect()
    }
    let paths = |items: &[std::path::PathBuf]| -> Vec<String> {
        items.iter().map(|p| p.display().to_string()).collect()
    };
    [
        (
            "snapshots listed by their task but not by their path",
            words(&report.only_in_task_index),
        ),
        (
            "snapshots listed by their path but not by their task",
            words(&report.only_in_path_index),
        ),
        (
            "stored contents that are missing",
            words(&report.missing_blobs),
        ),
        (
            "stored contents that are damaged",
            words(&report.corrupt_blobs),
        ),
        (
            "files in the object store that are not contents",
            paths(&report.stray_objects),
        ),
        (
            "indexes that cannot be read",
            report.unreadable_indexes.clone(),
        ),
        (
            "interrupted operations waiting for recovery",
            paths(&report.pending_journals),
        ),
    ]
    .into_iter()
    .filter(|(_, items)| !items.is_empty())
    .map(|(what, items)| format!("{what}: {}", items.join(", ")))
    .collect()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Without namespaces, the doctor names what it lost, and why: Ubuntu's
    /// AppArmor restriction is named with the way out.
    #[test]
    fn without_namespaces_the_doctor_says_which_protections_are_off_and_why() {
        let none = cocode_toolchain::confine::Protections {
            socket_filter: true,
            scoping: true,
            pid_namespace: false,
            connect_broker: true,
            metadata_mounts: false,
            private_proc: false,
        };
        let lines = protection_lines(&Confinement::Landlock, none, true);
        let line = |label: &str| {
            lines
                .iter()
                .find(|l| l.starts_with(label))
                .unwrap_or_else(|| panic!("{label}: {lines:#?}"))
                .clone()
        };
        assert!(line("read-only to agent commands").contains(
            "without mount namespaces here, only existing top-level entries are writable"
        ));
        assert!(
            line("processes out of sight").ends_with(
                ": not active — an agent command can list other processes in /proc and read what their owner may read"
            )
        );
        assert!(line("command lifetime").contains(": not active — "));
        assert_eq!(
            no_namespaces_reason(true),
            "AppArmor refuses user namespaces to this program (kernel.apparmor_restrict_unprivileged_userns = 1); the .deb installs a profile that allows them for /usr/bin/cocode, and install.sh prints how an administrator installs one for its install"
        );
        assert_eq!(
            no_namespaces_reason(false),
            "this system does not let cocode make user namespaces"
        );
    }
}
