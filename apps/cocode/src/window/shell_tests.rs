//! The window as a whole: the command palette, the keymap and a person's
//! overrides, what is remembered between runs, the welcome page and the
//! Approvals panel.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixture workspaces and state files on disk"
)]

use egui::{Event, Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable};
use pretty_assertions::assert_eq;

use crate::window::app::CocodeApp;
use crate::window::command::PanelId;
use crate::window::keymap::Keymap;
use crate::window::saved::SavedState;
use crate::window::testing::{fixture_workspace, harness, harness_with, open_in_editor, run_until};

/// A window that takes in the state saved in `file` and saves there.
fn harness_saving(file: &std::path::Path) -> Harness<'static, CocodeApp> {
    harness_with(None, |app| {
        app.crash_notice = None;
        app.adopt_saved(file.to_path_buf(), SavedState::load(file));
    })
}

fn key(h: &mut Harness<'static, CocodeApp>, modifiers: Modifiers, k: Key) {
    h.key_press_modifiers(modifiers, k);
    h.run_steps(2);
}

fn type_text(h: &mut Harness<'static, CocodeApp>, text: &str) {
    h.event(Event::Text(text.to_owned()));
    h.run_steps(2);
}

/// Whether `tab` is the one its area shows.
fn shown_in_its_area(h: &Harness<'_, CocodeApp>, tab: PanelId) -> bool {
    let dock = &h.state().dock;
    dock.find_tab(&tab).is_some_and(|path| {
        dock[path.surface][path.node]
            .get_leaf()
            .is_some_and(|leaf| leaf.active == path.tab)
    })
}

fn tabs(dock: &egui_dock::DockState<PanelId>) -> Vec<PanelId> {
    dock.iter_all_tabs().map(|(_, t)| *t).collect()
}

#[test]
fn the_palette_runs_a_command_chosen_by_typing_part_of_its_name() {
    let mut h = harness(None);
    h.run_steps(2);
    assert!(h.state().dock.find_tab(&PanelId::Trace).is_none());
    key(&mut h, Modifiers::COMMAND | Modifiers::SHIFT, Key::P);
    assert!(h.state().palette.open, "Ctrl+Shift+P opens the palette");
    assert!(!h.state().quick_open.open, "not the file finder");
    type_text(&mut h, "shw trce");
    // The best match is selected; its row says what it is.
    h.get_by_label_contains("View: Show Trace");
    h.key_press(Key::Enter);
    h.run_steps(3);
    assert!(!h.state().palette.open);
    assert!(h.state().dock.find_tab(&PanelId::Trace).is_some());
    // Used once, it comes first the next time.
    key(&mut h, Modifiers::COMMAND | Modifiers::SHIFT, Key::P);
    let first = h.state().palette.rows(&h.state().available_actions())[0].clone();
    assert_eq!(first.text, "View: Show Trace");
    assert!(first.recent);
    h.get_by_label_contains("View: Show Trace    recently used");
    // Escape closes it; nothing runs.
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(!h.state().palette.open);
    // Ctrl+P without Shift stays the file finder (with a folder open).
    let (_dir, root) = fixture_workspace(&[("a.txt", "a\n")]);
    let mut h = harness(Some(root));
    h.run_steps(2);
    key(&mut h, Modifiers::COMMAND, Key::P);
    assert!(h.state().quick_open.open);
    assert!(!h.state().palette.open);
}

#[test]
fn commands_that_cannot_run_now_are_left_out_of_the_palette_and_greyed_in_menus() {
    let mut h = harness(None);
    h.run_steps(2);
    key(&mut h, Modifiers::COMMAND | Modifiers::SHIFT, Key::P);
    type_text(&mut h, "save");
    let rows: Vec<String> = h
        .state()
        .palette
        .rows(&h.state().available_actions())
        .into_iter()
        .map(|r| r.text)
        .collect();
    assert!(!rows.iter().any(|r| r == "File: Save"), "{rows:?}");
    h.key_press(Key::Escape);
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(2);
    assert!(h.get_by_label("Save Ctrl+S").accesskit_node().is_disabled());
}

