//! cocode-bricks (layer L2): atomic scaffolding of new workspaces from
//! bricks — a folder with `brick.toml` (name, description, typed variables,
//! pre/post hook commands) and `template/` files whose paths and contents
//! are minijinja templates.
//!
//! A request is checked and rendered entirely in memory first, so bad
//! variables, unsafe rendered paths and template errors are
//! `RejectedBeforeStart` with nothing written. Then the files go into a
//! staging folder beside the destination, hooks run there through the
//! launcher, and one rename moves it into place. Any failure before that
//! rename removes the staging folder: the destination never exists
//! half-made.

pub mod catalog;
pub mod engine;
pub mod manifest;
pub mod render;
pub mod staging;

pub use catalog::{Brick, BrickCatalog, BrickSource, FolderLoad, LoadError};
pub use engine::Bricks;
