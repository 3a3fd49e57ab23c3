//! Landlock for agent children: writes outside the allowed set and
//! connections to anything but the proxy fail; writes inside and traffic
//! through the proxy work.

use std::sync::Arc;

use cocode_core::process::{Confinement, ExitStatus};
use cocode_toolchain::PolicyProxy;
use pretty_assertions::assert_eq;

use super::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confined_agent_child_writes_only_where_allowed_and_connects_only_to_the_proxy() {
    if !require_peer(
        "Landlock with network rules",
        matches!(
            cocode_toolchain::confine::available(),
            Confinement::Landlock
        ),
    ) {
        return;
    }
    if !require("curl") {
        return;
    }
    // Outside the temp folder, which agent children may write.
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    let outside = base.path().join("outside");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(ws.join(".cocode/history")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let port = http_server().await;
    let unlisted = http_server().await;
    let proxy = Arc::new(
        PolicyProxy::start(policy(&[format!("127.0.0.1:{port}")]))
            .await
            .unwrap(),
    );
    let l = launcher(Some(proxy), Some(&ws));
    let script = format!(
        "echo ok > src/inside.txt && echo 1; {{ echo bad > {out}/x.txt; }} 2>/dev/null && echo 2; {{ echo bad > .cocode/history/x; }} 2>/dev/null && echo 3; echo t > /tmp/cocode-landlock-$$ && rm /tmp/cocode-landlock-$$ && echo 4; true",
        out = outside.display()
    );
    let (status, out) = run(&l, spec(&["sh", "-c", &script], agent(), &ws)).await;
    assert_eq!((status, out.as_str()), (ExitStatus::Code(0), "1\n4\n"));
    assert_eq!(
        std::fs::read_to_string(ws.join("src/inside.txt")).unwrap(),
        "ok\n"
    );
    assert!(!outside.join("x.txt").exists());
    assert!(!ws.join(".cocode/history/x").exists());
    // Direct connections are refused by the kernel; through the proxy works.
    let direct = format!("http://127.0.0.1:{unlisted}/");
    let (status, _) = run(
        &l,
        spec(&["curl", "-s", "--noproxy", "*", &direct], agent(), &ws),
    )
    .await;
    assert_eq!(status, ExitStatus::Code(7), "curl: couldn't connect");
    let through = format!("http://127.0.0.1:{port}/");
    let (status, out) = run(&l, spec(&["curl", "-s", &through], agent(), &ws)).await;
    assert_eq!((status, out.as_str()), (ExitStatus::Code(0), "hello"));
}