#[test]
fn a_keybinding_override_changes_the_key_the_menu_and_the_palette() {
    let overrides = r#"[
        { "key": "ctrl+k", "command": "view.commandPalette" },
        { "key": "ctrl+shift+p", "command": "-view.commandPalette" },
        { "key": "ctrl+j", "command": "view.nothing" }
    ]"#;
    let mut h = harness_with(None, |app| {
        app.crash_notice = None;
        app.keymap = Keymap::with_overrides(app.os, overrides);
    });
    h.run_steps(2);
    // What could not be used is said; the rest applies.
    h.get_by_label_contains("1 entry of your keybindings could not be used");
    h.get_by_label("keybindings.json, entry 3: “view.nothing” is not a command");
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Command Palette… Ctrl+K");
    h.key_press(Key::Escape);
    h.run_steps(2);
    // The old key does nothing; the new one opens the palette.
    key(&mut h, Modifiers::COMMAND | Modifiers::SHIFT, Key::P);
    assert!(!h.state().palette.open);
    key(&mut h, Modifiers::COMMAND, Key::K);
    assert!(h.state().palette.open);
    type_text(&mut h, "command palette");
    h.get_by_label_contains("View: Command Palette…    Ctrl+K");
    h.key_press(Key::Escape);
    h.run_steps(2);
    h.get_by_label("Dismiss").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains("could not be used").is_none());
}

#[test]
fn the_layout_and_open_editors_survive_a_restart() {
    let (_dir, root) = fixture_workspace(&[
        ("src/main.rs", "fn main() {\n    one();\n    two();\n}\n"),
        ("notes.md", "# notes\n"),
    ]);
    let state_dir = tempfile::tempdir().unwrap();
    let file = state_dir.path().join("window.json");
    let mut h = harness_saving(&file);
    h.state_mut().open_workspace(root.clone());
    h.run_steps(2);
    let notes = open_in_editor(&mut h, "notes.md");
    assert!(notes > 0);
    h.get_by_label("⏵ src").click();
    let main = open_in_editor(&mut h, "main.rs");
    // The cursor two lines down, four characters in.
    for _ in 0..2 {
        key(&mut h, Modifiers::NONE, Key::ArrowDown);
    }
    for _ in 0..4 {
        key(&mut h, Modifiers::NONE, Key::ArrowRight);
    }
    key(&mut h, Modifiers::COMMAND | Modifiers::SHIFT, Key::P);
    type_text(&mut h, "toggle light");
    h.key_press(Key::Enter);
    h.run_steps(2);
    h.state_mut().show_panel(PanelId::Trace);
    h.run_steps(2);
    assert_eq!(h.state().editors.active, Some(main));
    // The window closes.
    h.state_mut().save_state_now();
    drop(h);
    let saved = SavedState::load(&file);
    assert_eq!(saved.notice, None);
    assert_eq!(saved.state.recent, vec![root.clone()]);
    assert_eq!(saved.state.last_workspace, Some(root.clone()));
    assert_eq!(saved.state.theme.as_deref(), Some("light"));

    // A new start with the same state: the folder, its editors, the
    // cursor, the Trace panel and the theme are back.
    let mut h = harness_saving(&file);
    h.state_mut().open_workspace(root.clone());
    run_until(&mut h, "both editors loaded", |h| {
        h.state().editors.tabs.len() == 2
            && h.state()
                .editors
                .tabs
                .iter()
                .all(|t| t.body == crate::window::editors::TabBody::Text)
    });
    h.run_steps(2);
    assert_eq!(h.state().theme, cocode_ui::Theme::Light);
    let names: Vec<String> = h
        .state()
        .editors
        .tabs
        .iter()
        .map(crate::window::editors::EditorTab::name)
        .collect();
    assert_eq!(names, vec!["notes.md".to_owned(), "main.rs".to_owned()]);
    assert!(h.state().dock.find_tab(&PanelId::Trace).is_some());
    let main = h
        .state()
        .editors
        .tabs
        .iter()
        .find(|t| t.name() == "main.rs")
        .unwrap()
        .id;
    assert_eq!(
        crate::window::testing::shown(&h, main),
        "fn main() {\n    one();\n    |two();\n}\n"
    );
    assert!(h.state().dock.find_tab(&PanelId::Editor(main)).is_some());
}

