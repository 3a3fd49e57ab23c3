//! Three comparisons on a generated workspace of 80,000 small files (1,000
//! folders × 80 files, each naming itself three times: the size of a big
//! monorepo), reported by `cargo xtask bench` as ours/peer (bars in
//! `xtask/src/bench.rs`, shown in TESTING.md):
//! - `big_tree_command`: an agent's command that changes one file, with
//!   both sweeps as a task's command has them (the scan before stats every
//!   file and reads none that is unchanged, and is kept for a later start
//!   with its journal; the scan after looks at what the watcher reported)
//!   against a warm `git status --porcelain` of the same tree, which also
//!   holds a sparse file of 2 TiB (ours names it by its identity; git is
//!   told to leave it out, since `git add` would read all of it);
//! - `big_tree_first_command`: the first command in a fresh workspace
//!   (open, recover, both sweeps, every file read and stored, the stat
//!   cache saved) against `git init && git add -A` of the same tree;
//! - `big_tree_history_bytes`: the blocks `.cocode/` takes after that first
//!   command (as `du` counts them) against the blocks of git's objects
//!   after `git add -A && git gc` — bytes, measured once, not time.
// The watcher the sweep narrows by is Linux's: elsewhere there is nothing
// to compare.
#[cfg(target_os = "linux")]
#[expect(
    clippy::disallowed_methods,
    reason = "the bench builds fixtures, removes them and runs git"
)]
#[expect(clippy::unwrap_used, reason = "bench setup")]
mod big {
    use std::path::Path;
    use std::process::Command;
    use std::time::Duration;

    use cocode_core::gate::TaskContext;
    use cocode_core::ids::{AttemptNo, SessionId, TaskId};
    use cocode_core::snapshot::{EditSnapshot, SnapshotOrigin};
    use cocode_workspace::{OpenWorkspace, SweepBudget, SweepWriters};
    use criterion::measurement::{Measurement, ValueFormatter};
    use criterion::{BatchSize, Criterion, Throughput};

    /// Folders of 80 files (few in debug builds so `cargo test` stays fast).
    const FOLDERS: usize = if cfg!(debug_assertions) { 5 } else { 1000 };
    const PER_FOLDER: usize = 80;

    fn fixture(root: &Path) {
        for d in 0..FOLDERS {
            let folder = root.join(format!("d{d:04}"));
            std::fs::create_dir_all(&folder).unwrap();
            for f in 0..PER_FOLDER {
                let line = format!("file {d} {f}\n");
                std::fs::write(folder.join(format!("f{f:02}.txt")), line.repeat(3)).unwrap();
            }
        }
    }

    fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        out.stdout
    }

    fn context() -> TaskContext {
        TaskContext {
            task_id: TaskId::new("bench").unwrap(),
            session_id: SessionId::new("bench-session").unwrap(),
            attempt_no: AttemptNo(1),
        }
    }

    fn remove(path: &Path) {
        if path.exists() {
            std::fs::remove_dir_all(path).unwrap();
        }
    }

    /// The blocks the files below `dir` take, in bytes, as `du` counts them.
    fn blocks(dir: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt as _;
        let mut total = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.path().symlink_metadata().unwrap();
            total += meta.blocks() * 512;
            if meta.is_dir() {
                total += blocks(&entry.path());
            }
        }
        total
    }

    /// One command: the sweep before, a change of one file, the sweep after.
    /// The look before is a full one, as for a command after a pause (one
    /// shortly after another look is narrowed).
    fn one_command(ws: &OpenWorkspace, ctx: &TaskContext, n: u64) {
        ws.gate.forget_recent_look();
        ws.gate
            .begin_task_sweep(ctx, &SweepBudget::UNLIMITED)
            .unwrap();
        let path = ws.workspace.root.join("d0000/f00.txt");
        std::fs::write(path, format!("changed {n}\n")).unwrap();
        assert_eq!(end_confined(ws, ctx).len(), 1);
    }

    /// The sweep after a confined command: what it recorded.
    fn end_confined(ws: &OpenWorkspace, ctx: &TaskContext) -> Vec<EditSnapshot> {
        ws.gate
            .end_sweep_within(
                ctx,
                SnapshotOrigin::Observed,
                SweepWriters::ConfinedCommands,
                &SweepBudget::UNLIMITED,
            )
            .unwrap()
    }

    /// Commits the tree to a git repository in it (`.cocode/` excluded).
    fn commit(root: &Path) {
        git(root, &["init", "-q", "."]);
        std::fs::write(root.join(".git/info/exclude"), ".cocode/\n").unwrap();
        git(root, &["add", "-A"]);
        git(
            root,
            &[
                "-c",
                "user.name=bench",
                "-c",
                "user.email=bench@localhost",
                "commit",
                "-q",
                "-m",
                "tree",
            ],
        );
    }

    /// One tree serves every comparison (making 80,000 files takes minutes
    /// on a file system that has freed many): ours never looks into `.git/`,
    /// git never into `.cocode/`.
    fn bench_command(c: &mut Criterion, root: &Path) {
        let mut group = c.benchmark_group("big_tree_command");
        group
            .sample_size(20)
            .measurement_time(Duration::from_secs(20))
            .warm_up_time(Duration::from_secs(2));
        let ctx = context();
        commit(root);
        // A sparse file of 2 TiB beside the tree: never read by ours, left
        // out by git.
        let sparse = root.join("sparse.bin");
        std::fs::File::create(&sparse)
            .unwrap()
            .set_len(2 << 40)
            .unwrap();
        std::fs::write(root.join(".git/info/exclude"), ".cocode/\nsparse.bin\n").unwrap();
        let ws = OpenWorkspace::open(root).unwrap();
        ws.gate.recover().unwrap();
        assert!(ws.gate.watch().unwrap());
        // The first command read and stored the tree.
        one_command(&ws, &ctx, 0);
        let mut n = 0;
        group.bench_function("ours", |b| {
            b.iter(|| {
                n += 1;
                one_command(&ws, &ctx, n);
            });
        });
        assert!(
            ws.gate.last_sweep_stats().narrowed,
            "the scan after the command walked the tree"
        );
        drop(ws);
        let path = root.join("d0000/f00.txt");
        // Warm: the index has every file's stat.
        git(root, &["status", "--porcelain"]);
        group.bench_function("peer", |b| {
            b.iter(|| {
                n += 1;
                std::fs::write(&path, format!("changed {n}\n")).unwrap();
                let status = git(root, &["status", "--porcelain"]);
                assert!(
                    status == b" M d0000/f00.txt\n",
                    "git status: {} bytes",
                    status.len()
                );
            });
        });
        group.finish();
        std::fs::write(&path, "file 0 0\n".repeat(3)).unwrap();
        std::fs::remove_file(&sparse).unwrap();
    }

    /// The first command in a fresh workspace: open, recover, watch, both
    /// sweeps, and the stat cache saved when the workspace closes.
    fn first_command(root: &Path, ctx: &TaskContext) {
        let ws = OpenWorkspace::open(root).unwrap();
        ws.gate.recover().unwrap();
        ws.gate.watch().unwrap();
        ws.gate
            .begin_task_sweep(ctx, &SweepBudget::UNLIMITED)
            .unwrap();
        assert_eq!(end_confined(&ws, ctx), vec![]);
    }

    /// Leaves, for the bytes comparison, `.cocode/` after the first command
    /// in `kept` and git's objects after `git add -A && git gc` in the tree.
    fn bench_first_command(c: &mut Criterion, root: &Path, kept: &Path) {
        let mut group = c.benchmark_group("big_tree_first_command");
        group
            .sample_size(10)
            .measurement_time(Duration::from_mins(1))
            .warm_up_time(Duration::from_secs(1));
        let ctx = context();
        let (cocode, dot_git) = (root.join(".cocode"), root.join(".git"));
        group.bench_function("ours", |b| {
            b.iter_batched(
                || {
                    remove(&cocode);
                    remove(&dot_git);
                },
                |()| first_command(root, &ctx),
                BatchSize::PerIteration,
            );
        });
        group.bench_function("peer", |b| {
            b.iter_batched(
                || {
                    remove(&cocode);
                    remove(&dot_git);
                },
                |()| {
                    git(root, &["init", "-q", "."]);
                    git(root, &["add", "-A"]);
                },
                BatchSize::PerIteration,
            );
        });
        group.finish();
        remove(&cocode);
        remove(&dot_git);
        first_command(root, &ctx);
        std::fs::rename(&cocode, kept.join(".cocode")).unwrap();
        git(root, &["init", "-q", "."]);
        git(root, &["add", "-A"]);
        git(root, &["gc", "-q"]);
    }

    /// Bytes on disk, as a criterion measurement: each iteration counts the
    /// blocks of a folder again.
    struct Bytes;

    struct BytesFormatter;

    /// Bytes as they are: criterion keeps what the formatter scales, so
    /// nothing is scaled (the report turns them into MiB).
    impl ValueFormatter for BytesFormatter {
        fn scale_values(&self, _: f64, _: &mut [f64]) -> &'static str {
            "B"
        }

        fn scale_throughputs(&self, _: f64, _: &Throughput, _: &mut [f64]) -> &'static str {
            "B"
        }

        fn scale_for_machines(&self, _: &mut [f64]) -> &'static str {
            "B"
        }
    }

    impl Measurement for Bytes {
        type Intermediate = ();
        type Value = u64;

        fn start(&self) {}

        fn end(&self, (): ()) -> u64 {
            0
        }

        fn add(&self, a: &u64, b: &u64) -> u64 {
            a + b
        }

        fn zero(&self) -> u64 {
            0
        }

        #[expect(clippy::cast_precision_loss, reason = "bytes far below 2^52")]
        fn to_f64(&self, value: &u64) -> f64 {
            *value as f64
        }

        fn formatter(&self) -> &dyn ValueFormatter {
            &BytesFormatter
        }
    }

    fn bench_history_bytes(c: &mut Criterion<Bytes>, ours: &Path, peer: &Path) {
        let mut group = c.benchmark_group("big_tree_history_bytes");
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(10))
            .measurement_time(Duration::from_millis(10));
        for (name, dir) in [("ours", ours), ("peer", peer)] {
            group.bench_function(name, |b| {
                b.iter_custom(|iters| (0..iters).map(|_| blocks(dir)).sum());
            });
        }
        group.finish();
    }

    pub fn main() {
        let tree = tempfile::tempdir().unwrap();
        fixture(tree.path());
        let mut times = Criterion::default().configure_from_args();
        bench_command(&mut times, tree.path());
        let kept = tempfile::tempdir().unwrap();
        bench_first_command(&mut times, tree.path(), kept.path());
        times.final_summary();
        let mut sizes = Criterion::default()
            .with_measurement(Bytes)
            .configure_from_args();
        bench_history_bytes(
            &mut sizes,
            &kept.path().join(".cocode"),
            &tree.path().join(".git/objects"),
        );
        sizes.final_summary();
    }
}

fn main() {
    #[cfg(target_os = "linux")]
    big::main();
}
