//! Rollback targets and prechecks — pure functions over a task's records.
//!
//! Queries: to a snapshot (it and every later snapshot of the same task), to
//! an attempt boundary k (snapshots with attempt ≥ k), to the task start
//! (k = 0). Each selected record is projected into path transitions; a
//! path's target is the `before` of its earliest transition in the set
//! (absent → delete). The precheck runs over every path before anything is
//! touched: ⓐ the path's globally last snapshot belongs to this task, ⓑ the
//! current content equals this task's last result on that path.

use std::collections::BTreeMap;

use cocode_core::ids::{AttemptNo, OpId, SnapshotId, TaskId};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{ContentHash, EditSnapshot, Form};
use serde::{Deserialize, Serialize};

/// What to roll back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RollbackQuery {
    /// Undo this snapshot and every later snapshot of the same task.
    ToSnapshot(SnapshotId),
    /// Undo every snapshot of attempt `k` or later.
    ToAttempt(AttemptNo),
    /// Undo the whole task.
    TaskStart,
}

/// One path a rollback would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollbackTarget {
    pub path: NormalizedPath,
    /// The task's last result on the path: what must be on disk now.
    pub expected: Option<ContentHash>,
    /// What the path goes back to (`None` = the file is deleted).
    pub target: Option<ContentHash>,
    /// History holds only the target's hash: it was too large to keep.
    pub target_unkept: bool,
    /// What the task left is, when not a plain file (a link, a FIFO…).
    pub expected_form: Option<Form>,
    /// What the path goes back to is, when not a plain file.
    pub target_form: Option<Form>,
}

/// What is at a path now: its content's hash and its form.
pub type Found = Option<(ContentHash, Option<Form>)>;

/// Whether what is at a path is what a record says: the same content and
/// form. A record that names no form of a present side was made by the
/// gate, which does not look at a file's bits: any regular file with that
/// content is it.
pub fn is_as_recorded(hash: Option<ContentHash>, form: Option<Form>, found: Found) -> bool {
    match (hash, found) {
        (None, None) => true,
        (Some(hash), Some((found, found_form))) => {
            hash == found
                && (form == found_form
                    || (form.is_none() && matches!(found_form, Some(Form::File { .. }))))
        }
        _ => false,
    }
}

/// Why one path cannot be rolled back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum ConflictReason {
    /// ⓐ Another task edited the path after this one.
    LaterTask { task_id: TaskId },
    /// ⓑ The content changed since the task's last edit (a person or a tool).
    ChangedSince {
        expected: Option<ContentHash>,
        found: Option<ContentHash>,
    },
    /// The path is not a regular file any more (a folder, a symlink).
    NotAFile,
    /// The content to go back to was above the ceiling for kept content:
    /// history holds its hash only.
    TooLargeToKeep,
    /// What the path goes back to was a socket or a device node, which
    /// cocode never makes.
    CannotRemake,
    /// A folder the task made holds what the task did not make.
    HoldsOthers,
}

