//! `cocode task …` and `cocode tools …`: the headless front end of the
//! same host the window uses.

use std::fmt::Write as _;
use std::io::{BufRead as _, IsTerminal as _, Write};
use std::path::Path;
use std::sync::Arc;

use crate::host::tools::{CatalogFormat, catalog_json};
use anyhow::{Context as _, bail};
use cocode_agent::{LlmProviderRegistry, LoopLimits, RetryPolicy};
use cocode_core::services::{CredentialVault, Secret};
use cocode_core::task::{CompletionModePolicy, TaskBackend};
use cocode_core::{
    CompletionMode, DelegatedTask, PendingApprovalKind, ProviderId, TaskId, TaskStatus,
};
use cocode_tool_protocol::{ApprovalDecision, ApprovalEvent};
use cocode_toolchain::vault::{LayeredVault, SessionVault};

use crate::host::root::HostRoot;
use cocode_workspace::OpenWorkspace;
use tokio::sync::mpsc;

use crate::cli::args::{ApprovalFlags, TaskCommand, ToolsCommand};
use crate::host::backend::backend_of;
use crate::host::orchestrator::{
    Decision, Reply, TaskApprover, TaskOrchestrator, TaskSpec, describe_end,
};
use crate::host::progress::print_progress;
use crate::host::records::{load_all, load_task_record};
use crate::host::workspace_host::{HostOptions, WorkspaceHost};

/// Asks on the terminal; without one, answers no.
fn ask_terminal(question: &str) -> bool {
    if !std::io::stdin().is_terminal() {
        return false;
    }
    eprint!("{question} [y/N] ");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).is_ok()
        && matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// A question for the person, asked on the terminal by the run's printer
/// once everything said before it is printed; the answer comes back.
type Ask = (String, tokio::sync::oneshot::Sender<bool>);

/// Asks `question` through the printer; no answer is a no.
async fn ask_in_order(asks: &mpsc::UnboundedSender<Ask>, question: String) -> bool {
    let (answer, answered) = tokio::sync::oneshot::channel();
    if asks.send((question, answer)).is_err() {
        return false;
    }
    answered.await.unwrap_or(false)
}

/// Task-level approvals of a headless run, and (with `--interactive`) the
/// person's replies read from standard input.
#[derive(Debug, Clone)]
struct FlagApprover(ApprovalFlags, bool, mpsc::UnboundedSender<Ask>);

#[async_trait::async_trait]
impl TaskApprover for FlagApprover {
    async fn decide(&self, task: &DelegatedTask, kind: PendingApprovalKind) -> Decision {
        if self.0.yes {
            return Decision::Approve;
        }
        if self.0.deny_all {
            return Decision::Reject;
        }
        if !std::io::stdin().is_terminal() {
            return Decision::Defer;
        }
        let question = crate::host::orchestrator::approval_question(task, kind);
        // After what came before it (the verification results).
        if ask_in_order(&self.2, question).await {
            Decision::Approve
        } else {
            Decision::Reject
        }
    }

    fn converses(&self) -> bool {
        self.1
    }

    async fn reply(&self, task: &DelegatedTask) -> Reply {
        // An external agent cannot say it is done: an empty line is the
        // person saying so. The built-in agent's unfinished turn ends.
        let external = matches!(task.backend(), TaskBackend::Acp { .. });
        eprint!(
            "{}",
            if external {
                "your reply (an empty line verifies the work): "
            } else {
                "your reply (an empty line ends the task): "
            }
        );
        let line = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line).map(|_| line)
        })
        .await;
        match line {
            // As Codex's: compact the conversation, then asked again.
            Ok(Ok(line)) if line.trim() == "/compact" && !external => Reply::Compact,
            Ok(Ok(line)) if !line.trim().is_empty() => Reply::Message(line.trim().to_owned()),
            Ok(Ok(_)) if external => Reply::FinishAndVerify,
            _ => Reply::End,
        }
    }
}

