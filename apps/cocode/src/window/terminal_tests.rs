//! Terminals in the window: a real shell in a tab, typing, selection and
//! copy, a busy terminal's close prompt, an agent's command in its own tab.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixture workspaces on disk"
)]

use super::*;
use crate::window::command::TerminalCommand;
use crate::window::terminals::{TabKind, TabState};
use crate::window::testing::{harness, run_until};
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use pretty_assertions::assert_eq;

fn screen_text(h: &egui_kittest::Harness<'_, CocodeApp>, id: u32) -> String {
    h.state()
        .terminals
        .get(id)
        .and_then(|t| t.session())
        .map(|s| s.screen(&cocode_terminal::Palette::dark()).text())
        .unwrap_or_default()
}

fn only_shell(h: &egui_kittest::Harness<'_, CocodeApp>) -> u32 {
    let shells: Vec<u32> = h.state().terminals.shells().collect();
    assert_eq!(shells.len(), 1, "one shell");
    shells[0]
}

/// Ctrl+Backtick opens the window's only shell; waits until it runs with the
/// keyboard focus in its grid (typing goes to the shell).
fn open_shell(h: &mut egui_kittest::Harness<'_, CocodeApp>) -> u32 {
    h.key_press_modifiers(Modifiers::CTRL, Key::Backtick);
    run_until(h, "the shell", |h| {
        h.state().terminals.shells().next().is_some_and(|id| {
            matches!(
                h.state().terminals.get(id).map(|t| &t.state),
                Some(TabState::Live(_))
            )
        })
    });
    let id = only_shell(h);
    run_until(h, "the focus", |h| {
        h.state().terminals.last_used == Some(id)
    });
    id
}

