//! What cocode leaves behind about itself, in the person's data folder
//! (never a workspace): the window's rotating log files, and a report for
//! each panic — message, place, backtrace, version and OS, scrubbed of
//! secrets — that the next start announces once.
#![expect(
    clippy::disallowed_methods,
    reason = "the log and crash-report folder is cocode's own, outside every workspace"
)]

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The log files' and crash reports' folder: `<data dir>/cocode`
/// (`~/.local/share/cocode` on Linux).
pub fn data_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.data_local_dir().join("cocode"))
}

pub fn log_dir(data: &Path) -> PathBuf {
    data.join("logs")
}

pub fn crash_dir(data: &Path) -> PathBuf {
    data.join("crashes")
}

/// The longest panic message kept in a report.
const MESSAGE_LIMIT: usize = 2000;

/// Text with every secret cocode started with, and anything that looks like
/// a key, replaced by `[redacted]`.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        out = out.replace(secret.as_str(), "[redacted]");
    }
    let mut scrubbed = String::with_capacity(out.len());
    let mut word = String::new();
    let flush = |word: &mut String, scrubbed: &mut String| {
        if cocode_toolchain::env::is_credential_value(word) {
            scrubbed.push_str("[redacted]");
        } else {
            scrubbed.push_str(word);
        }
        word.clear();
    };
    for c in out.chars() {
        if c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '=' | ':' | ',' | '(' | ')') {
            flush(&mut word, &mut scrubbed);
            scrubbed.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut scrubbed);
    scrubbed
}

/// A crash report's text.
pub fn report(
    message: &str,
    location: Option<String>,
    thread: &str,
    backtrace: &str,
    secrets: &[String],
) -> String {
    let mut message = scrub(message, secrets);
    if message.chars().count() > MESSAGE_LIMIT {
        message = message.chars().take(MESSAGE_LIMIT).collect::<String>() + "…";
    }
    format!(
        "cocode {version} stopped unexpectedly.\n\
         os: {os} {arch}\n\
         thread: {thread}\n\
         place: {location}\n\
         message: {message}\n\n\
         backtrace:\n{backtrace}\n",
        version = env!("CARGO_PKG_VERSION"),
        os = std::env::consts::OS,
        arch = std::env::consts::ARCH,
        location = location.unwrap_or_else(|| "unknown".into()),
        backtrace = scrub(backtrace, secrets),
    )
}

/// Writes a report into `dir` (made if missing) as
/// `crash-<seconds since 1970>-<process id>.txt`; its path.
pub fn write_report(dir: &Path, text: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let path = dir.join(format!("crash-{secs}-{}.txt", std::process::id()));
    let mut file = std::fs::File::create_new(&path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    Ok(path)
}

/// Makes every panic also write a report into `dir` (the default hook still
/// prints it). `secrets` are scrubbed from it.
pub fn install_hook(dir: PathBuf, secrets: Vec<String>) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
        let thread = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_owned();
        let backtrace = std::backtrace::Backtrace::force_capture().to_string();
        let text = report(&message, location, &thread, &backtrace, &secrets);
        if let Err(e) = write_report(&dir, &text) {
            eprintln!("cocode: the crash report could not be written: {e}");
        }
        previous(info);
    }));
}

/// The reports not announced yet, oldest first.
pub fn unseen(dir: &Path) -> Vec<PathBuf> {
    let seen = std::fs::read_to_string(dir.join("seen")).unwrap_or_default();
    let seen: Vec<&str> = seen.lines().collect();
    let mut reports: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("crash-")
                    && Path::new(n).extension().is_some_and(|e| e == "txt")
                    && !seen.contains(&n)
            })
        })
        .collect();
    reports.sort();
    reports
}

/// Notes that `reports` were announced, so the next start is quiet.
pub fn mark_seen(dir: &Path, reports: &[PathBuf]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("seen"))?;
    for r in reports {
        if let Some(name) = r.file_name().and_then(|n| n.to_str()) {
            writeln!(file, "{name}")?;
        }
    }
    Ok(())
}

/// The window's log: a file a day in `dir`, the last week kept. The guard
/// flushes it and must live as long as the process logs.
pub fn log_writer(
    dir: &Path,
) -> Result<
    (
        tracing_appender::non_blocking::NonBlocking,
        tracing_appender::non_blocking::WorkerGuard,
    ),
    String,
> {
    // Made first: the appender prunes old files as it starts.
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("cocode")
        .filename_suffix("log")
        .max_log_files(7)
        .build(dir)
        .map_err(|e| e.to_string())?;
    Ok(tracing_appender::non_blocking(appender))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn secrets_and_key_like_words_are_scrubbed() {
        let secrets = vec!["hunter2-very-secret".to_owned()];
        assert_eq!(
            scrub(
                "key sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWX, pass=hunter2-very-secret ok",
                &secrets
            ),
            "key [redacted], pass=[redacted] ok"
        );
        assert_eq!(scrub("plain words stay", &[]), "plain words stay");
    }

    #[test]
    fn a_panic_writes_a_scrubbed_report_and_the_next_start_sees_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let crashes = crash_dir(dir.path());
        install_hook(crashes.clone(), vec!["s3cr3t-value-of-mine".into()]);
        let caught = std::panic::catch_unwind(|| {
            panic!(
                "index out of range with ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345 and s3cr3t-value-of-mine"
            );
        });
        let _ = std::panic::take_hook();
        assert!(caught.is_err());
        let reports = unseen(&crashes);
        assert_eq!(reports.len(), 1);
        let text = std::fs::read_to_string(&reports[0]).unwrap();
        assert!(text.starts_with(&format!(
            "cocode {} stopped unexpectedly.\nos: {} {}\n",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::env::consts::ARCH
        )));
        assert!(
            text.contains("message: index out of range with [redacted] and [redacted]\n"),
            "{text}"
        );
        assert!(
            text.contains("place: apps/cocode/src/host/crash.rs:"),
            "{text}"
        );
        assert!(text.contains("backtrace:\n"));
        assert!(!text.contains("ghp_") && !text.contains("s3cr3t"));
        mark_seen(&crashes, &reports).unwrap();
        assert_eq!(unseen(&crashes), Vec::<PathBuf>::new());
    }
}
