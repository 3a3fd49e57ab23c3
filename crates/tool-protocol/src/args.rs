//! The typed arguments of every workspace tool. Each struct is what its
//! handler takes, and the catalog's input schema is generated from it
//! ([`input_schema`]), so schema and handler cannot drift apart. Limits are
//! the catalog's constants; field descriptions are the doc comments.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::limits::{
    COMMAND_OUTPUT_LIMIT_BYTES, COMMAND_TIMEOUT_LIMIT_SECS, EDIT_BATCH_LIMIT, LIST_PAGE_LIMIT,
    SEARCH_RESULT_LIMIT, SOURCE_LIMIT_BYTES,
};

/// The longest workspace path an argument may carry.
pub const PATH_LIMIT: u64 = 4096;
/// A revision as `readFile` returns it.
pub const REVISION_PATTERN: &str = "^sha256:[0-9a-f]{64}$";

/// The JSON Schema of `T` as tools publish it: one self-contained object
/// schema (sub-schemas inlined) with `properties` always present, no
/// `$schema`, `title` or description of its own (the tool's description
/// says what it does), optional fields simply optional (never `null`: no
/// argument takes one), integer formats dropped.
pub fn input_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut schema {
        root.remove("title");
        root.remove("description");
        root.entry("properties")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    tidy(&mut schema);
    schema
}

/// Drops `null` from every type and enum, and integer formats, at every
/// depth.
fn tidy(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("$schema");
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".to_owned(), only);
                }
            }
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            if map.get("type").and_then(Value::as_str) == Some("integer") {
                map.remove("format");
            }
            for v in map.values_mut() {
                tidy(v);
            }
        }
        Value::Array(items) => {
            for v in items {
                tidy(v);
            }
        }
        _ => {}
    }
}

/// `workspace.getStatus`: no arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetStatusArgs {}

/// `workspace.listFiles`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListFilesArgs {
    /// The folder to list, relative to the workspace root, with `/` separators
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub path: Option<String>,
    /// The `nextCursor` of the previous page
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Entries per page
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = LIST_PAGE_LIMIT))]
    pub limit: Option<u64>,
}

/// `workspace.readFile`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadFileArgs {
    /// The file, relative to the workspace root, with `/` separators
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub path: String,
    /// The first line to return (1-based)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub start_line: Option<u64>,
    /// The last line to return (1-based, inclusive)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub end_line: Option<u64>,
}

/// `workspace.search`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SearchArgs {
    /// The text to find (a regular expression when `regex` is true)
    #[schemars(length(min = 1, max = 1000))]
    pub query: String,
    /// Whether `query` is a regular expression
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<bool>,
    /// A folder to search in, relative to the workspace root, with `/` separators
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub path: Option<String>,
    /// The most matches to return
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = SEARCH_RESULT_LIMIT))]
    pub max_results: Option<u64>,
}

/// `workspace.writeFile`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WriteFileArgs {
    /// The file, relative to the workspace root, with `/` separators
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub path: String,
    /// The new content (at most 1048576 UTF-8 bytes)
    #[schemars(length(max = SOURCE_LIMIT_BYTES))]
    pub content: String,
    /// The `revision` a readFile returned; the edit is refused with `WORKSPACE_REVISION_CONFLICT` if the file changed since
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = REVISION_PATTERN))]
    pub expected_revision: Option<String>,
}

/// How many occurrences a patch replaces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Occurrence {
    #[default]
    First,
    All,
}

/// `workspace.applyPatch`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ApplyPatchArgs {
    /// The file, relative to the workspace root, with `/` separators
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub path: String,
    /// The literal text to replace
    #[schemars(length(min = 1, max = SOURCE_LIMIT_BYTES))]
    pub search: String,
    /// The replacement (at most 1048576 UTF-8 bytes)
    #[schemars(length(max = SOURCE_LIMIT_BYTES))]
    pub replace: String,
    /// `first` (the default) or `all`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurrence: Option<Occurrence>,
    /// The `revision` a readFile returned; the edit is refused with `WORKSPACE_REVISION_CONFLICT` if the file changed since
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = REVISION_PATTERN))]
    pub expected_revision: Option<String>,
}

/// `workspace.createFile`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateFileArgs {
    /// The new file, relative to the workspace root, with `/` separators
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub path: String,
    /// The content (at most 1048576 UTF-8 bytes)
    #[schemars(length(max = SOURCE_LIMIT_BYTES))]
    pub content: String,
}

/// `workspace.renameFile`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RenameFileArgs {
    /// The current path, relative to the workspace root, with `/` separators
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub from: String,
    /// The new path, relative to the workspace root, with `/` separators
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub to: String,
}

/// `workspace.deleteFile`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeleteFileArgs {
    /// The file or folder, relative to the workspace root, with `/` separators
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub path: String,
    /// The `revision` a readFile returned; the edit is refused with `WORKSPACE_REVISION_CONFLICT` if the file changed since
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = REVISION_PATTERN))]
    pub expected_revision: Option<String>,
}

/// What the edit does: `write`, `patch`, `create`, `delete` or `rename`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditOp {
    #[default]
    Write,
    Patch,
    Create,
    Delete,
    Rename,
}

