#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixture workspaces on disk"
)]

use super::*;
use crate::window::command::{BrickCommand, FolderCommand, WindowCommand};
use crate::window::new_brick::BrickDialogChange;
#[cfg(unix)]
use crate::window::testing::accept_completion;
#[cfg(target_os = "linux")]
use crate::window::testing::{approve_and_accept, type_prompt};
use crate::window::testing::{harness, run_until};
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use pretty_assertions::assert_eq;
use std::path::Path;

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(
        root.join("src/main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )
    .unwrap();
    std::fs::write(root.join("build.log"), "noise").unwrap();
    std::fs::write(
        root.join("안녕하세요.md"),
        "# 안녕하세요\n한국어 문서입니다.\n",
    )
    .unwrap();
    dir
}

fn loaded(h: &egui_kittest::Harness<'_, CocodeApp>, label: &str) -> bool {
    h.query_by_label(label).is_some()
}

#[test]
fn without_a_folder_the_explorer_offers_to_open_one() {
    let mut h = harness(None);
    h.run();
    h.get_by_label("No folder is open");
    h.get_by_label("No folder open");
    h.get_by_label("Open Folder…").click();
    h.run_steps(2);
    assert!(h.state().dialog.is_some());
    h.get_by_label("Open Folder");
    h.key_press(Key::Escape);
    h.run_steps(2);
    // A new workspace can start from a brick right there too.
    h.get_by_label("New from Brick…").click();
    h.run_steps(2);
    assert!(h.state().new_brick.is_some());
    h.get_by_label("New Workspace from Brick");
}

#[test]
fn explorer_lists_the_workspace_gitignore_aware_with_korean_names() {
    let dir = fixture();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| loaded(h, "  안녕하세요.md"));
    h.get_by_label("⏵ src");
    h.get_by_label("  .gitignore");
    assert!(
        h.query_by_label_contains("build.log").is_none(),
        "ignored by *.log"
    );
    assert!(
        h.query_by_label_contains("target").is_none(),
        "ignored by target/"
    );
    h.get_by_label(&root.display().to_string());

    h.get_by_label("⏵ src").click();
    run_until(&mut h, "the src listing", |h| loaded(h, "  main.rs"));
    h.get_by_label("⏷ src");
}

#[test]
fn the_open_folder_dialog_opens_a_typed_path_and_reports_bad_ones() {
    let dir = fixture();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(None);
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, Key::O);
    h.run_steps(2);
    assert!(h.state().dialog.is_some(), "Ctrl+O opens the dialog");
    // Clicks land where widgets were drawn: wait until the folder list (which
    // moves the buttons) has arrived.
    run_until(&mut h, "the folder list", |h| {
        h.state()
            .dialog
            .as_ref()
            .is_some_and(|d| d.subfolders.is_some())
    });

    h.state_mut().run(
        Command::Folder(FolderCommand::PickerTyped(
            root.join("missing").display().to_string(),
        )),
        &egui::Context::default(),
    );
    h.run_steps(2);
    // An AccessKit click acts on the button itself in one frame; a pointer
    // click spans three frames at the position of the last one.
    h.get_by_label("Open").click_accesskit();
    run_until(&mut h, "an error", |h| {
        h.state().dialog.as_ref().is_some_and(|d| d.error.is_some())
    });
    assert!(h.state().workspace_root().is_none());

    h.state_mut().run(
        Command::Folder(FolderCommand::PickerTyped(root.display().to_string())),
        &egui::Context::default(),
    );
    h.run_steps(2);
    h.get_by_label("Open").click_accesskit();
    run_until(&mut h, "the workspace", |h| {
        h.state().workspace_root().is_some()
    });
    assert_eq!(h.state().workspace_root(), Some(&root));
    assert!(h.state().dialog.is_none());
}

/// Open Folder asks the system's picker; the folder chosen there opens, a
/// closed picker changes nothing, and a system without one gets the
/// typed-path dialog, saying why, from then on.
#[test]
fn the_system_folder_picker_opens_its_choice_and_without_one_the_typed_path_takes_over() {
    use crate::window::system_dialog::Picked;
    use crate::window::testing::answer_dialogs;
    let dir = fixture();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(None);
    h.run();

    answer_dialogs(&mut h, Picked::Cancelled);
    h.key_press_modifiers(Modifiers::COMMAND, Key::O);
    run_until(&mut h, "the picker's answer", |h| !h.state().system.open);
    h.run_steps(2);
    assert!(h.state().workspace_root().is_none());
    assert!(h.state().dialog.is_none(), "no typed dialog after a cancel");

    answer_dialogs(&mut h, Picked::Chosen(root.clone()));
    h.key_press_modifiers(Modifiers::COMMAND, Key::O);
    run_until(&mut h, "the chosen folder", |h| {
        h.state().workspace_root().is_some()
    });
    assert_eq!(h.state().workspace_root(), Some(&root));
    assert!(h.state().dialog.is_none());

    answer_dialogs(
        &mut h,
        Picked::Unavailable("the desktop portal is not running".to_owned()),
    );
    h.key_press_modifiers(Modifiers::COMMAND, Key::O);
    run_until(&mut h, "the typed-path dialog", |h| {
        h.state().dialog.is_some()
    });
    h.run_steps(2);
    h.get_by_label(
        "the desktop portal is not running. Type the folder's path, or browse to it below.",
    );
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(h.state().dialog.is_none());
    // From then on, straight to the typed path.
    h.key_press_modifiers(Modifiers::COMMAND, Key::O);
    h.run_steps(2);
    assert!(h.state().dialog.is_some());
    assert!(!h.state().system.open);
}

#[test]
fn enter_in_the_path_field_opens_the_typed_folder() {
    let dir = fixture();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(None);
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, Key::O);
    run_until(&mut h, "the folder list", |h| {
        h.state()
            .dialog
            .as_ref()
            .is_some_and(|d| d.subfolders.is_some())
    });
    h.state_mut().run(
        Command::Folder(FolderCommand::PickerTyped(root.display().to_string())),
        &egui::Context::default(),
    );
    h.run_steps(2);
    // The path field has the focus the dialog gave it; Enter opens.
    h.key_press(Key::Enter);
    run_until(&mut h, "the workspace", |h| {
        h.state().workspace_root().is_some()
    });
    assert_eq!(h.state().workspace_root(), Some(&root));
    assert!(h.state().dialog.is_none());
}

