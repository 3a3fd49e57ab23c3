//! The window's terminals: the person's shells, each a PTY session started
//! off the UI thread, and read-only views of agents' commands fed from the
//! workspace service. The dock holds `PanelId::Terminal(id)` tabs; this holds
//! their sessions.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, mpsc};

use cocode_core::process::{ExitStatus, ProcessLauncher};
use cocode_terminal::{GridSize, SearchQuery, SessionError, SessionOptions, TerminalSession};

use crate::host::commands::CommandEvent;
use crate::window::link::Waker;

/// Lines a terminal keeps above its screen unless the person chose
/// otherwise (VS Code's default is 1,000; builds and test runs are longer).
pub const SCROLLBACK_LINES: usize = 10_000;

/// The fewest and most lines of scrollback a person may choose.
pub const SCROLLBACK_RANGE: std::ops::RangeInclusive<usize> = 100..=1_000_000;

/// The size a terminal starts with, until its tab is laid out.
const FIRST_SIZE: GridSize = GridSize { rows: 24, cols: 80 };

/// Whose terminal a tab is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TabKind {
    /// The person's shell.
    Shell,
    /// An agent's command: read-only, with Stop.
    Agent {
        command_id: u64,
        task_id: String,
        command: String,
    },
}

/// Where a tab's session is.
#[derive(Debug)]
pub enum TabState {
    Starting,
    Live(Box<TerminalSession>),
    Failed { code: &'static str, message: String },
}

/// The find bar of a terminal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FindBar {
    pub query: SearchQuery,
    /// The last search's outcome: found, nothing found, or a bad pattern.
    pub outcome: Option<Result<bool, String>>,
    /// Give the field the keyboard focus on the next frame.
    pub focus: bool,
}

/// The screen's cells as last painted, one mesh per row, kept between
/// frames with what they were made from: a row whose cells did not change
/// is not laid out or tessellated again (a row that moved, as output
/// scrolls, is moved), and when no row changed the whole screen is one mesh
/// already made. Anything that moves glyphs or their
/// place in the font atlas (the grid's place, the cell size, the scale,
/// the atlas grown or made anew) starts it afresh.
#[derive(Default)]
pub struct PaintCache {
    pub(crate) key: Option<CacheKey>,
    pub(crate) rows: Vec<CachedRow>,
    /// Every row's mesh in one, while no row changed.
    pub(crate) screen: Option<Arc<egui::Mesh>>,
}

#[derive(Clone, Copy, PartialEq)]
pub(crate) struct CacheKey {
    pub(crate) origin: egui::Pos2,
    pub(crate) cell: egui::Vec2,
    pub(crate) background: cocode_terminal::Rgb,
    pub(crate) pixels_per_point: f32,
    pub(crate) atlas_size: [usize; 2],
    /// The atlas only fills up between frames; less means made anew.
    pub(crate) atlas_fill: f32,
}

#[derive(Clone)]
pub(crate) struct CachedRow {
    pub(crate) cells: Arc<[cocode_terminal::ScreenCell]>,
    /// The cells' hash, to find the row again when it moved.
    pub(crate) hash: u64,
    /// Made at the top of the grid; placed at its row when the screen's
    /// mesh is put together.
    pub(crate) mesh: Arc<egui::Mesh>,
}

impl std::fmt::Debug for PaintCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaintCache")
            .field("rows", &self.rows.len())
            .finish_non_exhaustive()
    }
}

impl Clone for PaintCache {
    /// A copy of a view starts with nothing kept.
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for PaintCache {
    /// What a view kept to paint faster says nothing about its state.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// A view's own state between frames.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ViewState {
    /// An IME composition not committed yet, drawn at the cursor.
    pub preedit: String,
    pub find: Option<FindBar>,
    /// Wheel movement smaller than a line, carried to the next frame.
    pub scroll_carry: f32,
    /// A mouse button reported to the program and not released yet.
    pub reported_press: bool,
    /// Give the grid the keyboard focus on the next frame (the find bar
    /// closed).
    pub refocus: bool,
    /// The screen last copied and the palette it was resolved with: a frame
    /// drawn for another reason reuses it while the terminal is unchanged.
    pub drawn: Option<(cocode_terminal::Palette, cocode_terminal::Screen)>,
    /// The rows as last painted.
    pub paint: PaintCache,
}

/// One terminal tab.
#[derive(Debug)]
pub struct TerminalTab {
    pub id: u32,
    pub kind: TabKind,
    pub state: TabState,
    pub view: ViewState,
}

impl TerminalTab {
    pub fn session(&self) -> Option<&TerminalSession> {
        match &self.state {
            TabState::Live(s) => Some(s),
            _ => None,
        }
    }

