//! The Review panel driven as a person would: a finished task's changes
//! counted in the status bar, its review opened from the end of the
//! conversation, one hunk of three undone with the keyboard (n, u) while the
//! file is open in an editor, another kept, then all marked reviewed.
#![cfg(target_os = "linux")]
#![expect(
    clippy::disallowed_methods,
    reason = "tests make the folder's files before cocode opens it"
)]

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable};
use pretty_assertions::assert_eq;

use crate::window::app::CocodeApp;
use crate::window::review::Cursor;
use crate::window::testing::{approve_and_accept, harness, run_until, type_prompt};

const LETTERS: &str = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\no\np\nq\nr\ns\nt\n";

fn editor_text(h: &Harness<'_, CocodeApp>) -> String {
    let editors = &h.state().editors;
    let rel = editors.tabs[0].rel.clone().unwrap();
    editors.docs.with_document(&rel, |d| d.text()).unwrap()
}

/// Waits until f.txt's editor shows its text and took the keyboard (as a
/// file opened from the Explorer does), so the prompt typed next goes to
/// the composer.
fn open_editor(h: &mut Harness<'static, CocodeApp>) {
    run_until(h, "the editor's text", |h| {
        h.state().editors.tabs.len() == 1
            && h.state().editors.tabs[0].body == crate::window::editors::TabBody::Text
            && !h.state().editors.tabs[0].focus
    });
    h.run_steps(2);
}

fn hunks(h: &Harness<'_, CocodeApp>) -> Option<usize> {
    h.state()
        .review
        .review
        .as_ref()
        .map(crate::host::task_review::TaskReview::hunk_count)
}

/// The Review panel's hunk texts in order, as (shows a removed line,
/// shows an added line): unified, a hunk shows both; side by side, the
/// left column shows what was removed and the right what was added.
fn hunk_sides(h: &Harness<'_, CocodeApp>) -> Vec<(bool, bool)> {
    // A hunk's text: numbered lines (a side with no line is blank).
    let numbered = |l: &str| {
        l.lines().count() > 1
            && l.lines().all(|x| {
                let x = x.trim_start();
                x.is_empty() || x.starts_with(|c: char| c.is_ascii_digit())
            })
    };
    h.query_all_by_label_contains("\n")
        .filter_map(|n| n.accesskit_node().value())
        .filter(|l| numbered(l.as_str()))
        .map(|l| {
            let removed = l.lines().any(|x| x.contains(" -"));
            let added = l.lines().any(|x| x.contains(" +"));
            (removed, added)
        })
        .collect()
}

/// f.txt open in an editor, then a local-agent task whose command changes
/// three separate places of it (approved and accepted).
fn three_hunk_task() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    Harness<'static, CocodeApp>,
) {
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("f.txt"), LETTERS).unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  f.txt").is_some()
    });
    h.get_by_label("  f.txt").click();
    open_editor(&mut h);
    type_prompt(
        &mut h,
        r#"run "sed -i -e 's/^b$/B/' -e 's/^j$/J/' -e '/^s$/d' f.txt""#,
    );
    h.get_by_label("Run task").click();
    approve_and_accept(&mut h, &["run a command"]);
    (dir, root, h)
}

