//! The stat cache's saved form (`.cocode/sweep.cache`, gzip around it).
//!
//! One entry per tracked file, in path order, each field coded against
//! the entry before it so that gzip finds little left to do:
//! - the path as the bytes it shares with the previous path and the rest;
//! - the size; a flags byte (racy, kept, which times are known, whether
//!   the change time equals the modification time, whether the hash is
//!   short);
//! - the modification time as nanoseconds from the previous entry's, the
//!   change time (when it differs) from the modification time, the inode
//!   from the previous entry's — all zigzag LEB128;
//! - the content's hash: whole, or its first [`SHORT`] bytes when the
//!   history packs that blob. Hashes are most of the file (they do not
//!   compress), and a packed blob is found again by that prefix in the
//!   pack index ([`Name::Short`]). A prefix the index does not resolve to
//!   exactly one blob (gone, or shared by two) drops the entry: that file
//!   is read again, nothing is trusted.
//!
//! - when the entry is not a plain regular file (flag [`FORM`]), its form:
//!   a code byte, and for a file with mode bits those bits (LEB128).
//!
//! The third form added the form; the second (`cocode stat cache 2`, the
//! same without it) and the first (fixed-width fields and whole hashes)
//! are still read.

use std::time::{Duration, SystemTime};

use cocode_core::snapshot::{ContentHash, Form};

use crate::sweep_entry::{Entry, Stat};
use crate::varint::{get, put};

/// Bytes of a packed blob's hash the saved form keeps (96 bits: two blobs
/// of one history share them with odds far below any disk's error rate,
/// and a shared prefix is noticed, not guessed).
pub(crate) const SHORT: usize = 12;

const MAGIC_V1: &[u8] = b"cocode stat cache 1\n";
const MAGIC_V2: &[u8] = b"cocode stat cache 2\n";
const MAGIC_V3: &[u8] = b"cocode stat cache 3\n";

const RACY: u8 = 1;
const KEPT: u8 = 2;
const MTIME: u8 = 4;
const CTIME: u8 = 8;
const CTIME_IS_MTIME: u8 = 16;
const SHORT_HASH: u8 = 32;
const FORM: u8 = 64;

/// The code byte of each form.
fn form_code(form: Form) -> u8 {
    match form {
        Form::File { .. } => 1,
        Form::Symlink => 2,
        Form::Folder => 3,
        Form::Fifo => 4,
        Form::Special => 5,
    }
}

const NANOS: i128 = 1_000_000_000;

/// How a saved entry names its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Name {
    Whole(ContentHash),
    Short([u8; SHORT]),
}

/// `entries` in the saved form; `short` says which hashes the history
/// packs (named by their prefix).
pub(crate) fn encode<'a>(
    entries: impl Iterator<Item = (&'a str, &'a Entry)>,
    short: &dyn Fn(&ContentHash) -> bool,
) -> Vec<u8> {
    let mut out = MAGIC_V3.to_vec();
    let mut prev_path: &[u8] = &[];
    let mut prev_mtime = 0i128;
    let mut prev_ino = 0i128;
    for (path, e) in entries {
        let path = path.as_bytes();
        let shared = path
            .iter()
            .zip(prev_path)
            .take_while(|(a, b)| a == b)
            .count();
        put(&mut out, shared as u128);
        put(&mut out, (path.len() - shared) as u128);
        out.extend_from_slice(&path[shared..]);
        prev_path = path;
        put(&mut out, u128::from(e.stat.len));
        let mtime = e.stat.mtime.and_then(nanos_of);
        let ctime = e
            .stat
            .ctime
            .map(|(secs, nanos)| i128::from(secs) * NANOS + i128::from(nanos));
        let is_short = e.kept && short(&e.hash);
        let mut flags = 0;
        for (on, bit) in [
            (e.racy, RACY),
            (e.kept, KEPT),
            (mtime.is_some(), MTIME),
            (ctime.is_some(), CTIME),
            (ctime.is_some() && ctime == mtime, CTIME_IS_MTIME),
            (is_short, SHORT_HASH),
            (e.form.is_some(), FORM),
        ] {
            if on {
                flags |= bit;
            }
        }
        out.push(flags);
        if let Some(mtime) = mtime {
            put(&mut out, zigzag(mtime - prev_mtime));
            prev_mtime = mtime;
        }
        if let Some(ctime) = ctime.filter(|c| Some(*c) != mtime) {
            put(&mut out, zigzag(ctime - mtime.unwrap_or(0)));
        }
        let ino = i128::from(e.stat.ino);
        put(&mut out, zigzag(ino - prev_ino));
        prev_ino = ino;
        let hash = e.hash.as_bytes();
        out.extend_from_slice(if is_short { &hash[..SHORT] } else { hash });
        if let Some(form) = e.form {
            out.push(form_code(form));
            if let Form::File { mode } = form {
                put(&mut out, u128::from(mode));
            }
        }
    }
    out
}

