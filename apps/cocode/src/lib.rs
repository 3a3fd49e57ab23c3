//! cocode (sink): the desktop app and its headless parts — bootstrap, the
//! docked window (Explorer, Preview) and the command line.

pub mod acp_cli;
pub mod app;
pub mod bootstrap;
pub mod brick_service;
pub mod bricks_cli;
pub mod cli;
pub mod explorer;
pub mod headless;
pub mod host;
pub mod io_worker;
pub mod new_brick;
pub mod preview;
pub mod task_service;
pub mod tasks_cli;
pub mod views;

#[cfg(test)]
pub(crate) mod testing;
