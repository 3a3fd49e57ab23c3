//! Git in the window, driven as a person would: the Explorer's letters and
//! colours, the status bar's branch, and the gutter's marks against HEAD,
//! before and after an agent's task edits a file; then the Source Control
//! panel stages the edit by its hunk and commits it.
#![cfg(target_os = "linux")]
#![expect(
    clippy::disallowed_methods,
    reason = "tests build a repository with the real git"
)]

use cocode_git::{Head, Kind, LineMark, MarkKind};
use egui::accesskit::Role;
use egui::{Key, Modifiers};
use std::path::Path;

use egui_kittest::Harness;
use egui_kittest::kittest::{Queryable, by};
use pretty_assertions::assert_eq;

use crate::window::app::CocodeApp;
use crate::window::scm::Outcome;
use crate::window::testing::git_repo::git;
use crate::window::testing::peers as require;
use crate::window::testing::{approve_and_accept, harness, run_until, type_prompt};

#[test]
fn an_agents_edit_shows_in_the_explorer_and_the_gutter_and_the_panel_stages_and_commits_it() {
    if !require::require_program("git") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn a() {}\n").unwrap();
    git(&root, &["init", "-q"]);
    // The person's identity for the commit the panel makes (the person's
    // own git reads it, as it reads their global configuration).
    git(&root, &["config", "user.name", "Ada Person"]);
    git(&root, &["config", "user.email", "ada@example.com"]);
    git(&root, &["config", "commit.gpgsign", "false"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "first"]);
    std::fs::write(root.join("new.txt"), "new\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn a() { 1 }\n").unwrap();

    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "git's state in the Explorer", |h| {
        h.query_by_label("  new.txt  U").is_some()
    });
    // A clean file keeps its plain name; a folder holding a change says so
    // in its colour (its label stays the folder's name).
    h.get_by_label("  a.txt");
    assert_eq!(
        h.state().git_state.as_ref().unwrap().folder_kind("src"),
        Some(Kind::Modified)
    );
    h.get_by_label("main");

    h.get_by_label("  a.txt").click();
    run_until(&mut h, "HEAD's text in the editor", |h| {
        h.state().editors.tabs.iter().any(|t| t.git_marks.is_some())
    });
    assert_eq!(h.state().editors.tabs[0].git_marks.as_ref().unwrap().1, []);

    type_prompt(&mut h, r#"replace "two" with "2" in a.txt"#);
    h.get_by_label("Run task").click();
    approve_and_accept(&mut h, &["edit a file"]);
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\n2\nthree\n"
    );
    run_until(&mut h, "the edit marked", |h| {
        h.query_by_label("  a.txt  M").is_some()
            && h.state().editors.tabs[0]
                .git_marks
                .as_ref()
                .is_some_and(|(_, marks)| !marks.is_empty())
    });
    assert_eq!(
        h.state().editors.tabs[0].git_marks.as_ref().unwrap().1,
        [LineMark {
            kind: MarkKind::Modified,
            start: 1,
            end: 2,
            old_start: 1,
            old_lines: 1,
        }]
    );
    // The branch's hover counts the changed paths.
    let (text, hover) = crate::window::scm::branch_label(h.state().git_state.as_ref().unwrap());
    assert_eq!(text, "main");
    assert_eq!(hover, "On branch main; 3 changed path(s)");

    stage_the_hunk_and_commit(&mut h, &root);
}

