//! The clock the product stamps its records with. The app's composition
//! root makes one and hands it to the gate, the lease registry, the
//! verification runner and the task orchestrator; a test hands them a
//! clock it sets.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::ids::Timestamp;

/// Where the time comes from.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now, in milliseconds since the Unix epoch.
    fn now(&self) -> Timestamp;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Timestamp::from_millis(ms)
    }
}

/// The system clock, shared.
pub fn system() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}

/// A clock that shows what it was set to (tests).
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock showing `millis`.
    pub fn at(millis: i64) -> Self {
        Self(AtomicI64::new(millis))
    }

    /// Moves the clock on by `millis`.
    pub fn advance(&self, millis: i64) {
        self.0.fetch_add(millis, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_millis(self.0.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_manual_clock_shows_what_it_was_set_to_and_moves_only_when_told() {
        let clock = ManualClock::at(1_000);
        assert_eq!(clock.now(), Timestamp::from_millis(1_000));
        clock.advance(250);
        assert_eq!(clock.now(), Timestamp::from_millis(1_250));
    }

    #[test]
    fn the_system_clock_is_past_2020() {
        // 2020-01-01T00:00:00Z.
        assert!(SystemClock.now() > Timestamp::from_millis(1_577_836_800_000));
    }
}
