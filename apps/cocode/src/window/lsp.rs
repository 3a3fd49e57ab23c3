//! The window's side of the language servers: keeps the servers' copy of
//! each open editor in step with its document (opened on first sight, then
//! the document's change sets as incremental edits, saved, closed with its
//! tab), asks for hover, completion, definitions and semantic tokens off
//! the UI thread, and keeps the Problems list.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cocode_core::path::NormalizedPath;
use cocode_core::services::SemanticTokenSink as _;
use cocode_editor::{ChangeSet, OpenDocuments};
use cocode_lsp::{
    Completion, Edit, FileDiagnostics, LanguageServers, Location, LspEvent, ServerStatus, TextPos,
};

use crate::window::editors::{Editors, TabBody};
use crate::window::link::Waker;

/// What came back from a server for the window.
#[derive(Debug)]
pub enum LspReply {
    Hover {
        tab: u32,
        version: i32,
        at: usize,
        text: Option<String>,
    },
    Completions {
        tab: u32,
        version: i32,
        items: Vec<Completion>,
    },
    Definition {
        tab: u32,
        found: Result<Vec<Location>, String>,
    },
}

/// What the servers said since the last frame.
#[derive(Debug)]
struct Heard {
    diagnostics: AtomicBool,
    servers: AtomicBool,
}

impl Default for Heard {
    /// Both set: the first frame reads everything.
    fn default() -> Self {
        Self {
            diagnostics: AtomicBool::new(true),
            servers: AtomicBool::new(true),
        }
    }
}

/// How long typing rests before semantic tokens are asked again.
const TOKENS_AFTER: Duration = Duration::from_millis(300);

/// The language servers as the window uses them.
pub struct LspClient {
    pub servers: LanguageServers,
    runtime: tokio::runtime::Handle,
    waker: Waker,
    heard: Arc<Heard>,
    replies: mpsc::Receiver<LspReply>,
    send: mpsc::Sender<LspReply>,
    /// The version each open document was last sent at.
    synced: BTreeMap<NormalizedPath, i32>,
    /// Documents whose semantic tokens are due (and when).
    tokens_due: BTreeMap<NormalizedPath, Instant>,
    /// Every file's diagnostics, for the Problems panel and the editors.
    pub problems: Vec<FileDiagnostics>,
    pub statuses: Vec<ServerStatus>,
    /// The tabs handed their diagnostics last (a new tab gets its file's).
    tabs_seen: Vec<u32>,
    /// Stopping was already asked for (the drop need not wait).
    shut_down: bool,
}

impl std::fmt::Debug for LspClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspClient")
            .field("synced", &self.synced)
            .finish_non_exhaustive()
    }
}

/// A document's change sets as edits a server applies in order (each set
/// is relative to the text before it, so its changes go last to first).
pub fn edits_of(sets: &[ChangeSet]) -> Vec<Edit> {
    let mut edits = Vec::new();
    for set in sets {
        for c in set.changes().iter().rev() {
            edits.push(Edit {
                start: c.start,
                end: c.end,
                text: c.text.clone(),
            });
        }
    }
    edits
}

impl LspClient {
    pub fn new(
        servers: LanguageServers,
        listener: &crate::host::lsp::LspListener,
        runtime: tokio::runtime::Handle,
        waker: Waker,
    ) -> Self {
        let heard = Arc::new(Heard::default());
        let flags = Arc::clone(&heard);
        let wake = waker.clone();
        listener.set(move |event| {
            match event {
                LspEvent::Diagnostics(_) => flags.diagnostics.store(true, Ordering::SeqCst),
                LspEvent::Servers => flags.servers.store(true, Ordering::SeqCst),
            }
            wake.wake();
        });
        let (send, replies) = mpsc::channel();
        Self {
            servers,
            runtime,
            waker,
            heard,
            replies,
            send,
            synced: BTreeMap::new(),
            tokens_due: BTreeMap::new(),
            problems: Vec::new(),
            statuses: Vec::new(),
            tabs_seen: Vec::new(),
            shut_down: false,
        }
    }

