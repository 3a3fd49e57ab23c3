//! cocode-terminal (layer L2): the place of the terminal model (grid,
//! scrollback, modes, key encoding, PTY sessions through the launcher); no
//! code yet. Drawing will live in the app.
