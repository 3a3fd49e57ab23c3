//! The Agent panel's transcript as data: every progress report of a task
//! becomes a typed entry — the person's message, the agent's message
//! (Markdown, streamed), its thinking, tool calls with their arguments,
//! results and diffs, commands with their output, verification records,
//! plans, retries and errors. The view draws each kind as a card and lays
//! out only the entries in sight; [`Transcript::text`] is its plain-text
//! projection. Memory is bounded: past [`MAX_ENTRIES`] entries or
//! [`MAX_TEXT_BYTES`] of text the oldest entries are dropped and counted.

use std::collections::VecDeque;
use std::fmt::Write as _;

use cocode_core::SnapshotKind;
use cocode_core::agent::{AgentEvent, ToolCallContent, ToolCallStatus};
use cocode_core::verification::VerificationOutcome;

use crate::host::orchestrator::Progress;
use crate::host::review::SnapshotRow;

/// Entries kept; older ones are dropped and counted.
pub const MAX_ENTRIES: usize = 2_000;
/// Text kept over all entries (bytes); older entries are dropped past it.
pub const MAX_TEXT_BYTES: usize = 8 * 1024 * 1024;
/// A streamed message longer than this goes on in a new entry, so that one
/// endless message cannot hold the whole budget.
pub const MAX_ENTRY_BYTES: usize = 256 * 1024;
/// Lines of a command's output kept in its entry (the last ones).
pub const TERMINAL_LINES: usize = 200;
/// How far back an update looks for the tool call it belongs to.
const CALL_LOOKBACK: usize = 256;

/// A tool call, updated in place as it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEntry {
    pub call_id: String,
    pub title: String,
    /// Where the call stands (pending, running, done, failed, cancelled).
    pub state: ToolCallStatus,
    /// Workspace-relative paths it touches.
    pub locations: Vec<String>,
    /// Its arguments (JSON text), when the backend reports them.
    pub input: Option<String>,
    /// What it returned, as text.
    pub output: Vec<String>,
    /// The file changes it made, each with its diff.
    pub changes: Vec<ChangeEntry>,
    /// Terminals whose output belongs to this call.
    pub terminals: Vec<String>,
}

/// One file a call changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeEntry {
    pub path: String,
    /// `created`, `modified`, `deleted` or `renamed` (as the review says).
    pub kind: String,
    pub diff: String,
}

/// A command's output once it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalEntry {
    pub terminal_id: String,
    /// The last [`TERMINAL_LINES`] lines.
    pub output: String,
    /// `None`: it was stopped.
    pub exit_code: Option<i32>,
    /// Earlier output is not kept (by the agent or by this entry).
    pub cut: bool,
}

/// One verification record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationEntry {
    pub method: String,
    pub outcome: String,
    /// `Some(true)` passed, `Some(false)` failed, `None` no target.
    pub passed: Option<bool>,
    /// The stable code of a failure class or a missing target.
    pub code: Option<String>,
    pub attempt: u32,
    pub duration_ms: u64,
    pub errors: Option<u32>,
    pub warnings: Option<u32>,
    pub exit_code: Option<i32>,
    /// What the check found (failing tests, errors with their place),
    /// notes and what to do, one line each (`detail_lines`).
    pub details: Vec<String>,
    /// The lines of its output that say what failed, when it failed.
    pub output: Option<String>,
}

/// One entry of the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// What the person asked.
    User(String),
    /// The agent's message, Markdown.
    Assistant(String),
    /// The agent's thinking (shown collapsed).
    Thinking(String),
    Tool(Box<ToolEntry>),
    Terminal(TerminalEntry),
    Verification(VerificationEntry),
    /// An ACP agent's plan: (step, done).
    Plan(Vec<(String, bool)>),
    /// The task's state changed (already in words).
    Status {
        from: String,
        to: String,
    },
    Note(String),
    /// A provider request is sent again; what it streamed was discarded.
    Retry {
        attempt: u32,
        max: u32,
        code: String,
    },
    /// An error the run could not recover from.
    Failure {
        code: String,
        message: String,
    },
    /// Tokens one model request used, and what it cost.
    Usage(Spent),
    /// The conversation was compacted to stay within the model's context
    /// window: what it did in words, and the model's summary when there
    /// was one.
    Compacted {
        words: String,
        summary: Option<String>,
    },
    /// How the task ended, in words.
    Ended(String),
}

