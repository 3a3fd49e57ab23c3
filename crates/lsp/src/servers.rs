//! The language servers of one workspace: started on demand through the
//! launcher, fed the open documents, restarted with backoff after a crash
//! (their documents opened again), and asked for hover, completion,
//! definitions, semantic tokens and diagnostics.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use cocode_core::path::{NormalizeOptions, NormalizedPath, normalize};
use cocode_core::process::{LaunchIo, LaunchSpec, ProcessLauncher, SandboxProfile};
use ropey::Rope;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::connection::{Connection, Notification};
use crate::encoding::{PositionEncoding, TextPos, char_index, range_to_lsp, text_pos, to_lsp};
use crate::error::LspError;
use crate::features::{
    Completion, Diagnostic, Edit, FileDiagnostics, HoverText, Location, completion_of,
    decode_tokens, hover_text,
};
use crate::registry::{ServerRegistry, ServerSpec, language_id};
use cocode_platform::programs::find_program;

mod inner;

/// How long each step may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub initialize: Duration,
    pub request: Duration,
    pub shutdown: Duration,
    /// The first wait before restarting a crashed server; each further
    /// crash doubles it (up to a minute).
    pub restart_base: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            initialize: Duration::from_mins(1),
            request: Duration::from_secs(10),
            shutdown: Duration::from_secs(3),
            restart_base: Duration::from_millis(500),
        }
    }
}

/// Crashes in a row after which a server is left stopped.
pub const MAX_RESTARTS: u32 = 5;

/// What a server is doing, as the window and `cocode lsp servers` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    /// Its program is not on the PATH.
    NotInstalled {
        install: String,
    },
    /// Installed, not started (no file of its language is open).
    Idle {
        program: PathBuf,
    },
    Starting,
    Running,
    /// It crashed and starts again shortly.
    Restarting {
        reason: String,
    },
    /// It crashed too often, or could not start.
    Failed {
        reason: String,
    },
    /// The workspace's own configuration names its command, and the
    /// person has not trusted it yet: it is not started.
    Untrusted {
        command: Vec<String>,
    },
}

impl ServerState {
    /// The words people read.
    pub fn describe(&self) -> String {
        match self {
            Self::NotInstalled { install } => format!("not installed — {install}"),
            Self::Idle { program } => format!("installed ({})", program.display()),
            Self::Starting => "starting".into(),
            Self::Running => "running".into(),
            Self::Restarting { reason } => format!("restarting ({reason})"),
            Self::Failed { reason } => format!("stopped: {reason}"),
            Self::Untrusted { command } => format!(
                "not started: this workspace's .cocode/config/workspace.json names its command ({}); trust it first",
                cocode_core::shown::command(command)
            ),
        }
    }
}

/// A server and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerStatus {
    pub id: String,
    pub extensions: Vec<String>,
    pub command: Vec<String>,
    /// Open documents waiting on it (a missing server with documents is
    /// one the person needs).
    pub documents: usize,
    /// What a person should know about how it runs (which TypeScript).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What it says it is doing while it runs (indexing, checking), with
    /// its progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<String>,
    #[serde(flatten)]
    pub state: ServerState,
}

/// How a server runs: a built-in or the person's own with the tool
/// profile; one the workspace's configuration names confined as an
/// agent's command is (writes in the workspace, network through the policy
/// proxy), under its own launch name (`lsp-<id>`).
fn profile_of(spec: &ServerSpec) -> Result<SandboxProfile, LspError> {
    if !spec.from_workspace {
        return Ok(SandboxProfile::Tool);
    }
    let name: String = spec
        .id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let task_id =
        cocode_core::ids::TaskId::new(format!("lsp-{name}")).map_err(|e| LspError::Launch {
            server: spec.id.clone(),
            message: e.to_string(),
        })?;
    Ok(SandboxProfile::Agent { task_id })
}

/// What listeners hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LspEvent {
    /// The diagnostics of a file changed.
    Diagnostics(NormalizedPath),
    /// A server started, stopped, crashed or restarted, or its work
    /// (indexing, checking) began, moved on or ended.
    Servers,
}

