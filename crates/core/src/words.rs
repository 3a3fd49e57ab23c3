//! Words for people: the phrase a person reads for each value the window
//! and the command line show, kept apart from its wire name (`as_str`,
//! serde), which records and protocols keep. Nothing here is Rust `Debug`.

use crate::agent::{ToolCallStatus, TurnEndReason};
use crate::process::{Confinement, ExitStatus};
use crate::snapshot::{SnapshotKind, SnapshotOrigin};
use crate::task::{CancelReason, CompletionMode, PendingApprovalKind, TaskStatus, TerminalReason};
use crate::verification::{
    FailureClass, Finding, FindingKind, NoTargetCode, NotCompletable, VerificationMethod,
    VerificationNote, VerificationOutcome, VerificationRecord, VerificationVerdict,
};

impl TaskStatus {
    /// What a person reads for this status.
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::Queued => "waiting to start",
            Self::Running => "running",
            Self::SelfVerifying => "verifying its work",
            Self::AwaitingApproval => "waiting for a person",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::RolledBack => "rolled back",
            Self::Rejected => "rejected",
            Self::Stopped => "stopped",
        }
    }
}

impl PendingApprovalKind {
    /// What the task waits for; `None` when it waits for nothing.
    pub const fn phrase(self) -> Option<&'static str> {
        match self {
            Self::None => None,
            Self::Completion => Some("approve it as completed"),
            Self::TestChange => Some("approve a change to a test file"),
            Self::Reply => Some("your reply to the agent"),
        }
    }
}

impl CompletionMode {
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::SelfVerification => "completes when verification passes",
            Self::HumanApproval => "completes when a person approves",
        }
    }
}

impl CancelReason {
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::UserStopped => "a person stopped it",
            Self::UserRolledBack => "a person rolled it back",
            Self::ApprovalRejected => "a person rejected it",
            Self::TaskFailed => "the task failed",
            Self::WorkspaceClosing => "the workspace closed",
        }
    }
}

impl TerminalReason {
    /// Why the task ended, as a person reads it.
    pub fn phrase(&self) -> String {
        match self {
            Self::Verified => "verification passed".to_owned(),
            Self::Approved => "a person approved it".to_owned(),
            Self::RetriesExhausted => "verification still failed after every retry".to_owned(),
            Self::EnvironmentFailure { class } => {
                format!("verification could not run: {}", class.phrase())
            }
            Self::TransportClosed => "the connection to the agent closed".to_owned(),
            Self::IdleTimeout => "the agent went quiet for too long".to_owned(),
            Self::AgentError { code } => format!("the agent failed ({code})"),
            Self::UserStopped => "a person stopped it".to_owned(),
            Self::TestChangeRejected => "a person rejected its change to a test file".to_owned(),
            Self::CompletionRejected => "a person rejected its result".to_owned(),
            Self::RolledBack => "its changes were undone".to_owned(),
            Self::AppRestarted => "cocode restarted while it ran".to_owned(),
            Self::NotFullyRecorded => {
                "its changes could not all be recorded, so it cannot be rolled back".to_owned()
            }
            Self::AgentEndedUnfinished => {
                "the agent ended its turn without finishing the task".to_owned()
            }
        }
    }
}

impl VerificationMethod {
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::Tests => "tests",
            Self::Build => "build",
            Self::RuntimeErrors => "runtime errors",
            Self::StaticAnalysis => "static analysis",
            Self::ParseCheck => "parse check",
        }
    }
}

impl FailureClass {
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::CodeDefect => "the code has a defect",
            Self::EnvToolAborted => "the tool was aborted",
            Self::EnvResource => "the machine ran out of a resource",
            Self::EnvNetworkBlocked => "the network was blocked",
            Self::EnvToolMissing => "a program it needs is not installed",
            Self::EnvSandboxRefused => "the sandbox refused a write outside the workspace",
            Self::EnvToolchain => "the installed toolchain cannot build this project",
            Self::EnvTimedOut => "the check ran out of time",
            Self::EnvUntrusted => "this workspace names its command, which is not trusted yet",
        }
    }
}

