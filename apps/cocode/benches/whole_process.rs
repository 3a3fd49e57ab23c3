//! Whole `cocode` processes on a generated tree shaped like a real one
//! (crates with nested modules, tests, assets of mixed sizes, committed to
//! git), reported by `cargo xtask bench` as ours/peer:
//! - `task_run_later`: a later `cocode task run` of a trivial command with
//!   the local agent (start, open, recovery, the agent's look around, the
//!   looks before and after the command and verification, retention, exit)
//!   against `git status --porcelain` plus one `cocode --version` start;
//! - `task_run_first`: the first `cocode task run` in the tree (every file
//!   read and stored) against `git init && git add -A && git commit`;
//! - `workspace_search_first` and `_second`: the Search panel's search of
//!   the tree for a word (listing the folder, then reusing the listing)
//!   against `rg -c` of the word, the counts equal;
//! - `python_diagnostics`: `cocode lsp diagnostics` of one Python file in
//!   the tree against `pyright FILE` (where pyright is installed).
//!
//! `COCODE_LOG=debug` on a `task run` shows where its time goes, phase by
//! phase.
#[cfg(unix)]
#[expect(
    clippy::disallowed_methods,
    reason = "the bench builds a tree and runs whole processes"
)]
#[expect(clippy::unwrap_used, reason = "bench setup")]
mod whole {
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::Duration;

    use cocode::window::search::{Listing, search_all};
    use cocode_editor::SearchQuery;
    use criterion::{BatchSize, Criterion};

    /// Crates in the tree (few in debug builds, so a check stays quick).
    const CRATES: usize = if cfg!(debug_assertions) { 3 } else { 120 };

    /// The word the search benches look for.
    const NEEDLE: &str = "needle_in_tree";

