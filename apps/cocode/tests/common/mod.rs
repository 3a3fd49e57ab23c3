//! Helpers shared by the host's integration tests.

use std::sync::Arc;

use cocode::host::workspace_host::{HostOptions, WorkspaceHost};
use cocode_editor::OpenDocuments;
use cocode_tool_protocol::{
    ToolCallContext, ToolCallOptions, ToolCallRequest, ToolMode, ToolSource,
};
use serde_json::Value;

/// Calls `tool` as the model of task `t1` in session `s1`.
pub async fn call(
    host: &WorkspaceHost,
    tool: &str,
    args: Value,
) -> cocode_tool_protocol::ToolCallResult {
    let Value::Object(arguments) = args else {
        unreachable!("object arguments")
    };
    let request = ToolCallRequest {
        id: format!("t-{tool}"),
        name: tool.to_owned(),
        arguments,
    };
    let ctx = ToolCallContext {
        source: ToolSource::Model,
        mode: ToolMode::Agent,
        session_id: "s1".into(),
        task_id: Some("t1".into()),
        revision: None,
    };
    host.tools
        .call(request, ctx, ToolCallOptions::default())
        .await
}

/// Approves every approval request of the host's tools from now on.
pub fn approve_everything(host: &WorkspaceHost) {
    use cocode_tool_protocol::{ApprovalDecision, ApprovalEvent};
    let queue = Arc::clone(host.tools.approvals());
    let mut approvals = queue.subscribe();
    tokio::spawn(async move {
        while let Ok(event) = approvals.recv().await {
            if let ApprovalEvent::Requested(s) = event {
                queue.resolve(s.id, ApprovalDecision::Approve);
            }
        }
    });
}

/// A host of the workspace at `dir` sharing its open documents with the test.
pub async fn open_host(dir: &std::path::Path) -> (WorkspaceHost, Arc<OpenDocuments>) {
    open_host_with_clock(dir, cocode_core::clock::system()).await
}

/// [`open_host`], stamping what it records with `clock`.
pub async fn open_host_with_clock(
    dir: &std::path::Path,
    clock: Arc<dyn cocode_core::clock::Clock>,
) -> (WorkspaceHost, Arc<OpenDocuments>) {
    let documents = Arc::new(OpenDocuments::new());
    let host = WorkspaceHost::open_with_clock(
        dir,
        HostOptions {
            vault: Arc::new(cocode_toolchain::vault::SessionVault::default()),
            providers: cocode_agent::LlmProviderRegistry::with_presets().unwrap(),
            retry: cocode_agent::RetryPolicy::default(),
            limits: cocode_agent::LoopLimits::default(),
            documents: Arc::clone(&documents),
            lsp: None,
        },
        clock,
    )
    .await
    .unwrap();
    (host, documents)
}
