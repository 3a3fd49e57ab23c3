//! A copy of the visible screen with every colour resolved, taken under the
//! grid's lock and drawn after it is released.

use alacritty_terminal::Term;
use alacritty_terminal::grid::Dimensions as _;
use alacritty_terminal::index::{Column, Line, Point};
use alacritty_terminal::term::TermMode;
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::color::Colors;
use alacritty_terminal::vte::ansi::{Color, CursorShape as AnsiCursorShape, NamedColor};

/// A colour as the view draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rgb {
    pub r: u8,
    pub g: u8,
    pub b: u8,
}

impl Rgb {
    pub const fn new(r: u8, g: u8, b: u8) -> Self {
        Self { r, g, b }
    }

    /// Two thirds of the colour (the "dim" attribute).
    fn dim(self) -> Self {
        let d = |c: u8| u8::try_from(u16::from(c) * 2 / 3).unwrap_or(c);
        Self::new(d(self.r), d(self.g), d(self.b))
    }
}

impl From<alacritty_terminal::vte::ansi::Rgb> for Rgb {
    fn from(c: alacritty_terminal::vte::ansi::Rgb) -> Self {
        Self::new(c.r, c.g, c.b)
    }
}

/// The colours of a theme: the 16 ANSI colours, the default foreground and
/// background, the cursor and the selection. Indices 16–255 follow xterm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Palette {
    pub ansi: [Rgb; 16],
    pub foreground: Rgb,
    pub background: Rgb,
    pub cursor: Rgb,
    pub selection: Rgb,
}

impl Palette {
    /// For a dark theme (the colours of VS Code's dark terminal).
    pub const fn dark() -> Self {
        Self {
            ansi: [
                Rgb::new(0x00, 0x00, 0x00),
                Rgb::new(0xcd, 0x31, 0x31),
                Rgb::new(0x0d, 0xbc, 0x79),
                Rgb::new(0xe5, 0xe5, 0x10),
                Rgb::new(0x24, 0x72, 0xc8),
                Rgb::new(0xbc, 0x3f, 0xbc),
                Rgb::new(0x11, 0xa8, 0xcd),
                Rgb::new(0xe5, 0xe5, 0xe5),
                Rgb::new(0x66, 0x66, 0x66),
                Rgb::new(0xf1, 0x4c, 0x4c),
                Rgb::new(0x23, 0xd1, 0x8b),
                Rgb::new(0xf5, 0xf5, 0x43),
                Rgb::new(0x3b, 0x8e, 0xea),
                Rgb::new(0xd6, 0x70, 0xd6),
                Rgb::new(0x29, 0xb8, 0xdb),
                Rgb::new(0xe5, 0xe5, 0xe5),
            ],
            foreground: Rgb::new(0xcc, 0xcc, 0xcc),
            background: Rgb::new(0x1e, 0x1e, 0x1e),
            cursor: Rgb::new(0xff, 0xff, 0xff),
            selection: Rgb::new(0x26, 0x4f, 0x78),
        }
    }

    /// For a light theme (the colours of VS Code's light terminal).
    pub const fn light() -> Self {
        Self {
            ansi: [
                Rgb::new(0x00, 0x00, 0x00),
                Rgb::new(0xcd, 0x31, 0x31),
                Rgb::new(0x00, 0xbc, 0x00),
                Rgb::new(0x94, 0x98, 0x00),
                Rgb::new(0x04, 0x51, 0xa5),
                Rgb::new(0xbc, 0x05, 0xbc),
                Rgb::new(0x05, 0x98, 0xbc),
                Rgb::new(0x55, 0x55, 0x55),
                Rgb::new(0x66, 0x66, 0x66),
                Rgb::new(0xcd, 0x31, 0x31),
                Rgb::new(0x14, 0xce, 0x14),
                Rgb::new(0xb5, 0xba, 0x00),
                Rgb::new(0x04, 0x51, 0xa5),
                Rgb::new(0xbc, 0x05, 0xbc),
                Rgb::new(0x05, 0x98, 0xbc),
                Rgb::new(0xa5, 0xa5, 0xa5),
            ],
            foreground: Rgb::new(0x33, 0x33, 0x33),
            background: Rgb::new(0xff, 0xff, 0xff),
            cursor: Rgb::new(0x00, 0x00, 0x00),
            selection: Rgb::new(0xad, 0xd6, 0xff),
        }
    }

