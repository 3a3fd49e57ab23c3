//! Integration tests of the toolchain with real processes: one binary.
//! They drive Unix programs (`sh`, `env`, `cat`, `curl`); the Windows code
//! paths are compiled by `cargo xtask cross-check` and their pure parts
//! (environment whitelist, Seatbelt text) are unit-tested everywhere.
#![cfg_attr(
    unix,
    expect(clippy::disallowed_methods, reason = "tests build fixtures")
)]
#![cfg_attr(unix, expect(clippy::unwrap_used, reason = "test helpers"))]

#[cfg(unix)]
mod suite {
    mod common;
    // Landlock is Linux's.
    #[cfg(target_os = "linux")]
    mod confinement;
    mod launcher;
    mod proxy;
    // The Secret Service is the Linux store; Keychain and Credential Manager
    // are compiled by the cross-check.
    #[cfg(target_os = "linux")]
    mod vault;
    mod verify;
}
