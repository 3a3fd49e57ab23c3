//! A terminal session: the program on a pseudo-terminal (started only
//! through the launcher), a named reader thread and a parser thread feeding
//! its output to the grid, a writer thread for input, and the grid behind a
//! short fair lock.
//!
//! The parser takes bytes as fast as the PTY gives them and wakes the view at
//! most once until the view takes the change ([`TerminalSession::take_dirty`]),
//! so an output flood costs one repaint per frame, never one per chunk.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, mpsc};

use alacritty_terminal::Term;
use alacritty_terminal::event::{Event, EventListener, WindowSize};
use alacritty_terminal::grid::{Dimensions, Scroll};
use alacritty_terminal::index::{Boundary, Column, Direction, Line, Point, Side};
use alacritty_terminal::selection::{Selection, SelectionType};
use alacritty_terminal::sync::FairMutex;
use alacritty_terminal::term::Config;
use alacritty_terminal::term::search::RegexSearch;
use alacritty_terminal::vte::ansi::{Processor, StdSyncHandler};
use cocode_core::process::{
    ExitStatus, LaunchError, LaunchIo, LaunchSpec, ProcessLauncher, PtyControl, SandboxProfile,
};

use crate::screen::{Palette, Screen};

/// Bytes read and not yet taken by the parser past which the reader stops
/// reading: about what a program can get ahead of the parser (the parser
/// may hold as much again, taken and not yet parsed).
const IN_FLIGHT_BYTES: usize = 256 * 1024;

/// Bytes one read asks the PTY for (a PTY hands over about 4 KiB).
const READ_CHUNK: usize = 64 * 1024;

/// Bytes parsed under one hold of the grid's lock, at most (about a
/// millisecond of parsing).
const PARSE_BATCH: usize = 64 * 1024;

/// Asks the view to draw again (from the parser thread).
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// A terminal's size in cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GridSize {
    pub rows: u16,
    pub cols: u16,
}

impl GridSize {
    /// The smallest grid the emulator keeps.
    const MIN: Self = Self { rows: 1, cols: 2 };

    fn clamped(self) -> Self {
        Self {
            rows: self.rows.max(Self::MIN.rows),
            cols: self.cols.max(Self::MIN.cols),
        }
    }

    fn pack(self) -> u32 {
        (u32::from(self.rows) << 16) | u32::from(self.cols)
    }

    fn unpack(v: u32) -> Self {
        Self {
            rows: u16::try_from(v >> 16).unwrap_or(u16::MAX),
            cols: u16::try_from(v & 0xffff).unwrap_or(u16::MAX),
        }
    }
}

impl Dimensions for GridSize {
    fn total_lines(&self) -> usize {
        usize::from(self.rows)
    }

    fn screen_lines(&self) -> usize {
        usize::from(self.rows)
    }

    fn columns(&self) -> usize {
        usize::from(self.cols)
    }
}

/// What to run in a person's terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOptions {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub size: GridSize,
    /// Lines kept above the screen.
    pub scrollback: usize,
    /// Variables besides the launcher's whitelist (`TERM` and `COLORTERM`
    /// are set by the session).
    pub env: BTreeMap<String, String>,
}

/// Why a session could not start or a request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("the terminal's program could not start: {0}")]
    Launch(#[from] LaunchError),
    #[error("the launcher gave the program no pseudo-terminal")]
    NoPty,
    #[error("a terminal thread could not start: {0}")]
    Thread(String),
    #[error("not a valid search pattern: {0}")]
    Search(String),
}

impl SessionError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Launch(LaunchError::NotFound(_)) => "TERMINAL_PROGRAM_NOT_FOUND",
            Self::Launch(_) | Self::NoPty | Self::Thread(_) => "TERMINAL_LAUNCH_FAILED",
            Self::Search(_) => "TERMINAL_SEARCH_INVALID",
        }
    }
}

/// How a selection grows from the point where it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectionKind {
    /// Cell by cell (a drag).
    Simple,
    /// Whole words (a double click).
    Word,
    /// Whole lines (a triple click).
    Line,
}

/// A search in the screen and the scrollback.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchQuery {
    pub text: String,
    /// `text` is a regular expression rather than plain text.
    pub regex: bool,
    pub case_sensitive: bool,
}

