//! The workspace crate (layer L1): the only writer of files — the
//! `WorkspaceFileGate`, the content-addressed history store, the write
//! journal and recovery, the observed-change sweep and the integrity checker.

pub mod diff;
mod disk;
pub mod gate;
pub mod integrity;
pub mod layout;
pub mod open;
pub mod policy;
pub mod store;
pub mod sweep;

pub use gate::{Gate, RecoveryReport};
pub use integrity::{HistoryIntegrityChecker, IntegrityReport};
pub use layout::Layout;
pub use open::{OpenError, OpenWorkspace};
pub use policy::{PathPolicy, Resolved, TestPatterns};
pub use store::{HistoryStore, WriteJournal};
pub use sweep::{StatCache, SweepLimits, SweepStats, SweepWatcher};
