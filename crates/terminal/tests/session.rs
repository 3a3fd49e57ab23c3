//! A real shell on a real pseudo-terminal, through the real launcher.
#![cfg(unix)]
#![expect(clippy::unwrap_used, reason = "test helpers")]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use cocode_core::process::ExitStatus;
use cocode_terminal::{
    GridSize, Key, Modifiers, Palette, Screen, SearchQuery, SelectionKind, SessionOptions,
    TerminalSession, encode_key, encode_paste,
};
use cocode_toolchain::{Launcher, WritableRoots};
use pretty_assertions::assert_eq;

struct Fixture {
    runtime: tokio::runtime::Runtime,
    launcher: Launcher,
    dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let inherited: BTreeMap<String, String> = [
        (
            "PATH",
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
        ),
        ("HOME", std::env::temp_dir().display().to_string()),
        ("LANG", "C.UTF-8".into()),
        // The app's own environment holds keys; the person's terminal must not.
        ("ANTHROPIC_API_KEY", "sk-ant-from-the-app".into()),
        ("OPENAI_API_KEY", "sk-openai-from-the-app".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let launcher = Launcher::new(runtime.handle().clone(), None, WritableRoots::default())
        .with_inherited_env(inherited);
    Fixture {
        runtime,
        launcher,
        dir: tempfile::tempdir().unwrap(),
    }
}

const SIZE: GridSize = GridSize { rows: 24, cols: 80 };

fn start(fx: &Fixture, argv: &[&str], size: GridSize) -> TerminalSession {
    let options = SessionOptions {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        cwd: fx.dir.path().to_path_buf(),
        size,
        scrollback: 1000,
        env: BTreeMap::from([("PS1".to_owned(), "$ ".to_owned())]),
    };
    TerminalSession::spawn(
        &fx.launcher,
        fx.runtime.handle(),
        options,
        std::sync::Arc::new(|| {}),
    )
    .unwrap()
}

fn bash(fx: &Fixture) -> TerminalSession {
    let s = start(fx, &["bash", "--norc", "--noprofile", "-i"], SIZE);
    wait_for(&s, |screen| screen.text().contains('$'));
    s
}

fn type_line(s: &TerminalSession, line: &str) {
    s.write(format!("{line}\r").into_bytes());
}

/// Polls the screen until `done` holds (a wait, not a timing assertion:
/// the deadline only turns a hang into a readable failure).
fn wait_for(s: &TerminalSession, done: impl Fn(&Screen) -> bool) -> Screen {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let screen = s.screen(&Palette::dark());
        if done(&screen) {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "gave up waiting; the screen:\n{}",
            screen.text()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn find(screen: &Screen, needle: &str) -> (usize, usize) {
    for row in 0..screen.rows {
        let line = screen.line_text(row);
        if let Some(byte) = line.find(needle) {
            return (row, line[..byte].chars().count());
        }
    }
    panic!("{needle:?} is not on the screen:\n{}", screen.text());
}

#[test]
fn colours_from_printf_reach_the_cells() {
    let fx = fixture();
    let s = start(
        &fx,
        &[
            "printf",
            "plain \\033[31mred\\033[0m \\033[1;38;2;10;20;30mrgb\\033[0m \\033[7minv\\033[0m\\n",
        ],
        SIZE,
    );
    let screen = wait_for(&s, |sc| sc.text().contains("inv"));
    let palette = Palette::dark();
    let (row, col) = find(&screen, "red");
    let red = screen.row(row)[col];
    assert_eq!(
        (red.c, red.fg, red.bg),
        ('r', palette.ansi[1], palette.background)
    );
    let (row, col) = find(&screen, "rgb");
    let rgb = screen.row(row)[col];
    assert_eq!(
        (rgb.fg, rgb.style.bold),
        (cocode_terminal::Rgb::new(10, 20, 30), true)
    );
    let (row, col) = find(&screen, "inv");
    let inv = screen.row(row)[col];
    assert_eq!((inv.fg, inv.bg), (palette.background, palette.foreground));
    let (row, col) = find(&screen, "plain");
    assert_eq!(screen.row(row)[col].fg, palette.foreground);
}

#[test]
fn tput_cup_places_the_cursor() {
    let fx = fixture();
    let s = start(
        &fx,
        &["sh", "-c", "clear; tput cup 5 10; printf X; sleep 5"],
        SIZE,
    );
    let screen = wait_for(&s, |sc| sc.text().contains('X'));
    assert_eq!(find(&screen, "X"), (5, 10));
    assert_eq!(screen.cursor.map(|c| (c.row, c.col)), Some((5, 11)));
}

#[test]
fn the_alternate_screen_leaves_the_main_screen_intact() {
    let fx = fixture();
    let s = bash(&fx);
    type_line(&s, "echo main-marker");
    wait_for(&s, |sc| sc.text().matches("main-marker").count() == 2);
    type_line(
        &s,
        "printf '\\033[?1049h\\033[2J\\033[H\\101LTSCREEN'; sleep 1; printf '\\033[?1049l'",
    );
    let during = wait_for(&s, |sc| sc.text().contains("ALTSCREEN"));
    assert!(during.modes.alt_screen);
    assert!(!during.text().contains("main-marker"), "{}", during.text());
    let after = wait_for(&s, |sc| !sc.modes.alt_screen);
    assert!(!after.text().contains("ALTSCREEN"), "{}", after.text());
    assert_eq!(
        after.text().matches("main-marker").count(),
        2,
        "{}",
        after.text()
    );
}

#[test]
fn stty_sees_the_new_size_after_a_resize() {
    let fx = fixture();
    let mut s = bash(&fx);
    type_line(&s, "stty size");
    wait_for(&s, |sc| sc.text().contains("24 80"));
    s.resize(GridSize {
        rows: 30,
        cols: 100,
    })
    .unwrap();
    type_line(&s, "stty size");
    let screen = wait_for(&s, |sc| sc.text().contains("30 100"));
    assert_eq!((screen.rows, screen.cols), (30, 100));
}

#[test]
fn hangul_and_emoji_take_two_cells() {
    let fx = fixture();
    let s = start(&fx, &["printf", "한글😀x\\n"], SIZE);
    let screen = wait_for(&s, |sc| sc.text().contains('x'));
    let row = screen.row(0);
    let cells: Vec<(char, bool, bool)> = row[..7].iter().map(|c| (c.c, c.wide, c.spacer)).collect();
    assert_eq!(
        cells,
        [
            ('한', true, false),
            (' ', false, true),
            ('글', true, false),
            (' ', false, true),
            ('😀', true, false),
            (' ', false, true),
            ('x', false, false),
        ]
    );
    assert_eq!(screen.line_text(0), "한글😀x");
}

#[test]
fn bracketed_paste_reaches_the_program() {
    let fx = fixture();
    let s = start(
        &fx,
        &[
            "sh",
            "-c",
            "printf '\\033[?2004h'; stty raw -echo; printf READY; head -c 17 | od -An -c; sleep 5",
        ],
        SIZE,
    );
    let screen = wait_for(&s, |sc| {
        sc.modes.bracketed_paste && sc.text().contains("READY")
    });
    s.write(encode_paste("hi\nyo", screen.modes));
    let screen = wait_for(&s, |sc| sc.text().contains('~'));
    let words = screen
        .text()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        words.contains("033 [ 2 0 0 ~ h i \\r y o 033 [ 2 0 1 ~"),
        "{words}"
    );
}

#[test]
fn ctrl_c_interrupts_a_sleep() {
    let fx = fixture();
    let s = bash(&fx);
    type_line(&s, "sleep 60");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !s.busy() {
        assert!(
            Instant::now() < deadline,
            "sleep never ran in the foreground"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let ctrl = Modifiers {
        ctrl: true,
        ..Modifiers::NONE
    };
    let interrupt = encode_key(Key::Char('c'), ctrl, s.screen(&Palette::dark()).modes).unwrap();
    assert_eq!(interrupt, [3]);
    // The shell may still be between fork and exec when it first shows as
    // busy; an interrupt there is lost, so it is pressed again as a person would.
    while s.busy() {
        s.write(interrupt.clone());
        assert!(Instant::now() < deadline, "sleep was never interrupted");
        std::thread::sleep(Duration::from_millis(200));
    }
    type_line(&s, "echo status-$?");
    wait_for(&s, |sc| sc.text().contains("status-130"));
    assert!(!s.busy());
}

#[test]
fn the_exit_status_is_reported() {
    let fx = fixture();
    let s = start(&fx, &["sh", "-c", "echo bye; exit 3"], SIZE);
    let deadline = Instant::now() + Duration::from_secs(30);
    while s.exit().is_none() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(s.exit(), Some(ExitStatus::Code(3)));
    wait_for(&s, |sc| sc.text().contains("bye"));
}

#[test]
fn the_terminal_environment_holds_no_credential_of_the_app() {
    let fx = fixture();
    let s = start(
        &fx,
        &["sh", "-c", "env | sort; echo END-OF-ENV"],
        GridSize {
            rows: 60,
            cols: 120,
        },
    );
    let screen = wait_for(&s, |sc| sc.text().contains("END-OF-ENV"));
    let text = screen.text();
    assert!(text.contains("TERM=xterm-256color"), "{text}");
    assert!(text.contains("COLORTERM=truecolor"), "{text}");
    for secret in ["sk-ant-from-the-app", "sk-openai-from-the-app", "API_KEY"] {
        assert!(
            !text.contains(secret),
            "{secret} reached the terminal:\n{text}"
        );
    }
}

#[test]
fn titles_links_selection_and_search() {
    let fx = fixture();
    let s = start(
        &fx,
        &[
            "sh",
            "-c",
            "printf '\\033]0;build (ok)\\007'; for i in $(seq 1 200); do echo line-$i; done; \
             echo 'docs at https://example.com/guide). next'; \
             printf '\\033]8;;https://cocode.test/x\\033\\\\click\\033]8;;\\033\\\\\\n'; sleep 5",
        ],
        SIZE,
    );
    let screen = wait_for(&s, |sc| sc.text().contains("click"));
    assert_eq!(s.title().as_deref(), Some("build (ok)"));
    let (row, col) = find(&screen, "example.com");
    assert_eq!(
        s.link_at(row, col + 3).as_deref(),
        Some("https://example.com/guide")
    );
    assert_eq!(s.link_at(row, 0), None);
    let (row, col) = find(&screen, "click");
    assert!(screen.row(row)[col].link);
    assert_eq!(
        s.link_at(row, col + 1).as_deref(),
        Some("https://cocode.test/x")
    );

    // A word selection copies the word.
    let (row, col) = find(&screen, "docs");
    s.select(SelectionKind::Word, row, col + 1, false);
    assert_eq!(s.selection_text().as_deref(), Some("docs"));
    s.clear_selection();
    assert_eq!(s.selection_text(), None);

    // Search goes back into the scrollback, selects the match and scrolls to it.
    let query = SearchQuery {
        text: "LINE-42".into(),
        regex: false,
        case_sensitive: false,
    };
    assert!(s.search(&query, true).unwrap());
    assert_eq!(s.selection_text().as_deref(), Some("line-42"));
    let scrolled = s.screen(&Palette::dark());
    assert!(scrolled.display_offset > 0);
    assert!(scrolled.text().contains("line-42"));
    let sensitive = SearchQuery {
        case_sensitive: true,
        ..query
    };
    s.clear_selection();
    assert!(!s.search(&sensitive, true).unwrap());
    // Forward from the first line, a regular expression.
    let regex = SearchQuery {
        text: "line-1[0-9]{2}".into(),
        regex: true,
        case_sensitive: true,
    };
    assert!(s.search(&regex, false).unwrap());
    assert_eq!(s.selection_text().as_deref(), Some("line-100"));
    let bad = SearchQuery {
        text: "(".into(),
        regex: true,
        case_sensitive: true,
    };
    assert_eq!(
        s.search(&bad, false).unwrap_err().code(),
        "TERMINAL_SEARCH_INVALID"
    );
    s.scroll_to_bottom();
    assert_eq!(s.screen(&Palette::dark()).display_offset, 0);
}

#[test]
fn a_missing_program_is_a_typed_error() {
    let fx = fixture();
    let options = SessionOptions {
        argv: vec!["no-such-program-cocode".into()],
        cwd: fx.dir.path().to_path_buf(),
        size: SIZE,
        scrollback: 10,
        env: BTreeMap::new(),
    };
    let err = TerminalSession::spawn(
        &fx.launcher,
        fx.runtime.handle(),
        options,
        std::sync::Arc::new(|| {}),
    )
    .unwrap_err();
    assert_eq!(err.code(), "TERMINAL_PROGRAM_NOT_FOUND", "{err}");
}

#[test]
fn a_viewer_shows_piped_output_with_bare_line_feeds() {
    let woken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&woken);
    let v = TerminalSession::viewer(
        GridSize { rows: 5, cols: 20 },
        100,
        std::sync::Arc::new(move || {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }),
    );
    assert!(!v.interactive());
    assert!(v.take_dirty());
    v.feed(b"one\ntwo\n\x1b[32mthree\x1b[0m\n");
    v.feed(b"four\n");
    // Two feeds before the view drew: one wake.
    assert_eq!(woken.load(std::sync::atomic::Ordering::SeqCst), 1);
    let screen = v.screen(&Palette::dark());
    assert_eq!(screen.text().trim_end(), "one\ntwo\nthree\nfour");
    assert_eq!(screen.cursor, None);
    assert_eq!(screen.row(2)[0].fg, Palette::dark().ansi[2]);
    // Typing into a read-only view does nothing.
    v.write(b"rm -rf /\r".to_vec());
    v.finish(ExitStatus::Code(0));
    assert_eq!(v.exit(), Some(ExitStatus::Code(0)));
    assert!(v.output_ended());
}

#[test]
fn the_scrollback_keeps_the_lines_it_is_set_to_and_a_smaller_one_drops_the_oldest() {
    let v = TerminalSession::viewer(
        GridSize { rows: 5, cols: 20 },
        10,
        std::sync::Arc::new(|| {}),
    );
    let lines: Vec<String> = (0..100).map(|n| format!("line {n}")).collect();
    let lines = lines.join("\n") + "\n";
    v.feed(lines.as_bytes());
    assert_eq!(v.screen(&Palette::dark()).history, 10);
    v.set_scrollback(40);
    v.feed(lines.as_bytes());
    assert_eq!(v.screen(&Palette::dark()).history, 40);
    v.set_scrollback(3);
    assert_eq!(v.screen(&Palette::dark()).history, 3);
    // The screen shows lines 96 to 99 and the cursor's empty line; the
    // three kept above it are 93 to 95.
    v.scroll(10);
    assert_eq!(
        v.screen(&Palette::dark()).text().lines().next(),
        Some("line 93")
    );
}

/// Resident memory of this process, in bytes.
#[cfg(target_os = "linux")]
fn resident() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    kib * 1024
}

#[cfg(target_os = "linux")]
#[test]
fn a_flood_finishes_while_frames_keep_completing_and_memory_stays_bounded() {
    let fx = fixture();
    let before = resident();
    let options = SessionOptions {
        argv: ["sh", "-c", "yes | head -c 200000000"]
            .map(str::to_owned)
            .to_vec(),
        cwd: fx.dir.path().to_path_buf(),
        size: SIZE,
        scrollback: 10_000,
        env: BTreeMap::new(),
    };
    let s = TerminalSession::spawn(
        &fx.launcher,
        fx.runtime.handle(),
        options,
        std::sync::Arc::new(|| {}),
    )
    .unwrap();
    // A frame loop like the window's: take the change, copy the screen.
    let mut frames_during_flood = 0u32;
    let mut peak = before;
    while !s.output_ended() {
        s.take_dirty();
        let screen = s.screen(&Palette::dark());
        assert_eq!((screen.rows, screen.cols), (24, 80));
        frames_during_flood += 1;
        peak = peak.max(resident());
        std::thread::sleep(Duration::from_millis(16));
    }
    // 100,000,000 lines of "y\n", each line feed turned into "\r\n" by the
    // terminal's line discipline.
    assert_eq!(s.received(), 300_000_000);
    assert!(
        frames_during_flood >= 3,
        "the screen could not be read while output streamed ({frames_during_flood} frames)"
    );
    // 10,000 lines of scrollback at 80 columns are about 20 MB of cells; a
    // hundred million lines kept would be gigabytes.
    let growth = peak.saturating_sub(before);
    assert!(growth < 100 * 1024 * 1024, "memory grew by {growth} bytes");
    let screen = s.screen(&Palette::dark());
    assert_eq!(screen.history, 10_000);
}
