//! The Settings page: a search over every setting, each with one line of
//! explanation — the window's look, the keyboard, the providers, and the
//! open folder's `.cocode/config/workspace.json` (completion, attempts,
//! hosts, write exceptions, external agents, retention, and what the
//! folder's own settings grant). What is typed is checked as it is typed
//! and applied by its button; a refused change says why.

use std::path::Path;

use cocode_core::task::CompletionMode;
use cocode_ui::{Theme, Tone};
use egui::Ui;

use crate::host::settings::{self, SettingsEdit};
use crate::host::trust::Grant;
use crate::window::command::{Command, WindowCommand};
use crate::window::keymap::Keymap;
use crate::window::providers::ProvidersPanel;
use crate::window::settings::{Section, SettingsPanel};
use crate::window::views::settings_parts::{heading, labelled_field, standing_badge};

/// What the page shows besides its own state.
#[derive(Debug)]
pub struct Context<'a> {
    pub providers: &'a ProvidersPanel,
    pub folder: Option<&'a Path>,
    pub theme: Theme,
    /// The theme follows the system's setting.
    pub follows_system: bool,
    /// The zoom in percent.
    pub zoom: u32,
    /// The editor's font size, if the person chose one.
    pub editor_font: Option<f32>,
    /// Lines each terminal keeps above its screen.
    pub scrollback: usize,
    pub keys: &'a Keymap,
}

/// Draws the page.
pub fn show(ui: &mut Ui, panel: &mut SettingsPanel, cx: &Context<'_>, commands: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        let heading = ui.heading("Settings");
        let search = ui
            .add(
                egui::TextEdit::singleline(&mut panel.query)
                    .hint_text("Search settings")
                    .desired_width(f32::INFINITY),
            )
            .labelled_by(heading.id);
        if std::mem::take(&mut panel.focus_search) {
            search.request_focus();
        }
    });
    ui.horizontal(|ui| {
        ui.selectable_value(&mut panel.section, None, "All");
        for section in Section::ALL {
            ui.selectable_value(&mut panel.section, Some(section), section.title());
        }
    });
    if let Some(error) = &panel.error {
        cocode_ui::badge(ui, error, Tone::Danger);
    }
    egui::ScrollArea::vertical()
        .id_salt("settings")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            if panel.shows_section(Section::Window) {
                appearance(ui, panel, cx, commands);
                keyboard(ui, panel, cx.keys);
                ui.separator();
            }
            if panel.shows_section(Section::Folder) {
                folder(ui, panel, cx.folder, commands);
                if let (Some(_), Some(view)) = (cx.folder, panel.view.clone()) {
                    super::settings_agents::section(ui, panel, &view, commands);
                }
                ui.separator();
            }
            if panel.shows_section(Section::Providers)
                && panel.shows(&["Providers", "key", "model", "address", "API", "provider"])
            {
                crate::window::views::providers::section(ui, cx.providers, commands);
            }
        });
}

/// One setting: its name, its explanation, and its controls, when the
/// search shows it.
fn setting(
    ui: &mut Ui,
    panel: &SettingsPanel,
    words: (&str, &str),
    controls: impl FnOnce(&mut Ui),
) {
    if heading(ui, &panel.query, words) {
        controls(ui);
    }
}

