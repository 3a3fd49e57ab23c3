//! The assembled host of one workspace: the workspace, the sandboxed
//! launcher, verification, the tool registry with the workspace catalog,
//! the agent runtimes and the task records — shared by the CLI and the
//! window.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use cocode_agent::{BuiltInRuntime, LlmProviderRegistry, LoopLimits, RetryPolicy, Transport};
use cocode_bricks::Bricks;
use cocode_core::clock::Clock;
use cocode_core::services::CredentialVault;
use cocode_core::{DelegatedTask, TaskId};
use cocode_editor::OpenDocuments;
use cocode_tool_protocol::observe::TraceStore;
use cocode_tool_protocol::{ApprovalQueue, RegistryOptions, ToolRegistry};
use cocode_toolchain::verify::OrchestratingVerificationRunner;
use cocode_toolchain::{Launcher, PolicyProxy};
use cocode_workspace::{LeaseRegistry, OpenWorkspace, RetentionReport, RetentionTrigger};

use crate::host::records::{load_all, load_record, runner_path, save_task_record, task_lives};
use crate::host::tools::{TaskDirectory, WorkspaceTools};

/// How a host is put together.
pub struct HostOptions {
    /// Where provider keys come from (the OS keyring, or a session-only
    /// holder for `--api-key-env`).
    pub vault: Arc<dyn CredentialVault>,
    pub providers: LlmProviderRegistry,
    pub retry: RetryPolicy,
    pub limits: LoopLimits,
    /// The window's open documents (an empty set headless): agents read
    /// unsaved text from it, language servers publish tokens to it.
    pub documents: Arc<OpenDocuments>,
    /// The window's language servers, which agents' `lsp.diagnostics`
    /// then shares; `None` headless (the host starts its own).
    pub lsp: Option<cocode_lsp::LanguageServers>,
}

impl std::fmt::Debug for HostOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostOptions")
            .field("providers", &self.providers)
            .finish_non_exhaustive()
    }
}

/// The assembled headless host of one workspace.
pub struct WorkspaceHost {
    pub workspace: Arc<OpenWorkspace>,
    pub leases: Arc<LeaseRegistry>,
    pub proxy: Arc<PolicyProxy>,
    pub launcher: Arc<Launcher>,
    pub runner: Arc<OrchestratingVerificationRunner>,
    pub tools: Arc<ToolRegistry>,
    /// Calls run from the Tool catalog so far (their ids).
    sample_calls: std::sync::atomic::AtomicU64,
    /// Every tool call's lifecycle (arguments redacted, bounded): what the
    /// Trace panel shows.
    pub traces: Arc<TraceStore>,
    /// The trace with its change counter and agent requests.
    pub trace: Arc<crate::host::trace::HostTrace>,
    pub tasks: Arc<TaskDirectory>,
    pub agent: Arc<BuiltInRuntime>,
    /// External agents over ACP.
    pub acp: Arc<cocode_acp::AcpRuntime>,
    /// Scaffolding of new workspaces from bricks.
    pub bricks: Arc<Bricks>,
    /// The open documents shared with the window.
    pub documents: Arc<OpenDocuments>,
    /// Every contract implementation of this host, registered once.
    pub contracts: cocode_core::ContractRegistry,
    /// Agents' commands as they run.
    pub commands: Arc<crate::host::commands::CommandWatch>,
    /// The workspace's language servers, shared by the editor and agents'
    /// `lsp.diagnostics`.
    pub lsp: cocode_lsp::LanguageServers,
    /// Who may write the workspace while a confined process (an agent's
    /// or verification's command, an ACP agent) runs: the sweep after it
    /// narrows when only confined commands could have.
    pub command_writers: cocode_workspace::SweepWriters,
    /// The one clock its records are stamped with.
    pub clock: Arc<dyn Clock>,
    /// Where provider keys and agents' secrets are kept.
    pub vault: Arc<dyn CredentialVault>,
    /// The workspace's writer lock: no other cocode process writes it
    /// while this host lives.
    _writer: cocode_workspace::WriterLock,
}