#[test]
fn escape_closes_the_open_folder_dialog() {
    let mut h = harness(None);
    h.run();
    h.get_by_label("Open Folder…").click();
    h.run_steps(2);
    assert!(h.state().dialog.is_some());
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(h.state().dialog.is_none());
}

#[test]
fn the_window_stops_repainting_when_idle() {
    let dir = fixture();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root));
    run_until(&mut h, "the root listing", |h| loaded(h, "  안녕하세요.md"));
    // `try_run` steps only while the app asks for another frame; a spinner
    // or a repaint loop would exhaust the step budget.
    let frames = h.try_run().expect("no continuous repaint when idle");
    assert!(frames <= 3, "{frames} frames after work finished");
}

#[test]
fn a_closed_panel_comes_back_from_the_view_menu() {
    let mut h = harness(None);
    h.run();
    let path = h.state().dock.find_tab(&PanelId::Welcome).unwrap();
    h.state_mut().dock.remove_tab(path);
    assert!(h.state().dock.find_tab(&PanelId::Welcome).is_none());
    h.state_mut().run(
        Command::Window(WindowCommand::ShowPanel(PanelId::Welcome)),
        &egui::Context::default(),
    );
    assert!(h.state().dock.find_tab(&PanelId::Welcome).is_some());
    h.state_mut().run(
        Command::Window(WindowCommand::ResetLayout),
        &egui::Context::default(),
    );
    let mut tabs: Vec<PanelId> = h.state().dock.iter_all_tabs().map(|(_, t)| *t).collect();
    tabs.sort_by_key(|t| t.title());
    assert_eq!(
        tabs,
        vec![
            PanelId::Agent,
            PanelId::Explorer,
            PanelId::Search,
            PanelId::SourceControl,
            PanelId::Welcome
        ]
    );
}

/// Scrolls the transcript up until a label containing `text` is in sight
/// (the transcript lays out only what is in sight).
fn scroll_transcript_up_to(h: &mut egui_kittest::Harness<'_, CocodeApp>, text: &str) {
    for _ in 0..20 {
        if h.query_by_label_contains(text).is_some() {
            return;
        }
        h.query_all_by_label_contains("status: ")
            .next()
            .expect("a status line in sight")
            .scroll_up();
        h.run_steps(2);
    }
    h.get_by_label_contains(text);
}

#[test]
fn a_task_runs_from_the_agent_panel_with_approvals_in_the_window() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), "{\"a\": 1}\n").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| loaded(h, "  config.json"));
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .click();
    h.run_steps(2);
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .type_text(r#"replace "1" with "2" in config.json"#);
    h.run_steps(2);
    assert_eq!(
        h.state().agent.prompt,
        r#"replace "1" with "2" in config.json"#
    );
    h.get_by_label("Run task").click();
    run_until(&mut h, "the approval card", |h| {
        h.query_by_label_contains("Allow the agent to edit a file?")
            .is_some()
    });
    // The card shows the change it asks about, as a diff against the file
    // (the transcript's cards of the calls name the file too).
    assert!(h.query_all_by_label("config.json").count() >= 2);
    h.get_by_label_contains("-{\"a\": 1}");
    h.get_by_label_contains("+{\"a\": 2}");
    assert_eq!(
        std::fs::read_to_string(root.join("config.json")).unwrap(),
        "{\"a\": 1}\n",
        "nothing changes before the approval"
    );
    // Enter approves the first card (no text field has the keyboard).
    h.key_press(Key::Enter);
    run_until(&mut h, "the completion card", |h| {
        h.query_by_label_contains("passed verification. Accept it as completed?")
            .is_some()
    });
    h.get_by_label("Accept").click();
    run_until(&mut h, "the end of the run", |h| {
        !h.state().agent.current().running
    });
    assert_eq!(
        std::fs::read_to_string(root.join("config.json")).unwrap(),
        "{\"a\": 2}\n"
    );
    run_until(&mut h, "the task list", |h| {
        h.state()
            .agent
            .tasks
            .first()
            .is_some_and(|t| t.state == "completed: a person approved it")
    });
    // The transcript as entries: the person's message, the tool call with
    // its arguments, result and diff, the verification, the end.
    let id = h.state().agent.tasks[0].id.clone();
    let folder = root.file_name().unwrap().to_str().unwrap();
    let transcript = h.state().agent.current().transcript.text();
    insta::assert_snapshot!(transcript.replace(&id, "TASK").replace(folder, "FOLDER"));
    // The tool call's card shows its diff in the window, above the
    // verification: scrolled up to, since the transcript follows its end.
    scroll_transcript_up_to(&mut h, "+{\"a\": 2}");
    // Idle again: no repaint loop once the run is over.
    let frames = h.try_run().expect("no continuous repaint when idle");
    assert!(frames <= 3, "{frames} frames after the run");

    // Review: the task's change and its diff, then a rollback to the start.
    h.get_by_label_contains(&format!("{id}  completed: a person approved it"))
        .click();
    run_until(&mut h, "the task detail", |h| {
        h.state().agent.detail.is_some()
    });
    h.get_by_label("Changes (1)");
    h.get_by_label_contains("#1 config.json modified · recorded before the change · attempt 1")
        .click();
    h.run_steps(2);
    let diff = h.state().agent.detail.as_ref().unwrap().snapshots[0]
        .diff
        .clone();
    assert!(
        diff.contains("-{\"a\": 1}") && diff.contains("+{\"a\": 2}"),
        "{diff}"
    );
    h.get_by_label("Roll back to the start (1 path(s))").click();
    run_until(&mut h, "the rollback", |h| {
        h.state()
            .agent
            .note
            .as_deref()
            .is_some_and(|n| n.starts_with("rolled back 1 path(s)"))
    });
    assert_eq!(
        std::fs::read_to_string(root.join("config.json")).unwrap(),
        "{\"a\": 1}\n"
    );
    run_until(&mut h, "the rolled-back state", |h| {
        h.state()
            .agent
            .tasks
            .first()
            .is_some_and(|t| t.state == "rolled back: its changes were undone")
            && h.state()
                .agent
                .detail
                .as_ref()
                .is_some_and(|d| d.snapshots.len() == 2)
    });
}

