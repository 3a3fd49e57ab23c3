//! Durable operations: idempotency that survives the process.
//!
//! With a store injected, a call with an idempotency key first claims the key
//! under an owner lease. A completed record replays its result losslessly; a
//! failed record answers its (redacted) error; a pending record owned by
//! someone else answers `TOOL_IDEMPOTENCY_PENDING` until its lease expires
//! and may then be reclaimed; an unknown record (timed out, cancelled, or a
//! handler reporting a possibly partial side effect) answers
//! `TOOL_IDEMPOTENCY_UNKNOWN` until it is reconciled. A failing store is
//! `TOOL_IDEMPOTENCY_STORE_FAILED` — the call never falls through to an
//! unguarded mutation.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};

use crate::error::{ToolError, ToolErrorCode};
use crate::observe::ObservabilityPolicy;
use crate::types::ToolOutput;

/// The state of a durable operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationState {
    Pending,
    Completed,
    Failed,
    Unknown,
}

/// One operation record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OperationRecord {
    pub key: String,
    pub fingerprint: String,
    pub tool: String,
    pub state: OperationState,
    pub owner: String,
    pub lease_expires_at_ms: u64,
    /// Completed only: the result, kept losslessly for replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<ToolOutput>,
    /// Failed or unknown only: code, retryability and redacted, bounded details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    pub updated_at_ms: u64,
}

/// What claiming a key found.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// The key is ours now (new, or reclaimed after the lease expired).
    Acquired,
    /// Someone else's record; the caller decides from its state.
    Existing(Box<OperationRecord>),
}

/// The store could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("operation store failed: {0}")]
pub struct StoreFailure(pub String);

/// A durable store of operation records.
pub trait DurableOperationStore: Send + Sync {
    /// Atomically: no record, or a pending record whose lease expired at
    /// `now_ms` → write a pending record owned by `owner` and return
    /// `Acquired`; otherwise return the existing record.
    fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        tool: &str,
        owner: &str,
        lease_ms: u64,
        now_ms: u64,
    ) -> Result<Claim, StoreFailure>;
    /// Replaces the record of `key` (used to finish and to reconcile).
    fn put(&self, record: OperationRecord) -> Result<(), StoreFailure>;
    fn get(&self, key: &str) -> Result<Option<OperationRecord>, StoreFailure>;
}

/// An in-process store (tests, and sessions without a workspace).
#[derive(Debug, Default)]
pub struct InMemoryOperationStore {
    records: Mutex<HashMap<String, OperationRecord>>,
}

impl InMemoryOperationStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, OperationRecord>> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl DurableOperationStore for InMemoryOperationStore {
    fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        tool: &str,
        owner: &str,
        lease_ms: u64,
        now_ms: u64,
    ) -> Result<Claim, StoreFailure> {
        let mut records = self.lock();
        let reclaimable = match records.get(key) {
            None => true,
            Some(r) => {
                r.state == OperationState::Pending
                    && r.lease_expires_at_ms <= now_ms
                    && r.fingerprint == fingerprint
            }
        };
        if !reclaimable {
            let existing = records
                .get(key)
                .cloned()
                .ok_or_else(|| StoreFailure("record vanished".into()))?;
            return Ok(Claim::Existing(Box::new(existing)));
        }
        records.insert(
            key.to_owned(),
            OperationRecord {
                key: key.to_owned(),
                fingerprint: fingerprint.to_owned(),
                tool: tool.to_owned(),
                state: OperationState::Pending,
                owner: owner.to_owned(),
                lease_expires_at_ms: now_ms.saturating_add(lease_ms),
                output: None,
                error: None,
                updated_at_ms: now_ms,
            },
        );
        Ok(Claim::Acquired)
    }

    fn put(&self, record: OperationRecord) -> Result<(), StoreFailure> {
        self.lock().insert(record.key.clone(), record);
        Ok(())
    }

    fn get(&self, key: &str) -> Result<Option<OperationRecord>, StoreFailure> {
        Ok(self.lock().get(key).cloned())
    }
}

/// How a person or a resolver settles an unknown operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    Completed(ToolOutput),
    Failed(ToolError),
}

