//! The client against the in-repo server, launched through the real
//! launcher: diagnostics in both position encodings, hover, completion,
//! definition, semantic tokens, a crash and restart, a crash loop, a
//! request that times out, a server that is not installed, shutdown.
#![expect(clippy::unwrap_used, reason = "test helpers")]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cocode_core::path::{CaseSensitivity, NormalizeOptions, NormalizedPath, normalize};
use cocode_core::workspace::LanguageServerEntry;
use cocode_lsp::{
    Edit, LanguageServers, LspError, LspEvent, LspSetup, Scope, ServerRegistry, ServerState,
    Severity, TextPos, TextRange, Timeouts,
};
use cocode_toolchain::{Launcher, WritableRoots};
use pretty_assertions::assert_eq;
use tokio::sync::mpsc;

const SERVER: &str = env!("CARGO_BIN_EXE_lsp-test-server");

struct Fixture {
    servers: LanguageServers,
    events: mpsc::UnboundedReceiver<LspEvent>,
    dir: tempfile::TempDir,
}

fn options() -> NormalizeOptions {
    NormalizeOptions::native(CaseSensitivity::Sensitive)
}

fn path(p: &str) -> NormalizedPath {
    normalize(p, options()).unwrap()
}

fn pos(line: u32, column: u32) -> TextPos {
    TextPos { line, column }
}

fn range(line: u32, from: u32, to: u32) -> TextRange {
    TextRange {
        start: pos(line, from),
        end: pos(line, to),
    }
}

fn fixture(command: &[&str], timeouts: Timeouts) -> Fixture {
    fixture_as("test", command, timeouts, Scope::Workspace)
}

/// The test server under the id `id` for `.txt` files, asked about `scope`.
fn fixture_as(id: &str, command: &[&str], timeouts: Timeouts, scope: Scope) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let launcher = Launcher::new(
        tokio::runtime::Handle::current(),
        None,
        WritableRoots::default(),
    );
    let registry = ServerRegistry::with_defaults().with_entries(&[
        LanguageServerEntry {
            id: id.into(),
            command: command.iter().map(|s| (*s).to_owned()).collect(),
            extensions: vec!["txt".into()],
        },
        LanguageServerEntry {
            id: "missing".into(),
            command: vec!["no-such-language-server-here".into()],
            extensions: vec!["nope".into()],
        },
    ]);
    let (tx, events) = mpsc::unbounded_channel();
    let servers = LanguageServers::new(
        LspSetup {
            launcher: Arc::new(launcher),
            root,
            options: options(),
            registry,
            path_var: std::env::var_os("PATH"),
            runtime: tokio::runtime::Handle::current(),
            timeouts,
            scope,
        },
        move |e| {
            let _ = tx.send(e);
        },
    );
    Fixture {
        servers,
        events,
        dir,
    }
}

fn quick() -> Timeouts {
    Timeouts {
        initialize: Duration::from_secs(20),
        request: Duration::from_secs(10),
        shutdown: Duration::from_secs(3),
        restart_base: Duration::from_millis(20),
    }
}

