//! The workspace tool catalog: the canonical definitions every agent sees.
//!
//! The app registers a handler for each definition (its handlers call the
//! host use cases); the built-in agent and the local agent read the same
//! definitions, so a name, a schema or a limit exists in exactly one place.
//! The descriptions are model-facing: they state the limits a model must
//! respect, because a model cannot read this source. Input schemas are
//! generated from the handlers' typed arguments ([`crate::args`]).

use serde_json::{Value, json};

use crate::args::{
    ApplyEditsArgs, ApplyPatchArgs, CreateFileArgs, DeleteFileArgs, GetStatusArgs, ListFilesArgs,
    LspDiagnosticsArgs, ReadFileArgs, RenameFileArgs, SearchArgs, TaskFinishArgs, TerminalRunArgs,
    WriteFileArgs, input_schema,
};
use crate::types::{ToolAnnotations, ToolDefinition};

pub use crate::limits::{
    COMMAND_OUTPUT_LIMIT_BYTES, COMMAND_TIMEOUT_LIMIT_SECS, EDIT_BATCH_BYTES_LIMIT,
    EDIT_BATCH_LIMIT, LIST_PAGE_LIMIT, LSP_QUERY_FILES, SEARCH_RESULT_LIMIT, SOURCE_LIMIT_BYTES,
};

pub const GET_STATUS: &str = "workspace.getStatus";
pub const LIST_FILES: &str = "workspace.listFiles";
pub const READ_FILE: &str = "workspace.readFile";
pub const SEARCH: &str = "workspace.search";
pub const WRITE_FILE: &str = "workspace.writeFile";
pub const APPLY_PATCH: &str = "workspace.applyPatch";
pub const CREATE_FILE: &str = "workspace.createFile";
pub const RENAME_FILE: &str = "workspace.renameFile";
pub const DELETE_FILE: &str = "workspace.deleteFile";
pub const APPLY_EDITS: &str = "workspace.applyEdits";
pub const TERMINAL_RUN: &str = "terminal.run";
pub const LSP_DIAGNOSTICS: &str = "lsp.diagnostics";
pub const TASK_FINISH: &str = "task.finish";

const READ_ONLY: ToolAnnotations = ToolAnnotations {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};
const MUTATION: ToolAnnotations = ToolAnnotations {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};
const DESTRUCTIVE: ToolAnnotations = ToolAnnotations {
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: false,
};

fn edit_result_schema() -> Value {
    json!({
        "type": "object",
        "required": ["path", "outcome"],
        "properties": {
            "path": {"type": "string"},
            "outcome": {"enum": ["applied", "held_for_approval"]},
            "revision": {"type": ["string", "null"]}
        }
    })
}

fn def(
    name: &str,
    title: &str,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    annotations: ToolAnnotations,
) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        title: title.to_owned(),
        description,
        input_schema,
        output_schema,
        annotations,
    }
}

