//! A terminal tab: the grid painted from a [`Screen`] copy (a run of cells
//! of one style is one galley, wide and non-ASCII characters are placed on
//! their own cells), and the person's keys, paste, IME, mouse, selection,
//! scrollback and find bar. The view writes to its session directly (the
//! session only queues the bytes); window-level actions go out as commands.

use cocode_platform::Os;
use cocode_terminal::{
    CursorShape, GridSize, Key as TermKey, Modifiers as TermMods, MouseButton, MouseEvent,
    MouseKind, Palette, Rgb, Screen, SelectionKind, TerminalSession, encode_key, encode_mouse,
    encode_paste, encode_text,
};
use cocode_ui::{Theme, Tone};
use egui::text::LayoutJob;
use egui::{
    Color32, Event, EventFilter, FontId, ImeEvent, Key, Pos2, Rect, Sense, Stroke, TextFormat, Ui,
    Vec2,
};

use crate::window::command::{Command, TerminalCommand};
use crate::window::terminals::{
    CacheKey, CachedRow, FindBar, PaintCache, TabKind, TabState, TerminalTab, Terminals, ViewState,
};

/// The terminal's font size in points.
const FONT_SIZE: f32 = 14.0;
/// Space around the grid.
const PADDING: f32 = 4.0;

/// A cell count as a length factor (grids are far inside `f32`'s exact range).
fn f(n: usize) -> f32 {
    u16::try_from(n).map_or(f32::from(u16::MAX), f32::from)
}

/// A length in cells as a whole number of cells, within `0..=max`.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "finite, floored and clamped to 0..=max first"
)]
fn whole(v: f32, max: usize) -> usize {
    if v.is_finite() && v > 0.0 {
        v.floor().min(f(max)) as usize
    } else {
        0
    }
}

pub fn palette(theme: Theme) -> Palette {
    match theme {
        Theme::Dark => Palette::dark(),
        Theme::Light => Palette::light(),
    }
}

fn color(c: Rgb) -> Color32 {
    Color32::from_rgb(c.r, c.g, c.b)
}

/// Draws a terminal tab. `take_focus`: give the grid the keyboard focus.
/// True when the grid has the keyboard focus.
pub fn show(
    ui: &mut Ui,
    tab: &mut TerminalTab,
    theme: Theme,
    os: Os,
    take_focus: bool,
    commands: &mut Vec<Command>,
) -> bool {
    let TerminalTab {
        id,
        kind,
        state,
        view,
    } = tab;
    if let TabKind::Agent {
        command_id,
        task_id,
        command,
    } = kind
    {
        agent_header(ui, *command_id, task_id, command, state, commands);
    }
    match state {
        TabState::Starting => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Starting the shell…");
            });
            false
        }
        TabState::Failed { code, message } => {
            cocode_ui::badge(ui, "The terminal could not start", Tone::Danger);
            ui.label(message.as_str());
            ui.label(egui::RichText::new(*code).weak().monospace());
            false
        }
        TabState::Live(session) => {
            // Asked for on an earlier frame: the frame in which a text
            // field gave up its focus to Escape cannot hand it on.
            let refocus = std::mem::take(&mut view.refocus);
            if let Some(find) = &mut view.find
                && find_bar(ui, find, session)
            {
                view.find = None;
                // The keyboard goes back to the terminal on the next frame.
                view.refocus = true;
                ui.ctx().request_repaint();
            }
            if session.interactive()
                && let Some(status) = session.exit()
            {
                ui.horizontal(|ui| {
                    cocode_ui::badge(ui, &format!("The shell {}", status.phrase()), Tone::Neutral);
                    ui.label("Close the tab, or open another terminal with Ctrl+Shift+`.");
                });
            }
            grid(
                ui,
                *id,
                session,
                view,
                &palette(theme),
                os,
                take_focus || refocus,
                commands,
            )
        }
    }
}

/// The terminals' questions: open a link in the browser, end a running
/// program by closing its tab.
pub fn prompts(ctx: &egui::Context, terminals: &Terminals, commands: &mut Vec<Command>) {
    if let Some((url, from_agent)) = &terminals.link_prompt {
        let modal = egui::Modal::new(egui::Id::new("terminal-link")).show(ctx, |ui| {
            ui.heading("Open this link?");
            ui.label(if *from_agent {
                "The agent's message links here:"
            } else {
                "A program in the terminal printed this link:"
            });
            ui.label(egui::RichText::new(url.as_str()).monospace());
            ui.horizontal(|ui| {
                if ui.button("Open in Browser").clicked() || ui.input(|i| i.key_pressed(Key::Enter))
                {
                    commands.push(Command::Terminal(TerminalCommand::OpenLink));
                }
                if ui.button("Cancel").clicked() {
                    commands.push(Command::Terminal(TerminalCommand::CancelOpenLink));
                }
            });
        });
        if modal.should_close() {
            commands.push(Command::Terminal(TerminalCommand::CancelOpenLink));
        }
    }
    if let Some(id) = terminals.close_prompt {
        let modal = egui::Modal::new(egui::Id::new("terminal-close")).show(ctx, |ui| {
            ui.heading("End the running program?");
            ui.label("A program is still running in this terminal. Closing the tab ends it.");
            ui.horizontal(|ui| {
                if ui.button("End and Close").clicked() {
                    commands.push(Command::Terminal(TerminalCommand::CloseTerminal {
                        id,
                        confirmed: true,
                    }));
                }
                if ui.button("Cancel").clicked() {
                    commands.push(Command::Terminal(TerminalCommand::CancelCloseTerminal));
                }
            });
        });
        if modal.should_close() {
            commands.push(Command::Terminal(TerminalCommand::CancelCloseTerminal));
        }
    }
}

