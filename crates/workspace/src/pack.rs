//! Small blobs packed together.
//!
//! A loose blob costs a file, and a file system spends a block on each
//! however small: a workspace of 80,000 small files took 323 MB of loose
//! blobs for a few megabytes of content. So blobs whose compressed form is
//! at most [`PACKED_MAX`] are appended to a pack instead
//! (`history/packs/pack-NNNNNN.pack`), and bigger ones stay loose (each can
//! then be removed on its own).
//!
//! A pack is a sequence of entries, each `CPK1`, the raw SHA-256 (32
//! bytes), the payload's length (`u32`, little-endian) and the payload (the
//! blob gzip-compressed, as a loose blob is). Entries are only ever
//! appended, each in one write, so an entry's offset never changes while
//! its pack exists. The index (hash → pack, offset, length) lives in memory
//! and is built by reading the entries' headers; a later entry of the same
//! hash wins. Crash safety is the gate's: the barrier that makes a loose
//! blob durable makes an appended entry durable, before any record names
//! it. A crash mid-append leaves a torn tail — a header or payload cut
//! short — which readers stop at and the next writer cuts off before it
//! appends. An entry whose payload does not match its hash (data lost in a
//! crash on a file system that extends the size before the data) is found
//! by the integrity checker, and a write of the same content appends a
//! good copy rather than trusting the index.
//!
//! Removing a packed blob marks it dead; [`Packs::compact`] rewrites a pack
//! whose dead bytes reach a quarter of it with only its live entries
//! (written and synced beside it, then renamed to a new number) and removes
//! the old pack afterwards — a crash between the two leaves both, whose
//! duplicates are harmless. Loose blobs written by earlier versions stay
//! where they are and are read as before.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use cocode_core::snapshot::ContentHash;

use crate::disk;

const MAGIC: &[u8; 4] = b"CPK1";
const HEADER: u64 = 4 + 32 + 4;
/// Compressed blobs up to this size are packed; bigger ones stay loose.
pub(crate) const PACKED_MAX: usize = 1 << 20;
/// A pack grows to about this size before the next one is started.
const PACK_TARGET: u64 = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Loc {
    pack: u32,
    offset: u64,
    len: u32,
}

impl Loc {
    fn bytes(self) -> u64 {
        HEADER + u64::from(self.len)
    }
}

#[derive(Debug, Default)]
struct State {
    index: HashMap<ContentHash, Loc>,
    /// Per pack: where its last complete entry ends.
    scanned: BTreeMap<u32, u64>,
    /// Entries removed since the pack was last rewritten, per pack: bytes.
    dead: BTreeMap<u32, u64>,
    /// The folder's modification time when it was last listed.
    listed: Option<std::time::SystemTime>,
}

/// The packs of one history. Every `Packs` of the same folder in a process
/// shares one index.
#[derive(Debug, Clone)]
pub(crate) struct Packs {
    dir: PathBuf,
    state: Arc<Mutex<State>>,
}

fn file_name(pack: u32) -> String {
    format!("pack-{pack:06}.pack")
}

fn number_of(name: &str) -> Option<u32> {
    name.strip_prefix("pack-")?
        .strip_suffix(".pack")?
        .parse()
        .ok()
}

fn io_other(message: String) -> io::Error {
    io::Error::other(message)
}