#[test]
fn a_task_left_running_by_an_earlier_session_is_failed_when_the_folder_opens() {
    use cocode_core::task::{NewTask, TaskBackend, TransitionContext};
    use cocode_core::{
        CompletionMode, DelegatedTask, TaskEvent, TaskId, TaskTransition, Timestamp,
    };

    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let ws = cocode_workspace::OpenWorkspace::open(&root).unwrap();
    let mut task = DelegatedTask::new(NewTask {
        task_id: TaskId::new("task-interrupted").unwrap(),
        prompt: "left running".into(),
        backend: TaskBackend::Local,
        completion_mode: CompletionMode::HumanApproval,
        created_at: Timestamp::from_millis(1),
    });
    TaskTransition::apply(&mut task, &TaskEvent::Start, &TransitionContext::default()).unwrap();
    crate::host::records::save_task_record(&ws, &task).unwrap();
    // A task whose agent waited for a reply: nobody can answer it now.
    let mut waiting = DelegatedTask::new(NewTask {
        task_id: TaskId::new("task-waiting").unwrap(),
        prompt: "asked a question".into(),
        backend: TaskBackend::Local,
        completion_mode: CompletionMode::HumanApproval,
        created_at: Timestamp::from_millis(2),
    });
    for event in [TaskEvent::Start, TaskEvent::AwaitReply] {
        TaskTransition::apply(&mut waiting, &event, &TransitionContext::default()).unwrap();
    }
    crate::host::records::save_task_record(&ws, &waiting).unwrap();
    drop(ws);

    let mut h = harness(Some(root));
    run_until(&mut h, "the task list", |h| {
        h.state().agent.tasks.len() == 2
            && h.state()
                .agent
                .tasks
                .iter()
                .all(|t| t.state == "failed: cocode restarted while it ran")
    });
    assert_eq!(
        h.state().agent.note.as_deref(),
        Some("2 tasks were interrupted when cocode last stopped and are marked failed")
    );
    // The status bar says how agent commands are confined on this machine.
    let (confinement, port) = h.state().agent.sandbox.clone().unwrap();
    assert_eq!(confinement, cocode_toolchain::confine::available());
    h.get_by_label(&sandbox_status(&confinement, port).0);
}

#[test]
fn the_sandbox_badge_names_the_confinement_and_the_proxy_port() {
    use cocode_core::process::Confinement;
    use cocode_ui::Tone;
    let cases = [
        (
            Confinement::Landlock,
            "Landlock active · proxy :4100",
            Tone::Success,
        ),
        (
            Confinement::Seatbelt,
            "Seatbelt active · proxy :4100",
            Tone::Success,
        ),
        (
            Confinement::Unconfined {
                reason: "Windows has no confinement cocode can use".into(),
            },
            "Proxy only · proxy :4100",
            Tone::Warning,
        ),
    ];
    for (confinement, text, tone) in cases {
        let (shown, shown_tone, hover) = sandbox_status(&confinement, 4100);
        assert_eq!((shown.as_str(), shown_tone), (text, tone));
        assert!(!hover.is_empty());
    }
    let (_, _, hover) = sandbox_status(
        &Confinement::Unconfined {
            reason: "no Landlock".into(),
        },
        1,
    );
    assert!(hover.contains("(no Landlock)"), "{hover}");
}

/// A workspace holding `config.json`, and a task replacing its "1" run up
/// to its edit's approval card.
fn config_edit_at_its_card() -> (
    tempfile::TempDir,
    PathBuf,
    egui_kittest::Harness<'static, CocodeApp>,
) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), "{\"a\": 1}\n").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| loaded(h, "  config.json"));
    h.state_mut().agent.prompt = r#"replace "1" with "2" in config.json"#.into();
    h.run_steps(2);
    h.get_by_label("Run task").click();
    run_until(&mut h, "the approval card", |h| {
        h.query_by_label_contains("Allow the agent to edit a file?")
            .is_some()
    });
    (dir, root, h)
}

#[test]
fn stop_ends_a_task_waiting_for_an_approval_and_withdraws_the_card() {
    let (_dir, root, mut h) = config_edit_at_its_card();
    h.get_by_label("Stop").click();
    run_until(&mut h, "the stopped task", |h| {
        !h.state().agent.current().running && h.state().agent.tool_approvals.is_empty()
    });
    let transcript = h.state().agent.current().transcript.text();
    assert!(
        transcript
            .lines()
            .any(|l| l.ends_with(": stopped: a person stopped it")),
        "{transcript}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("config.json")).unwrap(),
        "{\"a\": 1}\n",
        "nothing changed"
    );
}

/// A workspace whose `workspace.json` configures the scripted ACP agent.
#[cfg(unix)]
fn scripted_acp_workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("keep.txt"), "k\n").unwrap();
    drop(cocode_workspace::OpenWorkspace::open(&root).unwrap());
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../crates/acp/tests/agents/scripted_agent.py")
        .canonicalize()
        .unwrap();
    let config_path = root.join(".cocode/config/workspace.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["acp_agents"] = serde_json::json!([{
        "id": "scripted",
        "display_name": "Scripted agent",
        "command": ["python3", script],
    }]);
    std::fs::write(&config_path, config.to_string()).unwrap();
    crate::window::testing::trust_folder_settings(&root);
    (dir, root)
}

/// Picks the scripted agent in the backend picker and runs `prompt`.
#[cfg(unix)]
fn run_scripted_agent(h: &mut egui_kittest::Harness<'_, CocodeApp>, prompt: &str) {
    run_until(h, "the workspace's agents", |h| {
        h.state()
            .agent
            .acp_agents
            .iter()
            .any(|a| a.id == "scripted")
    });
    h.get_by_role(egui::accesskit::Role::ComboBox).click();
    h.run_steps(2);
    h.get_by_label("Scripted agent (ACP: scripted)").click();
    h.run_steps(2);
    assert_eq!(h.state().agent.backend, "acp:scripted");
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .click();
    h.run_steps(2);
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .type_text(prompt);
    h.run_steps(2);
    h.get_by_label("Run task").click();
}

