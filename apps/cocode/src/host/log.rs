//! Best-effort work: a failure that changes nothing for the caller (a
//! cleanup, a cancel of something already gone) is still never dropped
//! silently — it is logged with what was attempted.

/// Logs an error of best-effort work instead of discarding it.
pub trait LogErr {
    /// Logs the error, if any, as a warning naming `what` was attempted.
    fn log_err(self, what: &str);
}

impl<T, E: std::fmt::Display> LogErr for Result<T, E> {
    fn log_err(self, what: &str) {
        if let Err(e) = self {
            tracing::warn!("{what} failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LogErr as _;

    #[test]
    fn ok_and_err_both_return_nothing_and_never_panic() {
        Ok::<u8, String>(1).log_err("nothing");
        Err::<u8, _>("the disk is full").log_err("removing a staged file");
    }
}
