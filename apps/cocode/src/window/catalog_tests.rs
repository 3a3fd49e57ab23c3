//! The Tool catalog panel in the window: its scope filter, a tool's policy
//! and schema, and an export equal to `cocode tools list --format openai`.

use egui_kittest::kittest::{NodeT as _, Queryable};
use pretty_assertions::assert_eq;

use crate::window::testing::harness;

#[test]
fn the_tool_catalog_filters_explains_and_exports_what_the_cli_prints() {
    let mut h = harness(None);
    h.run_steps(2);
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Show Tool Catalog").click();
    h.run_steps(3);
    // All the served tools, then only those that read.
    assert!(h.query_by_label_contains("workspace.writeFile").is_some());
    h.get_by_label("Read-only").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains("workspace.writeFile").is_none());
    h.get_by_label_contains("workspace.readFile").click();
    h.run_steps(2);
    h.get_by_label("Policy: runs without asking (it only reads)");
    h.get_by_label("Input schema");

    // The OpenAI export is, to the byte, what the command line prints.
    h.get_by_label("Copy as OpenAI JSON").click();
    h.run_steps(1);
    let copied: Vec<String> = h
        .output()
        .platform_output
        .commands
        .iter()
        .filter_map(|c| match c {
            egui::OutputCommand::CopyText(text) => Some(text.clone()),
            _ => None,
        })
        .collect();
    let mut printed = Vec::new();
    let code = crate::cli::task::tools_command(
        &crate::cli::args::ToolsCommand::List {
            format: "openai".to_owned(),
        },
        &mut printed,
    )
    .unwrap();
    assert_eq!(code, 0);
    let printed = String::from_utf8(printed).unwrap();
    assert_eq!(copied, vec![printed.trim_end_matches('\n').to_owned()]);
}

/// A read-only tool runs from the catalog with arguments checked as they
/// are typed; a tool that changes the workspace does not run from here.
#[test]
fn a_read_only_tool_runs_from_the_catalog_with_checked_sample_arguments() {
    let (_dir, root) =
        crate::window::testing::fixture_workspace(&[("notes.txt", "hello catalog\n")]);
    let mut h = harness(Some(root.clone()));
    crate::window::testing::run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  notes.txt").is_some()
    });
    h.state_mut()
        .show_panel(crate::window::command::PanelId::ToolCatalog);
    h.run_steps(3);
    h.get_by_label("Read-only").click();
    h.run_steps(2);
    h.get_by_label_contains("workspace.readFile").click();
    h.run_steps(2);
    // The sample holds what the schema requires; the empty path fits the
    // schema, so the tool's own answer says what is wrong with it.
    let sample = h.state().catalog.samples["workspace.readFile"].clone();
    let sample: serde_json::Value = serde_json::from_str(&sample).unwrap();
    assert_eq!(sample, serde_json::json!({"path": ""}));
    // Not JSON: said, and Run stays off.
    h.state_mut()
        .catalog
        .samples
        .insert("workspace.readFile".into(), "{ \"path\": ".into());
    h.run_steps(2);
    assert!(h.query_by_label_contains("not JSON:").is_some());
    assert!(
        h.get_by_label("Run sample of workspace.readFile")
            .accesskit_node()
            .is_disabled()
    );
    // Against the schema: a number where a path goes.
    h.state_mut()
        .catalog
        .samples
        .insert("workspace.readFile".into(), "{\"path\": 7}".into());
    h.run_steps(2);
    assert!(
        h.query_by_label_contains("/path: 7 is not of type")
            .is_some()
    );
    h.state_mut().catalog.samples.insert(
        "workspace.readFile".into(),
        "{\"path\": \"notes.txt\"}".into(),
    );
    h.run_steps(2);
    // Below the schemas: clicked where it is, as a scrolled-to button is.
    h.get_by_label("Run sample of workspace.readFile")
        .click_accesskit();
    crate::window::testing::run_until(&mut h, "the result", |h| {
        h.state().catalog.results.contains_key("workspace.readFile")
    });
    let result = h.state().catalog.results["workspace.readFile"]
        .clone()
        .unwrap();
    assert!(result.contains("hello catalog"), "{result}");
    assert!(result.contains("\"isError\": false"), "{result}");
    // The call is in the trace, made from the catalog.
    crate::window::testing::run_until(&mut h, "the call in the trace", |h| {
        h.state()
            .trace
            .rows
            .iter()
            .any(|r| r.tool == "workspace.readFile" && r.session_id == "tool-catalog")
    });
    // A tool that writes does not run from here: the host refuses it
    // even when asked directly.
    h.state_mut().run(
        crate::window::command::Command::Window(
            crate::window::command::WindowCommand::RunToolSample {
                name: "workspace.writeFile".into(),
                arguments: serde_json::json!({"path": "notes.txt", "content": "overwritten\n"})
                    .as_object()
                    .unwrap()
                    .clone(),
            },
        ),
        &egui::Context::default(),
    );
    crate::window::testing::run_until(&mut h, "the refusal", |h| {
        h.state()
            .catalog
            .results
            .contains_key("workspace.writeFile")
    });
    assert_eq!(
        h.state().catalog.results["workspace.writeFile"],
        Err(
            "workspace.writeFile changes the workspace: only read-only tools run from the catalog"
                .to_owned()
        )
    );
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "hello catalog\n"
    );
}
