//! History retention: which whole tasks to collect when the history is over
//! its byte cap — a pure plan over the tasks' records and blob sizes.
//!
//! P1 non-terminal tasks are never touched. P3 a task is pinned while it is
//! among the K most recent tasks of any path it touched. P4 over the cap,
//! unpinned terminal tasks go first, oldest-terminated first, then (P4′)
//! pinned ones; the most recent terminal task always stays. P5 blobs no
//! remaining record or journal references are collected. The unit is the
//! whole task: removing part of a task would break its atomic rollback.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use cocode_core::ids::{TaskId, Timestamp};
use cocode_core::path::NormalizedPath;
use cocode_core::snapshot::{ContentHash, EditSnapshot};
use cocode_core::workspace::RetentionConfig;

/// What the host knows about a task's life (the store knows its records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskLife {
    pub task_id: TaskId,
    /// When the task reached a terminal status; `None` while it runs or
    /// waits. A task the host does not list is treated as non-terminal.
    pub terminated_at: Option<Timestamp>,
}

/// Why retention runs (P7: only these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetentionTrigger {
    TaskTerminated,
    AppStart,
    CapExceeded,
}

impl RetentionTrigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TaskTerminated => "a task terminated",
            Self::AppStart => "app start",
            Self::CapExceeded => "history over its cap",
        }
    }
}

/// One task's history as retention sees it.
#[derive(Debug, Clone)]
pub struct TaskHistory {
    pub task_id: TaskId,
    pub terminated_at: Option<Timestamp>,
    pub records: Vec<EditSnapshot>,
    /// Size of the task's own index file.
    pub index_bytes: u64,
}

/// The decision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionPlan {
    /// In removal order.
    pub remove: Vec<TaskId>,
    pub pinned: BTreeSet<TaskId>,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// P3: the tasks among the K most recent of some path they touched.
pub fn pinned(histories: &[TaskHistory], keep_recent_per_path: u32) -> BTreeSet<TaskId> {
    // path → task → its latest snapshot on that path (ts, then seq).
    let mut latest: BTreeMap<NormalizedPath, HashMap<TaskId, (Timestamp, u64)>> = BTreeMap::new();
    for h in histories {
        for r in &h.records {
            for t in r.transitions() {
                let slot = latest
                    .entry(t.path)
                    .or_default()
                    .entry(h.task_id.clone())
                    .or_insert((r.ts(), r.seq().0));
                *slot = (*slot).max((r.ts(), r.seq().0));
            }
        }
    }
    let k = usize::try_from(keep_recent_per_path).unwrap_or(usize::MAX);
    let mut out = BTreeSet::new();
    for tasks in latest.into_values() {
        let mut by_recency: Vec<(TaskId, (Timestamp, u64))> = tasks.into_iter().collect();
        by_recency.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.extend(by_recency.into_iter().take(k).map(|(t, _)| t));
    }
    out
}

/// Plans P1–P5 for a history of `total_bytes` (blobs plus indexes).
/// `blob_sizes` are on-disk sizes; `journal_blobs` are never collected.
pub fn plan(
    histories: &[TaskHistory],
    blob_sizes: &BTreeMap<ContentHash, u64>,
    journal_blobs: &BTreeSet<ContentHash>,
    total_bytes: u64,
    config: RetentionConfig,
) -> RetentionPlan {
    let pinned = pinned(histories, config.keep_recent_per_path);
    let mut plan = RetentionPlan {
        remove: Vec::new(),
        pinned: pinned.clone(),
        bytes_before: total_bytes,
        bytes_after: total_bytes,
    };
    if total_bytes <= config.byte_cap {
        return plan;
    }
    let mut terminal: Vec<&TaskHistory> = histories
        .iter()
        .filter(|h| h.terminated_at.is_some())
        .collect();
    terminal.sort_by(|a, b| {
        a.terminated_at
            .cmp(&b.terminated_at)
            .then_with(|| a.task_id.cmp(&b.task_id))
    });
    // The most recent terminal task always stays.
    terminal.pop();
    let (unpinned, pinned_ones): (Vec<&TaskHistory>, Vec<&TaskHistory>) = terminal
        .into_iter()
        .partition(|h| !pinned.contains(&h.task_id));
    let mut refs: HashMap<ContentHash, usize> = HashMap::new();
    for h in histories {
        for hash in blobs_of(h) {
            *refs.entry(hash).or_default() += 1;
        }
    }
    for h in unpinned.into_iter().chain(pinned_ones) {
        if plan.bytes_after <= config.byte_cap {
            break;
        }
        let mut freed = h.index_bytes;
        for hash in blobs_of(h) {
            if let Some(n) = refs.get_mut(&hash) {
                *n -= 1;
                if *n == 0 && !journal_blobs.contains(&hash) {
                    freed += blob_sizes.get(&hash).copied().unwrap_or(0);
                }
            }
        }
        plan.bytes_after = plan.bytes_after.saturating_sub(freed);
        plan.remove.push(h.task_id.clone());
    }
    plan
}

