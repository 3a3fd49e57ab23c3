//! How long a look at the workspace around a command or an agent's turn
//! may take, and when a stopped task stops it (both backends' sweeps use
//! it).

use std::time::Duration;

/// How long a look at the workspace goes on once the task was stopped:
/// enough to record a stopped command's changes in an ordinary tree, and
/// never the minutes a huge one could take.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Whether a look at the workspace must stop: the task was stopped more
/// than [`STOP_GRACE`] ago (counted from when the look began).
pub fn sweep_stop(cancel: tokio_util::sync::CancellationToken) -> impl Fn() -> bool + Sync {
    let began = std::time::Instant::now();
    move || cancel.is_cancelled() && began.elapsed() >= STOP_GRACE
}

/// A look at the workspace within the attempt's time limit (counted from
/// when it began), stopped by `stop`.
pub fn sweep_budget(
    limit: Duration,
    stop: &(dyn Fn() -> bool + Sync),
) -> cocode_workspace::SweepBudget<'_> {
    cocode_workspace::SweepBudget {
        deadline: Some(std::time::Instant::now() + limit),
        stop: Some(stop),
    }
}
