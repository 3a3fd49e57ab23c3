//! One frame of a full 200×60 terminal screen of coloured cells (the
//! terminal view's painter: runs of one style, wide characters on their
//! cells, then tessellation) against the same text as one plain galley, in
//! the same run. `cargo xtask bench` reports ours/peer.

use std::hint::black_box;
use std::sync::Arc;

use cocode::window::views::terminal::{cell_size, paint_screen};
use cocode_terminal::{GridSize, Palette, Screen, TerminalSession};
use criterion::{Criterion, criterion_group, criterion_main};
use egui::{Pos2, RawInput, Rect, Vec2};

const ROWS: u16 = 60;
const COLS: u16 = 200;

/// Every cell coloured: foreground and background cycle through the
/// 256-colour table, with bold, underline and some Hangul.
fn coloured_screen() -> Screen {
    let view = TerminalSession::viewer(
        GridSize {
            rows: ROWS,
            cols: COLS,
        },
        0,
        Arc::new(|| {}),
    );
    let mut bytes = Vec::new();
    for row in 0..ROWS {
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
        if row + 1 < ROWS {
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

fn bench(c: &mut Criterion) {
    let ctx = egui::Context::default();
    cocode_ui::install_fonts(&ctx);
    let screen = coloured_screen();
    assert_eq!(
        (screen.rows, screen.cols),
        (usize::from(ROWS), usize::from(COLS))
    );
    let text = screen.text();
    // Warm the font atlas for both sides.
    frame(&ctx, &|ui| {
        let cell = cell_size(ui);
        paint_screen(ui.painter(), Pos2::ZERO, &screen, cell, true);
    });
    let mut group = c.benchmark_group("terminal_paint_200x60");
    group.bench_function("ours", |b| {
        b.iter(|| {
            black_box(frame(&ctx, &|ui| {
                let cell = cell_size(ui);
                paint_screen(ui.painter(), Pos2::ZERO, &screen, cell, true);
            }))
        });
    });
    group.bench_function("peer", |b| {
        b.iter(|| {
            black_box(frame(&ctx, &|ui| {
                let galley = ui.painter().layout_no_wrap(
                    text.clone(),
                    egui::FontId::monospace(14.0),
                    egui::Color32::LIGHT_GRAY,
                );
                ui.painter()
                    .galley(Pos2::ZERO, galley, egui::Color32::LIGHT_GRAY);
            }))
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