#[test]
fn a_corrupt_state_file_falls_back_to_the_defaults_with_a_notice() {
    let state_dir = tempfile::tempdir().unwrap();
    let file = state_dir.path().join("window.json");
    std::fs::write(&file, "{ \"recent\": [ 1, ").unwrap();
    let mut h = harness_saving(&file);
    h.run_steps(2);
    h.get_by_label_contains("was not used: it is not valid");
    h.get_by_label_contains("window.json.broken");
    assert_eq!(
        tabs(&h.state().dock),
        tabs(&crate::window::app::default_layout()),
        "the default layout"
    );
    assert_eq!(
        std::fs::read_to_string(state_dir.path().join("window.json.broken")).unwrap(),
        "{ \"recent\": [ 1, "
    );
    h.get_by_label("Dismiss").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains("was not used").is_none());
}

#[test]
fn the_welcome_page_opens_a_recent_workspace_and_forgets_one() {
    let (_dir, root) = fixture_workspace(&[("hello.txt", "hi\n")]);
    let (_gone_dir, gone) = fixture_workspace(&[]);
    let state_dir = tempfile::tempdir().unwrap();
    let file = state_dir.path().join("window.json");
    let mut state = SavedState::default();
    state.opened(&gone);
    state.opened(&root);
    crate::host::config_file::replace_json(&file, &state).unwrap();
    let mut h = harness_saving(&file);
    h.run_steps(2);
    h.get_by_label("Welcome to cocode");
    let gone_name = gone.file_name().unwrap().to_string_lossy().into_owned();
    h.get_by_label(&gone_name);
    // Taken off the list: only the other stays.
    let remove = h.get_all_by_label("×").nth(1).unwrap();
    remove.click();
    h.run_steps(2);
    assert_eq!(h.state().saved.recent, vec![root.clone()]);
    assert!(h.query_by_label(&gone_name).is_none());
    let name = root.file_name().unwrap().to_string_lossy().into_owned();
    h.get_by_label(&name).click();
    run_until(&mut h, "the recent folder open", |h| {
        h.state().workspace_root() == Some(&root)
    });
    run_until(&mut h, "its files", |h| {
        h.query_by_label("  hello.txt").is_some()
    });
    // File → Open Recent lists it too.
    h.get_by_label("File").click();
    h.run_steps(2);
    let shown =
        |h: &Harness<'_, CocodeApp>| h.query_all_by_label(&root.display().to_string()).count();
    let before = shown(&h);
    h.get_by_label_contains("Open Recent").hover();
    h.run_steps(2);
    // The status bar names it; now the submenu does too.
    assert_eq!(shown(&h), before + 1);
}

