//! Icon glyphs, chosen from characters the bundled font chain actually has
//! (egui's emoji and icon fonts), so no icon falls back to a box.

/// A closed folder in a tree.
pub const FOLDER_CLOSED: &str = "⏵";
/// An open folder in a tree.
pub const FOLDER_OPEN: &str = "⏷";
/// Reload.
pub const REFRESH: &str = "⟳";
/// Go to the parent folder.
pub const UP: &str = "⬆";
/// A folder in a list.
pub const FOLDER: &str = "📁";
/// A symbolic link.
pub const LINK: &str = "↪";

#[cfg(test)]
mod tests {
    use egui::{FontFamily, FontId};

    fn renders(text: &str) -> bool {
        let ctx = egui::Context::default();
        ctx.set_fonts(crate::font_definitions());
        let mut output = ctx.run_ui(egui::RawInput::default(), |_| {});
        output.textures_delta.clear();
        ctx.fonts_mut(|f| f.has_glyphs(&FontId::new(14.0, FontFamily::Proportional), text))
    }

    #[test]
    fn tree_and_toolbar_icons_have_glyphs() {
        // ⬆, 📁 and ↪ come from the chain's replacement face (Noto Emoji),
        // which egui's `has_glyph` cannot tell apart from a missing glyph.
        for icon in [super::FOLDER_CLOSED, super::FOLDER_OPEN, super::REFRESH] {
            assert!(renders(icon), "{icon}");
        }
        assert!(
            !renders("▸"),
            "the check must be able to fail: ▸ has no glyph in the chain"
        );
    }
}
