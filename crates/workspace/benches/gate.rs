//! Four comparisons, each measured in one run and reported by `cargo xtask
//! bench` as ours/peer (bars in `xtask/src/bench.rs`, shown in TESTING.md):
//! - 1,000 agent writes through the gate as one batch against `git add -A &&
//!   git commit` of the same changes with `core.fsync=all`;
//! - the same 1,000 writes as 1,000 separate operations (each with its
//!   snapshot, journal and barrier) against the floor of 1,000 separate
//!   durable replaces in plain Rust (write a temp file, fsync, rename over
//!   the file, fsync its folder);
//! - the same 1,000 separate operations against 1,000 separate git
//!   commits (`git add FILE && git commit`, `core.fsync=all`), reported
//!   beside the floor: what keeping each change on its own costs with git;
//! - rolling a task that changed 1,000 files back to its start against
//!   `git checkout -- .` restoring the same files.
//!
//! Each run of ours is followed by a run of its peer, each on a fixture of
//! its own, and both sides are measured that way (see [`bench_pair`]).
#![expect(
    clippy::disallowed_methods,
    reason = "the bench builds fixtures and runs git"
)]
#![expect(clippy::unwrap_used, reason = "bench setup")]

use std::cell::RefCell;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cocode_core::gate::{GateOp, TaskContext, WorkspaceFileGate};
use cocode_core::ids::{AttemptNo, SessionId, TaskId};
use cocode_core::path::NormalizedPath;
use cocode_workspace::{OpenWorkspace, RollbackQuery};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

#[path = "../../../benches/support/paired.rs"]
mod paired;
use paired::Paired;

/// Files changed per iteration (small in debug builds so `cargo test` stays fast).
const FILES: usize = if cfg!(debug_assertions) { 20 } else { 1000 };

fn content(i: usize, generation: u32) -> Vec<u8> {
    format!("// file {i}, generation {generation}\nfn f{i}() -> u32 {{ {generation} }}\n")
        .into_bytes()
}

fn fixture(dir: &Path) {
    for i in 0..FILES {
        let path = dir.join(format!("src/m{}/f{i}.rs", i % 20));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content(i, 0)).unwrap();
    }
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn context() -> TaskContext {
    TaskContext {
        task_id: TaskId::new("bench").unwrap(),
        session_id: SessionId::new("bench-session").unwrap(),
        attempt_no: AttemptNo(1),
    }
}

/// Makes everything a setup wrote durable, so neither side's measured run
/// pays for flushing the other's fixture, and files are on disk the way a
/// finished task left them (not still in the page cache without blocks,
/// which makes replacing them artificially cheap).
fn settle() {
    let status = Command::new("sync").status().unwrap();
    assert!(status.success(), "sync");
}

/// A repository with the fixture committed (`core.fsync=all`) and every
/// file changed in the work tree.
fn git_fixture_with_changes() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    git(dir.path(), &["init", "-q", "."]);
    git(dir.path(), &["config", "core.fsync", "all"]);
    git(dir.path(), &["config", "user.name", "bench"]);
    git(dir.path(), &["config", "user.email", "bench@localhost"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "base"]);
    for i in 0..FILES {
        std::fs::write(
            dir.path().join(format!("src/m{}/f{i}.rs", i % 20)),
            content(i, 1),
        )
        .unwrap();
    }
    settle();
    dir
}

/// The fixture opened as a workspace the gate has seen whole, like git's
/// base commit (the sweep before a turn stores it), before the agent
/// writes.
fn seen_fixture() -> (tempfile::TempDir, OpenWorkspace) {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let ws = OpenWorkspace::open(dir.path()).unwrap();
    ws.gate.recover().unwrap();
    ws.gate.begin_sweep().unwrap();
    settle();
    (dir, ws)
}

/// One way of making the agent's writes.
type WriteAll = fn(&OpenWorkspace, &TaskContext);

/// The agent's write of fixture file `i`.
fn change(i: usize) -> GateOp {
    GateOp::Write {
        path: NormalizedPath::try_from(format!("src/m{}/f{i}.rs", i % 20)).unwrap(),
        bytes: content(i, 1),
    }
}