    /// Colour `index` of the 256-colour table.
    pub fn indexed(&self, index: u8) -> Rgb {
        match index {
            0..=15 => self.ansi[usize::from(index)],
            16..=231 => {
                let i = index - 16;
                let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
                Rgb::new(level(i / 36), level((i / 6) % 6), level(i % 6))
            }
            _ => {
                let v = 8 + (index - 232) * 10;
                Rgb::new(v, v, v)
            }
        }
    }

    fn named(&self, name: NamedColor) -> Rgb {
        let index = name as usize;
        match name {
            NamedColor::Foreground | NamedColor::BrightForeground => self.foreground,
            NamedColor::Background => self.background,
            NamedColor::Cursor => self.cursor,
            NamedColor::DimForeground => self.foreground.dim(),
            _ if index < 16 => self.ansi[index],
            // Dim black … dim white.
            _ => {
                let base = index.saturating_sub(NamedColor::DimBlack as usize).min(7);
                self.ansi[base].dim()
            }
        }
    }

    /// A colour of the grid: the program's own palette changes (OSC 4)
    /// first, then this palette.
    fn resolve(&self, color: Color, colors: &Colors) -> Rgb {
        match color {
            Color::Spec(rgb) => rgb.into(),
            Color::Indexed(i) => colors[usize::from(i)].map_or_else(|| self.indexed(i), Rgb::from),
            Color::Named(name) => colors[name].map_or_else(|| self.named(name), Rgb::from),
        }
    }

    /// The answer to a program asking for colour `index` (OSC 4/10/11/12).
    pub fn answer(&self, index: usize) -> Rgb {
        match u8::try_from(index) {
            Ok(i) => self.indexed(i),
            Err(_) if index == NamedColor::Background as usize => self.background,
            Err(_) if index == NamedColor::Cursor as usize => self.cursor,
            Err(_) => self.foreground,
        }
    }
}

/// The look of one cell's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[expect(clippy::struct_excessive_bools, reason = "independent text attributes")]
pub struct CellStyle {
    pub bold: bool,
    pub italic: bool,
    pub underline: bool,
    pub strikeout: bool,
}

/// One cell, colours resolved (inverse, dim, hidden and selection applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScreenCell {
    /// `' '` for the right half of a wide character.
    pub c: char,
    pub fg: Rgb,
    pub bg: Rgb,
    pub style: CellStyle,
    /// A character two cells wide (Hangul, CJK, most emoji).
    pub wide: bool,
    /// The right half of a wide character: drawn by its left half.
    pub spacer: bool,
    /// Part of an OSC 8 hyperlink.
    pub link: bool,
}

/// The cursor's look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorShape {
    Block,
    Underline,
    Beam,
    HollowBlock,
}

/// Where the cursor is drawn, in screen rows and columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorView {
    pub row: usize,
    pub col: usize,
    pub shape: CursorShape,
}

/// The terminal modes the view acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent terminal mode flags"
)]
pub struct TermModes {
    pub app_cursor: bool,
    pub bracketed_paste: bool,
    /// The program asked for mouse clicks.
    pub mouse_report: bool,
    /// … and for motion while a button is held (or any motion).
    pub mouse_drag: bool,
    pub mouse_motion: bool,
    pub sgr_mouse: bool,
    pub alt_screen: bool,
    /// Wheel in the alternate screen sends arrow keys.
    pub alternate_scroll: bool,
}

impl TermModes {
    pub(crate) fn from_mode(mode: TermMode) -> Self {
        Self {
            app_cursor: mode.contains(TermMode::APP_CURSOR),
            bracketed_paste: mode.contains(TermMode::BRACKETED_PASTE),
            mouse_report: mode.contains(TermMode::MOUSE_REPORT_CLICK),
            mouse_drag: mode.contains(TermMode::MOUSE_DRAG),
            mouse_motion: mode.contains(TermMode::MOUSE_MOTION),
            sgr_mouse: mode.contains(TermMode::SGR_MOUSE),
            alt_screen: mode.contains(TermMode::ALT_SCREEN),
            alternate_scroll: mode.contains(TermMode::ALTERNATE_SCROLL),
        }
    }

    /// Whether the program receives the mouse.
    pub fn mouse_mode(&self) -> bool {
        self.mouse_report || self.mouse_drag || self.mouse_motion
    }
}

