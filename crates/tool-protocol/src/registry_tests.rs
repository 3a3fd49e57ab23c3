use super::*;
use crate::approval::ApprovalEvent;
use crate::observe::{ObservabilityPolicy, TraceMethod, TraceStore};
use crate::types::ContentBlock;
use crate::types::{ToolMode, ToolSource};
use pretty_assertions::assert_eq;
use std::sync::atomic::AtomicUsize;

use crate::test_fixtures::{context as ctx, definition as def};

fn model() -> ToolCallContext {
    ctx(ToolSource::Model, ToolMode::Agent)
}

#[expect(
    clippy::needless_pass_by_value,
    reason = "call sites pass json! literals"
)]
fn req(id: &str, name: &str, args: Value) -> ToolCallRequest {
    ToolCallRequest {
        id: id.into(),
        name: name.into(),
        arguments: args.as_object().cloned().unwrap_or_default(),
    }
}

/// A handler that counts its runs and echoes the path.
fn counting(counter: &Arc<AtomicUsize>) -> Arc<dyn ToolHandler> {
    let counter = Arc::clone(counter);
    Arc::new(move |args: Map<String, Value>, _cx: HandlerContext| {
        let counter = Arc::clone(&counter);
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(ToolOutput::text(format!(
                "read {}",
                args["path"].as_str().unwrap_or_default()
            )))
        }
    })
}

struct CountingPolicy(AtomicUsize, PolicyDecision);
impl ToolPolicy for CountingPolicy {
    fn decide(&self, _d: &ToolDefinition, _c: &ToolCallContext) -> PolicyDecision {
        self.0.fetch_add(1, Ordering::SeqCst);
        self.1
    }
}

fn registry() -> ToolRegistry {
    ToolRegistry::new(RegistryOptions::default(), Arc::new(ApprovalQueue::new()))
}

/// The next approval request, skipping resolution notices.
async fn next_request(
    events: &mut tokio::sync::broadcast::Receiver<ApprovalEvent>,
) -> crate::ApprovalSnapshot {
    loop {
        if let ApprovalEvent::Requested(snapshot) = events.recv().await.unwrap() {
            return snapshot;
        }
    }
}

fn code(result: &ToolCallResult) -> Option<&str> {
    result.error.as_ref().map(|e| e.code.as_str())
}

