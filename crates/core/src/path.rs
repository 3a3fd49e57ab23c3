//! Workspace-relative path normalization and path keys.
//!
//! Every path an agent, a tool or a record names is normalized here before
//! anything else looks at it. Invalid input is refused with
//! `WORKSPACE_PATH_INVALID` and a typed reason — it is never silently
//! rewritten into a different path.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;

use crate::error::WorkspaceErrorCode;

/// Name of the workspace's own state folder at the workspace root.
pub const COCODE_DIR: &str = ".cocode";

/// Whether a folder name is the workspace's `.cocode`, in any spelling:
/// compared after NFKC and lower-casing whatever the volume does, so
/// `.COCODE` or a full-width `．cocode` counts too.
pub fn is_cocode_name(name: &str) -> bool {
    let folded: String = name.nfkc().collect::<String>().to_lowercase();
    folded == COCODE_DIR
}

/// The metadata folders of version-control systems. A hook or a
/// configuration written there (`core.fsmonitor`, a filter driver) runs
/// later in the person's own `git status`, outside any sandbox, so agents
/// write none of them, at any depth.
pub const VERSION_CONTROL_METADATA: [&str; 5] = [".git", ".hg", ".svn", ".jj", ".bzr"];

/// Whether `name` is one of [`VERSION_CONTROL_METADATA`], compared as
/// [`is_cocode_name`] compares (case- and Unicode-insensitively).
pub fn is_version_control_name(name: &str) -> bool {
    // A name in ASCII is its own NFKC form: compared without folding it
    // (the sweep asks this of every name it lists).
    if name.is_ascii() {
        return VERSION_CONTROL_METADATA
            .iter()
            .any(|m| m.eq_ignore_ascii_case(name));
    }
    let folded: String = name.nfkc().collect::<String>().to_lowercase();
    VERSION_CONTROL_METADATA.contains(&folded.as_str())
}

/// Bytes inspected for a NUL byte by [`looks_binary`].
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// The one "is binary" rule: a NUL byte in the first 8 KiB. Text that is
/// not UTF-8 is a separate question each reader answers for itself.
pub fn looks_binary(bytes: &[u8]) -> bool {
    // `contains` on bytes is a `memchr`, many bytes a step.
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// Whether the workspace volume folds case. Measured once when the workspace
/// opens (by probing the volume), never assumed from the platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseSensitivity {
    Sensitive,
    Insensitive,
}

/// Whether the workspace volume treats names that differ only in Unicode
/// normalization (`é` composed, NFC, and `e` + U+0301, NFD) as one name.
/// Measured once when the workspace opens, like the case rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnicodeSensitivity {
    /// Two spellings are two files (ext4, btrfs, NTFS): a path keeps the
    /// form it was given, so each of two twins is reached by its own name.
    Sensitive,
    /// The volume folds normalization (APFS, HFS+): paths compose to NFC.
    Insensitive,
}

impl UnicodeSensitivity {
    /// What the platform's usual volumes do, for callers with no workspace
    /// to measure (macOS folds; Linux and Windows do not).
    pub const fn native() -> Self {
        if cfg!(target_os = "macos") {
            Self::Insensitive
        } else {
            Self::Sensitive
        }
    }
}

/// Which file-name rules apply on top of the portable ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathStyle {
    /// Unix-like systems: any byte but `/` and NUL may appear in a name.
    Posix,
    /// Windows: reserved device names (`CON`, `NUL`, `COM1`, …), the
    /// characters `<>:"|?*`, control characters, and names ending in a dot or
    /// a space are refused because the OS would open something else.
    Windows,
}

impl PathStyle {
    /// The style of the platform this binary was built for.
    pub const fn native() -> Self {
        if cfg!(windows) {
            Self::Windows
        } else {
            Self::Posix
        }
    }
}

/// Options of one normalization: the measured case behaviour and the name rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NormalizeOptions {
    pub case: CaseSensitivity,
    pub unicode: UnicodeSensitivity,
    pub style: PathStyle,
}

impl NormalizeOptions {
    /// The platform's name rules with a measured case rule and the
    /// platform's usual Unicode rule.
    pub const fn native(case: CaseSensitivity) -> Self {
        Self::measured(case, UnicodeSensitivity::native())
    }

    /// The platform's name rules with both measured rules of a volume.
    pub const fn measured(case: CaseSensitivity, unicode: UnicodeSensitivity) -> Self {
        Self {
            case,
            unicode,
            style: PathStyle::native(),
        }
    }
}

