//! Where the allowed hosts and the write exceptions come from.
//!
//! Allowed hosts = ecosystem defaults (one data file,
//! `assets/ecosystem_hosts.json`, per ecosystem whose manifest is at the
//! workspace root) ∪ hosts named by the workspace's lockfiles (but not
//! those an agent task's edit put there: held for a person) ∪ the
//! person's additions (`workspace.json`) ∪ the hosts an ACP agent entry
//! declares for its model API.
//!
//! Write exceptions = toolchains' download caches outside the workspace
//! that builds must write (never their programs or configuration): below
//! the environment's override of the toolchain's home first, then the
//! platform default; one that cannot be resolved is left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use cocode_core::ids::TaskId;
use cocode_core::workspace::{AllowedHosts, HeldHost, HostPattern, WriteException};
use serde::Deserialize;

use crate::env::TargetOs;
use crate::hosts::HostPolicy;

const ECOSYSTEMS: &str = include_str!("../../../assets/ecosystem_hosts.json");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EcosystemFile {
    version: u32,
    ecosystems: Vec<Ecosystem>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ecosystem {
    pub name: String,
    pub manifests: Vec<String>,
    pub hosts: Vec<String>,
}

/// The bundled ecosystem table (checked by a test, so it always parses).
pub fn ecosystems() -> Vec<Ecosystem> {
    serde_json::from_str::<EcosystemFile>(ECOSYSTEMS)
        .ok()
        .filter(|f| f.version == 1)
        .map(|f| f.ecosystems)
        .unwrap_or_default()
}

/// Lockfiles whose URLs name the registries a build fetches from.
const LOCKFILES: [&str; 8] = [
    "Cargo.lock",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "pubspec.lock",
    "poetry.lock",
    "uv.lock",
    "go.sum",
];

/// Hosts of every `http://` or `https://` URL in `text`.
pub fn hosts_in(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("://") {
        let scheme_ok = text[..i].ends_with("https") || text[..i].ends_with("http");
        if !scheme_ok {
            continue;
        }
        let rest = &text[i + 3..];
        let end = rest
            .find(|c: char| {
                matches!(c, '/' | '"' | '\'' | ':' | '?' | '#' | '@') || c.is_whitespace()
            })
            .unwrap_or(rest.len());
        if let Ok(p) = HostPattern::parse(&rest[..end]) {
            out.insert(p.host().to_owned());
        }
    }
    out
}

/// One recorded agent change of a lockfile: the task and the file's text
/// before and after it (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockfileChange {
    pub task: TaskId,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The hosts of the ecosystems whose manifests `root` holds, and the
/// person's own (`user`) — no host a lockfile names: for programs a
/// cloned folder names (its language servers), whose lockfiles are the
/// folder's word, not the person's. Only looks whether the manifests
/// exist.
pub fn without_lockfiles(root: &Path, user: &[HostPattern]) -> AllowedHosts {
    let mut defaults = BTreeSet::new();
    for eco in ecosystems() {
        if eco.manifests.iter().any(|m| root.join(m).is_file()) {
            defaults.extend(eco.hosts.iter().filter_map(|h| HostPattern::parse(h).ok()));
        }
    }
    AllowedHosts {
        defaults: defaults.into_iter().collect(),
        derived: Vec::new(),
        user: user.to_vec(),
        held: Vec::new(),
    }
}

/// The allowed hosts of the workspace at `root` (reads its top-level
/// manifests and lockfiles; `user` comes from `workspace.json`), with no
/// agent change of a lockfile on record.
pub fn compose(root: &Path, user: &[HostPattern]) -> AllowedHosts {
    compose_with_history(root, user, &|_| Vec::new())
}

/// The allowed hosts of the workspace at `root`, where `changes` gives the
/// recorded agent changes of a lockfile (by its name, oldest first). A host
/// a lockfile names is derived — allowed — unless an agent change put it
/// there: a host that some change's text after has and its text before had
/// not, and that the lockfile did not name before the first recorded
/// change, is held for a person (`held`, with the file and the task), so a
/// task cannot grant itself a host by writing a lockfile.
pub fn compose_with_history(
    root: &Path,
    user: &[HostPattern],
    changes: &dyn Fn(&str) -> Vec<LockfileChange>,
) -> AllowedHosts {
    let mut defaults = BTreeSet::new();
    for eco in ecosystems() {
        if eco.manifests.iter().any(|m| root.join(m).is_file()) {
            defaults.extend(eco.hosts.iter().filter_map(|h| HostPattern::parse(h).ok()));
        }
    }
    let mut derived = BTreeSet::new();
    let mut held: BTreeMap<HostPattern, HeldHost> = BTreeMap::new();
    let patterns = |text: &str| -> BTreeSet<HostPattern> {
        hosts_in(text)
            .iter()
            .filter_map(|h| HostPattern::parse(h).ok())
            .collect()
    };
    for lock in LOCKFILES {
        let Ok(text) = std::fs::read_to_string(root.join(lock)) else {
            continue;
        };
        let named = patterns(&text);
        let history = changes(lock);
        let baseline = history
            .first()
            .and_then(|c| c.before.as_deref())
            .map(patterns)
            .unwrap_or_default();
        let mut introduced: BTreeMap<HostPattern, TaskId> = BTreeMap::new();
        for change in &history {
            let before = change.before.as_deref().map(patterns).unwrap_or_default();
            for host in change.after.as_deref().map(patterns).unwrap_or_default() {
                if !before.contains(&host) && !baseline.contains(&host) {
                    introduced
                        .entry(host)
                        .or_insert_with(|| change.task.clone());
                }
            }
        }
        for host in named {
            match introduced.remove(&host) {
                Some(task) if !defaults.contains(&host) && !user.contains(&host) => {
                    held.entry(host.clone()).or_insert(HeldHost {
                        host,
                        file: lock.to_owned(),
                        task,
                    });
                }
                _ => {
                    derived.insert(host);
                }
            }
        }
    }
    let derived: Vec<HostPattern> = derived
        .difference(&defaults)
        .filter(|h| !held.contains_key(h))
        .cloned()
        .collect();
    AllowedHosts {
        defaults: defaults.into_iter().collect(),
        derived,
        user: user.to_vec(),
        held: held.into_values().collect(),
    }
}

/// The lockfiles whose named hosts are derived (top-level names).
pub fn lockfiles() -> &'static [&'static str] {
    &LOCKFILES
}

