//! The editor tabs' state: which files are open, their syntax trees, find
//! bars and notices. The documents themselves live in the shared
//! [`OpenDocuments`] (agents read unsaved text from there); drawing and
//! keyboard handling are in `views::editor`.

use std::collections::BTreeSet;
use std::hash::Hasher as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cocode_core::path::NormalizedPath;
use cocode_editor::search::Matcher;
use cocode_editor::{Document, Language, OpenDocuments, SearchQuery, Syntax};

use crate::window::io_worker::{IoRequest, Opened, human_size};

/// What a tab shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TabBody {
    Loading,
    /// The document is in [`OpenDocuments`] under the tab's `rel`.
    Text,
    /// Not shown, with the reason.
    Unsupported(String),
    Failed(String),
}

/// A message on a tab (a refused save, a reload).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub error: bool,
}

/// The matches of a query in one version of a document.
#[derive(Debug, Clone)]
pub struct FoundMatches {
    pub version: i32,
    pub query: SearchQuery,
    pub ranges: Vec<(usize, usize)>,
}

/// The find (and replace) bar of a tab.
#[derive(Debug, Clone, Default)]
pub struct FindBar {
    pub query: SearchQuery,
    pub replace_with: String,
    pub show_replace: bool,
    /// Give the find field the keyboard focus on the next frame.
    pub focus: bool,
    /// The matches of the current query in the current version.
    pub matches: Option<FoundMatches>,
}

impl FindBar {
    /// The compiled query, or why it cannot run.
    pub fn matcher(&self) -> Result<Matcher, cocode_editor::SearchError> {
        self.query.compile()
    }

    /// The matches in `doc`, recomputed only when the text or query changed.
    pub fn matches_in(&mut self, doc: &Document) -> &[(usize, usize)] {
        let fresh = self
            .matches
            .as_ref()
            .is_some_and(|m| m.version == doc.version() && m.query == self.query);
        if !fresh {
            let ranges = self
                .matcher()
                .map(|m| m.find_all(doc.rope()))
                .unwrap_or_default();
            self.matches = Some(FoundMatches {
                version: doc.version(),
                query: self.query.clone(),
                ranges,
            });
        }
        self.matches.as_ref().map_or(&[], |m| &m.ranges)
    }
}

/// The file on disk differs from a buffer with unsaved changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskConflict {
    /// What is on disk now (`None`: the file was deleted).
    pub theirs: Option<String>,
    /// The disk's text against the buffer's as a unified diff, while the
    /// comparison is open (made when it opens).
    pub comparison: Option<String>,
}

/// One editor tab.
#[derive(Debug)]
pub struct EditorTab {
    pub id: u32,
    /// The file's absolute path.
    pub path: PathBuf,
    /// The file's workspace path, once opened.
    pub rel: Option<NormalizedPath>,
    pub body: TabBody,
    pub syntax: Option<Syntax>,
    /// Why the text cannot be edited, if it cannot.
    pub read_only: Option<String>,
    pub find: Option<FindBar>,
    /// The "go to line" field, when open.
    pub go_to_line: Option<String>,
    pub conflict: Option<DiskConflict>,
    pub notice: Option<Notice>,
    /// Lines changed by the last reload from disk, and the version they
    /// belong to (edits by the person clear them).
    pub changed_lines: (i32, BTreeSet<usize>),
    /// IME composition not yet committed.
    pub preedit: String,
    /// Scroll the primary cursor into view on the next frame.
    pub reveal: bool,
    /// Give the text the keyboard focus on the next frame.
    pub focus: bool,
    /// Widest line laid out so far (the horizontal scroll extent).
    pub content_width: f32,
    /// A hash of the bytes last known to be on disk.
    pub disk_hash: Option<u64>,
    /// A save under way: the document version and the hash of its text.
    pub saving: Option<(i32, u64)>,
    /// Close the tab once the save under way succeeds.
    pub close_after_save: bool,
    /// Where the pointer pressed, for drag selection (char offset).
    pub drag_anchor: Option<usize>,
    /// A range to select once the text is loaded: line, start and end
    /// columns (chars).
    pub pending_select: Option<(usize, usize, usize)>,
    /// The first line shown (kept with the window's state).
    pub first_line: usize,
    /// The first line to show once the text is laid out (a restored
    /// editor's scroll); the restored cursor then does not move the view.
    pub pending_first_line: Option<usize>,
    /// The running task that has changed this file (the tab is read-only
    /// until it ends).
    pub held_by: Option<String>,
    /// What the language servers report for this file.
    pub diagnostics: Vec<cocode_lsp::Diagnostic>,
    /// The pointer rests over this character (since this time, in the
    /// input's seconds); its hover is asked once it rested long enough.
    pub hover_wait: Option<(usize, f64)>,
    /// The hover shown: the character it is for and its text.
    pub hover: Option<(usize, String)>,
    /// The completion list, when open.
    pub completion: Option<CompletionPopup>,
    /// The characters that open the completion list (the server's).
    pub triggers: Vec<String>,
    /// The file's text at HEAD, for the gutter's marks.
    pub git_base: GitBase,
    /// The gutter's marks against HEAD and the document version they
    /// belong to.
    pub git_marks: Option<(i32, Vec<cocode_git::LineMark>)>,
    /// The gutter mark whose change is shown, if one was clicked.
    pub git_peek: Option<GitPeek>,
    /// The hunks of the task under review in this file, not yet kept:
    /// shown in the text with Keep and Undo.
    pub review_marks: Vec<ReviewMark>,
}