fn agent_header(
    ui: &mut Ui,
    command_id: u64,
    task_id: &str,
    command: &str,
    state: &TabState,
    commands: &mut Vec<Command>,
) {
    // The state and Stop come first, so a long command line never pushes
    // them out of a narrow tab.
    ui.horizontal(|ui| {
        let exit = match state {
            TabState::Live(s) => s.exit(),
            _ => None,
        };
        match exit {
            None => {
                if ui
                    .button("Stop command")
                    .on_hover_text("Stop this command; the agent is told it was stopped")
                    .clicked()
                {
                    commands.push(Command::Terminal(TerminalCommand::StopAgentCommand(
                        command_id,
                    )));
                }
                ui.spinner();
                ui.label("running");
            }
            Some(status) => {
                let tone = if status == cocode_core::process::ExitStatus::Code(0) {
                    Tone::Success
                } else {
                    Tone::Warning
                };
                cocode_ui::badge(ui, &format!("The command {}", status.phrase()), tone);
            }
        }
        cocode_ui::badge(ui, "Agent command · read-only", Tone::Neutral);
        ui.add(
            egui::Label::new(
                egui::RichText::new(format!("task {task_id}"))
                    .weak()
                    .small(),
            )
            .truncate(),
        );
    });
    ui.add(egui::Label::new(egui::RichText::new(command).monospace()).truncate())
        .on_hover_text(command);
}

/// The find bar; true when the person closed it.
fn find_bar(ui: &mut Ui, find: &mut FindBar, session: &TerminalSession) -> bool {
    let mut close = false;
    ui.horizontal(|ui| {
        let field = ui.add(
            egui::TextEdit::singleline(&mut find.query.text)
                .hint_text("Find in terminal")
                .desired_width(220.0),
        );
        if find.focus {
            field.request_focus();
            find.focus = false;
        }
        let mut search = None;
        if field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
            // Enter looks further up (older output), Shift+Enter further down.
            search = Some(!ui.input(|i| i.modifiers.shift));
            field.request_focus();
        }
        // A text field gives up its focus on Escape in the same frame.
        if (field.has_focus() || field.lost_focus()) && ui.input(|i| i.key_pressed(Key::Escape)) {
            close = true;
        }
        if ui
            .button("↑")
            .on_hover_text("Previous match (Enter)")
            .clicked()
        {
            search = Some(true);
        }
        if ui
            .button("↓")
            .on_hover_text("Next match (Shift+Enter)")
            .clicked()
        {
            search = Some(false);
        }
        ui.toggle_value(&mut find.query.case_sensitive, "Aa")
            .on_hover_text("Match case");
        ui.toggle_value(&mut find.query.regex, ".*")
            .on_hover_text("Regular expression");
        if let Some(backwards) = search {
            find.outcome = Some(
                session
                    .search(&find.query, backwards)
                    .map_err(|e| e.to_string()),
            );
        }
        match &find.outcome {
            Some(Ok(true)) | None => {}
            Some(Ok(false)) => {
                ui.label("No results");
            }
            Some(Err(message)) => {
                cocode_ui::badge(ui, message, Tone::Danger);
            }
        }
        if ui.button("×").on_hover_text("Close (Escape)").clicked() {
            close = true;
        }
    });
    if close {
        session.clear_selection();
    }
    close
}

/// Cell metrics of the terminal font; the height is whole pixels, so rows
/// start on pixel boundaries and a row's mesh can move by whole rows.
pub fn cell_size(ui: &Ui) -> Vec2 {
    let font = FontId::monospace(FONT_SIZE);
    let ppp = ui.ctx().pixels_per_point();
    let (width, height) = ui.fonts_mut(|f| (f.glyph_width(&font, 'M'), f.row_height(&font)));
    Vec2::new(width, ((height * ppp).round() / ppp).max(1.0 / ppp))
}