/// What a server offers, read leniently from its capabilities.
#[expect(
    clippy::struct_excessive_bools,
    reason = "one flag per capability the server offers"
)]
struct Caps {
    encoding: PositionEncoding,
    /// 0 none, 1 full text, 2 incremental.
    sync: u8,
    save_text: bool,
    hover: bool,
    completion: bool,
    triggers: Vec<String>,
    definition: bool,
    legend: Option<lsp_types::SemanticTokensLegend>,
    pull: bool,
}

/// A started server.
struct Running {
    conn: Arc<Connection>,
    caps: Caps,
    /// The ids of its own registrations of pull diagnostics
    /// (`client/registerCapability`, as pyright does once it has read its
    /// settings; it registers anew before it drops the old one).
    pull_registrations: Mutex<BTreeSet<String>>,
    /// Its spec's [`ServerSpec::pull_is_final`].
    pull_is_final: bool,
    /// Documents this server has been sent.
    opened: Mutex<BTreeSet<NormalizedPath>>,
    started: Instant,
    /// The work it said it is doing.
    work: Mutex<Work>,
}

/// What a server said of its own work: its reports count as its answer
/// only once it has none left and has been quiet for [`SETTLE`].
#[derive(Debug)]
struct Work {
    /// `$/progress` work it began and has not ended (rust-analyzer's
    /// indexing and `cargo check`, pyright's analysis), by token: its
    /// title, its last message and percentage.
    progress: BTreeMap<String, (String, Option<String>, Option<u32>)>,
    /// rust-analyzer's `experimental/serverStatus`: false while it loads
    /// the workspace.
    quiescent: bool,
    /// Pull requests (`textDocument/diagnostic`) not answered yet.
    pulls: usize,
    /// When it last began or ended work or published a report.
    last: tokio::time::Instant,
}

impl Default for Work {
    fn default() -> Self {
        Self {
            progress: BTreeMap::new(),
            quiescent: true,
            pulls: 0,
            last: tokio::time::Instant::now(),
        }
    }
}

impl Work {
    fn busy(&self) -> bool {
        !self.progress.is_empty() || !self.quiescent || self.pulls > 0
    }

    /// What it says it is doing, in its own words (`None`: nothing).
    fn describe(&self) -> Option<String> {
        if let Some((title, message, percent)) = self.progress.values().next() {
            let mut text = title.clone();
            if let Some(m) = message.as_deref().filter(|m| !m.is_empty()) {
                text.push_str(": ");
                text.push_str(m);
            }
            if let Some(p) = percent {
                let _ = write!(text, " ({p}%)");
            }
            if self.progress.len() > 1 {
                let _ = write!(text, " and {} more", self.progress.len() - 1);
            }
            return Some(text);
        }
        (!self.quiescent).then(|| "loading the workspace".to_owned())
    }
}

/// How long a server must stay quiet — no work in progress, no report —
/// before its reports are taken as its answer. rust-analyzer publishes its
/// own findings as soon as a file opens, then starts `cargo check` once the
/// workspace is loaded; pyright, when it publishes, publishes an empty
/// report before its analysis. A second covers the step from one to the
/// next. Not waited after a pull answer of a server whose pull is final
/// ([`ServerSpec::pull_is_final`]).
pub const SETTLE: Duration = Duration::from_secs(1);

/// How many times a pull the server cancelled is asked again.
const PULL_RETRIES: u32 = 3;
/// The protocol's codes for a request the server dropped because the
/// document changed, or that it asks to be sent again.
const CONTENT_MODIFIED: i64 = -32801;
const SERVER_CANCELLED: i64 = -32802;

enum SlotState {
    Idle,
    /// Its connection, once the process runs (shutdown ends it too).
    Starting(Option<Arc<Connection>>),
    Running(Arc<Running>),
    Restarting {
        reason: String,
    },
    Failed {
        reason: String,
    },
}

struct Slot {
    start: tokio::sync::Mutex<()>,
    state: Mutex<SlotState>,
    crashes: Mutex<u32>,
}

struct Doc {
    /// How many openers hold it (the editor, a diagnostics query); it is
    /// closed with the last.
    holders: u32,
    server: String,
    language: &'static str,
    uri: String,
    version: i32,
    rope: Rope,
}

