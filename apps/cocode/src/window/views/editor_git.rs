//! A gutter mark's change against HEAD, shown when the mark is clicked: the
//! lines HEAD had and the lines there now, with "Revert Change" (an edit
//! of the document like any other: Ctrl/Cmd+Z takes it back, and saving
//! records it as the person's).

use cocode_editor::Document;
use cocode_git::LineMark;
use cocode_ui::{Theme, Tone};
use egui::text::LayoutJob;
use egui::{RichText, TextFormat, TextStyle, Ui};

use crate::window::command::{Command, EditorCommand};
pub use crate::window::editors::GitPeek;
use crate::window::editors::{EditorTab, GitBase};

/// How far into the gutter (from its left edge) a click picks the mark.
pub const MARK_ZONE: f32 = 10.0;

/// The mark covering `line` (a deletion's wedge sits on the line below
/// the removed ones).
pub fn mark_on(tab: &EditorTab, line: usize) -> Option<LineMark> {
    let (_, marks) = tab.git_marks.as_ref()?;
    let at = marks.partition_point(|m| m.end.max(m.start + 1) <= line);
    marks.get(at).filter(|m| m.start <= line).copied()
}

/// The card of the clicked mark: HEAD's lines, the lines now, and Revert
/// Change. Escape or Close hides it; a new version of the text does too
/// (the change it shows may be gone).
pub fn peek(ui: &Ui, tab: &mut EditorTab, doc: &Document, commands: &mut Vec<Command>) {
    let Some(shown) = tab.git_peek else {
        return;
    };
    let current = tab
        .git_marks
        .as_ref()
        .is_some_and(|(v, marks)| *v == doc.version() && marks.contains(&shown.mark));
    let GitBase::Known(Some(base)) = &tab.git_base else {
        tab.git_peek = None;
        return;
    };
    if !current || ui.input(|i| i.key_pressed(egui::Key::Escape)) {
        tab.git_peek = None;
        return;
    }
    let mark = shown.mark;
    let old: Vec<&str> = base
        .split_inclusive('\n')
        .skip(mark.old_start)
        .take(mark.old_lines)
        .collect();
    let text = doc.rope().to_string();
    let new: Vec<&str> = text
        .split_inclusive('\n')
        .skip(mark.start)
        .take(mark.end - mark.start)
        .collect();
    let theme = if ui.visuals().dark_mode {
        Theme::Dark
    } else {
        Theme::Light
    };
    let font = TextStyle::Monospace.resolve(ui.style());
    let mut job = LayoutJob::default();
    for (sign, lines, tone) in [("-", &old, Tone::Danger), ("+", &new, Tone::Success)] {
        for line in lines {
            let shown = line.trim_end_matches('\n').trim_end_matches('\r');
            if !job.text.is_empty() {
                job.append(
                    "\n",
                    0.0,
                    TextFormat::simple(font.clone(), tone.color(theme)),
                );
            }
            job.append(
                &format!("{sign}{shown}"),
                0.0,
                TextFormat::simple(font.clone(), tone.color(theme)),
            );
        }
    }
    let id = tab.id;
    let mut close = false;
    egui::Area::new(egui::Id::new(("git-peek", id)))
        .order(egui::Order::Foreground)
        .fixed_pos(shown.at)
        .show(ui.ctx(), |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_max_width(640.0);
                let what = match (mark.old_lines, mark.end - mark.start) {
                    (0, n) => format!("{n} line(s) added since HEAD"),
                    (n, 0) => format!("{n} line(s) removed since HEAD"),
                    (a, b) => format!("{a} line(s) changed into {b} since HEAD"),
                };
                ui.label(RichText::new(what).strong());
                egui::ScrollArea::both()
                    .max_height(240.0)
                    .show(ui, |ui| ui.add(egui::Label::new(job).extend()));
                ui.horizontal(|ui| {
                    let writable = tab.locked().is_none();
                    let revert = ui
                        .add_enabled(writable, egui::Button::new("Revert Change"))
                        .on_hover_text("Put HEAD's lines back (Ctrl+Z takes it back)");
                    if revert.clicked() {
                        commands.push(Command::Editor(EditorCommand::RevertGitChange {
                            id,
                            mark,
                            version: doc.version(),
                        }));
                        close = true;
                    }
                    if ui.button("Close").clicked() {
                        close = true;
                    }
                });
            });
        });
    if close {
        tab.git_peek = None;
    }
}
