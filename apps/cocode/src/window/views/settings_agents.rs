//! The Settings page's external agents: every agent the folder can run —
//! cocode's presets and the folder's own entries (one that replaces a
//! preset says so) — with its command, whether its program is installed
//! and the command that installs it, its model hosts, and its secret
//! variables, whose values go to the credential store from here as
//! `cocode acp set-secret` puts them. An entry is added, edited (a
//! preset customized into the folder's own) or removed through a form
//! checked as it is typed.

use cocode_ui::Tone;
use egui::Ui;

use crate::host::agent_settings::{AgentDraft, AgentOrigin, AgentStatus, SecretState};
use crate::host::settings::{SettingsEdit, SettingsView};
use crate::host::trust::Grant;
use crate::window::command::{Command, WindowCommand};
use crate::window::settings::SettingsPanel;

/// Draws the agents and, while one is being added or edited, its form.
pub fn section(
    ui: &mut Ui,
    panel: &mut SettingsPanel,
    view: &SettingsView,
    commands: &mut Vec<Command>,
) {
    let shown = super::settings_parts::heading(
        ui,
        &panel.query,
        (
            "External agents",
            "Agents over the Agent Client Protocol: cocode's presets and this folder's own entries, their programs, model hosts and secret variables (kept in the credential store).",
        ),
    );
    if !shown {
        return;
    }
    for status in &view.agents {
        agent(ui, panel, view, status, commands);
    }
    if panel.drafts.agent.is_none() && ui.button("Add an agent…").clicked() {
        panel.drafts.agent = Some(AgentDraft::default());
    }
    form(ui, panel, view, commands);
}

fn agent(
    ui: &mut Ui,
    panel: &mut SettingsPanel,
    view: &SettingsView,
    status: &AgentStatus,
    commands: &mut Vec<Command>,
) {
    let entry = &status.entry;
    let id = entry.id.to_string();
    ui.group(|ui| {
        ui.set_width(ui.available_width());
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!("{} ({id})", entry.display_name));
            match status.origin {
                AgentOrigin::Preset => cocode_ui::badge(ui, "preset", Tone::Neutral),
                AgentOrigin::Folder => cocode_ui::badge(ui, "this folder's", Tone::Info),
                AgentOrigin::ReplacesPreset => {
                    cocode_ui::badge(ui, "this folder's, in place of the preset", Tone::Warning)
                }
            };
            if status.origin != AgentOrigin::Preset {
                super::settings_parts::standing_badge(
                    ui,
                    &view.grants,
                    &Grant::Agent {
                        id: id.clone(),
                        command: entry.command.clone(),
                        env: entry.env.clone(),
                    },
                );
            }
        });
        ui.monospace(cocode_core::shown::command(&entry.command));
        match (&status.installed, &status.install) {
            (Some(path), _) => {
                ui.weak(format!("installed: {}", path.display()));
            }
            (None, Some(install)) => {
                ui.horizontal_wrapped(|ui| {
                    cocode_ui::badge(ui, "not installed", Tone::Warning);
                    ui.monospace(install);
                    if ui.small_button("Copy").clicked() {
                        ui.ctx().copy_text(install.clone());
                    }
                });
            }
            (None, None) => {
                cocode_ui::badge(
                    ui,
                    "not installed: its program is not on PATH",
                    Tone::Warning,
                );
            }
        }
        if !entry.model_hosts.is_empty() {
            ui.label(format!("model hosts: {}", entry.model_hosts.join(", ")));
        }
        for (name, state) in &status.secrets {
            secret(ui, panel, &id, name, state, commands);
        }
        ui.horizontal(|ui| {
            let own = status.origin != AgentOrigin::Preset;
            let edit = if own { "Edit" } else { "Customize" };
            if ui
                .add_enabled(panel.drafts.agent.is_none(), egui::Button::new(edit))
                .on_hover_text(if own {
                    "Change this folder's entry"
                } else {
                    "Make this folder's own entry from the preset, in its place"
                })
                .clicked()
            {
                panel.drafts.agent = Some(AgentDraft::of(entry, own));
            }
            if own && ui.button("Remove").clicked() {
                commands.push(Command::Window(WindowCommand::EditSettings(
                    SettingsEdit::RemoveAgent(id.clone()),
                )));
            }
        });
    });
}

