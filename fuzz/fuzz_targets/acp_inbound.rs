//! Inbound ACP messages on arbitrary input: each line is decoded as the
//! message its method names (session updates, file reads and writes,
//! permission requests) and session updates run through the host's
//! mapper, which keeps state across lines. Nothing may panic.

#![no_main]

use std::path::PathBuf;

use cocode_acp::UpdateMapper;
use cocode_acp::schema as acp;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut mapper = UpdateMapper::new(PathBuf::from("/workspace"));
    for line in text.lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match message.get("method").and_then(Value::as_str) {
            Some("session/update") => {
                if let Ok(n) = serde_json::from_value::<acp::SessionNotification>(params) {
                    let _ = mapper.map(n.update);
                }
            }
            Some("fs/read_text_file") => {
                if let Ok(r) = serde_json::from_value::<acp::ReadTextFileRequest>(params) {
                    let _ = mapper.relative(&r.path);
                }
            }
            Some("fs/write_text_file") => {
                if let Ok(r) = serde_json::from_value::<acp::WriteTextFileRequest>(params) {
                    let _ = mapper.relative(&r.path);
                }
            }
            Some("session/request_permission") => {
                let _ = serde_json::from_value::<acp::RequestPermissionRequest>(params);
            }
            _ => {
                let _ = mapper.cancel_open();
            }
        }
    }
});
