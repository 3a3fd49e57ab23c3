//! What the keyboard, the clipboard and the mouse send to the program, as
//! xterm encodes them (the encoding programs read through terminfo's
//! `xterm-256color`).

use crate::screen::TermModes;

/// A key that is not plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Enter,
    Backspace,
    Tab,
    Escape,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    /// F1–F12.
    F(u8),
    /// A letter, digit or symbol pressed with Ctrl or Alt (plain typing
    /// arrives as text).
    Char(char),
}

/// Held modifier keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Modifiers {
    pub shift: bool,
    pub alt: bool,
    pub ctrl: bool,
}

impl Modifiers {
    pub const NONE: Self = Self {
        shift: false,
        alt: false,
        ctrl: false,
    };

    /// xterm's modifier parameter: 1 + shift + 2·alt + 4·ctrl (1 = none).
    fn param(self) -> u8 {
        1 + u8::from(self.shift) + 2 * u8::from(self.alt) + 4 * u8::from(self.ctrl)
    }

    fn any(self) -> bool {
        self.shift || self.alt || self.ctrl
    }
}

/// The bytes for `key`, or `None` when the key sends nothing.
pub fn encode_key(key: Key, mods: Modifiers, term: TermModes) -> Option<Vec<u8>> {
    let csi_mod = |letter: char| -> Vec<u8> {
        // `CSI 1 ; m X` with modifiers, `CSI X` (or `SS3 X` in application
        // cursor mode) without.
        if mods.any() {
            format!("\x1b[1;{}{letter}", mods.param()).into_bytes()
        } else if term.app_cursor {
            format!("\x1bO{letter}").into_bytes()
        } else {
            format!("\x1b[{letter}").into_bytes()
        }
    };
    let tilde = |code: u8| -> Vec<u8> {
        if mods.any() {
            format!("\x1b[{code};{}~", mods.param()).into_bytes()
        } else {
            format!("\x1b[{code}~").into_bytes()
        }
    };
    let alt = |bytes: &[u8]| -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len() + 1);
        if mods.alt {
            out.push(0x1b);
        }
        out.extend_from_slice(bytes);
        out
    };
    Some(match key {
        Key::Up => csi_mod('A'),
        Key::Down => csi_mod('B'),
        Key::Right => csi_mod('C'),
        Key::Left => csi_mod('D'),
        Key::Home => csi_mod('H'),
        Key::End => csi_mod('F'),
        Key::Insert => tilde(2),
        Key::Delete => tilde(3),
        Key::PageUp => tilde(5),
        Key::PageDown => tilde(6),
        Key::F(n @ 1..=4) => {
            let letter = char::from(b'P' + (n - 1));
            if mods.any() {
                format!("\x1b[1;{}{letter}", mods.param()).into_bytes()
            } else {
                format!("\x1bO{letter}").into_bytes()
            }
        }
        Key::F(n @ 5..=12) => tilde([15, 17, 18, 19, 20, 21, 23, 24][usize::from(n - 5)]),
        Key::Enter => alt(b"\r"),
        Key::Tab if mods.shift => b"\x1b[Z".to_vec(),
        Key::Tab => alt(b"\t"),
        Key::Escape => alt(b"\x1b"),
        Key::Backspace if mods.ctrl => alt(&[0x08]),
        Key::Backspace => alt(&[0x7f]),
        Key::Char(c) if mods.ctrl => alt(&[ctrl_byte(c)?]),
        Key::Char(c) if mods.alt => alt(c.to_string().as_bytes()),
        // Plain characters arrive as text; there is no F13 and above.
        Key::Char(_) | Key::F(_) => return None,
    })
}

/// Ctrl with a character: the C0 control code it stands for.
fn ctrl_byte(c: char) -> Option<u8> {
    let c = u8::try_from(c).ok()?;
    match c {
        b'a'..=b'z' => Some(c - b'a' + 1),
        b'A'..=b'Z' => Some(c - b'A' + 1),
        b'@' | b' ' | b'2' => Some(0),
        b'[' | b'3' => Some(0x1b),
        b'\\' | b'4' => Some(0x1c),
        b']' | b'5' => Some(0x1d),
        b'^' | b'6' => Some(0x1e),
        b'_' | b'-' | b'7' => Some(0x1f),
        b'?' | b'8' => Some(0x7f),
        _ => None,
    }
}

/// Typed text (a committed IME composition included) as the program reads it.
pub fn encode_text(text: &str) -> Vec<u8> {
    text.as_bytes().to_vec()
}

