//! The content-addressed history store: blobs named by the sha256 of their
//! uncompressed content (small ones packed, see [`crate::pack`], big ones
//! gzip files of their own), per-task JSONL indexes and per-path ones kept
//! in shards, the write journals, and the workspace's config file.
//!
//! The store only appends and adds; what to append and when is decided by the
//! gate (the write-commit protocol) and by recovery.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use cocode_core::gate::{SnapshotStore, StoreError};
use cocode_core::ids::{OpId, SnapshotId, TaskId, Timestamp};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{ContentHash, EditSnapshot};
use cocode_core::workspace::WorkspaceConfig;
use flate2::read::GzDecoder;
use serde::{Deserialize, Serialize};

use crate::disk;
use crate::layout::Layout;
use crate::pack::{Coding, Packed};

/// Current format version of `journal/writes/<op_id>.json` (2: the
/// journal carries its operation's small new blobs; version 1 journals,
/// which carry none, read the same).
pub const WRITE_JOURNAL_VERSION: u32 = 2;

/// A write-commit journal: the complete records of one gate operation,
/// written before any workspace file is touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteJournal {
    pub version: u32,
    pub op_id: OpId,
    pub created_at: Timestamp,
    pub records: Vec<EditSnapshot>,
    /// Workspace-relative temp files the operation stages next to its
    /// targets; recovery removes any that a crash left behind.
    #[serde(default)]
    pub staged: Vec<String>,
    /// The operation's new blobs of at most [`HELD_BLOB_MAX`] bytes (up
    /// to [`JOURNAL_BLOBS_MAX`] in all): the journal is their durable copy
    /// until a checkpoint has put them in a pack (see
    /// [`HistoryStore::hold`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blobs: Vec<JournalBlob>,
}

/// A blob a write journal carries, its content in standard base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalBlob {
    pub hash: ContentHash,
    pub base64: String,
}

impl JournalBlob {
    pub fn of(bytes: &[u8]) -> Self {
        Self::with_hash(ContentHash::of(bytes), bytes)
    }

    /// [`Self::of`] for content whose hash the caller has.
    pub fn with_hash(hash: ContentHash, bytes: &[u8]) -> Self {
        use base64::Engine as _;
        Self {
            hash,
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// The content, checked against its hash.
    pub fn content(&self) -> Result<Vec<u8>, StoreError> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.base64)
            .map_err(|_| StoreError::CorruptBlob(self.hash))?;
        if ContentHash::of(&bytes) == self.hash {
            Ok(bytes)
        } else {
            Err(StoreError::CorruptBlob(self.hash))
        }
    }
}

/// A new blob at most this large is carried by its operation's journal
/// and put in a pack at the next checkpoint; a larger one is stored
/// before the journal is written.
pub const HELD_BLOB_MAX: usize = 64 * 1024;

/// The most blob bytes one journal carries; an operation's further new
/// blobs are stored before its journal is written.
pub const JOURNAL_BLOBS_MAX: usize = 1024 * 1024;

/// Held operations that make the gate checkpoint.
pub const CHECKPOINT_OPERATIONS: usize = 64;

/// Held blob bytes that make the gate checkpoint.
pub const CHECKPOINT_BYTES: usize = 8 * 1024 * 1024;

/// Committed operations whose records and small blobs are held in memory
/// — their journals carry them meanwhile — until a checkpoint writes them
/// to the indexes and packs (see [`HistoryStore::hold`]).
#[derive(Debug, Default)]
struct Held {
    ops: Vec<OpId>,
    /// Every held record, in commit order.
    records: Vec<EditSnapshot>,
    blobs: HashMap<ContentHash, std::sync::Arc<[u8]>>,
    bytes: usize,
    /// A checkpoint failed part way: the next one appends only the lines
    /// the indexes lack.
    torn: bool,
}

/// What checkpoints wrote since the gate last collected it: the operations
/// now wholly in the indexes and packs, and the files they appended to or
/// created (for the gate's next barrier).
#[derive(Debug, Default)]
pub(crate) struct Checkpointed {
    pub(crate) ops: Vec<OpId>,
    pub(crate) blob_files: Vec<PathBuf>,
    pub(crate) index_files: Vec<PathBuf>,
}

impl Checkpointed {
    pub(crate) fn is_empty(&self) -> bool {
        self.ops.is_empty() && self.blob_files.is_empty() && self.index_files.is_empty()
    }
}

/// Current format version of `journal/<op_id>.json` (rollback journals).
pub const ROLLBACK_JOURNAL_VERSION: u32 = 1;

/// One path of a rollback: the state it is in before, the state it goes to,
/// and the staging file holding the target content next to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RollbackItem {
    pub path: NormalizedPath,
    pub prior: Option<ContentHash>,
    pub target: Option<ContentHash>,
    /// Workspace-relative staging file (restorations only).
    #[serde(default)]
    pub staging: Option<String>,
}

/// A rollback journal, written before any file is touched; replayed at
/// startup when a rollback was interrupted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RollbackJournal {
    pub version: u32,
    pub op_id: OpId,
    pub task_id: TaskId,
    pub created_at: Timestamp,
    pub items: Vec<RollbackItem>,
    /// The rollback's own records (origin `rollback`), appended once every
    /// item is at its target.
    pub records: Vec<EditSnapshot>,
}

