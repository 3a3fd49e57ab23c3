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
