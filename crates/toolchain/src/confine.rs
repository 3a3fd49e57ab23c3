//! OS confinement of agent-profile children.
//!
//! Linux: a Landlock ruleset applied between fork and exec (by the
//! launcher): read and execute everywhere; write only below the allowed
//! roots; TCP `connect` only to the policy proxy's port; TCP `bind` denied.
//! macOS: a Seatbelt profile for `/usr/bin/sandbox-exec` with the same rules
//! ([`seatbelt_profile`], text unit-tested everywhere). Windows: unconfined,
//! and the task detail says so.
//!
//! `.cocode/`: Landlock grants whole hierarchies and cannot carve a folder
//! out of an allowed one, so the workspace is *not* granted as a whole.
//! Each top-level entry except `.cocode` is granted on its own; the root
//! itself gets no write right. A command can therefore change everything in
//! the workspace but the history — and cannot create a *new* top-level file
//! or folder (the agent creates those through the gate, where they are
//! recorded). That trade is deliberate: history an agent's command could
//! rewrite would make rollback meaningless.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cocode_core::path::COCODE_DIR;
use cocode_core::process::Confinement;

use crate::launcher::WritableRoots;

/// The paths a confined child may write: every top-level entry of the
/// workspace except `.cocode`, the write exceptions, and the temp folder.
pub fn writable_paths(roots: &WritableRoots, temp: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(entries) = roots
        .workspace
        .as_ref()
        .and_then(|ws| std::fs::read_dir(ws).ok())
    {
        let mut names: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| {
                !e.file_name()
                    .to_string_lossy()
                    .eq_ignore_ascii_case(COCODE_DIR)
            })
            .map(|e| e.path())
            .collect();
        names.sort();
        out.extend(names);
    }
    out.extend(roots.exceptions.iter().cloned());
    out.push(temp.to_path_buf());
    out
}

/// The Seatbelt (`sandbox-exec`) profile of an agent child on macOS.
pub fn seatbelt_profile(writable: &[PathBuf], proxy_port: u16) -> String {
    let quote = |p: &Path| {
        let text = p.to_string_lossy();
        format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
    };
    let mut profile = String::from(
        "(version 1)\n(deny default)\n(allow process-exec)\n(allow process-fork)\n(allow signal (target same-sandbox))\n(allow sysctl-read)\n(allow mach-lookup)\n(allow file-read*)\n(allow file-write* (literal \"/dev/null\") (literal \"/dev/tty\"))\n",
    );
    for path in writable {
        let _ = writeln!(profile, "(allow file-write* (subpath {}))", quote(path));
    }
    let _ = write!(
        profile,
        "(allow network-outbound (remote tcp \"localhost:{proxy_port}\"))\n(deny network-bind)\n"
    );
    profile
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::PathBuf;
    use std::sync::{Mutex, OnceLock};

    use cocode_core::process::{Confinement, LaunchError};
    use landlock::{
        ABI, Access, AccessFs, AccessNet, NetPort, Ruleset, RulesetAttr, RulesetCreated,
        RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
    };

    /// The newest ABI this build knows; older kernels get the best effort.
    const ABI_USED: ABI = ABI::V5;

    /// A ruleset built in the parent, enforced by the child after fork.
    pub(crate) struct Prepared(Mutex<Option<RulesetCreated>>);

    impl Prepared {
        /// Runs in the child between fork and exec.
        pub(crate) fn restrict(&self) -> std::io::Result<()> {
            let ruleset = self
                .0
                .lock()
                .map_err(|_| std::io::Error::other("landlock ruleset lock"))?
                .take()
                .ok_or_else(|| std::io::Error::other("landlock ruleset already used"))?;
            ruleset
                .restrict_self()
                .map(drop)
                .map_err(std::io::Error::other)
        }
    }

    fn sandbox_err(e: impl std::fmt::Display) -> LaunchError {
        LaunchError::Sandbox(format!("landlock: {e}"))
    }

    /// Builds the ruleset: read everywhere, write below `writable`, TCP
    /// connect only to `proxy_port`, no TCP bind.
    pub(crate) fn prepare(writable: &[PathBuf], proxy_port: u16) -> Result<Prepared, LaunchError> {
        let existing: Vec<&PathBuf> = writable.iter().filter(|p| p.exists()).collect();
        let ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(ABI_USED))
            .map_err(sandbox_err)?
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(sandbox_err)?
            .create()
            .map_err(sandbox_err)?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(ABI_USED)))
            .map_err(sandbox_err)?
            .add_rules(path_beneath_rules(["/dev/null"], AccessFs::WriteFile))
            .map_err(sandbox_err)?
            .add_rules(path_beneath_rules(existing, AccessFs::from_all(ABI_USED)))
            .map_err(sandbox_err)?
            .add_rule(NetPort::new(proxy_port, AccessNet::ConnectTcp))
            .map_err(sandbox_err)?;
        Ok(Prepared(Mutex::new(Some(ruleset))))
    }

    /// Measured once: restricts a throwaway thread (Landlock applies to the
    /// calling thread only) and reads what the kernel enforced.
    pub(crate) fn available() -> Confinement {
        static PROBE: OnceLock<Confinement> = OnceLock::new();
        PROBE
            .get_or_init(|| {
                let probe = std::thread::spawn(|| {
                    let status = Ruleset::default()
                        .handle_access(AccessFs::from_all(ABI_USED))
                        .and_then(|r| r.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp))
                        .and_then(Ruleset::create)
                        .and_then(RulesetCreated::restrict_self);
                    match status {
                        Ok(s) if s.ruleset == RulesetStatus::FullyEnforced => Confinement::Landlock,
                        Ok(s) if s.ruleset == RulesetStatus::PartiallyEnforced => Confinement::Unconfined {
                            reason: "this kernel's Landlock lacks network rules (ABI < 4); writes are confined, connections only by the proxy".into(),
                        },
                        Ok(_) => Confinement::Unconfined {
                            reason: "Landlock is not enabled in this kernel; only the policy proxy limits network access".into(),
                        },
                        Err(e) => Confinement::Unconfined {
                            reason: format!("Landlock could not be set up: {e}"),
                        },
                    }
                });
                probe.join().unwrap_or(Confinement::Unconfined {
                    reason: "the Landlock probe failed".into(),
                })
            })
            .clone()
    }
}

