//! A unified diff drawn with its lines coloured: removed red, added green,
//! hunk headers and file names dimmed.

use cocode_ui::{Theme, Tone};
use egui::text::LayoutJob;
use egui::{TextFormat, TextStyle, Ui};

/// Draws `diff` in a scroll area at most `max_height` tall.
pub fn show(ui: &mut Ui, id: impl std::hash::Hash + std::fmt::Debug, diff: &str, max_height: f32) {
    let font = TextStyle::Monospace.resolve(ui.style());
    let plain = ui.visuals().text_color();
    let weak = ui.visuals().weak_text_color();
    let theme = if ui.visuals().dark_mode {
        Theme::Dark
    } else {
        Theme::Light
    };
    let mut job = LayoutJob::default();
    for line in diff.lines() {
        let color = if line.starts_with("+++") || line.starts_with("---") {
            weak
        } else if line.starts_with('+') {
            Tone::Success.color(theme)
        } else if line.starts_with('-') {
            Tone::Danger.color(theme)
        } else if line.starts_with("@@") || line.starts_with("rename ") {
            Tone::Neutral.color(theme)
        } else {
            plain
        };
        job.append(line, 0.0, TextFormat::simple(font.clone(), color));
        job.append("\n", 0.0, TextFormat::simple(font.clone(), color));
    }
    egui::ScrollArea::both()
        .id_salt(id)
        .max_height(max_height)
        .auto_shrink([false, true])
        .show(ui, |ui| {
            ui.add(egui::Label::new(job).extend());
        });
}
