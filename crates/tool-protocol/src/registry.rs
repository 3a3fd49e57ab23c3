//! `ToolRegistry`: discovery and the one call path.
//!
//! Order of a call: options check → name lookup (allowlist) → argument
//! validation against the input schema → idempotency → policy (`ask` waits
//! in the approval queue) → handler → result checks (shape, output schema,
//! size) → observer events. Validation failures never reach policy or the
//! handler; denied or aborted approvals never reach the handler.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalDecision, ApprovalInput, ApprovalQueue, safe_argument_summary};
use crate::durable::{
    Claim, DurableOperationStore, OperationRecord, OperationState, Resolution, answer_existing,
    finished_record, stored_error,
};
use crate::error::{ToolError, ToolErrorCode};
use crate::observe::{LifecyclePhase, Provenance, ToolLifecycleEvent, ToolObserver, TraceMethod};
use crate::policy::{DefaultPolicy, PolicyDecision, ToolPolicy};
use crate::projection::{encode_tool_name, to_anthropic_tools, to_mcp_tools, to_openai_tools};

/// Provider formats for [`ToolRegistry::export_tools`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    OpenAi,
    Anthropic,
    Mcp,
}
pub use crate::types::ToolOutput;
use crate::types::{
    ToolCallContext, ToolCallRequest, ToolCallResult, ToolDefinition, ToolListRequest,
    ToolListResult,
};

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Where a handler may stream output while it runs (a command's bytes as
/// they arrive); the result still carries the whole output.
#[derive(Clone)]
pub struct OutputSink(pub Arc<OutputFn>);

/// Receives one chunk of streamed output.
pub type OutputFn = dyn Fn(&[u8]) + Send + Sync;

impl std::fmt::Debug for OutputSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputSink")
    }
}

/// What a handler receives besides its validated arguments.
#[derive(Debug, Clone)]
pub struct HandlerContext {
    pub call_id: String,
    pub ctx: ToolCallContext,
    /// Fires on caller cancellation and on timeout; handlers should stop.
    pub cancel: CancellationToken,
    /// The caller's sink for output streamed while the call runs.
    pub output: Option<OutputSink>,
}

/// What asking a person about a call needs (moved into the call's task).
struct Asking {
    previewer: Option<Arc<dyn crate::approval::ApprovalPreviewer>>,
    approvals: Arc<ApprovalQueue>,
    allowances: Arc<Mutex<std::collections::HashSet<(String, String)>>>,
    task: Option<String>,
}

impl Asking {
    /// Previews the call (on the blocking pool: it reads files), asks, and
    /// notes an allowance for the rest of the task; an error unless the
    /// person approved.
    async fn ask(
        self,
        mut input: ApprovalInput,
        arguments: &Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<(), ToolError> {
        if let Some(previewer) = self.previewer {
            let (tool, args) = (input.tool.clone(), arguments.clone());
            input.preview = tokio::task::spawn_blocking(move || previewer.preview(&tool, &args))
                .await
                .ok()
                .flatten()
                .map(Box::new);
        }
        let tool = input.tool.clone();
        let decision = self.approvals.request(input, cancel).await;
        if decision == ApprovalDecision::ApproveForTask
            && let Some(task) = self.task
        {
            self.allowances
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert((task, tool));
        }
        if decision.approves() {
            return Ok(());
        }
        if cancel.is_cancelled() {
            return Err(ToolError::new(
                ToolErrorCode::Cancelled,
                "cancelled while waiting for approval",
            ));
        }
        Err(ToolError::new(
            ToolErrorCode::ApprovalDenied,
            "a person denied this call",
        ))
    }
}

/// A tool implementation.
pub trait ToolHandler: Send + Sync + 'static {
    fn call(
        &self,
        arguments: Map<String, Value>,
        cx: HandlerContext,
    ) -> BoxFuture<Result<ToolOutput, ToolError>>;
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(Map<String, Value>, HandlerContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    fn call(
        &self,
        arguments: Map<String, Value>,
        cx: HandlerContext,
    ) -> BoxFuture<Result<ToolOutput, ToolError>> {
        Box::pin(self(arguments, cx))
    }
}

/// Per-call options.
#[derive(Debug, Clone, Default)]
pub struct ToolCallOptions {
    /// Seconds; covers policy (including an approval wait) and the handler.
    pub timeout_secs: Option<f64>,
    pub max_output_bytes: Option<usize>,
    pub idempotency_key: Option<String>,
    pub cancel: CancellationToken,
    /// Output streamed by the handler while it runs (commands).
    pub output: Option<OutputSink>,
    /// A person already approved this very action (an external agent's
    /// permission request that named it): the policy still decides, but
    /// the person is not asked a second time.
    pub approved_by_person: bool,
}

/// Registry configuration.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    pub page_size: usize,
    /// When set, only these tools are discoverable, callable and exportable.
    pub allowed_tool_names: Option<BTreeSet<String>>,
    /// Argument names whose string values approval cards may show (e.g. `path`).
    pub safe_argument_names: BTreeSet<String>,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        Self {
            page_size: 50,
            allowed_tool_names: None,
            safe_argument_names: BTreeSet::from(["path".to_owned()]),
        }
    }
}

