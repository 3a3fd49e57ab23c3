//! cocode's own files in the person's config folder (provider settings,
//! trusted commands), and exports the person saves where they choose,
//! outside every workspace: each is written whole and atomically (a temporary file beside it, synced, then renamed), so a
//! crash leaves the old contents or the new ones, never half of either.
#![expect(
    clippy::disallowed_methods,
    reason = "cocode's own files in the person's config folder, outside every workspace"
)]

use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;

/// Replaces `file` with `value` as pretty JSON and a final line feed,
/// making its folder when it is missing.
pub fn replace_json(file: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let dir = file
        .parent()
        .with_context(|| format!("{} has no folder", file.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("a temporary file in {}", dir.display()))?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(file)
        .with_context(|| format!("replacing {}", file.display()))?;
    Ok(())
}

/// Writes `text` to `file` whole (a temporary file beside it, synced, then
/// renamed). With `replace`, an existing file is replaced (the person chose
/// it in a save dialog); without, an existing name is never touched and the
/// text goes to the first free `<stem>-2.<ext>`, `<stem>-3.<ext>`, ….
/// Returns where it went.
pub fn write_text(file: &Path, text: &str, replace: bool) -> anyhow::Result<std::path::PathBuf> {
    let dir = file
        .parent()
        .with_context(|| format!("{} has no folder", file.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("a temporary file in {}", dir.display()))?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    if replace {
        tmp.persist(file)
            .with_context(|| format!("replacing {}", file.display()))?;
        return Ok(file.to_path_buf());
    }
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = file
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    for n in 1..1000 {
        let target = if n == 1 {
            file.to_path_buf()
        } else {
            file.with_file_name(format!("{stem}-{n}{ext}"))
        };
        match tmp.persist_noclobber(&target) {
            Ok(_) => return Ok(target),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => tmp = e.file,
            Err(e) => {
                return Err(e.error).with_context(|| format!("writing {}", target.display()));
            }
        }
    }
    anyhow::bail!("999 files named like {} are already there", file.display())
}

/// Runs `change` while this process holds the exclusive lock of `file`
/// (an empty `<name>.lock` beside it), so that two processes that each
/// read the file, change it and replace it never lose the other's change.
/// The lock is let go when `change` returns, whatever it returns.
pub fn locked<T>(file: &Path, change: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let dir = file
        .parent()
        .with_context(|| format!("{} has no folder", file.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = file
        .file_name()
        .with_context(|| format!("{} has no name", file.display()))?
        .to_string_lossy()
        .into_owned();
    let lock_path = file.with_file_name(format!("{name}.lock"));
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    lock.lock()
        .with_context(|| format!("locking {}", lock_path.display()))?;
    let out = change();
    drop(lock);
    out
}

/// Moves a file that cannot be used out of the way, beside itself as
/// `<name>.<label>` (`<name>.<label>.2`, … when that is taken), so that
/// nothing in it is lost; returns where it went.
pub fn set_aside(file: &Path, label: &str) -> anyhow::Result<std::path::PathBuf> {
    let name = file
        .file_name()
        .with_context(|| format!("{} has no name", file.display()))?
        .to_string_lossy()
        .into_owned();
    for n in 1..100 {
        let aside = if n == 1 {
            file.with_file_name(format!("{name}.{label}"))
        } else {
            file.with_file_name(format!("{name}.{label}.{n}"))
        };
        if aside.symlink_metadata().is_err() {
            std::fs::rename(file, &aside)
                .with_context(|| format!("moving {} aside", file.display()))?;
            return Ok(aside);
        }
    }
    anyhow::bail!(
        "99 earlier copies of {} are already set aside",
        file.display()
    )
}