impl Entry {
    /// The text this entry holds (its share of [`MAX_TEXT_BYTES`]).
    fn weight(&self) -> usize {
        let strings = |v: &[String]| v.iter().map(String::len).sum::<usize>();
        64 + match self {
            Self::User(t)
            | Self::Assistant(t)
            | Self::Thinking(t)
            | Self::Note(t)
            | Self::Ended(t) => t.len(),
            Self::Tool(t) => {
                t.title.len()
                    + strings(&t.locations)
                    + t.input.as_ref().map_or(0, String::len)
                    + strings(&t.output)
                    + t.changes
                        .iter()
                        .map(|c| c.path.len() + c.diff.len())
                        .sum::<usize>()
            }
            Self::Terminal(t) => t.output.len(),
            Self::Plan(steps) => steps.iter().map(|(s, _)| s.len()).sum(),
            Self::Failure { code, message } => code.len() + message.len(),
            Self::Compacted { words, summary } => {
                words.len() + summary.as_ref().map_or(0, String::len)
            }
            Self::Verification(_) | Self::Status { .. } | Self::Retry { .. } | Self::Usage(_) => 0,
        }
    }
}

/// The transcript of the panel's current conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    entries: VecDeque<Entry>,
    /// The last entry is a message still streaming.
    open: bool,
    /// Entries dropped from the start to stay within the bounds.
    dropped: usize,
    /// Sum of the kept entries' weights.
    bytes: usize,
    /// The agent's context window: (used, size) tokens, as last reported.
    context: Option<(u64, u64)>,
    /// Tokens used so far in this conversation: (input, output).
    tokens: Spent,
}

impl Transcript {
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    pub fn entries(&self) -> &VecDeque<Entry> {
        &self.entries
    }

    /// Entries dropped from the start.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The agent's context window use: (used, size) tokens.
    pub fn context(&self) -> Option<(u64, u64)> {
        self.context
    }

    /// Tokens used so far in this conversation, as the provider reported
    /// them, and their cost when the person's table prices the model.
    pub fn tokens(&self) -> Spent {
        self.tokens
    }

    /// The person's message.
    pub fn push_user(&mut self, text: &str) {
        self.push(Entry::User(text.to_owned()));
    }

    /// How the task ended.
    pub fn push_end(&mut self, summary: &str) {
        self.push(Entry::Ended(summary.to_owned()));
    }

    /// A line of its own (rollbacks, errors of the window's service).
    pub fn push_note(&mut self, text: &str) {
        self.push(Entry::Note(text.to_owned()));
    }

    /// Files changed while call `call_id` ran (the host's snapshots; an
    /// empty id or an unknown call: changes of their own).
    pub fn attach_changes(&mut self, call_id: &str, rows: &[SnapshotRow]) {
        let changes: Vec<ChangeEntry> = rows
            .iter()
            .map(|r| ChangeEntry {
                path: r.path.clone(),
                kind: r.kind.clone(),
                diff: r.diff.clone(),
            })
            .collect();
        match self.find_call(call_id) {
            Some(i) if !call_id.is_empty() => self.modify(i, |e| {
                if let Entry::Tool(t) = e {
                    t.changes.extend(changes);
                }
            }),
            _ => self.push(Entry::Tool(Box::new(ToolEntry {
                call_id: String::new(),
                title: "changes".to_owned(),
                state: ToolCallStatus::Completed,
                locations: changes.iter().map(|c| c.path.clone()).collect(),
                input: None,
                output: Vec::new(),
                changes,
                terminals: Vec::new(),
            }))),
        }
    }

