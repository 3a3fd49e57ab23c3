//! The terminal model: a PTY session started through the launcher, whose
//! output a named reader thread feeds to `alacritty_terminal`'s grid through
//! `vte`'s ANSI processor; input encoding for keys, paste and mouse; a
//! snapshot of the visible screen with colours resolved for drawing.
//!
//! No egui: the app draws [`Screen`]s and turns its key events into
//! [`Key`]s.

mod input;
mod screen;
mod session;

pub use input::{
    Key, Modifiers, MouseButton, MouseEvent, MouseKind, encode_key, encode_mouse, encode_paste,
    encode_text,
};
pub use screen::{CellStyle, CursorShape, CursorView, Palette, Rgb, Screen, ScreenCell, TermModes};
pub use session::{
    GridSize, SearchQuery, SelectionKind, SessionError, SessionOptions, TerminalSession, Wake,
};
