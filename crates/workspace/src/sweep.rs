//! The observed-change sweep's stat cache.
//!
//! Commands run for an agent and ACP agents that write files themselves
//! bypass the gate. Before a command or a prompt turn the gate refreshes
//! this cache (path → size, mtime, ctime, inode, hash), storing a base blob
//! of every file it hashes; afterwards it scans again and records the
//! difference as `origin: observed` snapshots.
//!
//! A full scan stats every file (gitignore-aware, `.git/` and `.cocode/`
//! excluded; the scan after a command judges by the ignore rules kept
//! before it, see [`IgnoreRules`]). A file is hashed again when its stat
//! changed (the change time included, which no program can set back), when
//! its mtime or ctime is not older than the scan that recorded it (a write
//! within the same clock tick can keep size and mtime — git's "racy clean"
//! rule), or when the watcher saw it change.
//!
//! With the sweep's watcher (Linux), a full scan watches every folder it
//! lists, before listing it, and the scan after a command by writers that
//! could not make hard links ([`StatCache::scan_reported`]) looks only at:
//! - every path the watcher reported since the full scan: a file is read
//!   again, a folder (one the command created, renamed or moved in) is
//!   walked whole and watched, a path that is gone takes what was tracked
//!   below it along;
//! - the files the watcher cannot vouch for: those with more than one link
//!   (a write through a name outside the watched folders reports nothing
//!   here), tracked files in folders no scan watched (hidden by a rule
//!   added since), and racy entries.
//!
//! It falls back to a full scan when events were lost since the full scan
//! (a queue overflow, a folder the kernel would not watch, more reported
//! paths than it keeps), when there is no watcher, and for writers that
//! could make links (agents writing files themselves, the person).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use cocode_core::gate::StoreError;
use cocode_core::path::{
    COCODE_DIR, CaseSensitivity, NormalizeOptions, NormalizedPath, PathStyle, UnicodeSensitivity,
    is_version_control_name, normalize,
};
use cocode_core::snapshot::{ContentHash, Form, Forms, PathTransition, Unkept};

use crate::disk_text::{name_text, text_of};
use crate::ignore_rules::{KeptRules, Matchers};
use crate::sweep_entry::{Entry, Stat};
#[cfg(target_os = "linux")]
use crate::sweep_watch::Unwatched;
#[cfg(target_os = "linux")]
pub use crate::sweep_watch::Watch;

/// Size and count limits of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepLimits {
    /// Content above this size is not kept: a change of such a file is
    /// recorded by hash only, "too large to keep" (counted in
    /// [`SweepStats`]), and a rollback that needs it is refused.
    pub max_file_bytes: u64,
    /// A scan tracks no new file past this many (tracked files stay).
    pub max_files: usize,
}

impl Default for SweepLimits {
    fn default() -> Self {
        Self {
            // A ceiling, not a filter: a 60 MB data file a command rewrites
            // is recorded like any other. Above it a file's changes are
            // recorded by hash only (never as a deletion).
            max_file_bytes: cocode_core::workspace::DEFAULT_MAX_KEPT_FILE_MIB * 1024 * 1024,
            max_files: 200_000,
        }
    }
}

/// What one scan did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepStats {
    pub files: usize,
    pub hashed: usize,
    /// Files above the ceiling, tracked by hash only.
    pub too_large: usize,
    /// The count limit was reached; files past it are not tracked.
    pub truncated: bool,
    /// Only what the watcher reported (and what it cannot vouch for) was
    /// looked at, not every file.
    pub narrowed: bool,
    /// Names met that have no text (they hold a character cocode uses for
    /// a name's bytes): those entries are not tracked.
    pub unnamed: usize,
    /// Folders met deeper than the system's longest path: what they hold
    /// is not tracked.
    pub too_deep: usize,
}

impl SweepStats {
    /// Why a scan with these stats did not track everything it met, if it
    /// did not (`max_files`: the count limit it ran with).
    pub fn incomplete(&self, max_files: usize) -> Option<String> {
        let mut why = Vec::new();
        if self.truncated {
            why.push(format!(
                "the workspace holds more than {max_files} files the sweep would track, so new files past them were not recorded"
            ));
        }
        if self.unnamed > 0 {
            why.push(format!(
                "{} name(s) hold a character cocode uses for a name's bytes (U+10FF00 to U+10FFFF), so they were not recorded",
                self.unnamed
            ));
        }
        if self.too_deep > 0 {
            why.push(format!(
                "{} folder(s) lie deeper than the system's longest path, so what they hold was not recorded",
                self.too_deep
            ));
        }
        (!why.is_empty()).then(|| why.join("; "))
    }
}

/// When a scan must stop before it is done: a deadline, and a question
/// asked at every file and folder ("has the person stopped the task?").
#[derive(Clone, Copy, Default)]
pub struct SweepBudget<'a> {
    pub deadline: Option<Instant>,
    pub stop: Option<&'a (dyn Fn() -> bool + Sync)>,
}

impl SweepBudget<'_> {
    /// No deadline, no stop.
    pub const UNLIMITED: SweepBudget<'static> = SweepBudget {
        deadline: None,
        stop: None,
    };

    /// Why the scan must stop now, if it must.
    fn spent(&self) -> Option<Stopped> {
        if self.stop.is_some_and(|stop| stop()) {
            return Some(Stopped::Cancelled);
        }
        self.deadline
            .is_some_and(|d| Instant::now() >= d)
            .then_some(Stopped::TimeLimit)
    }
}

impl std::fmt::Debug for SweepBudget<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SweepBudget")
            .field("deadline", &self.deadline)
            .field("stop", &self.stop.is_some())
            .finish()
    }
}

/// Why a scan stopped before it was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The time it was given ran out.
    TimeLimit,
    /// The task was stopped.
    Cancelled,
}

impl Stopped {
    /// In words, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Self::TimeLimit => "the look at the workspace ran out of time",
            Self::Cancelled => "the look at the workspace was stopped",
        }
    }
}

/// Why a scan failed: the history store failed, or it stopped before it
/// was done. Either way the cache is as it was before the scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanError {
    Store(StoreError),
    Stopped(Stopped),
}

impl From<StoreError> for ScanError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

/// One change a sweep found, which of its sides are hash only, and what
/// each side is when not a plain file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedChange {
    pub transition: PathTransition,
    pub unkept: Unkept,
    pub forms: Forms,
}

/// Which ignore rules decide what a scan looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgnoreRules {
    /// The ignore files as they are now (a scan before a command or a
    /// turn); they are kept for the scan after it.
    OnDisk,
    /// The rules the last [`Self::OnDisk`] scan kept (the scan after a
    /// command or a turn): a `.gitignore` the command wrote hides nothing
    /// it did. The first scan of a cache reads the rules on disk.
    AsKept,
}

