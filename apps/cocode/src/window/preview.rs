//! The read-only Preview's model: the selected file's text split into lines,
//! or why it is not shown.

use std::path::{Path, PathBuf};

use crate::window::io_worker::{FileContent, IoRequest};

/// What the Preview shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreviewState {
    Empty,
    Loading(PathBuf),
    Text {
        path: PathBuf,
        lines: Vec<String>,
        truncated: bool,
        size: u64,
    },
    /// Binary or not UTF-8: not shown, with the reason.
    Unsupported {
        path: PathBuf,
        reason: String,
    },
    Failed {
        path: PathBuf,
        message: String,
    },
}

/// The Preview model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    state: PreviewState,
}

impl Default for Preview {
    fn default() -> Self {
        Self {
            state: PreviewState::Empty,
        }
    }
}

impl Preview {
    pub fn state(&self) -> &PreviewState {
        &self.state
    }

    /// Starts showing `path`, a file of the workspace at `root`; returns
    /// the read to queue.
    pub fn open(&mut self, root: &Path, path: &Path) -> IoRequest {
        self.state = PreviewState::Loading(path.to_path_buf());
        IoRequest::Read {
            root: root.to_path_buf(),
            path: path.to_path_buf(),
        }
    }

    pub fn clear(&mut self) {
        self.state = PreviewState::Empty;
    }

    /// Applies a read result; results for a file no longer shown are dropped.
    pub fn on_read(&mut self, path: &Path, result: Result<FileContent, String>) {
        if self.state != PreviewState::Loading(path.to_path_buf()) {
            return;
        }
        let path = path.to_path_buf();
        self.state = match result {
            Ok(FileContent::Text {
                text,
                truncated,
                size,
            }) => PreviewState::Text {
                path,
                lines: split_lines(&text),
                truncated,
                size,
            },
            Ok(FileContent::Binary { size }) => PreviewState::Unsupported {
                path,
                reason: format!("Binary file ({}) — not shown.", human_size(size)),
            },
            Ok(FileContent::NotUtf8 { size }) => PreviewState::Unsupported {
                path,
                reason: format!("Not UTF-8 text ({}) — not shown.", human_size(size)),
            },
            Err(message) => PreviewState::Failed { path, message },
        };
    }
}

/// Lines without their terminators (`\n` or `\r\n`); a final newline does
/// not make an extra empty line, an empty file has one empty line.
pub fn split_lines(text: &str) -> Vec<String> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
        .collect()
}

/// `1.5 KiB`-style sizes.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes;
    let mut unit = 0;
    let mut remainder = 0;
    while value >= 1024 && unit < UNITS.len() - 1 {
        remainder = value % 1024;
        value /= 1024;
        unit += 1;
    }
    if unit == 0 {
        format!("{value} {}", UNITS[0])
    } else {
        format!("{value}.{} {}", remainder * 10 / 1024, UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn lines_split_on_lf_and_crlf() {
        assert_eq!(split_lines("a\r\nb\nc"), vec!["a", "b", "c"]);
        assert_eq!(split_lines("a\n"), vec!["a"]);
        assert_eq!(split_lines("a\n\n"), vec!["a", ""]);
        assert_eq!(split_lines(""), vec![""]);
        assert_eq!(split_lines("안녕\r\n"), vec!["안녕"]);
    }

    #[test]
    fn sizes_are_human_readable() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(5 * 1024 * 1024), "5.0 MiB");
    }

    #[test]
    fn stale_reads_are_dropped() {
        let mut p = Preview::default();
        p.open(Path::new("/w"), Path::new("/w/a.rs"));
        p.open(Path::new("/w"), Path::new("/w/b.rs"));
        p.on_read(
            Path::new("/w/a.rs"),
            Ok(FileContent::Text {
                text: "old".into(),
                truncated: false,
                size: 3,
            }),
        );
        assert_eq!(p.state(), &PreviewState::Loading("/w/b.rs".into()));
        p.on_read(Path::new("/w/b.rs"), Ok(FileContent::Binary { size: 2048 }));
        assert_eq!(
            p.state(),
            &PreviewState::Unsupported {
                path: "/w/b.rs".into(),
                reason: "Binary file (2.0 KiB) — not shown.".into()
            }
        );
    }
}
