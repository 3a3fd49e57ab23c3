//! Opening folders: the IO thread's answers, paths the system asks to
//! open, switching folders once the person has said what becomes of
//! what would be lost, and the Open Folder dialog.

use std::path::{Path, PathBuf};

use crate::window::agent::AgentPanel;
use crate::window::command::{Command, FolderCommand, PanelId};
use crate::window::disk_watch::DiskWatch;
use crate::window::explorer::{Explorer, WorkspaceView};
use crate::window::io_worker::{IoRequest, IoResponse, ListFilter, OpenTarget};
use crate::window::open_folder::{OpenFolderDialog, SwitchChoice, Switching};
use crate::window::system_dialog::Picked;
use crate::window::workspace_service::ServiceRequest;

// Tests build it with its parent under `cfg(test)`, where the lint is quiet.
#[cfg_attr(
    not(test),
    expect(
        clippy::wildcard_imports,
        reason = "a part of its parent's impl, cut out of one file: it names what the parent names"
    )
)]
use super::*;

impl CocodeApp {
    pub(super) fn apply_io(&mut self) {
        for response in self.io.drain() {
            match response {
                IoResponse::Listed {
                    dir,
                    filter: ListFilter::Workspace,
                    result,
                } => {
                    if let Some(ws) = &mut self.workspace {
                        ws.explorer.on_listed(&dir, result);
                    }
                }
                IoResponse::Listed {
                    dir,
                    filter: ListFilter::FoldersOnly,
                    result,
                } => {
                    if let Some(dialog) = &mut self.dialog
                        && dialog.browsing == dir
                    {
                        dialog.subfolders =
                            Some(result.map(|l| {
                                l.entries.into_iter().map(|e| (e.name, e.path)).collect()
                            }));
                    }
                }
                IoResponse::Opened { path, result } => {
                    self.editors.on_opened(&path, result);
                    // A file of the task under review shows its hunks.
                    if self.review.review.is_some() {
                        self.editors.set_review_marks(self.review.review.as_ref());
                    }
                }
                IoResponse::Reread { path, result } => match result {
                    Ok(bytes) => self.editors.on_disk_changed(&path, bytes),
                    Err(message) => {
                        tracing::warn!(path = %path.display(), "cannot read the changed file: {message}");
                    }
                },
                IoResponse::FolderResolved { requested, result } => match result {
                    Ok(root) => {
                        self.dialog = None;
                        self.switch_to(root);
                    }
                    Err(message) => {
                        if let Some(dialog) = &mut self.dialog {
                            dialog.error = Some(message);
                        } else {
                            tracing::warn!(path = %requested.display(), "cannot open folder: {message}");
                        }
                    }
                },
                IoResponse::OpenResolved { requested, result } => {
                    self.on_open_resolved(&requested, result);
                }
                IoResponse::Settings { root, result } => {
                    if self.workspace_root() == Some(&root) {
                        match result {
                            Ok(view) => self.settings.on_view(*view),
                            Err(e) => {
                                self.settings.busy = false;
                                self.settings.error = Some(e);
                            }
                        }
                    }
                }
                IoResponse::ExportSaved { result } => self.trace.saved = Some(result),
                IoResponse::StateSaved { result } => {
                    if let Err(e) = result {
                        tracing::warn!("the window's state was not saved: {e}");
                    }
                }
                IoResponse::History { root, present } => {
                    // Only for the folder still open, and only once: a task
                    // started meanwhile has started the service already.
                    if present && self.workspace_root() == Some(&root) && self.tasks.is_none() {
                        self.start_tasks(root);
                    }
                }
            }
        }
    }

    /// Paths the system asked to open and those dropped on the window,
    /// in the order they came.
    pub(super) fn take_open_requests(&mut self, ctx: &egui::Context) {
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        for path in self.open_requests.take().into_iter().chain(dropped) {
            self.commands
                .push(Command::Folder(FolderCommand::OpenPath(path)));
        }
    }