/// A regular file's content; nothing for anything else (a FIFO or a
/// device swapped in after the walk saw a file is never opened blocking).
fn read_regular(path: &Path) -> Option<Vec<u8>> {
    crate::disk::open_regular_file(path)
        .ok()
        .flatten()
        .and_then(|file| crate::disk::read_all(file).ok())
}

/// The sweep's watcher; none where the system has no watcher it can use.
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub struct Watch;

/// path → (size, mtime, ctime, inode, hash) of the workspace's tracked files.
#[derive(Debug, Clone, Default)]
pub struct StatCache {
    entries: BTreeMap<NormalizedPath, Entry>,
    populated: bool,
    /// The ignore rules the last scan by the rules on disk read.
    kept: KeptRules,
    options: Option<NormalizeOptions>,
    watch: Option<Arc<Watch>>,
    /// The watcher's loss count when the last full scan began, if that
    /// scan watched every folder it listed: scans may be narrowed while
    /// the count stays there.
    window: Option<u64>,
    /// Reported paths a scan took but could not use (events had been lost
    /// meanwhile): the next full scan reads them again.
    carried: BTreeSet<PathBuf>,
    /// Tracked files with more than one link when last looked at.
    linked: BTreeSet<NormalizedPath>,
    /// Tracked files the last full scan did not meet (in folders it did not
    /// list, so not watched).
    unwatched: BTreeSet<NormalizedPath>,
    /// The version-control metadata the looks met, and the folders they
    /// were kept out of (see [`Census`]); `None` until a full look.
    census: Option<Census>,
    /// When the last look that left the watcher's window whole ended (a
    /// look before a command shortly after may be narrowed).
    looked_at: Option<Instant>,
    /// The entries the cache file holds, as this process last wrote it
    /// ([`Self::mark_saved`]): what a delta is taken against.
    saved: Option<Arc<BTreeMap<NormalizedPath, Entry>>>,
}

impl StatCache {
    /// Uses `options` to name paths (the workspace's measured case rule).
    pub fn set_options(&mut self, options: NormalizeOptions) {
        self.options = Some(options);
    }

    /// Leaves its entries' memory to the system, the process being about
    /// to end: the watcher is let go, the maps are not freed.
    pub(crate) fn leave_to_exit(mut self) {
        self.watch = None;
        std::mem::forget(self);
    }

    /// Lets full scans watch the folders they list, so that the scan after
    /// a command can be narrowed to what the watcher reported.
    pub fn set_watch(&mut self, watch: Arc<Watch>) {
        self.watch = Some(watch);
        self.window = None;
    }

    /// Whether full scans watch the folders they list.
    pub fn is_watched(&self) -> bool {
        self.watch.is_some()
    }

    fn options(&self) -> NormalizeOptions {
        self.options.unwrap_or(NormalizeOptions {
            case: CaseSensitivity::Sensitive,
            unicode: UnicodeSensitivity::native(),
            style: PathStyle::native(),
        })
    }

