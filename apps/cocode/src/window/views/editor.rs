//! The editor view: a custom text widget over a rope document — only the
//! visible rows are laid out, with syntax colours for the visible byte range,
//! a gutter, every cursor and selection, IME composition shown inline, the
//! clipboard, mouse selection, and the shortcuts of VS Code. Also the find
//! bar, the go-to-line field and the disk-conflict banner of a tab.

use cocode_editor::commands::{line_end, line_of, line_start, matching_bracket};
use cocode_editor::{Document, Highlight};
use cocode_ui::{Theme, Tone};
use egui::text::{CCursor, LayoutJob};
use egui::{Color32, EventFilter, FontId, Pos2, Rect, Sense, Stroke, TextFormat, Ui, Vec2};

use crate::window::command::Command;
use crate::window::editors::{EditorTab, Editors, TabBody};
use crate::window::keymap::Keymap;
use crate::window::views::editor_bars::{banners, compare, find_bar, go_to_line_bar};
use crate::window::views::editor_input::{Geometry, hit, keyboard, mouse};
use crate::window::views::{editor_git, editor_lsp, editor_review};

pub use crate::window::views::editor_bars::parse_line_col;
pub use crate::window::views::editor_prompts::{close_prompt, quit_prompt, status, welcome};

/// Longest part of a line laid out (a minified file's one line).
const MAX_LAID_OUT_CHARS: usize = 20_000;
/// The gap between the gutter and the text.
const GUTTER_GAP: f32 = 12.0;

/// The colour of each highlight kind.
pub(crate) fn highlight_color(kind: Highlight, theme: Theme) -> Color32 {
    // (dark theme, light theme), after One Dark and One Light.
    let (on_dark, on_light) = match kind {
        Highlight::Keyword => ((0xC6, 0x78, 0xDD), (0xA6, 0x26, 0xA4)),
        Highlight::Function => ((0x61, 0xAF, 0xEF), (0x40, 0x78, 0xF2)),
        Highlight::Type | Highlight::Module => ((0xE5, 0xC0, 0x7B), (0xC1, 0x84, 0x01)),
        Highlight::String => ((0x98, 0xC3, 0x79), (0x50, 0xA1, 0x4F)),
        Highlight::Number | Highlight::Constant => ((0xD1, 0x9A, 0x66), (0x98, 0x68, 0x01)),
        Highlight::Comment => ((0x7F, 0x84, 0x8E), (0xA0, 0xA1, 0xA7)),
        Highlight::Property | Highlight::Variable | Highlight::Tag => {
            ((0xE0, 0x6C, 0x75), (0xE4, 0x56, 0x49))
        }
        Highlight::Attribute | Highlight::Label | Highlight::Escape => {
            ((0x56, 0xB6, 0xC2), (0x01, 0x84, 0xBC))
        }
        Highlight::Operator | Highlight::Punctuation => ((0xAB, 0xB2, 0xBF), (0x38, 0x3A, 0x42)),
    };
    let (red, green, blue) = if theme == Theme::Dark {
        on_dark
    } else {
        on_light
    };
    Color32::from_rgb(red, green, blue)
}

