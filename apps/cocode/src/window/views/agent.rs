//! The Agent panel: the composer (backend, prompt, Run, Stop), approval
//! cards for tool calls and for the task, the streamed transcript, and the
//! workspace's tasks.

use cocode_core::PendingApprovalKind;
use cocode_ui::Tone;
use egui::Key;

use crate::window::agent::{AgentPanel, BACKENDS};
use crate::window::command::Command;
use crate::window::transcript::Transcript;

/// Draws the panel.
pub fn show(
    ui: &mut egui::Ui,
    panel: &AgentPanel,
    has_workspace: bool,
    commands: &mut Vec<Command>,
) {
    if !has_workspace {
        ui.label("Open a folder to delegate tasks to an agent.");
        return;
    }
    backend_row(ui, panel, commands);
    let mut prompt = panel.prompt.clone();
    let field = ui.add(
        egui::TextEdit::multiline(&mut prompt)
            .desired_rows(3)
            .desired_width(f32::INFINITY)
            .hint_text("What should the agent do?"),
    );
    if prompt != panel.prompt {
        commands.push(Command::AgentPrompt(prompt.clone()));
    }
    let submit =
        field.has_focus() && ui.input(|i| i.modifiers.command && i.key_pressed(Key::Enter));
    ui.horizontal(|ui| {
        let can_run = !panel.running && !prompt.trim().is_empty();
        if ui
            .add_enabled(can_run, egui::Button::new("Run task"))
            .clicked()
            || (submit && can_run)
        {
            commands.push(Command::RunTask);
        }
        if ui
            .add_enabled(panel.running, egui::Button::new("Stop"))
            .clicked()
        {
            commands.push(Command::StopTask);
        }
    });
    if let Some(error) = &panel.error {
        cocode_ui::badge(ui, error, Tone::Danger);
    }
    if let Some(note) = &panel.note {
        ui.label(note);
    }
    approval_cards(ui, panel, commands);
    ui.separator();
    transcript(ui, &panel.transcript);
    ui.separator();
    ui.label(egui::RichText::new("Tasks").strong());
    egui::ScrollArea::vertical()
        .id_salt("agent-tasks")
        .show(ui, |ui| {
            if panel.tasks.is_empty() {
                ui.label("No tasks in this workspace yet.");
            }
            for row in &panel.tasks {
                let selected = panel.detail.as_ref().is_some_and(|d| d.id == row.id);
                let text = format!("{}  {}  {}", row.id, row.state, row.prompt);
                if ui.selectable_label(selected, text).clicked() {
                    commands.push(if selected {
                        Command::CloseTask
                    } else {
                        Command::ShowTask(row.id.clone())
                    });
                }
            }
            if let Some(detail) = &panel.detail {
                task_detail(ui, detail, panel.running, commands);
            }
        });
}

/// The transcript: only the rows in sight are laid out, unwrapped (long
/// lines scroll sideways, as in a terminal), and it follows the end while
/// the agent writes.
fn transcript(ui: &mut egui::Ui, transcript: &Transcript) {
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
    let dropped = transcript.dropped();
    let rows = transcript.rows() + usize::from(dropped > 0);
    egui::ScrollArea::both()
        .id_salt("agent-transcript")
        .max_height(ui.available_height() * 0.4)
        .auto_shrink([false, true])
        .stick_to_bottom(true)
        .show_rows(ui, row_height, rows, |ui, range| {
            for i in range {
                let text = match (dropped > 0, i) {
                    (true, 0) => format!("… {dropped} earlier lines are not kept"),
                    (true, i) => transcript.row(i - 1).to_owned(),
                    (false, i) => transcript.row(i).to_owned(),
                };
                ui.add(egui::Label::new(egui::RichText::new(text).monospace()).extend());
            }
        });
}

/// A tool's name as a person reads it on a card.
fn tool_words(tool: &str) -> &str {
    match tool.rsplit('.').next().unwrap_or(tool) {
        "writeFile" => "write a file",
        "createFile" => "create a file",
        "applyPatch" => "edit a file",
        "deleteFile" => "delete a file",
        "renameFile" => "rename a file",
        "applyEdits" => "edit files",
        "run" => "run a command",
        "permission" => "go ahead",
        _ => tool,
    }
}

