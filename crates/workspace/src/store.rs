//! The content-addressed history store: blobs named by the sha256 of their
//! uncompressed content (small ones packed, see [`crate::pack`], big ones
//! gzip files of their own), per-task JSONL indexes and per-path ones kept
//! in shards, the write journals, and the workspace's config file.
//!
//! The store only appends and adds; what to append and when is decided by the
//! gate (the write-commit protocol) and by recovery.
//!
//! Its files: `history` (the store, what its clones share, the operations
//! it holds until a checkpoint), `blobs`, `indexes`, `journals`,
//! `state_files` (config, markers, leases), `format` (the journals' and
//! markers' formats) and `files` (helpers over the history's files).

mod blobs;
mod files;
mod format;
mod history;
mod indexes;
mod journals;
mod state_files;

pub(crate) use files::record_paths;
pub use format::{
    HELD_BLOB_MAX, JOURNAL_BLOBS_MAX, Journal, JournalBlob, JournalFile, ROLLBACK_JOURNAL_VERSION,
    RetentionMarker, RollbackItem, RollbackJournal, SWEEP_JOURNAL_VERSION, SweepJournal,
    UnrecordedMarker, WRITE_JOURNAL_VERSION, WriteJournal,
};
pub use history::{CHECKPOINT_BYTES, CHECKPOINT_OPERATIONS, HistoryStore};
pub use state_files::config_bytes;