/// A hunk of the task under review, as the editor shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewMark {
    /// The hunk's number in the Review panel's review.
    pub hunk: usize,
    /// The first line (0-based) of what the task put there.
    pub start: usize,
    /// The lines the task put there (none for a removal: the mark sits on
    /// the line after it).
    pub lines: Vec<String>,
}

impl ReviewMark {
    /// The marks of a file's hunks not kept yet, from its review.
    pub fn of(file: &crate::host::task_review::ReviewFile) -> Vec<Self> {
        use cocode_workspace::diff::LineKind;
        if file.undo.is_err() {
            return Vec::new();
        }
        file.hunks()
            .iter()
            .filter(|h| !h.kept)
            .map(|h| {
                let mut line = h.hunk.new_start.saturating_sub(1);
                let (mut start, mut lines) = (None, Vec::new());
                for l in &h.hunk.lines {
                    match l.kind {
                        LineKind::Context => line += 1,
                        LineKind::Added => {
                            start.get_or_insert(line);
                            lines.push(l.text.clone());
                            line += 1;
                        }
                        LineKind::Removed => {
                            start.get_or_insert(line);
                        }
                    }
                }
                Self {
                    hunk: h.number,
                    start: start.unwrap_or(line),
                    lines,
                }
            })
            .collect()
    }

    /// Whether the document still holds the lines the mark was made for
    /// (a person's edit or a later change moves them: the mark hides).
    pub fn matches(&self, rope: &ropey::Rope) -> bool {
        let end = self.start + self.lines.len();
        if self.start > rope.len_lines() || end > rope.len_lines() {
            return false;
        }
        self.lines
            .iter()
            .zip(self.start..end)
            .all(|(text, line)| rope.line(line) == text.as_str())
    }
}

/// The change shown under a gutter mark.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GitPeek {
    pub mark: cocode_git::LineMark,
    /// Where the card opens (screen position, below the change).
    pub at: egui::Pos2,
}

/// A tab's text at HEAD.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum GitBase {
    /// Not asked for yet.
    #[default]
    Unasked,
    /// Asked for; the answer has not arrived.
    Asked,
    /// The answer: the text, or `None` when the file is not in HEAD (or not
    /// text, or the folder is in no repository).
    Known(Option<String>),
}

/// An open completion list.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionPopup {
    /// Where the word being completed starts (char offset).
    pub start: usize,
    /// The server's items (empty until they arrive).
    pub items: Vec<cocode_lsp::Completion>,
    /// Whether the server has answered.
    pub answered: bool,
    pub selected: usize,
}

impl CompletionPopup {
    /// The items matching what was typed since the list opened, best first:
    /// prefix matches, then those containing it (ignoring case).
    pub fn visible(&self, typed: &str) -> Vec<usize> {
        let typed = typed.to_lowercase();
        let mut prefix = Vec::new();
        let mut inner = Vec::new();
        for (i, item) in self.items.iter().enumerate() {
            let key = item.filter.to_lowercase();
            if key.starts_with(&typed) {
                prefix.push(i);
            } else if key.contains(&typed) {
                inner.push(i);
            }
        }
        prefix.extend(inner);
        prefix
    }
}