/// `tasks/<task_id>/retention.json`: retention removed this task's
/// snapshots; rollback is disabled with this reason. The task record stays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetentionMarker {
    pub version: u32,
    pub removed_at: Timestamp,
    pub reason: String,
    pub snapshots_removed: usize,
    pub bytes_freed: u64,
}

/// The first line of a path index in the one-file-per-path forms of
/// earlier versions (`files/<path_key>.jsonl`,
/// `files/<path_key>/versions.jsonl`); a shard has none, each of its
/// records names its paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PathIndexHeader {
    path: NormalizedPath,
}

/// One journal file as found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalFile<J = WriteJournal> {
    pub path: PathBuf,
    /// The parsed journal, or why it could not be read (reported, never deleted).
    pub content: Result<J, String>,
}

/// Journals name their operation; the file name must agree.
pub trait Journal: serde::de::DeserializeOwned {
    fn op_id(&self) -> &OpId;
}

impl Journal for WriteJournal {
    fn op_id(&self) -> &OpId {
        &self.op_id
    }
}

impl Journal for RollbackJournal {
    fn op_id(&self) -> &OpId {
        &self.op_id
    }
}

/// Every `<op_id>.json` journal in `dir`, oldest op first (op ids sort by time).
fn read_journals<J: Journal>(dir: &Path) -> Result<Vec<JournalFile<J>>, StoreError> {
    let mut out = Vec::new();
    for path in read_dir_sorted(dir)? {
        let is_journal = path.extension().is_some_and(|e| e == "json") && path.is_file();
        if !is_journal {
            continue;
        }
        let content = fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<J>(&b).map_err(|e| e.to_string()))
            .and_then(|j| {
                let expected = format!("{}.json", j.op_id().as_str());
                if path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy() == expected)
                {
                    Ok(j)
                } else {
                    Err(format!(
                        "journal names op {} but the file is not {expected}",
                        j.op_id()
                    ))
                }
            });
        out.push(JournalFile { path, content });
    }
    Ok(out)
}

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

fn io_err(context: &str, path: &Path, e: &io::Error) -> StoreError {
    StoreError::Io {
        message: format!("{context}: {e} ({})", path.display()),
        kind: Some(e.kind()),
    }
}

/// The history under `<workspace>/.cocode/history`.
#[derive(Debug, Clone)]
pub struct HistoryStore {
    layout: Layout,
    packs: crate::pack::Packs,
    /// Settled write journals kept to carry the next ones (see
    /// [`Self::write_journal`]); clones share them.
    spare_journals: std::sync::Arc<std::sync::Mutex<Vec<Spare>>>,
    /// Whether `files/` held a path index in a one-file-per-path form when
    /// first asked (only earlier versions write them); until then no
    /// path's index is looked for there.
    per_path_indexes: std::sync::Arc<std::sync::OnceLock<bool>>,
    /// Held operations (clones share them).
    held: std::sync::Arc<std::sync::Mutex<Held>>,
    /// What checkpoints wrote that no barrier has taken yet.
    checkpointed: std::sync::Arc<std::sync::Mutex<Checkpointed>>,
}

/// Whether `file` is a shard of the path indexes (see
/// [`Layout::path_index_shard`]).
fn is_shard(file: &Path) -> bool {
    file.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("shard-"))
}

/// Settled journals kept as spares; more are removed. A checkpoint
/// settles up to [`CHECKPOINT_OPERATIONS`] journals at once, and each
/// becomes a spare that carries one of the next ones.
const SPARE_JOURNALS: usize = CHECKPOINT_OPERATIONS + 4;

/// A settled journal renamed away to carry a later one.
#[derive(Debug)]
struct Spare {
    path: PathBuf,
    /// Whether its rename away from the settled journal's name is durable.
    /// Until it is, a crash could bring that name back over the new
    /// content, so it is not reused.
    durable: bool,
}

/// Numbers spare journal names within this process.
static SPARE_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether `name` is a spare journal's file name in `journal/writes/`.
fn is_spare_journal(name: &str) -> bool {
    name.starts_with(".spare-") && name.ends_with(".journal")
}

