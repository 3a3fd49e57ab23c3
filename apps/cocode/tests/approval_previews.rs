//! What an approval card is shown of the call it asks about: each edit as
//! the call will make it (a diff against the file as it is now), a call that
//! cannot work with its reason, test files marked, a command with its folder
//! and confinement — computed without writing anything.
#![expect(clippy::disallowed_methods, reason = "the test builds a workspace")]
#![expect(clippy::unwrap_used, reason = "test code")]

#[expect(dead_code, reason = "this test answers its approvals itself")]
mod common;

use std::sync::Arc;

use cocode_core::{AttemptNo, TaskId};
use cocode_tool_protocol::{
    ApprovalDecision, ApprovalEvent, ApprovalPreview, ChangeKind, ChangePreview, catalog,
};
use common::{call, open_host};
use pretty_assertions::assert_eq;
use serde_json::json;

/// Makes the call, takes the preview its approval request carries, denies
/// it, and checks that nothing was written.
async fn preview_of(
    host: &Arc<cocode::host::workspace_host::WorkspaceHost>,
    root: &std::path::Path,
    tool: &'static str,
    args: serde_json::Value,
) -> ApprovalPreview {
    let before = tree(root);
    let queue = Arc::clone(host.tools.approvals());
    let mut events = queue.subscribe();
    let caller = Arc::clone(host);
    let running = tokio::spawn(async move { call(&caller, tool, args).await });
    let snapshot = loop {
        if let ApprovalEvent::Requested(s) = events.recv().await.unwrap() {
            break s;
        }
    };
    queue.resolve(snapshot.id, ApprovalDecision::Deny);
    let result = running.await.unwrap();
    assert!(result.is_error, "denied");
    assert_eq!(tree(root), before, "a preview writes nothing");
    *snapshot.preview.unwrap()
}

fn tree(root: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            out.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&path).unwrap(),
            ));
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cards_show_each_change_and_command_as_it_would_happen() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(root.join("calc_test.py"), "assert 1\n").unwrap();
    let (host, _docs) = open_host(&root).await;
    let host = Arc::new(host);
    host.tasks
        .set_attempt(&TaskId::new("t1").unwrap(), AttemptNo(1));

    let patch = preview_of(
        &host,
        &root,
        catalog::APPLY_PATCH,
        json!({"path": "a.txt", "search": "two", "replace": "둘"}),
    )
    .await;
    assert_eq!(
        patch,
        ApprovalPreview::Changes(vec![ChangePreview {
            path: "a.txt".into(),
            kind: ChangeKind::Modify,
            diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+둘\n".into(),
            test_file: false,
        }])
    );

    let created = preview_of(
        &host,
        &root,
        catalog::CREATE_FILE,
        json!({"path": "new.txt", "content": "hello\n"}),
    )
    .await;
    let ApprovalPreview::Changes(c) = created else {
        panic!("a change")
    };
    assert_eq!(
        (c[0].kind.clone(), c[0].diff.contains("+hello")),
        (ChangeKind::Create, true)
    );

    let test_file = preview_of(
        &host,
        &root,
        catalog::WRITE_FILE,
        json!({"path": "calc_test.py", "content": "assert 2\n"}),
    )
    .await;
    let ApprovalPreview::Changes(t) = test_file else {
        panic!("a change")
    };
    assert!(t[0].test_file, "{t:?}");

    let failing = preview_of(
        &host,
        &root,
        catalog::APPLY_PATCH,
        json!({"path": "a.txt", "search": "absent", "replace": "x"}),
    )
    .await;
    assert_eq!(
        failing,
        ApprovalPreview::Note(
            "As it stands this call fails: the search text does not occur in the file".into()
        )
    );

    let command = preview_of(
        &host,
        &root,
        catalog::TERMINAL_RUN,
        json!({"argv": ["sh", "-c", "echo 안녕"], "cwd": "."}),
    )
    .await;
    let ApprovalPreview::Command {
        argv,
        cwd,
        confinement,
    } = command
    else {
        panic!("a command")
    };
    assert_eq!(
        (argv, cwd),
        (
            vec!["sh".to_owned(), "-c".into(), "echo 안녕".into()],
            ".".to_owned()
        )
    );
    assert!(confinement.contains("policy proxy (port"), "{confinement}");
}
