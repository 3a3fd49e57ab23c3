//! The Review panel: a task's changes as a pull request — files with their
//! counts and a "viewed" tick, hunks with Keep and Undo, the part of the
//! task shown (since the last review, all, an attempt, a message), the
//! conversation's checkpoints with "Restore to before", and the keyboard
//! (n / F7 next hunk, p / Shift+F7 previous, k keep, u undo).

use cocode_ui::{Theme, Tone};
use egui::text::LayoutJob;
use egui::{Color32, RichText, TextFormat, TextStyle, Ui};

use crate::host::task_review::{FileContent, ReviewFile, ReviewHunk, ReviewScope};
use crate::window::command::Command;
use crate::window::review::{
    Cursor, HunkLayout, ReviewCommand, ReviewPanel, line_numbers, side_by_side_rows,
};
use cocode_workspace::diff::LineKind;

fn review(command: ReviewCommand) -> Command {
    Command::Review(command)
}

/// Draws the panel.
pub fn show(ui: &mut Ui, panel: &mut ReviewPanel, commands: &mut Vec<Command>) {
    let Some(task_id) = panel.task_id.clone() else {
        cocode_ui::empty_state(
            ui,
            "No review open",
            "Open a task's review from its detail in the Agent panel (Review changes), from the end of its conversation, or from the status bar.",
        );
        return;
    };
    keys(ui, panel, commands);
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(format!("Review · task {task_id}")).strong());
        if panel.loading {
            ui.spinner();
        }
    });
    if let Some(first) = panel.prompt.lines().next() {
        ui.label(RichText::new(first).weak());
    }
    scope_row(ui, panel, commands);
    if let Some(note) = &panel.note {
        ui.label(RichText::new(note).color(Tone::Success.color(theme(ui))));
    }
    if let Some(error) = &panel.error {
        ui.label(RichText::new(error).color(Tone::Danger.color(theme(ui))));
    }
    checkpoints(ui, panel, commands);
    ui.separator();
    let cursor = panel.cursor;
    let scroll = std::mem::take(&mut panel.scroll_to_cursor);
    let how = How {
        busy: panel.loading,
        side_by_side: panel.layout == HunkLayout::SideBySide,
    };
    let Some(shown) = &panel.review else {
        if !panel.loading {
            ui.label(RichText::new("The review could not be read.").weak());
        }
        return;
    };
    if shown.files.is_empty() {
        let words = match shown.scope {
            ReviewScope::SinceReview if shown.reviewed_upto.is_some() => {
                "Nothing changed since your last review."
            }
            _ => "Nothing changed in this part of the task.",
        };
        ui.label(words);
        return;
    }
    ui.label(
        RichText::new("n or F7: next hunk · p or Shift+F7: previous · k: keep · u: undo")
            .weak()
            .small(),
    );
    egui::ScrollArea::vertical()
        .id_salt(("review-files", &task_id))
        .auto_shrink([false, false])
        .show(ui, |ui| {
            for (i, file) in shown.files.iter().enumerate() {
                file_view(ui, (i, file), (cursor, scroll), how, commands);
            }
        });
}

/// How the hunks are drawn this frame.
#[derive(Clone, Copy)]
struct How {
    /// A request is on its way: the actions wait.
    busy: bool,
    side_by_side: bool,
}

fn theme(ui: &Ui) -> Theme {
    if ui.visuals().dark_mode {
        Theme::Dark
    } else {
        Theme::Light
    }
}

/// The keyboard, while the panel is where the person last clicked and no
/// text field has the keys.
fn keys(ui: &mut Ui, panel: &mut ReviewPanel, commands: &mut Vec<Command>) {
    let area = ui.max_rect();
    let (pressed, at) = ui.input(|i| (i.pointer.any_pressed(), i.pointer.interact_pos()));
    if pressed {
        panel.keys_here = at.is_some_and(|p| area.contains(p));
    }
    // A text field takes the letters; a button the person just clicked
    // (Side by side, Keep…) keeps the focus but not the letters.
    let typing = ui.ctx().text_edit_focused();
    if !panel.keys_here || typing {
        return;
    }
    ui.input_mut(|i| {
        use egui::{Key, Modifiers};
        if i.consume_key(Modifiers::NONE, Key::N) || i.consume_key(Modifiers::NONE, Key::F7) {
            commands.push(review(ReviewCommand::Step { forward: true }));
        }
        if i.consume_key(Modifiers::NONE, Key::P) || i.consume_key(Modifiers::SHIFT, Key::F7) {
            commands.push(review(ReviewCommand::Step { forward: false }));
        }
        if i.consume_key(Modifiers::NONE, Key::K) {
            commands.push(review(ReviewCommand::KeepAtCursor));
        }
        if i.consume_key(Modifiers::NONE, Key::U) {
            commands.push(review(ReviewCommand::UndoAtCursor));
        }
    });
}