    /// The tab's title: the program's own (OSC 0/2), else the shell's or
    /// the command's name; an ended program says so.
    pub fn title(&self) -> String {
        let base = match (&self.kind, self.session().and_then(TerminalSession::title)) {
            (TabKind::Agent { command, .. }, _) => format!("Agent: {}", shorten(command, 32)),
            (TabKind::Shell, Some(title)) if !title.trim().is_empty() => shorten(&title, 32),
            (TabKind::Shell, _) => "Terminal".to_owned(),
        };
        match self.session().and_then(TerminalSession::exit) {
            Some(_) if matches!(self.kind, TabKind::Shell) => format!("{base} (ended)"),
            _ => base,
        }
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

type Started = (u32, Result<TerminalSession, SessionError>);

/// Every terminal of the window.
pub struct Terminals {
    tabs: BTreeMap<u32, TerminalTab>,
    next: u32,
    /// The launcher of the person's terminals (the composition root's).
    launcher: Arc<dyn ProcessLauncher>,
    runtime: tokio::runtime::Handle,
    waker: Waker,
    started_tx: mpsc::Sender<Started>,
    started_rx: mpsc::Receiver<Started>,
    /// Agent command id → its tab.
    commands: HashMap<u64, u32>,
    /// The tab to give the keyboard focus on the next frame.
    pub focus: Option<u32>,
    /// The terminal that last had the keyboard focus.
    pub last_used: Option<u32>,
    /// A link waiting for the person's yes before it opens in the browser.
    /// A link waiting for the person's word, and whether an agent's
    /// message holds it (otherwise a terminal printed it).
    pub link_prompt: Option<(String, bool)>,
    /// A busy terminal waiting for the person's yes before it closes.
    pub close_prompt: Option<u32>,
    /// Why the last link could not be opened (shown in the status bar).
    pub notice: Option<String>,
    /// Lines each terminal keeps above its screen.
    scrollback: usize,
}

impl std::fmt::Debug for Terminals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminals")
            .field("tabs", &self.tabs.len())
            .finish_non_exhaustive()
    }
}

impl Terminals {
    pub fn new(
        runtime: tokio::runtime::Handle,
        launcher: Arc<dyn ProcessLauncher>,
        waker: Waker,
    ) -> Self {
        let (started_tx, started_rx) = mpsc::channel();
        Self {
            tabs: BTreeMap::new(),
            next: 1,
            launcher,
            runtime,
            waker,
            started_tx,
            started_rx,
            commands: HashMap::new(),
            focus: None,
            last_used: None,
            link_prompt: None,
            close_prompt: None,
            notice: None,
            scrollback: SCROLLBACK_LINES,
        }
    }

    /// Lines each terminal keeps above its screen.
    pub fn scrollback(&self) -> usize {
        self.scrollback
    }

    /// Keeps `lines` (within [`SCROLLBACK_RANGE`]) of scrollback in every
    /// terminal from now on, the open ones too.
    pub fn set_scrollback(&mut self, lines: usize) {
        self.scrollback = lines.clamp(*SCROLLBACK_RANGE.start(), *SCROLLBACK_RANGE.end());
        for tab in self.tabs.values() {
            if let TabState::Live(session) = &tab.state {
                session.set_scrollback(self.scrollback);
            }
        }
    }

    pub fn get(&self, id: u32) -> Option<&TerminalTab> {
        self.tabs.get(&id)
    }

    pub fn get_mut(&mut self, id: u32) -> Option<&mut TerminalTab> {
        self.tabs.get_mut(&id)
    }

    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.tabs.keys().copied()
    }