fn appearance(
    ui: &mut Ui,
    panel: &mut SettingsPanel,
    cx: &Context<'_>,
    commands: &mut Vec<Command>,
) {
    setting(
        ui,
        panel,
        (
            "Theme",
            "The window's colours: dark, light, or as the system is set.",
        ),
        |ui| {
            ui.horizontal(|ui| {
                for (theme, name) in [(Theme::Dark, "Dark"), (Theme::Light, "Light")] {
                    if ui
                        .radio(!cx.follows_system && cx.theme == theme, name)
                        .clicked()
                    {
                        commands.push(Command::Window(WindowCommand::SetTheme(theme)));
                    }
                }
                if ui.radio(cx.follows_system, "Follow the system").clicked() {
                    commands.push(Command::Window(WindowCommand::FollowSystemTheme));
                }
            });
        },
    );
    setting(
        ui,
        panel,
        (
            "Zoom",
            "The size of all text and controls (Ctrl and + or - does the same).",
        ),
        |ui| {
            let mut zoom = cx.zoom;
            let slider = egui::Slider::new(&mut zoom, 75..=200)
                .step_by(5.0)
                .suffix("%");
            if ui.add(slider).changed() {
                commands.push(Command::Window(WindowCommand::SetZoom(zoom)));
            }
        },
    );
    setting(
        ui,
        panel,
        (
            "Editor font size",
            "The size of code in the editor, in points, apart from the rest of the window (which Zoom scales).",
        ),
        |ui| {
            ui.horizontal(|ui| {
                let shown = cocode_ui::editor_font(ui.style()).size;
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a font size of 6 to 48 points"
                )]
                let mut points = cx.editor_font.unwrap_or(shown).round() as u16;
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a font size of 6 to 48 points"
                )]
                let range = (*cocode_ui::EDITOR_SIZES.start() as u16)
                    ..=(*cocode_ui::EDITOR_SIZES.end() as u16);
                let slider = egui::Slider::new(&mut points, range).suffix(" pt");
                if ui.add(slider).changed() {
                    commands.push(Command::Window(WindowCommand::SetEditorFontSize(Some(
                        points,
                    ))));
                }
                if ui
                    .add_enabled(
                        cx.editor_font.is_some(),
                        egui::Button::new("Same as the window"),
                    )
                    .clicked()
                {
                    commands.push(Command::Window(WindowCommand::SetEditorFontSize(None)));
                }
            });
        },
    );
    scrollback(ui, panel, cx, commands);
}

/// The terminals' scrollback, typed and checked as it is typed.
fn scrollback(
    ui: &mut Ui,
    panel: &mut SettingsPanel,
    cx: &Context<'_>,
    commands: &mut Vec<Command>,
) {
    let range = crate::window::terminals::SCROLLBACK_RANGE;
    let shows = heading(
        ui,
        &panel.query,
        (
            "Terminal scrollback",
            "Lines each terminal keeps above its screen, the open ones too.",
        ),
    );
    if !shows {
        return;
    }
    let draft = &mut panel.drafts.scrollback;
    if draft.is_empty() {
        *draft = cx.scrollback.to_string();
    }
    let checked = settings::parse_number(
        draft,
        "scrollback",
        *range.start() as u64..=*range.end() as u64,
    );
    ui.horizontal(|ui| {
        labelled_field(ui, "Lines", draft, 100.0);
        let lines = checked.as_ref().ok().and_then(|n| usize::try_from(*n).ok());
        if ui
            .add_enabled(
                lines.is_some_and(|n| n != cx.scrollback),
                egui::Button::new("Apply"),
            )
            .clicked()
            && let Some(lines) = lines
        {
            commands.push(Command::Window(WindowCommand::SetScrollback(lines)));
        }
    });
    if let Err(why) = checked {
        cocode_ui::badge(ui, &why, Tone::Danger);
    }
}

fn keyboard(ui: &mut Ui, panel: &SettingsPanel, keys: &Keymap) {
    setting(
        ui,
        panel,
        (
            "Keyboard shortcuts",
            "Your own bindings, in VS Code's form, are read from keybindings.json at start.",
        ),
        |ui| {
            if let Some(file) = &keys.file {
                ui.monospace(file.display().to_string());
            }
            for problem in &keys.problems {
                cocode_ui::badge(ui, problem, Tone::Warning);
            }
            egui::CollapsingHeader::new("Every command, its id and its key")
                .id_salt("settings-commands")
                .show(ui, |ui| {
                    egui::Grid::new("settings-command-ids")
                        .striped(true)
                        .show(ui, |ui| {
                            for action in crate::window::keymap::Action::all() {
                                ui.label(action.palette_text());
                                ui.monospace(action.id());
                                ui.label(keys.label(action));
                                ui.end_row();
                            }
                        });
                });
        },
    );
}

