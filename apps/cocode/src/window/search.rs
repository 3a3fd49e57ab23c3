//! Search in the folder (Ctrl/Cmd+Shift+F): ripgrep's searcher over the
//! gitignore-aware file list, each file read through the workspace's safe
//! read path, on a worker thread. Results stream in batches as files are
//! searched, capped; a new search stops the old one at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread;

use cocode_core::path::{CaseSensitivity, NormalizeOptions, looks_binary};
use cocode_editor::SearchQuery;
use cocode_editor::search::Matcher;
use cocode_workspace::WorkspaceReader;

use crate::window::link::{Coalesce, UiEnd, Waker, link};
use crate::window::quick_open::list_files;

/// Most matching lines reported for one search.
pub const MAX_LINES: usize = 5_000;
/// Files larger than this are not searched.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// Longest line preview shown.
const PREVIEW_CHARS: usize = 240;

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineHit {
    /// 0-based line.
    pub line: usize,
    /// The line's text (cut at a preview length), and the char ranges of
    /// the matches in it.
    pub preview: String,
    pub ranges: Vec<(usize, usize)>,
}

/// The matches of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHits {
    /// The workspace path (`/`-separated).
    pub path: String,
    pub lines: Vec<LineHit>,
}

#[derive(Debug)]
struct Request {
    seq: u64,
    root: PathBuf,
    query: SearchQuery,
    /// Plan replacing every match with this instead of listing them.
    replace_with: Option<String>,
}

/// One file's new content for a replace in files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedWrite {
    /// The workspace path (`/`-separated).
    pub path: String,
    /// The hash of the content the new one was made from.
    pub expected: cocode_core::snapshot::ContentHash,
    pub bytes: Vec<u8>,
    pub occurrences: usize,
}

/// Every file a replace in files changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplacePlan {
    pub files: Vec<PlannedWrite>,
}

impl ReplacePlan {
    pub fn occurrences(&self) -> usize {
        self.files.iter().map(|f| f.occurrences).sum()
    }
}

#[derive(Debug)]
enum Answer {
    Found {
        seq: u64,
        files: Vec<FileHits>,
    },
    Done {
        seq: u64,
        searched: usize,
        capped: bool,
    },
    Failed {
        seq: u64,
        message: String,
    },
    Planned {
        seq: u64,
        plan: ReplacePlan,
    },
}

impl Coalesce for Answer {
    /// Batches of one search arriving together become one.
    fn merge(&mut self, next: Self) -> Option<Self> {
        match (self, next) {
            (
                Self::Found { seq, files },
                Self::Found {
                    seq: s2,
                    files: more,
                },
            ) if *seq == s2 => {
                files.extend(more);
                None
            }
            (_, next) => Some(next),
        }
    }
}

/// Where a search is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchProgress {
    Idle,
    Running,
    Done { searched: usize, capped: bool },
    Failed(String),
}

/// The Search panel's state and its worker.
#[derive(Debug)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent flags of the panel: focus, the replace row shown, its question asked, a replace under way"
)]
pub struct Search {
    pub query: SearchQuery,
    pub results: Vec<FileHits>,
    pub progress: SearchProgress,
    /// Give the query field the keyboard focus on the next frame.
    pub focus: bool,
    /// Replace in files: the replacement, whether its field shows, whether
    /// "Replace All" waits for the person's yes, and a plan that arrived.
    pub replace_with: String,
    pub show_replace: bool,
    pub confirm: bool,
    pub replacing: bool,
    pub plan: Option<ReplacePlan>,
    /// The last replace's outcome, in words.
    pub note: Option<String>,
    /// How many matches the replace under way changes.
    pub pending_occurrences: usize,
    seq: u64,
    current: Arc<AtomicU64>,
    /// Bumped when the folder's entries change (the listing is stale).
    entries: Arc<AtomicU64>,
    #[cfg_attr(not(test), expect(dead_code, reason = "only tests set the hold"))]
    hold: Hold,
    link: UiEnd<Request, Answer>,
}

/// A pause the tests put in the worker; never set otherwise.
#[derive(Debug, Clone, Default)]
struct Hold(Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>);

