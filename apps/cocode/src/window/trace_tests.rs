//! The Trace panel in the window: the calls of a finished local-agent
//! task, their redacted arguments, an export without argument values, and
//! Clear.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixture workspaces on disk"
)]

use cocode_tool_protocol::observe::LifecyclePhase;
use egui::Key;
use egui_kittest::kittest::Queryable;
use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::window::testing::{harness, run_until};

#[test]
fn the_trace_panel_lists_a_finished_tasks_calls_and_exports_no_argument_values() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), "{\"a\": 1}\n").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  config.json").is_some()
    });
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .click();
    h.run_steps(2);
    h.get_by_role(egui::accesskit::Role::MultilineTextInput)
        .type_text(r#"replace "1" with "2" in config.json"#);
    h.run_steps(2);
    h.get_by_label("Run task").click();
    run_until(&mut h, "the approval card", |h| {
        h.query_by_label_contains("Allow the agent to edit a file?")
            .is_some()
    });
    h.key_press(Key::Enter);
    run_until(&mut h, "the completion card", |h| {
        h.query_by_label_contains("passed verification. Accept it as completed?")
            .is_some()
    });
    h.get_by_label("Accept").click();
    run_until(&mut h, "the end of the run", |h| {
        !h.state().agent.current().running
    });
    // Every call that started also ended, and the edit is among them.
    run_until(&mut h, "the trace", |h| {
        let rows = &h.state().trace.rows;
        let started = rows
            .iter()
            .filter(|r| r.phase == LifecyclePhase::Started)
            .count();
        let ended = rows.len() - started;
        started > 0 && started == ended
    });
    let edits: Vec<(String, LifecyclePhase, Value)> = h
        .state()
        .trace
        .rows
        .iter()
        .filter(|r| r.arguments.get("path") == Some(&Value::from("config.json")))
        .filter(|r| r.tool != "workspace.readFile")
        .map(|r| (r.tool.clone(), r.phase, r.arguments.clone()))
        .collect();
    assert_eq!(edits.len(), 2, "{edits:?}");
    assert_eq!(edits[1].1, LifecyclePhase::Completed);
    // What the edit wrote is kept only as its length.
    let text = serde_json::to_string(&edits[1].2).unwrap();
    assert!(!text.contains("\\\"a\\\": 2"), "{text}");

    // The panel from the View menu: newest first, the edit's arguments
    // under its row.
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Show Trace").click();
    h.run_steps(3);
    let tool = edits[1].0.clone();
    h.get_by_label_contains(&format!("{tool}  completed"))
        .click();
    h.run_steps(2);
    h.get_by_label_contains("\"path\": \"config.json\"");

    // The export names tools and sessions, never an argument.
    let export = h.state().trace.export();
    assert!(export.contains(&tool), "{export}");
    assert!(!export.contains("config.json"), "{export}");

    // Clear empties it (no task runs).
    h.get_by_label("Clear").click();
    run_until(&mut h, "the cleared trace", |h| {
        h.state().trace.rows.is_empty()
    });
    h.get_by_label("No tool calls yet: the calls of this folder's tasks show here.");
}