impl SearchQuery {
    fn pattern(&self) -> String {
        let body = if self.regex {
            self.text.clone()
        } else {
            let mut escaped = String::with_capacity(self.text.len());
            for c in self.text.chars() {
                if "\\.+*?()|[]{}^$#&-~".contains(c) {
                    escaped.push('\\');
                }
                escaped.push(c);
            }
            escaped
        };
        let flag = if self.case_sensitive { "(?-i)" } else { "(?i)" };
        format!("{flag}{body}")
    }
}

/// What the emulator tells the session besides the grid.
struct Events {
    /// Replies to the program's queries go the same way as typed input.
    input: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    title: Mutex<Option<String>>,
    /// Text a program put on the clipboard (OSC 52), for the view to copy.
    clipboard: Mutex<Option<String>>,
    bell: AtomicBool,
    size: AtomicU32,
    palette: Palette,
}

impl Events {
    fn send(&self, bytes: Vec<u8>) {
        if let Some(tx) = self
            .input
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            let _ = tx.send(bytes);
        }
    }
}

#[derive(Clone)]
struct Listener(Arc<Events>);

impl EventListener for Listener {
    fn send_event(&self, event: Event) {
        let events = &self.0;
        match event {
            Event::PtyWrite(text) => events.send(text.into_bytes()),
            Event::Title(title) => {
                // A title is a label: no control characters, a sane length.
                let clean: String = title
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(200)
                    .collect();
                *events.title.lock().unwrap_or_else(PoisonError::into_inner) = Some(clean);
            }
            Event::ResetTitle => {
                *events.title.lock().unwrap_or_else(PoisonError::into_inner) = None;
            }
            Event::ClipboardStore(_, text) => {
                *events
                    .clipboard
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(text);
            }
            Event::ColorRequest(index, format) => {
                let c = events.palette.answer(index);
                let rgb = alacritty_terminal::vte::ansi::Rgb {
                    r: c.r,
                    g: c.g,
                    b: c.b,
                };
                events.send(format(rgb).into_bytes());
            }
            Event::TextAreaSizeRequest(format) => {
                let size = GridSize::unpack(events.size.load(Ordering::Relaxed));
                events.send(
                    format(WindowSize {
                        num_lines: size.rows,
                        num_cols: size.cols,
                        cell_width: 0,
                        cell_height: 0,
                    })
                    .into_bytes(),
                );
            }
            Event::Bell => events.bell.store(true, Ordering::Relaxed),
            // Clipboard reads are refused (OSC 52 is copy-only); the rest
            // concern a window the view already redraws.
            Event::ClipboardLoad(..)
            | Event::MouseCursorDirty
            | Event::CursorBlinkingChange
            | Event::Wakeup
            | Event::Exit
            | Event::ChildExit(_) => {}
        }
    }
}

/// The state the reader, the waiter and the view share.
struct Inner {
    term: FairMutex<Term<Listener>>,
    events: Arc<Events>,
    /// Set by a change, taken by the view; the view is woken only when it
    /// was clear, so a flood wakes it once per frame.
    dirty: AtomicBool,
    /// The program's output ended (the PTY closed).
    ended: AtomicBool,
    exit: Mutex<Option<ExitStatus>>,
    received: AtomicU64,
    wake: Wake,
    /// The plain-URL matcher, built on the first link lookup (a view asks
    /// on every frame the pointer rests on the grid with Ctrl held).
    urls: Mutex<Option<RegexSearch>>,
}

impl Inner {
    fn new(
        size: GridSize,
        scrollback: usize,
        input: Option<mpsc::Sender<Vec<u8>>>,
        wake: Wake,
    ) -> Arc<Self> {
        let events = Arc::new(Events {
            input: Mutex::new(input),
            title: Mutex::new(None),
            clipboard: Mutex::new(None),
            bell: AtomicBool::new(false),
            size: AtomicU32::new(size.pack()),
            palette: Palette::dark(),
        });
        let config = Config {
            scrolling_history: scrollback,
            ..Config::default()
        };
        let term = Term::new(config, &size, Listener(Arc::clone(&events)));
        Arc::new(Self {
            term: FairMutex::new(term),
            events,
            dirty: AtomicBool::new(true),
            ended: AtomicBool::new(false),
            exit: Mutex::new(None),
            received: AtomicU64::new(0),
            wake,
            urls: Mutex::new(None),
        })
    }

