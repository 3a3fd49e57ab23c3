//! The Tool catalog panel in the window: its scope filter, a tool's policy
//! and schema, and an export equal to `cocode tools list --format openai`.

use egui_kittest::kittest::Queryable;
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
