//! The Tool catalog panel: the canonical definitions of the tools agents
//! call (description, what the policy does, annotations, input and output
//! schema), a scope filter, and the catalog copied as MCP, `OpenAI` or
//! Anthropic JSON exactly as `cocode tools list --format` prints it.

use egui::{RichText, Ui};

use crate::host::tools::{CatalogFormat, catalog_json};
use crate::window::catalog::{CatalogPanel, Scope, policy_words, sample_problems};
use crate::window::command::{Command, WindowCommand};

pub fn show(ui: &mut Ui, panel: &mut CatalogPanel, folder_open: bool, commands: &mut Vec<Command>) {
    // Wrapped: the panel may be narrower than the scopes and the exports.
    ui.horizontal_wrapped(|ui| {
        for scope in Scope::ALL {
            ui.selectable_value(&mut panel.scope, scope, scope.label());
        }
        ui.separator();
        for format in CatalogFormat::ALL {
            if ui
                .button(format!("Copy as {} JSON", format.label()))
                .on_hover_text(format!(
                    "The whole catalog, as `cocode tools list --format {}` prints it",
                    format.name()
                ))
                .clicked()
            {
                ui.ctx().copy_text(catalog_json(format));
            }
        }
    });
    ui.separator();
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let tools: Vec<cocode_tool_protocol::ToolDefinition> =
                panel.shown().into_iter().cloned().collect();
            for tool in &tools {
                egui::CollapsingHeader::new(
                    RichText::new(format!("{}  {}", tool.name, tool.title)).monospace(),
                )
                .id_salt(("catalog", tool.name.as_str()))
                .show(ui, |ui| {
                    ui.label(&tool.description);
                    ui.label(format!("Policy: {}", policy_words(tool)));
                    let a = tool.annotations;
                    let mut marks = Vec::new();
                    for (on, word) in [
                        (a.read_only, "read-only"),
                        (a.destructive, "destructive"),
                        (a.idempotent, "idempotent"),
                        (a.open_world, "reaches outside the workspace"),
                    ] {
                        if on {
                            marks.push(word);
                        }
                    }
                    if !marks.is_empty() {
                        ui.label(format!("Annotations: {}", marks.join(", ")));
                    }
                    ui.label("Input schema");
                    let input =
                        serde_json::to_string_pretty(&tool.input_schema).unwrap_or_default();
                    ui.label(RichText::new(input).monospace());
                    if let Some(output) = &tool.output_schema {
                        ui.label("Output schema");
                        let output = serde_json::to_string_pretty(output).unwrap_or_default();
                        ui.label(RichText::new(output).monospace());
                    }
                    sample(ui, panel, tool, folder_open, commands);
                });
            }
        });
}

/// The sample-arguments editor, checked against the tool's schema as it is
/// typed, and Run sample for a read-only tool with a folder open.
fn sample(
    ui: &mut Ui,
    panel: &mut CatalogPanel,
    tool: &cocode_tool_protocol::ToolDefinition,
    folder_open: bool,
    commands: &mut Vec<Command>,
) {
    let label = ui.label(RichText::new("Sample arguments").strong());
    let text = panel.samples.entry(tool.name.clone()).or_insert_with(|| {
        let sample = cocode_tool_protocol::registry::sample_arguments(&tool.input_schema);
        serde_json::to_string_pretty(&sample).unwrap_or_default()
    });
    ui.add(
        egui::TextEdit::multiline(text)
            .code_editor()
            .desired_rows(3)
            .desired_width(f32::INFINITY),
    )
    .labelled_by(label.id);
    let problems = sample_problems(tool, text);
    for problem in &problems {
        cocode_ui::badge(ui, problem, cocode_ui::Tone::Danger);
    }
    let why_not = if !tool.annotations.read_only {
        Some("Only read-only tools run from here; an agent's call of this one asks you first.")
    } else if !folder_open {
        Some("Open a folder to run a tool in it.")
    } else {
        None
    };
    let running = panel.running.as_deref() == Some(tool.name.as_str());
    let button = ui
        .add_enabled(
            why_not.is_none() && problems.is_empty() && !running,
            egui::Button::new(format!("Run sample of {}", tool.name)),
        )
        .on_disabled_hover_text(why_not.unwrap_or("Fix the arguments first."));
    if button.clicked()
        && let Ok(serde_json::Value::Object(arguments)) = serde_json::from_str(text)
    {
        panel.running = Some(tool.name.clone());
        panel.results.remove(&tool.name);
        commands.push(Command::Window(WindowCommand::RunToolSample {
            name: tool.name.clone(),
            arguments,
        }));
    }
    if let Some(why) = why_not {
        ui.weak(why);
    }
    if running {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("Running…");
        });
    }
    match panel.results.get(&tool.name) {
        Some(Ok(result)) => {
            ui.label(RichText::new("Result").strong());
            ui.label(RichText::new(result).monospace());
        }
        Some(Err(why)) => {
            cocode_ui::badge(ui, why, cocode_ui::Tone::Danger);
        }
        None => {}
    }
}
