//! The progress renderer: one progress report as the text a person reads
//! (the CLI's output and the Agent panel's transcript).

use std::fmt::Write as _;
use std::io::Write;

use cocode_core::agent::{AgentEvent, ToolCallStatus};
use cocode_core::shown;

use crate::host::orchestrator::Progress;
pub use crate::host::spent::{Spent, dollars, grouped};

/// The most lines of a finished terminal shown in the progress output.
const TERMINAL_TAIL_LINES: usize = 20;

/// Renders one progress report as text (the CLI's output and the Agent
/// panel's transcript).
pub fn print_progress(
    p: &Progress,
    out: &mut dyn Write,
    streaming: &mut bool,
) -> std::io::Result<()> {
    let mut line = |out: &mut dyn Write, text: String| {
        if *streaming {
            writeln!(out)?;
            *streaming = false;
        }
        writeln!(out, "{text}")
    };
    match p {
        Progress::Created(id) => line(out, format!("task {id} created")),
        Progress::Status { from, to } => {
            line(out, format!("status: {} → {}", from.phrase(), to.phrase()))
        }
        Progress::Agent(AgentEvent::MessageDelta(text)) => {
            *streaming = true;
            write!(out, "{}", shown::lines(text))?;
            out.flush()
        }
        Progress::Agent(AgentEvent::ToolCallUpdate(u)) => match u.status {
            ToolCallStatus::Pending | ToolCallStatus::InProgress => Ok(()),
            status => line(
                out,
                format!(
                    "  {}{}{} [{}]",
                    shown::line(u.title.as_deref().unwrap_or("tool")),
                    if u.locations.is_empty() { "" } else { " " },
                    shown::line(&u.locations.join(" ")),
                    status.phrase()
                ),
            ),
        },
        Progress::Agent(AgentEvent::Retrying { attempt, max, code }) => {
            line(out, format!("  retry {attempt}/{max} after {code}"))
        }
        Progress::Agent(AgentEvent::Failed { code, message }) => line(
            out,
            format!("agent error {code}: {}", shown::lines(message)),
        ),
        Progress::Agent(AgentEvent::ModeChanged(mode)) => line(out, format!("  mode: {mode}")),
        Progress::Agent(
            e @ (AgentEvent::TokenUsage { .. }
            | AgentEvent::Compacted { .. }
            | AgentEvent::ModelMismatch { .. }),
        ) => line(out, format!("  {}", model_words(e))),
        Progress::Agent(AgentEvent::TerminalOutput {
            terminal_id,
            output,
            exit_code,
            truncated,
        }) => {
            let ended =
                exit_code.map_or_else(|| "was stopped".to_owned(), |c| format!("exited {c}"));
            let lines: Vec<&str> = output.lines().collect();
            let shown = &lines[lines.len().saturating_sub(TERMINAL_TAIL_LINES)..];
            let mut text = format!("  terminal {terminal_id} {ended}");
            if *truncated || shown.len() < lines.len() {
                let _ = write!(text, " (last {} lines shown)", shown.len());
            }
            for l in shown {
                let _ = write!(text, "\n    | {}", shown::line(l));
            }
            line(out, text)
        }
        // The record's findings were printed with it; the output's own
        // failing lines only when it named nothing.
        Progress::Agent(_) | Progress::VerificationOutput { named: true, .. } => Ok(()),
        Progress::Verification(r) => {
            let mut text = format!("  verify {}: {}", r.method().phrase(), r.phrase());
            for detail in r.detail_lines() {
                let _ = write!(text, "\n    {detail}");
            }
            line(out, text)
        }
        Progress::VerificationOutput { excerpt, .. } => {
            let mut text = String::from("    what it printed (the lines that say what failed):");
            for l in excerpt.lines() {
                let _ = write!(text, "\n    | {}", shown::line(l));
            }
            line(out, text)
        }
        Progress::Note(text) => line(out, format!("  {text}")),
        Progress::Reply(text) => line(out, format!("you: {text}")),
    }
}

/// What the model's requests did, in words: their tokens and cost, a
/// compaction, another model answering.
fn model_words(event: &AgentEvent) -> String {
    match event {
        AgentEvent::TokenUsage { .. } => {
            format!("tokens: {}", Spent::of(event).unwrap_or_default().words())
        }
        AgentEvent::Compacted {
            before,
            after,
            left_out,
            summarized,
            ..
        } => compacted_words(*before, *after, *left_out, *summarized),
        AgentEvent::ModelMismatch { asked, answered } => {
            format!("the server answered with model {answered}, not the {asked} asked for")
        }
        _ => String::new(),
    }
}

/// A compaction in words: `context compacted: about 90,000 → 30,000 tokens
/// (12 old tool results left out, 40 messages summarized)`.
pub fn compacted_words(before: u64, after: u64, left_out: usize, summarized: usize) -> String {
    let mut did = Vec::new();
    if left_out > 0 {
        did.push(format!("{left_out} old tool result(s) left out"));
    }
    if summarized > 0 {
        did.push(format!("{summarized} earlier message(s) summarized"));
    }
    format!(
        "context compacted to stay within the model's window: about {} → {} tokens ({})",
        grouped(before),
        grouped(after),
        if did.is_empty() {
            "nothing to leave out".to_owned()
        } else {
            did.join(", ")
        }
    )
}