/// What a card shows of its call: the change with its diff, the command
/// line, or (when nothing more is known) the safe summary of its arguments.
fn approval_preview(ui: &mut egui::Ui, approval: &cocode_tool_protocol::ApprovalSnapshot) {
    use cocode_tool_protocol::{ApprovalPreview, ChangeKind};
    match approval.preview.as_deref() {
        Some(ApprovalPreview::Changes(changes)) => {
            for (i, change) in changes.iter().enumerate() {
                ui.horizontal_wrapped(|ui| {
                    let what = match &change.kind {
                        ChangeKind::Create => "new file".to_owned(),
                        ChangeKind::Modify => "changed".to_owned(),
                        ChangeKind::Delete => "deleted".to_owned(),
                        ChangeKind::Rename { from } => format!("renamed from {from}"),
                    };
                    ui.strong(&change.path);
                    ui.label(what);
                    if change.test_file {
                        cocode_ui::badge(
                            ui,
                            "test file: also held for your approval",
                            Tone::Warning,
                        );
                    }
                });
                crate::window::views::diff::show(
                    ui,
                    ("approval", approval.id, i),
                    &change.diff,
                    220.0,
                );
            }
        }
        Some(ApprovalPreview::Command {
            argv,
            cwd,
            confinement,
        }) => {
            ui.add(egui::Label::new(egui::RichText::new(argv.join(" ")).monospace()).wrap());
            ui.label(format!("in {cwd}"));
            ui.weak(confinement);
        }
        Some(ApprovalPreview::Note(note)) => {
            cocode_ui::badge(ui, note, Tone::Warning);
        }
        None => match approval
            .safe_argument_summary
            .get("title")
            .and_then(|t| t.as_str())
        {
            // An external agent's own question.
            Some(title) => {
                ui.label(title);
            }
            None => {
                ui.weak(approval.safe_argument_summary.to_string());
            }
        },
    }
}

/// The pending approvals: one card per tool call, and the task's own. The
/// first tool card answers Enter (approve) and Escape (deny) while no text
/// field has the keyboard.
fn approval_cards(ui: &mut egui::Ui, panel: &AgentPanel, commands: &mut Vec<Command>) {
    let keys_free = ui.memory(|m| m.focused().is_none());
    for (n, approval) in panel.tool_approvals.iter().enumerate() {
        ui.group(|ui| {
            ui.label(
                egui::RichText::new(format!(
                    "Allow the agent to {}?",
                    tool_words(&approval.tool)
                ))
                .strong(),
            );
            approval_preview(ui, approval);
            let (enter, escape) = if n == 0 && keys_free {
                ui.input_mut(|i| {
                    (
                        i.consume_key(egui::Modifiers::NONE, Key::Enter),
                        i.consume_key(egui::Modifiers::NONE, Key::Escape),
                    )
                })
            } else {
                (false, false)
            };
            ui.horizontal(|ui| {
                use cocode_tool_protocol::ApprovalDecision;
                let mut decide = |decision| {
                    commands.push(Command::ToolDecision {
                        id: approval.id,
                        decision,
                    });
                };
                if ui.button("Approve").clicked() || enter {
                    decide(ApprovalDecision::Approve);
                }
                if ui
                    .button("Allow for this task")
                    .on_hover_text(format!(
                        "Approve, and let the agent {} without asking until this task ends",
                        tool_words(&approval.tool)
                    ))
                    .clicked()
                {
                    decide(ApprovalDecision::ApproveForTask);
                }
                if ui.button("Deny").clicked() || escape {
                    decide(ApprovalDecision::Deny);
                }
                if n == 0 {
                    ui.weak("Enter: approve · Esc: deny");
                }
            });
        });
    }
    if let Some((task, kind)) = &panel.task_approval {
        ui.group(|ui| {
            ui.label(match kind {
                PendingApprovalKind::TestChange => {
                    format!("Task {task} changes a test file. Apply the change?")
                }
                _ => format!("Task {task} is ready. Accept it as completed?"),
            });
            ui.horizontal(|ui| {
                if ui.button("Accept").clicked() {
                    commands.push(Command::TaskDecision { approve: true });
                }
                if ui.button("Reject").clicked() {
                    commands.push(Command::TaskDecision { approve: false });
                }
            });
        });
    }
}