    /// Adds what one progress report says.
    pub fn apply(&mut self, p: &Progress) {
        match p {
            Progress::Created(id) => self.push(Entry::Note(format!("task {id} created"))),
            Progress::Status { from, to } => self.push(Entry::Status {
                from: from.phrase().to_owned(),
                to: to.phrase().to_owned(),
            }),
            Progress::Verification(r) => {
                let (passed, code) = match r.outcome() {
                    VerificationOutcome::Pass => (Some(true), None),
                    VerificationOutcome::Fail(class) => (Some(false), wire_code(&class)),
                    VerificationOutcome::NoTarget(code) => (None, wire_code(&code)),
                };
                let facts = r.facts();
                self.push(Entry::Verification(VerificationEntry {
                    method: r.method().phrase().to_owned(),
                    outcome: r.phrase(),
                    passed,
                    code,
                    attempt: r.attempt_no().ordinal(),
                    duration_ms: facts.duration_ms,
                    errors: facts.diagnostics_count.map(|c| c.error),
                    warnings: facts.diagnostics_count.map(|c| c.warning),
                    exit_code: facts.exit_code,
                    details: r.detail_lines(),
                    output: None,
                }));
            }
            Progress::VerificationOutput {
                method, excerpt, ..
            } => {
                let method = method.phrase();
                if let Some(Entry::Verification(v)) = self
                    .entries
                    .iter_mut()
                    .rev()
                    .find(|e| matches!(e, Entry::Verification(v) if v.method == method))
                {
                    v.output = Some(excerpt.clone());
                }
            }
            Progress::Note(text) => self.push(Entry::Note(text.clone())),
            Progress::Reply(text) => self.push(Entry::User(text.clone())),
            Progress::Agent(event) => self.apply_agent(event),
        }
    }