#[derive(Default)]
struct Reports {
    pushed: Vec<Diagnostic>,
    pulled: Vec<Diagnostic>,
    /// Whether a server has reported on the file since it was opened.
    reported: bool,
    /// The document version the last pull answered for, while that is
    /// still the version the server has.
    pulled_version: Option<i32>,
}

/// What a set of servers is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// The workspace as a whole (the window, an agent's host): a server
    /// indexes all of it for references, imports and completion.
    #[default]
    Workspace,
    /// Only the documents it opens (a one-shot check from the command
    /// line): a server that can be told so looks at nothing else — pyright
    /// gets them as `python.analysis.include`, as its own command line
    /// does with the files it is given, instead of listing the workspace.
    OpenDocuments,
}

struct Inner {
    launcher: Arc<dyn ProcessLauncher>,
    root: PathBuf,
    root_uri: String,
    options: NormalizeOptions,
    path_var: Option<OsString>,
    registry: ServerRegistry,
    timeouts: Timeouts,
    scope: Scope,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    docs: Mutex<BTreeMap<NormalizedPath, Doc>>,
    reports: Mutex<BTreeMap<NormalizedPath, Reports>>,
    reported: Notify,
    /// Servers held for trust that the person trusted while this runs.
    trusted: Mutex<BTreeSet<String>>,
    listener: Box<dyn Fn(LspEvent) + Send + Sync>,
    closing: std::sync::atomic::AtomicBool,
    runtime: tokio::runtime::Handle,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The `file:` URI of a path.
pub fn uri_of(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map_or_else(|()| format!("file://{}", path.display()), |u| u.to_string())
}

/// The path of a `file:` URI.
pub fn path_of_uri(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
}

/// The language servers of one workspace.
#[derive(Clone)]
pub struct LanguageServers {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for LanguageServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanguageServers")
            .field("root", &self.inner.root)
            .finish_non_exhaustive()
    }
}

/// Everything a [`LanguageServers`] is made from.
#[derive(Clone)]
pub struct LspSetup {
    pub launcher: Arc<dyn ProcessLauncher>,
    /// The workspace root (canonical).
    pub root: PathBuf,
    pub options: NormalizeOptions,
    pub registry: ServerRegistry,
    /// The `PATH` programs are looked up on (this process's).
    pub path_var: Option<OsString>,
    pub timeouts: Timeouts,
    pub scope: Scope,
    /// Where the servers' work runs (the calls that start it may come from
    /// any thread, the window's included).
    pub runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for LspSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspSetup")
            .field("root", &self.root)
            .field("registry", &self.registry)
            .field("timeouts", &self.timeouts)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl LanguageServers {
    /// Servers that tell `listener` what changed (from the runtime's
    /// threads; it must not block).
    pub fn new(setup: LspSetup, listener: impl Fn(LspEvent) + Send + Sync + 'static) -> Self {
        let root_uri = uri_of(&setup.root);
        Self {
            inner: Arc::new(Inner {
                launcher: setup.launcher,
                root: setup.root,
                root_uri,
                options: setup.options,
                path_var: setup.path_var,
                registry: setup.registry,
                timeouts: setup.timeouts,
                scope: setup.scope,
                slots: Mutex::default(),
                docs: Mutex::default(),
                reports: Mutex::default(),
                reported: Notify::new(),
                trusted: Mutex::default(),
                listener: Box::new(listener),
                closing: std::sync::atomic::AtomicBool::new(false),
                runtime: setup.runtime,
            }),
        }
    }

    pub fn registry(&self) -> &ServerRegistry {
        &self.inner.registry
    }

    /// The server of a workspace file, if cocode knows one.
    pub fn spec_for(&self, path: &NormalizedPath) -> Option<&ServerSpec> {
        self.inner.registry.for_path(Path::new(path.as_str()))
    }

    /// Each known server and what it is doing.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let held: Vec<String> = lock(&self.inner.docs)
            .values()
            .map(|d| d.server.clone())
            .collect();
        self.inner
            .registry
            .specs()
            .iter()
            .map(|spec| ServerStatus {
                id: spec.id.clone(),
                extensions: spec.extensions.clone(),
                command: spec.command.clone(),
                documents: held.iter().filter(|s| **s == spec.id).count(),
                note: spec.note.clone(),
                work: self.inner.work_of(&spec.id),
                state: self.inner.state_of(spec),
            })
            .collect()
    }

