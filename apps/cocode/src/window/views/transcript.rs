//! The transcript's entries drawn as cards: the person's message, the
//! agent's Markdown, thinking collapsed, tool calls with their status,
//! arguments, result and coloured diffs, command output, verification
//! records, plans, retries and errors. Only the entries in sight are laid
//! out: each entry's height is measured when drawn and remembered, the
//! others are estimated.

use std::sync::{Arc, Mutex, PoisonError};

use cocode_core::agent::ToolCallStatus;
use cocode_ui::Tone;
use egui::{Id, Rect, Ui, UiBuilder, pos2, vec2};
use egui_commonmark::{CommonMarkCache, CommonMarkViewer};

use crate::window::command::{Command, TerminalCommand};
use crate::window::transcript::{
    Entry, TerminalEntry, ToolEntry, Transcript, tool_words, verification_line,
};

/// The height an entry not yet drawn is assumed to have.
const ESTIMATE: f32 = 28.0;
/// Space between entries.
const GAP: f32 = 6.0;

/// Measured heights, by absolute entry number (`base` = entries dropped
/// when they were measured).
#[derive(Clone, Default)]
struct Heights {
    base: usize,
    heights: Vec<f32>,
}

/// Draws the transcript in a scroll area that follows the end while the
/// agent writes. Links in the agent's Markdown ask before they open.
pub fn show(ui: &mut Ui, transcript: &Transcript, max_height: f32, commands: &mut Vec<Command>) {
    let id = Id::new("agent-transcript-heights");
    let mut h: Heights = ui.data_mut(|d| d.get_temp(id)).unwrap_or_default();
    let entries = transcript.entries();
    let dropped = transcript.dropped();
    // Entries dropped at the front take their heights with them.
    if dropped > h.base {
        let gone = (dropped - h.base).min(h.heights.len());
        h.heights.drain(..gone);
        h.base = dropped;
    }
    h.heights.resize(entries.len(), ESTIMATE);
    let markdown: Arc<Mutex<CommonMarkCache>> = ui.data_mut(|d| {
        d.get_temp_mut_or_insert_with(Id::new("agent-markdown"), || {
            Arc::new(Mutex::new(CommonMarkCache::default()))
        })
        .clone()
    });
    let mut markdown = markdown.lock().unwrap_or_else(PoisonError::into_inner);
    let earlier_commands = ui.ctx().output(|o| o.commands.len());
    egui::ScrollArea::vertical()
        .id_salt("agent-transcript")
        .max_height(max_height)
        .auto_shrink([false, true])
        .stick_to_bottom(true)
        .show_viewport(ui, |ui, viewport| {
            // Entries are measured at the width they are drawn at; one
            // out of sight keeps its last height until it is drawn again.
            let width = ui.available_width();
            let header = if dropped > 0 { ESTIMATE } else { 0.0 };
            let total: f32 = header + h.heights.iter().map(|x| x + GAP).sum::<f32>();
            ui.set_height(total);
            let top = ui.max_rect().top();
            let left = ui.max_rect().left();
            if dropped > 0 && viewport.min.y < header {
                ui.scope_builder(
                    UiBuilder::new()
                        .max_rect(Rect::from_min_size(pos2(left, top), vec2(width, header))),
                    |ui| ui.weak(format!("… {dropped} earlier entries are not kept")),
                );
            }
            let mut y = header;
            for (i, entry) in entries.iter().enumerate() {
                let height = h.heights[i];
                if y + height >= viewport.min.y && y <= viewport.max.y {
                    let rect = Rect::from_min_size(pos2(left, top + y), vec2(width, f32::INFINITY));
                    let drawn = ui
                        .scope_builder(
                            UiBuilder::new()
                                .max_rect(rect)
                                .id_salt(("entry", dropped + i)),
                            |ui| entry_card(ui, entry, dropped + i, &mut markdown),
                        )
                        .response
                        .rect
                        .height();
                    h.heights[i] = drawn;
                }
                y += h.heights[i] + GAP;
            }
        });
    ui.data_mut(|d| d.insert_temp(id, h));
    // A click on a link in the agent's text asks first (the model chose
    // it): the links the transcript asked to open become questions.
    let urls: Vec<String> = ui.ctx().output_mut(|o| {
        let mine = o.commands.split_off(earlier_commands.min(o.commands.len()));
        let mut urls = Vec::new();
        for c in mine {
            match c {
                egui::OutputCommand::OpenUrl(open) => urls.push(open.url),
                other => o.commands.push(other),
            }
        }
        urls
    });
    commands.extend(urls.into_iter().map(|url| {
        Command::Terminal(TerminalCommand::AskOpenLink {
            url,
            from_agent: true,
        })
    }));
}

