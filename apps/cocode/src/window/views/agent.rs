//! The Agent panel: the composer (backend, prompt, Run, Stop), approval
//! cards for tool calls and for the task, the streamed transcript, and the
//! workspace's tasks.

use cocode_ui::Tone;
use egui::Key;

use crate::window::agent::{AgentPanel, BACKENDS, Failure, FailureKind, Standing};
use crate::window::command::{AgentCommand, Command, ProviderAction, WindowCommand};
use crate::window::providers::ProvidersPanel;
use crate::window::transcript::tool_words;

/// Draws the panel: the backend and model on top with the task list, the
/// composer and the pending approvals at the bottom, and the conversation
/// (or the review of the chosen task) in between.
pub fn show(
    ui: &mut egui::Ui,
    panel: &AgentPanel,
    providers: &ProvidersPanel,
    has_workspace: bool,
    commands: &mut Vec<Command>,
) {
    if !has_workspace {
        ui.label("Open a folder to delegate tasks to an agent.");
        return;
    }
    backend_row(ui, panel, providers, commands);
    task_list(ui, panel, commands);
    conversation_tabs(ui, panel, commands);
    let conv = panel.current();
    egui::Panel::bottom("agent-composer")
        .resizable(false)
        .show(ui, |ui| {
            approval_cards(ui, panel, commands);
            if let Some(failure) = conv.failure.as_ref().filter(|_| !conv.running) {
                failure_card(ui, failure, commands);
            }
            // The end of a task's run: its changes are read next.
            if let Some(task) = conv.task.as_ref().filter(|_| !conv.running)
                && ui
                    .button("Review changes")
                    .on_hover_text("The task's changes hunk by hunk: keep or undo each")
                    .clicked()
            {
                commands.push(Command::Review(crate::window::review::ReviewCommand::Open(
                    task.to_string(),
                )));
            }
            if let Some(wait) = &conv.lease_wait {
                cocode_ui::badge(ui, &format!("This task is {wait}."), Tone::Warning);
            }
            for error in [&conv.error, &panel.error].into_iter().flatten() {
                cocode_ui::badge(ui, error, Tone::Danger);
            }
            if let Some(note) = &panel.note {
                ui.label(note);
            }
            composer(ui, panel, commands);
        });
    egui::CentralPanel::default().show(ui, |ui| match &panel.detail {
        Some(detail) => {
            if ui.button("← Back to the conversation").clicked() {
                commands.push(Command::Agent(AgentCommand::CloseTask));
            }
            egui::ScrollArea::vertical()
                .id_salt("agent-task-detail")
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    task_detail(
                        ui,
                        detail,
                        panel.rollback_preview.as_ref(),
                        panel.running() > 0,
                        commands,
                    );
                });
        }
        None if conv.transcript.entries().is_empty() => {
            ui.weak("Describe a task below; the conversation with the agent shows here.");
        }
        None => {
            let height = ui.available_height();
            // Each conversation keeps its own scroll place.
            ui.push_id(("conversation", conv.id), |ui| {
                crate::window::views::transcript::show(ui, &conv.transcript, height, commands);
            });
        }
    });
}

/// One tab per conversation, its badge inside it saying where its task
/// stands (so a tab wraps to the next line whole); "+ New" opens an empty
/// one, × closes one whose task is not running.
fn conversation_tabs(ui: &mut egui::Ui, panel: &AgentPanel, commands: &mut Vec<Command>) {
    ui.horizontal_wrapped(|ui| {
        if ui
            .small_button("+ New")
            .on_hover_text("A new conversation; the running tasks go on")
            .clicked()
        {
            commands.push(Command::Agent(AgentCommand::NewConversation));
        }
        for (i, conv) in panel.conversations.iter().enumerate() {
            ui.separator();
            let shown = i == panel.active && panel.detail.is_none();
            let title = egui::RichText::new(conv.title());
            let tab = match panel.standing(conv) {
                Standing::New => egui::Button::selectable(shown, title),
                standing => {
                    let (words, tone) = standing.badge();
                    let badge = cocode_ui::badge_text(ui, words, tone);
                    egui::Button::selectable(shown, (title, badge))
                }
            };
            if ui.add(tab).clicked() {
                commands.push(Command::Agent(AgentCommand::ShowConversation(i)));
            }
            if !conv.running
                && panel.conversations.len() > 1
                && ui
                    .small_button("×")
                    .on_hover_text("Close this conversation (its task stays in the list)")
                    .clicked()
            {
                commands.push(Command::Agent(AgentCommand::CloseConversation(i)));
            }
        }
    });
    ui.separator();
}

