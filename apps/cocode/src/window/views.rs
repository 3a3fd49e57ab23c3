//! Panel views: read state, draw, and return commands.

pub mod agent;
pub mod diff;
pub mod editor;
pub mod editor_lsp;
pub mod explorer;
pub mod new_from_brick;
pub mod open_folder;
pub mod problems;
pub mod providers;
pub mod quick_open;
pub mod search;
pub mod terminal;
pub mod transcript;
