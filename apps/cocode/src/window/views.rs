//! Panel views: read state, draw, and return commands.

pub mod agent;
pub mod approvals;
pub mod catalog;
pub mod diff;
pub mod editor;
pub mod editor_bars;
pub mod editor_git;
pub mod editor_input;
pub mod editor_lsp;
pub mod editor_prompts;
pub mod editor_review;
pub mod explorer;
pub mod new_from_brick;
pub mod open_folder;
pub mod palette;
pub mod problems;
pub mod providers;
pub mod quick_open;
pub mod review;
pub mod scm;
pub mod search;
pub mod settings;
pub mod settings_agents;
pub mod settings_parts;
pub mod terminal;
pub mod trace;
pub mod transcript;

/// The keys a list takes from whatever else would have them: arrows move,
/// Enter chooses, Escape leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "four keys, each pressed or not"
)]
pub struct ListKeys {
    pub down: bool,
    pub up: bool,
    pub enter: bool,
    pub escape: bool,
}

impl ListKeys {
    /// Takes this frame's presses of the four keys (without modifiers).
    pub fn take(input: &mut egui::InputState) -> Self {
        use egui::{Key, Modifiers};
        Self {
            down: input.consume_key(Modifiers::NONE, Key::ArrowDown),
            up: input.consume_key(Modifiers::NONE, Key::ArrowUp),
            enter: input.consume_key(Modifiers::NONE, Key::Enter),
            escape: input.consume_key(Modifiers::NONE, Key::Escape),
        }
    }
}

/// A quick pick: a popup at the top centre of the window, half its width
/// (as VS Code's), over everything; `contents` gets its width.
pub fn quick_pick(ctx: &egui::Context, id: &str, contents: impl FnOnce(&mut egui::Ui, f32)) {
    let width = (ctx.content_rect().width() * 0.5).clamp(360.0, 720.0);
    egui::Area::new(egui::Id::new(id))
        .anchor(egui::Align2::CENTER_TOP, [0.0, 48.0])
        .order(egui::Order::Foreground)
        .show(ctx, |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_width(width);
                contents(ui, width);
            });
        });
}

/// A quick pick's field: the query as typed this frame, the keyboard put
/// there when `focus` asks for it (once).
pub fn pick_field(ui: &mut egui::Ui, query: &str, hint: &str, focus: &mut bool) -> String {
    let mut text = query.to_owned();
    let field = ui.add(
        egui::TextEdit::singleline(&mut text)
            .hint_text(hint)
            .desired_width(f32::INFINITY),
    );
    if std::mem::take(focus) {
        field.request_focus();
    }
    text
}

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
