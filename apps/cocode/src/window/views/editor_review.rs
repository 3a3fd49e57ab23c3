//! The hunks of the task under review, in an open editor: a band over
//! the lines the task put there (a line where it removed some) and Keep
//! and Undo at the hunk's first line, as Cursor and Zed show an agent's
//! edits until they are accepted or rejected. The Review panel's review is
//! the model; a hunk whose lines the document no longer holds (a person's
//! edit since) is not shown.

use egui::{Color32, Pos2, Rect, Stroke, Ui, Vec2};

use super::editor_input::Geometry;
use crate::window::command::Command;
use crate::window::editors::EditorTab;
use crate::window::review::ReviewCommand;

/// Draws the marks on the visible lines `first..=last`; `rect` is the
/// text area's whole rectangle.
pub(super) fn marks(
    ui: &mut Ui,
    tab: &EditorTab,
    rope: &ropey::Rope,
    (geo, rect): (Geometry, Rect),
    (first, last): (usize, usize),
    commands: &mut Vec<Command>,
) {
    let Some(rel) = &tab.rel else {
        return;
    };
    if tab.review_marks.is_empty() {
        return;
    }
    let band = Color32::from_rgba_unmultiplied(0xA0, 0x7C, 0xE0, 44);
    let edge = Color32::from_rgb(0xA0, 0x7C, 0xE0);
    let painter = ui.painter_at(ui.clip_rect());
    let right = ui.clip_rect().max.x;
    for mark in &tab.review_marks {
        let end = mark.start + mark.lines.len().max(1);
        if end <= first || mark.start > last || !mark.matches(rope) {
            continue;
        }
        let top = geo.line_top(mark.start);
        if mark.lines.is_empty() {
            painter.hline(rect.min.x..=rect.max.x, top, Stroke::new(2.0, edge));
        } else {
            let bottom = geo.line_top(end);
            painter.rect_filled(
                Rect::from_min_max(Pos2::new(rect.min.x, top), Pos2::new(rect.max.x, bottom)),
                0.0,
                band,
            );
            painter.rect_filled(
                Rect::from_min_max(
                    Pos2::new(geo.origin.x - 5.0, top),
                    Pos2::new(geo.origin.x - 2.0, bottom),
                ),
                0.0,
                edge,
            );
        }
        let at = Rect::from_min_size(Pos2::new(right - 124.0, top), Vec2::new(120.0, geo.row));
        let path = rel.to_string();
        ui.put(at, |ui: &mut Ui| {
            ui.horizontal(|ui| {
                if ui
                    .small_button("Keep")
                    .on_hover_text(format!("The task's hunk {}: keep it as it is", mark.hunk))
                    .clicked()
                {
                    commands.push(Command::Review(ReviewCommand::Keep {
                        path: path.clone(),
                        hunk: mark.hunk,
                    }));
                }
                if ui
                    .small_button("Undo")
                    .on_hover_text(format!(
                        "The task's hunk {}: put the lines back as they were (saved at once, recorded with the task)",
                        mark.hunk
                    ))
                    .clicked()
                {
                    commands.push(Command::Review(ReviewCommand::Undo {
                        path: path.clone(),
                        hunk: Some(mark.hunk),
                    }));
                }
            })
            .response
        });
    }
}