impl EditorTab {
    fn new(id: u32, path: PathBuf) -> Self {
        Self {
            id,
            path,
            rel: None,
            body: TabBody::Loading,
            syntax: None,
            read_only: None,
            find: None,
            go_to_line: None,
            conflict: None,
            notice: None,
            changed_lines: (0, BTreeSet::new()),
            preedit: String::new(),
            reveal: false,
            focus: true,
            content_width: 0.0,
            disk_hash: None,
            saving: None,
            close_after_save: false,
            drag_anchor: None,
            pending_select: None,
            first_line: 0,
            pending_first_line: None,
            held_by: None,
            diagnostics: Vec::new(),
            hover_wait: None,
            hover: None,
            completion: None,
            triggers: Vec::new(),
            git_base: GitBase::Unasked,
            git_marks: None,
            git_peek: None,
            review_marks: Vec::new(),
        }
    }

    /// Why the text cannot be typed into now, if it cannot.
    pub fn locked(&self) -> Option<String> {
        self.read_only.clone().or_else(|| {
            self.held_by.as_ref().map(|task| {
                format!("Task {task} is changing this file: read-only until the task ends.")
            })
        })
    }

    pub fn language(&self) -> Option<Language> {
        Language::of_path(&self.path)
    }

    /// The file name, for the tab title.
    pub fn name(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

/// A hash of bytes, to tell whether what is on disk changed.
pub fn content_hash(chunks: impl IntoIterator<Item = impl AsRef<[u8]>>) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    for c in chunks {
        h.write(c.as_ref());
    }
    h.finish()
}

/// The open editor tabs.
#[derive(Debug)]
pub struct Editors {
    pub docs: Arc<OpenDocuments>,
    pub tabs: Vec<EditorTab>,
    /// Paths of closed tabs, the last closed last (Ctrl+Shift+T).
    closed: Vec<PathBuf>,
    next_id: u32,
    /// The tab the person last worked in (Ctrl+S saves it).
    pub active: Option<u32>,
    /// "Save changes?" asked before closing this tab.
    pub close_prompt: Option<u32>,
    /// The files each running task has changed (by task id).
    task_files: std::collections::BTreeMap<String, Vec<NormalizedPath>>,
}

impl Editors {
    pub fn new(docs: Arc<OpenDocuments>) -> Self {
        Self {
            docs,
            tabs: Vec::new(),
            closed: Vec::new(),
            next_id: 1,
            active: None,
            close_prompt: None,
            task_files: std::collections::BTreeMap::new(),
        }
    }

    /// Hands each tab its file's diagnostics.
    pub fn set_diagnostics(&mut self, problems: &[cocode_lsp::FileDiagnostics]) {
        for tab in &mut self.tabs {
            tab.diagnostics = tab
                .rel
                .as_ref()
                .and_then(|rel| problems.iter().find(|f| &f.path == rel))
                .map(|f| f.diagnostics.clone())
                .unwrap_or_default();
        }
    }

    pub fn get(&self, id: u32) -> Option<&EditorTab> {
        self.tabs.iter().find(|t| t.id == id)
    }

    pub fn get_mut(&mut self, id: u32) -> Option<&mut EditorTab> {
        self.tabs.iter_mut().find(|t| t.id == id)
    }

    /// Shows the unkept hunks of the task under review in the tabs of
    /// their files (none: the review is closed or has nothing).
    pub fn set_review_marks(&mut self, review: Option<&crate::host::task_review::TaskReview>) {
        for tab in &mut self.tabs {
            tab.review_marks = match (review, &tab.rel) {
                (Some(r), Some(rel)) => {
                    r.file(rel.as_str()).map(ReviewMark::of).unwrap_or_default()
                }
                _ => Vec::new(),
            };
        }
    }

    pub fn by_path(&self, path: &Path) -> Option<u32> {
        self.tabs.iter().find(|t| t.path == path).map(|t| t.id)
    }

    /// Opens `path` (a file of the workspace at `root`) in a tab, or finds
    /// the tab that has it; the read to queue for a new tab.
    pub fn open(&mut self, root: &Path, path: &Path) -> (u32, Option<IoRequest>) {
        if let Some(id) = self.by_path(path) {
            if let Some(tab) = self.get_mut(id) {
                tab.focus = true;
            }
            self.active = Some(id);
            return (id, None);
        }
        let id = self.next_id;
        self.next_id += 1;
        self.tabs.push(EditorTab::new(id, path.to_path_buf()));
        self.active = Some(id);
        (
            id,
            Some(IoRequest::Open {
                root: root.to_path_buf(),
                path: path.to_path_buf(),
            }),
        )
    }

