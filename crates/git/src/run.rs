//! The person's own `git` for everything that writes to `.git` (stage,
//! unstage, commit, switch branch), run through the launcher's human
//! profile: their author and hooks, as git runs them; git's words are shown
//! as they are.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cocode_core::process::{ExitStatus, LaunchIo, LaunchSpec, ProcessLauncher, SandboxProfile};

use crate::GitError;

/// How long one git command may run (a pre-commit hook may run a test
/// suite).
const GIT_TIMEOUT: Duration = Duration::from_mins(10);

/// How much of a command's output is kept (the end of it).
const OUTPUT_LIMIT: usize = 256 * 1024;

/// One write to the repository, as the person asked for it. Paths are
/// workspace-relative and `/` separated; patches name paths relative to
/// the repository's work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitAction {
    /// Stage these paths whole (new, changed and deleted alike).
    Stage(Vec<String>),
    /// Take these paths out of the index, back to HEAD's version.
    Unstage(Vec<String>),
    /// Apply a patch to the index (stage one hunk).
    StagePatch(String),
    /// Apply a patch to the index in reverse (unstage one hunk).
    UnstagePatch(String),
    /// Commit what is staged. With `amend`, replace the last commit (an
    /// empty message keeps its message).
    Commit { message: String, amend: bool },
    /// Switch to an existing local branch.
    Switch(String),
    /// Create a branch at HEAD and switch to it.
    CreateBranch(String),
    /// Make the workspace folder a repository (`git init`).
    Init,
}

impl GitAction {
    /// The git command line after `git` (with its options) and what goes
    /// to its stdin.
    fn command(&self) -> Result<(Vec<String>, Option<Vec<u8>>), GitError> {
        let owned = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        // Paths go on stdin, NUL-separated: any number of them (a command
        // line has a size limit; "Stage All" of a large tree would pass
        // it), and none can read as an option.
        let with_paths = |args: &[&str], paths: &[String]| {
            let mut argv = owned(args);
            argv.extend(owned(&["--pathspec-from-file=-", "--pathspec-file-nul"]));
            let mut list = Vec::new();
            for path in paths {
                list.extend_from_slice(path.as_bytes());
                list.push(0);
            }
            (argv, Some(list))
        };
        Ok(match self {
            Self::Stage(paths) => with_paths(&["add", "--all"], paths),
            // `reset` also works on a branch with no commit yet, where
            // `restore --staged` cannot name HEAD.
            Self::Unstage(paths) => with_paths(&["reset", "--quiet"], paths),
            Self::StagePatch(patch) => (
                owned(&["apply", "--cached", "--whitespace=nowarn", "-"]),
                Some(patch.clone().into_bytes()),
            ),
            Self::UnstagePatch(patch) => (
                owned(&["apply", "--cached", "--reverse", "--whitespace=nowarn", "-"]),
                Some(patch.clone().into_bytes()),
            ),
            Self::Commit { message, amend } => {
                if *amend && message.trim().is_empty() {
                    (owned(&["commit", "--amend", "--no-edit"]), None)
                } else {
                    let mut argv = owned(&["commit", "--file=-"]);
                    if *amend {
                        argv.push("--amend".into());
                    }
                    (argv, Some(message.clone().into_bytes()))
                }
            }
            Self::Switch(branch) => (owned(&["switch", branch_name(branch)?]), None),
            Self::CreateBranch(branch) => {
                (owned(&["switch", "--create", branch_name(branch)?]), None)
            }
            Self::Init => (owned(&["init"]), None),
        })
    }

    /// Whether git runs at the top of the work tree (patches name paths
    /// from there) rather than in the workspace folder.
    const fn at_top(&self) -> bool {
        matches!(self, Self::StagePatch(_) | Self::UnstagePatch(_))
    }

    /// What the action does, in words (`stage 2 files`).
    pub fn words(&self) -> String {
        let files = |n: usize| {
            if n == 1 {
                "1 file".to_owned()
            } else {
                format!("{n} files")
            }
        };
        match self {
            Self::Stage(paths) => format!("stage {}", files(paths.len())),
            Self::Unstage(paths) => format!("unstage {}", files(paths.len())),
            Self::StagePatch(_) => "stage a change".into(),
            Self::UnstagePatch(_) => "unstage a change".into(),
            Self::Commit { amend: false, .. } => "commit".into(),
            Self::Commit { amend: true, .. } => "amend the last commit".into(),
            Self::Switch(branch) => format!("switch to {branch}"),
            Self::CreateBranch(branch) => format!("create branch {branch}"),
            Self::Init => "create a repository".into(),
        }
    }
}

/// A branch name git may be given as an argument: never one that reads as
/// an option. git checks the rest and says why in its words.
fn branch_name(name: &str) -> Result<&str, GitError> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed.starts_with('-') {
        return Err(GitError::BranchName {
            name: name.to_owned(),
        });
    }
    Ok(trimmed)
}