    /// The person's shells, oldest first.
    pub fn shells(&self) -> impl Iterator<Item = u32> + '_ {
        self.tabs
            .values()
            .filter(|t| t.kind == TabKind::Shell)
            .map(|t| t.id)
    }

    fn launcher(&self) -> Arc<dyn ProcessLauncher> {
        Arc::clone(&self.launcher)
    }

    /// Opens the person's shell in `cwd`; the session starts off the UI
    /// thread and the tab shows "Starting…" until it has.
    pub fn open_shell(&mut self, cwd: &Path) -> u32 {
        let id = self.next;
        self.next += 1;
        self.tabs.insert(
            id,
            TerminalTab {
                id,
                kind: TabKind::Shell,
                state: TabState::Starting,
                view: ViewState::default(),
            },
        );
        let launcher = self.launcher();
        let options = SessionOptions {
            argv: vec![default_shell()],
            cwd: cwd.to_path_buf(),
            size: FIRST_SIZE,
            scrollback: self.scrollback,
            env: BTreeMap::new(),
        };
        let (tx, waker, runtime) = (
            self.started_tx.clone(),
            self.waker.clone(),
            self.runtime.clone(),
        );
        let wake = self.waker.clone();
        self.runtime.spawn_blocking(move || {
            let session = TerminalSession::spawn(
                &*launcher,
                &runtime,
                options,
                Arc::new(move || wake.wake()),
            );
            let _ = tx.send((id, session));
            waker.wake();
        });
        self.focus = Some(id);
        id
    }

    /// Takes sessions that finished starting.
    pub fn poll(&mut self) {
        while let Ok((id, result)) = self.started_rx.try_recv() {
            // A tab closed while starting drops its session (and program).
            if let Some(tab) = self.tabs.get_mut(&id) {
                tab.state = match result {
                    Ok(session) => TabState::Live(Box::new(session)),
                    Err(e) => TabState::Failed {
                        code: e.code(),
                        message: e.to_string(),
                    },
                };
            }
        }
    }

    /// An agent's command: a new read-only tab on `Started` (its id is
    /// returned for the dock), output and end on the others.
    pub fn on_command(&mut self, event: CommandEvent) -> Option<u32> {
        match event {
            CommandEvent::Started {
                id: command_id,
                task_id,
                argv,
                cwd: _,
            } => {
                let id = self.next;
                self.next += 1;
                let wake = self.waker.clone();
                let session = TerminalSession::viewer(
                    FIRST_SIZE,
                    self.scrollback,
                    Arc::new(move || wake.wake()),
                );
                self.tabs.insert(
                    id,
                    TerminalTab {
                        id,
                        kind: TabKind::Agent {
                            command_id,
                            task_id: task_id.as_str().to_owned(),
                            command: command_line(&argv),
                        },
                        state: TabState::Live(Box::new(session)),
                        view: ViewState::default(),
                    },
                );
                self.commands.insert(command_id, id);
                Some(id)
            }
            CommandEvent::Output { id, bytes } => {
                if let Some(session) = self.command_session(id) {
                    session.feed(&bytes);
                }
                None
            }
            CommandEvent::Ended { id, status } => {
                if let Some(session) = self.command_session(id) {
                    session.finish(status.unwrap_or(ExitStatus::Killed));
                }
                None
            }
        }
    }

    fn command_session(&self, command_id: u64) -> Option<&TerminalSession> {
        let tab = self.commands.get(&command_id)?;
        self.tabs.get(tab)?.session()
    }

    /// Whether closing the tab would end a program a person may care about.
    pub fn busy(&self, id: u32) -> bool {
        self.tabs
            .get(&id)
            .and_then(TerminalTab::session)
            .is_some_and(|s| s.interactive() && s.busy())
    }

    /// Closes a tab; a live program is killed with its session.
    pub fn close(&mut self, id: u32) {
        if let Some(tab) = self.tabs.remove(&id)
            && let TabKind::Agent { command_id, .. } = tab.kind
        {
            self.commands.remove(&command_id);
        }
        if self.last_used == Some(id) {
            self.last_used = None;
        }
        if self.close_prompt == Some(id) {
            self.close_prompt = None;
        }
    }

    /// Opens a web or file link in the person's browser, through the
    /// launcher (tool profile); the opener runs until it exits on its own.
    pub fn open_link(&mut self, url: &str) {
        self.notice = None;
        let Some(argv) = opener(url) else {
            self.notice = Some(format!(
                "Only web and file links open from a terminal: {}",
                shorten(url, 60)
            ));
            return;
        };
        let spec = cocode_core::process::LaunchSpec {
            argv,
            cwd: std::env::temp_dir(),
            env_overrides: BTreeMap::new(),
            profile: cocode_core::process::SandboxProfile::Tool,
            io: cocode_core::process::LaunchIo::Piped,
            timeout: None,
            output_byte_limit: Some(64 * 1024),
            extra_writable: Vec::new(),
            secret_env: BTreeMap::new(),
            extra_hosts: Vec::new(),
        };
        match self.launcher().launch(spec) {
            Ok(mut handle) => {
                self.runtime.spawn(async move {
                    while handle.read_output().await.is_some() {}
                    let _ = handle.wait().await;
                });
            }
            Err(e) => self.notice = Some(format!("The link could not be opened: {e}")),
        }
    }

    /// Closes every tab (a new folder was opened).
    pub fn clear(&mut self) -> Vec<u32> {
        let ids: Vec<u32> = self.tabs.keys().copied().collect();
        for id in &ids {
            self.close(*id);
        }
        ids
    }
}

/// The platform's way to open a link; `None` for schemes other than web
/// and file links (a terminal program chooses what it prints).
fn opener(url: &str) -> Option<Vec<String>> {
    let lower = url.to_ascii_lowercase();
    if !["https://", "http://", "file://"]
        .iter()
        .any(|s| lower.starts_with(s))
    {
        return None;
    }
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    Some(vec![program.to_owned(), url.to_owned()])
}

/// A command line as a person would type it.
pub fn command_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The person's shell: `$SHELL` on Unix (else bash, else sh), `%ComSpec%`
/// on Windows.
fn default_shell() -> String {
    #[cfg(windows)]
    {
        std::env::var("ComSpec").unwrap_or_else(|_| "cmd.exe".to_owned())
    }
    #[cfg(not(windows))]
    {
        std::env::var("SHELL")
            .ok()
            .filter(|s| Path::new(s).is_absolute() && Path::new(s).exists())
            .or_else(|| {
                ["/bin/bash", "/usr/bin/bash", "/bin/sh"]
                    .iter()
                    .find(|p| Path::new(p).exists())
                    .map(|p| (*p).to_owned())
            })
            .unwrap_or_else(|| "sh".to_owned())
    }
}
