//! Git in the window, driven as a person would: the Explorer's letters and
//! colours, the status bar's branch, and the gutter's marks against HEAD,
//! before and after an agent's task edits a file.
#![cfg(target_os = "linux")]
#![expect(
    clippy::disallowed_methods,
    reason = "tests build a repository with the real git"
)]

use cocode_git::{Kind, LineMark, MarkKind};
use egui_kittest::kittest::Queryable;
use pretty_assertions::assert_eq;

use crate::window::testing::git_repo::git;
use crate::window::testing::peers as require;
use crate::window::testing::{approve_and_accept, harness, run_until, type_prompt};

#[test]
fn an_agents_edit_shows_in_the_explorer_and_the_gutter_against_head() {
    if !require::require_program("git") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn a() {}\n").unwrap();
    git(&root, &["init", "-q"]);
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
            old_lines: 1,
        }]
    );
    // The branch's hover counts the changed paths.
    let (text, hover) = super::branch_label(h.state().git_state.as_ref().unwrap());
    assert_eq!(text, "main");
    assert_eq!(hover, "On branch main; 3 changed path(s)");
}