    /// One frame's work: brings the servers' documents in step with the
    /// editors, refreshes the Problems list when a server reported (and the
    /// servers' states, which look at the PATH, only when one started or
    /// stopped), and returns the answers that arrived.
    pub fn poll(&mut self, editors: &mut Editors) -> Vec<LspReply> {
        self.sync(editors);
        let tabs: Vec<u32> = editors.tabs.iter().map(|t| t.id).collect();
        let new_tabs = tabs != self.tabs_seen;
        if self.heard.diagnostics.swap(false, Ordering::SeqCst) {
            self.problems = self.servers.diagnostics(&[]);
            editors.set_diagnostics(&self.problems);
        } else if new_tabs {
            editors.set_diagnostics(&self.problems);
        }
        let servers_changed = self.heard.servers.swap(false, Ordering::SeqCst);
        if servers_changed {
            self.statuses = self.servers.statuses();
        }
        if servers_changed || new_tabs {
            for tab in &mut editors.tabs {
                if let Some(rel) = &tab.rel {
                    tab.triggers = self.servers.trigger_characters(rel);
                }
            }
        }
        self.tabs_seen = tabs;
        self.request_tokens(&editors.docs);
        self.replies.try_iter().collect()
    }

    fn sync(&mut self, editors: &Editors) {
        let docs = &editors.docs;
        let mut open: Vec<NormalizedPath> = Vec::new();
        for tab in &editors.tabs {
            let (Some(rel), TabBody::Text) = (&tab.rel, &tab.body) else {
                continue;
            };
            if self.servers.spec_for(rel).is_none() {
                continue;
            }
            open.push(rel.clone());
            let Some((version, edits, text)) = docs.with_document(rel, |doc| {
                let version = doc.version();
                match self.synced.get(rel) {
                    None => (version, None, Some(doc.text())),
                    Some(&sent) if sent == version => (version, Some(Vec::new()), None),
                    Some(&sent) => match doc.changes_since(sent) {
                        Some(sets) => (version, Some(edits_of(&sets)), None),
                        None => (version, None, Some(doc.text())),
                    },
                }
            }) else {
                continue;
            };
            match (self.synced.get(rel).copied(), edits, text) {
                (None, _, Some(text)) => {
                    self.synced.insert(rel.clone(), version);
                    // Held now, so the next frame's edits are kept even
                    // before the server runs.
                    if self.servers.hold(rel, &text, version).is_err() {
                        continue;
                    }
                    let servers = self.servers.clone();
                    let path = rel.clone();
                    self.runtime.spawn(async move {
                        if let Err(e) = servers.attach(&path).await {
                            tracing::info!("{}: {e}", path.as_str());
                        }
                    });
                    self.tokens_due
                        .insert(rel.clone(), Instant::now() + TOKENS_AFTER);
                }
                (Some(_), Some(edits), _) if !edits.is_empty() => {
                    self.servers.change(rel, version, &edits);
                    self.synced.insert(rel.clone(), version);
                    self.tokens_due
                        .insert(rel.clone(), Instant::now() + TOKENS_AFTER);
                }
                (Some(_), None, Some(text)) => {
                    self.servers.replace_text(rel, version, &text);
                    self.synced.insert(rel.clone(), version);
                    self.tokens_due
                        .insert(rel.clone(), Instant::now() + TOKENS_AFTER);
                }
                _ => {}
            }
        }
        let closed: Vec<NormalizedPath> = self
            .synced
            .keys()
            .filter(|p| !open.contains(p))
            .cloned()
            .collect();
        for path in closed {
            self.synced.remove(&path);
            self.tokens_due.remove(&path);
            self.servers.close(&path);
        }
    }

