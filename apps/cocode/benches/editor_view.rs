//! The editor view and the editor's file opening, each against a peer in
//! the same run:
//! - `editor_frame_100k`: one frame (layout and tessellation) of the editor
//!   view showing the middle of a 100,000-line Rust file, coloured, against
//!   the same view on a 100-line file, the two measured in alternation (see
//!   `benches/support/paired.rs`).
//! - `editor_open_200mb`: opening a 200 MB log as the window does (read
//!   through the workspace's safe read path, checked as UTF-8, made a rope
//!   and a document) against `ropey::Rope::from_reader` of the same file.
//!
//! The bars are in `xtask/src/bench.rs`.
#![expect(clippy::expect_used, reason = "bench setup")]
#![expect(
    clippy::disallowed_methods,
    reason = "the bench writes the log it opens"
)]

use std::hint::black_box;
use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cocode::window::command::Command;
use cocode::window::editors::{Editors, TabBody};
use cocode::window::io_worker::{Opened, open_file};
use cocode_editor::{Document, OpenDocuments};
use cocode_platform::Os;
use cocode_ui::Theme;
use criterion::{Criterion, criterion_group, criterion_main};
use egui::{Pos2, RawInput, Rect, Vec2};

#[path = "../../../benches/support/paired.rs"]
mod paired;
use paired::Paired;

fn rust_source(lines: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    let mut i = 0;
    while n < lines {
        let chunk = format!(
            "/// 항목 {i}: adds things up.\n\
             pub fn item_{i}(x: u64, name: &str) -> u64 {{\n    \
             let label = format!(\"{{name}}-{i}\");\n    \
             if label.len() > {i} {{ x + {i} }} else {{ x * 2 }}\n\
             }}\n\
             struct S{i} {{ a: Vec<u8>, b: Option<String> }}\n\n"
        );
        n += chunk.lines().count();
        out.push_str(&chunk);
        i += 1;
    }
    out
}

/// Editors with one tab showing `text` (coloured, parse settled), its
/// cursor on `line`.
fn editors_with(text: &str, line: usize) -> (Editors, u32) {
    let mut editors = Editors::new(Arc::new(OpenDocuments::new()));
    let root = std::path::Path::new("/w");
    let (id, _) = editors.open(root, &root.join("big.rs"));
    let rel = serde_json::from_value(serde_json::Value::from("big.rs")).expect("a workspace path");
    editors.on_opened(
        &root.join("big.rs"),
        Ok(Opened::Text {
            rel,
            rope: ropey::Rope::from_str(text),
        }),
    );
    assert!(editors.get(id).is_some_and(|t| t.body == TabBody::Text));
    editors.select_range(id, line, 0, 0);
    (editors, id)
}

fn frame(ctx: &egui::Context, editors: &mut Editors, id: u32) -> usize {
    let input = RawInput {
        screen_rect: Some(Rect::from_min_size(Pos2::ZERO, Vec2::new(1400.0, 900.0))),
        ..RawInput::default()
    };
    let mut commands: Vec<Command> = Vec::new();
    let keys = cocode::window::keymap::Keymap::defaults(Os::Linux);
    let mut output = ctx.run_ui(input, |ui| {
        cocode::window::views::editor::show(ui, editors, id, Theme::Dark, &keys, &mut commands);
    });
    output.textures_delta.clear();
    ctx.tessellate(output.shapes, output.pixels_per_point).len()
}

/// Frames until the tab's syntax tree is a parse of its text.
fn settle(ctx: &egui::Context, editors: &mut Editors, id: u32) {
    for _ in 0..10_000 {
        frame(ctx, editors, id);
        if editors
            .get(id)
            .and_then(|t| t.syntax.as_ref())
            .is_some_and(cocode_editor::Syntax::settled)
        {
            // Once more to scroll to the cursor and lay the rows out.
            frame(ctx, editors, id);
            frame(ctx, editors, id);
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("the parse did not settle");
}

fn frames(c: &mut Criterion) {
    // Each side keeps a context of its own, so neither side's galley cache
    // is emptied by the other's frames.
    let context = || {
        let ctx = egui::Context::default();
        cocode_ui::install_fonts(&ctx);
        ctx
    };
    let (big_ctx, small_ctx) = (context(), context());
    let (mut big, big_id) = editors_with(&rust_source(100_000), 50_000);
    let (mut small, small_id) = editors_with(&rust_source(100), 50);
    settle(&big_ctx, &mut big, big_id);
    settle(&small_ctx, &mut small, small_id);
    let timed = |ctx: &egui::Context, editors: &mut Editors, id: u32| {
        let started = Instant::now();
        black_box(frame(ctx, editors, id));
        started.elapsed()
    };
    let paired = Paired::default();
    let mut group = c.benchmark_group("editor_frame_100k");
    for (side, want_ours) in [("ours", true), ("peer", false)] {
        group.bench_function(side, |b| {
            b.iter_custom(|iters| {
                paired.alternate(
                    iters,
                    || timed(&big_ctx, &mut big, big_id),
                    || timed(&small_ctx, &mut small, small_id),
                    want_ours,
                )
            });
        });
    }
    group.finish();
    paired.write("editor_frame_100k");
}

fn open_200mb(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temp folder");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let path = root.join("big.log");
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("created"));
        let mut n = 0usize;
        let mut written = 0usize;
        while written < 200 * 1000 * 1000 {
            let line = format!(
                "2026-12-02T01:{:02}:{:02}Z INFO request {n} served in {} ms — 요청 처리 완료\n",
                n / 60 % 60,
                n % 60,
                n % 997
            );
            file.write_all(line.as_bytes()).expect("written");
            written += line.len();
            n += 1;
        }
    }
    let mut group = c.benchmark_group("editor_open_200mb");
    group.sample_size(10);
    group.bench_function("ours", |b| {
        b.iter(|| {
            let Ok(Opened::Text { rope, .. }) = open_file(&root, &path) else {
                panic!("the log opens as text");
            };
            black_box(Document::from_rope(rope))
        });
    });
    group.bench_function("peer", |b| {
        b.iter(|| {
            let file = std::fs::File::open(&path).expect("opens");
            black_box(ropey::Rope::from_reader(std::io::BufReader::new(file)).expect("reads"))
        });
    });
    group.finish();
}

criterion_group!(benches, frames, open_200mb);
criterion_main!(benches);
