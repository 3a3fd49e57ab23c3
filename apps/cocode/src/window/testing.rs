//! The one helper UI tests go through: fixed size, theme and OS.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

use crate::window::app::CocodeApp;

/// Test peers (language servers, the Secret Service): present, or the
/// skip recorded for `cargo xtask test`.
#[path = "../../../../tests/support/require.rs"]
pub mod peers;

/// The real `git` in a test's repository.
#[path = "../../../../tests/support/git.rs"]
pub mod git_repo;

/// The processes working in a folder (the agents a test started).
#[cfg(target_os = "linux")]
#[path = "../../../../tests/support/processes.rs"]
pub mod processes;
use crate::window::providers::ProviderSetup;

/// The runtime every harness of this test process shares, built the way
/// `main` builds the app's one runtime.
pub fn runtime() -> tokio::runtime::Handle {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| crate::host::runtime::build().expect("the runtime starts"))
        .handle()
        .clone()
}

/// A harness around the whole app, 1200×800, dark theme, Linux conventions.
pub fn harness(folder: Option<PathBuf>) -> Harness<'static, CocodeApp> {
    // Crash reports this machine's person may have are not the test's.
    harness_with(folder, |app| app.crash_notice = None)
}

/// [`harness`] with the app prepared first (state a start would read from
/// the person's folders, such as crash reports).
pub fn harness_with(
    folder: Option<PathBuf>,
    prepare: impl FnOnce(&mut CocodeApp),
) -> Harness<'static, CocodeApp> {
    harness_keys(folder, ProviderSetup::in_memory(), prepare)
}

/// [`harness_with`] with provider keys and settings where `keys` says
/// (the others keep them in memory, away from the person's).
pub fn harness_keys(
    folder: Option<PathBuf>,
    keys: ProviderSetup,
    prepare: impl FnOnce(&mut CocodeApp),
) -> Harness<'static, CocodeApp> {
    let mut app = CocodeApp::with_keys(folder, crate::host::root::HostRoot::new(runtime()), keys)
        .expect("io thread starts");
    app.os = cocode_platform::Os::Linux;
    app.keymap = crate::window::keymap::Keymap::defaults(cocode_platform::Os::Linux);
    prepare(&mut app);
    Harness::builder()
        .with_size(egui::vec2(1200.0, 800.0))
        .with_os(egui::os::OperatingSystem::Nix)
        .build_ui_state(|ui, app: &mut CocodeApp| app.ui(ui), app)
}

/// [`harness_with`] drawn by the software renderer, for image snapshots:
/// the text cursor does not blink, so the same state draws the same
/// pixels.
pub fn harness_rendered(
    folder: Option<PathBuf>,
    prepare: impl FnOnce(&mut CocodeApp),
) -> Harness<'static, CocodeApp> {
    let mut app = CocodeApp::with_keys(
        folder,
        crate::host::root::HostRoot::new(runtime()),
        ProviderSetup::in_memory(),
    )
    .expect("io thread starts");
    app.os = cocode_platform::Os::Linux;
    app.keymap = crate::window::keymap::Keymap::defaults(cocode_platform::Os::Linux);
    app.crash_notice = None;
    prepare(&mut app);
    let mut h = Harness::builder()
        .with_size(egui::vec2(1200.0, 800.0))
        .with_os(egui::os::OperatingSystem::Nix)
        .renderer(crate::window::raster::Raster::default())
        .build_ui_state(|ui, app: &mut CocodeApp| app.ui(ui), app);
    h.run_steps(2);
    h.ctx
        .all_styles_mut(|s| s.visuals.text_cursor.blink = false);
    h
}

/// A folder at a fixed path under the system's temporary folder (made
/// afresh), so that what shows its path draws the same pixels each run.
#[expect(
    clippy::disallowed_methods,
    reason = "tests lay out fixture workspaces on disk"
)]
pub fn fixed_workspace(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("cocode-snapshot-{name}"));
    let _ = std::fs::remove_dir_all(&root);
    for (file, text) in files {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::create_dir_all(&root).unwrap();
    std::fs::canonicalize(&root).unwrap()
}

