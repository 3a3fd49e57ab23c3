//! Light and dark themes and the semantic colours shared by panels.

use egui::{Color32, Visuals};

/// The app theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    #[default]
    Dark,
    Light,
}

/// Semantic tones for badges and markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Neutral,
    Info,
    Success,
    Warning,
    Danger,
}

impl Tone {
    /// The colour of this tone in a theme (chosen for contrast on the panel background).
    pub fn color(self, theme: Theme) -> Color32 {
        match (self, theme) {
            (Self::Neutral, Theme::Dark) => Color32::from_rgb(0xa0, 0xa4, 0xab),
            (Self::Neutral, Theme::Light) => Color32::from_rgb(0x55, 0x5a, 0x62),
            (Self::Info, Theme::Dark) => Color32::from_rgb(0x6c, 0xb6, 0xff),
            (Self::Info, Theme::Light) => Color32::from_rgb(0x0b, 0x5c, 0xad),
            (Self::Success, Theme::Dark) => Color32::from_rgb(0x6f, 0xcf, 0x7f),
            (Self::Success, Theme::Light) => Color32::from_rgb(0x1a, 0x7f, 0x37),
            (Self::Warning, Theme::Dark) => Color32::from_rgb(0xe8, 0xb9, 0x4a),
            (Self::Warning, Theme::Light) => Color32::from_rgb(0x9a, 0x67, 0x00),
            (Self::Danger, Theme::Dark) => Color32::from_rgb(0xff, 0x7b, 0x72),
            (Self::Danger, Theme::Light) => Color32::from_rgb(0xcf, 0x22, 0x2e),
        }
    }
}

fn visuals(theme: Theme) -> Visuals {
    let mut visuals = match theme {
        Theme::Dark => Visuals::dark(),
        Theme::Light => Visuals::light(),
    };
    visuals.hyperlink_color = Tone::Info.color(theme);
    visuals.warn_fg_color = Tone::Warning.color(theme);
    visuals.error_fg_color = Tone::Danger.color(theme);
    visuals
}

/// Makes `theme` the context's theme, with cocode's semantic colours in both
/// egui themes (so a later system theme switch keeps them).
pub fn apply_theme(ctx: &egui::Context, theme: Theme) {
    ctx.set_visuals_of(egui::Theme::Dark, visuals(Theme::Dark));
    ctx.set_visuals_of(egui::Theme::Light, visuals(Theme::Light));
    ctx.set_theme(match theme {
        Theme::Dark => egui::Theme::Dark,
        Theme::Light => egui::Theme::Light,
    });
}

/// Follows the system's light or dark setting from now on, with cocode's
/// semantic colours in both themes.
pub fn follow_system_theme(ctx: &egui::Context) {
    ctx.set_visuals_of(egui::Theme::Dark, visuals(Theme::Dark));
    ctx.set_visuals_of(egui::Theme::Light, visuals(Theme::Light));
    ctx.set_theme(egui::ThemePreference::System);
}

/// The theme `ctx` draws with now (the system's, when it follows it).
pub fn current_theme(ctx: &egui::Context) -> Theme {
    match ctx.theme() {
        egui::Theme::Dark => Theme::Dark,
        egui::Theme::Light => Theme::Light,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn themes_switch_the_visuals() {
        let ctx = egui::Context::default();
        apply_theme(&ctx, Theme::Light);
        assert!(!ctx.global_style().visuals.dark_mode);
        assert_eq!(
            ctx.global_style().visuals.error_fg_color,
            Tone::Danger.color(Theme::Light)
        );
        apply_theme(&ctx, Theme::Dark);
        assert!(ctx.global_style().visuals.dark_mode);
        assert_eq!(
            ctx.global_style().visuals.warn_fg_color,
            Tone::Warning.color(Theme::Dark)
        );
    }
}
