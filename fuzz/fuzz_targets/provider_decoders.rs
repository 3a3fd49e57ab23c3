//! Provider response decoders on arbitrary input: they must return a value
//! or a typed error, never panic, and whatever they return must survive
//! validation. The first byte picks the decoder; for streams the rest is
//! split into events at blank lines, an event's first line being its name.

#![no_main]

use cocode_agent::conversation::validate;
use cocode_agent::local;
use cocode_agent::wire::{StreamDecoder, anthropic, openai};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match selector % 5 {
        pick @ (0 | 1) => {
            let mut decoder: Box<dyn StreamDecoder> = if pick == 0 {
                Box::new(anthropic::Decoder::default())
            } else {
                Box::new(openai::Decoder::default())
            };
            for event in text.split("\n\n") {
                let (name, data) = event.split_once('\n').unwrap_or(("message", event));
                if decoder.on_event(name, data).is_err() {
                    return;
                }
                if decoder.is_done() {
                    break;
                }
            }
            if let Ok(raw) = decoder.finish() {
                let _ = validate(raw);
            }
        }
        pick @ (2 | 3) => {
            let Ok(body) = serde_json::from_str::<serde_json::Value>(&text) else {
                return;
            };
            let raw = if pick == 2 {
                anthropic::decode_body(&body)
            } else {
                openai::decode_body(&body)
            };
            if let Ok(raw) = raw {
                let _ = validate(raw);
            }
        }
        _ => {
            let _ = local::parse(&text);
        }
    }
});
