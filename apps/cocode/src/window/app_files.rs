//! The window's file work: editor commands, saves, the person's new file,
//! rename and delete, replace plans, and changes on disk.

use std::path::Path;

use crate::window::command::{CloseEditor, Command, EditorCommand, ExplorerCommand, PanelId};
use crate::window::io_worker::IoRequest;
use crate::window::views;
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
    /// The editor commands.
    pub(super) fn run_editor(&mut self, command: EditorCommand, ctx: &egui::Context) {
        match command {
            EditorCommand::Save(id) => self.save(id),
            EditorCommand::SaveAll => {
                let ids = self.editors.dirty_ids();
                for id in ids {
                    self.save(id);
                }
            }
            EditorCommand::CloseEditor { id, action } => match action {
                CloseEditor::Ask if self.editors.is_dirty(id) => {
                    self.editors.close_prompt = Some(id);
                }
                CloseEditor::Save if self.editors.is_dirty(id) => {
                    self.editors.close_prompt = None;
                    if let Some(tab) = self.editors.get_mut(id) {
                        tab.close_after_save = true;
                    }
                    self.save(id);
                }
                _ => self.close_editor_tab(id),
            },
            EditorCommand::CancelCloseEditor => {
                self.editors.close_prompt = None;
                self.quitting = false;
            }
            EditorCommand::ReopenClosedEditor => {
                if let Some(path) = self.editors.reopen_closed() {
                    self.open_file(&path);
                }
            }
            EditorCommand::QuickOpen => {
                self.palette.close();
                if self.quick_open.open {
                    self.quick_open.close();
                } else if let Some(ws) = &self.workspace {
                    self.quick_open.show(&ws.root);
                }
            }
            EditorCommand::ShowSearch => {
                self.show_panel(PanelId::Search);
                self.search.focus = true;
            }
            EditorCommand::ReplaceInFiles => {
                if let Some(ws) = &self.workspace {
                    let root = ws.root.clone();
                    self.search.plan_replace(&root);
                }
            }
            EditorCommand::OpenAt {
                path,
                line,
                start,
                end,
            } => {
                self.open_file(&path);
                if let Some(id) = self.editors.by_path(&path) {
                    self.editors.select_range(id, line, start, end);
                }
            }
            EditorCommand::KeepMine(id) => self.editors.keep_mine(id),
            EditorCommand::ToggleCompare(id) => self.editors.toggle_compare(id),
            EditorCommand::LoadTheirs(id) => self.editors.take_theirs(id),
            EditorCommand::RevertGitChange { id, mark, version } => {
                self.revert_git_change(id, mark, version);
            }
            EditorCommand::DismissEditorNotice(id) => {
                if let Some(tab) = self.editors.get_mut(id) {
                    tab.notice = None;
                }
            }
            EditorCommand::QuitDiscarding => {
                self.quit_now = true;
                ctx.request_repaint();
            }
            EditorCommand::QuitSaving => {
                let ids = self.editors.dirty_ids();
                for id in ids {
                    if let Some(tab) = self.editors.get_mut(id) {
                        tab.close_after_save = true;
                    }
                    self.save(id);
                }
            }
        }
        ctx.request_repaint();
    }

    /// The Explorer's file operations: ask, check the name, send to the
    /// host (started if need be, as for a save).
    pub(super) fn run_file_prompt(&mut self, command: ExplorerCommand) {
        let Some(ws) = &mut self.workspace else {
            return;
        };
        match command {
            ExplorerCommand::ToggleFolder(dir) => {
                if let Some(request) = self
                    .workspace
                    .as_mut()
                    .and_then(|w| w.explorer.toggle(&dir))
                {
                    self.io.send(request);
                }
            }
            ExplorerCommand::OpenFile(path) => self.open_file(&path),
            ExplorerCommand::Refresh => {
                if let Some(ws) = &mut self.workspace {
                    for request in ws.explorer.refresh() {
                        self.io.send(request);
                    }
                }
            }
            ExplorerCommand::FileAction(action) => {
                ws.prompt = Some(crate::window::explorer::FilePrompt::new(action));
            }
            ExplorerCommand::FilePromptName(name) => {
                if let Some(p) = &mut ws.prompt {
                    p.name = name;
                    p.error = None;
                }
            }
            ExplorerCommand::FilePromptCancel => ws.prompt = None,
            ExplorerCommand::FilePromptSubmit => {
                let Some(prompt) = &mut ws.prompt else { return };
                if prompt.busy {
                    return;
                }
                let op = match user_op_of(&ws.root, prompt) {
                    Ok(op) => op,
                    Err(message) => {
                        prompt.error = Some(message);
                        return;
                    }
                };
                prompt.busy = true;
                let root = ws.root.clone();
                if self.tasks.is_none() {
                    self.start_tasks(root);
                }
                self.send_task(ServiceRequest::UserOp(op));
            }
        }
    }

    /// A person's file operation finished: the Explorer and the editors
    /// follow it.
    pub(super) fn on_user_op(&mut self, op: &cocode_workspace::UserOp, result: Result<(), String>) {
        use cocode_workspace::UserOp;
        if matches!(op, UserOp::Discard { .. } | UserOp::UndoDiscard { .. }) {
            self.on_discard_done(op, result);
            return;
        }
        let Some(ws) = &mut self.workspace else {
            return;
        };
        if let UserOp::Rewrite(files) = op {
            self.search.replacing = false;
            self.search.note = Some(match result {
                Ok(()) => format!(
                    "Replaced {} occurrence(s) in {} file(s).",
                    self.search.pending_occurrences,
                    files.len()
                ),
                Err(message) => format!("Nothing was replaced: {message}"),
            });
            let root = ws.root.clone();
            self.search.start(&root);
            return;
        }
        if let Err(message) = result {
            if let Some(p) = &mut ws.prompt {
                p.busy = false;
                p.error = Some(message);
            }
            return;
        }
        ws.prompt = None;
        let root = ws.root.clone();
        let abs =
            |p: &cocode_core::path::NormalizedPath| cocode_git::absolute_path(&root, p.as_str());
        for request in ws.explorer.refresh() {
            self.io.send(request);
        }
        match op {
            UserOp::CreateFile(p) => self.open_file(&abs(p)),
            UserOp::CreateFolder(_)
            | UserOp::Rewrite(_)
            | UserOp::Discard { .. }
            | UserOp::UndoDiscard { .. } => {}
            UserOp::Rename { from, to } => {
                let base = root.clone();
                self.editors
                    .on_renamed(&abs(from), &abs(to), |path| rel_path(&base, path).ok());
            }
            UserOp::Delete(p) => {
                for id in self.editors.on_deleted(&abs(p)) {
                    self.close_editor_tab(id);
                }
            }
        }
    }

    /// A replace-in-files plan arrived: files open with unsaved changes
    /// stop it (the person's text would be overwritten); otherwise every
    /// file goes to the gate as one operation.
    pub(super) fn apply_replace_plan(&mut self, plan: crate::window::search::ReplacePlan) {
        let occurrences = plan.occurrences();
        let Some(ws) = &self.workspace else { return };
        let root = ws.root.clone();
        if plan.files.is_empty() {
            self.search.replacing = false;
            self.search.note = Some("Nothing to replace.".to_owned());
            return;
        }
        let dirty: Vec<&str> = plan
            .files
            .iter()
            .filter(|f| {
                self.editors
                    .by_path(&root.join(&f.path))
                    .is_some_and(|id| self.editors.is_dirty(id))
            })
            .map(|f| f.path.as_str())
            .collect();
        if !dirty.is_empty() {
            self.search.replacing = false;
            self.search.note = Some(format!(
                "Nothing was replaced: save or close these first, they have unsaved changes: {}",
                dirty.join(", ")
            ));
            return;
        }
        let mut writes = Vec::with_capacity(plan.files.len());
        for f in plan.files {
            match rel_path(&root, &root.join(&f.path)) {
                Ok(path) => writes.push(cocode_workspace::UserWrite {
                    path,
                    expected: f.expected,
                    bytes: f.bytes,
                }),
                Err(message) => {
                    self.search.replacing = false;
                    self.search.note = Some(format!("Nothing was replaced: {message}"));
                    return;
                }
            }
        }
        self.search.pending_occurrences = occurrences;
        if self.tasks.is_none() {
            self.start_tasks(root);
        }
        self.send_task(ServiceRequest::UserOp(cocode_workspace::UserOp::Rewrite(
            writes,
        )));
    }

    /// Opens a file of the workspace in an editor tab beside the other
    /// editors (or shows the tab that has it), with the keyboard focus.
    pub(super) fn open_file(&mut self, path: &Path) {
        let Some(ws) = &mut self.workspace else {
            return;
        };
        ws.explorer.select(path);
        let (id, request) = self.editors.open(&ws.root, path);
        if let Some(request) = request {
            self.io.send(request);
        }
        let tab = PanelId::Editor(id);
        if let Some(found) = self.dock.find_tab(&tab) {
            let _ = self.dock.set_active_tab(found);
            return;
        }
        let beside = self
            .dock
            .iter_all_tabs()
            .find(|(_, t)| matches!(t, PanelId::Editor(_)))
            .map(|(path, _)| path)
            .or_else(|| self.dock.find_tab(&PanelId::Welcome));
        match beside {
            Some(path) => {
                let leaf = &mut self.dock[path.surface][path.node];
                leaf.append_tab(tab);
                if let Some(found) = self.dock.find_tab(&tab) {
                    let _ = self.dock.set_active_tab(found);
                }
            }
            None => self.dock.push_to_focused_leaf(tab),
        }
    }

    /// Saves an editor tab's text through the workspace host's user save (the
    /// host starts if it has not: saves are known to the recording).
    pub(super) fn save(&mut self, id: u32) {
        if !self.editors.is_dirty(id) {
            // Nothing differs from disk; a tab waiting to close just closes.
            if self.editors.get(id).is_some_and(|t| t.close_after_save) {
                self.close_editor_tab(id);
            }
            return;
        }
        let Some(rel) = self.editors.begin_save(id) else {
            return;
        };
        if self.tasks.is_none()
            && let Some(root) = self.workspace_root().cloned()
        {
            self.start_tasks(root);
        }
        self.send_task(ServiceRequest::Save { path: rel });
    }

    pub(super) fn close_editor_tab(&mut self, id: u32) {
        if let Some(path) = self.dock.find_tab(&PanelId::Editor(id)) {
            self.dock.remove_tab(path);
        }
        self.editors.close(id);
        if self.quitting && self.editors.docs.dirty_paths().is_empty() {
            self.quit_now = true;
        }
    }

    /// Remembers the focused dock tab when it is an editor.
    pub(super) fn note_active_editor(&mut self) {
        if let Some((_, PanelId::Editor(id))) = self.dock.find_active_focused() {
            self.editors.active = Some(*id);
        }
    }

    /// Files changed on disk: open tabs read them again, the Explorer lists
    /// again when entries came or went.
    pub(super) fn apply_disk_changes(&mut self) {
        let Some(watch) = &self.watch else {
            // Nothing says when entries change: each search lists afresh.
            self.search.entries_changed();
            return;
        };
        let changes = watch.drain();
        if changes.listing || changes.vcs || !changes.changed.is_empty() {
            self.refresh_git();
        }
        if changes.listing
            || changes
                .changed
                .iter()
                .any(|p| cocode_workspace::is_ignore_file(p))
        {
            self.search.entries_changed();
        }
        let Some(ws) = &mut self.workspace else {
            return;
        };
        for path in &changes.changed {
            if self.editors.by_path(path).is_some() {
                self.io.send(IoRequest::Reread {
                    root: ws.root.clone(),
                    path: path.clone(),
                });
            }
        }
        if changes.listing {
            for request in ws.explorer.refresh() {
                self.io.send(request);
            }
        }
    }

    /// "Save changes?" before an editor tab with unsaved text closes, and
    /// before the window closes with any.
    pub(super) fn unsaved_prompt(&mut self, ctx: &egui::Context, commands: &mut Vec<Command>) {
        if ctx.input(|i| i.viewport().close_requested()) && !self.quit_now {
            let dirty = self.editors.docs.dirty_paths();
            if !dirty.is_empty() {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
                self.quitting = true;
            }
        }
        if self.quit_now {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if self.quitting {
            let n = self.editors.docs.dirty_paths().len();
            views::editor::quit_prompt(ctx, n, commands);
            return;
        }
        if let Some(switching) = &self.switching {
            let from = self.workspace_root().cloned();
            views::open_folder::switch_prompt(
                ctx,
                &views::open_folder::SwitchPrompt {
                    from: from.as_deref(),
                    to: &switching.to,
                    losses: self.losses(),
                    chosen: switching.chosen,
                },
                commands,
            );
            return;
        }
        if let Some(id) = self.editors.close_prompt {
            let name = self
                .editors
                .get(id)
                .map(crate::window::editors::EditorTab::name)
                .unwrap_or_default();
            views::editor::close_prompt(ctx, id, &name, commands);
        }
    }
}