#[test]
fn a_hunk_is_undone_with_the_keyboard_another_kept_and_the_open_editor_follows() {
    let (_dir, root, mut h) = three_hunk_task();
    // The run's end reads the task's review: the status bar counts its
    // file, and the editor shows the command's change.
    run_until(&mut h, "the status bar's count", |h| {
        h.query_by_label("1 file(s) to review").is_some()
    });
    let changed = LETTERS
        .replace("b\n", "B\n")
        .replace("j\n", "J\n")
        .replace("s\n", "");
    run_until(&mut h, "the editor showing the command's change", |h| {
        editor_text(h) == changed
    });

    h.get_by_label("Review changes").click();
    run_until(&mut h, "the review", |h| hunks(h) == Some(3));
    assert_eq!(h.state().editors.tabs[0].review_marks.len(), 3);
    h.get_by_label("1 file(s) · 3 hunk(s) · 0 kept · 0 viewed");
    h.get_by_label("@@ -7,7 +7,7 @@");
    // Two replacements and a removal.
    let unified = vec![(true, true), (true, true), (true, false)];
    assert_eq!(hunk_sides(&h), unified, "unified");
    // Side by side: each hunk as two columns, kept for the next review.
    h.get_by_label("Side by side").click();
    h.run_steps(2);
    assert_eq!(
        hunk_sides(&h),
        vec![
            (true, false),
            (false, true),
            (true, false),
            (false, true),
            (true, false),
            (false, false),
        ],
        "side by side"
    );
    assert!(h.state().saved.review_side_by_side);
    h.get_by_label("Unified").click();
    h.run_steps(2);
    assert_eq!(hunk_sides(&h), unified);
    assert!(!h.state().saved.review_side_by_side);
    // As in the window, the button just clicked keeps the focus: the
    // letters still go to the review.
    h.get_by_label("Unified").focus();
    h.run_steps(1);
    assert!(h.state().review.keys_here);

    // The keyboard starts on the first hunk; n goes to the second, and u
    // undoes it.
    assert_eq!(
        h.state().review.cursor,
        Some(Cursor {
            file: 0,
            hunk: Some(1)
        })
    );
    h.key_press(Key::N);
    h.run_steps(2);
    assert_eq!(
        h.state().review.cursor,
        Some(Cursor {
            file: 0,
            hunk: Some(2)
        })
    );
    h.key_press(Key::U);
    run_until(&mut h, "the undo", |h| {
        h.state().review.note.as_deref() == Some("undid hunk 2 of f.txt") && hunks(h) == Some(2)
    });
    let undone = LETTERS.replace("b\n", "B\n").replace("s\n", "");
    assert_eq!(std::fs::read_to_string(root.join("f.txt")).unwrap(), undone);
    run_until(&mut h, "the editor following the undo", |h| {
        editor_text(h) == undone
    });

    // The cursor stays at the second place (now the last hunk): k keeps it.
    h.key_press(Key::K);
    run_until(&mut h, "the hunk kept", |h| {
        h.query_by_label("1 file(s) · 2 hunk(s) · 1 kept · 0 viewed")
            .is_some()
    });
    h.get_by_label("kept");

    h.get_by_label("Mark all reviewed").click();
    run_until(&mut h, "nothing left since the review", |h| {
        h.query_by_label("Nothing changed since your last review.")
            .is_some()
    });
    assert!(h.query_by_label("1 file(s) to review").is_none());
    assert_eq!(h.state().review.unviewed(), 0);
}

/// Approves the card asking to run a command, then waits until the agent
/// waits for the person's reply.
fn approve_then_wait_for_reply(h: &mut Harness<'static, CocodeApp>) {
    run_until(h, "the command's card", |h| {
        h.query_by_label_contains("Allow the agent to run a command?")
            .is_some()
    });
    h.key_press(Key::Enter);
    run_until(h, "the agent waiting for a reply", |h| {
        h.state().agent.current().awaiting_reply.is_some()
    });
}

fn reply(h: &mut Harness<'static, CocodeApp>, text: &str) {
    type_prompt(h, text);
    h.get_by_label("Reply").click();
    h.run_steps(2);
}