/// Answers the tool approval queue for the whole run.
fn answer_tool_approvals(
    host: &WorkspaceHost,
    flags: ApprovalFlags,
    asks: mpsc::UnboundedSender<Ask>,
) {
    let queue = Arc::clone(host.tools.approvals());
    let mut events = queue.subscribe();
    tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            let ApprovalEvent::Requested(snapshot) = event else {
                continue;
            };
            let decision = if flags.yes || flags.approve_all_edits {
                ApprovalDecision::Approve
            } else if flags.deny_all {
                ApprovalDecision::Deny
            } else {
                // An external agent's own question, with its own answers;
                // else the tool and what it is called with.
                let question =
                    agent_question(&snapshot.safe_argument_summary).unwrap_or_else(|| {
                        format!(
                            "Allow {} {}?",
                            snapshot.tool, snapshot.safe_argument_summary
                        )
                    });
                if ask_in_order(&asks, question).await {
                    ApprovalDecision::Approve
                } else {
                    ApprovalDecision::Deny
                }
            };
            queue.resolve(snapshot.id, decision);
        }
    });
}

/// An external agent's permission request as a question in its own words:
/// `The agent asks: Writing to out.txt — y: Allow once, n: Reject?` (the
/// first allowing and the first refusing answer it offers).
fn agent_question(summary: &serde_json::Value) -> Option<String> {
    let title = summary.get("title")?.as_str()?;
    let options = summary.get("options")?.as_array()?;
    let named = |kinds: &[&str]| {
        options.iter().find_map(|o| {
            let kind = o.get("kind")?.as_str()?;
            kinds
                .contains(&kind)
                .then(|| o.get("name")?.as_str().map(str::to_owned))
                .flatten()
        })
    };
    let allow = named(&["allow_once", "allow_always"]).unwrap_or_else(|| "allow".to_owned());
    let reject = named(&["reject_once", "reject_always"]).unwrap_or_else(|| "refuse".to_owned());
    Some(format!(
        "The agent asks: {title} — y: {allow}, n: {reject}?"
    ))
}

/// Exit code of a finished run: 0 completed, 3 awaiting approval, 1 otherwise.
pub fn exit_code(task: &DelegatedTask) -> u8 {
    match task.status() {
        TaskStatus::Completed => 0,
        TaskStatus::AwaitingApproval => 3,
        _ => 1,
    }
}

/// `--pass-env NAME`: the chosen ACP agent's declared secret variable,
/// from cocode's own environment, for this run only. Anything else is an
/// error — a credential never reaches an agent that did not declare it.
fn pass_secrets(
    host: &WorkspaceHost,
    backend: &TaskBackend,
    names: &[String],
    run: &SessionVault,
) -> anyhow::Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    let TaskBackend::Acp { agent_id } = backend else {
        bail!("--pass-env is for ACP agents (--backend acp:NAME)");
    };
    let agent = host
        .acp
        .agent(agent_id)
        .with_context(|| format!("no ACP agent {agent_id} is configured"))?;
    for name in names {
        if !agent.secret_env.contains(name) {
            bail!(
                "--pass-env {name}: {} declares no such secret variable (it declares: {})",
                agent.display_name,
                if agent.secret_env.is_empty() {
                    "none".to_owned()
                } else {
                    agent.secret_env.join(", ")
                }
            );
        }
        let value = crate::host::secrets::var(name)
            .with_context(|| format!("--pass-env: {name} is not set"))?;
        run.set(
            &cocode_acp::registry::secret_account(agent_id, name)?,
            &Secret::new(value),
        )?;
    }
    Ok(())
}

/// The hosts the policy proxy refused during the run, with where to allow
/// them.
fn print_blocked(
    host: &WorkspaceHost,
    task: &DelegatedTask,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let blocked = host.proxy.blocked_hosts(task.task_id());
    if !blocked.is_empty() {
        let places = host.proxy.blocked_places(task.task_id()).join(", ");
        if let TaskBackend::Acp { agent_id } = task.backend() {
            writeln!(
                out,
                "blocked hosts: {places} (the agent's own model API: model_hosts of its entry “{agent_id}” in acp_agents; its commands: allowed_hosts; both in .cocode/config/workspace.json)"
            )?;
        } else {
            writeln!(
                out,
                "blocked hosts: {places} (allow them in allowed_hosts of .cocode/config/workspace.json)"
            )?;
        }
        for (name, why) in host.held_reasons(&blocked) {
            writeln!(out, "  {name}: {why}")?;
        }
    }
    Ok(())
}

