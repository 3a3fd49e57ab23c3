//! The Source Control panel: the branch (and a picker to switch or create
//! one), the commit message with Commit and Amend, the changed files in
//! VS Code's groups (merge conflicts, staged, changes, untracked) with
//! stage and unstage per file and per group, one file's hunks with stage
//! and unstage per hunk, git's own words when it refuses, and the last
//! commits.

use std::path::Path;

use cocode_git::{Hunk, Kind, LineSign, RepoState};
use cocode_ui::{Theme, Tone};
use egui::text::LayoutJob;
use egui::{Key, RichText, TextFormat, TextStyle, Ui};

use crate::window::command::Command;
use crate::window::git_service::{DiffSide, FileDiff};
use crate::window::keymap::Chord;
use crate::window::scm::{Entry, Focus, GitCommand, Groups, Outcome, Selected, SourceControl};
use crate::window::views::explorer::git_color;
use cocode_git::GitAction;
use cocode_platform::Os;

/// What the panel shows besides its own state.
#[derive(Debug)]
pub struct Context<'a> {
    /// The open folder.
    pub root: Option<&'a Path>,
    /// What git says of it (`None`: not known yet, or in no repository).
    pub state: Option<&'a RepoState>,
    /// Why git's state could not be read.
    pub problem: Option<&'a str>,
    pub os: Os,
}

fn git(action: GitAction) -> Command {
    Command::Git(GitCommand::Perform(action))
}

/// Draws the panel.
pub fn show(ui: &mut Ui, scm: &mut SourceControl, cx: &Context<'_>, commands: &mut Vec<Command>) {
    if cx.root.is_none() {
        cocode_ui::empty_state(ui, "No folder is open", "Open a folder to see its changes.");
        return;
    }
    if let Some(problem) = cx.problem {
        cocode_ui::badge(ui, &format!("git: {problem}"), Tone::Danger);
    }
    let Some(state) = cx.state else {
        if scm.known && cx.problem.is_none() {
            cocode_ui::empty_state(
                ui,
                "This folder is not in a git repository",
                "Start one here to track its changes.",
            );
            ui.vertical_centered(|ui| {
                let busy = !scm.running.is_empty();
                if ui
                    .add_enabled(!busy, egui::Button::new("Initialize Repository"))
                    .clicked()
                {
                    commands.push(git(GitAction::Init));
                }
            });
            outcome(ui, scm, commands);
        } else if cx.problem.is_none() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Reading git's state…");
            });
        }
        return;
    };
    branch_row(ui, scm, state, commands);
    if let Some(op) = &state.operation {
        cocode_ui::badge(
            ui,
            &format!("A {op} is in progress: resolve the conflicts, stage them, then commit."),
            Tone::Warning,
        );
    }
    let groups = Groups::of(state);
    commit_box(ui, scm, state, &groups, cx.os, commands);
    outcome(ui, scm, commands);
    confirm_discard(ui, scm, commands);
    ui.separator();
    egui::ScrollArea::vertical()
        .id_salt("scm-files")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            if groups == Groups::default() {
                ui.label(RichText::new("No changes.").weak());
            }
            group(
                ui,
                scm,
                "Merge conflicts",
                &groups.conflicts,
                Side::Conflict,
                commands,
            );
            group(
                ui,
                scm,
                "Staged changes",
                &groups.staged,
                Side::Staged,
                commands,
            );
            group(ui, scm, "Changes", &groups.changes, Side::Changes, commands);
            group(
                ui,
                scm,
                "Untracked",
                &groups.untracked,
                Side::Changes,
                commands,
            );
            discarded(ui, scm, commands);
            history(ui, scm);
        });
}

