//! Integration tests of the built-in agent against loopback servers that
//! speak each provider's real wire format. Nothing here leaves 127.0.0.1.
#![expect(clippy::unwrap_used, reason = "test helpers")]

mod suite {
    mod catalogs;
    pub mod common;
    mod compaction;
    mod local;
    mod loop_anthropic;
    mod loop_openai;
    mod refusals;
    mod transport;
}
