//! A task's changes reviewed like a pull request, for the window and the
//! command line alike: each file's net change in a chosen part of the task
//! (all of it, one attempt, one message's turn, or what changed since the
//! person last looked) split into hunks; a hunk or a file undone through
//! the gate as the task's own `review` snapshot; hunks kept, files marked
//! viewed, and the "last looked" marker — all saved with the task
//! (`review.json`), and the conversation's checkpoints (`messages.json`),
//! one per message a person sent, to restore the files to before one.

use std::collections::BTreeMap;
use std::fmt;

use anyhow::Context as _;
use cocode_core::gate::{EditLockRegistry, TaskContext, with_leases};
use cocode_core::ids::{AttemptNo, SessionId};
use cocode_core::path::{NormalizedPath, looks_binary};
use cocode_core::snapshot::{ContentHash, EditSnapshot, Form};
use cocode_core::{TaskId, WorkspaceErrorCode};
use cocode_workspace::diff::{LineKind, TextHunk, revert_hunk, text_hunks};
use cocode_workspace::{OpenWorkspace, ReviewChange, RollbackQuery};
use serde::{Deserialize, Serialize};

/// Which part of a task a review shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewScope {
    /// Everything the task changed, from each file's first base.
    All,
    /// What changed after the person last marked the task reviewed (all of
    /// it before the first time).
    SinceReview,
    /// What one attempt changed.
    Attempt(AttemptNo),
    /// What changed while the agent answered one message (1-based: the
    /// task's prompt is message 1).
    Message(usize),
    /// What changed while one of the agent's tool calls ran (1-based, in
    /// the order the calls that changed files ended).
    Call(usize),
}

impl fmt::Display for ReviewScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::All => f.write_str("all of the task's changes"),
            Self::SinceReview => f.write_str("changes since your last review"),
            Self::Attempt(k) => write!(f, "changes of attempt {}", k.ordinal()),
            Self::Message(k) => write!(f, "changes made in answer to message {k}"),
            Self::Call(k) => write!(f, "changes made by tool call {k}"),
        }
    }
}

/// What happened to a file in the reviewed part of the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileChange {
    Created,
    Modified,
    Deleted,
    /// Moved without a change of content (from `previous_path`).
    Renamed,
}

impl FileChange {
    pub fn word(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Modified => "modified",
            Self::Deleted => "deleted",
            Self::Renamed => "renamed",
        }
    }
}

/// What the review can show of a file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContent {
    /// Text: its hunks in file order.
    Text(Vec<ReviewHunk>),
    /// Binary (or not UTF-8) content: no hunks, the file as a whole.
    Binary,
    /// A side was too large to keep: history holds only its hash.
    TooLarge,
    /// A side is not a plain file (a link, a FIFO): `what` says which.
    NotAFile { what: String },
}

/// One hunk of a file under review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewHunk {
    /// 1-based within its file, in file order.
    pub number: usize,
    pub hunk: TextHunk,
    /// The person kept it (marked it reviewed as it is).
    pub kept: bool,
    /// Names the hunk's change (its path and lines) across reviews.
    pub fingerprint: String,
    /// Syntax colours per line (byte ranges within the line's text), when
    /// [`highlight`] coloured the review; empty otherwise.
    pub spans: Vec<LineSpans>,
}

/// A line's coloured byte ranges and what each is.
pub type LineSpans = Vec<(std::ops::Range<usize>, cocode_editor::Highlight)>;

/// One file of a review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewFile {
    pub path: NormalizedPath,
    /// The path it was renamed from.
    pub previous_path: Option<NormalizedPath>,
    pub change: FileChange,
    pub content: FileContent,
    /// Lines removed and added.
    pub counts: (usize, usize),
    /// The content before the reviewed part (`None`: absent).
    pub before: Option<ContentHash>,
    /// The content the reviewed part left (`None`: absent); an undo needs
    /// the file to hold it still.
    pub after: Option<ContentHash>,
    /// Whether an undo can run now, or why not.
    pub undo: Result<(), String>,
    /// The person marked the file viewed at this content.
    pub viewed: bool,
}

