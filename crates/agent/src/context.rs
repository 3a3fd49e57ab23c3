//! The conversation's budget: how many tokens a request will take, the
//! model's context window, and compaction — old large tool results left
//! out, then the older turns summarized by the model itself — before a
//! request would pass most of the window.
//!
//! Everything here is pure: the session decides when to compact and sends
//! the summary request; this module measures, cuts and rebuilds.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::conversation::{Message, ToolResultMessage};

/// A request is compacted before its estimate passes this share of the
/// model's window...
pub const COMPACT_AT: f64 = 0.8;
/// ...down to about this share, so that compaction is not needed again at
/// the next turn.
pub const COMPACT_TO: f64 = 0.5;

/// A tool result longer than this (bytes) is left out of turns older than
/// the ones kept whole.
pub const LARGE_RESULT_BYTES: usize = 1_024;

/// The assistant turns (each with its tool results) kept whole at the end
/// of the conversation when it is summarized.
pub const KEEP_TURNS: usize = 2;

/// The bytes of text one token stands for before the provider has counted
/// any request of the session (a conservative figure for code and JSON).
pub const INITIAL_BYTES_PER_TOKEN: f64 = 3.5;

/// Known context windows (tokens), by the start of the model's name; the
/// longest matching start wins. A provider's `context_window` setting
/// overrides it; a model not named here has no window until a provider's
/// "too long" error states it.
const KNOWN_WINDOWS: &[(&str, u64)] = &[
    ("claude-", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-2", 1_048_576),
    ("llama3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama3.3", 131_072),
    ("qwen2.5-coder", 32_768),
    ("qwen3", 40_960),
    ("mistral-large", 131_072),
    ("deepseek-chat", 65_536),
];

/// The context window of `model` from the table (a router's `vendor/`
/// prefix and case aside).
pub fn known_window(model: &str) -> Option<u64> {
    let name = model.rsplit('/').next().unwrap_or(model).to_lowercase();
    KNOWN_WINDOWS
        .iter()
        .filter(|(start, _)| name.starts_with(start))
        .max_by_key(|(start, _)| start.len())
        .map(|(_, window)| *window)
}

/// The window a provider's "too long" error states, when it says
/// (`OpenAI` and vLLM: "maximum context length is 128000 tokens";
/// Anthropic: "prompt is too long: 208310 tokens > 200000 maximum").
pub fn stated_window(message: &str) -> Option<u64> {
    let number_after = |marker: &str| {
        let at = message.find(marker)? + marker.len();
        let digits: String = message[at..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse::<u64>().ok()
    };
    number_after("maximum context length is")
        .or_else(|| number_after("context length of"))
        .or_else(|| {
            // "… tokens > 200000 maximum"
            let end = message.find(" maximum")?;
            let start = message[..end].rfind('>')? + 1;
            message[start..end].trim().parse().ok()
        })
}

/// Whether a provider's error says the request is longer than the model's
/// context window (each provider's own words).
pub fn says_too_long(message: &str) -> bool {
    let m = message.to_lowercase();
    m.contains("context_length_exceeded")
        || m.contains("prompt is too long")
        || m.contains("maximum context length")
        || m.contains("context window")
            && (m.contains("exceed") || m.contains("too long") || m.contains("too large"))
        || m.contains("greater than the context length")
        || m.contains("input is too long")
}

/// Bytes a message puts on the wire, roughly (its texts and arguments).
pub fn message_bytes(message: &Message) -> usize {
    const OVERHEAD: usize = 16;
    match message {
        Message::User(text) => text.len() + OVERHEAD,
        Message::Assistant(a) => {
            a.text.len()
                + OVERHEAD
                + a.tool_calls
                    .iter()
                    .map(|c| {
                        c.id.len()
                            + c.provider_name.len()
                            + Value::Object(c.arguments.clone()).to_string().len()
                            + OVERHEAD
                    })
                    .sum::<usize>()
        }
        Message::ToolResults(results) => results
            .iter()
            .map(|r| r.call_id.len() + r.content.len() + OVERHEAD)
            .sum(),
    }
}

/// The whole request's bytes: the system prompt, the tools' definitions
/// (`tools_bytes`, measured once per run) and the conversation.
pub fn request_bytes(system: &str, tools_bytes: usize, messages: &[Message]) -> usize {
    system.len() + tools_bytes + messages.iter().map(message_bytes).sum::<usize>()
}

/// Tokens for `bytes`, at the session's calibrated rate.
pub fn tokens(bytes: usize, bytes_per_token: f64) -> u64 {
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "an estimate of at most a few million tokens"
    )]
    let n = (bytes as f64 / bytes_per_token.max(0.5)).ceil() as u64;
    n
}