/// Draws one editor tab.
pub fn show(
    ui: &mut Ui,
    editors: &mut Editors,
    id: u32,
    theme: Theme,
    keys: &Keymap,
    commands: &mut Vec<Command>,
) {
    let docs = std::sync::Arc::clone(&editors.docs);
    let dirty = editors.is_dirty(id);
    let Some(tab) = editors.get_mut(id) else {
        ui.label("This editor has closed.");
        return;
    };
    match &tab.body {
        TabBody::Loading => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("Opening {}…", tab.path.display()));
            });
            return;
        }
        TabBody::Unsupported(reason) => {
            ui.label(tab.path.display().to_string());
            cocode_ui::badge(ui, reason, Tone::Neutral);
            return;
        }
        TabBody::Failed(message) => {
            ui.label(tab.path.display().to_string());
            cocode_ui::badge(ui, "Cannot open file", Tone::Danger);
            ui.label(message);
            return;
        }
        TabBody::Text => {}
    }
    let Some(rel) = tab.rel.clone() else { return };
    banners(ui, tab, dirty, commands);
    if let Some(diff) = tab.conflict.as_ref().and_then(|c| c.comparison.as_deref()) {
        compare(ui, tab.id, diff);
    }
    if tab.find.is_some() {
        docs.with_document(&rel, |doc| find_bar(ui, tab, doc));
    }
    if tab.go_to_line.is_some() {
        docs.with_document(&rel, |doc| go_to_line_bar(ui, tab, doc));
    }
    // A language server's semantic tokens for this version, over the
    // tree-sitter colours.
    let tokens = docs.tokens(&rel);
    docs.with_document(&rel, |doc| {
        if let Some(syntax) = &mut tab.syntax {
            syntax.sync(doc);
            if !syntax.settled() {
                // The worker thread has no way to wake the window: look again soon.
                ui.ctx()
                    .request_repaint_after(std::time::Duration::from_millis(100));
            }
        }
        text_area(
            ui,
            tab,
            doc,
            (theme, tokens.as_deref().unwrap_or(&[])),
            keys,
            commands,
        );
    });
}

/// A line's text as shown (cut at [`MAX_LAID_OUT_CHARS`]), and its job.
fn line_job(
    doc: &Document,
    tab: &EditorTab,
    line: usize,
    (font, theme): (&FontId, Theme),
    (spans, semantic): (&[(std::ops::Range<usize>, Highlight)], &[SemanticSpan]),
    preedit_at: Option<usize>,
) -> LayoutJob {
    let rope = doc.rope();
    let start = line_start(rope, line);
    let end = line_end(rope, line).min(start + MAX_LAID_OUT_CHARS);
    let text: String = rope.slice(start..end).to_string();
    let line_byte = rope.char_to_byte(start);
    let base = TextFormat::simple(
        font.clone(),
        if theme == Theme::Dark {
            Color32::from_rgb(0xD4, 0xD4, 0xD4)
        } else {
            Color32::from_rgb(0x24, 0x29, 0x2E)
        },
    );
    let mut job = LayoutJob::default();
    let mut at = 0usize;
    let push = |job: &mut LayoutJob, from: usize, to: usize, format: TextFormat| {
        if to > from {
            job.append(&text[from..to], 0.0, format);
        }
    };
    // Byte offsets within `text` where the preedit goes.
    let preedit_byte =
        preedit_at.map(|col| text.char_indices().nth(col).map_or(text.len(), |(b, _)| b));
    let mut cuts: Vec<(usize, usize, Option<Highlight>)> = Vec::new();
    for (r, kind) in spans {
        let (a, b) = (
            r.start.saturating_sub(line_byte).min(text.len()),
            r.end.saturating_sub(line_byte).min(text.len()),
        );
        if b > a && r.end > line_byte {
            cuts.push((a, b, Some(*kind)));
        }
    }
    let mut pieces: Vec<(usize, usize, Option<Highlight>)> = Vec::new();
    for (a, b, kind) in cuts {
        if a > at {
            pieces.push((at, a, None));
        }
        let a = a.max(at);
        if b > a {
            pieces.push((a, b, kind));
            at = b;
        }
    }
    if at < text.len() {
        pieces.push((at, text.len(), None));
    }
    if !semantic.is_empty() {
        pieces = overlay(&text, pieces, semantic);
    }
    let format_of = |kind: Option<Highlight>| {
        let mut f = base.clone();
        if let Some(kind) = kind {
            f.color = highlight_color(kind, theme);
        }
        f
    };
    let mut preedit_done = preedit_byte.is_none();
    for (a, b, kind) in pieces {
        if let Some(p) = preedit_byte
            && !preedit_done
            && p >= a
            && p < b
        {
            push(&mut job, a, p, format_of(kind));
            append_preedit(&mut job, &tab.preedit, &base);
            push(&mut job, p, b, format_of(kind));
            preedit_done = true;
        } else {
            push(&mut job, a, b, format_of(kind));
        }
    }
    if !preedit_done {
        append_preedit(&mut job, &tab.preedit, &base);
    }
    job
}