impl NoTargetCode {
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::NoTestFiles => "no test files",
            Self::NoBuildTarget => "nothing to build",
            Self::NoDebugSession => "no debug session",
            Self::FileNotAnalyzed => "no analyzed file",
            Self::NoRegisteredParser => "no parser for these files",
        }
    }
}

impl ExitStatus {
    /// How a program ended, after its name ("the command …").
    pub fn phrase(self) -> String {
        match self {
            Self::Code(0) => "exited successfully".to_owned(),
            Self::Code(code) => format!("exited with code {code}"),
            Self::Signal(signal) => format!("was killed by signal {signal}"),
            Self::TimedOut => "was stopped at its time limit".to_owned(),
            Self::Killed => "was stopped".to_owned(),
        }
    }
}

impl VerificationOutcome {
    pub fn phrase(self) -> String {
        match self {
            Self::Pass => "passed".to_owned(),
            Self::Fail(
                class @ (FailureClass::EnvToolMissing
                | FailureClass::EnvSandboxRefused
                | FailureClass::EnvToolchain
                | FailureClass::EnvUntrusted),
            ) => format!("failed: the check could not run: {}", class.phrase()),
            Self::Fail(class) => format!("failed: {}", class.phrase()),
            Self::NoTarget(code) => format!("nothing to check: {}", code.phrase()),
        }
    }
}

impl VerificationRecord {
    /// The outcome in words, with what the record adds: the program that is
    /// missing, the path the sandbox refused, and a pass whose errors were
    /// all there before the task ("found 2 problems that were there before
    /// the task"), never "passed" beside an error count.
    pub fn phrase(&self) -> String {
        let named = |kind: FindingKind| -> Vec<&str> {
            self.findings()
                .iter()
                .filter(|f| f.kind() == kind)
                .map(Finding::name)
                .collect()
        };
        match self.outcome() {
            VerificationOutcome::Fail(FailureClass::EnvToolMissing) => {
                let missing = named(FindingKind::MissingTool);
                if missing.is_empty() {
                    self.outcome().phrase()
                } else {
                    let verb = if missing.len() == 1 { "is" } else { "are" };
                    format!(
                        "failed: the check could not run: {} {verb} not installed",
                        missing.join(", ")
                    )
                }
            }
            VerificationOutcome::Fail(FailureClass::EnvSandboxRefused) => {
                let refused = named(FindingKind::RefusedPath);
                if refused.is_empty() {
                    self.outcome().phrase()
                } else {
                    format!(
                        "failed: the check could not run: the sandbox refused to let it write {}",
                        refused.join(", ")
                    )
                }
            }
            VerificationOutcome::Pass => {
                let errors = self.facts().diagnostics_count.map_or(0, |d| d.error);
                match errors {
                    0 => "passed".to_owned(),
                    1 => "found 1 problem that was there before the task".to_owned(),
                    n => format!("found {n} problems that were there before the task"),
                }
            }
            outcome => outcome.phrase(),
        }
    }
}

impl VerificationRecord {
    /// What the record says beyond its outcome, one line each, for people
    /// and for the model's next attempt: each finding (`failed test
    /// tests::adds at src/lib.rs:10:9`) with its first lines indented by
    /// two spaces, each note, and for a failure the code did not cause,
    /// what to do about it. Shown text is escaped (`shown::line`).
    pub fn detail_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in self.findings() {
            let place = f
                .place()
                .map(|p| format!(" at {}", crate::shown::line(p)))
                .unwrap_or_default();
            let line = match f.kind() {
                FindingKind::MissingTool
                | FindingKind::RefusedPath
                | FindingKind::UntrustedCommand => {
                    format!("{}: {}", f.kind().phrase(), crate::shown::line(f.name()))
                }
                kind => format!("{} {}{place}", kind.phrase(), crate::shown::line(f.name())),
            };
            out.push(line);
            out.extend(
                f.detail()
                    .lines()
                    .map(|l| format!("  {}", crate::shown::line(l))),
            );
        }
        for note in self.notes() {
            out.push(format!("note: {}", note.phrase()));
        }
        if let VerificationOutcome::Fail(class) = self.outcome()
            && let Some(remedy) = class.remedy()
        {
            out.push(format!("to fix: {remedy}"));
        }
        out
    }
}

