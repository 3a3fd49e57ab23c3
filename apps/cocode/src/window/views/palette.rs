//! The command palette: a field at the top of the window and the commands
//! matching it, each with its shortcut, matched characters highlighted.

use egui::TextFormat;
use egui::text::LayoutJob;

use crate::window::command::{Command, WindowCommand};
use crate::window::keymap::{Action, Keymap};
use crate::window::palette::Palette;

/// Draws the palette when open; Enter (or a click) runs the selected
/// command, Escape closes it.
pub fn show(
    ctx: &egui::Context,
    palette: &mut Palette,
    available: &[Action],
    keys: &Keymap,
    commands: &mut Vec<Command>,
) {
    if !palette.open {
        return;
    }
    let crate::window::views::ListKeys {
        down,
        up,
        enter,
        escape,
    } = ctx.input_mut(crate::window::views::ListKeys::take);
    let rows = palette.rows(available);
    if down || up {
        palette.move_selection(down, rows.len());
    }
    palette.selected = palette.selected.min(rows.len().saturating_sub(1));
    let mut chosen = if enter {
        rows.get(palette.selected).map(|r| r.action)
    } else {
        None
    };
    crate::window::views::quick_pick(ctx, "command-palette", |ui, width| {
        let text = crate::window::views::pick_field(
            ui,
            &palette.query,
            "Type the name of a command",
            &mut palette.focus,
        );
        if text != palette.query {
            palette.query = text;
            palette.selected = 0;
        }
        if rows.is_empty() {
            ui.weak("No matching commands");
        }
        let font = egui::TextStyle::Body.resolve(ui.style());
        let strong = ui.visuals().strong_text_color();
        let weak = ui.visuals().weak_text_color();
        let accent = ui.visuals().selection.stroke.color;
        egui::ScrollArea::vertical()
            .max_height(ctx.content_rect().height() * 0.6)
            .show(ui, |ui| {
                for (i, row) in rows.iter().enumerate() {
                    let job = row_job(row, keys, &font, (strong, weak, accent));
                    let button = egui::Button::selectable(i == palette.selected, job)
                        .min_size(egui::vec2(width, 0.0));
                    let response = ui.add(button);
                    if response.clicked() {
                        chosen = Some(row.action);
                    }
                    if i == palette.selected && (up || down) {
                        response.scroll_to_me(None);
                    }
                }
            });
    });
    if let Some(action) = chosen {
        palette.close();
        palette.used(action);
        commands.push(Command::Window(WindowCommand::Run(action)));
    } else if escape {
        palette.close();
    }
}

/// A row: the command's words, matched characters in the accent colour,
/// then "recently used" and its shortcut, weak.
fn row_job(
    row: &crate::window::palette::Row,
    keys: &Keymap,
    font: &egui::FontId,
    (strong, weak, accent): (egui::Color32, egui::Color32, egui::Color32),
) -> LayoutJob {
    let mut job = LayoutJob::default();
    for (k, ch) in row.text.chars().enumerate() {
        let hit = u32::try_from(k).is_ok_and(|c| row.indices.contains(&c));
        let mut buf = [0u8; 4];
        job.append(
            ch.encode_utf8(&mut buf),
            0.0,
            TextFormat::simple(font.clone(), if hit { accent } else { strong }),
        );
    }
    let shortcut = keys.label(row.action);
    let right = if row.recent && !shortcut.is_empty() {
        format!("recently used · {shortcut}")
    } else if row.recent {
        "recently used".to_owned()
    } else {
        shortcut
    };
    if !right.is_empty() {
        job.append(
            &format!("    {right}"),
            0.0,
            TextFormat::simple(font.clone(), weak),
        );
    }
    job
}