/// One secret variable: whether it is stored, and a field to store it.
fn secret(
    ui: &mut Ui,
    panel: &mut SettingsPanel,
    agent: &str,
    name: &str,
    state: &SecretState,
    commands: &mut Vec<Command>,
) {
    ui.horizontal_wrapped(|ui| {
        let label = ui.label(name);
        match state {
            SecretState::Stored => cocode_ui::badge(ui, "stored", Tone::Success),
            SecretState::Missing => cocode_ui::badge(ui, "not stored", Tone::Warning),
            SecretState::Unknown(why) => cocode_ui::badge(ui, why, Tone::Neutral),
        };
        let value = panel
            .drafts
            .secrets
            .entry((agent.to_owned(), name.to_owned()))
            .or_default();
        ui.add(
            egui::TextEdit::singleline(value)
                .password(true)
                .hint_text("value")
                .desired_width(200.0),
        )
        .labelled_by(label.id);
        if ui
            .add_enabled(!value.is_empty(), egui::Button::new("Store"))
            .on_hover_text("Into the credential store; workspace.json never holds it")
            .clicked()
        {
            let typed = std::mem::take(value);
            commands.push(Command::Window(WindowCommand::StoreAgentSecret {
                agent: agent.to_owned(),
                name: name.to_owned(),
                value: Some(cocode_core::services::Secret::new(typed)),
            }));
        }
        if *state == SecretState::Stored && ui.small_button("Forget").clicked() {
            commands.push(Command::Window(WindowCommand::StoreAgentSecret {
                agent: agent.to_owned(),
                name: name.to_owned(),
                value: None,
            }));
        }
    });
}

/// The form of the entry being added or edited, checked as it is typed.
fn form(ui: &mut Ui, panel: &mut SettingsPanel, view: &SettingsView, commands: &mut Vec<Command>) {
    let Some(draft) = &mut panel.drafts.agent else {
        return;
    };
    let close = ui.group(|ui| {
        ui.set_width(ui.available_width());
        let preset = cocode_core::AcpAgentId::new(draft.id.trim())
            .ok()
            .is_some_and(|id| {
                cocode_acp::AcpAgentRegistry::with_presets()
                    .get(&id)
                    .is_some()
            });
        ui.strong(match &draft.original {
            Some(id) => format!("Edit {id}"),
            None if preset => format!(
                "{}: this folder's own entry, in place of the preset",
                draft.id.trim()
            ),
            None => "New agent entry".to_owned(),
        });
        egui::Grid::new("settings-agent-form")
            .num_columns(2)
            .show(ui, |ui| {
                let fields: [(&str, &mut String, bool, &str); 7] = [
                    ("Agent id", &mut draft.id, false, "my-agent"),
                    ("Name", &mut draft.display_name, false, "My agent"),
                    ("Command", &mut draft.command, false, "my-agent --acp"),
                    (
                        "Environment",
                        &mut draft.env,
                        true,
                        "NAME=value, one a line",
                    ),
                    (
                        "Model hosts",
                        &mut draft.model_hosts,
                        false,
                        "api.example.com",
                    ),
                    (
                        "Secret variables",
                        &mut draft.secret_env,
                        false,
                        "MY_API_KEY",
                    ),
                    ("State folders", &mut draft.state_dirs, true, "~/.my-agent"),
                ];
                for (name, text, multiline, hint) in fields {
                    let label = ui.label(name);
                    let edit = if multiline {
                        egui::TextEdit::multiline(text).desired_rows(2)
                    } else {
                        egui::TextEdit::singleline(text)
                    };
                    ui.add(edit.hint_text(hint).desired_width(320.0))
                        .labelled_by(label.id);
                    ui.end_row();
                }
            });
        let mut changed = view.config.clone();
        let checked = crate::host::settings::apply(
            std::path::Path::new("/"),
            &mut changed,
            &SettingsEdit::PutAgent(draft.clone()),
        );
        ui.horizontal(|ui| {
            if ui
                .add_enabled(checked.is_ok(), egui::Button::new("Save agent"))
                .on_hover_text("Into workspace.json; what you add here is allowed at once")
                .clicked()
            {
                commands.push(Command::Window(WindowCommand::EditSettings(
                    SettingsEdit::PutAgent(draft.clone()),
                )));
                return true;
            }
            let cancel = ui.button("Cancel").clicked();
            if let Err(why) = &checked {
                cocode_ui::badge(ui, why, Tone::Danger);
            }
            cancel
        })
        .inner
    });
    if close.inner {
        panel.drafts.agent = None;
    }
}