/// A language server's token on a line: char columns and its colour.
type SemanticSpan = (usize, usize, Highlight);

/// Lays a language server's tokens (char columns of the line) over the
/// tree-sitter pieces (byte ranges of the line's text).
fn overlay(
    text: &str,
    pieces: Vec<(usize, usize, Option<Highlight>)>,
    semantic: &[SemanticSpan],
) -> Vec<(usize, usize, Option<Highlight>)> {
    let mut kinds: Vec<Option<Highlight>> = vec![None; text.len()];
    for (a, b, kind) in pieces {
        kinds[a..b].fill(kind);
    }
    let byte_of = |col: usize| text.char_indices().nth(col).map_or(text.len(), |(b, _)| b);
    for &(from, to, kind) in semantic {
        let (a, b) = (byte_of(from), byte_of(to));
        if a < b {
            kinds[a..b].fill(Some(kind));
        }
    }
    let mut out: Vec<(usize, usize, Option<Highlight>)> = Vec::new();
    let mut start = 0;
    for (i, _) in text
        .char_indices()
        .skip(1)
        .chain(std::iter::once((text.len(), ' ')))
    {
        if i == text.len() || kinds[i] != kinds[start] {
            out.push((start, i, kinds[start]));
            start = i;
        }
    }
    out
}

fn append_preedit(job: &mut LayoutJob, preedit: &str, base: &TextFormat) {
    let mut f = base.clone();
    f.underline = Stroke::new(1.0, base.color);
    job.append(preedit, 0.0, f);
}