/// The rate a provider's count implies for a request of `bytes`, kept
/// within what text can be (1.5 to 8 bytes a token).
pub fn calibrated(bytes: usize, counted_tokens: u64) -> Option<f64> {
    if counted_tokens == 0 || bytes == 0 {
        return None;
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "a ratio of two counts well under 2^52"
    )]
    let rate = bytes as f64 / counted_tokens as f64;
    Some(rate.clamp(1.5, 8.0))
}

/// The name a call with `id` was made under, and what it was asked about
/// (its `path` argument, when it has one).
fn call_named(messages: &[Message], id: &str) -> (String, Option<String>) {
    messages
        .iter()
        .find_map(|m| match m {
            Message::Assistant(a) => a.tool_calls.iter().find(|c| c.id == id),
            _ => None,
        })
        .map_or_else(
            || ("a tool".to_owned(), None),
            |c| {
                (
                    c.provider_name.clone(),
                    c.arguments
                        .get("path")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                )
            },
        )
}

/// What stands in for a result left out.
fn left_out(name: &str, path: Option<&str>, bytes: usize) -> String {
    let what = path.map_or_else(|| name.to_owned(), |p| format!("{name} {p}"));
    json!({
        "left_out": format!(
            "the result of {what} ({bytes} bytes) was left out to keep the conversation within the model's context; call the tool again if you need it"
        )
    })
    .to_string()
}

/// Whether `content` already stands for a left-out result.
fn is_left_out(content: &str) -> bool {
    content.starts_with("{\"left_out\":")
}

/// Leaves out every tool result longer than `min_bytes` before message
/// `keep_from` (the turns after it stay whole). Returns how many.
pub fn leave_out_results(messages: &mut [Message], keep_from: usize, min_bytes: usize) -> usize {
    let mut count = 0;
    let keep_from = keep_from.min(messages.len());
    for i in 0..keep_from {
        let Message::ToolResults(results) = &messages[i] else {
            continue;
        };
        let long: Vec<(usize, String, Option<String>, usize)> = results
            .iter()
            .enumerate()
            .filter(|(_, r)| r.content.len() > min_bytes && !is_left_out(&r.content))
            .map(|(k, r)| {
                let (name, path) = call_named(&messages[..i], &r.call_id);
                (k, name, path, r.content.len())
            })
            .collect();
        if let Message::ToolResults(results) = &mut messages[i] {
            for (k, name, path, bytes) in long {
                results[k].content = left_out(&name, path.as_deref(), bytes);
                count += 1;
            }
        }
    }
    count
}

/// Where the conversation's kept end starts: the `keep_turns`-th assistant
/// message from the end (so the kept part begins with an assistant turn
/// and every tool result in it has its call). `None` when there is too
/// little before it to summarize.
pub fn kept_from(messages: &[Message], keep_turns: usize) -> Option<usize> {
    let assistants: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::Assistant(_)))
        .map(|(i, _)| i)
        .collect();
    let at = *assistants.get(assistants.len().checked_sub(keep_turns.max(1))?)?;
    // The first message (the person's request) is always kept; there must
    // be something between it and the kept end.
    (at > 1).then_some(at)
}

