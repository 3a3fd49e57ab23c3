//! cocode-terminal (layer L2): the terminal model — vte-driven grid, scrollback, modes and key encoding, with PTY sessions through the launcher. Drawing lives in the app.
