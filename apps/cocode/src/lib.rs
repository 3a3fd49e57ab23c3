//! cocode (sink): the desktop app. Three parts, each a module tree:
//!
//! - [`host`]: the use cases of one workspace (gate, leases, approvals,
//!   orchestrator, progress, backend selection, bricks) — no window, no
//!   terminal printing;
//! - [`cli`]: argument parsing and the headless commands, on `host`;
//! - [`window`]: the eframe app, its panels' state, views and workers, on
//!   `host`.
//!
//! `cargo xtask boundaries` keeps `host` free of `cli` and `window`, the two
//! front ends apart, and the module graph without cycles.

pub mod cli;
pub mod host;
pub mod window;