/// Registration failures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationError {
    #[error("tool name {0:?} must be namespaced like `workspace.readFile`")]
    InvalidName(String),
    #[error("tool {0} is already registered")]
    Duplicate(String),
    #[error("tool {name}: provider name {encoded} collides with tool {other}")]
    EncodingCollision {
        name: String,
        encoded: String,
        other: String,
    },
    #[error("tool {name}: invalid {which} schema: {message}")]
    InvalidSchema {
        name: String,
        which: &'static str,
        message: String,
    },
}

/// The parts of one call, passed between the stages of the call path.
#[derive(Clone, Copy)]
struct Call<'a> {
    tool: &'a Registered,
    request: &'a ToolCallRequest,
    ctx: &'a ToolCallContext,
    options: &'a ToolCallOptions,
    timeout: Option<Duration>,
}

struct Registered {
    definition: ToolDefinition,
    input: jsonschema::Validator,
    output: Option<jsonschema::Validator>,
    handler: Arc<dyn ToolHandler>,
}

/// The shared state of an idempotency key.
#[derive(Clone)]
enum Execution {
    Running(watch::Receiver<Option<Result<ToolOutput, ToolError>>>),
    Done(Result<ToolOutput, ToolError>),
    /// Given up after a timeout or cancellation: its outcome is unknown.
    Abandoned,
}

struct KeyEntry {
    fingerprint: String,
    execution: Execution,
}

/// The registry.
pub struct ToolRegistry {
    tools: BTreeMap<String, Registered>,
    provider_names: BTreeMap<String, String>,
    options: RegistryOptions,
    policy: Arc<dyn ToolPolicy>,
    approvals: Arc<ApprovalQueue>,
    observers: Vec<Arc<dyn ToolObserver>>,
    keys: Mutex<HashMap<String, KeyEntry>>,
    operations: Option<OperationStore>,
    next_trace: AtomicU64,
    /// Shows what a call waiting for approval would do.
    previewer: Option<Arc<dyn crate::approval::ApprovalPreviewer>>,
    /// (task, tool) pairs a person allowed for the rest of the task.
    allowed_for_task: Arc<Mutex<std::collections::HashSet<(String, String)>>>,
}

