//! The Approvals panel: every tool call waiting for the person, across the
//! tasks, with its change as a diff or its full command line, and the
//! tasks that ask to be accepted as completed. Keyboard driven once shown:
//! Up and Down move, Enter approves the selected call, Escape denies it.

use cocode_tool_protocol::ApprovalDecision;

use crate::window::agent::AgentPanel;
use crate::window::approvals::ApprovalsPanel;
use crate::window::command::{AgentCommand, Command, PanelId, WindowCommand};
use crate::window::transcript::tool_words;
use crate::window::views::agent::{approval_preview, button_labels};

/// Draws the panel.
pub fn show(
    ui: &mut egui::Ui,
    agent: &AgentPanel,
    state: &mut ApprovalsPanel,
    commands: &mut Vec<Command>,
) {
    let ids: Vec<u64> = agent.tool_approvals.iter().map(|a| a.id).collect();
    let selected = state.settle(&ids);
    let (area, keyboard, moved) = keys(ui, state, &ids, selected, commands);
    let selected = state.selected;
    let questions: Vec<(usize, &str, String)> = agent
        .conversations
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            c.task_approval
                .as_ref()
                .map(|(_, _, question)| (i, question.as_str(), c.title()))
        })
        .collect();
    if ids.is_empty() && questions.is_empty() {
        cocode_ui::empty_state(
            ui,
            "Nothing waits for you",
            "Tool calls an agent asks you to approve, from every task, are listed here.",
        );
        return;
    }
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            if !ids.is_empty() {
                let hint = if keyboard {
                    "↑↓: choose · Enter: approve · Esc: deny"
                } else {
                    "Click a call to answer it with the keyboard"
                };
                ui.horizontal_wrapped(|ui| {
                    ui.strong(format!(
                        "{} tool call{} waiting",
                        ids.len(),
                        plural(ids.len())
                    ));
                    ui.weak(hint);
                });
            }
            for approval in &agent.tool_approvals {
                let chosen = selected == Some(approval.id);
                let task = agent
                    .conversation_of_session(&approval.session_id)
                    .map_or_else(|| "a task".to_owned(), |(_, c)| c.title());
                let frame = egui::Frame::group(ui.style()).stroke(if chosen {
                    ui.visuals().selection.stroke
                } else {
                    ui.visuals().widgets.noninteractive.bg_stroke
                });
                let card = frame.show(ui, |ui| {
                    card(ui, agent, approval, (chosen, &task), commands)
                });
                if card.inner {
                    state.selected = Some(approval.id);
                    area.request_focus();
                }
                if chosen && keyboard && moved {
                    card.response.scroll_to_me(None);
                }
            }
            for (index, question, title) in questions {
                ui.group(|ui| {
                    ui.set_width(ui.available_width());
                    ui.weak(format!("task: {title}"));
                    ui.label(question);
                    if ui.button("Show the conversation to answer").clicked() {
                        commands.push(Command::Agent(AgentCommand::ShowConversation(index)));
                        commands.push(Command::Window(WindowCommand::ShowPanel(PanelId::Agent)));
                    }
                });
            }
        });
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The panel's keys while it has the keyboard: arrows move the selection,
/// Enter approves the selected call, Escape denies it. Returns the panel's
/// focus target, whether it has the keyboard, and whether the selection
/// moved.
fn keys(
    ui: &mut egui::Ui,
    state: &mut ApprovalsPanel,
    ids: &[u64],
    selected: Option<u64>,
    commands: &mut Vec<Command>,
) -> (egui::Response, bool, bool) {
    // The panel takes the keyboard as one widget: arrows, Enter and
    // Escape stay with it while it has the focus.
    let keys_id = egui::Id::new("approvals-keys");
    let area = ui.interact(
        ui.max_rect(),
        keys_id,
        egui::Sense::focusable_noninteractive(),
    );
    if std::mem::take(&mut state.focus) {
        area.request_focus();
    }
    let keyboard = area.has_focus();
    let (mut down, mut up) = (false, false);
    if keyboard {
        ui.memory_mut(|m| {
            m.set_focus_lock_filter(
                keys_id,
                egui::EventFilter {
                    tab: false,
                    horizontal_arrows: true,
                    vertical_arrows: true,
                    escape: true,
                },
            );
        });
        let keys = ui.input_mut(crate::window::views::ListKeys::take);
        let (enter, escape) = (keys.enter, keys.escape);
        (down, up) = (keys.down, keys.up);
        if down || up {
            state.step(ids, down);
        }
        if let Some(id) = selected {
            if enter {
                commands.push(Command::Agent(AgentCommand::ToolDecision {
                    id,
                    decision: ApprovalDecision::Approve,
                }));
            } else if escape {
                commands.push(Command::Agent(AgentCommand::ToolDecision {
                    id,
                    decision: ApprovalDecision::Deny,
                }));
            }
        }
    }
    (area, keyboard, down || up)
}

/// One waiting call: its question (a click selects it), the task, its
/// change or command when selected, and its answers. Returns whether the
/// question was clicked.
fn card(
    ui: &mut egui::Ui,
    agent: &AgentPanel,
    approval: &cocode_tool_protocol::ApprovalSnapshot,
    (chosen, task): (bool, &str),
    commands: &mut Vec<Command>,
) -> bool {
    let mut clicked = false;
    ui.set_width(ui.available_width());
    ui.horizontal_wrapped(|ui| {
        let question = egui::RichText::new(format!(
            "Allow the agent to {}?",
            tool_words(&approval.tool)
        ))
        .strong();
        clicked = ui.selectable_label(chosen, question).clicked();
        ui.weak(format!("task: {task}"));
    });
    if chosen {
        approval_preview(ui, approval);
    }
    ui.horizontal_wrapped(|ui| {
        let [approve, allow, deny] = button_labels(approval);
        let mut decide = |decision| {
            commands.push(Command::Agent(AgentCommand::ToolDecision {
                id: approval.id,
                decision,
            }));
        };
        if ui.button(approve).clicked() {
            decide(ApprovalDecision::Approve);
        }
        if ui.button(allow).clicked() {
            decide(ApprovalDecision::ApproveForTask);
        }
        if ui.button(deny).clicked() {
            decide(ApprovalDecision::Deny);
        }
        if let Some((index, _)) = agent.conversation_of_session(&approval.session_id)
            && ui.button("Show the conversation").clicked()
        {
            commands.push(Command::Agent(AgentCommand::ShowConversation(index)));
            commands.push(Command::Window(WindowCommand::ShowPanel(PanelId::Agent)));
        }
    });
    clicked
}
