//! Panel views: read state, draw, and return commands.

pub mod agent;
pub mod approvals;
pub mod catalog;
pub mod diff;
pub mod editor;
pub mod editor_bars;
pub mod editor_input;
pub mod editor_lsp;
pub mod editor_prompts;
pub mod explorer;
pub mod new_from_brick;
pub mod open_folder;
pub mod palette;
pub mod problems;
pub mod providers;
pub mod quick_open;
pub mod search;
pub mod settings;
pub mod terminal;
pub mod trace;
pub mod transcript;

/// Keeps the keyboard on a prompt's buttons: when none of those that can
/// be pressed has the focus, the first one takes it (Enter presses it, Tab
/// moves on), as a desktop dialog's default button does.
pub fn keep_focus_on(ui: &egui::Ui, buttons: &[&egui::Response]) {
    let focused = ui.memory(egui::Memory::focused);
    let usable = |b: &&&egui::Response| b.enabled();
    if !buttons.iter().filter(usable).any(|b| Some(b.id) == focused)
        && let Some(first) = buttons.iter().find(usable)
    {
        first.request_focus();
    }
}