/// Which part of the task is shown, and "Mark all reviewed".
fn scope_row(ui: &mut Ui, panel: &ReviewPanel, commands: &mut Vec<Command>) {
    let scope = panel.scope.unwrap_or(ReviewScope::SinceReview);
    let words = |s: ReviewScope| match s {
        ReviewScope::SinceReview => "Since your last review".to_owned(),
        ReviewScope::All => "All changes".to_owned(),
        ReviewScope::Attempt(k) => format!("Attempt {}", k.ordinal()),
        ReviewScope::Message(k) => format!("Message {k}"),
        ReviewScope::Call(k) => panel.calls.iter().find(|c| c.number == k).map_or_else(
            || format!("Tool call {k}"),
            |c| format!("Tool call {k}: {}", c.title),
        ),
    };
    ui.horizontal_wrapped(|ui| {
        ui.label("Show");
        egui::ComboBox::from_id_salt("review-scope")
            .selected_text(words(scope))
            .show_ui(ui, |ui| {
                let mut options = vec![ReviewScope::SinceReview, ReviewScope::All];
                options.extend(
                    (0..panel.attempts).map(|k| ReviewScope::Attempt(cocode_core::AttemptNo(k))),
                );
                options.extend(
                    panel
                        .messages
                        .iter()
                        .map(|m| ReviewScope::Message(m.number)),
                );
                options.extend(panel.calls.iter().map(|c| ReviewScope::Call(c.number)));
                for option in options {
                    if ui
                        .selectable_label(option == scope, words(option))
                        .clicked()
                    {
                        commands.push(review(ReviewCommand::Scope(option)));
                    }
                }
            });
        let any = panel.review.as_ref().is_some_and(|r| !r.files.is_empty());
        if ui
            .add_enabled(
                any && !panel.loading,
                egui::Button::new("Mark all reviewed"),
            )
            .on_hover_text("Since your last review then starts after what is shown")
            .clicked()
        {
            commands.push(review(ReviewCommand::MarkReviewed));
        }
        for (layout, words, hint) in [
            (HunkLayout::Unified, "Unified", "Each hunk as one column"),
            (
                HunkLayout::SideBySide,
                "Side by side",
                "Each hunk as two columns, before and after",
            ),
        ] {
            if ui
                .selectable_label(panel.layout == layout, words)
                .on_hover_text(hint)
                .clicked()
                && panel.layout != layout
            {
                commands.push(review(ReviewCommand::Layout(layout)));
            }
        }
        if let Some(r) = &panel.review {
            let kept: usize = r
                .files
                .iter()
                .map(|f| f.hunks().iter().filter(|h| h.kept).count())
                .sum();
            let viewed = r.files.iter().filter(|f| f.viewed).count();
            ui.label(
                RichText::new(format!(
                    "{} file(s) · {} hunk(s) · {kept} kept · {viewed} viewed",
                    r.files.len(),
                    r.hunk_count()
                ))
                .weak(),
            );
        }
    });
}

/// The conversation's messages, each a checkpoint to restore to.
fn checkpoints(ui: &mut Ui, panel: &ReviewPanel, commands: &mut Vec<Command>) {
    if panel.messages.is_empty() {
        return;
    }
    egui::CollapsingHeader::new(format!(
        "Conversation ({} message(s))",
        panel.messages.len()
    ))
    .id_salt(("review-messages", &panel.task_id))
    .show(ui, |ui| {
        for m in &panel.messages {
            ui.horizontal_wrapped(|ui| {
                if ui
                    .add_enabled(
                        !panel.loading,
                        egui::Button::new("Restore to before").small(),
                    )
                    .on_hover_text(
                        "Put the task's files back as they were before this message (asks first)",
                    )
                    .clicked()
                {
                    commands.push(review(ReviewCommand::AskRestore(m.number)));
                }
                ui.label(format!(
                    "{}. {}",
                    m.number,
                    cocode_core::shown::line(&m.summary())
                ));
            });
        }
    });
    if let Some(k) = panel.confirm_restore {
        ui.group(|ui| {
            ui.label(format!(
                "Restore the task's files to before message {k}? What the agent changed in answer to it and later is undone (recorded, so it can be rolled back again). Files someone changed since are not overwritten: the restore is refused instead."
            ));
            ui.horizontal(|ui| {
                if ui.button("Restore").clicked() {
                    commands.push(review(ReviewCommand::ConfirmRestore));
                }
                if ui.button("Cancel").clicked() {
                    commands.push(review(ReviewCommand::CancelRestore));
                }
            });
        });
    }
}