/// A task's review: state, checks, snapshots with their diffs, rollback.
fn task_detail(
    ui: &mut egui::Ui,
    detail: &crate::host::review::TaskDetail,
    running: bool,
    commands: &mut Vec<Command>,
) {
    ui.separator();
    ui.label(egui::RichText::new(format!("Task {}", detail.id)).strong());
    ui.label(format!(
        "{} · attempt {} · {} retr{}",
        detail.state,
        detail.attempt,
        detail.retries,
        if detail.retries == 1 { "y" } else { "ies" }
    ));
    ui.label(&detail.prompt);
    match &detail.rollback {
        Ok(paths) => {
            let label = format!("Roll back to the start ({paths} path(s))");
            if ui
                .add_enabled(!running, egui::Button::new(label))
                .on_disabled_hover_text("Stop the running task first")
                .clicked()
            {
                commands.push(Command::RollbackTask(detail.id.clone()));
            }
        }
        Err(why) => {
            ui.add_enabled(false, egui::Button::new("Roll back to the start"))
                .on_disabled_hover_text(why.clone());
            ui.label(format!("Rollback not available: {why}"));
        }
    }
    if !detail.blocked_hosts.is_empty() {
        egui::CollapsingHeader::new(format!("Blocked hosts ({})", detail.blocked_hosts.len()))
            .id_salt(("blocked", &detail.id))
            .default_open(true)
            .show(ui, |ui| {
                ui.label("The policy proxy refused these hosts during the task.");
                for host in &detail.blocked_hosts {
                    if let Some(why) = detail.held_hosts.get(host) {
                        ui.label(format!("{host}: {why}"));
                    }
                    ui.horizontal(|ui| {
                        ui.monospace(host);
                        if ui
                            .add_enabled(
                                !running,
                                egui::Button::new(format!("Allow {host} and re-run")),
                            )
                            .on_hover_text(
                                "Adds the host to workspace.json and runs the task's prompt again",
                            )
                            .on_disabled_hover_text("Stop the running task first")
                            .clicked()
                        {
                            commands.push(Command::AllowAndRerun {
                                task_id: detail.id.clone(),
                                host: host.clone(),
                            });
                        }
                    });
                }
            });
    }
    egui::CollapsingHeader::new(format!("Verification ({})", detail.checks.len()))
        .id_salt(("checks", &detail.id))
        .show(ui, |ui| {
            for check in &detail.checks {
                ui.label(check);
            }
        });
    egui::CollapsingHeader::new(format!("Changes ({})", detail.snapshots.len()))
        .id_salt(("changes", &detail.id))
        .default_open(true)
        .show(ui, |ui| {
            for s in &detail.snapshots {
                egui::CollapsingHeader::new(format!(
                    "#{} {} {} · {} · attempt {}",
                    s.seq, s.path, s.kind, s.origin, s.attempt
                ))
                .id_salt(("snapshot", &detail.id, s.seq))
                .show(ui, |ui| {
                    ui.add(egui::Label::new(egui::RichText::new(&s.diff).monospace()).wrap());
                });
            }
        });
}

/// The backend picker (presets and the workspace's ACP agents) and the
/// running indicator.
fn backend_row(ui: &mut egui::Ui, panel: &AgentPanel, commands: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        ui.label("Backend");
        let mut backend = panel.backend.clone();
        let acp_label = |id: &str, name: &str| format!("{name} (ACP: {id})");
        let shown = backend
            .strip_prefix("acp:")
            .and_then(|id| {
                panel
                    .acp_agents
                    .iter()
                    .find(|(a, _)| a == id)
                    .map(|(a, n)| acp_label(a, n))
            })
            .unwrap_or_else(|| backend.clone());
        egui::ComboBox::from_id_salt("agent-backend")
            .selected_text(shown)
            .width(220.0)
            .height(480.0)
            .show_ui(ui, |ui| {
                for b in BACKENDS {
                    ui.selectable_value(&mut backend, (*b).to_owned(), *b);
                }
                if !panel.acp_agents.is_empty() {
                    ui.separator();
                }
                for (id, name) in &panel.acp_agents {
                    ui.selectable_value(&mut backend, format!("acp:{id}"), acp_label(id, name));
                }
            });
        if backend != panel.backend {
            commands.push(Command::AgentBackend(backend));
        }
        if panel.running {
            ui.spinner();
            ui.label("Running");
        }
    });
}