/// What the person can do about the error that ended the last task.
fn failure_card(ui: &mut egui::Ui, failure: &Failure, commands: &mut Vec<Command>) {
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.set_width(ui.available_width());
        let text = match failure.kind {
            FailureKind::Retryable => format!(
                "The provider could not answer ({}). Trying again may work.",
                failure.code
            ),
            FailureKind::Setup => format!(
                "The provider is not set up for this ({}): check its key, address and model.",
                failure.code
            ),
            FailureKind::Other => format!("The agent stopped on an error ({}).", failure.code),
        };
        cocode_ui::badge(ui, &text, Tone::Danger);
        ui.horizontal_wrapped(|ui| match failure.kind {
            FailureKind::Retryable | FailureKind::Other => {
                if ui.button("Retry").clicked() {
                    commands.push(Command::Agent(AgentCommand::RetryTask { local: false }));
                }
            }
            FailureKind::Setup => {
                if ui.button("Open Providers").clicked() {
                    commands.push(Command::Window(WindowCommand::ShowSettings(Some(
                        crate::window::settings::Section::Providers,
                    ))));
                }
                if ui.button("Use the local agent and retry").clicked() {
                    commands.push(Command::Agent(AgentCommand::RetryTask { local: true }));
                }
            }
        });
    });
}

/// The prompt and Run/Stop; Ctrl+Enter (Cmd+Enter) runs.
/// While the agent waits for a reply, the same field answers it: Reply,
/// Finish & verify, Stop. Stop is at the right end of the row either way,
/// so when the agent ends its turn under a person's pointer the buttons
/// that change are not where Stop was.
fn composer(ui: &mut egui::Ui, panel: &AgentPanel, commands: &mut Vec<Command>) {
    let mut prompt = panel.prompt.clone();
    let id = ui.make_persistent_id("agent-prompt");
    // Taken before the field sees it (a multiline field would keep Enter).
    let submit = ui.memory(|m| m.has_focus(id))
        && ui.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, Key::Enter));
    let conv = panel.current();
    let replying = conv.awaiting_reply.is_some();
    if replying {
        cocode_ui::badge(
            ui,
            "The agent's turn ended without finishing the task: reply to go on, or finish and verify.",
            Tone::Info,
        );
    }
    ui.add(
        egui::TextEdit::multiline(&mut prompt)
            .id(id)
            .desired_rows(3)
            .desired_width(f32::INFINITY)
            .hint_text(if replying {
                "Reply to the agent…"
            } else {
                "What should the agent do?"
            }),
    );
    if prompt != panel.prompt {
        commands.push(Command::Agent(AgentCommand::AgentPrompt(prompt.clone())));
    }
    if replying {
        ui.horizontal(|ui| {
            let can_reply = !prompt.trim().is_empty();
            if ui
                .add_enabled(can_reply, egui::Button::new("Reply"))
                .clicked()
                || (submit && can_reply)
            {
                commands.push(Command::Agent(AgentCommand::SendReply));
            }
            if ui
                .button("Finish & verify")
                .on_hover_text("Verify the work as it stands")
                .clicked()
            {
                commands.push(Command::Agent(AgentCommand::FinishAndVerify));
            }
            // The built-in agent's conversation is cocode's to compact.
            let built_in = conv
                .last_run
                .as_ref()
                .is_some_and(|(_, backend, _)| backend != "local" && !backend.starts_with("acp:"));
            if built_in
                && ui
                    .button("Compact now")
                    .on_hover_text(
                        "Leave old tool results out and have the model summarize the earlier turns, keeping the last ones whole",
                    )
                    .clicked()
            {
                commands.push(Command::Agent(AgentCommand::CompactNow));
            }
            ui.weak("Ctrl+Enter replies");
            stop_button(ui, true, commands);
        });
        return;
    }
    ui.horizontal(|ui| {
        let can_run = !prompt.trim().is_empty();
        let run = ui
            .add_enabled(can_run, egui::Button::new("Run task"))
            .on_hover_text(if conv.is_fresh() {
                "Run it in this conversation"
            } else {
                "Run it as a new task in a new conversation tab"
            });
        if run.clicked() || (submit && can_run) {
            commands.push(Command::Agent(AgentCommand::RunTask));
        }
        ui.weak("Ctrl+Enter runs");
        stop_button(ui, conv.running, commands);
    });
}