/// A redacted, bounded copy of an error for storage.
pub fn stored_error(error: &ToolError) -> ToolError {
    let policy = ObservabilityPolicy::default();
    ToolError {
        code: error.code.clone(),
        message: String::new(),
        retryable: error.retryable,
        details: policy.redact(&error.details),
    }
}

/// The answer a call gets from an existing record.
pub fn answer_existing(
    record: &OperationRecord,
    fingerprint: &str,
    now_ms: u64,
) -> Result<ToolOutput, ToolError> {
    if record.fingerprint != fingerprint {
        return Err(ToolError::new(
            ToolErrorCode::IdempotencyConflict,
            "the idempotency key was used with different arguments",
        ));
    }
    match record.state {
        OperationState::Completed => record.output.clone().ok_or_else(|| {
            ToolError::new(
                ToolErrorCode::IdempotencyStoreFailed,
                "completed record without its result",
            )
        }),
        OperationState::Failed => Err(record.error.clone().map_or_else(
            || {
                ToolError::new(
                    ToolErrorCode::IdempotencyStoreFailed,
                    "failed record without its error",
                )
            },
            |e| ToolError {
                message: "an earlier execution with this key failed".into(),
                ..e
            },
        )),
        OperationState::Unknown => Err(ToolError::new(
            ToolErrorCode::IdempotencyUnknown,
            "an earlier execution with this key has an unknown outcome and needs reconciliation",
        )),
        OperationState::Pending => Err(ToolError::new(
            ToolErrorCode::IdempotencyPending,
            "another owner is running this operation",
        )
        .with_details(serde_json::json!({
            "retryAfterMs": record.lease_expires_at_ms.saturating_sub(now_ms)
        }))),
    }
}

/// The record that finishes an acquired operation.
pub fn finished_record(
    claimed: OperationRecord,
    result: &Result<ToolOutput, ToolError>,
    now_ms: u64,
) -> OperationRecord {
    let unknown = |e: &ToolError| {
        e.is(ToolErrorCode::Timeout)
            || e.is(ToolErrorCode::Cancelled)
            || e.is(ToolErrorCode::ExecutionUnknown)
    };
    let (state, output, error) = match result {
        Ok(output) => (OperationState::Completed, Some(output.clone()), None),
        Err(e) if unknown(e) => (OperationState::Unknown, None, Some(stored_error(e))),
        Err(e) => (OperationState::Failed, None, Some(stored_error(e))),
    };
    OperationRecord {
        state,
        output,
        error,
        updated_at_ms: now_ms,
        ..claimed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn claims_are_exclusive_until_the_lease_expires() {
        let store = InMemoryOperationStore::new();
        assert_eq!(
            store.claim("k", "f", "ws.t", "a", 1000, 0).unwrap(),
            Claim::Acquired
        );
        let Claim::Existing(held) = store.claim("k", "f", "ws.t", "b", 1000, 500).unwrap() else {
            panic!()
        };
        assert_eq!(
            (held.owner.as_str(), held.state),
            ("a", OperationState::Pending)
        );
        assert_eq!(
            store.claim("k", "f", "ws.t", "b", 1000, 1000).unwrap(),
            Claim::Acquired,
            "reclaimed"
        );
        assert_eq!(store.get("k").unwrap().unwrap().owner, "b");
        // A different fingerprint never reclaims.
        assert!(matches!(
            store.claim("k", "other", "ws.t", "c", 1000, 5000).unwrap(),
            Claim::Existing(_)
        ));
    }

    #[test]
    fn stored_errors_are_redacted_and_bounded() {
        let e = ToolError::handler("WORKSPACE_LOCKED", "src/a.rs holds TOP SECRET", true)
            .with_details(serde_json::json!({"content": "TOP SECRET", "path": "src/a.rs"}));
        let stored = stored_error(&e);
        let text = serde_json::to_string(&stored).unwrap();
        assert!(!text.contains("TOP SECRET"), "{text}");
        assert_eq!(
            (stored.code.as_str(), stored.retryable),
            ("WORKSPACE_LOCKED", true)
        );
    }
}