#[cfg(target_os = "linux")]
#[test]
fn the_approvals_panel_approves_a_queued_edit_of_a_second_task_with_the_keyboard() {
    use crate::window::testing::run_until_waiting;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), "{\"a\": 1}\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "draft\n").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  notes.txt").is_some()
    });
    run_until_waiting(&mut h, r#"replace "1" with "2" in config.json"#, 1);
    run_until_waiting(&mut h, r#"replace "draft" with "final" in notes.txt"#, 2);
    h.run_steps(2);
    // The status bar counts what waits and opens the panel.
    h.get_by_label("2 approvals waiting").click();
    h.run_steps(3);
    assert!(shown_in_its_area(&h, PanelId::Approvals));
    h.get_by_label("2 tool calls waiting");
    h.get_by_label_contains("↑↓: choose · Enter: approve · Esc: deny");
    // Both tasks are named; the first is selected with its diff.
    h.get_by_label_contains("task: replace \"1\" with \"2\" in …");
    h.get_by_label_contains("task: replace \"draft\" with \"fi…");
    let second = h.state().agent.tool_approvals[1].id;
    key(&mut h, Modifiers::NONE, Key::ArrowDown);
    assert_eq!(h.state().approvals.selected, Some(second));
    key(&mut h, Modifiers::NONE, Key::Enter);
    run_until(&mut h, "the second task's edit", |h| {
        h.state().agent.tool_approvals.len() == 1
            && std::fs::read_to_string(root.join("notes.txt")).unwrap() == "final\n"
    });
    assert_eq!(
        std::fs::read_to_string(root.join("config.json")).unwrap(),
        "{\"a\": 1}\n"
    );
    // The first task's call is selected now; Escape denies it.
    h.run_steps(2);
    let first = h.state().agent.tool_approvals[0].id;
    assert_eq!(h.state().approvals.selected, Some(first));
    key(&mut h, Modifiers::NONE, Key::Escape);
    run_until(&mut h, "no call waiting", |h| {
        h.state().agent.tool_approvals.is_empty()
    });
    assert_eq!(
        std::fs::read_to_string(root.join("config.json")).unwrap(),
        "{\"a\": 1}\n"
    );
    h.state_mut()
        .stop_running_tasks(std::time::Duration::from_secs(10));
}

#[cfg(target_os = "linux")]
#[test]
fn a_folder_whose_settings_grant_a_host_asks_first_and_refused_the_host_stays_blocked() {
    use crate::window::testing::{approve_and_accept, type_prompt};
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("notes.txt"), "n\n").unwrap();
    // A folder as it came, with its own settings granting a host.
    drop(cocode_workspace::OpenWorkspace::open(&root).unwrap());
    let config_path = root.join(".cocode/config/workspace.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["allowed_hosts"] = serde_json::json!(["blocked.example"]);
    std::fs::write(&config_path, config.to_string()).unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  notes.txt").is_some()
    });
    type_prompt(
        &mut h,
        r#"run "curl -s -o /dev/null http://blocked.example/""#,
    );
    h.get_by_label("Run task").click();
    run_until(&mut h, "the question", |h| {
        h.state().agent.grant_prompt.is_some()
    });
    h.run_steps(2);
    h.get_by_label("This folder's settings ask for more");
    let grant = h.get_by_label("network access to blocked.example for agents' commands");
    assert_eq!(
        grant.accesskit_node().toggled(),
        Some(egui::accesskit::Toggled::False)
    );
    assert!(
        !h.state().agent.current().running,
        "nothing runs before the answer"
    );
    // Its tab says it waits for the person, not that it ended.
    let agent = &h.state().agent;
    assert_eq!(
        agent.standing(agent.current()),
        crate::window::agent::Standing::NeedsApproval
    );
    h.get_by_label("Keep them off and run").click();
    h.run_steps(2);
    approve_and_accept(&mut h, &["run a command"]);
    run_until(&mut h, "the task list after the task", |h| {
        h.state().agent.tasks.len() == 1 && h.state().agent.running() == 0
    });
    let first = h.state().agent.tasks[0].clone();
    h.get_by_label_contains(&format!("{}  ", first.id)).click();
    run_until(&mut h, "the task detail", |h| {
        h.state().agent.detail.is_some()
    });
    assert_eq!(
        h.state().agent.detail.as_ref().unwrap().blocked_hosts,
        vec!["blocked.example".to_owned()],
        "kept off, the folder's host stays blocked"
    );
    // Decided once: the next run does not ask again.
    h.state_mut().agent.detail = None;
    type_prompt(&mut h, r#"run "true""#);
    h.get_by_label("Run task").click();
    run_until(&mut h, "the second run", |h| {
        h.state().agent.current().running || h.state().agent.grant_prompt.is_some()
    });
    assert!(h.state().agent.grant_prompt.is_none());
    h.state_mut()
        .stop_running_tasks(std::time::Duration::from_secs(10));
}

