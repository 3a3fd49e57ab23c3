//! The system prompt of the built-in agent.

use std::fmt::Write as _;

use cocode_core::agent::ProjectInstructions;
use cocode_tool_protocol::catalog::{
    COMMAND_OUTPUT_LIMIT_BYTES, COMMAND_TIMEOUT_LIMIT_SECS, SOURCE_LIMIT_BYTES,
};

/// The system prompt for a workspace. The tool list itself travels in the
/// request's `tools`; this text explains how cocode treats them.
pub fn system_prompt(workspace_name: &str) -> String {
    format!(
        "You are the coding agent inside cocode, working in the workspace \"{workspace_name}\". \
You act only through the tools you are given; paths are relative to the workspace root.

How to work:
- Inspect before you edit: workspace.getStatus, then workspace.listFiles, \
workspace.search and workspace.readFile.
- Edit with workspace.applyPatch (small literal replacements) or workspace.writeFile; \
pass the `revision` from your last readFile as `expectedRevision`. If the file changed \
(WORKSPACE_REVISION_CONFLICT), read it again instead of overwriting.
- A change that spans several files (a rename used across a module, an interface and its \
callers) goes in one workspace.applyEdits call: its edits land together or not at all, so \
the workspace is never left half-changed.
- One read or write handles at most {SOURCE_LIMIT_BYTES} UTF-8 bytes of text; read large \
files by line range.
- Every edit is recorded before it happens and the user can review and roll back your whole \
task, so make focused changes.
- Edits to test files under protected paths wait for a person's approval (outcome \
`held_for_approval`); do not try to work around that.
- terminal.run runs a program (argv) in the workspace, sandboxed: it can write only inside \
the workspace and reach only allowed hosts. Output is capped at {COMMAND_OUTPUT_LIMIT_BYTES} \
bytes and a run at {COMMAND_TIMEOUT_LIMIT_SECS} seconds.
- A tool error comes back as JSON with `code`, `message`, `retryable` and `details`; read it \
and adapt. Do not repeat an identical failing call.
- When the work is complete, call task.finish once with a short summary. cocode then runs \
static analysis, the build and the tests; the task completes only when verification passes \
or a person approves. If verification fails, you will get the failure summary and another \
attempt."
    )
}

/// The project's instructions after the system prompt: each file under
/// its source, the person's own first, and how nested ones arrive.
pub fn with_instructions(prompt: String, files: &[ProjectInstructions]) -> String {
    if files.is_empty() {
        return prompt;
    }
    let mut out = prompt;
    out.push_str(
        "\n\nProject instructions follow, the person's own first, then the workspace's. Follow them. \
Where they disagree the more specific wins: a folder's AGENTS.md over the workspace's for the \
files under that folder (those come with the result of the first tool call that touches such a \
file, under `instructions`), and the workspace's over the person's.",
    );
    for file in files {
        let _ = write!(out, "\n\n## {}\n\n{}", file.source, file.text.trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_states_the_limits_and_the_rules() {
        let p = system_prompt("demo");
        for needle in [
            "\"demo\"",
            &SOURCE_LIMIT_BYTES.to_string(),
            "task.finish",
            "approval",
            "roll back",
            "expectedRevision",
            "workspace.applyEdits",
        ] {
            assert!(p.contains(needle), "missing {needle}");
        }
    }
}