/// The Source Control panel stages a.txt's hunk and commits it.
fn stage_the_hunk_and_commit(h: &mut Harness<'static, CocodeApp>, root: &Path) {
    // Source Control (Ctrl+Shift+G): the edit under "Changes", beside the
    // change made before the task and the new file.
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::G);
    run_until(h, "the Source Control panel", |h| {
        h.query_by_label("Changes (2)").is_some()
    });
    h.get_by_label("Untracked (1)");
    assert!(h.query_by_label("Staged changes (0)").is_none());
    // The file's hunk, staged on its own.
    h.get_by_label("M  a.txt").click();
    run_until(h, "a.txt's hunk", |h| {
        h.query_by_label("Stage Hunk").is_some()
    });
    h.get_by_label("@@ -1,3 +1,3 @@");
    h.get_by_label(" one\n-two\n+2\n three");
    h.get_by_label("Stage Hunk").click();
    run_until(h, "a.txt staged", |h| {
        h.query_by_label("Staged changes (1)").is_some()
    });
    assert_eq!(git(root, &["diff", "--cached", "--name-only"]), "a.txt\n");
    // A message, then Ctrl+Enter in its box commits.
    h.get(by().role(Role::MultilineTextInput).label("Commit message"))
        .click();
    h.run_steps(2);
    h.get(by().role(Role::MultilineTextInput).label("Commit message"))
        .type_text("Say 2 in a.txt");
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Enter);
    run_until(h, "the commit", |h| {
        h.state().scm.commits.len() == 2 && h.state().scm.running.is_empty()
    });
    assert_eq!(
        git(root, &["log", "--format=%an <%ae> %s", "-2"]),
        "Ada Person <ada@example.com> Say 2 in a.txt\nTest <test@example.com> first\n"
    );
    assert_eq!(git(root, &["show", "HEAD:a.txt"]), "one\n2\nthree\n");
    assert_eq!(h.state().scm.message, "");
    // The new commit heads the list; the note says what git said of it.
    h.get_by_label("Say 2 in a.txt");
    let id = git(root, &["rev-parse", "--short=7", "HEAD"]);
    h.get_by_label(id.trim());
    h.get_by_label_contains(&format!("Committed: [main {}] Say 2 in a.txt", id.trim()));
    // Committed: a.txt has no change left; the others are as they were.
    run_until(h, "a.txt clean", |h| {
        h.query_by_label("Changes (1)").is_some()
            && !h
                .state()
                .git_state
                .as_ref()
                .unwrap()
                .files
                .contains_key("a.txt")
    });
    assert_eq!(h.state().git_state.as_ref().unwrap().changed_count(), 2);
    // HEAD moved while the branch stayed: the gutter is against the new
    // commit, where a.txt has no changed line.
    run_until(h, "the gutter against the new HEAD", |h| {
        h.state().editors.tabs[0]
            .git_marks
            .as_ref()
            .is_some_and(|(_, marks)| marks.is_empty())
    });
}

/// A repository at `root` with one commit of `a.txt`, and the person's
/// identity for the commits the panel makes.
fn repository(root: &Path) {
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    git(root, &["init", "-q"]);
    git(root, &["config", "user.name", "Ada Person"]);
    git(root, &["config", "user.email", "ada@example.com"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "first"]);
}

#[test]
fn the_status_bars_branch_creates_and_switches_branches_and_git_refuses_in_its_words() {
    if !require::require_program("git") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    repository(&root);
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the branch in the status bar", |h| {
        h.query_by_label("main").is_some()
    });
    h.get_by_label("main").click();
    run_until(&mut h, "the branch picker", |h| {
        h.state().scm.branch_picker.is_some()
    });
    // The picker's name has the keyboard: typing names a new branch.
    h.run_steps(2);
    h.event(egui::Event::Text("topic".to_owned()));
    h.run_steps(2);
    h.get_by_label("Create branch “topic” here and switch to it")
        .click();
    run_until(&mut h, "on topic", |h| {
        h.state().git_state.as_ref().map(|s| s.head.clone()) == Some(Head::Branch("topic".into()))
            && h.state().scm.running.is_empty()
    });
    h.get_by_label("Created branch topic and switched to it.");
    assert_eq!(git(&root, &["branch", "--show-current"]), "topic\n");
    // A change git would lose by switching back: git refuses, in its words.
    std::fs::write(root.join("a.txt"), "on topic\n").unwrap();
    git(&root, &["commit", "-q", "-am", "topic work"]);
    std::fs::write(root.join("a.txt"), "not committed\n").unwrap();
    run_until(&mut h, "a.txt changed", |h| {
        h.state()
            .git_state
            .as_ref()
            .is_some_and(|s| s.files.contains_key("a.txt"))
    });
    h.get_by_label("Branch");
    // The branch shows twice (the status bar, the panel); either opens the
    // picker.
    h.get_all_by_label("topic").next().unwrap().click();
    run_until(&mut h, "the picker's branches", |h| {
        h.query_by_label("main").is_some()
    });
    h.get_by_label("main").click();
    run_until(&mut h, "git's refusal", |h| {
        h.query_by_label("git refused").is_some()
    });
    let words = match &h.state().scm.outcome {
        Some(Outcome::Failed(words)) => words.clone(),
        other => panic!("{other:?}"),
    };
    assert!(
        words.starts_with("git switch failed:\nerror: Your local changes to the following files would be overwritten by checkout:\n\ta.txt"),
        "{words}"
    );
    assert_eq!(git(&root, &["branch", "--show-current"]), "topic\n");
}

#[test]
fn a_folder_outside_any_repository_offers_to_start_one() {
    if !require::require_program("git") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/x.md"), "x\n").unwrap();
    let mut h = harness(Some(root.clone()));
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::G);
    run_until(&mut h, "the panel's empty state", |h| {
        h.query_by_label("This folder is not in a git repository")
            .is_some()
    });
    h.get_by_label("Initialize Repository").click();
    run_until(&mut h, "a repository", |h| {
        h.query_by_label("Untracked (2)").is_some()
    });
    // A folder git shows whole reads as a folder, with nothing to open.
    h.get_by_label("U  docs/");
    h.get_by_label("U  a.txt");
    assert_eq!(h.get_all_by_label("Open").count(), 1);
    h.get_by_label("Created a repository here.");
    assert!(root.join(".git/HEAD").is_file());
    assert!(matches!(
        h.state().git_state.as_ref().unwrap().head,
        Head::Unborn(_)
    ));
}

