#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixture trees on disk"
)]

use super::*;
use pretty_assertions::assert_eq;

fn names(listing: &Listing) -> Vec<(String, EntryKind)> {
    listing
        .entries
        .iter()
        .map(|e| (e.name.clone(), e.kind))
        .collect()
}

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
    std::fs::create_dir_all(root.join("src/nested")).unwrap();
    std::fs::create_dir_all(root.join("target/debug")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join(".cocode/history")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("src/debug.log"), "x").unwrap();
    std::fs::write(root.join("src/nested/.gitignore"), "secret.txt\n").unwrap();
    std::fs::write(root.join("src/nested/secret.txt"), "x").unwrap();
    std::fs::write(root.join("src/nested/kept.txt"), "x").unwrap();
    std::fs::write(root.join("README.md"), "# hi\n").unwrap();
    std::fs::write(root.join("안녕하세요.md"), "한국어\n").unwrap();
    std::fs::write(root.join("b.txt"), "").unwrap();
    std::fs::write(root.join("B2.txt"), "").unwrap();
    std::fs::write(root.join(".env.example"), "").unwrap();
    dir
}

#[test]
fn workspace_listing_respects_gitignore_and_hides_state_folders() {
    let dir = fixture();
    let root = list_dir(dir.path(), ListFilter::Workspace).unwrap();
    assert_eq!(
        names(&root),
        vec![
            ("src".to_owned(), EntryKind::Dir),
            (".env.example".to_owned(), EntryKind::File),
            (".gitignore".to_owned(), EntryKind::File),
            ("b.txt".to_owned(), EntryKind::File),
            ("B2.txt".to_owned(), EntryKind::File),
            ("README.md".to_owned(), EntryKind::File),
            ("안녕하세요.md".to_owned(), EntryKind::File),
        ]
    );
    assert_eq!(root.omitted, 0);
    let src = list_dir(&dir.path().join("src"), ListFilter::Workspace).unwrap();
    assert_eq!(
        names(&src),
        vec![
            ("nested".to_owned(), EntryKind::Dir),
            ("main.rs".to_owned(), EntryKind::File)
        ],
        "the parent's *.log rule applies below it"
    );
    let nested = list_dir(&dir.path().join("src/nested"), ListFilter::Workspace).unwrap();
    assert_eq!(
        names(&nested),
        vec![
            (".gitignore".to_owned(), EntryKind::File),
            ("kept.txt".to_owned(), EntryKind::File)
        ]
    );
    let main = &src.entries[1];
    assert_eq!(
        (main.size, main.path.clone()),
        (13, dir.path().join("src/main.rs"))
    );
}

#[test]
fn folder_picker_lists_every_folder_and_no_files() {
    let dir = fixture();
    let root = list_dir(dir.path(), ListFilter::FoldersOnly).unwrap();
    assert_eq!(
        names(&root),
        vec![
            ("src".to_owned(), EntryKind::Dir),
            ("target".to_owned(), EntryKind::Dir)
        ]
    );
}

#[test]
fn listing_a_missing_folder_is_an_error_not_an_empty_list() {
    let dir = tempfile::tempdir().unwrap();
    let err = list_dir(&dir.path().join("gone"), ListFilter::Workspace).unwrap_err();
    assert!(err.contains("gone"), "{err}");
}

#[cfg(unix)]
#[test]
fn symlinks_are_listed_but_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/", dir.path().join("root-link")).unwrap();
    let listing = list_dir(dir.path(), ListFilter::Workspace).unwrap();
    assert_eq!(
        names(&listing),
        vec![("root-link".to_owned(), EntryKind::Symlink)]
    );
}

/// A command can make FIFOs where ignore files belong; opened blocking, one
/// hung the Explorer's worker (and every listing) for good.
#[cfg(unix)]
#[test]
fn fifos_named_like_ignore_files_never_block_a_listing() {
    let dir = fixture();
    let root = dir.path();
    for fifo in [".ignore", "src/.gitignore"] {
        let made = std::process::Command::new("mkfifo")
            .arg(root.join(fifo))
            .status()
            .unwrap();
        assert!(made.success());
    }
    let src = list_dir(&root.join("src"), ListFilter::Workspace).unwrap();
    assert_eq!(
        names(&src),
        vec![
            ("nested".to_owned(), EntryKind::Dir),
            (".gitignore".to_owned(), EntryKind::Other),
            ("main.rs".to_owned(), EntryKind::File)
        ]
    );
    let (files, omitted) = crate::host::files::list_files(root);
    assert_eq!(
        (files, omitted),
        (
            vec![
                ".env.example".to_owned(),
                ".gitignore".to_owned(),
                "B2.txt".to_owned(),
                "README.md".to_owned(),
                "b.txt".to_owned(),
                "src/main.rs".to_owned(),
                "src/nested/.gitignore".to_owned(),
                "src/nested/kept.txt".to_owned(),
                "안녕하세요.md".to_owned(),
            ],
            0
        )
    );
}

fn rel(s: &str) -> NormalizedPath {
    serde_json::from_value(serde_json::Value::from(s)).unwrap()
}

