//! Small widgets shared by panels.

use egui::{Response, RichText, Ui};

use crate::theme::{Theme, Tone};

fn theme_of(ui: &Ui) -> Theme {
    if ui.visuals().dark_mode {
        Theme::Dark
    } else {
        Theme::Light
    }
}

/// A short coloured label (a status, a marker).
pub fn badge(ui: &mut Ui, text: &str, tone: Tone) -> Response {
    ui.label(badge_text(ui, text, tone))
}

/// A badge's text, to put inside another widget (a tab, a button).
pub fn badge_text(ui: &Ui, text: &str, tone: Tone) -> RichText {
    RichText::new(text)
        .small()
        .strong()
        .color(tone.color(theme_of(ui)))
}

/// A bold header above a section of a panel.
pub fn section_header(ui: &mut Ui, text: &str) -> Response {
    ui.label(RichText::new(text).strong())
}

/// What a panel shows when it has nothing to show yet: what is missing and
/// what the person can do about it.
pub fn empty_state(ui: &mut Ui, title: &str, hint: &str) {
    ui.vertical_centered(|ui| {
        ui.add_space(16.0);
        ui.label(RichText::new(title).strong());
        ui.label(RichText::new(hint).color(Tone::Neutral.color(theme_of(ui))));
    });
}