#[expect(
    clippy::too_many_arguments,
    reason = "one widget's inputs, passed once"
)]
fn grid(
    ui: &mut Ui,
    tab_id: u32,
    session: &mut TerminalSession,
    view: &mut ViewState,
    palette: &Palette,
    os: Os,
    take_focus: bool,
    commands: &mut Vec<Command>,
) -> bool {
    let cell = cell_size(ui);
    let available = ui.available_rect_before_wrap();
    let fit = |len: f32, unit: f32| -> u16 {
        u16::try_from(whole((len - 2.0 * PADDING) / unit, usize::from(u16::MAX)))
            .unwrap_or(1)
            .max(1)
    };
    let size = GridSize {
        rows: fit(available.height(), cell.y),
        cols: fit(available.width(), cell.x),
    };
    if let Err(e) = session.resize(size) {
        tracing::warn!("resizing the terminal: {e}");
    }
    let response = ui.allocate_rect(available, Sense::click_and_drag());
    let widget = response.id;
    if take_focus || response.clicked() || response.drag_started() {
        response.request_focus();
    }
    let focused = response.has_focus();
    if focused {
        ui.memory_mut(|m| {
            m.set_focus_lock_filter(
                widget,
                EventFilter {
                    tab: true,
                    horizontal_arrows: true,
                    vertical_arrows: true,
                    escape: true,
                },
            );
        });
    }
    // The grid is copied only when it changed (or the theme did); other
    // frames (a spinner elsewhere, the pointer moving) draw the last copy.
    let changed = session.take_dirty();
    let drawn = match view.drawn.take() {
        Some(drawn) if !changed && drawn.0 == *palette => drawn,
        _ => (palette.clone(), session.screen(palette)),
    };
    let screen = &drawn.1;
    let ppp = ui.ctx().pixels_per_point();
    let origin = ((available.min + Vec2::splat(PADDING)) * ppp).round() / ppp;
    let painter = ui.painter_at(available);
    painter.rect_filled(available, 0.0, color(screen.background));
    paint_screen(&painter, origin, screen, cell, focused, &mut view.paint);
    if focused {
        if let Some(c) = screen.cursor {
            let at = origin + Vec2::new(f(c.col) * cell.x, f(c.row) * cell.y);
            if !view.preedit.is_empty() {
                paint_preedit(&painter, at, &view.preedit, cell, palette);
            }
            ui.output_mut(|o| {
                o.ime = Some(egui::output::IMEOutput {
                    purpose: egui::IMEPurpose::Terminal,
                    rect: available,
                    cursor_rect: Rect::from_min_size(at, cell),
                    should_interrupt_composition: false,
                });
            });
        }
        keyboard(ui, session, view, screen, os);
    }
    mouse(
        ui, &response, session, view, screen, origin, cell, os, commands,
    );
    if let Some(text) = session.take_clipboard() {
        ui.ctx().copy_text(text);
    }
    response.widget_info(|| {
        egui::WidgetInfo::labeled(egui::WidgetType::Other, true, format!("Terminal {tab_id}"))
    });
    view.drawn = Some(drawn);
    focused
}

/// Paints the cells: backgrounds as runs, text as runs of one style (ASCII
/// only, so a run's glyphs land on its cells), other characters one by one
/// on their own cells (two for wide ones), then the cursor. Rows come from
/// `cache` when their cells are as they were.
pub fn paint_screen(
    painter: &egui::Painter,
    origin: Pos2,
    screen: &Screen,
    cell: Vec2,
    focused: bool,
    cache: &mut PaintCache,
) {
    let font = FontId::monospace(FONT_SIZE);
    let x = |col: usize| origin.x + f(col) * cell.x;
    let whole = rows_mesh(painter, origin, screen, cell, &font, cache);
    if !whole.is_empty() {
        painter.add(egui::Shape::Mesh(whole));
    }
    if let Some(c) = screen.cursor {
        let wide = screen.row(c.row).get(c.col).is_some_and(|cell| cell.wide);
        let width = if wide { 2.0 * cell.x } else { cell.x };
        let at = Pos2::new(x(c.col), origin.y + f(c.row) * cell.y);
        let rect = Rect::from_min_size(at, Vec2::new(width, cell.y));
        let cursor = color(screen.cursor_color);
        match (c.shape, focused) {
            (CursorShape::Block, true) => {
                painter.rect_filled(rect, 0.0, cursor);
                if let Some(under) = screen.row(c.row).get(c.col).filter(|u| u.c != ' ') {
                    let galley = painter.layout_job(job(
                        under.c.to_string(),
                        &font,
                        screen.background,
                        under.style,
                    ));
                    painter.galley(at, galley, color(screen.background));
                }
            }
            (CursorShape::Beam, _) => {
                painter.rect_filled(Rect::from_min_size(at, Vec2::new(2.0, cell.y)), 0.0, cursor);
            }
            (CursorShape::Underline, _) => {
                painter.rect_filled(
                    Rect::from_min_max(Pos2::new(rect.min.x, rect.max.y - 2.0), rect.max),
                    0.0,
                    cursor,
                );
            }
            _ => {
                painter.rect_stroke(
                    rect,
                    0.0,
                    Stroke::new(1.0, cursor),
                    egui::StrokeKind::Inside,
                );
            }
        }
    }
}