    /// Opens a document with its server (starting it if needed). A file
    /// without a server is refused with [`LspError::NoServer`]; the
    /// document is kept either way once a server is known, so a restart or
    /// a later install opens it.
    pub async fn open(
        &self,
        path: &NormalizedPath,
        text: &str,
        version: i32,
    ) -> Result<(), LspError> {
        self.hold(path, text, version)?;
        self.attach(path).await
    }

    /// The synchronous half of [`Self::open`]: the document is held (and
    /// edits made from now on are kept) before any server runs. A second
    /// holder with other text (the editor's unsaved text) makes the newest
    /// text win, as an edit.
    pub fn hold(&self, path: &NormalizedPath, text: &str, version: i32) -> Result<(), LspError> {
        let spec = self.spec_for(path).ok_or_else(|| LspError::NoServer {
            path: path.as_str().to_owned(),
        })?;
        let language = language_id(Path::new(path.as_str())).unwrap_or("plaintext");
        let newer = {
            let mut docs = lock(&self.inner.docs);
            if let Some(doc) = docs.get_mut(path) {
                doc.holders += 1;
                (doc.rope != text).then(|| doc.version.max(version - 1) + 1)
            } else {
                docs.insert(
                    path.clone(),
                    Doc {
                        holders: 1,
                        server: spec.id.clone(),
                        language,
                        uri: uri_of(&self.inner.root.join(path.as_str())),
                        version,
                        rope: Rope::from_str(text),
                    },
                );
                lock(&self.inner.reports)
                    .entry(path.clone())
                    .or_default()
                    .reported = false;
                None
            }
        };
        if let Some(next) = newer {
            self.replace_text(path, next, text);
        }
        Ok(())
    }

    /// The asynchronous half of [`Self::open`]: starts the held document's
    /// server if needed and sends it the document as it is now.
    pub async fn attach(&self, path: &NormalizedPath) -> Result<(), LspError> {
        let spec = self
            .spec_for(path)
            .ok_or_else(|| LspError::NoServer {
                path: path.as_str().to_owned(),
            })?
            .clone();
        let server = self.inner.ensure(&spec).await?;
        self.inner.open_on(&server, path);
        self.inner.pull(&server, path);
        Ok(())
    }

    /// Applies edits, in order, each to the text the previous one left.
    pub fn change(&self, path: &NormalizedPath, version: i32, edits: &[Edit]) {
        let server = self.inner.running_for(path);
        let mut docs = lock(&self.inner.docs);
        let Some(doc) = docs.get_mut(path) else {
            return;
        };
        doc.version = version;
        let sent = server.as_ref().filter(|s| lock(&s.opened).contains(path));
        let mut changes = Vec::new();
        for e in edits {
            let start = e.start.min(doc.rope.len_chars());
            let end = e.end.clamp(start, doc.rope.len_chars());
            if let Some(s) = sent.filter(|s| s.caps.sync == 2) {
                let range = crate::encoding::TextRange {
                    start: text_pos(&doc.rope, start),
                    end: text_pos(&doc.rope, end),
                };
                changes.push(json!({
                    "range": range_to_lsp(&doc.rope, range, s.caps.encoding),
                    "text": e.text,
                }));
            }
            doc.rope.remove(start..end);
            doc.rope.insert(start, &e.text);
        }
        let Some(s) = sent.filter(|s| s.caps.sync > 0) else {
            return;
        };
        if s.caps.sync == 1 {
            changes = vec![json!({ "text": doc.rope.to_string() })];
        }
        s.conn.notify(
            "textDocument/didChange",
            &json!({
                "textDocument": { "uri": doc.uri, "version": version },
                "contentChanges": changes,
            }),
        );
        drop(docs);
        self.inner.pull(s, path);
    }