/// Calls `each` with every saved entry (the entry's hash is that of
/// [`Name::Whole`], and zero for a short one, which the caller resolves).
/// `None` for bytes that are not a whole saved form (nothing should be
/// taken then).
pub(crate) fn decode(bytes: &[u8], mut each: impl FnMut(String, Entry, Name)) -> Option<()> {
    if let Some(rest) = bytes.strip_prefix(MAGIC_V1) {
        let mut rest = rest;
        while !rest.is_empty() {
            let (path, entry, tail) = decode_v1(rest)?;
            rest = tail;
            each(path.to_owned(), entry, Name::Whole(entry.hash));
        }
        return Some(());
    }
    // The second form is the third without forms (no entry has the flag).
    let mut b = bytes
        .strip_prefix(MAGIC_V3)
        .or_else(|| bytes.strip_prefix(MAGIC_V2))?;
    let mut prev_path: Vec<u8> = Vec::new();
    let mut prev_mtime = 0i128;
    let mut prev_ino = 0i128;
    while !b.is_empty() {
        let shared = usize::try_from(get(&mut b)?).ok()?;
        let rest = usize::try_from(get(&mut b)?).ok()?;
        let (suffix, tail) = b.split_at_checked(rest)?;
        b = tail;
        let mut path = prev_path.get(..shared)?.to_vec();
        path.extend_from_slice(suffix);
        let len = u64::try_from(get(&mut b)?).ok()?;
        let (&flags, tail) = b.split_first()?;
        b = tail;
        let mtime = if flags & MTIME != 0 {
            prev_mtime = prev_mtime.checked_add(unzigzag(get(&mut b)?))?;
            Some(prev_mtime)
        } else {
            None
        };
        let ctime = match (flags & CTIME != 0, flags & CTIME_IS_MTIME != 0) {
            (false, _) => None,
            (true, true) => Some(mtime?),
            (true, false) => Some(mtime.unwrap_or(0).checked_add(unzigzag(get(&mut b)?))?),
        };
        prev_ino = prev_ino.checked_add(unzigzag(get(&mut b)?))?;
        let (name, hash) = if flags & SHORT_HASH != 0 {
            let (head, tail) = b.split_first_chunk::<SHORT>()?;
            b = tail;
            (Name::Short(*head), ContentHash::from_bytes([0; 32]))
        } else {
            let (head, tail) = b.split_first_chunk::<32>()?;
            b = tail;
            let hash = ContentHash::from_bytes(*head);
            (Name::Whole(hash), hash)
        };
        let form = if flags & FORM == 0 {
            None
        } else {
            let (&code, tail) = b.split_first()?;
            b = tail;
            Some(match code {
                1 => Form::File {
                    mode: u32::try_from(get(&mut b)?).ok()? & Form::MODE_BITS,
                },
                2 => Form::Symlink,
                3 => Form::Folder,
                4 => Form::Fifo,
                5 => Form::Special,
                _ => return None,
            })
        };
        let entry = Entry {
            stat: Stat {
                len,
                mtime: match mtime {
                    Some(ns) => Some(time_of(ns)?),
                    None => None,
                },
                ctime: match ctime {
                    Some(ns) => Some((
                        i64::try_from(ns.div_euclid(NANOS)).ok()?,
                        i64::try_from(ns.rem_euclid(NANOS)).ok()?,
                    )),
                    None => None,
                },
                ino: u64::try_from(prev_ino).ok()?,
            },
            hash,
            racy: flags & RACY != 0,
            kept: flags & KEPT != 0,
            form,
        };
        let text = String::from_utf8(path).ok()?;
        prev_path = text.as_bytes().to_vec();
        each(text, entry, name);
    }
    Some(())
}

const DELTA_MAGIC: &[u8] = b"cocode stat delta 1\n";

/// A delta of the stat cache: the paths gone (each as its length and
/// bytes), then the entries changed or new in the saved form ([`encode`],
/// whole hashes).
pub(crate) fn encode_delta<'a>(
    changed: impl Iterator<Item = (&'a str, &'a Entry)>,
    gone: &[&str],
) -> Vec<u8> {
    let mut out = DELTA_MAGIC.to_vec();
    put(&mut out, gone.len() as u128);
    for path in gone {
        put(&mut out, path.len() as u128);
        out.extend_from_slice(path.as_bytes());
    }
    out.extend(encode(changed, &|_| false));
    out
}