/// An external agent's permission request shows its own question and its
/// own answers; the write it then makes is not asked about again.
#[cfg(unix)]
#[test]
fn an_acp_agents_permission_card_offers_its_own_answers_and_asks_once() {
    let (_dir, root) = scripted_acp_workspace();
    let mut h = harness(Some(root.clone()));
    run_scripted_agent(&mut h, "permitwrite out.txt from the card");
    run_until(&mut h, "the agent's question", |h| {
        h.query_by_label("Write out.txt").is_some()
    });
    for answer in ["Allow once", "Always allow", "Reject"] {
        h.get_by_label(answer);
    }
    assert!(h.query_by_label("Approve").is_none());
    h.get_by_label("Allow once").click();
    accept_completion(&mut h);
    assert_eq!(
        std::fs::read_to_string(root.join("out.txt")).unwrap(),
        "from the card"
    );
    let transcript = h.state().agent.current().transcript.text();
    assert!(transcript.contains("written"), "{transcript}");
    assert!(
        !transcript.contains("write a file"),
        "the write was asked about again: {transcript}"
    );
}

/// A workspace whose scripted agent runs a turn that ignores the cancel
/// (it stops only when ended), shown thinking in the window.
#[cfg(target_os = "linux")]
fn stubborn_agent_thinking() -> (
    tempfile::TempDir,
    PathBuf,
    egui_kittest::Harness<'static, CocodeApp>,
) {
    let (dir, root) = scripted_acp_workspace();
    let mut h = harness(Some(root.clone()));
    run_scripted_agent(&mut h, "stubborn");
    run_until(&mut h, "the agent thinking", |h| {
        h.state()
            .agent
            .current()
            .transcript
            .text()
            .contains("thinking")
    });
    (dir, root, h)
}

/// The task list's state column.
#[cfg(target_os = "linux")]
fn task_states(h: &egui_kittest::Harness<'_, CocodeApp>) -> Vec<String> {
    h.state()
        .agent
        .tasks
        .iter()
        .map(|t| t.state.clone())
        .collect()
}

/// Closing the window stops a running external agent's task as a person's
/// stop would: the task is saved as stopped and no agent process is left.
#[cfg(target_os = "linux")]
#[test]
fn closing_the_window_stops_a_running_agent_and_saves_its_task_as_stopped() {
    let (_dir, root, mut h) = stubborn_agent_thinking();
    let agents = || crate::window::testing::processes::in_folder(&root);
    assert!(!agents().is_empty(), "the agent runs in the workspace");
    h.state_mut()
        .stop_running_tasks(std::time::Duration::from_secs(10));
    assert_eq!(h.state().agent.running(), 0);
    let transcript = h.state().agent.current().transcript.text();
    assert!(
        transcript
            .lines()
            .any(|l| l.ends_with(": stopped: a person stopped it")),
        "{transcript}"
    );
    // Killed processes take a moment to be gone from the process table.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !agents().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(agents(), Vec::<u32>::new(), "an agent process was left");
}

#[cfg(unix)]
#[test]
fn an_acp_agent_of_the_workspace_is_picked_and_run_from_the_agent_panel() {
    let (_dir, root) = scripted_acp_workspace();
    let mut h = harness(Some(root.clone()));
    run_scripted_agent(&mut h, "write out.txt from the window");
    run_until(&mut h, "the approval card", |h| {
        h.query_by_label_contains("Allow the agent to write a file?")
            .is_some()
    });
    assert!(
        !root.join("out.txt").exists(),
        "nothing before the approval"
    );
    h.get_by_label("Approve").click();
    accept_completion(&mut h);
    assert_eq!(
        std::fs::read_to_string(root.join("out.txt")).unwrap(),
        "from the window"
    );
    let transcript = h.state().agent.current().transcript.text();
    assert!(transcript.contains("written"), "{transcript}");
    assert!(
        transcript
            .lines()
            .any(|l| l.ends_with(": completed: a person approved it")
                || l.ends_with(": completed: verification passed")),
        "{transcript}"
    );
}

#[cfg(unix)]
#[test]
fn an_acp_agent_that_is_not_installed_says_so_and_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("keep.txt"), "k\n").unwrap();
    drop(cocode_workspace::OpenWorkspace::open(&root).unwrap());
    let config_path = root.join(".cocode/config/workspace.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    // The Codex preset's id, with a program no machine has.
    config["acp_agents"] = serde_json::json!([{
        "id": "codex",
        "display_name": "Codex",
        "command": ["codex-acp-not-here", "--flag"],
    }, {
        "id": "absent",
        "display_name": "Absent agent",
        "command": ["/no/such/agent-program"],
    }]);
    std::fs::write(&config_path, config.to_string()).unwrap();
    crate::window::testing::trust_folder_settings(&root);
    let mut h = harness(Some(root));
    run_until(&mut h, "the workspace's agents", |h| {
        h.state().agent.acp_agents.iter().any(|a| a.id == "absent")
    });
    let codex = h
        .state()
        .agent
        .acp_agents
        .iter()
        .find(|a| a.id == "codex")
        .cloned();
    assert_eq!(
        codex,
        Some(crate::window::workspace_service::AcpAgentRow {
            id: "codex".into(),
            name: "Codex".into(),
            missing: Some("not installed".into()),
        }),
        "a custom program has no known package"
    );
    h.get_by_role(egui::accesskit::Role::ComboBox).click();
    h.run_steps(2);
    h.get_by_label("Absent agent (ACP: absent) — not installed")
        .click();
    h.run_steps(2);
    assert_eq!(h.state().agent.backend, "acp:absent");
    h.get_by_label("Absent agent is not installed");
}

#[test]
fn the_picker_offers_the_acp_presets_before_the_folder_has_any_history() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root.clone()));
    h.run_steps(2);
    h.get_by_role(egui::accesskit::Role::ComboBox).click();
    h.run_steps(2);
    h.get_by_label("Gemini CLI (ACP: gemini)").click();
    h.run_steps(2);
    assert_eq!(h.state().agent.backend, "acp:gemini");
    assert!(
        !root.join(".cocode").exists(),
        "a folder stays untouched until its first task"
    );
}

/// Runs the typed prompt, approves its command (with the card's button)
/// and accepts completion when asked; returns when the run is over.
#[cfg(target_os = "linux")]
fn run_approving(h: &mut egui_kittest::Harness<'static, CocodeApp>) {
    run_until(h, "the approval card", |h| {
        h.query_by_label_contains("Allow the agent to run a command?")
            .is_some()
    });
    h.get_by_label("Approve").click();
    accept_completion(h);
}

