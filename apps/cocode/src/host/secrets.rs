//! The process's own secrets: sealed away from other processes at start-up
//! (`cocode_platform::seal`) and read from here instead of the environment.

use std::sync::OnceLock;

use cocode_platform::seal::Sealed;

static SEALED: OnceLock<Sealed> = OnceLock::new();

/// Whether a variable of cocode's own environment is a secret to seal: a
/// credential-like name (`*_API_KEY`, `*_TOKEN`, …) or a value that looks
/// like a key, except the few desktop variables whose names only look so.
pub fn is_secret(name: &str, value: &str) -> bool {
    /// Not secrets: a window-activation cookie the toolkit reads at start,
    /// and the keyring daemon's socket folder.
    const NOT_SECRETS: [&str; 3] = [
        "XDG_ACTIVATION_TOKEN",
        "GNOME_KEYRING_CONTROL",
        "GNOME_KEYRING_PID",
    ];
    !NOT_SECRETS.contains(&name)
        && (cocode_toolchain::env::is_credential_like(name)
            || cocode_toolchain::env::is_credential_value(value))
}

/// Seals this process's secrets: marks it undumpable and takes its secret
/// variables out of its environment (and out of the block other processes
/// read), keeping them for [`var`].
///
/// # Safety
/// No other thread may exist yet (call it first thing in `main`).
#[expect(
    unsafe_code,
    reason = "changes the process environment before any thread exists"
)]
pub unsafe fn seal() {
    // SAFETY: passed on to the caller.
    let sealed = unsafe { cocode_platform::seal::seal(is_secret) };
    let _ = SEALED.set(sealed);
}

/// A variable of cocode's environment as it started, secrets included.
pub fn var(name: &str) -> Option<String> {
    match SEALED.get() {
        Some(sealed) => sealed.var(name),
        None => std::env::var(name).ok(),
    }
}

/// The values of the secrets sealed at start (for scrubbing crash reports).
pub fn values() -> Vec<String> {
    SEALED
        .get()
        .map(|sealed| sealed.names().filter_map(|n| sealed.var(n)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_and_key_values_are_secrets_and_desktop_cookies_are_not() {
        for (name, value) in [
            ("ANTHROPIC_API_KEY", "x"),
            ("GITHUB_TOKEN", "x"),
            ("DB_PASSWORD", "x"),
            ("MY_SETTING", "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWX"),
        ] {
            assert!(is_secret(name, value), "{name}");
        }
        for (name, value) in [
            ("PATH", "/usr/bin"),
            ("XDG_ACTIVATION_TOKEN", "gnome-shell/cocode-1234"),
            ("GNOME_KEYRING_CONTROL", "/run/user/1000/keyring"),
            ("LANG", "ko_KR.UTF-8"),
        ] {
            assert!(!is_secret(name, value), "{name}");
        }
    }
}
