//! `BuiltInRuntime` and its sessions: the tool loop.
//!
//! One `send` runs one loop: ask the provider, validate the response, check
//! the budget and the repetition guard *before* any call runs, run the calls
//! one by one through the app's `ToolRegistry` (the registry decides policy
//! and approvals — the loop never does), send every result back paired with
//! its call, and stop when the model ends its turn, calls `task.finish`,
//! runs out of turns, fails or is cancelled.

use std::collections::BTreeSet;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};

use async_trait::async_trait;
use cocode_core::agent::{
    AgentBackendKind, AgentCapabilities, AgentError, AgentEvent, AgentProvider, AgentRuntime,
    AgentSession, EventStream, RequestCompletion, SessionRequest, SessionTarget, ToolCallContent,
    ToolCallStatus, ToolCallUpdate, TurnEndReason, UserTurn,
};
use cocode_core::services::{CredentialVault, Secret};
use cocode_core::{CancelReason, RequestId};
use cocode_tool_protocol::catalog::TASK_FINISH;
use cocode_tool_protocol::{
    ExportFormat, ToolCallContext, ToolCallOptions, ToolCallRequest, ToolCallResult, ToolError,
    ToolErrorCode, ToolMode, ToolRegistry, ToolSource, stringify_tool_content,
};
use futures_core::Stream;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::conversation::{
    AssistantMessage, Message, StopReason, ToolResultMessage, TranscriptEntry, transcript, validate,
};
use crate::error::{ProviderError, ProviderErrorCode};
use crate::local;
use crate::prompt::system_prompt;
use crate::providers::{AdapterKind, LlmProviderRegistry, ProviderConfig, missing_key};
use crate::transport::{BodyDecoder, DecoderFactory, StreamObserver, Transport};
use crate::wire::{StreamDelta, anthropic, openai};

mod compact;

use compact::Ask;

/// Finite limits of one run (one `send`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopLimits {
    /// Provider round trips.
    pub max_turns: u32,
    /// Tool calls over all turns.
    pub max_tool_calls: u32,
    /// The same call (name and arguments) this many times in a row stops
    /// the run with `PROVIDER_REPETITION`.
    pub max_identical_calls: u32,
}

impl Default for LoopLimits {
    fn default() -> Self {
        Self {
            max_turns: 50,
            max_tool_calls: 200,
            max_identical_calls: 3,
        }
    }
}

/// The built-in agent backend.
pub struct BuiltInRuntime {
    /// Replaced whole when the person changes a provider's settings;
    /// sessions already started keep the one they started with.
    providers: Mutex<Arc<LlmProviderRegistry>>,
    tools: Arc<ToolRegistry>,
    transport: Transport,
    keys: Arc<dyn CredentialVault>,
    limits: LoopLimits,
}

