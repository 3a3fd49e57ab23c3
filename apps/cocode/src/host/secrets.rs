//! The process's own secrets: sealed away from other processes at start-up
//! (`cocode_platform::seal`) and read from here instead of the environment.

use std::sync::OnceLock;

use cocode_platform::seal::Sealed;

static SEALED: OnceLock<Sealed> = OnceLock::new();

/// Variables cocode itself (its window toolkit, graphics drivers, input
/// methods, the session bus for the keyring, its logs) reads from its
/// environment, though no child gets them: they stay in the environment
/// unless their value holds a credential.
const OWN_NAMES: [&str; 30] = [
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "WAYLAND_SOCKET",
    "XAUTHORITY",
    "XMODIFIERS",
    "DESKTOP_STARTUP_ID",
    "DESKTOP_SESSION",
    "SESSION_MANAGER",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "RUST_LOG",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "CI",
    "NO_COLOR",
    "PWD",
    "SHLVL",
    "LANGUAGE",
];

/// Name prefixes of the same kind (desktop, toolkit, graphics, cocode's own
/// settings, and the variables Cargo and rustup set for a program they run).
const OWN_PREFIXES: [&str; 26] = [
    "XDG_",
    "GTK_",
    "GDK_",
    "QT_",
    "SDL_",
    "WINIT_",
    "XCURSOR_",
    "XKB_",
    "LIBGL_",
    "MESA_",
    "GALLIUM_",
    "__GLX_",
    "__EGL_",
    "__NV_",
    "EGL_",
    "VK_",
    "WGPU_",
    "DRI_",
    "LIBVA_",
    "FONTCONFIG_",
    "IBUS_",
    "GNOME_",
    "KDE_",
    "COCODE_",
    "CARGO_",
    "RUSTUP_",
];

/// Whether cocode keeps a variable in its own environment when its value
/// holds no credential.
fn is_own(name: &str) -> bool {
    OWN_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
        || OWN_PREFIXES.iter().any(|p| name.starts_with(p))
        || name.ends_with("_IM_MODULE")
}

/// Whether a variable of cocode's own environment is a secret to seal: a
/// credential-like name (`*_API_KEY`, `*_TOKEN`, …), a value that looks
/// like a key, holds a URL with a user or password, or looks like a
/// generated token — and on Linux, where `/proc/<pid>/environ` shows the
/// starting environment, every variable no child would get and cocode does
/// not read itself. The few desktop variables whose names only look like
/// credentials stay.
pub fn is_secret(name: &str, value: &str) -> bool {
    use cocode_toolchain::env;
    /// Not secrets: a window-activation cookie the toolkit reads at start,
    /// and the keyring daemon's socket folder.
    const NOT_SECRETS: [&str; 3] = [
        "XDG_ACTIVATION_TOKEN",
        "GNOME_KEYRING_CONTROL",
        "GNOME_KEYRING_PID",
    ];
    if NOT_SECRETS.contains(&name) {
        return false;
    }
    if env::is_credential_like(name)
        || env::is_credential_value(value)
        || env::has_url_credentials(value)
        || env::is_random_token(value)
    {
        return true;
    }
    cfg!(target_os = "linux")
        && !env::passes_to_children(name, env::TargetOs::Linux)
        && !is_own(name)
}

/// The upstream proxies cocode itself connects through (providers'
/// requests), read from the sealed environment: a proxy whose URL holds a
/// password is sealed away from `/proc`, so the HTTP client is handed it
/// instead of finding it in the environment.
pub fn upstream_proxies() -> cocode_agent::UpstreamProxies {
    cocode_agent::UpstreamProxies::from_lookup(var)
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
            ("DISPLAY", ":0"),
            (
                "XAUTHORITY",
                "/run/user/1000/.mutter-Xwaylandauth.ABC123XYZ0",
            ),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
            ("GTK_IM_MODULE", "ibus"),
            ("HTTPS_PROXY", "http://proxy.corp:3128"),
            ("RUST_LOG", "info"),
        ] {
            assert!(!is_secret(name, value), "{name}");
        }
    }

    #[test]
    fn credentials_in_values_are_secrets_whatever_the_name() {
        for (name, value) in [
            ("DATABASE_URL", "postgres://app:hunter2@db/x"),
            ("HTTPS_PROXY", "http://me:pw@proxy.corp:3128"),
            ("SENTRY_DSN", "https://abc123@o1.ingest.sentry.io/1"),
            ("DISPLAY", "Zx81KqP0aLmN3vB7cD2eF9gH4iJ6kM1o"),
        ] {
            assert!(is_secret(name, value), "{name}");
        }
    }

    /// On Linux every variable neither a child nor cocode itself reads is
    /// sealed, so a credential cocode cannot recognise stays out of
    /// `/proc/<cocode>/environ` too.
    #[cfg(target_os = "linux")]
    #[test]
    fn on_linux_what_no_child_gets_and_cocode_does_not_read_is_sealed() {
        for (name, value) in [
            ("SLACK_WEBHOOK", "https://hooks.slack.com/services/T0/B0/x"),
            ("NPM_CONFIG__AUTH", "dXNlcjpwYXNz"),
            ("MY_APP_SETTING", "plain"),
        ] {
            assert!(is_secret(name, value), "{name}");
        }
    }
}