/// The screen's rows as one mesh: rows whose cells are as `cache` kept
/// them are reused, the others laid out and tessellated again.
fn rows_mesh(
    painter: &egui::Painter,
    origin: Pos2,
    screen: &Screen,
    cell: Vec2,
    font: &FontId,
    cache: &mut PaintCache,
) -> std::sync::Arc<egui::Mesh> {
    let x = |col: usize| origin.x + f(col) * cell.x;
    let (atlas_size, atlas_fill) =
        painter.fonts(|f| (f.font_image_size(), f.font_atlas_fill_ratio()));
    let key = CacheKey {
        origin,
        cell,
        background: screen.background,
        pixels_per_point: painter.pixels_per_point(),
        atlas_size,
        atlas_fill,
    };
    let same = cache.key.is_some_and(|k| {
        CacheKey {
            atlas_fill: key.atlas_fill,
            ..k
        } == key
            && k.atlas_fill <= key.atlas_fill
    });
    if !same {
        cache.rows.clear();
        cache.screen = None;
    }
    cache.key = Some(key);
    // The rows of the frame before, found by their cells: output that
    // scrolled moves its rows, which keep their meshes (made at the top,
    // placed when the screen's mesh is put together).
    let before = std::mem::take(&mut cache.rows);
    let mut by_hash: Option<rustc_hash::FxHashMap<u64, usize>> = None;
    let mut tessellator = None;
    // Where the last row found in `before` was: the next row is most
    // likely the one after it (the whole screen moved by some rows).
    let mut next_before = None;
    for row in 0..screen.rows {
        let cells = screen.row(row);
        let same = |n: usize| before.get(n).filter(|r| *r.cells == *cells);
        if let Some(kept) = same(row) {
            cache.rows.push(kept.clone());
            next_before = Some(row + 1);
            continue;
        }
        cache.screen = None;
        if let Some(kept) = next_before.and_then(same) {
            cache.rows.push(kept.clone());
            next_before = next_before.map(|n| n + 1);
            continue;
        }
        let hash = row_hash(cells);
        let index = by_hash.get_or_insert_with(|| {
            before
                .iter()
                .enumerate()
                .map(|(n, r)| (r.hash, n))
                .collect()
        });
        if let Some(kept) = index.get(&hash).and_then(|&n| same(n).map(|r| (n, r))) {
            cache.rows.push(kept.1.clone());
            next_before = Some(kept.0 + 1);
            continue;
        }
        next_before = None;
        let tessellator = tessellator.get_or_insert_with(|| {
            let options = painter.ctx().tessellation_options(|o| *o);
            let mut t = egui::epaint::Tessellator::new(
                painter.pixels_per_point(),
                options,
                atlas_size,
                Vec::new(),
            );
            t.set_clip_rect(Rect::EVERYTHING);
            t
        });
        let mut mesh = egui::Mesh::default();
        let mut shapes = Vec::new();
        // Made at the top; whole pixels down from there are exact.
        row_shapes(
            painter,
            cells,
            0.0,
            &x,
            cell,
            font,
            screen.background,
            &mut shapes,
        );
        for shape in shapes {
            tessellator.tessellate_shape(shape, &mut mesh);
        }
        cache.rows.push(CachedRow {
            cells: cells.into(),
            hash,
            mesh: std::sync::Arc::new(mesh),
        });
    }
    if cache.rows.len() != before.len() {
        cache.screen = None;
    }
    let ppp = painter.pixels_per_point();
    let whole = cache
        .screen
        .get_or_insert_with(|| std::sync::Arc::new(placed(&cache.rows, origin, cell, ppp)));
    std::sync::Arc::clone(whole)
}

/// The rows' meshes placed at their rows, as one mesh.
fn placed(rows: &[CachedRow], origin: Pos2, cell: Vec2, ppp: f32) -> egui::Mesh {
    let mut whole = egui::Mesh::default();
    let vertices = rows.iter().map(|r| r.mesh.vertices.len()).sum();
    let indices = rows.iter().map(|r| r.mesh.indices.len()).sum();
    whole.vertices.reserve_exact(vertices);
    whole.indices.reserve_exact(indices);
    for (row, kept) in rows.iter().enumerate() {
        let down = Vec2::new(0.0, row_y(origin, cell, row, ppp));
        let base = u32::try_from(whole.vertices.len()).unwrap_or(u32::MAX);
        whole
            .indices
            .extend(kept.mesh.indices.iter().map(|i| i + base));
        whole
            .vertices
            .extend(kept.mesh.vertices.iter().map(|v| egui::epaint::Vertex {
                pos: v.pos + down,
                ..*v
            }));
    }
    whole
}

/// A row's cells hashed, to find it again among the rows of the frame
/// before.
fn row_hash(cells: &[cocode_terminal::ScreenCell]) -> u64 {
    use std::hash::BuildHasher as _;
    rustc_hash::FxBuildHasher.hash_one(cells)
}