    /// A folder asked to open replaces the open one; a file of the open
    /// folder opens in an editor. Anything else is said in the Open Folder
    /// dialog, at the nearest folder, so the person can go on from there.
    pub(super) fn on_open_resolved(
        &mut self,
        requested: &Path,
        result: Result<OpenTarget, String>,
    ) {
        let message = match result {
            Ok(OpenTarget::Folder(root)) => {
                self.dialog = None;
                self.switch_to(root);
                return;
            }
            Ok(OpenTarget::File(path)) => match self.workspace_root() {
                Some(root) if path.starts_with(root) => {
                    self.open_file(&path);
                    return;
                }
                Some(root) => format!(
                    "{} is not in the open folder ({}); open its folder to edit it",
                    path.display(),
                    root.display()
                ),
                None => format!(
                    "{} is a file; open the folder it is in to edit it",
                    path.display()
                ),
            },
            Err(message) => message,
        };
        let start = requested
            .ancestors()
            .skip(1)
            .find(|dir| !dir.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .or_else(|| self.workspace_root().cloned())
            .or_else(home_dir)
            .unwrap_or_else(|| PathBuf::from("/"));
        self.browse(start);
        if let Some(dialog) = &mut self.dialog {
            dialog.error = Some(message);
        }
    }

    /// Opens the waiting folder once what the person chose is done: the
    /// files saved (if they asked) and every task stopped, each saved as
    /// stopped by its own run.
    pub(super) fn advance_switch(&mut self) {
        let Some(switching) = &self.switching else {
            return;
        };
        let ready = match switching.chosen {
            None => false,
            Some(SwitchChoice::SaveFirst) => {
                self.editors.docs.dirty_paths().is_empty() && self.agent.running() == 0
            }
            Some(SwitchChoice::Discard) => self.agent.running() == 0,
        };
        if ready && let Some(switching) = self.switching.take() {
            self.open_workspace(switching.to);
        }
    }

    /// Asks every running task to stop, as the person's Stop does.
    pub(super) fn request_stop_all(&self) {
        for conv in self.agent.conversations.iter().filter(|c| c.running) {
            self.send_task(ServiceRequest::Stop(conv.id));
        }
    }

    /// Opens `root` in place of the open folder, once the person has said
    /// what becomes of anything that would be lost; the folder already
    /// open is left as it is.
    pub(super) fn switch_to(&mut self, root: PathBuf) {
        if self.workspace_root() == Some(&root) {
            self.switching = None;
            return;
        }
        if self.losses().any() {
            // A later request takes the place of one still waiting, with
            // what was chosen for it.
            let chosen = self.switching.take().and_then(|s| s.chosen);
            self.switching = Some(Switching { to: root, chosen });
        } else {
            self.open_workspace(root);
        }
    }

    pub(crate) fn open_workspace(&mut self, root: PathBuf) {
        self.switching = None;
        self.remember_workspace();
        // A new folder gets its own workspace service, started on the first task:
        // dropping this one stops the old folder's runs. Until it has let
        // go of its folder, a new service of that folder waits for it (it
        // holds the folder's writer lock).
        if let Some(old) = self.tasks.take() {
            self.closing.retain(|_, closed| !*closed.borrow());
            self.closing.insert(old.root().to_path_buf(), old.closed());
        }
        self.agent = AgentPanel::default();
        self.review = crate::window::review::ReviewPanel::default();
        self.trace = crate::window::trace::TracePanel::default();
        // The old folder's terminals end with it.
        for id in self.terminals.clear() {
            if let Some(path) = self.dock.find_tab(&PanelId::Terminal(id)) {
                self.dock.remove_tab(path);
            }
        }
        let (explorer, request) = Explorer::new(root.clone());
        self.io.send(request);
        for id in self.editors.clear() {
            if let Some(path) = self.dock.find_tab(&PanelId::Editor(id)) {
                self.dock.remove_tab(path);
            }
        }
        self.watch = match DiskWatch::start(&root, self.waker.clone()) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(root = %root.display(), "changes on disk will not show until reopened: {e}");
                None
            }
        };
        self.start_lsp(&root);
        self.start_git(root.clone());
        // A folder that already has cocode history shows its tasks as soon
        // as the IO thread has looked; any other folder is left untouched
        // until its first task.
        self.io.send(IoRequest::History { root: root.clone() });
        self.restore_workspace(&root);
        self.saved.opened(&root);
        self.workspace = Some(WorkspaceView {
            root,
            explorer,
            prompt: None,
        });
        self.save_state();
    }

    /// The Open Folder dialog's commands.
    pub(super) fn run_open_folder(&mut self, command: FolderCommand) {
        match command {
            // One dialog at a time: the brick dialog stays until it closes.
            FolderCommand::ShowOpenFolder if self.new_brick.is_some() => {}
            FolderCommand::ShowOpenFolder | FolderCommand::ShowTypedOpenFolder
                if self.system.open => {}
            FolderCommand::ShowOpenFolder if self.system.unavailable.is_none() => {
                let start = self.picker_start();
                let dialog = self
                    .system
                    .dialogs()
                    .pick_folder("Open Folder".to_owned(), Some(start));
                self.system
                    .ask(&self.runtime, &self.waker, dialog, |picked| {
                        Command::Folder(FolderCommand::SystemPicked(picked))
                    });
            }
            FolderCommand::ShowOpenFolder | FolderCommand::ShowTypedOpenFolder => {
                let start = self.picker_start();
                self.browse(start);
            }
            FolderCommand::SystemPicked(picked) => match picked {
                Picked::Chosen(path) => self.io.send(IoRequest::ResolveFolder { path }),
                Picked::Cancelled => {}
                Picked::Unavailable(why) => {
                    // Said once, in the typed-path dialog that takes over.
                    self.system.unavailable = Some(why.clone());
                    let start = self.picker_start();
                    self.browse(start);
                    if let Some(dialog) = &mut self.dialog {
                        dialog.note = Some(format!(
                            "{why}. Type the folder's path, or browse to it below."
                        ));
                    }
                }
            },
            FolderCommand::PickerBrowse(dir) => self.browse(dir),
            FolderCommand::OpenFolder(path) => self.io.send(IoRequest::ResolveFolder { path }),
            FolderCommand::OpenPath(path) => self.io.send(IoRequest::ResolveOpen { path }),
            FolderCommand::SwitchNow => {
                if let Some(switching) = &mut self.switching {
                    switching.chosen = Some(SwitchChoice::Discard);
                    self.request_stop_all();
                    self.advance_switch();
                }
            }
            FolderCommand::SwitchSaving => {
                if let Some(switching) = &mut self.switching {
                    switching.chosen = Some(SwitchChoice::SaveFirst);
                    for id in self.editors.dirty_ids() {
                        self.save(id);
                    }
                    self.request_stop_all();
                    self.advance_switch();
                }
            }
            FolderCommand::CancelSwitch => self.switching = None,
            FolderCommand::PickerTyped(text) => {
                if let Some(dialog) = &mut self.dialog {
                    dialog.typed = text;
                    dialog.error = None;
                }
            }
            FolderCommand::CloseOpenFolder => self.dialog = None,
        }
    }

    pub(super) fn browse(&mut self, dir: PathBuf) {
        self.io.send(IoRequest::List {
            dir: dir.clone(),
            filter: ListFilter::FoldersOnly,
        });
        let note = self.dialog.take().and_then(|d| d.note);
        self.dialog = Some(OpenFolderDialog {
            typed: dir.display().to_string(),
            browsing: dir,
            subfolders: None,
            error: None,
            note,
        });
    }

    /// Where choosing a folder starts: the open folder, else home.
    fn picker_start(&self) -> PathBuf {
        self.workspace
            .as_ref()
            .map(|w| w.root.clone())
            .or_else(home_dir)
            .unwrap_or_else(|| PathBuf::from("/"))
    }
}
