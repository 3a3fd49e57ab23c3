//! Project instructions for the built-in agent, as Codex, Zed and Gemini
//! CLI read them: `AGENTS.md` at the workspace root, the person's own in
//! cocode's config folder, and the `AGENTS.md` of each folder above a file
//! the agent touches (given with that call's result, the nearest last, so
//! the nearest wins). Each file is capped; the task records which it gave.
//! External agents read their own: cocode gives them nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cocode_core::agent::{InstructionsLookup, ProjectInstructions};
use cocode_core::{NormalizedPath, TaskId};
use cocode_workspace::OpenWorkspace;

/// The file's name in every folder.
pub const FILE_NAME: &str = "AGENTS.md";

/// The most bytes of one file given to the model.
pub const MAX_BYTES: usize = 32 * 1024;

/// The person's own instructions: `<config dir>/cocode/AGENTS.md`.
pub fn person_file() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.config_dir().join("cocode").join(FILE_NAME))
}

/// `path` as a person reads it: under the home folder as `~/…`.
fn shown(path: &Path) -> String {
    directories::BaseDirs::new()
        .and_then(|d| path.strip_prefix(d.home_dir()).ok().map(Path::to_path_buf))
        .map_or_else(
            || path.display().to_string(),
            |rest| format!("~/{}", rest.display()),
        )
}

/// A file's bytes as instructions: text (invalid UTF-8 replaced), cut at
/// [`MAX_BYTES`] with a note saying so.
pub fn capped(source: String, bytes: &[u8]) -> ProjectInstructions {
    let text = String::from_utf8_lossy(bytes);
    let text = if text.len() > MAX_BYTES {
        let mut end = MAX_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!(
            "{}\n\n[cut here: the file has {} bytes; the first {} are given]",
            &text[..end],
            text.len(),
            end
        )
    } else {
        text.into_owned()
    };
    ProjectInstructions { source, text }
}

/// The instructions a task starts with: the person's file (when `person`
/// names one that exists), then the workspace root's `AGENTS.md`, read
/// through the workspace's safe read path (a link out of it is refused).
pub fn at_start(ws: &OpenWorkspace, person: Option<&Path>) -> Vec<ProjectInstructions> {
    let mut files = Vec::new();
    if let Some(path) = person
        && let Ok(bytes) = std::fs::read(path)
    {
        files.push(capped(shown(path), &bytes));
    }
    if let Some(root) = read_in_workspace(ws, FILE_NAME) {
        files.push(root);
    }
    files
}

fn read_in_workspace(ws: &OpenWorkspace, rel: &str) -> Option<ProjectInstructions> {
    let path = NormalizedPath::try_from(rel.to_owned()).ok()?;
    match ws.gate.read_file("read project instructions", &path) {
        Ok(Some(bytes)) => Some(capped(rel.to_owned(), &bytes)),
        Ok(None) => None,
        Err(e) => {
            tracing::warn!("{rel} is not given to the agent: {e}");
            None
        }
    }
}

/// The `AGENTS.md` files of the folders above workspace path `path`
/// (the root's own not included), outermost first.
fn candidates(path: &str) -> Vec<String> {
    let Ok(path) = NormalizedPath::try_from(path.to_owned()) else {
        return Vec::new();
    };
    let parts: Vec<&str> = path.as_str().split('/').collect();
    (1..parts.len())
        .map(|n| format!("{}/{FILE_NAME}", parts[..n].join("/")))
        .collect()
}

/// Which instructions files a task was given (`instructions.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GivenRecord {
    pub version: u32,
    pub files: Vec<String>,
}

pub fn record_path(ws: &OpenWorkspace, id: &TaskId) -> PathBuf {
    ws.layout.task_dir(id).join("instructions.json")
}

/// The files task `id` was given, when it was given any.
pub fn given(ws: &OpenWorkspace, id: &TaskId) -> Option<GivenRecord> {
    let bytes = std::fs::read(record_path(ws, id)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Adds `sources` to task `id`'s record.
pub fn record(ws: &OpenWorkspace, id: &TaskId, sources: &[String]) -> anyhow::Result<()> {
    if sources.is_empty() {
        return Ok(());
    }
    let mut record = given(ws, id).unwrap_or(GivenRecord {
        version: 1,
        files: Vec::new(),
    });
    for source in sources {
        if !record.files.contains(source) {
            record.files.push(source.clone());
        }
    }
    ws.gate
        .store()
        .write_state_file(&record_path(ws, id), &serde_json::to_vec_pretty(&record)?)?;
    Ok(())
}

/// The lookup a built-in session asks for the folders a call touches:
/// each file once per task, recorded as it is given.
#[derive(Debug)]
pub struct Nested {
    ws: Arc<OpenWorkspace>,
    task: TaskId,
    given: Mutex<BTreeSet<String>>,
}

impl Nested {
    pub fn new(ws: Arc<OpenWorkspace>, task: TaskId) -> Self {
        Self {
            ws,
            task,
            given: Mutex::new(BTreeSet::new()),
        }
    }
}

impl InstructionsLookup for Nested {
    fn above(&self, path: &str) -> Vec<ProjectInstructions> {
        let mut found = Vec::new();
        for candidate in candidates(path) {
            {
                let mut given = self
                    .given
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if !given.insert(candidate.clone()) {
                    continue;
                }
            }
            if let Some(file) = read_in_workspace(&self.ws, &candidate) {
                found.push(file);
            }
        }
        let sources: Vec<String> = found.iter().map(|f| f.source.clone()).collect();
        if let Err(e) = record(&self.ws, &self.task, &sources) {
            tracing::warn!("the instructions given are not recorded: {e:#}");
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_folders_above_a_path_are_looked_at_outermost_first_without_the_root() {
        assert_eq!(
            candidates("crates/x/src/lib.rs"),
            vec![
                "crates/AGENTS.md".to_owned(),
                "crates/x/AGENTS.md".to_owned(),
                "crates/x/src/AGENTS.md".to_owned()
            ]
        );
        assert_eq!(candidates("README.md"), Vec::<String>::new());
        assert_eq!(candidates("../etc/passwd"), Vec::<String>::new());
    }

    #[test]
    fn a_long_file_is_cut_on_a_character_and_says_so() {
        let long = "가".repeat(MAX_BYTES / 3 + 10);
        let given = capped("AGENTS.md".into(), long.as_bytes());
        assert!(given.text.len() < MAX_BYTES + 100);
        assert!(
            given.text.ends_with(&format!(
                "[cut here: the file has {} bytes; the first {} are given]",
                long.len(),
                MAX_BYTES - MAX_BYTES % 3
            )),
            "{}",
            &given.text[given.text.len() - 100..]
        );
        assert_eq!(capped("a".into(), b"short\n").text, "short\n");
    }
}
