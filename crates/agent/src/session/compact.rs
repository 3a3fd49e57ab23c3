//! Keeping a session's requests within the model's context window: the
//! estimate before each request, compaction when it would pass most of the
//! window, and one more try after a provider's "too long" error.

use std::sync::Mutex;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use cocode_core::agent::AgentEvent;

use crate::context::{
    COMPACT_AT, COMPACT_TO, INITIAL_BYTES_PER_TOKEN, KEEP_TURNS, LARGE_RESULT_BYTES,
    SUMMARY_SYSTEM, calibrated, kept_from, leave_out_results, messages_json, rebuilt,
    render_for_summary, request_bytes, stated_window, tokens,
};
use crate::conversation::{AssistantMessage, Message};
use crate::error::{ProviderError, ProviderErrorCode};
use crate::providers::ProviderConfig;

/// One request to the model: its instructions, the conversation and the
/// tools it may call; a quiet one streams nothing to the transcript.
pub(super) struct Ask<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [Value],
    pub quiet: bool,
}

/// What compaction needs of a session: its instructions, its budget, its
/// events and its model.
#[async_trait::async_trait]
pub(super) trait Session: Sync {
    fn system(&self) -> &str;
    fn budget(&self) -> &Mutex<Budget>;
    async fn emit(&self, event: AgentEvent, cancel: &CancellationToken);
    /// The model's answer, and the input tokens the provider counted.
    async fn ask(
        &self,
        request: Ask<'_>,
        cancel: &CancellationToken,
    ) -> Result<(AssistantMessage, Option<u64>), ProviderError>;
}

/// The model a session talks to, as its budget sees it.
pub(super) enum Talks<'a> {
    Local,
    Anthropic { model: &'a str, max_tokens: u32 },
    OpenAi { model: &'a str },
}

/// What a session knows of its model's window and of how many bytes a
/// token stands for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Budget {
    /// The model's context window (tokens), when known.
    window: Option<u64>,
    /// Tokens kept free for the answer.
    output: u64,
    /// Bytes per token, from the provider's own counts once it gave one.
    rate: f64,
    /// The local agent has no window.
    unlimited: bool,
    /// The tools' definitions in the last request (bytes).
    tools_bytes: usize,
}

impl Budget {
    pub(super) fn new(talks: &Talks<'_>, provider: &ProviderConfig) -> Self {
        let (window, output) = match talks {
            Talks::Local => (None, 0),
            Talks::Anthropic { model, max_tokens } => {
                (provider.window_of(model), u64::from(*max_tokens))
            }
            Talks::OpenAi { model } => {
                let window = provider.window_of(model);
                (window, window.map_or(0, |w| (w / 10).min(8_192)))
            }
        };
        Self {
            window,
            output,
            rate: INITIAL_BYTES_PER_TOKEN,
            unlimited: matches!(talks, Talks::Local),
            tools_bytes: 0,
        }
    }
}

fn budget(shared: &dyn Session) -> Budget {
    *shared
        .budget()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn update(shared: &dyn Session, f: impl FnOnce(&mut Budget)) {
    f(&mut shared
        .budget()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner));
}

/// How hard to compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// Only when the request would pass `COMPACT_AT` of the window.
    IfNear,
    /// The provider refused the request as too long: always, keeping only
    /// the last turn whole.
    Refused,
    /// The person asked: old results left out and the older turns
    /// summarized, whatever the conversation's size.
    Now,
}

/// Compacts the conversation at the person's asking (between runs).
/// Returns whether there was anything to compact.
pub(super) async fn compact_now(
    shared: &dyn Session,
    messages: &mut Vec<Message>,
    cancel: &CancellationToken,
) -> Result<bool, ProviderError> {
    let tools_bytes = budget(shared).tools_bytes;
    fit(shared, messages, tools_bytes, Need::Now, cancel).await
}

/// Sends the next request of the run, compacting the conversation first
/// when it would pass most of the window, and once more (then sending it
/// again) when the provider says it is too long.
pub(super) async fn ask_within(
    shared: &dyn Session,
    messages: &mut Vec<Message>,
    tools: &[Value],
    tools_bytes: usize,
    cancel: &CancellationToken,
) -> Result<AssistantMessage, ProviderError> {
    update(shared, |b| b.tools_bytes = tools_bytes);
    fit(shared, messages, tools_bytes, Need::IfNear, cancel).await?;
    let sent = request_bytes(shared.system(), tools_bytes, messages);
    let first = shared.ask(turn(shared, messages, tools), cancel).await;
    let (turn_out, counted, sent) = match first {
        Err(e) if e.is(ProviderErrorCode::ContextTooLong) => {
            // Learn the window the provider states (or take this request as
            // more than it holds), compact, and try once more.
            let b = budget(shared);
            let window = stated_window(&e.message)
                .or(b.window)
                .unwrap_or_else(|| tokens(sent, b.rate));
            update(shared, |b| b.window = Some(window));
            fit(shared, messages, tools_bytes, Need::Refused, cancel).await?;
            let sent = request_bytes(shared.system(), tools_bytes, messages);
            match shared.ask(turn(shared, messages, tools), cancel).await {
                Ok((turn_out, counted)) => (turn_out, counted, sent),
                Err(again) if again.is(ProviderErrorCode::ContextTooLong) => {
                    return Err(ProviderError::new(
                        ProviderErrorCode::ContextTooLong,
                        format!(
                            "the conversation is longer than the model's context window even after compacting it ({})",
                            again.message
                        ),
                    ));
                }
                Err(other) => return Err(other),
            }
        }
        Err(e) => return Err(e),
        Ok((turn_out, counted)) => (turn_out, counted, sent),
    };
    if let Some(counted) = counted {
        if let Some(rate) = calibrated(sent, counted) {
            update(shared, |b| b.rate = rate);
        }
        if let Some(size) = budget(shared).window {
            shared
                .emit(
                    AgentEvent::ContextUsage {
                        used: counted,
                        size,
                    },
                    cancel,
                )
                .await;
        }
    } else if let Some(size) = budget(shared).window
        && !budget(shared).unlimited
    {
        let b = budget(shared);
        shared
            .emit(
                AgentEvent::ContextUsage {
                    used: tokens(sent, b.rate),
                    size,
                },
                cancel,
            )
            .await;
    }
    Ok(turn_out)
}

