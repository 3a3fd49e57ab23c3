//! The window's language-server work: starting the folder's servers,
//! applying their answers to the editor tabs, and the editors' requests.

use std::path::Path;
use std::sync::Arc;

use cocode_core::path::{CaseSensitivity, NormalizeOptions};

use super::CocodeApp;
use crate::window::command::{Command, EditorCommand, LspAsk};
use crate::window::editors::Notice;
use crate::window::lsp::{LspClient, LspReply};

impl CocodeApp {
    /// Stops announcing the crash reports (the folder shown first when
    /// `open`, with the system's file manager).
    pub(super) fn end_crash_notice(&mut self, open: bool) {
        let Some(notice) = self.crash_notice.take() else {
            return;
        };
        if open {
            let argv = match self.os {
                cocode_platform::Os::MacOs => vec!["open".to_owned()],
                cocode_platform::Os::Windows => vec!["explorer".to_owned()],
                cocode_platform::Os::Linux => vec!["xdg-open".to_owned()],
            };
            let launcher = self.root.person_launcher();
            let mut argv = argv;
            argv.push(notice.dir.display().to_string());
            let spec = cocode_core::process::LaunchSpec {
                argv,
                cwd: notice.dir.clone(),
                env_overrides: std::collections::BTreeMap::new(),
                profile: cocode_core::process::SandboxProfile::Tool,
                io: cocode_core::process::LaunchIo::Piped,
                timeout: Some(std::time::Duration::from_secs(30)),
                output_byte_limit: Some(4096),
                extra_writable: Vec::new(),
                secret_env: std::collections::BTreeMap::new(),
                extra_hosts: Vec::new(),
            };
            let _entered = self.runtime.enter();
            match cocode_core::process::ProcessLauncher::launch(&*launcher, spec) {
                Ok(mut child) => {
                    self.runtime.spawn(async move {
                        let _ = child.wait().await;
                    });
                }
                Err(e) => tracing::warn!("showing {}: {e}", notice.dir.display()),
            }
        }
        self.runtime.spawn_blocking(move || {
            if let Err(e) = crate::host::crash::mark_seen(&notice.dir, &notice.reports) {
                tracing::warn!("noting the crash reports as seen: {e}");
            }
        });
    }

    /// The folder's language servers (none start until a file of their
    /// language opens).
    pub(super) fn start_lsp(&mut self, root: &Path) {
        if let Some(old) = self.lsp.take() {
            old.shutdown();
        }
        let launcher = crate::host::lsp::launcher(root, &self.runtime);
        let (servers, listener) = crate::host::lsp::for_folder(
            root,
            NormalizeOptions::native(CaseSensitivity::Sensitive),
            launcher,
            self.runtime.clone(),
        );
        self.lsp = Some(LspClient::new(
            servers,
            &listener,
            self.runtime.clone(),
            self.waker.clone(),
        ));
    }

    /// Syncs the documents and applies what the servers answered.
    pub(super) fn apply_lsp(&mut self) {
        let Some(lsp) = &mut self.lsp else { return };
        let replies = lsp.poll(&mut self.editors);
        for reply in replies {
            self.on_lsp_reply(reply);
        }
    }