fn blobs_of(h: &TaskHistory) -> HashSet<ContentHash> {
    h.records
        .iter()
        .flat_map(|r| [r.base(), r.result()])
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cocode_core::ids::{AttemptNo, Seq, SnapshotId};
    use cocode_core::snapshot::{EditSnapshotParts, SnapshotOrigin};
    use pretty_assertions::assert_eq;

    fn history(task: &str, terminated: Option<i64>, paths: &[(&str, i64, &str)]) -> TaskHistory {
        let records = paths
            .iter()
            .enumerate()
            .map(|(n, (path, ts, content))| {
                EditSnapshot::new(EditSnapshotParts {
                    snapshot_id: SnapshotId::new(format!("{task}-{n}")).unwrap(),
                    task_id: TaskId::new(task).unwrap(),
                    seq: Seq(n as u64 + 1),
                    attempt_no: AttemptNo(0),
                    path: NormalizedPath::try_from((*path).to_owned()).unwrap(),
                    previous_path: None,
                    base: None,
                    result: Some(ContentHash::of(content.as_bytes())),
                    unkept: cocode_core::Unkept::NONE,
                    forms: cocode_core::snapshot::Forms::NONE,
                    origin: SnapshotOrigin::Gate,
                    ts: Timestamp::from_millis(*ts),
                })
                .unwrap()
            })
            .collect();
        TaskHistory {
            task_id: TaskId::new(task).unwrap(),
            terminated_at: terminated.map(Timestamp::from_millis),
            records,
            index_bytes: 10,
        }
    }

    fn sizes(h: &[TaskHistory]) -> BTreeMap<ContentHash, u64> {
        h.iter()
            .flat_map(|t| t.records.iter().filter_map(EditSnapshot::result))
            .map(|c| (c, 100))
            .collect()
    }

    fn ids(v: &[TaskId]) -> Vec<&str> {
        v.iter().map(TaskId::as_str).collect()
    }

    #[test]
    fn under_the_cap_nothing_is_removed() {
        let h = [history("old", Some(1), &[("a", 1, "x")])];
        let p = plan(
            &h,
            &sizes(&h),
            &BTreeSet::new(),
            100,
            RetentionConfig {
                keep_recent_per_path: 1,
                byte_cap: 100,
            },
        );
        assert_eq!(p.remove, vec![]);
    }

    #[test]
    fn unpinned_go_first_oldest_terminated_first_then_pinned_never_running_nor_the_latest() {
        let h = [
            history("running", None, &[("r", 1, "r")]),
            history("old-pinned", Some(10), &[("only-mine", 1, "p")]),
            history("old", Some(20), &[("shared", 2, "o")]),
            history("newer", Some(30), &[("shared", 3, "n")]),
            history("latest", Some(40), &[("shared", 4, "l")]),
        ];
        // K = 1: "latest" is the most recent task of "shared"; "old-pinned"
        // is the only (so most recent) task of "only-mine".
        let config = RetentionConfig {
            keep_recent_per_path: 1,
            byte_cap: 0,
        };
        let p = plan(&h, &sizes(&h), &BTreeSet::new(), 10_000, config);
        assert_eq!(
            ids(&p.pinned.iter().cloned().collect::<Vec<_>>()),
            vec!["latest", "old-pinned", "running"]
        );
        assert_eq!(ids(&p.remove), vec!["old", "newer", "old-pinned"]);
        // Stop as soon as the history fits.
        let config = RetentionConfig {
            keep_recent_per_path: 1,
            byte_cap: 10_000 - 110,
        };
        let p = plan(&h, &sizes(&h), &BTreeSet::new(), 10_000, config);
        assert_eq!(ids(&p.remove), vec!["old"]);
    }

    #[test]
    fn blobs_shared_with_kept_tasks_or_journals_free_nothing() {
        let h = [
            history("a", Some(1), &[("x", 1, "same")]),
            history("b", Some(2), &[("y", 2, "same"), ("z", 2, "journal")]),
            history("c", Some(3), &[("w", 3, "c")]),
        ];
        let journal: BTreeSet<ContentHash> = [ContentHash::of(b"journal")].into();
        let config = RetentionConfig {
            keep_recent_per_path: 0,
            byte_cap: 0,
        };
        let p = plan(&h, &sizes(&h), &journal, 1000, config);
        // a frees its index only (the blob is b's too); b then frees "same"
        // and its index, not the journal's blob; c is the latest and stays.
        assert_eq!(
            (ids(&p.remove), p.bytes_after),
            (vec!["a", "b"], 1000 - 10 - 110)
        );
    }
}