/// The proxy's rules for one launch: the workspace's hosts and the hosts the
/// launching ACP agent declared (confirmed when the agent was added).
pub fn policy_for(hosts: &AllowedHosts, agent_declared: &[HostPattern]) -> HostPolicy {
    HostPolicy::new(
        hosts
            .all()
            .into_iter()
            .chain(agent_declared)
            .cloned()
            .collect(),
    )
}

/// One toolchain's download caches outside the workspace that builds must
/// write: its name, the variable that moves its home, the home's default
/// below the person's home folder, and the cache folders below that home.
struct CacheRule {
    name: &'static str,
    var: &'static str,
    default: &'static str,
    caches: &'static [&'static str],
}

/// The caches agent commands may write. Only download caches: never a
/// folder of programs the person runs (`~/.cargo/bin`, a Gradle wrapper
/// distribution, an Android SDK's tools, a rustup toolchain), nor a
/// configuration a later build of the person's would obey
/// (`~/.cargo/config.toml` could name a `rustc-wrapper`, `~/.gradle/init.d`
/// holds scripts every build runs). What stays: a poisoned download in a
/// cache is compiled by the person's later builds too — the caches are
/// shared so builds stay fast; `docs/decisions.md` says so.
fn exception_rules(os: TargetOs) -> Vec<CacheRule> {
    let per_os = |unix: &'static str, mac: &'static str, win: &'static str| match os {
        TargetOs::Linux => unix,
        TargetOs::MacOs => mac,
        TargetOs::Windows => win,
    };
    vec![
        CacheRule {
            name: "Cargo",
            var: "CARGO_HOME",
            default: ".cargo",
            caches: &["registry", "git"],
        },
        CacheRule {
            name: "Dart pub",
            var: "PUB_CACHE",
            default: per_os(".pub-cache", ".pub-cache", "AppData/Local/Pub/Cache"),
            caches: &["hosted", "git"],
        },
        CacheRule {
            name: "Gradle",
            var: "GRADLE_USER_HOME",
            default: ".gradle",
            caches: &["caches", "daemon"],
        },
        CacheRule {
            name: "CocoaPods",
            var: "CP_HOME_DIR",
            default: ".cocoapods",
            caches: &["repos"],
        },
        CacheRule {
            name: "npm",
            var: "npm_config_cache",
            default: per_os(".npm", ".npm", "AppData/Local/npm-cache"),
            caches: &["_cacache", "_logs"],
        },
        CacheRule {
            name: "pip",
            var: "PIP_CACHE_DIR",
            default: per_os(
                ".cache/pip",
                "Library/Caches/pip",
                "AppData/Local/pip/Cache",
            ),
            caches: &[""],
        },
    ]
}