/// What the folder's own `workspace.json` grants that the person has not
/// confirmed: allowed (and remembered) with `--trust-workspace`, else the
/// run is refused, naming each grant.
fn confirm_grants(host: &WorkspaceHost, trust: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let pending = host.pending_grants();
    if pending.is_empty() {
        return Ok(());
    }
    let words: Vec<String> = pending
        .iter()
        .map(crate::host::trust::Grant::words)
        .collect();
    if !trust {
        bail!(
            "this folder's .cocode/config/workspace.json grants what you have not confirmed:\n  {}\nRun again with --trust-workspace to allow it (remembered for this folder), or take it out of workspace.json",
            words.join("\n  ")
        );
    }
    let decisions: Vec<_> = pending.into_iter().map(|g| (g, true)).collect();
    host.decide_grants(&decisions)?;
    writeln!(out, "allowed for this folder: {}", words.join("; "))?;
    Ok(())
}

#[expect(clippy::too_many_arguments, reason = "the CLI's flags, passed through")]
fn run_task(
    workspace: &Path,
    prompt: &str,
    backend: &str,
    model: Option<&str>,
    completion_mode: Option<&str>,
    base_url: Option<&str>,
    api_key_env: Option<&str>,
    pass_env: &[String],
    (flags, interactive, trust): (ApprovalFlags, bool, bool),
    root: &HostRoot,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let rt = root.runtime();
    // The person's provider settings, as the window uses them (addresses,
    // context windows, prices); `--base-url` goes over them.
    let settings = match crate::host::provider_settings::settings_file() {
        Some(file) => crate::host::provider_settings::ProviderSettings::load(&file)?,
        None => crate::host::provider_settings::ProviderSettings::default(),
    };
    let mut providers = settings.registry()?.providers().to_vec();
    if let Some(url) = base_url {
        let Some(p) = providers.iter_mut().find(|p| p.id.as_str() == backend) else {
            bail!("--base-url needs a provider backend, not “{backend}”");
        };
        p.base_url = Some(url.to_owned());
    }
    let providers = LlmProviderRegistry::new(providers)?;
    let backend_choice = backend_of(backend, model, &providers)?;
    let vault: Arc<dyn CredentialVault> = match api_key_env {
        Some(name) => {
            let key = crate::host::secrets::var(name)
                .with_context(|| format!("--api-key-env: {name} is not set"))?;
            let session = SessionVault::default();
            let id = ProviderId::new(backend).with_context(|| {
                format!("--api-key-env needs a provider backend, not “{backend}”")
            })?;
            session.set(&id, &Secret::new(key))?;
            Arc::new(session)
        }
        None => root.credentials(),
    };
    let passed = Arc::new(SessionVault::default());
    let vault: Arc<dyn CredentialVault> = Arc::new(LayeredVault {
        run: Arc::clone(&passed),
        store: vault,
    });
    rt.block_on(async {
        let host = Arc::new(
            WorkspaceHost::open_with_clock(
                workspace,
                HostOptions {
                    vault,
                    providers,
                    retry: RetryPolicy::default(),
                    limits: LoopLimits::default(),
                    documents: Arc::new(cocode_editor::OpenDocuments::new()),
                    lsp: None,
                },
                root.clock(),
            )
            .await?,
        );
        confirm_grants(&host, trust, out)?;
        let mode = match completion_mode {
            None => CompletionModePolicy::decide(host.workspace.config.completion_mode),
            Some("self_verification") => CompletionMode::SelfVerification,
            Some("human_approval") => CompletionMode::HumanApproval,
            Some(other) => {
                bail!("--completion-mode “{other}”: use self_verification or human_approval")
            }
        };
        pass_secrets(&host, &backend_choice, pass_env, &passed)?;
        let (asks, mut questions) = mpsc::unbounded_channel::<Ask>();
        answer_tool_approvals(&host, flags, asks.clone());
        let orchestrator = TaskOrchestrator::new(Arc::clone(&host));
        for id in orchestrator.fail_interrupted()? {
            writeln!(
                out,
                "task {id} was interrupted earlier and is marked failed"
            )?;
        }
        let (tx, mut rx) = mpsc::unbounded_channel();
        let approver = FlagApprover(flags, interactive, asks);
        let spec = TaskSpec {
            prompt: prompt.to_owned(),
            backend: backend_choice,
            completion_mode: mode,
        };
        let stop = tokio_util::sync::CancellationToken::new();
        let interrupts = tokio::spawn(stop_on_interrupt(stop.clone()));
        let running = async move {
            let result = orchestrator.run(spec, &approver, &tx, stop).await;
            drop(tx);
            interrupts.abort();
            result
        };
        let printing = print_run(&mut rx, &mut questions, out);
        let (task, printed) = tokio::join!(running, printing);
        printed?;
        let task = task?;
        print_blocked(&host, &task, out)?;
        writeln!(out, "task {}: {}", task.task_id(), describe_end(&task))?;
        host.workspace.gate.process_ends_after_close();
        anyhow::Ok(exit_code(&task))
    })
}