/// Why a path was refused. Every reason maps to `WORKSPACE_PATH_INVALID`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathInvalid {
    #[error("path is empty")]
    Empty,
    #[error("path is absolute; a workspace-relative path is required")]
    Absolute,
    #[error("path contains a NUL character")]
    Nul,
    #[error("path contains a '..' segment")]
    ParentSegment,
    #[error("path segment {0:?} is a reserved device name on Windows")]
    WindowsReservedName(String),
    #[error("path segment {0:?} contains a character Windows does not allow in file names")]
    WindowsForbiddenChar(String),
    #[error("path segment {0:?} ends with a dot or a space, which Windows strips")]
    WindowsTrailingDotOrSpace(String),
    #[error("path is not in normalized form")]
    NotNormalized,
    #[error("path segment {0:?} spells bytes that are text as stand-ins for bytes")]
    NotCanonicalBytes(String),
}

impl PathInvalid {
    /// The stable error code shared by every reason.
    pub const fn code(&self) -> WorkspaceErrorCode {
        WorkspaceErrorCode::PathInvalid
    }
}

/// A normalized, workspace-relative path: `/`-separated, no empty, `.` or
/// `..` segments, composed to NFC when the volume folds Unicode forms, and
/// lower-cased when it folds case.
///
/// On a folding volume the path is its folded form (so two spellings of one
/// file are one path), and it also remembers the spelling it was given,
/// which names a file or folder that does not exist yet (an agent creating
/// `src/MyWidget.rs` gets exactly that name). Equality, ordering, hashing,
/// keys and persistence use the folded form only. On a volume that folds
/// neither, the path is the name as given: an NFC `café` and an NFD `café`
/// are two files there, and two paths here.
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct NormalizedPath {
    key: String,
    /// The spelling as given, when folding changed it.
    spelled: Option<Box<str>>,
}

impl PartialEq for NormalizedPath {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for NormalizedPath {}

impl std::hash::Hash for NormalizedPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

impl PartialOrd for NormalizedPath {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NormalizedPath {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

impl NormalizedPath {
    pub fn as_str(&self) -> &str {
        &self.key
    }

    /// Segments from the workspace root down.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.key.split('/')
    }

    /// The last segment.
    pub fn file_name(&self) -> &str {
        self.key.rsplit('/').next().unwrap_or(&self.key)
    }

    /// The path as it was given (only the case and the Unicode form can
    /// differ from [`Self::as_str`]; a path read back from a record has no
    /// other spelling).
    pub fn spelled(&self) -> &str {
        self.spelled.as_deref().unwrap_or(&self.key)
    }

    /// [`Self::spelled`] by segment; as many segments as [`Self::segments`].
    pub fn spelled_segments(&self) -> impl Iterator<Item = &str> {
        self.spelled().split('/')
    }

    /// True when `self` equals `other` or is a directory that contains it.
    /// Edit leases use this for their containment conflicts.
    pub fn contains(&self, other: &NormalizedPath) -> bool {
        other.key == self.key
            || (other.key.len() > self.key.len()
                && other.key.starts_with(&self.key)
                && other.key.as_bytes()[self.key.len()] == b'/')
    }

    /// True when the path lies in the workspace's own `.cocode/` folder (the
    /// root-level one only). Compared case- and Unicode-insensitively whatever
    /// the volume does, so `.COCODE/x` or a decomposed variant is refused too.
    pub fn is_in_cocode_dir(&self) -> bool {
        is_cocode_name(self.segments().next().unwrap_or_default())
    }

    /// True when a segment of the path, at any depth, is version-control
    /// metadata (`.git`, `vendor/x/.git/hooks/…`, `.hg`, …).
    pub fn is_in_version_control_metadata(&self) -> bool {
        self.segments().any(is_version_control_name)
    }

    /// The content-independent key of this path: sha256 of its normalized text.
    pub fn key(&self) -> PathKey {
        PathKey(Sha256::digest(self.key.as_bytes()).into())
    }
}

impl fmt::Display for NormalizedPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key)
    }
}

impl fmt::Debug for NormalizedPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NormalizedPath({:?})", self.key)
    }
}

impl TryFrom<String> for NormalizedPath {
    type Error = PathInvalid;

    /// Accepts only text that is already normalized (portable rules, no
    /// fold applied): persisted records are checked, never rewritten.
    fn try_from(value: String) -> Result<Self, Self::Error> {
        let normalized = normalize(
            &value,
            NormalizeOptions {
                case: CaseSensitivity::Sensitive,
                unicode: UnicodeSensitivity::Sensitive,
                style: PathStyle::Posix,
            },
        )?;
        if normalized.key == value {
            Ok(normalized)
        } else {
            Err(PathInvalid::NotNormalized)
        }
    }
}

impl From<NormalizedPath> for String {
    fn from(path: NormalizedPath) -> String {
        path.key
    }
}

/// `sha256(normalize(rel))`, used to name per-path history folders.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathKey([u8; 32]);

impl PathKey {
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    pub fn to_hex(&self) -> String {
        crate::hex::hex(&self.0)
    }
}

impl fmt::Display for PathKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for PathKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PathKey({})", self.to_hex())
    }
}

