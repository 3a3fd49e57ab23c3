//! The policy proxy against tinyproxy (the proxy a person would otherwise
//! use), in the same run; `cargo xtask bench` reports ours/peer in time and
//! `--check` holds each to its bar in `xtask/src/bench.rs`:
//! - `proxy_connect_tunnel`: 64 MiB through a CONNECT tunnel;
//! - `proxy_connect_tunnel_ceiling`: the same against a direct loopback
//!   connection (the machine's ceiling, reported);
//! - `proxy_connect_setup`: 500 sequential tunnels, each opened, one byte
//!   echoed, closed; each run of ours is followed by one of tinyproxy, and
//!   both sides are measured that way.
//!
//! tinyproxy comes from apt (`cargo xtask test` installs it); without it the
//! tinyproxy comparisons are skipped with a notice, and `--check` then
//! fails for want of them.
#![expect(clippy::unwrap_used, reason = "bench setup")]
#![expect(
    clippy::disallowed_methods,
    reason = "the bench starts tinyproxy as its peer"
)]

use std::hint::black_box;
use std::time::Duration;

use cocode_core::ids::TaskId;
use cocode_core::workspace::HostPattern;
use cocode_toolchain::{HostPolicy, PolicyProxy};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[path = "../../../benches/support/paired.rs"]
mod paired;
use paired::Paired;

/// Bytes sent per iteration (small in debug builds so `cargo test` stays fast).
const BYTES: usize = if cfg!(debug_assertions) {
    1 << 20
} else {
    64 << 20
};

/// A sink: reads `BYTES`, then answers one byte. (Not a half-close:
/// tinyproxy closes both ways when one side half-closes.)
async fn sink() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 256 * 1024];
                let mut received = 0;
                while received < BYTES {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => received += n,
                    }
                }
                let _ = stream.write_all(b"k").await;
            });
        }
    });
    port
}

async fn send_all(mut stream: TcpStream) {
    let chunk = vec![7u8; 256 * 1024];
    let mut sent = 0;
    while sent < BYTES {
        stream.write_all(&chunk).await.unwrap();
        sent += chunk.len();
    }
    let mut ack = [0u8; 1];
    stream.read_exact(&mut ack).await.unwrap();
    black_box(ack);
}

async fn tunnel(proxy_port: u16, target: u16, auth: Option<&str>) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", proxy_port)).await.unwrap();
    let auth = auth.map_or_else(String::new, |a| format!("Proxy-Authorization: {a}\r\n"));
    let req =
        format!("CONNECT 127.0.0.1:{target} HTTP/1.1\r\nHost: 127.0.0.1:{target}\r\n{auth}\r\n");
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200") || head.starts_with(b"HTTP/1.0 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    stream
}

/// A loopback server that echoes one byte per connection.
async fn echo() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let mut byte = [0u8; 1];
                if stream.read_exact(&mut byte).await.is_ok() {
                    let _ = stream.write_all(&byte).await;
                }
            });
        }
    });
    port
}

/// One tunnel opened, one byte echoed through it, closed.
async fn one_exchange(proxy_port: u16, target: u16, auth: Option<&str>) {
    let mut stream = tunnel(proxy_port, target, auth).await;
    stream.write_all(b"x").await.unwrap();
    let mut back = [0u8; 1];
    stream.read_exact(&mut back).await.unwrap();
    black_box(back);
}

/// tinyproxy on a free loopback port, CONNECT to any port; stopped on drop.
struct Tinyproxy {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tinyproxy() -> Option<Tinyproxy> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("tinyproxy.conf");
    std::fs::write(
        &conf,
        format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 600\nMaxClients 1000\nAllow 127.0.0.1\nLogLevel Critical\n"
        ),
    )
    .unwrap();
    let child = std::process::Command::new("tinyproxy")
        .arg("-d")
        .arg("-c")
        .arg(&conf)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(child) = child else {
        eprintln!("bench: tinyproxy is not installed; its comparisons are skipped");
        return None;
    };
    let proxy = Tinyproxy {
        child,
        port,
        _dir: dir,
    };
    for _ in 0..500 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(proxy);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("tinyproxy did not start listening on {port}");
}

/// Tunnels opened one after another per iteration.
const SETUPS: usize = if cfg!(debug_assertions) { 20 } else { 500 };

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (port, echo_port, proxy, auth) = rt.block_on(async {
        let port = sink().await;
        let echo_port = echo().await;
        let policy = HostPolicy::new(vec![
            HostPattern::parse(&format!("127.0.0.1:{port}")).unwrap(),
            HostPattern::parse(&format!("127.0.0.1:{echo_port}")).unwrap(),
        ]);
        let proxy = PolicyProxy::start(policy).await.unwrap();
        let auth = proxy
            .register_launch(&TaskId::new("bench").unwrap(), &[])
            .unwrap()
            .proxy_authorization()
            .unwrap();
        (port, echo_port, proxy, auth)
    });
    let tiny = tinyproxy();
    let auth = Some(auth.as_str());
    if let Some(tiny) = &tiny {
        let mut group = c.benchmark_group("proxy_connect_tunnel");
        group
            .throughput(Throughput::Bytes(BYTES as u64))
            .sample_size(20)
            .measurement_time(Duration::from_secs(10));
        group.bench_function("ours", |b| {
            b.iter(|| {
                rt.block_on(async { send_all(tunnel(proxy.port(), port, auth).await).await });
            });
        });
        group.bench_function("peer", |b| {
            b.iter(|| rt.block_on(async { send_all(tunnel(tiny.port, port, None).await).await }));
        });
        group.finish();

        // Each run of 500 through ours is followed by 500 through tinyproxy,
        // and both sides are measured that way (see
        // `benches/support/paired.rs`): the machine's state (other work,
        // the scheduler, the loopback's queues) moves over seconds, and each
        // side meets the same state as the other.
        let mut group = c.benchmark_group("proxy_connect_setup");
        group
            .sample_size(20)
            .sampling_mode(criterion::SamplingMode::Flat)
            .measurement_time(Duration::from_secs(10));
        let setups = |port: u16, auth: Option<&str>| {
            let started = std::time::Instant::now();
            rt.block_on(async {
                for _ in 0..SETUPS {
                    one_exchange(port, echo_port, auth).await;
                }
            });
            started.elapsed()
        };
        let paired = Paired::default();
        for (side, want_ours) in [("ours", true), ("peer", false)] {
            group.bench_function(side, |b| {
                b.iter_custom(|iters| {
                    paired.alternate(
                        iters,
                        || setups(proxy.port(), auth),
                        || setups(tiny.port, None),
                        want_ours,
                    )
                });
            });
        }
        group.finish();
        paired.write("proxy_connect_setup");
    }

    let mut group = c.benchmark_group("proxy_connect_tunnel_ceiling");
    group
        .throughput(Throughput::Bytes(BYTES as u64))
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("ours", |b| {
        b.iter(|| rt.block_on(async { send_all(tunnel(proxy.port(), port, auth).await).await }));
    });
    group.bench_function("peer", |b| {
        b.iter(|| {
            rt.block_on(async {
                send_all(TcpStream::connect(("127.0.0.1", port)).await.unwrap()).await;
            });
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
