//! Host requests of external (ACP) agents, completed through the same tool
//! registry the built-in agent calls: the same handlers, leases, gate,
//! policy and approvals — only the source (`acp`) differs.

use std::sync::atomic::{AtomicU64, Ordering};

use cocode_core::agent::{
    AgentRequestKind, FileEditOp, PermissionOption, PermissionOptionKind, RequestCompletion,
};
use cocode_core::{SessionId, TaskId};
use cocode_tool_protocol::approval::ApprovalInput;
use cocode_tool_protocol::catalog;
use cocode_tool_protocol::{
    ApprovalDecision, OutputSink, ToolCallContext, ToolCallOptions, ToolCallRequest,
    ToolCallResult, ToolMode, ToolSource,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::host::workspace_host::WorkspaceHost;

static NEXT: AtomicU64 = AtomicU64::new(1);

/// Codes that mean "refused" (by policy or a person) rather than "failed".
const REFUSALS: [&str; 5] = [
    "TOOL_APPROVAL_DENIED",
    "TOOL_POLICY_DENIED",
    "WORKSPACE_PATH_NOT_WRITABLE",
    "WORKSPACE_OUTSIDE_WORKSPACE",
    "WORKSPACE_PATH_INVALID",
];

fn failure(result: &ToolCallResult) -> RequestCompletion {
    match &result.error {
        Some(e) if REFUSALS.contains(&e.code.as_str()) => RequestCompletion::Refused {
            code: e.code.clone(),
        },
        Some(e) => RequestCompletion::Error {
            code: e.code.clone(),
            retryable: e.retryable,
        },
        None => RequestCompletion::Error {
            code: "TOOL_EXECUTION_FAILED".into(),
            retryable: false,
        },
    }
}

impl WorkspaceHost {
    async fn call_tool(
        &self,
        task: &TaskId,
        session: &SessionId,
        tool: &str,
        arguments: Value,
        cancel: &CancellationToken,
        (output, approved_by_person): (Option<OutputSink>, bool),
    ) -> ToolCallResult {
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let request = ToolCallRequest {
            id: format!("acp-request-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
            name: tool.to_owned(),
            arguments,
        };
        let ctx = ToolCallContext {
            source: ToolSource::Acp,
            mode: ToolMode::Agent,
            session_id: session.to_string(),
            task_id: Some(task.to_string()),
            revision: None,
        };
        let options = ToolCallOptions {
            cancel: cancel.child_token(),
            output,
            approved_by_person,
            ..ToolCallOptions::default()
        };
        self.tools.call(request, ctx, options).await
    }

    /// Completes one request of an external agent; a command's output
    /// also goes to `output` while it runs.
    pub async fn complete_request(
        &self,
        task: &TaskId,
        session: &SessionId,
        kind: AgentRequestKind,
        cancel: &CancellationToken,
        output: Option<OutputSink>,
    ) -> RequestCompletion {
        let (tool, arguments, granted) = match kind {
            AgentRequestKind::FileRead { path, line, limit } => {
                return self
                    .read_for_agent((task, session), &path, (line, limit), cancel)
                    .await;
            }
            AgentRequestKind::FileEdit(FileEditOp::Write { path, content }) => {
                let granted = self.tasks.take_grant(task, Grant::Edit(&path).key());
                (
                    catalog::WRITE_FILE,
                    json!({"path": path, "content": content}),
                    granted,
                )
            }
            AgentRequestKind::FileEdit(FileEditOp::Delete { path }) => {
                let granted = self.tasks.take_grant(task, Grant::Edit(&path).key());
                (catalog::DELETE_FILE, json!({"path": path}), granted)
            }
            AgentRequestKind::FileEdit(FileEditOp::Rename { from, to }) => {
                let granted = self.tasks.take_grant(task, Grant::Edit(&from).key())
                    && self.tasks.take_grant(task, Grant::Edit(&to).key());
                (
                    catalog::RENAME_FILE,
                    json!({"from": from, "to": to}),
                    granted,
                )
            }
            AgentRequestKind::Command {
                argv,
                cwd,
                env,
                output_limit,
            } => {
                // An agent's terminal has no deadline of its own (the agent
                // kills it); the host's longest limit is the backstop.
                let mut args = json!({
                    "argv": argv,
                    "timeoutSecs": catalog::COMMAND_TIMEOUT_LIMIT_SECS,
                    "outputLimitBytes": output_limit
                        .unwrap_or(catalog::COMMAND_OUTPUT_LIMIT_BYTES)
                        .clamp(1, catalog::COMMAND_OUTPUT_LIMIT_BYTES),
                });
                if let Some(cwd) = cwd {
                    args["cwd"] = json!(cwd);
                }
                if !env.is_empty() {
                    args["env"] = Value::Object(
                        env.into_iter()
                            .map(|(k, v)| (k, Value::String(v)))
                            .collect(),
                    );
                }
                let granted = self
                    .tasks
                    .take_grant(task, Grant::Run(&shell_line(&argv)).key());
                let result = self
                    .call_tool(
                        task,
                        session,
                        catalog::TERMINAL_RUN,
                        args,
                        cancel,
                        (output, granted),
                    )
                    .await;
                if result.is_error {
                    return failure(&result);
                }
                return RequestCompletion::Success(
                    result.structured_content.unwrap_or_else(|| json!({})),
                );
            }
            AgentRequestKind::Permission {
                title,
                options,
                locations,
            } => {
                return self
                    .permission((task, session), (&title, &locations), &options, cancel)
                    .await;
            }
        };
        let result = self
            .call_tool(task, session, tool, arguments, cancel, (None, granted))
            .await;
        if result.is_error {
            failure(&result)
        } else {
            RequestCompletion::Success(json!({}))
        }
    }

    /// `fs/read_text_file`: a file's text, or a range of its lines. A
    /// missing file inside the workspace reads as empty, as ACP clients
    /// answer (an agent reads a path before it creates the file); the
    /// trace keeps the read as a miss. Outside the workspace the refusal
    /// stands.
    async fn read_for_agent(
        &self,
        (task, session): (&TaskId, &SessionId),
        path: &str,
        (line, limit): (Option<u32>, Option<u32>),
        cancel: &CancellationToken,
    ) -> RequestCompletion {
        let mut args = json!({"path": path});
        if line.is_some() || limit.is_some() {
            let start = line.unwrap_or(1).max(1);
            args["startLine"] = json!(start);
            if let Some(limit) = limit {
                args["endLine"] = json!(start.saturating_add(limit.max(1)) - 1);
            }
        }
        let result = self
            .call_tool(
                task,
                session,
                catalog::READ_FILE,
                args,
                cancel,
                (None, false),
            )
            .await;
        if result
            .error
            .as_ref()
            .is_some_and(|e| e.code == "WORKSPACE_FILE_NOT_FOUND")
        {
            return RequestCompletion::Success(json!({"content": ""}));
        }
        if result.is_error {
            return failure(&result);
        }
        let content = result
            .structured_content
            .as_ref()
            .and_then(|v| v.get("content"))
            .cloned()
            .unwrap_or_else(|| json!(""));
        RequestCompletion::Success(json!({"content": content}))
    }

    /// An agent's permission request goes to the same approval queue as
    /// tool calls; an approval picks the agent's narrowest allow option
    /// ("Always allow" when the person allowed it for the task). The
    /// action it names — the files of its locations, or the command its
    /// title shows — is then not asked about again when the agent carries
    /// it out through the host: one question per action.
    async fn permission(
        &self,
        (task, session): (&TaskId, &SessionId),
        (title, locations): (&str, &[String]),
        options: &[PermissionOption],
        cancel: &CancellationToken,
    ) -> RequestCompletion {
        let input = ApprovalInput {
            provider_call_id: format!("acp-permission-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
            session_id: session.to_string(),
            source: ToolSource::Acp,
            mode: ToolMode::Agent,
            tool: "acp.permission".into(),
            // The agent's own words: its question and its answers, which
            // the card and the terminal offer as they come.
            safe_argument_summary: json!({"title": title, "options": options}),
            // The card shows the agent's own words (the title).
            preview: None,
        };
        let decision = self.tools.approvals().request(input, cancel).await;
        match decision {
            ApprovalDecision::Approve | ApprovalDecision::ApproveForTask => {
                let mut order = [
                    PermissionOptionKind::AllowOnce,
                    PermissionOptionKind::AllowAlways,
                ];
                if decision == ApprovalDecision::ApproveForTask {
                    order.reverse();
                }
                let allow = order
                    .iter()
                    .find_map(|kind| options.iter().find(|o| o.kind == *kind));
                match allow {
                    Some(PermissionOption { id, .. }) => {
                        for path in locations {
                            self.tasks.grant(task, Grant::Edit(path).key());
                        }
                        self.tasks.grant(task, Grant::Run(title).key());
                        RequestCompletion::Success(json!({"optionId": id}))
                    }
                    None => RequestCompletion::Refused {
                        code: "ACP_NO_ALLOW_OPTION".into(),
                    },
                }
            }
            ApprovalDecision::Deny => RequestCompletion::Refused {
                code: "TOOL_APPROVAL_DENIED".into(),
            },
        }
    }
}

/// An action a person approved through an agent's permission request.
enum Grant<'a> {
    /// A change of this workspace-relative path.
    Edit(&'a str),
    /// This command line.
    Run(&'a str),
}

impl Grant<'_> {
    fn key(&self) -> String {
        match self {
            Self::Edit(path) => format!("edit:{path}"),
            Self::Run(line) => format!("run:{}", line.trim()),
        }
    }
}

/// The command line an agent's terminal runs, as its permission request
/// would show it (`sh -c LINE` gives LINE).
fn shell_line(argv: &[String]) -> String {
    match argv {
        [shell, flag, line] if flag == "-c" && shell.ends_with("sh") => line.clone(),
        _ => argv.join(" "),
    }
}
