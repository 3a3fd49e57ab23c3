#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

//! Every persisted record keeps its wire form: the golden files under
//! `tests/golden/` are what earlier versions wrote, so each must still
//! deserialize and serialize back to exactly the same JSON.

use cocode_core::snapshot::EditSnapshot;
use cocode_core::task::DelegatedTask;
use cocode_core::verification::{VerificationLimits, VerificationRecord};
use cocode_core::workspace::WorkspaceConfig;
use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;

fn golden(name: &str) -> serde_json::Value {
    let path = format!("{}/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn round_trip<T: Serialize + DeserializeOwned>(name: &str) -> T {
    let json = golden(name);
    let value: T = serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        serde_json::to_value(&value).unwrap(),
        json,
        "{name} re-serializes identically"
    );
    value
}

#[test]
fn task_record() {
    let task: DelegatedTask = round_trip("task.json");
    assert_eq!(task.status().as_str(), "awaiting_approval");
    assert_eq!(task.verification_log().len(), 3);
}

#[test]
fn snapshot_index_lines() {
    let text = std::fs::read_to_string(format!(
        "{}/golden/snapshots.jsonl",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let kinds: Vec<String> = text
        .lines()
        .map(|line| {
            let json: serde_json::Value = serde_json::from_str(line).unwrap();
            let snapshot: EditSnapshot = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(serde_json::to_value(&snapshot).unwrap(), json);
            format!("{:?}", snapshot.kind())
        })
        .collect();
    assert_eq!(kinds, ["Create", "Modify", "Rename", "Delete"]);
}

#[test]
fn verification_record_and_limits() {
    let _: VerificationRecord = round_trip("verification_record.json");
    let limits: VerificationLimits = round_trip("limits.json");
    assert_eq!(limits.max_retries(), 2);
}

#[test]
fn workspace_config() {
    let config: WorkspaceConfig = round_trip("workspace.json");
    assert_eq!(config.allowed_hosts.len(), 2);
}
