//! cocode-toolchain (layer L1): the only spawner of processes — the
//! `ProcessLauncher`, the environment whitelist, sandbox confinement
//! (Landlock, Seatbelt) and the policy proxy.

pub mod allowed;
#[cfg(target_os = "linux")]
mod broker;
pub mod confine;
pub mod doctor;
pub mod env;
pub mod findings;
pub mod hidden;
pub mod hosts;
pub mod launcher;
pub mod parsers;
pub mod policy;
pub mod proxy;
#[cfg(target_os = "linux")]
pub mod reaper;
mod roots;
pub mod scratch;
mod tunnel;
pub mod vault;
pub mod verify;

pub use cocode_core::output::OutputBuffer;
pub use env::{ProxyEnv, TargetOs, child_env};
pub use hosts::{HostPolicy, HostRefused};
pub use launcher::{Launcher, WritableRoots, process_alive};
pub use policy::LaunchPolicy;
pub use proxy::{BlockedHostLog, PolicyProxy, ProxyError};
pub use tunnel::{MAX_TUNNELS, TUNNEL_IDLE};