/// Steps frames until `done` holds (the IO thread answers asynchronously).
pub fn run_until(
    harness: &mut Harness<'_, CocodeApp>,
    what: &str,
    done: impl Fn(&Harness<'_, CocodeApp>) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        harness.step();
        if done(harness) {
            harness.run_steps(2);
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {:?} {:?}",
            harness.state().dialog,
            harness.state().agent
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "tests build fixture workspaces on disk"
)]
pub fn fixture_workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// Opens `name` from the Explorer and waits until its text is in the editor
/// with the keyboard focus.
pub fn open_in_editor(h: &mut Harness<'static, CocodeApp>, name: &str) -> u32 {
    let label = format!("  {name}");
    run_until(h, "the root listing", |h| {
        h.query_by_label(&label).is_some()
    });
    h.get_by_label(&label).click();
    run_until(h, "the editor", |h| {
        h.state()
            .editors
            .tabs
            .iter()
            .any(|t| t.name() == name && t.body == crate::window::editors::TabBody::Text)
    });
    h.run_steps(3);
    h.state().editors.active.unwrap()
}

/// The text of tab `id` in selection markup (`|` the cursor, `«…»` a
/// selection).
pub fn shown(h: &Harness<'_, CocodeApp>, id: u32) -> String {
    let editors = &h.state().editors;
    let rel = editors.get(id).unwrap().rel.clone().unwrap();
    editors
        .docs
        .with_document(&rel, |d| {
            cocode_editor::markup::render(&d.text(), d.selection())
        })
        .unwrap()
}

/// Clicks the Agent panel's prompt field and types `text` into it.
#[cfg(target_os = "linux")]
pub fn type_prompt(h: &mut Harness<'static, CocodeApp>, text: &str) {
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .click();
    h.run_steps(2);
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .type_text(text);
    h.run_steps(2);
}

/// Types `prompt` into the Agent panel, runs it as a task and waits until
/// `waiting` tool calls (of every task) wait for the person.
#[cfg(target_os = "linux")]
pub fn run_until_waiting(h: &mut Harness<'static, CocodeApp>, prompt: &str, waiting: usize) {
    type_prompt(h, prompt);
    h.get_by_label("Run task").click();
    run_until(h, "the approval card", |h| {
        h.state().agent.tool_approvals.len() == waiting
    });
}

/// Waits for the end of the agent's turn, finishes it when it waits for a
/// reply (an external agent's turn) and accepts completion when the task
/// asks; returns when the run is over.
#[cfg(unix)]
pub fn accept_completion(h: &mut Harness<'static, CocodeApp>) {
    fn turn_over(h: &Harness<'_, CocodeApp>) -> bool {
        !h.state().agent.current().running
            || h.state().agent.current().awaiting_reply.is_some()
            || h.query_by_label_contains("Accept it as completed?")
                .is_some()
    }
    run_until(h, "the end of the turn", turn_over);
    if h.state().agent.current().awaiting_reply.is_some() {
        h.get_by_label("Finish & verify").click();
        run_until(h, "the verification", |h| {
            h.state().agent.current().awaiting_reply.is_none() && turn_over(h)
        });
    }
    if h.query_by_label_contains("Accept it as completed?")
        .is_some()
    {
        h.get_by_label("Accept").click();
        run_until(h, "the end of the run", |h| {
            !h.state().agent.current().running
        });
    }
}

/// Approves each named card ("Allow the agent to WHAT?") with Enter as it
/// comes, then accepts completion when asked.
#[cfg(target_os = "linux")]
pub fn approve_and_accept(h: &mut Harness<'static, CocodeApp>, cards: &[&str]) {
    for what in cards {
        run_until(h, what, |h| {
            h.query_by_label_contains(&format!("Allow the agent to {what}?"))
                .is_some()
        });
        h.key_press(egui::Key::Enter);
        h.run_steps(2);
    }
    accept_completion(h);
}

/// Allows everything the folder's `workspace.json` grants, as its person
/// does who wrote it there (tests that are not about that question).
#[cfg(unix)]
pub fn trust_folder_settings(root: &std::path::Path) {
    let text = std::fs::read_to_string(root.join(".cocode/config/workspace.json")).unwrap();
    let config: cocode_core::workspace::WorkspaceConfig = serde_json::from_str(&text).unwrap();
    let decisions: Vec<_> = crate::host::trust::grants_of(&config)
        .into_iter()
        .map(|g| (g, true))
        .collect();
    crate::host::trust::decide_grants(root, &decisions).unwrap();
}

/// System dialogs that give one answer to every request, as a person
/// choosing a path, closing the dialog, or a system without dialogs would.
#[derive(Debug)]
pub struct Answering(pub crate::window::system_dialog::Picked);

impl crate::window::system_dialog::SystemDialogs for Answering {
    fn pick_folder(
        &self,
        _: String,
        _: Option<PathBuf>,
    ) -> futures_util::future::BoxFuture<'static, crate::window::system_dialog::Picked> {
        let answer = self.0.clone();
        Box::pin(async move { answer })
    }

    fn save_file(
        &self,
        _: String,
        _: String,
        _: Option<PathBuf>,
    ) -> futures_util::future::BoxFuture<'static, crate::window::system_dialog::Picked> {
        let answer = self.0.clone();
        Box::pin(async move { answer })
    }
}

/// The window's system dialogs answer `answer` from now on.
pub fn answer_dialogs(
    h: &mut Harness<'static, CocodeApp>,
    answer: crate::window::system_dialog::Picked,
) {
    h.state_mut().system =
        crate::window::system_dialog::DialogRunner::new(std::sync::Arc::new(Answering(answer)));
}