    /// Applies an open result to the tab waiting for it.
    pub fn on_opened(&mut self, path: &Path, result: Result<Opened, String>) {
        let docs = Arc::clone(&self.docs);
        let Some(tab) = self
            .tabs
            .iter_mut()
            .find(|t| t.path == path && t.body == TabBody::Loading)
        else {
            return;
        };
        match result {
            Ok(Opened::Text { rel, rope }) => {
                tab.disk_hash = Some(content_hash(rope.chunks().map(str::as_bytes)));
                let doc = Document::from_rope(rope);
                tab.syntax = tab.language().map(|l| Syntax::new(l, &doc));
                if !docs.open_document(rel.clone(), doc) {
                    // Another tab of this window had it: share its text.
                    tracing::debug!(path = rel.as_str(), "document already open");
                }
                // A file a running task changed stays read-only here too.
                tab.held_by = holder(&self.task_files, &rel);
                tab.rel = Some(rel);
                tab.body = TabBody::Text;
                let id = tab.id;
                let keep_view = tab.pending_first_line.is_some();
                if let Some((line, start, end)) = tab.pending_select.take() {
                    self.select_range(id, line, start, end);
                    if let Some(tab) = self.get_mut(id).filter(|_| keep_view) {
                        tab.reveal = false;
                    }
                }
            }
            Ok(Opened::NotUtf8 { rel, text, size }) => {
                let doc = Document::from_text(&text);
                docs.open_document(rel.clone(), doc);
                tab.rel = Some(rel);
                tab.body = TabBody::Text;
                tab.read_only = Some(format!(
                    "Not UTF-8 text ({}): shown with replacement characters, read-only.",
                    human_size(size)
                ));
            }
            Ok(Opened::Binary { rel, size }) => {
                tab.rel = Some(rel);
                tab.body = TabBody::Unsupported(format!(
                    "Binary file ({}) — not shown.",
                    human_size(size)
                ));
            }
            Err(message) => tab.body = TabBody::Failed(message),
        }
    }

    /// Selects columns `start..end` of `line` (0-based, chars) and scrolls
    /// to it — now, or once the file is loaded.
    pub fn select_range(&mut self, id: u32, line: usize, start: usize, end: usize) {
        let docs = Arc::clone(&self.docs);
        let Some(tab) = self.get_mut(id) else { return };
        let Some(rel) = tab.rel.clone().filter(|_| tab.body == TabBody::Text) else {
            tab.pending_select = Some((line, start, end));
            return;
        };
        docs.with_document(&rel, |d| {
            let rope = d.rope();
            let line = line.min(rope.len_lines().saturating_sub(1));
            let first = cocode_editor::commands::line_start(rope, line);
            let last = cocode_editor::commands::line_end(rope, line);
            let (a, b) = ((first + start).min(last), (first + end).min(last));
            d.set_selection(cocode_editor::Selection::single(cocode_editor::Range::new(
                a, b,
            )));
        });
        tab.reveal = true;
        tab.focus = true;
    }

    /// Files under `from` were renamed to be under `to` (`rel_of` gives a
    /// new absolute path's workspace path): their tabs follow.
    pub fn on_renamed(
        &mut self,
        from: &Path,
        to: &Path,
        rel_of: impl Fn(&Path) -> Option<NormalizedPath>,
    ) {
        let docs = Arc::clone(&self.docs);
        for tab in &mut self.tabs {
            let Ok(rest) = tab.path.strip_prefix(from) else {
                continue;
            };
            let new_path = if rest.as_os_str().is_empty() {
                to.to_path_buf()
            } else {
                to.join(rest)
            };
            if let (Some(old), Some(new)) = (tab.rel.clone(), rel_of(&new_path)) {
                docs.rename(&old, new.clone());
                tab.rel = Some(new);
            }
            tab.path = new_path;
            tab.syntax = None;
            if let (Some(language), Some(rel)) = (tab.language(), &tab.rel) {
                tab.syntax = docs.with_document(rel, |d| Syntax::new(language, d));
            }
        }
    }

    /// Tabs of files under `path`, which the person deleted: clean ones
    /// close (their ids), ones with unsaved changes stay and say so.
    pub fn on_deleted(&mut self, path: &Path) -> Vec<u32> {
        let mut closing = Vec::new();
        for id in self
            .tabs
            .iter()
            .filter(|t| t.path.starts_with(path))
            .map(|t| t.id)
            .collect::<Vec<_>>()
        {
            if self.is_dirty(id) {
                if let Some(tab) = self.get_mut(id) {
                    tab.notice = Some(Notice {
                        text: "The file was deleted; saving creates it again.".into(),
                        error: false,
                    });
                }
            } else {
                closing.push(id);
            }
        }
        closing
    }

