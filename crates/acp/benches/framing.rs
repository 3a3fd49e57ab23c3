//! ACP line framing: 10,000 small JSON-RPC messages as an agent's output
//! arrives (pipe reads of 4 KiB), framed by `LineFramer` (each byte looked
//! at once, lines past 64 MiB refused) against the framing it replaced,
//! which searched the whole held buffer for a line end on every chunk and
//! drained each line out of its front. Reported by `cargo xtask bench` as
//! ours/peer.

use std::hint::black_box;

use cocode_acp::framing::{Framed, LineFramer};
use criterion::{Criterion, criterion_group, criterion_main};

/// The agent's output: 10,000 session updates of about 200 bytes.
fn output() -> Vec<u8> {
    let mut out = Vec::new();
    for n in 0..10_000 {
        out.extend_from_slice(
            format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"s1\",\"update\":{{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{{\"type\":\"text\",\"text\":\"piece {n} of the answer\"}}}}}}}}\n"
            )
            .as_bytes(),
        );
    }
    out
}

/// The framing before `LineFramer`, as it was.
fn earlier(chunks: &[&[u8]]) -> usize {
    let mut pending = Vec::new();
    let mut lines = 0;
    for chunk in chunks {
        pending.extend_from_slice(chunk);
        while let Some(pos) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=pos).collect();
            let text = String::from_utf8_lossy(&line).trim_end().to_owned();
            if !text.is_empty() {
                lines += black_box(text).len().min(1);
            }
        }
    }
    lines
}

fn ours(chunks: &[&[u8]]) -> usize {
    let mut framer = LineFramer::default();
    let mut arrived = Vec::new();
    let mut lines = 0;
    for chunk in chunks {
        framer.push(chunk, &mut arrived);
        for item in arrived.drain(..) {
            if let Framed::Line(text) = item {
                lines += black_box(text).len().min(1);
            }
        }
    }
    lines
}

fn bench(c: &mut Criterion) {
    let bytes = output();
    let chunks: Vec<&[u8]> = bytes.chunks(4096).collect();
    assert_eq!(ours(&chunks), 10_000);
    assert_eq!(earlier(&chunks), 10_000);
    let mut group = c.benchmark_group("acp_framing_10000_messages");
    group.bench_function("ours", |b| b.iter(|| ours(black_box(&chunks))));
    group.bench_function("peer", |b| b.iter(|| earlier(black_box(&chunks))));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
