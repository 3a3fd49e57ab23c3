//! The workspace's language servers as the host sets them up: the built-in
//! list with the person's `language-servers.json` and the workspace's
//! `language_servers` entries applied, started through the launcher's tool
//! profile (a server the workspace names: confined, see [`launcher`]); and
//! the diagnostics query the command line
//! (`cocode lsp diagnostics`) and agents (`lsp.diagnostics`) share.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context as _;
use cocode_core::path::{NormalizeOptions, NormalizedPath, normalize};
use cocode_core::process::ProcessLauncher;
use cocode_core::services::TextDocumentSource;
use cocode_core::workspace::{LanguageServerEntry, WorkspaceConfig};
use cocode_lsp::{
    FileDiagnostics, LanguageServers, LspEvent, LspSetup, Scope, ServerRegistry, Timeouts,
};

/// The person's own language-server entries:
/// `<config dir>/cocode/language-servers.json`.
pub fn user_config_file() -> Option<PathBuf> {
    directories::BaseDirs::new()
        .map(|d| d.config_dir().join("cocode").join("language-servers.json"))
}

/// The entries of a `language-servers.json` (none when the file does not
/// exist; an unreadable file is an error, never silently ignored).
pub fn read_entries(file: &Path) -> anyhow::Result<Vec<LanguageServerEntry>> {
    match std::fs::read_to_string(file) {
        Ok(text) => serde_json::from_str(&text)
            .with_context(|| format!("{} is not a list of language servers", file.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

/// The person's entries; a file that cannot be read is logged and left
/// out (`cocode lsp servers` shows the error).
pub fn user_entries() -> Vec<LanguageServerEntry> {
    match user_config_file().map(|f| read_entries(&f)) {
        Some(Ok(entries)) => entries,
        Some(Err(e)) => {
            tracing::warn!("the person's language servers: {e:#}");
            Vec::new()
        }
        None => Vec::new(),
    }
}

/// The servers of a workspace: built in, then the person's entries, then
/// the workspace's.
pub fn registry(
    root: &Path,
    config: &WorkspaceConfig,
    user: &[LanguageServerEntry],
) -> ServerRegistry {
    registry_of(root, &config.language_servers, user)
}

/// The servers of the folder `root` from its own entries: the commands the
/// workspace names wait for the person's trust (`host::trust`).
fn registry_of(
    root: &Path,
    workspace: &[LanguageServerEntry],
    user: &[LanguageServerEntry],
) -> ServerRegistry {
    let store = crate::host::trust::TrustStore::person();
    ServerRegistry::with_defaults()
        .with_entries(user)
        .with_workspace_entries(workspace, |command| store.trusts(root, command))
        .with_typescript(root, std::env::var_os("PATH").as_deref())
}

/// Forwards server events to whoever listens (the window, once it opened
/// the host); nothing listens headless.
#[derive(Default)]
pub struct LspListener {
    listener: Mutex<Option<Listener>>,
}

type Listener = Box<dyn Fn(LspEvent) + Send + Sync>;

impl std::fmt::Debug for LspListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LspListener")
    }
}

impl LspListener {
    pub fn set(&self, listener: impl Fn(LspEvent) + Send + Sync + 'static) {
        *self.listener.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(listener));
    }

    fn hear(&self, event: LspEvent) {
        if let Some(l) = &*self.listener.lock().unwrap_or_else(PoisonError::into_inner) {
            l(event);
        }
    }
}

/// The language servers of an open workspace (its entries over the
/// person's), for a host without a window. Must run inside the runtime.
pub fn for_workspace(
    ws: &cocode_workspace::OpenWorkspace,
    launcher: Arc<dyn ProcessLauncher>,
) -> LanguageServers {
    language_servers(
        &ws.workspace.root,
        ws.workspace.options(),
        registry(&ws.workspace.root, &ws.config, &user_entries()),
        launcher,
        Arc::default(),
        tokio::runtime::Handle::current(),
        Scope::Workspace,
    )
}

/// The launcher a folder's language servers start through: the tool
/// profile for the built-in and the person's servers, and for a server the
/// folder's own configuration names the agent profile — writes in the
/// folder only (its metadata read-only), the network through a policy
/// proxy of the ecosystems' registries and the person's allowed hosts (no
/// host the folder's lockfiles name). It reads the folder's
/// `workspace.json` and looks whether its manifests exist; binding the
/// proxy's loopback port does not wait. Without a proxy
/// (the port could not be bound) such a server does not start, and says
/// why.
pub fn launcher(root: &Path, runtime: &tokio::runtime::Handle) -> Arc<dyn ProcessLauncher> {
    let _entered = runtime.enter();
    let user = match std::fs::read_to_string(cocode_workspace::Layout::new(root).config_file()) {
        Ok(text) => serde_json::from_str::<WorkspaceConfig>(&text)
            .map(|c| c.allowed_hosts)
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    // The folder's lockfiles name hosts on the folder's word: a server the
    // folder names gets the ecosystems' registries and the person's hosts.
    let hosts = cocode_toolchain::allowed::without_lockfiles(root, &user);
    let proxy = match cocode_toolchain::PolicyProxy::start_now(
        cocode_toolchain::allowed::policy_for(&hosts, &[]),
    ) {
        Ok(proxy) => Some(Arc::new(proxy)),
        Err(e) => {
            tracing::warn!("the language servers' policy proxy did not start: {e}");
            None
        }
    };
    Arc::new(crate::host::root::language_server_launcher(
        runtime.clone(),
        root,
        proxy,
    ))
}

/// The workspace's own entries, read without opening the workspace (the
/// window shows a folder's servers before cocode keeps any history there);
/// an unreadable `workspace.json` is logged and left out.
pub fn workspace_entries(root: &Path) -> Vec<LanguageServerEntry> {
    let file = cocode_workspace::Layout::new(root).config_file();
    match std::fs::read_to_string(&file) {
        Ok(text) => match serde_json::from_str::<WorkspaceConfig>(&text) {
            Ok(config) => config.language_servers,
            Err(e) => {
                tracing::warn!("{}: {e}", file.display());
                Vec::new()
            }
        },
        Err(_) => Vec::new(),
    }
}

/// The language servers of a folder open in the window.
pub fn for_folder(
    root: &Path,
    options: NormalizeOptions,
    launcher: Arc<dyn ProcessLauncher>,
    runtime: tokio::runtime::Handle,
) -> (LanguageServers, Arc<LspListener>) {
    let listener = Arc::new(LspListener::default());
    let servers = language_servers(
        root,
        options,
        registry_of(root, &workspace_entries(root), &user_entries()),
        launcher,
        Arc::clone(&listener),
        runtime,
        Scope::Workspace,
    );
    (servers, listener)
}

/// The language servers of a workspace rooted at `root`, asked about the
/// whole workspace or (`scope`) only the documents they open.
pub fn language_servers(
    root: &Path,
    options: NormalizeOptions,
    registry: ServerRegistry,
    launcher: Arc<dyn ProcessLauncher>,
    listener: Arc<LspListener>,
    runtime: tokio::runtime::Handle,
    scope: Scope,
) -> LanguageServers {
    LanguageServers::new(
        LspSetup {
            launcher,
            root: root.to_path_buf(),
            options,
            registry,
            path_var: std::env::var_os("PATH"),
            timeouts: Timeouts::default(),
            scope,
            runtime,
        },
        move |e| listener.hear(e),
    )
}

/// The most files one whole-workspace query opens.
pub const MAX_QUERY_FILES: usize = cocode_tool_protocol::catalog::LSP_QUERY_FILES;

/// What a diagnostics query found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosticsReport {
    pub files: Vec<FileDiagnostics>,
    /// Files checked.
    pub checked: usize,
    /// Files of the workspace left out past [`MAX_QUERY_FILES`].
    pub omitted: usize,
    /// Files whose server did not report in time, or could not run, with
    /// the reason.
    pub unanswered: Vec<Unanswered>,
}

/// A file a query got no report for, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unanswered {
    pub path: String,
    pub reason: String,
}

