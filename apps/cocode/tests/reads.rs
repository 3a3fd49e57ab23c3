//! The read-only workspace tools through the host's registry: `listFiles`
//! pages through one listing, `search` walks the tree once, and every read
//! goes through the workspace's safe read path.
#![expect(clippy::disallowed_methods, reason = "the test builds a workspace")]
#![expect(clippy::unwrap_used, reason = "test code")]

#[cfg_attr(
    not(unix),
    expect(
        dead_code,
        reason = "only the Unix tests run commands that need approval"
    )
)]
mod common;

use cocode_tool_protocol::catalog;
use common::{call, open_host};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn paths(result: &Value, key: &str) -> Vec<String> {
    result[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_files_pages_through_one_listing() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["b.txt", "c.txt", "d.txt", "e.txt", "f.txt"] {
        std::fs::write(dir.path().join(name), name).unwrap();
    }
    let (host, _documents) = open_host(dir.path()).await;
    let first = call(&host, catalog::LIST_FILES, json!({"limit": 2})).await;
    let first = first.structured_content.unwrap();
    assert_eq!(paths(&first, "files"), ["b.txt", "c.txt"]);
    assert_eq!(first["files"][0]["size"], 5);
    // A file that sorts first appears meanwhile: the pages neither repeat
    // nor skip a file of the listing they started. A file of a later page
    // that grew meanwhile has its size as the page is served.
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    std::fs::write(dir.path().join("d.txt"), "a longer text").unwrap();
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let second = call(
        &host,
        catalog::LIST_FILES,
        json!({"limit": 2, "cursor": cursor}),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(paths(&second, "files"), ["d.txt", "e.txt"]);
    assert_eq!(
        (&second["files"][0]["size"], &second["files"][1]["size"]),
        (&json!(13), &json!(5))
    );
    let third = call(
        &host,
        catalog::LIST_FILES,
        json!({"limit": 2, "cursor": second["nextCursor"]}),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(
        (paths(&third, "files"), third["nextCursor"].clone()),
        (vec!["f.txt".to_owned()], Value::Null)
    );
    // A new listing sees the new file; a cursor nobody handed out is refused.
    let fresh = call(&host, catalog::LIST_FILES, json!({"limit": 1}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(paths(&fresh, "files"), ["a.txt"]);
    let refused = call(&host, catalog::LIST_FILES, json!({"cursor": "999:0"})).await;
    assert_eq!(
        refused.error.unwrap().code.as_str(),
        "TOOL_VALIDATION_FAILED"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_walks_the_folder_it_is_given_and_reads_through_the_safe_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "fn needle() {}\n").unwrap();
    std::fs::write(root.join("top.rs"), "// needle\n").unwrap();
    std::fs::write(dir.path().join("secret.txt"), "needle outside\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("leak.txt")).unwrap();
    let (host, _documents) = open_host(&root).await;
    let all = call(&host, catalog::SEARCH, json!({"query": "needle"}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(paths(&all, "matches"), ["src/a.rs", "top.rs"]);
    let in_src = call(
        &host,
        catalog::SEARCH,
        json!({"query": "fn needle", "path": "src"}),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(
        in_src["matches"],
        json!([{"path": "src/a.rs", "line": 1, "preview": "fn needle() {}"}])
    );
    // A regular expression, stopped at the limit and saying so; a file
    // with a NUL byte is binary and not searched.
    std::fs::write(root.join("blob.bin"), b"needle\0needle\n").unwrap();
    let limited = call(
        &host,
        catalog::SEARCH,
        json!({"query": "need[l]e", "regex": true, "maxResults": 1}),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(
        (paths(&limited, "matches"), limited["truncated"].clone()),
        (vec!["src/a.rs".to_owned()], json!(true))
    );
    let bad = call(&host, catalog::SEARCH, json!({"query": "(", "regex": true})).await;
    assert_eq!(bad.error.unwrap().code.as_str(), "TOOL_VALIDATION_FAILED");
    #[cfg(unix)]
    {
        let read = call(&host, catalog::READ_FILE, json!({"path": "leak.txt"})).await;
        assert_eq!(
            read.error.unwrap().code.as_str(),
            "WORKSPACE_OUTSIDE_WORKSPACE"
        );
    }
}

/// A command's folder is resolved like a read: a link out of the workspace
/// is refused before anything runs.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cannot_run_in_a_folder_outside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("inside")).unwrap();
    std::fs::create_dir(dir.path().join("outside")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside"), root.join("out")).unwrap();
    let (host, _documents) = open_host(&root).await;
    common::approve_everything(&host);
    host.tasks.set_attempt(
        &cocode_core::TaskId::new("t1").unwrap(),
        cocode_core::AttemptNo(0),
    );
    let refused = call(
        &host,
        catalog::TERMINAL_RUN,
        json!({"argv": ["touch", "made-here"], "cwd": "out"}),
    )
    .await;
    assert_eq!(
        refused.error.unwrap().code.as_str(),
        "WORKSPACE_OUTSIDE_WORKSPACE"
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("outside"))
            .unwrap()
            .count(),
        0
    );
    let missing = call(
        &host,
        catalog::TERMINAL_RUN,
        json!({"argv": ["true"], "cwd": "nowhere"}),
    )
    .await;
    assert_eq!(
        missing.error.unwrap().code.as_str(),
        "WORKSPACE_FILE_NOT_FOUND"
    );
}

/// What an agent cannot reach by reading: a FIFO and a device a command
/// made (refused at once, never a hang or an endless read), files outside
/// the workspace or in its history through links, and — for a patch of a
/// file outside — no hint of whether the search text occurs in it.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifos_devices_links_out_and_outside_contents_stay_out_of_an_agents_reach() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.txt"), "a\n").unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "the secret word\n").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("leak.txt")).unwrap();
    let (host, _documents) = open_host(&root).await;
    std::os::unix::fs::symlink(root.join(".cocode"), root.join("state")).unwrap();
    // FIFOs where the listing reads ignore files: opened blocking, they
    // hung every walk. A linked `.ignore` (to a file saying `src/`) is not
    // followed, as git follows none.
    let made = std::process::Command::new("mkfifo")
        .args(["src/pipe", "src/.gitignore", ".gitignore"].map(|p| root.join(p)))
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(outside.join("rules"), "src/\n").unwrap();
    std::os::unix::fs::symlink(outside.join("rules"), root.join(".ignore")).unwrap();
    // As root, a character device like /dev/zero (an endless read).
    let root_user =
        std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    let device = root_user
        && std::process::Command::new("mknod")
            .args([root.join("src/zero").to_str().unwrap(), "c", "1", "5"])
            .status()
            .is_ok_and(|s| s.success());
    let mut special = vec!["src/pipe"];
    if device {
        special.push("src/zero");
    }
    for path in special {
        let read = call(&host, catalog::READ_FILE, json!({"path": path})).await;
        assert_eq!(
            read.error.unwrap().code.as_str(),
            "WORKSPACE_FILE_TYPE_CONFLICT",
            "{path}"
        );
    }
    // The listing holds only what lies inside, outside the history.
    let listed = call(&host, catalog::LIST_FILES, json!({}))
        .await
        .structured_content
        .unwrap();
    let files = paths(&listed, "files");
    assert_eq!(
        files,
        ["src/a.txt"],
        "listed beyond the workspace's own files"
    );
    let found = call(&host, catalog::SEARCH, json!({"query": "a"})).await;
    assert!(found.error.is_none(), "{:?}", found.error);
    for folder in ["out", "state"] {
        let refused = call(&host, catalog::LIST_FILES, json!({"path": folder})).await;
        assert_eq!(
            refused.error.unwrap().code.as_str(),
            "WORKSPACE_OUTSIDE_WORKSPACE",
            "{folder}"
        );
    }
    // A patch of the outside file answers alike whether its search text
    // occurs there or not.
    common::approve_everything(&host);
    host.tasks.set_attempt(
        &cocode_core::TaskId::new("t1").unwrap(),
        cocode_core::AttemptNo(0),
    );
    let mut answers = Vec::new();
    for search in ["secret", "not there"] {
        let patched = call(
            &host,
            catalog::APPLY_PATCH,
            json!({"path": "leak.txt", "search": search, "replace": "x"}),
        )
        .await;
        let error = patched.error.unwrap();
        answers.push((
            error.code.as_str().to_owned(),
            error.message.replace(search, "…"),
        ));
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(answers[0].0, "WORKSPACE_OUTSIDE_WORKSPACE");
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "the secret word\n"
    );
}