    /// A small generator, so the tree is the same in every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        /// A file size as source trees have them: mostly small, some tens
        /// of KiB, a few of hundreds.
        fn size(&mut self) -> usize {
            match self.next() % 100 {
                0 => 256 * 1024 + (self.next() % (256 * 1024)) as usize,
                1..=9 => 16 * 1024 + (self.next() % (48 * 1024)) as usize,
                _ => 200 + (self.next() % 6000) as usize,
            }
        }
    }

    fn write(path: &Path, rng: &mut Rng) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let size = rng.size();
        let line = format!("// {} {}\n", path.display(), rng.next());
        let mut text = line.repeat(size / line.len() + 1);
        text.truncate(size);
        // One file in sixteen holds the word the search benches look for,
        // on a line of its own in the middle.
        if rng.next().is_multiple_of(16) {
            let middle = text[..text.len() / 2].rfind('\n').map_or(0, |n| n + 1);
            text.insert_str(middle, &format!("fn {NEEDLE}() {{}}\n"));
        }
        std::fs::write(path, text).unwrap();
    }

    /// About 200 files per crate: modules three folders deep, tests,
    /// benches, examples and assets.
    fn fixture(root: &Path) {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for c in 0..CRATES {
            let krate = root.join(format!("crates/c{c:03}"));
            std::fs::create_dir_all(&krate).unwrap();
            std::fs::write(
                krate.join("Cargo.toml"),
                format!("[package]\nname = \"c{c:03}\"\nversion = \"0.1.0\"\n"),
            )
            .unwrap();
            write(&krate.join("README.md"), &mut rng);
            for m in 0..12 {
                for n in 0..8 {
                    write(
                        &krate.join(format!("src/m{m}/s{}/f{n}.rs", n % 3)),
                        &mut rng,
                    );
                }
                write(&krate.join(format!("src/m{m}/mod.rs")), &mut rng);
            }
            for t in 0..30 {
                write(&krate.join(format!("tests/t{t}.rs")), &mut rng);
            }
            for a in 0..60 {
                write(&krate.join(format!("assets/a{}/x{a}.txt", a % 5)), &mut rng);
            }
        }
        std::fs::write(root.join(".gitignore"), "/target/\n").unwrap();
    }

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
    }

    fn commit(root: &Path) {
        git(root, &["init", "-q", "."]);
        git(root, &["add", "-A"]);
        git(
            root,
            &[
                // No `git gc --auto` left running in the background, taking
                // a core from what is measured next.
                "-c",
                "gc.auto=0",
                "-c",
                "maintenance.auto=false",
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

    /// `cocode` with `args`, in a home of its own; it must succeed.
    fn cocode(home: &Path, args: &[&str]) {
        let status = Command::new(env!("CARGO_BIN_EXE_cocode"))
            .args(args)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env_remove("COCODE_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "cocode {args:?}");
    }

    fn task_run(home: &Path, root: &Path) {
        cocode(
            home,
            &[
                "task",
                "run",
                "--workspace",
                root.to_str().unwrap(),
                "--prompt",
                "run \"true\"",
                "--yes",
            ],
        );
    }

    fn remove(path: &Path) {
        if path.exists() {
            std::fs::remove_dir_all(path).unwrap();
        }
    }

    fn bench_later(c: &mut Criterion, home: &Path, root: &Path) {
        let mut group = c.benchmark_group("task_run_later");
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(20))
            .warm_up_time(Duration::from_secs(2));
        // The first task read and stored the tree.
        task_run(home, root);
        group.bench_function("ours", |b| b.iter(|| task_run(home, root)));
        let status = || {
            let out = Command::new("git")
                .args(["status", "--porcelain"])
                .current_dir(root)
                .output()
                .unwrap();
            assert!(out.status.success());
        };
        status();
        group.bench_function("peer", |b| {
            b.iter(|| {
                status();
                cocode(home, &["--version"]);
            });
        });
        group.finish();
    }

    fn bench_first(c: &mut Criterion, home: &Path, root: &Path) {
        let mut group = c.benchmark_group("task_run_first");
        group
            .sample_size(10)
            .measurement_time(Duration::from_mins(1))
            .warm_up_time(Duration::from_secs(1));
        let (cocode_dir, dot_git) = (root.join(".cocode"), root.join(".git"));
        let fresh = || {
            remove(&cocode_dir);
            remove(&dot_git);
        };
        group.bench_function("ours", |b| {
            b.iter_batched(fresh, |()| task_run(home, root), BatchSize::PerIteration);
        });
        group.bench_function("peer", |b| {
            b.iter_batched(fresh, |()| commit(root), BatchSize::PerIteration);
        });
        group.finish();
    }

    /// Matching lines per file by `rg -c`.
    fn rg_counts(root: &Path) -> Vec<(String, usize)> {
        let out = Command::new("rg")
            .args(["-c", NEEDLE])
            .current_dir(root)
            .output()
            .unwrap();
        assert!(out.status.success(), "rg -c");
        let mut counts: Vec<(String, usize)> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let (path, n) = l.rsplit_once(':').unwrap();
                (path.to_owned(), n.parse().unwrap())
            })
            .collect();
        counts.sort();
        counts
    }

    fn search(root: &Path, listing: &mut Listing, generation: u64) -> Vec<(String, usize)> {
        let query = SearchQuery {
            text: NEEDLE.into(),
            ..SearchQuery::default()
        };
        let (files, _, capped) = search_all(root, query, listing, generation).unwrap();
        assert!(!capped);
        let mut counts: Vec<(String, usize)> =
            files.into_iter().map(|f| (f.path, f.lines.len())).collect();
        counts.sort();
        counts
    }

    /// Skipped, with a note, where ripgrep is not installed (`cargo xtask
    /// bench` installs it; the test suite's run of the benches does not).
    fn bench_search(c: &mut Criterion, root: &Path) {
        if Command::new("rg").arg("--version").output().is_err() {
            eprintln!("workspace_search: ripgrep is not installed here; skipped");
            return;
        }
        let want = rg_counts(root);
        assert!(!want.is_empty(), "no file holds the word");
        let mut listing = Listing::default();
        assert_eq!(search(root, &mut listing, 0), want);
        let peer = || rg_counts(root);
        for (name, fresh) in [
            ("workspace_search_first", true),
            ("workspace_search_second", false),
        ] {
            let mut group = c.benchmark_group(name);
            group
                .sample_size(20)
                .measurement_time(Duration::from_secs(10))
                .warm_up_time(Duration::from_secs(1));
            let mut generation = 0;
            group.bench_function("ours", |b| {
                b.iter(|| {
                    // The first search of the folder lists it; the second
                    // reuses that listing.
                    generation += u64::from(fresh);
                    search(root, &mut listing, generation)
                });
            });
            group.bench_function("peer", |b| b.iter(peer));
            group.finish();
        }
    }

    /// A Python file with two type errors, at the top of the tree.
    const PYTHON: &str = "import os\n\n\ndef f(x: int) -> str:\n    return x + 1\n\n\nprint(f(\"a\"), os.getcwd())\n";

    /// The error lines `cocode lsp diagnostics` and `pyright` print for
    /// `tools/check.py`, as (line, column) pairs; both exit with 1.
    fn python_errors(home: &Path, root: &Path, ours: bool) -> Vec<(u32, u32)> {
        let mut command = if ours {
            let mut c = Command::new(env!("CARGO_BIN_EXE_cocode"));
            c.args(["lsp", "diagnostics", "tools/check.py"])
                .env("HOME", home)
                .env("XDG_CONFIG_HOME", home.join("config"))
                .env("XDG_DATA_HOME", home.join("data"))
                .env_remove("COCODE_LOG");
            c
        } else {
            let mut c = Command::new("pyright");
            c.arg("tools/check.py");
            c
        };
        let out = command.current_dir(root).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{ours}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let mut errors: Vec<(u32, u32)> = text
            .lines()
            .filter(|l| l.contains("error:"))
            .map(|l| {
                // pyright: `  /…/tools/check.py:5:12 - error: …`;
                // ours: `tools/check.py:5:12: error: …`.
                let at = l.trim().split(" - ").next().unwrap();
                let at = at.split(": ").next().unwrap();
                let mut parts = at.rsplitn(3, ':');
                let column = parts.next().unwrap();
                let line = parts.next().unwrap();
                (line.parse().unwrap(), column.parse().unwrap())
            })
            .collect();
        errors.sort_unstable();
        errors
    }

    /// One Python file's diagnostics in the tree: `cocode lsp diagnostics`
    /// (pyright's language server started, the file opened, its report
    /// awaited) against pyright's own command line, the errors equal.
    /// Skipped, with a note, where pyright is not installed.
    fn bench_python(c: &mut Criterion, home: &Path, root: &Path) {
        if Command::new("pyright").arg("--version").output().is_err() {
            eprintln!("python_diagnostics: pyright is not installed here; skipped");
            return;
        }
        std::fs::create_dir_all(root.join("tools")).unwrap();
        std::fs::write(root.join("tools/check.py"), PYTHON).unwrap();
        let want = python_errors(home, root, false);
        assert_eq!(want, [(5, 12), (8, 9)]);
        assert_eq!(python_errors(home, root, true), want);
        let mut group = c.benchmark_group("python_diagnostics");
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(30))
            .warm_up_time(Duration::from_secs(1));
        group.bench_function("ours", |b| b.iter(|| python_errors(home, root, true)));
        group.bench_function("peer", |b| b.iter(|| python_errors(home, root, false)));
        group.finish();
        std::fs::remove_dir_all(root.join("tools")).unwrap();
    }

    pub fn main() {
        let home = tempfile::tempdir().unwrap();
        let tree = tempfile::tempdir().unwrap();
        fixture(tree.path());
        commit(tree.path());
        // The tree's 300 MB on disk before anything is timed, so no
        // write-back runs under the first measurements.
        assert!(Command::new("sync").status().unwrap().success());
        let mut c = Criterion::default().configure_from_args();
        bench_search(&mut c, tree.path());
        bench_python(&mut c, home.path(), tree.path());
        bench_later(&mut c, home.path(), tree.path());
        bench_first(&mut c, home.path(), tree.path());
        c.final_summary();
    }
}

fn main() {
    #[cfg(unix)]
    whole::main();
}