/// Reads a delta ([`encode_delta`]): calls `each` with every changed entry
/// and returns the paths gone; `None` for bytes that are not a whole delta.
pub(crate) fn decode_delta(
    bytes: &[u8],
    mut each: impl FnMut(String, Entry),
) -> Option<Vec<String>> {
    let mut b = bytes.strip_prefix(DELTA_MAGIC)?;
    let count = usize::try_from(get(&mut b)?).ok()?;
    let mut gone = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let len = usize::try_from(get(&mut b)?).ok()?;
        let (path, tail) = b.split_at_checked(len)?;
        b = tail;
        gone.push(String::from_utf8(path.to_vec()).ok()?);
    }
    decode(b, |path, entry, _| each(path, entry))?;
    Some(gone)
}

fn nanos_of(time: SystemTime) -> Option<i128> {
    let since = time.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    i128::try_from(since.as_nanos()).ok()
}

fn time_of(nanos: i128) -> Option<SystemTime> {
    let secs = u64::try_from(nanos.div_euclid(NANOS)).ok()?;
    let sub = u32::try_from(nanos.rem_euclid(NANOS)).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, sub))
}

fn zigzag(x: i128) -> u128 {
    // The sign moves to the lowest bit.
    (x << 1).cast_unsigned() ^ (x >> 127).cast_unsigned()
}

fn unzigzag(x: u128) -> i128 {
    (x >> 1).cast_signed() ^ -(x & 1).cast_signed()
}