    fn changed(&self) {
        if !self.dirty.swap(true, Ordering::AcqRel) {
            (self.wake)();
        }
    }

    fn parse(&self, parser: &mut Processor<StdSyncHandler>, bytes: &[u8]) {
        {
            let mut term = self.term.lock();
            parser.advance(&mut *term, bytes);
        }
        self.received
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.changed();
    }

    fn set_exit(&self, status: ExitStatus) {
        *self.exit.lock().unwrap_or_else(PoisonError::into_inner) = Some(status);
        self.changed();
    }
}

/// The parser of a read-only view and whether the last byte fed was a
/// carriage return (a line feed after one is not doubled).
struct Feed {
    parser: Processor<StdSyncHandler>,
    after_cr: bool,
}

/// One terminal: a person's shell on a PTY, or a read-only view of an
/// agent command's output.
pub struct TerminalSession {
    inner: Arc<Inner>,
    /// Read-only views: the parser of the fed output.
    feed: Option<Mutex<Feed>>,
    control: Option<Box<dyn PtyControl>>,
    /// Dropping it (with the session) kills the program.
    kill: Option<tokio::sync::oneshot::Sender<()>>,
    pid: Option<u32>,
    size: GridSize,
}

impl std::fmt::Debug for TerminalSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalSession")
            .field("pid", &self.pid)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl TerminalSession {
    /// Starts `options.argv` on a pseudo-terminal through `launcher`, with
    /// the person's-terminal profile (no proxy, no confinement, the
    /// environment whitelist: no credential reaches it).
    pub fn spawn(
        launcher: &dyn ProcessLauncher,
        runtime: &tokio::runtime::Handle,
        options: SessionOptions,
        wake: Wake,
    ) -> Result<Self, SessionError> {
        let size = options.size.clamped();
        let mut env = options.env;
        env.insert("TERM".into(), "xterm-256color".into());
        env.insert("COLORTERM".into(), "truecolor".into());
        env.insert("TERM_PROGRAM".into(), "cocode".into());
        let spec = LaunchSpec {
            argv: options.argv,
            cwd: options.cwd,
            env_overrides: env,
            profile: SandboxProfile::HumanTerminal,
            io: LaunchIo::Pty {
                rows: size.rows,
                cols: size.cols,
            },
            timeout: None,
            output_byte_limit: None,
            extra_writable: Vec::new(),
            secret_env: BTreeMap::new(),
            extra_hosts: Vec::new(),
        };
        let mut handle = launcher.launch(spec)?;
        let pty = handle.take_pty().ok_or(SessionError::NoPty)?;
        let pid = handle.pid();
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        let inner = Inner::new(size, options.scrollback, Some(tx), wake);
        let cocode_core::process::PtyIo {
            reader,
            writer,
            control,
        } = pty;
        start_threads(reader, writer, rx, &inner)?;
        let (kill_tx, kill_rx) = tokio::sync::oneshot::channel::<()>();
        let waiter_inner = Arc::clone(&inner);
        runtime.spawn(async move {
            let status = tokio::select! {
                status = handle.wait() => status.unwrap_or(ExitStatus::Killed),
                _ = kill_rx => {
                    let _ = handle.kill().await;
                    ExitStatus::Killed
                }
            };
            waiter_inner.set_exit(status);
        });
        Ok(Self {
            inner,
            feed: None,
            control: Some(control),
            kill: Some(kill_tx),
            pid,
            size,
        })
    }

    /// A read-only terminal that shows output fed to it (an agent's
    /// command, whose lines end in a bare line feed).
    pub fn viewer(size: GridSize, scrollback: usize, wake: Wake) -> Self {
        let size = size.clamped();
        let inner = Inner::new(size, scrollback, None, wake);
        let mut parser = Processor::<StdSyncHandler>::new();
        // No cursor: nothing is typed here.
        inner.parse(&mut parser, b"\x1b[?25l");
        inner.received.store(0, Ordering::Relaxed);
        Self {
            inner,
            feed: Some(Mutex::new(Feed {
                parser,
                after_cr: false,
            })),
            control: None,
            kill: None,
            pid: None,
            size,
        }
    }

    /// Output for a read-only view. A piped command ends its lines with a
    /// bare line feed, which a terminal's line discipline would have turned
    /// into a carriage return and a line feed: the view does the same.
    pub fn feed(&self, bytes: &[u8]) {
        let Some(feed) = &self.feed else {
            return;
        };
        let mut feed = feed.lock().unwrap_or_else(PoisonError::into_inner);
        let mut translated = Vec::with_capacity(bytes.len() + bytes.len() / 16);
        for &b in bytes {
            if b == b'\n' && !feed.after_cr {
                translated.push(b'\r');
            }
            translated.push(b);
            feed.after_cr = b == b'\r';
        }
        let Feed { parser, .. } = &mut *feed;
        self.inner.parse(parser, &translated);
    }

    /// A read-only view's command ended.
    pub fn finish(&self, status: ExitStatus) {
        if self.feed.is_some() {
            self.inner.ended.store(true, Ordering::Release);
            self.inner.set_exit(status);
        }
    }

    /// Whether this terminal takes input.
    pub fn interactive(&self) -> bool {
        self.feed.is_none()
    }

    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    pub fn size(&self) -> GridSize {
        self.size
    }

    /// Sends bytes to the program (typed keys, a paste, a mouse report)
    /// and brings the view back to the bottom, as typing does.
    pub fn write(&self, bytes: Vec<u8>) {
        if bytes.is_empty() || !self.interactive() {
            return;
        }
        {
            let mut term = self.inner.term.lock();
            if term.grid().display_offset() != 0 {
                term.scroll_display(Scroll::Bottom);
                self.inner.changed();
            }
        }
        self.inner.events.send(bytes);
    }

    /// Resizes the grid and the PTY together (the program gets `SIGWINCH`).
    pub fn resize(&mut self, size: GridSize) -> Result<(), SessionError> {
        let size = size.clamped();
        if size == self.size {
            return Ok(());
        }
        self.size = size;
        self.inner.events.size.store(size.pack(), Ordering::Relaxed);
        self.inner.term.lock().resize(size);
        self.inner.changed();
        if let Some(control) = &self.control {
            control.resize(size.rows, size.cols)?;
        }
        Ok(())
    }

    /// Takes the "changed since last drawn" flag.
    pub fn take_dirty(&self) -> bool {
        self.inner.dirty.swap(false, Ordering::AcqRel)
    }

    /// The visible screen with colours from `palette`.
    pub fn screen(&self, palette: &Palette) -> Screen {
        let term = self.inner.term.lock();
        Screen::capture(&term, palette)
    }

    /// The title the program set (OSC 0/2), without control characters.
    pub fn title(&self) -> Option<String> {
        self.inner
            .events
            .title
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How the program ended; `None` while it runs.
    pub fn exit(&self) -> Option<ExitStatus> {
        *self
            .inner
            .exit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The program's output ended (it and everything holding its terminal
    /// closed it).
    pub fn output_ended(&self) -> bool {
        self.inner.ended.load(Ordering::Acquire)
    }

    /// Bytes of output parsed so far.
    pub fn received(&self) -> u64 {
        self.inner.received.load(Ordering::Relaxed)
    }

    /// Whether a program other than the shell runs in the foreground.
    pub fn busy(&self) -> bool {
        if self.exit().is_some() {
            return false;
        }
        match (&self.control, self.pid) {
            (Some(control), Some(pid)) => control.foreground_group().is_some_and(|g| g != pid),
            _ => false,
        }
    }

    /// Takes the bell's ring.
    pub fn take_bell(&self) -> bool {
        self.inner.events.bell.swap(false, Ordering::Relaxed)
    }

    /// Takes text a program asked to put on the clipboard (OSC 52).
    pub fn take_clipboard(&self) -> Option<String> {
        self.inner
            .events
            .clipboard
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Kills the program (and its process group).
    pub fn kill(&mut self) {
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
    }

    /// Scrolls the view by `lines` (positive: back into the scrollback).
    pub fn scroll(&self, lines: i32) {
        let mut term = self.inner.term.lock();
        term.scroll_display(Scroll::Delta(lines));
        self.inner.changed();
    }

    /// Keeps `lines` of scrollback from now on: a smaller number drops the
    /// oldest lines beyond it at once, a larger one keeps more as output
    /// comes.
    pub fn set_scrollback(&self, lines: usize) {
        let mut term = self.inner.term.lock();
        term.set_options(Config {
            scrolling_history: lines,
            ..Config::default()
        });
        drop(term);
        self.inner.changed();
    }

    /// Scrolls the view back to the live screen.
    pub fn scroll_to_bottom(&self) {
        self.inner.term.lock().scroll_display(Scroll::Bottom);
        self.inner.changed();
    }

    fn point<T>(term: &Term<T>, row: usize, col: usize) -> Point {
        let offset = term.grid().display_offset();
        let row = row.min(term.screen_lines().saturating_sub(1));
        let col = col.min(term.columns().saturating_sub(1));
        Point::new(
            Line(i32::try_from(row).unwrap_or(i32::MAX) - i32::try_from(offset).unwrap_or(0)),
            Column(col),
        )
    }

    /// Starts a selection at a screen cell (`right_half`: the pointer is on
    /// the cell's right half).
    pub fn select(&self, kind: SelectionKind, row: usize, col: usize, right_half: bool) {
        let mut term = self.inner.term.lock();
        let point = Self::point(&term, row, col);
        let ty = match kind {
            SelectionKind::Simple => SelectionType::Simple,
            SelectionKind::Word => SelectionType::Semantic,
            SelectionKind::Line => SelectionType::Lines,
        };
        let side = if right_half { Side::Right } else { Side::Left };
        term.selection = Some(Selection::new(ty, point, side));
        self.inner.changed();
    }

    /// Extends the selection to a screen cell.
    pub fn extend_selection(&self, row: usize, col: usize, right_half: bool) {
        let mut term = self.inner.term.lock();
        let point = Self::point(&term, row, col);
        let side = if right_half { Side::Right } else { Side::Left };
        if let Some(selection) = term.selection.as_mut() {
            selection.update(point, side);
        }
        self.inner.changed();
    }

    pub fn clear_selection(&self) {
        self.inner.term.lock().selection = None;
        self.inner.changed();
    }

    /// The selected text; `None` when nothing is selected.
    pub fn selection_text(&self) -> Option<String> {
        let term = self.inner.term.lock();
        term.selection_to_string().filter(|s| !s.is_empty())
    }

    /// Finds the next match of `query` from the current match (or from the
    /// bottom of the screen), upwards when `backwards`; selects it and
    /// scrolls it into view. `false` when there is none.
    pub fn search(&self, query: &SearchQuery, backwards: bool) -> Result<bool, SessionError> {
        if query.text.is_empty() {
            return Ok(false);
        }
        let mut regex =
            RegexSearch::new(&query.pattern()).map_err(|e| SessionError::Search(e.to_string()))?;
        let mut term = self.inner.term.lock();
        let origin = match term.selection.as_ref().and_then(|s| s.to_range(&*term)) {
            Some(range) if backwards => range.start.sub(&*term, Boundary::None, 1),
            Some(range) => range.end.add(&*term, Boundary::None, 1),
            None if backwards => Point::new(term.bottommost_line(), term.last_column()),
            None => Point::new(term.topmost_line(), Column(0)),
        };
        let direction = if backwards {
            Direction::Left
        } else {
            Direction::Right
        };
        let found = term.search_next(&mut regex, origin, direction, Side::Left, None);
        self.inner.changed();
        let Some(found) = found else {
            return Ok(false);
        };
        let mut selection = Selection::new(SelectionType::Simple, *found.start(), Side::Left);
        selection.update(*found.end(), Side::Right);
        term.selection = Some(selection);
        term.scroll_to_point(*found.start());
        Ok(true)
    }

    /// The link under a screen cell: an OSC 8 hyperlink, or a plain URL in
    /// the text.
    pub fn link_at(&self, row: usize, col: usize) -> Option<String> {
        let term = self.inner.term.lock();
        let point = Self::point(&term, row, col);
        if let Some(link) = term.grid()[point].hyperlink() {
            return Some(link.uri().to_owned());
        }
        let mut urls = self
            .inner
            .urls
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if urls.is_none() {
            *urls = Some(RegexSearch::new(URL_PATTERN).ok()?);
        }
        let regex = urls.as_mut()?;
        let end = Point::new(point.line, term.last_column());
        let mut start = Point::new(point.line, Column(0));
        while let Some(found) = term.regex_search_right(regex, start, end) {
            if found.contains(&point) {
                let text = term.bounds_to_string(*found.start(), *found.end());
                return Some(
                    text.trim_end_matches(['.', ',', ';', ':', ')', '!', '?'])
                        .to_owned(),
                );
            }
            if *found.end() >= end {
                break;
            }
            start = found.end().add(&*term, Boundary::None, 1);
        }
        None
    }
}

/// The writer, reader and parser threads of a PTY session.
fn start_threads(
    mut reader: Box<dyn Read + Send>,
    mut writer: Box<dyn Write + Send>,
    rx: mpsc::Receiver<Vec<u8>>,
    inner: &Arc<Inner>,
) -> Result<(), SessionError> {
    std::thread::Builder::new()
        .name("cocode-term-writer".into())
        .spawn(move || {
            while let Ok(bytes) = rx.recv() {
                if writer
                    .write_all(&bytes)
                    .and_then(|()| writer.flush())
                    .is_err()
                {
                    return;
                }
            }
        })
        .map_err(|e| SessionError::Thread(e.to_string()))?;
    // Reading and parsing run on two threads, so the program (and the
    // kernel's terminal layer) keep writing while the grid is updated:
    // a PTY hands over about 4 KiB per read, and parsing each read
    // before the next would leave one of them idle.
    let handoff = Arc::new(Handoff::default());
    let reader_handoff = Arc::clone(&handoff);
    std::thread::Builder::new()
        .name("cocode-term-reader".into())
        .spawn(move || {
            let mut buf = vec![0u8; READ_CHUNK];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if !reader_handoff.put(&buf[..n]) {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // EIO once the program's side closed is the end on Linux.
                    Err(_) => break,
                }
            }
            reader_handoff.close();
        })
        .map_err(|e| SessionError::Thread(e.to_string()))?;
    let parser_inner = Arc::clone(inner);
    std::thread::Builder::new()
        .name("cocode-term-parser".into())
        .spawn(move || {
            // Should the grid's code panic, the reader stops instead of
            // waiting for room forever.
            let handoff = ParserGone(handoff);
            let mut parser = Processor::<StdSyncHandler>::new();
            let mut taken = Vec::with_capacity(IN_FLIGHT_BYTES + READ_CHUNK);
            // Everything read meanwhile is taken at once, and parsed in
            // pieces short enough not to hold the grid's lock for a frame.
            while handoff.0.take(&mut taken) {
                for piece in taken.chunks(PARSE_BATCH) {
                    parser_inner.parse(&mut parser, piece);
                }
            }
            parser_inner.ended.store(true, Ordering::Release);
            parser_inner.changed();
        })
        .map_err(|e| SessionError::Thread(e.to_string()))?;
    Ok(())
}

/// The bytes the reader thread read and the parser thread has not taken:
/// the reader appends each read, the parser takes all there is at once.
/// Each wakes the other only when the other waits, so a flood costs a
/// wake-up per batch, not per read.
#[derive(Default)]
struct Handoff {
    pending: Mutex<Pending>,
    /// The parser waits here for bytes (or the end).
    readable: Condvar,
    /// The reader waits here for room.
    room: Condvar,
}

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    flow: Flow,
    parser_waits: bool,
    reader_waits: bool,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Flow {
    #[default]
    Open,
    /// The reader is done: the PTY closed.
    Closed,
    /// The parser is gone: reading on is pointless.
    Abandoned,
}

impl Handoff {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends a read, once there is room; false once the parser is gone.
    fn put(&self, bytes: &[u8]) -> bool {
        let mut pending = self
            .room
            .wait_while(self.lock(), |p| {
                p.reader_waits = p.bytes.len() >= IN_FLIGHT_BYTES && p.flow != Flow::Abandoned;
                p.reader_waits
            })
            .unwrap_or_else(PoisonError::into_inner);
        if pending.flow == Flow::Abandoned {
            return false;
        }
        pending.bytes.extend_from_slice(bytes);
        if pending.parser_waits {
            self.readable.notify_one();
        }
        true
    }

    /// Swaps everything pending into `into` (cleared first), waiting for
    /// bytes; false once the reader closed and nothing is left.
    fn take(&self, into: &mut Vec<u8>) -> bool {
        into.clear();
        let mut pending = self
            .readable
            .wait_while(self.lock(), |p| {
                p.parser_waits = p.bytes.is_empty() && p.flow == Flow::Open;
                p.parser_waits
            })
            .unwrap_or_else(PoisonError::into_inner);
        if pending.bytes.is_empty() {
            return false;
        }
        std::mem::swap(&mut pending.bytes, into);
        if pending.reader_waits {
            self.room.notify_one();
        }
        true
    }

    fn close(&self) {
        self.lock().flow = Flow::Closed;
        self.readable.notify_one();
    }
}

/// Tells the reader the parser is gone, however the parser thread ends.
struct ParserGone(Arc<Handoff>);

impl Drop for ParserGone {
    fn drop(&mut self) {
        self.0.lock().flow = Flow::Abandoned;
        self.0.room.notify_one();
    }
}

/// What counts as a plain-text link (Alacritty's URL hint, web and files).
const URL_PATTERN: &str =
    "(https://|http://|file://)[^\u{0000}-\u{001F}\u{007F}-\u{009F}<>\"\\s{-}\\^⟨⟩`]+";

impl Drop for TerminalSession {
    fn drop(&mut self) {
        // The program dies with its terminal; the reader thread ends when
        // the last holder of the PTY closes it.
        self.kill();
        *self
            .inner
            .events
            .input
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn reads_are_taken_whole_and_in_order_and_the_end_after_the_last() {
        let handoff = Handoff::default();
        assert!(handoff.put(b"one "));
        assert!(handoff.put("두 ".as_bytes()));
        handoff.close();
        let mut taken = b"left from before".to_vec();
        assert!(handoff.take(&mut taken));
        assert_eq!(String::from_utf8(taken.clone()).unwrap(), "one 두 ");
        assert!(!handoff.take(&mut taken), "closed and nothing left");
        assert!(taken.is_empty());
    }

    /// A handoff holding the limit, and a reader putting one byte more on
    /// its own thread; its `put`'s result arrives on the receiver.
    fn reader_past_the_limit() -> (Arc<Handoff>, mpsc::Receiver<bool>) {
        let handoff = Arc::new(Handoff::default());
        assert!(handoff.put(&vec![b'x'; IN_FLIGHT_BYTES]));
        let (result_tx, result_rx) = mpsc::channel();
        let reader = Arc::clone(&handoff);
        std::thread::spawn(move || result_tx.send(reader.put(b"y")));
        (handoff, result_rx)
    }

    #[test]
    fn a_reader_ahead_by_the_limit_waits_until_the_parser_takes() {
        let (handoff, result_rx) = reader_past_the_limit();
        assert_eq!(
            result_rx.recv_timeout(Duration::from_millis(200)),
            Err(mpsc::RecvTimeoutError::Timeout),
            "the reader read on past the limit"
        );
        let mut taken = Vec::new();
        assert!(handoff.take(&mut taken));
        assert_eq!(taken.len(), IN_FLIGHT_BYTES);
        let put = result_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the reader was not woken when room was made");
        assert!(put);
        assert!(handoff.take(&mut taken));
        assert_eq!(taken, b"y");
    }

    #[test]
    fn a_waiting_reader_stops_when_the_parser_is_gone() {
        let (handoff, result_rx) = reader_past_the_limit();
        std::thread::sleep(Duration::from_millis(100));
        // The parser thread's guard, as when its thread ends by a panic.
        drop(ParserGone(Arc::clone(&handoff)));
        let put = result_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the reader still waits for room no one will make");
        assert!(!put, "the reader kept its read");
        assert!(!handoff.put(b"z"));
    }

    #[test]
    fn a_waiting_parser_wakes_for_a_read_and_for_the_end() {
        let handoff = Arc::new(Handoff::default());
        let parser = {
            let handoff = Arc::clone(&handoff);
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                let mut taken = Vec::new();
                while handoff.take(&mut taken) {
                    seen.extend_from_slice(&taken);
                }
                seen
            })
        };
        for i in 0..1000u32 {
            assert!(handoff.put(&i.to_le_bytes()));
            if i % 100 == 0 {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        handoff.close();
        let expected: Vec<u8> = (0..1000u32).flat_map(u32::to_le_bytes).collect();
        assert_eq!(parser.join().unwrap(), expected);
    }
}