/// The branch, ahead and behind, and the picker.
fn branch_row(
    ui: &mut Ui,
    scm: &mut SourceControl,
    state: &RepoState,
    commands: &mut Vec<Command>,
) {
    let (text, hover) = crate::window::scm::branch_label(state);
    ui.horizontal(|ui| {
        ui.label("Branch");
        if ui
            .button(RichText::new(&text).strong())
            .on_hover_text(format!("{hover}\nClick to switch or create a branch."))
            .clicked()
        {
            commands.push(Command::Git(GitCommand::ToggleBranches));
        }
    });
    let Some(name) = &mut scm.branch_picker else {
        return;
    };
    egui::Frame::group(ui.style()).show(ui, |ui| {
        let field = ui.add(
            egui::TextEdit::singleline(name)
                .hint_text("Branch name")
                .desired_width(f32::INFINITY),
        );
        if scm.focus == Some(Focus::Branch) {
            field.request_focus();
            scm.focus = None;
        }
        let typed = name.trim().to_owned();
        let busy = !scm.running.is_empty();
        let current = match &state.head {
            cocode_git::Head::Branch(b) | cocode_git::Head::Unborn(b) => Some(b.as_str()),
            cocode_git::Head::Detached(_) => None,
        };
        for branch in scm
            .branches
            .iter()
            .filter(|b| typed.is_empty() || b.contains(typed.as_str()))
        {
            let here = current == Some(branch.as_str());
            let label = if here {
                format!("{branch}  (current)")
            } else {
                branch.clone()
            };
            if ui
                .add_enabled(!busy && !here, egui::Button::new(label).frame(false))
                .on_hover_text(format!("Switch to {branch}"))
                .clicked()
            {
                commands.push(git(GitAction::Switch(branch.clone())));
            }
        }
        let exists = scm.branches.contains(&typed);
        let enter = field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
        if !typed.is_empty() && !exists {
            let create = ui.add_enabled(
                !busy,
                egui::Button::new(format!("Create branch “{typed}” here and switch to it")),
            );
            if create.clicked() || (enter && !busy) {
                commands.push(git(GitAction::CreateBranch(typed)));
            }
        }
    });
}

/// The message box, Commit and Amend; Ctrl/Cmd+Enter commits.
fn commit_box(
    ui: &mut Ui,
    scm: &mut SourceControl,
    state: &RepoState,
    groups: &Groups,
    os: Os,
    commands: &mut Vec<Command>,
) {
    let chord = Chord::primary(Key::Enter);
    let on = match &state.head {
        cocode_git::Head::Branch(b) | cocode_git::Head::Unborn(b) => b.clone(),
        cocode_git::Head::Detached(id) => id.clone(),
    };
    let label = ui.label(RichText::new("Commit message").small().weak());
    let field = ui.add(
        egui::TextEdit::multiline(&mut scm.message)
            .hint_text(format!("Message ({} to commit on {on})", chord.label(os)))
            .desired_rows(3)
            .desired_width(f32::INFINITY),
    );
    let field = field.labelled_by(label.id);
    if scm.focus == Some(Focus::Message) {
        field.request_focus();
        scm.focus = None;
    }
    let busy = !scm.running.is_empty();
    let can = !busy
        && groups.conflicts.is_empty()
        && (scm.amend || (!groups.staged.is_empty() && !scm.message.trim().is_empty()));
    let pressed = field.has_focus()
        && ui.input(|i| {
            i.events.iter().any(|e| {
                matches!(e, egui::Event::Key { key, pressed: true, modifiers, .. }
                    if chord.matches(*key, *modifiers, os))
            })
        });
    ui.horizontal(|ui| {
        let label = if scm.amend { "Amend" } else { "Commit" };
        let why = if busy {
            "git is at work"
        } else if !groups.conflicts.is_empty() {
            "Resolve the merge conflicts first"
        } else if groups.staged.is_empty() && !scm.amend {
            "Stage the changes to commit first"
        } else if scm.message.trim().is_empty() && !scm.amend {
            "Write a message first"
        } else {
            ""
        };
        let button = ui
            .add_enabled(can, egui::Button::new(label))
            .on_hover_text(format!("{label} ({})", chord.label(os)));
        let button = if why.is_empty() {
            button
        } else {
            button.on_disabled_hover_text(why)
        };
        if button.clicked() || (pressed && can) {
            commands.push(Command::Git(GitCommand::Commit));
        }
        ui.checkbox(&mut scm.amend, "Amend the last commit")
            .on_hover_text("Replace the last commit; an empty message keeps its message");
    });
    if !scm.running.is_empty() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(format!("git: {}…", scm.running.join(", ")));
        });
    }
}

