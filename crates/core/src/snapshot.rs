//! `EditSnapshot`: the record stored before any agent edit touches a file.
//!
//! `base`/`result` are content hashes or *absent* (no regular file at that
//! path — different from the empty file's hash). The kind of a snapshot is
//! derived from its fields, never stored, and impossible shapes (∅→∅, a
//! rename whose content changes) cannot be constructed or deserialized.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::hex::hex;
use crate::ids::{AttemptNo, Seq, SnapshotId, TaskId, Timestamp};
use crate::path::NormalizedPath;

const HASH_PREFIX: &str = "sha256:";

/// sha256 of a file's content, written `sha256:<64 lower-case hex digits>`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ContentHash([u8; 32]);

/// A malformed `sha256:<hex>` text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("content hash must be 'sha256:' followed by 64 lower-case hex digits")]
pub struct ContentHashError;

impl ContentHash {
    /// Hashes content.
    pub fn of(content: &[u8]) -> Self {
        Self(Sha256::digest(content).into())
    }

    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The 64 hex digits without the `sha256:` prefix (blob file names).
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

/// A [`ContentHash`] computed piece by piece, for content too large to
/// hold in memory at once.
#[derive(Debug, Clone, Default)]
pub struct ContentHasher(Sha256);

impl ContentHasher {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn update(&mut self, piece: &[u8]) {
        self.0.update(piece);
    }

    pub fn finish(self) -> ContentHash {
        ContentHash(self.0.finalize().into())
    }
}

impl std::str::FromStr for ContentHash {
    type Err = ContentHashError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let digits = text.strip_prefix(HASH_PREFIX).ok_or(ContentHashError)?;
        if digits.len() != 64
            || !digits
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(ContentHashError);
        }
        let mut out = [0u8; 32];
        for (i, pair) in digits.as_bytes().chunks_exact(2).enumerate() {
            let text = std::str::from_utf8(pair).map_err(|_| ContentHashError)?;
            out[i] = u8::from_str_radix(text, 16).map_err(|_| ContentHashError)?;
        }
        Ok(Self(out))
    }
}

impl TryFrom<String> for ContentHash {
    type Error = ContentHashError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<ContentHash> for String {
    fn from(hash: ContentHash) -> String {
        hash.to_string()
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{HASH_PREFIX}{}", hex(&self.0))
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentHash({self})")
    }
}

/// Who produced the change a snapshot records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotOrigin {
    /// Mediated by the gate before the file changed.
    Gate,
    /// Not mediated (a command's side effect, an agent writing directly) but
    /// found by the observed-change sweep and recorded afterwards.
    Observed,
    /// A person undid a hunk in review; recorded as the task's own change.
    Review,
    /// A person rolled the task back (to a snapshot, an attempt boundary or
    /// its start). The undo is recorded as the task's own change, so a later
    /// rollback and the conflict checks see the state it left.
    Rollback,
    /// Written by a verification command of the task (a test that writes a
    /// file), found by the sweep around verification.
    Verification,
}

/// The derived kind of a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotKind {
    Create,
    Modify,
    Delete,
    Rename,
}

/// One path's before/after state. A rename projects into two of these.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PathTransition {
    pub path: NormalizedPath,
    pub before: Option<ContentHash>,
    pub after: Option<ContentHash>,
}

/// Which sides of a change are recorded by hash only: their content was
/// above the workspace's ceiling for kept content, so history holds no
/// copy of it. A rollback that would need such content is refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Unkept {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub base: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub result: bool,
}

impl Unkept {
    /// Both sides kept (the usual case).
    pub const NONE: Self = Self {
        base: false,
        result: false,
    };

    pub const fn is_none(&self) -> bool {
        !self.base && !self.result
    }
}

/// What a side of a change is beside its content, when it is not a plain
/// regular file. The sweep records folders, symbolic links, FIFOs, sockets
/// and device nodes, and the executable and set-id bits of files (`rsync
/// -a`'s "the same tree", without owners and times).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Form {
    /// A regular file with some of the bits `0o7111` set (executable,
    /// setuid, setgid, sticky): those bits.
    File { mode: u32 },
    /// A symbolic link: its content is the link's target; never followed.
    Symlink,
    /// A folder (its content is nothing: what it holds is recorded on its
    /// own). A rollback makes one a task removed and removes one it made.
    Folder,
    /// A FIFO: no content; never opened.
    Fifo,
    /// A socket or a device node: recorded as present, never read; a
    /// rollback removes one, and never makes one.
    Special,
}