/// A verification record: its line, what it found, and the output's
/// failing lines a click away.
fn verification_card(ui: &mut Ui, v: &crate::window::transcript::VerificationEntry, n: usize) {
    let (mark, tone) = match v.passed {
        Some(true) => ("✔", Tone::Success),
        Some(false) => ("✖", Tone::Danger),
        None => ("–", Tone::Neutral),
    };
    ui.horizontal_wrapped(|ui| {
        cocode_ui::badge(ui, mark, tone);
        ui.label(verification_line(v));
    });
    if !v.details.is_empty() {
        ui.indent(("verification-details", n), |ui| {
            for line in &v.details {
                let text = egui::RichText::new(line).monospace();
                // A finding's own line stands out; its indented
                // first lines and the notes are quieter.
                let text = if line.starts_with(' ') || line.starts_with("note:") {
                    text.weak()
                } else {
                    text
                };
                ui.add(egui::Label::new(text).wrap());
            }
        });
    }
    if let Some(output) = &v.output {
        ui.indent(("verification-output", n), |ui| {
            egui::CollapsingHeader::new("What it printed")
                .id_salt(("verification-output", n))
                .default_open(false)
                .show(ui, |ui| {
                    ui.add(egui::Label::new(egui::RichText::new(output).monospace()).wrap());
                });
        });
    }
}

fn entry_card(ui: &mut Ui, entry: &Entry, n: usize, markdown: &mut CommonMarkCache) {
    match entry {
        Entry::User(text) => {
            egui::Frame::group(ui.style())
                .fill(ui.visuals().faint_bg_color)
                .show(ui, |ui| {
                    ui.set_width(ui.available_width());
                    ui.label(egui::RichText::new("You").strong());
                    ui.add(egui::Label::new(text).wrap());
                });
        }
        Entry::Assistant(text) => {
            ui.vertical(|ui| {
                ui.label(egui::RichText::new("Agent").strong());
                CommonMarkViewer::new().show(ui, markdown, text);
            });
        }
        Entry::Thinking(text) => {
            egui::CollapsingHeader::new(
                egui::RichText::new(format!("Thinking ({} characters)", text.chars().count()))
                    .weak(),
            )
            .id_salt(("thinking", n))
            .default_open(false)
            .show(ui, |ui| {
                ui.add(egui::Label::new(egui::RichText::new(text).weak().italics()).wrap());
            });
        }
        Entry::Tool(tool) => tool_card(ui, tool, n),
        Entry::Terminal(term) => terminal_card(ui, term, n),
        Entry::Verification(v) => verification_card(ui, v, n),
        Entry::Plan(steps) => {
            egui::Frame::group(ui.style()).show(ui, |ui| {
                ui.set_width(ui.available_width());
                ui.label(egui::RichText::new("Plan").strong());
                for (step, done) in steps {
                    ui.horizontal_wrapped(|ui| {
                        ui.label(if *done { "☑" } else { "☐" });
                        if *done {
                            ui.label(egui::RichText::new(step).strikethrough().weak());
                        } else {
                            ui.label(step);
                        }
                    });
                }
            });
        }
        Entry::Status { from, to } => {
            ui.weak(format!("status: {from} → {to}"));
        }
        Entry::Note(text) => {
            ui.add(egui::Label::new(egui::RichText::new(text).weak()).wrap());
        }
        Entry::Retry { attempt, max, code } => {
            cocode_ui::badge(
                ui,
                &format!("The provider failed ({code}); asking again, {attempt} of {max}"),
                Tone::Warning,
            );
        }
        Entry::Failure { code, message } => {
            egui::Frame::group(ui.style()).show(ui, |ui| {
                ui.set_width(ui.available_width());
                cocode_ui::badge(ui, &format!("Agent error {code}"), Tone::Danger);
                ui.add(egui::Label::new(message).wrap());
            });
        }
        Entry::Usage(spent) => {
            ui.add(egui::Label::new(egui::RichText::new(spent.words()).small().weak()).wrap());
        }
        Entry::Compacted { words, summary } => {
            cocode_ui::badge(ui, "Context compacted", Tone::Info);
            ui.add(egui::Label::new(egui::RichText::new(words).weak()).wrap());
            if let Some(summary) = summary {
                egui::CollapsingHeader::new("What the model kept (its summary)")
                    .id_salt(("compacted", words))
                    .show(ui, |ui| {
                        ui.add(egui::Label::new(summary).wrap());
                    });
            }
        }
        Entry::Ended(text) => {
            ui.add(egui::Label::new(egui::RichText::new(text).strong()).wrap());
        }
    }
}

