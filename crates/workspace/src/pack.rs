//! Small blobs packed together.
//!
//! A loose blob costs a file, and a file system spends a block on each
//! however small: a workspace of 80,000 small files took 323 MB of loose
//! blobs for a few megabytes of content. So blobs whose compressed form is
//! at most [`PACKED_MAX`] are appended to a pack instead
//! (`history/packs/pack-NNNNNN.pack`), and bigger ones stay loose (each can
//! then be removed on its own).
//!
//! A pack is a sequence of entries, each a kind byte, the raw SHA-256 (32
//! bytes), the payload's length (LEB128) and the payload: the blob
//! raw-deflated ([`Coding::Deflate`]) or, when deflate would not make it
//! smaller, as it is ([`Coding::Stored`]). Entries written by earlier
//! versions (`CPK1`, the hash, a `u32` little-endian length and the blob
//! gzip-compressed as a loose blob is, [`Coding::Gzip`]) are read as
//! before, in the same pack as new ones. Entries are only ever
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

/// The first bytes of an entry written by earlier versions.
const MAGIC_V1: &[u8; 4] = b"CPK1";
const HEADER_V1: u8 = 4 + 32 + 4;
/// Kind bytes of today's entries (neither is `C`, the first of `CPK1`).
const KIND_DEFLATE: u8 = 0xD1;
const KIND_STORED: u8 = 0xD0;
/// Compressed blobs up to this size are packed; bigger ones stay loose.
pub(crate) const PACKED_MAX: usize = 1 << 20;
/// A pack grows to about this size before the next one is started.
const PACK_TARGET: u64 = 64 << 20;

/// How an entry's payload holds its blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    /// Raw deflate.
    Deflate,
    /// The blob itself.
    Stored,
    /// Gzip, as loose blobs are (entries of earlier versions).
    Gzip,
}

/// A packed blob as its entry holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Packed {
    pub(crate) coding: Coding,
    pub(crate) bytes: Vec<u8>,
}