/// The files a query covers: `paths`, or every workspace file a server
/// would take (up to [`MAX_QUERY_FILES`]).
pub fn query_files(
    servers: &LanguageServers,
    root: &Path,
    options: NormalizeOptions,
    paths: &[NormalizedPath],
) -> (Vec<NormalizedPath>, usize) {
    if !paths.is_empty() {
        return (paths.to_vec(), 0);
    }
    let (files, _) = crate::host::files::list_files(root);
    let mut served: Vec<NormalizedPath> = files
        .iter()
        .filter_map(|f| normalize(f, options).ok())
        .filter(|p| servers.spec_for(p).is_some())
        .collect();
    let omitted = served.len().saturating_sub(MAX_QUERY_FILES);
    served.truncate(MAX_QUERY_FILES);
    (served, omitted)
}

/// The texts a query sends: the editor's unsaved text, else the file read
/// through the workspace's safe read path (a link out of the workspace, a
/// folder or a FIFO is refused with its code, never followed).
pub fn query_texts(
    reader: &cocode_workspace::WorkspaceReader,
    documents: &dyn TextDocumentSource,
    files: &[NormalizedPath],
) -> Vec<(NormalizedPath, Result<String, String>)> {
    files
        .iter()
        .map(|path| {
            let text = match documents.unsaved_text(path) {
                Some(text) => Ok(text),
                None => match reader.read("lsp.diagnostics", path) {
                    Ok(Some(bytes)) => {
                        String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())
                    }
                    Ok(None) => Err("no such file".to_owned()),
                    Err(e) => Err(format!("not readable ({}): {}", e.code.as_str(), e.message)),
                },
            };
            (path.clone(), text)
        })
        .collect()
}