#[test]
fn a_setting_edited_in_settings_lands_in_workspace_json_and_an_invalid_one_is_refused() {
    let (_dir, root) = fixture_workspace(&[("a.txt", "a\n")]);
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  a.txt").is_some()
    });
    // Ctrl+, as in VS Code.
    key(&mut h, Modifiers::COMMAND, Key::Comma);
    run_until(&mut h, "the folder's settings", |h| {
        h.state().settings.view.is_some()
    });
    assert!(shown_in_its_area(&h, PanelId::Settings));
    h.get_by_label(
        "This folder has no settings of its own yet: a change creates .cocode/config/workspace.json.",
    );
    assert!(!root.join(".cocode").exists(), "looking creates nothing");
    // Searched for, the hosts come first; a host refused as typed, with
    // the reason, cannot be added.
    let search = |h: &mut Harness<'static, CocodeApp>, text: &str| {
        h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Settings")
            .click();
        h.run_steps(2);
        h.key_press_modifiers(Modifiers::COMMAND, Key::A);
        type_text(h, text);
    };
    search(&mut h, "host");
    assert!(h.query_by_label("Theme").is_none());
    h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Add a host:")
        .click();
    h.run_steps(2);
    type_text(&mut h, "bad host!");
    assert_eq!(h.state().settings.drafts.host, "bad host!");
    h.get_by_label(
        "“bad host!” is not a host: write host, *.suffix, or either with :port, in ASCII",
    );
    assert!(h.get_by_label("Add host").accesskit_node().is_disabled());
    // Typed again: added, and written to workspace.json.
    for _ in 0.."bad host!".len() {
        key(&mut h, Modifiers::NONE, Key::Backspace);
    }
    type_text(&mut h, "api.example.com");
    assert!(!h.get_by_label("Add host").accesskit_node().is_disabled());
    h.get_by_label("Add host").click();
    let file = root.join(".cocode/config/workspace.json");
    run_until(&mut h, "the host in workspace.json", |h| {
        h.state()
            .settings
            .view
            .as_ref()
            .is_some_and(|v| v.exists && !v.config.allowed_hosts.is_empty())
    });
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        written["allowed_hosts"],
        serde_json::json!(["api.example.com"])
    );
    // The person added it: it is allowed, not asked about.
    let view = h.state().settings.view.clone().unwrap();
    assert_eq!(
        view.grants.allowed,
        vec![crate::host::trust::Grant::Host {
            host: "api.example.com".into()
        }]
    );
    assert_eq!(view.grants.pending, Vec::new());
    // A number out of range is refused with its reason, before Apply.
    search(&mut h, "retries");
    assert!(h.query_by_label("Allowed hosts").is_none());
    h.get_by_role_and_label(egui::accesskit::Role::TextInput, "retries")
        .click();
    h.run_steps(2);
    key(&mut h, Modifiers::NONE, Key::Backspace);
    type_text(&mut h, "7");
    h.get_by_label("retries: 7 is outside 0–3");
    assert!(h.get_by_label("Apply").accesskit_node().is_disabled());
    key(&mut h, Modifiers::NONE, Key::Backspace);
    type_text(&mut h, "2");
    h.get_by_label("Apply").click();
    run_until(&mut h, "two retries in workspace.json", |h| {
        h.state()
            .settings
            .view
            .as_ref()
            .is_some_and(|v| v.config.limits.max_retries() == 2)
    });
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["limits"]["max_retries"], serde_json::json!(2));
    h.state_mut()
        .stop_running_tasks(std::time::Duration::from_secs(5));
}

