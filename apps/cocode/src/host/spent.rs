//! Tokens and what they cost, in words.

use std::fmt::Write as _;

/// Tokens requests used and what they cost (the person's price table),
/// one request's or added up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Spent {
    /// Prompt tokens, cached ones included.
    pub input: u64,
    pub output: u64,
    /// Prompt tokens read from the provider's cache.
    pub cached: u64,
    /// Millionths of a US dollar, when the model is priced.
    pub cost_micros: Option<u64>,
}

impl Spent {
    /// One request's, from the session's token event (none for another
    /// event).
    pub fn of(event: &cocode_core::agent::AgentEvent) -> Option<Self> {
        match event {
            cocode_core::agent::AgentEvent::TokenUsage {
                input,
                output,
                cached,
                cost_micros,
            } => Some(Self {
                input: *input,
                output: *output,
                cached: *cached,
                cost_micros: *cost_micros,
            }),
            _ => None,
        }
    }

    pub fn add(&mut self, other: Self) {
        self.input += other.input;
        self.output += other.output;
        self.cached += other.cached;
        self.cost_micros = match (self.cost_micros, other.cost_micros) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// `98,765 tokens in (90,000 cached) · 4,321 out · $0.1235`.
    pub fn words(&self) -> String {
        let mut words = format!("{} tokens in", grouped(self.input));
        if self.cached > 0 {
            let _ = write!(words, " ({} cached)", grouped(self.cached));
        }
        let _ = write!(words, " · {} out", grouped(self.output));
        if let Some(micros) = self.cost_micros {
            let _ = write!(words, " · {}", dollars(micros));
        }
        words
    }
}

/// Millionths of a dollar as a person reads them: `$0.1235`, `$12.35`.
pub fn dollars(micros: u64) -> String {
    let (whole, rest) = (micros / 1_000_000, micros % 1_000_000);
    if whole == 0 {
        // Four places below a dollar, rounded half up.
        let tenths_of_cents = (rest + 50) / 100;
        if tenths_of_cents >= 10_000 {
            return "$1.00".to_owned();
        }
        format!("$0.{tenths_of_cents:04}")
    } else {
        let cents = (micros + 5_000) / 10_000;
        format!("${}.{:02}", cents / 100, cents % 100)
    }
}

/// `90000` as `90,000`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