impl ConflictReason {
    /// The reason in words, for people.
    pub fn describe(&self) -> String {
        match self {
            Self::LaterTask { task_id } => format!("task {task_id} changed it after this task"),
            Self::ChangedSince { .. } => "it changed since the task's last edit".to_owned(),
            Self::NotAFile => "it is no longer a regular file".to_owned(),
            Self::TooLargeToKeep => {
                "its content before the task was too large to keep; history holds only its hash"
                    .to_owned()
            }
            Self::HoldsOthers => {
                "the task made this folder, and it now holds files the task did not make".to_owned()
            }
            Self::CannotRemake => {
                "it was a socket or a device node before the task, which cocode does not make"
                    .to_owned()
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathConflict {
    pub path: NormalizedPath,
    #[serde(flatten)]
    pub reason: ConflictReason,
}

/// Why a rollback is not offered or did not run. Nothing was touched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RollbackError {
    #[error("the task has no snapshot {0}")]
    UnknownSnapshot(SnapshotId),
    #[error("nothing to roll back: the selection changes no file")]
    NothingToRollBack,
    #[error("{} path(s) conflict; nothing was touched", .0.len())]
    Conflicts(Vec<PathConflict>),
    #[error("the task's history was removed by retention at {removed_at_ms} ms: {reason}")]
    Collected { removed_at_ms: i64, reason: String },
    #[error("an interrupted rollback ({0}) is pending on these paths; finish or abandon it first")]
    InProgress(OpId),
    #[error("an interrupted edit left {0} in an unknown state; accept or restore it first")]
    RecoveryPending(NormalizedPath),
    #[error("the task's history is damaged: its index lacks {} record(s) that the path indexes hold ({}); nothing was touched — `cocode doctor` lists the damage", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    Damaged(Vec<SnapshotId>),
    #[error(
        "the task's changes are not all recorded ({0}); rolling it back could leave some of them, so nothing was touched"
    )]
    NotFullyRecorded(String),
    #[error("rollback failed: {0}")]
    Failed(String),
}

/// Whether a rollback can run now, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RollbackAvailability {
    Available { targets: Vec<RollbackTarget> },
    Unavailable(RollbackError),
}

/// The records a query selects, in seq order.
pub fn select<'a>(
    records: &'a [EditSnapshot],
    query: &RollbackQuery,
) -> Result<Vec<&'a EditSnapshot>, RollbackError> {
    let mut sorted: Vec<&EditSnapshot> = records.iter().collect();
    sorted.sort_by_key(|r| r.seq());
    let selected: Vec<&EditSnapshot> = match query {
        RollbackQuery::ToSnapshot(id) => {
            let from = sorted
                .iter()
                .find(|r| r.snapshot_id() == id)
                .map(|r| r.seq())
                .ok_or_else(|| RollbackError::UnknownSnapshot(id.clone()))?;
            sorted.into_iter().filter(|r| r.seq() >= from).collect()
        }
        RollbackQuery::ToAttempt(k) => sorted
            .into_iter()
            .filter(|r| r.attempt_no() >= *k)
            .collect(),
        RollbackQuery::TaskStart => sorted,
    };
    Ok(selected)
}

/// Per projected path: the earliest `before` in the selection (the target)
/// and the latest `after` (what the task left). Paths whose target equals
/// what the task left (created then deleted, renamed away and back) change
/// nothing and are not listed.
pub fn targets(selected: &[&EditSnapshot]) -> Vec<RollbackTarget> {
    /// (hash, unkept, form) of the earliest before; (hash, form) of the
    /// latest after.
    type Ends = (
        (Option<ContentHash>, bool, Option<Form>),
        (Option<ContentHash>, Option<Form>),
    );
    let mut by_path: BTreeMap<NormalizedPath, Ends> = BTreeMap::new();
    for record in selected {
        // Only a change of one path (never a rename) can be hash only.
        let unkept = record.previous_path().is_none() && record.unkept().base;
        let forms = record.forms();
        for t in record.transitions() {
            // A rename's old path goes from the base's form, its new one
            // to the result's (the same form).
            let before_form = t.before.and(forms.base);
            let after_form = t.after.and(forms.result);
            by_path
                .entry(t.path)
                .and_modify(|(_, last)| *last = (t.after, after_form))
                .or_insert(((t.before, unkept, before_form), (t.after, after_form)));
        }
    }
    by_path
        .into_iter()
        .filter(|(_, ((target, _, target_form), expected))| (*target, *target_form) != *expected)
        .map(
            |(path, ((target, target_unkept, target_form), (expected, expected_form)))| {
                RollbackTarget {
                    path,
                    expected,
                    target,
                    target_unkept,
                    expected_form,
                    target_form,
                }
            },
        )
        .collect()
}