/// How the last command went: git's words when it refused.
fn outcome(ui: &mut Ui, scm: &SourceControl, commands: &mut Vec<Command>) {
    let Some(outcome) = &scm.outcome else {
        return;
    };
    match outcome {
        Outcome::Done(note) => {
            // git's first line can be long (a commit's subject): it wraps
            // instead of widening the panel.
            ui.horizontal_wrapped(|ui| {
                if ui.small_button("×").on_hover_text("Dismiss").clicked() {
                    commands.push(Command::Git(GitCommand::DismissOutcome));
                }
                ui.add(egui::Label::new(cocode_ui::badge_text(ui, note, Tone::Success)).wrap());
            });
        }
        Outcome::Discarded(discard) => {
            ui.horizontal_wrapped(|ui| {
                ui.add(
                    egui::Label::new(cocode_ui::badge_text(
                        ui,
                        &format!("Discarded the changes to {}.", discard.named()),
                        Tone::Success,
                    ))
                    .wrap(),
                );
                if ui
                    .small_button("Undo Discard")
                    .on_hover_text("Put back what the discard removed")
                    .clicked()
                {
                    commands.push(Command::Git(GitCommand::UndoDiscard(discard.id)));
                }
                if ui.small_button("×").on_hover_text("Dismiss").clicked() {
                    commands.push(Command::Git(GitCommand::DismissOutcome));
                }
            });
        }
        Outcome::Failed(words) => {
            egui::Frame::group(ui.style()).show(ui, |ui| {
                ui.horizontal(|ui| {
                    cocode_ui::badge(ui, "git refused", Tone::Danger);
                    if ui.small_button("×").on_hover_text("Dismiss").clicked() {
                        commands.push(Command::Git(GitCommand::DismissOutcome));
                    }
                });
                egui::ScrollArea::vertical()
                    .id_salt("scm-outcome")
                    .max_height(160.0)
                    .show(ui, |ui| {
                        ui.add(egui::Label::new(RichText::new(words).monospace()).wrap());
                    });
            });
        }
    }
}

/// The question before a discard.
fn confirm_discard(ui: &mut Ui, scm: &SourceControl, commands: &mut Vec<Command>) {
    let Some(paths) = &scm.confirm_discard else {
        return;
    };
    let named = crate::window::scm::Discard {
        id: 0,
        paths: paths.clone(),
    }
    .named();
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.label(format!("Discard the changes to {named}?"));
        ui.label(
            RichText::new(
                "Changed files go back to their staged (or committed) text; untracked files \
                 are removed. cocode keeps what they hold now: Undo Discard puts it back.",
            )
            .weak()
            .small(),
        );
        ui.horizontal(|ui| {
            if ui.button("Discard Changes").clicked() {
                commands.push(Command::Git(GitCommand::ConfirmDiscard));
            }
            if ui.button("Cancel").clicked() {
                commands.push(Command::Git(GitCommand::CancelDiscard));
            }
        });
    });
}

/// This window's discards, each with its undo.
fn discarded(ui: &mut Ui, scm: &SourceControl, commands: &mut Vec<Command>) {
    if scm.discards.is_empty() {
        return;
    }
    ui.separator();
    egui::CollapsingHeader::new(
        RichText::new(format!("Discarded ({})", scm.discards.len())).strong(),
    )
    .id_salt("scm-discarded")
    .default_open(false)
    .show(ui, |ui| {
        for discard in scm.discards.iter().rev() {
            ui.horizontal(|ui| {
                ui.label(discard.named())
                    .on_hover_text(discard.paths.join("\n"));
                if ui.small_button("Undo Discard").clicked() {
                    commands.push(Command::Git(GitCommand::UndoDiscard(discard.id)));
                }
            });
        }
    });
}

/// Which side of the index a group's files are on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Staged,
    Changes,
    Conflict,
}