/// A workspace path for an absolute path under `root`.
fn rel_path(root: &Path, path: &Path) -> Result<cocode_core::path::NormalizedPath, String> {
    use cocode_core::path::{CaseSensitivity, NormalizeOptions, normalize};
    let rel = path
        .strip_prefix(root)
        .map_err(|_| format!("not in the open folder: {}", path.display()))?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    normalize(&rel, NormalizeOptions::native(CaseSensitivity::Sensitive)).map_err(|e| e.to_string())
}

/// The host operation a filled-in prompt asks for.
fn user_op_of(
    root: &Path,
    prompt: &crate::window::explorer::FilePrompt,
) -> Result<cocode_workspace::UserOp, String> {
    use crate::window::explorer::FileAction;
    use cocode_workspace::UserOp;
    let target = prompt.target()?;
    Ok(match (&prompt.action, target) {
        (FileAction::NewFile { .. }, Some(t)) => UserOp::CreateFile(rel_path(root, &t)?),
        (FileAction::NewFolder { .. }, Some(t)) => UserOp::CreateFolder(rel_path(root, &t)?),
        (FileAction::Rename { path }, Some(t)) => UserOp::Rename {
            from: rel_path(root, path)?,
            to: rel_path(root, &t)?,
        },
        (FileAction::Delete { path, .. }, _) => UserOp::Delete(rel_path(root, path)?),
        (_, None) => return Err("Type a name.".to_owned()),
    })
}