    fn apply_agent(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::MessageDelta(text) => self.stream(text, Entry::Assistant),
            AgentEvent::ThoughtDelta(text) => self.stream(text, Entry::Thinking),
            AgentEvent::ToolCallUpdate(u) => self.update_call(u),
            AgentEvent::Plan(entries) => {
                let steps = entries
                    .iter()
                    .map(|e| (e.content.clone(), e.done))
                    .collect();
                // A plan is sent whole each time: the last one is replaced
                // while nothing but tool calls came after it.
                let last_plan = self
                    .entries
                    .iter()
                    .rposition(|e| !matches!(e, Entry::Tool(_)))
                    .filter(|&i| matches!(self.entries[i], Entry::Plan(_)));
                match last_plan {
                    Some(i) => self.modify(i, |e| *e = Entry::Plan(steps)),
                    None => self.push(Entry::Plan(steps)),
                }
            }
            AgentEvent::ModeChanged(mode) => self.push(Entry::Note(format!("mode: {mode}"))),
            AgentEvent::Compacted {
                before,
                after,
                left_out,
                summarized,
                summary,
                ..
            } => self.push(Entry::Compacted {
                words: crate::host::progress::compacted_words(
                    *before,
                    *after,
                    *left_out,
                    *summarized,
                ),
                summary: summary.clone(),
            }),
            AgentEvent::ModelMismatch { asked, answered } => self.push(Entry::Note(format!(
                "the server answered with model {answered}, not the {asked} asked for"
            ))),
            AgentEvent::ContextUsage { used, size } => self.context = Some((*used, *size)),
            AgentEvent::TokenUsage { .. } => {
                if let Some(spent) = Spent::of(event) {
                    self.tokens.add(spent);
                    self.push(Entry::Usage(spent));
                }
            }
            AgentEvent::TurnEnded { .. } => self.open = false,
            AgentEvent::TransportClosed { reason } => {
                self.push(Entry::Note(format!(
                    "the agent's connection closed: {reason}"
                )));
            }
            AgentEvent::Retrying { attempt, max, code } => {
                // What the failed request streamed is void.
                if self.open && matches!(self.entries.back(), Some(Entry::Assistant(_))) {
                    self.pop_back();
                }
                self.push(Entry::Retry {
                    attempt: *attempt,
                    max: *max,
                    code: code.clone(),
                });
            }
            AgentEvent::Failed { code, message } => self.push(Entry::Failure {
                code: code.clone(),
                message: message.clone(),
            }),
            AgentEvent::TerminalOutput {
                terminal_id,
                output,
                exit_code,
                truncated,
            } => {
                let lines: Vec<&str> = output.lines().collect();
                let kept = &lines[lines.len().saturating_sub(TERMINAL_LINES)..];
                self.push(Entry::Terminal(TerminalEntry {
                    terminal_id: terminal_id.clone(),
                    output: kept.join("\n"),
                    exit_code: *exit_code,
                    cut: *truncated || kept.len() < lines.len(),
                }));
            }
            // Requests reach the host, not the transcript; commands the
            // agent offers are not shown.
            _ => {}
        }
    }

    /// Appends streamed text to the open entry of its kind, or starts one.
    fn stream(&mut self, text: &str, make: fn(String) -> Entry) {
        let same_kind =
            |e: &Entry| std::mem::discriminant(e) == std::mem::discriminant(&make(String::new()));
        let last = self.entries.len().wrapping_sub(1);
        let fits = |e: &Entry| match e {
            Entry::Assistant(t) | Entry::Thinking(t) => t.len() + text.len() <= MAX_ENTRY_BYTES,
            _ => false,
        };
        match self.entries.back() {
            Some(e) if self.open && same_kind(e) && fits(e) => self.modify(last, |e| {
                if let Entry::Assistant(t) | Entry::Thinking(t) = e {
                    t.push_str(text);
                }
            }),
            _ => {
                self.push(make(text.to_owned()));
                self.open = true;
            }
        }
    }

    fn find_call(&self, call_id: &str) -> Option<usize> {
        let len = self.entries.len();
        (len.saturating_sub(CALL_LOOKBACK)..len)
            .rev()
            .find(|&i| matches!(&self.entries[i], Entry::Tool(t) if t.call_id == call_id))
    }

    fn update_call(&mut self, u: &cocode_core::agent::ToolCallUpdate) {
        let i = if let Some(i) = self.find_call(&u.call_id) {
            i
        } else {
            self.push(Entry::Tool(Box::new(ToolEntry {
                call_id: u.call_id.clone(),
                title: String::new(),
                state: u.status,
                locations: Vec::new(),
                input: None,
                output: Vec::new(),
                changes: Vec::new(),
                terminals: Vec::new(),
            })));
            self.entries.len() - 1
        };
        self.modify(i, |e| {
            let Entry::Tool(t) = e else { return };
            t.state = u.status;
            if let Some(title) = &u.title {
                t.title.clone_from(title);
            }
            if !u.locations.is_empty() {
                t.locations.clone_from(&u.locations);
            }
            for c in &u.content {
                match c {
                    ToolCallContent::Input(text) => t.input = Some(text.clone()),
                    ToolCallContent::Text(text) => {
                        if !t.output.contains(text) {
                            t.output.push(text.clone());
                        }
                    }
                    ToolCallContent::Diff {
                        path,
                        old_text,
                        new_text,
                    } => {
                        let change = agent_diff(path, old_text.as_deref(), new_text);
                        if !t.changes.contains(&change) {
                            t.changes.push(change);
                        }
                    }
                    ToolCallContent::Terminal { terminal_id } => {
                        if !t.terminals.contains(terminal_id) {
                            t.terminals.push(terminal_id.clone());
                        }
                    }
                }
            }
        });
    }

    /// Changes entry `i` in place, keeping the weights true.
    fn modify(&mut self, i: usize, f: impl FnOnce(&mut Entry)) {
        let entry = &mut self.entries[i];
        self.bytes -= entry.weight();
        f(entry);
        self.bytes += entry.weight();
        self.trim();
    }

    fn push(&mut self, entry: Entry) {
        self.open = false;
        self.bytes += entry.weight();
        self.entries.push_back(entry);
        self.trim();
    }

    fn pop_back(&mut self) {
        if let Some(e) = self.entries.pop_back() {
            self.bytes -= e.weight();
        }
        self.open = false;
    }

    /// Drops the oldest entries past the bounds (never the last one).
    fn trim(&mut self) {
        while self.entries.len() > 1
            && (self.entries.len() > MAX_ENTRIES || self.bytes > MAX_TEXT_BYTES)
        {
            if let Some(e) = self.entries.pop_front() {
                self.bytes -= e.weight();
                self.dropped += 1;
            }
        }
    }

    /// The transcript as plain text: one block per entry.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if self.dropped > 0 {
            let _ = writeln!(out, "… {} earlier entries are not kept", self.dropped);
        }
        for e in &self.entries {
            entry_text(&mut out, e);
        }
        out
    }
}

/// A code's stable wire name (`failure:code_defect`).
fn wire_code(code: &impl serde::Serialize) -> Option<String> {
    serde_json::to_value(code)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
}