#[expect(
    clippy::too_many_lines,
    reason = "one pass over the visible rows: gutter, text, selections, cursors"
)]
fn text_area(
    ui: &mut Ui,
    tab: &mut EditorTab,
    doc: &mut Document,
    (theme, tokens): (Theme, &[cocode_core::services::SemanticToken]),
    keys: &Keymap,
    commands: &mut Vec<Command>,
) {
    let font = cocode_ui::editor_font(ui.style());
    let row = ui.fonts_mut(|f| f.row_height(&font));
    let char_w = ui.fonts_mut(|f| f.glyph_width(&font, '0'));
    let lines = doc.rope().len_lines();
    let digits = lines.to_string().len().max(3);
    #[expect(clippy::cast_precision_loss, reason = "a handful of digits")]
    let gutter = digits as f32 * char_w + GUTTER_GAP + 10.0;
    let widget_id = ui.id().with(("editor", tab.id));
    #[expect(clippy::cast_precision_loss, reason = "rows of pixels")]
    let content_height = lines as f32 * row + row;
    let mut reveal_rect: Option<Rect> = None;
    let bg = ui.visuals().extreme_bg_color;
    let mut scroll = egui::ScrollArea::both()
        .id_salt(("editor-scroll", tab.id))
        .auto_shrink([false, false]);
    if let Some(line) = tab.pending_first_line.take() {
        #[expect(clippy::cast_precision_loss, reason = "rows of pixels")]
        let top = line as f32 * row;
        scroll = scroll.vertical_scroll_offset(top);
    }
    let output = scroll.show_viewport(ui, |ui, viewport| {
        let size = Vec2::new(
            (tab.content_width + gutter + 40.0).max(ui.available_width()),
            content_height.max(ui.available_height()),
        );
        let (rect, response) = ui.allocate_exact_size(size, Sense::click_and_drag());
        let response = ui
            .interact(rect, widget_id, Sense::click_and_drag())
            .union(response);
        let geo = Geometry {
            origin: Pos2::new(rect.min.x + gutter, rect.min.y),
            row,
        };
        let painter = ui.painter_at(ui.clip_rect());
        painter.rect_filled(ui.clip_rect(), 0.0, bg);
        let first = geo.line_at_depth(f64::from(viewport.min.y), lines);
        let last = geo.line_at_depth(f64::from(viewport.max.y), lines);
        tab.first_line = first;
        // Syntax colours for the visible bytes only.
        let rope = doc.rope();
        let bytes = rope.line_to_byte(first)..rope.line_to_byte((last + 1).min(lines));
        let spans = tab
            .syntax
            .as_ref()
            .map(|s| s.highlights(bytes))
            .unwrap_or_default();
        let focused = response.has_focus();
        let selection = doc.selection().clone();
        let primary = selection.primary();
        let primary_line = line_of(rope, primary.head);
        let bracket = matching_bracket(rope, primary.head, 20_000);
        // Only the matches on the visible lines are painted (and copied).
        let (shown_from, shown_to) = (
            doc.rope().line_to_char(first),
            doc.rope().line_to_char((last + 1).min(lines)),
        );
        let find_matches: Vec<(usize, usize)> = tab
            .find
            .as_mut()
            .map(|f| {
                f.matches_in(doc)
                    .iter()
                    .copied()
                    .filter(|&(a, b)| b >= shown_from && a <= shown_to)
                    .collect()
            })
            .unwrap_or_default();
        let rope = doc.rope();
        let current_line_bg = if theme == Theme::Dark {
            Color32::from_white_alpha(10)
        } else {
            Color32::from_black_alpha(10)
        };
        let selection_bg = ui.visuals().selection.bg_fill.gamma_multiply(0.6);
        let match_bg = Color32::from_rgba_unmultiplied(0xE5, 0xC0, 0x7B, 60);
        let caret = ui.visuals().text_cursor.stroke.color;
        if tab.changed_lines.0 != doc.version() {
            tab.changed_lines.1.clear();
        }
        // The marks against HEAD, computed again once per version.
        if let crate::window::editors::GitBase::Known(Some(base)) = &tab.git_base
            && tab
                .git_marks
                .as_ref()
                .is_none_or(|(v, _)| *v != doc.version())
        {
            tab.git_marks = Some((
                doc.version(),
                cocode_git::line_marks(base, &rope.to_string()),
            ));
        }
        let mut galleys = Vec::new();
        let mut caret_at: Option<Pos2> = None;
        for line in first..=last.min(lines.saturating_sub(1)) {
            let top = geo.line_top(line);
            let start = line_start(rope, line);
            let end = line_end(rope, line);
            let preedit_at = (!tab.preedit.is_empty() && line == primary_line && focused)
                .then(|| primary.head - start);
            // The tokens are in line order: this line's are found by
            // bisection, not by a scan per line.
            let from = tokens.partition_point(|t| (t.line as usize) < line);
            let to = tokens.partition_point(|t| (t.line as usize) <= line);
            let semantic: Vec<SemanticSpan> = tokens[from..to.max(from)]
                .iter()
                .filter_map(|t| {
                    let kind = editor_lsp::semantic_highlight(&t.token_type)?;
                    let from = t.start_char as usize;
                    Some((from, from + t.length as usize, kind))
                })
                .collect();
            let job = line_job(
                doc,
                tab,
                line,
                (&font, theme),
                (&spans, &semantic),
                preedit_at,
            );
            let galley = ui.fonts_mut(|f| f.layout_job(job));
            tab.content_width = tab.content_width.max(galley.size().x);
            let x_of = |pos: usize| -> f32 {
                let col = pos.saturating_sub(start).min(MAX_LAID_OUT_CHARS);
                let shifted = if preedit_at.is_some_and(|p| col > p) {
                    col + tab.preedit.chars().count()
                } else {
                    col
                };
                galley.pos_from_cursor(CCursor::new(shifted)).min.x
            };
            if line == primary_line && selection.len() == 1 && primary.is_empty() {
                painter.rect_filled(
                    Rect::from_min_size(Pos2::new(rect.min.x, top), Vec2::new(rect.width(), row)),
                    0.0,
                    current_line_bg,
                );
            }
            for &(a, b) in &find_matches {
                if b > start && a <= end && a >= start {
                    let x0 = x_of(a);
                    let x1 = x_of(b.min(end));
                    painter.rect_filled(
                        Rect::from_min_max(
                            Pos2::new(geo.origin.x + x0, top),
                            Pos2::new(geo.origin.x + x1, top + row),
                        ),
                        2.0,
                        match_bg,
                    );
                }
            }
            for r in selection.ranges() {
                if r.is_empty() || r.to() < start || r.from() > end + 1 {
                    continue;
                }
                let x0 = x_of(r.from().max(start));
                let mut x1 = x_of(r.to().min(end));
                if r.to() > end {
                    // The line break is selected too.
                    x1 += char_w * 0.6;
                }
                painter.rect_filled(
                    Rect::from_min_max(
                        Pos2::new(geo.origin.x + x0, top),
                        Pos2::new(geo.origin.x + x1, top + row),
                    ),
                    0.0,
                    selection_bg,
                );
            }
            if let Some((a, b)) = bracket {
                for p in [a, b] {
                    if p >= start && p < end {
                        let x0 = x_of(p);
                        let x1 = x_of(p + 1);
                        painter.rect_stroke(
                            Rect::from_min_max(
                                Pos2::new(geo.origin.x + x0, top),
                                Pos2::new(geo.origin.x + x1, top + row),
                            ),
                            1.0,
                            Stroke::new(1.0, caret.gamma_multiply(0.5)),
                            egui::StrokeKind::Inside,
                        );
                    }
                }
            }
            painter.galley(
                Pos2::new(geo.origin.x, top),
                galley.clone(),
                Color32::PLACEHOLDER,
            );
            for (a, b, severity) in editor_lsp::on_line(tab, doc, start, end) {
                let (x0, x1) = if a >= end {
                    // At the line's end: under one character's width.
                    let x = x_of(end);
                    (x, x + char_w)
                } else {
                    (x_of(a), x_of(b.min(end)))
                };
                editor_lsp::squiggle(
                    &painter,
                    geo.origin.x + x0,
                    geo.origin.x + x1,
                    top + row - 1.0,
                    editor_lsp::severity_color(severity, theme),
                );
            }
            for r in selection.ranges() {
                if r.head < start || r.head > end {
                    continue;
                }
                let mut x = x_of(r.head);
                if *r == primary && preedit_at.is_some() {
                    x = galley
                        .pos_from_cursor(CCursor::new(r.head - start + tab.preedit.chars().count()))
                        .min
                        .x;
                }
                let at = Pos2::new(geo.origin.x + x, top);
                if *r == primary {
                    caret_at = Some(at);
                }
                // Without the focus (the find bar has it) the cursors
                // stay visible, dimmed.
                let stroke = if focused {
                    Stroke::new(2.0, caret)
                } else {
                    Stroke::new(1.0, caret.gamma_multiply(0.5))
                };
                painter.line_segment([at, at + Vec2::new(0.0, row)], stroke);
                if *r == primary {
                    let cursor_rect = Rect::from_min_size(at, Vec2::new(2.0, row));
                    if tab.reveal {
                        reveal_rect = Some(cursor_rect.expand2(Vec2::new(char_w * 4.0, row)));
                    }
                    if focused {
                        ui.output_mut(|o| {
                            o.ime = Some(egui::output::IMEOutput {
                                purpose: egui::IMEPurpose::Normal,
                                rect,
                                cursor_rect,
                                should_interrupt_composition: false,
                            });
                        });
                    }
                }
            }
            galleys.push((line, galley));
        }
        // The reveal target may be off screen: aim at its line.
        if tab.reveal && reveal_rect.is_none() {
            let top = geo.line_top(primary_line);
            reveal_rect = Some(Rect::from_min_size(
                Pos2::new(geo.origin.x, top - row),
                Vec2::new(char_w, row * 3.0),
            ));
        }
        // The gutter stays put while the text scrolls sideways.
        let clip = ui.clip_rect();
        let gutter_rect = Rect::from_min_max(
            clip.min,
            Pos2::new(clip.min.x + gutter - GUTTER_GAP / 2.0, clip.max.y),
        );
        painter.rect_filled(gutter_rect, 0.0, bg);
        let number_color = ui.visuals().weak_text_color();
        let changed_color = Tone::Success.color(theme);
        for line in first..=last.min(lines.saturating_sub(1)) {
            let top = geo.line_top(line);
            let color = if line == primary_line {
                ui.visuals().strong_text_color()
            } else {
                number_color
            };
            painter.text(
                Pos2::new(gutter_rect.max.x - GUTTER_GAP / 2.0, top),
                egui::Align2::RIGHT_TOP,
                (line + 1).to_string(),
                font.clone(),
                color,
            );
            if let Some(severity) = editor_lsp::gutter_severity(tab, line) {
                editor_lsp::gutter_dot(
                    &painter,
                    gutter_rect,
                    top,
                    row,
                    editor_lsp::severity_color(severity, theme),
                );
            }
            git_mark(&painter, gutter_rect, tab, line, top, row, theme);
            if tab.changed_lines.1.contains(&line) {
                painter.rect_filled(
                    Rect::from_min_size(
                        Pos2::new(gutter_rect.min.x + 5.0, top),
                        Vec2::new(3.0, row),
                    ),
                    0.0,
                    changed_color,
                );
            }
        }
        editor_review::marks(ui, tab, doc.rope(), (geo, rect), (first, last), commands);
        if let Some(target) = reveal_rect {
            ui.scroll_to_rect(target, None);
            tab.reveal = false;
        }
        // A click on a gutter mark shows its change.
        if response.clicked()
            && let Some(pos) = response.interact_pointer_pos()
            && pos.x < gutter_rect.min.x + editor_git::MARK_ZONE
        {
            let line = geo.line_at(pos.y, lines);
            tab.git_peek = editor_git::mark_on(tab, line).map(|mark| editor_git::GitPeek {
                mark,
                at: Pos2::new(
                    gutter_rect.min.x + editor_git::MARK_ZONE,
                    geo.line_top(mark.end.max(mark.start + 1)),
                ),
            });
        }
        mouse(ui, &response, tab, doc, geo, &galleys, keys.os);
        let over = response
            .hover_pos()
            .filter(|p| p.x >= geo.origin.x)
            .map(|p| hit(doc, geo, &galleys, p));
        editor_lsp::pointer(ui, &response, tab, over, commands);
        (response, geo, caret_at)
    });
    let (response, geo, caret) = output.inner;
    editor_lsp::hover_card(ui, tab, doc, theme);
    editor_git::peek(ui, tab, doc, commands);
    editor_lsp::completion_list(ui, tab, doc, caret, geo.row);
    // Focus handed over this frame: the keys of this frame were meant for
    // whatever had it (Enter in the go-to-line field).
    let just_focused = tab.focus;
    if tab.focus {
        response.request_focus();
        tab.focus = false;
    }
    if response.has_focus() && !just_focused {
        ui.memory_mut(|m| {
            m.set_focus_lock_filter(
                widget_id,
                EventFilter {
                    tab: true,
                    horizontal_arrows: true,
                    vertical_arrows: true,
                    escape: true,
                },
            );
        });
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a page of rows"
        )]
        let page = ((output.inner_rect.height() / geo.row).floor().max(1.0)) as usize;
        keyboard(ui, tab, doc, page, keys, commands);
    }
    response.widget_info(|| {
        egui::WidgetInfo::labeled(
            egui::WidgetType::TextEdit,
            true,
            format!("Editor {}", tab.name()),
        )
    });
}