#[tokio::test]
async fn unknown_and_prototype_like_names_never_execute() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut reg = registry();
    reg.register(def("workspace.readFile", true), counting(&runs))
        .unwrap();
    for name in [
        "__proto__",
        "constructor",
        "toString",
        "workspace.readfile",
        "workspace.readFile ",
        "workspace",
        "workspace__readFile",
        "",
    ] {
        let r = reg
            .call(
                req("c", name, json!({"path": "a"})),
                model(),
                ToolCallOptions::default(),
            )
            .await;
        assert_eq!(code(&r), Some("TOOL_NOT_FOUND"), "{name}");
        assert_eq!(r.tool_call_id, "c");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let ok = reg
        .call(
            req("c2", "workspace.readFile", json!({"path": "a"})),
            model(),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(
        (ok.is_error, ok.content.clone()),
        (
            false,
            vec![ContentBlock::Text {
                text: "read a".into()
            }]
        )
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn invalid_arguments_never_reach_policy_or_handler() {
    let runs = Arc::new(AtomicUsize::new(0));
    let policy = Arc::new(CountingPolicy(AtomicUsize::new(0), PolicyDecision::Allow));
    let mut reg = registry().with_policy(Arc::clone(&policy) as Arc<dyn ToolPolicy>);
    reg.register(def("workspace.readFile", true), counting(&runs))
        .unwrap();
    for args in [
        json!({}),
        json!({"path": 3}),
        json!({"path": "a", "n": -1}),
        json!({"path": "a", "extra": "secret text"}),
    ] {
        let r = reg
            .call(
                req("c", "workspace.readFile", args.clone()),
                model(),
                ToolCallOptions::default(),
            )
            .await;
        assert_eq!(code(&r), Some("TOOL_VALIDATION_FAILED"), "{args}");
        let details = serde_json::to_string(&r.error.as_ref().unwrap().details).unwrap();
        assert!(details.contains("instancePath"), "{details}");
        assert!(
            !details.contains("secret text"),
            "argument values never appear in errors"
        );
    }
    assert_eq!(
        (policy.0.load(Ordering::SeqCst), runs.load(Ordering::SeqCst)),
        (0, 0)
    );
}

#[tokio::test]
async fn policy_deny_and_approval_denial_or_abort_never_reach_the_handler() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut deny = registry().with_policy(Arc::new(CountingPolicy(
        AtomicUsize::new(0),
        PolicyDecision::Deny,
    )));
    deny.register(def("workspace.writeFile", false), counting(&runs))
        .unwrap();
    let r = deny
        .call(
            req("c", "workspace.writeFile", json!({"path": "a"})),
            model(),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(code(&r), Some("TOOL_POLICY_DENIED"));

    let queue = Arc::new(ApprovalQueue::new());
    let mut reg = ToolRegistry::new(RegistryOptions::default(), Arc::clone(&queue));
    reg.register(def("workspace.writeFile", false), counting(&runs))
        .unwrap();
    let reg = Arc::new(reg);
    let mut events = queue.subscribe();

    // A person denies.
    let r2 = Arc::clone(&reg);
    let call = tokio::spawn(async move {
        r2.call(
            req(
                "c1",
                "workspace.writeFile",
                json!({"path": "src/a.rs", "n": 2}),
            ),
            model(),
            ToolCallOptions::default(),
        )
        .await
    });
    let snapshot = next_request(&mut events).await;
    assert_eq!(
        snapshot.safe_argument_summary,
        json!({"path": "src/a.rs", "n": 2})
    );
    assert_eq!(snapshot.provider_call_id, "c1");
    queue.resolve(snapshot.id, ApprovalDecision::Deny);
    assert_eq!(code(&call.await.unwrap()), Some("TOOL_APPROVAL_DENIED"));

    // The caller aborts while the approval waits.
    let cancel = CancellationToken::new();
    let (r3, c3) = (Arc::clone(&reg), cancel.clone());
    let call = tokio::spawn(async move {
        r3.call(
            req("c2", "workspace.writeFile", json!({"path": "b"})),
            model(),
            ToolCallOptions {
                cancel: c3,
                ..ToolCallOptions::default()
            },
        )
        .await
    });
    let _ = next_request(&mut events).await;
    cancel.cancel();
    let aborted = call.await.unwrap();
    assert_eq!(code(&aborted), Some("TOOL_CANCELLED"));
    assert!(aborted.error.as_ref().unwrap().retryable);
    assert!(
        queue.snapshot().is_empty(),
        "the aborted request left the queue"
    );

    // The queue closes (window close).
    let r4 = Arc::clone(&reg);
    let call = tokio::spawn(async move {
        r4.call(
            req("c3", "workspace.writeFile", json!({"path": "b"})),
            model(),
            ToolCallOptions::default(),
        )
        .await
    });
    let _ = next_request(&mut events).await;
    queue.deny_all();
    assert_eq!(code(&call.await.unwrap()), Some("TOOL_APPROVAL_DENIED"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    // An approval lets it through; a palette call needs none.
    let r5 = Arc::clone(&reg);
    let call = tokio::spawn(async move {
        r5.call(
            req("c4", "workspace.writeFile", json!({"path": "b"})),
            model(),
            ToolCallOptions::default(),
        )
        .await
    });
    let s = next_request(&mut events).await;
    queue.resolve(s.id, ApprovalDecision::Approve);
    assert!(!call.await.unwrap().is_error);
    let palette = reg
        .call(
            req("c5", "workspace.writeFile", json!({"path": "b"})),
            ctx(ToolSource::Palette, ToolMode::Direct),
            ToolCallOptions::default(),
        )
        .await;
    assert!(!palette.is_error);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_parallel_calls_keep_their_ids() {
    let mut reg = registry();
    let handler: Arc<dyn ToolHandler> =
        Arc::new(|args: Map<String, Value>, cx: HandlerContext| async move {
            // Finish in reverse order of arrival.
            let n = args["n"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(50 - n)).await;
            Ok(ToolOutput::text(format!("{}:{n}", cx.call_id)))
        });
    reg.register(def("workspace.readFile", true), handler)
        .unwrap();
    let reg = Arc::new(reg);
    let calls: Vec<_> = (0..50u64)
        .map(|n| {
            let reg = Arc::clone(&reg);
            tokio::spawn(async move {
                reg.call(
                    req(
                        &format!("call-{n}"),
                        "workspace.readFile",
                        json!({"path": "p", "n": n}),
                    ),
                    model(),
                    ToolCallOptions::default(),
                )
                .await
            })
        })
        .collect();
    for (n, call) in calls.into_iter().enumerate() {
        let r = call.await.unwrap();
        assert_eq!(r.tool_call_id, format!("call-{n}"));
        assert_eq!(
            r.content,
            vec![ContentBlock::Text {
                text: format!("call-{n}:{n}")
            }]
        );
    }
}

// Time is the subject: the clock is paused and advances only when every
// task waits, so the timeout and the drain happen in order on any machine.
#[tokio::test(start_paused = true)]
async fn a_timeout_detaches_and_the_same_key_never_runs_twice() {
    let runs = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    let (r, f) = (Arc::clone(&runs), Arc::clone(&finished));
    // Ignores cancellation: keeps working after the timeout.
    let stubborn: Arc<dyn ToolHandler> =
        Arc::new(move |_args: Map<String, Value>, _cx: HandlerContext| {
            let (r, f) = (Arc::clone(&r), Arc::clone(&f));
            async move {
                r.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(300)).await;
                f.fetch_add(1, Ordering::SeqCst);
                Ok(ToolOutput::text("late"))
            }
        });
    let mut reg = registry();
    reg.register(def("workspace.readFile", true), stubborn)
        .unwrap();
    let options = || ToolCallOptions {
        timeout_secs: Some(0.05),
        idempotency_key: Some("k1".into()),
        ..ToolCallOptions::default()
    };
    let first = reg
        .call(
            req("c1", "workspace.readFile", json!({"path": "a"})),
            model(),
            options(),
        )
        .await;
    assert_eq!(code(&first), Some("TOOL_TIMEOUT"));
    let e = first.error.unwrap();
    assert!(e.retryable);
    assert_eq!(e.details, json!({"executionState": "detached"}));
    assert_eq!(finished.load(Ordering::SeqCst), 0);

    let again = reg
        .call(
            req("c2", "workspace.readFile", json!({"path": "a"})),
            model(),
            options(),
        )
        .await;
    assert_eq!(code(&again), Some("TOOL_EXECUTION_ABORTED"));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        finished.load(Ordering::SeqCst),
        1,
        "the detached handler drained"
    );
    let after = reg
        .call(
            req("c3", "workspace.readFile", json!({"path": "a"})),
            model(),
            options(),
        )
        .await;
    assert_eq!(code(&after), Some("TOOL_EXECUTION_ABORTED"));
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "never run twice for one key"
    );

    let conflict = reg
        .call(
            req("c4", "workspace.readFile", json!({"path": "b"})),
            model(),
            options(),
        )
        .await;
    assert_eq!(code(&conflict), Some("TOOL_IDEMPOTENCY_CONFLICT"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_key_shares_one_execution() {
    let runs = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&runs);
    let slow: Arc<dyn ToolHandler> =
        Arc::new(move |_a: Map<String, Value>, _cx: HandlerContext| {
            let r = Arc::clone(&r);
            async move {
                r.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(100)).await;
                ToolOutput::json(&json!({"ok": true}))
            }
        });
    let mut reg = registry();
    reg.register(def("workspace.readFile", true), slow).unwrap();
    let reg = Arc::new(reg);
    let options = || ToolCallOptions {
        idempotency_key: Some("same".into()),
        ..ToolCallOptions::default()
    };
    let (a, b) = tokio::join!(
        reg.call(
            req("a", "workspace.readFile", json!({"path": "x"})),
            model(),
            options()
        ),
        reg.call(
            req("b", "workspace.readFile", json!({"path": "x"})),
            model(),
            options()
        ),
    );
    let c = reg
        .call(
            req("c", "workspace.readFile", json!({"path": "x"})),
            model(),
            options(),
        )
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    for (r, id) in [(a, "a"), (b, "b"), (c, "c")] {
        assert_eq!(
            (r.tool_call_id.as_str(), r.structured_content),
            (id, Some(json!({"ok": true})))
        );
    }
}

#[tokio::test]
async fn results_are_checked_for_size_shape_and_schema() {
    let mut reg = registry();
    let big: Arc<dyn ToolHandler> = Arc::new(|_a: Map<String, Value>, _cx: HandlerContext| async {
        Ok(ToolOutput::text("x".repeat(2000)))
    });
    reg.register(def("workspace.big", true), big).unwrap();
    let r = reg
        .call(
            req("c", "workspace.big", json!({"path": "a"})),
            model(),
            ToolCallOptions {
                max_output_bytes: Some(1000),
                ..ToolCallOptions::default()
            },
        )
        .await;
    assert_eq!(code(&r), Some("TOOL_OUTPUT_LIMIT_EXCEEDED"));
    let e = r.error.unwrap();
    assert!(!e.retryable);
    assert_eq!(e.details["maxOutputBytes"], 1000);
    assert!(e.details["attemptedBytes"].as_u64().unwrap() > 2000);

    let mut typed = def("workspace.stat", true);
    typed.output_schema = Some(
        json!({"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]}),
    );
    let wrong: Arc<dyn ToolHandler> =
        Arc::new(|_a: Map<String, Value>, _cx: HandlerContext| async {
            ToolOutput::json(&json!({"size": "big"}))
        });
    reg.register(typed, wrong).unwrap();
    let r = reg
        .call(
            req("c", "workspace.stat", json!({"path": "a"})),
            model(),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(code(&r), Some("TOOL_OUTPUT_VALIDATION_FAILED"));

    let scalar: Arc<dyn ToolHandler> =
        Arc::new(|_a: Map<String, Value>, _cx: HandlerContext| async {
            Ok(ToolOutput {
                content: vec![],
                structured_content: Some(json!(3)),
            })
        });
    reg.register(def("workspace.scalar", true), scalar).unwrap();
    let r = reg
        .call(
            req("c", "workspace.scalar", json!({"path": "a"})),
            model(),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(code(&r), Some("TOOL_RESULT_VALIDATION_FAILED"));

    let unserializable: Arc<dyn ToolHandler> =
        Arc::new(|_a: Map<String, Value>, _cx: HandlerContext| async {
            let map: HashMap<(u8, u8), u8> = [((1, 2), 3)].into_iter().collect();
            ToolOutput::json(&map)
        });
    reg.register(def("workspace.weird", true), unserializable)
        .unwrap();
    let r = reg
        .call(
            req("c", "workspace.weird", json!({"path": "a"})),
            model(),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(code(&r), Some("TOOL_RESULT_SERIALIZATION_FAILED"));

    let failing: Arc<dyn ToolHandler> =
        Arc::new(|_a: Map<String, Value>, _cx: HandlerContext| async {
            Err(ToolError::handler(
                "WORKSPACE_LOCKED",
                "src/a.rs is leased by another task",
                true,
            )
            .with_details(json!({"path": "src/a.rs"})))
        });
    reg.register(def("workspace.locked", true), failing)
        .unwrap();
    let r = reg
        .call(
            req("c", "workspace.locked", json!({"path": "a"})),
            model(),
            ToolCallOptions::default(),
        )
        .await;
    let e = r.error.unwrap();
    assert_eq!(
        (e.code.as_str(), e.retryable, e.details),
        ("WORKSPACE_LOCKED", true, json!({"path": "src/a.rs"}))
    );
}

#[tokio::test]
async fn bad_options_are_refused_before_anything_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut reg = registry();
    reg.register(def("workspace.readFile", true), counting(&runs))
        .unwrap();
    for t in [-1.0, 0.0, f64::NAN, f64::INFINITY] {
        let r = reg
            .call(
                req("c", "workspace.readFile", json!({"path": "a"})),
                model(),
                ToolCallOptions {
                    timeout_secs: Some(t),
                    ..ToolCallOptions::default()
                },
            )
            .await;
        assert_eq!(code(&r), Some("TOOL_INVALID_OPTIONS"), "{t}");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[test]
fn pages_walk_and_hidden_tools_stay_hidden() {
    let runs = Arc::new(AtomicUsize::new(0));
    let options = RegistryOptions {
        page_size: 2,
        allowed_tool_names: Some(
            ["workspace.a", "workspace.b", "workspace.c", "workspace.d"]
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        ),
        ..RegistryOptions::default()
    };
    let mut reg = ToolRegistry::new(options, Arc::new(ApprovalQueue::new()));
    for name in [
        "workspace.a",
        "workspace.b",
        "workspace.c",
        "workspace.d",
        "workspace.hidden",
    ] {
        reg.register(def(name, true), counting(&runs)).unwrap();
    }
    let first = reg.list(&ToolListRequest::default()).unwrap();
    assert_eq!(first.tools.len(), 2);
    let second = reg
        .list(&ToolListRequest {
            cursor: first.next_cursor.clone(),
        })
        .unwrap();
    assert_eq!(second.next_cursor, None);
    let all: Vec<String> = reg
        .list_all_tools()
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(
        all,
        ["workspace.a", "workspace.b", "workspace.c", "workspace.d"]
    );
    assert_eq!(reg.resolve_provider_name("workspace__hidden"), None);
    assert_eq!(
        reg.resolve_provider_name("workspace__a"),
        Some("workspace.a")
    );
    let exported = serde_json::to_string(&(
        to_openai_tools(&reg.list_all_tools().unwrap()),
        to_anthropic_tools(&reg.list_all_tools().unwrap()),
        to_mcp_tools(&reg.list_all_tools().unwrap()),
    ))
    .unwrap();
    assert!(!exported.contains("hidden"));
    assert!(
        matches!(reg.list(&ToolListRequest { cursor: Some("page:99".into()) }), Err(e) if e.is(ToolErrorCode::ListCursorInvalid))
    );
    assert!(
        matches!(reg.list(&ToolListRequest { cursor: Some("garbage".into()) }), Err(e) if e.is(ToolErrorCode::ListCursorInvalid))
    );
}

#[tokio::test]
async fn hidden_tools_cannot_be_called() {
    let runs = Arc::new(AtomicUsize::new(0));
    let options = RegistryOptions {
        allowed_tool_names: Some(BTreeSet::new()),
        ..RegistryOptions::default()
    };
    let mut reg = ToolRegistry::new(options, Arc::new(ApprovalQueue::new()));
    reg.register(def("workspace.readFile", true), counting(&runs))
        .unwrap();
    let r = reg
        .call(
            req("c", "workspace.readFile", json!({"path": "a"})),
            model(),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(code(&r), Some("TOOL_NOT_FOUND"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[test]
fn the_page_walk_refuses_repeated_cursors_and_stops_at_the_cap() {
    let looping = walk_pages(
        |_c| {
            Ok(ToolListResult {
                tools: vec![],
                next_cursor: Some("same".into()),
            })
        },
        1000,
    );
    assert!(matches!(looping, Err(e) if e.is(ToolErrorCode::ListCursorRepeated)));
    let mut n = 0;
    let endless = walk_pages(
        |_c| {
            n += 1;
            Ok(ToolListResult {
                tools: vec![],
                next_cursor: Some(format!("c{n}")),
            })
        },
        10,
    );
    assert!(matches!(endless, Err(e) if e.is(ToolErrorCode::ListPageLimit)));
    assert_eq!(n, 10);
}

#[test]
fn registration_refuses_bad_names_schemas_duplicates_and_collisions() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut reg = registry();
    for bad in [
        "readFile",
        "Workspace.read",
        "workspace.",
        "ws.read file",
        "ws.1read",
        "ws-x.read",
    ] {
        assert_eq!(
            reg.register(def(bad, true), counting(&runs)),
            Err(RegistrationError::InvalidName(bad.into())),
            "{bad}"
        );
    }
    reg.register(def("ws.a.b", true), counting(&runs)).unwrap();
    assert_eq!(
        reg.register(def("ws.a.b", true), counting(&runs)),
        Err(RegistrationError::Duplicate("ws.a.b".into()))
    );
    assert_eq!(
        reg.register(def("ws.a__b", true), counting(&runs)),
        Err(RegistrationError::EncodingCollision {
            name: "ws.a__b".into(),
            encoded: "ws__a__b".into(),
            other: "ws.a.b".into()
        })
    );
    let mut broken = def("ws.broken", true);
    broken.input_schema = json!({"type": "object", "properties": {"x": {"type": "nonsense"}}});
    assert!(matches!(
        reg.register(broken, counting(&runs)),
        Err(RegistrationError::InvalidSchema { which: "input", .. })
    ));
    let mut scalar = def("ws.scalar", true);
    scalar.input_schema = json!({"type": "string"});
    assert!(matches!(
        reg.register(scalar, counting(&runs)),
        Err(RegistrationError::InvalidSchema { .. })
    ));
}

#[tokio::test]
async fn traces_correlate_by_trace_id_and_are_redacted_when_serialized() {
    let trace = Arc::new(TraceStore::new(ObservabilityPolicy::default(), 100));
    let mut reg = registry();
    reg.add_observer(Arc::clone(&trace) as Arc<dyn ToolObserver>);
    let mut d = def("workspace.writeFile", true);
    d.input_schema = json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "apiToken": {"type": "string"}}});
    let echo: Arc<dyn ToolHandler> =
        Arc::new(|_a: Map<String, Value>, _cx: HandlerContext| async {
            Ok(ToolOutput::text("ok"))
        });
    reg.register(d, echo).unwrap();
    let args = json!({"path": "src/a.rs", "content": "fn main() { TOP_SECRET() }", "apiToken": "sk-live-XYZ"});
    // A provider that reuses call ids.
    for _ in 0..2 {
        reg.call(
            req("dup", "workspace.writeFile", args.clone()),
            model(),
            ToolCallOptions::default(),
        )
        .await;
    }
    let entries = trace.entries();
    let phases: Vec<(u64, LifecyclePhase)> =
        entries.iter().map(|e| (e.trace_id, e.phase)).collect();
    assert_eq!(
        phases,
        vec![
            (1, LifecyclePhase::Started),
            (1, LifecyclePhase::Completed),
            (2, LifecyclePhase::Started),
            (2, LifecyclePhase::Completed)
        ]
    );
    assert_eq!(
        entries[1].provenance.schema,
        "cocode-tool-execution-provenance.v1"
    );
    let serialized = serde_json::to_string(&entries).unwrap();
    assert!(!serialized.contains("TOP_SECRET"), "{serialized}");
    assert!(!serialized.contains("sk-live"), "{serialized}");
    assert!(serialized.contains("src/a.rs"));
    let export = serde_json::to_string(&trace.export_metadata()).unwrap();
    assert!(!export.contains("src/a.rs"), "exports are metadata only");
}

#[tokio::test]
async fn a_discovery_is_one_tools_list_row_of_its_session_and_a_failed_call_says_if_it_may_retry() {
    let trace = Arc::new(TraceStore::new(ObservabilityPolicy::default(), 100));
    let mut reg = registry();
    reg.add_observer(Arc::clone(&trace) as Arc<dyn ToolObserver>);
    let echo: Arc<dyn ToolHandler> =
        Arc::new(|_a: Map<String, Value>, _cx: HandlerContext| async {
            ToolOutput::json(&json!({"path": "a.rs", "content": "SECRET BODY"}))
        });
    reg.register(def("workspace.readFile", true), echo).unwrap();
    let found = reg.discover(&model()).unwrap();
    assert_eq!(
        found.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["workspace.readFile"]
    );
    reg.call(
        req("c1", "workspace.readFile", json!({"path": "a.rs"})),
        model(),
        ToolCallOptions::default(),
    )
    .await;
    reg.call(
        req("c2", "workspace.nothing", json!({})),
        model(),
        ToolCallOptions::default(),
    )
    .await;
    let rows: Vec<(TraceMethod, LifecyclePhase, Option<Value>, Option<bool>)> = trace
        .entries()
        .into_iter()
        .map(|e| (e.method, e.phase, e.result, e.retryable))
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                TraceMethod::ToolsList,
                LifecyclePhase::Completed,
                Some(json!({"tools": ["workspace.readFile"]})),
                None
            ),
            (TraceMethod::ToolsCall, LifecyclePhase::Started, None, None),
            (
                TraceMethod::ToolsCall,
                LifecyclePhase::Completed,
                Some(json!({"path": "a.rs", "content": {"chars": 11}})),
                None
            ),
            (TraceMethod::ToolsCall, LifecyclePhase::Started, None, None),
            (
                TraceMethod::ToolsCall,
                LifecyclePhase::Failed,
                Some(
                    json!({"error": {"code": "TOOL_NOT_FOUND", "message": "no such tool",
                    "retryable": false, "details": {"tool": "workspace.nothing"}}})
                ),
                Some(false)
            ),
        ]
    );
    assert!(
        trace
            .entries()
            .iter()
            .all(|e| e.session_id == model().session_id)
    );
}

struct BrokenStore;
impl DurableOperationStore for BrokenStore {
    fn claim(
        &self,
        _k: &str,
        _f: &str,
        _t: &str,
        _o: &str,
        _l: u64,
        _n: u64,
    ) -> Result<Claim, crate::durable::StoreFailure> {
        Err(crate::durable::StoreFailure("disk full".into()))
    }
    fn put(&self, _r: OperationRecord) -> Result<(), crate::durable::StoreFailure> {
        Err(crate::durable::StoreFailure("disk full".into()))
    }
    fn get(&self, _k: &str) -> Result<Option<OperationRecord>, crate::durable::StoreFailure> {
        Err(crate::durable::StoreFailure("disk full".into()))
    }
}

fn durable_registry(
    store: Arc<dyn DurableOperationStore>,
    owner: &str,
    handler: Arc<dyn ToolHandler>,
) -> ToolRegistry {
    let mut reg = registry().with_operation_store(store, owner, Duration::from_mins(1));
    reg.register(def("workspace.writeFile", true), handler)
        .unwrap();
    reg
}

fn keyed(key: &str) -> ToolCallOptions {
    ToolCallOptions {
        idempotency_key: Some(key.into()),
        ..ToolCallOptions::default()
    }
}

#[tokio::test]
async fn durable_results_replay_across_registries_and_store_failures_never_run_the_handler() {
    use crate::durable::{InMemoryOperationStore, OperationState};
    let store: Arc<dyn DurableOperationStore> = Arc::new(InMemoryOperationStore::new());
    let runs = Arc::new(AtomicUsize::new(0));
    let first = durable_registry(Arc::clone(&store), "proc-1", counting(&runs));
    let a = first
        .call(
            req("c1", "workspace.writeFile", json!({"path": "a"})),
            model(),
            keyed("op-1"),
        )
        .await;
    assert!(!a.is_error);
    // A restarted process (new registry, same store) replays instead of re-running.
    let second = durable_registry(Arc::clone(&store), "proc-2", counting(&runs));
    let b = second
        .call(
            req("c2", "workspace.writeFile", json!({"path": "a"})),
            model(),
            keyed("op-1"),
        )
        .await;
    assert_eq!((b.tool_call_id.as_str(), b.content), ("c2", a.content));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        second.get_operation_status("op-1").unwrap().unwrap().state,
        OperationState::Completed
    );
    let conflict = second
        .call(
            req("c3", "workspace.writeFile", json!({"path": "b"})),
            model(),
            keyed("op-1"),
        )
        .await;
    assert_eq!(code(&conflict), Some("TOOL_IDEMPOTENCY_CONFLICT"));

    let broken = durable_registry(Arc::new(BrokenStore), "proc-3", counting(&runs));
    let r = broken
        .call(
            req("c4", "workspace.writeFile", json!({"path": "a"})),
            model(),
            keyed("op-2"),
        )
        .await;
    assert_eq!(code(&r), Some("TOOL_IDEMPOTENCY_STORE_FAILED"));
    assert_eq!(runs.load(Ordering::SeqCst), 1, "no unguarded mutation");
}

// The timed-out execution is a subject: a paused clock orders it.
#[tokio::test(start_paused = true)]
async fn pending_unknown_and_reconciled_operations_answer_by_state() {
    use crate::durable::{Claim, InMemoryOperationStore, OperationState, Resolution};
    let store = Arc::new(InMemoryOperationStore::new());
    // Another owner holds a fresh lease.
    let now = now_ms();
    assert_eq!(
        store
            .claim(
                "op-p",
                &fingerprint(
                    "workspace.writeFile",
                    json!({"path": "a"}).as_object().unwrap()
                ),
                "workspace.writeFile",
                "other",
                60_000,
                now
            )
            .unwrap(),
        Claim::Acquired
    );
    let runs = Arc::new(AtomicUsize::new(0));
    let reg = durable_registry(
        Arc::clone(&store) as Arc<dyn DurableOperationStore>,
        "me",
        counting(&runs),
    );
    let pending = reg
        .call(
            req("c", "workspace.writeFile", json!({"path": "a"})),
            model(),
            keyed("op-p"),
        )
        .await;
    assert_eq!(code(&pending), Some("TOOL_IDEMPOTENCY_PENDING"));
    assert!(pending.error.as_ref().unwrap().retryable);

    // A timed-out execution becomes unknown until reconciled.
    let slow: Arc<dyn ToolHandler> =
        Arc::new(|_a: Map<String, Value>, _cx: HandlerContext| async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok(ToolOutput::text("late"))
        });
    let reg = durable_registry(
        Arc::clone(&store) as Arc<dyn DurableOperationStore>,
        "me",
        slow,
    );
    let timed_out = reg
        .call(
            req("c1", "workspace.writeFile", json!({"path": "u"})),
            model(),
            ToolCallOptions {
                timeout_secs: Some(0.02),
                ..keyed("op-u")
            },
        )
        .await;
    assert_eq!(code(&timed_out), Some("TOOL_TIMEOUT"));
    assert_eq!(
        reg.get_operation_status("op-u").unwrap().unwrap().state,
        OperationState::Unknown
    );
    let unknown = reg
        .call(
            req("c2", "workspace.writeFile", json!({"path": "u"})),
            model(),
            keyed("op-u"),
        )
        .await;
    assert_eq!(code(&unknown), Some("TOOL_IDEMPOTENCY_UNKNOWN"));

    let recovered = reg
        .recover_operation("op-u", |record| {
            assert_eq!(record.state, OperationState::Unknown);
            Some(Resolution::Completed(ToolOutput::text("verified on disk")))
        })
        .unwrap()
        .unwrap();
    assert_eq!(recovered.state, OperationState::Completed);
    let replay = reg
        .call(
            req("c3", "workspace.writeFile", json!({"path": "u"})),
            model(),
            keyed("op-u"),
        )
        .await;
    assert_eq!(
        replay.content,
        vec![ContentBlock::Text {
            text: "verified on disk".into()
        }]
    );
    assert!(
        reg.reconcile_operation(
            "op-u",
            Resolution::Failed(ToolError::handler("X", "m", false))
        )
        .is_err(),
        "completed records stay settled"
    );
}

proptest::proptest! {
    /// Any number of tools and any page size: the walk returns every visible
    /// tool exactly once, in order.
    #[test]
    fn the_page_walk_returns_every_tool_once(count in 0usize..40, page_size in 1usize..9, hidden_every in 2usize..6) {
        let names: Vec<String> = (0..count).map(|i| format!("workspace.t{i:02}")).collect();
        let allowed: BTreeSet<String> = names.iter().enumerate().filter(|(i, _)| i % hidden_every != 0).map(|(_, n)| n.clone()).collect();
        let options = RegistryOptions { page_size, allowed_tool_names: Some(allowed.clone()), ..RegistryOptions::default() };
        let mut reg = ToolRegistry::new(options, Arc::new(ApprovalQueue::new()));
        let runs = Arc::new(AtomicUsize::new(0));
        for name in &names {
            reg.register(def(name, true), counting(&runs)).unwrap();
        }
        let listed: Vec<String> = reg.list_all_tools().unwrap().into_iter().map(|d| d.name).collect();
        let expected: Vec<String> = allowed.into_iter().collect();
        proptest::prop_assert_eq!(listed, expected);
    }
}

#[test]
fn fingerprints_ignore_key_order_at_every_depth() {
    let mut a = Map::new();
    a.insert("z".into(), json!({"b": 1, "a": [{"y": 2, "x": 3}]}));
    a.insert("a".into(), json!("v"));
    let mut b = Map::new();
    b.insert("a".into(), json!("v"));
    b.insert("z".into(), json!({"a": [{"x": 3, "y": 2}], "b": 1}));
    assert_eq!(fingerprint("t.x", &a), fingerprint("t.x", &b));
    b.insert("a".into(), json!("w"));
    assert_ne!(fingerprint("t.x", &a), fingerprint("t.x", &b));
    assert_ne!(fingerprint("t.x", &a), fingerprint("t.y", &a));
}

/// Previews what it is asked about, echoing the tool and one argument.
struct EchoPreviewer;
impl crate::approval::ApprovalPreviewer for EchoPreviewer {
    fn preview(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Option<crate::ApprovalPreview> {
        Some(crate::ApprovalPreview::Note(format!(
            "{tool} on {}",
            arguments["path"].as_str().unwrap_or_default()
        )))
    }
}

#[tokio::test]
async fn a_call_waiting_for_approval_carries_its_preview_which_is_never_serialized() {
    let runs = Arc::new(AtomicUsize::new(0));
    let queue = Arc::new(ApprovalQueue::new());
    let mut reg = ToolRegistry::new(RegistryOptions::default(), Arc::clone(&queue));
    reg.register(def("workspace.writeFile", false), counting(&runs))
        .unwrap();
    reg.set_previewer(Arc::new(EchoPreviewer));
    let reg = Arc::new(reg);
    let mut events = queue.subscribe();
    let r = Arc::clone(&reg);
    let call = tokio::spawn(async move {
        r.call(
            req("c1", "workspace.writeFile", json!({"path": "src/비밀.rs"})),
            model(),
            ToolCallOptions::default(),
        )
        .await
    });
    let snapshot = next_request(&mut events).await;
    assert_eq!(
        snapshot.preview.as_deref(),
        Some(&crate::ApprovalPreview::Note(
            "workspace.writeFile on src/비밀.rs".into()
        ))
    );
    // The preview stays in the process: a serialized snapshot has none.
    let json = serde_json::to_value(&snapshot).unwrap();
    assert!(json.get("preview").is_none(), "{json}");
    let back: crate::ApprovalSnapshot = serde_json::from_value(json).unwrap();
    assert_eq!(back.preview, None);
    queue.resolve(snapshot.id, ApprovalDecision::Approve);
    assert!(!call.await.unwrap().is_error);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_tool_allowed_for_the_task_runs_without_asking_again_in_that_task_only() {
    let runs = Arc::new(AtomicUsize::new(0));
    let queue = Arc::new(ApprovalQueue::new());
    let mut reg = ToolRegistry::new(RegistryOptions::default(), Arc::clone(&queue));
    reg.register(def("workspace.writeFile", false), counting(&runs))
        .unwrap();
    reg.register(def("workspace.deleteFile", false), counting(&runs))
        .unwrap();
    let reg = Arc::new(reg);
    let mut events = queue.subscribe();
    let in_task = |task: &str| ToolCallContext {
        task_id: Some(task.into()),
        ..model()
    };
    let call = |tool: &'static str, task: &'static str| {
        let r = Arc::clone(&reg);
        let ctx = in_task(task);
        tokio::spawn(async move {
            r.call(
                req("c", tool, json!({"path": "a"})),
                ctx,
                ToolCallOptions::default(),
            )
            .await
        })
    };
    // The first call asks; the person allows the tool for the task.
    let first = call("workspace.writeFile", "t1");
    let asked = next_request(&mut events).await;
    queue.resolve(asked.id, ApprovalDecision::ApproveForTask);
    assert!(!first.await.unwrap().is_error);
    // The same tool in the same task runs at once.
    assert!(!call("workspace.writeFile", "t1").await.unwrap().is_error);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // Another tool, or another task, still asks.
    for (tool, task) in [
        ("workspace.deleteFile", "t1"),
        ("workspace.writeFile", "t2"),
    ] {
        let other = call(tool, task);
        let asked = next_request(&mut events).await;
        assert_eq!(asked.tool, tool);
        queue.resolve(asked.id, ApprovalDecision::Deny);
        assert_eq!(code(&other.await.unwrap()), Some("TOOL_APPROVAL_DENIED"));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[test]
fn sample_arguments_fill_what_is_required_and_problems_say_where() {
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "limit": {"type": "integer"},
            "recursive": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["fast", "full"]},
            "extra": {"type": "string"}
        },
        "required": ["path", "limit", "recursive", "mode"],
        "additionalProperties": false
    });
    let sample = sample_arguments(&schema);
    assert_eq!(
        sample,
        json!({"path": "", "limit": 0, "recursive": false, "mode": "fast"})
    );
    assert_eq!(argument_problems(&schema, &sample), Vec::<String>::new());
    let problems = argument_problems(
        &schema,
        &json!({"path": 3, "limit": 1, "recursive": true, "mode": "fast", "other": 1}),
    );
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("/path: 3 is not of type")),
        "{problems:?}"
    );
    assert!(problems.iter().any(|p| p.contains("other")), "{problems:?}");
    let missing = argument_problems(&schema, &json!({}));
    assert_eq!(
        missing,
        vec![
            "\"path\" is a required property",
            "\"limit\" is a required property",
            "\"recursive\" is a required property",
            "\"mode\" is a required property",
        ]
    );
}