impl std::fmt::Debug for BuiltInRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltInRuntime")
            .field("providers", &self.providers())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl BuiltInRuntime {
    /// `tools` is the app's registry: every call of every session goes
    /// through it, with the session's id in the call context.
    pub fn new(
        providers: Arc<LlmProviderRegistry>,
        tools: Arc<ToolRegistry>,
        transport: Transport,
        keys: Arc<dyn CredentialVault>,
        limits: LoopLimits,
    ) -> Self {
        Self {
            providers: Mutex::new(providers),
            tools,
            transport,
            keys,
            limits,
        }
    }

    /// The providers new sessions use.
    pub fn providers(&self) -> Arc<LlmProviderRegistry> {
        Arc::clone(
            &self
                .providers
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Replaces the providers (a base URL the person changed); sessions
    /// already started go on with the ones they started with.
    pub fn set_providers(&self, providers: Arc<LlmProviderRegistry>) {
        *self
            .providers
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = providers;
    }

    fn key_for(&self, provider: &ProviderConfig) -> Result<Option<Secret>, AgentError> {
        if !provider.requires_key {
            return Ok(None);
        }
        match self.keys.get(&provider.id) {
            Ok(Some(secret)) => Ok(Some(secret)),
            Ok(None) => Err(backend_error(&missing_key(provider))),
            Err(e) => Err(AgentError::Backend {
                code: e.code().to_owned(),
                message: e.to_string(),
                retryable: true,
            }),
        }
    }
}

fn backend_error(e: &ProviderError) -> AgentError {
    AgentError::Backend {
        code: e.code.as_str().to_owned(),
        message: e.message.clone(),
        retryable: e.code.retryable(),
    }
}

/// How a session reaches its model.
#[derive(Debug)]
enum Backend {
    Anthropic {
        base_url: String,
        key: Secret,
        model: String,
        max_tokens: u32,
    },
    OpenAi {
        base_url: String,
        key: Option<Secret>,
        model: String,
        options: openai::ServerOptions,
    },
    Local,
}

impl Backend {
    fn source(&self) -> ToolSource {
        match self {
            Self::Local => ToolSource::LocalFallback,
            _ => ToolSource::Model,
        }
    }

    /// The model the requests ask for (none for the local agent).
    fn model(&self) -> Option<&str> {
        match self {
            Self::Local => None,
            Self::Anthropic { model, .. } | Self::OpenAi { model, .. } => Some(model),
        }
    }
}

#[async_trait]
impl AgentRuntime for BuiltInRuntime {
    fn kind(&self) -> AgentBackendKind {
        AgentBackendKind::BuiltIn
    }

    async fn describe_providers(&self) -> Vec<AgentProvider> {
        self.providers()
            .providers()
            .iter()
            .map(|p| AgentProvider {
                id: p.id.clone(),
                display_name: p.display_name.clone(),
                available: !p.requires_key || matches!(self.keys.get(&p.id), Ok(Some(_))),
                models: p.models.clone(),
            })
            .collect()
    }

    async fn start_session(
        &self,
        req: SessionRequest,
    ) -> Result<Box<dyn AgentSession>, AgentError> {
        let providers = self.providers();
        let (provider, model) = match &req.target {
            SessionTarget::Local => {
                let local = providers
                    .providers()
                    .iter()
                    .find(|p| p.adapter == AdapterKind::Local)
                    .ok_or_else(|| config_error("no local agent is registered"))?;
                (local, String::new())
            }
            SessionTarget::Provider { provider, model } => (
                providers
                    .get(provider)
                    .ok_or_else(|| config_error(&format!("unknown provider {provider}")))?,
                model.clone(),
            ),
            SessionTarget::Acp { .. } => {
                return Err(config_error(
                    "ACP agents run on the ACP backend, not the built-in one",
                ));
            }
        };
        let backend = match provider.adapter {
            AdapterKind::Local => Backend::Local,
            AdapterKind::Anthropic => Backend::Anthropic {
                base_url: provider
                    .endpoint()
                    .map_err(|e| backend_error(&e))?
                    .to_owned(),
                key: self
                    .key_for(provider)?
                    .ok_or_else(|| backend_error(&missing_key(provider)))?,
                model,
                max_tokens: provider.max_tokens,
            },
            AdapterKind::OpenAiCompatible => Backend::OpenAi {
                base_url: provider
                    .endpoint()
                    .map_err(|e| backend_error(&e))?
                    .to_owned(),
                key: self.key_for(provider)?,
                model,
                options: provider.options,
            },
        };
        let price = backend
            .model()
            .and_then(|m| provider.prices.get(m).copied());
        let budget = compact::Budget::new(
            &match &backend {
                Backend::Local => compact::Talks::Local,
                Backend::Anthropic {
                    model, max_tokens, ..
                } => compact::Talks::Anthropic {
                    model,
                    max_tokens: *max_tokens,
                },
                Backend::OpenAi { model, .. } => compact::Talks::OpenAi { model },
            },
            provider,
        );
        let workspace = req.workspace_root.file_name().map_or_else(
            || "workspace".to_owned(),
            |n| n.to_string_lossy().into_owned(),
        );
        let (events, rx) = Events::new(EVENT_QUEUE);
        let shared = Arc::new(Shared {
            backend,
            tools: Arc::clone(&self.tools),
            transport: self.transport.clone(),
            limits: self.limits,
            session_id: req.session_id.as_str().to_owned(),
            task_id: req.task_id.as_str().to_owned(),
            system: crate::prompt::with_instructions(
                system_prompt(&workspace),
                &req.instructions.files,
            ),
            instructions: req.instructions.clone(),
            messages: tokio::sync::Mutex::new(Vec::new()),
            answered: Mutex::new(BTreeSet::new()),
            price,
            budget: Mutex::new(budget),
            events,
            active: AtomicBool::new(false),
        });
        Ok(Box::new(BuiltInSession {
            shared,
            events: Some(rx),
            run: Mutex::new(None),
        }))
    }
}

fn config_error(message: &str) -> AgentError {
    AgentError::Backend {
        code: ProviderErrorCode::Config.as_str().to_owned(),
        message: message.to_owned(),
        retryable: false,
    }
}

#[derive(Debug)]
struct Shared {
    backend: Backend,
    tools: Arc<ToolRegistry>,
    transport: Transport,
    limits: LoopLimits,
    session_id: String,
    task_id: String,
    system: String,
    /// The provider conversation, kept verbatim for the next turn.
    messages: tokio::sync::Mutex<Vec<Message>>,
    /// Other models the server said answered, each said once.
    answered: Mutex<BTreeSet<String>>,
    /// The person's price of the model, when their table has one.
    price: Option<crate::providers::ModelPrice>,
    /// The project's instructions, and where those of the folders a call
    /// touches come from.
    instructions: cocode_core::agent::Instructions,
    /// The conversation's budget (compaction).
    budget: Mutex<compact::Budget>,
    events: Events,
    /// A run is in progress.
    active: AtomicBool,
}

/// The queue of a session's events to its reader (bounded).
#[derive(Debug)]
struct Events {
    tx: mpsc::Sender<AgentEvent>,
    /// Events of a cancelled run, delivered in order by a task of their
    /// own: a cancelled run never waits for the reader.
    after_cancel: OnceLock<mpsc::UnboundedSender<AgentEvent>>,
    /// Events handed to that task and not yet delivered; while there are
    /// any, later events follow them through it, so none overtakes another.
    forwarding: Arc<AtomicUsize>,
}

impl Events {
    fn new(capacity: usize) -> (Self, mpsc::Receiver<AgentEvent>) {
        let (tx, rx) = mpsc::channel(capacity);
        let events = Self {
            tx,
            after_cancel: OnceLock::new(),
            forwarding: Arc::new(AtomicUsize::new(0)),
        };
        (events, rx)
    }

    /// Queues `event` for the session's reader, waiting while the queue is
    /// full (the model's stream waits with it). Once `cancel` fires the run
    /// no longer waits: this and every later event go, in order, through
    /// a task that hands them over as the reader makes room. A dropped
    /// reader means nobody watches; the run still finishes.
    async fn emit(&self, event: AgentEvent, cancel: &CancellationToken) {
        if cancel.is_cancelled() || self.forwarding.load(Ordering::Acquire) > 0 {
            self.forward(event);
            return;
        }
        tokio::select! {
            biased;
            permit = self.tx.reserve() => {
                if let Ok(permit) = permit {
                    permit.send(event);
                }
            }
            () = cancel.cancelled() => self.forward(event),
        }
    }

    /// Hands `event` to the task that delivers a cancelled run's events.
    fn forward(&self, event: AgentEvent) {
        let later = self.after_cancel.get_or_init(|| {
            let (tx, mut rx) = mpsc::unbounded_channel::<AgentEvent>();
            let events = self.tx.clone();
            let forwarding = Arc::clone(&self.forwarding);
            tokio::spawn(async move {
                while let Some(event) = rx.recv().await {
                    let _ = events.send(event).await;
                    forwarding.fetch_sub(1, Ordering::AcqRel);
                }
            });
            tx
        });
        self.forwarding.fetch_add(1, Ordering::AcqRel);
        if later.send(event).is_err() {
            self.forwarding.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Shared {
    /// Queues `event` for the session's reader (see [`Events::emit`]).
    async fn emit(&self, event: AgentEvent, cancel: &CancellationToken) {
        self.events.emit(event, cancel).await;
    }
}

#[async_trait]
impl compact::Session for Shared {
    fn system(&self) -> &str {
        &self.system
    }

    fn budget(&self) -> &Mutex<compact::Budget> {
        &self.budget
    }

    async fn emit(&self, event: AgentEvent, cancel: &CancellationToken) {
        self.events.emit(event, cancel).await;
    }

    async fn ask(
        &self,
        request: Ask<'_>,
        cancel: &CancellationToken,
    ) -> Result<(AssistantMessage, Option<u64>), ProviderError> {
        ask(self, request, cancel).await
    }
}

/// A running built-in session.
pub struct BuiltInSession {
    shared: Arc<Shared>,
    events: Option<mpsc::Receiver<AgentEvent>>,
    run: Mutex<Option<(JoinHandle<()>, CancellationToken)>>,
}

impl std::fmt::Debug for BuiltInSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltInSession")
            .field("session_id", &self.shared.session_id)
            .finish_non_exhaustive()
    }
}

impl BuiltInSession {
    /// The transcript the UI shows (a projection of the conversation).
    pub async fn transcript(&self) -> Vec<TranscriptEntry> {
        let messages = self.shared.messages.lock().await;
        let tools = &self.shared.tools;
        transcript(&messages, &|name| {
            tools.resolve_provider_name(name).map(str::to_owned)
        })
    }

    fn take_run(&self) -> Option<(JoinHandle<()>, CancellationToken)> {
        self.run
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

struct Receiver(mpsc::Receiver<AgentEvent>);

impl Stream for Receiver {
    type Item = AgentEvent;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.0.poll_recv(cx)
    }
}

#[async_trait]
impl AgentSession for BuiltInSession {
    fn capabilities(&self) -> AgentCapabilities {
        AgentCapabilities {
            load_session: false,
            images: false,
            streaming: !matches!(self.shared.backend, Backend::Local),
            finish_tool: true,
        }
    }

    fn events(&mut self) -> EventStream {
        match self.events.take() {
            Some(rx) => Box::pin(Receiver(rx)),
            None => Box::pin(Receiver(mpsc::channel(1).1)),
        }
    }

    async fn send(&self, turn: UserTurn) -> Result<(), AgentError> {
        let mut slot = self.run.lock().unwrap_or_else(PoisonError::into_inner);
        // A run is over once its ending event is out; the flag drops just
        // before, so whoever reacts to that event can send the next turn.
        if self.shared.active.swap(true, Ordering::SeqCst) {
            return Err(AgentError::Backend {
                code: "AGENT_BUSY".to_owned(),
                message: "the agent is still working on the previous turn".to_owned(),
                retryable: true,
            });
        }
        let cancel = CancellationToken::new();
        let shared = Arc::clone(&self.shared);
        let token = cancel.clone();
        let handle = tokio::spawn(async move {
            let end = run(&shared, turn.text, &token).await;
            shared.active.store(false, Ordering::SeqCst);
            shared.emit(end, &token).await;
        });
        *slot = Some((handle, cancel));
        Ok(())
    }

    async fn complete(
        &self,
        id: RequestId,
        _completion: RequestCompletion,
    ) -> Result<(), AgentError> {
        // The built-in agent reaches the host through the tool registry and
        // never raises host requests, so there is nothing to complete.
        Err(AgentError::AlreadyCompleted(id))
    }

    async fn cancel(&self, _reason: CancelReason) -> Result<(), AgentError> {
        if let Some((handle, token)) = self.take_run() {
            token.cancel();
            // Waits until the request, the registry call and any approval
            // wait have stopped.
            let _ = handle.await;
        }
        Ok(())
    }

    async fn dispose(self: Box<Self>) {
        let _ = self.cancel(CancelReason::WorkspaceClosing).await;
    }

    async fn compact(&self) -> Result<(), AgentError> {
        if self.shared.active.load(Ordering::Acquire) {
            return Err(AgentError::Backend {
                code: "AGENT_BUSY".to_owned(),
                message: "the agent is working; compact when its turn has ended".to_owned(),
                retryable: true,
            });
        }
        let mut messages = self.shared.messages.lock().await;
        let cancel = CancellationToken::new();
        match compact::compact_now(&*self.shared, &mut messages, &cancel).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(AgentError::Backend {
                code: "AGENT_NOTHING_TO_COMPACT".to_owned(),
                message: "the conversation is too short to compact: the last turns stay whole"
                    .to_owned(),
                retryable: false,
            }),
            Err(e) => Err(backend_error(&e)),
        }
    }
}

/// Most events queued for the session's reader before the run waits.
const EVENT_QUEUE: usize = 256;

/// Emits stream progress as session events (none for a quiet request:
/// the summary of a compaction is not the agent speaking).
struct EventObserver<'a>(&'a Shared, &'a CancellationToken, bool);

#[async_trait]
impl StreamObserver for EventObserver<'_> {
    async fn on_delta(&mut self, delta: StreamDelta) {
        if self.2 {
            return;
        }
        let event = match delta {
            StreamDelta::Text(t) => AgentEvent::MessageDelta(t),
            StreamDelta::Thought(t) => AgentEvent::ThoughtDelta(t),
            StreamDelta::ToolCallStarted { id, name } => {
                AgentEvent::ToolCallUpdate(ToolCallUpdate {
                    call_id: id,
                    title: Some(name),
                    status: ToolCallStatus::Pending,
                    locations: Vec::new(),
                    content: Vec::new(),
                })
            }
        };
        self.0.emit(event, self.1).await;
    }

    async fn on_retry(&mut self, attempt: u32, max: u32, error: &ProviderError) {
        let event = AgentEvent::Retrying {
            attempt,
            max,
            code: error.code.as_str().to_owned(),
        };
        self.0.emit(event, self.1).await;
    }
}

/// Asks the model (or the local planner) for the next assistant turn, and
/// the input tokens the provider counted, when it says.
async fn ask(
    shared: &Shared,
    Ask {
        system,
        messages,
        tools,
        quiet,
    }: Ask<'_>,
    cancel: &CancellationToken,
) -> Result<(AssistantMessage, Option<u64>), ProviderError> {
    let mut observer = EventObserver(shared, cancel, quiet);
    let (spec, decoder, body): (_, &DecoderFactory, BodyDecoder) = match &shared.backend {
        Backend::Local => {
            let turn = local::next(messages);
            if !turn.text.is_empty() {
                observer
                    .on_delta(StreamDelta::Text(turn.text.clone()))
                    .await;
            }
            return Ok((turn, None));
        }
        Backend::Anthropic {
            base_url,
            key,
            model,
            max_tokens,
        } => (
            anthropic::request(&anthropic::RequestParts {
                base_url,
                api_key: key.expose(),
                model,
                max_tokens: *max_tokens,
                system,
                messages,
                tools,
            }),
            &|| Box::new(anthropic::Decoder::default()),
            anthropic::decode_body,
        ),
        Backend::OpenAi {
            base_url,
            key,
            model,
            options,
        } => (
            openai::request(&openai::RequestParts {
                base_url,
                api_key: key.as_ref().map(Secret::expose),
                model,
                system,
                messages,
                tools,
                options: *options,
            }),
            &|| Box::new(openai::Decoder::default()),
            openai::decode_body,
        ),
    };
    let raw = shared
        .transport
        .stream(&spec, decoder, body, cancel, &mut observer)
        .await?;
    let counted = raw.usage.map(|u| u.input);
    if let Some(usage) = raw.usage {
        shared
            .emit(
                AgentEvent::TokenUsage {
                    input: usage.input,
                    output: usage.output,
                    cached: usage.cache_read,
                    cost_micros: shared.price.map(|p| p.cost_micros(&usage)),
                },
                cancel,
            )
            .await;
    }
    if let (Some(asked), Some(answered)) = (shared.backend.model(), raw.model.as_deref())
        && !crate::providers::same_model(asked, answered)
        && shared
            .answered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(answered.to_owned())
    {
        shared
            .emit(
                AgentEvent::ModelMismatch {
                    asked: asked.to_owned(),
                    answered: answered.to_owned(),
                },
                cancel,
            )
            .await;
    }
    validate(raw).map(|turn| (turn, counted))
}

/// Paths a call touches, for the transcript row.
fn locations(arguments: &serde_json::Map<String, Value>) -> Vec<String> {
    ["path", "from", "to"]
        .iter()
        .filter_map(|k| arguments.get(*k).and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// Every workspace path a call names: `path`, `from`, `to`, and the paths
/// of its `edits` (`workspace.applyEdits`).
fn touched_paths(arguments: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut paths = locations(arguments);
    if let Some(edits) = arguments.get("edits").and_then(Value::as_array) {
        paths.extend(
            edits
                .iter()
                .filter_map(|e| e.get("path").and_then(Value::as_str).map(str::to_owned)),
        );
    }
    paths
}

/// Gives the instructions of the folders a call touched (each file once)
/// with that call's result, under `instructions`.
fn attach_instructions(
    shared: &Shared,
    touched: &[(String, Vec<String>)],
    results: &mut [ToolResultMessage],
) {
    let Some(lookup) = &shared.instructions.nested else {
        return;
    };
    for (call_id, paths) in touched {
        let found: Vec<cocode_core::agent::ProjectInstructions> =
            paths.iter().flat_map(|p| lookup.above(p)).collect();
        if found.is_empty() {
            continue;
        }
        let Some(result) = results.iter_mut().find(|r| &r.call_id == call_id) else {
            continue;
        };
        let given: Vec<Value> = found
            .iter()
            .map(|f| serde_json::json!({"source": f.source, "text": f.text}))
            .collect();
        result.content = match serde_json::from_str::<Value>(&result.content) {
            Ok(Value::Object(mut object)) => {
                object.insert("instructions".to_owned(), Value::Array(given));
                Value::Object(object).to_string()
            }
            _ => format!(
                "{}\n\ninstructions: {}",
                result.content,
                Value::Array(given)
            ),
        };
    }
}

/// The most characters of a call's arguments or result an event carries
/// for the transcript (the model still gets all of it).
const SHOWN_CHARS: usize = 16 * 1024;

/// `text`, cut to [`SHOWN_CHARS`] with a note saying so.
fn shown_text(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        None => text.to_owned(),
        Some((end, _)) => format!(
            "{}\n… ({} more characters not shown)",
            &text[..end],
            text[end..].chars().count()
        ),
    }
}

/// A result as a person reads it: the error with its code, the text, or
/// the structured result as indented JSON.
fn result_text(result: &ToolCallResult) -> String {
    match (&result.error, &result.structured_content) {
        (Some(error), _) => format!("{}: {}", error.code, error.message),
        (None, Some(structured)) => serde_json::to_string_pretty(structured).unwrap_or_default(),
        (None, None) => stringify_tool_content(&result.content),
    }
}

/// The JSON text a provider receives for a result: the structured result or
/// the text, or the error with `code`, `message`, `retryable`, `details`.
pub fn result_json(result: &ToolCallResult) -> String {
    let value = match (&result.error, &result.structured_content) {
        (Some(error), _) => json!({"isError": true, "error": error}),
        (None, Some(structured)) => json!({"isError": false, "result": structured}),
        (None, None) => json!({"isError": false, "text": stringify_tool_content(&result.content)}),
    };
    value.to_string()
}

/// The event that ends a run on `error`.
fn fail(error: &ProviderError) -> AgentEvent {
    if error.is(ProviderErrorCode::Cancelled) {
        AgentEvent::TurnEnded {
            reason: TurnEndReason::Cancelled,
        }
    } else {
        AgentEvent::Failed {
            code: error.code.as_str().to_owned(),
            message: error.message.clone(),
        }
    }
}

/// Checks the budget and the repetition guard for a whole response before
/// any of its calls runs.
fn admit(
    limits: LoopLimits,
    used: u32,
    response: &AssistantMessage,
    last: &mut Option<String>,
    streak: &mut u32,
) -> Result<(), ProviderError> {
    let asked = u32::try_from(response.tool_calls.len()).unwrap_or(u32::MAX);
    let left = limits.max_tool_calls.saturating_sub(used);
    if asked > left {
        return Err(ProviderError::new(
            ProviderErrorCode::ToolCallLimit,
            format!(
                "the response asks for {asked} tool calls but the run has {left} of {} left; none ran",
                limits.max_tool_calls
            ),
        ));
    }
    for call in &response.tool_calls {
        let key = format!(
            "{}\u{0}{}",
            call.provider_name,
            Value::Object(call.arguments.clone())
        );
        if last.as_deref() == Some(key.as_str()) {
            *streak += 1;
        } else {
            *last = Some(key);
            *streak = 1;
        }
        if *streak >= limits.max_identical_calls {
            return Err(ProviderError::new(
                ProviderErrorCode::Repetition,
                format!(
                    "the model asked for the same {} call {} times in a row",
                    call.provider_name, streak
                ),
            ));
        }
    }
    Ok(())
}

/// Runs a response's calls in order through the registry. Every call gets
/// a result (a cancelled one when the run was cancelled before it started),
/// so the conversation stays paired. Returns whether `task.finish` succeeded.
async fn run_calls(
    shared: &Shared,
    ctx: &ToolCallContext,
    calls: Vec<crate::conversation::ToolCall>,
    cancel: &CancellationToken,
) -> (Vec<ToolResultMessage>, bool) {
    let mut results = Vec::with_capacity(calls.len());
    let mut finished = false;
    for call in calls {
        let name = shared
            .tools
            .resolve_provider_name(&call.provider_name)
            .map_or_else(|| call.provider_name.clone(), str::to_owned);
        let update = |status, content| {
            AgentEvent::ToolCallUpdate(ToolCallUpdate {
                call_id: call.id.clone(),
                title: Some(name.clone()),
                status,
                locations: locations(&call.arguments),
                content,
            })
        };
        let input = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
        shared
            .emit(
                update(
                    ToolCallStatus::InProgress,
                    vec![ToolCallContent::Input(shown_text(&input))],
                ),
                cancel,
            )
            .await;
        let result = if cancel.is_cancelled() {
            ToolCallResult::failure(
                call.id.clone(),
                ToolError::new(ToolErrorCode::Cancelled, "cancelled before it ran"),
            )
        } else {
            let request = ToolCallRequest {
                id: call.id.clone(),
                name: name.clone(),
                arguments: call.arguments.clone(),
            };
            let options = ToolCallOptions {
                cancel: cancel.child_token(),
                ..ToolCallOptions::default()
            };
            shared.tools.call(request, ctx.clone(), options).await
        };
        let status = match &result.error {
            None => ToolCallStatus::Completed,
            Some(e) if e.is(ToolErrorCode::Cancelled) || cancel.is_cancelled() => {
                ToolCallStatus::Cancelled
            }
            Some(_) => ToolCallStatus::Failed,
        };
        shared
            .emit(
                update(
                    status,
                    vec![ToolCallContent::Text(shown_text(&result_text(&result)))],
                ),
                cancel,
            )
            .await;
        finished |= name == TASK_FINISH && !result.is_error;
        results.push(ToolResultMessage {
            call_id: call.id.clone(),
            content: result_json(&result),
            is_error: result.is_error,
        });
    }
    (results, finished)
}

/// One run; returns the event that ends it (emitted by the caller once the
/// session accepts the next turn).
async fn run(shared: &Shared, text: String, cancel: &CancellationToken) -> AgentEvent {
    let mut messages = shared.messages.lock().await;
    messages.push(Message::User(text));
    let format = match shared.backend {
        Backend::Anthropic { .. } => Some(ExportFormat::Anthropic),
        Backend::OpenAi { .. } => Some(ExportFormat::OpenAi),
        Backend::Local => None,
    };
    let ctx = ToolCallContext {
        source: shared.backend.source(),
        mode: ToolMode::Agent,
        session_id: shared.session_id.clone(),
        task_id: Some(shared.task_id.clone()),
        revision: None,
    };
    // Every run discovers the tools first (the local agent too), under its
    // session, so the trace shows what the run could call.
    let tools = match shared.tools.discover(&ctx) {
        Ok(tools) => format.map_or_else(Vec::new, |f| {
            cocode_tool_protocol::registry::project(f, &tools)
        }),
        Err(e) => {
            return AgentEvent::Failed {
                code: e.code.clone(),
                message: e.message,
            };
        }
    };
    let mut used = 0u32;
    let mut last_call = None;
    let mut streak = 0;
    let tools_bytes = serde_json::to_string(&tools).map_or(0, |t| t.len());
    for _ in 0..shared.limits.max_turns {
        let response =
            match compact::ask_within(shared, &mut messages, &tools, tools_bytes, cancel).await {
                Ok(response) => response,
                Err(e) => return fail(&e),
            };
        if let Err(e) = admit(shared.limits, used, &response, &mut last_call, &mut streak) {
            return fail(&e);
        }
        let calls = response.tool_calls.clone();
        let stop = response.stop.clone();
        messages.push(Message::Assistant(response));
        if calls.is_empty() {
            let reason = match stop {
                StopReason::MaxTokens => TurnEndReason::MaxTokens,
                StopReason::Refusal => TurnEndReason::Refusal,
                _ => TurnEndReason::EndTurn,
            };
            return AgentEvent::TurnEnded { reason };
        }
        used += u32::try_from(calls.len()).unwrap_or(u32::MAX);
        let touched: Vec<(String, Vec<String>)> = calls
            .iter()
            .map(|c| (c.id.clone(), touched_paths(&c.arguments)))
            .collect();
        let (mut results, finished) = run_calls(shared, &ctx, calls, cancel).await;
        attach_instructions(shared, &touched, &mut results);
        messages.push(Message::ToolResults(results));
        if cancel.is_cancelled() {
            return AgentEvent::TurnEnded {
                reason: TurnEndReason::Cancelled,
            };
        }
        if finished {
            return AgentEvent::TurnEnded {
                reason: TurnEndReason::Finished,
            };
        }
    }
    AgentEvent::TurnEnded {
        reason: TurnEndReason::MaxTurns,
    }
}

#[cfg(test)]
mod events_tests {
    use super::*;
    use futures_util::FutureExt as _;
    use pretty_assertions::assert_eq;

    fn delta(n: u32) -> AgentEvent {
        AgentEvent::MessageDelta(format!("piece {n}"))
    }

    async fn take(rx: &mut mpsc::Receiver<AgentEvent>, n: usize) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(rx.recv().await.unwrap_or_else(|| panic!("the queue ended")));
        }
        out
    }

    /// A full queue makes the run wait; room lets it go on.
    #[tokio::test]
    async fn a_full_queue_makes_the_run_wait_for_its_reader() {
        let (events, mut rx) = Events::new(2);
        let run = CancellationToken::new();
        events.emit(delta(1), &run).await;
        events.emit(delta(2), &run).await;
        let mut third = Box::pin(events.emit(delta(3), &run));
        assert_eq!((&mut third).now_or_never(), None, "the third waits");
        assert_eq!(take(&mut rx, 1).await, vec![delta(1)]);
        third.await;
        assert_eq!(take(&mut rx, 2).await, vec![delta(2), delta(3)]);
    }

    /// A cancelled run never waits, and its events still arrive, in order,
    /// before those of the next run.
    #[tokio::test]
    async fn a_cancelled_run_does_not_wait_and_loses_nothing() {
        let (events, mut rx) = Events::new(2);
        let run = CancellationToken::new();
        events.emit(delta(1), &run).await;
        events.emit(delta(2), &run).await;
        let mut waiting = Box::pin(events.emit(delta(3), &run));
        assert_eq!((&mut waiting).now_or_never(), None);
        run.cancel();
        waiting.await;
        // Cancelled: no wait although the queue is still full.
        assert_eq!(events.emit(delta(4), &run).now_or_never(), Some(()));
        // The next run's first event queues behind them.
        let next = CancellationToken::new();
        assert_eq!(events.emit(delta(5), &next).now_or_never(), Some(()));
        assert_eq!(
            take(&mut rx, 5).await,
            vec![delta(1), delta(2), delta(3), delta(4), delta(5)]
        );
        // Once the task has handed over all of them, the next run waits
        // for room again.
        while events.forwarding.load(Ordering::Acquire) > 0 {
            tokio::task::yield_now().await;
        }
        events.emit(delta(6), &next).await;
        events.emit(delta(7), &next).await;
        assert_eq!(events.emit(delta(8), &next).now_or_never(), None);
    }
}