/// Stop, at the right end of its row.
fn stop_button(ui: &mut egui::Ui, enabled: bool, commands: &mut Vec<Command>) {
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        if ui.add_enabled(enabled, egui::Button::new("Stop")).clicked() {
            commands.push(Command::Agent(AgentCommand::StopTask));
        }
    });
}

/// The workspace's tasks, newest first; a click opens its review.
fn task_list(ui: &mut egui::Ui, panel: &AgentPanel, commands: &mut Vec<Command>) {
    egui::CollapsingHeader::new(format!("Tasks ({})", panel.tasks.len()))
        .id_salt("agent-tasks-header")
        .default_open(true)
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("agent-tasks")
                .max_height(120.0)
                .auto_shrink([false, true])
                .show(ui, |ui| {
                    if panel.tasks.is_empty() && panel.running() == 0 {
                        ui.label("No tasks in this workspace yet.");
                    }
                    // Tasks created since the list was read.
                    for conv in &panel.conversations {
                        if let Some(task) = &conv.task
                            && conv.running
                            && !panel.tasks.iter().any(|r| r.id == task.as_str())
                        {
                            ui.horizontal(|ui| {
                                let (words, tone) = panel.standing(conv).badge();
                                cocode_ui::badge(ui, words, tone);
                                ui.label(format!("{task}  {}", conv.title()));
                            });
                        }
                    }
                    for row in &panel.tasks {
                        let selected = panel.detail.as_ref().is_some_and(|d| d.id == row.id);
                        // A task of a conversation shows where it stands now.
                        let live = panel
                            .conversations
                            .iter()
                            .find(|c| c.task.as_ref().is_some_and(|t| t.as_str() == row.id))
                            .map(|c| panel.standing(c))
                            .filter(|s| *s != Standing::Ended && *s != Standing::Failed);
                        ui.horizontal(|ui| {
                            // A live badge stands for the recorded state.
                            let text = match live {
                                Some(standing) => {
                                    let (words, tone) = standing.badge();
                                    cocode_ui::badge(ui, words, tone);
                                    format!("{}  {}", row.id, row.prompt)
                                }
                                None => format!("{}  {}  {}", row.id, row.state, row.prompt),
                            };
                            let row_button = egui::Button::selectable(selected, text.as_str());
                            if ui.add(row_button.truncate()).on_hover_text(&text).clicked() {
                                commands.push(if selected {
                                    Command::Agent(AgentCommand::CloseTask)
                                } else {
                                    Command::Agent(AgentCommand::ShowTask(row.id.clone()))
                                });
                            }
                        });
                    }
                });
        });
}