#[expect(
    clippy::too_many_lines,
    reason = "the folder's settings, one after the other"
)]
fn folder(
    ui: &mut Ui,
    panel: &mut SettingsPanel,
    folder: Option<&Path>,
    commands: &mut Vec<Command>,
) {
    ui.heading("This folder");
    let Some(root) = folder else {
        ui.weak("Open a folder to change its settings.");
        return;
    };
    let Some(view) = panel.view.clone() else {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("Reading this folder's settings…");
        });
        return;
    };
    ui.weak(if view.exists {
        "Kept in .cocode/config/workspace.json."
    } else {
        "This folder has no settings of its own yet: a change creates .cocode/config/workspace.json."
    });
    let config = &view.config;
    setting(
        ui,
        panel,
        (
            "Completion",
            "Who says a task is done: a person approves it, or passing verification completes it.",
        ),
        |ui| {
            ui.horizontal(|ui| {
                let approval = config.completion_mode != Some(CompletionMode::SelfVerification);
                if ui.radio(approval, "A person approves").clicked() && !approval {
                    commands.push(Command::Window(WindowCommand::EditSettings(
                        SettingsEdit::CompletionMode(None),
                    )));
                }
                if ui.radio(!approval, "Verification decides").clicked() && approval {
                    commands.push(Command::Window(WindowCommand::EditSettings(
                        SettingsEdit::CompletionMode(Some(CompletionMode::SelfVerification)),
                    )));
                }
            });
        },
    );
    let drafts = &mut panel.drafts;
    let attempts = SettingsEdit::Attempts {
        time_limit_secs: drafts.time_limit.clone(),
        retries: drafts.retries.clone(),
    };
    let retention = SettingsEdit::Retention {
        keep_per_path: drafts.keep_per_path.clone(),
        cap_mib: drafts.cap_mib.clone(),
    };
    let max_kept = SettingsEdit::MaxKeptFile(drafts.max_kept.clone());
    let query = panel.query.clone();
    if heading(
        ui,
        &query,
        (
            "Attempts",
            "How long one attempt may take, in seconds, and how many times a task retries after verification fails (from the next opening of the folder).",
        ),
    ) {
        ui.horizontal(|ui| {
            labelled_field(ui, "seconds", &mut drafts.time_limit, 80.0);
            labelled_field(ui, "retries", &mut drafts.retries, 40.0);
        });
        apply_row(ui, root, config, &attempts, commands);
    }
    if heading(
        ui,
        &query,
        (
            "Allowed hosts",
            "The hosts agents' commands may reach through the policy proxy. The ecosystems' registries and the hosts of the folder's lockfiles are allowed as well.",
        ),
    ) {
        let builtin: Vec<String> = view
            .hosts
            .defaults
            .iter()
            .chain(&view.hosts.derived)
            .map(ToString::to_string)
            .collect();
        if !builtin.is_empty() {
            ui.label(format!("Always: {}", builtin.join(", ")));
        }
        for host in &config.allowed_hosts {
            let host = host.to_string();
            ui.horizontal(|ui| {
                ui.monospace(&host);
                standing_badge(ui, &view.grants, &Grant::Host { host: host.clone() });
                if ui.small_button("Remove").clicked() {
                    commands.push(Command::Window(WindowCommand::EditSettings(
                        SettingsEdit::RemoveHost(host.clone()),
                    )));
                }
            });
        }
        ui.horizontal(|ui| {
            let label = ui.label("Add a host:");
            ui.add(
                egui::TextEdit::singleline(&mut drafts.host)
                    .hint_text("api.example.com")
                    .desired_width(220.0),
            )
            .labelled_by(label.id);
            let checked =
                (!drafts.host.trim().is_empty()).then(|| settings::parse_host(&drafts.host));
            let ok = matches!(checked, Some(Ok(_)));
            if ui.add_enabled(ok, egui::Button::new("Add host")).clicked() {
                commands.push(Command::Window(WindowCommand::EditSettings(
                    SettingsEdit::AddHost(std::mem::take(&mut drafts.host)),
                )));
            }
            if let Some(Err(why)) = checked {
                cocode_ui::badge(ui, &why, Tone::Danger);
            }
        });
    }
    if heading(
        ui,
        &query,
        (
            "Write exceptions",
            "Folders outside the workspace this folder names. cocode's tools refuse to write in them (history could not record it) and say so; agents' commands write only in the toolchains' caches.",
        ),
    ) {
        for exception in &config.write_exceptions {
            ui.horizontal(|ui| {
                ui.label(&exception.name);
                ui.monospace(exception.path.display().to_string());
                if ui.small_button("Remove").clicked() {
                    commands.push(Command::Window(WindowCommand::EditSettings(
                        SettingsEdit::RemoveWriteException(exception.name.clone()),
                    )));
                }
            });
        }
        ui.horizontal(|ui| {
            ui.add(
                egui::TextEdit::singleline(&mut drafts.exception_name)
                    .hint_text("CARGO_HOME")
                    .desired_width(120.0),
            );
            ui.add(
                egui::TextEdit::singleline(&mut drafts.exception_path)
                    .hint_text("/home/you/.cargo")
                    .desired_width(220.0),
            );
            let typed = !drafts.exception_name.trim().is_empty()
                || !drafts.exception_path.trim().is_empty();
            let checked = typed.then(|| {
                settings::parse_write_exception(
                    root,
                    &drafts.exception_name,
                    &drafts.exception_path,
                )
            });
            let ok = matches!(checked, Some(Ok(_)));
            if ui
                .add_enabled(ok, egui::Button::new("Add exception"))
                .clicked()
            {
                commands.push(Command::Window(WindowCommand::EditSettings(
                    SettingsEdit::AddWriteException {
                        name: std::mem::take(&mut drafts.exception_name),
                        path: std::mem::take(&mut drafts.exception_path),
                    },
                )));
            }
            if let Some(Err(why)) = checked {
                cocode_ui::badge(ui, &why, Tone::Danger);
            }
        });
    }
    if heading(
        ui,
        &query,
        (
            "History retention",
            "How many recent tasks stay kept for each file, and the history's size cap in MiB (from the next opening of the folder).",
        ),
    ) {
        ui.horizontal(|ui| {
            labelled_field(ui, "tasks per file", &mut drafts.keep_per_path, 60.0);
            labelled_field(ui, "cap (MiB)", &mut drafts.cap_mib, 80.0);
        });
        apply_row(ui, root, config, &retention, commands);
    }
    if heading(
        ui,
        &query,
        (
            "Largest kept file",
            "A file a command changed is kept whole up to this size in MiB; above it only its hash is recorded and rolling it back is refused.",
        ),
    ) {
        ui.add(egui::TextEdit::singleline(&mut drafts.max_kept).desired_width(80.0));
        apply_row(ui, root, config, &max_kept, commands);
    }
    let grants: Vec<(Grant, &str)> = view
        .grants
        .allowed
        .iter()
        .map(|g| (g.clone(), "allowed"))
        .chain(view.grants.refused.iter().map(|g| (g.clone(), "kept off")))
        .chain(
            view.grants
                .pending
                .iter()
                .map(|g| (g.clone(), "not decided")),
        )
        .collect();
    if !grants.is_empty()
        && heading(
            ui,
            &query,
            (
                "What this folder's settings grant",
                "Decided by you, for this folder only; what is kept off stays off.",
            ),
        )
    {
        for (grant, state) in grants {
            ui.horizontal_wrapped(|ui| {
                ui.label(grant.words());
                ui.weak(state);
                let (label, allow) = if state == "allowed" {
                    ("Keep off", false)
                } else {
                    ("Allow", true)
                };
                if ui.small_button(label).clicked() {
                    commands.push(Command::Window(WindowCommand::DecideGrant { grant, allow }));
                }
            });
        }
    }
}

/// An Apply button for `edit`, enabled when it differs from `config` and
/// can be made; its reason when it cannot.
fn apply_row(
    ui: &mut Ui,
    root: &Path,
    config: &cocode_core::workspace::WorkspaceConfig,
    edit: &SettingsEdit,
    commands: &mut Vec<Command>,
) {
    let mut changed = config.clone();
    let checked = settings::apply(root, &mut changed, edit);
    ui.horizontal(|ui| {
        let ok = checked.is_ok() && changed != *config;
        if ui.add_enabled(ok, egui::Button::new("Apply")).clicked() {
            commands.push(Command::Window(WindowCommand::EditSettings(edit.clone())));
        }
        if let Err(why) = checked {
            cocode_ui::badge(ui, &why, Tone::Danger);
        }
    });
}