fn group(
    ui: &mut Ui,
    scm: &mut SourceControl,
    title: &str,
    entries: &[Entry],
    side: Side,
    commands: &mut Vec<Command>,
) {
    if entries.is_empty() {
        return;
    }
    let busy = !scm.running.is_empty();
    ui.horizontal(|ui| {
        ui.label(RichText::new(format!("{title} ({})", entries.len())).strong());
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let (label, action) = match side {
                Side::Staged => ("Unstage All", GitAction::Unstage(Groups::paths(entries))),
                Side::Changes | Side::Conflict => {
                    ("Stage All", GitAction::Stage(Groups::paths(entries)))
                }
            };
            if ui
                .add_enabled(!busy, egui::Button::new(label).small())
                .clicked()
            {
                commands.push(git(action));
            }
            let files: Vec<String> = entries
                .iter()
                .filter(|e| !e.folder)
                .map(|e| e.path.clone())
                .collect();
            if side == Side::Changes
                && !files.is_empty()
                && ui
                    .add_enabled(!busy, egui::Button::new("Discard All").small())
                    .on_hover_text("Discard every change in this group (asks first)")
                    .clicked()
            {
                commands.push(Command::Git(GitCommand::Discard(files)));
            }
        });
    });
    for entry in entries {
        file_row(ui, scm, entry, side, busy, commands);
        if is_selected(scm, entry, side) {
            if let Some(diff) = scm.diff.as_ref().filter(|d| d.path == entry.path) {
                let shown = match side {
                    Side::Staged => &diff.staged,
                    Side::Changes | Side::Conflict => &diff.unstaged,
                };
                hunks(ui, diff, shown, side, busy, commands);
            } else if let Some(problem) = &scm.diff_problem {
                cocode_ui::badge(ui, problem, Tone::Danger);
            }
        }
    }
    ui.add_space(4.0);
}

/// Whether `entry` of a group on `side` is the chosen file.
fn is_selected(scm: &SourceControl, entry: &Entry, side: Side) -> bool {
    scm.selected
        .as_ref()
        .is_some_and(|s| s.path == entry.path && s.staged == (side == Side::Staged))
}

fn file_row(
    ui: &mut Ui,
    scm: &SourceControl,
    entry: &Entry,
    side: Side,
    busy: bool,
    commands: &mut Vec<Command>,
) {
    let (folder, name) = entry
        .path
        .rsplit_once('/')
        .map_or(("", entry.path.as_str()), |(f, n)| (f, n));
    let color = git_color(entry.kind, ui.visuals().dark_mode);
    ui.horizontal(|ui| {
        let selected = is_selected(scm, entry, side);
        // A folder git shows whole reads as one (`target/`).
        let slash = if entry.folder { "/" } else { "" };
        let mut text = format!("{}  {name}{slash}", entry.kind.letter());
        if let Some(from) = &entry.from {
            text = format!("{text}  ← {from}");
        }
        let row = ui
            .selectable_label(selected, RichText::new(text).color(color))
            .on_hover_text(format!("{} — {}", entry.path, entry.kind.words()));
        if row.clicked() {
            commands.push(Command::Git(GitCommand::Select(Selected {
                path: entry.path.clone(),
                staged: side == Side::Staged,
            })));
        }
        if !folder.is_empty() {
            ui.label(RichText::new(folder).weak().small());
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let (label, hover, action) = match side {
                Side::Staged => (
                    "−",
                    "Unstage",
                    GitAction::Unstage(Groups::paths(std::slice::from_ref(entry))),
                ),
                Side::Changes => ("+", "Stage", GitAction::Stage(vec![entry.path.clone()])),
                Side::Conflict => (
                    "+",
                    "Stage (mark the conflict resolved)",
                    GitAction::Stage(vec![entry.path.clone()]),
                ),
            };
            if ui
                .add_enabled(!busy, egui::Button::new(label).small())
                .on_hover_text(hover)
                .clicked()
            {
                commands.push(git(action));
            }
            if side == Side::Changes
                && !entry.folder
                && ui
                    .add_enabled(!busy, egui::Button::new("Discard").small())
                    .on_hover_text("Discard the changes (asks first; can be undone)")
                    .clicked()
            {
                commands.push(Command::Git(GitCommand::Discard(vec![entry.path.clone()])));
            }
            // A folder git shows whole has no file to open.
            if entry.kind != Kind::Deleted
                && !entry.folder
                && ui
                    .small_button("Open")
                    .on_hover_text("Open the file")
                    .clicked()
            {
                commands.push(Command::Git(GitCommand::Open(entry.path.clone())));
            }
        });
    });
}

