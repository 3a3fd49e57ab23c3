//! Blobs: content named by its sha256, small ones packed ([`crate::pack`]),
//! big ones gzip files of their own; storing, reading, listing, removing.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read};
use std::path::PathBuf;

use cocode_core::gate::StoreError;
use cocode_core::snapshot::ContentHash;
use flate2::read::GzDecoder;

use super::files::{io_err, read_dir_sorted};
use super::history::HistoryStore;
use crate::disk;
use crate::pack::{Coding, Packed};

thread_local! {
    /// Each thread's deflate state, reset for every blob: a new one
    /// allocates and zeroes some hundred KiB, more than deflating a small
    /// file costs.
    static DEFLATE: std::cell::RefCell<flate2::Compress> =
        std::cell::RefCell::new(flate2::Compress::new(flate2::Compression::fast(), false));
}

/// The raw deflate of `bytes` (no zlib or gzip framing).
fn deflate(bytes: &[u8]) -> io::Result<Vec<u8>> {
    DEFLATE.with_borrow_mut(|state| {
        state.reset();
        let mut out = Vec::with_capacity(bytes.len() / 2 + 64);
        loop {
            let read = usize::try_from(state.total_in()).unwrap_or(bytes.len());
            let status = state
                .compress_vec(
                    bytes.get(read..).unwrap_or_default(),
                    &mut out,
                    flate2::FlushCompress::Finish,
                )
                .map_err(io::Error::other)?;
            if status == flate2::Status::StreamEnd {
                return Ok(out);
            }
            out.reserve(out.capacity().max(64));
        }
    })
}

/// Whether a packed entry is the blob `hash` names.
fn unpacks_to(packed: Packed, hash: &ContentHash) -> bool {
    packed
        .unpack()
        .is_ok_and(|bytes| ContentHash::of(&bytes) == *hash)
}

/// A loose blob's gzip file around `deflated`, the raw deflate of
/// `content` (made once for the pack's sake, not compressed again).
fn gzip_around(deflated: &[u8], content: &[u8]) -> Vec<u8> {
    let mut crc = flate2::Crc::new();
    crc.update(content);
    // Magic, deflate, no flags, no time, no extra flags, an unknown system.
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.reserve(deflated.len() + 8);
    out.extend_from_slice(deflated);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&crc.amount().to_le_bytes());
    out
}

impl HistoryStore {
    /// Whether a pack or a file of its own holds a blob of `hash` whole
    /// (a pack's entry checked against its hash, as [`Self::put_blob`]
    /// does). Held blobs do not count: only their journals keep them.
    pub fn is_stored(&self, hash: &ContentHash) -> bool {
        self.layout.blob_file(hash).is_file() || self.packed_intact(hash)
    }

    /// Whether the packs this process has indexed hold a blob of `hash`
    /// whole; nothing on disk is looked at on a miss. For the journal's
    /// choice of what to carry: a blob missed here (a loose one, or one
    /// another process packed since) is carried again, and the
    /// checkpoint's [`Self::put_blob`] finds it stored and keeps one copy.
    pub(crate) fn is_packed_as_indexed(&self, hash: &ContentHash) -> bool {
        self.packs
            .indexed_payload(hash)
            .is_ok_and(|packed| packed.is_some_and(|p| unpacks_to(p, hash)))
    }

    // ---- blobs ------------------------------------------------------------

    /// [`Self::has_blob`] by the packs already indexed (no listing of
    /// the packs folder on a miss).
    pub fn has_blob_cached(&self, hash: &ContentHash) -> bool {
        self.held().blobs.contains_key(hash)
            || self.packs.contains_cached(hash)
            || self.layout.blob_file(hash).is_file()
    }

    /// Whether a pack holds `hash` as far as this process knows (no
    /// listing on a miss).
    pub(crate) fn is_packed_cached(&self, hash: &ContentHash) -> bool {
        self.packs.contains_cached(hash)
    }

    /// Every packed blob by its first `N` bytes; `None` where two share
    /// them (empty when the packs cannot be read).
    pub(crate) fn packed_by_prefix<const N: usize>(&self) -> HashMap<[u8; N], Option<ContentHash>> {
        self.packs.by_prefix().unwrap_or_default()
    }

    pub fn has_blob(&self, hash: &ContentHash) -> bool {
        self.held().blobs.contains_key(hash)
            || self.layout.blob_file(hash).is_file()
            || self.packs.contains(hash)
    }

    /// Stores `bytes` unless a blob of that content exists (or is held).
    /// Returns the hash and, when a file was written, its path (for the
    /// caller's barrier).
    pub fn put_blob(&self, bytes: &[u8]) -> Result<(ContentHash, Option<PathBuf>), StoreError> {
        let hash = ContentHash::of(bytes);
        if self.held().blobs.contains_key(&hash) {
            return Ok((hash, None));
        }
        self.store_blob(bytes)
    }

