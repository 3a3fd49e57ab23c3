//! The indexes: each task's JSONL index and the path indexes kept in
//! shards (or, from earlier versions, a file per path); appending,
//! reading, repairing and removing their lines.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use cocode_core::gate::StoreError;
use cocode_core::ids::{SnapshotId, TaskId};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::EditSnapshot;

use super::files::{io_err, is_shard, read_dir_sorted, read_jsonl, record_paths, with_held};
use super::format::PathIndexHeader;
use super::history::HistoryStore;
use crate::disk;

impl HistoryStore {
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
    pub(super) fn append_missing_on_disk(
        &self,
        records: &[EditSnapshot],
    ) -> Result<(), StoreError> {
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

    pub(super) fn append_filtered(
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
    ///
    /// [`Layout::path_index_shard`]: crate::layout::Layout::path_index_shard
    /// [`Layout::path_index`]: crate::layout::Layout::path_index
    /// [`Layout::folder_path_index`]: crate::layout::Layout::folder_path_index
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
}