/// One side of a file's changes, hunk by hunk, each with its button.
fn hunks(
    ui: &mut Ui,
    diff: &FileDiff,
    shown: &DiffSide,
    side: Side,
    busy: bool,
    commands: &mut Vec<Command>,
) {
    let hunks = match shown {
        DiffSide::Unchanged => return,
        DiffSide::Binary => {
            ui.label(RichText::new("Binary file: it is staged whole.").weak());
            return;
        }
        DiffSide::TooLarge => {
            ui.label(RichText::new("Too large to show here: it is staged whole.").weak());
            return;
        }
        DiffSide::Hunks(hunks) => hunks,
    };
    for (i, hunk) in hunks.iter().enumerate() {
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.horizontal(|ui| {
                let action = match side {
                    Side::Staged => Some((
                        "Unstage Hunk",
                        GitAction::UnstagePatch(hunk.patch(&diff.repo_path)),
                    )),
                    Side::Changes => Some((
                        "Stage Hunk",
                        GitAction::StagePatch(hunk.patch(&diff.repo_path)),
                    )),
                    Side::Conflict => None,
                };
                if let Some((label, action)) = action
                    && ui
                        .add_enabled(!busy, egui::Button::new(label).small())
                        .on_hover_text(format!("{label} {} of {}", i + 1, hunks.len()))
                        .clicked()
                {
                    commands.push(git(action));
                }
                let (added, removed) = hunk.counts();
                ui.label(RichText::new(hunk.header()).monospace().weak());
                ui.label(RichText::new(format!("+{added} −{removed}")).small().weak());
            });
            // Long lines scroll inside the hunk; the panel keeps its width.
            egui::ScrollArea::horizontal()
                .id_salt(("scm-hunk", side == Side::Staged, i))
                .auto_shrink([false, true])
                .show(ui, |ui| hunk_lines(ui, hunk));
        });
    }
}

/// A hunk's lines, coloured as a diff.
fn hunk_lines(ui: &mut Ui, hunk: &Hunk) {
    let font = TextStyle::Monospace.resolve(ui.style());
    let theme = if ui.visuals().dark_mode {
        Theme::Dark
    } else {
        Theme::Light
    };
    let plain = ui.visuals().text_color();
    let mut job = LayoutJob::default();
    for (n, line) in hunk.lines.iter().enumerate() {
        let color = match line.sign {
            LineSign::Context => plain,
            LineSign::Added => Tone::Success.color(theme),
            LineSign::Removed => Tone::Danger.color(theme),
        };
        if n > 0 {
            job.append("\n", 0.0, TextFormat::simple(font.clone(), color));
        }
        job.append(
            &format!("{}{}", line.sign.mark(), line.shown()),
            0.0,
            TextFormat::simple(font.clone(), color),
        );
    }
    ui.add(egui::Label::new(job).extend());
}

/// The last commits.
fn history(ui: &mut Ui, scm: &SourceControl) {
    if scm.commits.is_empty() {
        return;
    }
    ui.separator();
    egui::CollapsingHeader::new(RichText::new("Recent commits").strong())
        .id_salt("scm-commits")
        .default_open(true)
        .show(ui, |ui| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
            for commit in &scm.commits {
                ui.horizontal(|ui| {
                    ui.label(RichText::new(&commit.id).monospace().weak());
                    ui.add(egui::Label::new(&commit.summary).truncate())
                        .on_hover_text(format!(
                            "{} — {}, {}",
                            commit.id,
                            commit.author,
                            ago(commit.time, now)
                        ));
                });
            }
        });
}

/// How long ago `time` was, in words (seconds since the epoch).
pub fn ago(time: i64, now: i64) -> String {
    let secs = (now - time).max(0);
    let plural = |n: i64, unit: &str| {
        if n == 1 {
            format!("1 {unit} ago")
        } else {
            format!("{n} {unit}s ago")
        }
    };
    match secs {
        0..60 => "just now".to_owned(),
        60..3600 => plural(secs / 60, "minute"),
        3600..86_400 => plural(secs / 3600, "hour"),
        86_400..2_592_000 => plural(secs / 86_400, "day"),
        2_592_000..31_536_000 => plural(secs / 2_592_000, "month"),
        _ => plural(secs / 31_536_000, "year"),
    }
}

#[cfg(test)]
mod tests {
    use super::ago;

    #[test]
    fn times_read_as_people_say_them() {
        let now = 1_000_000_000;
        assert_eq!(ago(now - 5, now), "just now");
        assert_eq!(ago(now + 30, now), "just now");
        assert_eq!(ago(now - 60, now), "1 minute ago");
        assert_eq!(ago(now - 7_200, now), "2 hours ago");
        assert_eq!(ago(now - 86_400 * 3, now), "3 days ago");
        assert_eq!(ago(now - 2_592_000 * 2, now), "2 months ago");
        assert_eq!(ago(now - 31_536_000 * 5, now), "5 years ago");
    }
}