/// Pasted text: line breaks become carriage returns (as typed), and in
/// bracketed-paste mode the text is wrapped so the program knows it was
/// pasted. Escape characters are dropped, so pasted text can never end the
/// bracket early and type commands of its own.
pub fn encode_paste(text: &str, modes: TermModes) -> Vec<u8> {
    let normalized = text.replace("\r\n", "\r").replace('\n', "\r");
    if modes.bracketed_paste {
        let clean: String = normalized.chars().filter(|c| *c != '\x1b').collect();
        let mut out = b"\x1b[200~".to_vec();
        out.extend_from_slice(clean.as_bytes());
        out.extend_from_slice(b"\x1b[201~");
        out
    } else {
        normalized.into_bytes()
    }
}

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseButton {
    Left,
    Middle,
    Right,
    WheelUp,
    WheelDown,
}

/// What the mouse did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseKind {
    Press,
    Release,
    /// Moved with the button held.
    Drag,
}

/// A mouse event at a cell (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MouseEvent {
    pub button: MouseButton,
    pub kind: MouseKind,
    pub col: usize,
    pub row: usize,
    pub mods: Modifiers,
}

/// The report of a mouse event for a program that asked for the mouse, or
/// `None` when it did not ask for this kind of event.
pub fn encode_mouse(event: MouseEvent, modes: TermModes) -> Option<Vec<u8>> {
    if !modes.mouse_mode() {
        return None;
    }
    if event.kind == MouseKind::Drag && !(modes.mouse_drag || modes.mouse_motion) {
        return None;
    }
    let mut code: u32 = match event.button {
        MouseButton::Left => 0,
        MouseButton::Middle => 1,
        MouseButton::Right => 2,
        MouseButton::WheelUp => 64,
        MouseButton::WheelDown => 65,
    };
    if event.kind == MouseKind::Drag {
        code += 32;
    }
    code += 4 * u32::from(event.mods.shift)
        + 8 * u32::from(event.mods.alt)
        + 16 * u32::from(event.mods.ctrl);
    let (col, row) = (event.col + 1, event.row + 1);
    if modes.sgr_mouse {
        let end = if event.kind == MouseKind::Release {
            'm'
        } else {
            'M'
        };
        return Some(format!("\x1b[<{code};{col};{row}{end}").into_bytes());
    }
    // The original encoding: one byte per value, offset by 32; a release
    // does not say which button.
    if event.kind == MouseKind::Release {
        code = 3 + (code & !3);
    }
    let byte = |v: usize| u8::try_from(v + 32).ok();
    Some(vec![
        0x1b,
        b'[',
        b'M',
        u8::try_from(code + 32).ok()?,
        byte(col)?,
        byte(row)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const CTRL: Modifiers = Modifiers {
        shift: false,
        alt: false,
        ctrl: true,
    };

    fn key(k: Key, held: Modifiers, term: TermModes) -> String {
        String::from_utf8(encode_key(k, held, term).unwrap()).unwrap()
    }

    #[test]
    fn cursor_keys_follow_the_application_cursor_mode() {
        let normal = TermModes::default();
        let app = TermModes {
            app_cursor: true,
            ..TermModes::default()
        };
        let all: Vec<_> = [
            Key::Up,
            Key::Down,
            Key::Right,
            Key::Left,
            Key::Home,
            Key::End,
        ]
        .iter()
        .map(|k| {
            (
                key(*k, Modifiers::NONE, normal),
                key(*k, Modifiers::NONE, app),
            )
        })
        .collect();
        assert_eq!(
            all,
            [
                ("\x1b[A", "\x1bOA"),
                ("\x1b[B", "\x1bOB"),
                ("\x1b[C", "\x1bOC"),
                ("\x1b[D", "\x1bOD"),
                ("\x1b[H", "\x1bOH"),
                ("\x1b[F", "\x1bOF"),
            ]
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
        // Modifiers always use the CSI form with xterm's parameter.
        assert_eq!(key(Key::Right, CTRL, app), "\x1b[1;5C");
        let shift_alt = Modifiers {
            shift: true,
            alt: true,
            ctrl: false,
        };
        assert_eq!(key(Key::Up, shift_alt, normal), "\x1b[1;4A");
    }

    #[test]
    fn editing_and_function_keys_match_xterm() {
        let m = TermModes::default();
        let got: Vec<_> = [
            Key::Insert,
            Key::Delete,
            Key::PageUp,
            Key::PageDown,
            Key::F(1),
            Key::F(4),
            Key::F(5),
            Key::F(10),
            Key::F(11),
            Key::F(12),
        ]
        .iter()
        .map(|k| key(*k, Modifiers::NONE, m))
        .collect();
        assert_eq!(
            got,
            [
                "\x1b[2~", "\x1b[3~", "\x1b[5~", "\x1b[6~", "\x1bOP", "\x1bOS", "\x1b[15~",
                "\x1b[21~", "\x1b[23~", "\x1b[24~"
            ]
        );
        assert_eq!(key(Key::PageUp, CTRL, m), "\x1b[5;5~");
        assert_eq!(key(Key::F(2), CTRL, m), "\x1b[1;5Q");
        assert_eq!(encode_key(Key::F(13), Modifiers::NONE, m), None);
    }

    #[test]
    fn control_and_alt_combinations() {
        let m = TermModes::default();
        assert_eq!(encode_key(Key::Char('c'), CTRL, m), Some(vec![3]));
        assert_eq!(encode_key(Key::Char('D'), CTRL, m), Some(vec![4]));
        assert_eq!(encode_key(Key::Char('['), CTRL, m), Some(vec![0x1b]));
        assert_eq!(encode_key(Key::Char(' '), CTRL, m), Some(vec![0]));
        assert_eq!(encode_key(Key::Char('é'), CTRL, m), None);
        let alt = Modifiers {
            alt: true,
            ..Modifiers::NONE
        };
        assert_eq!(encode_key(Key::Char('b'), alt, m), Some(b"\x1bb".to_vec()));
        assert_eq!(encode_key(Key::Backspace, alt, m), Some(vec![0x1b, 0x7f]));
        assert_eq!(
            encode_key(Key::Backspace, Modifiers::NONE, m),
            Some(vec![0x7f])
        );
        assert_eq!(
            encode_key(Key::Enter, Modifiers::NONE, m),
            Some(b"\r".to_vec())
        );
        let shift = Modifiers {
            shift: true,
            ..Modifiers::NONE
        };
        assert_eq!(encode_key(Key::Tab, shift, m), Some(b"\x1b[Z".to_vec()));
        // Plain characters come as text, not as keys.
        assert_eq!(encode_key(Key::Char('a'), Modifiers::NONE, m), None);
    }

    #[test]
    fn paste_is_bracketed_and_cannot_break_out() {
        let plain = TermModes::default();
        let bracketed = TermModes {
            bracketed_paste: true,
            ..TermModes::default()
        };
        assert_eq!(encode_paste("a\nb\r\nc", plain), b"a\rb\rc".to_vec());
        assert_eq!(
            String::from_utf8(encode_paste("ls\x1b[201~rm -rf x\n", bracketed)).unwrap(),
            "\x1b[200~ls[201~rm -rf x\r\x1b[201~"
        );
        assert_eq!(encode_text("한글"), "한글".as_bytes().to_vec());
    }

    #[test]
    fn mouse_reports_follow_the_modes_the_program_set() {
        let press = MouseEvent {
            button: MouseButton::Left,
            kind: MouseKind::Press,
            col: 4,
            row: 2,
            mods: Modifiers::NONE,
        };
        assert_eq!(encode_mouse(press, TermModes::default()), None);
        let click = TermModes {
            mouse_report: true,
            ..TermModes::default()
        };
        assert_eq!(encode_mouse(press, click), Some(b"\x1b[M %#".to_vec()));
        let release = MouseEvent {
            kind: MouseKind::Release,
            ..press
        };
        assert_eq!(encode_mouse(release, click), Some(b"\x1b[M#%#".to_vec()));
        let drag = MouseEvent {
            kind: MouseKind::Drag,
            ..press
        };
        assert_eq!(encode_mouse(drag, click), None);
        let sgr = TermModes {
            mouse_report: true,
            mouse_drag: true,
            sgr_mouse: true,
            ..TermModes::default()
        };
        assert_eq!(encode_mouse(press, sgr), Some(b"\x1b[<0;5;3M".to_vec()));
        assert_eq!(encode_mouse(release, sgr), Some(b"\x1b[<0;5;3m".to_vec()));
        assert_eq!(encode_mouse(drag, sgr), Some(b"\x1b[<32;5;3M".to_vec()));
        let wheel = MouseEvent {
            button: MouseButton::WheelDown,
            mods: CTRL,
            ..press
        };
        assert_eq!(encode_mouse(wheel, sgr), Some(b"\x1b[<81;5;3M".to_vec()));
    }
}