impl ReviewFile {
    /// Hunks (none for content the review shows whole).
    pub fn hunks(&self) -> &[ReviewHunk] {
        match &self.content {
            FileContent::Text(hunks) => hunks,
            _ => &[],
        }
    }
}

/// A task's review in one scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskReview {
    pub task_id: TaskId,
    pub scope: ReviewScope,
    pub files: Vec<ReviewFile>,
    /// The newest change of the task the review saw: marking it reviewed
    /// moves the marker here.
    pub newest_seq: Option<u64>,
    /// Where the marker stood (`None`: never reviewed).
    pub reviewed_upto: Option<u64>,
}

impl TaskReview {
    pub fn hunk_count(&self) -> usize {
        self.files.iter().map(|f| f.hunks().len()).sum()
    }

    pub fn file(&self, path: &str) -> Option<&ReviewFile> {
        self.files.iter().find(|f| f.path.as_str() == path)
    }
}

/// Why an undo did not happen.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UndoError {
    #[error("{path} is not among the reviewed files")]
    NoSuchFile { path: String },
    #[error("{path} has no hunk {number} (it has {count})")]
    NoSuchHunk {
        path: String,
        number: usize,
        count: usize,
    },
    #[error("{path}: {reason}")]
    Refused { path: String, reason: String },
    /// The file changed since the review was computed, or another task
    /// changed it since: nothing was touched.
    #[error("{path}: {message} ({code})")]
    Conflict {
        path: String,
        code: &'static str,
        message: String,
    },
    #[error("the undo could not run: {0}")]
    Failed(String),
}

/// What is saved of a person's review with the task (`review.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewState {
    version: u32,
    /// The newest change of the task the person marked reviewed.
    #[serde(default)]
    reviewed_upto: Option<u64>,
    /// Hunks kept, by fingerprint.
    #[serde(default)]
    kept: Vec<String>,
    /// Files marked viewed, each at the content it had then.
    #[serde(default)]
    viewed: Vec<ViewedFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ViewedFile {
    path: String,
    /// `sha256:…`, or `absent`.
    revision: String,
}

const REVIEW_STATE_VERSION: u32 = 1;

fn review_state_path(ws: &OpenWorkspace, id: &TaskId) -> std::path::PathBuf {
    ws.layout.task_dir(id).join("review.json")
}

