//! cocode-platform (layer L0): platform conventions — the operating-system
//! family and the primary shortcut modifier with its labels, finding an
//! installed program ([`programs`]), the folders the system asks the
//! running app to open ([`open_requests`]), spreading work over the
//! cores ([`threads`]) — and keeping the process's own secrets from other
//! processes ([`seal`]).

pub mod console;
pub mod open_requests;
pub mod programs;
pub mod seal;
pub mod threads;

use std::fmt;

use serde::{Deserialize, Serialize};

/// Operating-system family, for conventions that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Os {
    Linux,
    MacOs,
    Windows,
}

impl Os {
    /// The OS this binary was built for (other Unix systems follow Linux).
    pub const fn current() -> Self {
        if cfg!(target_os = "macos") {
            Self::MacOs
        } else if cfg!(windows) {
            Self::Windows
        } else {
            Self::Linux
        }
    }

    /// The modifier editor shortcuts use: Cmd on macOS, Ctrl elsewhere.
    pub const fn primary_modifier(self) -> Modifier {
        match self {
            Self::MacOs => Modifier::Command,
            Self::Linux | Self::Windows => Modifier::Ctrl,
        }
    }
}

/// A keyboard modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Modifier {
    Ctrl,
    Command,
    Shift,
    Alt,
}

/// A keyboard shortcut in platform-neutral form: `primary` is Cmd on macOS
/// and Ctrl elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shortcut {
    pub primary: bool,
    pub shift: bool,
    pub alt: bool,
    /// The key's label (`P`, `F`, `Enter`, …).
    pub key: &'static str,
}

impl Shortcut {
    pub const fn primary(key: &'static str) -> Self {
        Self {
            primary: true,
            shift: false,
            alt: false,
            key,
        }
    }

    pub const fn primary_shift(key: &'static str) -> Self {
        Self {
            primary: true,
            shift: true,
            alt: false,
            key,
        }
    }

    /// The label shown in menus, in the platform's convention.
    pub fn label(&self, os: Os) -> ShortcutLabel {
        ShortcutLabel {
            shortcut: *self,
            os,
        }
    }
}

/// A shortcut formatted for one OS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShortcutLabel {
    shortcut: Shortcut,
    os: Os,
}

impl fmt::Display for ShortcutLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.shortcut;
        if self.os == Os::MacOs {
            // macOS order: ⌃ ⌥ ⇧ ⌘, then the key, no separators.
            if s.alt {
                f.write_str("⌥")?;
            }
            if s.shift {
                f.write_str("⇧")?;
            }
            if s.primary {
                f.write_str("⌘")?;
            }
            f.write_str(s.key)
        } else {
            if s.primary {
                f.write_str("Ctrl+")?;
            }
            if s.alt {
                f.write_str("Alt+")?;
            }
            if s.shift {
                f.write_str("Shift+")?;
            }
            f.write_str(s.key)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn shortcuts_follow_the_platform_convention() {
        let palette = Shortcut::primary_shift("P");
        assert_eq!(palette.label(Os::Linux).to_string(), "Ctrl+Shift+P");
        assert_eq!(palette.label(Os::Windows).to_string(), "Ctrl+Shift+P");
        assert_eq!(palette.label(Os::MacOs).to_string(), "⇧⌘P");
        assert_eq!(Shortcut::primary("S").label(Os::MacOs).to_string(), "⌘S");
        assert_eq!(Os::MacOs.primary_modifier(), Modifier::Command);
        assert_eq!(Os::Windows.primary_modifier(), Modifier::Ctrl);
        assert_eq!(Os::Linux.primary_modifier(), Modifier::Ctrl);
    }

    #[test]
    fn current_os_matches_the_build_target() {
        let expected = if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        };
        assert_eq!(Os::current(), expected);
    }
}
