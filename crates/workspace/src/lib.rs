//! The workspace crate (layer L1): the writer of workspace files and of
//! cocode's state under `.cocode/` (its disk layer is on the writer list
//! of `boundaries.yaml`) — the `WorkspaceFileGate`, the content-addressed history store, the write
//! journal and recovery, the observed-change sweep and the integrity checker.

#[cfg(test)]
mod barrier_audit;
pub mod diff;
mod disk;
mod disk_text;
pub mod gate;
pub mod ignore_rules;
pub mod integrity;
mod large_file;
pub mod layout;
pub mod leases;
pub mod metadata_census;
pub mod open;
mod pack;
mod parallel;
pub mod policy;
pub mod read;
pub mod retention;
pub mod rollback;
pub mod store;
pub mod sweep;
mod sweep_entry;
mod sweep_file;
#[cfg(target_os = "linux")]
mod sweep_watch;
mod varint;

pub use gate::{
    DiscardFile, DiscardRecord, DiscardedFile, Gate, RecoveredSweep, RecoveryReport,
    RetentionReport, ReviewChange, SweepWriters, UserOp, UserWrite, recorded_discards,
};
pub use ignore_rules::{IgnoreFilter, is_ignore_file};
pub use integrity::{HistoryIntegrityChecker, IntegrityReport};
pub use layout::Layout;
pub use leases::{LeaseRegistry, LeaseWait};
pub use open::{FolderPeek, OpenError, OpenWorkspace, WriterLock, peek};
pub use policy::{PathPolicy, Resolved, TestPatterns};
pub use read::{FilePrefix, WorkspaceReader};
pub use retention::{RetentionTrigger, TaskLife};
pub use rollback::{RollbackAvailability, RollbackError, RollbackQuery};
pub use store::{HistoryStore, RollbackJournal, WriteJournal};
pub use sweep::{
    ObservedChange, ScanError, StatCache, Stopped, SweepBudget, SweepLimits, SweepStats, Watch,
};
