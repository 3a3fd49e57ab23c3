//! The command line's arguments (clap). Every command names its workspace
//! the same way: `--workspace DIR`, the current folder by default; only
//! `open DIR` takes its folder as a positional argument.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// cocode — an Agentic Development Environment.
#[derive(Debug, Parser, PartialEq, Eq)]
#[command(name = "cocode", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<CliCommand>,
}

/// Subcommands.
#[derive(Debug, Subcommand, PartialEq, Eq)]
pub enum CliCommand {
    /// Open a folder in the window.
    Open {
        /// The folder to open (none: the window with no folder, as a
        /// desktop launcher starts it).
        dir: Option<PathBuf>,
    },
    /// Run self-verification over a workspace and print, per method, its
    /// outcome and for a failed one the lines of its output that say what
    /// failed, then the verdict.
    Verify {
        /// The workspace folder.
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Print the verification records as JSON, one per line.
        #[arg(long)]
        json: bool,
        /// Trust the commands this workspace's `verification` settings
        /// name (each is printed), so they run from now on.
        #[arg(long)]
        trust: bool,
    },
    /// Check confinement, the credential store, the policy proxy and a
    /// workspace's history; list paths an interrupted operation left
    /// blocked, and release one with `--abandon JOURNAL`.
    Doctor {
        /// The workspace folder.
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Accept the current state of the paths this interrupted
        /// operation's journal names, and unblock them (the journal is kept
        /// in the history's `abandoned` folder).
        #[arg(long, value_name = "JOURNAL")]
        abandon: Option<String>,
    },
    /// Delegate tasks to an agent and decide on them.
    Task {
        #[command(subcommand)]
        action: TaskCommand,
    },
    /// Roll a task back: to its start (default), to an attempt or to a snapshot.
    Rollback {
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// The task to roll back.
        #[arg(long)]
        task: String,
        /// Undo attempt K (the first attempt is 1, as `task show` numbers
        /// them) and every later one.
        #[arg(long, conflicts_with_all = ["to_snapshot", "to_message"])]
        to_attempt: Option<u32>,
        /// Undo this snapshot and every later one of the task.
        #[arg(long, conflicts_with = "to_message")]
        to_snapshot: Option<String>,
        /// Restore the files to before message K of the task's
        /// conversation (the prompt is message 1; `task review --messages`
        /// lists them): what the agent changed in answer to it and later.
        #[arg(long)]
        to_message: Option<usize>,
        /// Revert files that changed while the task's commands or agent
        /// ran without asking (cocode cannot tell who changed them).
        #[arg(long)]
        yes: bool,
    },
    /// The workspace tool catalog.
    Tools {
        #[command(subcommand)]
        action: ToolsCommand,
    },
    /// Create a new workspace from a brick (a project template): checked in
    /// full first, built beside the destination, then moved into place.
    New {
        /// The folder to create; it must not exist yet.
        dest: PathBuf,
        /// The brick to use (`cocode bricks` lists them).
        #[arg(long)]
        brick: String,
        /// A brick variable as NAME=VALUE (repeatable).
        #[arg(long = "var", value_name = "NAME=VALUE")]
        vars: Vec<String>,
    },
    /// The bricks `cocode new` offers, with their variables.
    Bricks,
    /// External (ACP) agents: list them, store their secret variables.
    Acp {
        #[command(subcommand)]
        action: AcpCommand,
    },
    /// The built-in agent's model providers: list them, store their API keys.
    Provider {
        #[command(subcommand)]
        action: ProviderCommand,
    },
    /// Language servers: which are installed, and the diagnostics they
    /// report for a workspace's files.
    Lsp {
        #[command(subcommand)]
        action: LspCommand,
    },
}

/// `cocode lsp …`
#[derive(Debug, Subcommand, PartialEq, Eq)]
pub enum LspCommand {
    /// Each language's server, whether it is installed, and how to install
    /// it when it is not.
    Servers {
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Start each installed server (initialize, then shut down) and
        /// say whether it really starts, with its last words if not.
        #[arg(long)]
        check: bool,
    },
    /// Trust the language-server commands this workspace's own
    /// `.cocode/config/workspace.json` names (all of them, or the servers
    /// given), so they may start; each is printed first. Kept per person,
    /// outside the workspace; a changed command is held again.
    Trust {
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Server ids (default: every held one).
        servers: Vec<String>,
    },
    /// Start the servers the files need, wait until they have answered (or
    /// the timeout), and print one `path:line:column: severity: message
    /// [source code]` line per diagnostic (1-based; columns count characters).
    /// With no PATH, every file a server takes (up to 200). Exit status: 0
    /// without errors, 1 with errors, 2 when a file got no answer.
    Diagnostics {
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Files, relative to the workspace.
        paths: Vec<String>,
        /// `text` or `json`.
        #[arg(long, default_value = "text")]
        format: String,
        /// Seconds to wait for the servers' reports.
        #[arg(long, default_value_t = 60)]
        timeout: u64,
    },
}