#[test]
fn opening_classifies_text_binary_and_other_encodings() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let p = |n: &str| root.join(n);
    std::fs::write(p("a.txt"), "첫 줄\r\nsecond\n").unwrap();
    std::fs::write(p("a.bin"), b"\x7fELF\x00\x01").unwrap();
    std::fs::write(p("latin1.txt"), b"caf\xe9\n").unwrap();
    assert_eq!(
        open_file(&root, &p("a.txt")).unwrap(),
        Opened::Text {
            rel: rel("a.txt"),
            rope: ropey::Rope::from_str("첫 줄\r\nsecond\n"),
        }
    );
    assert_eq!(
        open_file(&root, &p("a.bin")).unwrap(),
        Opened::Binary {
            rel: rel("a.bin"),
            size: 6
        }
    );
    assert_eq!(
        open_file(&root, &p("latin1.txt")).unwrap(),
        Opened::NotUtf8 {
            rel: rel("latin1.txt"),
            text: "caf\u{fffd}\n".into(),
            size: 5
        }
    );
    assert_eq!(
        open_file(&root, &p("missing.txt")).unwrap_err(),
        format!("no such file: {}", p("missing.txt").display())
    );
}

#[test]
fn text_is_checked_as_utf8_to_its_end_across_the_pieces_it_is_read_in() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    // A Korean character straddles the end of the binary probe, and the
    // text runs far past ropey's reading buffer.
    let mut text = "a".repeat(8191);
    text.push('한');
    while text.len() < 300_000 {
        text.push_str("줄 line\n");
    }
    std::fs::write(root.join("long.txt"), &text).unwrap();
    assert_eq!(
        open_file(&root, &root.join("long.txt")).unwrap(),
        Opened::Text {
            rel: rel("long.txt"),
            rope: ropey::Rope::from_str(&text),
        }
    );
    // One byte that is not UTF-8 far past the first pieces: the whole file
    // is shown lossily, nothing of it lost or cut.
    let mut bytes = text.clone().into_bytes();
    bytes.extend_from_slice(b"caf\xe9\n");
    bytes.extend_from_slice(text.as_bytes());
    std::fs::write(root.join("mixed.txt"), &bytes).unwrap();
    assert_eq!(
        open_file(&root, &root.join("mixed.txt")).unwrap(),
        Opened::NotUtf8 {
            rel: rel("mixed.txt"),
            text: format!("{text}caf\u{fffd}\n{text}"),
            size: bytes.len() as u64,
        }
    );
}

#[cfg(unix)]
#[test]
fn files_open_through_the_safe_path_only() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("ws");
    std::fs::create_dir_all(root.join(".cocode/config")).unwrap();
    std::fs::write(root.join(".cocode/config/workspace.json"), "{}").unwrap();
    std::fs::write(base.join("secret.txt"), "SECRET").unwrap();
    std::os::unix::fs::symlink(base.join("secret.txt"), root.join("leak.txt")).unwrap();
    let refused = |rel: &str| open_file(&root, &root.join(rel)).unwrap_err();
    for rel in ["leak.txt", ".cocode/config/workspace.json"] {
        let message = refused(rel);
        assert!(!message.contains("SECRET"), "{rel}: {message}");
        assert!(
            message.ends_with(&format!("{}", root.join(rel).display())),
            "{rel}: {message}"
        );
    }
    assert!(refused("leak.txt").starts_with("the real path is outside the workspace"));
    assert_eq!(
        open_file(&root, &base.join("secret.txt")).unwrap_err(),
        format!(
            "not in the open folder: {}",
            base.join("secret.txt").display()
        )
    );
}

#[test]
fn resolving_a_folder_canonicalizes_and_refuses_files() {
    let dir = fixture();
    let dotted = dir.path().join("src/../src");
    assert_eq!(
        resolve_folder(&dotted).unwrap(),
        std::fs::canonicalize(dir.path().join("src")).unwrap()
    );
    assert!(
        resolve_folder(&dir.path().join("README.md"))
            .unwrap_err()
            .starts_with("not a folder")
    );
}

#[test]
fn a_path_asked_to_open_is_a_folder_or_a_file_in_its_folders_real_path() {
    let dir = fixture();
    let real = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        resolve_open(&dir.path().join("src/..")).unwrap(),
        OpenTarget::Folder(real.clone())
    );
    assert_eq!(
        resolve_open(&dir.path().join("src/../README.md")).unwrap(),
        OpenTarget::File(real.join("README.md"))
    );
    #[cfg(unix)]
    {
        // A link to a file outside stays the link, in the folder that has
        // it; a FIFO is refused without being opened (which would block).
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("notes.md"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path().join("notes.md"), dir.path().join("link.md"))
            .unwrap();
        assert_eq!(
            resolve_open(&dir.path().join("link.md")).unwrap(),
            OpenTarget::File(real.join("link.md"))
        );
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(
            resolve_open(&fifo).unwrap_err(),
            format!("not a file or a folder: {}", fifo.display())
        );
    }
    let missing = dir.path().join("gone");
    assert!(
        resolve_open(&missing)
            .unwrap_err()
            .ends_with(&format!(": {}", missing.display()))
    );
}

#[test]
fn the_worker_answers_off_thread_and_wakes_the_ui() {
    let dir = fixture();
    let wakes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&wakes);
    let mut worker = IoWorker::spawn(Waker::new(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }))
    .unwrap();
    worker.send(IoRequest::Open {
        root: dir.path().to_path_buf(),
        path: dir.path().join("README.md"),
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut got = Vec::new();
    while got.is_empty() && std::time::Instant::now() < deadline {
        got = worker.drain();
        thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(
        got,
        vec![IoResponse::Opened {
            path: dir.path().join("README.md"),
            result: Ok(Opened::Text {
                rel: rel("README.md"),
                rope: ropey::Rope::from_str("# hi\n"),
            })
        }]
    );
    assert_eq!(wakes.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn sizes_are_human_readable() {
    assert_eq!(human_size(0), "0 B");
    assert_eq!(human_size(1023), "1023 B");
    assert_eq!(human_size(1536), "1.5 KiB");
    assert_eq!(human_size(5 * 1024 * 1024), "5.0 MiB");
}
