//! The Settings page's small parts, shared by its sections: a setting's
//! heading (and whether the search shows it), a grant's standing, and a
//! labelled field.

use cocode_ui::Tone;
use egui::Ui;

use crate::host::trust::Grant;

/// A setting's name and its one line of explanation, when the search
/// finds its words among them; whether it is shown.
pub fn heading(ui: &mut Ui, query: &str, (name, explanation): (&str, &str)) -> bool {
    if !crate::window::settings::matches(query, &[name, explanation]) {
        return false;
    }
    ui.add_space(6.0);
    ui.strong(name);
    ui.weak(explanation);
    true
}

/// Where the person stands on `grant`, when it is not simply allowed.
pub fn standing_badge(ui: &mut Ui, grants: &crate::host::trust::GrantStanding, grant: &Grant) {
    if grants.refused.contains(grant) {
        cocode_ui::badge(ui, "kept off", Tone::Warning);
    } else if grants.pending.contains(grant) {
        cocode_ui::badge(ui, "not decided", Tone::Neutral);
    }
}

/// A short field with its label before it (the label names it for the
/// accessibility tree too).
pub fn labelled_field(ui: &mut Ui, label: &str, text: &mut String, width: f32) {
    let label = ui.label(label);
    ui.add(egui::TextEdit::singleline(text).desired_width(width))
        .labelled_by(label.id);
}