/// Prints a run's progress until it ends. A question is asked once
/// everything said before it is printed, so it never cuts into the output.
async fn print_run(
    rx: &mut mpsc::UnboundedReceiver<crate::host::orchestrator::Progress>,
    questions: &mut mpsc::UnboundedReceiver<Ask>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut streaming = false;
    loop {
        tokio::select! {
            biased;
            p = rx.recv() => match p {
                Some(p) => print_progress(&p, out, &mut streaming)?,
                None => break,
            },
            Some((question, answer)) = questions.recv() => {
                while let Ok(p) = rx.try_recv() {
                    print_progress(&p, out, &mut streaming)?;
                }
                if std::mem::take(&mut streaming) {
                    writeln!(out)?;
                }
                out.flush()?;
                let yes = tokio::task::spawn_blocking(move || ask_terminal(&question))
                    .await
                    .unwrap_or(false);
                let _ = answer.send(yes);
            }
        }
    }
    if streaming {
        writeln!(out)?;
    }
    Ok(())
}

/// Ctrl-C or `SIGTERM` stops the task as a person's stop does: the agent
/// is asked to cancel, given its grace, then ended with every process it
/// started, and the task is saved as stopped. A second one ends cocode at
/// once (the launcher's keepers end every agent process with it).
async fn stop_on_interrupt(stop: tokio_util::sync::CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut interrupt), Ok(mut terminate)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        eprintln!("stopping the task (interrupt again to quit at once)");
        stop.cancel();
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        std::process::exit(130);
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("stopping the task (interrupt again to quit at once)");
            stop.cancel();
        }
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(130);
        }
    }
}