/// Resolves the write exceptions from `env` (a toolchain's home override
/// first) and `home` (the platform default). Pure: the caller
/// canonicalizes and drops the ones that do not exist.
pub fn write_exceptions(
    env: &BTreeMap<String, String>,
    home: Option<&Path>,
    os: TargetOs,
) -> Vec<WriteException> {
    let mut out = Vec::new();
    for rule in exception_rules(os) {
        let base = env
            .get(rule.var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| Some(home?.join(rule.default)));
        let Some(base) = base else {
            continue;
        };
        for cache in rule.caches {
            let (name, path) = if cache.is_empty() {
                (format!("{} cache", rule.name), base.clone())
            } else {
                (format!("{} {cache}", rule.name), base.join(cache))
            };
            out.push(WriteException { name, path });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_bundled_table_parses_and_every_host_is_valid() {
        let all = ecosystems();
        assert_eq!(
            all.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            vec!["cargo", "npm", "python", "dart", "gradle", "go"]
        );
        for e in &all {
            for h in &e.hosts {
                assert!(HostPattern::parse(h).is_ok(), "{h}");
            }
        }
    }

    #[test]
    fn lockfile_urls_yield_their_hosts() {
        let cargo_lock = "source = \"registry+https://github.com/rust-lang/crates.io-index\"\nsource = \"git+https://gitlab.example.org/team/lib.git?rev=1#abc\"\nchecksum = \"deadbeef\"";
        let npm = "\"resolved\": \"https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz\", \"x\": \"http://npm.internal.example:4873/a\"";
        assert_eq!(
            hosts_in(&format!("{cargo_lock}\n{npm}"))
                .into_iter()
                .collect::<Vec<_>>(),
            vec![
                "github.com",
                "gitlab.example.org",
                "npm.internal.example",
                "registry.npmjs.org"
            ]
        );
        assert_eq!(
            hosts_in("ftp://x.example/ and :// nothing"),
            BTreeSet::new()
        );
    }

    #[test]
    #[expect(clippy::disallowed_methods, reason = "builds a fixture workspace")]
    fn composition_reads_manifests_and_lockfiles() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]").unwrap();
        std::fs::write(
            dir.path().join("Cargo.lock"),
            "source = \"git+https://git.example.com/x\"",
        )
        .unwrap();
        let user = vec![HostPattern::parse("*.corp.example").unwrap()];
        let hosts = compose(dir.path(), &user);
        let names = |v: &[HostPattern]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(
            (
                names(&hosts.defaults),
                names(&hosts.derived),
                names(&hosts.user)
            ),
            (
                vec![
                    "crates.io".into(),
                    "index.crates.io".into(),
                    "static.crates.io".into(),
                    "static.rust-lang.org".into()
                ],
                vec!["git.example.com".to_owned()],
                vec!["*.corp.example".to_owned()]
            )
        );
        let policy = policy_for(&hosts, &[HostPattern::parse("api.anthropic.com").unwrap()]);
        assert!(policy.judge("api.anthropic.com", 443).is_ok());
        assert!(policy.judge("x.corp.example", 443).is_ok());
        assert!(policy.judge("registry.npmjs.org", 443).is_err());
        // Without lockfiles: the same registries and the person's hosts,
        // none the folder's lockfile names.
        let folders = without_lockfiles(dir.path(), &user);
        assert_eq!(
            (
                names(&folders.defaults),
                names(&folders.derived),
                names(&folders.user)
            ),
            (names(&hosts.defaults), Vec::new(), names(&hosts.user))
        );
        assert!(
            policy_for(&folders, &[])
                .judge("git.example.com", 443)
                .is_err()
        );
    }

    #[test]
    #[expect(clippy::disallowed_methods, reason = "builds a fixture workspace")]
    fn hosts_an_agent_change_put_into_a_lockfile_are_held_with_the_file_and_the_task() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("go.sum"),
            "https://proxy.golang.org/a\nhttp://evil.example/x\nhttps://later.example/y\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("uv.lock"), "https://made.example/p\n").unwrap();
        let task = |id: &str| TaskId::new(id).unwrap();
        let changes = |lock: &str| {
            match lock {
            "go.sum" => vec![
                LockfileChange {
                    task: task("t1"),
                    before: Some("https://proxy.golang.org/a\n".into()),
                    after: Some("https://proxy.golang.org/a\nhttp://evil.example/x\n".into()),
                },
                LockfileChange {
                    task: task("t2"),
                    before: Some("https://proxy.golang.org/a\nhttp://evil.example/x\n".into()),
                    after: Some(
                        "https://proxy.golang.org/a\nhttp://evil.example/x\nhttps://later.example/y\n"
                            .into(),
                    ),
                },
            ],
            // Created by an agent: everything in it is the agent's.
            "uv.lock" => vec![LockfileChange {
                task: task("t3"),
                before: None,
                after: Some("https://made.example/p\n".into()),
            }],
            _ => Vec::new(),
        }
        };
        let user = vec![HostPattern::parse("later.example").unwrap()];
        let hosts = compose_with_history(dir.path(), &user, &changes);
        let held: Vec<(String, &str, &str)> = hosts
            .held
            .iter()
            .map(|h| (h.host.to_string(), h.file.as_str(), h.task.as_str()))
            .collect();
        // `later.example` was allowed by the person; the rest waits.
        assert_eq!(
            held,
            vec![
                ("evil.example".to_owned(), "go.sum", "t1"),
                ("made.example".to_owned(), "uv.lock", "t3"),
            ]
        );
        let derived: Vec<String> = hosts.derived.iter().map(ToString::to_string).collect();
        assert_eq!(derived, ["later.example", "proxy.golang.org"]);
        let policy = policy_for(&hosts, &[]);
        assert!(policy.judge("evil.example", 80).is_err());
        assert!(policy.judge("proxy.golang.org", 443).is_ok());
        // Without a recorded change, the files are the person's.
        let plain = compose(dir.path(), &[]);
        assert!(plain.held.is_empty());
        assert!(
            plain
                .derived
                .iter()
                .any(|h| h.to_string() == "evil.example")
        );
    }

    #[test]
    fn write_exceptions_are_download_caches_below_the_override_or_the_platform_default() {
        let env: BTreeMap<String, String> = [
            ("CARGO_HOME", "/opt/cargo"),
            ("ANDROID_HOME", "/opt/android"),
            ("RUSTUP_HOME", "/opt/rustup"),
            ("PUB_CACHE", ""),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let linux = write_exceptions(&env, Some(Path::new("/home/me")), TargetOs::Linux);
        let pairs: Vec<(String, PathBuf)> = linux.into_iter().map(|x| (x.name, x.path)).collect();
        let pair = |name: &str, path: &str| (name.to_owned(), PathBuf::from(path));
        // No toolchain, SDK, `bin` folder or configuration file.
        assert_eq!(
            pairs,
            vec![
                pair("Cargo registry", "/opt/cargo/registry"),
                pair("Cargo git", "/opt/cargo/git"),
                pair("Dart pub hosted", "/home/me/.pub-cache/hosted"),
                pair("Dart pub git", "/home/me/.pub-cache/git"),
                pair("Gradle caches", "/home/me/.gradle/caches"),
                pair("Gradle daemon", "/home/me/.gradle/daemon"),
                pair("CocoaPods repos", "/home/me/.cocoapods/repos"),
                pair("npm _cacache", "/home/me/.npm/_cacache"),
                pair("npm _logs", "/home/me/.npm/_logs"),
                pair("pip cache", "/home/me/.cache/pip"),
            ]
        );
        let windows = write_exceptions(
            &BTreeMap::new(),
            Some(Path::new("C:/Users/me")),
            TargetOs::Windows,
        );
        assert_eq!(
            windows
                .iter()
                .find(|x| x.name == "pip cache")
                .map(|x| x.path.clone()),
            Some(PathBuf::from("C:/Users/me/AppData/Local/pip/Cache"))
        );
        // No home and no override: left out, never guessed.
        assert_eq!(
            write_exceptions(&BTreeMap::new(), None, TargetOs::Linux),
            vec![]
        );
    }
}