fn turn<'a>(shared: &'a dyn Session, messages: &'a [Message], tools: &'a [Value]) -> Ask<'a> {
    Ask {
        system: shared.system(),
        messages,
        tools,
        quiet: false,
    }
}

/// The estimate of the next request with `messages`, answer included.
fn estimate(shared: &dyn Session, tools_bytes: usize, messages: &[Message]) -> u64 {
    let b = budget(shared);
    tokens(
        request_bytes(shared.system(), tools_bytes, messages),
        b.rate,
    ) + b.output
}

/// Compacts `messages` when `need` says so: first old large tool results
/// are left out; if that is not enough (or the person asked), the turns
/// before the last ones are summarized by the model. Says what it did (and
/// what the model saw before) as one `Compacted` event, and the window's
/// use after it. Returns whether it compacted.
async fn fit(
    shared: &dyn Session,
    messages: &mut Vec<Message>,
    tools_bytes: usize,
    need: Need,
    cancel: &CancellationToken,
) -> Result<bool, ProviderError> {
    let b = budget(shared);
    if b.unlimited {
        return Ok(false);
    }
    let before = estimate(shared, tools_bytes, messages);
    // Asked by the person with no window known: the conversation as it is
    // stands for it.
    let Some(window) = b.window.or((need == Need::Now).then_some(before)) else {
        return Ok(false);
    };
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "shares of a window of at most a few million tokens"
    )]
    let (near, target) = (
        (window as f64 * COMPACT_AT) as u64,
        (window as f64 * COMPACT_TO) as u64,
    );
    if need == Need::IfNear && before <= near {
        return Ok(false);
    }
    let keep = if need == Need::Refused { 1 } else { KEEP_TURNS };
    let Some(from) = kept_from(messages, keep) else {
        // Nothing old enough to compact: the last turns stay whole.
        return Ok(false);
    };
    let seen = messages_json(messages);
    let left_out = leave_out_results(messages, from, LARGE_RESULT_BYTES);
    let mut summary = None;
    let mut summarized = 0;
    if need == Need::Now || estimate(shared, tools_bytes, messages) > target {
        let text = summary_input(shared, &messages[..from], window);
        let asked = [Message::User(text)];
        let (answer, _) = shared
            .ask(
                Ask {
                    system: SUMMARY_SYSTEM,
                    messages: &asked,
                    tools: &[],
                    quiet: true,
                },
                cancel,
            )
            .await
            .map_err(|e| {
                ProviderError::new(
                    e.code,
                    format!(
                        "the conversation could not be summarized to fit the model's context: {}",
                        e.message
                    ),
                )
            })?;
        if answer.text.trim().is_empty() {
            return Err(ProviderError::invalid_response(
                "the model's summary of the conversation is empty",
            ));
        }
        summarized = from;
        *messages = rebuilt(messages, from, &answer.text);
        summary = Some(answer.text);
    }
    let after = estimate(shared, tools_bytes, messages);
    shared
        .emit(
            AgentEvent::Compacted {
                before,
                after,
                left_out,
                summarized,
                summary,
                replaced: seen,
            },
            cancel,
        )
        .await;
    if let Some(size) = budget(shared).window {
        // The conversation's share, without the answer's room.
        let used = after.saturating_sub(budget(shared).output);
        shared
            .emit(AgentEvent::ContextUsage { used, size }, cancel)
            .await;
    }
    Ok(true)
}

/// The older messages as the summary request's text, within about 60 % of
/// the window (its start and end kept when it must be cut).
fn summary_input(shared: &dyn Session, older: &[Message], window: u64) -> String {
    let b = budget(shared);
    let text = render_for_summary(older, 2_000);
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a byte count of at most a few million"
    )]
    let room = (window as f64 * 0.6 * b.rate) as usize;
    if text.len() <= room {
        return text;
    }
    let half = room / 2;
    let mut head = half;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - half;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n\n[… {} bytes of the middle left out …]\n\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}