/// The visible screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    pub rows: usize,
    pub cols: usize,
    /// Row-major, `rows × cols`.
    pub cells: Vec<ScreenCell>,
    /// `None` while hidden or scrolled out of view.
    pub cursor: Option<CursorView>,
    /// How many lines the view is scrolled back.
    pub display_offset: usize,
    /// Lines of scrollback above the screen.
    pub history: usize,
    pub modes: TermModes,
    pub background: Rgb,
    pub cursor_color: Rgb,
}

impl Screen {
    pub(crate) fn capture<T: alacritty_terminal::event::EventListener>(
        term: &Term<T>,
        palette: &Palette,
    ) -> Self {
        let grid = term.grid();
        let (rows, cols) = (grid.screen_lines(), grid.columns());
        let offset = grid.display_offset();
        let colors = term.colors();
        let selection = term.selection.as_ref().and_then(|s| s.to_range(term));
        let mut cells = Vec::with_capacity(rows * cols);
        for row in 0..rows {
            let line =
                Line(i32::try_from(row).unwrap_or(i32::MAX) - i32::try_from(offset).unwrap_or(0));
            let grid_row = &grid[line];
            for col in 0..cols {
                let cell = &grid_row[Column(col)];
                let flags = cell.flags;
                let mut fg = palette.resolve(cell.fg, colors);
                let mut bg = palette.resolve(cell.bg, colors);
                if flags.contains(Flags::BOLD)
                    && let Color::Named(name) = cell.fg
                    && let Ok(index @ 0..8) = u8::try_from(name as usize)
                {
                    // Bold text in the first eight colours is drawn bright.
                    fg = palette.resolve(Color::Indexed(index + 8), colors);
                }
                if flags.contains(Flags::DIM) {
                    fg = fg.dim();
                }
                if flags.contains(Flags::INVERSE) {
                    std::mem::swap(&mut fg, &mut bg);
                }
                if flags.contains(Flags::HIDDEN) {
                    fg = bg;
                }
                if selection
                    .as_ref()
                    .is_some_and(|s| s.contains(Point::new(line, Column(col))))
                {
                    bg = palette.selection;
                }
                let spacer =
                    flags.intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER);
                cells.push(ScreenCell {
                    c: if spacer || cell.c == '\t' {
                        ' '
                    } else {
                        cell.c
                    },
                    fg,
                    bg,
                    style: CellStyle {
                        bold: flags.contains(Flags::BOLD),
                        italic: flags.contains(Flags::ITALIC),
                        underline: flags.intersects(Flags::ALL_UNDERLINES),
                        strikeout: flags.contains(Flags::STRIKEOUT),
                    },
                    wide: flags.contains(Flags::WIDE_CHAR),
                    spacer,
                    link: cell.hyperlink().is_some(),
                });
            }
        }
        let mode = *term.mode();
        let content = term.renderable_content();
        let cursor = (mode.contains(TermMode::SHOW_CURSOR)
            && content.cursor.shape != AnsiCursorShape::Hidden)
            .then(|| {
                let row = content.cursor.point.line.0 + i32::try_from(offset).unwrap_or(0);
                let row = usize::try_from(row).ok().filter(|r| *r < rows)?;
                Some(CursorView {
                    row,
                    col: content.cursor.point.column.0,
                    shape: match content.cursor.shape {
                        AnsiCursorShape::Underline => CursorShape::Underline,
                        AnsiCursorShape::Beam => CursorShape::Beam,
                        AnsiCursorShape::HollowBlock => CursorShape::HollowBlock,
                        AnsiCursorShape::Block | AnsiCursorShape::Hidden => CursorShape::Block,
                    },
                })
            })
            .flatten();
        Self {
            rows,
            cols,
            cells,
            cursor,
            display_offset: offset,
            history: grid.history_size(),
            modes: TermModes::from_mode(mode),
            background: palette.background,
            cursor_color: palette.cursor,
        }
    }

    /// Row `row`'s cells.
    pub fn row(&self, row: usize) -> &[ScreenCell] {
        &self.cells[row * self.cols..(row + 1) * self.cols]
    }

    /// Row `row` as text: wide characters once, trailing blanks trimmed.
    pub fn line_text(&self, row: usize) -> String {
        let text: String = self
            .row(row)
            .iter()
            .filter(|c| !c.spacer)
            .map(|c| c.c)
            .collect();
        text.trim_end().to_owned()
    }

    /// The whole screen as text, one line per row.
    pub fn text(&self) -> String {
        (0..self.rows)
            .map(|r| self.line_text(r))
            .collect::<Vec<_>>()
            .join("\n")
    }
}