#[test]
fn a_discard_asks_first_is_recorded_and_its_undo_puts_the_change_back() {
    if !require::require_program("git") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    repository(&root);
    std::fs::write(root.join("a.txt"), "one\nmine\n").unwrap();
    std::fs::write(root.join("new.txt"), "new\n").unwrap();
    let mut h = harness(Some(root.clone()));
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::G);
    run_until(&mut h, "the changes", |h| {
        h.query_by_label("Changes (1)").is_some() && h.query_by_label("Untracked (1)").is_some()
    });
    // The row's Discard asks first; Cancel changes nothing.
    h.get_all_by_label("Discard").next().unwrap().click();
    run_until(&mut h, "the question", |h| {
        h.query_by_label("Discard the changes to a.txt?").is_some()
    });
    h.get_by_label("Cancel").click();
    h.run_steps(3);
    assert!(h.query_by_label("Discard the changes to a.txt?").is_none());
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\nmine\n"
    );
    // Every change of the untracked group at once: new.txt goes.
    h.get_all_by_label("Discard All").last().unwrap().click();
    h.run_steps(2);
    h.get_by_label("Discard the changes to new.txt?");
    h.get_by_label("Discard Changes").click();
    run_until(&mut h, "new.txt discarded", |h| {
        h.query_by_label("Discarded the changes to new.txt.")
            .is_some()
    });
    assert!(!root.join("new.txt").exists());
    // a.txt back to the index's text, recorded in cocode's history.
    h.get_all_by_label("Discard").next().unwrap().click();
    h.run_steps(2);
    h.get_by_label("Discard Changes").click();
    run_until(&mut h, "a.txt discarded", |h| {
        h.query_by_label("Discarded the changes to a.txt.")
            .is_some()
    });
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\n"
    );
    let recorded = std::fs::read_to_string(root.join(".cocode/discards.json")).unwrap();
    assert!(
        recorded.contains("\"path\": \"a.txt\"") && recorded.contains("\"path\": \"new.txt\""),
        "{recorded}"
    );
    run_until(&mut h, "a clean tree", |h| {
        h.state()
            .git_state
            .as_ref()
            .is_some_and(|s| s.changed_count() == 0)
    });
    h.get_by_label("No changes.");
    // The note's Undo: the change is back, byte for byte.
    h.get_by_label("Undo Discard").click();
    run_until(&mut h, "a.txt put back", |h| {
        h.query_by_label("Put back the changes to a.txt.").is_some()
    });
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\nmine\n"
    );
    // The next session lists the discard still recorded, and undoes it.
    drop(h);
    // The first window's workspace service lets go of the folder on its
    // own thread; the next session starts when it has (as a new process
    // would after the old one ended).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while cocode_workspace::OpenWorkspace::open(&root)
        .and_then(|ws| ws.lock_for_writing("test"))
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the folder stayed held"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut h = harness(Some(root.clone()));
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::G);
    run_until(&mut h, "the recorded discard", |h| {
        h.query_by_label("Discarded (1)").is_some()
    });
    h.get_by_label("Discarded (1)").click();
    h.run_steps(2);
    h.get_by_label("new.txt");
    h.get_by_label("Undo Discard").click();
    run_until(&mut h, "new.txt put back", |h| {
        h.query_by_label("Put back the changes to new.txt.")
            .is_some()
    });
    assert_eq!(
        std::fs::read_to_string(root.join("new.txt")).unwrap(),
        "new\n"
    );
    assert!(
        std::fs::read_to_string(root.join(".cocode/discards.json"))
            .unwrap()
            .contains("\"discards\": []")
    );
}

/// The text of editor tab `index`.
fn tab_text(h: &Harness<'static, CocodeApp>, index: usize) -> String {
    let tab = &h.state().editors.tabs[index];
    h.state()
        .editors
        .docs
        .with_document(tab.rel.as_ref().unwrap(), |d| d.rope().to_string())
        .unwrap()
}

/// A click at `at`: moved there, pressed, released.
fn click_at(h: &mut Harness<'static, CocodeApp>, at: egui::Pos2) {
    h.event(egui::Event::PointerMoved(at));
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: at,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
        h.run_steps(1);
    }
    h.run_steps(1);
}