#[test]
fn the_status_bar_says_what_each_language_server_is_doing() {
    use crate::window::app::server_badge;
    use cocode_lsp::{ServerState, ServerStatus};
    let status = |state: ServerState, work: Option<&str>, documents: usize| ServerStatus {
        id: "rust-analyzer".into(),
        extensions: vec!["rs".into()],
        command: vec!["rust-analyzer".into()],
        documents,
        note: None,
        work: work.map(str::to_owned),
        state,
    };
    let label = |s: &ServerStatus| server_badge(s).map(|(label, ..)| label);
    assert_eq!(
        label(&status(ServerState::Starting, None, 1)),
        Some("rust-analyzer starting…".to_owned())
    );
    assert_eq!(
        label(&status(
            ServerState::Running,
            Some("indexing: 40/120 (33%)"),
            1
        )),
        Some("rust-analyzer: indexing: 40/120 (33%)".to_owned())
    );
    assert_eq!(
        label(&status(ServerState::Running, None, 1)),
        Some("rust-analyzer ✓".to_owned())
    );
    let stopped = status(
        ServerState::Failed {
            reason: "it exited with status 1: error: no Cargo.toml".into(),
        },
        None,
        1,
    );
    let (text, tone, hover) = server_badge(&stopped).unwrap();
    assert_eq!(text, "rust-analyzer stopped");
    assert_eq!(tone, cocode_ui::Tone::Danger);
    assert!(
        hover.starts_with("it exited with status 1: error: no Cargo.toml\n"),
        "{hover}"
    );
    // Not in use: nothing to say.
    assert_eq!(
        label(&status(
            ServerState::NotInstalled {
                install: "rustup component add rust-analyzer".into()
            },
            None,
            0
        )),
        None
    );
    assert_eq!(
        label(&status(
            ServerState::NotInstalled {
                install: "rustup component add rust-analyzer".into()
            },
            None,
            2
        )),
        Some("rust-analyzer not installed".to_owned())
    );
}

#[test]
fn the_editor_font_size_and_the_terminal_scrollback_are_set_in_settings_and_kept() {
    let state_dir = tempfile::tempdir().unwrap();
    let file = state_dir.path().join("window.json");
    let mut h = harness_saving(&file);
    h.run();
    let mono = egui::TextStyle::Monospace.resolve(&h.ctx.global_style());
    let editor = |h: &Harness<'static, CocodeApp>| cocode_ui::editor_font(&h.ctx.global_style());
    assert_eq!(editor(&h), mono);
    // Settings opens with the keyboard in its search, as in VS Code.
    key(&mut h, Modifiers::COMMAND, Key::Comma);
    h.run_steps(2);
    type_text(&mut h, "editor font");
    h.get_by_label("Editor font size");
    assert!(h.query_by_label("Terminal scrollback").is_none());
    // The slider's keys: one point up per arrow.
    h.get_by_role(egui::accesskit::Role::Slider).focus();
    h.run_steps(2);
    for _ in 0..3 {
        key(&mut h, Modifiers::NONE, Key::ArrowRight);
    }
    let chosen = egui::FontId::monospace(mono.size.round() + 3.0);
    assert_eq!(editor(&h), chosen);
    // The rest of the window keeps its size.
    assert_eq!(
        egui::TextStyle::Monospace.resolve(&h.ctx.global_style()),
        mono
    );

    h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Settings")
        .click();
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    type_text(&mut h, "scrollback");
    h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Lines")
        .click();
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    type_text(&mut h, "50");
    h.get_by_label("scrollback: 50 is outside 100–1000000");
    assert!(h.get_by_label("Apply").accesskit_node().is_disabled());
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    type_text(&mut h, "2500");
    h.get_by_label("Apply").click();
    h.run_steps(2);
    assert_eq!(h.state().terminals.scrollback(), 2500);
    h.state_mut().save_state_now();
    drop(h);

    let saved = SavedState::load(&file).state;
    assert_eq!(saved.editor_font_size, Some(chosen.size));
    assert_eq!(saved.terminal_scrollback, Some(2500));
    // A new start: both are back.
    let mut h = harness_saving(&file);
    h.run();
    assert_eq!(editor(&h), chosen);
    assert_eq!(h.state().terminals.scrollback(), 2500);
    // "Same as the window" lets the editor follow the interface again.
    key(&mut h, Modifiers::COMMAND, Key::Comma);
    h.run_steps(2);
    h.get_by_label("Same as the window").click();
    h.run_steps(2);
    assert_eq!(editor(&h), mono);
    assert_eq!(h.state().saved.editor_font_size, None);
}

/// Types `text` over what the Settings field `name` holds.
fn field(h: &mut Harness<'static, CocodeApp>, name: &str, text: &str) {
    h.get_by_role_and_label(egui::accesskit::Role::TextInput, name)
        .focus();
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    type_text(h, text);
}

