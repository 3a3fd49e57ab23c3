//! `cocode task review` and `cocode task undo`: a task's changes as a
//! diff a person reads hunk by hunk, and undoing one of them.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use anyhow::{Context as _, bail};
use cocode_core::TaskId;
use cocode_core::ids::AttemptNo;
use cocode_workspace::diff::LineKind;
use cocode_workspace::{LeaseRegistry, OpenWorkspace};

use crate::cli::args::ReviewScopeFlags;
use crate::host::root::HostRoot;
use crate::host::task_review::{self, FileContent, ReviewFile, ReviewScope, TaskReview, UndoError};

fn scope_of(flags: ReviewScopeFlags) -> anyhow::Result<ReviewScope> {
    Ok(match flags {
        ReviewScopeFlags { all: true, .. } => ReviewScope::All,
        ReviewScopeFlags {
            attempt: Some(0), ..
        } => bail!("attempts are numbered from 1 (the first attempt is attempt 1)"),
        ReviewScopeFlags {
            attempt: Some(k), ..
        } => ReviewScope::Attempt(AttemptNo(k - 1)),
        ReviewScopeFlags {
            message: Some(0), ..
        } => bail!("messages are numbered from 1 (the prompt is message 1)"),
        ReviewScopeFlags {
            message: Some(k), ..
        } => ReviewScope::Message(k),
        ReviewScopeFlags { call: Some(0), .. } => {
            bail!("tool calls are numbered from 1, as `task review --messages` lists them")
        }
        ReviewScopeFlags { call: Some(k), .. } => ReviewScope::Call(k),
        ReviewScopeFlags { .. } => ReviewScope::SinceReview,
    })
}

fn open(workspace: &Path, id: &str) -> anyhow::Result<(OpenWorkspace, TaskId)> {
    let ws = OpenWorkspace::open(workspace)
        .with_context(|| format!("opening {}", workspace.display()))?;
    let id = TaskId::new(id).with_context(|| format!("“{id}” is not a task id"))?;
    if !ws.layout.task_record(&id).is_file() {
        bail!("no task {id} in this workspace");
    }
    Ok((ws, id))
}

/// `cocode task review ID`: prints the task's changes in a scope, hunks
/// numbered from 1 in each file; `--mark-reviewed` then moves the task's
/// "last review" marker past them.
pub fn review(
    workspace: &Path,
    id: &str,
    flags: ReviewScopeFlags,
    mark: bool,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let scope = scope_of(flags)?;
    let (ws, id) = open(workspace, id)?;
    // Marking writes only the task's review record (atomically), never a
    // file of the workspace: it may run while a task runs.
    let review = task_review::review(&ws, &id, scope)?;
    print_review(&review, out)?;
    if mark {
        task_review::mark_reviewed(&ws, &review)?;
        writeln!(
            out,
            "marked reviewed: the next review shows what changes after this"
        )?;
    }
    Ok(0)
}

/// The review as a person reads it.
pub fn print_review(review: &TaskReview, out: &mut dyn Write) -> anyhow::Result<()> {
    let first = review.scope == ReviewScope::SinceReview && review.reviewed_upto.is_none();
    let scope = if first {
        "all of the task's changes (not reviewed before)".to_owned()
    } else {
        review.scope.to_string()
    };
    if review.files.is_empty() {
        writeln!(out, "task {}: {scope}: nothing", review.task_id)?;
        return Ok(());
    }
    writeln!(
        out,
        "task {}: {scope}: {} file(s), {} hunk(s)",
        review.task_id,
        review.files.len(),
        review.hunk_count()
    )?;
    for file in &review.files {
        writeln!(out)?;
        print_file(file, out)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "undo a hunk: cocode task undo {} --path PATH --hunk N (without --hunk: the whole file)",
        review.task_id
    )?;
    Ok(())
}