/// Every fixture file changed through the gate as one agent task, one
/// operation (journal, barrier) per file, then made durable.
fn write_every_file(ws: &OpenWorkspace, ctx: &TaskContext) {
    for i in 0..FILES {
        ws.gate.apply(ctx, change(i)).unwrap();
    }
    ws.gate.flush().unwrap();
}

/// The floor of separate durable writes: each file replaced on its own,
/// visible only once its bytes are on disk, and the rename made durable.
fn durable_replace_every_file(dir: &Path) {
    use std::io::Write as _;
    for i in 0..FILES {
        let path = dir.join(format!("src/m{}/f{i}.rs", i % 20));
        let folder = path.parent().unwrap();
        let temp = folder.join(format!(".f{i}.rs.tmp"));
        let mut file = std::fs::File::create(&temp).unwrap();
        file.write_all(&content(i, 1)).unwrap();
        file.sync_all().unwrap();
        std::fs::rename(&temp, &path).unwrap();
        std::fs::File::open(folder).unwrap().sync_all().unwrap();
    }
}

/// Commits timed of the 1,000 a commit per file makes; the time is scaled
/// to all of them (each commit costs the same: one file added to an index
/// of the same size, one commit object, the same syncs).
const COMMITS_TIMED: usize = if FILES < 100 { FILES } else { 100 };

/// A commit per changed file with `core.fsync=all`, as a person keeping
/// each change on its own would make them; returns the time scaled to
/// every file.
fn commit_every_file(dir: &Path) -> Duration {
    let started = Instant::now();
    for i in 0..COMMITS_TIMED {
        let path = format!("src/m{}/f{i}.rs", i % 20);
        git(dir, &["add", &path]);
        git(dir, &["commit", "-q", "-m", &path]);
    }
    started.elapsed() * u32::try_from(FILES / COMMITS_TIMED).unwrap()
}

/// Every fixture file changed through the gate as one batch (one journal,
/// one barrier, a snapshot per file), then made durable.
fn write_every_file_in_one_batch(ws: &OpenWorkspace, ctx: &TaskContext) {
    let ops = (0..FILES).map(change).collect();
    ws.gate.apply(ctx, GateOp::Batch { ops }).unwrap();
    ws.gate.flush().unwrap();
}

/// One timed run of a side of a comparison, its untimed setup included.
type Run<'a> = &'a dyn Fn() -> Duration;

/// How long ext4 without a journal skips a freed inode when it allocates
/// (`RECENTCY_MIN` in the kernel's `ialloc.c`), and a little more.
const INODE_RECENCY: Duration = Duration::from_secs(65);

/// Waits until no inode the comparisons before freed is skipped any more,
/// so each comparison starts from the same state of the disk whatever ran
/// before it (not in the quick debug run of `cargo test`). Each run of a
/// comparison frees about a thousand inodes, and every fixture is kept
/// until the process ends (see [`kept`]). A mass deletion just before the
/// bench would need 365 s (the recency while an inode's block of the
/// table is dirty, which any allocation in the block makes it: one batch
/// took 0.48 s 65 s after 80,000 files were deleted, 0.16 s 365 s after),
/// so `cargo xtask bench` runs this bench before the others rather than
/// wait that long before each comparison.
fn cool_down() {
    if !cfg!(debug_assertions) {
        std::thread::sleep(INODE_RECENCY);
    }
}

/// A comparison whose sides are measured alternately, each run on a fixture
/// of its own (see `benches/support/paired.rs`), from a cooled-down disk
/// (see [`cool_down`]); `folder` is the comparison's criterion folder, and
/// with a name (the folder's last part) the group holds several
/// comparisons. Alternation also makes each side meet the same state of
/// the file system as the other: on a journal-less ext4 every inode
/// allocation skips the inodes freed in the last minute, and each run frees
/// a thousand, so a side measured alone after the other would pay for the
/// other's runs. A comparison the command line's filter leaves out is not
/// run, so it does not wait either.
fn bench_pair(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    folder: &str,
    name: Option<&str>,
    ours: Run<'_>,
    peer: Run<'_>,
) {
    let cooled = std::cell::Cell::new(false);
    let paired = Paired::default();
    for (side, want_ours) in [("ours", true), ("peer", false)] {
        let id = name.map_or_else(
            || BenchmarkId::from_parameter(side),
            |name| BenchmarkId::new(name, side),
        );
        group.bench_function(id, |b| {
            if !cooled.replace(true) {
                cool_down();
            }
            b.iter_custom(|iters| paired.alternate(iters, ours, peer, want_ours));
        });
    }
    paired.write(folder);
}