/// The messages before the kept end as text for the summary request: who
/// said what, each call with its arguments and (capped) result.
pub fn render_for_summary(messages: &[Message], result_cap: usize) -> String {
    let mut out = String::new();
    for message in messages {
        match message {
            Message::User(text) => {
                out.push_str("## The person\n");
                out.push_str(text);
                out.push_str("\n\n");
            }
            Message::Assistant(a) => {
                out.push_str("## You\n");
                if !a.text.is_empty() {
                    out.push_str(&a.text);
                    out.push('\n');
                }
                for c in &a.tool_calls {
                    let _ = writeln!(
                        out,
                        "called {} {}",
                        c.provider_name,
                        Value::Object(c.arguments.clone())
                    );
                }
                out.push('\n');
            }
            Message::ToolResults(results) => {
                for r in results {
                    out.push_str(if r.is_error {
                        "## Tool error\n"
                    } else {
                        "## Tool result\n"
                    });
                    out.push_str(&capped(&r.content, result_cap));
                    out.push_str("\n\n");
                }
            }
        }
    }
    out
}

/// `text` cut to about `cap` bytes (on a char boundary), saying how much
/// was cut.
fn capped(text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return text.to_owned();
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &text[..end], text.len() - end)
}

/// The instructions of the summary request.
pub const SUMMARY_SYSTEM: &str = "You summarize the first part of a conversation between a person and a coding agent (you) working in a workspace through tools, so that the agent can go on with the task from your summary alone; the rest of the conversation follows it unchanged. Write plain text under these headings: Goal (what the person asked, in their words where it matters); Decisions (what was decided and why); Files (each path read or changed, what changed, and the last revision seen); State (what is done, what failed and why, what comes next); Open questions. Be specific: paths, names, error codes, commands. Do not call tools.";

/// The conversation after compaction: the person's first request, the
/// summary of what came before the kept end, then the kept end.
pub fn rebuilt(messages: &[Message], kept_from: usize, summary: &str) -> Vec<Message> {
    let request = match messages.first() {
        Some(Message::User(text)) => text.clone(),
        _ => String::new(),
    };
    let mut out = Vec::with_capacity(messages.len() - kept_from + 1);
    out.push(Message::User(format!(
        "{request}\n\n[The conversation so far was summarized to stay within the model's context. Summary:]\n{}",
        summary.trim()
    )));
    out.extend_from_slice(&messages[kept_from..]);
    out
}

