//! The Source Control panel's state: the commit message, the file whose
//! diff is shown, the last commits and branches, and what the person's
//! last git command said.

use cocode_git::{CommitSummary, GitAction, Hunk, Kind, RepoState};

/// One side of a file's changes in the panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffSide {
    /// No change on this side.
    Unchanged,
    Hunks(Vec<Hunk>),
    /// Not text: it can be staged whole only.
    Binary,
    /// Larger than the panel diffs.
    TooLarge,
}

/// A file's staged and unstaged changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// Workspace-relative.
    pub path: String,
    /// Relative to the repository's work tree (what patches name).
    pub repo_path: String,
    /// HEAD to the index.
    pub staged: DiffSide,
    /// The index to the work tree (an untracked file: all of it new).
    pub unstaged: DiffSide,
}

/// What the Source Control panel asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitCommand {
    /// Run the person's git (stage, unstage, a hunk, switch branch…).
    Perform(GitAction),
    /// Commit what is staged with the message in the box (amend when the
    /// box says so).
    Commit,
    /// Show this file's diff in the panel, its staged side or its
    /// unstaged one (again: hide it).
    Select(Selected),
    /// Open a workspace-relative file in the editor.
    Open(String),
    /// Forget the last command's words.
    DismissOutcome,
    /// Show the branch picker (or hide it).
    ToggleBranches,
    /// Show the panel with the branch picker open (the status bar's
    /// branch).
    PickBranch,
    /// Ask before discarding these files' changes (workspace-relative).
    Discard(Vec<String>),
    /// The person confirmed the discard asked about.
    ConfirmDiscard,
    CancelDiscard,
    /// Put back what the discard recorded under this id removed.
    UndoDiscard(u64),
    /// Stage a finished task's files and write its commit message (the
    /// person reviews and commits).
    CommitTask {
        task_id: String,
        prompt: String,
        /// The files its snapshots name, workspace-relative.
        paths: Vec<String>,
    },
}

/// A file chosen in one of the panel's groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    /// Workspace-relative.
    pub path: String,
    /// Chosen under "Staged changes" (its change from HEAD to the index),
    /// else under another group (from the index to the work tree).
    pub staged: bool,
}

/// How the person's last git command went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It worked; a short note (`Committed 3f2a1bc`).
    Done(String),
    /// git refused or failed; its words, as they are.
    Failed(String),
    /// Changes were discarded; they can be put back.
    Discarded(Discard),
}

/// A discard of this window's, which can be undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discard {
    /// The id the gate recorded it under.
    pub id: u64,
    /// Workspace-relative.
    pub paths: Vec<String>,
}

impl Discard {
    /// The files in words (`a.txt`, `3 files`).
    pub fn named(&self) -> String {
        match self.paths.as_slice() {
            [one] => one.clone(),
            many => format!("{} files", many.len()),
        }
    }
}

/// A changed file as the panel lists it, in one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Workspace-relative.
    pub path: String,
    pub kind: Kind,
    /// A staged rename's old path.
    pub from: Option<String>,
    /// An untracked or ignored folder git shows whole.
    pub folder: bool,
}

/// The panel's groups, as VS Code shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Groups {
    pub conflicts: Vec<Entry>,
    pub staged: Vec<Entry>,
    pub changes: Vec<Entry>,
    pub untracked: Vec<Entry>,
}

impl Groups {
    /// Splits git's state into the groups: a conflict only under merge
    /// conflicts; a file changed in both places under both; ignored files
    /// nowhere.
    pub fn of(state: &RepoState) -> Self {
        let mut groups = Self::default();
        for (path, file) in &state.files {
            let entry = |kind: Kind| Entry {
                path: path.clone(),
                kind,
                from: file.renamed_from.clone(),
                folder: file.is_folder,
            };
            if file.staged == Some(Kind::Conflicted) || file.unstaged == Some(Kind::Conflicted) {
                groups.conflicts.push(entry(Kind::Conflicted));
                continue;
            }
            if let Some(kind) = file.staged {
                groups.staged.push(entry(kind));
            }
            match file.unstaged {
                Some(Kind::Untracked) => groups.untracked.push(Entry {
                    from: None,
                    ..entry(Kind::Untracked)
                }),
                Some(Kind::Ignored) | None => {}
                Some(kind) => groups.changes.push(Entry {
                    from: None,
                    ..entry(kind)
                }),
            }
        }
        groups
    }

