//! Image snapshots of the window, drawn by the software renderer
//! ([`crate::window::raster`]) and compared with the references in
//! `apps/cocode/tests/snapshots/window/`: the welcome page, the command
//! palette, Settings, the Approvals panel and the dock with a task waiting.
//! A reference is made (or remade after an intended change) with
//! `UPDATE_SNAPSHOTS=1 cargo test -p cocode --lib snapshot_tests`; a run
//! that draws a pixel differently fails and leaves `NAME.new.png` and
//! `NAME.diff.png` beside the reference.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixture workspaces on disk"
)]

use egui::{Event, Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use crate::window::app::CocodeApp;
use crate::window::testing::{fixed_workspace, harness_rendered, run_until};

fn options() -> egui_kittest::SnapshotOptions {
    egui_kittest::SnapshotOptions::new()
        .output_path("tests/snapshots/window")
        .threshold(0.6)
        .max_failed_pixels(0)
}

fn snapshot(h: &mut Harness<'static, CocodeApp>, name: &str) {
    // The same clock each time: spinners stand at the same angle however
    // many frames the test waited before.
    h.input_mut().time = Some(1_000.0);
    h.run_steps(3);
    if let Err(e) = h.try_snapshot_options(name, &options()) {
        panic!("{e}");
    }
}

/// The status bar's sandbox badge as on a machine with Landlock, whatever
/// this one has, and a fixed proxy port.
#[cfg(target_os = "linux")]
fn fixed_sandbox(h: &mut Harness<'static, CocodeApp>) {
    h.state_mut().agent.sandbox = Some((cocode_core::process::Confinement::Landlock, 40_000));
}

#[test]
fn the_welcome_page_with_recent_folders() {
    let mut h = harness_rendered(None, |app| {
        let mut saved = crate::window::saved::SavedState::default();
        saved.opened(std::path::Path::new("/home/me/src/website"));
        saved.opened(std::path::Path::new("/home/me/src/cocode"));
        app.saved = saved;
    });
    h.get_by_label("Welcome to cocode");
    snapshot(&mut h, "welcome");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        // Remaking the references: nothing to compare against.
        return;
    }
    // A changed pixel fails: the light theme is not the dark reference.
    h.state_mut().run(
        crate::window::command::Command::Window(crate::window::command::WindowCommand::SetTheme(
            cocode_ui::Theme::Light,
        )),
        &egui::Context::default(),
    );
    let ctx = h.ctx.clone();
    cocode_ui::apply_theme(&ctx, cocode_ui::Theme::Light);
    ctx.all_styles_mut(|s| s.visuals.text_cursor.blink = false);
    h.run_steps(3);
    let light = h.try_snapshot_options("welcome", &options());
    assert!(light.is_err(), "another image must not match the reference");
    let _ = std::fs::remove_file("tests/snapshots/window/welcome.new.png");
    let _ = std::fs::remove_file("tests/snapshots/window/welcome.diff.png");
}

#[test]
fn the_command_palette_matching_a_typed_word() {
    let mut h = harness_rendered(None, |_| {});
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::P);
    h.run_steps(2);
    h.event(Event::Text("show".to_owned()));
    h.run_steps(2);
    h.get_by_label_contains("View: Show Trace");
    snapshot(&mut h, "palette");
}

#[test]
fn settings_of_a_folder() {
    let root = fixed_workspace("settings", &[("README.md", "# notes\n")]);
    let mut h = harness_rendered(Some(root), |_| {});
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  README.md").is_some()
    });
    h.key_press_modifiers(Modifiers::COMMAND, Key::Comma);
    run_until(&mut h, "the folder's settings and the providers", |h| {
        h.state().settings.view.is_some() && !h.state().providers.rows.is_empty()
    });
    snapshot(&mut h, "settings");
}

/// Two tasks, each waiting on an edit: the Approvals panel, then the dock
/// with the Agent panel's card.
#[cfg(target_os = "linux")]
#[test]
fn the_approvals_panel_and_the_dock_with_a_task_waiting() {
    use crate::window::testing::run_until_waiting;
    let root = fixed_workspace(
        "approvals",
        &[("config.json", "{\"a\": 1}\n"), ("notes.txt", "draft\n")],
    );
    let mut h = harness_rendered(Some(root), |_| {});
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  notes.txt").is_some()
    });
    run_until_waiting(&mut h, r#"replace "1" with "2" in config.json"#, 1);
    fixed_sandbox(&mut h);
    // The task list names the task by its id, made of the time: folded.
    h.get_by_label("Tasks (1)").click();
    // The pointer away from every widget: no hover in the picture.
    h.event(Event::PointerGone);
    snapshot(&mut h, "dock-task-waiting");
    run_until_waiting(&mut h, r#"replace "draft" with "final" in notes.txt"#, 2);
    h.get_by_label("2 approvals waiting").click();
    fixed_sandbox(&mut h);
    h.event(Event::PointerGone);
    snapshot(&mut h, "approvals");
    h.state_mut()
        .stop_running_tasks(std::time::Duration::from_secs(10));
}