fn drag(h: &mut egui_kittest::Harness<'_, CocodeApp>, from: egui::Pos2, to: egui::Pos2) {
    h.event(egui::Event::PointerMoved(from));
    h.step();
    h.event(egui::Event::PointerButton {
        pos: from,
        button: egui::PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.step();
    for step in [0.25, 0.5, 0.75, 1.0] {
        h.event(egui::Event::PointerMoved(from + (to - from) * step));
        h.step();
    }
    h.event(egui::Event::PointerButton {
        pos: to,
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.step();
}

/// Text the last frame put on the clipboard.
fn copied(h: &egui_kittest::Harness<'_, CocodeApp>) -> Vec<String> {
    h.output()
        .platform_output
        .commands
        .iter()
        .filter_map(|c| match c {
            egui::OutputCommand::CopyText(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn ctrl_backtick_opens_a_shell_in_the_workspace_that_takes_typing_and_copies_a_selection() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker.txt"), "x").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root.clone()));
    h.run_steps(2);
    let id = open_shell(&mut h);
    assert!(h.state().dock.find_tab(&PanelId::Terminal(id)).is_some());
    for text in ["ls; ", "echo 한", "글"] {
        h.event(egui::Event::Text(text.to_owned()));
        h.step();
    }
    h.key_press(Key::Enter);
    run_until(&mut h, "the output", |h| {
        let text = screen_text(h, id);
        text.lines().any(|l| l == "한글") && text.contains("marker.txt")
    });

    // Drag over the output line, then Ctrl+C copies it (and does not
    // interrupt anything).
    let text = screen_text(&h, id);
    let row = text.lines().position(|l| l == "한글").unwrap();
    let grid = h.get_by_label(&format!("Terminal {id}")).rect();
    let cell = h.ctx.fonts_mut(|f| {
        let font = egui::FontId::monospace(14.0);
        egui::vec2(f.glyph_width(&font, 'M'), f.row_height(&font))
    });
    let y = grid.min.y + 4.0 + (f32::from(u16::try_from(row).unwrap()) + 0.5) * cell.y;
    let from = egui::pos2(grid.min.x + 4.0 + 0.2 * cell.x, y);
    let to = egui::pos2(grid.min.x + 4.0 + 3.8 * cell.x, y);
    drag(&mut h, from, to);
    assert_eq!(
        h.state().terminals.last_used,
        Some(id),
        "the grid kept the focus"
    );
    let selected = h
        .state()
        .terminals
        .get(id)
        .and_then(|t| t.session())
        .and_then(cocode_terminal::TerminalSession::selection_text);
    assert_eq!(selected.as_deref(), Some("한글"));
    h.event(egui::Event::Copy);
    h.step();
    let copied = copied(&h);
    assert_eq!(copied, ["한글"]);

    // Ctrl+C without a selection interrupts the running program.
    h.event(egui::Event::Text("sleep 60".to_owned()));
    h.step();
    h.key_press(Key::Enter);
    run_until(&mut h, "the busy shell", |h| h.state().terminals.busy(id));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while h.state().terminals.busy(id) {
        // Pressed again if the first one landed between fork and exec.
        h.event(egui::Event::Copy);
        h.step();
        assert!(
            std::time::Instant::now() < deadline,
            "Ctrl+C did not interrupt"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }

    // A busy terminal asks before its tab closes and its program ends.
    h.event(egui::Event::Text("sleep 60".to_owned()));
    h.step();
    h.key_press(Key::Enter);
    run_until(&mut h, "the busy shell", |h| h.state().terminals.busy(id));
    h.state_mut()
        .commands
        .push(Command::Terminal(TerminalCommand::CloseTerminal {
            id,
            confirmed: false,
        }));
    run_until(&mut h, "the close prompt", |h| {
        h.query_by_label("End the running program?").is_some()
    });
    assert!(
        h.state().terminals.get(id).is_some(),
        "nothing closed before the answer"
    );
    h.get_by_label("End and Close").click();
    run_until(&mut h, "the closed tab", |h| {
        h.state().terminals.get(id).is_none()
    });
    assert!(h.state().dock.find_tab(&PanelId::Terminal(id)).is_none());
}

/// Runs `prompt` with the local agent in a fresh workspace, approves what
/// it asks, and returns the harness with the id of the command's tab.
fn agent_command(
    prompt: &str,
) -> (
    tempfile::TempDir,
    egui_kittest::Harness<'static, CocodeApp>,
    u32,
) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("readme.md"), "hi\n").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  readme.md").is_some()
    });
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .click();
    h.run_steps(2);
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .type_text(prompt);
    h.run_steps(2);
    h.get_by_label("Run task").click();
    let agent_tab = |h: &egui_kittest::Harness<'_, CocodeApp>| {
        h.state().terminals.ids().find(|id| {
            matches!(
                h.state().terminals.get(*id).map(|t| &t.kind),
                Some(TabKind::Agent { .. })
            )
        })
    };
    // The command may wait for a person's approval first.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while agent_tab(&h).is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "no agent tab: {:?}",
            h.state().agent
        );
        if let Some(approve) = h.query_by_label("Approve") {
            approve.click();
        }
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let id = agent_tab(&h).unwrap();
    (dir, h, id)
}

#[test]
fn stop_on_an_agent_command_tab_stops_that_command() {
    let (_dir, mut h, id) = agent_command(r#"run "echo started; sleep 60; echo never""#);
    run_until(&mut h, "the command's first line", |h| {
        screen_text(h, id).lines().any(|l| l == "started")
    });
    h.get_by_label("Stop command").click();
    run_until(&mut h, "the stopped command", |h| {
        h.state()
            .terminals
            .get(id)
            .and_then(|t| t.session())
            .and_then(cocode_terminal::TerminalSession::exit)
            .is_some()
    });
    h.run_steps(2);
    h.get_by_label("The command was stopped");
    assert!(!screen_text(&h, id).contains("never"));
}

#[test]
fn an_agent_command_streams_into_its_own_read_only_tab() {
    let (_dir, mut h, id) = agent_command(r#"run "echo agent-만세; echo done""#);
    run_until(&mut h, "the command's output and end", |h| {
        screen_text(h, id).lines().any(|l| l == "agent-만세")
            && h.state()
                .terminals
                .get(id)
                .and_then(|t| t.session())
                .and_then(cocode_terminal::TerminalSession::exit)
                .is_some()
    });
    let tab = h.state().terminals.get(id).unwrap();
    let session = tab.session().unwrap();
    assert!(!session.interactive());
    assert_eq!(
        session.exit(),
        Some(cocode_core::process::ExitStatus::Code(0))
    );
    // Piped output's bare line feeds start new lines at the left edge, and
    // Hangul takes two cells.
    let screen = session.screen(&cocode_terminal::Palette::dark());
    let row = screen
        .text()
        .lines()
        .position(|l| l == "agent-만세")
        .unwrap();
    assert_eq!(screen.line_text(row + 1), "done");
    assert!(screen.row(row)[6].wide && screen.row(row)[7].spacer);
    assert!(tab.title().starts_with("Agent: "), "{}", tab.title());
    assert!(h.state().dock.find_tab(&PanelId::Terminal(id)).is_some());
    h.run_steps(2);
    h.get_by_label("The command exited successfully");
}

#[test]
fn ctrl_f_finds_in_the_scrollback_and_escape_closes_the_find_bar() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root));
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::CTRL, Key::Backtick);
    run_until(&mut h, "the focused shell", |h| {
        h.state().terminals.last_used.is_some()
    });
    let id = only_shell(&h);
    h.event(egui::Event::Text("seq 1 300".to_owned()));
    h.step();
    h.key_press(Key::Enter);
    run_until(&mut h, "the output's end", |h| {
        screen_text(h, id).lines().any(|l| l == "300")
    });
    h.key_press_modifiers(Modifiers::CTRL, Key::F);
    run_until(&mut h, "the find bar", |h| {
        h.query_by_label("Match case").is_some() || h.query_by_label("Aa").is_some()
    });
    h.event(egui::Event::Text("250".to_owned()));
    h.step();
    h.key_press(Key::Enter);
    h.run_steps(3);
    let session = |h: &egui_kittest::Harness<'_, CocodeApp>| {
        h.state()
            .terminals
            .get(id)
            .and_then(|t| t.session())
            .map(|s| {
                (
                    s.selection_text(),
                    s.screen(&cocode_terminal::Palette::dark()).display_offset > 0,
                )
            })
    };
    assert_eq!(session(&h), Some((Some("250".to_owned()), true)));
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert!(h.state().terminals.get(id).unwrap().view.find.is_none());
    assert_eq!(session(&h).unwrap().0, None);
    // The keyboard is back in the terminal.
    h.state_mut().terminals.last_used = None;
    run_until(&mut h, "the grid's focus", |h| {
        h.state().terminals.last_used == Some(id)
    });
    h.event(egui::Event::Text("echo back".to_owned()));
    h.step();
    h.key_press(Key::Enter);
    run_until(&mut h, "typing in the terminal again", |h| {
        screen_text(h, id).lines().any(|l| l == "back")
    });
}

/// Opening a folder ends the window's terminals: one running a program
/// asks first, even with no folder open yet.
#[test]
fn opening_a_folder_asks_before_it_ends_a_terminals_running_program() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(None);
    h.run_steps(2);
    let id = open_shell(&mut h);
    h.event(egui::Event::Text("sleep 60".to_owned()));
    h.step();
    h.key_press(Key::Enter);
    run_until(&mut h, "the busy shell", |h| h.state().terminals.busy(id));

    h.state().open_requests.push(vec![root.clone()]);
    let name = root.file_name().unwrap().to_string_lossy().into_owned();
    run_until(&mut h, "the question", |h| {
        h.query_by_label(&format!("Open {name}?")).is_some()
    });
    h.get_by_label("Opening it ends in this window:");
    h.get_by_label("• 1 terminal is running a program; it will be ended");
    h.run_steps(2);
    assert!(h.get_by_label("Open").is_focused());
    h.key_press(Key::Enter);
    run_until(&mut h, "the folder", |h| {
        h.state().workspace_root() == Some(&root)
    });
    assert!(h.state().terminals.get(id).is_none());
    assert!(h.state().dock.find_tab(&PanelId::Terminal(id)).is_none());
}
