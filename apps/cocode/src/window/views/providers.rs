//! Settings → Providers: one card per provider with its key (stored,
//! replaced or removed; never shown again), its address and its models.

use std::fmt::Write as _;

use cocode_ui::Tone;
use egui::Ui;

use crate::window::command::{AgentCommand, Command, ProviderAction};
use crate::window::providers::{KeyState, ProviderRow, ProvidersPanel};

/// The most model names listed on a card (the composer offers them all).
const MODELS_SHOWN: usize = 12;

/// The Settings page's Providers section.
pub fn section(ui: &mut Ui, panel: &ProvidersPanel, commands: &mut Vec<Command>) {
    ui.heading("Providers");
    ui.label(
        "The built-in agent's model providers. A key is kept in the OS credential \
         store: it is never shown again, written to a file, recorded with a task, \
         or given to agents' commands.",
    );
    if let Some((text, _)) = panel.notes.get("") {
        cocode_ui::badge(ui, text, Tone::Warning);
    }
    if panel.rows.is_empty() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("Looking up the providers…");
        });
    }
    for row in &panel.rows {
        ui.add_space(6.0);
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.set_width(ui.available_width());
            provider_card(ui, panel, row, commands);
        });
    }
}

fn key_tone(key: &KeyState) -> Tone {
    match key {
        KeyState::NotNeeded | KeyState::Stored => Tone::Success,
        KeyState::SessionOnly => Tone::Warning,
        KeyState::Missing => Tone::Neutral,
        KeyState::Unavailable { .. } => Tone::Danger,
    }
}

fn provider_card(
    ui: &mut Ui,
    panel: &ProvidersPanel,
    row: &ProviderRow,
    commands: &mut Vec<Command>,
) {
    ui.horizontal_wrapped(|ui| {
        ui.label(egui::RichText::new(&row.name).strong().size(15.0));
        ui.weak(format!("({})", row.id));
        let badge = cocode_ui::badge(ui, &row.key.phrase(), key_tone(&row.key));
        if let KeyState::Unavailable { message, .. } = &row.key {
            badge.on_hover_text(message);
        }
    });
    if let Some(url) = &row.base_url {
        address_row(ui, panel, row, url, commands);
    } else if !row.requires_key {
        ui.weak("Runs inside cocode, offline.");
    }
    if row.requires_key {
        key_row(ui, panel, row, commands);
    }
    if row.base_url.is_none() && !row.requires_key {
        // The local agent: nothing to connect to.
        return;
    }
    ui.horizontal_wrapped(|ui| {
        let fetching = panel.fetching.contains(&row.id);
        let test = ui
            .add_enabled(!fetching, egui::Button::new("Test connection"))
            .on_hover_text("Fetches the provider's model list with the stored key");
        let name = format!("Test the connection to {}", row.name);
        test.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Button, !fetching, &name));
        if test.clicked() {
            commands.push(Command::Agent(AgentCommand::Provider(
                ProviderAction::Models(row.id.clone()),
            )));
        }
        if fetching {
            ui.spinner();
        }
        if let Some((text, ok)) = panel.notes.get(&row.id) {
            cocode_ui::badge(ui, text, if *ok { Tone::Success } else { Tone::Danger });
        }
    });
    if let Some(Ok(models)) = panel.models.get(&row.id) {
        let mut text = models
            .iter()
            .take(MODELS_SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if models.len() > MODELS_SHOWN {
            let _ = write!(text, " and {} more", models.len() - MODELS_SHOWN);
        }
        ui.add(egui::Label::new(egui::RichText::new(format!("Models: {text}")).weak()).wrap());
    }
}

fn address_row(
    ui: &mut Ui,
    panel: &ProvidersPanel,
    row: &ProviderRow,
    url: &str,
    commands: &mut Vec<Command>,
) {
    ui.horizontal(|ui| {
        ui.label("Address");
        let mut text = panel
            .url_drafts
            .get(&row.id)
            .cloned()
            .unwrap_or_else(|| url.to_owned());
        let field = ui.add(
            egui::TextEdit::singleline(&mut text)
                .desired_width(320.0)
                .id_salt(("provider-url", &row.id)),
        );
        // Screen readers (and tests) tell the cards' fields apart.
        let name = format!("{} address", row.name);
        field.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::TextEdit, true, &name));
        if field.changed() {
            commands.push(Command::Agent(AgentCommand::ProviderUrlDraft {
                id: row.id.clone(),
                text: text.clone(),
            }));
        }
        let typed = panel.url_drafts.get(&row.id).is_some_and(|t| t != url);
        let entered = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if ui
            .add_enabled(typed, egui::Button::new("Use address"))
            .clicked()
            || (typed && entered)
        {
            commands.push(Command::Agent(AgentCommand::Provider(
                ProviderAction::SaveUrl {
                    id: row.id.clone(),
                    reset: false,
                },
            )));
        }
        let custom = row.preset_url.as_deref() != Some(url);
        if ui
            .add_enabled(custom, egui::Button::new("Preset address"))
            .on_hover_text(row.preset_url.clone().unwrap_or_default())
            .clicked()
        {
            commands.push(Command::Agent(AgentCommand::Provider(
                ProviderAction::SaveUrl {
                    id: row.id.clone(),
                    reset: true,
                },
            )));
        }
    });
}

fn key_row(ui: &mut Ui, panel: &ProvidersPanel, row: &ProviderRow, commands: &mut Vec<Command>) {
    ui.horizontal_wrapped(|ui| {
        ui.label("API key");
        let mut text = panel
            .key_drafts
            .get(&row.id)
            .map(|d| d.0.clone())
            .unwrap_or_default();
        let hint = match row.key {
            KeyState::Stored | KeyState::SessionOnly => "paste a new key to replace it",
            _ => "paste the key",
        };
        let field = ui.add(
            egui::TextEdit::singleline(&mut text)
                .password(true)
                .desired_width(260.0)
                .hint_text(hint)
                .id_salt(("provider-key", &row.id)),
        );
        let name = format!("{} API key", row.name);
        field.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::TextEdit, true, &name));
        if field.changed() {
            commands.push(Command::Agent(AgentCommand::ProviderKeyDraft {
                id: row.id.clone(),
                text: text.clone(),
            }));
        }
        let typed = !text.trim().is_empty();
        let entered = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        let replace = matches!(row.key, KeyState::Stored | KeyState::SessionOnly);
        // Without a store only "for this session" can keep it, and only
        // when the person says so (Enter does nothing then).
        let can_store = !matches!(row.key, KeyState::Unavailable { .. });
        if ui
            .add_enabled(
                typed && can_store,
                egui::Button::new(if replace { "Replace key" } else { "Save key" }),
            )
            .clicked()
            || (typed && can_store && entered)
        {
            commands.push(Command::Agent(AgentCommand::Provider(
                ProviderAction::SaveKey {
                    id: row.id.clone(),
                    session_only: false,
                },
            )));
        }
        if matches!(row.key, KeyState::Unavailable { .. })
            && ui
                .add_enabled(typed, egui::Button::new("Keep for this session only"))
                .on_hover_text(
                    "There is no credential store: the key stays in memory until the window closes",
                )
                .clicked()
        {
            commands.push(Command::Agent(AgentCommand::Provider(
                ProviderAction::SaveKey {
                    id: row.id.clone(),
                    session_only: true,
                },
            )));
        }
        if replace && ui.button("Remove key").clicked() {
            commands.push(Command::Agent(AgentCommand::Provider(
                ProviderAction::DeleteKey(row.id.clone()),
            )));
        }
    });
}