    /// The Explorer's marks: open files with unsaved changes, and those a
    /// running task is changing.
    pub fn marks(&self) -> crate::window::explorer::FileMarks {
        let mut marks = crate::window::explorer::FileMarks::default();
        for tab in &self.tabs {
            if self.is_dirty(tab.id) {
                marks.dirty.insert(tab.path.clone());
            }
            if let Some(task) = &tab.held_by {
                marks.held.insert(tab.path.clone(), task.clone());
            }
        }
        marks
    }

    /// The files running task `task_id` has changed (empty once it ended):
    /// their tabs are read-only until it ends.
    pub fn on_task_files(&mut self, task_id: &str, paths: &[NormalizedPath]) {
        if paths.is_empty() {
            self.task_files.remove(task_id);
        } else {
            self.task_files.insert(task_id.to_owned(), paths.to_vec());
        }
        for tab in &mut self.tabs {
            tab.held_by = tab
                .rel
                .as_ref()
                .and_then(|rel| holder(&self.task_files, rel));
        }
    }

    /// The tabs whose text differs from disk.
    pub fn dirty_ids(&self) -> Vec<u32> {
        self.tabs
            .iter()
            .map(|t| t.id)
            .filter(|id| self.is_dirty(*id))
            .collect()
    }

    /// Whether the tab's text differs from disk.
    pub fn is_dirty(&self, id: u32) -> bool {
        self.get(id)
            .and_then(|t| t.rel.as_ref())
            .is_some_and(|rel| self.docs.has_unsaved_changes(rel))
    }

    /// The tab title: the file name, with a dot while unsaved.
    pub fn title(&self, id: u32) -> String {
        match self.get(id) {
            Some(tab) if self.is_dirty(id) => format!("● {}", tab.name()),
            Some(tab) => tab.name(),
            None => "Editor".to_owned(),
        }
    }

    /// Closes a tab (the caller asked about unsaved changes first).
    pub fn close(&mut self, id: u32) {
        let Some(i) = self.tabs.iter().position(|t| t.id == id) else {
            return;
        };
        let tab = self.tabs.remove(i);
        if let Some(rel) = &tab.rel
            && !self.tabs.iter().any(|t| t.rel.as_ref() == Some(rel))
        {
            self.docs.close(rel);
        }
        self.closed.retain(|p| *p != tab.path);
        self.closed.push(tab.path);
        if self.active == Some(id) {
            self.active = self.tabs.last().map(|t| t.id);
        }
        if self.close_prompt == Some(id) {
            self.close_prompt = None;
        }
    }

    /// The last closed file that is not open again (Ctrl+Shift+T).
    pub fn reopen_closed(&mut self) -> Option<PathBuf> {
        while let Some(path) = self.closed.pop() {
            if self.by_path(&path).is_none() {
                return Some(path);
            }
        }
        None
    }

    /// Closes every tab (another folder opens); their ids.
    pub fn clear(&mut self) -> Vec<u32> {
        let ids: Vec<u32> = self.tabs.iter().map(|t| t.id).collect();
        for id in &ids {
            self.close(*id);
        }
        self.closed.clear();
        ids
    }

    /// A save of the tab's text is starting: notes what is being written.
    /// `None` when there is nothing to save.
    pub fn begin_save(&mut self, id: u32) -> Option<NormalizedPath> {
        let docs = Arc::clone(&self.docs);
        let tab = self.get_mut(id)?;
        let rel = tab.rel.clone()?;
        if tab.locked().is_some() {
            return None;
        }
        let (version, hash) = docs.with_document(&rel, |d| {
            (
                d.version(),
                content_hash(d.rope().chunks().map(str::as_bytes)),
            )
        })?;
        tab.saving = Some((version, hash));
        tab.notice = None;
        Some(rel)
    }

    /// A save finished.
    pub fn on_saved(&mut self, rel: &NormalizedPath, result: Result<(), String>) -> Option<u32> {
        let tab = self.tabs.iter_mut().find(|t| t.rel.as_ref() == Some(rel))?;
        let saving = tab.saving.take();
        match result {
            Ok(()) => {
                if let Some((_, hash)) = saving {
                    tab.disk_hash = Some(hash);
                }
                tab.conflict = None;
                if tab.close_after_save {
                    return Some(tab.id);
                }
            }
            Err(message) => {
                tab.close_after_save = false;
                tab.notice = Some(Notice {
                    text: message,
                    error: true,
                });
            }
        }
        None
    }

