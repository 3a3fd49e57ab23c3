//! The observed-change sweep's stat cache.
//!
//! Commands run for an agent and ACP agents that write files themselves
//! bypass the gate. Before a command or a prompt turn the gate refreshes
//! this cache (path → size, mtime, ctime, inode, hash), storing a base blob
//! of every file it hashes; afterwards it scans again and records the
//! difference as `origin: observed` snapshots.
//!
//! Correctness never depends on file-system events: every scan stats every
//! file (gitignore-aware, `.git/` and `.cocode/` excluded; the scan after a
//! command judges by the ignore rules kept before it, see
//! [`IgnoreRules`]). A file is hashed again when its stat changed (the
//! change time included, which no program can set back), when its mtime or
//! ctime is not older than the scan that recorded it (a write within the
//! same clock tick can keep size and mtime — git's "racy clean" rule), or
//! when the watcher saw it change.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use cocode_core::gate::StoreError;
use cocode_core::path::{
    COCODE_DIR, CaseSensitivity, NormalizeOptions, NormalizedPath, PathStyle, UnicodeSensitivity,
    normalize,
};
use cocode_core::snapshot::{ContentHash, ContentHasher, PathTransition, Unkept};

use crate::ignore_rules::{KeptRules, Matchers};

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    stat: Stat,
    hash: ContentHash,
    /// mtime or ctime not older than the scan that recorded it: hash again
    /// next time.
    racy: bool,
    /// History holds the content (false: above the ceiling, hash only).
    kept: bool,
}

/// One change a sweep found, and which of its sides are hash only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedChange {
    pub transition: PathTransition,
    pub unkept: Unkept,
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

/// Paths a file-system watcher saw change since the last scan.
pub type DirtySet = Arc<Mutex<BTreeSet<PathBuf>>>;

/// path → (size, mtime, ctime, inode, hash) of the workspace's tracked files.
#[derive(Debug, Clone, Default)]
pub struct StatCache {
    entries: BTreeMap<NormalizedPath, Entry>,
    populated: bool,
    /// The ignore rules the last scan by the rules on disk read.
    kept: KeptRules,
    options: Option<NormalizeOptions>,
    dirty: Option<DirtySet>,
}

/// What a file's metadata says of its content. The change time is part of
/// it: any write sets it to the file system's "now", and no program can
/// set it back, so a rewrite that restores the size and the mtime (`touch
/// -d`) is still seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    len: u64,
    mtime: Option<SystemTime>,
    /// Seconds and nanoseconds since the epoch (Unix only).
    ctime: Option<(i64, i64)>,
    ino: u64,
}

impl Stat {
    fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        let (ctime, ino) = {
            use std::os::unix::fs::MetadataExt as _;
            (Some((meta.ctime(), meta.ctime_nsec())), meta.ino())
        };
        #[cfg(not(unix))]
        let (ctime, ino) = (None, 0);
        Self {
            len: meta.len(),
            mtime: meta.modified().ok(),
            ctime,
            ino,
        }
    }

    /// Whether a write within the same clock tick as `started` could leave
    /// this stat as it is (git's "racy clean" rule): hash it again.
    fn racy_since(&self, started: SystemTime) -> bool {
        let ctime_racy = self.ctime.is_some_and(|(secs, nanos)| {
            let since = started
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default();
            let started = (
                i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
                i64::from(since.subsec_nanos()),
            );
            (secs, nanos) >= started
        });
        ctime_racy || self.mtime.is_none_or(|m| m >= started)
    }
}

impl StatCache {
    /// Uses `options` to name paths (the workspace's measured case rule).
    pub fn set_options(&mut self, options: NormalizeOptions) {
        self.options = Some(options);
    }