/// A diff an external agent reports, as the review shows diffs.
fn agent_diff(path: &str, old_text: Option<&str>, new_text: &str) -> ChangeEntry {
    let kind = if old_text.is_some() {
        SnapshotKind::Modify
    } else {
        SnapshotKind::Create
    }
    .phrase();
    let diff = match cocode_core::path::NormalizedPath::try_from(path.to_owned()) {
        Ok(p) => cocode_workspace::diff::unified(
            &p,
            None,
            old_text.map(str::as_bytes),
            Some(new_text.as_bytes()),
        ),
        Err(_) => format!("(a path outside the workspace: {path})"),
    };
    ChangeEntry {
        path: path.to_owned(),
        kind: kind.to_owned(),
        diff,
    }
}

/// A tool's name as a person reads it.
pub fn tool_words(tool: &str) -> &str {
    match tool.rsplit('.').next().unwrap_or(tool) {
        "writeFile" => "write a file",
        "createFile" => "create a file",
        "applyPatch" => "edit a file",
        "deleteFile" => "delete a file",
        "renameFile" => "rename a file",
        "applyEdits" => "edit files",
        "readFile" => "read a file",
        "getStatus" => "look at the workspace",
        "listFiles" | "list" => "list files",
        "search" => "search",
        "run" => "run a command",
        "diagnostics" => "check for problems",
        "finish" => "finish the task",
        "permission" => "go ahead",
        _ => tool,
    }
}

pub use crate::host::spent::{Spent, grouped};

/// A verification record in one line.
pub fn verification_line(v: &VerificationEntry) -> String {
    let mut line = format!("verify {}: {}", v.method, v.outcome);
    let mut facts = Vec::new();
    if let (Some(e), Some(w)) = (v.errors, v.warnings) {
        facts.push(format!("{e} error{}, {w} warning{}", plural(e), plural(w)));
    }
    if let Some(code) = v.exit_code {
        facts.push(format!("exit {code}"));
    }
    if let Some(code) = &v.code {
        facts.push(code.clone());
    }
    facts.push(format!("attempt {}", v.attempt));
    let _ = write!(line, " ({})", facts.join(", "));
    line
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn indented(out: &mut String, text: &str, prefix: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "{prefix}{line}");
    }
}