fn show(workspace: &Path, id: &str, json: bool, out: &mut dyn Write) -> anyhow::Result<u8> {
    let ws = OpenWorkspace::open(workspace)
        .with_context(|| format!("opening {}", workspace.display()))?;
    let id = TaskId::new(id).with_context(|| format!("“{id}” is not a task id"))?;
    if !ws.layout.task_record(&id).is_file() {
        bail!("no task {id} in this workspace");
    }
    settle_if_free(&ws)?;
    let task = load_task_record(&ws, &id)?;
    let snapshots = ws.gate.store().snapshots_of_task(&id)?;
    let unrecorded = ws.gate.unrecorded_reason(&id);
    let started = crate::host::records::started_on(&ws, &id);
    let models = crate::host::records::models_answered(&ws, &id);
    let instructions = crate::host::instructions::given(&ws, &id);
    let spent = crate::host::records::usage(&ws, &id);
    if json {
        let value = serde_json::json!({
            "task": task,
            "started_on": started,
            "models_answered": models,
            "instructions": instructions.as_ref().map(|g| &g.files),
            "usage": spent,
            "snapshots": snapshots,
            "not_fully_recorded": unrecorded,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        write!(
            out,
            "{}",
            describe_task(
                &task,
                &TaskFacts {
                    started: started.as_ref(),
                    models: models.as_ref(),
                    instructions: instructions.as_ref(),
                    spent,
                },
                &snapshots
            )
        )?;
        if let Some(reason) = unrecorded {
            writeln!(
                out,
                "not fully recorded: {reason}; a rollback of this task is refused"
            )?;
        }
    }
    Ok(0)
}

/// Settles what a cocode that ended left (a command it ended during is
/// recorded with its task) when no other process writes the workspace; a
/// live writer settles its own. Only when such a command was left: the
/// writer lock is never taken otherwise, so a run starting meanwhile is
/// never refused because someone listed the tasks.
fn settle_if_free(ws: &OpenWorkspace) -> anyhow::Result<()> {
    let left = std::fs::read_dir(ws.layout.sweep_journal_dir())
        .is_ok_and(|mut entries| entries.next().is_some());
    if !left {
        return Ok(());
    }
    if let Ok(_writer) = ws.lock_for_writing(&crate::host::workspace_host::holder_description()) {
        ws.gate
            .recover()
            .context("recovering interrupted operations")?;
    }
    Ok(())
}

/// A task as a person reads it: what was asked, who did it, where it
/// stands, what verification said and what changed.
/// What a task's record says beside the task itself.
#[derive(Debug, Default)]
pub struct TaskFacts<'a> {
    pub started: Option<&'a crate::host::records::StartedOn>,
    pub models: Option<&'a crate::host::records::ModelsAnswered>,
    pub instructions: Option<&'a crate::host::instructions::GivenRecord>,
    pub spent: Option<crate::host::spent::Spent>,
}

pub fn describe_task(
    task: &DelegatedTask,
    facts: &TaskFacts<'_>,
    snapshots: &[cocode_core::EditSnapshot],
) -> String {
    let TaskFacts {
        started,
        models,
        instructions,
        spent,
    } = facts;
    let mut text = String::new();
    let backend = match task.backend() {
        TaskBackend::Local => "the local agent".to_owned(),
        TaskBackend::BuiltIn { provider, model } => format!("{provider}, model {model}"),
        TaskBackend::Acp { agent_id } => format!("external agent {agent_id}"),
    };
    let _ = writeln!(text, "task {}", task.task_id());
    let _ = writeln!(text, "  asked:    {}", task.prompt());
    let _ = writeln!(text, "  agent:    {backend}");
    if let Some(models) = models {
        let _ = writeln!(text, "  model:    {}", models.words());
    }
    if let Some(given) = instructions.filter(|g| !g.files.is_empty()) {
        let _ = writeln!(text, "  instructions: {}", given.files.join(", "));
    }
    if let Some(spent) = spent {
        let _ = writeln!(text, "  spent:    {}", spent.words());
    }
    if let Some(started) = started {
        let _ = writeln!(text, "  git:      started on {}", started.words());
    }
    let _ = writeln!(text, "  status:   {}", describe_end(task));
    let _ = writeln!(text, "  mode:     {}", task.completion_mode().phrase());
    let _ = writeln!(
        text,
        "  attempt:  {} · retries used: {}",
        task.attempt_no().ordinal(),
        task.retry_count()
    );
    if task.verification_log().is_empty() {
        let _ = writeln!(text, "  verification: nothing recorded");
    } else {
        let _ = writeln!(text, "  verification:");
        for r in task.verification_log() {
            let _ = writeln!(
                text,
                "    attempt {} · {} · {}",
                r.attempt_no().ordinal(),
                r.method().phrase(),
                r.phrase()
            );
            for line in r.detail_lines() {
                let _ = writeln!(text, "      {line}");
            }
        }
    }
    if snapshots.is_empty() {
        let _ = writeln!(text, "  changes: none");
    } else {
        let _ = writeln!(text, "  changes:");
        for s in snapshots {
            let parts = s.parts();
            let renamed = parts
                .previous_path
                .as_ref()
                .map(|from| format!(" (from {})", cocode_core::shown::line(from.as_str())))
                .unwrap_or_default();
            let unkept = match (parts.unkept.base, parts.unkept.result) {
                (false, false) => "",
                (true, false) => " · too large to keep before",
                (false, true) => " · too large to keep after",
                (true, true) => " · too large to keep",
            };
            // What a side is when not a plain file (a link, a FIFO, mode
            // bits), from what it was to what it became.
            let side =
                |hash: Option<cocode_core::ContentHash>,
                 form: Option<cocode_core::snapshot::Form>| match (hash, form) {
                    (None, _) => "nothing".to_owned(),
                    (Some(_), None) => "a file".to_owned(),
                    (Some(_), Some(form)) => form.phrase(),
                };
            let forms = if parts.forms.is_none() {
                String::new()
            } else {
                format!(
                    " · {} → {}",
                    side(parts.base, parts.forms.base),
                    side(parts.result, parts.forms.result)
                )
            };
            let _ = writeln!(
                text,
                "    {}. {} {}{renamed} · attempt {} · {}{unkept}{forms}",
                parts.seq.0,
                s.kind().phrase(),
                cocode_core::shown::line(parts.path.as_str()),
                parts.attempt_no.ordinal(),
                parts.origin.phrase()
            );
        }
    }
    text
}

fn list(workspace: &Path, out: &mut dyn Write) -> anyhow::Result<u8> {
    let ws = OpenWorkspace::open(workspace)
        .with_context(|| format!("opening {}", workspace.display()))?;
    settle_if_free(&ws)?;
    // A task whose runner died (killed, crashed) is shown as it is: failed.
    crate::host::orchestrator::fail_interrupted(&ws)?;
    let mut broken = 0u8;
    for record in load_all(&ws.layout) {
        match record {
            Ok(task) => {
                let prompt: String = task.prompt().chars().take(60).collect();
                writeln!(
                    out,
                    "{}\t{}\t{}",
                    task.task_id(),
                    describe_end(&task),
                    prompt
                )?;
            }
            Err(e) => {
                broken = 1;
                writeln!(out, "BROKEN\t{e:#}")?;
            }
        }
    }
    Ok(broken)
}

fn decide(
    workspace: &Path,
    id: &str,
    approve: bool,
    root: &HostRoot,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let rt = root.runtime();
    let id = TaskId::new(id).with_context(|| format!("“{id}” is not a task id"))?;
    rt.block_on(async {
        let host = Arc::new(
            WorkspaceHost::open_with_clock(
                workspace,
                HostOptions {
                    vault: Arc::new(SessionVault::default()),
                    providers: LlmProviderRegistry::with_presets()?,
                    retry: RetryPolicy::default(),
                    limits: LoopLimits::default(),
                    documents: Arc::new(cocode_editor::OpenDocuments::new()),
                    lsp: None,
                },
                root.clock(),
            )
            .await?,
        );
        let task = TaskOrchestrator::new(host).decide(&id, approve)?;
        writeln!(out, "task {}: {}", task.task_id(), describe_end(&task))?;
        anyhow::Ok(exit_code(&task))
    })
}

/// Runs `cocode task …`.
pub fn task_command(
    action: &TaskCommand,
    root: &HostRoot,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    match action {
        TaskCommand::Run {
            workspace,
            prompt,
            backend,
            model,
            completion_mode,
            base_url,
            api_key_env,
            pass_env,
            approvals,
            interactive,
            trust_workspace,
        } => run_task(
            workspace,
            prompt,
            backend,
            model.as_deref(),
            completion_mode.as_deref(),
            base_url.as_deref(),
            api_key_env.as_deref(),
            pass_env,
            (*approvals, *interactive, *trust_workspace),
            root,
            out,
        ),
        TaskCommand::List { workspace } => list(workspace, out),
        TaskCommand::Show {
            id,
            workspace,
            json,
        } => show(workspace, id, *json, out),
        TaskCommand::Approve { id, workspace } => decide(workspace, id, true, root, out),
        TaskCommand::Reject { id, workspace } => decide(workspace, id, false, root, out),
        TaskCommand::Review {
            id,
            workspace,
            scope,
            mark_reviewed,
            messages,
        } => {
            if *messages {
                crate::cli::review::messages(workspace, id, out)
            } else {
                crate::cli::review::review(workspace, id, *scope, *mark_reviewed, out)
            }
        }
        TaskCommand::Undo {
            id,
            workspace,
            path,
            hunk,
            scope,
        } => crate::cli::review::undo(workspace, id, path, *hunk, *scope, root, out),
    }
}

/// `cocode rollback`: undoes a task's edits atomically. A rollback to the
/// task's start also ends the task as `rolled_back`. Exit 0 when rolled
/// back (or nothing was left to undo), 1 when refused — conflicts are
/// listed and nothing was touched.
pub fn rollback(
    workspace: &Path,
    task: &str,
    (to_attempt, to_snapshot, to_message): (Option<u32>, Option<&str>, Option<usize>),
    yes: bool,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    use crate::host::review::{RollbackOutcome, RollbackTo, rollback};

    let ws = OpenWorkspace::open(workspace)
        .with_context(|| format!("opening {}", workspace.display()))?;
    // Never while another process writes the workspace (its task may be
    // running).
    let _writer = ws.lock_for_writing(&crate::host::workspace_host::holder_description())?;
    let id = TaskId::new(task).with_context(|| format!("“{task}” is not a task id"))?;
    if !ws.layout.task_record(&id).is_file() {
        bail!("no task {id} in this workspace");
    }
    let to = match (to_attempt, to_snapshot, to_message) {
        (Some(k), _, _) => RollbackTo::Attempt(k),
        // The seq names it in words only; the id finds it.
        (None, Some(s), _) => RollbackTo::Snapshot(s.to_owned(), 0),
        (None, None, Some(k)) => RollbackTo::Message(k),
        (None, None, None) => RollbackTo::Start,
    };
    let Some(query) = to.query(&ws, &id)? else {
        writeln!(out, "{}", to.nothing_after())?;
        return Ok(0);
    };
    // Files that changed while a command or the agent ran: cocode cannot
    // tell whether the task or someone else changed them. A person says
    // so before they are reverted.
    let unknown = crate::host::review::unknown_authors(&ws, &id, &query);
    if !unknown.is_empty() && !yes {
        writeln!(
            out,
            "{} path(s) changed while the task ran, and cocode cannot tell whether the task or someone else changed them; rolling back reverts them too:",
            unknown.len()
        )?;
        for path in &unknown {
            writeln!(out, "  {}", cocode_core::shown::line(path))?;
        }
        out.flush()?;
        // Without a terminal to ask on, no answer is a no.
        if !ask_terminal("Roll back anyway?") {
            writeln!(
                out,
                "rollback not run: nothing was touched (pass --yes to revert them too)"
            )?;
            return Ok(1);
        }
    }
    match rollback(&ws, &id, &query)? {
        RollbackOutcome::Done { restored, task } => {
            for (path, how) in &restored {
                writeln!(out, "{}", how.line(&cocode_core::shown::line(path)))?;
            }
            writeln!(out, "task {}: {}", task.task_id(), describe_end(&task))?;
            Ok(0)
        }
        RollbackOutcome::Conflicts(conflicts) => {
            for (path, reason) in &conflicts {
                writeln!(out, "conflict {}: {reason}", cocode_core::shown::line(path))?;
            }
            writeln!(
                out,
                "{} path(s) conflict; nothing was touched",
                conflicts.len()
            )?;
            Ok(1)
        }
        RollbackOutcome::Refused(why) => {
            writeln!(out, "rollback refused: {why}")?;
            Ok(1)
        }
    }
}

/// Runs `cocode tools …`.
pub fn tools_command(action: &ToolsCommand, out: &mut dyn Write) -> anyhow::Result<u8> {
    let ToolsCommand::List { format } = action;
    let Some(format) = CatalogFormat::named(format) else {
        bail!("--format “{format}”: use mcp, openai or anthropic");
    };
    writeln!(out, "{}", catalog_json(format))?;
    Ok(0)
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;