/// A fixture kept on disk until the process ends (deleting thousands of
/// files between runs makes the next inode allocations slow: ext4 skips
/// recently freed inodes), and the time measured on it.
fn kept(keep: &Keep, dir: tempfile::TempDir, took: Duration) -> Duration {
    keep.borrow_mut().push(dir);
    took
}

/// Times `run` once.
fn timed(run: impl FnOnce()) -> Duration {
    let started = Instant::now();
    run();
    started.elapsed()
}

/// Fixtures kept until the process ends (see [`kept`]).
type Keep = RefCell<Vec<tempfile::TempDir>>;

fn bench_writes(c: &mut Criterion, keep: &Keep) {
    let mut group = c.benchmark_group("gate_1000_writes");
    // Ten runs of each side, each run measured with its pair (see
    // [`bench_pair`]).
    group
        .sample_size(10)
        .sampling_mode(criterion::SamplingMode::Flat)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    let ctx = context();
    let through_gate = |write: WriteAll| {
        let (dir, ws) = seen_fixture();
        let took = timed(|| write(&ws, &ctx));
        kept(keep, dir, took)
    };
    let on_git_fixture = |run: &dyn Fn(&Path) -> Duration| {
        let dir = git_fixture_with_changes();
        let took = run(dir.path());
        kept(keep, dir, took)
    };
    bench_pair(
        &mut group,
        "gate_1000_writes/one_op_per_file",
        Some("one_op_per_file"),
        &|| through_gate(write_every_file),
        &|| {
            let dir = tempfile::tempdir().unwrap();
            fixture(dir.path());
            settle();
            let took = timed(|| durable_replace_every_file(dir.path()));
            kept(keep, dir, took)
        },
    );
    bench_pair(
        &mut group,
        "gate_1000_writes/one_batch",
        Some("one_batch"),
        &|| through_gate(write_every_file_in_one_batch),
        &|| {
            on_git_fixture(&|dir| {
                timed(|| {
                    git(dir, &["add", "-A"]);
                    git(dir, &["commit", "-q", "-m", "change"]);
                })
            })
        },
    );
    bench_pair(
        &mut group,
        "gate_1000_writes/git_commit_per_file",
        Some("git_commit_per_file"),
        &|| through_gate(write_every_file),
        &|| on_git_fixture(&commit_every_file),
    );
    group.finish();
}

fn bench_rollback(c: &mut Criterion, keep: &Keep) {
    let ctx = context();
    let mut group = c.benchmark_group("rollback_1000_files");
    // Ten runs of each side, each run measured with its pair (see
    // [`bench_pair`]).
    group
        .sample_size(10)
        .sampling_mode(criterion::SamplingMode::Flat)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    let ours = || {
        let dir = tempfile::tempdir().unwrap();
        fixture(dir.path());
        let ws = OpenWorkspace::open(dir.path()).unwrap();
        write_every_file(&ws, &ctx);
        settle();
        let took = timed(|| {
            let restored = ws
                .gate
                .rollback(&ctx.task_id, &RollbackQuery::TaskStart)
                .unwrap();
            assert_eq!(restored.len(), FILES);
        });
        kept(keep, dir, took)
    };
    let peer = || {
        let dir = git_fixture_with_changes();
        let took = timed(|| git(dir.path(), &["checkout", "-q", "--", "."]));
        kept(keep, dir, took)
    };
    bench_pair(&mut group, "rollback_1000_files", None, &ours, &peer);
    group.finish();
}

fn bench_all(c: &mut Criterion) {
    let keep = Keep::default();
    bench_writes(c, &keep);
    bench_rollback(c, &keep);
}

criterion_group!(benches, bench_all);
criterion_main!(benches);
