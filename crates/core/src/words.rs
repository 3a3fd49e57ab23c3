//! Words for people: the phrase a person reads for each value the window
//! and the command line show, kept apart from its wire name (`as_str`,
//! serde), which records and protocols keep. Nothing here is Rust `Debug`.

use crate::agent::{ToolCallStatus, TurnEndReason};
use crate::process::{Confinement, ExitStatus};
use crate::snapshot::{SnapshotKind, SnapshotOrigin};
use crate::task::{CancelReason, CompletionMode, PendingApprovalKind, TaskStatus, TerminalReason};
use crate::verification::{
    FailureClass, NoTargetCode, NotCompletable, VerificationMethod, VerificationOutcome,
    VerificationVerdict,
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
            Self::EnvToolMissing => "a needed tool is not installed",
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
            Self::Fail(class) => format!("failed: {}", class.phrase()),
            Self::NoTarget(code) => format!("nothing to check: {}", code.phrase()),
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
            Self::Observed => "found after the change",
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
