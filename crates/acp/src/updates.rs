//! `session/update` → `AgentEvent`s. Pure: the mapper keeps only the open
//! tool calls' titles and locations, so later updates that omit them still
//! show them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema as acp;
use cocode_core::agent::{AgentEvent, PlanEntry, ToolCallContent, ToolCallStatus, ToolCallUpdate};

/// An open tool call's title and locations.
type OpenCall = (Option<String>, Vec<String>);

/// Maps one session's updates.
#[derive(Debug, Clone, Default)]
pub struct UpdateMapper {
    root: PathBuf,
    open: BTreeMap<String, OpenCall>,
}

fn status(status: acp::ToolCallStatus) -> ToolCallStatus {
    match status {
        acp::ToolCallStatus::Pending => ToolCallStatus::Pending,
        acp::ToolCallStatus::Completed => ToolCallStatus::Completed,
        acp::ToolCallStatus::Failed => ToolCallStatus::Failed,
        // In progress, or a status added to the protocol later: the call
        // is still going.
        _ => ToolCallStatus::InProgress,
    }
}

impl UpdateMapper {
    pub fn new(root: PathBuf) -> Self {
        Self {
            root,
            open: BTreeMap::new(),
        }
    }

    /// Workspace-relative when inside the root; as given otherwise (the host
    /// refuses it).
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root).map_or_else(
            |_| path.to_string_lossy().into_owned(),
            |r| r.to_string_lossy().replace('\\', "/"),
        )
    }

    /// A tool call's content as the host shows it; content blocks other
    /// than text (images, resources) are left out.
    fn content(&self, content: &[acp::ToolCallContent]) -> Vec<ToolCallContent> {
        content
            .iter()
            .filter_map(|c| match c {
                acp::ToolCallContent::Content(c) => match &c.content {
                    acp::ContentBlock::Text(t) => Some(ToolCallContent::Text(t.text.clone())),
                    _ => None,
                },
                acp::ToolCallContent::Diff(d) => Some(ToolCallContent::Diff {
                    path: self.relative(&d.path),
                    old_text: d.old_text.clone(),
                    new_text: d.new_text.clone(),
                }),
                acp::ToolCallContent::Terminal(t) => Some(ToolCallContent::Terminal {
                    terminal_id: t.terminal_id.0.to_string(),
                }),
                _ => None,
            })
            .collect()
    }

    fn call(
        &mut self,
        id: String,
        title: Option<&String>,
        status: ToolCallStatus,
        locations: &[String],
        content: Vec<ToolCallContent>,
    ) -> AgentEvent {
        let entry = self.open.entry(id.clone()).or_insert((None, Vec::new()));
        if let Some(title) = title {
            entry.0 = Some(title.clone());
        }
        if !locations.is_empty() {
            entry.1 = locations.to_vec();
        }
        let (title, locations) = entry.clone();
        if matches!(
            status,
            ToolCallStatus::Completed | ToolCallStatus::Failed | ToolCallStatus::Cancelled
        ) {
            self.open.remove(&id);
        }
        AgentEvent::ToolCallUpdate(ToolCallUpdate {
            call_id: id,
            title,
            status,
            locations,
            content,
        })
    }

    /// The events of one update (none for kinds the host does not act on).
    pub fn map(&mut self, update: acp::SessionUpdate) -> Option<AgentEvent> {
        let text = |chunk: &acp::ContentChunk| match &chunk.content {
            acp::ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        };
        match update {
            acp::SessionUpdate::AgentMessageChunk(chunk) => {
                text(&chunk).map(AgentEvent::MessageDelta)
            }
            acp::SessionUpdate::AgentThoughtChunk(chunk) => {
                text(&chunk).map(AgentEvent::ThoughtDelta)
            }
            acp::SessionUpdate::ToolCall(call) => {
                let locations: Vec<String> = call
                    .locations
                    .iter()
                    .map(|l| self.relative(&l.path))
                    .collect();
                let content = self.content(&call.content);
                Some(self.call(
                    call.tool_call_id.0.to_string(),
                    Some(&call.title),
                    status(call.status),
                    &locations,
                    content,
                ))
            }
            acp::SessionUpdate::ToolCallUpdate(update) => {
                let locations: Vec<String> = update
                    .fields
                    .locations
                    .as_ref()
                    .map(|ls| ls.iter().map(|l| self.relative(&l.path)).collect())
                    .unwrap_or_default();
                let st = update
                    .fields
                    .status
                    .map_or(ToolCallStatus::InProgress, status);
                let content = update
                    .fields
                    .content
                    .as_ref()
                    .map(|c| self.content(c))
                    .unwrap_or_default();
                Some(self.call(
                    update.tool_call_id.0.to_string(),
                    update.fields.title.as_ref(),
                    st,
                    &locations,
                    content,
                ))
            }
            acp::SessionUpdate::Plan(plan) => Some(AgentEvent::Plan(
                plan.entries
                    .iter()
                    .map(|e| PlanEntry {
                        content: e.content.clone(),
                        done: e.status == acp::PlanEntryStatus::Completed,
                    })
                    .collect(),
            )),
            acp::SessionUpdate::AvailableCommandsUpdate(u) => Some(AgentEvent::AvailableCommands(
                u.available_commands
                    .into_iter()
                    .map(|c| (c.name, c.description))
                    .collect(),
            )),
            acp::SessionUpdate::CurrentModeUpdate(u) => {
                Some(AgentEvent::ModeChanged(u.current_mode_id.0.to_string()))
            }
            acp::SessionUpdate::UsageUpdate(u) => Some(AgentEvent::ContextUsage {
                used: u.used,
                size: u.size,
            }),
            // The person's own echoed text, configuration and session info
            // change nothing the host shows or acts on.
            _ => None,
        }
    }

    /// Marks every open tool call cancelled.
    pub fn cancel_open(&mut self) -> Vec<AgentEvent> {
        let ids: Vec<String> = self.open.keys().cloned().collect();
        ids.into_iter()
            .map(|id| self.call(id, None, ToolCallStatus::Cancelled, &[], Vec::new()))
            .collect()
    }

    /// Ids of the tool calls still open.
    pub fn open_calls(&self) -> Vec<String> {
        self.open.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn update(json: serde_json::Value) -> acp::SessionUpdate {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn tool_calls_keep_their_title_and_locations_until_they_close() {
        let mut m = UpdateMapper::new(PathBuf::from("/ws"));
        let first = m.map(update(serde_json::json!({
            "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Edit",
            "status": "pending", "locations": [{"path": "/ws/src/a.rs"}, {"path": "/etc/passwd"}]
        })));
        assert_eq!(
            first,
            Some(AgentEvent::ToolCallUpdate(ToolCallUpdate {
                call_id: "c1".into(),
                title: Some("Edit".into()),
                status: ToolCallStatus::Pending,
                locations: vec!["src/a.rs".into(), "/etc/passwd".into()],
                content: Vec::new(),
            }))
        );
        let later = m.map(update(serde_json::json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"
        })));
        assert_eq!(
            later,
            Some(AgentEvent::ToolCallUpdate(ToolCallUpdate {
                call_id: "c1".into(),
                title: Some("Edit".into()),
                status: ToolCallStatus::Completed,
                locations: vec!["src/a.rs".into(), "/etc/passwd".into()],
                content: Vec::new(),
            }))
        );
        assert!(m.open_calls().is_empty());
        m.map(update(
            serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "c2", "title": "Run"}),
        ));
        let cancelled = m.cancel_open();
        assert_eq!(cancelled.len(), 1);
        assert!(
            matches!(&cancelled[0], AgentEvent::ToolCallUpdate(u) if u.status == ToolCallStatus::Cancelled)
        );
    }

    #[test]
    fn diffs_terminals_and_text_in_a_call_are_shown_and_other_blocks_are_not() {
        let mut m = UpdateMapper::new(PathBuf::from("/ws"));
        let event = m.map(update(serde_json::json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress",
            "content": [
                {"type": "diff", "path": "/ws/src/a.rs", "oldText": "a", "newText": "b"},
                {"type": "diff", "path": "/ws/new.txt", "newText": "n"},
                {"type": "terminal", "terminalId": "term-1"},
                {"type": "content", "content": {"type": "text", "text": "ran it"}},
                {"type": "content", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}
            ]
        })));
        assert_eq!(
            event,
            Some(AgentEvent::ToolCallUpdate(ToolCallUpdate {
                call_id: "c1".into(),
                title: None,
                status: ToolCallStatus::InProgress,
                locations: Vec::new(),
                content: vec![
                    ToolCallContent::Diff {
                        path: "src/a.rs".into(),
                        old_text: Some("a".into()),
                        new_text: "b".into()
                    },
                    ToolCallContent::Diff {
                        path: "new.txt".into(),
                        old_text: None,
                        new_text: "n".into()
                    },
                    ToolCallContent::Terminal {
                        terminal_id: "term-1".into()
                    },
                    ToolCallContent::Text("ran it".into()),
                ],
            }))
        );
    }

    #[test]
    fn plans_chunks_modes_commands_and_usage_map_and_echoes_are_ignored() {
        let mut m = UpdateMapper::new(PathBuf::from("/ws"));
        assert_eq!(
            m.map(update(
                serde_json::json!({"sessionUpdate": "plan", "entries": [
                    {"content": "a", "priority": "high", "status": "completed"},
                    {"content": "b", "priority": "low", "status": "pending"}
                ]})
            )),
            Some(AgentEvent::Plan(vec![
                PlanEntry {
                    content: "a".into(),
                    done: true
                },
                PlanEntry {
                    content: "b".into(),
                    done: false
                }
            ]))
        );
        assert_eq!(
            m.map(update(
                serde_json::json!({"sessionUpdate": "agent_thought_chunk",
                "content": {"type": "text", "text": "hm"}})
            )),
            Some(AgentEvent::ThoughtDelta("hm".into()))
        );
        assert_eq!(
            m.map(update(
                serde_json::json!({"sessionUpdate": "current_mode_update", "currentModeId": "plan"})
            )),
            Some(AgentEvent::ModeChanged("plan".into()))
        );
        assert_eq!(
            m.map(update(
                serde_json::json!({"sessionUpdate": "available_commands_update",
                "availableCommands": [{"name": "review", "description": "Review the changes"}]})
            )),
            Some(AgentEvent::AvailableCommands(vec![(
                "review".into(),
                "Review the changes".into()
            )]))
        );
        assert_eq!(
            m.map(update(
                serde_json::json!({"sessionUpdate": "usage_update", "used": 1200, "size": 200_000})
            )),
            Some(AgentEvent::ContextUsage {
                used: 1200,
                size: 200_000
            })
        );
        assert_eq!(
            m.map(update(
                serde_json::json!({"sessionUpdate": "user_message_chunk",
                "content": {"type": "text", "text": "hi"}})
            )),
            None
        );
    }
}
