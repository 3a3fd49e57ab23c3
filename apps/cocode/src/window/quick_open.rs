//! Quick open (Ctrl/Cmd+P): the workspace's files, gitignore-aware, matched
//! fuzzily as the person types. Listing and matching run on a named worker
//! thread; the frame sends the query and shows the latest answer, so typing
//! never waits for a big repository.

use std::path::{Path, PathBuf};
use std::thread;

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use crate::window::link::{Coalesce, UiEnd, Waker, link};

/// Most files indexed; the rest are counted.
pub use crate::host::files::{MAX_FILES, list_files};
/// Most results shown.
pub const MAX_RESULTS: usize = 50;

/// One matching file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The workspace path (`/`-separated).
    pub path: String,
    /// Char indices of `path` that matched the query.
    pub indices: Vec<u32>,
}

#[derive(Debug)]
enum Request {
    /// List the files of `root` (again).
    List(PathBuf),
    Query {
        seq: u64,
        text: String,
    },
}

#[derive(Debug)]
enum Answer {
    /// How many files were listed, and how many were left out.
    Listed {
        files: usize,
        omitted: usize,
    },
    Results {
        seq: u64,
        hits: Vec<Hit>,
    },
}

impl Coalesce for Answer {}

/// The quick-open panel's state and its worker.
#[derive(Debug)]
pub struct QuickOpen {
    pub open: bool,
    pub query: String,
    pub selected: usize,
    pub hits: Vec<Hit>,
    /// Files listed so far (`None` while listing).
    pub files: Option<(usize, usize)>,
    /// Give the field the keyboard focus on the next frame.
    pub focus: bool,
    sent: u64,
    shown: u64,
    link: UiEnd<Request, Answer>,
}

impl QuickOpen {
    /// Starts the worker thread; `waker` wakes the UI after each answer.
    pub fn spawn(waker: Waker) -> std::io::Result<Self> {
        let (ui, mut worker) = link(waker);
        thread::Builder::new()
            .name("cocode-quick-open".into())
            .spawn(move || {
                let mut files: Vec<String> = Vec::new();
                let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
                while let Some(mut request) = worker.requests.blocking_recv() {
                    // Only the newest query matters.
                    while let Request::Query { .. } = request {
                        match worker.requests.try_recv() {
                            Ok(next) => request = next,
                            Err(_) => break,
                        }
                    }
                    let answer = match request {
                        Request::List(root) => {
                            let (listed, omitted) = list_files(&root);
                            files = listed;
                            Answer::Listed {
                                files: files.len(),
                                omitted,
                            }
                        }
                        Request::Query { seq, text } => Answer::Results {
                            seq,
                            hits: best_matches(&files, &text, &mut matcher),
                        },
                    };
                    if !worker.events.blocking_send(answer) {
                        break;
                    }
                }
            })?;
        Ok(Self {
            open: false,
            query: String::new(),
            selected: 0,
            hits: Vec::new(),
            files: None,
            focus: false,
            sent: 0,
            shown: 0,
            link: ui,
        })
    }

    /// Opens the panel over the files of `root` (listed afresh, so files
    /// created since the last time are found).
    pub fn show(&mut self, root: &Path) {
        self.open = true;
        self.focus = true;
        self.query.clear();
        self.selected = 0;
        self.files = None;
        self.link.send(Request::List(root.to_path_buf()));
        self.send_query();
    }

    pub fn close(&mut self) {
        self.open = false;
    }

    /// The query changed.
    pub fn set_query(&mut self, text: String) {
        if text != self.query {
            self.query = text;
            self.selected = 0;
            self.send_query();
        }
    }

    fn send_query(&mut self) {
        self.sent += 1;
        self.link.send(Request::Query {
            seq: self.sent,
            text: self.query.clone(),
        });
    }

    /// Takes the worker's answers (the newest results win).
    pub fn poll(&mut self) {
        for answer in self.link.drain() {
            match answer {
                Answer::Listed { files, omitted } => self.files = Some((files, omitted)),
                Answer::Results { seq, hits } if seq >= self.shown => {
                    self.shown = seq;
                    self.hits = hits;
                    self.selected = self.selected.min(self.hits.len().saturating_sub(1));
                }
                Answer::Results { .. } => {}
            }
        }
    }

    /// Whether the shown results answer the current query.
    pub fn settled(&self) -> bool {
        self.shown == self.sent && self.files.is_some()
    }

    pub fn move_selection(&mut self, down: bool) {
        if self.hits.is_empty() {
            return;
        }
        self.selected = if down {
            (self.selected + 1) % self.hits.len()
        } else {
            self.selected.checked_sub(1).unwrap_or(self.hits.len() - 1)
        };
    }
}

/// The best [`MAX_RESULTS`] files for `query` (fuzzy, smart case, path
/// aware), best first; with an empty query, the first files in order.
pub fn best_matches(files: &[String], query: &str, matcher: &mut Matcher) -> Vec<Hit> {
    if query.trim().is_empty() {
        return files
            .iter()
            .take(MAX_RESULTS)
            .map(|p| Hit {
                path: p.clone(),
                indices: Vec::new(),
            })
            .collect();
    }
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut buf = Vec::new();
    let mut scored: Vec<(u32, usize)> = files
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            pattern
                .score(Utf32Str::new(p, &mut buf), matcher)
                .map(|s| (s, i))
        })
        .collect();
    // Best score first; among equals, the shorter path, then the name.
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(files[a.1].len().cmp(&files[b.1].len()))
            .then(files[a.1].cmp(&files[b.1]))
    });
    scored
        .into_iter()
        .take(MAX_RESULTS)
        .map(|(_, i)| {
            let mut indices = Vec::new();
            pattern.indices(Utf32Str::new(&files[i], &mut buf), matcher, &mut indices);
            indices.sort_unstable();
            indices.dedup();
            Hit {
                path: files[i].clone(),
                indices,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn paths(hits: &[Hit]) -> Vec<&str> {
        hits.iter().map(|h| h.path.as_str()).collect()
    }

    #[test]
    fn the_best_match_comes_first_and_case_is_smart() {
        let files: Vec<String> = [
            "README.md",
            "src/main.rs",
            "src/window/app.rs",
            "src/window/views/editor.rs",
            "tests/editor_tests.rs",
            "문서/안내.md",
        ]
        .map(String::from)
        .to_vec();
        let mut m = Matcher::new(Config::DEFAULT.match_paths());
        assert_eq!(
            paths(&best_matches(&files, "main", &mut m)),
            ["src/main.rs"]
        );
        let hits = best_matches(&files, "edit", &mut m);
        assert_eq!(
            paths(&hits),
            ["tests/editor_tests.rs", "src/window/views/editor.rs"]
        );
        assert_eq!(best_matches(&files, "READ", &mut m)[0].path, "README.md");
        assert!(best_matches(&files, "READX", &mut m).is_empty());
        let korean = best_matches(&files, "안내", &mut m);
        assert_eq!(paths(&korean), ["문서/안내.md"]);
        assert_eq!(korean[0].indices, [3, 4]);
        assert_eq!(best_matches(&files, "", &mut m).len(), files.len());
    }

    #[test]
    #[expect(clippy::disallowed_methods, reason = "the test builds a tree to list")]
    fn listing_is_gitignore_aware_and_skips_state_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for p in [
            "src/a.rs",
            "target/debug/x",
            ".git/config",
            ".cocode/state",
            "b.log",
            ".env",
        ] {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        let (files, omitted) = list_files(root);
        assert_eq!(files, [".env", ".gitignore", "src/a.rs"]);
        assert_eq!(omitted, 0);
    }
}
