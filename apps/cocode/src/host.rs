//! The host: the use cases of one workspace, shared by the command line
//! and the window — opening a workspace's host, the orchestrator and its
//! progress events, backend selection, tool handlers, review and rollback,
//! saving, task records, and the brick engine. It prints nothing to a
//! terminal and draws nothing; `host` uses neither `cli` nor `window`.

pub mod agent_settings;
pub mod backend;
pub mod bootstrap;
pub mod bricks;
pub mod commands;
pub mod config_file;
pub mod crash;
pub mod exceptions;
pub mod files;
pub mod instructions;
pub mod log;
pub mod lsp;
pub mod orchestrator;
pub mod progress;
pub mod provider_settings;
pub mod records;
pub mod requests;
pub mod review;
pub mod root;
pub mod runtime;
pub mod save;
pub mod secrets;
pub mod settings;
pub mod spent;
pub mod sweep_budget;
pub mod task_review;
pub mod tools;
pub mod trace;
pub mod trust;
pub mod typed;
pub mod workspace_host;