impl Hold {
    #[cfg(test)]
    fn set(&self, on: bool) {
        let (flag, changed) = &*self.0;
        *flag
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = on;
        changed.notify_all();
    }

    /// Waits while the hold is on.
    fn wait(&self) {
        let (flag, changed) = &*self.0;
        let mut on = flag
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *on {
            on = changed
                .wait(on)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}

/// The files the last search went over, reused by the next search of the
/// same folder while its entries stay as they were (the window's watcher
/// says when they change), as a second ripgrep run finds its walk in the
/// page cache.
#[derive(Debug, Default)]
pub struct Listing {
    root: PathBuf,
    /// The entries' generation the files were listed at.
    generation: u64,
    files: Option<Arc<Vec<String>>>,
}

impl Listing {
    /// The files of `root` at `generation`: the kept ones when they are of
    /// that folder and generation, else listed afresh.
    pub fn files(&mut self, root: &Path, generation: u64) -> Arc<Vec<String>> {
        match &self.files {
            Some(files) if self.root == root && self.generation == generation => Arc::clone(files),
            _ => {
                let files = Arc::new(list_files(root).0);
                self.root = root.to_path_buf();
                self.generation = generation;
                self.files = Some(Arc::clone(&files));
                files
            }
        }
    }
}

impl Search {
    pub fn spawn(waker: Waker) -> std::io::Result<Self> {
        let (ui, mut worker) = link::<Request, Answer>(waker);
        let current = Arc::new(AtomicU64::new(0));
        let live = Arc::clone(&current);
        let entries = Arc::new(AtomicU64::new(0));
        let changed = Arc::clone(&entries);
        let hold = Hold::default();
        let paused = hold.clone();
        thread::Builder::new()
            .name("cocode-search".into())
            .spawn(move || {
                let mut listing = Listing::default();
                while let Some(request) = worker.requests.blocking_recv() {
                    let seq = request.seq;
                    if live.load(Ordering::SeqCst) != seq {
                        continue;
                    }
                    if let Some(with) = &request.replace_with {
                        let answer = match plan(&request, with) {
                            Ok(plan) => Answer::Planned { seq, plan },
                            Err(message) => Answer::Failed { seq, message },
                        };
                        if !worker.events.blocking_send(answer) {
                            break;
                        }
                        continue;
                    }
                    let files = listing.files(&request.root, changed.load(Ordering::SeqCst));
                    let events = &worker.events;
                    let outcome = run(&request, &files, &live, &mut |files| {
                        let sent = events.blocking_send(Answer::Found { seq, files });
                        paused.wait();
                        sent
                    });
                    let answer = match outcome {
                        Ok((searched, capped)) => Answer::Done {
                            seq,
                            searched,
                            capped,
                        },
                        Err(message) => Answer::Failed { seq, message },
                    };
                    if !worker.events.blocking_send(answer) {
                        break;
                    }
                }
            })?;
        Ok(Self {
            query: SearchQuery::default(),
            results: Vec::new(),
            progress: SearchProgress::Idle,
            focus: false,
            replace_with: String::new(),
            show_replace: false,
            confirm: false,
            replacing: false,
            plan: None,
            note: None,
            pending_occurrences: 0,
            seq: 0,
            current,
            entries,
            hold,
            link: ui,
        })
    }

    /// Tests: the worker stops after handing on each batch until
    /// [`Self::release`] (a search provably under way).
    #[cfg(test)]
    pub fn hold_after_each_batch(&self) {
        self.hold.set(true);
    }

    #[cfg(test)]
    pub fn release(&self) {
        self.hold.set(false);
    }

    /// Files or folders were created, removed or renamed, or an ignore
    /// file changed: the next search lists the folder again instead of
    /// reusing the last listing.
    pub fn entries_changed(&self) {
        self.entries.fetch_add(1, Ordering::SeqCst);
    }

    /// Starts searching `root` for the current query (stopping any search
    /// under way); an empty query clears the results.
    pub fn start(&mut self, root: &Path) {
        self.seq += 1;
        self.current.store(self.seq, Ordering::SeqCst);
        self.results.clear();
        if self.query.text.is_empty() {
            self.progress = SearchProgress::Idle;
            return;
        }
        if let Err(e) = self.query.compile() {
            self.progress = SearchProgress::Failed(e.to_string());
            return;
        }
        self.progress = SearchProgress::Running;
        self.link.send(Request {
            seq: self.seq,
            root: root.to_path_buf(),
            query: self.query.clone(),
            replace_with: None,
        });
    }

    /// Plans replacing every match in `root` (read afresh on the worker);
    /// the plan arrives in [`Self::plan`].
    pub fn plan_replace(&mut self, root: &Path) {
        self.seq += 1;
        self.current.store(self.seq, Ordering::SeqCst);
        self.confirm = false;
        self.replacing = true;
        self.note = None;
        self.link.send(Request {
            seq: self.seq,
            root: root.to_path_buf(),
            query: self.query.clone(),
            replace_with: Some(self.replace_with.clone()),
        });
    }

    /// Takes what the worker found for the current search.
    pub fn poll(&mut self) {
        for answer in self.link.drain() {
            match answer {
                Answer::Found { seq, files } if seq == self.seq => self.results.extend(files),
                Answer::Done {
                    seq,
                    searched,
                    capped,
                } if seq == self.seq => self.progress = SearchProgress::Done { searched, capped },
                Answer::Failed { seq, message } if seq == self.seq => {
                    if self.replacing {
                        self.replacing = false;
                        self.note = Some(message);
                    } else {
                        self.progress = SearchProgress::Failed(message);
                    }
                }
                Answer::Planned { seq, plan } if seq == self.seq => self.plan = Some(plan),
                _ => {}
            }
        }
    }

    /// How many matching lines are shown.
    pub fn line_count(&self) -> usize {
        self.results.iter().map(|f| f.lines.len()).sum()
    }
}

/// The new content of every file with a match, each with the hash of the
/// content it was made from.
fn plan(request: &Request, with: &str) -> Result<ReplacePlan, String> {
    let matcher = request.query.compile().map_err(|e| e.to_string())?;
    let reader = WorkspaceReader::open(
        &request.root,
        NormalizeOptions::native(CaseSensitivity::Sensitive),
    )
    .map_err(|e| format!("{e}: {}", request.root.display()))?;
    let (files, _) = list_files(&request.root);
    let mut planned = Vec::new();
    for rel in files {
        let Ok(path) = reader.normalize("replace", &rel) else {
            continue;
        };
        let Ok(Some(prefix)) = reader.read_prefix("replace", &path, MAX_FILE_BYTES + 1) else {
            continue;
        };
        if prefix.size > MAX_FILE_BYTES
            || looks_binary(&prefix.bytes[..prefix.bytes.len().min(8192)])
        {
            continue;
        }
        let Ok(text) = std::str::from_utf8(&prefix.bytes) else {
            continue;
        };
        let (new, occurrences) = matcher.replace_in_str(text, with);
        if occurrences > 0 {
            planned.push(PlannedWrite {
                path: rel,
                expected: cocode_core::snapshot::ContentHash::of(&prefix.bytes),
                bytes: new.into_bytes(),
                occurrences,
            });
        }
    }
    Ok(ReplacePlan { files: planned })
}

/// Searches `root` for `query` as the panel does, over `listing`'s files
/// at `generation` (kept between calls as the panel keeps them): the files
/// with matching lines in path order, how many files were searched, and
/// whether the cap on lines was reached.
pub fn search_all(
    root: &Path,
    query: SearchQuery,
    listing: &mut Listing,
    generation: u64,
) -> Result<(Vec<FileHits>, usize, bool), String> {
    let files = listing.files(root, generation);
    let live = AtomicU64::new(1);
    let mut all = Vec::new();
    let (searched, capped) = run(
        &Request {
            seq: 1,
            root: root.to_path_buf(),
            query,
            replace_with: None,
        },
        &files,
        &live,
        &mut |files| {
            all.extend(files);
            true
        },
    )?;
    Ok((all, searched, capped))
}

/// Files one worker takes at a time.
const BLOCK: usize = 32;

/// Searches every file; `emit` gets batches (false: the UI is gone).
/// Returns how many files were searched and whether the cap was reached.
/// The files are searched on every core in blocks taken in order, and the
/// blocks' results are handed on in that order as they complete, so the
/// panel fills as it would from one thread, only sooner.
fn run(
    request: &Request,
    files: &[String],
    live: &AtomicU64,
    emit: &mut dyn FnMut(Vec<FileHits>) -> bool,
) -> Result<(usize, bool), String> {
    let matcher = request.query.compile().map_err(|e| e.to_string())?;
    let lines = grep_regex::RegexMatcherBuilder::new()
        .case_insensitive(matcher.ignores_case())
        .multi_line(false)
        .line_terminator(Some(b'\n'))
        .build(matcher.pattern())
        .map_err(|e| format!("not a valid regular expression: {e}"))?;
    let reader = WorkspaceReader::open(
        &request.root,
        NormalizeOptions::native(CaseSensitivity::Sensitive),
    )
    .map_err(|e| format!("{e}: {}", request.root.display()))?;
    let blocks: Vec<&[String]> = files.chunks(BLOCK).collect();
    let threads = thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .clamp(1, 8);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let stopped = || stop.load(Ordering::SeqCst) || live.load(Ordering::SeqCst) != request.seq;
    let (done, results) = std::sync::mpsc::channel::<(usize, usize, Vec<FileHits>)>();
    thread::scope(|scope| {
        for _ in 0..threads {
            let done = done.clone();
            let (blocks, next, reader, lines, matcher) =
                (&blocks, &next, &reader, &lines, &matcher);
            let stopped = &stopped;
            scope.spawn(move || {
                let mut grep = grep_searcher::SearcherBuilder::new()
                    .line_number(true)
                    .build();
                let mut buffer = Vec::new();
                while !stopped() {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    let Some(block) = blocks.get(n) else {
                        return;
                    };
                    let mut searched = 0;
                    let mut hits = Vec::new();
                    for rel in *block {
                        let Some(found) = search_file(
                            reader,
                            &mut grep,
                            lines,
                            matcher,
                            rel,
                            MAX_LINES,
                            &mut buffer,
                        ) else {
                            continue;
                        };
                        searched += 1;
                        if !found.lines.is_empty() {
                            hits.push(found);
                        }
                    }
                    if done.send((n, searched, hits)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done);
        let outcome = in_order(results, &stopped, emit);
        // Whatever ended it, the workers stop before their next block.
        stop.store(true, Ordering::SeqCst);
        Ok(outcome)
    })
}

/// Hands on the blocks' results in block order, as they complete, in
/// batches, up to [`MAX_LINES`] lines. Returns how many files were searched
/// and whether the cap was reached.
fn in_order(
    results: std::sync::mpsc::Receiver<(usize, usize, Vec<FileHits>)>,
    stopped: &dyn Fn() -> bool,
    emit: &mut dyn FnMut(Vec<FileHits>) -> bool,
) -> (usize, bool) {
    let mut waiting = std::collections::BTreeMap::new();
    let (mut next, mut searched, mut found) = (0, 0, 0);
    let mut batch = Vec::new();
    for (n, count, hits) in results {
        if stopped() {
            return (searched, false);
        }
        waiting.insert(n, (count, hits));
        while let Some((count, hits)) = waiting.remove(&next) {
            next += 1;
            searched += count;
            for mut file in hits {
                file.lines.truncate(MAX_LINES - found);
                found += file.lines.len();
                batch.push(file);
                if found >= MAX_LINES {
                    emit(batch);
                    return (searched, true);
                }
            }
            if batch.len() >= 16 && !emit(std::mem::take(&mut batch)) {
                return (searched, false);
            }
        }
    }
    emit(batch);
    (searched, false)
}

/// The matching lines of one file (`None`: not searched — unreadable,
/// binary or too large). The file is read into `buffer`, which each worker
/// keeps from file to file.
fn search_file(
    reader: &WorkspaceReader,
    searcher: &mut grep_searcher::Searcher,
    lines: &grep_regex::RegexMatcher,
    matcher: &Matcher,
    rel: &str,
    room: usize,
    buffer: &mut Vec<u8>,
) -> Option<FileHits> {
    use std::io::Read as _;
    let path = reader.normalize("search", rel).ok()?;
    // Listed by a walk that follows no link: opened as listed.
    let file = reader.open_listed("search", &path).ok()??;
    if file.metadata().ok()?.len() > MAX_FILE_BYTES {
        return None;
    }
    buffer.clear();
    file.take(MAX_FILE_BYTES + 1).read_to_end(buffer).ok()?;
    if buffer.len() as u64 > MAX_FILE_BYTES || looks_binary(buffer) {
        return None;
    }
    let mut hits = Vec::new();
    let outcome = searcher.search_slice(
        lines,
        buffer,
        grep_searcher::sinks::UTF8(|number, line| {
            let line = line.trim_end_matches(['\n', '\r']);
            let ranges = matcher.find_in_str(line, 64);
            if ranges.is_empty() {
                return Ok(true);
            }
            let preview: String = line.chars().take(PREVIEW_CHARS).collect();
            let line_index = usize::try_from(number.saturating_sub(1)).unwrap_or(usize::MAX);
            hits.push(LineHit {
                line: line_index,
                preview,
                ranges,
            });
            Ok(hits.len() < room)
        }),
    );
    if let Err(e) = outcome {
        // Not UTF-8 past its start, say: what was found so far stands.
        tracing::debug!(path = rel, "search stopped in a file: {e}");
    }
    Some(FileHits {
        path: rel.to_owned(),
        lines: hits,
    })
}

#[cfg(test)]
#[expect(clippy::disallowed_methods, reason = "the tests build trees to search")]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn query(text: &str) -> SearchQuery {
        SearchQuery {
            text: text.into(),
            ..SearchQuery::default()
        }
    }

    fn search(root: &Path, q: SearchQuery) -> (Vec<FileHits>, usize, bool) {
        let (mut all, searched, capped) = search_all(root, q, &mut Listing::default(), 0).unwrap();
        all.sort_by(|a, b| a.path.cmp(&b.path));
        (all, searched, capped)
    }

    #[test]
    fn matches_come_with_lines_columns_and_previews_and_skip_what_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "fn main() {}\n// 한글 main main\n").unwrap();
        std::fs::write(root.join("b.txt"), "nothing\r\nMAIN\r\n").unwrap();
        std::fs::write(root.join("bin.dat"), b"main\x00\x01").unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join("target/x.rs"), "main\n").unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        let (hits, searched, capped) = search(&root, query("main"));
        assert_eq!(
            hits,
            vec![
                FileHits {
                    path: "b.txt".into(),
                    lines: vec![LineHit {
                        line: 1,
                        preview: "MAIN".into(),
                        ranges: vec![(0, 4)]
                    }]
                },
                FileHits {
                    path: "src/a.rs".into(),
                    lines: vec![
                        LineHit {
                            line: 0,
                            preview: "fn main() {}".into(),
                            ranges: vec![(3, 7)]
                        },
                        LineHit {
                            line: 1,
                            preview: "// 한글 main main".into(),
                            ranges: vec![(6, 10), (11, 15)]
                        }
                    ]
                },
            ]
        );
        // .gitignore, b.txt and src/a.rs (the binary file is skipped).
        assert_eq!((searched, capped), (3, false));
        let case = SearchQuery {
            case_sensitive: true,
            ..query("MAIN")
        };
        assert_eq!(search(&root, case).0.len(), 1);
        let word = SearchQuery {
            whole_word: true,
            ..query("mai")
        };
        assert!(search(&root, word).0.is_empty());
    }

    #[test]
    fn a_replace_plan_holds_new_contents_and_what_they_were_made_from() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("a.txt"), "cat and cat\n").unwrap();
        std::fs::write(root.join("b.txt"), "dog\n").unwrap();
        std::fs::write(root.join("c.bin"), b"cat\x00").unwrap();
        let request = Request {
            seq: 1,
            root: root.clone(),
            query: query("cat"),
            replace_with: Some("고양이".into()),
        };
        let got = plan(&request, "고양이").unwrap();
        assert_eq!(
            got,
            ReplacePlan {
                files: vec![PlannedWrite {
                    path: "a.txt".into(),
                    expected: cocode_core::snapshot::ContentHash::of(b"cat and cat\n"),
                    bytes: "고양이 and 고양이\n".as_bytes().to_vec(),
                    occurrences: 2,
                }]
            }
        );
        assert_eq!(got.occurrences(), 2);
        // Planning writes nothing.
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "cat and cat\n"
        );
    }

    /// Files are searched on every core, a block at a time, yet handed on
    /// in path order, and the cap falls where one thread's would: the first
    /// files in order, whole, then the one it cuts.
    #[test]
    fn many_files_come_in_path_order_and_the_cap_cuts_where_one_thread_would() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        // 300 files of 30 matching lines: 9,000 lines, cut at 5,000 in the
        // 167th file, the files spread over ten blocks.
        for n in 0..300 {
            std::fs::write(root.join(format!("f{n:03}.txt")), "hit\n".repeat(30)).unwrap();
        }
        // In the order the files were handed on.
        let (emitted, searched, capped) =
            search_all(&root, query("hit"), &mut Listing::default(), 0).unwrap();
        assert!(capped);
        let paths: Vec<String> = emitted.iter().map(|f| f.path.clone()).collect();
        let want: Vec<String> = (0..167).map(|n| format!("f{n:03}.txt")).collect();
        assert_eq!(paths, want);
        let lines: Vec<usize> = emitted.iter().map(|f| f.lines.len()).collect();
        let mut want_lines = vec![30; 166];
        want_lines.push(20);
        assert_eq!(lines, want_lines);
        assert!(searched >= 167, "{searched}");
        // Without the cap every file comes, in order.
        for n in 0..300 {
            std::fs::write(root.join(format!("f{n:03}.txt")), "hit\n").unwrap();
        }
        let (all, searched, capped) = search(&root, query("hit"));
        assert!(!capped);
        assert_eq!(searched, 300);
        assert_eq!(all.len(), 300);
    }

    #[test]
    fn results_stop_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let body = "x\n".repeat(MAX_LINES + 10);
        std::fs::write(root.join("many.txt"), body).unwrap();
        let (hits, _, capped) = search(&root, query("x"));
        assert!(capped);
        assert_eq!(hits.iter().map(|f| f.lines.len()).sum::<usize>(), MAX_LINES);
    }

    /// A second search of the folder goes over the files the first one
    /// listed; once its entries changed (a new generation), or for another
    /// folder, it lists afresh.
    #[test]
    fn a_second_search_reuses_the_listing_until_the_entries_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("a.txt"), "word\n").unwrap();
        let mut listing = Listing::default();
        let (hits, searched, _) = search_all(&root, query("word"), &mut listing, 0).unwrap();
        assert_eq!((hits.len(), searched), (1, 1));
        std::fs::write(root.join("b.txt"), "word\n").unwrap();
        // Same generation: the kept listing, so b.txt is not among them.
        let (hits, searched, _) = search_all(&root, query("word"), &mut listing, 0).unwrap();
        assert_eq!((hits.len(), searched), (1, 1));
        // The watcher said the entries changed.
        let (hits, searched, _) = search_all(&root, query("word"), &mut listing, 1).unwrap();
        let paths: Vec<&str> = hits.iter().map(|f| f.path.as_str()).collect();
        assert_eq!((paths, searched), (vec!["a.txt", "b.txt"], 2));
        // Another folder at the same generation is listed for itself.
        let other = tempfile::tempdir().unwrap();
        let other = std::fs::canonicalize(other.path()).unwrap();
        std::fs::write(other.join("c.txt"), "word\n").unwrap();
        let (hits, _, _) = search_all(&other, query("word"), &mut listing, 1).unwrap();
        let paths: Vec<&str> = hits.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["c.txt"]);
    }
}