/// Every tool of the workspace catalog, in the order models see them.
#[expect(
    clippy::too_many_lines,
    reason = "one literal definition per tool reads best side by side"
)]
pub fn workspace_tools() -> Vec<ToolDefinition> {
    vec![
        def(
            GET_STATUS,
            "Workspace status",
            "The workspace's state: its root name, the paths with edits held for \
             approval, paths locked by other tasks, the project kinds detected (cargo, \
             python, node, dart) with their test commands, and whether history is \
             recorded. Call it first."
                .to_owned(),
            input_schema::<GetStatusArgs>(),
            Some(json!({
                "type": "object",
                "required": ["root", "projects", "heldPaths", "lockedPaths"],
                "properties": {
                    "root": {"type": "string"},
                    "projects": {"type": "array", "items": {
                        "type": "object",
                        "required": ["kind", "path"],
                        "properties": {
                            "kind": {"type": "string"},
                            "path": {"type": "string"},
                            "testCommand": {"type": ["array", "null"], "items": {"type": "string"}}
                        }
                    }},
                    "heldPaths": {"type": "array", "items": {"type": "string"}},
                    "lockedPaths": {"type": "array", "items": {"type": "string"}}
                }
            })),
            READ_ONLY,
        ),
        def(
            LIST_FILES,
            "List files",
            format!(
                "Lists files under a folder (default: the whole workspace), skipping \
                 what .gitignore ignores, with sizes in bytes. At most {LIST_PAGE_LIMIT} \
                 entries per page; pass `cursor` from the previous page for more."
            ),
            input_schema::<ListFilesArgs>(),
            Some(json!({
                "type": "object",
                "required": ["files"],
                "properties": {
                    "files": {"type": "array", "items": {
                        "type": "object",
                        "required": ["path", "size"],
                        "properties": {"path": {"type": "string"}, "size": {"type": "integer"}}
                    }},
                    "nextCursor": {"type": ["string", "null"]}
                }
            })),
            READ_ONLY,
        ),
        def(
            READ_FILE,
            "Read a file",
            format!(
                "Reads a text file (optionally a 1-based inclusive line range) and returns \
                 its content with its `revision`. Pass that revision as `expectedRevision` \
                 when you edit the file. Files over {SOURCE_LIMIT_BYTES} bytes must be read \
                 by line range; binary files are refused (WORKSPACE_BINARY_FILE)."
            ),
            input_schema::<ReadFileArgs>(),
            Some(json!({
                "type": "object",
                "required": ["path", "content", "revision", "startLine", "endLine", "totalLines"],
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"},
                    "revision": {"type": "string"},
                    "startLine": {"type": "integer"},
                    "endLine": {"type": "integer"},
                    "totalLines": {"type": "integer"},
                    "unsaved": {
                        "type": "boolean",
                        "description": "Present and true when the content is the editor's unsaved text, which differs from the file on disk; the file cannot be edited until it is saved or discarded."
                    }
                }
            })),
            READ_ONLY,
        ),
        def(
            SEARCH,
            "Search",
            format!(
                "Searches file contents for a literal string (or a regular expression when \
                 `regex` is true), skipping ignored files. Returns up to {SEARCH_RESULT_LIMIT} \
                 matches as path, 1-based line and a one-line preview."
            ),
            input_schema::<SearchArgs>(),
            None,
            READ_ONLY,
        ),
        def(
            WRITE_FILE,
            "Write a file",
            format!(
                "Replaces a text file's whole content, or creates it. Every edit is \
                 recorded and can be reviewed and rolled back. Content is limited to \
                 {SOURCE_LIMIT_BYTES} UTF-8 bytes (WORKSPACE_SOURCE_LIMIT). Edits to test \
                 files under protected paths wait for a person's approval \
                 (outcome `held_for_approval`)."
            ),
            input_schema::<WriteFileArgs>(),
            Some(edit_result_schema()),
            MUTATION,
        ),
        def(
            APPLY_PATCH,
            "Replace text",
            format!(
                "Replaces literal text in a file: the first occurrence of `search`, or all \
                 of them with `occurrence: \"all\"`. Fails with WORKSPACE_PATCH_NOT_FOUND when \
                 `search` does not occur. The result is limited to {SOURCE_LIMIT_BYTES} UTF-8 \
                 bytes. Pass the `revision` from readFile as `expectedRevision`."
            ),
            input_schema::<ApplyPatchArgs>(),
            Some(edit_result_schema()),
            MUTATION,
        ),
        def(
            CREATE_FILE,
            "Create a file",
            format!(
                "Creates a new text file; refused with WORKSPACE_FILE_CONFLICT when the path \
                 exists. Content is limited to {SOURCE_LIMIT_BYTES} UTF-8 bytes."
            ),
            input_schema::<CreateFileArgs>(),
            Some(edit_result_schema()),
            MUTATION,
        ),
        def(
            RENAME_FILE,
            "Rename a file",
            "Renames or moves a file or folder inside the workspace; refused when the \
             destination exists."
                .to_owned(),
            input_schema::<RenameFileArgs>(),
            None,
            MUTATION,
        ),
        def(
            DELETE_FILE,
            "Delete a file",
            "Deletes a file or folder. The deletion is recorded and can be rolled back.".to_owned(),
            input_schema::<DeleteFileArgs>(),
            None,
            DESTRUCTIVE,
        ),
        def(
            APPLY_EDITS,
            "Edit several files at once",
            format!(
                "Applies up to {EDIT_BATCH_LIMIT} edits as one: either every edit lands or \
                 none does (the first refused edit's error is returned and nothing changes). \
                 Each edit is `op` with the arguments of the single-file tool: `write` \
                 (path, content, expectedRevision), `patch` (path, search, replace, \
                 occurrence, expectedRevision), `create` (path, content), `delete` (path, \
                 expectedRevision) or `rename` (path, to). Each path may appear in one edit \
                 only, and no edit may work on a folder containing another edit's path \
                 (WORKSPACE_FILE_CONFLICT). Each result is limited to {SOURCE_LIMIT_BYTES} \
                 UTF-8 bytes, all results together to {EDIT_BATCH_BYTES_LIMIT} \
                 (WORKSPACE_SOURCE_LIMIT). Every file change is recorded and rolled back \
                 like a single edit; if a protected test file would change, the whole set \
                 waits for a person's approval (outcome `held_for_approval`)."
            ),
            input_schema::<ApplyEditsArgs>(),
            Some(json!({
                "type": "object",
                "required": ["outcome", "files"],
                "properties": {
                    "outcome": {"enum": ["applied", "held_for_approval"]},
                    "files": {
                        "type": "array",
                        "description": "Every file the edits changed, in order, with its new revision (null when deleted; a renamed file is listed under its new path); empty while held",
                        "items": {
                            "type": "object",
                            "required": ["path", "revision"],
                            "properties": {
                                "path": {"type": "string"},
                                "revision": {"type": ["string", "null"]}
                            }
                        }
                    }
                }
            })),
            DESTRUCTIVE,
        ),
        def(
            TERMINAL_RUN,
            "Run a command",
            format!(
                "Runs a program (argv, no shell unless you name one) in the workspace, \
                 sandboxed: it may write only inside the workspace and reach only allowed \
                 hosts. Output is limited to {COMMAND_OUTPUT_LIMIT_BYTES} bytes (the start is \
                 trimmed) and the run to {COMMAND_TIMEOUT_LIMIT_SECS} seconds."
            ),
            input_schema::<TerminalRunArgs>(),
            Some(json!({
                "type": "object",
                "required": ["exitCode", "output", "truncated", "timedOut"],
                "properties": {
                    "exitCode": {"type": ["integer", "null"]},
                    "output": {"type": "string"},
                    "truncated": {"type": "boolean"},
                    "timedOut": {"type": "boolean"},
                    "signal": {"type": ["integer", "null"]}
                }
            })),
            MUTATION,
        ),
        def(
            LSP_DIAGNOSTICS,
            "Diagnostics",
            format!(
                "The language servers' diagnostics (errors, warnings, hints) for a file, or \
                 for the whole workspace when `path` is omitted (at most {LSP_QUERY_FILES} \
                 files). Lines and columns are 1-based; columns count characters. It \
                 reads the text as it is now, unsaved editor text included, so call it \
                 after an edit to see whether the edit type-checks."
            ),
            input_schema::<LspDiagnosticsArgs>(),
            Some(json!({
                "type": "object",
                "required": ["files", "checked", "omitted", "unanswered"],
                "properties": {
                    "files": {"type": "array", "items": {
                        "type": "object",
                        "required": ["path", "diagnostics"],
                        "properties": {
                            "path": {"type": "string"},
                            "diagnostics": {"type": "array", "items": {
                                "type": "object",
                                "required": ["severity", "line", "column", "endLine", "endColumn", "message"],
                                "properties": {
                                    "severity": {"enum": ["error", "warning", "info", "hint"]},
                                    "line": {"type": "integer"},
                                    "column": {"type": "integer"},
                                    "endLine": {"type": "integer"},
                                    "endColumn": {"type": "integer"},
                                    "message": {"type": "string"},
                                    "source": {"type": "string"},
                                    "code": {"type": "string"}
                                }
                            }}
                        }
                    }},
                    "checked": {"type": "integer"},
                    "omitted": {"type": "integer"},
                    "unanswered": {"type": "array", "items": {
                        "type": "object",
                        "required": ["path", "reason"],
                        "properties": {"path": {"type": "string"}, "reason": {"type": "string"}}
                    }}
                }
            })),
            READ_ONLY,
        ),
        def(
            TASK_FINISH,
            "Finish the attempt",
            "Declares the task's current attempt done. cocode then verifies the work \
             (static analysis, build, tests); the task completes only if verification \
             passes or a person approves. Call it once, last."
                .to_owned(),
            input_schema::<TaskFinishArgs>(),
            None,
            READ_ONLY,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;

    use super::*;
    use crate::approval::ApprovalQueue;
    use crate::registry::{RegistryOptions, ToolOutput, ToolRegistry};

    #[test]
    fn every_definition_registers_and_names_are_unique() {
        let mut registry =
            ToolRegistry::new(RegistryOptions::default(), Arc::new(ApprovalQueue::new()));
        let tools = workspace_tools();
        for tool in &tools {
            registry
                .register(
                    tool.clone(),
                    Arc::new(|_, _| async { Ok(ToolOutput::text("ok")) }),
                )
                .unwrap();
        }
        let names: BTreeSet<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names.len(), 13);
        assert_eq!(
            registry.list_all_tools().unwrap().len(),
            13,
            "every catalog tool is discoverable"
        );
    }

    #[test]
    fn mutations_are_not_read_only_and_finish_is() {
        let read_only: BTreeSet<_> = workspace_tools()
            .into_iter()
            .filter(|t| t.annotations.read_only)
            .map(|t| t.name)
            .collect();
        assert_eq!(
            read_only,
            BTreeSet::from(
                [
                    GET_STATUS,
                    LIST_FILES,
                    READ_FILE,
                    SEARCH,
                    LSP_DIAGNOSTICS,
                    TASK_FINISH
                ]
                .map(str::to_owned)
            )
        );
    }

    #[test]
    fn the_edit_set_declares_its_limits_in_schema_and_description() {
        let tool = workspace_tools()
            .into_iter()
            .find(|t| t.name == APPLY_EDITS)
            .unwrap();
        for limit in [
            EDIT_BATCH_LIMIT.to_string(),
            SOURCE_LIMIT_BYTES.to_string(),
            EDIT_BATCH_BYTES_LIMIT.to_string(),
        ] {
            assert!(tool.description.contains(&limit), "{limit}");
        }
        let edits = &tool.input_schema["properties"]["edits"];
        assert_eq!(
            (
                &edits["maxItems"],
                &edits["items"]["properties"]["content"]["maxLength"],
                &edits["items"]["properties"]["replace"]["maxLength"],
            ),
            (
                &json!(EDIT_BATCH_LIMIT),
                &json!(SOURCE_LIMIT_BYTES),
                &json!(SOURCE_LIMIT_BYTES)
            )
        );
        assert!(tool.annotations.destructive);
    }

    #[test]
    fn text_mutations_declare_the_source_limit_in_schema_and_description() {
        for name in [WRITE_FILE, APPLY_PATCH, CREATE_FILE] {
            let tool = workspace_tools()
                .into_iter()
                .find(|t| t.name == name)
                .unwrap();
            assert!(
                tool.description.contains(&SOURCE_LIMIT_BYTES.to_string()),
                "{name} description"
            );
            let key = if name == APPLY_PATCH {
                "replace"
            } else {
                "content"
            };
            assert_eq!(
                tool.input_schema["properties"][key]["maxLength"],
                json!(SOURCE_LIMIT_BYTES),
                "{name} schema"
            );
            // The field's own description (a doc comment, so a literal)
            // names the same limit.
            let field = tool.input_schema["properties"][key]["description"]
                .as_str()
                .unwrap();
            assert!(
                field.contains(&format!("at most {SOURCE_LIMIT_BYTES} UTF-8 bytes")),
                "{name}: {field}"
            );
        }
    }
}
