//! The session's throughput through a real PTY against the ceiling: the
//! same bytes fed to a bare `vte` processor and `alacritty_terminal` grid in
//! memory, in the same run. `cargo xtask bench` reports ours/peer in time
//! (the target is ≥ 0.8× the ceiling's throughput, a time ratio of
//! at most 1.25).
#![expect(clippy::unwrap_used, reason = "bench setup")]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use alacritty_terminal::Term;
use alacritty_terminal::event::VoidListener;
use alacritty_terminal::term::Config;
use alacritty_terminal::vte::ansi::{Processor, StdSyncHandler};
use cocode_terminal::{GridSize, SessionOptions, TerminalSession};
use cocode_toolchain::{Launcher, WritableRoots};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Bytes per iteration (small in debug builds so `cargo test` stays fast).
const BYTES: usize = if cfg!(debug_assertions) {
    1 << 20
} else {
    100 << 20
};

const SIZE: GridSize = GridSize {
    rows: 50,
    cols: 160,
};

/// What a build or a test run prints: coloured status words, Hangul, a
/// progress bar redrawn in place, cursor movement and line erasing.
fn stream() -> Vec<u8> {
    let mut out = Vec::with_capacity(BYTES + 256);
    let mut i = 0u64;
    while out.len() < BYTES {
        i += 1;
        if i.is_multiple_of(40) {
            for pct in (0..=100).step_by(20) {
                write!(
                    out,
                    "\r\x1b[2K\x1b[36m[{:<20}]\x1b[0m {pct:>3}%",
                    "=".repeat(pct / 5)
                )
                .unwrap();
            }
            out.extend_from_slice(b"\r\n");
        }
        write!(
            out,
            "\x1b[1;32m   Compiling\x1b[0m crate-{i} v0.{} (\x1b[4m/work/빌드/{i}\x1b[24m) \x1b[38;5;{}m{} ms\x1b[0m ✓\r\n",
            i % 17,
            i % 256,
            i * 7 % 1000
        )
        .unwrap();
        if i.is_multiple_of(100) {
            out.extend_from_slice(b"\x1b[A\x1b[2K\x1b[38;2;200;120;40mrewritten line\x1b[0m\r\n");
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let launcher = Launcher::new(rt.handle().clone(), None, WritableRoots::default());
    let bytes = stream();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stream.bin");
    #[expect(
        clippy::disallowed_methods,
        reason = "bench fixture outside any workspace"
    )]
    std::fs::write(&file, &bytes).unwrap();

    let mut group = c.benchmark_group("terminal_throughput_100mb");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("ours", |b| {
        b.iter(|| {
            let options = SessionOptions {
                argv: vec!["cat".into(), file.display().to_string()],
                cwd: dir.path().to_path_buf(),
                size: SIZE,
                scrollback: 10_000,
                env: BTreeMap::new(),
            };
            let session =
                TerminalSession::spawn(&launcher, rt.handle(), options, Arc::new(|| {})).unwrap();
            while !session.output_ended() {
                // A frame's pace: the waiting costs the two sides no CPU.
                std::thread::sleep(Duration::from_millis(5));
            }
            black_box(session.received());
        });
    });
    group.bench_function("peer", |b| {
        b.iter(|| {
            let mut term = Term::new(
                Config {
                    scrolling_history: 10_000,
                    ..Config::default()
                },
                &SIZE,
                VoidListener,
            );
            let mut parser = Processor::<StdSyncHandler>::new();
            for chunk in bytes.chunks(64 * 1024) {
                parser.advance(&mut term, chunk);
            }
            black_box(term.grid().cursor.point);
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
