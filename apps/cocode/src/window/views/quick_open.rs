//! The quick-open panel: a field at the top of the window and the best
//! matching files below it, matched characters highlighted.

use std::path::Path;

use egui::text::LayoutJob;
use egui::{Color32, FontId, TextFormat};

use crate::window::command::{Command, ExplorerCommand};
use crate::window::quick_open::QuickOpen;

/// Draws the panel when open; Enter (or a click) opens the selected file.
pub fn show(ctx: &egui::Context, quick: &mut QuickOpen, root: &Path, commands: &mut Vec<Command>) {
    if !quick.open {
        return;
    }
    // The keys the list uses never reach the field (or the editor below).
    let crate::window::views::ListKeys {
        down,
        up,
        enter,
        escape,
    } = ctx.input_mut(crate::window::views::ListKeys::take);
    if down {
        quick.move_selection(true);
    }
    if up {
        quick.move_selection(false);
    }
    let mut chosen: Option<String> = None;
    if enter {
        chosen = quick.hits.get(quick.selected).map(|h| h.path.clone());
    }
    crate::window::views::quick_pick(ctx, "quick-open", |ui, width| {
        let text = crate::window::views::pick_field(
            ui,
            &quick.query,
            "Search files by name",
            &mut quick.focus,
        );
        quick.set_query(text);
        match quick.files {
            None => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Listing files…");
                });
            }
            Some((_, omitted)) if omitted > 0 => {
                ui.weak(format!("{omitted} more files are not searched"));
            }
            Some(_) if quick.hits.is_empty() && quick.settled() => {
                ui.weak("No matching files");
            }
            Some(_) => {}
        }
        let font = egui::TextStyle::Body.resolve(ui.style());
        let strong = ui.visuals().strong_text_color();
        let weak = ui.visuals().weak_text_color();
        let accent = ui.visuals().selection.stroke.color;
        for (i, hit) in quick.hits.iter().enumerate() {
            let job = hit_job(&hit.path, &hit.indices, &font, strong, weak, accent);
            let row = ui.add(
                egui::Button::selectable(i == quick.selected, job).min_size(egui::vec2(width, 0.0)),
            );
            if row.clicked() {
                chosen = Some(hit.path.clone());
            }
            if i == quick.selected && (up || down) {
                row.scroll_to_me(None);
            }
        }
    });
    if let Some(path) = chosen {
        quick.close();
        commands.push(Command::Explorer(ExplorerCommand::OpenFile(
            root.join(path),
        )));
    } else if escape {
        quick.close();
    }
}

/// `name  folder/` with the matched characters in the accent colour.
fn hit_job(
    path: &str,
    indices: &[u32],
    font: &FontId,
    strong: Color32,
    weak: Color32,
    accent: Color32,
) -> LayoutJob {
    let split = path.rfind('/').map_or(0, |i| i + 1);
    let (folder, name) = path.split_at(split);
    let name_start = folder.chars().count();
    let mut job = LayoutJob::default();
    let put = |text: &str, first: usize, base: Color32, job: &mut LayoutJob| {
        for (k, ch) in text.chars().enumerate() {
            let hit = u32::try_from(first + k).is_ok_and(|c| indices.contains(&c));
            let mut buf = [0u8; 4];
            job.append(
                ch.encode_utf8(&mut buf),
                0.0,
                TextFormat::simple(font.clone(), if hit { accent } else { base }),
            );
        }
    };
    put(name, name_start, strong, &mut job);
    if !folder.is_empty() {
        job.append("  ", 0.0, TextFormat::simple(font.clone(), weak));
        put(folder, 0, weak, &mut job);
    }
    job
}