/// A rollback that would revert files changed while the task's command
/// ran asks first (cocode cannot tell who changed them): Cancel touches
/// nothing, "Roll back anyway" reverts them.
#[cfg(target_os = "linux")]
#[test]
fn a_rollback_of_changes_made_while_a_command_ran_asks_first() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("notes.txt"), "n\n").unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| loaded(h, "  notes.txt"));
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .click();
    h.run_steps(2);
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .type_text(r#"run "echo changed > notes.txt""#);
    h.run_steps(2);
    h.get_by_label("Run task").click();
    run_approving(&mut h);
    run_until(&mut h, "the task list after the task", |h| {
        h.state().agent.tasks.len() == 1 && h.state().agent.running() == 0
    });
    let first = h.state().agent.tasks[0].clone();
    h.get_by_label_contains(&format!("{}  ", first.id)).click();
    run_until(&mut h, "the task detail", |h| {
        h.state().agent.detail.is_some()
    });
    assert_eq!(
        h.state().agent.detail.as_ref().unwrap().unknown_authors,
        vec!["notes.txt".to_owned()]
    );
    h.get_by_label("Roll back to the start (1 path(s))").click();
    h.run_steps(2);
    h.get_by_label_contains("1 path(s) changed while the task ran.");
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(
        h.query_by_label_contains("1 path(s) changed while the task ran.")
            .is_none()
    );
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "changed\n"
    );
    h.get_by_label("Roll back to the start (1 path(s))").click();
    h.run_steps(2);
    h.get_by_label("Roll back anyway").click();
    run_until(&mut h, "the rollback", |h| {
        h.state()
            .agent
            .note
            .as_deref()
            .is_some_and(|n| n.starts_with("rolled back 1 path(s)"))
    });
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "n\n"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_blocked_host_is_shown_in_the_review_and_allowed_for_a_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("notes.txt"), "n\n").unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| loaded(h, "  notes.txt"));
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .click();
    h.run_steps(2);
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .type_text(r#"run "curl -s -o /dev/null http://blocked.example/""#);
    h.run_steps(2);
    h.get_by_label("Run task").click();
    // The card shows the command line the person decides on.
    run_until(&mut h, "the approval card with its command", |h| {
        h.query_by_label("sh -c 'curl -s -o /dev/null http://blocked.example/'")
            .is_some()
            && h.query_by_label_contains("through the policy proxy (port")
                .is_some()
    });
    run_approving(&mut h);
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
        vec!["blocked.example".to_owned()]
    );
    h.get_by_label("Blocked hosts (1)");
    h.get_by_label("Allow blocked.example and re-run").click();
    run_approving(&mut h);
    let config = std::fs::read_to_string(root.join(".cocode/config/workspace.json")).unwrap();
    let config: serde_json::Value = serde_json::from_str(&config).unwrap();
    assert_eq!(
        config["allowed_hosts"],
        serde_json::json!(["blocked.example"])
    );
    run_until(&mut h, "the second task", |h| {
        h.state().agent.tasks.len() == 2
    });
    let note = h.state().agent.note.clone().unwrap_or_default();
    assert!(
        note.starts_with("blocked.example is allowed from now on"),
        "{note}"
    );
}

#[test]
fn a_new_workspace_is_created_from_a_brick_and_opened() {
    let parent = tempfile::tempdir().unwrap();
    let parent_path = std::fs::canonicalize(parent.path()).unwrap();
    std::fs::create_dir(parent_path.join("taken")).unwrap();
    let mut h = harness(None);
    h.run();
    // The welcome page offers it; so does the File menu.
    h.get_by_label("Welcome to cocode");
    h.get_by_label("File").click();
    h.run_steps(2);
    assert_eq!(h.query_all_by_label("New Workspace from Brick…").count(), 2);
    h.get_all_by_label("New Workspace from Brick…")
        .last()
        .unwrap()
        .click_accesskit();
    run_until(&mut h, "the bricks", |h| {
        h.state()
            .new_brick
            .as_ref()
            .is_some_and(|d| d.bricks.is_some() && d.check.is_some())
    });
    h.get_by_label("Type a name for the new folder.");
    let index = h
        .state()
        .new_brick
        .as_ref()
        .unwrap()
        .bricks
        .as_ref()
        .unwrap()
        .iter()
        .position(|b| b.name == "static-web")
        .unwrap();
    let ctx = egui::Context::default();
    for change in [
        BrickDialogChange::Brick(index),
        BrickDialogChange::Parent(parent_path.display().to_string()),
        BrickDialogChange::Name("taken".into()),
    ] {
        h.state_mut()
            .run(Command::Brick(BrickCommand::BrickDialog(change)), &ctx);
    }
    run_until(&mut h, "the check", |h| {
        h.state()
            .new_brick
            .as_ref()
            .is_some_and(|d| d.check.is_some())
    });
    h.get_by_label_contains("already exists");
    // Create is disabled while the check fails.
    h.get_by_label("Create").click();
    h.run_steps(3);
    assert!(!h.state().new_brick.as_ref().unwrap().creating);

    h.state_mut().run(
        Command::Brick(BrickCommand::BrickDialog(BrickDialogChange::Name(
            "내 사이트".into(),
        ))),
        &ctx,
    );
    h.state_mut().run(
        Command::Brick(BrickCommand::BrickDialog(BrickDialogChange::Value {
            name: "title".into(),
            value: "안녕".into(),
        })),
        &ctx,
    );
    let dest = parent_path.join("내 사이트");
    run_until(&mut h, "a passing check", |h| {
        h.state()
            .new_brick
            .as_ref()
            .is_some_and(|d| d.check == Some(Ok(())))
    });
    h.get_by_label(&format!("Creates {}", dest.display()));
    h.get_by_label("Create").click();
    run_until(&mut h, "the new workspace", |h| {
        h.state().workspace_root().is_some()
    });
    assert_eq!(h.state().workspace_root(), Some(&dest));
    assert!(h.state().new_brick.is_none());
    let index_html = std::fs::read_to_string(dest.join("index.html")).unwrap();
    assert!(index_html.contains("<title>안녕</title>"), "{index_html}");
    run_until(&mut h, "the explorer", |h| loaded(h, "  index.html"));
}

