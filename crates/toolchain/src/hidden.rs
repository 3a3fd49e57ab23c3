//! The person's own sockets that agent commands do not see: where they
//! live, from the environment cocode started with and the usual places.
//! Pure: the launcher keeps the ones that exist, the PID-namespace keeper
//! covers them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A place of the person's own sockets that agent commands do not see.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hidden {
    /// A folder, covered by an empty read-only one.
    Folder(PathBuf),
    /// A socket file, covered by `/dev/null`.
    File(PathBuf),
}

impl Hidden {
    /// The place, and whether it is a folder.
    pub fn parts(&self) -> (&Path, bool) {
        match self {
            Self::Folder(p) => (p, true),
            Self::File(p) => (p, false),
        }
    }
}

/// Where the person's own sockets live, which a command could otherwise
/// connect to with the person's rights: the D-Bus session bus (and through
/// it the keyring), the ssh and gpg agents, the X11 and Wayland displays,
/// the system bus, Docker's and other container engines' sockets — from
/// the environment cocode started with (`env`) and the usual places for
/// user `uid`. Pure: the launcher keeps the ones that exist.
pub fn hidden_sockets(env: &BTreeMap<String, String>, uid: u32) -> Vec<Hidden> {
    let mut out = vec![
        Hidden::Folder(PathBuf::from(format!("/run/user/{uid}"))),
        Hidden::Folder(PathBuf::from("/tmp/.X11-unix")),
        Hidden::Folder(PathBuf::from("/tmp/.ICE-unix")),
        Hidden::Folder(PathBuf::from("/run/dbus")),
        Hidden::Folder(PathBuf::from("/var/run/dbus")),
        Hidden::Folder(PathBuf::from("/run/containerd")),
        Hidden::Folder(PathBuf::from("/run/podman")),
        Hidden::File(PathBuf::from("/run/docker.sock")),
        Hidden::File(PathBuf::from("/var/run/docker.sock")),
    ];
    let var = |name: &str| env.get(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("XDG_RUNTIME_DIR") {
        out.push(Hidden::Folder(PathBuf::from(dir)));
    }
    if let Some(home) = var("HOME") {
        // Docker Desktop's socket folder.
        out.push(Hidden::Folder(Path::new(home).join(".docker/run")));
    }
    if let Some(sock) = var("SSH_AUTH_SOCK") {
        out.push(Hidden::File(PathBuf::from(sock)));
    }
    for name in ["DBUS_SESSION_BUS_ADDRESS", "DOCKER_HOST"] {
        for part in var(name)
            .map(|v| v.split([';', ',']).collect::<Vec<_>>())
            .unwrap_or_default()
        {
            let path = part
                .split_once("unix:path=")
                .map(|(_, p)| p)
                .or_else(|| part.strip_prefix("unix://"));
            if let Some(path) = path.filter(|p| p.starts_with('/')) {
                out.push(Hidden::File(PathBuf::from(path)));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}