/// What a card shows of its call: the change with its diff, the command
/// line, or (when nothing more is known) the safe summary of its arguments.
pub(crate) fn approval_preview(
    ui: &mut egui::Ui,
    approval: &cocode_tool_protocol::ApprovalSnapshot,
) {
    use cocode_tool_protocol::{ApprovalPreview, ChangeKind};
    match approval.preview.as_deref() {
        Some(ApprovalPreview::Changes(changes)) => {
            for (i, change) in changes.iter().enumerate() {
                ui.horizontal_wrapped(|ui| {
                    let what = match &change.kind {
                        ChangeKind::Create => "new file".to_owned(),
                        ChangeKind::Modify => "changed".to_owned(),
                        ChangeKind::Delete => "deleted".to_owned(),
                        ChangeKind::Rename { from } => {
                            format!("renamed from {}", cocode_core::shown::line(from))
                        }
                    };
                    ui.strong(cocode_core::shown::line(&change.path));
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
            ui.add(
                egui::Label::new(
                    egui::RichText::new(cocode_core::shown::command(argv)).monospace(),
                )
                .wrap(),
            );
            ui.label(format!("in {}", cocode_core::shown::line(cwd)));
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
                ui.label(cocode_core::shown::lines(title));
            }
            None => {
                ui.weak(approval.safe_argument_summary.to_string());
            }
        },
    }
}

/// A card's three buttons (approve, allow for the task, deny): an external
/// agent's own words for its answers when it offered them ("Allow once",
/// "Always allow", "Reject"; the first of each kind), else cocode's.
pub(crate) fn button_labels(approval: &cocode_tool_protocol::ApprovalSnapshot) -> [String; 3] {
    let mut labels = [
        "Approve".to_owned(),
        "Allow for this task".to_owned(),
        "Deny".to_owned(),
    ];
    let mut named = [false; 3];
    let offered = approval
        .safe_argument_summary
        .get("options")
        .and_then(serde_json::Value::as_array);
    for option in offered.into_iter().flatten() {
        let text = |key: &str| option.get(key).and_then(serde_json::Value::as_str);
        let (Some(name), Some(kind)) = (text("name"), text("kind")) else {
            continue;
        };
        let slot = match kind {
            "allow_once" => 0,
            "allow_always" => 1,
            "reject_once" | "reject_always" => 2,
            _ => continue,
        };
        if !named[slot] && !name.trim().is_empty() {
            named[slot] = true;
            name.clone_into(&mut labels[slot]);
        }
    }
    labels
}

/// The pending approvals of the tab shown: one card per tool call, and the
/// task's own. The first tool card answers Enter (approve) and Escape
/// (deny) while nothing has the keyboard. When it appears with nothing
/// focused, Approve takes the focus, and while the focus is on its
/// buttons it stays there: Tab and Shift+Tab go round Approve, Allow for
/// this task and Deny, Enter presses the focused one, Escape denies.
fn approval_cards(ui: &mut egui::Ui, panel: &AgentPanel, commands: &mut Vec<Command>) {
    let focused = ui.memory(egui::Memory::focused);
    let conv = panel.current();
    for (n, approval) in panel.approvals_of(conv).into_iter().enumerate() {
        ui.group(|ui| {
            ui.label(
                egui::RichText::new(format!(
                    "Allow the agent to {}?",
                    tool_words(&approval.tool)
                ))
                .strong(),
            );
            approval_preview(ui, approval);
            // The first card's buttons, as the last frame drew them.
            let buttons_key = egui::Id::new(("approval-buttons", approval.id));
            let buttons: Option<[egui::Id; 3]> = ui.data(|d| d.get_temp(buttons_key));
            let in_card = buttons
                .zip(focused)
                .and_then(|(ids, f)| ids.iter().position(|id| *id == f).map(|at| (ids, at)));
            let (enter, escape) = match (n, in_card) {
                (0, Some(_)) => (
                    false,
                    ui.input_mut(|i| i.consume_key(egui::Modifiers::NONE, Key::Escape)),
                ),
                (0, None) if focused.is_none() => ui.input_mut(|i| {
                    (
                        i.consume_key(egui::Modifiers::NONE, Key::Enter),
                        i.consume_key(egui::Modifiers::NONE, Key::Escape),
                    )
                }),
                _ => (false, false),
            };
            // Wrapped: a row wider than the panel would widen the room of
            // everything after it (the composer's Stop would leave the
            // panel).
            ui.horizontal_wrapped(|ui| {
                use cocode_tool_protocol::ApprovalDecision;
                let mut decide = |decision| {
                    commands.push(Command::Agent(AgentCommand::ToolDecision {
                        id: approval.id,
                        decision,
                    }));
                };
                let [approve_label, allow_label, deny_label] = button_labels(approval);
                let approve = ui.button(approve_label);
                let allow = ui.button(allow_label).on_hover_text(format!(
                    "Approve, and let the agent {} without asking until this task ends",
                    tool_words(&approval.tool)
                ));
                let deny = ui.button(deny_label);
                if approve.clicked() || enter {
                    decide(ApprovalDecision::Approve);
                }
                if allow.clicked() {
                    decide(ApprovalDecision::ApproveForTask);
                }
                if deny.clicked() || escape {
                    decide(ApprovalDecision::Deny);
                }
                if n == 0 {
                    // Whole, on the next line when it does not fit.
                    ui.add(
                        egui::Label::new(egui::RichText::new("Enter: approve · Esc: deny").weak())
                            .extend(),
                    );
                    let ids = [approve.id, allow.id, deny.id];
                    trap_focus(ui, approval.id, ids, in_card, focused);
                    ui.data_mut(|d| d.insert_temp(buttons_key, [approve.id, allow.id, deny.id]));
                }
            });
        });
    }
    if let Some((_, _, question)) = &conv.task_approval {
        ui.group(|ui| {
            ui.label(question);
            ui.horizontal(|ui| {
                if ui.button("Accept").clicked() {
                    commands.push(Command::Agent(AgentCommand::TaskDecision { approve: true }));
                }
                if ui.button("Reject").clicked() {
                    commands.push(Command::Agent(AgentCommand::TaskDecision {
                        approve: false,
                    }));
                }
            });
        });
    }
}

/// Keeps the keyboard on a card's buttons: the first time card `card`
/// shows with nothing focused its first button takes the focus; while one of them has
/// it (`in_card`: the ids of the last frame and which one), Tab and
/// Shift+Tab go round them and egui's own focus moves and Escape are held
/// off.
fn trap_focus(
    ui: &mut egui::Ui,
    card: u64,
    ids: [egui::Id; 3],
    in_card: Option<([egui::Id; 3], usize)>,
    focused: Option<egui::Id>,
) {
    // By the approval's number: every card's buttons sit in the same
    // place and so have the same ids.
    let shown_key = egui::Id::new("approval-card-shown");
    let first_time = ui.data(|d| d.get_temp::<u64>(shown_key)) != Some(card);
    if first_time {
        ui.data_mut(|d| d.insert_temp(shown_key, card));
        if focused.is_none() {
            ui.memory_mut(|m| m.request_focus(ids[0]));
        }
        return;
    }
    let Some((_, at)) = in_card else { return };
    // Shift+Tab first: a key asked for without Shift matches it too.
    let (back, forward) = ui.input_mut(|i| {
        (
            i.consume_key(egui::Modifiers::SHIFT, Key::Tab),
            i.consume_key(egui::Modifiers::NONE, Key::Tab),
        )
    });
    let next = if forward {
        (at + 1) % ids.len()
    } else if back {
        (at + ids.len() - 1) % ids.len()
    } else {
        at
    };
    let filter = egui::EventFilter {
        tab: true,
        horizontal_arrows: true,
        vertical_arrows: true,
        escape: true,
    };
    ui.memory_mut(|m| {
        if next != at {
            m.request_focus(ids[next]);
        }
        m.set_focus_lock_filter(ids[next], filter);
    });
}

/// Asks before a rollback reverts files that changed while the task ran
/// (cocode cannot tell who changed them): Roll back anyway, or Cancel.
fn confirm_unknown_authors(
    ui: &mut egui::Ui,
    detail: &crate::host::review::TaskDetail,
    asking: egui::Id,
    commands: &mut Vec<Command>,
) {
    ui.group(|ui| {
        ui.label(format!(
            "{} path(s) changed while the task ran. cocode cannot tell whether the task or someone else (an editor outside cocode, another program) changed them; rolling back reverts them too:",
            detail.unknown_authors.len()
        ));
        for path in &detail.unknown_authors {
            ui.monospace(cocode_core::shown::line(path));
        }
        ui.horizontal(|ui| {
            if ui.button("Roll back anyway").clicked() {
                ui.data_mut(|d| d.remove::<bool>(asking));
                commands.push(Command::Agent(AgentCommand::RollbackTask(
                    detail.id.clone(),
                )));
            }
            if ui.button("Cancel").clicked() {
                ui.data_mut(|d| d.remove::<bool>(asking));
            }
        });
    });
}

/// Where the repository stood when the task started, and "Commit the
/// task's changes".
fn started_on(
    ui: &mut egui::Ui,
    detail: &crate::host::review::TaskDetail,
    running: bool,
    commands: &mut Vec<Command>,
) {
    if let Some(started) = &detail.started_on {
        ui.horizontal_wrapped(|ui| {
            ui.label(
                egui::RichText::new(format!("Started on {}", started.words()))
                    .weak()
                    .small(),
            );
            let mut paths: Vec<String> = detail.snapshots.iter().map(|s| s.path.clone()).collect();
            paths.sort();
            paths.dedup();
            if ui
                .add_enabled(
                    !running && !paths.is_empty(),
                    egui::Button::new("Commit the task's changes").small(),
                )
                .on_hover_text(
                    "Stage the task's files and write the commit message in Source Control",
                )
                .on_disabled_hover_text("The task is running, or changed nothing")
                .clicked()
            {
                commands.push(Command::Git(crate::window::scm::GitCommand::CommitTask {
                    task_id: detail.id.clone(),
                    prompt: detail.prompt.clone(),
                    paths,
                }));
            }
        });
    }
}

/// Opens the task's changes in the Review panel.
fn review_button(
    ui: &mut egui::Ui,
    detail: &crate::host::review::TaskDetail,
    commands: &mut Vec<Command>,
) {
    if ui
        .add_enabled(
            !detail.snapshots.is_empty(),
            egui::Button::new("Review changes"),
        )
        .on_hover_text("The task's changes hunk by hunk: keep or undo each, per attempt or message")
        .on_disabled_hover_text("The task changed no file")
        .clicked()
    {
        commands.push(Command::Review(crate::window::review::ReviewCommand::Open(
            detail.id.clone(),
        )));
    }
}

/// Rollback to a point of the task (an attempt, one of its changes, a
/// message of its conversation): first what it would do — which paths go
/// back, which conflict — then the rollback itself.
fn rollback_points(
    ui: &mut egui::Ui,
    detail: &crate::host::review::TaskDetail,
    preview: Option<&crate::host::review::RollbackPreview>,
    running: bool,
    commands: &mut Vec<Command>,
) {
    use crate::host::review::{RollbackTo, Undone};
    if detail.snapshots.is_empty() {
        return;
    }
    let pick = |to: RollbackTo| {
        Command::Agent(AgentCommand::PreviewRollback {
            task_id: detail.id.clone(),
            to,
        })
    };
    egui::CollapsingHeader::new("Roll back to a point")
        .id_salt(("rollback-points", &detail.id))
        .show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                for k in 2..=detail.attempt {
                    if ui.small_button(format!("Before attempt {k}")).clicked() {
                        commands.push(pick(RollbackTo::Attempt(k)));
                    }
                }
                for m in detail.messages.iter().skip(1) {
                    if ui
                        .small_button(format!("Before message {}", m.number))
                        .on_hover_text(cocode_core::shown::line(&m.summary()).into_owned())
                        .clicked()
                    {
                        commands.push(pick(RollbackTo::Message(m.number)));
                    }
                }
                egui::ComboBox::from_id_salt(("rollback-change", &detail.id))
                    .selected_text("Before change…")
                    .show_ui(ui, |ui| {
                        for s in &detail.snapshots {
                            let label = format!("#{} {} {} · {}", s.seq, s.kind, s.path, s.origin);
                            if ui.selectable_label(false, label).clicked() {
                                commands.push(pick(RollbackTo::Snapshot(s.id.clone(), s.seq)));
                            }
                        }
                    });
            });
            let Some(p) = preview else {
                ui.label(
                    egui::RichText::new("Pick a point: what the rollback would do shows first.")
                        .weak()
                        .small(),
                );
                return;
            };
            let words = p.to.words();
            if let Some(why) = &p.refused {
                ui.label(format!("Roll back to {words}: not possible — {why}"));
                return;
            }
            if !p.conflicts.is_empty() {
                ui.label(format!(
                    "Roll back to {words}: {} path(s) conflict, so nothing would be touched:",
                    p.conflicts.len()
                ));
                for (path, why) in &p.conflicts {
                    ui.monospace(format!("{} — {why}", cocode_core::shown::line(path)));
                }
                return;
            }
            ui.label(format!("Roll back to {words} would:"));
            for (path, how) in &p.changes {
                let verb = match how {
                    Undone::Restored => "restore",
                    Undone::Removed => "remove",
                };
                ui.monospace(format!("{verb} {}", cocode_core::shown::line(path)));
            }
            if !p.unknown_authors.is_empty() {
                ui.label(format!(
                    "{} of them changed while the task ran; cocode cannot tell whether the task or someone else changed them.",
                    p.unknown_authors.len()
                ));
            }
            if ui
                .add_enabled(!running, egui::Button::new(format!("Roll back to {words}")))
                .on_disabled_hover_text("Stop the running task first")
                .clicked()
            {
                commands.push(Command::Agent(AgentCommand::RollbackTo {
                    task_id: detail.id.clone(),
                    to: p.to.clone(),
                }));
            }
        });
}

