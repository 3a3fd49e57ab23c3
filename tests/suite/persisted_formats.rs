#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

//! Every persisted record keeps its wire form: the golden files under
//! `tests/golden/` are what earlier versions wrote, so each must still
//! deserialize and serialize back to exactly the same JSON.

use cocode_core::snapshot::EditSnapshot;
use cocode_core::task::{DelegatedTask, TerminalReason};
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
fn a_task_the_agent_left_unfinished() {
    let task: DelegatedTask = round_trip("task_agent_ended_unfinished.json");
    assert_eq!(
        (task.status().as_str(), task.terminal_reason()),
        ("failed", Some(&TerminalReason::AgentEndedUnfinished))
    );
}

/// A task whose agent ended its turn unfinished, waiting for the person's
/// reply (`awaiting_approval` with `pending_approval_kind: reply`).
#[test]
fn a_task_waiting_for_a_reply() {
    let task: DelegatedTask = round_trip("task_awaiting_reply.json");
    assert_eq!(
        (task.status().as_str(), task.pending_approval_kind()),
        ("awaiting_approval", cocode_core::PendingApprovalKind::Reply)
    );
}

/// Records written before `agent_ended_unfinished` existed ended such
/// tasks as `stopped` by `user_stopped`; they still load as they are.
#[test]
fn an_older_stopped_task_still_loads() {
    let task: DelegatedTask = round_trip("task_user_stopped.json");
    assert_eq!(
        (task.status().as_str(), task.terminal_reason()),
        ("stopped", Some(&TerminalReason::UserStopped))
    );
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
    // The last line holds a change recorded by hash only (too large to keep).
    assert_eq!(kinds, ["Create", "Modify", "Rename", "Delete", "Modify"]);
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

#[test]
fn write_journal() {
    let journal: cocode_workspace::WriteJournal = round_trip("write_journal.json");
    assert_eq!(
        (journal.records.len(), journal.staged.len()),
        (2, 1),
        "records and staged files"
    );
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "places the golden index in a temp history"
)]
fn per_path_index_with_its_header_line() {
    let dir = tempfile::tempdir().unwrap();
    let layout = cocode_workspace::Layout::new(dir.path());
    let path = cocode_core::path::NormalizedPath::try_from("src/list.rs".to_owned()).unwrap();
    let file = layout.path_index(&path.key());
    let golden = format!("{}/golden/versions.jsonl", env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::copy(golden, &file).unwrap();
    let store = cocode_workspace::HistoryStore::new(layout);
    let ids: Vec<String> = store
        .path_history(&path)
        .unwrap()
        .iter()
        .map(|s| s.snapshot_id().as_str().to_owned())
        .collect();
    assert_eq!(ids, ["s-1", "s-3"]);
}