/// Messages as plain JSON, for the task's record of what the model saw
/// before a compaction.
pub fn messages_json(messages: &[Message]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| match m {
                Message::User(text) => json!({"role": "user", "text": text}),
                Message::Assistant(a) => json!({
                    "role": "assistant",
                    "text": a.text,
                    "tool_calls": a.tool_calls.iter().map(|c| json!({
                        "id": c.id,
                        "name": c.provider_name,
                        "arguments": Value::Object(c.arguments.clone()),
                    })).collect::<Vec<_>>(),
                }),
                Message::ToolResults(results) => json!({
                    "role": "tool",
                    "results": results.iter().map(|r: &ToolResultMessage| json!({
                        "call_id": r.call_id,
                        "content": r.content,
                        "is_error": r.is_error,
                    })).collect::<Vec<_>>(),
                }),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{AssistantMessage, StopReason, ToolCall};
    use pretty_assertions::assert_eq;

    fn call(id: &str, path: &str) -> Message {
        Message::Assistant(AssistantMessage {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: id.into(),
                provider_name: "workspace__readFile".into(),
                arguments: json!({"path": path}).as_object().unwrap().clone(),
            }],
            stop: StopReason::ToolUse,
        })
    }

    fn result(id: &str, bytes: usize) -> Message {
        Message::ToolResults(vec![ToolResultMessage {
            call_id: id.into(),
            content: "x".repeat(bytes),
            is_error: false,
        }])
    }

    /// The request, then `n` reads of 5,000 bytes each.
    fn reads(n: usize) -> Vec<Message> {
        let mut m = vec![Message::User("tidy the crate".into())];
        for k in 0..n {
            m.push(call(&format!("c{k}"), &format!("src/f{k}.rs")));
            m.push(result(&format!("c{k}"), 5_000));
        }
        m
    }

    #[test]
    fn windows_come_from_the_table_by_the_longest_start_and_from_the_providers_words() {
        assert_eq!(known_window("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known_window("anthropic/claude-sonnet-4.5"), Some(200_000));
        assert_eq!(known_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(known_window("GPT-4.1-2025-04-14"), Some(1_047_576));
        assert_eq!(known_window("my-local-model"), None);
        assert_eq!(
            stated_window(
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens."
            ),
            Some(128_000)
        );
        assert_eq!(
            stated_window("prompt is too long: 208310 tokens > 200000 maximum"),
            Some(200_000)
        );
        assert_eq!(stated_window("rate limited"), None);
        assert!(says_too_long(
            "HTTP 400: This model's maximum context length is 8192 tokens"
        ));
        assert!(says_too_long(
            "HTTP 400: prompt is too long: 208310 tokens > 200000 maximum"
        ));
        assert!(!says_too_long("HTTP 400: Unknown model gpt-9"));
    }

    #[test]
    fn old_large_results_are_left_out_naming_the_call_and_the_kept_turns_stay_whole() {
        let mut m = reads(4);
        let before = m.clone();
        // Keep the last two turns (messages 5..9).
        let from = kept_from(&m, KEEP_TURNS).unwrap();
        assert_eq!(from, 5);
        assert_eq!(leave_out_results(&mut m, from, LARGE_RESULT_BYTES), 2);
        let Message::ToolResults(r) = &m[2] else {
            panic!()
        };
        assert_eq!(
            r[0].content,
            json!({"left_out": "the result of workspace__readFile src/f0.rs (5000 bytes) was left out to keep the conversation within the model's context; call the tool again if you need it"}).to_string()
        );
        assert_eq!(m[5..], before[5..]);
        // Done once: a second pass leaves nothing more out.
        assert_eq!(leave_out_results(&mut m, from, LARGE_RESULT_BYTES), 0);
        assert!(request_bytes("", 0, &m) + 9_000 < request_bytes("", 0, &before));
    }

    #[test]
    fn a_summary_keeps_the_request_and_the_last_turns_with_every_call_paired() {
        let m = reads(5);
        let from = kept_from(&m, KEEP_TURNS).unwrap();
        let text = render_for_summary(&m[..from], 100);
        assert!(text.starts_with("## The person\ntidy the crate\n\n## You\ncalled workspace__readFile {\"path\":\"src/f0.rs\"}\n"), "{text}");
        assert!(text.contains("… (4900 more bytes)"), "{text}");
        let out = rebuilt(&m, from, "Goal: tidy.\n");
        assert_eq!(out.len(), 1 + m.len() - from);
        assert_eq!(
            out[0],
            Message::User(
                "tidy the crate\n\n[The conversation so far was summarized to stay within the model's context. Summary:]\nGoal: tidy.".into()
            )
        );
        assert!(matches!(out[1], Message::Assistant(_)));
        assert_eq!(out[1..], m[from..]);
        // Too short to summarize: the request and one turn.
        assert_eq!(kept_from(&reads(1), KEEP_TURNS), None);
        assert_eq!(kept_from(&reads(2), KEEP_TURNS), None);
        assert_eq!(kept_from(&reads(3), KEEP_TURNS), Some(3));
    }

    #[test]
    fn the_estimate_follows_the_providers_count() {
        assert_eq!(tokens(3_500, INITIAL_BYTES_PER_TOKEN), 1_000);
        let rate = calibrated(10_000, 2_000).unwrap();
        assert!((rate - 5.0).abs() < f64::EPSILON);
        assert_eq!(tokens(10_000, rate), 2_000);
        assert_eq!(calibrated(10_000, 0), None);
        // A count no text can have is kept within bounds.
        assert!((calibrated(100, 1).unwrap() - 8.0).abs() < f64::EPSILON);
    }
}