#[test]
fn one_runtime_serves_the_workspace_and_the_brick_dialog() {
    let dir = fixture();
    std::fs::create_dir(dir.path().join(".cocode")).unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root));
    // The workspace's host is open once the status bar knows its sandbox.
    run_until(&mut h, "the workspace's host", |h| {
        h.state().agent.sandbox.is_some()
    });
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("New Workspace from Brick…").click();
    run_until(&mut h, "the bricks", |h| {
        h.state()
            .new_brick
            .as_ref()
            .is_some_and(|d| d.bricks.is_some() && d.check.is_some())
    });
    assert_eq!(crate::host::runtime::built(), 1);
    // Neither worker runs a thread (and so a runtime) of its own.
    let names: Vec<String> = std::fs::read_dir("/proc/self/task")
        .map(|tasks| {
            tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
                .map(|n| n.trim().to_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        names
            .iter()
            .all(|n| !n.starts_with("cocode-task") && n != "cocode-bricks"),
        "{names:?}"
    );
    if cfg!(target_os = "linux") {
        assert!(names.iter().any(|n| n == "cocode-worker"), "{names:?}");
    }
}

#[test]
fn a_crash_report_of_an_earlier_run_is_announced_once() {
    let data = tempfile::tempdir().unwrap();
    let crashes = crate::host::crash::crash_dir(data.path());
    // A panic of an earlier run, with a key in its message.
    crate::host::crash::install_hook(crashes.clone(), Vec::new());
    let _ = std::panic::catch_unwind(|| panic!("lost with sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWX"));
    let _ = std::panic::take_hook();
    let reports = crate::host::crash::unseen(&crashes);
    assert_eq!(reports.len(), 1);
    let text = std::fs::read_to_string(&reports[0]).unwrap();
    assert!(text.contains("message: lost with [redacted]\n"), "{text}");

    let mut h = crate::window::testing::harness_with(None, |app| {
        app.crash_notice = CrashNotice::scan(&crashes);
    });
    h.run_steps(2);
    let said = format!("A crash report was saved in {}.", crashes.display());
    assert!(h.query_by_label("cocode stopped unexpectedly").is_some());
    assert!(h.query_by_label(&said).is_some());
    h.get_by_label("Dismiss").click();
    run_until(&mut h, "the reports marked seen", |_| {
        crate::host::crash::unseen(&crashes).is_empty()
    });
    assert!(h.query_by_label(&said).is_none());
    // The next start is quiet.
    assert_eq!(CrashNotice::scan(&crashes), None);
}

/// The paths of the approval cards of conversation tab `tab`.
#[cfg(target_os = "linux")]
fn card_paths(agent: &AgentPanel, tab: usize) -> Vec<String> {
    agent
        .approvals_of(&agent.conversations[tab])
        .into_iter()
        .flat_map(|a| match a.preview.as_deref() {
            Some(cocode_tool_protocol::ApprovalPreview::Changes(c)) => {
                c.iter().map(|c| c.path.clone()).collect()
            }
            _ => vec![format!("{:?}", a.preview)],
        })
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn two_tasks_run_at_once_each_in_its_own_tab_with_its_own_approvals() {
    use crate::window::agent::Standing;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), "{\"a\": 1}\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "draft\n").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| loaded(h, "  notes.txt"));
    h.get_by_label("New task");
    // The first task waits for the person on its edit.
    type_prompt(&mut h, r#"replace "1" with "2" in config.json"#);
    h.get_by_label("Run task").click();
    run_until(&mut h, "the first card", |h| {
        h.query_by_label_contains("Allow the agent to edit a file?")
            .is_some()
    });
    // A second task starts meanwhile, in a tab of its own.
    type_prompt(&mut h, r#"replace "draft" with "final" in notes.txt"#);
    h.get_by_label("Run task").click();
    run_until(&mut h, "the second task's card", |h| {
        h.state().agent.conversations.len() == 2 && h.state().agent.tool_approvals.len() == 2
    });
    h.run_steps(2);
    let agent = &h.state().agent;
    assert_eq!(agent.active, 1);
    assert_eq!(agent.running(), 2);
    let standings: Vec<Standing> = agent
        .conversations
        .iter()
        .map(|c| agent.standing(c))
        .collect();
    assert_eq!(
        standings,
        vec![Standing::NeedsApproval, Standing::NeedsApproval]
    );
    // Each tab shows its own card only; the status bar counts both tasks.
    h.get_by_label("2 tasks running");
    h.get_by_label_contains(r#"replace "1" with "2" in …"#);
    h.get_by_label_contains(r#"replace "draft" with "fi…"#);
    assert_eq!(
        h.query_all_by_label("Allow the agent to edit a file?")
            .count(),
        1
    );
    assert_eq!(card_paths(agent, 1), vec!["notes.txt"]);
    assert_eq!(card_paths(agent, 0), vec!["config.json"]);
    // The second task is approved and ends; the first still waits.
    h.get_by_label("Tasks (2)").click();
    h.run_steps(2);
    approve_and_accept(&mut h, &["edit a file"]);
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "final\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("config.json")).unwrap(),
        "{\"a\": 1}\n"
    );
    assert_eq!(h.state().agent.running(), 1);
    h.get_by_label("1 task running");
    // Back in the first tab, its card is there and is answered.
    h.get_by_label_contains(r#"replace "1" with "2" in …"#)
        .click();
    h.run_steps(2);
    assert_eq!(h.state().agent.active, 0);
    // Its card takes the keyboard, though a card stood in the same place.
    assert!(h.get_by_label("Approve").is_focused());
    assert_eq!(
        h.query_all_by_label("Allow the agent to edit a file?")
            .count(),
        1
    );
    approve_and_accept(&mut h, &["edit a file"]);
    assert_eq!(
        std::fs::read_to_string(root.join("config.json")).unwrap(),
        "{\"a\": 2}\n"
    );
    run_until(&mut h, "both tasks in the list, ended", |h| {
        h.state().agent.tasks.len() == 2 && h.state().agent.running() == 0
    });
    let agent = &h.state().agent;
    for conv in &agent.conversations {
        assert_eq!(agent.standing(conv), Standing::Ended);
        assert!(
            conv.transcript
                .text()
                .lines()
                .any(|l| l.ends_with(": completed: a person approved it")),
            "{}",
            conv.transcript.text()
        );
    }
}

#[test]
fn an_approval_card_takes_the_focus_keeps_it_on_its_buttons_and_escape_denies() {
    let (_dir, root, mut h) = config_edit_at_its_card();
    h.run_steps(2);
    let focused = |h: &egui_kittest::Harness<'static, CocodeApp>| {
        ["Approve", "Allow for this task", "Deny"]
            .into_iter()
            .find(|b| h.get_by_label(b).is_focused())
    };
    assert_eq!(focused(&h), Some("Approve"));
    // Tab goes round the card's buttons and never leaves them.
    let mut seen = Vec::new();
    for _ in 0..4 {
        h.key_press(Key::Tab);
        h.run_steps(2);
        seen.push(focused(&h));
    }
    h.key_press_modifiers(Modifiers::SHIFT, Key::Tab);
    h.run_steps(2);
    seen.push(focused(&h));
    assert_eq!(
        seen,
        vec![
            Some("Allow for this task"),
            Some("Deny"),
            Some("Approve"),
            Some("Allow for this task"),
            Some("Approve"),
        ]
    );
    // The card's buttons and hint stay inside the panel, as far right as
    // the composer's Stop at most.
    let stop_while_running = h.get_by_label("Stop").rect();
    let card_hint = h.get_by_label("Enter: approve · Esc: deny").rect();
    assert!(card_hint.max.x <= stop_while_running.max.x, "{card_hint:?}");
    // Escape denies: the card goes and the file stays. The agent, told
    // so, ends its turn and waits for a reply: the composer's row becomes
    // Reply, Finish & verify, Stop, and Stop stays where it was (a click
    // aimed at it as the row changes still stops the task).
    h.key_press(Key::Escape);
    run_until(&mut h, "the agent waiting for a reply", |h| {
        h.state().agent.tool_approvals.is_empty()
            && h.state().agent.current().awaiting_reply.is_some()
    });
    h.run_steps(2);
    h.get_by_label("Finish & verify");
    assert_eq!(h.get_by_label("Stop").rect(), stop_while_running);
    h.get_by_label("Stop").click();
    run_until(&mut h, "the end of the task", |h| {
        h.state().agent.running() == 0
    });
    assert_eq!(
        std::fs::read_to_string(root.join("config.json")).unwrap(),
        "{\"a\": 1}\n"
    );
    let transcript = h.state().agent.current().transcript.text();
    assert!(transcript.contains("denied"), "{transcript}");
}

/// A file dropped on the window, as eframe hands it over.
#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn folders_and_files_the_system_asks_to_open_reach_the_window() {
    let (a, b) = (fixture(), fixture());
    let a_root = std::fs::canonicalize(a.path()).unwrap();
    let b_root = std::fs::canonicalize(b.path()).unwrap();
    let mut h = harness(Some(a_root.clone()));
    run_until(&mut h, "the root listing", |h| loaded(h, "  안녕하세요.md"));

    // Nothing would be lost: the other folder opens at once, by its real
    // path.
    h.state().open_requests.push(vec![b.path().join("src/..")]);
    run_until(&mut h, "the other folder", |h| {
        h.state().workspace_root() == Some(&b_root)
    });
    assert!(h.state().switching.is_none());

    // A file of the open folder opens in an editor; the folder open already,
    // asked for again, is left as it is (the editor stays).
    h.state()
        .open_requests
        .push(vec![b.path().join("src/main.rs"), b_root.clone()]);
    run_until(&mut h, "the editor", |h| {
        h.state().editors.tabs.iter().any(|t| t.name() == "main.rs")
    });
    h.run_steps(3);
    assert_eq!(h.state().workspace_root(), Some(&b_root));
    let names: Vec<String> = h
        .state()
        .editors
        .tabs
        .iter()
        .map(crate::window::editors::EditorTab::name)
        .collect();
    assert_eq!(names, vec!["main.rs".to_owned()]);

    // A file elsewhere is not opened behind the person's back: the Open
    // Folder dialog says why, at that file's folder.
    let outside = a_root.join("src/main.rs");
    h.state().open_requests.push(vec![outside.clone()]);
    run_until(&mut h, "the dialog's error", |h| {
        h.state().dialog.as_ref().is_some_and(|d| d.error.is_some())
    });
    let message = format!(
        "{} is not in the open folder ({}); open its folder to edit it",
        outside.display(),
        b_root.display()
    );
    let dialog = h.state().dialog.clone().unwrap();
    assert_eq!(dialog.browsing, a_root.join("src"));
    assert_eq!(dialog.error.as_deref(), Some(message.as_str()));
    h.run_steps(2);
    h.get_by_label(&message);
    assert_eq!(h.state().workspace_root(), Some(&b_root));

    // Something that is gone says so the same way.
    h.key_press(Key::Escape);
    h.run_steps(2);
    let gone = b_root.join("gone");
    h.state().open_requests.push(vec![gone.clone()]);
    run_until(&mut h, "the dialog's error", |h| {
        h.state().dialog.as_ref().is_some_and(|d| {
            d.error
                .as_deref()
                .is_some_and(|e| e.ends_with(&format!(": {}", gone.display())))
        })
    });
    assert_eq!(h.state().dialog.as_ref().unwrap().browsing, b_root);
}

#[test]
fn a_folder_dropped_on_the_window_opens_and_the_window_says_what_a_drop_does() {
    let dir = fixture();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(None);
    h.run();
    let hint = "Drop a folder to open it";
    assert!(h.query_by_label(hint).is_none());
    h.input_mut().hovered_files.push(egui::HoveredFile {
        path: Some(root.clone()),
        ..Default::default()
    });
    h.run_steps(2);
    h.get_by_label(hint);
    h.input_mut().hovered_files.clear();
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(root.clone())));
    run_until(&mut h, "the dropped folder", |h| {
        h.state().workspace_root() == Some(&root)
    });
    assert!(
        h.query_by_label(hint).is_none(),
        "the hint goes with the drag"
    );
    // With a folder open, a drag says a file of it opens too.
    h.input_mut()
        .hovered_files
        .push(egui::HoveredFile::default());
    h.run_steps(2);
    h.get_by_label("Drop a folder to open it, or a file of this folder to edit it");
    h.input_mut().hovered_files.clear();
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(root.join("안녕하세요.md"))));
    run_until(&mut h, "the dropped file's editor", |h| {
        h.state()
            .editors
            .tabs
            .iter()
            .any(|t| t.name() == "안녕하세요.md")
    });
}

