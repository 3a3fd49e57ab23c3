//! cocode-ui (layer L0): theme, bundled fonts (Korean-capable) and small
//! shared widgets. Depends on egui only; holds no application state.

mod fonts;
pub mod icons;
mod theme;
mod widgets;

pub use fonts::{
    EDITOR_SIZES, EDITOR_TEXT, FONT_LICENSE, MONO_FONT_NAME, UI_FONT_NAME, editor_font,
    font_definitions, install_fonts, set_editor_font_size,
};
pub use theme::{Theme, Tone, apply_theme, current_theme, follow_system_theme};
pub use widgets::{badge, badge_text, empty_state, section_header};