    /// The paths of a group's entries, with a staged rename's old path
    /// (unstaging a rename takes both sides out).
    pub fn paths(entries: &[Entry]) -> Vec<String> {
        let mut out = Vec::new();
        for entry in entries {
            out.push(entry.path.clone());
            if let Some(from) = &entry.from {
                out.push(from.clone());
            }
        }
        out
    }
}

/// A field of the panel that takes the keyboard focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The commit message (the panel was shown).
    Message,
    /// The branch picker's name (the status bar's branch was clicked).
    Branch,
}

/// The Source Control panel.
#[derive(Debug, Default)]
pub struct SourceControl {
    pub message: String,
    pub amend: bool,
    /// The file whose diff is shown, and which side of it.
    pub selected: Option<Selected>,
    /// Its diff, once read (`None` with a selection: no change any more).
    pub diff: Option<FileDiff>,
    /// Why the diff could not be read.
    pub diff_problem: Option<String>,
    pub commits: Vec<CommitSummary>,
    pub branches: Vec<String>,
    /// Git commands sent and not yet answered, in words.
    pub running: Vec<String>,
    pub outcome: Option<Outcome>,
    /// The branch picker is open, with the name typed in it.
    pub branch_picker: Option<String>,
    /// Where the keyboard focus goes on the next frame.
    pub focus: Option<Focus>,
    /// Whether git's state was read since the folder opened.
    pub known: bool,
    /// A discard waits for the person's yes (the files).
    pub confirm_discard: Option<Vec<String>>,
    /// A confirmed discard on its way through the git thread and the gate.
    pub discarding: Option<Vec<String>>,
    /// This window's discards, newest last: each can be undone.
    pub discards: Vec<Discard>,
}

/// The commit message of a task's changes: the prompt's first line as the
/// subject (cut at a word to fit 72 characters), the whole prompt when it
/// says more, the agent's summary, and the task's id.
pub fn task_message(task_id: &str, prompt: &str, summary: Option<&str>) -> String {
    use std::fmt::Write as _;
    let prompt = prompt.trim();
    let first = prompt.lines().next().unwrap_or_default().trim();
    let subject: String = if first.chars().count() > 72 {
        // Cut at the last word that fits, with room for the ellipsis.
        let cut: String = first.chars().take(71).collect();
        let cut = match cut.rsplit_once(' ') {
            Some((words, _)) if !words.trim().is_empty() => words.to_owned(),
            _ => cut,
        };
        format!("{}…", cut.trim_end())
    } else {
        first.to_owned()
    };
    let mut message = subject.clone();
    if prompt != subject {
        let _ = write!(message, "\n\n{prompt}");
    }
    if let Some(summary) = summary.map(str::trim).filter(|s| !s.is_empty()) {
        let _ = write!(message, "\n\n{summary}");
    }
    let _ = write!(message, "\n\ncocode task: {task_id}\n");
    message
}

