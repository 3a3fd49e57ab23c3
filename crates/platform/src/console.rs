//! The console of a GUI program. On Windows a release build is a GUI
//! program (no console window opens behind the app on a double-click); a
//! command started from a terminal attaches to that terminal's console so
//! its output still prints there. Elsewhere there is nothing to do.

/// Attaches to the console of the process that started this one, if it has
/// one; whether it did. Call it before anything prints.
pub fn attach_parent_console() -> bool {
    #[cfg(windows)]
    {
        // SAFETY: a plain Win32 call without pointers; it fails harmlessly
        // when the parent has no console or this process already has one.
        #[expect(unsafe_code, reason = "the one Win32 call that attaches a console")]
        let attached = unsafe {
            windows_sys::Win32::System::Console::AttachConsole(
                windows_sys::Win32::System::Console::ATTACH_PARENT_PROCESS,
            )
        };
        attached != 0
    }
    #[cfg(not(windows))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(not(windows))]
    fn outside_windows_there_is_no_console_to_attach() {
        assert!(!super::attach_parent_console());
    }
}
