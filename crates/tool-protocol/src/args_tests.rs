use std::collections::BTreeMap as Map;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::catalog::{self, workspace_tools};
use crate::projection::{to_anthropic_tools, to_mcp_tools, to_openai_tools};

/// Each catalog tool with its arguments' generated schema and one valid
/// call, as a model would send it.
#[expect(clippy::too_many_lines, reason = "one valid call per tool")]
fn typed() -> Map<&'static str, (Value, Value)> {
    fn case<T: JsonSchema + Serialize>(value: &T) -> (Value, Value) {
        (input_schema::<T>(), serde_json::to_value(value).unwrap())
    }
    let rev = format!("sha256:{}", "a".repeat(64));
    Map::from([
        (catalog::GET_STATUS, case(&GetStatusArgs {})),
        (
            catalog::LIST_FILES,
            case(&ListFilesArgs {
                path: Some("src".into()),
                cursor: Some("2".into()),
                limit: Some(10),
            }),
        ),
        (
            catalog::READ_FILE,
            case(&ReadFileArgs {
                path: "a.rs".into(),
                start_line: Some(1),
                end_line: Some(9),
            }),
        ),
        (
            catalog::SEARCH,
            case(&SearchArgs {
                query: "fn".into(),
                regex: Some(true),
                path: None,
                max_results: Some(5),
            }),
        ),
        (
            catalog::WRITE_FILE,
            case(&WriteFileArgs {
                path: "a.rs".into(),
                content: "x".into(),
                expected_revision: Some(rev.clone()),
            }),
        ),
        (
            catalog::APPLY_PATCH,
            case(&ApplyPatchArgs {
                path: "a.rs".into(),
                search: "a".into(),
                replace: "b".into(),
                occurrence: Some(Occurrence::All),
                expected_revision: None,
            }),
        ),
        (
            catalog::CREATE_FILE,
            case(&CreateFileArgs {
                path: "n.rs".into(),
                content: String::new(),
            }),
        ),
        (
            catalog::RENAME_FILE,
            case(&RenameFileArgs {
                from: "a.rs".into(),
                to: "b.rs".into(),
            }),
        ),
        (
            catalog::DELETE_FILE,
            case(&DeleteFileArgs {
                path: "a.rs".into(),
                expected_revision: Some(rev.clone()),
            }),
        ),
        (
            catalog::APPLY_EDITS,
            case(&ApplyEditsArgs {
                edits: vec![
                    EditArgs {
                        op: EditOp::Patch,
                        path: "a.rs".into(),
                        search: Some("a".into()),
                        replace: Some("b".into()),
                        expected_revision: Some(rev),
                        ..EditArgs::default()
                    },
                    EditArgs {
                        op: EditOp::Rename,
                        path: "b.rs".into(),
                        to: Some("c.rs".into()),
                        ..EditArgs::default()
                    },
                ],
            }),
        ),
        (
            catalog::TERMINAL_RUN,
            case(&TerminalRunArgs {
                argv: vec!["cargo".into(), "test".into()],
                cwd: Some("crate".into()),
                timeout_secs: Some(60),
                output_limit_bytes: Some(1024),
                env: Map::from([("RUST_LOG".to_owned(), "info".to_owned())])
                    .into_iter()
                    .collect(),
            }),
        ),
        (
            catalog::LSP_DIAGNOSTICS,
            case(&LspDiagnosticsArgs {
                path: Some("a.rs".into()),
            }),
        ),
        (
            catalog::TASK_FINISH,
            case(&TaskFinishArgs {
                summary: "done".into(),
            }),
        ),
    ])
}

