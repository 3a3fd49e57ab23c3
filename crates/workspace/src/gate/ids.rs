//! The time and the operation ids the gate stamps its records and journals
//! with.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use cocode_core::gate::GateError;
use cocode_core::ids::{OpId, Timestamp};

use super::errors::internal;

static OP_COUNTER: AtomicU64 = AtomicU64::new(0);

pub(super) fn now() -> Timestamp {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    Timestamp::from_millis(ms)
}

/// A fresh operation id; ids sort by creation time.
pub(super) fn new_op_id(ts: Timestamp) -> Result<OpId, GateError> {
    let n = OP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let id = format!("w{:012x}-{:x}-{n:x}", ts.as_millis(), std::process::id());
    OpId::new(id).map_err(|e| internal("reserve", "", &e.to_string()))
}
