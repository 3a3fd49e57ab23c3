//! One frame of a full 200×60 terminal screen of coloured cells (the
//! terminal view's painter: runs of one style, wide characters on their
//! cells, each row's mesh kept while its cells stay, then tessellation)
//! against each row's text as one plain galley, in the same run: once with
//! every row as in the frame before, once with every row changed (output
//! scrolling a line a frame). `cargo xtask bench` reports ours/peer.

use std::hint::black_box;
use std::sync::Arc;

use std::cell::RefCell;

use cocode::window::terminals::PaintCache;
use cocode::window::views::terminal::{cell_size, paint_screen};
use cocode_terminal::{GridSize, Palette, Screen, TerminalSession};
use criterion::{Criterion, criterion_group, criterion_main};
use egui::{Pos2, RawInput, Rect, Vec2};

const ROWS: u16 = 60;
const COLS: u16 = 200;

/// Every cell coloured: foreground and background cycle through the
/// 256-colour table, with bold, underline and some Hangul.
fn coloured_screen(first: u16) -> Screen {
    let view = TerminalSession::viewer(
        GridSize {
            rows: ROWS,
            cols: COLS,
        },
        0,
        Arc::new(|| {}),
    );
    let mut bytes = Vec::new();
    for row in first..first + ROWS {
        for col in 0..COLS / 8 {
            let fg = (usize::from(row) * 7 + usize::from(col) * 13) % 256;
            let bg = (fg + 128) % 256;
            let attr = if col % 3 == 0 {
                "1;"
            } else if col % 3 == 1 {
                "4;"
            } else {
                ""
            };
            bytes.extend_from_slice(format!("\x1b[{attr}38;5;{fg};48;5;{bg}m").as_bytes());
            bytes.extend_from_slice(if col % 5 == 0 {
                "한글ab12".as_bytes()
            } else {
                b"cell_txt"
            });
        }
        bytes.extend_from_slice(b"\x1b[0m");
        if row + 1 < first + ROWS {
            bytes.push(b'\n');
        }
    }
    view.feed(&bytes);
    view.screen(&Palette::dark())
}

fn frame(ctx: &egui::Context, paint: &dyn Fn(&egui::Ui)) -> usize {
    let input = RawInput {
        screen_rect: Some(Rect::from_min_size(Pos2::ZERO, Vec2::new(2000.0, 1300.0))),
        ..RawInput::default()
    };
    let mut output = ctx.run_ui(input, |ui| paint(ui));
    // No renderer takes the font atlas here.
    output.textures_delta.clear();
    ctx.tessellate(output.shapes, output.pixels_per_point).len()
}

/// Each row of `screen` as one plain galley, at its place.
fn plain_rows(ui: &egui::Ui, screen: &Screen) {
    let cell = cell_size(ui);
    let mut y = 0.0;
    for row in 0..screen.rows {
        let galley = ui.painter().layout_no_wrap(
            screen.line_text(row),
            egui::FontId::monospace(14.0),
            egui::Color32::LIGHT_GRAY,
        );
        ui.painter()
            .galley(Pos2::new(0.0, y), galley, egui::Color32::LIGHT_GRAY);
        y += cell.y;
    }
}

fn bench(c: &mut Criterion) {
    let ctx = egui::Context::default();
    cocode_ui::install_fonts(&ctx);
    let screen = coloured_screen(0);
    // The same screen one line further on: every row changed.
    let scrolled = coloured_screen(1);
    assert_eq!(
        (screen.rows, screen.cols),
        (usize::from(ROWS), usize::from(COLS))
    );
    let cache = RefCell::new(PaintCache::default());
    let ours = |ui: &egui::Ui, screen: &Screen| {
        let cell = cell_size(ui);
        paint_screen(
            ui.painter(),
            Pos2::ZERO,
            screen,
            cell,
            true,
            &mut cache.borrow_mut(),
        );
    };
    // Warm the font atlas for both sides.
    for s in [&screen, &scrolled] {
        frame(&ctx, &|ui| ours(ui, s));
        frame(&ctx, &|ui| plain_rows(ui, s));
    }
    // A frame of a screen whose rows were all painted as they are in the
    // frame before (the terminal idle, or drawn again for something else).
    let mut group = c.benchmark_group("terminal_paint_200x60");
    group.bench_function("ours", |b| {
        b.iter(|| black_box(frame(&ctx, &|ui| ours(ui, &screen))));
    });
    group.bench_function("peer", |b| {
        b.iter(|| black_box(frame(&ctx, &|ui| plain_rows(ui, &screen))));
    });
    group.finish();
    // Every row changed since the frame before (output scrolling by a line
    // a frame).
    let mut group = c.benchmark_group("terminal_paint_200x60_scrolling");
    let mut flip = false;
    group.bench_function("ours", |b| {
        b.iter(|| {
            flip = !flip;
            let s = if flip { &scrolled } else { &screen };
            black_box(frame(&ctx, &|ui| ours(ui, s)))
        });
    });
    let mut flip = false;
    group.bench_function("peer", |b| {
        b.iter(|| {
            flip = !flip;
            let s = if flip { &scrolled } else { &screen };
            black_box(frame(&ctx, &|ui| plain_rows(ui, s)))
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