    fn on_lsp_reply(&mut self, reply: LspReply) {
        let docs = Arc::clone(&self.editors.docs);
        match reply {
            LspReply::Hover {
                tab,
                version,
                at,
                text,
            } => {
                let Some(t) = self.editors.get_mut(tab) else {
                    return;
                };
                let current = t
                    .rel
                    .as_ref()
                    .and_then(|rel| docs.with_document(rel, |d| d.version()));
                if current == Some(version)
                    && t.hover_wait.is_some_and(|(c, _)| c == at)
                    && let Some(text) = text
                {
                    t.hover = Some((at, text));
                }
            }
            LspReply::Completions {
                tab,
                version: _,
                items,
            } => {
                let Some(t) = self.editors.get_mut(tab) else {
                    return;
                };
                if let Some(popup) = &mut t.completion {
                    popup.items = items;
                    popup.answered = true;
                    popup.selected = 0;
                }
            }
            LspReply::Definition { tab, found } => {
                let root = self.workspace_root().cloned();
                let notice = |text: String| Notice { text, error: false };
                match found {
                    Ok(locations) => match locations.first() {
                        Some(loc) => match (&loc.path, root) {
                            (Some(rel), Some(root)) => {
                                let same_line = loc.range.end.line == loc.range.start.line;
                                self.commands.push(Command::Editor(EditorCommand::OpenAt {
                                    path: root.join(rel.as_str()),
                                    line: loc.range.start.line as usize,
                                    start: loc.range.start.column as usize,
                                    end: if same_line {
                                        loc.range.end.column as usize
                                    } else {
                                        loc.range.start.column as usize
                                    },
                                }));
                            }
                            _ => {
                                if let Some(t) = self.editors.get_mut(tab) {
                                    t.notice = Some(notice(format!(
                                        "The definition is outside this folder: {}:{}",
                                        loc.file.display(),
                                        loc.range.start.line + 1
                                    )));
                                }
                            }
                        },
                        None => {
                            if let Some(t) = self.editors.get_mut(tab) {
                                t.notice = Some(notice("No definition found here.".into()));
                            }
                        }
                    },
                    Err(e) => {
                        if let Some(t) = self.editors.get_mut(tab) {
                            t.notice = Some(Notice {
                                text: format!("Go to definition: {e}"),
                                error: true,
                            });
                        }
                    }
                }
            }
        }
    }

    /// An editor's request.
    pub(super) fn run_lsp(&mut self, ask: &LspAsk) {
        let Some(lsp) = &self.lsp else { return };
        let docs = Arc::clone(&self.editors.docs);
        let (id, at) = match &ask {
            LspAsk::Restart(server) => {
                let servers = lsp.servers.clone();
                let server = server.clone();
                self.runtime.spawn(async move {
                    if let Err(e) = servers.restart(&server).await {
                        tracing::warn!("restarting {server}: {e}");
                    }
                });
                return;
            }
            LspAsk::Trust { server, command } => {
                let servers = lsp.servers.clone();
                let (server, command) = (server.clone(), command.clone());
                let Some(root) = self.workspace_root().cloned() else {
                    return;
                };
                self.runtime.spawn(async move {
                    let recorded = tokio::task::spawn_blocking(move || {
                        crate::host::trust::trust_command(&root, &command)
                    })
                    .await;
                    match recorded {
                        Ok(Ok(())) => {
                            if let Err(e) = servers.trust(&server).await {
                                tracing::warn!("starting {server}: {e}");
                            }
                        }
                        Ok(Err(e)) => tracing::warn!("trusting {server}: {e:#}"),
                        Err(e) => tracing::warn!("trusting {server}: {e}"),
                    }
                });
                return;
            }
            LspAsk::Hover { id, at } | LspAsk::Definition { id, at } => (*id, Some(*at)),
            LspAsk::Complete { id, .. } => (*id, None),
        };
        let Some(rel) = self.editors.get(id).and_then(|t| t.rel.clone()) else {
            return;
        };
        let Some((version, pos)) = docs.with_document(&rel, |d| {
            let at = at.unwrap_or_else(|| d.selection().primary().head);
            (d.version(), cocode_lsp::encoding::text_pos(d.rope(), at))
        }) else {
            return;
        };
        match ask {
            LspAsk::Hover { at, .. } => lsp.hover(id, rel, version, *at, pos),
            LspAsk::Complete { trigger, .. } => lsp.complete(id, rel, version, pos, *trigger),
            LspAsk::Definition { .. } => lsp.definition(id, rel, pos),
            LspAsk::Restart(_) | LspAsk::Trust { .. } => {}
        }
    }
}