/// Types `text` into the focused editor.
fn type_into_editor(h: &mut egui_kittest::Harness<'static, CocodeApp>, text: &str) {
    h.event(egui::Event::Text(text.to_owned()));
    h.run_steps(2);
}

#[test]
fn opening_another_folder_asks_first_when_files_have_unsaved_changes() {
    let (a, b) = (fixture(), fixture());
    let a_root = std::fs::canonicalize(a.path()).unwrap();
    let b_root = std::fs::canonicalize(b.path()).unwrap();
    let original = std::fs::read_to_string(a_root.join("안녕하세요.md")).unwrap();
    let mut h = harness(Some(a_root.clone()));
    crate::window::testing::open_in_editor(&mut h, "안녕하세요.md");
    type_into_editor(&mut h, "새 줄 ");
    assert_eq!(h.state().losses().unsaved, 1);

    let b_name = b_root.file_name().unwrap().to_string_lossy().into_owned();
    let heading = format!("Open {b_name}?");
    h.state().open_requests.push(vec![b_root.clone()]);
    run_until(&mut h, "the question", |h| {
        h.query_by_label(&heading).is_some()
    });
    h.get_by_label(&format!("{} closes in this window:", a_root.display()));
    h.get_by_label("• 1 file has unsaved changes");
    assert!(h.query_by_label_contains("agent task").is_none());

    // Cancel keeps the folder and the change.
    h.get_by_label("Cancel").click_accesskit();
    h.run_steps(3);
    assert!(h.state().switching.is_none());
    assert!(h.query_by_label(&heading).is_none());
    assert_eq!(h.state().workspace_root(), Some(&a_root));
    assert_eq!(h.state().losses().unsaved, 1);

    // Save All and Open, which has the keyboard: the change is on disk,
    // then the folder opens.
    h.state().open_requests.push(vec![b_root.clone()]);
    run_until(&mut h, "the question", |h| {
        h.query_by_label(&heading).is_some()
    });
    h.run_steps(2);
    assert!(h.get_by_label("Save All and Open").is_focused());
    h.key_press(Key::Enter);
    run_until(&mut h, "the other folder", |h| {
        h.state().workspace_root() == Some(&b_root)
    });
    assert_eq!(
        std::fs::read_to_string(a_root.join("안녕하세요.md")).unwrap(),
        format!("새 줄 {original}")
    );
    assert!(h.state().editors.tabs.is_empty());

    // Open Without Saving: the change is dropped, the file untouched.
    crate::window::testing::open_in_editor(&mut h, "안녕하세요.md");
    type_into_editor(&mut h, "버림 ");
    assert_eq!(h.state().losses().unsaved, 1);
    let a_name = a_root.file_name().unwrap().to_string_lossy().into_owned();
    h.state().open_requests.push(vec![a_root.clone()]);
    run_until(&mut h, "the question", |h| {
        h.query_by_label(&format!("Open {a_name}?")).is_some()
    });
    h.get_by_label("Open Without Saving").click_accesskit();
    run_until(&mut h, "the first folder again", |h| {
        h.state().workspace_root() == Some(&a_root)
    });
    assert_eq!(
        std::fs::read_to_string(b_root.join("안녕하세요.md")).unwrap(),
        original
    );
    assert_eq!(h.state().losses(), Losses::default());
}