/// The gutter's mark against HEAD on `line`: a bar for added (green) and
/// modified (blue) lines, a red wedge where lines were deleted above it.
fn git_mark(
    painter: &egui::Painter,
    gutter: Rect,
    tab: &EditorTab,
    line: usize,
    top: f32,
    row: f32,
    theme: Theme,
) {
    let Some((_, marks)) = &tab.git_marks else {
        return;
    };
    let at = marks.partition_point(|m| m.end.max(m.start + 1) <= line);
    let Some(mark) = marks.get(at).filter(|m| m.start <= line) else {
        return;
    };
    let x = gutter.min.x + 1.0;
    match mark.kind {
        cocode_git::MarkKind::Added | cocode_git::MarkKind::Modified => {
            let color = if mark.kind == cocode_git::MarkKind::Added {
                Tone::Success.color(theme)
            } else {
                Tone::Info.color(theme)
            };
            painter.rect_filled(
                Rect::from_min_size(Pos2::new(x, top), Vec2::new(3.0, row)),
                0.0,
                color,
            );
        }
        cocode_git::MarkKind::Deleted if mark.start == line => {
            let size = (row / 3.0).max(3.0);
            painter.add(egui::Shape::convex_polygon(
                vec![
                    Pos2::new(x, top - size),
                    Pos2::new(x + size, top),
                    Pos2::new(x, top + size),
                ],
                Tone::Danger.color(theme),
                Stroke::NONE,
            ));
        }
        cocode_git::MarkKind::Deleted => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn semantic_tokens_recolour_the_tree_sitter_pieces_they_cover() {
        // "let 한 = f(x);" — tree-sitter: `let` keyword, `f` a variable;
        // the server says `f` is a function and `한` a parameter.
        let text = "let 한 = f(x);";
        let f = text.find('f').unwrap();
        let pieces = vec![
            (0, 3, Some(Highlight::Keyword)),
            (3, f, None),
            (f, f + 1, Some(Highlight::Variable)),
            (f + 1, text.len(), None),
        ];
        let semantic = [(4, 5, Highlight::Variable), (8, 9, Highlight::Function)];
        let han = text.find('한').unwrap();
        assert_eq!(
            overlay(text, pieces, &semantic),
            vec![
                (0, 3, Some(Highlight::Keyword)),
                (3, han, None),
                (han, han + 3, Some(Highlight::Variable)),
                (han + 3, f, None),
                (f, f + 1, Some(Highlight::Function)),
                (f + 1, text.len(), None),
            ]
        );
    }

    #[test]
    fn rows_two_million_lines_down_are_one_row_apart_and_hit_where_drawn() {
        // Scrolled to line 2,400,000 of a big log: line 0's top is about
        // 40 million pixels above the screen.
        let row = 16.5_f32;
        let shown = 2_400_000_usize;
        let geo = Geometry {
            origin: Pos2::new(60.0, 120.0 - 39_600_000.0),
            row,
        };
        let lines = 3_000_000;
        for line in shown..shown + 60 {
            let gap = geo.line_top(line + 1) - geo.line_top(line);
            assert!(
                (gap - row).abs() < 0.01,
                "line {line}: the next row is {gap} pixels down, not {row}"
            );
            assert_eq!(geo.line_at(geo.line_top(line) + row / 2.0, lines), line);
        }
        let top = geo.line_top(shown);
        assert!((top - 120.0).abs() < 0.01, "line {shown} drawn at {top}");
        assert_eq!(geo.line_at_depth(39_600_000.0, lines), shown);
        assert_eq!(geo.line_at_depth(-3.0, lines), 0);
        assert_eq!(geo.line_at_depth(1e12, lines), lines - 1);
    }
}