impl Form {
    /// The bits of a file's mode a form keeps.
    pub const MODE_BITS: u32 = 0o7111;

    /// The form of a regular file with `mode`: none for a plain one.
    pub fn of_file_mode(mode: u32) -> Option<Self> {
        let bits = mode & Self::MODE_BITS;
        (bits != 0).then_some(Self::File { mode: bits })
    }

    /// In words, for people ("a link", "executable").
    pub fn phrase(self) -> String {
        match self {
            Self::File { mode } if mode & 0o6000 != 0 => format!("set-id file, mode bits {mode:o}"),
            Self::File { .. } => "executable".to_owned(),
            Self::Symlink => "a link".to_owned(),
            Self::Folder => "a folder".to_owned(),
            Self::Fifo => "a FIFO".to_owned(),
            Self::Special => "a socket or device".to_owned(),
        }
    }
}

/// The forms of a change's two sides. `None` is a plain regular file (in
/// records the gate made: a regular file whose bits were not looked at).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Forms {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Form>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Form>,
}

impl Forms {
    /// Both sides plain files (the usual case).
    pub const NONE: Self = Self {
        base: None,
        result: None,
    };

    pub const fn is_none(&self) -> bool {
        self.base.is_none() && self.result.is_none()
    }
}

/// Why a snapshot cannot exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotInvalid {
    #[error("a snapshot from absent to absent records nothing")]
    AbsentToAbsent,
    #[error("a rename must keep its content (base equal to result, both present)")]
    RenameChangesContent,
    #[error("a rename must move to a different path")]
    RenameOntoItself,
    #[error("a modification must change the content")]
    Unchanged,
    #[error("only present content can be marked as too large to keep")]
    UnkeptAbsent,
    #[error("only a present side can have a form")]
    FormAbsent,
}

/// The fields of a snapshot, checked by [`EditSnapshot::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditSnapshotParts {
    pub snapshot_id: SnapshotId,
    pub task_id: TaskId,
    pub seq: Seq,
    pub attempt_no: AttemptNo,
    pub path: NormalizedPath,
    pub previous_path: Option<NormalizedPath>,
    pub base: Option<ContentHash>,
    pub result: Option<ContentHash>,
    /// Sides recorded by hash only (too large to keep).
    pub unkept: Unkept,
    /// What each side is when it is not a plain regular file.
    pub forms: Forms,
    pub origin: SnapshotOrigin,
    pub ts: Timestamp,
}

/// A recorded change of one path (or one rename) by one task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "EditSnapshotWire", into = "EditSnapshotWire")]
pub struct EditSnapshot(EditSnapshotParts);

/// The persisted shape; `base`/`result` are always present as keys, `null`
/// meaning absent.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EditSnapshotWire {
    snapshot_id: SnapshotId,
    task_id: TaskId,
    seq: Seq,
    attempt_no: AttemptNo,
    path: NormalizedPath,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    previous_path: Option<NormalizedPath>,
    #[serde(deserialize_with = "required_nullable")]
    base: Option<ContentHash>,
    #[serde(deserialize_with = "required_nullable")]
    result: Option<ContentHash>,
    #[serde(default, skip_serializing_if = "Unkept::is_none")]
    unkept: Unkept,
    #[serde(default, skip_serializing_if = "Forms::is_none")]
    forms: Forms,
    origin: SnapshotOrigin,
    ts: Timestamp,
}

/// Deserializes an `Option` whose key must be present: `null` is absent
/// content, a missing key is a malformed record (serde would otherwise read
/// a missing key as `None`).
fn required_nullable<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

impl TryFrom<EditSnapshotWire> for EditSnapshot {
    type Error = SnapshotInvalid;
    fn try_from(w: EditSnapshotWire) -> Result<Self, Self::Error> {
        EditSnapshot::new(EditSnapshotParts {
            snapshot_id: w.snapshot_id,
            task_id: w.task_id,
            seq: w.seq,
            attempt_no: w.attempt_no,
            path: w.path,
            previous_path: w.previous_path,
            base: w.base,
            result: w.result,
            unkept: w.unkept,
            forms: w.forms,
            origin: w.origin,
            ts: w.ts,
        })
    }
}

