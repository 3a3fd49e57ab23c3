//! Throughput of a CONNECT tunnel through the policy proxy against a direct
//! loopback connection, in the same run. `cargo xtask bench` reports
//! ours/peer in time; the bar is ≥ 0.9 × the direct throughput, i.e. a time
//! ratio of at most 1.11.
#![expect(clippy::unwrap_used, reason = "bench setup")]

use std::hint::black_box;
use std::time::Duration;

use base64::Engine as _;
use cocode_core::ids::TaskId;
use cocode_core::workspace::HostPattern;
use cocode_toolchain::{HostPolicy, PolicyProxy};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Bytes sent per iteration (small in debug builds so `cargo test` stays fast).
const BYTES: usize = if cfg!(debug_assertions) {
    1 << 20
} else {
    64 << 20
};

/// A sink: reads until the client half-closes, then answers one byte.
async fn sink() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 256 * 1024];
                while stream.read(&mut buf).await.unwrap_or(0) > 0 {}
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
    stream.shutdown().await.unwrap();
    let mut ack = [0u8; 1];
    stream.read_exact(&mut ack).await.unwrap();
    black_box(ack);
}

async fn tunnel(proxy_port: u16, target: u16, auth: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", proxy_port)).await.unwrap();
    let req = format!(
        "CONNECT 127.0.0.1:{target} HTTP/1.1\r\nHost: 127.0.0.1:{target}\r\nProxy-Authorization: Basic {auth}\r\n\r\n"
    );
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    stream
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (port, proxy, auth) = rt.block_on(async {
        let port = sink().await;
        let policy = HostPolicy::new(vec![
            HostPattern::parse(&format!("127.0.0.1:{port}")).unwrap(),
        ]);
        let proxy = PolicyProxy::start(policy).await.unwrap();
        let env = proxy
            .register_launch(&TaskId::new("bench").unwrap(), &[])
            .unwrap();
        let userinfo = env
            .url
            .strip_prefix("http://")
            .unwrap()
            .split_once('@')
            .unwrap()
            .0
            .to_owned();
        (
            port,
            proxy,
            base64::engine::general_purpose::STANDARD.encode(userinfo),
        )
    });
    let mut group = c.benchmark_group("proxy_connect_tunnel");
    group
        .throughput(Throughput::Bytes(BYTES as u64))
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("ours", |b| {
        b.iter(|| {
            rt.block_on(async {
                send_all(tunnel(proxy.port(), port, &auth).await).await;
            });
        });
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
