//! Bundled fonts. egui's default fonts have no Hangul, so two OFL fonts from
//! the Nanum family are embedded as fallbacks: `NanumSquare` for proportional
//! UI text (about 0.7 MB) and `NanumGothicCoding` for code and terminals (about
//! 2.3 MB, monospace, double-width Hangul). Both cover all 11,172 Hangul
//! syllables and the compatibility jamo. The licence is in `assets/fonts/OFL.txt`.

use std::sync::Arc;

use egui::{FontData, FontDefinitions, FontFamily};

/// Name of the proportional Korean fallback font.
pub const UI_FONT_NAME: &str = "NanumSquare";
/// Name of the monospace Korean fallback font.
pub const MONO_FONT_NAME: &str = "NanumGothicCoding";

const UI_FONT: &[u8] = include_bytes!("../../../assets/fonts/NanumSquareR.ttf");
const MONO_FONT: &[u8] = include_bytes!("../../../assets/fonts/NanumGothicCoding.ttf");

/// The editor's own text style: its size is the person's editor font
/// size, apart from the interface's (the interface zooms as a whole).
pub const EDITOR_TEXT: &str = "editor";

/// The smallest and largest editor font sizes, in points.
pub const EDITOR_SIZES: std::ops::RangeInclusive<f32> = 6.0..=48.0;

/// Sets the editor's font size (`None`: the monospace size of the
/// interface), in every theme's style.
pub fn set_editor_font_size(ctx: &egui::Context, size: Option<f32>) {
    let name = egui::TextStyle::Name(EDITOR_TEXT.into());
    ctx.all_styles_mut(|style| match size {
        Some(points) => {
            style.text_styles.insert(
                name.clone(),
                egui::FontId::monospace(points.clamp(*EDITOR_SIZES.start(), *EDITOR_SIZES.end())),
            );
        }
        None => {
            style.text_styles.remove(&name);
        }
    });
}

/// The editor's font in `style`.
pub fn editor_font(style: &egui::Style) -> egui::FontId {
    style
        .text_styles
        .get(&egui::TextStyle::Name(EDITOR_TEXT.into()))
        .cloned()
        .unwrap_or_else(|| egui::TextStyle::Monospace.resolve(style))
}

/// The fonts' licence text (SIL Open Font License 1.1), for the About view.
pub const FONT_LICENSE: &str = include_str!("../../../assets/fonts/OFL.txt");

/// egui's default fonts plus the Korean fallbacks: Latin text keeps egui's
/// look, and any glyph it lacks (Hangul, CJK punctuation) falls back.
pub fn font_definitions() -> FontDefinitions {
    let mut fonts = FontDefinitions::default();
    fonts.font_data.insert(
        UI_FONT_NAME.to_owned(),
        Arc::new(FontData::from_static(UI_FONT)),
    );
    fonts.font_data.insert(
        MONO_FONT_NAME.to_owned(),
        Arc::new(FontData::from_static(MONO_FONT)),
    );
    let proportional = fonts.families.entry(FontFamily::Proportional).or_default();
    proportional.push(UI_FONT_NAME.to_owned());
    proportional.push(MONO_FONT_NAME.to_owned());
    let monospace = fonts.families.entry(FontFamily::Monospace).or_default();
    monospace.push(MONO_FONT_NAME.to_owned());
    monospace.push(UI_FONT_NAME.to_owned());
    fonts
}

/// Installs [`font_definitions`] into a context (takes effect next frame).
pub fn install_fonts(ctx: &egui::Context) {
    ctx.set_fonts(font_definitions());
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::FontId;

    fn has_glyphs(defs: FontDefinitions, family: FontFamily, text: &str) -> bool {
        let ctx = egui::Context::default();
        ctx.set_fonts(defs);
        // Fonts are (re)loaded at the start of a pass.
        let mut output = ctx.run_ui(egui::RawInput::default(), |_| {});
        output.textures_delta.clear();
        ctx.fonts_mut(|f| f.has_glyphs(&FontId::new(14.0, family), text))
    }

    #[test]
    fn korean_renders_in_both_families_only_with_the_bundled_fonts() {
        // No spaces or Latin: egui's `has_glyph` reports every character of the
        // chain's replacement face (Hack, in the monospace chain) as missing.
        let hangul = "안녕하세요한글입력ㄱㄴㄷ똠방각하";
        assert!(
            !has_glyphs(FontDefinitions::default(), FontFamily::Proportional, hangul),
            "the check must be able to fail: egui's defaults lack Hangul"
        );
        assert!(has_glyphs(
            font_definitions(),
            FontFamily::Proportional,
            hangul
        ));
        assert!(has_glyphs(
            font_definitions(),
            FontFamily::Monospace,
            hangul
        ));
    }

    #[test]
    fn licence_is_the_ofl() {
        assert!(FONT_LICENSE.contains("SIL OPEN FONT LICENSE"));
        assert!(FONT_LICENSE.contains("Version 1.1"));
    }
}
