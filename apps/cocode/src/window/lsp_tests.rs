//! Language servers in the window, driven as a person would, against a
//! real pyright: a diagnostic shows in the gutter, in the status bar and
//! in the Problems panel, and choosing it there moves the cursor to it;
//! the completion list opens with Ctrl+Space and Enter inserts the choice.

use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use pretty_assertions::assert_eq;

use super::*;
use crate::window::testing::{fixture_workspace, harness, open_in_editor, run_until, shown};

use crate::window::testing::peers;

/// The tests that start pyright take turns: one counts this process's
/// pyright children, which another's would add to.
fn pyright_turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn a_diagnostic_shows_in_the_gutter_and_problems_and_choosing_it_moves_the_cursor() {
    if !peers::require_program("pyright-langserver") {
        return;
    }
    let _turn = pyright_turn();
    let (_dir, root) = fixture_workspace(&[("main.py", "s = \"한글🙂\"\nn: int = \"text\"\n")]);
    let mut h = harness(Some(root));
    let id = open_in_editor(&mut h, "main.py");
    run_until(&mut h, "pyright's diagnostic", |h| {
        !h.state().editors.get(id).unwrap().diagnostics.is_empty()
    });
    let tab = h.state().editors.get(id).unwrap();
    assert_eq!(tab.diagnostics.len(), 1);
    let d = &tab.diagnostics[0];
    assert_eq!(
        (d.range.start.line, d.range.start.column, d.range.end.column),
        (1, 9, 15)
    );
    assert_eq!(
        views::editor_lsp::gutter_severity(tab, 1),
        Some(cocode_lsp::Severity::Error)
    );
    assert_eq!(views::editor_lsp::gutter_severity(tab, 0), None);
    // The status bar counts it and opens the Problems panel.
    h.get_by_label("⊗ 1  ⚠ 0").click();
    h.run_steps(3);
    // Its row names the place 1-based, in characters, then the message.
    assert!(h.query_by_label("1 in all, 1 file").is_some());
    let row = h
        .query_all_by_label_contains("[2:10]  Type \"Literal['text']\" is not assignable")
        .next()
        .expect("the problem's row");
    assert!(h.query_by_label_contains("· Pyright").is_some());
    row.click();
    run_until(&mut h, "the cursor on the problem", |h| {
        shown(h, id).contains("«\"text\"|»")
    });
    assert_eq!(shown(&h, id), "s = \"한글🙂\"\nn: int = «\"text\"|»\n");
}

#[test]
fn the_completion_list_opens_with_ctrl_space_and_enter_inserts_the_choice() {
    if !peers::require_program("pyright-langserver") {
        return;
    }
    let _turn = pyright_turn();
    let (_dir, root) = fixture_workspace(&[("main.py", "import os\nos.pa")]);
    let mut h = harness(Some(root));
    let id = open_in_editor(&mut h, "main.py");
    h.key_press_modifiers(Modifiers::COMMAND, Key::End);
    h.run_steps(2);
    // The server must have the document before it is asked.
    run_until(&mut h, "the server", |h| {
        h.state().lsp.as_ref().is_some_and(|l| {
            l.statuses
                .iter()
                .any(|s| s.id == "pyright" && s.state == cocode_lsp::ServerState::Running)
        })
    });
    // A busy pyright may answer an empty list while it still analyzes the
    // file, as a person would see; they ask again, and so does the test.
    for attempt in 1..=10 {
        h.key_press_modifiers(Modifiers::CTRL, Key::Space);
        run_until(&mut h, "the completion list's answer", |h| {
            h.state()
                .editors
                .get(id)
                .unwrap()
                .completion
                .as_ref()
                .is_some_and(|c| c.answered)
        });
        let offered = h
            .state()
            .editors
            .get(id)
            .unwrap()
            .completion
            .as_ref()
            .is_some_and(|c| !c.items.is_empty());
        if offered {
            break;
        }
        assert!(attempt < 10, "pyright never offered completions");
        h.key_press(Key::Escape);
        h.run_steps(2);
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    assert!(h.query_by_label("Enter: insert · Esc: close").is_some());
    // Down to "path" among what matches "pa", then Enter.
    let steps = {
        let popup = h
            .state()
            .editors
            .get(id)
            .unwrap()
            .completion
            .clone()
            .unwrap();
        let visible = popup.visible("pa");
        visible
            .iter()
            .position(|&i| popup.items[i].label == "path")
            .unwrap_or_else(|| {
                panic!(
                    "path is not offered: {} — {:?}",
                    shown(&h, id),
                    popup
                        .items
                        .iter()
                        .map(|c| c.label.as_str())
                        .take(20)
                        .collect::<Vec<_>>()
                )
            })
    };
    for _ in 0..steps {
        h.key_press(Key::ArrowDown);
        h.run_steps(1);
    }
    h.key_press(Key::Enter);
    h.run_steps(2);
    assert_eq!(shown(&h, id), "import os\nos.path|");
    assert!(h.state().editors.get(id).unwrap().completion.is_none());
    assert!(h.query_by_label("Enter: insert · Esc: close").is_none());
}

#[test]
fn a_missing_server_that_an_open_file_needs_says_how_to_install_it() {
    let (_dir, root) = fixture_workspace(&[
        ("main.zig", "const x = 1;\n"),
        (
            ".cocode/config/workspace.json",
            r#"{"version": 1, "language_servers": [{"id": "zig", "command": ["no-such-zls"], "extensions": ["zig"]}]}"#,
        ),
    ]);
    let mut h = harness(Some(root));
    open_in_editor(&mut h, "main.zig");
    // Both the open document and the missing program: under load the
    // count arrives before the lookup has ended.
    run_until(&mut h, "the server's state", |h| {
        h.state().lsp.as_ref().is_some_and(|l| {
            l.statuses.iter().any(|s| {
                s.id == "zig"
                    && s.documents == 1
                    && matches!(s.state, cocode_lsp::ServerState::NotInstalled { .. })
            })
        })
    });
    h.get_by_label("⊗ 0  ⚠ 0").click();
    h.run_steps(3);
    assert!(
        h.query_by_label(
            "zig is not installed, so open files get no diagnostics — install no-such-zls"
        )
        .is_some()
    );
}

/// A command a cloned folder's own configuration names for a language
/// server is not run when a file of its language opens: the Problems panel
/// names it and offers to trust it.
#[test]
fn a_server_command_the_folder_names_waits_for_trust_and_never_runs_before() {
    let marker = tempfile::tempdir().unwrap();
    let ran = marker.path().join("ran");
    let config = format!(
        r#"{{"version": 1, "language_servers": [{{"id": "zig", "command": ["sh", "-c", "echo ran > {}"], "extensions": ["zig"]}}]}}"#,
        ran.display()
    );
    let (_dir, root) = fixture_workspace(&[
        ("main.zig", "const x = 1;\n"),
        (".cocode/config/workspace.json", &config),
    ]);
    let mut h = harness(Some(root));
    open_in_editor(&mut h, "main.zig");
    run_until(&mut h, "the server held for trust", |h| {
        h.state().lsp.as_ref().is_some_and(|l| {
            l.statuses.iter().any(|s| {
                s.id == "zig"
                    && s.documents == 1
                    && matches!(s.state, cocode_lsp::ServerState::Untrusted { .. })
            })
        })
    });
    h.get_by_label("⊗ 0  ⚠ 0").click();
    h.run_steps(3);
    let text = format!(
        "zig is not started: this folder's .cocode/config/workspace.json names its command, sh -c 'echo ran > {}'. Start it only if you trust this folder.",
        ran.display()
    );
    assert!(h.query_by_label(&text).is_some(), "{text}");
    assert!(h.query_by_label("Trust and start").is_some());
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        !ran.exists(),
        "the folder's command ran before it was trusted"
    );
}