/// The task's files against HEAD, beside its own changes.
fn since_head(ui: &mut egui::Ui, detail: &crate::host::review::TaskDetail) {
    if let Some(since) = &detail.since_head {
        egui::CollapsingHeader::new(format!("Changes since HEAD ({})", since.len()))
            .id_salt(("since-head", &detail.id))
            .show(ui, |ui| {
                ui.label(
                    egui::RichText::new(
                        "The task's files as they are now against the last commit: what a \
                         commit would hold, whoever made the change.",
                    )
                    .weak()
                    .small(),
                );
                for (path, diff) in since {
                    crate::window::views::diff::show(
                        ui,
                        ("since-head", &detail.id, path),
                        diff,
                        240.0,
                    );
                }
            });
    }
}

/// A task's review: state, checks, snapshots with their diffs, rollback.
fn task_detail(
    ui: &mut egui::Ui,
    detail: &crate::host::review::TaskDetail,
    preview: Option<&crate::host::review::RollbackPreview>,
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
    started_on(ui, detail, running, commands);
    review_button(ui, detail, commands);
    match &detail.rollback {
        Ok(paths) => {
            // Files that changed while the task ran may be someone else's
            // work: the person confirms before they are reverted.
            let asking = ui.make_persistent_id(("confirm-rollback", &detail.id));
            let confirming = ui.data(|d| d.get_temp::<bool>(asking)).unwrap_or(false);
            let label = format!("Roll back to the start ({paths} path(s))");
            if ui
                .add_enabled(!running && !confirming, egui::Button::new(label))
                .on_disabled_hover_text("Stop the running task first")
                .clicked()
            {
                if detail.unknown_authors.is_empty() {
                    commands.push(Command::Agent(AgentCommand::RollbackTask(
                        detail.id.clone(),
                    )));
                } else {
                    ui.data_mut(|d| d.insert_temp(asking, true));
                }
            }
            if confirming {
                confirm_unknown_authors(ui, detail, asking, commands);
            }
        }
        Err(why) => {
            ui.add_enabled(false, egui::Button::new("Roll back to the start"))
                .on_disabled_hover_text(why.clone());
            ui.label(format!("Rollback not available: {why}"));
        }
    }
    rollback_points(ui, detail, preview, running, commands);
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
                            commands.push(Command::Agent(AgentCommand::AllowAndRerun {
                                task_id: detail.id.clone(),
                                host: host.clone(),
                            }));
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
    since_head(ui, detail);
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

/// The backend picker (presets and the workspace's ACP agents), the
/// provider's model, the way to the Providers page, and the running
/// indicator.
fn backend_row(
    ui: &mut egui::Ui,
    panel: &AgentPanel,
    providers: &ProvidersPanel,
    commands: &mut Vec<Command>,
) {
    ui.horizontal_wrapped(|ui| {
        ui.label("Backend");
        let mut backend = panel.backend.clone();
        let acp_label = |a: &crate::window::workspace_service::AcpAgentRow| {
            let installed = if a.missing.is_some() {
                " — not installed"
            } else {
                ""
            };
            format!("{} (ACP: {}){installed}", a.name, a.id)
        };
        let shown = backend
            .strip_prefix("acp:")
            .and_then(|id| panel.acp_agents.iter().find(|a| a.id == id).map(acp_label))
            .unwrap_or_else(|| backend.clone());
        egui::ComboBox::from_id_salt("agent-backend")
            .selected_text(shown)
            .width(180.0)
            .height(480.0)
            .show_ui(ui, |ui| {
                for b in BACKENDS {
                    ui.selectable_value(&mut backend, (*b).to_owned(), *b);
                }
                if !panel.acp_agents.is_empty() {
                    ui.separator();
                }
                for a in &panel.acp_agents {
                    let choice =
                        ui.selectable_value(&mut backend, format!("acp:{}", a.id), acp_label(a));
                    if let Some(missing) = &a.missing {
                        choice.on_hover_text(missing);
                    }
                }
            });
        if backend != panel.backend {
            commands.push(Command::Agent(AgentCommand::AgentBackend(backend)));
        }
        if ui
            .button("Providers…")
            .on_hover_text("Keys, addresses and models of the built-in agent's providers")
            .clicked()
        {
            commands.push(Command::Window(WindowCommand::ShowSettings(Some(
                crate::window::settings::Section::Providers,
            ))));
        }
        if panel.current().running {
            ui.spinner();
        }
    });
    // What the task has used, on a row of its own.
    let spent = panel.current().transcript.tokens();
    let context = panel.current().transcript.context();
    if spent.input + spent.output > 0 || context.is_some() {
        ui.horizontal(|ui| {
            if let Some((used, size)) = context {
                context_meter(ui, used, size);
            }
            if spent.input + spent.output > 0 {
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(format!("This task: {}", spent.words())).weak(),
                    )
                    .wrap(),
                )
                .on_hover_text(
                    "As the provider reported them; the cost by the prices in providers.json",
                );
            }
        });
    }
    if let Some(agent) = panel
        .backend
        .strip_prefix("acp:")
        .and_then(|id| panel.acp_agents.iter().find(|a| a.id == id))
        && let Some(missing) = &agent.missing
    {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!("{} is {missing}", agent.name),
        );
    }
    if let Some(row) = providers.row(&panel.backend).filter(|r| r.id != "local") {
        ui.horizontal(|ui| {
            ui.label("Model");
            model_picker(ui, panel, providers, &row.id, commands);
        });
    }
}

