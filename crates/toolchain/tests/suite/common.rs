//! Shared fixtures: a launcher, a command runner, a loopback HTTP server.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cocode_core::ids::TaskId;
use cocode_core::process::{ExitStatus, LaunchIo, LaunchSpec, ProcessLauncher, SandboxProfile};
use cocode_core::workspace::HostPattern;
use cocode_toolchain::{HostPolicy, Launcher, OutputBuffer, PolicyProxy, WritableRoots};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub fn task() -> TaskId {
    TaskId::new("task-1").unwrap()
}

pub fn policy(entries: &[String]) -> HostPolicy {
    HostPolicy::new(
        entries
            .iter()
            .map(|e| HostPattern::parse(e).unwrap())
            .collect(),
    )
}

pub fn launcher(proxy: Option<Arc<PolicyProxy>>, workspace: Option<&Path>) -> Launcher {
    let inherited: BTreeMap<String, String> = [
        ("PATH", std::env::var("PATH").unwrap_or_default().as_str()),
        ("HOME", "/home/someone"),
        ("LANG", "C.UTF-8"),
        ("ANTHROPIC_API_KEY", "sk-ant-must-not-leak"),
        ("OPENAI_API_KEY", "sk-must-not-leak"),
        ("GITHUB_TOKEN", "ghp_must_not_leak"),
        ("MY_PASSWORD", "hunter2"),
        ("RANDOM_VARIABLE", "not whitelisted"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    Launcher::new(
        tokio::runtime::Handle::current(),
        proxy,
        WritableRoots {
            workspace: workspace.map(Path::to_path_buf),
            exceptions: Vec::new(),
        },
    )
    .with_inherited_env(inherited)
}

pub fn spec(argv: &[&str], profile: SandboxProfile, cwd: &Path) -> LaunchSpec {
    LaunchSpec {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        cwd: cwd.to_path_buf(),
        env_overrides: BTreeMap::new(),
        profile,
        io: LaunchIo::Piped,
        timeout: Some(Duration::from_secs(30)),
        output_byte_limit: None,
        extra_writable: Vec::new(),
        secret_env: BTreeMap::new(),
        extra_hosts: Vec::new(),
    }
}

/// Runs to the end; returns the status and everything printed.
pub async fn run(launcher: &Launcher, spec: LaunchSpec) -> (ExitStatus, String) {
    let limit = spec.output_byte_limit;
    let mut handle = launcher.launch(spec).unwrap();
    let mut out = OutputBuffer::new(limit);
    while let Some(chunk) = handle.read_output().await {
        out.push(&chunk);
    }
    let status = handle.wait().await.unwrap();
    (status, String::from_utf8_lossy(out.bytes()).into_owned())
}

pub fn agent() -> SandboxProfile {
    SandboxProfile::Agent { task_id: task() }
}

/// A loopback HTTP/1.1 server: `/` answers "hello", `/redirect` sends the
/// client to a host the proxy refuses. Keeps connections alive unless asked
/// to close, so a client could try to reuse one.
pub async fn http_server() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    let mut chunk = [0u8; 4096];
                    let Ok(n) = stream.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                        buf.drain(..end + 4);
                        let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                        let close = head.to_ascii_lowercase().contains("connection: close");
                        let response = if path == "/redirect" {
                            "HTTP/1.1 302 Found\r\nLocation: http://blocked.example/\r\nContent-Length: 0\r\n\r\n".to_owned()
                        } else {
                            format!(
                                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n{}\r\nhello",
                                if close { "Connection: close\r\n" } else { "" }
                            )
                        };
                        if stream.write_all(response.as_bytes()).await.is_err() || close {
                            return;
                        }
                    }
                }
            });
        }
    });
    port
}

pub fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

#[path = "../../../../tests/support/require.rs"]
mod peers;

pub use peers::require as require_peer;

/// Tests that need a real program fail under CI when it is missing and
/// skip (saying so, and recorded for the summary) elsewhere.
pub fn require(program: &str) -> bool {
    peers::require_program(program)
}