/// The status bar's branch: its name (or the detached commit), how far
/// it is from its upstream, an operation under way; and the words for its
/// hover. (No branch symbol: none of the bundled fonts has one.)
pub fn branch_label(git: &RepoState) -> (String, String) {
    use std::fmt::Write as _;
    let (mut text, mut hover) = match &git.head {
        cocode_git::Head::Branch(name) => (name.clone(), format!("On branch {name}")),
        cocode_git::Head::Unborn(name) => (
            name.clone(),
            format!("On branch {name}, which has no commit yet"),
        ),
        cocode_git::Head::Detached(id) => (
            format!("{id} (detached)"),
            format!("HEAD is detached at {id}"),
        ),
    };
    if let Some(up) = &git.upstream {
        if up.ahead > 0 {
            let _ = write!(text, " ↑{}", up.ahead);
        }
        if up.behind > 0 {
            let _ = write!(text, " ↓{}", up.behind);
        }
        let _ = match (up.ahead, up.behind) {
            (0, 0) => write!(hover, ", up to date with {}", up.name),
            (a, 0) => write!(hover, ", {a} commit(s) ahead of {}", up.name),
            (0, b) => write!(hover, ", {b} commit(s) behind {}", up.name),
            (a, b) => write!(hover, ", {a} commit(s) ahead of and {b} behind {}", up.name),
        };
    }
    if let Some(operation) = &git.operation {
        let _ = write!(text, " ({operation})");
        let _ = write!(hover, "; a {operation} is in progress");
    }
    let changed = git.changed_count();
    if changed > 0 {
        let _ = write!(hover, "; {changed} changed path(s)");
    }
    (text, hover)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use cocode_git::{FileState, Head};
    use pretty_assertions::assert_eq;

    use super::*;

    fn entry(path: &str, kind: Kind, from: Option<&str>) -> Entry {
        Entry {
            path: path.into(),
            kind,
            from: from.map(Into::into),
            folder: false,
        }
    }

    #[test]
    fn a_tasks_message_has_a_short_subject_the_prompt_the_summary_and_the_id() {
        assert_eq!(
            task_message(
                "task-1",
                "replace \"two\" with \"2\" in a.txt",
                Some("Replaced it.")
            ),
            "replace \"two\" with \"2\" in a.txt\n\nReplaced it.\n\ncocode task: task-1\n"
        );
        let long = format!("{}\nand then more", "word ".repeat(20));
        let message = task_message("task-2", &long, None);
        let subject = message.lines().next().unwrap();
        assert_eq!(subject, format!("{}…", "word ".repeat(14).trim_end()));
        assert_eq!(
            message.split_once("\n\n").unwrap().1,
            format!("{}\n\ncocode task: task-2\n", long.trim())
        );
    }

    #[test]
    fn each_file_lands_in_the_groups_git_puts_it_in() {
        let file = |staged, unstaged, from: Option<&str>| FileState {
            staged,
            unstaged,
            renamed_from: from.map(Into::into),
            is_folder: false,
        };
        let state = RepoState {
            workdir: PathBuf::from("/r"),
            head: Head::Branch("main".into()),
            head_id: None,
            upstream: None,
            operation: None,
            files: BTreeMap::from([
                (
                    "both.rs".into(),
                    file(Some(Kind::Modified), Some(Kind::Modified), None),
                ),
                ("c.rs".into(), file(None, Some(Kind::Conflicted), None)),
                ("gone.rs".into(), file(None, Some(Kind::Deleted), None)),
                ("new.rs".into(), file(None, Some(Kind::Untracked), None)),
                ("target".into(), file(None, Some(Kind::Ignored), None)),
                (
                    "to.rs".into(),
                    file(Some(Kind::Renamed), None, Some("from.rs")),
                ),
            ]),
        };
        let groups = Groups::of(&state);
        assert_eq!(
            groups,
            Groups {
                conflicts: vec![entry("c.rs", Kind::Conflicted, None)],
                staged: vec![
                    entry("both.rs", Kind::Modified, None),
                    entry("to.rs", Kind::Renamed, Some("from.rs")),
                ],
                changes: vec![
                    entry("both.rs", Kind::Modified, None),
                    entry("gone.rs", Kind::Deleted, None),
                ],
                untracked: vec![entry("new.rs", Kind::Untracked, None)],
            }
        );
        assert_eq!(
            Groups::paths(&groups.staged),
            ["both.rs", "to.rs", "from.rs"]
        );
    }
}