    /// [`Self::put_blob`] without looking at the held blobs.
    pub(super) fn store_blob(
        &self,
        bytes: &[u8],
    ) -> Result<(ContentHash, Option<PathBuf>), StoreError> {
        let hash = ContentHash::of(bytes);
        if self.is_stored(&hash) {
            return Ok((hash, None));
        }
        let path = self.layout.blob_file(&hash);
        let deflated = deflate(bytes).map_err(|e| io_err("compressing blob", &path, &e))?;
        if deflated.len() <= crate::pack::PACKED_MAX {
            // Content deflate cannot shrink (tiny or compressed already)
            // is packed as it is.
            let (coding, payload) = if deflated.len() < bytes.len() {
                (Coding::Deflate, &deflated[..])
            } else {
                (Coding::Stored, bytes)
            };
            let pack = self
                .packs
                .append(&hash, coding, payload)
                .map_err(|e| io_err("packing blob", &self.layout.packs_dir(), &e))?;
            return Ok((hash, Some(pack)));
        }
        let compressed = gzip_around(&deflated, bytes);
        match disk::write_atomic(&path, &compressed) {
            // The first blob of its fan-out folder.
            Err(e) if e.kind() == io::ErrorKind::NotFound => path
                .parent()
                .map_or(Ok(()), disk::create_dir_all)
                .and_then(|()| disk::write_atomic(&path, &compressed)),
            other => other,
        }
        .map_err(|e| io_err("storing blob", &path, &e))?;
        Ok((hash, Some(path)))
    }

    /// Whether a pack holds `hash` with a payload that matches it (a write
    /// of the same content never trusts the index alone).
    fn packed_intact(&self, hash: &ContentHash) -> bool {
        self.packs
            .cached_payload(hash)
            .is_ok_and(|packed| packed.is_some_and(|p| unpacks_to(p, hash)))
    }

    /// A blob's content, checked against its name.
    pub fn read_blob(&self, hash: &ContentHash) -> Result<Vec<u8>, StoreError> {
        if let Some(bytes) = self.held().blobs.get(hash) {
            return Ok(bytes.to_vec());
        }
        let path = self.layout.blob_file(hash);
        let file = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let packed = self
                    .packs
                    .payload(hash)
                    .map_err(|e| io_err("reading blob", &self.layout.packs_dir(), &e))?
                    .ok_or(StoreError::MissingBlob(*hash))?;
                let bytes = packed
                    .unpack()
                    .map_err(|_| StoreError::CorruptBlob(*hash))?;
                if ContentHash::of(&bytes) != *hash {
                    return Err(StoreError::CorruptBlob(*hash));
                }
                return Ok(bytes);
            }
            Err(e) => return Err(io_err("reading blob", &path, &e)),
        };
        let mut bytes = Vec::new();
        GzDecoder::new(file)
            .read_to_end(&mut bytes)
            .map_err(|_| StoreError::CorruptBlob(*hash))?;
        if ContentHash::of(&bytes) != *hash {
            return Err(StoreError::CorruptBlob(*hash));
        }
        Ok(bytes)
    }

    /// Every blob file name under `objects/` that parses as a hash, plus the
    /// names that do not (both count for the integrity checker).
    pub fn blob_names(&self) -> Result<(Vec<ContentHash>, Vec<PathBuf>), StoreError> {
        self.checkpoint()?;
        let mut hashes = Vec::new();
        let mut strays = Vec::new();
        for shard in read_dir_sorted(&self.layout.objects_dir())? {
            if !shard.is_dir() {
                strays.push(shard);
                continue;
            }
            for file in read_dir_sorted(&shard)? {
                let name = file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match format!("sha256:{name}").parse::<ContentHash>() {
                    Ok(h) => hashes.push(h),
                    Err(_) => strays.push(file),
                }
            }
        }
        let packed = self
            .packs
            .hashes()
            .map_err(|e| io_err("listing", &self.layout.packs_dir(), &e))?;
        hashes.extend(packed);
        hashes.sort();
        hashes.dedup();
        strays.extend(crate::pack::strays(&self.layout.packs_dir()));
        Ok((hashes, strays))
    }

    /// Removes a blob (retention P5).
    /// A packed one is marked removed; [`Self::compact_packs`] frees its
    /// bytes.
    pub fn remove_blob(&self, hash: &ContentHash) -> Result<(), StoreError> {
        self.checkpoint()?;
        let file = self.layout.blob_file(hash);
        let packed = self
            .packs
            .remove(hash)
            .map_err(|e| io_err("removing", &self.layout.packs_dir(), &e))?;
        match disk::remove_file(&file) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && packed => Ok(()),
            other => other.map_err(|e| io_err("removing", &file, &e)),
        }
    }

    /// Rewrites packs that removed blobs left mostly empty; the bytes freed.
    pub fn compact_packs(&self) -> Result<u64, StoreError> {
        self.checkpoint()?;
        self.packs
            .compact()
            .map_err(|e| io_err("compacting", &self.layout.packs_dir(), &e))
    }

    /// On-disk size of a stored blob (0 when absent).
    /// Packed blobs, the most, are answered from the index, without a
    /// look for a loose file of that name.
    pub fn blob_size(&self, hash: &ContentHash) -> u64 {
        if let Some(bytes) = self.held().blobs.get(hash) {
            return bytes.len() as u64;
        }
        self.packs
            .size(hash)
            .unwrap_or_else(|| fs::metadata(self.layout.blob_file(hash)).map_or(0, |m| m.len()))
    }
}
