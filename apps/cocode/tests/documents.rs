//! Unsaved editor text is what agents read: the built-in agent's
//! `workspace.readFile` and an ACP agent's `fs/read_text_file` both return
//! the open document's text, and an edit based on it is refused with a
//! clear reason instead of overwriting the file on disk.
#![expect(clippy::disallowed_methods, reason = "the test builds a workspace")]
#![expect(clippy::unwrap_used, reason = "test code")]

mod common;

use cocode_core::agent::{AgentRequestKind, RequestCompletion};
use cocode_core::path::normalize;
use cocode_core::{SessionId, TaskId};
use cocode_editor::{Change, ChangeSet, EditKind, OpenDocuments};
use cocode_tool_protocol::catalog;
use common::{approve_everything, call, open_host};
use pretty_assertions::assert_eq;
use serde_json::json;

/// Types `text` at the start of the open document `path`, unsaved.
fn type_at_start(documents: &OpenDocuments, path: &cocode_core::NormalizedPath, text: &str) {
    documents
        .with_document(path, |d| {
            d.apply(
                &ChangeSet::single(Change::insert(0, text)).unwrap(),
                EditKind::Other,
            )
        })
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_read_the_unsaved_text_and_cannot_edit_under_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "on disk\n").unwrap();
    let (host, documents) = open_host(dir.path()).await;
    approve_everything(&host);
    let path = normalize("notes.txt", host.workspace.workspace.options()).unwrap();

    // Open but unchanged: the disk is read.
    documents.open(path.clone(), "on disk\n");
    let read = call(&host, catalog::READ_FILE, json!({"path": "notes.txt"})).await;
    let content = read.structured_content.unwrap();
    assert_eq!(content["content"], "on disk\n");
    assert_eq!(content.get("unsaved"), None);

    // Typed in the editor, not saved: both agent kinds read the editor's text.
    type_at_start(&documents, &path, "typed, ");
    let read = call(&host, catalog::READ_FILE, json!({"path": "notes.txt"})).await;
    let content = read.structured_content.unwrap();
    assert_eq!(content["content"], "typed, on disk\n");
    assert_eq!(content["unsaved"], true);
    let acp = host
        .complete_request(
            &TaskId::new("t1").unwrap(),
            &SessionId::new("s1").unwrap(),
            AgentRequestKind::FileRead {
                path: "notes.txt".into(),
                line: None,
                limit: None,
            },
            &tokio_util::sync::CancellationToken::new(),
            None,
        )
        .await;
    assert_eq!(
        acp,
        RequestCompletion::Success(json!({"content": "typed, on disk\n"}))
    );

    // An edit made against what was read would replace different text on
    // disk: refused, with the reason, and the file is untouched.
    host.tasks
        .set_attempt(&TaskId::new("t1").unwrap(), cocode_core::AttemptNo(1));
    let refused = call(
        &host,
        catalog::APPLY_PATCH,
        json!({"path": "notes.txt", "search": "typed", "replace": "TYPED",
               "expectedRevision": content["revision"]}),
    )
    .await;
    let error = refused.error.unwrap();
    assert_eq!(error.code, "WORKSPACE_REVISION_CONFLICT");
    assert_eq!(
        error.message,
        "the file has unsaved changes in the editor; they must be saved or discarded before it can be edited"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "on disk\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_saves_an_open_document_unless_an_agent_edit_holds_it() {
    use cocode::host::save::{SaveError, Saved};
    use cocode_core::gate::{EditLockRegistry as _, TaskContext};

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "fn a() {}\r\n").unwrap();
    let (host, documents) = open_host(dir.path()).await;
    let options = host.workspace.workspace.options();
    let path = normalize("src/lib.rs", options).unwrap();
    assert_eq!(
        host.save_user_file(&path),
        Err(SaveError::NotOpen("src/lib.rs".into()))
    );
    documents.open(path.clone(), "fn a() {}\r\n");
    type_at_start(&documents, &path, "pub ");

    // An agent's edit holds the folder: the save is refused, nothing written.
    let ctx = TaskContext {
        task_id: TaskId::new("t9").unwrap(),
        session_id: SessionId::new("s9").unwrap(),
        attempt_no: cocode_core::AttemptNo(1),
    };
    let guard = host
        .leases
        .acquire(&[normalize("src", options).unwrap()], &ctx)
        .await
        .unwrap();
    let refused = host.save_user_file(&path).unwrap_err();
    assert_eq!(refused.code(), cocode_core::WorkspaceErrorCode::Locked);
    assert!(
        refused.to_string().contains("task t9 is editing src"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("src/lib.rs")).unwrap(),
        b"fn a() {}\r\n"
    );
    drop(guard);

    // Released: the text lands byte for byte (line endings kept) and the
    // document is clean, so agents read the disk again.
    assert_eq!(host.save_user_file(&path), Ok(Saved::Clean));
    assert_eq!(
        std::fs::read(dir.path().join("src/lib.rs")).unwrap(),
        b"pub fn a() {}\r\n"
    );
    assert_eq!(documents.dirty_paths(), Vec::new());
    let history = host.workspace.gate.store().path_history(&path).unwrap();
    assert_eq!(
        history,
        Vec::new(),
        "a person's save is not an agent snapshot"
    );
}
