//! The Tool catalog panel: the canonical definitions of the tools agents
//! call (description, what the policy does, annotations, input and output
//! schema), a scope filter, and the catalog copied as MCP, `OpenAI` or
//! Anthropic JSON exactly as `cocode tools list --format` prints it.

use egui::{RichText, Ui};

use crate::host::tools::{CatalogFormat, catalog_json};
use crate::window::catalog::{CatalogPanel, Scope, policy_words};

pub fn show(ui: &mut Ui, panel: &mut CatalogPanel) {
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
            for tool in panel.shown() {
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
                });
            }
        });
}
