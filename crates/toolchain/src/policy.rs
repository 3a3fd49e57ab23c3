//! The sandbox decision for a launch, as a pure transform of its spec
//! (`SandboxPolicy`): the environment (whitelist, proxy variables, secrets),
//! the folders a confined child may write, its network reach and how the OS
//! confines it. The launcher asks for a plan before every launch and
//! follows it; the only thing it adds is the launch's own proxy
//! credentials, which exist once the launch is registered.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cocode_core::process::{
    Confinement, LaunchError, LaunchSpec, NetworkPlan, SandboxPlan, SandboxPolicy,
    SandboxProfileKind,
};

use crate::env::{ProxyEnv, TargetOs, add_secrets, child_env};
use crate::roots::WritableRoots;

/// The sandbox policy of one app instance's launches.
#[derive(Debug, Clone)]
pub struct LaunchPolicy {
    pub(crate) inherited: BTreeMap<String, String>,
    writable: WritableRoots,
    temp: PathBuf,
    proxy_port: Option<u16>,
    confinement: Confinement,
    os: TargetOs,
    /// Launches get a mount namespace where read-only binds hold, so the
    /// workspace root is granted with its metadata bound read-only.
    /// `None`: this machine's, measured when a launch first asks.
    root_grant: Option<bool>,
}

impl LaunchPolicy {
    /// A policy for this machine: whitelisted variables of this process's
    /// environment, its temp folder and the confinement the kernel offers.
    pub fn new(writable: WritableRoots, proxy_port: Option<u16>) -> Self {
        Self {
            inherited: std::env::vars().collect(),
            writable,
            temp: std::env::temp_dir(),
            proxy_port,
            confinement: crate::confine::available(),
            os: TargetOs::current(),
            // Measured at the first launch, not here: a process builds its
            // launchers at start, long before it launches anything.
            root_grant: None,
        }
    }

    /// The same policy deciding for another machine (tests and previews).
    #[must_use]
    pub fn for_machine(
        mut self,
        inherited: BTreeMap<String, String>,
        temp: PathBuf,
        confinement: Confinement,
        os: TargetOs,
    ) -> Self {
        self.inherited = inherited;
        self.temp = temp;
        self.confinement = confinement;
        self.os = os;
        self
    }

    /// The same policy with the workspace root granted (metadata bound
    /// read-only) or granted entry by entry.
    #[must_use]
    pub fn with_root_grant(mut self, root_grant: bool) -> Self {
        self.root_grant = Some(root_grant);
        self
    }

    /// How agent children are confined.
    pub fn agent_confinement(&self) -> Confinement {
        self.confinement.clone()
    }

    /// The folder agent launches make their private temp folders in.
    pub fn temp_base(&self) -> &std::path::Path {
        &self.temp
    }
}

impl SandboxPolicy for LaunchPolicy {
    fn plan(&self, spec: &LaunchSpec) -> Result<SandboxPlan, LaunchError> {
        let kind = spec.profile.kind();
        // The proxy variables name the proxy without credentials; each
        // launch gets its own when it is registered.
        let proxy = match kind {
            SandboxProfileKind::Agent => {
                let port = self.proxy_port.ok_or(LaunchError::ProxyUnavailable)?;
                Some(ProxyEnv {
                    url: format!("http://127.0.0.1:{port}"),
                    port,
                })
            }
            SandboxProfileKind::HumanTerminal | SandboxProfileKind::Tool => None,
        };
        let mut env = child_env(
            kind,
            &self.inherited,
            &spec.env_overrides,
            proxy.as_ref(),
            self.os,
        )?;
        add_secrets(&mut env, kind, &spec.secret_env)?;
        Ok(match proxy {
            Some(proxy) => {
                // The launch adds its private temp folder.
                let root_grant = self
                    .root_grant
                    .unwrap_or_else(|| crate::confine::protections().metadata_mounts);
                let writes = crate::confine::workspace_writes(&self.writable, root_grant);
                let mut writable_roots = writes.writable;
                writable_roots.extend(
                    spec.extra_writable
                        .iter()
                        .filter_map(|p| dunce::canonicalize(p).ok())
                        .filter(|p| p.is_dir()),
                );
                SandboxPlan {
                    env,
                    writable_roots,
                    read_only: writes.read_only,
                    network: NetworkPlan::ProxyOnly { port: proxy.port },
                    confinement: self.confinement.clone(),
                }
            }
            None => SandboxPlan {
                env,
                writable_roots: Vec::new(),
                read_only: Vec::new(),
                network: NetworkPlan::Unrestricted,
                confinement: Confinement::Unconfined {
                    reason: "the person's own terminal and tools are not confined".into(),
                },
            },
        })
    }
}