/// Runs `action` with the person's `git` in the workspace folder
/// `workspace` of the repository whose work tree is `workdir`. Returns
/// git's output; a command git refuses is an error carrying its words.
pub async fn perform(
    launcher: &dyn ProcessLauncher,
    workspace: &Path,
    workdir: &Path,
    action: &GitAction,
) -> Result<String, GitError> {
    let (git_args, stdin) = action.command()?;
    let cwd = if action.at_top() { workdir } else { workspace };
    let mut argv = vec![
        "git".to_owned(),
        // Paths are names, never patterns (a file called `*.rs`).
        "--literal-pathspecs".to_owned(),
    ];
    argv.extend(git_args);
    let shown = format!("git {}", argv[2..].first().map_or("", String::as_str));
    run(launcher, cwd.to_path_buf(), argv, stdin, &shown).await
}

async fn run(
    launcher: &dyn ProcessLauncher,
    cwd: PathBuf,
    argv: Vec<String>,
    stdin: Option<Vec<u8>>,
    shown: &str,
) -> Result<String, GitError> {
    let not_started = |message: String| GitError::NotStarted {
        command: shown.to_owned(),
        message,
    };
    let spec = LaunchSpec {
        argv,
        cwd,
        // No prompt for a password can be answered here; git says so
        // instead of waiting.
        env_overrides: BTreeMap::from([("GIT_TERMINAL_PROMPT".to_owned(), "0".to_owned())]),
        profile: SandboxProfile::HumanTerminal,
        io: LaunchIo::Piped,
        timeout: Some(GIT_TIMEOUT),
        output_byte_limit: Some(OUTPUT_LIMIT),
        extra_writable: Vec::new(),
        secret_env: BTreeMap::new(),
        extra_hosts: Vec::new(),
    };
    let mut handle = launcher
        .launch(spec)
        .map_err(|e| not_started(e.to_string()))?;
    // A git that stops before reading all of its input (a pre-commit hook
    // that fails) closes the pipe: its exit and its own words say why.
    let mut unread = None;
    if let Some(bytes) = stdin
        && let Err(e) = handle.write_stdin(&bytes).await
    {
        unread = Some(e.to_string());
    }
    handle.close_stdin();
    let mut output = Vec::new();
    while let Some(chunk) = handle.read_output().await {
        output.extend(chunk);
    }
    let status = handle
        .wait()
        .await
        .map_err(|e| not_started(e.to_string()))?;
    let text = String::from_utf8_lossy(&output).trim_end().to_owned();
    match status {
        ExitStatus::Code(0) => match unread {
            None => Ok(text),
            Some(why) => Err(GitError::Failed {
                command: shown.to_owned(),
                output: format!("{text}\n(git did not read all of its input: {why})")
                    .trim_start()
                    .to_owned(),
            }),
        },
        ExitStatus::TimedOut => Err(GitError::Failed {
            command: shown.to_owned(),
            output: format!(
                "{text}\n(stopped after {} minutes)",
                GIT_TIMEOUT.as_secs() / 60
            ),
        }),
        _ => Err(GitError::Failed {
            command: shown.to_owned(),
            output: text,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn each_action_is_the_git_command_a_person_would_type() {
        let paths = vec!["a b.rs".to_owned(), "-odd".to_owned()];
        let cmd = |action: GitAction| action.command().unwrap();
        let listed = Some(b"a b.rs\0-odd\0".to_vec());
        assert_eq!(
            cmd(GitAction::Stage(paths.clone())),
            (
                vec![
                    "add".to_owned(),
                    "--all".to_owned(),
                    "--pathspec-from-file=-".to_owned(),
                    "--pathspec-file-nul".to_owned()
                ],
                listed.clone()
            )
        );
        assert_eq!(
            cmd(GitAction::Unstage(paths)),
            (
                vec![
                    "reset".to_owned(),
                    "--quiet".to_owned(),
                    "--pathspec-from-file=-".to_owned(),
                    "--pathspec-file-nul".to_owned()
                ],
                listed
            )
        );
        assert_eq!(
            cmd(GitAction::Commit {
                message: "Fix it\n".into(),
                amend: false
            }),
            (
                vec!["commit".to_owned(), "--file=-".to_owned()],
                Some(b"Fix it\n".to_vec())
            )
        );
        assert_eq!(
            cmd(GitAction::Commit {
                message: " \n".into(),
                amend: true
            }),
            (
                vec![
                    "commit".to_owned(),
                    "--amend".to_owned(),
                    "--no-edit".to_owned()
                ],
                None
            )
        );
        assert_eq!(
            cmd(GitAction::CreateBranch(" topic ".into())).0,
            ["switch", "--create", "topic"]
        );
        assert_eq!(
            GitAction::Switch("--orphan".into()).command(),
            Err(GitError::BranchName {
                name: "--orphan".into()
            })
        );
    }
}
