//! The composition root: the one place the app builds its launchers, its
//! credential store, its clock and its brick engine. `main` builds one [`HostRoot`]
//! and hands it to the window or the command line; a workspace's host gets
//! its launchers from here too. `cargo xtask boundaries` refuses a
//! `Launcher::new` anywhere else.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cocode_core::clock::Clock;
use cocode_core::services::CredentialVault;
use cocode_toolchain::{Launcher, PolicyProxy, WritableRoots};

use crate::host::exceptions::write_exceptions;

/// What every front end shares: the process's runtime, the launcher of the
/// person's own processes and the credential store.
#[derive(Clone)]
pub struct HostRoot {
    runtime: tokio::runtime::Handle,
    person: Arc<Launcher>,
    credentials: Arc<dyn CredentialVault>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for HostRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostRoot").finish_non_exhaustive()
    }
}

impl HostRoot {
    /// The root on the process's one runtime, with the OS credential store.
    pub fn new(runtime: tokio::runtime::Handle) -> Self {
        Self::with_credentials(runtime, Arc::new(cocode_toolchain::vault::KeyringVault))
    }

    /// The root with another credential store (tests, a session-only one).
    pub fn with_credentials(
        runtime: tokio::runtime::Handle,
        credentials: Arc<dyn CredentialVault>,
    ) -> Self {
        let person = Arc::new(person_launcher(runtime.clone()));
        Self {
            runtime,
            person,
            credentials,
            clock: cocode_core::clock::system(),
        }
    }

    /// The process's runtime.
    pub fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }

    /// The launcher of the person's own processes: shells, the system's
    /// file manager, bricks' hooks. No proxy, no workspace confinement:
    /// these run as the person would run them.
    pub fn person_launcher(&self) -> Arc<Launcher> {
        Arc::clone(&self.person)
    }

    /// The OS credential store (provider keys, agents' secrets).
    pub fn credentials(&self) -> Arc<dyn CredentialVault> {
        Arc::clone(&self.credentials)
    }

    /// The one clock the hosts stamp their records with.
    pub fn clock(&self) -> Arc<dyn Clock> {
        Arc::clone(&self.clock)
    }

    /// The brick engine over `catalog`; its hooks run as the person's.
    pub fn bricks(&self, catalog: cocode_bricks::BrickCatalog) -> cocode_bricks::Bricks {
        cocode_bricks::Bricks::new(catalog, self.person_launcher())
    }
}

/// The person's launcher on `runtime` (see [`HostRoot::person_launcher`]).
fn person_launcher(runtime: tokio::runtime::Handle) -> Launcher {
    Launcher::new(runtime, None, WritableRoots::default())
}

/// The launcher of one workspace's agent and verification commands: the
/// network only through `proxy`, writes in the workspace `root` and the
/// toolchains' caches.
pub fn workspace_launcher(
    runtime: tokio::runtime::Handle,
    root: PathBuf,
    proxy: Arc<PolicyProxy>,
) -> Launcher {
    Launcher::new(
        runtime,
        Some(proxy),
        WritableRoots {
            workspace: Some(root),
            exceptions: write_exceptions(),
        },
    )
}

/// The launcher of a folder's language servers: writes in the folder alone
/// (no toolchain cache outside it; a folder's server has no business
/// there), the network through `proxy` when it could start.
pub fn language_server_launcher(
    runtime: tokio::runtime::Handle,
    root: &Path,
    proxy: Option<Arc<PolicyProxy>>,
) -> Launcher {
    Launcher::new(
        runtime,
        proxy,
        WritableRoots {
            workspace: Some(root.to_path_buf()),
            exceptions: Vec::new(),
        },
    )
}