#[cfg(target_os = "linux")]
pub(crate) use linux::prepare;

/// How agent children are confined on this machine.
pub fn available() -> Confinement {
    #[cfg(target_os = "linux")]
    {
        linux::available()
    }
    #[cfg(target_os = "macos")]
    {
        Confinement::Seatbelt
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Confinement::Unconfined {
            reason: "Windows offers no confinement cocode can apply; agent commands run with the person's rights, limited only by the policy proxy".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn seatbelt_profile_denies_by_default_and_allows_only_the_listed_writes_and_the_proxy() {
        let profile = seatbelt_profile(
            &[
                PathBuf::from("/Users/me/ws/src"),
                PathBuf::from("/tmp/x \"q\""),
            ],
            4242,
        );
        assert_eq!(
            profile,
            "(version 1)\n(deny default)\n(allow process-exec)\n(allow process-fork)\n(allow signal (target same-sandbox))\n(allow sysctl-read)\n(allow mach-lookup)\n(allow file-read*)\n(allow file-write* (literal \"/dev/null\") (literal \"/dev/tty\"))\n(allow file-write* (subpath \"/Users/me/ws/src\"))\n(allow file-write* (subpath \"/tmp/x \\\"q\\\"\"))\n(allow network-outbound (remote tcp \"localhost:4242\"))\n(deny network-bind)\n"
        );
    }

    #[test]
    #[expect(clippy::disallowed_methods, reason = "builds a fixture workspace")]
    fn the_workspace_is_granted_entry_by_entry_without_cocode() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["src", ".cocode", ".COCODE", "Cargo.toml"] {
            let p = dir.path().join(name);
            if name.contains('.') && name != ".cocode" && name != ".COCODE" {
                std::fs::write(&p, b"").unwrap();
            } else {
                std::fs::create_dir(&p).unwrap();
            }
        }
        let roots = WritableRoots {
            workspace: Some(dir.path().to_path_buf()),
            exceptions: vec![PathBuf::from("/home/me/.cargo")],
        };
        assert_eq!(
            writable_paths(&roots, Path::new("/tmp")),
            vec![
                dir.path().join("Cargo.toml"),
                dir.path().join("src"),
                PathBuf::from("/home/me/.cargo"),
                PathBuf::from("/tmp"),
            ]
        );
    }
}