    /// Replaces the whole text (a reload from disk, or a version too old to
    /// replay as edits).
    pub fn replace_text(&self, path: &NormalizedPath, version: i32, text: &str) {
        let len = lock(&self.inner.docs).get(path).map(|d| d.rope.len_chars());
        if let Some(len) = len {
            self.change(
                path,
                version,
                &[Edit {
                    start: 0,
                    end: len,
                    text: text.to_owned(),
                }],
            );
        }
    }

    /// Tells the server the document was saved.
    pub fn save(&self, path: &NormalizedPath) {
        let Some(server) = self.inner.running_for(path) else {
            return;
        };
        let docs = lock(&self.inner.docs);
        let Some(doc) = docs.get(path) else { return };
        let mut params = json!({ "textDocument": { "uri": doc.uri } });
        if server.caps.save_text {
            params["text"] = Value::String(doc.rope.to_string());
        }
        server.conn.notify("textDocument/didSave", &params);
    }

    /// Lets go of a document; with its last holder it is closed and its
    /// diagnostics are forgotten.
    pub fn close(&self, path: &NormalizedPath) {
        let server = self.inner.running_for(path);
        let doc = {
            let mut docs = lock(&self.inner.docs);
            let Some(doc) = docs.get_mut(path) else {
                return;
            };
            doc.holders = doc.holders.saturating_sub(1);
            if doc.holders > 0 {
                return;
            }
            docs.remove(path)
        };
        let Some(doc) = doc else { return };
        if let Some(server) = server
            && lock(&server.opened).remove(path)
        {
            server.conn.notify(
                "textDocument/didClose",
                &json!({ "textDocument": { "uri": doc.uri } }),
            );
        }
        if lock(&self.inner.reports).remove(path).is_some() {
            (self.inner.listener)(LspEvent::Diagnostics(path.clone()));
        }
    }

    /// The diagnostics of `paths` (all reported files when empty), in path
    /// order, errors first within a file.
    pub fn diagnostics(&self, paths: &[NormalizedPath]) -> Vec<FileDiagnostics> {
        let reports = lock(&self.inner.reports);
        reports
            .iter()
            .filter(|(p, _)| paths.is_empty() || paths.contains(p))
            .filter_map(|(path, r)| {
                let mut diagnostics: Vec<Diagnostic> =
                    r.pushed.iter().chain(&r.pulled).cloned().collect();
                if diagnostics.is_empty() {
                    return None;
                }
                diagnostics.sort_by(|a, b| {
                    (a.range.start, a.severity, &a.message).cmp(&(
                        b.range.start,
                        b.severity,
                        &b.message,
                    ))
                });
                diagnostics.dedup();
                Some(FileDiagnostics {
                    path: path.clone(),
                    diagnostics,
                })
            })
            .collect()
    }

    /// Which of `paths` a server has reported on since they were opened.
    pub fn reported(&self, paths: &[NormalizedPath]) -> Vec<NormalizedPath> {
        let reports = lock(&self.inner.reports);
        paths
            .iter()
            .filter(|p| reports.get(*p).is_some_and(|r| r.reported))
            .cloned()
            .collect()
    }

    /// Whether a document is open.
    pub fn is_open(&self, path: &NormalizedPath) -> bool {
        lock(&self.inner.docs).contains_key(path)
    }