/// How this process names itself to another that finds the workspace
/// taken: its command line, shortened, control characters left out.
pub fn holder_description() -> String {
    // The program by its name; the arguments (the workspace's path among
    // them) as given.
    let line: String = std::env::args()
        .enumerate()
        .map(|(n, a)| {
            let name = Path::new(&a).file_name().filter(|_| n == 0);
            name.map_or(a.clone(), |n| n.to_string_lossy().into_owned())
        })
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .take(160)
        .collect();
    if line.is_empty() {
        "cocode".to_owned()
    } else {
        line
    }
}

impl std::fmt::Debug for WorkspaceHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceHost")
            .field("root", &self.workspace.workspace.root)
            .finish_non_exhaustive()
    }
}

pub use crate::host::exceptions::write_exceptions;

/// The registry's options: approval cards show the paths and the command
/// line a person decides on (never file contents).
fn registry_options() -> RegistryOptions {
    RegistryOptions {
        safe_argument_names: ["path", "from", "to", "argv", "cwd"]
            .into_iter()
            .map(str::to_owned)
            .collect(),
        ..RegistryOptions::default()
    }
}

/// The workspace's allowed hosts, holding back the hosts an agent task's
/// edit of a lockfile added (recorded in the history) until a person
/// allows them.
pub fn allowed_hosts(
    ws: &OpenWorkspace,
    user: &[cocode_core::workspace::HostPattern],
) -> cocode_core::workspace::AllowedHosts {
    let store = ws.gate.store();
    let text = |hash: Option<cocode_core::ContentHash>| {
        hash.and_then(|h| store.read_blob(&h).ok())
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    };
    let changes = |lockfile: &str| -> Vec<cocode_toolchain::allowed::LockfileChange> {
        let Ok(path) = cocode_core::NormalizedPath::try_from(lockfile.to_owned()) else {
            return Vec::new();
        };
        store
            .path_history(&path)
            .unwrap_or_default()
            .into_iter()
            .filter(|s| {
                matches!(
                    s.origin(),
                    cocode_core::SnapshotOrigin::Gate
                        | cocode_core::SnapshotOrigin::Observed
                        | cocode_core::SnapshotOrigin::Verification
                )
            })
            .map(|s| cocode_toolchain::allowed::LockfileChange {
                task: s.task_id().clone(),
                before: text(s.base()),
                after: text(s.result()),
            })
            .collect()
    };
    cocode_toolchain::allowed::compose_with_history(&ws.workspace.root, user, &changes)
}

impl WorkspaceTools {
    /// A tool registry serving these handlers.
    /// A tool registry serving these handlers; `traces` observes every
    /// call.
    fn registry(
        self: &Arc<Self>,
        confined: &(cocode_core::process::Confinement, u16),
        traces: Arc<dyn cocode_tool_protocol::observe::ToolObserver>,
    ) -> Result<ToolRegistry, cocode_tool_protocol::RegistrationError> {
        let mut registry = ToolRegistry::new(registry_options(), Arc::new(ApprovalQueue::new()));
        self.register(&mut registry, confined)?;
        registry.add_observer(traces);
        Ok(registry)
    }
}

/// The external agents of a workspace (the presets, with its own entries).
fn acp_runtime(
    config: &cocode_core::workspace::WorkspaceConfig,
    launcher: Arc<dyn cocode_core::process::ProcessLauncher>,
    vault: Arc<dyn CredentialVault>,
) -> cocode_acp::AcpRuntime {
    cocode_acp::AcpRuntime::new(launcher, acp_agents(config)).with_secrets(vault)
}

/// The presets, with the workspace's own entries (as allowed).
fn acp_agents(config: &cocode_core::workspace::WorkspaceConfig) -> cocode_acp::AcpAgentRegistry {
    cocode_acp::AcpAgentRegistry::with_entries(config.acp_agents.iter().cloned())
}