/// A task of three messages, each changing one file: each command fails
/// on purpose, so the local agent ends its turn and the person answers;
/// the third message finishes the task.
fn three_messages(h: &mut Harness<'static, CocodeApp>, root: &std::path::Path) {
    type_prompt(h, r#"run "printf 'one\n' > a.txt; exit 3""#);
    h.get_by_label("Run task").click();
    approve_then_wait_for_reply(h);
    reply(h, r#"run "printf 'two\n' > b.txt; exit 3""#);
    approve_then_wait_for_reply(h);
    reply(h, r#"create c.txt with "three""#);
    approve_and_accept(h, &["create a file"]);
    assert!(root.join("c.txt").exists());
}

#[test]
fn restoring_to_before_a_message_from_the_review_puts_the_message_back_in_the_composer() {
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("keep.txt"), "k\n").unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  keep.txt").is_some()
    });
    three_messages(&mut h, &root);
    h.get_by_label("Review changes").click();
    run_until(&mut h, "the review", |h| hunks(h) == Some(3));
    h.get_by_label("Conversation (3 message(s))").click();
    h.run_steps(2);
    h.get_all_by_label("Restore to before")
        .nth(1)
        .unwrap()
        .click();
    h.run_steps(2);
    h.get_by_label_contains("Restore the task's files to before message 2?");
    // Nothing moved before the yes.
    assert!(root.join("b.txt").exists());
    h.get_by_label("Restore").click();
    run_until(&mut h, "the message back in the composer", |h| {
        h.state().agent.prompt == r#"run "printf 'two\n' > b.txt; exit 3""#
    });
    assert_eq!(
        h.state().review.note.as_deref(),
        Some("restored 2 path(s) to before message 2")
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(!root.join("b.txt").exists());
    assert!(!root.join("c.txt").exists());
    // What is left since the review began: a.txt alone.
    run_until(&mut h, "the review read again", |h| hunks(h) == Some(1));
}

#[test]
fn a_rollback_to_before_a_message_is_previewed_then_restores_what_the_first_turn_left() {
    let dir = tempfile::tempdir().unwrap();
    let root = dunce::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("keep.txt"), "k\n").unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  keep.txt").is_some()
    });
    three_messages(&mut h, &root);

    run_until(&mut h, "the task in the list", |h| {
        h.state().agent.tasks.len() == 1
    });
    let id = h.state().agent.tasks[0].id.clone();
    h.get_by_label_contains(&format!("{id}  ")).click();
    run_until(&mut h, "the task's detail", |h| {
        h.state()
            .agent
            .detail
            .as_ref()
            .is_some_and(|d| d.messages.len() == 3)
    });
    h.get_by_label("Roll back to a point").click();
    h.run_steps(2);
    h.get_by_label("Before message 2").click();
    run_until(&mut h, "the preview", |h| {
        h.state().agent.rollback_preview.is_some()
    });
    h.get_by_label("Roll back to before message 2 would:");
    h.get_by_label("remove b.txt");
    h.get_by_label("remove c.txt");
    // Nothing moved yet.
    assert!(root.join("b.txt").exists());
    h.get_by_label("Roll back to before message 2").click();
    run_until(&mut h, "the rollback", |h| {
        h.state()
            .agent
            .note
            .as_deref()
            .is_some_and(|n| n.starts_with("rolled back 2 path(s) to before message 2"))
    });
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(!root.join("b.txt").exists());
    assert!(!root.join("c.txt").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("keep.txt")).unwrap(),
        "k\n"
    );
}

#[test]
fn an_open_editor_shows_the_tasks_hunks_with_keep_and_undo_until_reviewed() {
    let (_dir, root, mut h) = three_hunk_task();
    // The run's end reads the review; the editor (still in front) marks
    // each hunk where the task's lines are, with Keep and Undo.
    let changed = LETTERS
        .replace("b\n", "B\n")
        .replace("j\n", "J\n")
        .replace("s\n", "");
    run_until(&mut h, "three marks in the editor", |h| {
        editor_text(h) == changed && h.state().editors.tabs[0].review_marks.len() == 3
    });
    assert_eq!(
        h.state().editors.tabs[0]
            .review_marks
            .iter()
            .map(|m| (m.hunk, m.start, m.lines.clone()))
            .collect::<Vec<_>>(),
        vec![
            (1, 1, vec!["B\n".to_owned()]),
            (2, 9, vec!["J\n".to_owned()]),
            (3, 18, Vec::new()),
        ]
    );
    assert_eq!(h.get_all_by_label("Undo").count(), 3);
    // The second Undo in the text puts "j" back; Keep on the first marks it.
    h.get_all_by_label("Undo").nth(1).unwrap().click();
    let undone = LETTERS.replace("b\n", "B\n").replace("s\n", "");
    run_until(&mut h, "the undo from the editor", |h| {
        editor_text(h) == undone && h.state().editors.tabs[0].review_marks.len() == 2
    });
    assert_eq!(std::fs::read_to_string(root.join("f.txt")).unwrap(), undone);
    h.get_all_by_label("Keep").next().unwrap().click();
    run_until(&mut h, "the kept hunk unmarked", |h| {
        h.state().editors.tabs[0].review_marks.len() == 1
    });
    assert_eq!(h.state().editors.tabs[0].review_marks[0].start, 18);
}