#[test]
fn the_catalog_and_every_projection_publish_the_typed_arguments_schema() {
    let tools = workspace_tools();
    let typed = typed();
    assert_eq!(
        tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .len(),
        typed.len(),
        "every catalog tool has typed arguments"
    );
    let openai = to_openai_tools(&tools);
    let anthropic = to_anthropic_tools(&tools);
    let mcp = to_mcp_tools(&tools);
    for (i, tool) in tools.iter().enumerate() {
        let (schema, _) = &typed[tool.name.as_str()];
        assert_eq!(&tool.input_schema, schema, "{}", tool.name);
        assert_eq!(
            &openai[i]["function"]["parameters"], schema,
            "{}",
            tool.name
        );
        assert_eq!(&anthropic[i]["input_schema"], schema, "{}", tool.name);
        assert_eq!(&mcp[i]["inputSchema"], schema, "{}", tool.name);
    }
}

#[test]
fn a_typed_call_validates_against_the_schema_and_reads_back_the_same() {
    for (name, (schema, call)) in typed() {
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&call), "{name}: {call}");
        let Value::Object(args) = call.clone() else {
            panic!("{name}: not an object")
        };
        let back = match name {
            catalog::APPLY_EDITS => serde_json::to_value(parse::<ApplyEditsArgs>(args).unwrap()),
            catalog::TERMINAL_RUN => serde_json::to_value(parse::<TerminalRunArgs>(args).unwrap()),
            catalog::APPLY_PATCH => serde_json::to_value(parse::<ApplyPatchArgs>(args).unwrap()),
            _ => Ok(call.clone()),
        }
        .unwrap();
        assert_eq!(back, call, "{name}");
        // An argument the struct does not know is refused by both.
        let mut extra = call.as_object().unwrap().clone();
        extra.insert("unexpected".into(), json!(1));
        assert!(!validator.is_valid(&Value::Object(extra)), "{name}");
    }
    let unknown = serde_json::Map::from_iter([
        ("path".to_owned(), json!("a.rs")),
        ("unexpected".to_owned(), json!(1)),
    ]);
    assert!(parse::<ReadFileArgs>(unknown).is_err());
}

#[test]
fn optional_arguments_are_optional_never_null_and_limits_come_from_the_catalog() {
    let patch = input_schema::<ApplyPatchArgs>();
    assert_eq!(
        patch["properties"]["occurrence"],
        json!({"type": "string", "enum": ["first", "all"], "description": "`first` (the default) or `all`"})
    );
    assert_eq!(patch["required"], json!(["path", "search", "replace"]));
    assert_eq!(
        patch["properties"]["replace"]["maxLength"],
        json!(SOURCE_LIMIT_BYTES)
    );
    let run = input_schema::<TerminalRunArgs>();
    assert_eq!(
        run["properties"]["timeoutSecs"],
        json!({"type": "integer", "minimum": 1, "maximum": COMMAND_TIMEOUT_LIMIT_SECS,
               "description": "Seconds before the command is stopped"})
    );
    assert_eq!(
        input_schema::<GetStatusArgs>(),
        json!({"type": "object", "additionalProperties": false, "properties": {}})
    );
    for (name, (schema, _)) in typed() {
        let text = schema.to_string();
        assert!(
            !text.contains("null") && !text.contains("\"format\""),
            "{name}: {text}"
        );
    }
}

#[test]
fn a_single_file_edit_is_the_batch_edit_it_makes_and_checks_as_one() {
    let patch: EditArgs = ApplyPatchArgs {
        path: "a.rs".into(),
        search: "a".into(),
        replace: "b".into(),
        occurrence: None,
        expected_revision: None,
    }
    .into();
    assert_eq!(patch.check(), Ok(()));
    let write: EditArgs = WriteFileArgs {
        path: "a.rs".into(),
        content: "x".into(),
        expected_revision: None,
    }
    .into();
    assert_eq!((write.op.as_str(), write.check()), ("write", Ok(())));
    let missing = EditArgs {
        op: EditOp::Rename,
        path: "a.rs".into(),
        ..EditArgs::default()
    };
    assert_eq!(missing.check(), Err("needs `to`".to_owned()));
    let extra = EditArgs {
        op: EditOp::Delete,
        path: "a.rs".into(),
        content: Some("x".into()),
        ..EditArgs::default()
    };
    assert_eq!(extra.check(), Err("does not take `content`".to_owned()));
}