/// One entry of the first form and what follows it.
fn decode_v1(bytes: &[u8]) -> Option<(&str, Entry, &[u8])> {
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
    let mtime =
        mtime_known.then(|| SystemTime::UNIX_EPOCH + Duration::new(secs, nanos.min(999_999_999)));
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
        form: None,
    };
    Some((name, entry, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: u8, mtime: Option<(u64, u32)>, ctime: Option<(i64, i64)>) -> Entry {
        Entry {
            stat: Stat {
                len: u64::from(n) * 1000,
                mtime: mtime.map(|(s, ns)| SystemTime::UNIX_EPOCH + Duration::new(s, ns)),
                ctime,
                ino: 1_000_000 - u64::from(n) * 7,
            },
            hash: ContentHash::of(&[n]),
            racy: n.is_multiple_of(2),
            kept: !n.is_multiple_of(3),
            form: match n % 4 {
                0 => Some(Form::File {
                    mode: 0o4755 & Form::MODE_BITS,
                }),
                1 => None,
                2 => Some(Form::Symlink),
                _ => Some(Form::Fifo),
            },
        }
    }

    fn sample() -> Vec<(String, Entry)> {
        vec![
            (
                "a.txt".into(),
                entry(1, Some((1_700_000_000, 5)), Some((1_700_000_000, 5))),
            ),
            (
                "a/b/c.txt".into(),
                entry(
                    2,
                    Some((1_600_000_000, 999_999_999)),
                    Some((1_800_000_000, 0)),
                ),
            ),
            ("a/b/d.txt".into(), entry(3, None, Some((-5, 3)))),
            ("a/b/dé.txt".into(), entry(4, Some((0, 0)), None)),
            ("a/b/dê.txt".into(), entry(5, None, None)),
            (
                "한글/파일.rs".into(),
                entry(
                    6,
                    Some((u64::from(u32::MAX) * 4, 1)),
                    Some((i64::MAX / 2, 999)),
                ),
            ),
        ]
    }

    fn round_trip(short: &dyn Fn(&ContentHash) -> bool) -> (Vec<u8>, Vec<(String, Entry, Name)>) {
        let entries = sample();
        let bytes = encode(entries.iter().map(|(p, e)| (p.as_str(), e)), short);
        let mut back = Vec::new();
        decode(&bytes, |p, e, n| back.push((p, e, n))).unwrap();
        (bytes, back)
    }

    #[test]
    fn entries_read_back_whole_with_whole_hashes() {
        let (_, back) = round_trip(&|_| false);
        let expected: Vec<(String, Entry, Name)> = sample()
            .into_iter()
            .map(|(p, e)| (p, e, Name::Whole(e.hash)))
            .collect();
        assert_eq!(back, expected);
    }

    #[test]
    fn a_packed_blob_is_named_by_its_prefix_and_an_unkept_one_whole() {
        let (bytes, back) = round_trip(&|_| true);
        let (_, whole) = round_trip(&|_| false);
        for ((p, e, n), (_, original)) in back.iter().zip(sample()) {
            let mut prefix = [0; SHORT];
            prefix.copy_from_slice(&original.hash.as_bytes()[..SHORT]);
            if original.kept {
                assert_eq!(*n, Name::Short(prefix), "{p}");
                assert_eq!(e.stat, original.stat, "{p}");
            } else {
                assert_eq!(*n, Name::Whole(original.hash), "{p}: not in history");
            }
        }
        let kept = sample().iter().filter(|(_, e)| e.kept).count();
        let whole_bytes = encode(sample().iter().map(|(p, e)| (p.as_str(), e)), &|_| false);
        assert_eq!(whole_bytes.len() - bytes.len(), kept * (32 - SHORT));
        assert_eq!(whole.len(), back.len());
    }

    #[test]
    fn every_cut_or_damaged_form_is_refused_not_half_taken() {
        let (bytes, _) = round_trip(&|_| true);
        for cut in 0..bytes.len() - 1 {
            let mut n = 0;
            let whole = decode(&bytes[..cut], |_, _, _| n += 1);
            // A cut at an entry's end reads as a shorter whole form; the
            // caller keeps no entry from a form that fails.
            if whole.is_some() {
                assert!(n < sample().len(), "{cut}");
            }
        }
        assert_eq!(decode(b"cocode stat cache 4\n", |_, _, _| ()), None);
        // A form code no writer made.
        let mut unknown = MAGIC_V3.to_vec();
        unknown.extend_from_slice(&[0, 1, b'x', 0, FORM, 0]);
        unknown.extend_from_slice(&[0; 32]);
        unknown.push(9);
        assert_eq!(decode(&unknown, |_, _, _| ()), None);
        // A path sharing more bytes than the previous path has.
        let mut bad = MAGIC_V2.to_vec();
        bad.extend_from_slice(&[5, 1, b'x']);
        assert_eq!(decode(&bad, |_, _, _| ()), None);
        // A length that does not end.
        let mut endless = MAGIC_V2.to_vec();
        endless.extend_from_slice(&[0x80; 40]);
        assert_eq!(decode(&endless, |_, _, _| ()), None);
    }

    /// The first form, as its writer made it, is read.
    #[test]
    fn the_first_form_is_still_read() {
        let e = Entry {
            form: None,
            ..entry(4, Some((1_700_000_000, 7)), Some((1_700_000_001, 8)))
        };
        let mut bytes = MAGIC_V1.to_vec();
        bytes.extend_from_slice(&5u32.to_le_bytes());
        bytes.extend_from_slice(b"x.txt");
        bytes.extend_from_slice(&e.stat.len.to_le_bytes());
        bytes.push(1);
        bytes.extend_from_slice(&1_700_000_000u64.to_le_bytes());
        bytes.extend_from_slice(&7u32.to_le_bytes());
        bytes.push(1);
        bytes.extend_from_slice(&1_700_000_001i64.to_le_bytes());
        bytes.extend_from_slice(&8i64.to_le_bytes());
        bytes.extend_from_slice(&e.stat.ino.to_le_bytes());
        bytes.extend_from_slice(e.hash.as_bytes());
        bytes.push(u8::from(e.racy) | (u8::from(e.kept) << 1));
        let mut back = Vec::new();
        decode(&bytes, |p, e, n| back.push((p, e, n))).unwrap();
        assert_eq!(back, vec![("x.txt".to_owned(), e, Name::Whole(e.hash))]);
    }

    /// The second form (no forms) is read: its entries are plain files.
    #[test]
    fn the_second_form_is_still_read() {
        let plain: Vec<(String, Entry)> = sample()
            .into_iter()
            .map(|(p, e)| (p, Entry { form: None, ..e }))
            .collect();
        let third = encode(plain.iter().map(|(p, e)| (p.as_str(), e)), &|_| false);
        let second = [MAGIC_V2, &third[MAGIC_V3.len()..]].concat();
        let mut back = Vec::new();
        decode(&second, |p, e, _| back.push((p, e))).unwrap();
        assert_eq!(back, plain);
    }

    #[test]
    fn signed_numbers_of_every_size_survive_the_coding() {
        for x in [0, 1, -1, 63, -64, 1 << 40, -(1 << 40), i128::MAX, i128::MIN] {
            let mut out = Vec::new();
            put(&mut out, zigzag(x));
            let mut b = &out[..];
            assert_eq!(unzigzag(get(&mut b).unwrap()), x);
            assert!(b.is_empty());
        }
    }
}