/// Precheck ⓐ and ⓑ for every target; returns every conflict found.
/// `last_owner` gives the task of a path's globally last snapshot;
/// `current` what is on disk (`Err(())` when it is something no record
/// names: a folder with things in it, something unreadable).
pub fn precheck(
    task: &TaskId,
    targets: &[RollbackTarget],
    last_owner: &mut dyn FnMut(&NormalizedPath) -> Option<TaskId>,
    current: &mut dyn FnMut(&NormalizedPath) -> Result<Found, ()>,
) -> Vec<PathConflict> {
    let mut conflicts = Vec::new();
    for t in targets {
        if t.target_unkept {
            conflicts.push(PathConflict {
                path: t.path.clone(),
                reason: ConflictReason::TooLargeToKeep,
            });
            continue;
        }
        if t.target_form == Some(Form::Special) {
            conflicts.push(PathConflict {
                path: t.path.clone(),
                reason: ConflictReason::CannotRemake,
            });
            continue;
        }
        if let Some(owner) = last_owner(&t.path).filter(|o| o != task) {
            conflicts.push(PathConflict {
                path: t.path.clone(),
                reason: ConflictReason::LaterTask { task_id: owner },
            });
            continue;
        }
        match current(&t.path) {
            Ok(found) if is_as_recorded(t.expected, t.expected_form, found) => {}
            // A folder the task made that is gone already (removed with
            // the last file in it): what the rollback wants.
            Ok(None) if t.target.is_none() && t.expected_form == Some(Form::Folder) => {}
            Ok(found) => conflicts.push(PathConflict {
                path: t.path.clone(),
                reason: ConflictReason::ChangedSince {
                    expected: t.expected,
                    found: found.map(|(hash, _)| hash),
                },
            }),
            Err(()) => conflicts.push(PathConflict {
                path: t.path.clone(),
                reason: ConflictReason::NotAFile,
            }),
        }
    }
    conflicts
}

#[cfg(test)]
mod tests {
    use super::*;
    use cocode_core::ids::{Seq, Timestamp};
    use cocode_core::snapshot::{EditSnapshotParts, SnapshotOrigin};
    use pretty_assertions::assert_eq;

    fn p(s: &str) -> NormalizedPath {
        NormalizedPath::try_from(s.to_owned()).unwrap()
    }