/// Opens `folder` as its one writer process, and recovers it (the lock
/// first: recovery would otherwise take a live writer's journals for a
/// crash's leftovers).
fn open_for_writing(
    folder: &Path,
) -> anyhow::Result<(OpenWorkspace, cocode_workspace::WriterLock)> {
    let ws =
        OpenWorkspace::open(folder).with_context(|| format!("opening {}", folder.display()))?;
    let writer = ws.lock_for_writing(&holder_description())?;
    ws.gate
        .recover()
        .context("recovering interrupted operations")?;
    Ok((ws, writer))
}

/// Starts the sweep's watcher and says who may write while an agent's
/// command runs: with Landlock (and the seccomp filter that comes with it)
/// only confined processes that make no hard links, so the scan after the
/// command looks at what the watcher reported instead of every file.
fn watch_commands(ws: &OpenWorkspace, launcher: &Launcher) -> cocode_workspace::SweepWriters {
    if let Err(e) = ws.gate.watch() {
        tracing::warn!(error = %e, "the sweep's watcher did not start; every scan walks the tree");
    }
    if launcher.agent_confinement() == cocode_core::process::Confinement::Landlock {
        cocode_workspace::SweepWriters::ConfinedCommands
    } else {
        cocode_workspace::SweepWriters::Anyone
    }
}

impl WorkspaceHost {
    /// Opens `folder`: recovery, the policy proxy, the launcher, the
    /// verification runner, the tool registry and the agent runtime. Must
    /// run inside a tokio runtime. Records are stamped by the system clock.
    pub async fn open(folder: &Path, options: HostOptions) -> anyhow::Result<Self> {
        Self::open_with_clock(folder, options, cocode_core::clock::system()).await
    }