/// One of the task's review records (`what` names it in an error);
/// `None` when the task has none yet.
fn read_record<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
    what: &str,
) -> anyhow::Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .with_context(|| format!("the {what} record {} is damaged", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn load_state(ws: &OpenWorkspace, id: &TaskId) -> anyhow::Result<ReviewState> {
    Ok(
        read_record(&review_state_path(ws, id), "review")?.unwrap_or(ReviewState {
            version: REVIEW_STATE_VERSION,
            ..ReviewState::default()
        }),
    )
}

fn save_state(ws: &OpenWorkspace, id: &TaskId, state: &ReviewState) -> anyhow::Result<()> {
    let bytes = serde_json::to_vec_pretty(state)?;
    ws.gate
        .store()
        .write_state_file(&review_state_path(ws, id), &bytes)?;
    Ok(())
}

fn revision(hash: Option<ContentHash>) -> String {
    hash.map_or_else(|| "absent".to_owned(), |h| format!("sha256:{}", h.to_hex()))
}

/// One message a person sent in a task's conversation: a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageMark {
    /// 1-based; the task's prompt is message 1.
    pub number: usize,
    /// The newest change of the task when the message was sent (`None`:
    /// none yet): what the agent changed in answer to it comes after.
    pub after_seq: Option<u64>,
    /// The message (its first 16,000 characters): a person recognizes it,
    /// and can send it again after restoring to before it.
    pub text: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Messages {
    version: u32,
    messages: Vec<MessageMark>,
}

/// How much of a message its checkpoint keeps (enough to send it again
/// after restoring to before it).
const MESSAGE_TEXT_CHARS: usize = 16_000;

/// How much of a message a list shows.
const MESSAGE_SHOWN_CHARS: usize = 200;

impl MessageMark {
    /// The message's first line, cut to fit a list.
    pub fn summary(&self) -> String {
        let first = self.text.lines().next().unwrap_or_default();
        let mut shown: String = first.chars().take(MESSAGE_SHOWN_CHARS).collect();
        if shown.len() < self.text.len() {
            shown.push('…');
        }
        shown
    }
}

fn messages_path(ws: &OpenWorkspace, id: &TaskId) -> std::path::PathBuf {
    ws.layout.task_dir(id).join("messages.json")
}

/// The task's checkpoints, one per message a person sent, oldest first.
/// A task recorded before checkpoints existed has its prompt only.
pub fn messages(ws: &OpenWorkspace, id: &TaskId) -> anyhow::Result<Vec<MessageMark>> {
    if let Some(all) = read_record::<Messages>(&messages_path(ws, id), "message")? {
        return Ok(all.messages);
    }
    let prompt = crate::host::records::load_task_record(ws, id)
        .map(|t| t.prompt().to_owned())
        .unwrap_or_default();
    Ok(vec![MessageMark {
        number: 1,
        after_seq: None,
        text: cut(&prompt),
    }])
}

fn cut(text: &str) -> String {
    let mut cut: String = text.chars().take(MESSAGE_TEXT_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

/// Records a checkpoint: the person sent `text` to task `id`'s agent now.
/// The first one is the task's prompt.
pub fn record_message(ws: &OpenWorkspace, id: &TaskId, text: &str) -> anyhow::Result<()> {
    let path = messages_path(ws, id);
    let mut all = read_record::<Messages>(&path, "message")?.unwrap_or(Messages {
        version: 1,
        messages: Vec::new(),
    });
    let after_seq = newest_seq(ws, id)?;
    all.messages.push(MessageMark {
        number: all.messages.len() + 1,
        after_seq,
        text: cut(text),
    });
    ws.gate
        .store()
        .write_state_file(&path, &serde_json::to_vec_pretty(&all)?)?;
    Ok(())
}

/// One of the agent's tool calls that changed files: what was recorded
/// after `after_seq` and up to `upto_seq` happened while it ran (a change
/// an external agent makes with its own file I/O is recorded when its
/// turn ends, not with the call).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallMark {
    /// 1-based, in the order the calls ended.
    pub number: usize,
    pub call_id: String,
    /// The call's title as the transcript shows it.
    pub title: String,
    /// The task's newest change when the call began.
    pub after_seq: Option<u64>,
    /// The task's newest change when it ended.
    pub upto_seq: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Calls {
    version: u32,
    calls: Vec<CallMark>,
}

fn calls_path(ws: &OpenWorkspace, id: &TaskId) -> std::path::PathBuf {
    ws.layout.task_dir(id).join("calls.json")
}

/// The task's tool calls that changed files, in the order they ended.
pub fn calls(ws: &OpenWorkspace, id: &TaskId) -> anyhow::Result<Vec<CallMark>> {
    Ok(read_record::<Calls>(&calls_path(ws, id), "tool-call")?
        .map(|all| all.calls)
        .unwrap_or_default())
}

/// The seq of the task's newest recorded change (`None`: none yet).
pub fn newest_seq(ws: &OpenWorkspace, id: &TaskId) -> anyhow::Result<Option<u64>> {
    Ok(ws
        .gate
        .store()
        .snapshots_of_task(id)?
        .iter()
        .map(|s| s.seq().0)
        .max())
}

/// Records a tool call that ended, when changes were recorded while it
/// ran (`after_seq`: the newest change when it began); calls that changed
/// nothing are not kept.
pub fn record_call(
    ws: &OpenWorkspace,
    id: &TaskId,
    (call_id, title): (&str, &str),
    after_seq: Option<u64>,
) -> anyhow::Result<()> {
    let upto_seq = newest_seq(ws, id)?;
    if upto_seq == after_seq {
        return Ok(());
    }
    let path = calls_path(ws, id);
    let mut all = Calls {
        version: 1,
        calls: calls(ws, id)?,
    };
    all.calls.push(CallMark {
        number: all.calls.len() + 1,
        call_id: call_id.to_owned(),
        title: cut(title),
        after_seq,
        upto_seq,
    });
    ws.gate
        .store()
        .write_state_file(&path, &serde_json::to_vec_pretty(&all)?)?;
    Ok(())
}

/// The rollback that restores the task's files to before message `number`
/// (1-based): every change made in answer to it and after. `None` when
/// nothing changed since it was sent.
pub fn before_message(
    ws: &OpenWorkspace,
    id: &TaskId,
    number: usize,
) -> anyhow::Result<Option<RollbackQuery>> {
    let marks = messages(ws, id)?;
    let Some(mark) = marks.iter().find(|m| m.number == number) else {
        anyhow::bail!(
            "task {id} has no message {number} (it has {}; the prompt is message 1)",
            marks.len()
        );
    };
    let mut records = ws.gate.store().snapshots_of_task(id)?;
    records.sort_by_key(EditSnapshot::seq);
    Ok(records
        .iter()
        .find(|r| mark.after_seq.is_none_or(|b| r.seq().0 > b))
        .map(|r| RollbackQuery::ToSnapshot(r.snapshot_id().clone())))
}

/// The seq range `(after, upto]` of message `number`'s turn (`upto`
/// `None`: to the end); `None` when its turn changed nothing (the next
/// message came before any change).
fn message_range(
    marks: &[MessageMark],
    number: usize,
) -> anyhow::Result<Option<(Option<u64>, Option<u64>)>> {
    let Some(i) = marks.iter().position(|m| m.number == number) else {
        anyhow::bail!(
            "the task has no message {number} (it has {}; the prompt is message 1)",
            marks.len()
        );
    };
    Ok(match marks.get(i + 1) {
        None => Some((marks[i].after_seq, None)),
        Some(next) => next.after_seq.map(|upto| (marks[i].after_seq, Some(upto))),
    })
}

/// One side of a path's net change: its content hash, whether history
/// kept it, and its form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Side {
    hash: Option<ContentHash>,
    unkept: bool,
    form: Option<Form>,
}

/// Computes `id`'s review in `scope`.
pub fn review(ws: &OpenWorkspace, id: &TaskId, scope: ReviewScope) -> anyhow::Result<TaskReview> {
    let state = load_state(ws, id)?;
    let mut records = ws.gate.store().snapshots_of_task(id)?;
    records.sort_by_key(EditSnapshot::seq);
    let newest_seq = records.last().map(|r| r.seq().0);
    let selected: Vec<&EditSnapshot> = match scope {
        ReviewScope::All => records.iter().collect(),
        ReviewScope::SinceReview => records
            .iter()
            .filter(|r| state.reviewed_upto.is_none_or(|m| r.seq().0 > m))
            .collect(),
        ReviewScope::Attempt(k) => records.iter().filter(|r| r.attempt_no() == k).collect(),
        ReviewScope::Call(number) => {
            let calls = calls(ws, id)?;
            let Some(call) = calls.iter().find(|c| c.number == number) else {
                anyhow::bail!(
                    "task {id} has no tool call {number} that changed files (it has {})",
                    calls.len()
                );
            };
            records
                .iter()
                .filter(|r| {
                    call.after_seq.is_none_or(|a| r.seq().0 > a)
                        && call.upto_seq.is_some_and(|u| r.seq().0 <= u)
                })
                .collect()
        }
        ReviewScope::Message(number) => match message_range(&messages(ws, id)?, number)? {
            None => Vec::new(),
            Some((after, upto)) => records
                .iter()
                .filter(|r| {
                    after.is_none_or(|a| r.seq().0 > a) && upto.is_none_or(|u| r.seq().0 <= u)
                })
                .collect(),
        },
    };
    // Per path: the first before and the last after in the selection.
    let mut ends: BTreeMap<NormalizedPath, (Side, Side)> = BTreeMap::new();
    let mut moved: Vec<(NormalizedPath, NormalizedPath)> = Vec::new();
    for record in &selected {
        let (unkept, forms) = (record.unkept(), record.forms());
        if let Some(from) = record.previous_path() {
            moved.push((from.clone(), record.path().clone()));
        }
        for t in record.transitions() {
            let before = Side {
                hash: t.before,
                unkept: unkept.base && record.previous_path().is_none(),
                form: t.before.and(forms.base),
            };
            let after = Side {
                hash: t.after,
                unkept: unkept.result && record.previous_path().is_none(),
                form: t.after.and(forms.result),
            };
            ends.entry(t.path)
                .and_modify(|(_, last)| *last = after)
                .or_insert((before, after));
        }
    }
    ends.retain(|_, (before, after)| before != after);
    // A move whose content did not change reads as one renamed file.
    let mut renamed: BTreeMap<NormalizedPath, NormalizedPath> = BTreeMap::new();
    for (from, to) in moved {
        let (Some((fb, fa)), Some((tb, ta))) = (ends.get(&from), ends.get(&to)) else {
            continue;
        };
        if fa.hash.is_none() && tb.hash.is_none() && fb.hash.is_some() && fb == ta {
            renamed.insert(to, from);
        }
    }
    let mut files = Vec::new();
    for (path, (before, after)) in &ends {
        if renamed.values().any(|from| from == path) {
            continue;
        }
        // Folders are the places of files; their files are reviewed.
        if before.form == Some(Form::Folder) || after.form == Some(Form::Folder) {
            continue;
        }
        files.push(review_file(
            ws,
            id,
            &state,
            (path, renamed.get(path)),
            (before, after),
        )?);
    }
    Ok(TaskReview {
        task_id: id.clone(),
        scope,
        files,
        newest_seq,
        reviewed_upto: state.reviewed_upto,
    })
}

fn review_file(
    ws: &OpenWorkspace,
    id: &TaskId,
    state: &ReviewState,
    (path, previous_path): (&NormalizedPath, Option<&NormalizedPath>),
    (before, after): (&Side, &Side),
) -> anyhow::Result<ReviewFile> {
    let change = match (previous_path, before.hash, after.hash) {
        (Some(_), _, _) => FileChange::Renamed,
        (None, None, _) => FileChange::Created,
        (None, _, None) => FileChange::Deleted,
        _ => FileChange::Modified,
    };
    let before_hash = if previous_path.is_some() {
        after.hash
    } else {
        before.hash
    };
    let not_a_file = |side: &Side| {
        side.form
            .filter(|f| !matches!(f, Form::File { .. }))
            .map(Form::phrase)
    };
    let store = ws.gate.store();
    let load = |hash: Option<ContentHash>| -> anyhow::Result<Vec<u8>> {
        hash.map_or_else(|| Ok(Vec::new()), |h| Ok(store.read_blob(&h)?))
    };
    let content = if let Some(what) = not_a_file(before).or_else(|| not_a_file(after)) {
        FileContent::NotAFile { what }
    } else if before.unkept || after.unkept {
        FileContent::TooLarge
    } else if previous_path.is_some() {
        FileContent::Text(Vec::new())
    } else {
        let (a, b) = (load(before.hash)?, load(after.hash)?);
        match (std::str::from_utf8(&a), std::str::from_utf8(&b)) {
            (Ok(a), Ok(b)) if !looks_binary(a.as_bytes()) && !looks_binary(b.as_bytes()) => {
                let hunks = text_hunks(a, b);
                let prints = fingerprints(path, &hunks);
                FileContent::Text(
                    hunks
                        .into_iter()
                        .zip(prints)
                        .enumerate()
                        .map(|(i, (hunk, fingerprint))| ReviewHunk {
                            number: i + 1,
                            kept: state.kept.contains(&fingerprint),
                            hunk,
                            fingerprint,
                            spans: Vec::new(),
                        })
                        .collect(),
                )
            }
            _ => FileContent::Binary,
        }
    };
    let counts = match &content {
        FileContent::Text(hunks) => hunks.iter().fold((0, 0), |(r, a), h| {
            let (hr, ha) = h.hunk.counts();
            (r + hr, a + ha)
        }),
        _ => (0, 0),
    };
    let undo = undo_possible(ws, id, path, previous_path, after.hash, &content);
    let viewed = state
        .viewed
        .iter()
        .any(|v| v.path == path.as_str() && v.revision == revision(after.hash));
    Ok(ReviewFile {
        path: path.clone(),
        previous_path: previous_path.cloned(),
        change,
        content,
        counts,
        before: before_hash,
        after: after.hash,
        undo,
        viewed,
    })
}

/// Colours the hunks of `review`'s text files in a language the editor
/// knows, as the editor colours them: removed lines from the content
/// before, the others from the content after (each side parsed whole).
/// The window asks for it; the command line prints plain diffs.
pub fn highlight(ws: &OpenWorkspace, review: &mut TaskReview) {
    use cocode_editor::{Document, Language, Syntax};
    for file in &mut review.files {
        let Some(language) = Language::of_path(std::path::Path::new(file.path.as_str())) else {
            continue;
        };
        let (before_hash, after_hash) = (file.before, file.after);
        let FileContent::Text(hunks) = &mut file.content else {
            continue;
        };
        if hunks.is_empty() {
            continue;
        }
        let read = |hash: Option<ContentHash>| {
            hash.and_then(|h| ws.gate.store().read_blob(&h).ok())
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .unwrap_or_default()
        };
        let side = |text: &str| {
            let syntax = Syntax::new(language, &Document::from_text(text));
            let starts: Vec<usize> = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect();
            (syntax, starts)
        };
        let (old, new) = (side(&read(before_hash)), side(&read(after_hash)));
        for h in hunks.iter_mut() {
            let (mut o, mut n) = (
                h.hunk.old_start.saturating_sub(1),
                h.hunk.new_start.saturating_sub(1),
            );
            h.spans = h
                .hunk
                .lines
                .iter()
                .map(|line| {
                    let ((syntax, starts), at) = match line.kind {
                        LineKind::Removed => {
                            o += 1;
                            (&old, o - 1)
                        }
                        LineKind::Added => {
                            n += 1;
                            (&new, n - 1)
                        }
                        LineKind::Context => {
                            o += 1;
                            n += 1;
                            (&new, n - 1)
                        }
                    };
                    let Some(&start) = starts.get(at) else {
                        return Vec::new();
                    };
                    let end = start + line.text.len();
                    syntax
                        .highlights(start..end)
                        .into_iter()
                        .map(|(r, kind)| (r.start - start..r.end.min(end) - start, kind))
                        .collect()
                })
                .collect();
        }
    }
}

/// Names a hunk's change: its path, its lines with their context, and
/// which of the file's hunks with the same lines it is (not where they
/// are, so a hunk kept stays kept when lines above it move; two hunks that
/// make the same change in different places are told apart by their
/// context, or their order).
fn fingerprint(path: &NormalizedPath, hunk: &TextHunk, occurrence: usize) -> String {
    let mut h = cocode_core::snapshot::ContentHasher::new();
    h.update(path.as_str().as_bytes());
    for line in &hunk.lines {
        let tag: &[u8] = match line.kind {
            LineKind::Context => b"\0 ",
            LineKind::Removed => b"\0-",
            LineKind::Added => b"\0+",
        };
        h.update(tag);
        h.update(line.text.as_bytes());
    }
    h.update(format!("\0#{occurrence}").as_bytes());
    h.finish().to_hex()[..24].to_owned()
}

/// The fingerprints of a file's hunks, in order.
fn fingerprints(path: &NormalizedPath, hunks: &[TextHunk]) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    hunks
        .iter()
        .map(|hunk| {
            let first = fingerprint(path, hunk, 0);
            let n = seen.entry(first.clone()).or_insert(0);
            *n += 1;
            if *n == 1 {
                first
            } else {
                fingerprint(path, hunk, *n - 1)
            }
        })
        .collect()
}

/// Whether the file (and the old path of a rename) still holds what the
/// reviewed part left, and this task made its last recorded change.
fn undo_possible(
    ws: &OpenWorkspace,
    id: &TaskId,
    path: &NormalizedPath,
    previous_path: Option<&NormalizedPath>,
    after: Option<ContentHash>,
    content: &FileContent,
) -> Result<(), String> {
    match content {
        FileContent::TooLarge => {
            return Err(
                "its content was too large to keep, so history cannot put it back".to_owned(),
            );
        }
        FileContent::NotAFile { what } => {
            return Err(format!("it is {what}: roll the task back to undo it"));
        }
        FileContent::Text(_) | FileContent::Binary => {}
    }
    let checks = std::iter::once((path, after)).chain(previous_path.map(|p| (p, None)));
    for (p, expected) in checks {
        let name = if p == path {
            "the file".to_owned()
        } else {
            p.to_string()
        };
        match ws.gate.store().last_snapshot_of_path(p) {
            Ok(Some(last)) if last.task_id() == id => {}
            Ok(Some(last)) => {
                return Err(format!(
                    "task {} changed {name} after this task",
                    last.task_id()
                ));
            }
            Ok(None) => return Err(format!("{name} has no record in the history")),
            Err(e) => return Err(format!("the history cannot be read: {e}")),
        }
        let now = match std::fs::read(ws.layout.workspace_root().join(p.as_str())) {
            Ok(bytes) => Some(ContentHash::of(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("{name} cannot be read: {e}")),
        };
        if now != expected {
            return Err(format!(
                "{name} changed after this part of the task (a person, a tool or a later turn changed it)"
            ));
        }
    }
    Ok(())
}

/// Undoes hunk `hunk` (1-based) of `path` in `review`, or the whole file
/// when `hunk` is `None`, through the gate under leases, as the task's own
/// `review` snapshots. Refused, touching nothing, when the file changed
/// since the review was computed.
pub async fn undo(
    ws: &OpenWorkspace,
    leases: &dyn EditLockRegistry,
    review: &TaskReview,
    path: &str,
    hunk: Option<usize>,
) -> Result<Vec<EditSnapshot>, UndoError> {
    let file = review.file(path).ok_or_else(|| UndoError::NoSuchFile {
        path: path.to_owned(),
    })?;
    let changes = undo_changes(ws, file, hunk)?;
    let touched: Vec<NormalizedPath> = changes.iter().map(|c| c.path.clone()).collect();
    let ctx = TaskContext {
        task_id: review.task_id.clone(),
        session_id: SessionId::new(format!("{}-review", review.task_id))
            .map_err(|e| UndoError::Failed(e.to_string()))?,
        attempt_no: AttemptNo(0),
    };
    let applied = with_leases(leases, &touched, &ctx, async {
        ws.gate.apply_review(&review.task_id, &changes)
    })
    .await
    .map_err(|e| UndoError::Failed(e.to_string()))?;
    applied.map_err(|e| match e.code {
        WorkspaceErrorCode::RevisionConflict => UndoError::Conflict {
            path: e.path,
            code: e.code.as_str(),
            message: e.message,
        },
        _ => UndoError::Failed(e.to_string()),
    })
}

/// The gate changes an undo makes.
fn undo_changes(
    ws: &OpenWorkspace,
    file: &ReviewFile,
    hunk: Option<usize>,
) -> Result<Vec<ReviewChange>, UndoError> {
    let path = file.path.as_str().to_owned();
    if let Err(reason) = &file.undo {
        return Err(UndoError::Refused {
            path,
            reason: reason.clone(),
        });
    }
    let read = |hash: Option<ContentHash>| -> Result<Option<Vec<u8>>, UndoError> {
        hash.map(|h| ws.gate.store().read_blob(&h))
            .transpose()
            .map_err(|e| UndoError::Failed(format!("history cannot be read: {e}")))
    };
    let Some(number) = hunk else {
        let mut changes = vec![ReviewChange {
            path: file.path.clone(),
            expected: file.after,
            content: if file.previous_path.is_some() {
                None
            } else {
                read(file.before)?
            },
        }];
        if let Some(from) = &file.previous_path {
            changes.push(ReviewChange {
                path: from.clone(),
                expected: None,
                content: read(file.before)?,
            });
        }
        return Ok(changes);
    };
    let count = file.hunks().len();
    if number == 0 || number > count {
        return Err(UndoError::NoSuchHunk {
            path,
            number,
            count,
        });
    }
    let text = |hash| -> Result<String, UndoError> {
        String::from_utf8(read(hash)?.unwrap_or_default())
            .map_err(|_| UndoError::Failed("the content is no longer text".to_owned()))
    };
    let reverted = revert_hunk(&text(file.before)?, &text(file.after)?, number - 1).ok_or(
        UndoError::NoSuchHunk {
            path: path.clone(),
            number,
            count,
        },
    )?;
    Ok(vec![ReviewChange {
        path: file.path.clone(),
        expected: file.after,
        content: Some(reverted.into_bytes()),
    }])
}

/// Keeps hunk `hunk` (1-based) of `path`: it shows as reviewed from now
/// on, wherever its lines move.
pub fn keep(
    ws: &OpenWorkspace,
    review: &TaskReview,
    path: &str,
    hunk: usize,
) -> anyhow::Result<()> {
    let file = review
        .file(path)
        .with_context(|| format!("{path} is not among the reviewed files"))?;
    let Some(h) = file.hunks().iter().find(|h| h.number == hunk) else {
        anyhow::bail!("{path} has no hunk {hunk} (it has {})", file.hunks().len());
    };
    let mut state = load_state(ws, &review.task_id)?;
    if !state.kept.contains(&h.fingerprint) {
        state.kept.push(h.fingerprint.clone());
    }
    save_state(ws, &review.task_id, &state)
}

/// Marks `path` viewed (or not) at the content the review shows; a later
/// change of the file clears it.
pub fn set_viewed(
    ws: &OpenWorkspace,
    review: &TaskReview,
    path: &str,
    viewed: bool,
) -> anyhow::Result<()> {
    let file = review
        .file(path)
        .with_context(|| format!("{path} is not among the reviewed files"))?;
    let mut state = load_state(ws, &review.task_id)?;
    state.viewed.retain(|v| v.path != path);
    if viewed {
        state.viewed.push(ViewedFile {
            path: path.to_owned(),
            revision: revision(file.after),
        });
    }
    save_state(ws, &review.task_id, &state)
}

/// Marks everything `review` saw as reviewed: "since your last review"
/// starts after it.
pub fn mark_reviewed(ws: &OpenWorkspace, review: &TaskReview) -> anyhow::Result<()> {
    let mut state = load_state(ws, &review.task_id)?;
    state.reviewed_upto = review.newest_seq.max(state.reviewed_upto);
    save_state(ws, &review.task_id, &state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_rust_files_hunk_lines_are_coloured_from_their_own_side() {
        use cocode_core::gate::{GateOp, WorkspaceFileGate as _};
        let dir = tempfile::tempdir().unwrap();
        #[expect(
            clippy::disallowed_methods,
            reason = "the folder's file before it opens"
        )]
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
        let ws = OpenWorkspace::open(dir.path()).unwrap();
        let id = TaskId::new("t1").unwrap();
        let ctx = TaskContext {
            task_id: id.clone(),
            session_id: SessionId::new("s1").unwrap(),
            attempt_no: AttemptNo(0),
        };
        ws.gate
            .apply(
                &ctx,
                GateOp::Write {
                    path: NormalizedPath::try_from("a.rs".to_owned()).unwrap(),
                    bytes: b"fn b() {}\n".to_vec(),
                },
            )
            .unwrap();
        let mut shown = review(&ws, &id, ReviewScope::All).unwrap();
        assert!(
            shown.files[0].hunks()[0].spans.is_empty(),
            "plain until coloured"
        );
        highlight(&ws, &mut shown);
        let hunk = &shown.files[0].hunks()[0];
        let keyword = (0..2, cocode_editor::Highlight::Keyword);
        assert_eq!(hunk.spans.len(), 2);
        for line in &hunk.spans {
            assert_eq!(line.first(), Some(&keyword), "{line:?}");
            assert!(
                line.iter()
                    .any(|(r, k)| *r == (3..4) && *k == cocode_editor::Highlight::Function),
                "{line:?}"
            );
        }
    }

    #[test]
    fn the_same_change_in_two_places_is_two_hunks_to_keep_and_a_kept_one_survives_moves() {
        let path = NormalizedPath::try_from("a.rs".to_owned()).unwrap();
        let block = |name: &str| {
            format!("fn {name}() {{\n    1\n    2\n    3\n    old\n    4\n    5\n    6\n}}\n")
        };
        let before = [block("a"), block("b"), block("a")].concat();
        let after = before.replace("old", "new");
        let prints = fingerprints(&path, &text_hunks(&before, &after));
        assert_eq!(prints.len(), 3);
        // Same lines and context (the first and third): told apart by order.
        assert_ne!(prints[0], prints[2]);
        assert_ne!(prints[0], prints[1]);
        // Lines added above move the hunks, not their names.
        let moved_before = format!("// top\n{before}");
        let moved_after = format!("// top\n{after}");
        assert_eq!(
            fingerprints(&path, &text_hunks(&moved_before, &moved_after)),
            prints
        );
    }
}