fn status_badge(ui: &mut Ui, status: ToolCallStatus) {
    let tone = match status {
        ToolCallStatus::Pending | ToolCallStatus::InProgress => Tone::Info,
        ToolCallStatus::Completed => Tone::Success,
        ToolCallStatus::Failed => Tone::Danger,
        ToolCallStatus::Cancelled => Tone::Neutral,
    };
    if matches!(status, ToolCallStatus::Pending | ToolCallStatus::InProgress) {
        ui.spinner();
    }
    cocode_ui::badge(ui, status.phrase(), tone);
}

fn tool_card(ui: &mut Ui, tool: &ToolEntry, n: usize) {
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.set_width(ui.available_width());
        ui.horizontal_wrapped(|ui| {
            status_badge(ui, tool.state);
            let title = if tool.title.is_empty() {
                "tool"
            } else {
                tool_words(&tool.title)
            };
            ui.label(egui::RichText::new(title).strong());
            for l in &tool.locations {
                ui.monospace(l);
            }
        });
        for (k, change) in tool.changes.iter().enumerate() {
            ui.horizontal_wrapped(|ui| {
                ui.strong(&change.path);
                ui.weak(&change.kind);
            });
            crate::window::views::diff::show(ui, ("transcript-diff", n, k), &change.diff, 240.0);
        }
        if !tool.terminals.is_empty() {
            ui.weak(format!(
                "runs in terminal {} (its output follows)",
                tool.terminals.join(", ")
            ));
        }
        if let Some(input) = &tool.input {
            egui::CollapsingHeader::new("Arguments")
                .id_salt(("arguments", n))
                .show(ui, |ui| monospace_block(ui, ("arguments-text", n), input));
        }
        for (k, output) in tool.output.iter().enumerate() {
            egui::CollapsingHeader::new("Result")
                .id_salt(("result", n, k))
                .default_open(tool.state == ToolCallStatus::Failed)
                .show(ui, |ui| monospace_block(ui, ("result-text", n, k), output));
        }
    });
}

fn terminal_card(ui: &mut Ui, term: &TerminalEntry, n: usize) {
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.set_width(ui.available_width());
        ui.horizontal_wrapped(|ui| {
            match term.exit_code {
                Some(0) => cocode_ui::badge(ui, "exited 0", Tone::Success),
                Some(code) => cocode_ui::badge(ui, &format!("exited {code}"), Tone::Danger),
                None => cocode_ui::badge(ui, "was stopped", Tone::Warning),
            };
            ui.label(
                egui::RichText::new(format!("Command output · terminal {}", term.terminal_id))
                    .strong(),
            );
            if term.cut {
                ui.weak("(earlier output not kept)");
            }
        });
        if !term.output.is_empty() {
            monospace_block(ui, ("terminal-output", n), &term.output);
        }
    });
}

/// Text in a bounded, scrollable monospace block.
fn monospace_block(ui: &mut Ui, id: impl std::hash::Hash + std::fmt::Debug, text: &str) {
    egui::ScrollArea::both()
        .id_salt(id)
        .max_height(200.0)
        .auto_shrink([false, true])
        .show(ui, |ui| {
            ui.add(egui::Label::new(egui::RichText::new(text).monospace()).extend());
        });
}