/// `cocode provider …`
#[derive(Debug, Subcommand, PartialEq, Eq)]
pub enum ProviderCommand {
    /// The providers, whether each has a key stored (never the key), and
    /// where each is reached.
    List,
    /// Store a provider's API key in the OS credential store; the key is
    /// read from the first line of standard input.
    SetKey { name: String },
    /// Remove a provider's API key from the OS credential store.
    DeleteKey { name: String },
}

/// `cocode acp …`
#[derive(Debug, Subcommand, PartialEq, Eq)]
pub enum AcpCommand {
    /// The agents a workspace can run (presets and `acp_agents` entries),
    /// their commands, secret variables (stored or not) and model hosts.
    List {
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
    },
    /// Store an agent's declared secret variable in the OS credential
    /// store; the value is read from the first line of standard input.
    SetSecret {
        agent: String,
        name: String,
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
    },
    /// Remove an agent's secret variable from the OS credential store.
    DeleteSecret {
        agent: String,
        name: String,
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
    },
}

/// How task-level and tool approvals are answered in a headless run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args)]
#[group(multiple = false)]
pub struct ApprovalFlags {
    /// Approve the run's file edits and commands (not test changes or completion).
    #[arg(long)]
    pub approve_all_edits: bool,
    /// Approve everything the run asks: edits, test changes and completion.
    #[arg(long)]
    pub yes: bool,
    /// Deny everything the run asks.
    #[arg(long)]
    pub deny_all: bool,
}