/// One file: its header (viewed, name, counts, Undo File, Open) and its
/// hunks.
fn file_view(
    ui: &mut Ui,
    (index, file): (usize, &ReviewFile),
    (cursor, scroll): (Option<Cursor>, bool),
    how: How,
    commands: &mut Vec<Command>,
) {
    let busy = how.busy;
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.set_width(ui.available_width());
        let header = file_header(ui, (index, file), busy, commands);
        let here = cursor.is_some_and(|c| c.file == index && c.hunk.is_none());
        if here && scroll {
            header.scroll_to_me(Some(egui::Align::Center));
        }
        if let Err(why) = &file.undo {
            ui.label(
                RichText::new(format!("Undo is not possible now: {why}"))
                    .weak()
                    .small(),
            );
        }
        // Viewed: folded until it changes again (or is unticked).
        if file.viewed {
            return;
        }
        match &file.content {
            FileContent::Text(hunks) if hunks.is_empty() => {
                ui.label(RichText::new("Moved; the content is the same.").weak());
            }
            FileContent::Text(hunks) => {
                for h in hunks {
                    let here = cursor
                        == Some(Cursor {
                            file: index,
                            hunk: Some(h.number),
                        });
                    hunk_view(ui, (index, file, h), (here, here && scroll), how, commands);
                }
            }
            FileContent::Binary => {
                ui.label(RichText::new("Binary content: it is undone whole.").weak());
            }
            FileContent::TooLarge => {
                ui.label(RichText::new("Too large to keep: history holds only its hash.").weak());
            }
            FileContent::NotAFile { what } => {
                ui.label(RichText::new(format!("Not a plain file: {what}.")).weak());
            }
        }
    });
}

/// A file's header: viewed, its name, what happened to it, its counts,
/// Undo File and Open.
fn file_header(
    ui: &mut Ui,
    (index, file): (usize, &ReviewFile),
    busy: bool,
    commands: &mut Vec<Command>,
) -> egui::Response {
    let path = file.path.to_string();
    ui.horizontal_wrapped(|ui| {
        let mut viewed = file.viewed;
        if ui
            .checkbox(&mut viewed, "")
            .on_hover_text("Viewed: ticked until the file changes again")
            .changed()
        {
            commands.push(review(ReviewCommand::Viewed {
                path: path.clone(),
                viewed,
            }));
        }
        let name = match &file.previous_path {
            Some(from) => format!("{from} → {path}"),
            None => path.clone(),
        };
        let title =
            ui.add(egui::Label::new(RichText::new(name).strong()).sense(egui::Sense::click()));
        if title.clicked() {
            commands.push(review(ReviewCommand::Select {
                file: index,
                hunk: file.hunks().first().map(|h| h.number),
            }));
        }
        ui.label(RichText::new(file.change.word()).weak());
        let (removed, added) = file.counts;
        if removed + added > 0 {
            ui.label(
                RichText::new(format!("+{added}"))
                    .color(Tone::Success.color(theme(ui)))
                    .small(),
            );
            ui.label(
                RichText::new(format!("−{removed}"))
                    .color(Tone::Danger.color(theme(ui)))
                    .small(),
            );
        }
        let undo = ui
            .add_enabled(
                !busy && file.undo.is_ok(),
                egui::Button::new("Undo File").small(),
            )
            .on_hover_text("Put the whole file back as it was before this part of the task");
        let undo = match &file.undo {
            Err(why) => undo.on_disabled_hover_text(why.clone()),
            Ok(()) => undo,
        };
        if undo.clicked() {
            commands.push(review(ReviewCommand::Undo {
                path: path.clone(),
                hunk: None,
            }));
        }
        if file.after.is_some()
            && ui
                .small_button("Open")
                .on_hover_text("Open the file in the editor")
                .clicked()
        {
            let line = file.hunks().first().map_or(1, |h| first_change(&h.hunk));
            commands.push(review(ReviewCommand::OpenAt {
                path: path.clone(),
                line,
            }));
        }
    })
    .response
}