/// Normalizes a workspace-relative path.
pub fn normalize(rel: &str, options: NormalizeOptions) -> Result<NormalizedPath, PathInvalid> {
    // Most paths are plain ASCII already in their normal form: their own
    // NFC form, lower-cased by ASCII rules, canonical (no stand-in is
    // ASCII). They are taken as they are, with the same answer as below
    // (a property test holds the two ways together).
    if is_plain_ascii(rel) {
        let folded = match options.case {
            CaseSensitivity::Sensitive => rel.to_owned(),
            CaseSensitivity::Insensitive => rel.to_ascii_lowercase(),
        };
        let spelled = (folded != rel).then(|| rel.into());
        if options.style == PathStyle::Windows {
            for segment in rel.split('/') {
                check_windows_segment(segment)?;
            }
        }
        return Ok(NormalizedPath {
            key: folded,
            spelled,
        });
    }
    normalize_any(rel, options)
}

/// Whether `rel` is ASCII with nothing [`normalize`] would change or
/// refuse before folding: no NUL, no backslash, not absolute, and no empty,
/// `.` or `..` segment.
fn is_plain_ascii(rel: &str) -> bool {
    rel.is_ascii()
        && !rel.is_empty()
        && !rel.contains(['\0', '\\'])
        && !is_absolute(rel)
        && rel.split('/').all(|s| !matches!(s, "" | "." | ".."))
}

/// [`normalize`] of any text, step by step.
fn normalize_any(rel: &str, options: NormalizeOptions) -> Result<NormalizedPath, PathInvalid> {
    if rel.contains('\0') {
        return Err(PathInvalid::Nul);
    }
    if rel.is_empty() {
        return Err(PathInvalid::Empty);
    }
    let unified = rel.replace('\\', "/");
    if is_absolute(&unified) {
        return Err(PathInvalid::Absolute);
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in unified.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(PathInvalid::ParentSegment),
            other => segments.push(other),
        }
    }
    if segments.is_empty() {
        return Err(PathInvalid::Empty);
    }
    if let Some(bad) = segments.iter().find(|s| !crate::disk_name::is_canonical(s)) {
        return Err(PathInvalid::NotCanonicalBytes(
            crate::shown::line(bad).into_owned(),
        ));
    }
    let joined = segments.join("/");
    let folded = match (options.unicode, options.case) {
        (UnicodeSensitivity::Sensitive, CaseSensitivity::Sensitive) => joined.clone(),
        (UnicodeSensitivity::Sensitive, CaseSensitivity::Insensitive) => joined.to_lowercase(),
        (UnicodeSensitivity::Insensitive, CaseSensitivity::Sensitive) => joined.nfc().collect(),
        // Lower-casing can change the NFC form of a few characters; re-compose.
        (UnicodeSensitivity::Insensitive, CaseSensitivity::Insensitive) => joined
            .nfc()
            .collect::<String>()
            .to_lowercase()
            .nfc()
            .collect(),
    };
    let spelled = (folded != joined).then(|| joined.into_boxed_str());
    if options.style == PathStyle::Windows {
        for segment in spelled.as_deref().unwrap_or(&folded).split('/') {
            check_windows_segment(segment)?;
        }
    }
    Ok(NormalizedPath {
        key: folded,
        spelled,
    })
}

/// `sha256(normalize(rel))` as a free function, for callers holding raw text.
pub fn path_key(rel: &str, options: NormalizeOptions) -> Result<PathKey, PathInvalid> {
    normalize(rel, options).map(|p| p.key())
}

fn is_absolute(unified: &str) -> bool {
    if unified.starts_with('/') {
        return true;
    }
    // Drive letters (`C:`, `C:/x`, and drive-relative `C:x`) are absolute on
    // Windows and never a sensible workspace-relative name anywhere else.
    let bytes = unified.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

const WINDOWS_RESERVED: [&str; 22] = [
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

fn check_windows_segment(segment: &str) -> Result<(), PathInvalid> {
    if segment
        .chars()
        .any(|c| matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*') || c.is_control())
    {
        return Err(PathInvalid::WindowsForbiddenChar(segment.to_owned()));
    }
    if segment.ends_with('.') || segment.ends_with(' ') {
        return Err(PathInvalid::WindowsTrailingDotOrSpace(segment.to_owned()));
    }
    // `CON`, `con.txt`, `Con .txt`: the device name is whatever precedes the
    // first dot, with trailing spaces ignored by Windows.
    let stem = segment
        .split('.')
        .next()
        .unwrap_or(segment)
        .trim_end()
        .to_lowercase();
    if WINDOWS_RESERVED.contains(&stem.as_str()) {
        return Err(PathInvalid::WindowsReservedName(segment.to_owned()));
    }
    Ok(())
}

#[cfg(test)]
#[path = "path_tests.rs"]
mod tests;