impl From<EditSnapshot> for EditSnapshotWire {
    fn from(s: EditSnapshot) -> Self {
        let p = s.0;
        EditSnapshotWire {
            snapshot_id: p.snapshot_id,
            task_id: p.task_id,
            seq: p.seq,
            attempt_no: p.attempt_no,
            path: p.path,
            previous_path: p.previous_path,
            base: p.base,
            result: p.result,
            unkept: p.unkept,
            forms: p.forms,
            origin: p.origin,
            ts: p.ts,
        }
    }
}

impl EditSnapshot {
    /// Checks the shape rules and builds the snapshot.
    pub fn new(parts: EditSnapshotParts) -> Result<Self, SnapshotInvalid> {
        if (parts.unkept.base && parts.base.is_none())
            || (parts.unkept.result && parts.result.is_none())
        {
            return Err(SnapshotInvalid::UnkeptAbsent);
        }
        if (parts.forms.base.is_some() && parts.base.is_none())
            || (parts.forms.result.is_some() && parts.result.is_none())
        {
            return Err(SnapshotInvalid::FormAbsent);
        }
        let same_form = parts.forms.base == parts.forms.result;
        match (&parts.previous_path, parts.base, parts.result) {
            (_, None, None) => Err(SnapshotInvalid::AbsentToAbsent),
            (Some(prev), Some(base), Some(result)) if base == result && same_form => {
                if *prev == parts.path {
                    Err(SnapshotInvalid::RenameOntoItself)
                } else {
                    Ok(Self(parts))
                }
            }
            (Some(_), _, _) => Err(SnapshotInvalid::RenameChangesContent),
            (None, Some(base), Some(result)) if base == result && same_form => {
                Err(SnapshotInvalid::Unchanged)
            }
            (None, _, _) => Ok(Self(parts)),
        }
    }

    pub fn kind(&self) -> SnapshotKind {
        match (&self.0.previous_path, self.0.base, self.0.result) {
            (Some(_), _, _) => SnapshotKind::Rename,
            (None, None, Some(_)) => SnapshotKind::Create,
            (None, Some(_), None) => SnapshotKind::Delete,
            (None, _, _) => SnapshotKind::Modify,
        }
    }

    /// The per-path transitions this snapshot stands for. A rename is the
    /// old path going H→∅ and the new path going ∅→H; rollback, conflict
    /// checks and test-file protection all work on this projection.
    pub fn transitions(&self) -> Vec<PathTransition> {
        let p = &self.0;
        match &p.previous_path {
            Some(prev) => vec![
                PathTransition {
                    path: prev.clone(),
                    before: p.base,
                    after: None,
                },
                PathTransition {
                    path: p.path.clone(),
                    before: None,
                    after: p.result,
                },
            ],
            None => vec![PathTransition {
                path: p.path.clone(),
                before: p.base,
                after: p.result,
            }],
        }
    }

    pub fn parts(&self) -> &EditSnapshotParts {
        &self.0
    }
    pub fn snapshot_id(&self) -> &SnapshotId {
        &self.0.snapshot_id
    }
    pub fn task_id(&self) -> &TaskId {
        &self.0.task_id
    }
    pub fn seq(&self) -> Seq {
        self.0.seq
    }
    pub fn attempt_no(&self) -> AttemptNo {
        self.0.attempt_no
    }
    pub fn path(&self) -> &NormalizedPath {
        &self.0.path
    }
    pub fn previous_path(&self) -> Option<&NormalizedPath> {
        self.0.previous_path.as_ref()
    }
    pub fn base(&self) -> Option<ContentHash> {
        self.0.base
    }
    pub fn result(&self) -> Option<ContentHash> {
        self.0.result
    }
    pub fn origin(&self) -> SnapshotOrigin {
        self.0.origin
    }
    pub fn unkept(&self) -> Unkept {
        self.0.unkept
    }
    pub fn forms(&self) -> Forms {
        self.0.forms
    }
    /// The content hashes history holds a copy of (every present side not
    /// marked too large to keep).
    pub fn kept_hashes(&self) -> impl Iterator<Item = ContentHash> {
        let u = self.0.unkept;
        [(self.0.base, u.base), (self.0.result, u.result)]
            .into_iter()
            .filter_map(|(hash, unkept)| hash.filter(|_| !unkept))
    }
    pub fn ts(&self) -> Timestamp {
        self.0.ts
    }
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