/// Where the secrets of the agent `my-agent` stand on the Settings page.
fn my_agent_secrets(
    h: &Harness<'_, CocodeApp>,
) -> Option<Vec<(String, crate::host::agent_settings::SecretState)>> {
    h.state()
        .settings
        .view
        .as_ref()
        .and_then(|v| v.agents.iter().find(|a| a.entry.id.as_str() == "my-agent"))
        .map(|a| a.secrets.clone())
}

#[test]
fn an_agent_added_in_settings_lands_in_workspace_json_allowed_with_its_secret_in_the_store() {
    use crate::host::agent_settings::SecretState;
    let (_dir, root) = fixture_workspace(&[("a.txt", "a\n")]);
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  a.txt").is_some()
    });
    key(&mut h, Modifiers::COMMAND, Key::Comma);
    run_until(&mut h, "the folder's settings", |h| {
        h.state().settings.view.is_some()
    });
    h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Settings")
        .click();
    h.run_steps(2);
    type_text(&mut h, "external agents");
    // The presets, each with where its program stands.
    h.get_by_label("Gemini CLI (gemini)");
    assert_eq!(h.get_all_by_label("preset").count(), 4);
    // The page is taller than the window: widgets are reached through the
    // accessibility tree, as a screen reader would.
    h.get_by_label("Add an agent…").click_accesskit();
    h.run_steps(2);
    field(&mut h, "Agent id", "my-agent");
    field(&mut h, "Name", "My agent");
    field(&mut h, "Command", "my-agent-nowhere --acp");
    field(&mut h, "Secret variables", "MY_KEY");
    field(&mut h, "Model hosts", "api.example.com, not/a/host");
    h.get_by_label(
        "“not/a/host” is not a host: write host, *.suffix, or either with :port, in ASCII",
    );
    assert!(h.get_by_label("Save agent").accesskit_node().is_disabled());
    field(&mut h, "Model hosts", "api.example.com");
    h.get_by_label("Save agent").click_accesskit();
    run_until(&mut h, "the entry in workspace.json", |h| {
        h.state()
            .settings
            .view
            .as_ref()
            .is_some_and(|v| !v.config.acp_agents.is_empty())
    });
    let file = root.join(".cocode/config/workspace.json");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        written["acp_agents"],
        serde_json::json!([{
            "id": "my-agent", "display_name": "My agent",
            "command": ["my-agent-nowhere", "--acp"], "env": {},
            "model_hosts": ["api.example.com"], "secret_env": ["MY_KEY"],
            "state_dirs": []
        }])
    );
    // The person wrote it: allowed, not asked about.
    let view = h.state().settings.view.clone().unwrap();
    assert_eq!(view.grants.pending, Vec::new());
    assert_eq!(view.grants.allowed.len(), 2, "{:?}", view.grants.allowed);
    h.run_steps(2);
    h.get_by_label("this folder's");
    h.get_by_label("not installed: its program is not on PATH");
    assert_eq!(
        my_agent_secrets(&h),
        Some(vec![("MY_KEY".to_owned(), SecretState::Missing)])
    );
    // Its secret goes to the credential store, never to workspace.json.
    h.get_by_role_and_label(egui::accesskit::Role::PasswordInput, "MY_KEY")
        .focus();
    h.run_steps(2);
    type_text(&mut h, "sk-test-123");
    // Only the Store beside the typed value can be pressed.
    let stores: Vec<_> = h
        .get_all_by_label("Store")
        .filter(|n| !n.accesskit_node().is_disabled())
        .collect();
    assert_eq!(stores.len(), 1);
    stores[0].click_accesskit();
    run_until(&mut h, "the stored secret", |h| {
        my_agent_secrets(h) == Some(vec![("MY_KEY".to_owned(), SecretState::Stored)])
    });
    let account = cocode_acp::registry::secret_account(
        &cocode_core::AcpAgentId::new("my-agent").unwrap(),
        "MY_KEY",
    )
    .unwrap();
    let kept = h.state().provider_setup.store.get(&account).unwrap();
    assert_eq!(
        kept.map(|s| s.expose().to_owned()),
        Some("sk-test-123".to_owned())
    );
    assert!(!std::fs::read_to_string(&file).unwrap().contains("sk-test"));
    assert!(
        h.state()
            .settings
            .drafts
            .secrets
            .values()
            .all(String::is_empty)
    );
    h.state_mut()
        .stop_running_tasks(std::time::Duration::from_secs(5));
}

