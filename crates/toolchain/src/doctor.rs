//! The toolchain's part of `cocode doctor`: how agent children are
//! confined here, whether the credential store answers, and a self-test of
//! the policy proxy over real loopback connections.

use cocode_core::ids::TaskId;
use cocode_core::process::Confinement;
use cocode_core::services::VaultError;
use cocode_core::workspace::HostPattern;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::hosts::HostPolicy;
use crate::proxy::PolicyProxy;
use crate::vault::KeyringVault;

/// What the doctor found.
#[derive(Debug)]
pub struct ToolchainReport {
    pub confinement: Confinement,
    pub vault: Result<(), VaultError>,
    /// `Ok` when the proxy tunnels to a listed host, refuses an unlisted one
    /// and asks for credentials; otherwise which check failed.
    pub proxy: Result<(), String>,
}

/// Runs every check (inside a tokio runtime).
pub async fn check() -> ToolchainReport {
    ToolchainReport {
        confinement: crate::confine::available(),
        vault: KeyringVault::status(),
        proxy: proxy_self_test().await,
    }
}

/// Sends one `CONNECT` and returns the status code of the answer.
async fn connect_status(proxy_port: u16, target: &str, auth: Option<&str>) -> Result<u16, String> {
    let mut stream = TcpStream::connect(("127.0.0.1", proxy_port))
        .await
        .map_err(|e| e.to_string())?;
    let auth = auth
        .map(|a| format!("Proxy-Authorization: Basic {a}\r\n"))
        .unwrap_or_default();
    let request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n{auth}\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut head = [0u8; 64];
    let n = stream.read(&mut head).await.map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&head[..n]);
    text.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("unreadable proxy answer: {text:?}"))
}

/// Starts a private proxy that lists one loopback listener and checks the
/// three answers it must give.
pub async fn proxy_self_test() -> Result<(), String> {
    use base64::Engine as _;
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let accept = tokio::spawn(async move {
        let _ = listener.accept().await;
    });
    let allowed = HostPattern::parse(&format!("127.0.0.1:{port}")).map_err(|e| e.to_string())?;
    let proxy = PolicyProxy::start(HostPolicy::new(vec![allowed]))
        .await
        .map_err(|e| e.to_string())?;
    let task = TaskId::new("doctor").map_err(|e| e.to_string())?;
    let env = proxy
        .register_launch(&task, &[])
        .map_err(|e| e.to_string())?;
    let userinfo = env
        .url
        .strip_prefix("http://")
        .and_then(|r| r.split_once('@'))
        .map(|(u, _)| u.to_owned())
        .ok_or("proxy URL without credentials")?;
    let auth = base64::engine::general_purpose::STANDARD.encode(userinfo);
    let target = format!("127.0.0.1:{port}");
    let checks = [
        (
            "a listed host is tunnelled",
            connect_status(proxy.port(), &target, Some(&auth)).await?,
            200,
        ),
        (
            "an unlisted host is refused",
            connect_status(proxy.port(), "127.0.0.1:9", Some(&auth)).await?,
            403,
        ),
        (
            "credentials are required",
            connect_status(proxy.port(), &target, None).await?,
            407,
        ),
    ];
    accept.abort();
    for (what, got, want) in checks {
        if got != want {
            return Err(format!("{what}: expected {want}, got {got}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_proxy_self_test_passes_against_the_real_proxy() {
        assert_eq!(proxy_self_test().await, Ok(()));
    }
}