/// A server that exits as it starts shows as stopped: in the status bar
/// (the error count alone would read as clean) and in the Problems panel
/// with its last words and Restart.
#[test]
fn a_server_that_exits_shows_as_stopped_with_its_last_words_and_restart() {
    let config = r#"{"version": 1, "language_servers": [{"id": "zig", "command": ["sh", "-c", "echo 'starting' >&2; echo 'Could not find a valid zig installation' >&2; exit 3"], "extensions": ["zig"]}]}"#;
    let (_dir, root) = fixture_workspace(&[
        ("main.zig", "const x = 1;\n"),
        (".cocode/config/workspace.json", config),
    ]);
    let mut h = harness(Some(root));
    open_in_editor(&mut h, "main.zig");
    run_until(&mut h, "the server held for trust", |h| {
        h.state().lsp.as_ref().is_some_and(|l| {
            l.statuses.iter().any(|s| {
                s.id == "zig" && matches!(s.state, cocode_lsp::ServerState::Untrusted { .. })
            })
        })
    });
    h.get_by_label("⊗ 0  ⚠ 0").click();
    h.run_steps(3);
    h.get_by_label("Trust and start").click();
    run_until(&mut h, "the server stopped", |h| {
        h.state().lsp.as_ref().is_some_and(|l| {
            l.statuses
                .iter()
                .any(|s| s.id == "zig" && matches!(s.state, cocode_lsp::ServerState::Failed { .. }))
        })
    });
    h.run_steps(3);
    // The status bar says so, beside the count.
    assert!(h.query_by_label("zig stopped").is_some());
    let reason = h
        .state()
        .lsp
        .as_ref()
        .and_then(|l| l.statuses.iter().find(|s| s.id == "zig"))
        .map(|s| s.state.describe())
        .unwrap_or_default();
    assert!(
        h.query_by_label_contains(
            "zig stopped: it exited with status 3: starting / Could not find a valid zig installation"
        )
        .is_some(),
        "{reason}"
    );
    assert!(h.query_by_label("Restart").is_some());
}

/// This process's children whose command line holds `name`.
#[cfg(target_os = "linux")]
fn children_named(name: &str) -> usize {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid …
            let after = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
            let mut fields = after.split_whitespace();
            let state = fields.next().unwrap_or("Z");
            let ppid = fields.next().unwrap_or("");
            ppid == me
                && state != "Z"
                && std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(name))
        })
        .count()
}

#[cfg(target_os = "linux")]
#[test]
fn closing_the_window_stops_its_language_servers() {
    if !peers::require_program("pyright-langserver") {
        return;
    }
    let _turn = pyright_turn();
    let (_dir, root) = fixture_workspace(&[("main.py", "x: int = 1\n")]);
    let mut h = harness(Some(root));
    open_in_editor(&mut h, "main.py");
    run_until(&mut h, "pyright running", |h| {
        h.state().lsp.as_ref().is_some_and(|l| {
            l.statuses
                .iter()
                .any(|s| s.id == "pyright" && s.state == cocode_lsp::ServerState::Running)
        })
    });
    assert_eq!(children_named("pyright"), 1);
    drop(h);
    assert_eq!(children_named("pyright"), 0);
}
