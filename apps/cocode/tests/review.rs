//! Reviewing a task like a pull request from the command line: hunks
//! numbered per file, one undone among three, an undo refused when the
//! file changed since, "since your last review", checkpoints per message
//! and a restore to before one — for the built-in agent and an external
//! (ACP) agent that writes with its own file I/O.
#![expect(
    clippy::disallowed_methods,
    reason = "tests run the binary and make the folder's files themselves"
)]
#![expect(clippy::unwrap_used, reason = "test helpers")]

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::Value;

/// Runs `cocode ARGS` with no terminal on stdin; returns (exit code, stdout).
fn cocode(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args(args)
        .stdin(Stdio::null())
        .env("HOME", std::env::temp_dir())
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some(),
        "killed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    dir
}

fn ws_arg(ws: &Path) -> &str {
    ws.to_str().unwrap()
}

/// The id of the workspace's only task.
fn only_task(ws: &Path) -> String {
    let (code, list) = cocode(&["task", "list", "--workspace", ws_arg(ws)]);
    assert_eq!(code, 0, "{list}");
    let ids: Vec<&str> = list
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "{list}");
    ids[0].to_owned()
}

/// The origins of the task's snapshots, in order.
fn origins(ws: &Path, id: &str) -> Vec<String> {
    let (code, shown) = cocode(&["task", "show", id, "--json", "--workspace", ws_arg(ws)]);
    assert_eq!(code, 0);
    let shown: Value = serde_json::from_str(&shown).unwrap();
    shown["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["origin"].as_str().unwrap().to_owned())
        .collect()
}

fn review(ws: &Path, id: &str, extra: &[&str]) -> String {
    let mut args = vec!["task", "review", id, "--workspace", ws_arg(ws)];
    args.extend_from_slice(extra);
    let (code, out) = cocode(&args);
    assert_eq!(code, 0, "{out}");
    out
}

/// `cocode rollback --yes` of task `id` with `extra` flags.
fn rollback(ws: &Path, id: &str, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["rollback", "--workspace", ws_arg(ws), "--task", id, "--yes"];
    args.extend_from_slice(extra);
    cocode(&args)
}

fn undo(ws: &Path, id: &str, path: &str, hunk: Option<&str>) -> (i32, String) {
    let mut args = vec![
        "task",
        "undo",
        id,
        "--workspace",
        ws_arg(ws),
        "--path",
        path,
        "--all",
    ];
    if let Some(h) = hunk {
        args.extend(["--hunk", h]);
    }
    cocode(&args)
}

const LETTERS: &str = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\no\np\nq\nr\ns\nt\n";

/// A task whose command changed three separate places of `f.txt` (a change
/// the sweep observed, not one made through the gate).
fn three_hunk_task() -> (tempfile::TempDir, String) {
    let ws = workspace(&[("f.txt", LETTERS)]);
    let (code, out) = cocode(&[
        "task",
        "run",
        "--workspace",
        ws_arg(ws.path()),
        "--prompt",
        r#"run "sed -i -e 's/^b$/B/' -e 's/^j$/J/' -e '/^s$/d' f.txt""#,
        "--yes",
    ]);
    assert_eq!(code, 0, "{out}");
    let id = only_task(ws.path());
    (ws, id)
}

#[test]
fn one_hunk_among_three_is_undone_and_a_rollback_then_restores_the_start_byte_for_byte() {
    let (ws, id) = three_hunk_task();
    let ws = ws.path();
    assert_eq!(
        review(ws, &id, &[]),
        format!(
            "task {id}: all of the task's changes (not reviewed before): 1 file(s), 3 hunk(s)\n\
             \n\
             f.txt · modified · −3 +2\n\
             @@ -1,5 +1,5 @@ hunk 1\n a\n-b\n+B\n c\n d\n e\n\
             @@ -7,7 +7,7 @@ hunk 2\n g\n h\n i\n-j\n+J\n k\n l\n m\n\
             @@ -16,5 +16,4 @@ hunk 3\n p\n q\n r\n-s\n t\n\
             \n\
             undo a hunk: cocode task undo {id} --path PATH --hunk N (without --hunk: the whole file)\n"
        )
    );
    let (code, out) = undo(ws, &id, "f.txt", Some("2"));
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "undid hunk 2 of f.txt\nrecorded as the task's own change: a rollback to its start still restores the file as it was\n"
        )
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("f.txt")).unwrap(),
        LETTERS.replace("b\n", "B\n").replace("s\n", "")
    );
    let after = review(ws, &id, &["--all"]);
    assert!(after.contains(": 1 file(s), 2 hunk(s)\n"), "{after}");
    assert!(!after.contains("+J"), "{after}");
    assert_eq!(origins(ws, &id), ["observed", "review"]);

    let (code, out) = rollback(ws, &id, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::read(ws.join("f.txt")).unwrap(), LETTERS.as_bytes());
    assert_eq!(origins(ws, &id), ["observed", "review", "rollback"]);
}

