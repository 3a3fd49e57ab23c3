//! Integration tests of the workspace gate: one binary.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixtures and run real commands"
)]
#![expect(clippy::unwrap_used, reason = "test helpers")]

#[path = "../../../tests/support/require.rs"]
mod require;

mod suite {
    mod attack;
    mod batch;
    mod common;
    mod crash;
    mod gate_ops;
    mod leases;
    mod recovery;
    mod retention;
    mod review;
    mod rollback;
    // The sweep tests run real `sh` commands.
    #[cfg(unix)]
    mod sweep;
    #[cfg(target_os = "linux")]
    mod sweep_narrowed;
    #[cfg(unix)]
    mod sweep_record;
    mod user_ops;
}
