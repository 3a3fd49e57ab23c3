use super::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::json;

#[test]
fn call_requests_are_checked_before_they_cross_a_boundary() {
    assert!(is_tool_call_request(
        &json!({"id": "c1", "name": "workspace.readFile", "arguments": {}})
    ));
    for bad in [
        json!(null),
        json!([]),
        json!({"id": "c1", "name": "x"}),
        json!({"id": "c1", "name": "x", "arguments": null}),
        json!({"id": "c1", "name": "x", "arguments": []}),
        json!({"id": "c1", "name": "x", "arguments": "{}"}),
        json!({"id": "", "name": "x", "arguments": {}}),
        json!({"id": "c1", "name": "", "arguments": {}}),
        json!({"id": 7, "name": "x", "arguments": {}}),
        json!({"id": "c1", "name": "x", "arguments": {}, "extra": 1}),
    ] {
        assert!(!is_tool_call_request(&bad), "{bad}");
    }
}

#[test]
fn list_requests_distinguish_null_from_omitted() {
    assert!(is_tool_list_request(&json!({})));
    assert!(is_tool_list_request(&json!({"cursor": "abc"})));
    assert!(!is_tool_list_request(&json!({"cursor": null})));
    assert!(!is_tool_list_request(&json!({"cursor": 3})));
    assert!(!is_tool_list_request(&json!(null)));
}

#[test]
fn call_results_must_be_consistent() {
    let ok = ToolCallResult {
        tool_call_id: "c1".into(),
        content: vec![
            ContentBlock::Text { text: "hi".into() },
            ContentBlock::Json {
                json: json!({"n": 1}),
            },
        ],
        structured_content: Some(json!({"n": 1})),
        is_error: false,
        error: None,
    };
    let value = serde_json::to_value(&ok).unwrap();
    assert!(is_tool_call_result(&value), "{value}");
    assert_eq!(serde_json::from_value::<ToolCallResult>(value).unwrap(), ok);

    let failed =
        ToolCallResult::failure("c2", ToolError::new(ToolErrorCode::NotFound, "no tool x"));
    assert!(is_tool_call_result(&serde_json::to_value(&failed).unwrap()));

    for bad in [
        json!({"toolCallId": "c", "content": [], "isError": true}),
        json!({"toolCallId": "c", "content": [], "isError": false, "error": {"code": "X", "message": "m", "retryable": false}}),
        json!({"toolCallId": "c", "content": [{"type": "image"}], "isError": false}),
        json!({"toolCallId": "c", "content": [{"type": "text"}], "isError": false}),
        json!({"toolCallId": "c", "content": [], "isError": false, "structuredContent": null}),
        json!({"content": [], "isError": false}),
    ] {
        assert!(!is_tool_call_result(&bad), "{bad}");
    }
}

#[test]
fn stringify_keeps_json_blocks() {
    let text = stringify_tool_content(&[
        ContentBlock::Text {
            text: "found 2".into(),
        },
        ContentBlock::Json {
            json: json!({"paths": ["a", "b"]}),
        },
    ]);
    assert_eq!(text, "found 2\n{\"paths\":[\"a\",\"b\"]}");
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// The validator accepts exactly what the typed request deserializes from
    /// (plus its non-empty id and name rules).
    #[test]
    fn call_request_validator_agrees_with_the_type(value in arb_json()) {
        if is_tool_call_request(&value) {
            prop_assert!(serde_json::from_value::<ToolCallRequest>(value).is_ok());
        }
    }

    #[test]
    fn well_formed_requests_are_accepted(id in "[a-z0-9]{1,8}", name in "[a-z.]{1,12}", args in prop::collection::btree_map("[a-z]{1,4}", arb_json(), 0..4)) {
        let value = json!({"id": id, "name": name, "arguments": Value::Object(args.into_iter().collect())});
        prop_assert!(is_tool_call_request(&value));
    }

    #[test]
    fn result_validator_agrees_with_the_type(value in arb_json()) {
        if is_tool_call_result(&value) {
            prop_assert!(serde_json::from_value::<ToolCallResult>(value).is_ok());
        }
    }
}