#[test]
fn an_undo_of_a_file_a_person_changed_since_is_refused_and_touches_nothing() {
    let (ws, id) = three_hunk_task();
    let ws = ws.path();
    let mut changed = std::fs::read_to_string(ws.join("f.txt")).unwrap();
    changed.push_str("a person's line\n");
    std::fs::write(ws.join("f.txt"), &changed).unwrap();
    let shown = review(ws, &id, &["--all"]);
    assert!(
        shown.contains(
            "  undo not possible now: the file changed after this part of the task (a person, a tool or a later turn changed it)\n"
        ),
        "{shown}"
    );
    for hunk in [Some("1"), None] {
        let (code, out) = undo(ws, &id, "f.txt", hunk);
        assert_eq!(
            (code, out.as_str()),
            (
                1,
                "undo refused: f.txt: the file changed after this part of the task (a person, a tool or a later turn changed it); nothing was touched\n"
            )
        );
    }
    assert_eq!(std::fs::read_to_string(ws.join("f.txt")).unwrap(), changed);
    assert_eq!(origins(ws, &id), ["observed"]);
    // A hunk that does not exist is named as such.
    let (code, out) = undo(ws, &id, "nothing.txt", Some("1"));
    assert_eq!(code, 1, "{out}");
}

/// Runs `task run --interactive` with the local agent, sending each reply
/// once the agent asks for one, and `between(k)` after turn `k` ends
/// (before reply `k` is sent). Returns (exit code, stdout).
fn conversation(
    ws: &Path,
    prompt: &str,
    extra: &[&str],
    replies: &[&str],
    mut between: impl FnMut(usize),
) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args([
            "task",
            "run",
            "--workspace",
            ws_arg(ws),
            "--prompt",
            prompt,
            "--interactive",
            "--yes",
        ])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("HOME", std::env::temp_dir())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let mut stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        let mut seen = String::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
            let asked = seen.matches("your reply").count();
            let _ = tx.send(asked);
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    for (k, reply) in replies.iter().enumerate() {
        // Wait until the agent asked for reply k + 1.
        loop {
            let Ok(asked) = rx.recv_timeout(std::time::Duration::from_mins(2)) else {
                panic!("the agent never asked for reply {}", k + 1);
            };
            if asked > k {
                break;
            }
        }
        between(k + 1);
        stdin.write_all(format!("{reply}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }
    drop(stdin);
    let status = child.wait().unwrap();
    (status.code().unwrap_or(-1), out.join().unwrap())
}

#[test]
fn since_the_last_review_and_before_a_message_follow_the_conversation() {
    let ws = workspace(&[("keep.txt", "k\n")]);
    let ws = ws.path();
    // Each command fails on purpose: the local agent then ends its turn
    // without finishing and the person answers; the last message finishes.
    let (code, out) = conversation(
        ws,
        r#"run "printf 'one\n' > a.txt; exit 3""#,
        &[],
        &[
            r#"run "printf 'one!\n' > a.txt; printf 'two\n' > b.txt; exit 3""#,
            r#"create c.txt with "three\n""#,
        ],
        |turn| {
            if turn == 1 {
                // The person looks after the first turn.
                let id = only_task(ws);
                let shown = review(ws, &id, &["--mark-reviewed"]);
                assert!(shown.contains("a.txt · created · −0 +1\n"), "{shown}");
                assert!(
                    shown.ends_with(
                        "marked reviewed: the next review shows what changes after this\n"
                    ),
                    "{shown}"
                );
            }
        },
    );
    assert_eq!(code, 0, "{out}");
    let id = only_task(ws);
    let (code, listed) = cocode(&[
        "task",
        "review",
        &id,
        "--messages",
        "--workspace",
        ws_arg(ws),
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        listed,
        format!(
            "message 1: run \"printf 'one\\n' > a.txt; exit 3\"\n\
             message 2: run \"printf 'one!\\n' > a.txt; printf 'two\\n' > b.txt; exit 3\"\n\
             message 3: create c.txt with \"three\\n\"\n\
             restore the files to before message K: cocode rollback --task {id} --to-message K\n\
             \n\
             tool call 1: terminal.run\n\
             tool call 2: terminal.run\n\
             tool call 3: workspace.createFile\n\
             review what one changed: cocode task review {id} --call K\n"
        )
    );
    // What one call changed: the second command's two files.
    let second = review(ws, &id, &["--call", "2"]);
    assert!(
        second.starts_with(&format!(
            "task {id}: changes made by tool call 2: 2 file(s), 2 hunk(s)\n\na.txt · modified · −1 +1\n"
        )),
        "{second}"
    );
    assert!(second.contains("\nb.txt · created · −0 +1\n"), "{second}");
    assert!(!second.contains("c.txt"), "{second}");

    // Since the review: a.txt's second change (observed, from a command),
    // b.txt and c.txt; not a.txt's creation.
    let since = review(ws, &id, &[]);
    assert!(
        since.starts_with(&format!(
            "task {id}: changes since your last review: 3 file(s), 3 hunk(s)\n\na.txt · modified · −1 +1\n@@ -1 +1 @@ hunk 1\n-one\n+one!\n"
        )),
        "{since}"
    );
    assert!(since.contains("\nb.txt · created · −0 +1\n"), "{since}");
    assert!(since.contains("\nc.txt · created · −0 +1\n"), "{since}");
    // The answer to message 2 alone.
    let second = review(ws, &id, &["--message", "2"]);
    assert!(
        second.starts_with(&format!(
            "task {id}: changes made in answer to message 2: 2 file(s), 2 hunk(s)\n"
        )),
        "{second}"
    );

    // Restoring to before message 2 leaves the files as turn 1 left them.
    let (code, out) = rollback(ws, &id, &["--to-message", "2"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\n");
    assert!(!ws.join("b.txt").exists());
    assert!(!ws.join("c.txt").exists());
    assert_eq!(std::fs::read_to_string(ws.join("keep.txt")).unwrap(), "k\n");
}

/// Adds the scripted ACP agent to the workspace's settings as `scripted`.
#[cfg(unix)]
fn with_scripted_agent(ws: &Path) {
    let (code, _) = cocode(&["task", "list", "--workspace", ws_arg(ws)]);
    assert_eq!(code, 0);
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../crates/acp/tests/agents/scripted_agent.py")
        .canonicalize()
        .unwrap();
    let path = ws.join(".cocode/config/workspace.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["acp_agents"] = serde_json::json!([{
        "id": "scripted",
        "display_name": "Scripted agent",
        "command": ["python3", script.to_str().unwrap()],
    }]);
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
}

/// An external agent's conversation has checkpoints too: each turn's end
/// waits for the person (an empty line verifies), its own writes and
/// those through the host belong to the message they answer.
#[cfg(unix)]
#[test]
fn an_acp_agents_conversation_is_reviewed_and_restored_by_message() {
    let ws = workspace(&[("keep.txt", "k\n")]);
    let ws = ws.path();
    with_scripted_agent(ws);
    let (code, out) = conversation(
        ws,
        r"direct a.txt one\n",
        &["--backend", "acp:scripted", "--trust-workspace"],
        &[r"direct a.txt one!\n", "write c.txt three", ""],
        |turn| {
            if turn == 1 {
                let id = only_task(ws);
                let shown = review(ws, &id, &["--mark-reviewed"]);
                assert!(shown.contains("a.txt · created · −0 +1\n"), "{shown}");
            }
        },
    );
    assert_eq!(code, 0, "{out}");
    let id = only_task(ws);
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one!\n");
    assert_eq!(std::fs::read_to_string(ws.join("c.txt")).unwrap(), "three");
    let (code, listed) = cocode(&[
        "task",
        "review",
        &id,
        "--messages",
        "--workspace",
        ws_arg(ws),
    ]);
    assert_eq!(code, 0);
    assert!(
        listed.starts_with(
            "message 1: direct a.txt one\\n\n\
             message 2: direct a.txt one!\\n\n\
             message 3: write c.txt three\n"
        ),
        "{listed}"
    );
    // Since the review after turn 1: a.txt's change and c.txt.
    let since = review(ws, &id, &[]);
    assert!(
        since.starts_with(&format!(
            "task {id}: changes since your last review: 2 file(s), 2 hunk(s)\n\na.txt · modified · −1 +1\n@@ -1 +1 @@ hunk 1\n-one\n+one!\n"
        )),
        "{since}"
    );
    let third = review(ws, &id, &["--message", "3"]);
    assert!(
        third.starts_with(&format!(
            "task {id}: changes made in answer to message 3: 1 file(s), 1 hunk(s)\n\nc.txt · created"
        )),
        "{third}"
    );
    let (code, out) = rollback(ws, &id, &["--to-message", "2"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\n");
    assert!(!ws.join("c.txt").exists());
    assert_eq!(std::fs::read_to_string(ws.join("keep.txt")).unwrap(), "k\n");
}

#[cfg(unix)]
#[test]
fn an_acp_agents_own_writes_are_reviewed_and_undone_by_hunk() {
    let ws = workspace(&[(
        "keep.txt",
        "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n",
    )]);
    let ws = ws.path();
    with_scripted_agent(ws);
    // The agent writes keep.txt itself (no fs/write_text_file): its first
    // and last lines change.
    let (code, out) = cocode(&[
        "task",
        "run",
        "--workspace",
        ws_arg(ws),
        "--prompt",
        r"direct keep.txt ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nNINE\n",
        "--backend",
        "acp:scripted",
        "--yes",
        // The test wrote the agent's entry itself: as its person, it
        // allows it.
        "--trust-workspace",
    ]);
    assert_eq!(code, 0, "{out}");
    let id = only_task(ws);
    let shown = review(ws, &id, &[]);
    assert!(
        shown.contains("keep.txt · modified · −2 +2\n@@ -1,4 +1,4 @@ hunk 1\n-one\n+ONE\n"),
        "{shown}"
    );
    let (code, out) = undo(ws, &id, "keep.txt", Some("1"));
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.join("keep.txt")).unwrap(),
        "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nNINE\n"
    );
    assert_eq!(origins(ws, &id), ["observed", "review"]);
    let (code, out) = rollback(ws, &id, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.join("keep.txt")).unwrap(),
        "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n"
    );
}
