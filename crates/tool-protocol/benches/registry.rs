//! Registry overhead per call: a full `ToolRegistry::call` (lookup, schema
//! validation, policy, spawn, result checks, observer) against calling the
//! same handler directly. Reported by `cargo xtask bench` as ours/peer.

use std::hint::black_box;
use std::sync::Arc;

use cocode_tool_protocol::{
    ApprovalQueue, HandlerContext, RegistryOptions, ToolAnnotations, ToolCallContext,
    ToolCallOptions, ToolCallRequest, ToolDefinition, ToolError, ToolHandler, ToolMode, ToolOutput,
    ToolRegistry, ToolSource,
};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

fn handler() -> Arc<dyn ToolHandler> {
    Arc::new(|args: Map<String, Value>, _cx: HandlerContext| async move {
        let path = args
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .len();
        Ok::<_, ToolError>(ToolOutput::text(format!("{path}")))
    })
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let mut registry =
        ToolRegistry::new(RegistryOptions::default(), Arc::new(ApprovalQueue::new()));
    let definition = ToolDefinition {
        name: "workspace.readFile".into(),
        title: "Read file".into(),
        description: "Reads a file".into(),
        input_schema: json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "startLine": {"type": "integer", "minimum": 1}},
            "required": ["path"],
            "additionalProperties": false
        }),
        output_schema: None,
        annotations: ToolAnnotations {
            read_only: true,
            ..ToolAnnotations::default()
        },
    };
    registry
        .register(definition, handler())
        .unwrap_or_else(|e| panic!("register: {e}"));
    let ctx = ToolCallContext {
        source: ToolSource::Model,
        mode: ToolMode::Agent,
        session_id: "s".into(),
        task_id: None,
        revision: None,
    };
    let args = json!({"path": "src/main.rs", "startLine": 1})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let direct = handler();

    let mut group = c.benchmark_group("tool_registry_call");
    group.bench_function("ours", |b| {
        b.iter(|| {
            let request = ToolCallRequest {
                id: "c".into(),
                name: "workspace.readFile".into(),
                arguments: args.clone(),
            };
            black_box(runtime.block_on(registry.call(
                request,
                ctx.clone(),
                ToolCallOptions::default(),
            )))
        });
    });
    group.bench_function("peer", |b| {
        b.iter(|| {
            let cx = HandlerContext {
                call_id: "c".into(),
                ctx: ctx.clone(),
                cancel: CancellationToken::new(),
                output: None,
            };
            black_box(runtime.block_on(direct.call(args.clone(), cx)))
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