/// Where row `row` is drawn: whole pixels below `origin`.
fn row_y(origin: Pos2, cell: Vec2, row: usize, pixels_per_point: f32) -> f32 {
    ((origin.y + f(row) * cell.y) * pixels_per_point).round() / pixels_per_point
}

/// One row's backgrounds and text as shapes, at its place.
#[expect(clippy::too_many_arguments, reason = "one row's inputs, passed once")]
fn row_shapes(
    painter: &egui::Painter,
    cells: &[cocode_terminal::ScreenCell],
    y: f32,
    x: &dyn Fn(usize) -> f32,
    cell: Vec2,
    font: &FontId,
    background: Rgb,
    out: &mut Vec<egui::Shape>,
) {
    let mut col = 0;
    while col < cells.len() {
        let bg = cells[col].bg;
        let start = col;
        while col < cells.len() && cells[col].bg == bg {
            col += 1;
        }
        if bg != background {
            out.push(egui::Shape::rect_filled(
                Rect::from_min_max(Pos2::new(x(start), y), Pos2::new(x(col), y + cell.y)),
                0.0,
                color(bg),
            ));
        }
    }
    let mut col = 0;
    while col < cells.len() {
        let first = cells[col];
        if first.spacer || (first.c == ' ' && !first.style.underline && !first.style.strikeout) {
            col += 1;
            continue;
        }
        if first.wide || !first.c.is_ascii() {
            let width = if first.wide { 2.0 } else { 1.0 } * cell.x;
            let galley = painter.layout_job(job(first.c.to_string(), font, first.fg, first.style));
            let offset = ((width - galley.size().x) / 2.0).max(0.0);
            out.push(egui::Shape::galley(
                Pos2::new(x(col) + offset, y),
                galley,
                color(first.fg),
            ));
            col += 1;
            continue;
        }
        // A stretch of ASCII cells is one galley, a section per style:
        // every glyph of the monospace font is one cell wide.
        let start = col;
        let mut stretch = LayoutJob::default();
        let mut text = String::new();
        let mut style = (first.fg, first.style);
        while col < cells.len() {
            let c = cells[col];
            if c.spacer || c.wide || !c.c.is_ascii() {
                break;
            }
            if (c.fg, c.style) != style {
                append(&mut stretch, &text, font, style.0, style.1);
                text.clear();
                style = (c.fg, c.style);
            }
            text.push(c.c);
            col += 1;
        }
        append(&mut stretch, &text, font, style.0, style.1);
        let galley = painter.layout_job(stretch);
        out.push(egui::Shape::galley(
            Pos2::new(x(start), y),
            galley,
            color(first.fg),
        ));
    }
}

fn append(
    job: &mut LayoutJob,
    text: &str,
    font: &FontId,
    fg: Rgb,
    style: cocode_terminal::CellStyle,
) {
    if !text.is_empty() {
        job.append(text, 0.0, format(font, fg, style));
    }
}

fn job(text: String, font: &FontId, fg: Rgb, style: cocode_terminal::CellStyle) -> LayoutJob {
    LayoutJob::single_section(text, format(font, fg, style))
}

fn format(font: &FontId, fg: Rgb, style: cocode_terminal::CellStyle) -> TextFormat {
    let fg = color(fg);
    TextFormat {
        font_id: font.clone(),
        color: fg,
        italics: style.italic,
        underline: if style.underline {
            Stroke::new(1.0, fg)
        } else {
            Stroke::NONE
        },
        strikethrough: if style.strikeout {
            Stroke::new(1.0, fg)
        } else {
            Stroke::NONE
        },
        ..TextFormat::default()
    }
}

/// An IME composition in progress, drawn over the cursor and underlined.
fn paint_preedit(painter: &egui::Painter, at: Pos2, text: &str, cell: Vec2, palette: &Palette) {
    let font = FontId::monospace(FONT_SIZE);
    let galley = painter.layout_no_wrap(text.to_owned(), font, color(palette.foreground));
    let rect = Rect::from_min_size(at, Vec2::new(galley.size().x.max(cell.x), cell.y));
    painter.rect_filled(rect, 0.0, color(palette.background));
    painter.galley(at, galley, color(palette.foreground));
    painter.line_segment(
        [
            Pos2::new(rect.min.x, rect.max.y - 1.0),
            Pos2::new(rect.max.x, rect.max.y - 1.0),
        ],
        Stroke::new(1.0, color(palette.foreground)),
    );
}

fn term_mods(m: egui::Modifiers) -> TermMods {
    TermMods {
        shift: m.shift,
        alt: m.alt,
        ctrl: m.ctrl,
    }
}

