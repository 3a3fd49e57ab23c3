//! The workspace gate: the one write path for agent edits (C-02 — there is
//! no agent edit path that leaves no `EditSnapshot`).
//!
//! Every operation runs inside one serial section and follows the
//! write-commit protocol; the order is the contract:
//! 1. reserve seq and check attempt monotonicity (failure changes nothing);
//! 2. store the new base and result blobs too large for the journal;
//! 3. write the journal `journal/writes/<op_id>.json`, carrying the records
//!    and the other new blobs — from here the edit is recoverable;
//! 4. stage the new contents next to their targets, make steps 2–4 durable
//!    with one barrier, then apply (atomic rename, unlink, rename);
//! 5. hold the records and the journal's blobs in the store
//!    ([`HistoryStore::hold`]): every read sees them; a checkpoint writes
//!    them to the indexes and packs once [`crate::store::CHECKPOINT_OPERATIONS`]
//!    operations are held, before any read that does not see held records,
//!    at the end of a sweep and at [`Gate::flush`];
//! 6. retire the journal — after the first barrier after its checkpoint,
//!    which makes the checkpoint and the step 4 rename durable; until then a
//!    leftover journal is simply "complete" for recovery, which writes what
//!    it carries to the indexes and packs. [`Gate::flush`] checkpoints and
//!    runs that barrier on demand (shutdown, review).
//!
//! So an operation touches two files of the history, its journal and the
//! journal folder, instead of five (journal, pack, task index, path index,
//! folder): the appends of many operations share a checkpoint's barrier.
//!
//! A batch (`GateOp::Batch`) is one operation: its items are planned
//! together, refused or held together, and share one journal and one
//! barrier.
//!
//! Recovery runs before the first operation of a gate (so a late or missing
//! startup hook cannot let an agent write into an unrecovered state) and
//! immediately after a failure in steps 4–5.
//!
//! The files of this module, one protocol each: `state` (the gate and
//! what its serial section guards), `agent_ops` (planning an agent's
//! operation), `commit` (the write-commit protocol above),
//! `durability` (barriers and flush), `recovery`, `sweeps`,
//! `rollback`, `review` (a person undoing part of a task), `retention`, `user_ops` (a person's operations),
//! `discards` (a person's discards, kept so they can be undone),
//! `file_gate` (the `WorkspaceFileGate` trait); `paths` holds the path
//! checks the agent's operations and a person's share, `errors` the error
//! constructors, `plan` and `ids` what several of them use.
//!
//! [`HistoryStore::hold`]: crate::store::HistoryStore::hold

mod agent_ops;
mod commit;
mod discards;
mod durability;
mod errors;
mod file_gate;
mod ids;
mod paths;
mod plan;
mod recovery;
mod retention;
mod review;
mod rollback;
mod state;
mod sweeps;
mod user_ops;

pub use discards::{DISCARDS_KEPT, DiscardFile, DiscardRecord, DiscardedFile, recorded_discards};
pub use recovery::{RecoveredSweep, RecoveryReport};
pub use retention::RetentionReport;
pub use review::ReviewChange;
pub use state::Gate;
pub use sweeps::SweepWriters;
pub use user_ops::{UserOp, UserWrite};