    /// Whether a scan of this process filled the cache (restored entries
    /// alone do not count: they are what the last process left).
    pub fn is_populated(&self) -> bool {
        self.populated
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every hash the cache holds (their blobs are the sweep's bases).
    pub fn hashes(&self) -> BTreeSet<ContentHash> {
        self.entries.values().map(|e| e.hash).collect()
    }

    /// The tracked hash of a path.
    pub fn hash_of(&self, path: &NormalizedPath) -> Option<ContentHash> {
        self.entries.get(path).map(|e| e.hash)
    }

    /// The paths the watcher reported since the last scan (and those a
    /// scan carried over), named like tracked paths, and the watcher's
    /// loss count after them (`None`: no watcher).
    fn take_reported(&mut self) -> (BTreeSet<PathBuf>, Option<u64>) {
        let carried = std::mem::take(&mut self.carried);
        #[cfg(target_os = "linux")]
        if let Some(watch) = &self.watch {
            let (mut taken, losses) = watch.take();
            taken.extend(carried);
            return (taken, Some(losses));
        }
        (carried, None)
    }

    fn names(&self, paths: &BTreeSet<PathBuf>) -> BTreeSet<NormalizedPath> {
        paths
            .iter()
            .filter_map(|rel| normalize(&text_of(rel)?, self.options()).ok())
            .collect()
    }

    /// Brings the cache up to date with the tree, calling `store_blob` with
    /// the content of every file it hashes. `rules` says which ignore rules
    /// decide what the scan looks at. Every folder listed is watched first
    /// when the cache has a watcher.
    pub fn scan(
        &mut self,
        root: &Path,
        limits: &SweepLimits,
        rules: IgnoreRules,
        budget: &SweepBudget<'_>,
        store_blob: &mut dyn FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<SweepStats, ScanError> {
        let started = SystemTime::now();
        let (reported, losses) = self.take_reported();
        let dirty = self.names(&reported);
        // The rules as they are now are read folder by folder as the walk
        // enters it (parents before children), and kept for the next scan.
        let mut kept = match rules {
            IgnoreRules::AsKept if self.populated => None,
            _ => Some(KeptRules::default()),
        };
        let mut matchers = match &kept {
            Some(_) => Matchers::new(root),
            None => self.kept.matchers(root),
        };
        let mut walk = Walk {
            root,
            limits,
            started,
            dirty: &dirty,
            stats: SweepStats::default(),
            next: Vec::new(),
            met_same: Vec::new(),
            met_tracked: 0,
            tracked_before: None,
            links: BTreeMap::new(),
            gaps: false,
            metadata: Vec::new(),
            ignored: Vec::new(),
            budget,
            store_blob,
        };
        let result = self
            .walk(
                &mut walk,
                vec![PathBuf::new()],
                &mut matchers,
                kept.as_mut(),
            )
            .and_then(|()| {
                if walk.met_tracked == self.entries.len() {
                    // Every tracked file was met: none to look for.
                    return Ok((BTreeSet::new(), Vec::new()));
                }
                let mut met = std::mem::take(&mut walk.met_same);
                met.extend(walk.next.iter().map(|(p, _)| p.clone()));
                met.sort_unstable();
                self.keep_unmet(&mut walk, &met)
            });
        let (unmet, gone) = match result {
            Ok(done) => done,
            Err(e) => {
                // What the watcher reported is read again next time.
                self.carried = reported;
                self.census = None;
                return Err(e);
            }
        };
        let Walk {
            stats,
            next,
            links,
            gaps,
            metadata,
            ignored,
            ..
        } = walk;
        self.census = Some(Census {
            metadata: metadata.into_iter().collect(),
            ignored: ignored.into_iter().collect(),
        });
        // Unchanged entries stand where they are; only what changed, came
        // or went is touched.
        for path in gone {
            self.entries.remove(&path);
        }
        self.entries.extend(next);
        self.linked = links
            .into_iter()
            .filter_map(|(p, many)| many.then_some(p))
            .collect();
        self.unwatched = unmet;
        self.window = if self.watch.is_some() && !gaps {
            losses
        } else {
            None
        };
        self.looked_at = self.window.map(|_| Instant::now());
        if let Some(kept) = kept {
            self.kept = kept;
        }
        self.populated = true;
        Ok(stats)
    }

    /// Lists the folders in `folders` and everything below them that the
    /// rules do not ignore, putting the files met into `walk.next`; with
    /// `kept`, the ignore files met are read and kept. Folder by folder
    /// depth, each depth's folders listed and their files' stats read on
    /// every core (the stats are most of a scan's time).
    fn walk(
        &self,
        walk: &mut Walk<'_>,
        folders: Vec<PathBuf>,
        matchers: &mut Matchers,
        mut kept: Option<&mut KeptRules>,
    ) -> Result<(), ScanError> {
        let mut depth = folders;
        let mut first = true;
        while !depth.is_empty() {
            if let Some(stopped) = walk.budget.spent() {
                return Err(ScanError::Stopped(stopped));
            }
            // A folder's rules decide what it holds: read before listing,
            // for the folders the walk starts from (the root's with
            // `.git/info/exclude`). Below them each listing reads the
            // ignore files it finds among its names, on its core, and
            // they are kept once the depth is listed: the folders without
            // any (nearly all) cost no lookup of a missing file.
            if first && let Some(kept) = kept.as_deref_mut() {
                for rel in &depth {
                    kept.keep_folder(rel, matchers);
                }
            }
            let reads_own = kept.is_some() && !first;
            first = false;
            let shared: &Matchers = matchers;
            let (root, dirty) = (walk.root, walk.dirty);
            let listings = crate::parallel::parallel_map(&depth, |rel| {
                self.list(root, rel, shared, dirty, reads_own)
            });
            let mut deeper = Vec::new();
            for (rel, mut listing) in depth.iter().zip(listings) {
                if let (Some(own), Some(kept)) = (listing.own.take(), kept.as_deref_mut()) {
                    kept.keep_read(rel, own, matchers);
                }
                walk.gaps |= listing.unwatched;
                walk.stats.unnamed += listing.unnamed;
                walk.stats.too_deep += usize::from(listing.too_deep);
                walk.metadata.extend(listing.metadata);
                walk.ignored.extend(listing.ignored);
                deeper.extend(listing.folders);
                for file in listing.files {
                    // Unchanged: its entry stands, nothing is read.
                    match file.met {
                        Met::Same(entry) => {
                            walk.stats.files += 1;
                            walk.met_tracked += 1;
                            if entry.stat.len > walk.limits.max_file_bytes {
                                walk.stats.too_large += 1;
                            }
                            if file.linked || walk.tracked_before.is_some() {
                                walk.links.insert(file.path.clone(), file.linked);
                            }
                            walk.met_same.push(file.path);
                        }
                        Met::Changed(meta) => {
                            if self.entries.contains_key(&file.path) {
                                walk.met_tracked += 1;
                            }
                            let full = crate::disk::reach(root, &file.rel);
                            self.meet(walk, file.path, &full, &meta, false)?;
                        }
                    }
                }
            }
            depth = deeper;
        }
        Ok(())
    }

    /// One folder of a walk: watched first (when the cache has a watcher),
    /// then listed; the folders below it and its files with their stats,
    /// as the rules leave them, each with its entry when its stat says it
    /// did not change (not racy, not reported dirty).
    fn list(
        &self,
        root: &Path,
        rel: &Path,
        matchers: &Matchers,
        dirty: &BTreeSet<NormalizedPath>,
        reads_own: bool,
    ) -> Listing {
        let mut listing = Listing::default();
        #[cfg(target_os = "linux")]
        if let Some(watch) = &self.watch {
            match watch.add_folder(rel) {
                Ok(()) => {}
                Err(Unwatched::Gone) => return listing,
                Err(Unwatched::Refused) => listing.unwatched = true,
            }
        }
        let entries: Vec<std::fs::DirEntry> =
            match std::fs::read_dir(&*crate::disk::reach(root, rel)) {
                Ok(entries) => entries.flatten().collect(),
                // Deeper than the system's longest path: what it holds cannot
                // be looked at, and the scan says so.
                Err(e) if e.raw_os_error() == Some(ENAMETOOLONG) => {
                    listing.too_deep = true;
                    return listing;
                }
                Err(_) => return listing,
            };
        // `reads_own`: its own ignore files were not read before, and are
        // when its names hold one.
        let mut rules = if reads_own
            && entries
                .iter()
                .any(|e| crate::ignore_rules::is_ignore_name(&e.file_name()))
        {
            let own = crate::ignore_rules::read_ignore_files(root, rel);
            let rules = matchers.in_folder_with(rel, &own);
            listing.own = Some(own);
            rules
        } else {
            matchers.in_folder(rel)
        };
        let folder_text = text_of(rel);
        let at_root = rel.as_os_str().is_empty();
        // The census of version-control metadata is taken by the listing
        // (see [`Census`]); nothing inside metadata is counted.
        let counts_metadata = !in_metadata(rel);
        for entry in entries {
            let name = entry.file_name();
            if at_root && name.to_string_lossy().eq_ignore_ascii_case(COCODE_DIR) {
                continue;
            }
            // The root's `.git` is not looked at, nor watched: a census
            // asks for it itself.
            if at_root && name == ".git" {
                continue;
            }
            if counts_metadata && is_version_control_name(&name.to_string_lossy()) {
                listing.metadata.push(rel.join(&name));
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if rules.ignores(&name, true) {
                    listing.ignored.push(rel.join(&name));
                } else {
                    let rel = rel.join(&name);
                    // The folder is an entry of its own (a folder made or
                    // removed is a change, empty or not).
                    if let Some(listed) =
                        self.folder_listed(root, &rel, &entry, dirty, &mut listing)
                    {
                        listing.files.push(listed);
                    }
                    listing.folders.push(rel);
                }
                continue;
            }
            // Links (never followed), FIFOs and devices are tracked as
            // what they are, beside regular files.
            if rules.ignores(&name, false) {
                continue;
            }
            // The folder's text is made once; each name adds its own.
            let Some(text) = child_text(folder_text.as_deref(), &name) else {
                listing.unnamed += 1;
                continue;
            };
            let rel = rel.join(&name);
            // A file is read by its path from the root: where one longer
            // than the system takes cannot be reached, the scan says so.
            if crate::disk::too_long(root, &rel) && !crate::disk::reaches_deep() {
                listing.too_deep = true;
                continue;
            }
            let Ok(path) = normalize(&text, self.options()) else {
                continue;
            };
            // Read from the listing's folder (no lookup of the path from
            // the root): never follows a link.
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            let stat = Stat::of(&meta);
            let form = Stat::form_of(&meta);
            let same = self
                .entries
                .get(&path)
                .filter(|old| {
                    !old.racy && old.stat == stat && old.form == form && !dirty.contains(&path)
                })
                .copied();
            listing.files.push(Listed {
                linked: link_count(&meta) > 1,
                path,
                rel,
                met: same.map_or(Met::Changed(meta), Met::Same),
            });
        }
        listing
    }

    /// A folder a listing met, as an entry: its entry stands while it is a
    /// folder (its times change with what it holds, which is recorded on
    /// its own). Not a folder of version-control metadata (the gate
    /// removes one a command makes, file by file).
    fn folder_listed(
        &self,
        root: &Path,
        rel: &Path,
        entry: &std::fs::DirEntry,
        dirty: &BTreeSet<NormalizedPath>,
        listing: &mut Listing,
    ) -> Option<Listed> {
        if in_metadata(rel) {
            return None;
        }
        let Some(text) = text_of(rel) else {
            listing.unnamed += 1;
            return None;
        };
        if crate::disk::too_long(root, rel) && !crate::disk::reaches_deep() {
            listing.too_deep = true;
            return None;
        }
        let path = normalize(&text, self.options()).ok()?;
        // A folder still a folder keeps its entry: its stat is not read.
        let met = match self
            .entries
            .get(&path)
            .filter(|old| old.form == Some(Form::Folder) && !dirty.contains(&path))
        {
            Some(old) => Met::Same(*old),
            None => Met::Changed(entry.metadata().ok()?),
        };
        Some(Listed {
            linked: false,
            path,
            rel: rel.to_path_buf(),
            met,
        })
    }

    /// A file a scan looks at: its entry goes into `walk.next` (nothing
    /// when it cannot be read, or when it is new past the count limit).
    /// `forced`: hashed again whatever its stat says.
    fn meet(
        &self,
        walk: &mut Walk<'_>,
        path: NormalizedPath,
        full: &Path,
        meta: &std::fs::Metadata,
        forced: bool,
    ) -> Result<(), ScanError> {
        // Asked at every file: a file above the ceiling costs a few
        // system calls, one under it at most a read of the ceiling.
        if let Some(stopped) = walk.budget.spent() {
            return Err(ScanError::Stopped(stopped));
        }
        // The count limit holds new files back, never tracked ones: a
        // flood of new files hides no change.
        let tracked = self.entries.contains_key(&path);
        let count = walk.tracked_before.map_or(walk.met_same.len(), |n| n) + walk.next.len();
        if count >= walk.limits.max_files && !tracked {
            walk.stats.truncated = true;
            return Ok(());
        }
        walk.stats.files += 1;
        // A full scan keeps only the linked; a narrowed one also unlinks.
        let many = link_count(meta) > 1;
        if many || walk.tracked_before.is_some() {
            walk.links.insert(path.clone(), many);
        }
        let seen = Seen {
            full,
            meta,
            dirty: forced || walk.dirty.contains(&path),
            started: walk.started,
        };
        if let Some(entry) =
            self.look_at(&path, &seen, walk.limits, &mut walk.stats, walk.store_blob)?
        {
            walk.next.push((path, entry));
        }
        Ok(())
    }

    /// A tracked file the walk did not meet (not in `met`, sorted) is not
    /// gone because of that (a folder of it hidden by a rule the person
    /// added since, the count limit): whatever still exists keeps being
    /// tracked, its entry put in `walk.next`. Returns those still tracked,
    /// and those gone.
    fn keep_unmet(
        &self,
        walk: &mut Walk<'_>,
        met: &[NormalizedPath],
    ) -> Result<(BTreeSet<NormalizedPath>, Vec<NormalizedPath>), ScanError> {
        let mut unmet = BTreeSet::new();
        let mut gone = Vec::new();
        // Both are sorted: one pass over the two, no lookups.
        let mut met = met.iter().peekable();
        for (path, old) in &self.entries {
            while met.next_if(|m| *m < path).is_some() {}
            if met.peek() == Some(&path) {
                continue;
            }
            let full = reach_path(walk.root, path);
            let Ok(meta) = full.symlink_metadata() else {
                gone.push(path.clone());
                continue;
            };
            let before = walk.next.len();
            // Hashed again whatever its stat says: the walk missed it.
            self.meet(walk, path.clone(), &full, &meta, true)?;
            if walk.next.len() == before {
                // Unreadable now: it keeps its last state, never a deletion.
                walk.next.push((path.clone(), *old));
            }
            unmet.insert(path.clone());
        }
        Ok((unmet, gone))
    }

    /// What the looks know of the version-control metadata, for a census
    /// ([`Census::take`]); `None` before a full look.
    pub(crate) fn census(&self) -> Option<Census> {
        self.census.clone()
    }

    /// The next look before a command is a full one.
    pub fn forget_recent_look(&mut self) {
        self.looked_at = None;
    }

    /// Whether the scan after a command by writers that could not make hard
    /// links may look only at what the watcher reported
    /// ([`Self::scan_reported`]).
    pub fn can_narrow(&self) -> bool {
        self.populated && self.watch.is_some() && self.window.is_some()
    }

    /// The scan after a command, looking only at what the watcher reported
    /// since the last scan and at the files it cannot vouch for (see the
    /// module's documentation), by the kept ignore rules. Returns what
    /// changed, or `None` when it cannot be narrowed (no watcher, events
    /// lost since the last full scan): then the caller scans in full.
    /// Only for writers that could not make hard links.
    pub fn scan_reported(
        &mut self,
        root: &Path,
        limits: &SweepLimits,
        budget: &SweepBudget<'_>,
        store_blob: &mut dyn FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<Option<(SweepStats, Vec<ObservedChange>)>, ScanError> {
        if !self.can_narrow() {
            return Ok(None);
        }
        let (reported, losses) = self.take_reported();
        self.narrowed(root, limits, budget, store_blob, reported, losses)
    }

    /// The look before a command, narrowed like the one after it (see
    /// [`Self::scan_reported`]) when a look of this process that left the
    /// watcher's window whole ended less than `within` ago, and the ignore
    /// rules are as that look kept them (no ignore file reported,
    /// `.git/info/exclude` as it was). What changed meanwhile is the base
    /// of the command, as a full look would take it. `None`: look in full.
    pub fn scan_reported_before(
        &mut self,
        root: &Path,
        limits: &SweepLimits,
        within: Duration,
        budget: &SweepBudget<'_>,
        store_blob: &mut dyn FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<Option<SweepStats>, ScanError> {
        if !self.can_narrow()
            || self.looked_at.is_none_or(|t| t.elapsed() >= within)
            || self.kept.exclude_differs(root)
        {
            return Ok(None);
        }
        let (reported, losses) = self.take_reported();
        if reported
            .iter()
            .any(|p| crate::ignore_rules::is_ignore_file(p))
        {
            // The full look reads them again.
            self.carried = reported;
            return Ok(None);
        }
        Ok(self
            .narrowed(root, limits, budget, store_blob, reported, losses)?
            .map(|(stats, _)| stats))
    }

    /// The work of the narrowed looks, from what the watcher reported.
    fn narrowed(
        &mut self,
        root: &Path,
        limits: &SweepLimits,
        budget: &SweepBudget<'_>,
        store_blob: &mut dyn FnMut(&[u8]) -> Result<(), StoreError>,
        reported: BTreeSet<PathBuf>,
        losses: Option<u64>,
    ) -> Result<Option<(SweepStats, Vec<ObservedChange>)>, ScanError> {
        if losses != self.window {
            self.carried = reported;
            return Ok(None);
        }
        let dirty = self.names(&reported);
        let mut matchers = self.kept.matchers(root);
        let mut walk = Walk {
            root,
            limits,
            started: SystemTime::now(),
            dirty: &dirty,
            stats: SweepStats::default(),
            next: Vec::new(),
            met_same: Vec::new(),
            met_tracked: 0,
            tracked_before: Some(self.entries.len()),
            links: BTreeMap::new(),
            gaps: false,
            metadata: Vec::new(),
            ignored: Vec::new(),
            budget,
            store_blob,
        };
        let result = self.look_at_reported(&mut walk, &reported, &mut matchers);
        let gone = match result {
            Ok(gone) => gone,
            Err(e) => {
                self.carried = reported;
                self.census = None;
                return Err(e);
            }
        };
        let Walk {
            mut stats,
            next,
            links,
            gaps,
            metadata,
            ignored,
            ..
        } = walk;
        if let Some(census) = self.census.as_mut() {
            census.update(root, &reported, &matchers, metadata, ignored);
        }
        stats.narrowed = true;
        let mut changes = Vec::new();
        // A folder walked twice (reported with a folder above it) gives
        // its files twice: one update each.
        let next: BTreeMap<NormalizedPath, Entry> = next.into_iter().collect();
        let updates = next
            .into_iter()
            .map(|(p, e)| (p, Some(e)))
            .chain(gone.into_iter().map(|p| (p, None)));
        for (path, now) in updates {
            changes.extend(change_of(&path, self.entries.get(&path), now.as_ref()));
            if let Some(entry) = now {
                self.entries.insert(path, entry);
            } else {
                self.entries.remove(&path);
                self.linked.remove(&path);
                self.unwatched.remove(&path);
            }
        }
        for (path, many) in links {
            if many {
                self.linked.insert(path);
            } else {
                self.linked.remove(&path);
            }
        }
        if gaps {
            self.window = None;
        }
        self.looked_at = self.window.map(|_| Instant::now());
        changes.sort_by(|a, b| a.transition.path.cmp(&b.transition.path));
        Ok(Some((stats, changes)))
    }

    /// The work of [`Self::scan_reported`]: files looked at go into
    /// `walk.next`; returns the tracked paths that are gone.
    fn look_at_reported(
        &self,
        walk: &mut Walk<'_>,
        reported: &BTreeSet<PathBuf>,
        matchers: &mut Matchers,
    ) -> Result<BTreeSet<NormalizedPath>, ScanError> {
        let root = walk.root;
        // Files to look at one by one, and whether they were reported.
        let mut files: BTreeMap<NormalizedPath, bool> = BTreeMap::new();
        // Tracked paths below these are looked at too.
        let mut below = Vec::new();
        for rel in reported {
            let Some(path) = text_of(rel).and_then(|t| normalize(&t, self.options()).ok()) else {
                continue;
            };
            match crate::disk::reach(root, rel).symlink_metadata() {
                Ok(meta) if meta.is_dir() => {
                    // Created, renamed or moved in: what it holds may never
                    // have been reported. The folder itself is an entry.
                    if !matchers.ignores_here_or_above(rel, true) {
                        self.walk(walk, vec![rel.clone()], matchers, None)?;
                        if !in_metadata(rel) {
                            files.insert(path.clone(), true);
                        }
                    }
                    below.push(path);
                }
                // A file, or nothing: what was tracked below a folder
                // that was there is gone.
                _ => {
                    below.push(path.clone());
                    files.insert(path, true);
                }
            }
        }
        for folder in below {
            let prefix = format!("{}/", folder.as_str());
            // Every name that begins with the folder's sorts together.
            for path in self
                .entries
                .range(folder.clone()..)
                .map(|(p, _)| p)
                .take_while(|p| p.as_str().starts_with(folder.as_str()))
                .filter(|p| p.as_str().starts_with(&prefix))
            {
                files.entry(path.clone()).or_insert(false);
            }
        }
        // What the watcher cannot vouch for.
        let unvouched = self
            .linked
            .iter()
            .chain(&self.unwatched)
            .chain(self.entries.iter().filter_map(|(p, e)| e.racy.then_some(p)));
        for path in unvouched {
            files.entry(path.clone()).or_insert(false);
        }
        // Files the walks of folders looked at already.
        let walked: BTreeSet<NormalizedPath> = walk
            .next
            .iter()
            .map(|(p, _)| p.clone())
            .chain(walk.met_same.iter().cloned())
            .collect();
        let mut gone = BTreeSet::new();
        for (path, forced) in files {
            if walked.contains(&path) {
                continue;
            }
            let tracked = self.entries.contains_key(&path);
            let full = reach_path(root, &path);
            match full.symlink_metadata() {
                Ok(meta) => {
                    let rel: PathBuf = path.segments().map(os_name).collect();
                    if tracked || !matchers.ignores_here_or_above(&rel, meta.is_dir()) {
                        self.meet(walk, path, &full, &meta, forced)?;
                    }
                }
                _ if tracked => {
                    gone.insert(path);
                }
                _ => {}
            }
        }
        Ok(gone)
    }

    /// The entry of a file the scan met: the old one when its stat says
    /// it did not change, else its new hash. Content under the ceiling is
    /// handed to `store_blob` when it is new; above it, the file is hashed
    /// as identified (see [`crate::large_file`]) and nothing is kept. `None`: it could not be read.
    fn look_at(
        &self,
        path: &NormalizedPath,
        seen: &Seen<'_>,
        limits: &SweepLimits,
        stats: &mut SweepStats,
        store_blob: &mut dyn FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<Option<Entry>, StoreError> {
        let stat = Stat::of(seen.meta);
        let form = Stat::form_of(seen.meta);
        let regular = matches!(form, None | Some(Form::File { .. }));
        let kept = !regular || stat.len <= limits.max_file_bytes;
        if !kept {
            stats.too_large += 1;
        }
        if let Some(old) = self.entries.get(path)
            && !old.racy
            && !seen.dirty
            && old.stat == stat
            && old.form == form
        {
            return Ok(Some(*old));
        }
        // A folder is what it is: its times move with what it holds.
        if form == Some(Form::Folder) {
            if self.entries.get(path).is_none_or(|old| old.form != form) {
                store_blob(b"")?;
            }
            return Ok(Some(Entry {
                stat,
                hash: ContentHash::of(b""),
                racy: false,
                kept: true,
                form,
            }));
        }
        let content = match form {
            // A link is its target, read without following it.
            Some(Form::Symlink) => match std::fs::read_link(seen.full) {
                Ok(target) => Some(target.into_os_string().into_encoded_bytes()),
                Err(_) => return Ok(None),
            },
            // A FIFO or a device is never opened: it has no content.
            Some(Form::Fifo | Form::Special | Form::Folder) => Some(Vec::new()),
            None | Some(Form::File { .. }) if kept => {
                let Some(bytes) = read_regular(seen.full) else {
                    return Ok(None);
                };
                Some(bytes)
            }
            None | Some(Form::File { .. }) => None,
        };
        let hash = if let Some(bytes) = content {
            let hash = ContentHash::of(&bytes);
            if self.entries.get(path).map(|e| (e.hash, e.kept)) != Some((hash, true)) {
                store_blob(&bytes)?;
            }
            hash
        } else {
            // Named by its identity, never read whole (a sparse file of
            // terabytes costs a few system calls).
            let Some(hash) = identify_regular(seen.full) else {
                return Ok(None);
            };
            hash
        };
        stats.hashed += 1;
        Ok(Some(Entry {
            stat,
            hash,
            racy: stat.racy_since(seen.started),
            kept,
            form,
        }))
    }

    /// Notes a path the gate has just written with content `hash` (`None`:
    /// removed) without reading it back. The entry stays racy, so the next
    /// sweep hashes the file again: a change made right after the gate's
    /// is still seen.
    pub fn record(&mut self, root: &Path, path: &NormalizedPath, hash: Option<ContentHash>) {
        if self.populated {
            let full = reach_path(root, path);
            self.put(path, full.symlink_metadata().ok(), hash);
            self.note_folders(root, path, hash.is_some());
        }
    }

    /// Keeps the folders above `path` as they are on disk after a write
    /// (`made`: something is at `path` now, so every folder above it
    /// exists) or a removal (the gate and a rollback remove folders they
    /// emptied): a folder the sweep did not see come or go is never a
    /// later command's change.
    fn note_folders(&mut self, root: &Path, path: &NormalizedPath, made: bool) {
        let segments: Vec<&str> = path.segments().collect();
        for depth in (1..segments.len()).rev() {
            let Ok(folder) = normalize(&segments[..depth].join("/"), self.options()) else {
                return;
            };
            let tracked = self
                .entries
                .get(&folder)
                .is_some_and(|e| e.form == Some(Form::Folder));
            if made && tracked {
                // The folders above it were noted when it was.
                return;
            }
            let rel: PathBuf = segments[..depth].iter().map(|s| os_name(s)).collect();
            match crate::disk::reach(root, &rel).symlink_metadata() {
                Ok(meta) if meta.is_dir() => {
                    if tracked {
                        return;
                    }
                    self.put(&folder, Some(meta), Some(ContentHash::of(b"")));
                }
                _ => {
                    self.entries.remove(&folder);
                }
            }
        }
    }

    /// Re-reads one path after a person saved it, so the next sweep does
    /// not attribute that change to a task.
    pub fn refresh(&mut self, root: &Path, path: &NormalizedPath) {
        if self.populated {
            let full = reach_path(root, path);
            let meta = full.symlink_metadata().ok();
            let hash = match &meta {
                Some(meta) if meta.is_dir() => Some(ContentHash::of(b"")),
                _ => read_regular(&full).map(|b| ContentHash::of(&b)),
            };
            self.put(path, meta, hash);
            self.note_folders(root, path, hash.is_some());
        }
    }

    /// [`Self::refresh`] for `path` and everything below it (a folder a
    /// person renamed, deleted or created): entries that are gone are
    /// dropped, files now there are taken as they are.
    pub fn refresh_tree(&mut self, root: &Path, path: &NormalizedPath) {
        if !self.populated {
            return;
        }
        let prefix = format!("{}/", path.as_str());
        let stale: Vec<NormalizedPath> = self
            .entries
            .keys()
            .filter(|p| *p == path || p.as_str().starts_with(&prefix))
            .cloned()
            .collect();
        for p in stale {
            self.entries.remove(&p);
        }
        let rel: PathBuf = path.segments().map(os_name).collect();
        if crate::disk::reach(root, &rel).symlink_metadata().is_err() {
            // Gone: the folders above may have gone with it.
            self.note_folders(root, path, false);
        }
        let mut pending = vec![(rel, path.as_str().to_owned())];
        while let Some((dir, rel)) = pending.pop() {
            let dir_reached = crate::disk::reach(root, &dir);
            let Ok(meta) = dir_reached.symlink_metadata() else {
                continue;
            };
            if meta.is_file() {
                if let Ok(p) = normalize(&rel, self.options()) {
                    self.refresh(root, &p);
                }
            } else if meta.is_dir() {
                if let Ok(p) = normalize(&rel, self.options()) {
                    self.refresh(root, &p);
                }
                let Ok(read) = std::fs::read_dir(&*dir_reached) else {
                    continue;
                };
                for entry in read.flatten() {
                    let Some(name) = name_text(&entry.file_name()) else {
                        continue;
                    };
                    pending.push((dir.join(entry.file_name()), format!("{rel}/{name}")));
                }
            }
        }
    }

    /// A racy entry for what is at `path` with `hash` (a file, a link, a
    /// folder…); nothing drops it.
    fn put(
        &mut self,
        path: &NormalizedPath,
        meta: Option<std::fs::Metadata>,
        hash: Option<ContentHash>,
    ) {
        match (meta, hash) {
            (Some(meta), Some(hash)) => {
                self.entries.insert(
                    path.clone(),
                    Entry {
                        stat: Stat::of(&meta),
                        hash,
                        racy: true,
                        kept: true,
                        form: Stat::form_of(&meta),
                    },
                );
            }
            _ => {
                self.entries.remove(path);
            }
        }
    }

    /// The entries as bytes, for the next process ([`Self::restore`]);
    /// `packed` says which contents the history packs (their hashes are
    /// saved short, see [`crate::sweep_file`]).
    pub fn to_bytes(&self, packed: &dyn Fn(&ContentHash) -> bool) -> Vec<u8> {
        crate::sweep_file::encode(
            self.entries.iter().map(|(path, e)| (path.as_str(), e)),
            packed,
        )
    }

    /// Takes entries a process before this one kept ([`Self::to_bytes`]),
    /// each only when its content is still in history (`has_blob` for a
    /// whole hash; a short one must be resolved by `by_prefix`, from the
    /// packs, to the one packed blob it begins), since a change of the file must find its base. Entries
    /// whose content history never held (above the ceiling) are taken as
    /// they are. A file whose stat still matches is then not read again.
    /// Nothing else is taken over: the first scan reads the ignore rules on
    /// disk as if the cache were new. Returns how many entries were taken,
    /// and whether that was every entry the bytes hold; damaged bytes give
    /// none.
    pub fn restore(
        &mut self,
        bytes: &[u8],
        has_blob: &dyn Fn(&ContentHash) -> bool,
        by_prefix: &dyn Fn(&[u8; crate::sweep_file::SHORT]) -> Option<ContentHash>,
    ) -> (usize, bool) {
        // Collected, then built in one go: the cache file holds the entries
        // in order, which a map built from a sorted list takes without a
        // search per entry.
        let mut taken = Vec::new();
        let mut all = 0;
        let options = self.options();
        let whole = crate::sweep_file::decode(bytes, |path, mut entry, name| {
            all += 1;
            let Ok(path) = normalize(&path, options) else {
                return;
            };
            // A prefix the packs resolve names a blob history holds: no
            // second look for it.
            let held = match name {
                crate::sweep_file::Name::Whole(hash) => !entry.kept || has_blob(&hash),
                crate::sweep_file::Name::Short(prefix) => {
                    by_prefix(&prefix).map(|hash| entry.hash = hash).is_some()
                }
            };
            if held {
                taken.push((path, entry));
            }
        });
        if whole.is_none() {
            return (0, false);
        }
        self.entries = taken.into_iter().collect();
        let n = self.entries.len();
        (n, n == all)
    }

    /// Notes that the cache file now holds the entries as they are: later
    /// changes can be kept as a delta against them ([`Self::delta_bytes`]).
    pub fn mark_saved(&mut self) {
        self.saved = Some(Arc::new(self.entries.clone()));
    }

    /// What changed since [`Self::mark_saved`], in the delta's saved form
    /// (entries changed or new, then paths gone; see
    /// [`crate::sweep_file::encode_delta`]), when that is smaller than
    /// `most` changes; `None` when the whole cache should be written.
    pub fn delta_bytes(&self, most: usize) -> Option<Vec<u8>> {
        let saved = self.saved.as_ref()?;
        let mut changed = Vec::new();
        let mut gone = Vec::new();
        let mut old = saved.iter().peekable();
        for (path, entry) in &self.entries {
            while let Some((p, _)) = old.next_if(|(p, _)| *p < path) {
                gone.push(p.as_str());
            }
            match old.next_if(|(p, _)| *p == path) {
                Some((_, before)) if before == entry => {}
                _ => changed.push((path.as_str(), entry)),
            }
            if changed.len() + gone.len() > most {
                return None;
            }
        }
        gone.extend(old.map(|(p, _)| p.as_str()));
        (changed.len() + gone.len() <= most)
            .then(|| crate::sweep_file::encode_delta(changed.into_iter(), &gone))
    }

    /// Applies a delta ([`Self::delta_bytes`]) to entries just restored:
    /// each changed entry taken only when its content is in history (as
    /// [`Self::restore`] takes them). Returns whether it was taken whole
    /// (damaged bytes take nothing).
    pub fn apply_delta(&mut self, bytes: &[u8], has_blob: &dyn Fn(&ContentHash) -> bool) -> bool {
        let options = self.options();
        let mut changed = Vec::new();
        let mut whole = true;
        let Some(gone) =
            crate::sweep_file::decode_delta(bytes, |path, entry| match normalize(&path, options) {
                Ok(path) if !entry.kept || has_blob(&entry.hash) => changed.push((path, entry)),
                _ => whole = false,
            })
        else {
            return false;
        };
        for path in gone {
            match normalize(&path, options) {
                Ok(path) => {
                    self.entries.remove(&path);
                }
                Err(_) => whole = false,
            }
        }
        self.entries.extend(changed);
        whole
    }

    /// What changed from `self` to `after`, by path.
    pub fn changes_to(&self, after: &StatCache) -> Vec<ObservedChange> {
        let paths: BTreeSet<&NormalizedPath> =
            self.entries.keys().chain(after.entries.keys()).collect();
        paths
            .into_iter()
            .filter_map(|p| change_of(p, self.entries.get(p), after.entries.get(p)))
            .collect()
    }
}

/// What changed at `path` between two entries, if its content did.
fn change_of(
    path: &NormalizedPath,
    before: Option<&Entry>,
    now: Option<&Entry>,
) -> Option<ObservedChange> {
    let side = |e: Option<&Entry>| e.map(|e| (e.hash, e.form));
    (side(before) != side(now)).then(|| ObservedChange {
        transition: PathTransition {
            path: path.clone(),
            before: before.map(|e| e.hash),
            after: now.map(|e| e.hash),
        },
        unkept: Unkept {
            base: before.is_some_and(|e| !e.kept),
            result: now.is_some_and(|e| !e.kept),
        },
        forms: Forms {
            base: before.and_then(|e| e.form),
            result: now.and_then(|e| e.form),
        },
    })
}

/// One folder as a walk listed it.
#[derive(Default)]
struct Listing {
    /// The folders in it the rules do not ignore.
    folders: Vec<PathBuf>,
    /// Its files the rules do not ignore, with their stats.
    files: Vec<Listed>,
    /// The watcher could not watch it.
    unwatched: bool,
    /// Names in it that have no text (see [`cocode_core::disk_name`]).
    unnamed: usize,
    /// It lies deeper than the system's longest path.
    too_deep: bool,
    /// Version-control metadata in it (none when it lies in metadata).
    metadata: Vec<PathBuf>,
    /// Folders in it the rules ignore.
    ignored: Vec<PathBuf>,
    /// Its own ignore files, when the listing read them (see
    /// [`StatCache::walk`]).
    own: Option<[Option<Vec<u8>>; 2]>,
}

/// What the looks know of the workspace's version-control metadata: the
/// entries named as metadata in the folders they listed, and the folders
/// the rules kept them out of, whose metadata a census walk finds. A full
/// look sets both; a narrowed one updates them for what the watcher
/// reported. So the census each look takes walks only ignored folders,
/// not the tree a second time.
#[derive(Debug, Clone, Default)]
pub(crate) struct Census {
    metadata: BTreeSet<PathBuf>,
    ignored: BTreeSet<PathBuf>,
}

impl Census {
    /// The version-control metadata below `root` as
    /// [`crate::metadata_census::take`] names it: what the looks met, and
    /// a census walk of the folders they were kept out of.
    pub(crate) fn take(
        &self,
        root: &Path,
        options: NormalizeOptions,
    ) -> Option<BTreeSet<NormalizedPath>> {
        let mut found = crate::metadata_census::take_below(root, &self.ignored, options)?;
        // No look or watch goes into the root's `.git`: asked each time.
        if crate::disk::reach(root, Path::new(".git"))
            .symlink_metadata()
            .is_ok()
            && let Ok(git) = normalize(".git", options)
        {
            found.insert(git);
        }
        found.extend(
            self.metadata
                .iter()
                .filter_map(|rel| normalize(&text_of(rel)?, options).ok()),
        );
        Some(found)
    }

    /// Brings the census up to date after a narrowed look: what was known
    /// at or below each reported path is dropped, then what is there now
    /// is taken (the entry itself when it is named as metadata, an ignored
    /// folder, and what the look's walks of reported folders met).
    fn update(
        &mut self,
        root: &Path,
        reported: &BTreeSet<PathBuf>,
        matchers: &Matchers,
        metadata: Vec<PathBuf>,
        ignored: Vec<PathBuf>,
    ) {
        for rel in reported {
            self.metadata.retain(|p| !p.starts_with(rel));
            self.ignored.retain(|p| !p.starts_with(rel));
        }
        for rel in reported {
            let Ok(meta) = crate::disk::reach(root, rel).symlink_metadata() else {
                continue;
            };
            let inside = rel.parent().is_some_and(in_metadata);
            let named = rel
                .file_name()
                .is_some_and(|n| is_version_control_name(&n.to_string_lossy()));
            if named && !inside {
                self.metadata.insert(rel.clone());
            }
            if meta.is_dir()
                && matchers.ignores_here_or_above(rel, true)
                && !self.ignored.iter().any(|f| rel.starts_with(f))
            {
                self.ignored.insert(rel.clone());
            }
        }
        self.metadata.extend(metadata);
        self.ignored.extend(ignored);
    }
}

/// A file as a listing met it.
struct Listed {
    path: NormalizedPath,
    /// Relative to the root.
    rel: PathBuf,
    linked: bool,
    met: Met,
}

/// What a listing found of an entry.
enum Met {
    /// Its entry stands: its stat says it did not change (a folder's, that
    /// it is still a folder: its stat is not read).
    Same(Entry),
    /// To be looked at, with its stat.
    Changed(std::fs::Metadata),
}

/// One scan's state as it walks.
struct Walk<'a> {
    root: &'a Path,
    limits: &'a SweepLimits,
    started: SystemTime,
    /// Reported by the watcher: hashed again whatever their stat says.
    dirty: &'a BTreeSet<NormalizedPath>,
    stats: SweepStats,
    /// The entries of the files read (or new, or missed), in the order met.
    next: Vec<(NormalizedPath, Entry)>,
    /// The files met whose entries stand (their stat did not change).
    met_same: Vec<NormalizedPath>,
    /// How many of the files met were tracked.
    met_tracked: usize,
    /// For a narrowed scan, how many files were tracked before it (its
    /// `next` holds only what it looked at).
    tracked_before: Option<usize>,
    /// The files looked at with more than one link (a narrowed scan also
    /// notes those with one).
    links: BTreeMap<NormalizedPath, bool>,
    /// A folder was listed that the watcher could not watch.
    gaps: bool,
    /// Version-control metadata met in the folders listed.
    metadata: Vec<PathBuf>,
    /// Folders the rules kept the walk out of.
    ignored: Vec<PathBuf>,
    budget: &'a SweepBudget<'a>,
    store_blob: &'a mut dyn FnMut(&[u8]) -> Result<(), StoreError>,
}

/// How many names a file has.
fn link_count(meta: &std::fs::Metadata) -> u64 {
    // A folder's links are its subfolders' `..`: no other name reaches it.
    if meta.is_dir() {
        return 1;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        meta.nlink()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        1
    }
}

/// A file as the walk met it.
struct Seen<'a> {
    full: &'a Path,
    meta: &'a std::fs::Metadata,
    /// The watcher saw it change (or the walk missed it): hash it again.
    dirty: bool,
    started: SystemTime,
}

/// A regular file's identity (see [`crate::large_file`]); nothing for
/// anything else.
fn identify_regular(path: &Path) -> Option<ContentHash> {
    let file = crate::disk::open_regular_file(path).ok()??;
    crate::large_file::identity(&file).ok()
}

/// The number of the error for a path longer than the system takes.
#[cfg(unix)]
const ENAMETOOLONG: i32 = 36;
#[cfg(not(unix))]
const ENAMETOOLONG: i32 = 206;

/// A workspace path below `root` as calls take it, whatever its depth.
fn reach_path(root: &Path, path: &NormalizedPath) -> crate::disk::Reach {
    let rel: PathBuf = path.segments().map(os_name).collect();
    crate::disk::reach(root, &rel)
}

/// The text of the entry `name` of a folder whose text is `folder` (""
/// for the root; `None` when it has none): [`text_of`] of its path.
fn child_text(folder: Option<&str>, name: &std::ffi::OsStr) -> Option<String> {
    let folder = folder?;
    let name = name_text(name)?;
    if folder.is_empty() {
        return Some(name);
    }
    let mut text = String::with_capacity(folder.len() + 1 + name.len());
    text.push_str(folder);
    text.push('/');
    text.push_str(&name);
    Some(text)
}

/// A segment of cocode's paths as the name on disk.
fn os_name(segment: &str) -> std::ffi::OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt as _;
        std::ffi::OsString::from_vec(cocode_core::disk_name::to_bytes(segment).into_owned())
    }
    #[cfg(not(unix))]
    {
        std::ffi::OsString::from(segment)
    }
}

/// Whether a path lies in version-control metadata (a `.git` folder at any
/// depth, and the like).
fn in_metadata(rel: &Path) -> bool {
    rel.components()
        .any(|c| is_version_control_name(&c.as_os_str().to_string_lossy()))
}