/// One hunk: its header with Keep and Undo, then its lines.
fn hunk_view(
    ui: &mut Ui,
    (index, file, h): (usize, &ReviewFile, &ReviewHunk),
    (here, scroll): (bool, bool),
    how: How,
    commands: &mut Vec<Command>,
) {
    let busy = how.busy;
    let path = file.path.to_string();
    let mut frame = egui::Frame::group(ui.style());
    if here {
        frame = frame.stroke(egui::Stroke::new(2.0, ui.visuals().selection.stroke.color));
    }
    let response = frame
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.horizontal_wrapped(|ui| {
                if ui
                    .add(
                        egui::Label::new(RichText::new(h.hunk.header()).monospace().weak())
                            .sense(egui::Sense::click()),
                    )
                    .on_hover_text("Put the keyboard here")
                    .clicked()
                {
                    commands.push(review(ReviewCommand::Select {
                        file: index,
                        hunk: Some(h.number),
                    }));
                }
                if h.kept {
                    cocode_ui::badge(ui, "kept", Tone::Success);
                } else if ui
                    .add_enabled(!busy, egui::Button::new("Keep").small())
                    .on_hover_text(format!("Mark hunk {} reviewed as it is (k)", h.number))
                    .clicked()
                {
                    commands.push(review(ReviewCommand::Keep {
                        path: path.clone(),
                        hunk: h.number,
                    }));
                }
                let undo = ui
                    .add_enabled(
                        !busy && file.undo.is_ok(),
                        egui::Button::new("Undo").small(),
                    )
                    .on_hover_text(format!(
                        "Put hunk {} back as it was; the other hunks stay (u)",
                        h.number
                    ));
                let undo = match &file.undo {
                    Err(why) => undo.on_disabled_hover_text(why.clone()),
                    Ok(()) => undo,
                };
                if undo.clicked() {
                    commands.push(review(ReviewCommand::Undo {
                        path: path.clone(),
                        hunk: Some(h.number),
                    }));
                }
                if file.after.is_some()
                    && ui
                        .small_button("Open at")
                        .on_hover_text("Open the file in the editor at this hunk")
                        .clicked()
                {
                    commands.push(review(ReviewCommand::OpenAt {
                        path: path.clone(),
                        line: first_change(&h.hunk),
                    }));
                }
            });
            if how.side_by_side {
                side_by_side(ui, &path, h);
            } else {
                egui::ScrollArea::horizontal()
                    .id_salt(("review-hunk", &path, h.number))
                    .auto_shrink([false, true])
                    .show(ui, |ui| lines(ui, h));
            }
        })
        .response;
    if scroll {
        response.scroll_to_me(Some(egui::Align::Center));
    }
}

/// How a hunk's lines are drawn: the font and colours of the panel.
struct Paint {
    font: egui::FontId,
    theme: Theme,
    plain: Color32,
    weak: Color32,
}

impl Paint {
    fn of(ui: &Ui) -> Self {
        Self {
            font: TextStyle::Monospace.resolve(ui.style()),
            theme: theme(ui),
            plain: ui.visuals().text_color(),
            weak: ui.visuals().weak_text_color(),
        }
    }

    fn number(n: Option<usize>, width: usize) -> String {
        n.map_or_else(|| format!("{:>width$} ", ""), |n| format!("{n:>width$} "))
    }