/// How full the model's context window was at the last request: a bar
/// with the count, amber past the share where the conversation is
/// compacted.
fn context_meter(ui: &mut egui::Ui, used: u64, size: u64) {
    #[expect(
        clippy::cast_precision_loss,
        reason = "a share of a window of at most a few million tokens"
    )]
    let share = (used as f64 / size.max(1) as f64).clamp(0.0, 1.0);
    let words = format!(
        "Context {} of {} tokens",
        crate::host::spent::grouped(used),
        crate::host::spent::grouped(size)
    );
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a share between 0 and 1 for a bar"
    )]
    let mut bar = egui::ProgressBar::new(share as f32)
        .desired_width(140.0)
        .text(format!("{:.0} %", share * 100.0));
    if share >= cocode_agent::context::COMPACT_AT {
        bar = bar.fill(ui.visuals().warn_fg_color.gamma_multiply(0.6));
    }
    ui.add(bar).on_hover_text(format!(
        "{words} at the last request. Past {:.0} % the conversation is compacted: old tool results left out, then earlier turns summarized.",
        cocode_agent::context::COMPACT_AT * 100.0
    ));
}

/// The chosen provider's models (fetched, or the preset's); "default" is
/// the provider's first preset model.
fn model_picker(
    ui: &mut egui::Ui,
    panel: &AgentPanel,
    providers: &ProvidersPanel,
    provider: &str,
    commands: &mut Vec<Command>,
) {
    let mut models = providers.models_of(provider);
    if let Some(m) = &panel.model
        && !models.contains(m)
    {
        models.insert(0, m.clone());
    }
    let mut model = panel.model.clone();
    egui::ComboBox::from_id_salt("agent-model")
        .selected_text(model.as_deref().unwrap_or("default model"))
        .width(180.0)
        .height(480.0)
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut model, None, "default model");
            for m in &models {
                ui.selectable_value(&mut model, Some(m.clone()), m);
            }
        });
    if model != panel.model {
        commands.push(Command::Agent(AgentCommand::AgentModel(model)));
    }
    if !providers.models.contains_key(provider)
        && !providers.fetching.contains(provider)
        && ui
            .small_button("⟳")
            .on_hover_text("Fetch the provider's model list")
            .clicked()
    {
        commands.push(Command::Agent(AgentCommand::Provider(
            ProviderAction::Models(provider.to_owned()),
        )));
    }
}