    /// An open file changed on disk (`None`: it was deleted): a clean
    /// buffer takes the new text at once, with the changed lines marked; a
    /// buffer with unsaved changes keeps them and shows the conflict.
    pub fn on_disk_changed(&mut self, path: &Path, bytes: Option<Vec<u8>>) {
        let docs = Arc::clone(&self.docs);
        let Some(tab) = self.tabs.iter_mut().find(|t| t.path == path) else {
            return;
        };
        let Some(rel) = tab.rel.clone() else {
            return;
        };
        let hash = bytes.as_ref().map(|b| content_hash([b]));
        if hash.is_some() && (hash == tab.disk_hash || hash == tab.saving.map(|(_, h)| h)) {
            tab.disk_hash = hash;
            return;
        }
        let theirs = match bytes.map(String::from_utf8) {
            Some(Ok(text)) => Some(text),
            Some(Err(_)) => {
                tab.notice = Some(Notice {
                    text: "The file on disk is no longer UTF-8 text; the buffer keeps the text it had."
                        .into(),
                    error: true,
                });
                return;
            }
            None => None,
        };
        let dirty = docs.has_unsaved_changes(&rel);
        if theirs.is_none() && !dirty {
            tab.disk_hash = None;
            tab.notice = Some(Notice {
                text: "The file was deleted on disk; saving creates it again.".into(),
                error: false,
            });
            return;
        }
        match (&theirs, dirty) {
            (Some(text), false) => {
                let changed = docs.with_document(&rel, |d| {
                    let lines = d.reload(text);
                    (d.version(), lines)
                });
                if let Some((version, lines)) = changed {
                    tab.changed_lines = (version, lines.into_iter().collect());
                }
                tab.disk_hash = hash;
                tab.conflict = None;
            }
            _ => {
                tab.conflict = Some(DiskConflict {
                    theirs,
                    comparison: None,
                });
            }
        }
    }

    /// "Load theirs" on a conflict: the disk's text replaces the buffer (one
    /// undoable step, so nothing the person typed is lost for good).
    pub fn take_theirs(&mut self, id: u32) {
        let docs = Arc::clone(&self.docs);
        let Some(tab) = self.get_mut(id) else { return };
        let (Some(rel), Some(conflict)) = (tab.rel.clone(), tab.conflict.take()) else {
            return;
        };
        match conflict.theirs {
            Some(text) => {
                let changed = docs.with_document(&rel, |d| {
                    let lines = d.reload(&text);
                    (d.version(), lines)
                });
                if let Some((version, lines)) = changed {
                    tab.changed_lines = (version, lines.into_iter().collect());
                }
                tab.disk_hash = Some(content_hash([text.as_bytes()]));
            }
            None => {
                tab.notice = Some(Notice {
                    text: "The file was deleted on disk; saving creates it again.".into(),
                    error: false,
                });
            }
        }
    }

    /// Opens (or closes) the comparison of a conflict: the disk's text
    /// against the buffer's.
    pub fn toggle_compare(&mut self, id: u32) {
        let docs = Arc::clone(&self.docs);
        let Some(tab) = self.get_mut(id) else { return };
        let Some(rel) = tab.rel.clone() else { return };
        let Some(conflict) = tab.conflict.as_mut() else {
            return;
        };
        if conflict.comparison.take().is_some() {
            return;
        }
        let mine = docs.with_document(&rel, |d| d.text()).unwrap_or_default();
        conflict.comparison = Some(cocode_workspace::diff::unified(
            &rel,
            None,
            conflict.theirs.as_deref().map(str::as_bytes),
            Some(mine.as_bytes()),
        ));
    }

    /// "Keep mine": the buffer stays as it is (saving overwrites the disk).
    pub fn keep_mine(&mut self, id: u32) {
        if let Some(tab) = self.get_mut(id)
            && let Some(conflict) = tab.conflict.take()
        {
            tab.disk_hash = conflict.theirs.map(|t| content_hash([t.as_bytes()]));
        }
    }
}

/// The running task (of `task_files`, each task's changed files) that
/// changed `rel`.
fn holder(
    task_files: &std::collections::BTreeMap<String, Vec<NormalizedPath>>,
    rel: &NormalizedPath,
) -> Option<String> {
    task_files
        .iter()
        .find(|(_, paths)| paths.contains(rel))
        .map(|(task, _)| task.clone())
}