#[cfg(test)]
#[expect(clippy::disallowed_methods, reason = "the test builds a workspace")]
mod tests {
    use super::*;
    use cocode_core::TaskId;
    use cocode_core::process::{LaunchIo, SandboxProfile};
    use cocode_core::services::Secret;
    use pretty_assertions::assert_eq;

    fn spec(profile: SandboxProfile) -> LaunchSpec {
        LaunchSpec {
            argv: vec!["tool".into()],
            cwd: PathBuf::from("/ws"),
            env_overrides: BTreeMap::from([("RUST_LOG".to_owned(), "debug".to_owned())]),
            profile,
            io: LaunchIo::Piped,
            timeout: None,
            output_byte_limit: None,
            extra_writable: Vec::new(),
            secret_env: BTreeMap::new(),
            extra_hosts: Vec::new(),
        }
    }

    fn policy(proxy_port: Option<u16>) -> LaunchPolicy {
        policy_in(PathBuf::from("/no/such/ws"), proxy_port)
    }

    fn policy_in(workspace: PathBuf, proxy_port: Option<u16>) -> LaunchPolicy {
        LaunchPolicy::new(
            WritableRoots {
                workspace: Some(workspace),
                exceptions: vec![PathBuf::from("/cache/cargo")],
            },
            proxy_port,
        )
        .for_machine(
            BTreeMap::from([
                ("PATH".to_owned(), "/usr/bin".to_owned()),
                ("AWS_SECRET_ACCESS_KEY".to_owned(), "x".to_owned()),
            ]),
            PathBuf::from("/tmp"),
            Confinement::Landlock,
            TargetOs::Linux,
        )
        .with_root_grant(false)
    }

    #[test]
    fn an_agent_launch_is_proxied_confined_and_writes_only_its_roots() {
        let mut agent = spec(SandboxProfile::Agent {
            task_id: TaskId::new("t1").unwrap(),
        });
        agent
            .secret_env
            .insert("GEMINI_API_KEY".into(), Secret::new("k"));
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "a").unwrap();
        std::fs::create_dir(ws.path().join(".cocode")).unwrap();
        let plan = policy_in(ws.path().to_path_buf(), Some(4242))
            .plan(&agent)
            .unwrap();
        assert_eq!(plan.network, NetworkPlan::ProxyOnly { port: 4242 });
        assert_eq!(plan.confinement, Confinement::Landlock);
        // The workspace's entries but never `.cocode/`, and the exceptions;
        // the launch adds its private temp folder.
        assert_eq!(
            plan.writable_roots,
            vec![ws.path().join("a.txt"), PathBuf::from("/cache/cargo")]
        );
        let shown: Vec<(&str, &str)> = plan
            .env
            .iter()
            .filter(|(k, _)| {
                [
                    "PATH",
                    "HTTPS_PROXY",
                    "RUST_LOG",
                    "GEMINI_API_KEY",
                    "AWS_SECRET_ACCESS_KEY",
                ]
                .contains(&k.as_str())
            })
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            shown,
            vec![
                ("GEMINI_API_KEY", "k"),
                ("HTTPS_PROXY", "http://127.0.0.1:4242"),
                ("PATH", "/usr/bin"),
                ("RUST_LOG", "debug"),
            ]
        );
        assert_eq!(
            policy(None).plan(&agent),
            Err(LaunchError::ProxyUnavailable)
        );
    }

    #[test]
    fn the_persons_terminal_is_neither_proxied_nor_confined_and_gets_no_secret() {
        let plan = policy(Some(4242))
            .plan(&spec(SandboxProfile::HumanTerminal))
            .unwrap();
        assert_eq!(
            plan,
            SandboxPlan {
                env: BTreeMap::from([
                    ("PATH".to_owned(), "/usr/bin".to_owned()),
                    ("RUST_LOG".to_owned(), "debug".to_owned()),
                ]),
                writable_roots: Vec::new(),
                read_only: Vec::new(),
                network: NetworkPlan::Unrestricted,
                confinement: Confinement::Unconfined {
                    reason: "the person's own terminal and tools are not confined".into()
                },
            }
        );
        let mut tool = spec(SandboxProfile::Tool);
        tool.secret_env.insert("X_API_KEY".into(), Secret::new("k"));
        assert_eq!(
            policy(Some(4242)).plan(&tool),
            Err(LaunchError::SecretEnvNotAllowed("X_API_KEY".into()))
        );
    }
}
