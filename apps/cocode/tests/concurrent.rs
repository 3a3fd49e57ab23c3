//! Two tasks at once on one file: their edits never interleave. Both agents
//! read the file before either writes (the approvals are held until both
//! wait); leases serialize the writes and the second one, made against the
//! revision it read, is refused instead of overwriting the first.
#![expect(clippy::disallowed_methods, reason = "the test builds a workspace")]

use std::sync::Arc;

use cocode::host::orchestrator::{Decision, TaskApprover, TaskOrchestrator, TaskSpec};
use cocode::host::workspace_host::{HostOptions, WorkspaceHost};
use cocode_core::path::normalize;
use cocode_core::task::TaskBackend;
use cocode_core::{CompletionMode, ContentHash, DelegatedTask, PendingApprovalKind, TaskStatus};
use cocode_tool_protocol::{ApprovalDecision, ApprovalEvent};
use pretty_assertions::assert_eq;

struct Accept;

#[async_trait::async_trait]
impl TaskApprover for Accept {
    async fn decide(&self, _task: &DelegatedTask, _kind: PendingApprovalKind) -> Decision {
        Decision::Approve
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tasks_on_one_file_never_interleave_their_edits() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shared.txt"), "alpha beta\n").unwrap();
    let host = Arc::new(
        WorkspaceHost::open(
            dir.path(),
            HostOptions {
                vault: Arc::new(cocode_toolchain::vault::SessionVault::default()),
                providers: cocode_agent::LlmProviderRegistry::with_presets().unwrap(),
                retry: cocode_agent::RetryPolicy::default(),
                limits: cocode_agent::LoopLimits::default(),
                documents: Arc::new(cocode_editor::OpenDocuments::new()),
                lsp: None,
            },
        )
        .await
        .unwrap(),
    );
    // Hold every edit approval until both agents wait on one.
    let queue = Arc::clone(host.tools.approvals());
    let mut approvals = queue.subscribe();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok(event) = approvals.recv().await {
            if let ApprovalEvent::Requested(s) = event {
                held.push(s.id);
                if held.len() >= 2 {
                    for id in held.drain(..) {
                        queue.resolve(id, ApprovalDecision::Approve);
                    }
                }
            }
        }
    });
    let orchestrator = TaskOrchestrator::new(Arc::clone(&host));
    let spec = |prompt: &str| TaskSpec {
        prompt: prompt.into(),
        backend: TaskBackend::Local,
        completion_mode: CompletionMode::HumanApproval,
    };
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let (a, b) = tokio::join!(
        orchestrator.run(
            spec(r#"replace "alpha" with "ALPHA" in shared.txt"#),
            &Accept,
            &tx,
            tokio_util::sync::CancellationToken::new()
        ),
        orchestrator.run(
            spec(r#"replace "beta" with "BETA" in shared.txt"#),
            &Accept,
            &tx,
            tokio_util::sync::CancellationToken::new()
        ),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let mut statuses = [a.status(), b.status()];
    statuses.sort_by_key(|s| s.as_str());
    // The loser's edit is refused on its stale revision, and its agent ends
    // its turn without finishing: the task fails with that reason.
    assert_eq!(statuses, [TaskStatus::Completed, TaskStatus::Failed]);
    let loser = if a.status() == TaskStatus::Failed {
        &a
    } else {
        &b
    };
    assert_eq!(
        loser.terminal_reason(),
        Some(&cocode_core::task::TerminalReason::AgentEndedUnfinished)
    );

    // Exactly one edit landed, on the content both read.
    let content = std::fs::read(dir.path().join("shared.txt")).unwrap();
    let text = String::from_utf8_lossy(&content);
    assert!(text == "ALPHA beta\n" || text == "alpha BETA\n", "{text}");
    let path = normalize("shared.txt", host.workspace.workspace.options()).unwrap();
    let history = host.workspace.gate.store().path_history(&path).unwrap();
    assert_eq!(history.len(), 1, "{history:?}");
    let parts = history[0].parts();
    assert_eq!(parts.base, Some(ContentHash::of(b"alpha beta\n")));
    assert_eq!(parts.result, Some(ContentHash::of(&content)));
    let winner = if a.status() == TaskStatus::Completed {
        &a
    } else {
        &b
    };
    assert_eq!(&parts.task_id, winner.task_id());
}