    /// Waits until each of `paths` has its server's answer: the server
    /// reported on it, has no work in progress (`$/progress`, rust-analyzer's
    /// workspace loading, a pull in flight) and has been quiet for
    /// [`SETTLE`] (or answered a pull for the document's version, when its
    /// pull is final); at most `timeout`. The paths without a settled answer
    /// by then, in the order given.
    pub async fn wait_for_reports(
        &self,
        paths: &[NormalizedPath],
        timeout: Duration,
    ) -> Vec<NormalizedPath> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.inner.reported.notified();
            tokio::pin!(notified);
            // Registered before the state is read, so no report is missed.
            notified.as_mut().enable();
            let now = tokio::time::Instant::now();
            let mut pending = Vec::new();
            let mut wake = deadline;
            let reported = self.reported(paths);
            for path in paths {
                if !reported.contains(path) {
                    pending.push(path.clone());
                    continue;
                }
                let Some(server) = self.inner.running_for(path) else {
                    // Its server ended: what it said is all there is.
                    continue;
                };
                let work = lock(&server.work);
                if work.busy() {
                    pending.push(path.clone());
                } else if server.pull_is_final && self.inner.pulled_current(path) {
                    // Its answer for this version is all it will say.
                } else if now < work.last + SETTLE {
                    pending.push(path.clone());
                    wake = wake.min(work.last + SETTLE);
                }
            }
            if pending.is_empty() {
                return pending;
            }
            if now >= deadline {
                return pending;
            }
            let _ = tokio::time::timeout_at(wake, notified).await;
        }
    }

    /// The hover text at a character position.
    pub async fn hover(
        &self,
        path: &NormalizedPath,
        pos: TextPos,
    ) -> Result<Option<HoverText>, LspError> {
        let Some((server, uri, lsp_pos)) = self.inner.position(path, pos, |s| s.caps.hover) else {
            return Ok(None);
        };
        let result = server
            .conn
            .request_retried(
                "textDocument/hover",
                json!({ "textDocument": { "uri": uri }, "position": lsp_pos }),
                self.inner.timeouts.request,
            )
            .await?;
        if result.is_null() {
            return Ok(None);
        }
        let hover: lsp_types::Hover = decode("textDocument/hover", result)?;
        let docs = lock(&self.inner.docs);
        let Some(doc) = docs.get(path) else {
            return Ok(None);
        };
        let text = hover_text(&hover, &doc.rope, server.caps.encoding);
        Ok((!text.text.is_empty()).then_some(text))
    }

    /// The characters that open the completion list by themselves.
    pub fn trigger_characters(&self, path: &NormalizedPath) -> Vec<String> {
        self.inner
            .running_for(path)
            .map(|s| s.caps.triggers.clone())
            .unwrap_or_default()
    }

    /// The completion list at a character position, sorted as the server
    /// asked.
    pub async fn completion(
        &self,
        path: &NormalizedPath,
        pos: TextPos,
        trigger: Option<char>,
    ) -> Result<Vec<Completion>, LspError> {
        let Some((server, uri, lsp_pos)) = self.inner.position(path, pos, |s| s.caps.completion)
        else {
            return Ok(Vec::new());
        };
        let context = match trigger {
            Some(c) => json!({ "triggerKind": 2, "triggerCharacter": c.to_string() }),
            None => json!({ "triggerKind": 1 }),
        };
        let result = server
            .conn
            .request_retried(
                "textDocument/completion",
                json!({ "textDocument": { "uri": uri }, "position": lsp_pos, "context": context }),
                self.inner.timeouts.request,
            )
            .await?;
        if result.is_null() {
            return Ok(Vec::new());
        }
        let list: lsp_types::CompletionResponse = decode("textDocument/completion", result)?;
        let items = match list {
            lsp_types::CompletionResponse::Array(items) => items,
            lsp_types::CompletionResponse::List(list) => list.items,
        };
        let docs = lock(&self.inner.docs);
        let Some(doc) = docs.get(path) else {
            return Ok(Vec::new());
        };
        let cursor = char_index(&doc.rope, pos);
        let mut out: Vec<Completion> = items
            .iter()
            .map(|item| completion_of(item, &doc.rope, cursor, server.caps.encoding))
            .collect();
        out.sort_by(|a, b| a.sort_key().cmp(b.sort_key()));
        Ok(out)
    }

    /// Where the symbol at a character position is defined.
    pub async fn definition(
        &self,
        path: &NormalizedPath,
        pos: TextPos,
    ) -> Result<Vec<Location>, LspError> {
        let Some((server, uri, lsp_pos)) = self.inner.position(path, pos, |s| s.caps.definition)
        else {
            return Ok(Vec::new());
        };
        let result = server
            .conn
            .request_retried(
                "textDocument/definition",
                json!({ "textDocument": { "uri": uri }, "position": lsp_pos }),
                self.inner.timeouts.request,
            )
            .await?;
        if result.is_null() {
            return Ok(Vec::new());
        }
        let response: lsp_types::GotoDefinitionResponse =
            decode("textDocument/definition", result)?;
        let targets: Vec<(String, lsp_types::Range)> = match response {
            lsp_types::GotoDefinitionResponse::Scalar(l) => vec![(l.uri.to_string(), l.range)],
            lsp_types::GotoDefinitionResponse::Array(list) => list
                .into_iter()
                .map(|l| (l.uri.to_string(), l.range))
                .collect(),
            lsp_types::GotoDefinitionResponse::Link(links) => links
                .into_iter()
                .map(|l| (l.target_uri.to_string(), l.target_selection_range))
                .collect(),
        };
        Ok(targets
            .into_iter()
            .filter_map(|(uri, range)| {
                let file = path_of_uri(&uri)?;
                let rel = self.inner.relative(&file);
                let rope = self.inner.rope_of(rel.as_ref(), &file)?;
                Some(Location {
                    range: crate::encoding::range_from_lsp(&rope, range, server.caps.encoding),
                    file,
                    path: rel,
                })
            })
            .collect())
    }

    /// The semantic tokens of a document and the version they were
    /// computed for; `None` when its server offers none.
    pub async fn semantic_tokens(
        &self,
        path: &NormalizedPath,
    ) -> Result<Option<(i32, Vec<cocode_core::services::SemanticToken>)>, LspError> {
        let Some(server) = self.inner.running_for(path) else {
            return Ok(None);
        };
        let Some(legend) = server.caps.legend.clone() else {
            return Ok(None);
        };
        let Some((uri, version)) = lock(&self.inner.docs)
            .get(path)
            .map(|d| (d.uri.clone(), d.version))
        else {
            return Ok(None);
        };
        let result = server
            .conn
            .request_retried(
                "textDocument/semanticTokens/full",
                json!({ "textDocument": { "uri": uri } }),
                self.inner.timeouts.request,
            )
            .await?;
        if result.is_null() {
            return Ok(None);
        }
        let tokens: lsp_types::SemanticTokens = decode("textDocument/semanticTokens/full", result)?;
        let docs = lock(&self.inner.docs);
        let Some(doc) = docs.get(path).filter(|d| d.version == version) else {
            return Ok(None);
        };
        Ok(Some((
            version,
            decode_tokens(&tokens.data, &legend, &doc.rope, server.caps.encoding),
        )))
    }

    /// Starts a stopped server again (after it failed, or once its program
    /// was installed), with a fresh crash count; its documents are opened
    /// again.
    pub async fn restart(&self, id: &str) -> Result<(), LspError> {
        let Some(spec) = self.inner.registry.get(id).cloned() else {
            return Err(LspError::Stopped {
                server: id.to_owned(),
                reason: "no such server".into(),
            });
        };
        let slot = self.inner.slot(id);
        let old = {
            let _starting = slot.start.lock().await;
            *lock(&slot.crashes) = 0;
            std::mem::replace(&mut *lock(&slot.state), SlotState::Idle)
        };
        if let SlotState::Running(server) = old {
            server.conn.kill();
        }
        self.inner.ensure(&spec).await.map(|_| ())
    }

    /// The person trusts a server the workspace's configuration named: it
    /// may start now (its open documents are sent to it).
    pub async fn trust(&self, id: &str) -> Result<(), LspError> {
        lock(&self.inner.trusted).insert(id.to_owned());
        (self.inner.listener)(LspEvent::Servers);
        self.restart(id).await
    }

    /// Asks every running server to shut down and exit (killing those that
    /// do not within the shutdown timeout); no restarts follow.
    pub async fn shutdown(&self) {
        self.inner
            .closing
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let mut running: Vec<Arc<Connection>> = Vec::new();
        let mut starting: Vec<Arc<Connection>> = Vec::new();
        let t = self.inner.timeouts.shutdown;
        let slots: Vec<Arc<Slot>> = lock(&self.inner.slots).values().cloned().collect();
        for slot in slots {
            // A server being launched has no connection yet: wait (at most
            // the shutdown timeout) for it to get one, or to fail.
            let deadline = Instant::now() + t;
            loop {
                let launching = match &*lock(&slot.state) {
                    SlotState::Running(r) => {
                        running.push(Arc::clone(&r.conn));
                        false
                    }
                    SlotState::Starting(Some(conn)) => {
                        starting.push(Arc::clone(conn));
                        false
                    }
                    SlotState::Starting(None) => Instant::now() < deadline,
                    _ => false,
                };
                if !launching {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        // A server still starting has nothing to save: it is ended.
        for conn in &starting {
            conn.kill();
        }
        for conn in &running {
            let _ = conn.request("shutdown", Value::Null, t).await;
            conn.notify("exit", &Value::Null);
            if tokio::time::timeout(t, conn.closed()).await.is_err() {
                conn.kill();
            }
        }
        for conn in &starting {
            let _ = tokio::time::timeout(t, conn.closed()).await;
        }
    }
}

fn decode<T: serde::de::DeserializeOwned>(method: &str, value: Value) -> Result<T, LspError> {
    serde_json::from_value(value).map_err(|e| LspError::BadResponse {
        method: method.to_owned(),
        message: e.to_string(),
    })
}

/// The parts of a server's capabilities cocode uses, read leniently.
fn read_capabilities(result: &Value) -> Caps {
    let caps = &result["capabilities"];
    let encoding = PositionEncoding::from_name(caps["positionEncoding"].as_str());
    let (sync, save_text) = match &caps["textDocumentSync"] {
        Value::Number(n) => (u8::try_from(n.as_u64().unwrap_or(0)).unwrap_or(0), false),
        Value::Object(o) => (
            o.get("change")
                .and_then(Value::as_u64)
                .and_then(|n| u8::try_from(n).ok())
                .unwrap_or(0),
            o.get("save")
                .and_then(|s| s.get("includeText"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
        _ => (0, false),
    };
    let offered = |v: &Value| !v.is_null() && v != &Value::Bool(false);
    Caps {
        encoding,
        sync: sync.min(2),
        save_text,
        hover: offered(&caps["hoverProvider"]),
        completion: offered(&caps["completionProvider"]),
        triggers: caps["completionProvider"]["triggerCharacters"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        definition: offered(&caps["definitionProvider"]),
        legend: serde_json::from_value(caps["semanticTokensProvider"]["legend"].clone()).ok(),
        pull: offered(&caps["diagnosticProvider"]),
    }
}

/// What cocode tells a server it can do. `pull`: pull diagnostics are
/// offered, registered by the server later too, with refresh — only to a
/// server whose pull answer is final (pyright): rust-analyzer, offered
/// them, stops publishing its own findings and answers pulls "server
/// cancelled" while it loads, so it keeps publishing.
fn client_capabilities(pull: bool) -> Value {
    let mut caps = client_capabilities_pushed();
    if pull {
        caps["textDocument"]["diagnostic"] =
            json!({ "dynamicRegistration": true, "relatedDocumentSupport": false });
        caps["workspace"]["diagnostics"] = json!({ "refreshSupport": true });
    }
    caps
}

fn client_capabilities_pushed() -> Value {
    json!({
        "general": { "positionEncodings": ["utf-8", "utf-16"] },
        "textDocument": {
            "synchronization": { "didSave": true, "dynamicRegistration": false },
            "publishDiagnostics": { "relatedInformation": false, "versionSupport": false },
            "hover": { "contentFormat": ["markdown", "plaintext"] },
            "completion": {
                "contextSupport": true,
                "completionItem": {
                    "snippetSupport": false,
                    "documentationFormat": ["markdown", "plaintext"]
                }
            },
            "definition": { "linkSupport": true },
            "semanticTokens": {
                "requests": { "full": true },
                "tokenTypes": [
                    "namespace", "type", "class", "enum", "interface", "struct",
                    "typeParameter", "parameter", "variable", "property", "enumMember",
                    "event", "function", "method", "macro", "keyword", "modifier",
                    "comment", "string", "number", "regexp", "operator", "decorator"
                ],
                "tokenModifiers": [
                    "declaration", "definition", "readonly", "static", "deprecated",
                    "abstract", "async", "modification", "documentation", "defaultLibrary"
                ],
                "formats": ["relative"],
                "overlappingTokenSupport": false,
                "multilineTokenSupport": false
            }
        },
        "window": { "workDoneProgress": true },
        // rust-analyzer says when it has loaded the workspace.
        "experimental": { "serverStatusNotification": true },
        "workspace": { "workspaceFolders": true, "configuration": true }
    })
}