    /// [`Self::open`] with `clock` stamping the gate's records, the leases,
    /// verification and the tasks (the composition root's one clock).
    #[expect(
        clippy::too_many_lines,
        reason = "the host's parts, built in the order they need each other"
    )]
    pub async fn open_with_clock(
        folder: &Path,
        options: HostOptions,
        clock: Arc<dyn Clock>,
    ) -> anyhow::Result<Self> {
        let (mut ws, writer) = open_for_writing(folder)?;
        ws.gate.use_clock(Arc::clone(&clock));
        let root = ws.workspace.root.clone();
        // Only what the person allowed of the folder's own grants.
        let effective = crate::host::trust::effective_config(&root, &ws.config);
        let hosts = allowed_hosts(&ws, &effective.allowed_hosts);
        let proxy = Arc::new(
            PolicyProxy::start(cocode_toolchain::allowed::policy_for(&hosts, &[]))
                .await
                .context("starting the policy proxy")?,
        );
        let launcher = Arc::new(crate::host::root::workspace_launcher(
            tokio::runtime::Handle::current(),
            root.clone(),
            Arc::clone(&proxy),
        ));
        let blocked = Arc::clone(&proxy);
        let runner = Arc::new(
            OrchestratingVerificationRunner::new(
                Arc::clone(&launcher) as Arc<dyn cocode_core::process::ProcessLauncher>,
                cocode_toolchain::parsers::builtin_registry()?,
                ws.config.limits,
                Arc::new(move |t| blocked.blocked_hosts(t).len()),
            )
            .with_clock(Arc::clone(&clock)),
        );
        let leases = Arc::new(LeaseRegistry::open_with_clock(
            ws.gate.store().clone(),
            Arc::clone(&clock),
        ));
        let workspace = Arc::new(ws);
        let tasks = Arc::new(TaskDirectory::default());
        let commands = Arc::new(crate::host::commands::CommandWatch::default());
        let lsp = options.lsp.unwrap_or_else(|| {
            crate::host::lsp::for_workspace(
                &workspace,
                Arc::clone(&launcher) as Arc<dyn cocode_core::process::ProcessLauncher>,
            )
        });
        let command_writers = watch_commands(&workspace, &launcher);
        let handlers = Arc::new(WorkspaceTools {
            workspace: Arc::clone(&workspace),
            leases: Arc::clone(&leases),
            launcher: Arc::clone(&launcher) as Arc<dyn cocode_core::process::ProcessLauncher>,
            tasks: Arc::clone(&tasks),
            documents: Arc::clone(&options.documents)
                as Arc<dyn cocode_core::services::TextDocumentSource>,
            listings: crate::host::tools::Listings::default(),
            commands: Arc::clone(&commands),
            lsp: Some(lsp.clone()),
            command_writers,
        });
        let trace = Arc::new(crate::host::trace::HostTrace::default());
        let traces = Arc::clone(&trace.store);
        let tools = Arc::new(handlers.registry(
            &(launcher.agent_confinement(), proxy.port()),
            Arc::clone(&trace) as Arc<dyn cocode_tool_protocol::observe::ToolObserver>,
        )?);
        let agent = Arc::new(BuiltInRuntime::new(
            Arc::new(options.providers),
            Arc::clone(&tools),
            Transport::with_proxies(options.retry, &crate::host::secrets::upstream_proxies())?,
            Arc::clone(&options.vault),
            options.limits,
        ));
        let acp = Arc::new(acp_runtime(
            &effective,
            Arc::clone(&launcher) as Arc<dyn cocode_core::process::ProcessLauncher>,
            Arc::clone(&options.vault),
        ));
        let bricks = Arc::new(crate::host::bricks::engine(
            Arc::clone(&launcher) as Arc<dyn cocode_core::process::ProcessLauncher>
        )?);
        let contracts =
            crate::host::bootstrap::register_contracts(crate::host::bootstrap::HostParts {
                workspace: Arc::clone(&workspace),
                leases: Arc::clone(&leases) as Arc<dyn cocode_core::gate::EditLockRegistry>,
                runner: Arc::clone(&runner) as Arc<dyn cocode_core::services::VerificationRunner>,
                launcher: Arc::clone(&launcher) as Arc<dyn cocode_core::process::ProcessLauncher>,
                sandbox: launcher.policy() as Arc<dyn cocode_core::process::SandboxPolicy>,
                vault: Arc::clone(&options.vault),
                built_in: Arc::clone(&agent) as Arc<dyn cocode_core::agent::AgentRuntime>,
                acp: Arc::clone(&acp) as Arc<dyn cocode_core::agent::AgentRuntime>,
                parsers: cocode_toolchain::parsers::builtin_registry()?,
                bricks: Arc::clone(&bricks) as Arc<dyn cocode_core::services::BrickEngine>,
                documents: Arc::clone(&options.documents),
            })?;
        let host = Self {
            workspace,
            leases,
            proxy,
            launcher,
            runner,
            tools,
            sample_calls: std::sync::atomic::AtomicU64::new(0),
            vault: options.vault,
            traces,
            trace,
            tasks,
            agent,
            acp,
            bricks,
            documents: options.documents,
            contracts,
            commands,
            lsp,
            command_writers,
            clock,
            _writer: writer,
        };
        host.run_retention(RetentionTrigger::AppStart);
        Ok(host)
    }

    /// Turns over each time the trace changes.
    pub fn trace_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.trace.changes()
    }

    /// Empties the trace.
    pub fn clear_trace(&self) {
        self.trace.clear();
    }

    /// Runs history retention (design 30: at app start and after a task
    /// ends) with the workspace's limits. Retention only frees space, so a
    /// failure is logged and the work goes on.
    pub fn run_retention(&self, trigger: RetentionTrigger) -> Option<RetentionReport> {
        let lives = task_lives(&self.workspace);
        match self
            .workspace
            .gate
            .run_retention(&lives, trigger, self.workspace.config.retention)
        {
            Ok(report) => {
                if !report.plan.remove.is_empty() || !report.finished_earlier.is_empty() {
                    tracing::info!(
                        trigger = trigger.as_str(),
                        removed = report.plan.remove.len(),
                        finished = report.finished_earlier.len(),
                        blobs = report.blobs_removed,
                        "history retention removed old tasks' snapshots"
                    );
                }
                Some(report)
            }
            Err(e) => {
                tracing::warn!(trigger = trigger.as_str(), "history retention failed: {e}");
                None
            }
        }
    }

    pub fn root(&self) -> &Path {
        &self.workspace.workspace.root
    }

    /// The workspace's verification commands as `workspace.json` holds
    /// them now; when it cannot be read, those it had when it opened, with
    /// the words that say so.
    pub fn verification_commands(
        &self,
    ) -> (cocode_core::workspace::VerificationCommands, Option<String>) {
        match self.workspace.verification_commands() {
            Ok(commands) => (commands, None),
            Err(e) => (
                self.workspace.config.verification.clone(),
                Some(format!(
                    "{e}; verification runs the commands it had when the workspace opened"
                )),
            ),
        }
    }

    /// Allows `host` from now on: saved in `workspace.json` and applied to
    /// the running policy proxy at once.
    pub fn allow_host(&self, host: &str) -> anyhow::Result<()> {
        let pattern = cocode_core::workspace::HostPattern::parse(host)?;
        // The person allows it here: it is theirs, not the folder's word.
        crate::host::trust::decide_grants(
            self.root(),
            &[(
                crate::host::trust::Grant::Host {
                    host: pattern.to_string(),
                },
                true,
            )],
        )?;
        self.workspace.allow_host(&pattern)?;
        self.refresh_hosts()
    }

    /// Runs a read-only tool of the catalog with `arguments`, as a person
    /// trying it from the Tool catalog (source "palette", direct mode,
    /// no task): through the registry, so the call is checked against the
    /// tool's schema, policy and limits and appears in the trace. A tool
    /// that changes anything is refused before it is looked at.
    pub async fn run_tool_sample(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<cocode_tool_protocol::ToolCallResult, String> {
        let ctx = cocode_tool_protocol::ToolCallContext {
            source: cocode_tool_protocol::ToolSource::Palette,
            mode: cocode_tool_protocol::ToolMode::Direct,
            session_id: "tool-catalog".to_owned(),
            task_id: None,
            revision: None,
        };
        let tools = self.tools.discover(&ctx).map_err(|e| e.message.clone())?;
        let Some(tool) = tools.iter().find(|t| t.name == name) else {
            return Err(format!("no tool is named {name}"));
        };
        if !tool.annotations.read_only {
            return Err(format!(
                "{name} changes the workspace: only read-only tools run from the catalog"
            ));
        }
        let n = self
            .sample_calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(self
            .tools
            .call(
                cocode_tool_protocol::ToolCallRequest {
                    id: format!("catalog-sample-{n}"),
                    name: name.to_owned(),
                    arguments,
                },
                ctx,
                cocode_tool_protocol::ToolCallOptions::default(),
            )
            .await)
    }

    /// The Settings page's view of `workspace.json` as it is now.
    pub fn settings_view(&self) -> anyhow::Result<crate::host::settings::SettingsView> {
        let config = self.workspace.current_config()?;
        Ok(crate::host::settings::view_of(
            self.root(),
            config,
            true,
            Some(self.vault.as_ref()),
        ))
    }

    /// Makes one change of the Settings page in `workspace.json` (read
    /// afresh): `Ok(Err(why))` when the change is refused and nothing was
    /// written. A host the person adds is theirs: allowed at once.
    pub fn edit_settings(
        &self,
        edit: &crate::host::settings::SettingsEdit,
    ) -> anyhow::Result<Result<(), String>> {
        let mut config = self.workspace.current_config()?;
        if let Err(why) = crate::host::settings::apply(self.root(), &mut config, edit) {
            return Ok(Err(why));
        }
        let grants: Vec<_> = crate::host::settings::granted_by(edit)
            .into_iter()
            .map(|g| (g, true))
            .collect();
        crate::host::trust::decide_grants(self.root(), &grants)?;
        self.workspace.replace_config(&config)?;
        self.refresh_hosts()?;
        Ok(Ok(()))
    }

    /// Stores (or with `None` removes) the value of `agent`'s secret
    /// variable `name` in the credential store, as `cocode acp set-secret`
    /// does: only a variable the agent declares.
    pub fn store_agent_secret(
        &self,
        agent: &str,
        name: &str,
        value: Option<&cocode_core::services::Secret>,
    ) -> Result<(), String> {
        let config = self
            .workspace
            .current_config()
            .map_err(|e| format!("{e:#}"))?;
        let agents = acp_agents(&config);
        let entry = cocode_core::AcpAgentId::new(agent)
            .ok()
            .and_then(|id| agents.get(&id))
            .ok_or_else(|| format!("no agent {agent} is configured"))?;
        if !entry.secret_env.iter().any(|n| n == name) {
            return Err(format!(
                "{} declares no secret variable {name}",
                entry.display_name
            ));
        }
        let account =
            cocode_acp::registry::secret_account(&entry.id, name).map_err(|e| e.to_string())?;
        if value.is_some_and(|v| v.expose().is_empty()) {
            return Err(format!("type the value of {name} first"));
        }
        match value {
            Some(value) => self.vault.set(&account, value),
            None => self.vault.delete(&account),
        }
        .map_err(|e| format!("the credential store refused it ({}): {e}", e.code()))
    }

    /// What the folder's `workspace.json` grants now that the person has
    /// neither allowed nor kept off.
    pub fn pending_grants(&self) -> Vec<crate::host::trust::Grant> {
        match self.workspace.current_config() {
            Ok(config) => crate::host::trust::grant_standing(self.root(), &config).pending,
            Err(e) => {
                tracing::warn!("workspace.json: {e}");
                Vec::new()
            }
        }
    }

    /// Where each grant of the folder's `workspace.json` stands now.
    pub fn grant_standing(&self) -> anyhow::Result<crate::host::trust::GrantStanding> {
        let config = self.workspace.current_config()?;
        Ok(crate::host::trust::grant_standing(self.root(), &config))
    }

    /// Records the person's decisions on the folder's grants and applies
    /// them at once (hosts, external agents).
    pub fn decide_grants(
        &self,
        decisions: &[(crate::host::trust::Grant, bool)],
    ) -> anyhow::Result<()> {
        crate::host::trust::decide_grants(self.root(), decisions)?;
        self.refresh_hosts()
    }

    /// Recomposes the allowed hosts and the external agents from the
    /// workspace's files, history and the person's decisions as they are
    /// now (each task starts with this), and applies them to the running
    /// policy proxy and agent runtime.
    pub fn refresh_hosts(&self) -> anyhow::Result<()> {
        let config = self.workspace.current_config()?;
        let effective = crate::host::trust::effective_config(self.root(), &config);
        let hosts = allowed_hosts(&self.workspace, &effective.allowed_hosts);
        self.proxy
            .set_policy(cocode_toolchain::allowed::policy_for(&hosts, &[]));
        self.acp.set_agents(acp_agents(&effective));
        Ok(())
    }

    /// Why each refused host a lockfile names is not allowed: an agent
    /// task's edit put it there, and a person decides. Other refused hosts
    /// have no entry; the hosts are composed once, and not at all when
    /// nothing was refused.
    pub fn held_reasons(&self, blocked: &[String]) -> BTreeMap<String, String> {
        if blocked.is_empty() {
            return BTreeMap::new();
        }
        let Ok(config) = self.workspace.current_config() else {
            return BTreeMap::new();
        };
        let user = crate::host::trust::effective_config(self.root(), &config).allowed_hosts;
        let hosts = allowed_hosts(&self.workspace, &user);
        blocked
            .iter()
            .filter_map(|name| {
                let held = hosts
                    .held
                    .iter()
                    .find(|h| *name == h.host.to_string() || name == h.host.host())?;
                Some((
                    name.clone(),
                    format!(
                        "named in {} by an edit of task {}: allowed only once a person allows it",
                        held.file, held.task
                    ),
                ))
            })
            .collect()
    }

    /// Saves a task record (`.cocode/history/tasks/<id>/task.json`).
    pub fn save_task(&self, task: &DelegatedTask) -> anyhow::Result<()> {
        save_task_record(&self.workspace, task)
    }

    /// Records this process as `id`'s runner.
    pub fn record_runner(&self, id: &TaskId) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec(&serde_json::json!({"pid": std::process::id()}))?;
        self.workspace
            .gate
            .store()
            .write_state_file(&runner_path(&self.workspace, id), &bytes)?;
        Ok(())
    }

    /// Notes where the workspace's repository stands as task `id` starts
    /// (nothing when it is in none).
    pub fn record_started_on(&self, id: &TaskId) -> anyhow::Result<()> {
        let Some((head, commit)) = cocode_git::head(self.root())? else {
            return Ok(());
        };
        let branch = match head {
            cocode_git::Head::Branch(b) | cocode_git::Head::Unborn(b) => Some(b),
            cocode_git::Head::Detached(_) => None,
        };
        let record = crate::host::records::StartedOn {
            version: 1,
            branch,
            head: commit,
        };
        self.workspace.gate.store().write_state_file(
            &crate::host::records::started_on_path(&self.workspace, id),
            &serde_json::to_vec_pretty(&record)?,
        )?;
        Ok(())
    }

    /// Records that the server said `answered` answered task `id`'s request
    /// for `asked` (another model).
    pub fn record_answered_model(
        &self,
        id: &TaskId,
        asked: &str,
        answered: &str,
    ) -> anyhow::Result<()> {
        let mut record = crate::host::records::models_answered(&self.workspace, id)
            .filter(|r| r.asked == asked)
            .unwrap_or_else(|| crate::host::records::ModelsAnswered {
                version: 1,
                asked: asked.to_owned(),
                answered: Vec::new(),
            });
        if record.answered.iter().any(|m| m == answered) {
            return Ok(());
        }
        record.answered.push(answered.to_owned());
        self.workspace.gate.store().write_state_file(
            &crate::host::records::models_path(&self.workspace, id),
            &serde_json::to_vec_pretty(&record)?,
        )?;
        Ok(())
    }

    /// Adds one request's tokens and cost to task `id`'s `usage.json`.
    pub fn record_usage(
        &self,
        id: &TaskId,
        spent: crate::host::spent::Spent,
    ) -> anyhow::Result<()> {
        let mut total = crate::host::records::usage(&self.workspace, id).unwrap_or_default();
        total.add(spent);
        self.workspace.gate.store().write_state_file(
            &crate::host::records::usage_path(&self.workspace, id),
            &serde_json::to_vec_pretty(&total)?,
        )?;
        Ok(())
    }

    /// Keeps what the model saw before a compaction of task `id`'s
    /// conversation (`context/compaction-<n>.json`); returns its path.
    pub fn record_compaction(
        &self,
        id: &TaskId,
        record: &serde_json::Value,
    ) -> anyhow::Result<std::path::PathBuf> {
        let dir = crate::host::records::compactions_dir(&self.workspace, id);
        let n = std::fs::read_dir(&dir).map_or(0, |d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("compaction-"))
                .count()
        }) + 1;
        let path = dir.join(format!("compaction-{n}.json"));
        self.workspace
            .gate
            .store()
            .write_state_file(&path, &serde_json::to_vec_pretty(record)?)?;
        Ok(path)
    }

    /// Loads one task record.
    pub fn load_task(&self, id: &TaskId) -> anyhow::Result<DelegatedTask> {
        load_record(&self.workspace.layout.task_record(id))
    }

    /// Every task record, newest first; a broken record is an error entry,
    /// never skipped silently.
    pub fn load_tasks(&self) -> Vec<anyhow::Result<DelegatedTask>> {
        load_all(&self.workspace.layout)
    }
}
