//! Panel views: read state, draw, and return commands.

pub mod agent;
pub mod explorer;
pub mod open_folder;
pub mod preview;