impl HistoryStore {
    pub fn new(layout: Layout) -> Self {
        let packs = crate::pack::Packs::new(layout.packs_dir());
        Self {
            layout,
            packs,
            spare_journals: std::sync::Arc::default(),
            per_path_indexes: std::sync::Arc::default(),
            held: std::sync::Arc::default(),
            checkpointed: std::sync::Arc::default(),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    // ---- held operations ----------------------------------------------------

    /// Holds a committed operation's records and the blobs its journal
    /// carries: reads of this store see them at once, the indexes and
    /// packs get them at the next checkpoint, and the operation's journal
    /// is their durable copy until a barrier after that. Returns whether a
    /// checkpoint is due ([`CHECKPOINT_OPERATIONS`], [`CHECKPOINT_BYTES`]).
    pub(crate) fn hold(
        &self,
        op: OpId,
        records: &[EditSnapshot],
        blobs: Vec<(ContentHash, Vec<u8>)>,
    ) -> bool {
        let mut held = self.held();
        for (hash, bytes) in blobs {
            if let std::collections::hash_map::Entry::Vacant(slot) = held.blobs.entry(hash) {
                let len = bytes.len();
                slot.insert(bytes.into());
                held.bytes += len;
            }
        }
        held.records.extend_from_slice(records);
        held.ops.push(op);
        held.ops.len() >= CHECKPOINT_OPERATIONS || held.bytes >= CHECKPOINT_BYTES
    }

    /// Operations held and not yet checkpointed.
    pub fn held_operations(&self) -> usize {
        self.held().ops.len()
    }

    /// Writes every held blob to a pack (or a file of its own) and every
    /// held record to its indexes; the operations are then listed for the
    /// gate's next barrier ([`Self::take_checkpointed`]). Nothing is
    /// synced here. Every read and rewrite of the indexes that does not
    /// see held records runs one first. On failure the operations stay
    /// held and the next checkpoint appends only the lines the indexes
    /// lack.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        let mut held = self.held();
        if held.ops.is_empty() && held.records.is_empty() && held.blobs.is_empty() {
            return Ok(());
        }
        // Every file the lines go to is listed first, so a barrier syncs
        // the ones a failed attempt appended to as well.
        let mut index_files = Vec::new();
        for r in &held.records {
            index_files.push(self.layout.task_index(r.task_id()));
            index_files.extend(record_paths(r).into_iter().map(|p| self.path_index_file(p)));
        }
        index_files.sort();
        index_files.dedup();
        let mut blob_files = Vec::new();
        let mut result = Ok(());
        for bytes in held.blobs.values() {
            match self.store_blob(bytes) {
                Ok((_, Some(file))) => blob_files.push(file),
                Ok((_, None)) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        fail::fail_point!("store::checkpoint_after_blobs");
        if result.is_ok() {
            result = if held.torn {
                self.append_missing_on_disk(&held.records)
            } else {
                self.append_filtered(&held.records, Some(&HashSet::new()), Some(&HashSet::new()))
            };
        }
        let mut done = self
            .checkpointed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        done.blob_files.extend(blob_files);
        done.index_files.extend(index_files);
        if let Err(e) = result {
            held.torn = true;
            return Err(e);
        }
        done.ops.append(&mut held.ops);
        *held = Held::default();
        fail::fail_point!("store::checkpoint_after_indexes");
        Ok(())
    }

    /// Takes what checkpoints wrote since the last call (the gate's
    /// barrier makes it durable).
    pub(crate) fn take_checkpointed(&self) -> Checkpointed {
        std::mem::take(
            &mut *self
                .checkpointed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Whether checkpoints wrote anything no barrier has taken yet.
    pub(crate) fn has_checkpointed(&self) -> bool {
        !self
            .checkpointed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_empty()
    }

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

    /// The held records that `keep` selects, in commit order.
    fn held_records(&self, keep: impl Fn(&EditSnapshot) -> bool) -> Vec<EditSnapshot> {
        self.held()
            .records
            .iter()
            .filter(|r| keep(r))
            .cloned()
            .collect()
    }

    fn spares(&self) -> std::sync::MutexGuard<'_, Vec<Spare>> {
        self.spare_journals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Creates every folder of the `.cocode/` layout.
    pub fn create_layout(&self) -> Result<(), StoreError> {
        for dir in self.layout.folders() {
            disk::create_dir_all(&dir).map_err(|e| io_err("creating", &dir, &e))?;
        }
        Ok(())
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
    fn store_blob(&self, bytes: &[u8]) -> Result<(ContentHash, Option<PathBuf>), StoreError> {
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

    // ---- indexes ----------------------------------------------------------

    /// Appends records to their task's index.
    pub fn append_task_records(&self, records: &[EditSnapshot]) -> Result<(), StoreError> {
        self.checkpoint()?;
        self.append_filtered(records, Some(&HashSet::new()), None)
    }

    /// Appends records to the index of every path each touches (a rename is
    /// listed under both of its paths).
    pub fn append_path_records(&self, records: &[EditSnapshot]) -> Result<(), StoreError> {
        self.checkpoint()?;
        self.append_filtered(records, None, Some(&HashSet::new()))
    }

    /// Appends only the records an index does not list yet (recovery).
    pub fn append_missing(&self, records: &[EditSnapshot]) -> Result<(), StoreError> {
        self.checkpoint()?;
        self.append_missing_on_disk(records)
    }

    /// [`Self::append_missing`] by the indexes on disk alone.
    fn append_missing_on_disk(&self, records: &[EditSnapshot]) -> Result<(), StoreError> {
        let mut in_tasks = HashSet::new();
        let mut in_paths = HashSet::new();
        let mut tasks_read = HashSet::new();
        let mut paths_read = HashSet::new();
        for r in records {
            if tasks_read.insert(r.task_id().clone()) {
                for s in self.snapshots_of_task_on_disk(r.task_id())? {
                    in_tasks.insert(s.snapshot_id().clone());
                }
            }
            for p in record_paths(r) {
                if paths_read.insert(p.clone()) {
                    for s in self.path_history_on_disk(p)? {
                        in_paths.insert((p.clone(), s.snapshot_id().clone()));
                    }
                }
            }
        }
        self.append_filtered(records, Some(&in_tasks), Some(&in_paths))
    }

    fn append_filtered(
        &self,
        records: &[EditSnapshot],
        tasks: Option<&HashSet<SnapshotId>>,
        paths: Option<&HashSet<(NormalizedPath, SnapshotId)>>,
    ) -> Result<(), StoreError> {
        // Group lines per file so each index gets one append per operation.
        let mut per_file: Vec<(PathBuf, Option<NormalizedPath>, String)> = Vec::new();
        let mut index_of: HashMap<PathBuf, usize> = HashMap::new();
        let mut push = |file: PathBuf, header: Option<NormalizedPath>, line: &str| {
            if let Some(&i) = index_of.get(&file) {
                per_file[i].2.push_str(line);
            } else {
                index_of.insert(file.clone(), per_file.len());
                per_file.push((file, header, line.to_owned()));
            }
        };
        for r in records {
            let mut line =
                serde_json::to_string(r).map_err(|e| StoreError::Index(e.to_string()))?;
            line.push('\n');
            if let Some(skip) = tasks
                && !skip.contains(r.snapshot_id())
            {
                push(self.layout.task_index(r.task_id()), None, &line);
            }
            if let Some(skip) = paths {
                // A rename whose two paths share a shard is one line there.
                let mut files = Vec::new();
                for p in record_paths(r) {
                    if !skip.contains(&(p.clone(), r.snapshot_id().clone())) {
                        let file = self.path_index_file(p);
                        if !files.contains(&file) {
                            let header = (!is_shard(&file)).then(|| p.clone());
                            files.push(file.clone());
                            push(file, header, &line);
                        }
                    }
                }
            }
        }
        // Each file gets its lines in order; different files are independent,
        // so many of them (a large rollback or batch) are appended on every core.
        crate::parallel::parallel_map(&per_file, |(file, header, lines)| {
            // A path index of the one-file-per-path forms starts with the
            // path it belongs to.
            let header = header
                .as_ref()
                .map(|path| {
                    serde_json::to_string(&PathIndexHeader { path: path.clone() }).map(|mut h| {
                        h.push('\n');
                        h
                    })
                })
                .transpose()
                .map_err(|e| StoreError::Index(e.to_string()))?;
            disk::append(file, header.as_deref().map(str::as_bytes), lines.as_bytes())
                .map_err(|e| io_err("appending", file, &e))
        })
        .into_iter()
        .collect()
    }

    /// Every record of a task, in seq order (held ones included).
    pub fn snapshots_of_task(&self, task: &TaskId) -> Result<Vec<EditSnapshot>, StoreError> {
        let held = self.held_records(|r| r.task_id() == task);
        let mut records = self.snapshots_of_task_on_disk(task)?;
        with_held(&mut records, held);
        records.sort_by_key(EditSnapshot::seq);
        Ok(records)
    }

    /// The records of a task its index on disk holds, in seq order.
    fn snapshots_of_task_on_disk(&self, task: &TaskId) -> Result<Vec<EditSnapshot>, StoreError> {
        let mut records: Vec<EditSnapshot> = read_jsonl(&self.layout.task_index(task), false)?;
        records.sort_by_key(EditSnapshot::seq);
        Ok(records)
    }

    /// The newest record that touched `path`. Only the last complete line
    /// is parsed (a rollback asks this for every path it restores); the
    /// integrity checker reads whole indexes.
    pub fn last_snapshot_of_path(
        &self,
        path: &NormalizedPath,
    ) -> Result<Option<EditSnapshot>, StoreError> {
        // Held records are newer than every line on disk.
        if let Some(newest) = self.held_records(|r| record_paths(r).contains(&path)).pop() {
            return Ok(Some(newest));
        }
        let file = self.path_index_file(path);
        let bytes = match fs::File::open(&file).and_then(disk::read_all) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err("reading index", &file, &e)),
        };
        let text = String::from_utf8(bytes)
            .map_err(|e| StoreError::Index(format!("{}: not UTF-8: {e}", file.display())))?;
        // Complete lines only (a torn tail is not a record yet).
        let complete = text.rfind('\n').map_or("", |i| &text[..i]);
        if is_shard(&file) {
            // The newest line naming the path; lines that do not hold its
            // name as a JSON string are not parsed.
            let quoted =
                serde_json::to_string(path).map_err(|e| StoreError::Index(e.to_string()))?;
            for line in complete.rsplit('\n').filter(|l| l.contains(&quoted)) {
                let r: EditSnapshot = serde_json::from_str(line).map_err(|e| {
                    StoreError::Index(format!("{}: a line naming {path}: {e}", file.display()))
                })?;
                if record_paths(&r).contains(&path) {
                    return Ok(Some(r));
                }
            }
            return Ok(None);
        }
        // The first line is the header naming the path.
        match complete.rsplit_once('\n') {
            Some((_, last)) => serde_json::from_str(last)
                .map(Some)
                .map_err(|e| StoreError::Index(format!("{}: last line: {e}", file.display()))),
            None => Ok(None),
        }
    }

    /// Every record that touched `path`, oldest first (held ones last).
    pub fn path_history(&self, path: &NormalizedPath) -> Result<Vec<EditSnapshot>, StoreError> {
        let held = self.held_records(|r| record_paths(r).contains(&path));
        let mut records = self.path_history_on_disk(path)?;
        with_held(&mut records, held);
        Ok(records)
    }

    /// The records of `path` its index on disk holds, oldest first.
    fn path_history_on_disk(&self, path: &NormalizedPath) -> Result<Vec<EditSnapshot>, StoreError> {
        let file = self.path_index_file(path);
        // Not `read_path_index`, which checkpoints (a checkpoint reads
        // this).
        let mut records = read_jsonl(&file, !is_shard(&file))?;
        if is_shard(&file) {
            records.retain(|r| record_paths(r).contains(&path));
        }
        Ok(records)
    }

    /// The file holding `path`'s index: its shard
    /// ([`Layout::path_index_shard`]), unless the path has a file of its own
    /// that an earlier version wrote ([`Layout::path_index`],
    /// [`Layout::folder_path_index`]), which it keeps.
    pub fn path_index_file(&self, path: &NormalizedPath) -> PathBuf {
        let key = path.key();
        if self.has_per_path_indexes() {
            let own = [
                self.layout.folder_path_index(&key),
                self.layout.path_index(&key),
            ];
            if let Some(file) = own.into_iter().find(|f| f.is_file()) {
                return file;
            }
        }
        self.layout.path_index_shard(&key)
    }

    /// Whether `files/` held an index of one path (an earlier version's
    /// form) when first asked. Only earlier versions write them, and only
    /// one process writes a history, so the answer stays true for this
    /// store; a folder that cannot be listed counts as holding some (each
    /// path is then looked for).
    fn has_per_path_indexes(&self) -> bool {
        *self.per_path_indexes.get_or_init(|| {
            let Ok(entries) = fs::read_dir(self.layout.files_dir()) else {
                return fs::symlink_metadata(self.layout.files_dir()).is_ok();
            };
            entries.into_iter().any(|entry| {
                entry.map_or(true, |e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    !name.starts_with("shard-") && !name.starts_with('.')
                })
            })
        })
    }

    /// The tasks that have a history folder.
    pub fn task_ids(&self) -> Result<Vec<TaskId>, StoreError> {
        self.checkpoint()?;
        Ok(read_dir_sorted(&self.layout.tasks_dir())?
            .into_iter()
            .filter_map(|p| {
                p.file_name()
                    .and_then(|n| TaskId::new(n.to_string_lossy().into_owned()).ok())
            })
            .collect())
    }

    /// Every path index file: the shards, and the one-file-per-path forms
    /// of earlier versions, `files/<key>.jsonl` and
    /// `files/<key>/versions.jsonl` (temp files of a rewrite in progress are
    /// not indexes).
    pub fn path_index_files(&self) -> Result<Vec<PathBuf>, StoreError> {
        self.checkpoint()?;
        Ok(read_dir_sorted(&self.layout.files_dir())?
            .into_iter()
            .filter_map(|entry| {
                let name = entry.file_name()?.to_string_lossy().into_owned();
                if name.starts_with('.') {
                    None
                } else if entry.extension().is_some_and(|e| e == "jsonl") {
                    Some(entry)
                } else {
                    Some(entry.join("versions.jsonl"))
                }
            })
            .collect())
    }

    /// Reads one path index file: a shard's records, or a one-path file's
    /// (its header checked).
    pub fn read_path_index(&self, file: &Path) -> Result<Vec<EditSnapshot>, StoreError> {
        self.checkpoint()?;
        read_jsonl(file, !is_shard(file))
    }

    /// Cuts torn tails (a crash mid-append) off every index file; a last
    /// line that is a whole record lacking only its newline gets it instead
    /// (it is never dropped).
    pub fn repair_indexes(&self) -> Result<usize, StoreError> {
        let mut files = self.path_index_files()?;
        for task in self.task_ids()? {
            files.push(self.layout.task_index(&task));
        }
        let whole = |tail: &[u8]| {
            serde_json::from_slice::<EditSnapshot>(tail).is_ok()
                || serde_json::from_slice::<PathIndexHeader>(tail).is_ok()
        };
        let mut repaired = 0;
        for f in files {
            if disk::repair_torn_tail(&f, whole).map_err(|e| io_err("repairing", &f, &e))? {
                repaired += 1;
            }
        }
        Ok(repaired)
    }

    /// The records of `task` that the path indexes hold but its own index
    /// does not (an index cut or damaged): none on a sound history.
    pub fn missing_from_task_index(
        &self,
        task: &TaskId,
        have: &[EditSnapshot],
    ) -> Result<Vec<SnapshotId>, StoreError> {
        let have: std::collections::BTreeSet<&SnapshotId> =
            have.iter().map(EditSnapshot::snapshot_id).collect();
        let mut missing = std::collections::BTreeSet::new();
        for file in self.path_index_files()? {
            for r in self.read_path_index(&file)? {
                if r.task_id() == task && !have.contains(r.snapshot_id()) {
                    missing.insert(r.snapshot_id().clone());
                }
            }
        }
        Ok(missing.into_iter().collect())
    }

    // ---- write journals ---------------------------------------------------

    /// Writes a journal (temp + rename); returns its path for the barrier.
    /// The temp file is a spare (a settled journal renamed away) when one
    /// is at hand: each operation then moves names instead of allocating
    /// an inode and freeing another. A spare is never a `.json` file, so
    /// recovery never reads one; a spare that fails is removed and a new
    /// temp file used.
    pub fn write_journal(&self, journal: &WriteJournal) -> Result<PathBuf, StoreError> {
        let path = self.layout.write_journal(&journal.op_id);
        let bytes = serde_json::to_vec(journal).map_err(|e| StoreError::Index(e.to_string()))?;
        let spare = self.durable_spare();
        if let Some(spare) = spare {
            match disk::write_atomic_reusing(&spare, &path, &bytes) {
                Ok(()) => return Ok(path),
                Err(e) => {
                    tracing::debug!(spare = %spare.display(), error = %e, "a spare journal could not be reused");
                    let _ = disk::remove_file(&spare);
                }
            }
        }
        disk::write_atomic(&path, &bytes).map_err(|e| io_err("writing journal", &path, &e))?;
        Ok(path)
    }

    /// A spare whose rename is durable, if one is at hand (a barrier that
    /// synced the journal folder after its rename has marked it, see
    /// [`Self::spares_made_durable`]). Spares are retired one per
    /// operation, after its barrier, so the next one finds the spare
    /// retired the operation before.
    fn durable_spare(&self) -> Option<PathBuf> {
        let mut spares = self.spares();
        let i = spares.iter().rposition(|s| s.durable)?;
        Some(spares.remove(i).path)
    }

    /// Marks every spare durable: the caller synced the journal folder
    /// after they were renamed.
    pub(crate) fn spares_made_durable(&self) {
        for spare in self.spares().iter_mut() {
            spare.durable = true;
        }
    }

    /// Takes over the spare journals a process left in `journal/writes/`
    /// (up to [`SPARE_JOURNALS`]; the rest are removed). Called by recovery,
    /// which the one writing process runs first.
    pub fn adopt_spare_journals(&self) -> Result<(), StoreError> {
        let dir = self.layout.write_journal_dir();
        let mut spares = self.spares();
        spares.clear();
        for path in read_dir_sorted(&dir)? {
            let spare = path
                .file_name()
                .is_some_and(|n| is_spare_journal(&n.to_string_lossy()));
            if !spare {
                continue;
            }
            if spares.len() < SPARE_JOURNALS && path.is_file() {
                // Its rename may still be in the cache of the system.
                spares.push(Spare {
                    path,
                    durable: false,
                });
            } else {
                disk::remove_file(&path).map_err(|e| io_err("removing", &path, &e))?;
            }
        }
        Ok(())
    }

    /// Every pending write journal, oldest op first.
    pub fn write_journals(&self) -> Result<Vec<JournalFile>, StoreError> {
        read_journals(&self.layout.write_journal_dir())
    }

    /// Writes a rollback journal (temp + rename); returns its path.
    pub fn write_rollback_journal(&self, journal: &RollbackJournal) -> Result<PathBuf, StoreError> {
        let path = self.layout.rollback_journal(&journal.op_id);
        let bytes = serde_json::to_vec(journal).map_err(|e| StoreError::Index(e.to_string()))?;
        disk::write_atomic(&path, &bytes).map_err(|e| io_err("writing journal", &path, &e))?;
        Ok(path)
    }

    /// Every pending rollback journal, oldest op first.
    pub fn rollback_journals(&self) -> Result<Vec<JournalFile<RollbackJournal>>, StoreError> {
        read_journals(&self.layout.journal_dir())
    }

    pub fn remove_rollback_journal(&self, op: &OpId) -> Result<(), StoreError> {
        let path = self.layout.rollback_journal(op);
        disk::remove_file(&path).map_err(|e| io_err("removing journal", &path, &e))
    }

    /// Moves an interrupted rollback's journal out of the way after a person
    /// accepted the current state; it stays as evidence.
    pub fn abandon_rollback_journal(&self, op: &OpId) -> Result<(), StoreError> {
        let from = self.layout.rollback_journal(op);
        let dir = self.layout.journal_dir().join("abandoned");
        let to = dir.join(format!("{}.json", op.as_str()));
        disk::create_dir_all(&dir).map_err(|e| io_err("creating", &dir, &e))?;
        disk::rename(&from, &to).map_err(|e| io_err("abandoning journal", &from, &e))
    }

    /// Removes a journal (a refused operation's: nothing of it stays).
    pub fn remove_write_journal(&self, op: &OpId) -> Result<(), StoreError> {
        let path = self.layout.write_journal(op);
        disk::remove_file(&path).map_err(|e| io_err("removing journal", &path, &e))
    }

    /// Retires a settled journal: renamed to a spare that carries a later
    /// journal while fewer than [`SPARE_JOURNALS`] are kept, removed
    /// otherwise.
    pub fn retire_write_journal(&self, op: &OpId) -> Result<(), StoreError> {
        let path = self.layout.write_journal(op);
        let mut spares = self.spares();
        if spares.len() < SPARE_JOURNALS {
            let n = SPARE_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let spare = self
                .layout
                .write_journal_dir()
                .join(format!(".spare-{}-{n}.journal", std::process::id()));
            match disk::rename(&path, &spare) {
                Ok(()) => {
                    spares.push(Spare {
                        path: spare,
                        durable: false,
                    });
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                // Removed below instead.
                Err(_) => {}
            }
        }
        drop(spares);
        self.remove_write_journal(op)
    }

    /// Moves a journal out of the way after a person accepted the current
    /// state of its paths; it stays on disk as evidence.
    pub fn abandon_write_journal(&self, op: &OpId) -> Result<(), StoreError> {
        let from = self.layout.write_journal(op);
        let dir = self.layout.abandoned_journal_dir();
        let to = dir.join(format!("{}.json", op.as_str()));
        disk::create_dir_all(&dir).map_err(|e| io_err("creating", &dir, &e))?;
        disk::rename(&from, &to).map_err(|e| io_err("abandoning journal", &from, &e))
    }

    // ---- retention ----------------------------------------------------------

    /// The retention marker of a task, if retention removed its snapshots.
    pub fn retention_marker(&self, task: &TaskId) -> Result<Option<RetentionMarker>, StoreError> {
        let path = self.layout.retention_marker(task);
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| StoreError::Index(format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err("reading", &path, &e)),
        }
    }

    /// Writes a task's retention marker (synced: it must exist before any of
    /// the task's records go, so rollback is disabled with its reason).
    pub fn write_retention_marker(
        &self,
        task: &TaskId,
        marker: &RetentionMarker,
    ) -> Result<(), StoreError> {
        let path = self.layout.retention_marker(task);
        let bytes =
            serde_json::to_vec_pretty(marker).map_err(|e| StoreError::Index(e.to_string()))?;
        if let Some(dir) = path.parent() {
            disk::create_dir_all(dir).map_err(|e| io_err("creating", dir, &e))?;
        }
        disk::write_atomic_synced(&path, &bytes).map_err(|e| io_err("writing", &path, &e))
    }

    /// Removes a task's records from the indexes of `paths` (every path the
    /// task's records name): each file is replaced atomically, once, a
    /// one-path file of an earlier version keeping its header. A file left
    /// with no record is removed, one in the folder form with its folder.
    pub fn remove_task_from_path_indexes<'a>(
        &self,
        paths: impl IntoIterator<Item = &'a NormalizedPath>,
        task: &TaskId,
    ) -> Result<(), StoreError> {
        self.checkpoint()?;
        let mut files: std::collections::BTreeMap<PathBuf, &NormalizedPath> =
            std::collections::BTreeMap::new();
        for path in paths {
            files.entry(self.path_index_file(path)).or_insert(path);
        }
        for (file, path) in files {
            let records = self.read_path_index(&file)?;
            let kept: Vec<&EditSnapshot> = records.iter().filter(|r| r.task_id() != task).collect();
            if kept.len() == records.len() {
                continue;
            }
            if kept.is_empty() {
                disk::remove_file(&file).map_err(|e| io_err("removing", &file, &e))?;
                if file == self.layout.folder_path_index(&path.key())
                    && let Some(dir) = file.parent()
                {
                    disk::remove_empty_dir(dir).map_err(|e| io_err("removing", dir, &e))?;
                }
                continue;
            }
            let mut text = String::new();
            if !is_shard(&file) {
                text = serde_json::to_string(&PathIndexHeader { path: path.clone() })
                    .map_err(|e| StoreError::Index(e.to_string()))?;
                text.push('\n');
            }
            for r in kept {
                text.push_str(
                    &serde_json::to_string(r).map_err(|e| StoreError::Index(e.to_string()))?,
                );
                text.push('\n');
            }
            disk::write_atomic_synced(&file, text.as_bytes())
                .map_err(|e| io_err("rewriting", &file, &e))?;
        }
        Ok(())
    }

    /// Removes the lines of records that did not happen from every index
    /// that lists them (recovery: an operation's index appends can reach
    /// the disk before its rename did). Each file that holds one is
    /// replaced atomically with its other lines as they were; a file that
    /// holds none is not touched. Returns the lines removed.
    pub fn remove_unhappened(&self, records: &[EditSnapshot]) -> Result<usize, StoreError> {
        self.checkpoint()?;
        let ids: HashSet<&SnapshotId> = records.iter().map(EditSnapshot::snapshot_id).collect();
        let mut files = std::collections::BTreeSet::new();
        for r in records {
            files.insert(self.layout.task_index(r.task_id()));
            for p in record_paths(r) {
                files.insert(self.path_index_file(p));
            }
        }
        let mut removed = 0;
        for file in files {
            let text = match fs::read_to_string(&file) {
                Ok(t) => t,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err("reading index", &file, &e)),
            };
            let mut kept = String::with_capacity(text.len());
            let mut dropped = 0;
            for line in text.split_inclusive('\n') {
                let names_one = ids.iter().any(|id| line.contains(id.as_str()))
                    && serde_json::from_str::<EditSnapshot>(line.trim_end())
                        .is_ok_and(|r| ids.contains(r.snapshot_id()));
                if names_one {
                    dropped += 1;
                } else {
                    kept.push_str(line);
                }
            }
            if dropped > 0 {
                disk::write_atomic_synced(&file, kept.as_bytes())
                    .map_err(|e| io_err("rewriting", &file, &e))?;
                removed += dropped;
            }
        }
        Ok(removed)
    }

    /// Removes a task's snapshot index (its `task.json` and marker stay).
    pub fn remove_task_index(&self, task: &TaskId) -> Result<(), StoreError> {
        self.checkpoint()?;
        let file = self.layout.task_index(task);
        disk::remove_file(&file).map_err(|e| io_err("removing", &file, &e))
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

    /// Bytes under `history/`: blobs, indexes, journals and markers (the
    /// held blobs count as their journals carry them).
    pub fn history_bytes(&self) -> u64 {
        fn walk(dir: &Path) -> u64 {
            let Ok(entries) = fs::read_dir(dir) else {
                return 0;
            };
            entries
                .filter_map(Result::ok)
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => walk(&e.path()),
                    Ok(_) => e.metadata().map_or(0, |m| m.len()),
                    Err(_) => 0,
                })
                .sum()
        }
        walk(&self.layout.history_dir())
    }

    // ---- config -----------------------------------------------------------

    /// Writes `workspace.json` (synced; the old file stays until the new one is complete).
    pub fn save_config(&self, config: &WorkspaceConfig) -> Result<(), StoreError> {
        let path = self.layout.config_file();
        let bytes = config_bytes(config)?;
        disk::write_atomic_synced(&path, &bytes).map_err(|e| io_err("writing config", &path, &e))
    }

    /// Writes a small state file under `.cocode/` (lease set, markers).
    pub fn write_state_file(&self, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        if !path.starts_with(self.layout.cocode_dir()) {
            return Err(StoreError::Io {
                message: format!("state files live under .cocode/ ({})", path.display()),
                kind: None,
            });
        }
        if let Some(dir) = path.parent() {
            disk::create_dir_all(dir).map_err(|e| io_err("creating", dir, &e))?;
        }
        disk::write_atomic_synced(path, bytes).map_err(|e| io_err("writing", path, &e))
    }

    /// Removes a state file written by [`Self::write_state_file`]; an
    /// absent one is not an error.
    pub fn remove_state(&self, path: &Path) -> Result<(), StoreError> {
        if !path.starts_with(self.layout.cocode_dir()) {
            return Err(StoreError::Io {
                message: format!("state files live under .cocode/ ({})", path.display()),
                kind: None,
            });
        }
        Self::remove_state_file(path)
    }

    /// Writes `locks/edit_locks.json` (not synced: it is read only after a
    /// crash, for post-mortem, and discarded at the next start).
    pub fn write_lease_file(&self, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.layout.edit_locks_file();
        if let Some(dir) = path.parent() {
            disk::create_dir_all(dir).map_err(|e| io_err("creating", dir, &e))?;
        }
        disk::write_atomic(&path, bytes).map_err(|e| io_err("writing", &path, &e))
    }

    /// Removes a probe or state file under `.cocode/`.
    pub(crate) fn remove_state_file(path: &Path) -> Result<(), StoreError> {
        disk::remove_file(path).map_err(|e| io_err("removing", path, &e))
    }

    /// Creates an empty file that must not exist (the case probe).
    pub(crate) fn create_probe(path: &Path) -> Result<(), StoreError> {
        disk::create_new_empty(path).map_err(|e| io_err("creating probe", path, &e))
    }
}

/// The index paths a record belongs to.
pub(crate) fn record_paths(r: &EditSnapshot) -> Vec<&NormalizedPath> {
    let mut paths = vec![r.path()];
    if let Some(prev) = r.previous_path() {
        paths.push(prev);
    }
    paths
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("listing", dir, &e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        out.push(entry.map_err(|e| io_err("listing", dir, &e))?.path());
    }
    out.sort();
    Ok(out)
}

/// Reads a JSONL index. A final line without its newline is a torn append and
/// is ignored (recovery cuts it); any other unreadable line is an error.
/// Adds the held records an index on disk does not list yet (a checkpoint
/// that failed part way can have appended some of them).
fn with_held(records: &mut Vec<EditSnapshot>, held: Vec<EditSnapshot>) {
    if held.is_empty() {
        return;
    }
    let listed: HashSet<SnapshotId> = records.iter().map(|r| r.snapshot_id().clone()).collect();
    records.extend(
        held.into_iter()
            .filter(|r| !listed.contains(r.snapshot_id())),
    );
}

fn read_jsonl(path: &Path, with_header: bool) -> Result<Vec<EditSnapshot>, StoreError> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("reading index", path, &e)),
    };
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut out = Vec::new();
    for (n, line) in complete.lines().enumerate() {
        if with_header && n == 0 {
            serde_json::from_str::<PathIndexHeader>(line)
                .map_err(|e| StoreError::Index(format!("{}: bad header: {e}", path.display())))?;
            continue;
        }
        out.push(
            serde_json::from_str(line).map_err(|e| {
                StoreError::Index(format!("{} line {}: {e}", path.display(), n + 1))
            })?,
        );
    }
    Ok(out)
}