/// `cocode task …`
#[derive(Debug, Subcommand, PartialEq, Eq)]
pub enum TaskCommand {
    /// Run a new task and print its progress. Exit code 0 when completed,
    /// 3 when left awaiting approval, 1 otherwise.
    Run {
        /// The workspace folder.
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// What the agent should do.
        #[arg(long)]
        prompt: String,
        /// `local`, a provider id (`anthropic`, `openai`, `openrouter`,
        /// `ollama`, `lmstudio`) or `acp:NAME`.
        #[arg(long, default_value = "local")]
        backend: String,
        /// The model (default: the provider's first preset model).
        #[arg(long)]
        model: Option<String>,
        /// `self_verification` or `human_approval` (default: the workspace's setting).
        #[arg(long)]
        completion_mode: Option<String>,
        /// Override the provider's base URL.
        #[arg(long)]
        base_url: Option<String>,
        /// Read the provider key from this environment variable of cocode's
        /// own environment, for this run only (it never reaches a child).
        #[arg(long)]
        api_key_env: Option<String>,
        /// Give the ACP agent its declared secret variable NAME from cocode's
        /// own environment, for this run only (repeatable).
        #[arg(long = "pass-env", value_name = "NAME")]
        pass_env: Vec<String>,
        #[command(flatten)]
        approvals: ApprovalFlags,
        /// When the agent ends its turn without finishing, read your reply
        /// from standard input (one line; an empty line or the end of input
        /// ends the task as it would without a reply).
        #[arg(long)]
        interactive: bool,
        /// Allow what this folder's own `.cocode/config/workspace.json`
        /// grants (hosts agents' commands may reach, external agents'
        /// commands and model hosts) that you have not confirmed before;
        /// remembered for this folder. Without it such a run is refused.
        #[arg(long)]
        trust_workspace: bool,
    },
    /// List the workspace's tasks, newest first.
    List {
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
    },
    /// Show a task: what was asked, its status, verification and changes.
    Show {
        id: String,
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Print the task record and its snapshots as JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// Approve what a task waits for: its completion, or a held test change
    /// (saved with the task, also after its run ended).
    Approve {
        id: String,
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
    },
    /// Reject what a task waits for (a held test change is then dropped).
    Reject {
        id: String,
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
    },
    /// Review a task's changes as a diff: by default what changed since
    /// your last review, hunks numbered from 1 in each file.
    Review {
        id: String,
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        #[command(flatten)]
        scope: ReviewScopeFlags,
        /// Then mark everything shown as reviewed: the next review starts
        /// after it.
        #[arg(long)]
        mark_reviewed: bool,
        /// List the conversation's messages (its checkpoints) and the tool
        /// calls that changed files instead.
        #[arg(long, conflicts_with_all = ["mark_reviewed", "all", "attempt", "message", "call"])]
        messages: bool,
    },
    /// Undo one hunk of a task's change to a file, or the whole change,
    /// recorded as the task's own change (a later rollback still restores
    /// the task's start). Refused, touching nothing, if the file changed
    /// since.
    Undo {
        id: String,
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// The file, as `task review` names it.
        #[arg(long)]
        path: String,
        /// The hunk's number, as `task review` numbers it with the same
        /// scope (default: the whole file).
        #[arg(long)]
        hunk: Option<usize>,
        #[command(flatten)]
        scope: ReviewScopeFlags,
    },
}

/// Which part of a task `task review` and `task undo` look at (default:
/// since your last review).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args)]
pub struct ReviewScopeFlags {
    /// All of the task's changes.
    #[arg(long, conflicts_with_all = ["attempt", "message", "call"])]
    pub all: bool,
    /// What attempt K changed (the first attempt is 1).
    #[arg(long, conflicts_with_all = ["message", "call"])]
    pub attempt: Option<u32>,
    /// What changed in answer to message K (the prompt is message 1).
    #[arg(long, conflicts_with = "call")]
    pub message: Option<usize>,
    /// What tool call K changed (`--messages` numbers the calls that
    /// changed files).
    #[arg(long)]
    pub call: Option<usize>,
}

/// `cocode tools …`
#[derive(Debug, Subcommand, PartialEq, Eq)]
pub enum ToolsCommand {
    /// Print the catalog as JSON in a provider's format.
    List {
        /// `mcp`, `openai` or `anthropic`.
        #[arg(long, default_value = "mcp")]
        format: String,
    },
}

impl Cli {
    /// The folder the window should open with, if any.
    pub fn folder(&self) -> Option<&PathBuf> {
        match &self.command {
            Some(CliCommand::Open { dir }) => dir.as_ref(),
            Some(
                CliCommand::Verify { .. }
                | CliCommand::Doctor { .. }
                | CliCommand::Task { .. }
                | CliCommand::Rollback { .. }
                | CliCommand::Tools { .. }
                | CliCommand::Acp { .. }
                | CliCommand::Provider { .. }
                | CliCommand::Lsp { .. }
                | CliCommand::New { .. }
                | CliCommand::Bricks,
            )
            | None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use pretty_assertions::assert_eq;

    #[test]
    fn parses_the_window_forms() {
        assert_eq!(
            Cli::try_parse_from(["cocode"]).unwrap(),
            Cli { command: None }
        );
        let open = Cli::try_parse_from(["cocode", "open", "/tmp/x"]).unwrap();
        assert_eq!(open.folder(), Some(&PathBuf::from("/tmp/x")));
        assert_eq!(
            Cli::try_parse_from(["cocode", "open"]).unwrap().folder(),
            None
        );
        assert!(Cli::try_parse_from(["cocode", "frobnicate"]).is_err());
        assert_eq!(
            Cli::try_parse_from(["cocode", "verify", "--workspace", "ws"])
                .unwrap()
                .command,
            Some(CliCommand::Verify {
                workspace: PathBuf::from("ws"),
                json: false,
                trust: false
            })
        );
        assert_eq!(
            Cli::try_parse_from(["cocode", "doctor"]).unwrap().command,
            Some(CliCommand::Doctor {
                workspace: PathBuf::from("."),
                abandon: None
            })
        );
        assert!(
            Cli::try_parse_from(["cocode", "verify", "ws"]).is_err(),
            "every command names its workspace with --workspace"
        );
        assert_eq!(
            Cli::try_parse_from(["cocode", "doctor", "--workspace", "ws"])
                .unwrap()
                .folder(),
            None
        );
        let run = Cli::try_parse_from([
            "cocode",
            "task",
            "run",
            "--prompt",
            "p",
            "--backend",
            "openai",
            "--yes",
        ])
        .unwrap();
        let Some(CliCommand::Task {
            action:
                TaskCommand::Run {
                    backend,
                    approvals,
                    workspace,
                    ..
                },
        }) = run.command
        else {
            panic!("not a task run")
        };
        assert_eq!(
            (backend.as_str(), approvals.yes, workspace),
            ("openai", true, PathBuf::from("."))
        );
        assert!(
            Cli::try_parse_from([
                "cocode",
                "task",
                "run",
                "--prompt",
                "p",
                "--yes",
                "--deny-all"
            ])
            .is_err(),
            "approval flags exclude each other"
        );
        Cli::command().debug_assert();
    }
}
