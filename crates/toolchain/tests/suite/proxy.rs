//! The policy proxy against real curl: allowed, refused, redirected,
//! kept-alive, Host-mismatched, unauthenticated and tunnelled requests.

use std::sync::Arc;

use cocode_core::process::ExitStatus;
use cocode_core::workspace::HostPattern;
use cocode_toolchain::PolicyProxy;
use pretty_assertions::assert_eq;

use super::common::*;

/// Runs curl as an agent child; returns "<codes>|<body>" as curl prints it.
async fn curl(
    proxy: &Arc<PolicyProxy>,
    args: &[&str],
    overrides: &[(&str, &str)],
) -> (ExitStatus, String) {
    let dir = tempfile::tempdir().unwrap();
    let l = launcher(Some(Arc::clone(proxy)), Some(dir.path()));
    let mut command = vec!["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} "];
    command.extend_from_slice(args);
    let mut s = spec(&command, agent(), dir.path());
    for (k, v) in overrides {
        s.env_overrides.insert((*k).to_owned(), (*v).to_owned());
    }
    run(&l, s).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_reaches_only_listed_hosts_through_the_proxy() {
    if !require("curl") {
        return;
    }
    let port = http_server().await;
    let other = http_server().await;
    let proxy = Arc::new(
        PolicyProxy::start(policy(&[format!("127.0.0.1:{port}")]))
            .await
            .unwrap(),
    );
    let url = format!("http://127.0.0.1:{port}/");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![url.clone()], "200 "),
        (vec!["http://blocked.example/".into()], "403 "),
        // A loopback port that is not listed.
        (vec![format!("http://127.0.0.1:{other}/")], "403 "),
        // The redirect is returned; the next hop is judged again.
        (
            vec!["-L".into(), format!("http://127.0.0.1:{port}/redirect")],
            "403 ",
        ),
        // Two URLs in one curl run: the second cannot ride the first's connection.
        (
            vec![
                url.clone(),
                "-o".into(),
                "/dev/null".into(),
                "http://blocked.example/".into(),
            ],
            "200 403 ",
        ),
        (
            vec!["-H".into(), "Host: evil.example".into(), url.clone()],
            "403 ",
        ),
        // CONNECT tunnel to an allowed and to a refused host.
        (vec!["-p".into(), url.clone()], "200 "),
    ];
    let mut got = Vec::new();
    for (args, _) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        got.push(curl(&proxy, &args, &[]).await.1);
    }
    let want: Vec<String> = cases.iter().map(|(_, w)| (*w).to_owned()).collect();
    assert_eq!(got, want);
    // A refused tunnel: curl fails (56) and reports the proxy's CONNECT answer.
    let (status, out) = curl(
        &proxy,
        &["-p", "-w", "%{http_connect}", "http://blocked.example/"],
        &[],
    )
    .await;
    assert_eq!((status, out.as_str()), (ExitStatus::Code(56), "403"));
    assert_eq!(
        proxy.blocked_hosts(&task()),
        vec![
            "127.0.0.1".to_owned(),
            "blocked.example".to_owned(),
            "evil.example".to_owned()
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launchs_own_hosts_are_reachable_by_that_launch_alone() {
    if !require("curl") {
        return;
    }
    let port = http_server().await;
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let url = format!("http://127.0.0.1:{port}/");
    let dir = tempfile::tempdir().unwrap();
    let l = launcher(Some(Arc::clone(&proxy)), Some(dir.path()));
    // A forwarded request and a tunnel (`-p` applies to the whole run).
    let plain = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", &url];
    let tunnel = [
        "curl",
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_connect}",
        "-p",
        &url,
    ];
    let mut results = Vec::new();
    for command in [&plain[..], &tunnel[..]] {
        let mut own = spec(command, agent(), dir.path());
        own.extra_hosts = vec![HostPattern::parse(&format!("127.0.0.1:{port}")).unwrap()];
        results.push(run(&l, own).await.1);
        results.push(run(&l, spec(command, agent(), dir.path())).await.1);
    }
    // Own launch, another launch: forwarded, then tunnelled.
    assert_eq!(results, vec!["200", "403", "200", "403"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_launch_credentials_get_407() {
    if !require("curl") {
        return;
    }
    let port = http_server().await;
    let proxy = Arc::new(
        PolicyProxy::start(policy(&[format!("127.0.0.1:{port}")]))
            .await
            .unwrap(),
    );
    let bare = format!("http://127.0.0.1:{}", proxy.port());
    let forged = format!("http://lfake:0000@127.0.0.1:{}", proxy.port());
    let url = format!("http://127.0.0.1:{port}/");
    // The child names the proxy itself (its environment's proxy variables
    // cannot be overridden).
    for proxy_url in [bare, forged] {
        let (_, out) = curl(&proxy, &["--proxy", &proxy_url, &url], &[]).await;
        assert_eq!(out, "407 ");
    }
}

/// A loopback server answering each connection's bytes with the same bytes.
async fn echo_server() -> u16 {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                while let Ok(n @ 1..) = stream.read(&mut buf).await {
                    if stream.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// The `Proxy-Authorization` value of a launch registered with `proxy`.
fn launch_auth(proxy: &PolicyProxy) -> String {
    proxy
        .register_launch(&task(), &[])
        .unwrap()
        .proxy_authorization()
        .unwrap()
}

/// Opens a CONNECT tunnel; the status code and, on 200, the stream.
async fn tunnel(proxy_port: u16, target: u16, auth: &str) -> (u16, tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", proxy_port))
        .await
        .unwrap();
    let request = format!(
        "CONNECT 127.0.0.1:{target} HTTP/1.1\r\nHost: 127.0.0.1:{target}\r\nProxy-Authorization: {auth}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.unwrap() == 0 {
            break;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, stream)
}

async fn echo_once(stream: &mut tokio::net::TcpStream, byte: u8) -> u8 {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    stream.write_all(&[byte]).await.unwrap();
    let mut back = [0u8; 1];
    stream.read_exact(&mut back).await.unwrap();
    back[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_tunnels_all_complete() {
    let target = echo_server().await;
    let proxy = Arc::new(
        PolicyProxy::start(policy(&[format!("127.0.0.1:{target}")]))
            .await
            .unwrap(),
    );
    let auth = launch_auth(&proxy);
    // Every tunnel is open at the same time before any of them closes.
    let all_open = Arc::new(tokio::sync::Barrier::new(200));
    let mut tunnels = tokio::task::JoinSet::new();
    for i in 0..200u16 {
        let (auth, all_open, port) = (auth.clone(), Arc::clone(&all_open), proxy.port());
        tunnels.spawn(async move {
            let (code, mut stream) = tunnel(port, target, &auth).await;
            assert_eq!(code, 200, "tunnel {i}");
            all_open.wait().await;
            echo_once(&mut stream, u8::try_from(i % 251).unwrap()).await
        });
    }
    let mut answers = Vec::new();
    while let Some(answer) = tunnels.join_next().await {
        answers.push(answer.unwrap());
    }
    answers.sort_unstable();
    let mut expected: Vec<u8> = (0..200u16)
        .map(|i| u8::try_from(i % 251).unwrap())
        .collect();
    expected.sort_unstable();
    assert_eq!(answers, expected);
    const { assert!(cocode_toolchain::MAX_TUNNELS >= 200) };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tunnels_beyond_the_cap_are_refused_until_one_closes() {
    let target = echo_server().await;
    let proxy = PolicyProxy::start_with_tunnels(
        policy(&[format!("127.0.0.1:{target}")]),
        2,
        cocode_toolchain::TUNNEL_IDLE,
    )
    .await
    .unwrap();
    let auth = launch_auth(&proxy);
    let (first, mut a) = tunnel(proxy.port(), target, &auth).await;
    let (second, mut b) = tunnel(proxy.port(), target, &auth).await;
    assert_eq!((first, second), (200, 200));
    assert_eq!(echo_once(&mut a, 7).await, 7);
    assert_eq!(echo_once(&mut b, 8).await, 8);
    let (third, _) = tunnel(proxy.port(), target, &auth).await;
    assert_eq!(third, 503);
    // The open ones still work, and closing one frees its place.
    assert_eq!(echo_once(&mut b, 9).await, 9);
    drop(a);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (code, mut c) = tunnel(proxy.port(), target, &auth).await;
        if code == 200 {
            assert_eq!(echo_once(&mut c, 10).await, 10);
            break;
        }
        assert_eq!(code, 503);
        assert!(
            std::time::Instant::now() < deadline,
            "the closed tunnel's place never came back"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