    /// Appends line `n` of the hunk after `numbers`: its sign, its text in
    /// the editor's colours on a tint of its side (or its side's colour
    /// when it has none), and a note when it has no newline at the end.
    fn line(&self, job: &mut LayoutJob, h: &ReviewHunk, n: usize, numbers: &str) {
        let line = &h.hunk.lines[n];
        let (color, sign) = match line.kind {
            LineKind::Context => (self.plain, ' '),
            LineKind::Removed => (Tone::Danger.color(self.theme), '-'),
            LineKind::Added => (Tone::Success.color(self.theme), '+'),
        };
        let font = &self.font;
        job.append(numbers, 0.0, TextFormat::simple(font.clone(), self.weak));
        let text = line.text.strip_suffix('\n').unwrap_or(&line.text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        match h.spans.get(n).filter(|s| !s.is_empty()) {
            // Coloured as the editor colours it, on a tint of its side.
            Some(spans) => {
                let tint = match line.kind {
                    LineKind::Context => Color32::TRANSPARENT,
                    _ => color.gamma_multiply(0.18),
                };
                let format = |color| TextFormat {
                    background: tint,
                    ..TextFormat::simple(font.clone(), color)
                };
                job.append(&sign.to_string(), 0.0, format(color));
                let mut at = 0;
                for (range, kind) in spans {
                    let (a, b) = (range.start.min(text.len()), range.end.min(text.len()));
                    if let (Some(gap), Some(piece)) = (text.get(at..a), text.get(a..b)) {
                        job.append(&cocode_core::shown::line(gap), 0.0, format(self.plain));
                        job.append(
                            &cocode_core::shown::line(piece),
                            0.0,
                            format(super::editor::highlight_color(*kind, self.theme)),
                        );
                        at = b;
                    }
                }
                if let Some(rest) = text.get(at..) {
                    job.append(&cocode_core::shown::line(rest), 0.0, format(self.plain));
                }
            }
            None => job.append(
                &format!("{sign}{}", cocode_core::shown::line(text)),
                0.0,
                TextFormat::simple(font.clone(), color),
            ),
        }
        if !line.text.ends_with('\n') {
            job.append(
                "  (no newline at the end)",
                0.0,
                TextFormat::simple(font.clone(), self.weak),
            );
        }
    }

    /// A row where this side has no line (the other side's longer run):
    /// shaded as wide as the hunk's longest line, as GitHub shades it.
    fn nothing(&self, job: &mut LayoutJob, width: usize, wide: usize) {
        job.append(
            &format!("{:>width$} ", ""),
            0.0,
            TextFormat::simple(self.font.clone(), self.weak),
        );
        job.append(
            &" ".repeat(wide),
            0.0,
            TextFormat {
                background: self.weak.gamma_multiply(0.12),
                ..TextFormat::simple(self.font.clone(), self.weak)
            },
        );
    }

    fn newline(&self, job: &mut LayoutJob) {
        job.append("\n", 0.0, TextFormat::simple(self.font.clone(), self.plain));
    }
}

/// The widest line number a hunk shows.
fn number_width(h: &ReviewHunk) -> usize {
    let (old, new) = (h.hunk.old_start.max(1), h.hunk.new_start.max(1));
    (old.max(new) + h.hunk.lines.len()).to_string().len()
}

/// A hunk's lines, coloured as a diff, with both sides' line numbers.
fn lines(ui: &mut Ui, h: &ReviewHunk) {
    let paint = Paint::of(ui);
    let width = number_width(h);
    let mut job = LayoutJob::default();
    for (n, (old, new)) in line_numbers(&h.hunk).into_iter().enumerate() {
        if n > 0 {
            paint.newline(&mut job);
        }
        let numbers = Paint::number(old, width) + &Paint::number(new, width);
        paint.line(&mut job, h, n, &numbers);
    }
    ui.add(egui::Label::new(job).extend());
}

/// A hunk as two columns: the lines before on the left, after on the
/// right, a removal facing what replaced it, each side scrolling on its own.
fn side_by_side(ui: &mut Ui, path: &str, h: &ReviewHunk) {
    let paint = Paint::of(ui);
    let width = number_width(h);
    let numbers = line_numbers(&h.hunk);
    // The sign and the longest line, capped so a minified line does not
    // make every blank row that long.
    let wide = 1 + h
        .hunk
        .lines
        .iter()
        .map(|l| l.text.trim_end().chars().count())
        .max()
        .unwrap_or(0)
        .min(200);
    let (mut left, mut right) = (LayoutJob::default(), LayoutJob::default());
    for (row, (before, after)) in side_by_side_rows(&h.hunk).into_iter().enumerate() {
        if row > 0 {
            paint.newline(&mut left);
            paint.newline(&mut right);
        }
        match before {
            Some(n) => paint.line(&mut left, h, n, &Paint::number(numbers[n].0, width)),
            None => paint.nothing(&mut left, width, wide),
        }
        match after {
            Some(n) => paint.line(&mut right, h, n, &Paint::number(numbers[n].1, width)),
            None => paint.nothing(&mut right, width, wide),
        }
    }
    ui.columns(2, |columns| {
        for (side, (column, job)) in columns.iter_mut().zip([left, right]).enumerate() {
            egui::ScrollArea::horizontal()
                .id_salt(("review-side", path, h.number, side))
                .auto_shrink([false, true])
                .show(column, |ui| ui.add(egui::Label::new(job).extend()));
        }
    });
}

/// The line (1-based) where a hunk's change begins in the file now.
fn first_change(hunk: &cocode_workspace::diff::TextHunk) -> usize {
    let lead = hunk
        .lines
        .iter()
        .take_while(|l| l.kind == LineKind::Context)
        .count();
    if hunk.new_len == 0 {
        hunk.new_start.max(1)
    } else {
        hunk.new_start + lead
    }
}