    /// Lets a watcher force re-hashing of the paths it reports.
    pub fn set_dirty_source(&mut self, dirty: DirtySet) {
        self.dirty = Some(dirty);
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

    fn take_dirty(&self, root: &Path) -> BTreeSet<NormalizedPath> {
        let Some(dirty) = &self.dirty else {
            return BTreeSet::new();
        };
        let taken = std::mem::take(
            &mut *dirty
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        taken
            .iter()
            .filter_map(|p| p.strip_prefix(root).ok())
            .filter_map(|rel| normalize(&rel.to_string_lossy(), self.options()).ok())
            .collect()
    }

    /// Brings the cache up to date with the tree, calling `store_blob` with
    /// the content of every file it hashes. `rules` says which ignore rules
    /// decide what the scan looks at.
    pub fn scan(
        &mut self,
        root: &Path,
        limits: &SweepLimits,
        rules: IgnoreRules,
        store_blob: &mut dyn FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<SweepStats, StoreError> {
        let started = SystemTime::now();
        let dirty = self.take_dirty(root);
        let mut stats = SweepStats::default();
        let mut next = BTreeMap::new();
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
        let mut folders = vec![PathBuf::new()];
        while let Some(rel) = folders.pop() {
            if let Some(kept) = kept.as_mut() {
                kept.keep_folder(&rel, &mut matchers);
            }
            let Ok(listing) = std::fs::read_dir(root.join(&rel)) else {
                continue;
            };
            for entry in listing.flatten() {
                let name = entry.file_name();
                if rel.as_os_str().is_empty()
                    && (name.to_string_lossy().eq_ignore_ascii_case(COCODE_DIR) || name == ".git")
                {
                    continue;
                }
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let full = entry.path();
                if kind.is_dir() {
                    if !matchers.ignores(&full, true) {
                        folders.push(rel.join(&name));
                    }
                    continue;
                }
                if !kind.is_file() || matchers.ignores(&full, false) {
                    continue;
                }
                let Ok(path) = normalize(&rel.join(&name).to_string_lossy(), self.options()) else {
                    continue;
                };
                let Ok(meta) = full.symlink_metadata() else {
                    continue;
                };
                // The count limit holds new files back, never tracked
                // ones: a flood of new files hides no change.
                if next.len() >= limits.max_files && !self.entries.contains_key(&path) {
                    stats.truncated = true;
                    continue;
                }
                stats.files += 1;
                let seen = Seen {
                    full: &full,
                    meta: &meta,
                    dirty: dirty.contains(&path),
                    started,
                };
                if let Some(entry) = self.look_at(&path, &seen, limits, &mut stats, store_blob)? {
                    next.insert(path, entry);
                }
            }
        }
        self.keep_unmet(root, limits, started, &mut next, &mut stats, store_blob)?;
        self.entries = next;
        if let Some(kept) = kept {
            self.kept = kept;
        }
        self.populated = true;
        Ok(stats)
    }

    /// A tracked file the walk did not meet is not gone because of that (a
    /// folder of it hidden by a rule the person added since, the count
    /// limit): whatever still exists keeps being tracked.
    fn keep_unmet(
        &self,
        root: &Path,
        limits: &SweepLimits,
        started: SystemTime,
        next: &mut BTreeMap<NormalizedPath, Entry>,
        stats: &mut SweepStats,
        store_blob: &mut dyn FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        for (path, old) in &self.entries {
            if next.contains_key(path) {
                continue;
            }
            let full = path.segments().fold(root.to_path_buf(), |p, s| p.join(s));
            let Ok(meta) = full.symlink_metadata() else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let seen = Seen {
                full: &full,
                meta: &meta,
                // Hashed again whatever its stat says: the walk missed it.
                dirty: true,
                started,
            };
            let entry = self.look_at(path, &seen, limits, stats, store_blob)?;
            // Unreadable now: it keeps its last state, never a deletion.
            next.insert(path.clone(), entry.unwrap_or(*old));
        }
        Ok(())
    }

    /// The entry of a file the scan met: the old one when its stat says
    /// it did not change, else its new hash. Content under the ceiling is
    /// handed to `store_blob` when it is new; above it, the file is hashed
    /// as it is read and nothing is kept. `None`: it could not be read.
    fn look_at(
        &self,
        path: &NormalizedPath,
        seen: &Seen<'_>,
        limits: &SweepLimits,
        stats: &mut SweepStats,
        store_blob: &mut dyn FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<Option<Entry>, StoreError> {
        let stat = Stat::of(seen.meta);
        let kept = stat.len <= limits.max_file_bytes;
        if !kept {
            stats.too_large += 1;
        }
        if let Some(old) = self.entries.get(path)
            && !old.racy
            && !seen.dirty
            && old.stat == stat
        {
            return Ok(Some(*old));
        }
        let hash = if kept {
            let Some(bytes) = read_regular(seen.full) else {
                return Ok(None);
            };
            let hash = ContentHash::of(&bytes);
            if self.entries.get(path).map(|e| (e.hash, e.kept)) != Some((hash, true)) {
                store_blob(&bytes)?;
            }
            hash
        } else {
            let Some(hash) = hash_regular(seen.full) else {
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
        }))
    }

    /// Notes a path the gate has just written with content `hash` (`None`:
    /// removed) without reading it back. The entry stays racy, so the next
    /// sweep hashes the file again: a change made right after the gate's
    /// is still seen.
    pub fn record(&mut self, root: &Path, path: &NormalizedPath, hash: Option<ContentHash>) {
        if self.populated {
            let full = path.segments().fold(root.to_path_buf(), |p, s| p.join(s));
            self.put(path, full.symlink_metadata().ok(), hash);
        }
    }

    /// Re-reads one path after a person saved it, so the next sweep does
    /// not attribute that change to a task.
    pub fn refresh(&mut self, root: &Path, path: &NormalizedPath) {
        if self.populated {
            let full = path.segments().fold(root.to_path_buf(), |p, s| p.join(s));
            let hash = read_regular(&full).map(|b| ContentHash::of(&b));
            self.put(path, full.symlink_metadata().ok(), hash);
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
        let full = path.segments().fold(root.to_path_buf(), |p, s| p.join(s));
        let mut pending = vec![(full, path.as_str().to_owned())];
        while let Some((dir, rel)) = pending.pop() {
            let Ok(meta) = dir.symlink_metadata() else {
                continue;
            };
            if meta.is_file() {
                if let Ok(p) = normalize(&rel, self.options()) {
                    self.refresh(root, &p);
                }
            } else if meta.is_dir() {
                let Ok(read) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in read.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    pending.push((entry.path(), format!("{rel}/{name}")));
                }
            }
        }
    }

    /// A racy entry for a regular file with `hash`; anything else drops it.
    fn put(
        &mut self,
        path: &NormalizedPath,
        meta: Option<std::fs::Metadata>,
        hash: Option<ContentHash>,
    ) {
        match (meta, hash) {
            (Some(meta), Some(hash)) if meta.is_file() => {
                self.entries.insert(
                    path.clone(),
                    Entry {
                        stat: Stat::of(&meta),
                        hash,
                        racy: true,
                        kept: true,
                    },
                );
            }
            _ => {
                self.entries.remove(path);
            }
        }
    }

    /// The entries as bytes, for the next process ([`Self::restore`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = CACHE_MAGIC.to_vec();
        for (path, e) in &self.entries {
            let name = path.as_str().as_bytes();
            out.extend(u32::try_from(name.len()).unwrap_or(u32::MAX).to_le_bytes());
            out.extend(name);
            out.extend(e.stat.len.to_le_bytes());
            let mtime = e
                .stat
                .mtime
                .and_then(|m| m.duration_since(SystemTime::UNIX_EPOCH).ok());
            out.push(u8::from(mtime.is_some()));
            let mtime = mtime.unwrap_or_default();
            out.extend(mtime.as_secs().to_le_bytes());
            out.extend(mtime.subsec_nanos().to_le_bytes());
            out.push(u8::from(e.stat.ctime.is_some()));
            let (secs, nanos) = e.stat.ctime.unwrap_or_default();
            out.extend(secs.to_le_bytes());
            out.extend(nanos.to_le_bytes());
            out.extend(e.stat.ino.to_le_bytes());
            out.extend(e.hash.as_bytes());
            out.push(u8::from(e.racy) | (u8::from(e.kept) << 1));
        }
        out
    }

    /// Takes entries a process before this one kept ([`Self::to_bytes`]),
    /// each only when `has_blob` says its content is still in history (a
    /// change of the file must find its base). A file whose stat still
    /// matches is then not read again. Nothing else is taken over: the
    /// first scan reads the ignore rules on disk as if the cache were new.
    /// Returns how many entries were taken; damaged bytes give none.
    pub fn restore(&mut self, bytes: &[u8], has_blob: &dyn Fn(&ContentHash) -> bool) -> usize {
        let Some(mut rest) = bytes.strip_prefix(CACHE_MAGIC) else {
            return 0;
        };
        let mut taken = BTreeMap::new();
        let options = self.options();
        while !rest.is_empty() {
            let Some((path, entry, tail)) = decode_entry(rest) else {
                return 0;
            };
            rest = tail;
            let Ok(path) = normalize(path, options) else {
                continue;
            };
            if has_blob(&entry.hash) || !entry.kept {
                taken.insert(path, entry);
            }
        }
        let n = taken.len();
        self.entries = taken;
        n
    }

    /// What changed from `self` to `after`, by path.
    pub fn changes_to(&self, after: &StatCache) -> Vec<ObservedChange> {
        let paths: BTreeSet<&NormalizedPath> =
            self.entries.keys().chain(after.entries.keys()).collect();
        paths
            .into_iter()
            .filter_map(|p| {
                let before = self.entries.get(p);
                let now = after.entries.get(p);
                (before.map(|e| e.hash) != now.map(|e| e.hash)).then(|| ObservedChange {
                    transition: PathTransition {
                        path: p.clone(),
                        before: before.map(|e| e.hash),
                        after: now.map(|e| e.hash),
                    },
                    unkept: Unkept {
                        base: before.is_some_and(|e| !e.kept),
                        result: now.is_some_and(|e| !e.kept),
                    },
                })
            })
            .collect()
    }
}

const CACHE_MAGIC: &[u8] = b"cocode stat cache 1\n";

/// One entry of [`StatCache::to_bytes`] and what follows it.
fn decode_entry(bytes: &[u8]) -> Option<(&str, Entry, &[u8])> {
    fn take<const N: usize>(b: &mut &[u8]) -> Option<[u8; N]> {
        let (head, tail) = b.split_first_chunk::<N>()?;
        *b = tail;
        Some(*head)
    }
    let mut b = bytes;
    let name_len = usize::try_from(u32::from_le_bytes(take(&mut b)?)).ok()?;
    let (name, tail) = b.split_at_checked(name_len)?;
    b = tail;
    let name = std::str::from_utf8(name).ok()?;
    let len = u64::from_le_bytes(take(&mut b)?);
    let mtime_known = take::<1>(&mut b)?[0] == 1;
    let secs = u64::from_le_bytes(take(&mut b)?);
    let nanos = u32::from_le_bytes(take(&mut b)?);
    let mtime = mtime_known
        .then(|| SystemTime::UNIX_EPOCH + std::time::Duration::new(secs, nanos.min(999_999_999)));
    let ctime_known = take::<1>(&mut b)?[0] == 1;
    let csecs = i64::from_le_bytes(take(&mut b)?);
    let cnanos = i64::from_le_bytes(take(&mut b)?);
    let ino = u64::from_le_bytes(take(&mut b)?);
    let hash = ContentHash::from_bytes(take(&mut b)?);
    let flags = take::<1>(&mut b)?[0];
    let entry = Entry {
        stat: Stat {
            len,
            mtime,
            ctime: ctime_known.then_some((csecs, cnanos)),
            ino,
        },
        hash,
        racy: flags & 1 != 0,
        kept: flags & 2 != 0,
    };
    Some((name, entry, b))
}

/// A file as the walk met it.
struct Seen<'a> {
    full: &'a Path,
    meta: &'a std::fs::Metadata,
    /// The watcher saw it change (or the walk missed it): hash it again.
    dirty: bool,
    started: SystemTime,
}

/// A regular file's hash, read piece by piece (for content too large to
/// hold in memory); nothing for anything else.
fn hash_regular(path: &Path) -> Option<ContentHash> {
    use std::io::Read as _;
    let mut file = crate::disk::open_regular_file(path).ok()??;
    let mut hasher = ContentHasher::new();
    let mut buffer = vec![0; 1 << 20];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => return Some(hasher.finish()),
            Ok(n) => hasher.update(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// Watches the workspace and marks changed paths dirty for the next scan.
pub struct SweepWatcher {
    _watcher: notify::RecommendedWatcher,
    dirty: DirtySet,
}

impl std::fmt::Debug for SweepWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SweepWatcher").finish_non_exhaustive()
    }
}

impl SweepWatcher {
    /// Starts a recursive watch of `root`; events under `.cocode/` are ignored.
    pub fn start(root: &Path) -> notify::Result<Self> {
        use notify::Watcher as _;
        let dirty: DirtySet = Arc::default();
        let sink = Arc::clone(&dirty);
        let cocode = root.join(COCODE_DIR);
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if let Ok(event) = event {
                    let mut set = sink
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    set.extend(event.paths.into_iter().filter(|p| !p.starts_with(&cocode)));
                }
            })?;
        watcher.watch(root, notify::RecursiveMode::Recursive)?;
        Ok(Self {
            _watcher: watcher,
            dirty,
        })
    }

    pub fn dirty(&self) -> DirtySet {
        Arc::clone(&self.dirty)
    }
}
