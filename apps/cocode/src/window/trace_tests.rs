//! The Trace panel in the window: the calls of a finished local-agent
//! task, their redacted arguments, an export without argument values, and
//! Clear.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixture workspaces on disk"
)]

use cocode_tool_protocol::observe::{LifecyclePhase, TraceMethod};
use egui_kittest::kittest::Queryable;
use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::window::testing::{approve_and_accept, harness, run_until, type_prompt};

#[test]
fn the_trace_panel_lists_a_finished_tasks_calls_and_exports_no_argument_values() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), "{\"a\": 1}\n").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  config.json").is_some()
    });
    type_prompt(&mut h, r#"replace "1" with "2" in config.json"#);
    h.get_by_label("Run task").click();
    approve_and_accept(&mut h, &["edit a file"]);
    // Every call and request that started also ended, and the edit is
    // among them.
    run_until(&mut h, "the trace", |h| {
        let rows = &h.state().trace.rows;
        let started = rows
            .iter()
            .filter(|r| r.phase == LifecyclePhase::Started)
            .count();
        let ended = rows
            .iter()
            .filter(|r| r.method != TraceMethod::ToolsList)
            .count()
            - started;
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
    // and result under its row, what it wrote only as its length.
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Show Trace").click();
    h.run_steps(3);
    let tool = edits[1].0.clone();
    h.get_by_label_contains(&format!("{tool}  completed"))
        .click();
    h.run_steps(2);
    h.get_by_label_contains("\"replace\": {\n    \"chars\": 1\n  }");
    h.get_by_label_contains("\"outcome\": \"applied\"");

    // The run discovered its tools first, under its session, and its
    // request to the local agent is a row of its own, ended with the turn.
    let session = h
        .state()
        .trace
        .calls()
        .iter()
        .find(|e| e.tool == tool)
        .map(|e| e.session_id.clone())
        .unwrap();
    let rows: Vec<(TraceMethod, LifecyclePhase, String)> = h
        .state()
        .trace
        .calls()
        .iter()
        .filter(|e| e.method != TraceMethod::ToolsCall)
        .map(|e| (e.method, e.phase, e.session_id.clone()))
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                TraceMethod::AgentRequest,
                LifecyclePhase::Completed,
                session.clone()
            ),
            (
                TraceMethod::ToolsList,
                LifecyclePhase::Completed,
                session.clone()
            ),
        ]
    );
    h.get_by_label_contains("agent.request local agent  completed  local agent · agent");
    h.get_by_label_contains("tools/list  completed  local agent · agent");

    // The export names tools and sessions, never an argument.
    let export = h.state().trace.export();
    assert!(export.contains(&tool), "{export}");
    assert!(export.contains("\"agent.request\""), "{export}");
    assert!(!export.contains("config.json"), "{export}");

    // Saved where the person chose, the same JSON.
    let out = tempfile::tempdir().unwrap();
    let saved = out.path().join("exports/trace.json");
    crate::window::testing::answer_dialogs(
        &mut h,
        crate::window::system_dialog::Picked::Chosen(saved.clone()),
    );
    h.get_by_label("Save metadata JSON…").click();
    run_until(&mut h, "the save", |h| h.state().trace.saved.is_some());
    assert_eq!(h.state().trace.saved, Some(Ok(saved.clone())));
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), export);
    h.get_by_label(&format!("Saved to {}", saved.display()));

    // Clear empties it (no task runs).
    h.get_by_label("Clear").click();
    run_until(&mut h, "the cleared trace", |h| {
        h.state().trace.rows.is_empty()
    });
    h.get_by_label("No tool calls yet: the calls of this folder's tasks show here.");
}