impl Packs {
    pub(crate) fn new(dir: PathBuf) -> Self {
        static SHARED: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<State>>>>> = OnceLock::new();
        let state = SHARED
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(dir.clone())
            .or_default()
            .clone();
        Self { dir, state }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn path(&self, pack: u32) -> PathBuf {
        self.dir.join(file_name(pack))
    }

    /// The pack numbers on disk, in order.
    fn numbers(&self) -> io::Result<Vec<u32>> {
        let mut numbers = Vec::new();
        match std::fs::read_dir(&self.dir) {
            Ok(entries) => {
                for entry in entries.flatten() {
                    if let Some(n) = number_of(&entry.file_name().to_string_lossy()) {
                        numbers.push(n);
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        numbers.sort_unstable();
        Ok(numbers)
    }

    /// Reads the headers appended since the last look (another process may
    /// have written) and forgets packs that are gone. The folder is listed
    /// again only when its modification time moved (a pack made or
    /// removed); otherwise each known pack's size is compared with what was
    /// read of it.
    fn refresh(&self, st: &mut State) -> io::Result<()> {
        let stamp = match std::fs::metadata(&self.dir) {
            Ok(m) => m.modified().ok(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let numbers = if stamp.is_some() && stamp == st.listed {
            st.scanned.keys().copied().collect()
        } else {
            st.listed = stamp;
            self.numbers()?
        };
        let mut gone: Vec<u32> = st
            .scanned
            .keys()
            .filter(|n| !numbers.contains(n))
            .copied()
            .collect();
        for pack in numbers {
            let from = st.scanned.get(&pack).copied().unwrap_or(0);
            let len = match std::fs::metadata(self.path(pack)) {
                Ok(m) => m.len(),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    gone.push(pack);
                    st.listed = None;
                    continue;
                }
                Err(e) => return Err(e),
            };
            if len < from {
                // Shorter than what was read of it: not the pack that was
                // indexed (its history was removed and begun again). Its
                // entries are read anew, so no append extends it past its
                // end.
                st.index.retain(|_, loc| loc.pack != pack);
                st.scanned.remove(&pack);
                st.dead.remove(&pack);
                st.listed = None;
            } else if len == from {
                st.scanned.insert(pack, from);
                continue;
            }
            let from = st.scanned.get(&pack).copied().unwrap_or(0);
            let mut file = match File::open(self.path(pack)) {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    gone.push(pack);
                    st.listed = None;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let end = scan(&mut file, from, len, |hash, loc| {
                let loc = Loc { pack, ..loc };
                st.index.insert(hash, loc);
            })?;
            st.scanned.insert(pack, end);
        }
        for n in &gone {
            st.scanned.remove(n);
            st.dead.remove(n);
        }
        if !gone.is_empty() {
            st.index.retain(|_, loc| !gone.contains(&loc.pack));
        }
        Ok(())
    }

    /// Looks again for `hash` when the index lacks it: by sizes and the
    /// folder's time, and when `thorough`, by listing the folder too (a
    /// pack another process made within the file system's clock tick).
    fn find(&self, st: &mut State, hash: &ContentHash, thorough: bool) -> io::Result<()> {
        if !st.index.contains_key(hash) {
            self.refresh(st)?;
            if thorough && !st.index.contains_key(hash) {
                st.listed = None;
                self.refresh(st)?;
            }
        }
        Ok(())
    }

    /// The compressed payload of `hash`, if a pack holds it.
    pub(crate) fn payload(&self, hash: &ContentHash) -> io::Result<Option<Vec<u8>>> {
        self.payload_as(hash, true)
    }

    /// [`Self::payload`] without listing the folder on a miss: for a write
    /// of the same content, which appends a copy when the index does not
    /// know it.
    pub(crate) fn cached_payload(&self, hash: &ContentHash) -> io::Result<Option<Vec<u8>>> {
        self.payload_as(hash, false)
    }

    fn payload_as(&self, hash: &ContentHash, thorough: bool) -> io::Result<Option<Vec<u8>>> {
        let mut st = self.lock();
        self.find(&mut st, hash, thorough)?;
        for _ in 0..2 {
            let Some(loc) = st.index.get(hash).copied() else {
                return Ok(None);
            };
            match File::open(self.path(loc.pack)) {
                Ok(mut file) => {
                    let mut payload = vec![0; usize::try_from(loc.len).unwrap_or(0)];
                    read_exact_at(&mut file, loc.offset + HEADER, &mut payload)?;
                    return Ok(Some(payload));
                }
                // Rewritten by another process since it was indexed.
                Err(e) if e.kind() == io::ErrorKind::NotFound => self.refresh(&mut st)?,
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// [`Self::contains`] without listing the folder on a miss.
    pub(crate) fn contains_cached(&self, hash: &ContentHash) -> bool {
        let mut st = self.lock();
        self.find(&mut st, hash, false).is_ok() && st.index.contains_key(hash)
    }

    pub(crate) fn contains(&self, hash: &ContentHash) -> bool {
        let mut st = self.lock();
        self.find(&mut st, hash, true).is_ok() && st.index.contains_key(hash)
    }

    /// Appends an entry and returns the pack's path (for the barrier).
    pub(crate) fn append(&self, hash: &ContentHash, payload: &[u8]) -> io::Result<PathBuf> {
        let len = u32::try_from(payload.len())
            .map_err(|_| io_other(format!("a packed blob of {} bytes", payload.len())))?;
        let mut st = self.lock();
        self.refresh(&mut st)?;
        let (pack, end) = match st.scanned.iter().next_back() {
            Some((n, end)) if *end < PACK_TARGET => (*n, *end),
            Some((n, _)) => (n + 1, 0),
            None => (1, 0),
        };
        let path = self.path(pack);
        let mut entry = Vec::with_capacity(payload.len() + 40);
        entry.extend_from_slice(MAGIC);
        entry.extend_from_slice(hash.as_bytes());
        entry.extend_from_slice(&len.to_le_bytes());
        entry.extend_from_slice(payload);
        if end == 0 {
            disk::create_dir_all(&self.dir)?;
        }
        if fail::has_failpoints() {
            // For the crash tests only: half the entry is on disk when the
            // point is reached (a crash mid-append).
            disk::append_at(&path, end, &entry[..entry.len() / 2])?;
            fail::fail_point!("pack::mid_entry");
        }
        // A torn tail of an earlier crash is cut off first.
        disk::append_at(&path, end, &entry)?;
        let loc = Loc {
            pack,
            offset: end,
            len,
        };
        st.scanned.insert(pack, end + loc.bytes());
        st.index.insert(*hash, loc);
        Ok(path)
    }

    /// Every packed hash.
    pub(crate) fn hashes(&self) -> io::Result<Vec<ContentHash>> {
        let mut st = self.lock();
        st.listed = None;
        self.refresh(&mut st)?;
        Ok(st.index.keys().copied().collect())
    }

    /// The bytes an entry takes in its pack.
    pub(crate) fn size(&self, hash: &ContentHash) -> Option<u64> {
        self.lock().index.get(hash).map(|loc| loc.bytes())
    }

    /// Marks a packed blob removed (its bytes go at the next compaction).
    /// `false` when no pack holds it.
    pub(crate) fn remove(&self, hash: &ContentHash) -> io::Result<bool> {
        let mut st = self.lock();
        self.find(&mut st, hash, false)?;
        let Some(loc) = st.index.remove(hash) else {
            return Ok(false);
        };
        *st.dead.entry(loc.pack).or_default() += loc.bytes();
        Ok(true)
    }

    /// Rewrites every pack whose removed entries reach a quarter of it with
    /// its live entries only; a pack with nothing live is removed. Returns
    /// the bytes freed.
    pub(crate) fn compact(&self) -> io::Result<u64> {
        let mut st = self.lock();
        self.refresh(&mut st)?;
        let mut freed = 0;
        let candidates: Vec<(u32, u64)> = st.dead.iter().map(|(n, d)| (*n, *d)).collect();
        for (pack, dead) in candidates {
            let size = st.scanned.get(&pack).copied().unwrap_or(0);
            if dead == 0 || dead.saturating_mul(4) < size {
                continue;
            }
            let mut live: Vec<(ContentHash, Loc)> = st
                .index
                .iter()
                .filter(|(_, loc)| loc.pack == pack)
                .map(|(h, loc)| (*h, *loc))
                .collect();
            live.sort_by_key(|(_, loc)| loc.offset);
            let old = self.path(pack);
            if live.is_empty() {
                disk::remove_file(&old)?;
                st.scanned.remove(&pack);
            } else {
                let next = st.scanned.keys().next_back().map_or(1, |n| n + 1);
                let mut file = File::open(&old)?;
                let mut bytes = Vec::new();
                let mut moved = Vec::with_capacity(live.len());
                for (hash, loc) in &live {
                    let mut entry = vec![0; usize::try_from(loc.bytes()).unwrap_or(0)];
                    read_exact_at(&mut file, loc.offset, &mut entry)?;
                    let offset = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
                    bytes.extend_from_slice(&entry);
                    moved.push((
                        *hash,
                        Loc {
                            pack: next,
                            offset,
                            len: loc.len,
                        },
                    ));
                }
                // The new pack is whole and durable before the old goes.
                disk::write_atomic_synced(&self.path(next), &bytes)?;
                fail::fail_point!("pack::after_compact_write");
                disk::remove_file(&old)?;
                st.scanned.remove(&pack);
                st.scanned
                    .insert(next, u64::try_from(bytes.len()).unwrap_or(u64::MAX));
                for (hash, loc) in moved {
                    st.index.insert(hash, loc);
                }
            }
            st.dead.remove(&pack);
            freed += dead;
        }
        Ok(freed)
    }
}

/// Reads entry headers from `from` to `len`, calling `found` for each whole
/// entry (its pack number left 0); returns where the last whole entry ends.
fn scan(
    file: &mut File,
    from: u64,
    len: u64,
    mut found: impl FnMut(ContentHash, Loc),
) -> io::Result<u64> {
    use std::io::{Seek as _, SeekFrom};
    let mut reader = io::BufReader::with_capacity(1 << 16, &mut *file);
    reader.seek(SeekFrom::Start(from))?;
    let mut at = from;
    let mut header = [0u8; 40];
    while at + HEADER <= len {
        if reader.read_exact(&mut header).is_err() || &header[..4] != MAGIC {
            break;
        }
        let mut raw = [0u8; 32];
        raw.copy_from_slice(&header[4..36]);
        let payload = u32::from_le_bytes([header[36], header[37], header[38], header[39]]);
        let next = at + HEADER + u64::from(payload);
        if next > len {
            break;
        }
        found(
            ContentHash::from_bytes(raw),
            Loc {
                pack: 0,
                offset: at,
                len: payload,
            },
        );
        reader.seek_relative(i64::from(payload))?;
        at = next;
    }
    Ok(at)
}

fn read_exact_at(file: &mut File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt as _;
        file.read_exact_at(buf, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Seek as _, SeekFrom};
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }
}

/// The packs folder's files that are not packs (for the integrity report).
pub(crate) fn strays(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map_or_else(
        |_| Vec::new(),
        |entries| {
            entries
                .flatten()
                .filter(|e| number_of(&e.file_name().to_string_lossy()).is_none())
                .map(|e| e.path())
                .collect()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(n: u8) -> ContentHash {
        ContentHash::of(&[n])
    }

    #[test]
    fn entries_are_found_again_by_a_fresh_reader_and_a_torn_tail_is_cut_before_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let packs = Packs::new(dir.path().join("a"));
        let path = packs.append(&hash(1), b"one").unwrap();
        packs.append(&hash(2), b"two!").unwrap();
        // A crash mid-append: half an entry at the end.
        let good = std::fs::metadata(&path).unwrap().len();
        let mut torn = MAGIC.to_vec();
        torn.extend_from_slice(hash(3).as_bytes());
        let mut cut = std::fs::read(&path).unwrap();
        cut.extend_from_slice(&torn);
        disk::append_at(&path, 0, &cut).unwrap();
        // Another process: a state of its own.
        let other = Packs {
            dir: dir.path().join("a"),
            state: Arc::default(),
        };
        assert_eq!(other.payload(&hash(2)).unwrap().unwrap(), b"two!");
        assert_eq!(other.payload(&hash(1)).unwrap().unwrap(), b"one");
        assert!(!other.contains(&hash(3)));
        other.append(&hash(4), b"four").unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            good + HEADER + 4,
            "the torn tail was cut off"
        );
        assert_eq!(packs.payload(&hash(4)).unwrap().unwrap(), b"four");
        let mut all = other.hashes().unwrap();
        all.sort();
        let mut expected = vec![hash(1), hash(2), hash(4)];
        expected.sort();
        assert_eq!(all, expected);
    }

    #[test]
    fn a_pack_begun_again_under_the_same_name_is_read_anew() {
        let dir = tempfile::tempdir().unwrap();
        let packs = Packs::new(dir.path().join("c"));
        packs.append(&hash(1), &[1; 64]).unwrap();
        packs.append(&hash(2), &[2; 64]).unwrap();
        // The history is removed and begun again by another process.
        disk::remove_file(&packs.path(1)).unwrap();
        let other = Packs {
            dir: dir.path().join("c"),
            state: Arc::default(),
        };
        let path = other.append(&hash(3), b"three").unwrap();
        assert_eq!(packs.payload(&hash(3)).unwrap().unwrap(), b"three");
        assert_eq!(packs.payload(&hash(1)).unwrap(), None);
        packs.append(&hash(4), b"four").unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            2 * HEADER + 5 + 4,
            "appended at the real end, not past it"
        );
        let fresh = Packs {
            dir: dir.path().join("c"),
            state: Arc::default(),
        };
        assert_eq!(fresh.payload(&hash(4)).unwrap().unwrap(), b"four");
    }

    #[test]
    fn compaction_keeps_live_entries_and_frees_the_dead() {
        let dir = tempfile::tempdir().unwrap();
        let packs = Packs::new(dir.path().join("b"));
        for n in 0..8u8 {
            packs.append(&hash(n), &[n; 100]).unwrap();
        }
        for n in 0..6u8 {
            assert!(packs.remove(&hash(n)).unwrap());
        }
        assert!(!packs.remove(&hash(99)).unwrap());
        assert_eq!(packs.compact().unwrap(), 6 * (HEADER + 100));
        let names: Vec<String> = std::fs::read_dir(dir.path().join("b"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["pack-000002.pack".to_owned()]);
        let fresh = Packs {
            dir: dir.path().join("b"),
            state: Arc::default(),
        };
        for n in 0..8u8 {
            let got = fresh.payload(&hash(n)).unwrap();
            assert_eq!(got, (n >= 6).then(|| vec![n; 100]), "{n}");
        }
        // Everything dead: the pack goes.
        for n in 6..8u8 {
            packs.remove(&hash(n)).unwrap();
        }
        packs.compact().unwrap();
        assert_eq!(std::fs::read_dir(dir.path().join("b")).unwrap().count(), 0);
    }
}