#[test]
fn a_gutter_marks_change_shows_heads_lines_and_reverts_as_an_edit_that_undo_takes_back() {
    if !require::require_program("git") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "first"]);
    std::fs::write(root.join("a.txt"), "ONE\nUNO\ntwo\nthree\n").unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "a.txt modified", |h| {
        h.query_by_label("  a.txt  M").is_some()
    });
    h.get_by_label("  a.txt  M").click();
    run_until(&mut h, "the gutter's marks", |h| {
        h.state()
            .editors
            .tabs
            .first()
            .and_then(|t| t.git_marks.as_ref())
            .is_some_and(|(_, marks)| !marks.is_empty())
    });
    // A click on the mark at the gutter's edge, on the first line.
    let rect = h.get_by_label("Editor a.txt").rect();
    click_at(&mut h, egui::pos2(rect.min.x + 3.0, rect.min.y + 4.0));
    run_until(&mut h, "the change's card", |h| {
        h.query_by_label("Revert Change").is_some()
    });
    h.get_by_label("1 line(s) changed into 2 since HEAD");
    h.get_by_label("-one\n+ONE\n+UNO");
    h.get_by_label("Revert Change").click();
    h.run_steps(2);
    assert_eq!(tab_text(&h, 0), "one\ntwo\nthree\n");
    assert!(h.query_by_label("Revert Change").is_none());
    // An edit of the buffer: the file is untouched until the person saves.
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "ONE\nUNO\ntwo\nthree\n"
    );
    run_until(&mut h, "no mark left", |h| {
        h.state().editors.tabs[0]
            .git_marks
            .as_ref()
            .is_some_and(|(_, marks)| marks.is_empty())
    });
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert_eq!(tab_text(&h, 0), "ONE\nUNO\ntwo\nthree\n");
    // A click beside the marks (on the line numbers) shows nothing.
    let rect = h.get_by_label("Editor a.txt").rect();
    click_at(&mut h, egui::pos2(rect.min.x + 20.0, rect.min.y + 4.0));
    assert!(h.query_by_label("Revert Change").is_none());
}

#[test]
fn a_finished_task_names_where_it_started_and_its_changes_are_committed_with_its_words() {
    if !require::require_program("git") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    repository(&root);
    let head = git(&root, &["rev-parse", "--short=7", "HEAD"]);
    std::fs::write(root.join("other.txt"), "not the task's\n").unwrap();
    let mut h = harness(Some(root.clone()));
    type_prompt(&mut h, r#"replace "one" with "1" in a.txt"#);
    h.get_by_label("Run task").click();
    approve_and_accept(&mut h, &["edit a file"]);
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "1\n");
    let id = h.state().agent.tasks[0].id.clone();
    let row = format!("{id}  completed: a person approved it");
    // The task list follows the run's end on its own report.
    run_until(&mut h, "the task's row", |h| {
        h.query_by_label_contains(&row).is_some()
    });
    h.get_by_label_contains(&row).click();
    run_until(&mut h, "the task detail", |h| {
        h.state().agent.detail.is_some()
    });
    h.get_by_label(&format!("Started on branch main at {}", head.trim()));
    // Beside the task's own changes, its files against HEAD.
    h.get_by_label("Changes since HEAD (1)").click();
    h.run_steps(2);
    assert_eq!(
        h.state().agent.detail.as_ref().unwrap().since_head,
        Some(vec![(
            "a.txt".to_owned(),
            "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\n".to_owned()
        )])
    );
    h.get_by_label_contains("+1");
    h.get_by_label("Commit the task's changes").click();
    run_until(&mut h, "the task's file staged", |h| {
        h.query_by_label("Staged changes (1)").is_some() && h.state().scm.running.is_empty()
    });
    // Only the task's file: the other change stays unstaged.
    assert_eq!(git(&root, &["diff", "--cached", "--name-only"]), "a.txt\n");
    let expected = format!(
        "replace \"one\" with \"1\" in a.txt\n\n\
         Replaced the first occurrence of the requested text in a.txt.\n\n\
         cocode task: {id}\n"
    );
    assert_eq!(h.state().scm.message, expected);
    h.get(by().role(Role::MultilineTextInput).label("Commit message"))
        .click();
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Enter);
    run_until(&mut h, "the commit", |h| {
        h.state().scm.commits.len() == 2 && h.state().scm.running.is_empty()
    });
    assert_eq!(
        git(&root, &["log", "-1", "--format=%B"]),
        format!("{expected}\n")
    );
    assert_eq!(git(&root, &["status", "--porcelain"]), "?? other.txt\n");
    // Committed already: nothing of the task's is left to stage, and the
    // panel says so.
    h.get_by_label("Commit the task's changes").click();
    run_until(&mut h, "nothing to stage", |h| {
        h.query_by_label("None of these files has a change to stage.")
            .is_some()
    });
    assert_eq!(git(&root, &["diff", "--cached", "--name-only"]), "");
}