/// The injected durable store with this process's owner id and lease length.
struct OperationStore {
    store: Arc<dyn DurableOperationStore>,
    owner: String,
    lease_ms: u64,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// Default cap on pages walked by [`ToolRegistry::list_all_tools`].
pub const DEFAULT_MAX_PAGES: usize = 1_000;

fn valid_name(name: &str) -> bool {
    let mut parts = name.split('.');
    let namespace_ok = parts.next().is_some_and(|p| {
        p.starts_with(|c: char| c.is_ascii_lowercase())
            && p.chars().all(|c| c.is_ascii_alphanumeric())
    });
    let rest: Vec<&str> = parts.collect();
    namespace_ok
        && !rest.is_empty()
        && rest.iter().all(|p| {
            p.starts_with(|c: char| c.is_ascii_alphabetic())
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

fn compile(
    name: &str,
    which: &'static str,
    schema: &Value,
) -> Result<jsonschema::Validator, RegistrationError> {
    jsonschema::validator_for(schema).map_err(|e| RegistrationError::InvalidSchema {
        name: name.to_owned(),
        which,
        message: e.to_string(),
    })
}

/// The schema problems of an instance, as locations only: values never
/// appear in errors (they may be file contents).
fn schema_issues(validator: &jsonschema::Validator, instance: &Value) -> Vec<Value> {
    validator
        .iter_errors(instance)
        .map(|e| {
            json!({
                "instancePath": e.instance_path().as_str(),
                "schemaPath": e.schema_path().as_str(),
            })
        })
        .collect()
}

/// Why `arguments` do not fit a tool's input `schema`, in words a person
/// reads beside what they typed (each problem with where it is); empty
/// when they fit. The registry checks the same schema before a call.
pub fn argument_problems(schema: &Value, arguments: &Value) -> Vec<String> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => return vec![format!("the tool's schema cannot be used: {e}")],
    };
    validator
        .iter_errors(arguments)
        .map(|e| {
            let at = e.instance_path().as_str();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect()
}

/// Arguments that a tool's input `schema` lists as required, each with an
/// empty value of its type, as a starting point to edit.
pub fn sample_arguments(schema: &Value) -> Value {
    let mut sample = Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let property = &schema["properties"][name];
        let kind = match &property["type"] {
            Value::String(t) => t.as_str(),
            Value::Array(types) => types.iter().find_map(Value::as_str).unwrap_or("string"),
            _ => "string",
        };
        let value = match kind {
            "integer" | "number" => json!(0),
            "boolean" => json!(false),
            "array" => json!([]),
            "object" => json!({}),
            _ => property["enum"]
                .as_array()
                .and_then(|e| e.first().cloned())
                .unwrap_or_else(|| json!("")),
        };
        sample.insert(name.to_owned(), value);
    }
    Value::Object(sample)
}

/// Walks a paged listing: refuses a repeated cursor and stops after `max_pages`.
pub fn walk_pages(
    mut fetch: impl FnMut(Option<String>) -> Result<ToolListResult, ToolError>,
    max_pages: usize,
) -> Result<Vec<ToolDefinition>, ToolError> {
    let mut tools = Vec::new();
    let mut seen = BTreeSet::new();
    let mut cursor = None;
    for _ in 0..max_pages {
        let page = fetch(cursor.take())?;
        tools.extend(page.tools);
        match page.next_cursor {
            None => return Ok(tools),
            Some(next) => {
                if !seen.insert(next.clone()) {
                    return Err(ToolError::new(
                        ToolErrorCode::ListCursorRepeated,
                        "the listing repeated a cursor",
                    ));
                }
                cursor = Some(next);
            }
        }
    }
    Err(ToolError::new(
        ToolErrorCode::ListPageLimit,
        format!("the listing did not end within {max_pages} pages"),
    ))
}

/// `value` with every object's keys sorted, so equal arguments serialize
/// equally whatever order they arrived in — even when another crate in the
/// build turns on `serde_json`'s insertion-ordered maps.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut sorted = Map::new();
            for key in keys {
                sorted.insert(key.clone(), canonical(&map[key]));
            }
            Value::Object(sorted)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

fn fingerprint(name: &str, arguments: &Map<String, Value>) -> String {
    let canonical = serde_json::to_string(&(name, canonical(&Value::Object(arguments.clone()))))
        .unwrap_or_default();
    let digest = Sha256::digest(canonical.as_bytes());
    digest.iter().fold(String::with_capacity(64), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

/// `tools` in a provider's format.
pub fn project(format: ExportFormat, tools: &[ToolDefinition]) -> Vec<Value> {
    match format {
        ExportFormat::OpenAi => to_openai_tools(tools),
        ExportFormat::Anthropic => to_anthropic_tools(tools),
        ExportFormat::Mcp => to_mcp_tools(tools),
    }
}

/// What a trace keeps of a call's outcome: the structured result, else
/// the content blocks, or the error (the observers redact it).
fn trace_result(result: &ToolCallResult) -> Value {
    if let Some(error) = &result.error {
        return json!({"error": error});
    }
    match &result.structured_content {
        Some(structured) => structured.clone(),
        None => json!({"content": result.content}),
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl ToolRegistry {
    pub fn new(options: RegistryOptions, approvals: Arc<ApprovalQueue>) -> Self {
        Self {
            tools: BTreeMap::new(),
            provider_names: BTreeMap::new(),
            options,
            policy: Arc::new(DefaultPolicy),
            approvals,
            observers: Vec::new(),
            keys: Mutex::new(HashMap::new()),
            operations: None,
            next_trace: AtomicU64::new(1),
            previewer: None,
            allowed_for_task: Arc::default(),
        }
    }

    /// Makes idempotency keys durable through `store`, claiming keys as
    /// `owner` with leases of `lease`.
    #[must_use]
    pub fn with_operation_store(
        mut self,
        store: Arc<dyn DurableOperationStore>,
        owner: impl Into<String>,
        lease: Duration,
    ) -> Self {
        self.operations = Some(OperationStore {
            store,
            owner: owner.into(),
            lease_ms: u64::try_from(lease.as_millis()).unwrap_or(u64::MAX),
        });
        self
    }

    fn store(&self) -> Result<&OperationStore, ToolError> {
        self.operations.as_ref().ok_or_else(|| {
            ToolError::new(
                ToolErrorCode::IdempotencyStoreFailed,
                "no operation store is configured",
            )
        })
    }

    /// The record of a durable operation, if any.
    pub fn get_operation_status(&self, key: &str) -> Result<Option<OperationRecord>, ToolError> {
        let ops = self.store()?;
        ops.store
            .get(key)
            .map_err(|e| ToolError::new(ToolErrorCode::IdempotencyStoreFailed, e.to_string()))
    }

    /// Settles an unknown operation (or a pending one whose lease expired):
    /// later calls with its key answer with the resolution.
    pub fn reconcile_operation(
        &self,
        key: &str,
        resolution: Resolution,
    ) -> Result<OperationRecord, ToolError> {
        let ops = self.store()?;
        let failed = |e: crate::durable::StoreFailure| {
            ToolError::new(ToolErrorCode::IdempotencyStoreFailed, e.to_string())
        };
        let now = now_ms();
        let record = ops.store.get(key).map_err(failed)?.ok_or_else(|| {
            ToolError::new(
                ToolErrorCode::IdempotencyUnknown,
                "no operation with this key",
            )
        })?;
        let settleable = record.state == OperationState::Unknown
            || (record.state == OperationState::Pending && record.lease_expires_at_ms <= now);
        if !settleable {
            return Err(ToolError::new(
                ToolErrorCode::IdempotencyPending,
                "only unknown operations or expired pending ones can be reconciled",
            ));
        }
        let (state, output, error) = match resolution {
            Resolution::Completed(output) => (OperationState::Completed, Some(output), None),
            Resolution::Failed(error) => (OperationState::Failed, None, Some(stored_error(&error))),
        };
        let settled = OperationRecord {
            state,
            output,
            error,
            updated_at_ms: now,
            ..record
        };
        ops.store.put(settled.clone()).map_err(failed)?;
        Ok(settled)
    }

    /// Lets `resolver` decide an unknown operation from its record (e.g. by
    /// checking the workspace); `None` leaves it unknown.
    pub fn recover_operation(
        &self,
        key: &str,
        resolver: impl FnOnce(&OperationRecord) -> Option<Resolution>,
    ) -> Result<Option<OperationRecord>, ToolError> {
        let Some(record) = self.get_operation_status(key)? else {
            return Ok(None);
        };
        match resolver(&record) {
            Some(resolution) => self.reconcile_operation(key, resolution).map(Some),
            None => Ok(None),
        }
    }

    #[must_use]
    pub fn with_policy(mut self, policy: Arc<dyn ToolPolicy>) -> Self {
        self.policy = policy;
        self
    }

    pub fn add_observer(&mut self, observer: Arc<dyn ToolObserver>) {
        self.observers.push(observer);
    }

    pub fn approvals(&self) -> &Arc<ApprovalQueue> {
        &self.approvals
    }

    /// Sets what computes the preview of calls waiting for approval.
    pub fn set_previewer(&mut self, previewer: Arc<dyn crate::approval::ApprovalPreviewer>) {
        self.previewer = Some(previewer);
    }

    /// Registers a tool. Its schemas are compiled now, so a broken schema is a
    /// registration error rather than a failure at call time.
    pub fn register(
        &mut self,
        definition: ToolDefinition,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), RegistrationError> {
        let name = definition.name.clone();
        if !valid_name(&name) {
            return Err(RegistrationError::InvalidName(name));
        }
        if self.tools.contains_key(&name) {
            return Err(RegistrationError::Duplicate(name));
        }
        let encoded =
            encode_tool_name(&name).ok_or_else(|| RegistrationError::InvalidName(name.clone()))?;
        if let Some(other) = self.provider_names.get(&encoded) {
            return Err(RegistrationError::EncodingCollision {
                name,
                encoded,
                other: other.clone(),
            });
        }
        if definition.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(RegistrationError::InvalidSchema {
                name,
                which: "input",
                message: "the input schema must be an object schema".into(),
            });
        }
        let input = compile(&name, "input", &definition.input_schema)?;
        let output = match &definition.output_schema {
            Some(schema) => Some(compile(&name, "output", schema)?),
            None => None,
        };
        self.provider_names.insert(encoded, name.clone());
        self.tools.insert(
            name,
            Registered {
                definition,
                input,
                output,
                handler,
            },
        );
        Ok(())
    }

    fn allowed(&self, name: &str) -> bool {
        self.options
            .allowed_tool_names
            .as_ref()
            .is_none_or(|allowed| allowed.contains(name))
    }

    fn visible(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.tools
            .values()
            .filter(|t| self.allowed(&t.definition.name))
            .map(|t| &t.definition)
    }

    /// One page of `tools/list`. The cursor is opaque to callers.
    pub fn list(&self, request: &ToolListRequest) -> Result<ToolListResult, ToolError> {
        let offset = match &request.cursor {
            None => 0,
            Some(cursor) => cursor
                .strip_prefix("page:")
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| {
                    ToolError::new(ToolErrorCode::ListCursorInvalid, "unknown cursor")
                })?,
        };
        let page_size = self.options.page_size.max(1);
        let visible: Vec<&ToolDefinition> = self.visible().collect();
        if offset > visible.len() {
            return Err(ToolError::new(
                ToolErrorCode::ListCursorInvalid,
                "cursor past the end",
            ));
        }
        let end = (offset + page_size).min(visible.len());
        Ok(ToolListResult {
            tools: visible[offset..end].iter().map(|d| (*d).clone()).collect(),
            next_cursor: (end < visible.len()).then(|| format!("page:{end}")),
        })
    }

    /// Every visible tool, walking the pages (see [`walk_pages`]).
    pub fn list_all_tools(&self) -> Result<Vec<ToolDefinition>, ToolError> {
        walk_pages(
            |cursor| self.list(&ToolListRequest { cursor }),
            DEFAULT_MAX_PAGES,
        )
    }

    /// `tools/list` for one session (an agent's run, the Tool catalog):
    /// every visible tool, as [`Self::list_all_tools`], and a `tools/list`
    /// row for the observers with the names found.
    pub fn discover(&self, ctx: &ToolCallContext) -> Result<Vec<ToolDefinition>, ToolError> {
        let trace_id = self.next_trace.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let provenance = Provenance::new(trace_id, TraceMethod::ToolsList.as_str(), ctx, now_ms());
        let listed = self.list_all_tools();
        if !self.observers.is_empty() {
            let (phase, result, error) = match &listed {
                Ok(tools) => (
                    LifecyclePhase::Completed,
                    json!({"tools": tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>()}),
                    None,
                ),
                Err(e) => (
                    LifecyclePhase::Failed,
                    json!({"error": {"code": e.code, "message": e.message}}),
                    Some(e),
                ),
            };
            self.emit(&ToolLifecycleEvent {
                method: TraceMethod::ToolsList,
                trace_id,
                phase,
                call_id: String::new(),
                tool: String::new(),
                source: ctx.source,
                mode: ctx.mode,
                session_id: ctx.session_id.clone(),
                arguments: json!({}),
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                result_bytes: serde_json::to_vec(&result).map_or(0, |v| v.len()),
                error_code: error.map(|e| e.code.clone()),
                retryable: error.map(|e| e.retryable),
                result: Some(result),
                provenance,
            });
        }
        listed
    }

    /// The visible tools in a provider's format, optionally only `names`.
    /// Hidden tools are never exported, even when named.
    pub fn export_tools(
        &self,
        format: ExportFormat,
        names: Option<&[&str]>,
    ) -> Result<Vec<Value>, ToolError> {
        let tools: Vec<ToolDefinition> = self
            .list_all_tools()?
            .into_iter()
            .filter(|d| names.is_none_or(|names| names.contains(&d.name.as_str())))
            .collect();
        Ok(project(format, &tools))
    }

    /// The canonical name for a name a provider returned (`workspace__readFile`).
    /// Hidden and unknown names resolve to nothing.
    pub fn resolve_provider_name(&self, provider_name: &str) -> Option<&str> {
        let canonical = self.provider_names.get(provider_name)?;
        self.allowed(canonical).then_some(canonical.as_str())
    }

    fn keys(&self) -> MutexGuard<'_, HashMap<String, KeyEntry>> {
        self.keys.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn emit(&self, event: &ToolLifecycleEvent) {
        for observer in &self.observers {
            observer.on_event(event);
        }
    }

    /// Runs one call. Never panics and never returns a bare error: every
    /// outcome is a `ToolCallResult` carrying the request's id.
    pub async fn call(
        &self,
        request: ToolCallRequest,
        ctx: ToolCallContext,
        options: ToolCallOptions,
    ) -> ToolCallResult {
        let trace_id = self.next_trace.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let provenance = Provenance::new(trace_id, &request.name, &ctx, now_ms());
        let mut event = ToolLifecycleEvent {
            method: TraceMethod::ToolsCall,
            trace_id,
            phase: LifecyclePhase::Started,
            call_id: request.id.clone(),
            tool: request.name.clone(),
            source: ctx.source,
            mode: ctx.mode,
            session_id: ctx.session_id.clone(),
            arguments: Value::Object(request.arguments.clone()),
            duration_ms: 0,
            result_bytes: 0,
            error_code: None,
            retryable: None,
            result: None,
            provenance,
        };
        self.emit(&event);

        let outcome = self.call_inner(&request, &ctx, &options).await;
        let result = match outcome {
            Ok(output) => ToolCallResult {
                tool_call_id: request.id.clone(),
                content: output.content,
                structured_content: output.structured_content,
                is_error: false,
                error: None,
            },
            Err(error) => ToolCallResult::failure(request.id.clone(), error),
        };

        event.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        event.result_bytes = result.output_bytes();
        event.error_code = result.error.as_ref().map(|e| e.code.clone());
        event.retryable = result.error.as_ref().map(|e| e.retryable);
        if !self.observers.is_empty() {
            event.result = Some(trace_result(&result));
        }
        event.phase = match &result.error {
            None => LifecyclePhase::Completed,
            Some(e) if e.is(ToolErrorCode::Cancelled) => LifecyclePhase::Cancelled,
            Some(e) if e.is(ToolErrorCode::Timeout) || e.is(ToolErrorCode::ExecutionUnknown) => {
                LifecyclePhase::Unknown
            }
            Some(_) => LifecyclePhase::Failed,
        };
        self.emit(&event);
        result
    }

    async fn call_inner(
        &self,
        request: &ToolCallRequest,
        ctx: &ToolCallContext,
        options: &ToolCallOptions,
    ) -> Result<ToolOutput, ToolError> {
        let timeout = match options.timeout_secs {
            None => None,
            Some(secs) if secs.is_finite() && secs > 0.0 => Some(Duration::from_secs_f64(secs)),
            Some(_) => {
                return Err(ToolError::new(
                    ToolErrorCode::InvalidOptions,
                    "timeout must be a positive, finite number of seconds",
                ));
            }
        };
        if options.max_output_bytes == Some(0) {
            return Err(ToolError::new(
                ToolErrorCode::InvalidOptions,
                "max_output_bytes must be positive",
            ));
        }
        let tool = self
            .tools
            .get(&request.name)
            .filter(|t| self.allowed(&t.definition.name))
            .ok_or_else(|| {
                ToolError::new(ToolErrorCode::NotFound, "no such tool")
                    .with_details(json!({"tool": request.name}))
            })?;
        let arguments = Value::Object(request.arguments.clone());
        let issues = schema_issues(&tool.input, &arguments);
        if !issues.is_empty() {
            return Err(ToolError::new(
                ToolErrorCode::ValidationFailed,
                "the arguments do not match the tool's input schema",
            )
            .with_details(json!({"issues": issues})));
        }

        let call = Call {
            tool,
            request,
            ctx,
            options,
            timeout,
        };
        match (&options.idempotency_key, &self.operations) {
            (None, _) => self.run_checked(&call).await,
            (Some(key), None) => self.execute_once(key, &call).await,
            (Some(key), Some(ops)) => self.execute_durably(ops, key, &call).await,
        }
    }

    async fn run_checked(&self, call: &Call<'_>) -> Result<ToolOutput, ToolError> {
        let output = self.execute(call).await?;
        Self::check_output(call.tool, &output, call.options)?;
        Ok(output)
    }

    async fn execute_durably(
        &self,
        ops: &OperationStore,
        key: &str,
        call: &Call<'_>,
    ) -> Result<ToolOutput, ToolError> {
        let request = call.request;
        let print = fingerprint(&request.name, &request.arguments);
        let store_failed = |e: crate::durable::StoreFailure| {
            ToolError::new(ToolErrorCode::IdempotencyStoreFailed, e.to_string())
        };
        let now = now_ms();
        let claim = ops
            .store
            .claim(key, &print, &request.name, &ops.owner, ops.lease_ms, now)
            .map_err(store_failed)?;
        if let Claim::Existing(record) = claim {
            return answer_existing(&record, &print, now);
        }
        let result = self.execute_once(key, call).await;
        let claimed = OperationRecord {
            key: key.to_owned(),
            fingerprint: print,
            tool: request.name.clone(),
            state: OperationState::Pending,
            owner: ops.owner.clone(),
            lease_expires_at_ms: now.saturating_add(ops.lease_ms),
            output: None,
            error: None,
            updated_at_ms: now,
        };
        // The side effect already happened, so the real result goes back even
        // if recording it fails; the record then stays pending until its
        // lease expires and it is reconciled.
        let _ = ops.store.put(finished_record(claimed, &result, now_ms()));
        result
    }

    async fn execute_once(&self, key: &str, call: &Call<'_>) -> Result<ToolOutput, ToolError> {
        let Call {
            request, options, ..
        } = *call;
        let print = fingerprint(&request.name, &request.arguments);
        let (sender, existing) = {
            let mut keys = self.keys();
            match keys.get(key) {
                Some(entry) if entry.fingerprint != print => {
                    return Err(ToolError::new(
                        ToolErrorCode::IdempotencyConflict,
                        "the idempotency key was used with different arguments",
                    ));
                }
                Some(entry) => (None, Some(entry.execution.clone())),
                None => {
                    let (tx, rx) = watch::channel(None);
                    keys.insert(
                        key.to_owned(),
                        KeyEntry {
                            fingerprint: print,
                            execution: Execution::Running(rx),
                        },
                    );
                    (Some(tx), None)
                }
            }
        };
        match existing {
            Some(Execution::Done(result)) => return result,
            Some(Execution::Abandoned) => {
                return Err(ToolError::new(
                    ToolErrorCode::ExecutionAborted,
                    "an earlier execution with this key was abandoned; its outcome is unknown",
                ));
            }
            Some(Execution::Running(mut rx)) => {
                // Share the running execution.
                let shared = tokio::select! {
                    changed = rx.wait_for(Option::is_some) => changed.ok().and_then(|v| v.clone()),
                    () = options.cancel.cancelled() => {
                        return Err(ToolError::new(ToolErrorCode::Cancelled, "cancelled while waiting for a shared execution"));
                    }
                };
                return shared.unwrap_or_else(|| {
                    Err(ToolError::new(
                        ToolErrorCode::ExecutionAborted,
                        "the shared execution was abandoned; its outcome is unknown",
                    ))
                });
            }
            None => {}
        }
        let result = self.run_checked(call).await;
        let abandoned = matches!(&result, Err(e) if e.is(ToolErrorCode::Timeout) || e.is(ToolErrorCode::Cancelled));
        if let Some(entry) = self.keys().get_mut(key) {
            entry.execution = if abandoned {
                Execution::Abandoned
            } else {
                Execution::Done(result.clone())
            };
        }
        if let Some(tx) = sender {
            // Waiters of an abandoned execution see `None` (the sender drops).
            if !abandoned {
                let _ = tx.send(Some(result.clone()));
            }
        }
        result
    }

    /// Policy and handler in a spawned task, so a timeout can detach it: the
    /// caller gets `TOOL_TIMEOUT` at once while the handler drains.
    async fn execute(&self, call: &Call<'_>) -> Result<ToolOutput, ToolError> {
        let Call {
            tool,
            request,
            ctx,
            options,
            timeout,
        } = *call;
        let cancel = options.cancel.child_token();
        let decision = self.policy.decide(&tool.definition, ctx);
        let approval = match decision {
            PolicyDecision::Deny => {
                return Err(ToolError::new(
                    ToolErrorCode::PolicyDenied,
                    "the policy does not allow this call",
                ));
            }
            PolicyDecision::Allow => None,
            PolicyDecision::Ask if options.approved_by_person => None,
            // A person allowed this tool for the rest of this task.
            PolicyDecision::Ask
                if ctx.task_id.as_ref().is_some_and(|task| {
                    self.allowed_for_task
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .contains(&(task.clone(), request.name.clone()))
                }) =>
            {
                None
            }
            PolicyDecision::Ask => Some(ApprovalInput {
                provider_call_id: request.id.clone(),
                session_id: ctx.session_id.clone(),
                source: ctx.source,
                mode: ctx.mode,
                tool: request.name.clone(),
                safe_argument_summary: safe_argument_summary(
                    &request.arguments,
                    &self.options.safe_argument_names,
                ),
                preview: None,
            }),
        };
        let asking = Asking {
            previewer: self.previewer.clone(),
            approvals: Arc::clone(&self.approvals),
            allowances: Arc::clone(&self.allowed_for_task),
            task: ctx.task_id.clone(),
        };
        let handler = Arc::clone(&tool.handler);
        let cx = HandlerContext {
            call_id: request.id.clone(),
            ctx: ctx.clone(),
            cancel: cancel.clone(),
            output: options.output.clone(),
        };
        let arguments = request.arguments.clone();
        let task_cancel = cancel.clone();
        let mut task = tokio::spawn(async move {
            if let Some(input) = approval {
                asking.ask(input, &arguments, &task_cancel).await?;
            }
            if task_cancel.is_cancelled() {
                return Err(ToolError::new(
                    ToolErrorCode::Cancelled,
                    "cancelled before the handler ran",
                ));
            }
            handler.call(arguments, cx).await
        });
        let deadline = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            joined = &mut task => match joined {
                Ok(result) => result,
                Err(e) => Err(ToolError::new(ToolErrorCode::ExecutionUnknown, format!("the handler did not finish: {e}"))),
            },
            () = deadline => {
                cancel.cancel();
                Err(ToolError::new(ToolErrorCode::Timeout, "the call timed out")
                    .with_details(json!({"executionState": "detached"})))
            }
            () = options.cancel.cancelled() => {
                cancel.cancel();
                Err(ToolError::new(ToolErrorCode::Cancelled, "the call was cancelled"))
            }
        }
    }

    fn check_output(
        tool: &Registered,
        output: &ToolOutput,
        options: &ToolCallOptions,
    ) -> Result<(), ToolError> {
        if let Some(structured) = &output.structured_content
            && !structured.is_object()
        {
            return Err(ToolError::new(
                ToolErrorCode::ResultValidationFailed,
                "structured content must be a JSON object",
            ));
        }
        if let Some(validator) = &tool.output {
            let Some(structured) = &output.structured_content else {
                return Err(ToolError::new(
                    ToolErrorCode::OutputValidationFailed,
                    "the tool declares an output schema but returned no structured content",
                ));
            };
            let issues = schema_issues(validator, structured);
            if !issues.is_empty() {
                return Err(ToolError::new(
                    ToolErrorCode::OutputValidationFailed,
                    "the result does not match the tool's output schema",
                )
                .with_details(json!({"issues": issues})));
            }
        }
        if let Some(limit) = options.max_output_bytes {
            let probe = ToolCallResult {
                tool_call_id: String::new(),
                content: output.content.clone(),
                structured_content: output.structured_content.clone(),
                is_error: false,
                error: None,
            };
            let size = probe.output_bytes();
            if size > limit {
                return Err(ToolError::new(
                    ToolErrorCode::OutputLimitExceeded,
                    "the result is larger than allowed",
                )
                .with_details(json!({"attemptedBytes": size, "maxOutputBytes": limit})));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