impl SnapshotStore for HistoryStore {
    fn snapshots_of_task(&self, task: &TaskId) -> Result<Vec<EditSnapshot>, StoreError> {
        HistoryStore::snapshots_of_task(self, task)
    }

    fn last_snapshot_of_path(
        &self,
        path: &NormalizedPath,
    ) -> Result<Option<EditSnapshot>, StoreError> {
        HistoryStore::last_snapshot_of_path(self, path)
    }

    fn read_blob(&self, hash: &ContentHash) -> Result<Vec<u8>, StoreError> {
        HistoryStore::read_blob(self, hash)
    }

    fn diff_between(
        &self,
        path: &NormalizedPath,
        before: Option<&ContentHash>,
        after: Option<&ContentHash>,
    ) -> Result<String, StoreError> {
        let load = |h: Option<&ContentHash>| h.map(|h| self.read_blob(h)).transpose();
        Ok(crate::diff::unified(
            path,
            None,
            load(before)?.as_deref(),
            load(after)?.as_deref(),
        ))
    }
}

/// The bytes of `workspace.json` for `config` (the one place its format is
/// written; a new workspace made from a brick starts with it too).
pub fn config_bytes(config: &WorkspaceConfig) -> Result<Vec<u8>, StoreError> {
    let mut bytes =
        serde_json::to_vec_pretty(config).map_err(|e| StoreError::Index(e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
}