impl Packed {
    /// The blob's content (not yet checked against its hash).
    pub(crate) fn unpack(self) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        match self.coding {
            Coding::Stored => return Ok(self.bytes),
            Coding::Deflate => {
                flate2::read::DeflateDecoder::new(&self.bytes[..]).read_to_end(&mut out)?;
            }
            Coding::Gzip => {
                flate2::read::GzDecoder::new(&self.bytes[..]).read_to_end(&mut out)?;
            }
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Loc {
    pack: u32,
    offset: u64,
    /// The header's bytes: the payload begins at `offset + header`.
    header: u8,
    len: u32,
    coding: Coding,
}

impl Loc {
    fn bytes(self) -> u64 {
        u64::from(self.header) + u64::from(self.len)
    }
}

/// An entry's header: the kind, the hash and the payload's length.
fn header(hash: &ContentHash, coding: Coding, len: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(usize::from(HEADER_V1));
    match coding {
        Coding::Gzip => {
            out.extend_from_slice(MAGIC_V1);
            out.extend_from_slice(hash.as_bytes());
            out.extend_from_slice(&len.to_le_bytes());
        }
        Coding::Deflate | Coding::Stored => {
            out.push(if coding == Coding::Deflate {
                KIND_DEFLATE
            } else {
                KIND_STORED
            });
            out.extend_from_slice(hash.as_bytes());
            crate::varint::put(&mut out, u128::from(len));
        }
    }
    out
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

    /// The entry of `hash` as its pack holds it, if a pack holds it.
    pub(crate) fn payload(&self, hash: &ContentHash) -> io::Result<Option<Packed>> {
        self.payload_by(hash, Some(true))
    }

    /// [`Self::payload`] without listing the folder on a miss: for a write
    /// of the same content, which appends a copy when the index does not
    /// know it.
    pub(crate) fn cached_payload(&self, hash: &ContentHash) -> io::Result<Option<Packed>> {
        self.payload_by(hash, Some(false))
    }

    /// [`Self::payload`] by the index as it stands once the packs were
    /// read: no look at them on a miss (a blob another process packed
    /// since is missed).
    pub(crate) fn indexed_payload(&self, hash: &ContentHash) -> io::Result<Option<Packed>> {
        self.payload_by(hash, None)
    }

    /// The entry of `hash`; `look` says whether a miss refreshes the index
    /// (and, `Some(true)`, lists the folder again).
    fn payload_by(&self, hash: &ContentHash, look: Option<bool>) -> io::Result<Option<Packed>> {
        let mut st = self.lock();
        match look {
            Some(thorough) => self.find(&mut st, hash, thorough)?,
            None if st.listed.is_none() => self.refresh(&mut st)?,
            None => {}
        }
        for _ in 0..2 {
            let Some(loc) = st.index.get(hash).copied() else {
                return Ok(None);
            };
            match File::open(self.path(loc.pack)) {
                Ok(mut file) => {
                    let mut bytes = vec![0; usize::try_from(loc.len).unwrap_or(0)];
                    read_exact_at(&mut file, loc.offset + u64::from(loc.header), &mut bytes)?;
                    return Ok(Some(Packed {
                        coding: loc.coding,
                        bytes,
                    }));
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
    pub(crate) fn append(
        &self,
        hash: &ContentHash,
        coding: Coding,
        payload: &[u8],
    ) -> io::Result<PathBuf> {
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
        let mut entry = header(hash, coding, len);
        let header = u8::try_from(entry.len()).unwrap_or(u8::MAX);
        entry.extend_from_slice(payload);
        if end == 0 {
            disk::create_dir_all(&self.dir)?;
        }
        if fail::has_failpoints()
            && fail::list()
                .iter()
                .any(|(name, _)| name == "pack::mid_entry")
        {
            // For the crash tests only: half the entry is on disk when the
            // point is reached (a crash mid-append). Only where that point
            // is set: builds with crash points compiled in (the benches
            // among them) otherwise append as the product does.
            disk::append_at(&path, end, &entry[..entry.len() / 2])?;
            fail::fail_point!("pack::mid_entry");
        }
        // A torn tail of an earlier crash is cut off first.
        disk::append_at(&path, end, &entry)?;
        let loc = Loc {
            pack,
            offset: end,
            header,
            len,
            coding,
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

    /// Every packed hash by its first `N` bytes; `None` where two share
    /// them.
    pub(crate) fn by_prefix<const N: usize>(
        &self,
    ) -> io::Result<HashMap<[u8; N], Option<ContentHash>>> {
        let mut st = self.lock();
        self.refresh(&mut st)?;
        let mut out: HashMap<[u8; N], Option<ContentHash>> = HashMap::with_capacity(st.index.len());
        for hash in st.index.keys() {
            let Some(prefix) = hash.as_bytes().first_chunk::<N>() else {
                continue;
            };
            out.entry(*prefix)
                .and_modify(|seen| *seen = None)
                .or_insert(Some(*hash));
        }
        Ok(out)
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
                            ..*loc
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
/// A header that is cut short or of no known kind ends the scan (a torn
/// tail).
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
    while at < len {
        let Some((hash, header, payload, coding)) = read_header(&mut reader) else {
            break;
        };
        let next = at + u64::from(header) + u64::from(payload);
        if next > len {
            break;
        }
        found(
            hash,
            Loc {
                pack: 0,
                offset: at,
                header,
                len: payload,
                coding,
            },
        );
        reader.seek_relative(i64::from(payload))?;
        at = next;
    }
    Ok(at)
}

/// One entry's header: the hash, the header's length, the payload's length
/// and its coding; `None` when cut short or of no known kind.
fn read_header(reader: &mut impl io::Read) -> Option<(ContentHash, u8, u32, Coding)> {
    let mut kind = [0u8; 1];
    reader.read_exact(&mut kind).ok()?;
    let mut raw = [0u8; 32];
    match kind[0] {
        b'C' => {
            let mut rest = [0u8; 3];
            reader.read_exact(&mut rest).ok()?;
            if rest != MAGIC_V1[1..] {
                return None;
            }
            reader.read_exact(&mut raw).ok()?;
            let mut len = [0u8; 4];
            reader.read_exact(&mut len).ok()?;
            Some((
                ContentHash::from_bytes(raw),
                HEADER_V1,
                u32::from_le_bytes(len),
                Coding::Gzip,
            ))
        }
        KIND_DEFLATE | KIND_STORED => {
            reader.read_exact(&mut raw).ok()?;
            let mut len: u32 = 0;
            let mut header = 1 + 32;
            for shift in [0, 7, 14, 21, 28] {
                let mut byte = [0u8; 1];
                reader.read_exact(&mut byte).ok()?;
                header += 1;
                let part = u32::from(byte[0] & 0x7f);
                if shift == 28 && part > 0x0f {
                    return None;
                }
                len |= part << shift;
                if byte[0] & 0x80 == 0 {
                    let coding = if kind[0] == KIND_DEFLATE {
                        Coding::Deflate
                    } else {
                        Coding::Stored
                    };
                    return Some((ContentHash::from_bytes(raw), header, len, coding));
                }
            }
            None
        }
        _ => None,
    }
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

    /// The header of a small entry of today: kind, hash, one length byte.
    const SMALL: u64 = 1 + 32 + 1;

    fn stored(bytes: &[u8]) -> Packed {
        Packed {
            coding: Coding::Stored,
            bytes: bytes.to_vec(),
        }
    }

    fn fresh(dir: &Path) -> Packs {
        Packs {
            dir: dir.to_path_buf(),
            state: Arc::default(),
        }
    }

    #[test]
    fn entries_are_found_again_by_a_fresh_reader_and_a_torn_tail_is_cut_before_the_next() {
        for torn in [
            // The header cut inside the hash.
            [&[KIND_DEFLATE][..], &hash(3).as_bytes()[..20]].concat(),
            // The length's continuation byte is the last byte written.
            [&[KIND_STORED][..], hash(3).as_bytes(), &[0x80]].concat(),
            // A whole header whose payload is cut short.
            [&[KIND_STORED][..], hash(3).as_bytes(), &[9], b"abc"].concat(),
            // An old entry's header cut short.
            [&MAGIC_V1[..], &hash(3).as_bytes()[..8]].concat(),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let packs = Packs::new(dir.path().join("a"));
            let path = packs.append(&hash(1), Coding::Stored, b"one").unwrap();
            packs.append(&hash(2), Coding::Deflate, b"two!").unwrap();
            // A crash mid-append: part of an entry at the end.
            let good = std::fs::metadata(&path).unwrap().len();
            let mut cut = std::fs::read(&path).unwrap();
            cut.extend_from_slice(&torn);
            disk::append_at(&path, 0, &cut).unwrap();
            // Another process: a state of its own.
            let other = fresh(&dir.path().join("a"));
            assert_eq!(
                other.payload(&hash(2)).unwrap().unwrap(),
                Packed {
                    coding: Coding::Deflate,
                    bytes: b"two!".to_vec()
                }
            );
            assert_eq!(other.payload(&hash(1)).unwrap().unwrap(), stored(b"one"));
            assert!(!other.contains(&hash(3)));
            other.append(&hash(4), Coding::Stored, b"four").unwrap();
            assert_eq!(
                std::fs::metadata(&path).unwrap().len(),
                good + SMALL + 4,
                "the torn tail was cut off"
            );
            assert_eq!(packs.payload(&hash(4)).unwrap().unwrap(), stored(b"four"));
            let mut all = other.hashes().unwrap();
            all.sort();
            let mut expected = vec![hash(1), hash(2), hash(4)];
            expected.sort();
            assert_eq!(all, expected);
        }
    }

    #[test]
    fn lengths_of_every_size_are_read_back_as_written() {
        for len in [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 20, u32::MAX] {
            for coding in [Coding::Deflate, Coding::Stored, Coding::Gzip] {
                let bytes = header(&hash(7), coding, len);
                let read = read_header(&mut &bytes[..]).unwrap();
                assert_eq!(
                    read,
                    (hash(7), u8::try_from(bytes.len()).unwrap(), len, coding),
                    "{len} {coding:?}"
                );
            }
        }
        // Six length bytes, or a fifth that overflows 32 bits: not a header.
        let long = [&[KIND_STORED][..], hash(7).as_bytes(), &[0x80; 5], &[1]].concat();
        assert_eq!(read_header(&mut &long[..]), None);
        let over = [&[KIND_STORED][..], hash(7).as_bytes(), &[0xff; 4], &[0x10]].concat();
        assert_eq!(read_header(&mut &over[..]), None);
        assert_eq!(read_header(&mut &b"XPK1"[..]), None);
        assert_eq!(read_header(&mut &b"CPK2"[..]), None);
    }

    /// A pack an earlier version wrote (`CPK1` entries, gzip payloads) is
    /// read, appended to with today's entries, and compacted with both.
    #[test]
    fn a_pack_of_earlier_entries_is_read_extended_and_compacted() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("v1");
        disk::create_dir_all(&folder).unwrap();
        let mut old = Vec::new();
        for n in 0..4u8 {
            let content = vec![n; 50];
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(&content).unwrap();
            let payload = gz.finish().unwrap();
            old.extend_from_slice(b"CPK1");
            old.extend_from_slice(ContentHash::of(&content).as_bytes());
            old.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_le_bytes());
            old.extend_from_slice(&payload);
        }
        disk::append_at(&folder.join("pack-000001.pack"), 0, &old).unwrap();
        let packs = fresh(&folder);
        for n in 0..4u8 {
            let content = vec![n; 50];
            let packed = packs.payload(&ContentHash::of(&content)).unwrap().unwrap();
            assert_eq!(packed.coding, Coding::Gzip);
            assert_eq!(packed.unpack().unwrap(), content);
        }
        let new = b"a blob of today, a blob of today, a blob of today".to_vec();
        let mut deflate =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        deflate.write_all(&new).unwrap();
        let new_hash = ContentHash::of(&new);
        packs
            .append(&new_hash, Coding::Deflate, &deflate.finish().unwrap())
            .unwrap();
        for n in 0..2u8 {
            assert!(packs.remove(&ContentHash::of(&[n; 50])).unwrap());
        }
        assert!(packs.compact().unwrap() > 0);
        let after = fresh(&folder);
        assert_eq!(
            after.payload(&new_hash).unwrap().unwrap().unpack().unwrap(),
            new
        );
        for n in 0..4u8 {
            let content = vec![n; 50];
            let got = after
                .payload(&ContentHash::of(&content))
                .unwrap()
                .map(|p| p.unpack().unwrap());
            assert_eq!(got, (n >= 2).then_some(content), "{n}");
        }
    }

    #[test]
    fn a_pack_begun_again_under_the_same_name_is_read_anew() {
        let dir = tempfile::tempdir().unwrap();
        let packs = Packs::new(dir.path().join("c"));
        packs.append(&hash(1), Coding::Stored, &[1; 64]).unwrap();
        packs.append(&hash(2), Coding::Stored, &[2; 64]).unwrap();
        // The history is removed and begun again by another process.
        disk::remove_file(&packs.path(1)).unwrap();
        let other = fresh(&dir.path().join("c"));
        let path = other.append(&hash(3), Coding::Stored, b"three").unwrap();
        assert_eq!(packs.payload(&hash(3)).unwrap().unwrap(), stored(b"three"));
        assert_eq!(packs.payload(&hash(1)).unwrap(), None);
        packs.append(&hash(4), Coding::Stored, b"four").unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            2 * SMALL + 5 + 4,
            "appended at the real end, not past it"
        );
        assert_eq!(
            fresh(&dir.path().join("c"))
                .payload(&hash(4))
                .unwrap()
                .unwrap(),
            stored(b"four")
        );
    }

    #[test]
    fn compaction_keeps_live_entries_and_frees_the_dead() {
        let dir = tempfile::tempdir().unwrap();
        let packs = Packs::new(dir.path().join("b"));
        for n in 0..8u8 {
            packs.append(&hash(n), Coding::Stored, &[n; 100]).unwrap();
        }
        for n in 0..6u8 {
            assert!(packs.remove(&hash(n)).unwrap());
        }
        assert!(!packs.remove(&hash(99)).unwrap());
        assert_eq!(packs.compact().unwrap(), 6 * (SMALL + 100));
        let names: Vec<String> = std::fs::read_dir(dir.path().join("b"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["pack-000002.pack".to_owned()]);
        let fresh = fresh(&dir.path().join("b"));
        for n in 0..8u8 {
            let got = fresh.payload(&hash(n)).unwrap();
            assert_eq!(got, (n >= 6).then(|| stored(&[n; 100])), "{n}");
        }
        // Everything dead: the pack goes.
        for n in 6..8u8 {
            packs.remove(&hash(n)).unwrap();
        }
        packs.compact().unwrap();
        assert_eq!(std::fs::read_dir(dir.path().join("b")).unwrap().count(), 0);
    }
}
