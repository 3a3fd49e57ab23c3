//! Replacing a file on Windows while another process briefly holds it:
//! which errors are retried, how long, and the retrying rename.

use std::fs;
use std::io;
use std::path::Path;

/// Windows error codes a replace can hit while another process (a virus
/// scanner, an indexer, an editor) briefly holds the target open:
/// `ERROR_ACCESS_DENIED` (5), `ERROR_SHARING_VIOLATION` (32),
/// `ERROR_LOCK_VIOLATION` (33).
pub(crate) fn is_transient_replace_error(raw_os_error: Option<i32>) -> bool {
    matches!(raw_os_error, Some(5 | 32 | 33))
}

/// Waits between replace attempts: 5 tries spread over about 0.3 s.
pub(crate) const REPLACE_RETRY_DELAYS_MS: [u64; 4] = [10, 30, 80, 180];

/// What to do after a failed replace attempt `attempt` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplaceStep {
    RetryAfterMs(u64),
    GiveUp,
}

pub(crate) fn next_replace_step(
    attempt: usize,
    raw_os_error: Option<i32>,
    target_read_only: bool,
) -> ReplaceStep {
    if target_read_only || !is_transient_replace_error(raw_os_error) {
        return ReplaceStep::GiveUp;
    }
    REPLACE_RETRY_DELAYS_MS
        .get(attempt)
        .map_or(ReplaceStep::GiveUp, |ms| ReplaceStep::RetryAfterMs(*ms))
}

/// Renames `from` over `to`, retrying transient sharing violations and
/// refusing a read-only target (Windows would refuse it anyway, with an
/// error that looks transient).
#[cfg_attr(
    unix,
    expect(
        dead_code,
        reason = "used by the Windows disk layer; its policy is tested everywhere"
    )
)]
pub(crate) fn replace_with_retry(from: &Path, to: &Path) -> io::Result<()> {
    let mut attempt = 0;
    loop {
        match fs::rename(from, to) {
            Ok(()) => return Ok(()),
            Err(e) => {
                let read_only = fs::metadata(to).is_ok_and(|m| m.permissions().readonly());
                match next_replace_step(attempt, e.raw_os_error(), read_only) {
                    ReplaceStep::RetryAfterMs(ms) => {
                        std::thread::sleep(std::time::Duration::from_millis(ms));
                        attempt += 1;
                    }
                    ReplaceStep::GiveUp if read_only => {
                        return Err(io::Error::new(
                            io::ErrorKind::PermissionDenied,
                            "the target file is read-only",
                        ));
                    }
                    ReplaceStep::GiveUp => return Err(e),
                }
            }
        }
    }
}