/// An egui key as a terminal key; letters, digits and symbols only with
/// Ctrl or Alt (plain typing arrives as text).
fn term_key(key: Key, m: egui::Modifiers) -> Option<TermKey> {
    Some(match key {
        Key::Enter => TermKey::Enter,
        Key::Backspace => TermKey::Backspace,
        Key::Tab => TermKey::Tab,
        Key::Escape => TermKey::Escape,
        Key::ArrowUp => TermKey::Up,
        Key::ArrowDown => TermKey::Down,
        Key::ArrowLeft => TermKey::Left,
        Key::ArrowRight => TermKey::Right,
        Key::Home => TermKey::Home,
        Key::End => TermKey::End,
        Key::PageUp => TermKey::PageUp,
        Key::PageDown => TermKey::PageDown,
        Key::Insert => TermKey::Insert,
        Key::Delete => TermKey::Delete,
        Key::F1 => TermKey::F(1),
        Key::F2 => TermKey::F(2),
        Key::F3 => TermKey::F(3),
        Key::F4 => TermKey::F(4),
        Key::F5 => TermKey::F(5),
        Key::F6 => TermKey::F(6),
        Key::F7 => TermKey::F(7),
        Key::F8 => TermKey::F(8),
        Key::F9 => TermKey::F(9),
        Key::F10 => TermKey::F(10),
        Key::F11 => TermKey::F(11),
        Key::F12 => TermKey::F(12),
        _ if m.ctrl || m.alt => {
            let name = key.symbol_or_name();
            let mut chars = name.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return match key {
                    Key::Space => Some(TermKey::Char(' ')),
                    _ => None,
                };
            }
            TermKey::Char(c.to_ascii_lowercase())
        }
        _ => return None,
    })
}

fn keyboard(ui: &Ui, session: &TerminalSession, view: &mut ViewState, screen: &Screen, os: Os) {
    let (events, held) = ui.input(|i| (i.events.clone(), i.modifiers));
    let read_only = !session.interactive();
    // Alt+letter arrives as a key and as text; the key (ESC + letter) wins.
    let mut skip_text: Option<String> = None;
    for event in events {
        match event {
            Event::Key {
                key: Key::F,
                pressed: true,
                modifiers,
                ..
            } if (modifiers.command || (modifiers.ctrl && os != Os::MacOs)) && !modifiers.shift => {
                let find = view.find.get_or_insert_with(FindBar::default);
                find.focus = true;
            }
            Event::Key {
                key,
                pressed: true,
                modifiers,
                ..
            } if modifiers.shift
                && !modifiers.ctrl
                && matches!(key, Key::PageUp | Key::PageDown) =>
            {
                let page = i32::try_from(screen.rows).unwrap_or(1).max(1);
                session.scroll(if key == Key::PageUp { page } else { -page });
            }
            Event::Key {
                key,
                pressed: true,
                modifiers,
                ..
            } if !read_only => {
                if let Some(k) = term_key(key, modifiers)
                    && let Some(bytes) = encode_key(k, term_mods(modifiers), screen.modes)
                {
                    if modifiers.alt
                        && !modifiers.ctrl
                        && let TermKey::Char(c) = k
                    {
                        skip_text = Some(c.to_string());
                    }
                    session.write(bytes);
                }
            }
            Event::Text(text) if !read_only => {
                if skip_text
                    .as_deref()
                    .is_some_and(|s| s.eq_ignore_ascii_case(&text))
                {
                    skip_text = None;
                    continue;
                }
                session.write(encode_text(&text));
            }
            Event::Paste(text) if !read_only => session.write(encode_paste(&text, screen.modes)),
            Event::Copy => {
                // With a selection (or Ctrl+Shift+C, or Cmd+C) it copies;
                // Ctrl+C alone interrupts the program, as in every terminal.
                match session.selection_text() {
                    Some(text) => {
                        ui.ctx().copy_text(text);
                        if !held.shift && os != Os::MacOs {
                            session.clear_selection();
                        }
                    }
                    None if !held.shift && os != Os::MacOs && !read_only => session.write(vec![3]),
                    None => {}
                }
            }
            Event::Cut if os != Os::MacOs && !read_only => session.write(vec![0x18]),
            Event::Ime(ImeEvent::Preedit { text, .. }) => view.preedit = text,
            Event::Ime(ImeEvent::Commit(text)) => {
                view.preedit.clear();
                if !read_only {
                    session.write(encode_text(&text));
                }
            }
            _ => {}
        }
    }
}

/// Maps pointer positions to screen cells.
#[derive(Clone, Copy)]
struct Cells {
    origin: Pos2,
    cell: Vec2,
    rows: usize,
    cols: usize,
}

impl Cells {
    /// The cell under `pos`, and whether the pointer is on its right half.
    fn at(self, pos: Pos2) -> (usize, usize, bool) {
        let fx = (pos.x - self.origin.x) / self.cell.x;
        let fy = (pos.y - self.origin.y) / self.cell.y;
        let col = whole(fx, self.cols.saturating_sub(1));
        let row = whole(fy, self.rows.saturating_sub(1));
        (row, col, fx.fract() > 0.5)
    }
}

