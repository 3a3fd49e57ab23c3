//! The person's own `git`, run through the real launcher by
//! `cocode_git::perform`, on real repositories in temp folders: what it
//! stages, unstages and commits is checked with git itself.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build repositories with the real git and write files"
)]
#![expect(clippy::unwrap_used, reason = "test helpers")]

#[path = "../../../tests/support/require.rs"]
mod require;

#[path = "../../../tests/support/git.rs"]
mod git;

use std::collections::BTreeMap;
use std::path::Path;

use cocode_git::{
    GitAction, GitError, Head, Kind, diff_hunks, index_content, local_branches, perform, read,
    recent_commits,
};
use cocode_toolchain::{Launcher, WritableRoots};
use git::git;
use pretty_assertions::assert_eq;

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A repository, and a home whose `.gitconfig` names the person: the
/// author of the commits made through the launcher.
struct Fixture {
    repo: tempfile::TempDir,
    _home: tempfile::TempDir,
    launcher: Launcher,
}

fn numbered(from: usize, to: usize) -> String {
    use std::fmt::Write as _;
    (from..=to).fold(String::new(), |mut out, n| {
        let _ = writeln!(out, "line {n}");
        out
    })
}

fn fixture(runtime: &tokio::runtime::Runtime) -> Fixture {
    let repo = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    write(
        home.path(),
        ".gitconfig",
        "[user]\n\tname = Ada Person\n\temail = ada@example.com\n\
         [init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n",
    );
    let root = repo.path();
    git(root, &["init", "-q"]);
    write(root, "list.txt", &numbered(1, 20));
    write(root, "other.txt", "other\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "first"]);
    let inherited: BTreeMap<String, String> = [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", home.path().display().to_string()),
        ("LANG", "C".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let launcher = Launcher::new(runtime.handle().clone(), None, WritableRoots::default())
        .with_inherited_env(inherited);
    Fixture {
        repo,
        _home: home,
        launcher,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

impl Fixture {
    fn root(&self) -> &Path {
        self.repo.path()
    }

    fn perform(
        &self,
        runtime: &tokio::runtime::Runtime,
        action: &GitAction,
    ) -> Result<String, GitError> {
        runtime.block_on(perform(&self.launcher, self.root(), self.root(), action))
    }
}

#[test]
fn staging_one_hunk_stages_exactly_that_hunk_and_unstaging_it_takes_it_back() {
    if !require::require_program("git") {
        return;
    }
    let rt = runtime();
    let f = fixture(&rt);
    let root = f.root();
    let changed = numbered(1, 20)
        .replace("line 2\n", "line two\n")
        .replace("line 18\n", "");
    write(root, "list.txt", &changed);
    let staged = String::from_utf8(index_content(root, "list.txt").unwrap().unwrap()).unwrap();
    let hunks = diff_hunks(&staged, &changed);
    assert_eq!(hunks.len(), 2);
    f.perform(&rt, &GitAction::StagePatch(hunks[0].patch("list.txt")))
        .unwrap();
    assert_eq!(
        git(root, &["diff", "--cached"]),
        "diff --git a/list.txt b/list.txt\nindex c4352f8..4ada3c1 100644\n--- a/list.txt\n\
         +++ b/list.txt\n@@ -1,5 +1,5 @@\n line 1\n-line 2\n+line two\n line 3\n line 4\n line 5\n"
    );
    // The other hunk is still a change of the work tree alone.
    let state = read(root).unwrap().unwrap();
    assert_eq!(
        (
            state.files["list.txt"].staged,
            state.files["list.txt"].unstaged
        ),
        (Some(Kind::Modified), Some(Kind::Modified))
    );
    assert_eq!(
        git(root, &["diff"]),
        "diff --git a/list.txt b/list.txt\nindex 4ada3c1..1a19af2 100644\n--- a/list.txt\n\
         +++ b/list.txt\n@@ -15,6 +15,5 @@ line 14\n line 15\n line 16\n line 17\n-line 18\n \
         line 19\n line 20\n"
    );
    // Unstaging: the staged hunks are HEAD's text against the index's.
    let head = numbered(1, 20);
    let staged = String::from_utf8(index_content(root, "list.txt").unwrap().unwrap()).unwrap();
    let staged_hunks = diff_hunks(&head, &staged);
    assert_eq!(staged_hunks.len(), 1);
    f.perform(
        &rt,
        &GitAction::UnstagePatch(staged_hunks[0].patch("list.txt")),
    )
    .unwrap();
    assert_eq!(git(root, &["diff", "--cached"]), "");
    // The work tree was never touched.
    assert_eq!(
        std::fs::read_to_string(root.join("list.txt")).unwrap(),
        changed
    );
}

#[test]
fn a_commit_has_the_message_and_the_persons_author_and_amend_keeps_the_message() {
    if !require::require_program("git") {
        return;
    }
    let rt = runtime();
    let f = fixture(&rt);
    let root = f.root();
    write(root, "other.txt", "changed\n");
    write(root, "new file.txt", "new\n");
    f.perform(
        &rt,
        &GitAction::Stage(vec!["other.txt".into(), "new file.txt".into()]),
    )
    .unwrap();
    let said = f
        .perform(
            &rt,
            &GitAction::Commit {
                message: "Say more in other.txt\n\nAnd add a new file.".into(),
                amend: false,
            },
        )
        .unwrap();
    assert!(said.contains("Say more in other.txt"), "{said}");
    assert_eq!(
        git(root, &["log", "-1", "--format=%an <%ae>%n%B"]),
        "Ada Person <ada@example.com>\nSay more in other.txt\n\nAnd add a new file.\n\n"
    );
    let commits = recent_commits(root, 10).unwrap();
    assert_eq!(
        commits
            .iter()
            .map(|c| (c.summary.as_str(), c.author.as_str()))
            .collect::<Vec<_>>(),
        [("Say more in other.txt", "Ada Person"), ("first", "Test")]
    );
    assert_eq!(
        commits[0].id,
        git(root, &["rev-parse", "--short=7", "HEAD"]).trim()
    );
    assert_eq!(read(root).unwrap().unwrap().files, BTreeMap::new());
    // Amend with no message: the last commit takes the new change and
    // keeps its message.
    write(root, "other.txt", "changed again\n");
    f.perform(&rt, &GitAction::Stage(vec!["other.txt".into()]))
        .unwrap();
    f.perform(
        &rt,
        &GitAction::Commit {
            message: String::new(),
            amend: true,
        },
    )
    .unwrap();
    assert_eq!(git(root, &["rev-list", "--count", "HEAD"]).trim(), "2");
    assert_eq!(
        git(root, &["show", "-s", "--format=%s", "HEAD"]).trim(),
        "Say more in other.txt"
    );
    assert_eq!(git(root, &["show", "HEAD:other.txt"]), "changed again\n");
}

#[test]
fn a_failing_pre_commit_hook_shows_its_words_and_commits_nothing() {
    if !require::require_program("git") {
        return;
    }
    let rt = runtime();
    let f = fixture(&rt);
    let root = f.root();
    write(
        root,
        ".git/hooks/pre-commit",
        "#!/bin/sh\necho 'lint: other.txt says changed' >&2\nexit 1\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let hook = root.join(".git/hooks/pre-commit");
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    write(root, "other.txt", "changed\n");
    f.perform(&rt, &GitAction::Stage(vec!["other.txt".into()]))
        .unwrap();
    let refused = f.perform(
        &rt,
        &GitAction::Commit {
            message: "Try".into(),
            amend: false,
        },
    );
    assert_eq!(
        refused,
        Err(GitError::Failed {
            command: "git commit".into(),
            output: "lint: other.txt says changed".into(),
        })
    );
    assert_eq!(refused.unwrap_err().code(), "git.command_failed");
    // git runs the hook before it reads the message: a message longer than
    // the pipe holds is cut off by git's exit, and the hook's words still
    // say why (not a broken pipe).
    let long = f.perform(
        &rt,
        &GitAction::Commit {
            message: "Try again\n\n".to_owned() + &"a long body line\n".repeat(40_000),
            amend: false,
        },
    );
    assert_eq!(
        long,
        Err(GitError::Failed {
            command: "git commit".into(),
            output: "lint: other.txt says changed".into(),
        })
    );
    assert_eq!(git(root, &["rev-list", "--count", "HEAD"]).trim(), "1");
    // What was staged stays staged.
    assert_eq!(
        read(root).unwrap().unwrap().files["other.txt"].staged,
        Some(Kind::Modified)
    );
}

#[test]
fn paths_are_names_never_patterns_and_unstaging_works_before_the_first_commit() {
    if !require::require_program("git") {
        return;
    }
    let rt = runtime();
    let f = fixture(&rt);
    let root = f.root();
    // `[ab].txt` as a pattern would also name a.txt and b.txt (a name
    // every system allows).
    write(root, "[ab].txt", "brackets\n");
    write(root, "a.txt", "a\n");
    write(root, "-n", "reads as an option\n");
    f.perform(&rt, &GitAction::Stage(vec!["[ab].txt".into(), "-n".into()]))
        .unwrap();
    assert_eq!(
        git(root, &["diff", "--cached", "--name-only"]),
        "-n\n[ab].txt\n"
    );
    // Unix only: names this long pass Windows' path limit.
    if cfg!(unix) {
        // More paths than a command line holds (2.4 MB of names; ARG_MAX is
        // 2 MiB here).
        let long = "n".repeat(190);
        let many: Vec<String> = (0..12_000).map(|n| format!("many/{n:05}-{long}")).collect();
        std::fs::create_dir_all(root.join("many")).unwrap();
        for path in &many {
            std::fs::write(root.join(path), "x\n").unwrap();
        }
        f.perform(&rt, &GitAction::Stage(many.clone())).unwrap();
        assert_eq!(
            git(root, &["diff", "--cached", "--name-only"])
                .lines()
                .count(),
            many.len() + 2
        );
        f.perform(&rt, &GitAction::Unstage(many)).unwrap();
        assert_eq!(
            git(root, &["diff", "--cached", "--name-only"]),
            "-n\n[ab].txt\n"
        );
    }
    // A fresh repository: no HEAD to go back to.
    let fresh = tempfile::tempdir().unwrap();
    git(fresh.path(), &["init", "-q"]);
    write(fresh.path(), "a.txt", "a\n");
    let run = |action| rt.block_on(perform(&f.launcher, fresh.path(), fresh.path(), &action));
    run(GitAction::Stage(vec!["a.txt".into()])).unwrap();
    assert_eq!(
        read(fresh.path()).unwrap().unwrap().files["a.txt"].staged,
        Some(Kind::Added)
    );
    run(GitAction::Unstage(vec!["a.txt".into()])).unwrap();
    assert_eq!(
        read(fresh.path()).unwrap().unwrap().files["a.txt"],
        cocode_git::FileState {
            staged: None,
            unstaged: Some(Kind::Untracked),
            renamed_from: None,
            is_folder: false,
        }
    );
}

#[test]
fn branches_are_created_and_switched_and_git_refuses_in_its_own_words() {
    if !require::require_program("git") {
        return;
    }
    let rt = runtime();
    let f = fixture(&rt);
    let root = f.root();
    f.perform(&rt, &GitAction::CreateBranch("topic".into()))
        .unwrap();
    assert_eq!(
        read(root).unwrap().unwrap().head,
        Head::Branch("topic".into())
    );
    assert_eq!(local_branches(root).unwrap(), ["main", "topic"]);
    write(root, "other.txt", "on topic\n");
    git(root, &["commit", "-q", "-am", "topic work"]);
    // A change git would lose by switching: it refuses, and says why.
    write(root, "other.txt", "not committed\n");
    let refused = f
        .perform(&rt, &GitAction::Switch("main".into()))
        .unwrap_err();
    let GitError::Failed { command, output } = &refused else {
        panic!("{refused:?}");
    };
    assert_eq!(command, "git switch");
    assert!(
        output.contains("would be overwritten by checkout") && output.contains("other.txt"),
        "{output}"
    );
    assert_eq!(
        read(root).unwrap().unwrap().head,
        Head::Branch("topic".into())
    );
    // Something that reads as an option is never passed to git.
    assert_eq!(
        f.perform(&rt, &GitAction::Switch("--detach".into())),
        Err(GitError::BranchName {
            name: "--detach".into()
        })
    );
    git(root, &["checkout", "-q", "--", "other.txt"]);
    f.perform(&rt, &GitAction::Switch("main".into())).unwrap();
    assert_eq!(
        read(root).unwrap().unwrap().head,
        Head::Branch("main".into())
    );
}

#[test]
fn without_git_on_the_path_the_action_says_git_could_not_start() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let launcher =
        Launcher::new(rt.handle().clone(), None, WritableRoots::default()).with_inherited_env(
            BTreeMap::from([("PATH".to_owned(), "/nonexistent".to_owned())]),
        );
    let failed = rt
        .block_on(perform(
            &launcher,
            dir.path(),
            dir.path(),
            &GitAction::Stage(vec!["a".into()]),
        ))
        .unwrap_err();
    assert_eq!(
        (failed.code(), failed.to_string()),
        (
            "git.not_started",
            "git add could not be started: program not found: git".to_owned()
        )
    );
}