fn entry_text(out: &mut String, e: &Entry) {
    match e {
        Entry::User(t) => {
            out.push_str("you:\n");
            indented(out, t, "  ");
        }
        Entry::Assistant(t) => {
            out.push_str("agent:\n");
            indented(out, t, "  ");
        }
        Entry::Thinking(t) => {
            let _ = writeln!(out, "thinking ({} characters)", t.chars().count());
        }
        Entry::Tool(t) => {
            let title = if t.title.is_empty() {
                "tool"
            } else {
                tool_words(&t.title)
            };
            let _ = write!(out, "tool: {title}");
            for l in &t.locations {
                let _ = write!(out, " {l}");
            }
            let _ = writeln!(out, " [{}]", t.state.phrase());
            if let Some(input) = &t.input {
                out.push_str("  arguments:\n");
                indented(out, input, "    ");
            }
            for o in &t.output {
                out.push_str("  result:\n");
                indented(out, o, "    ");
            }
            for c in &t.changes {
                let _ = writeln!(out, "  {} {}:", c.kind, c.path);
                indented(out, &c.diff, "    ");
            }
            for id in &t.terminals {
                let _ = writeln!(out, "  terminal {id}");
            }
        }
        Entry::Terminal(t) => {
            let ended = t
                .exit_code
                .map_or_else(|| "was stopped".to_owned(), |c| format!("exited {c}"));
            let cut = if t.cut {
                " (earlier output not kept)"
            } else {
                ""
            };
            let _ = writeln!(out, "terminal {} {ended}{cut}", t.terminal_id);
            indented(out, &t.output, "  | ");
        }
        Entry::Verification(v) => {
            let _ = writeln!(out, "{}", verification_line(v));
            indented(out, &v.details.join("\n"), "  ");
            if let Some(output) = &v.output {
                out.push_str("  output:\n");
                indented(out, output, "  | ");
            }
        }
        Entry::Plan(steps) => {
            out.push_str("plan:\n");
            for (step, done) in steps {
                let _ = writeln!(out, "  [{}] {step}", if *done { "x" } else { " " });
            }
        }
        Entry::Status { from, to } => {
            let _ = writeln!(out, "status: {from} → {to}");
        }
        Entry::Note(t) | Entry::Ended(t) => {
            let _ = writeln!(out, "{t}");
        }
        Entry::Retry { attempt, max, code } => {
            let _ = writeln!(out, "retry {attempt}/{max} after {code}");
        }
        Entry::Failure { code, message } => {
            let _ = writeln!(out, "agent error {code}: {message}");
        }
        Entry::Usage(spent) => {
            let _ = writeln!(out, "{}", spent.words());
        }
        Entry::Compacted { words, summary } => {
            let _ = writeln!(out, "{words}");
            if let Some(summary) = summary {
                indented(out, summary, "  | ");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cocode_core::agent::ToolCallUpdate;
    use pretty_assertions::assert_eq;

    fn agent(e: AgentEvent) -> Progress {
        Progress::Agent(e)
    }

    fn call(id: &str, status: ToolCallStatus, content: Vec<ToolCallContent>) -> Progress {
        agent(AgentEvent::ToolCallUpdate(ToolCallUpdate {
            call_id: id.into(),
            title: Some("workspace.applyPatch".into()),
            status,
            locations: vec!["src/lib.rs".into()],
            content,
        }))
    }

    #[test]
    fn streamed_messages_join_and_other_entries_end_them() {
        let mut t = Transcript::default();
        t.push_user("fix it");
        t.apply(&agent(AgentEvent::MessageDelta("I will ".into())));
        t.apply(&agent(AgentEvent::MessageDelta("**edit** it.".into())));
        t.apply(&agent(AgentEvent::ThoughtDelta("hmm".into())));
        t.apply(&agent(AgentEvent::MessageDelta("Done.".into())));
        t.apply(&agent(AgentEvent::TurnEnded {
            reason: cocode_core::agent::TurnEndReason::EndTurn,
        }));
        t.apply(&agent(AgentEvent::MessageDelta("Next turn.".into())));
        assert_eq!(
            t.entries().iter().cloned().collect::<Vec<_>>(),
            vec![
                Entry::User("fix it".into()),
                Entry::Assistant("I will **edit** it.".into()),
                Entry::Thinking("hmm".into()),
                Entry::Assistant("Done.".into()),
                Entry::Assistant("Next turn.".into()),
            ]
        );
    }

    #[test]
    fn a_call_is_updated_in_place_with_its_arguments_result_and_diff() {
        let mut t = Transcript::default();
        t.apply(&call(
            "c1",
            ToolCallStatus::InProgress,
            vec![ToolCallContent::Input("{\"path\": \"src/lib.rs\"}".into())],
        ));
        t.apply(&call(
            "c1",
            ToolCallStatus::Completed,
            vec![ToolCallContent::Text("applied".into())],
        ));
        t.attach_changes(
            "c1",
            &[SnapshotRow {
                id: "s1".into(),
                seq: 1,
                attempt: 1,
                kind: "modified".into(),
                origin: "gate".into(),
                path: "src/lib.rs".into(),
                diff: "-a\n+b\n".into(),
            }],
        );
        assert_eq!(t.entries().len(), 1);
        assert_eq!(
            t.text(),
            "tool: edit a file src/lib.rs [done]\n  arguments:\n    {\"path\": \"src/lib.rs\"}\n  result:\n    applied\n  modified src/lib.rs:\n    -a\n    +b\n"
        );
    }

    #[test]
    fn an_external_agents_diff_is_shown_as_a_unified_diff() {
        let mut t = Transcript::default();
        t.apply(&call(
            "c2",
            ToolCallStatus::Completed,
            vec![ToolCallContent::Diff {
                path: "a.txt".into(),
                old_text: Some("one\ntwo\n".into()),
                new_text: "one\n2\n".into(),
            }],
        ));
        let Some(Entry::Tool(tool)) = t.entries().back() else {
            panic!("{t:?}")
        };
        assert_eq!(
            tool.changes,
            vec![ChangeEntry {
                path: "a.txt".into(),
                kind: "modified".into(),
                diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n".into(),
            }]
        );
    }

    #[test]
    fn a_retry_discards_what_the_failed_request_streamed() {
        let mut t = Transcript::default();
        t.apply(&agent(AgentEvent::MessageDelta("half an ans".into())));
        t.apply(&agent(AgentEvent::Retrying {
            attempt: 1,
            max: 2,
            code: "PROVIDER_UNAVAILABLE".into(),
        }));
        t.apply(&agent(AgentEvent::MessageDelta("The answer.".into())));
        assert_eq!(
            t.text(),
            "retry 1/2 after PROVIDER_UNAVAILABLE\nagent:\n  The answer.\n"
        );
    }

    #[test]
    fn a_plan_is_replaced_while_only_tool_calls_follow_it() {
        let mut t = Transcript::default();
        let plan = |done| {
            agent(AgentEvent::Plan(vec![cocode_core::agent::PlanEntry {
                content: "edit".into(),
                done,
            }]))
        };
        t.apply(&plan(false));
        t.apply(&call("c1", ToolCallStatus::Completed, Vec::new()));
        t.apply(&plan(true));
        assert_eq!(t.entries().len(), 2);
        assert_eq!(t.entries()[0], Entry::Plan(vec![("edit".into(), true)]));
        t.apply(&agent(AgentEvent::MessageDelta("ok".into())));
        t.apply(&plan(false));
        assert_eq!(t.entries().len(), 4, "after a message a new plan is shown");
    }

    #[test]
    fn the_bounds_drop_the_oldest_entries_and_count_them() {
        let mut t = Transcript::default();
        for i in 0..MAX_ENTRIES + 5 {
            t.push_note(&format!("line {i}"));
        }
        assert_eq!(t.dropped(), 5);
        assert_eq!(t.entries().len(), MAX_ENTRIES);
        assert_eq!(t.entries()[0], Entry::Note("line 5".into()));
        assert!(
            t.text()
                .starts_with("… 5 earlier entries are not kept\nline 5\n")
        );

        // One endless message is split into entries, and the text bound
        // holds.
        let mut t = Transcript::default();
        let chunk = "x".repeat(64 * 1024);
        for _ in 0..(2 * MAX_TEXT_BYTES / chunk.len()) {
            t.apply(&agent(AgentEvent::MessageDelta(chunk.clone())));
        }
        assert!(t.bytes <= MAX_TEXT_BYTES, "{}", t.bytes);
        assert!(t.dropped() > 0);
        assert!(t.entries().iter().all(|e| match e {
            Entry::Assistant(text) => text.len() <= MAX_ENTRY_BYTES,
            _ => false,
        }));
        assert_eq!(
            t.bytes,
            t.entries().iter().map(Entry::weight).sum::<usize>(),
            "the weights stay true"
        );
    }

    #[test]
    fn token_counts_are_shown_per_request_and_added_up() {
        let mut t = Transcript::default();
        for (input, output, cached, cost_micros) in
            [(1_234, 56, 0, None), (98_765, 4_321, 90_000, Some(123_456))]
        {
            t.apply(&agent(AgentEvent::TokenUsage {
                input,
                output,
                cached,
                cost_micros,
            }));
        }
        assert_eq!(
            t.tokens(),
            Spent {
                input: 99_999,
                output: 4_377,
                cached: 90_000,
                cost_micros: Some(123_456)
            }
        );
        assert_eq!(
            t.text(),
            "1,234 tokens in · 56 out\n98,765 tokens in (90,000 cached) · 4,321 out · $0.1235\n"
        );
        assert_eq!(
            t.tokens().words(),
            "99,999 tokens in (90,000 cached) · 4,377 out · $0.1235"
        );
        assert_eq!(grouped(1_000_000), "1,000,000");
        assert_eq!(grouped(999), "999");
    }

    #[test]
    fn a_commands_output_keeps_its_last_lines() {
        let mut t = Transcript::default();
        let output = (0..TERMINAL_LINES + 3)
            .map(|i| format!("l{i}"))
            .collect::<Vec<_>>()
            .join("\n");
        t.apply(&agent(AgentEvent::TerminalOutput {
            terminal_id: "t1".into(),
            output,
            exit_code: Some(2),
            truncated: false,
        }));
        let Some(Entry::Terminal(term)) = t.entries().back() else {
            panic!("{t:?}")
        };
        assert_eq!(
            (term.exit_code, term.cut, term.output.lines().next()),
            (Some(2), true, Some("l3"))
        );
    }
}