/// Before the first run of a folder whose own `workspace.json` grants
/// hosts or agents the person has not confirmed: each grant with a tick
/// box (all off), then run with the ticked ones allowed and the others
/// kept off, or do not run.
pub fn grant_prompt(
    ctx: &egui::Context,
    prompt: &crate::window::agent::GrantPrompt,
    commands: &mut Vec<Command>,
) {
    egui::Modal::new(egui::Id::new("grant-prompt")).show(ctx, |ui| {
        ui.set_max_width(560.0);
        ui.heading("This folder's settings ask for more");
        ui.label(
            "Its .cocode/config/workspace.json grants agents the following. A folder you cloned \
             can say anything there: allow only what you recognise. What you leave unticked stays \
             off and is not asked again.",
        );
        ui.add_space(6.0);
        for (i, grant) in prompt.grants.iter().enumerate() {
            let mut ticked = prompt.allow.get(i).copied().unwrap_or(false);
            if ui.checkbox(&mut ticked, grant.words()).changed() {
                commands.push(Command::Agent(AgentCommand::GrantToggle(i)));
            }
        }
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            let allowed = prompt.allow.iter().filter(|a| **a).count();
            let run = if allowed == 0 {
                "Keep them off and run".to_owned()
            } else {
                format!("Allow {allowed} and run")
            };
            let run = ui.button(run);
            let cancel = ui.button("Cancel");
            crate::window::views::keep_focus_on(ui, &[&run, &cancel]);
            if run.clicked() {
                commands.push(Command::Agent(AgentCommand::DecideGrants));
            }
            if cancel.clicked() || ui.input(|i| i.key_pressed(Key::Escape)) {
                commands.push(Command::Agent(AgentCommand::CancelGrants));
            }
        });
    });
}