/// Whole lines of wheel movement; the rest is carried to the next frame.
#[expect(
    clippy::cast_possible_truncation,
    reason = "truncated and clamped to a screenful first"
)]
fn wheel_lines(view: &mut ViewState, delta: f32, row: f32) -> i32 {
    if delta == 0.0 || !delta.is_finite() {
        return 0;
    }
    view.scroll_carry += delta / row;
    let lines = view.scroll_carry.trunc().clamp(-500.0, 500.0);
    view.scroll_carry -= lines;
    lines as i32
}

#[expect(
    clippy::too_many_arguments,
    reason = "one widget's inputs, passed once"
)]
fn mouse(
    ui: &Ui,
    response: &egui::Response,
    session: &TerminalSession,
    view: &mut ViewState,
    screen: &Screen,
    origin: Pos2,
    cell: Vec2,
    os: Os,
    commands: &mut Vec<Command>,
) {
    let cells = Cells {
        origin,
        cell,
        rows: screen.rows,
        cols: screen.cols,
    };
    let held = ui.input(|i| i.modifiers);
    let wheel = if response.hovered() {
        ui.input(|i| i.smooth_scroll_delta.y)
    } else {
        0.0
    };
    let lines = wheel_lines(view, wheel, cell.y);
    if screen.modes.mouse_mode() && !held.shift && session.interactive() {
        report_mouse(ui, response, session, view, screen, cells, lines);
        return;
    }
    if lines != 0 {
        if screen.modes.alt_screen && screen.modes.alternate_scroll && session.interactive() {
            // A pager or an editor in the alternate screen scrolls by arrows.
            let key = if lines > 0 {
                TermKey::Up
            } else {
                TermKey::Down
            };
            for _ in 0..lines.unsigned_abs() {
                if let Some(bytes) = encode_key(key, TermMods::NONE, screen.modes) {
                    session.write(bytes);
                }
            }
        } else {
            session.scroll(lines);
        }
    }
    select_with_mouse(ui, response, session, cells, os, commands);
}

/// The program asked for the mouse: clicks, drags and the wheel go to it.
fn report_mouse(
    ui: &Ui,
    response: &egui::Response,
    session: &TerminalSession,
    view: &mut ViewState,
    screen: &Screen,
    cells: Cells,
    lines: i32,
) {
    let (events, held) = ui.input(|i| (i.events.clone(), i.modifiers));
    for event in events {
        let (button, kind, pos, mods) = match event {
            Event::PointerButton {
                pos,
                button,
                pressed,
                modifiers,
            } if response.rect.contains(pos) || view.reported_press => {
                let button = match button {
                    egui::PointerButton::Primary => MouseButton::Left,
                    egui::PointerButton::Middle => MouseButton::Middle,
                    egui::PointerButton::Secondary => MouseButton::Right,
                    _ => continue,
                };
                view.reported_press = pressed;
                let kind = if pressed {
                    MouseKind::Press
                } else {
                    MouseKind::Release
                };
                (button, kind, pos, modifiers)
            }
            Event::PointerMoved(pos) if view.reported_press => {
                (MouseButton::Left, MouseKind::Drag, pos, held)
            }
            _ => continue,
        };
        let (row, col, _) = cells.at(pos);
        let report = MouseEvent {
            button,
            kind,
            col,
            row,
            mods: term_mods(mods),
        };
        if let Some(bytes) = encode_mouse(report, screen.modes) {
            session.write(bytes);
        }
    }
    if lines != 0
        && let Some(pos) = response.hover_pos()
    {
        let (row, col, _) = cells.at(pos);
        let button = if lines > 0 {
            MouseButton::WheelUp
        } else {
            MouseButton::WheelDown
        };
        for _ in 0..lines.unsigned_abs() {
            let report = MouseEvent {
                button,
                kind: MouseKind::Press,
                col,
                row,
                mods: term_mods(held),
            };
            if let Some(bytes) = encode_mouse(report, screen.modes) {
                session.write(bytes);
            }
        }
    }
}