impl EditOp {
    /// The wire name (`write`, `patch`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Write => "write",
            Self::Patch => "patch",
            Self::Create => "create",
            Self::Delete => "delete",
            Self::Rename => "rename",
        }
    }

    /// The fields this op requires and those it may take, beside `op` and
    /// `path`.
    pub const fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Self::Write => (&["content"], &["expectedRevision"]),
            Self::Patch => (&["search", "replace"], &["occurrence", "expectedRevision"]),
            Self::Create => (&["content"], &[]),
            Self::Delete => (&[], &["expectedRevision"]),
            Self::Rename => (&["to"], &[]),
        }
    }
}

/// One edit of `workspace.applyEdits`: `op` with the arguments of its
/// single-file tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EditArgs {
    pub op: EditOp,
    /// The file (for `rename`, the current path), relative to the workspace root, with `/` separators
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub path: String,
    /// For `rename`: the new path, relative to the workspace root, with `/` separators
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub to: Option<String>,
    /// For `write` and `create`: the content (at most 1048576 UTF-8 bytes)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = SOURCE_LIMIT_BYTES))]
    pub content: Option<String>,
    /// For `patch`: the literal text to replace
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = SOURCE_LIMIT_BYTES))]
    pub search: Option<String>,
    /// For `patch`: the replacement (at most 1048576 UTF-8 bytes)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = SOURCE_LIMIT_BYTES))]
    pub replace: Option<String>,
    /// For `patch`: `first` (the default) or `all`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurrence: Option<Occurrence>,
    /// The `revision` a readFile returned; the edit is refused with `WORKSPACE_REVISION_CONFLICT` if the file changed since
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = REVISION_PATTERN))]
    pub expected_revision: Option<String>,
}

impl EditArgs {
    /// The optional fields this edit carries, by their wire names.
    fn present(&self) -> Vec<&'static str> {
        [
            ("to", self.to.is_some()),
            ("content", self.content.is_some()),
            ("search", self.search.is_some()),
            ("replace", self.replace.is_some()),
            ("occurrence", self.occurrence.is_some()),
            ("expectedRevision", self.expected_revision.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, present)| present.then_some(name))
        .collect()
    }

    /// Whether the edit carries exactly the arguments its `op` takes; the
    /// error names the first argument missing or not taken.
    pub fn check(&self) -> Result<(), String> {
        let (required, optional) = self.op.fields();
        let present = self.present();
        if let Some(key) = required.iter().find(|k| !present.contains(k)) {
            return Err(format!("needs `{key}`"));
        }
        match present
            .iter()
            .find(|k| !required.contains(k) && !optional.contains(k))
        {
            Some(key) => Err(format!("does not take `{key}`")),
            None => Ok(()),
        }
    }
}

/// Each single-file edit tool's arguments are the edit they make.
impl From<WriteFileArgs> for EditArgs {
    fn from(a: WriteFileArgs) -> Self {
        Self {
            op: EditOp::Write,
            path: a.path,
            content: Some(a.content),
            expected_revision: a.expected_revision,
            ..Self::default()
        }
    }
}

impl From<CreateFileArgs> for EditArgs {
    fn from(a: CreateFileArgs) -> Self {
        Self {
            op: EditOp::Create,
            path: a.path,
            content: Some(a.content),
            ..Self::default()
        }
    }
}

impl From<ApplyPatchArgs> for EditArgs {
    fn from(a: ApplyPatchArgs) -> Self {
        Self {
            op: EditOp::Patch,
            path: a.path,
            search: Some(a.search),
            replace: Some(a.replace),
            occurrence: a.occurrence,
            expected_revision: a.expected_revision,
            ..Self::default()
        }
    }
}

impl From<DeleteFileArgs> for EditArgs {
    fn from(a: DeleteFileArgs) -> Self {
        Self {
            op: EditOp::Delete,
            path: a.path,
            expected_revision: a.expected_revision,
            ..Self::default()
        }
    }
}

/// `workspace.applyEdits`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ApplyEditsArgs {
    /// The edits, applied as one
    #[schemars(length(min = 1, max = EDIT_BATCH_LIMIT))]
    pub edits: Vec<EditArgs>,
}

/// `terminal.run`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TerminalRunArgs {
    /// The program and its arguments
    #[schemars(length(min = 1, max = 256), inner(length(max = 32768)))]
    pub argv: Vec<String>,
    /// The folder to run in (default: the workspace root), relative to the workspace root, with `/` separators
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub cwd: Option<String>,
    /// Seconds before the command is stopped
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = COMMAND_TIMEOUT_LIMIT_SECS))]
    pub timeout_secs: Option<u64>,
    /// Bytes of output kept (the start is trimmed)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = COMMAND_OUTPUT_LIMIT_BYTES))]
    pub output_limit_bytes: Option<u64>,
    /// Extra environment variables (credential-like names are refused)
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend(
        "maxProperties" = 64,
        "additionalProperties" = {"type": "string", "maxLength": 32768}
    ))]
    pub env: BTreeMap<String, String>,
}

/// `lsp.diagnostics`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LspDiagnosticsArgs {
    /// The file, relative to the workspace root, with `/` separators; omit
    /// it for every file of the workspace a language server takes
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = PATH_LIMIT))]
    pub path: Option<String>,
}

/// `task.finish`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TaskFinishArgs {
    /// What you changed and why, for the reviewer
    #[schemars(length(min = 1, max = 4000))]
    pub summary: String,
}

/// Reads a tool's typed arguments from the validated JSON object.
pub fn parse<T: serde::de::DeserializeOwned>(
    args: serde_json::Map<String, Value>,
) -> Result<T, serde_json::Error> {
    serde_json::from_value(Value::Object(args))
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