/// Polls `check` until it holds (or fails the test after 20 s).
async fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    for _ in 0..1000 {
        if let Some(v) = check() {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

fn ranges(servers: &LanguageServers, p: &NormalizedPath) -> Vec<TextRange> {
    servers
        .diagnostics(std::slice::from_ref(p))
        .into_iter()
        .flat_map(|f| f.diagnostics)
        .map(|d| d.range)
        .collect()
}

fn state(servers: &LanguageServers, id: &str) -> ServerState {
    servers
        .statuses()
        .into_iter()
        .find(|s| s.id == id)
        .unwrap()
        .state
}

async fn diagnostics_follow_edits(encoding_arg: &str) {
    let f = fixture(&[SERVER, encoding_arg], quick());
    let a = path("a.txt");
    // Hangul (one UTF-16 unit, three bytes each) and an emoji (two units,
    // four bytes) before the error on the same line.
    f.servers
        .open(&a, "let 한글🙂 = ERROR;\nok\n", 1)
        .await
        .unwrap();
    assert_eq!(
        f.servers
            .wait_for_reports(std::slice::from_ref(&a), Duration::from_secs(20))
            .await,
        Vec::<NormalizedPath>::new()
    );
    let all = f.servers.diagnostics(&[]);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].path, a);
    assert_eq!(all[0].diagnostics.len(), 1);
    let d = &all[0].diagnostics[0];
    assert_eq!(d.range, range(0, 10, 15));
    assert_eq!(d.severity, Severity::Error);
    assert_eq!(d.message, "found ERROR");
    assert_eq!(d.source.as_deref(), Some("test-server"));

    // Typing two characters (one a Hangul syllable) before it moves it.
    f.servers.change(
        &a,
        2,
        &[
            Edit {
                start: 4,
                end: 4,
                text: "a".into(),
            },
            Edit {
                start: 5,
                end: 5,
                text: "밥".into(),
            },
        ],
    );
    eventually("the moved diagnostic", || {
        (ranges(&f.servers, &a) == vec![range(0, 12, 17)]).then_some(())
    })
    .await;
    // An error on a new second line, then the first one fixed.
    f.servers.change(
        &a,
        3,
        &[Edit {
            start: 19,
            end: 19,
            text: "🙂ERROR".into(),
        }],
    );
    eventually("two diagnostics", || {
        (ranges(&f.servers, &a) == vec![range(0, 12, 17), range(1, 1, 6)]).then_some(())
    })
    .await;
    f.servers.change(
        &a,
        4,
        &[Edit {
            start: 12,
            end: 17,
            text: "fine".into(),
        }],
    );
    eventually("the fixed line", || {
        (ranges(&f.servers, &a) == vec![range(1, 1, 6)]).then_some(())
    })
    .await;
    f.servers.replace_text(&a, 5, "all good\n");
    eventually("no diagnostics", || {
        f.servers.diagnostics(&[]).is_empty().then_some(())
    })
    .await;
    f.servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_follow_edits_in_utf16_columns() {
    diagnostics_follow_edits("utf-16").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_follow_edits_in_utf8_columns() {
    diagnostics_follow_edits("utf-8").await;
}

/// The hover text at the start of `p`'s line `line`, column 2.
async fn hover_at(servers: &LanguageServers, p: &NormalizedPath, line: u32) -> String {
    servers.hover(p, pos(line, 2)).await.unwrap().unwrap().text
}

/// A server that publishes nothing and registers pull diagnostics only
/// once it has read its settings, as pyright does: a one-shot query's
/// documents are pulled (a pull it cancels is asked again), its answer for
/// the document's version stands, an edit is pulled anew, and its
/// `python` settings include only the documents opened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_registers_pulls_later_is_pulled_and_told_the_open_documents() {
    let f = fixture_as(
        "pyright",
        &[SERVER, "--pull"],
        quick(),
        Scope::OpenDocuments,
    );
    let root = f.dir.path().canonicalize().unwrap();
    let (a, b) = (path("src/a.txt"), path("b.txt"));
    f.servers.hold(&a, "ok\nlet ERROR here\n", 0).unwrap();
    f.servers.hold(&b, "include\n", 0).unwrap();
    f.servers.attach(&a).await.unwrap();
    f.servers.attach(&b).await.unwrap();
    let both = [a.clone(), b.clone()];
    assert_eq!(
        f.servers
            .wait_for_reports(&both, Duration::from_secs(20))
            .await,
        Vec::<NormalizedPath>::new()
    );
    assert_eq!(ranges(&f.servers, &a), vec![range(1, 4, 9)]);
    assert_eq!(f.servers.reported(&both), both.to_vec());
    assert_eq!(
        hover_at(&f.servers, &b, 0).await,
        format!(
            "include: {}",
            serde_json::json!([root.join("b.txt"), root.join("src/a.txt")])
        )
    );
    // Fixed: the next answer is waited for, not the last one taken.
    f.servers.change(
        &a,
        1,
        &[Edit {
            start: 7,
            end: 12,
            text: "fine".into(),
        }],
    );
    assert_eq!(
        f.servers
            .wait_for_reports(std::slice::from_ref(&a), Duration::from_secs(20))
            .await,
        Vec::<NormalizedPath>::new()
    );
    assert_eq!(ranges(&f.servers, &a), Vec::<TextRange>::new());
    f.servers.shutdown().await;
}

/// Servers of the whole workspace (the window's) leave a server's
/// `python` settings to its defaults.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_servers_leave_the_python_settings_to_the_server() {
    let f = fixture_as("pyright", &[SERVER, "--pull"], quick(), Scope::Workspace);
    let b = path("b.txt");
    f.servers.open(&b, "include ERROR\n", 0).await.unwrap();
    assert_eq!(
        f.servers
            .wait_for_reports(std::slice::from_ref(&b), Duration::from_secs(20))
            .await,
        Vec::<NormalizedPath>::new()
    );
    assert_eq!(ranges(&f.servers, &b), vec![range(0, 8, 13)]);
    assert_eq!(hover_at(&f.servers, &b, 0).await, "include: null");
    f.servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_completion_definition_and_semantic_tokens_answer_in_characters() {
    let f = fixture(&[SERVER], quick());
    let a = path("src/b.txt");
    let text = "def 한글\nlet x = 한글 + al\n";
    f.servers.open(&a, text, 1).await.unwrap();

    let hover = f.servers.hover(&a, pos(1, 9)).await.unwrap().unwrap();
    assert_eq!(hover.text, "hover: 한글");
    assert_eq!(f.servers.hover(&a, pos(1, 7)).await.unwrap(), None);

    let defs = f.servers.definition(&a, pos(1, 8)).await.unwrap();
    assert_eq!(defs.len(), 1);
    assert_eq!(defs[0].path, Some(a.clone()));
    assert_eq!(defs[0].range, range(0, 4, 6));
    assert!(defs[0].file.ends_with(Path::new("src/b.txt")));

    assert_eq!(f.servers.trigger_characters(&a), vec![".".to_owned()]);
    let list = f.servers.completion(&a, pos(1, 15), None).await.unwrap();
    let labels: Vec<&str> = list.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, vec!["alpha", "beta", "gamma"]);
    // "al" is characters 13..15 of line 1, offsets 20..22 of the text.
    assert_eq!(
        list[0].edit,
        Edit {
            start: 20,
            end: 22,
            text: "alpha()".into()
        }
    );
    assert_eq!(list[0].kind, Some("function"));
    assert_eq!(
        list[1].edit,
        Edit {
            start: 20,
            end: 22,
            text: "beta".into()
        }
    );
    assert_eq!(
        list[2].additional,
        vec![Edit {
            start: 0,
            end: 0,
            text: "import gamma\n".into()
        }]
    );

    let (version, tokens) = f.servers.semantic_tokens(&a).await.unwrap().unwrap();
    assert_eq!(version, 1);
    let spans: Vec<(u32, u32, u32, &str)> = tokens
        .iter()
        .map(|t| (t.line, t.start_char, t.length, t.token_type.as_str()))
        .collect();
    assert_eq!(spans, vec![(1, 0, 3, "keyword")]);
    f.servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_restarts_and_gets_its_documents_again() {
    let mut f = fixture(&[SERVER], quick());
    let a = path("a.txt");
    f.servers.open(&a, "crash here ERROR\n", 1).await.unwrap();
    assert_eq!(
        f.servers
            .wait_for_reports(std::slice::from_ref(&a), Duration::from_secs(20))
            .await,
        Vec::<NormalizedPath>::new()
    );
    assert_eq!(ranges(&f.servers, &a), vec![range(0, 11, 16)]);
    while f.events.try_recv().is_ok() {}

    let err = f.servers.hover(&a, pos(0, 2)).await.unwrap_err();
    assert!(
        matches!(&err, LspError::Closed { reason } if reason.contains("status 3")),
        "{err}"
    );
    assert_eq!(err.code(), "lsp.closed");
    assert!(!matches!(state(&f.servers, "test"), ServerState::Running));
    // It comes back and is sent the document again, with the edit made
    // while it was down.
    f.servers.change(
        &a,
        2,
        &[Edit {
            start: 0,
            end: 5,
            text: "opens".into(),
        }],
    );
    let mut answer = None;
    for _ in 0..500 {
        if let Ok(Some(hover)) = f.servers.hover(&a, pos(0, 1)).await {
            answer = Some(hover.text);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(answer.as_deref(), Some("opened 1 times"));
    assert_eq!(state(&f.servers, "test"), ServerState::Running);
    // And reports on it again.
    eventually("the reopened document's report", || {
        (ranges(&f.servers, &a) == vec![range(0, 11, 16)]).then_some(())
    })
    .await;
    let mut heard_servers = false;
    while let Ok(e) = f.events.try_recv() {
        heard_servers |= e == LspEvent::Servers;
    }
    assert!(heard_servers, "listeners hear of the crash and restart");
    f.servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_crashing_in_a_loop_is_left_stopped_with_its_reason() {
    let f = fixture(&[SERVER], quick());
    let a = path("a.txt");
    // The server dies each time the document is opened, restarts included.
    let _ = f.servers.open(&a, "CRASH_ON_OPEN\n", 1).await;
    let reason = eventually("the stop", || match state(&f.servers, "test") {
        ServerState::Failed { reason } => Some(reason),
        _ => None,
    })
    .await;
    assert!(reason.contains("status 4"), "{reason}");
    assert!(reason.ends_with("(6 crashes in a row)"), "{reason}");
    // It is not started again behind the person's back.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(matches!(
        state(&f.servers, "test"),
        ServerState::Failed { .. }
    ));
    // Once the document is fixed, Restart brings it back.
    f.servers.replace_text(&a, 2, "fine now ERROR\n");
    f.servers.restart("test").await.unwrap();
    assert_eq!(state(&f.servers, "test"), ServerState::Running);
    assert_eq!(
        f.servers
            .wait_for_reports(std::slice::from_ref(&a), Duration::from_secs(20))
            .await,
        Vec::<NormalizedPath>::new()
    );
    assert_eq!(ranges(&f.servers, &a), vec![range(0, 9, 14)]);
    f.servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_request_times_out_and_the_server_goes_on() {
    let f = fixture(
        &[SERVER],
        Timeouts {
            request: Duration::from_millis(400),
            ..quick()
        },
    );
    let a = path("a.txt");
    f.servers.open(&a, "sleep well\n", 1).await.unwrap();
    let err = f.servers.hover(&a, pos(0, 1)).await.unwrap_err();
    assert_eq!(
        err,
        LspError::Timeout {
            method: "textDocument/hover".into(),
            after_ms: 400
        }
    );
    assert_eq!(
        err.to_string(),
        "the language server did not answer textDocument/hover within 400 ms"
    );
    // The sleeping request was cancelled; the next one is answered.
    let hover = f.servers.hover(&a, pos(0, 7)).await.unwrap().unwrap();
    assert_eq!(hover.text, "hover: well");
    assert_eq!(state(&f.servers, "test"), ServerState::Running);
    f.servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_server_says_how_to_install_it_and_nothing_is_spawned() {
    let f = fixture(&[SERVER], quick());
    let err = f
        .servers
        .open(&path("x.nope"), "text", 1)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        LspError::NotInstalled {
            server: "missing".into(),
            program: "no-such-language-server-here".into(),
            install: "install no-such-language-server-here".into(),
        }
    );
    assert_eq!(err.code(), "lsp.not_installed");
    assert_eq!(
        state(&f.servers, "missing"),
        ServerState::NotInstalled {
            install: "install no-such-language-server-here".into()
        }
    );
    let none = f
        .servers
        .open(&path("notes.md"), "text", 1)
        .await
        .unwrap_err();
    assert_eq!(none.code(), "lsp.no_server");
    assert_eq!(
        none.to_string(),
        "no language server is set up for notes.md"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_servers_without_a_restart_and_close_forgets_diagnostics() {
    let f = fixture(&[SERVER], quick());
    let a = path("a.txt");
    let b = path("b.txt");
    f.servers.open(&a, "ERROR\n", 1).await.unwrap();
    f.servers.open(&b, "ERROR ERROR\n", 1).await.unwrap();
    assert_eq!(
        f.servers
            .wait_for_reports(&[a.clone(), b.clone()], Duration::from_secs(20))
            .await,
        Vec::<NormalizedPath>::new()
    );
    // A second holder (a diagnostics query beside the editor) with the
    // same text: one close leaves it open and reported.
    f.servers.open(&a, "ERROR\n", 0).await.unwrap();
    f.servers.close(&a);
    assert!(f.servers.is_open(&a));
    assert_eq!(ranges(&f.servers, &a), vec![range(0, 0, 5)]);
    f.servers.close(&a);
    assert!(!f.servers.is_open(&a));
    let left: Vec<NormalizedPath> = f
        .servers
        .diagnostics(&[])
        .into_iter()
        .map(|d| d.path)
        .collect();
    assert_eq!(left, vec![b.clone()]);
    f.servers.shutdown().await;
    eventually("the stop", || {
        matches!(state(&f.servers, "test"), ServerState::Idle { .. }).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(matches!(
        state(&f.servers, "test"),
        ServerState::Idle { .. }
    ));
}

/// Processes whose command line holds `tag`.
#[cfg(target_os = "linux")]
fn processes_tagged(tag: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(tag))
                && std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| !s.contains(") Z "))
        })
        .count()
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_servers_ends_their_processes() {
    let tag = format!("tag-{}-{}", std::process::id(), line!());
    let f = fixture(&[SERVER, &tag], quick());
    f.servers.open(&path("a.txt"), "x\n", 1).await.unwrap();
    assert_eq!(processes_tagged(&tag), 1);
    drop(f);
    eventually("the server's end", || {
        (processes_tagged(&tag) == 0).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_made_before_the_server_runs_reach_it() {
    let f = fixture(&[SERVER], quick());
    let a = path("a.txt");
    // The editor holds the document at once and keeps typing while the
    // server starts.
    f.servers.hold(&a, "x ERROR\n", 1).unwrap();
    f.servers.change(
        &a,
        2,
        &[Edit {
            start: 0,
            end: 0,
            text: "한🙂".into(),
        }],
    );
    f.servers.attach(&a).await.unwrap();
    assert_eq!(
        f.servers
            .wait_for_reports(std::slice::from_ref(&a), Duration::from_secs(20))
            .await,
        Vec::<NormalizedPath>::new()
    );
    assert_eq!(ranges(&f.servers, &a), vec![range(0, 4, 9)]);
    f.servers.shutdown().await;
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_a_server_still_starting() {
    let tag = format!("tag-{}-{}", std::process::id(), line!());
    // A server that never answers `initialize`.
    let script = format!("sleep 600; echo {tag}");
    let f = fixture(&["sh", "-c", &script], quick());
    let servers = f.servers.clone();
    let opening = tokio::spawn(async move { servers.open(&path("a.txt"), "x\n", 1).await });
    eventually("the server's start", || {
        (processes_tagged(&tag) == 1).then_some(())
    })
    .await;
    assert_eq!(state(&f.servers, "test"), ServerState::Starting);
    f.servers.shutdown().await;
    assert_eq!(processes_tagged(&tag), 0);
    assert!(opening.await.unwrap().is_err());
}

/// A server that reports an empty answer at once and its real one after
/// work announced with `$/progress` (as rust-analyzer does with `cargo
/// check`): the wait ends with the real answer, never the early empty one;
/// a server whose work never ends leaves its file without an answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_ends_with_the_answer_after_the_servers_work_not_its_first_report() {
    let f = fixture(&[SERVER], quick());
    let a = path("a.txt");
    let b = path("b.txt");
    f.servers.open(&a, "SLOW_CHECK ERROR\n", 1).await.unwrap();
    f.servers.open(&b, "fine\n", 1).await.unwrap();
    let started = tokio::time::Instant::now();
    assert_eq!(
        f.servers
            .wait_for_reports(&[a.clone(), b.clone()], Duration::from_secs(20))
            .await,
        Vec::<NormalizedPath>::new()
    );
    // The early empty report came at once; the real one 1.8 s later.
    assert!(started.elapsed() >= Duration::from_millis(1800));
    assert_eq!(ranges(&f.servers, &a), vec![range(0, 11, 16)]);

    let c = path("c.txt");
    f.servers
        .open(&c, "NEVER_SETTLES ERROR\n", 1)
        .await
        .unwrap();
    assert_eq!(
        f.servers
            .wait_for_reports(std::slice::from_ref(&c), Duration::from_secs(3))
            .await,
        vec![c.clone()]
    );
    // Reported (empty), but not settled: what was said is not the answer.
    assert_eq!(f.servers.reported(std::slice::from_ref(&c)), vec![c]);
    // The server's status says what it is doing, in its own words.
    let work: Vec<String> = f
        .servers
        .statuses()
        .into_iter()
        .filter_map(|s| s.work)
        .collect();
    assert_eq!(work, vec!["checking: 1/2 crates (50%)".to_owned()]);
}

/// A server that answers "content modified" (as rust-analyzer does while it
/// reloads) is asked again, and its third answer is the one returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_answered_content_modified_is_asked_again() {
    let f = fixture(&[SERVER], quick());
    let a = path("m.txt");
    f.servers.open(&a, "modified\n", 1).await.unwrap();
    let hover = f.servers.hover(&a, pos(0, 2)).await.unwrap().unwrap();
    assert_eq!(hover.text, "answered after 3 tries");
}