/// Selection with the mouse: drag, double click (word), triple click
/// (line), Shift+click (extend); Ctrl+click (Cmd on macOS) on a link asks
/// to open it.
fn select_with_mouse(
    ui: &Ui,
    response: &egui::Response,
    session: &TerminalSession,
    cells: Cells,
    os: Os,
    commands: &mut Vec<Command>,
) {
    let held = ui.input(|i| i.modifiers);
    let link_modifier = if os == Os::MacOs {
        held.mac_cmd
    } else {
        held.ctrl
    };
    if let Some((row, col, right)) = response.interact_pointer_pos().map(|p| cells.at(p)) {
        if response.triple_clicked() {
            session.select(SelectionKind::Line, row, col, right);
        } else if response.double_clicked() {
            session.select(SelectionKind::Word, row, col, right);
        } else if response.clicked() {
            if link_modifier && let Some(url) = session.link_at(row, col) {
                commands.push(Command::Terminal(TerminalCommand::AskOpenLink {
                    url,
                    from_agent: false,
                }));
            } else if held.shift && session.selection_text().is_some() {
                session.extend_selection(row, col, right);
            } else {
                session.clear_selection();
            }
        } else if response.drag_started_by(egui::PointerButton::Primary) {
            if let Some(origin) = ui.input(|i| i.pointer.press_origin()) {
                let (row, col, right) = cells.at(origin);
                session.select(SelectionKind::Simple, row, col, right);
            }
            session.extend_selection(row, col, right);
        } else if response.dragged_by(egui::PointerButton::Primary) {
            session.extend_selection(row, col, right);
        }
    }
    if link_modifier
        && let Some(pos) = response.hover_pos()
        && {
            let (row, col, _) = cells.at(pos);
            session.link_at(row, col).is_some()
        }
    {
        ui.ctx().set_cursor_icon(egui::CursorIcon::PointingHand);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cocode_terminal::{GridSize, Palette, TerminalSession};

    use super::*;

    fn screen(bytes: &[u8]) -> Screen {
        let view = TerminalSession::viewer(GridSize { rows: 4, cols: 20 }, 0, Arc::new(|| {}));
        view.feed(bytes);
        view.screen(&Palette::dark())
    }

    fn paint(ctx: &egui::Context, screen: &Screen, origin: Pos2, cache: &mut PaintCache) {
        let mut output = ctx.run_ui(egui::RawInput::default(), |ui| {
            let cell = cell_size(ui);
            paint_screen(ui.painter(), origin, screen, cell, false, cache);
        });
        // No renderer takes the font atlas here.
        output.textures_delta.clear();
    }

    /// A frame whose rows are unchanged paints the mesh already made; a
    /// changed row is made again and the others are kept; a grid moved
    /// elsewhere starts afresh.
    #[test]
    fn unchanged_rows_are_kept_and_a_moved_grid_starts_afresh() {
        let ctx = egui::Context::default();
        let mut cache = PaintCache::default();
        let first = screen(b"\x1b[31mred\x1b[0m\r\nplain\r\n\xed\x95\x9c\xea\xb8\x80");
        paint(&ctx, &first, Pos2::ZERO, &mut cache);
        let made = Arc::clone(cache.screen.as_ref().unwrap());
        assert!(!made.is_empty());
        paint(&ctx, &first, Pos2::ZERO, &mut cache);
        assert!(Arc::ptr_eq(&made, cache.screen.as_ref().unwrap()));
        let kept_row = cache.rows[0].mesh.clone();
        let second = screen(b"\x1b[31mred\x1b[0m\r\nother\r\n\xed\x95\x9c\xea\xb8\x80");
        paint(&ctx, &second, Pos2::ZERO, &mut cache);
        assert!(!Arc::ptr_eq(&made, cache.screen.as_ref().unwrap()));
        assert_eq!(cache.rows[0].mesh, kept_row);
        assert_eq!(&*cache.rows[1].cells, second.row(1));
        // Moved: every vertex moves with it.
        let places = |cache: &PaintCache| -> Vec<Pos2> {
            cache
                .screen
                .as_ref()
                .unwrap()
                .vertices
                .iter()
                .map(|v| v.pos)
                .collect()
        };
        let before = places(&cache);
        paint(&ctx, &second, Pos2::new(10.0, 0.0), &mut cache);
        let after = places(&cache);
        let moved: Vec<Pos2> = before.iter().map(|p| *p + Vec2::new(10.0, 0.0)).collect();
        assert_eq!(after, moved);
    }

    /// Output that scrolled moves the rows it kept, and what is painted is
    /// what painting the new screen afresh gives, vertex for vertex.
    #[test]
    fn scrolled_rows_are_moved_and_paint_as_made_afresh() {
        let ctx = egui::Context::default();
        let lines = |first: usize| -> Vec<u8> {
            (first..first + 4)
                .map(|n| format!("\x1b[3{}mline {n} 한\x1b[0m", n % 7 + 1))
                .collect::<Vec<_>>()
                .join("\r\n")
                .into_bytes()
        };
        let (one, two) = (screen(&lines(0)), screen(&lines(1)));
        let mut cache = PaintCache::default();
        paint(&ctx, &one, Pos2::new(3.0, 7.5), &mut cache);
        let kept: Vec<Arc<[cocode_terminal::ScreenCell]>> =
            cache.rows.iter().map(|r| Arc::clone(&r.cells)).collect();
        paint(&ctx, &two, Pos2::new(3.0, 7.5), &mut cache);
        // Rows 1–3 of the first screen are rows 0–2 now, their cells kept.
        for row in 0..3 {
            assert!(Arc::ptr_eq(&kept[row + 1], &cache.rows[row].cells), "{row}");
        }
        let mut fresh = PaintCache::default();
        paint(&ctx, &two, Pos2::new(3.0, 7.5), &mut fresh);
        assert_eq!(
            cache.screen.as_ref().unwrap().vertices,
            fresh.screen.as_ref().unwrap().vertices
        );
        assert_eq!(
            cache.screen.as_ref().unwrap().indices,
            fresh.screen.as_ref().unwrap().indices
        );
    }
}