    #[expect(
        clippy::unnecessary_wraps,
        reason = "reads as the optional hashes it stands for"
    )]
    fn h(s: &str) -> Option<ContentHash> {
        Some(ContentHash::of(s.as_bytes()))
    }

    fn rec(
        seq: u64,
        attempt: u32,
        path: &str,
        prev: Option<&str>,
        base: Option<ContentHash>,
        result: Option<ContentHash>,
    ) -> EditSnapshot {
        EditSnapshot::new(EditSnapshotParts {
            snapshot_id: SnapshotId::new(format!("s{seq}")).unwrap(),
            task_id: TaskId::new("t").unwrap(),
            seq: Seq(seq),
            attempt_no: AttemptNo(attempt),
            path: p(path),
            previous_path: prev.map(p),
            base,
            result,
            unkept: cocode_core::Unkept::NONE,
            forms: cocode_core::snapshot::Forms::NONE,
            origin: SnapshotOrigin::Gate,
            ts: Timestamp::from_millis(0),
        })
        .unwrap()
    }

    fn plan(
        records: &[EditSnapshot],
        q: &RollbackQuery,
    ) -> Vec<(String, Option<ContentHash>, Option<ContentHash>)> {
        targets(&select(records, q).unwrap())
            .into_iter()
            .map(|t| (t.path.to_string(), t.expected, t.target))
            .collect()
    }

    #[test]
    fn create_then_delete_in_one_task_changes_nothing() {
        let records = [
            rec(1, 0, "a", None, None, h("1")),
            rec(2, 0, "a", None, h("1"), None),
        ];
        assert_eq!(plan(&records, &RollbackQuery::TaskStart), vec![]);
    }

    #[test]
    fn rename_chains_restore_the_first_path_and_remove_the_last() {
        let records = [
            rec(1, 0, "a", None, h("0"), h("1")),
            rec(2, 0, "b", Some("a"), h("1"), h("1")),
            rec(3, 0, "c", Some("b"), h("1"), h("1")),
        ];
        assert_eq!(
            plan(&records, &RollbackQuery::TaskStart),
            vec![("a".into(), None, h("0")), ("c".into(), h("1"), None)]
        );
    }

    #[test]
    fn attempt_and_snapshot_boundaries_leave_earlier_work() {
        let records = [
            rec(1, 0, "a", None, h("0"), h("1")),
            rec(2, 1, "a", None, h("1"), h("2")),
            rec(3, 1, "b", None, None, h("b")),
            rec(4, 2, "a", None, h("2"), h("3")),
        ];
        assert_eq!(
            plan(&records, &RollbackQuery::ToAttempt(AttemptNo(1))),
            vec![("a".into(), h("3"), h("1")), ("b".into(), h("b"), None)]
        );
        assert_eq!(
            plan(
                &records,
                &RollbackQuery::ToSnapshot(SnapshotId::new("s4").unwrap())
            ),
            vec![("a".into(), h("3"), h("2"))]
        );
        assert_eq!(
            select(
                &records,
                &RollbackQuery::ToSnapshot(SnapshotId::new("nope").unwrap())
            )
            .unwrap_err(),
            RollbackError::UnknownSnapshot(SnapshotId::new("nope").unwrap())
        );
    }

    fn target(
        path: &str,
        expected: Option<ContentHash>,
        target: Option<ContentHash>,
        target_unkept: bool,
        (expected_form, target_form): (Option<Form>, Option<Form>),
    ) -> RollbackTarget {
        RollbackTarget {
            path: p(path),
            expected,
            target,
            target_unkept,
            expected_form,
            target_form,
        }
    }

    #[test]
    fn precheck_reports_every_conflicting_path_with_its_reason() {
        let t = TaskId::new("t").unwrap();
        let other = TaskId::new("other").unwrap();
        let targets = vec![
            target("a", h("1"), h("0"), false, (None, None)),
            target("b", h("1"), None, false, (None, None)),
            target("c", h("1"), None, false, (None, None)),
            target("d", h("1"), None, false, (None, None)),
            target("e", h("1"), h("0"), true, (None, None)),
            target("f", None, h(""), false, (None, Some(Form::Special))),
            // An executable the gate wrote, its bits never looked at.
            target("g", h("1"), h("0"), false, (None, None)),
            // A link the task left, now a file with its target's bytes.
            target("h", h("1"), None, false, (Some(Form::Symlink), None)),
        ];
        let conflicts = precheck(
            &t,
            &targets,
            &mut |path| {
                Some(if path.as_str() == "a" {
                    other.clone()
                } else {
                    t.clone()
                })
            },
            &mut |path| match path.as_str() {
                "b" => Ok(h("person").map(|h| (h, None))),
                "c" => Err(()),
                "g" => Ok(h("1").map(|h| (h, Some(Form::File { mode: 0o111 })))),
                _ => Ok(h("1").map(|h| (h, None))),
            },
        );
        assert_eq!(
            conflicts,
            vec![
                PathConflict {
                    path: p("a"),
                    reason: ConflictReason::LaterTask { task_id: other }
                },
                PathConflict {
                    path: p("b"),
                    reason: ConflictReason::ChangedSince {
                        expected: h("1"),
                        found: h("person")
                    }
                },
                PathConflict {
                    path: p("c"),
                    reason: ConflictReason::NotAFile
                },
                PathConflict {
                    path: p("e"),
                    reason: ConflictReason::TooLargeToKeep
                },
                PathConflict {
                    path: p("f"),
                    reason: ConflictReason::CannotRemake
                },
                PathConflict {
                    path: p("h"),
                    reason: ConflictReason::ChangedSince {
                        expected: h("1"),
                        found: h("1")
                    }
                },
            ]
        );
    }
}