fn print_file(file: &ReviewFile, out: &mut dyn Write) -> anyhow::Result<()> {
    let name = match &file.previous_path {
        Some(from) => format!("{from} → {}", file.path),
        None => file.path.to_string(),
    };
    let mut head = format!("{name} · {}", file.change.word());
    let (removed, added) = file.counts;
    if removed + added > 0 {
        let _ = write!(head, " · −{removed} +{added}");
    }
    if file.viewed {
        head.push_str(" · viewed");
    }
    writeln!(out, "{head}")?;
    match &file.content {
        FileContent::Text(hunks) => {
            for h in hunks {
                let kept = if h.kept { " · kept" } else { "" };
                writeln!(out, "{} hunk {}{kept}", h.hunk.header(), h.number)?;
                for line in &h.hunk.lines {
                    let sign = match line.kind {
                        LineKind::Context => ' ',
                        LineKind::Removed => '-',
                        LineKind::Added => '+',
                    };
                    let text = line.text.strip_suffix('\n').unwrap_or(&line.text);
                    writeln!(out, "{sign}{}", text.strip_suffix('\r').unwrap_or(text))?;
                    if !line.text.ends_with('\n') {
                        writeln!(out, "\\ No newline at end of file")?;
                    }
                }
            }
        }
        FileContent::Binary => writeln!(out, "  binary content: undo takes the whole file")?,
        FileContent::TooLarge => writeln!(out, "  too large to keep: history holds only its hash")?,
        FileContent::NotAFile { what } => writeln!(out, "  {what}")?,
    }
    if let Err(why) = &file.undo {
        writeln!(out, "  undo not possible now: {why}")?;
    }
    Ok(())
}

/// `cocode task review ID --messages`: the conversation's checkpoints and
/// the tool calls that changed files.
pub fn messages(workspace: &Path, id: &str, out: &mut dyn Write) -> anyhow::Result<u8> {
    let (ws, id) = open(workspace, id)?;
    for mark in task_review::messages(&ws, &id)? {
        writeln!(
            out,
            "message {}: {}",
            mark.number,
            cocode_core::shown::line(&mark.summary())
        )?;
    }
    writeln!(
        out,
        "restore the files to before message K: cocode rollback --task {id} --to-message K"
    )?;
    let calls = task_review::calls(&ws, &id)?;
    if !calls.is_empty() {
        writeln!(out)?;
        for call in &calls {
            writeln!(
                out,
                "tool call {}: {}",
                call.number,
                cocode_core::shown::line(&call.title)
            )?;
        }
        writeln!(
            out,
            "review what one changed: cocode task review {id} --call K"
        )?;
    }
    Ok(0)
}

/// `cocode task undo ID --path P [--hunk N]`: exit 0 when undone, 1 when
/// refused (nothing was touched).
pub fn undo(
    workspace: &Path,
    id: &str,
    path: &str,
    hunk: Option<usize>,
    flags: ReviewScopeFlags,
    root: &HostRoot,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let scope = scope_of(flags)?;
    let (ws, id) = open(workspace, id)?;
    let _writer = ws.lock_for_writing(&crate::host::workspace_host::holder_description())?;
    let review = task_review::review(&ws, &id, scope)?;
    let leases = LeaseRegistry::in_memory();
    let done = root
        .runtime()
        .block_on(task_review::undo(&ws, &leases, &review, path, hunk));
    ws.gate.flush().context("making the undo durable")?;
    match done {
        Ok(_) => {
            match hunk {
                Some(n) => writeln!(out, "undid hunk {n} of {path}")?,
                None => writeln!(out, "undid the task's change to {path}")?,
            }
            writeln!(
                out,
                "recorded as the task's own change: a rollback to its start still restores the file as it was"
            )?;
            Ok(0)
        }
        Err(e @ (UndoError::Conflict { .. } | UndoError::Refused { .. })) => {
            writeln!(out, "undo refused: {e}; nothing was touched")?;
            Ok(1)
        }
        Err(e) => Err(e.into()),
    }
}
