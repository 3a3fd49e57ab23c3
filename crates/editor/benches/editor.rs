//! The editor model on a generated 100,000-line Rust file, each against a
//! bare tree-sitter full parse of the same text in the same run:
//! - `editor_open_highlight_100k`: a document opened from the text and its
//!   first screen coloured (the parse runs on the worker thread, as the
//!   window does it) against the bare parse (bar: ≤ 1.5×).
//! - `editor_keystroke_100k`: what one typed character mid-file costs the
//!   UI thread — the edit, the tree edited to match, the reparse started on
//!   the worker thread, and the captures of the visible rows — against the
//!   bare full parse (bar: ≤ 2 %).
//! - `editor_reparse_100k`: from the keystroke until the reparse has landed
//!   (the colours of the new text are right), against the bare full parse
//!   (reported: tree-sitter's incremental reparse grows with the number of
//!   siblings around the edit, and this file is flat — 28,000 top-level
//!   items).
#![expect(clippy::expect_used, reason = "bench setup")]

use std::hint::black_box;

use cocode_editor::{Document, EditKind, Language, Motion, Syntax, SyntaxState};
use criterion::{Criterion, criterion_group, criterion_main};
use ropey::Rope;

const LINES: usize = 100_000;

/// A Rust file of `lines` lines: functions, structs, comments (some in
/// Korean), strings and numbers.
fn rust_source(lines: usize) -> String {
    let mut out = String::with_capacity(lines * 32);
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

fn bare_parse(text: &str) -> tree_sitter::Tree {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_rust::LANGUAGE.into())
        .expect("the Rust grammar loads");
    parser.parse(text, None).expect("the text parses")
}

/// The bytes of the first `rows` lines from `line`.
fn screen(doc: &Document, line: usize, rows: usize) -> std::ops::Range<usize> {
    let rope = doc.rope();
    rope.line_to_byte(line)..rope.line_to_byte((line + rows).min(rope.len_lines()))
}

fn open_highlight(c: &mut Criterion) {
    let text = rust_source(LINES);
    let mut group = c.benchmark_group("editor_open_highlight_100k");
    group.sample_size(10);
    group.bench_function("ours", |b| {
        b.iter(|| {
            let doc = Document::from_rope(Rope::from_str(&text));
            let mut syntax = Syntax::new(Language::Rust, &doc);
            while syntax.state() == &SyntaxState::Parsing {
                std::thread::yield_now();
                syntax.sync(&doc);
            }
            black_box(syntax.highlights(screen(&doc, 0, 60)))
        });
    });
    group.bench_function("peer", |b| b.iter(|| black_box(bare_parse(&text))));
    group.finish();
}

fn keystroke(c: &mut Criterion) {
    let text = rust_source(LINES);
    let mut doc = Document::from_rope(Rope::from_str(&text));
    let mut syntax = Syntax::new(Language::Rust, &doc);
    settle(&mut syntax, &doc);
    doc.go_to_line(LINES / 2 + 2);
    doc.move_cursors(Motion::LineEnd, false);
    let mut group = c.benchmark_group("editor_keystroke_100k");
    group.bench_function("ours", |b| {
        b.iter(|| {
            doc.insert_text("x", EditKind::Typing);
            syntax.sync(&doc);
            black_box(syntax.highlights(screen(&doc, LINES / 2 - 30, 60)))
        });
    });
    group.sample_size(10);
    group.bench_function("peer", |b| b.iter(|| black_box(bare_parse(&text))));
    group.finish();
    settle(&mut syntax, &doc);
    let mut group = c.benchmark_group("editor_reparse_100k");
    group.sample_size(10);
    group.bench_function("ours", |b| {
        b.iter(|| {
            doc.insert_text("y", EditKind::Typing);
            syntax.sync(&doc);
            settle(&mut syntax, &doc);
        });
    });
    group.bench_function("peer", |b| b.iter(|| black_box(bare_parse(&text))));
    group.finish();
}

/// Until the tree is a parse of the document's text.
fn settle(syntax: &mut Syntax, doc: &Document) {
    while !syntax.settled() {
        std::thread::yield_now();
        syntax.sync(doc);
    }
}

criterion_group!(benches, open_highlight, keystroke);
criterion_main!(benches);