impl FailureClass {
    /// What a person can do about a failure the code did not cause; `None`
    /// for a code defect (the agent's next attempt fixes it).
    pub const fn remedy(self) -> Option<&'static str> {
        match self {
            Self::CodeDefect => None,
            Self::EnvToolMissing => Some(
                "install the program, or name the commands to run under \"verification\" in .cocode/config/workspace.json",
            ),
            Self::EnvSandboxRefused => Some(
                "add the folder to the workspace's write exceptions, or name other commands under \"verification\" in .cocode/config/workspace.json",
            ),
            Self::EnvToolchain => Some(
                "install the toolchain the project asks for (rustup toolchain install …), or name other commands under \"verification\" in .cocode/config/workspace.json",
            ),
            Self::EnvTimedOut => Some(
                "raise the attempt time limit in .cocode/config/workspace.json (limits), or name quicker commands under \"verification\"",
            ),
            Self::EnvUntrusted => Some(
                "read the command, and if you trust this folder run cocode verify --trust there (it asks only once per command)",
            ),
            Self::EnvToolAborted => {
                Some("run the check again; if it keeps stopping, run it in a terminal to see why")
            }
            Self::EnvResource => Some("free disk space or memory, then run the check again"),
            Self::EnvNetworkBlocked => Some(
                "allow the host the check needs (Settings, or the allowed hosts in .cocode/config/workspace.json)",
            ),
        }
    }
}

impl FindingKind {
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::FailedTest => "failed test",
            Self::Error => "error",
            Self::MissingTool => "not installed",
            Self::RefusedPath => "refused",
            Self::UntrustedCommand => "not trusted yet",
        }
    }
}

impl VerificationNote {
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::SkippedNightlyTargets => {
                "targets that need a nightly toolchain were left out; the rest was checked"
            }
            Self::ConfiguredCommand => {
                "ran the command named in the workspace's verification settings"
            }
        }
    }
}

impl VerificationVerdict {
    pub fn phrase(&self) -> String {
        match self {
            Self::Pass => "passed".to_owned(),
            Self::Fail { class } => format!("failed: {}", class.phrase()),
            Self::NotCompletable(NotCompletable::NotExecuted(methods)) => {
                let names: Vec<&str> = methods.iter().map(|m| m.phrase()).collect();
                format!("incomplete: not run yet: {}", names.join(", "))
            }
            Self::NotCompletable(NotCompletable::ParseCheckNotExecuted) => {
                "incomplete: the parse check has not run".to_owned()
            }
            Self::NotCompletable(NotCompletable::NothingPassed) => {
                "incomplete: nothing applied, so a person decides".to_owned()
            }
        }
    }
}

impl ToolCallStatus {
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::Pending => "waiting",
            Self::InProgress => "in progress",
            Self::Completed => "done",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

impl TurnEndReason {
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::Finished => "it said it is done",
            Self::EndTurn => "it waits for a reply",
            Self::MaxTurns => "it reached its turn limit",
            Self::MaxTokens => "it reached its output limit",
            Self::Refusal => "the model refused",
            Self::Cancelled => "it was cancelled",
        }
    }
}

impl SnapshotOrigin {
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::Gate => "recorded before the change",
            Self::Observed => "changed while the task ran (author unknown)",
            Self::Review => "undone in review",
            Self::Rollback => "rolled back by a person",
            Self::Verification => "written by verification",
        }
    }
}

impl SnapshotKind {
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::Create => "created",
            Self::Modify => "modified",
            Self::Delete => "deleted",
            Self::Rename => "renamed",
        }
    }
}

impl Confinement {
    pub fn phrase(&self) -> String {
        match self {
            Self::Landlock => "confined by Landlock".to_owned(),
            Self::Seatbelt => "confined by Seatbelt".to_owned(),
            Self::Unconfined { reason } => format!("not confined by the OS ({reason})"),
        }
    }
}

#[cfg(test)]
#[path = "words_tests.rs"]
mod tests;