/// Picks the theme named `choice` in Settings (Ctrl+, then a search).
fn choose_theme(h: &mut Harness<'static, CocodeApp>, choice: &str) {
    key(h, Modifiers::COMMAND, Key::Comma);
    h.run_steps(2);
    type_text(h, "theme");
    h.get_by_label(choice).click();
    h.run_steps(2);
}

#[test]
fn the_theme_follows_the_system_when_asked_and_stays_so_after_a_restart() {
    let state_dir = tempfile::tempdir().unwrap();
    let file = state_dir.path().join("window.json");
    let preference = |h: &Harness<'static, CocodeApp>| h.ctx.options(|o| o.theme_preference);
    let mut h = harness_saving(&file);
    h.run();
    assert_eq!(preference(&h), egui::ThemePreference::Dark);
    choose_theme(&mut h, "Follow the system");
    assert_eq!(preference(&h), egui::ThemePreference::System);
    assert_eq!(
        h.state().theme_source,
        crate::window::app::ThemeSource::System
    );
    h.state_mut().save_state_now();
    drop(h);
    assert_eq!(
        SavedState::load(&file).state.theme.as_deref(),
        Some("system")
    );
    let mut h = harness_saving(&file);
    h.run();
    assert_eq!(preference(&h), egui::ThemePreference::System);
    // Choosing one stops following.
    choose_theme(&mut h, "Light");
    assert_eq!(preference(&h), egui::ThemePreference::Light);
    assert_eq!(
        h.state().theme_source,
        crate::window::app::ThemeSource::Chosen
    );
}

#[test]
fn an_editors_scroll_is_kept_apart_from_its_cursor_across_a_restart() {
    let text: Vec<String> = (1..=400).map(|n| format!("line {n}")).collect();
    let text = text.join("\n") + "\n";
    let (_dir, root) = fixture_workspace(&[("long.txt", text.as_str())]);
    let state_dir = tempfile::tempdir().unwrap();
    let file = state_dir.path().join("window.json");
    let mut h = harness_saving(&file);
    h.state_mut().open_workspace(root.clone());
    h.run_steps(2);
    let id = open_in_editor(&mut h, "long.txt");
    // The cursor to line 300, then the view scrolled back up without it.
    key(&mut h, Modifiers::COMMAND, Key::G);
    type_text(&mut h, "300");
    h.key_press(Key::Enter);
    h.run_steps(3);
    let at_cursor = h.state().editors.get(id).unwrap().first_line;
    assert!(at_cursor > 250, "{at_cursor}");
    h.event(Event::PointerMoved(egui::pos2(600.0, 400.0)));
    h.event(Event::MouseWheel {
        unit: egui::MouseWheelUnit::Line,
        delta: egui::vec2(0.0, 100.0),
        phase: egui::TouchPhase::Move,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(3);
    let shown = h.state().editors.get(id).unwrap().first_line;
    assert!(shown + 50 < at_cursor, "{shown} {at_cursor}");
    h.state_mut().save_state_now();
    drop(h);

    let mut h = harness_saving(&file);
    h.state_mut().open_workspace(root.clone());
    run_until(&mut h, "the editor loaded", |h| {
        h.state().editors.tabs.len() == 1
            && h.state().editors.tabs[0].body == crate::window::editors::TabBody::Text
    });
    h.run_steps(3);
    let tab = &h.state().editors.tabs[0];
    assert_eq!(tab.first_line, shown, "the view where it was");
    let cursor = crate::window::testing::shown(&h, tab.id);
    assert!(cursor.contains("|line 300\n"), "the cursor where it was");
}