/// An agent that takes its time to stop (it ignores the cancel until it
/// is ended) is stopped and saved so before the other folder opens, and
/// none of its processes is left.
#[cfg(target_os = "linux")]
#[test]
fn opening_another_folder_stops_a_running_task_first_and_it_is_saved_as_stopped() {
    let (_dir, root, mut h) = stubborn_agent_thinking();
    let agents = || crate::window::testing::processes::in_folder(&root);
    assert!(!agents().is_empty(), "the agent runs in the workspace");

    let other = fixture();
    let other_root = std::fs::canonicalize(other.path()).unwrap();
    let other_name = other_root
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    h.state().open_requests.push(vec![other_root.clone()]);
    run_until(&mut h, "the question", |h| {
        h.query_by_label(&format!("Open {other_name}?")).is_some()
    });
    h.get_by_label("• 1 agent task is running; it will be stopped");
    assert!(h.query_by_label("Save All and Open").is_none());
    h.run_steps(2);
    assert!(h.get_by_label("Open").is_focused());
    h.key_press(Key::Enter);
    run_until(&mut h, "the other folder", |h| {
        h.state().workspace_root() == Some(&other_root)
    });
    // The folder opened only once the task had stopped and been saved so.
    let statuses: Vec<String> =
        crate::host::records::load_all(&cocode_workspace::Layout::new(&root))
            .into_iter()
            .map(|t| t.unwrap().status().to_string())
            .collect();
    assert_eq!(statuses, vec!["stopped".to_owned()]);
    assert_eq!(agents(), Vec::<u32>::new(), "an agent process was left");

    // Back in the first folder, the task is listed as stopped by a person.
    h.state().open_requests.push(vec![root.clone()]);
    run_until(&mut h, "the first folder's tasks", |h| {
        h.state().workspace_root() == Some(&root) && h.state().agent.tasks.len() == 1
    });
    assert_eq!(
        task_states(&h),
        vec!["stopped: a person stopped it".to_owned()]
    );
}

/// A folder left while its agent was still stopping (the agent ignores the
/// cancel until it is ended) opens again at once: its new workspace service
/// waits for the old one to let go of the folder instead of finding it
/// "open for writing in another cocode process" (this one).
#[cfg(target_os = "linux")]
#[test]
fn a_folder_left_while_its_agent_was_stopping_opens_again_at_once() {
    let (_dir, root, mut h) = stubborn_agent_thinking();
    let other = fixture();
    let other_root = std::fs::canonicalize(other.path()).unwrap();
    // Away and back in one go, without waiting for the agent to stop.
    h.state_mut().open_workspace(other_root);
    h.state_mut().open_workspace(root.clone());
    run_until(&mut h, "the folder's tasks", |h| {
        h.state().agent.tasks.len() == 1 || h.state().agent.error.is_some()
    });
    assert_eq!(h.state().agent.error, None);
    assert_eq!(
        task_states(&h),
        vec!["stopped: a person stopped it".to_owned()]
    );
    assert_eq!(
        crate::window::testing::processes::in_folder(&root),
        Vec::<u32>::new(),
        "an agent process was left"
    );
}