/// Opens the files with their servers, waits up to `timeout` for their
/// reports, and reads the diagnostics; files the query opened are let go
/// again.
pub async fn query_diagnostics(
    servers: &LanguageServers,
    texts: Vec<(NormalizedPath, Result<String, String>)>,
    timeout: Duration,
) -> (Vec<FileDiagnostics>, Vec<Unanswered>) {
    let mut opened = Vec::new();
    let mut unanswered = Vec::new();
    for (path, text) in texts {
        let text = match text {
            Ok(text) => text,
            Err(reason) => {
                unanswered.push(Unanswered {
                    path: path.as_str().to_owned(),
                    reason,
                });
                continue;
            }
        };
        match servers.open(&path, &text, 0).await {
            Ok(()) => opened.push(path.clone()),
            Err(e) => unanswered.push(Unanswered {
                path: path.as_str().to_owned(),
                reason: e.to_string(),
            }),
        }
    }
    let unsettled = servers.wait_for_reports(&opened, timeout).await;
    let reported = servers.reported(&unsettled);
    for p in &unsettled {
        unanswered.push(Unanswered {
            path: p.as_str().to_owned(),
            reason: if reported.contains(p) {
                format!(
                    "its server was still working after {} s; what it reported so far may not be all",
                    timeout.as_secs()
                )
            } else {
                format!("its server did not report within {} s", timeout.as_secs())
            },
        });
    }
    let found = servers.diagnostics(&opened);
    for p in &opened {
        servers.close(p);
    }
    (found, unanswered)
}

/// A report as agents and `--format json` read it: 1-based lines and
/// character columns, severities as words.
pub fn report_json(report: &DiagnosticsReport) -> serde_json::Value {
    use serde_json::json;
    json!({
        "files": report.files.iter().map(|f| json!({
            "path": f.path.as_str(),
            "diagnostics": f.diagnostics.iter().map(|d| {
                let mut item = json!({
                    "severity": d.severity.word(),
                    "line": d.range.start.line + 1,
                    "column": d.range.start.column + 1,
                    "endLine": d.range.end.line + 1,
                    "endColumn": d.range.end.column + 1,
                    "message": d.message,
                });
                if let Some(source) = &d.source {
                    item["source"] = json!(source);
                }
                if let Some(code) = &d.code {
                    item["code"] = json!(code);
                }
                item
            }).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "checked": report.checked,
        "omitted": report.omitted,
        "unanswered": report.unanswered,
    })
}

/// A message on one line: its lines joined with "; ".
pub fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// One line per diagnostic: `path:line:column: severity: message [source
/// code]` (`[rustc E0308]`),
/// line and column 1-based, the column counted in characters.
pub fn diagnostic_lines(files: &[FileDiagnostics]) -> Vec<String> {
    files
        .iter()
        .flat_map(|f| {
            f.diagnostics.iter().map(move |d| {
                let (line, column) = cocode_lsp::features::one_based(d.range.start);
                let source = match (d.source.as_deref(), d.code.as_deref()) {
                    (Some(s), Some(c)) => format!(" [{s} {c}]"),
                    (Some(s), None) => format!(" [{s}]"),
                    (None, Some(c)) => format!(" [{c}]"),
                    (None, None) => String::new(),
                };
                format!(
                    "{}:{line}:{column}: {}: {}{source}",
                    f.path.as_str(),
                    d.severity.word(),
                    one_line(&d.message)
                )
            })
        })
        .collect()
}
