//! The operation ids the gate stamps its records and journals with.

use std::sync::atomic::{AtomicU64, Ordering};

use cocode_core::gate::GateError;
use cocode_core::ids::{OpId, Timestamp};

use super::errors::internal;

static OP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh operation id; ids sort by creation time.
pub(super) fn new_op_id(ts: Timestamp) -> Result<OpId, GateError> {
    let n = OP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let id = format!("w{:012x}-{:x}-{n:x}", ts.as_millis(), std::process::id());
    OpId::new(id).map_err(|e| internal("reserve", "", &e.to_string()))
}