    /// Asks for the semantic tokens of documents that rested long enough;
    /// they go to the documents (dropped if the text moved on meanwhile).
    fn request_tokens(&mut self, docs: &Arc<OpenDocuments>) {
        let now = Instant::now();
        let due: Vec<NormalizedPath> = self
            .tokens_due
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(p, _)| p.clone())
            .collect();
        if let Some(next) = self.tokens_due.values().filter(|at| **at > now).min() {
            let wake = self.waker.clone();
            let wait = *next - now;
            self.runtime.spawn(async move {
                tokio::time::sleep(wait).await;
                wake.wake();
            });
        }
        for path in due {
            self.tokens_due.remove(&path);
            let servers = self.servers.clone();
            let docs = Arc::clone(docs);
            let wake = self.waker.clone();
            self.runtime.spawn(async move {
                if let Ok(Some((version, tokens))) = servers.semantic_tokens(&path).await {
                    docs.publish(&path, version, tokens);
                    wake.wake();
                }
            });
        }
    }

    /// Tells the server a document was saved.
    pub fn saved(&self, path: &NormalizedPath) {
        self.servers.save(path);
    }

    fn ask<F>(&self, work: F)
    where
        F: Future<Output = Option<LspReply>> + Send + 'static,
    {
        let send = self.send.clone();
        let wake = self.waker.clone();
        self.runtime.spawn(async move {
            if let Some(reply) = work.await
                && send.send(reply).is_ok()
            {
                wake.wake();
            }
        });
    }

    pub fn hover(&self, tab: u32, path: NormalizedPath, version: i32, at: usize, pos: TextPos) {
        let servers = self.servers.clone();
        self.ask(async move {
            let text = servers
                .hover(&path, pos)
                .await
                .ok()
                .flatten()
                .map(|h| h.text);
            Some(LspReply::Hover {
                tab,
                version,
                at,
                text,
            })
        });
    }

    pub fn complete(
        &self,
        tab: u32,
        path: NormalizedPath,
        version: i32,
        pos: TextPos,
        trigger: Option<char>,
    ) {
        let servers = self.servers.clone();
        self.ask(async move {
            let items = servers.completion(&path, pos, trigger).await.ok()?;
            Some(LspReply::Completions {
                tab,
                version,
                items,
            })
        });
    }

    pub fn definition(&self, tab: u32, path: NormalizedPath, pos: TextPos) {
        let servers = self.servers.clone();
        self.ask(async move {
            let found = servers
                .definition(&path, pos)
                .await
                .map_err(|e| e.to_string());
            Some(LspReply::Definition { tab, found })
        });
    }

    /// Stops the servers (the window closes or another folder opens).
    /// Stops the servers without waiting (another folder opens).
    pub fn shutdown(mut self) {
        self.shut_down = true;
        let servers = self.servers.clone();
        self.runtime.spawn(async move { servers.shutdown().await });
    }
}

/// How long closing the window waits for the servers to stop.
const STOP_WAIT: Duration = Duration::from_secs(5);

impl Drop for LspClient {
    /// The window closes: the servers are asked to shut down and exit, and
    /// the close waits for them (a few seconds at most; the stubborn are
    /// killed). Servers such as rust-analyzer do not end when their input
    /// closes, so leaving it to the process's end would leave them running.
    fn drop(&mut self) {
        if self.shut_down {
            return;
        }
        let (done, stopped) = mpsc::channel();
        let servers = self.servers.clone();
        self.runtime.spawn(async move {
            servers.shutdown().await;
            let _ = done.send(());
        });
        let _ = stopped.recv_timeout(STOP_WAIT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cocode_editor::Change;
    use pretty_assertions::assert_eq;

    #[test]
    fn change_sets_become_edits_applied_in_order() {
        // Two cursors typing "x" at 1 and 4 of "abcdef", then a deletion.
        let sets = vec![
            ChangeSet::new(vec![Change::insert(1, "x"), Change::insert(4, "x")]).unwrap(),
            ChangeSet::new(vec![Change::delete(0, 1)]).unwrap(),
        ];
        let edits = edits_of(&sets);
        let mut text: Vec<char> = "abcdef".chars().collect();
        for e in &edits {
            text.splice(e.start..e.end, e.text.chars());
        }
        assert_eq!(text.into_iter().collect::<String>(), "xbcdxef");
        assert_eq!(
            edits[0],
            Edit {
                start: 4,
                end: 4,
                text: "x".into()
            }
        );
    }
}
