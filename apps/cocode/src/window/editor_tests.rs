#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixture workspaces on disk and edit files as another program would"
)]

//! The editor in the window, driven as a person would: open from the
//! Explorer, type (and compose Hangul), select, find, save, and see other
//! programs' edits arrive.

use std::path::Path;

use egui::accesskit::Role;
use egui::{Event, ImeEvent, Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::{By, Queryable};
use pretty_assertions::assert_eq;

use super::*;
use crate::window::command::{EditorCommand, ExplorerCommand};
use crate::window::testing::{
    fixture_workspace as workspace, harness, open_in_editor as open, run_until, shown,
};

fn text(h: &Harness<'_, CocodeApp>, id: u32) -> String {
    let editors = &h.state().editors;
    let rel = editors.get(id).unwrap().rel.clone().unwrap();
    editors.docs.with_document(&rel, |d| d.text()).unwrap()
}

fn type_text(h: &mut Harness<'static, CocodeApp>, text: &str) {
    h.event(Event::Text(text.to_owned()));
    h.run_steps(2);
}

fn key(h: &mut Harness<'static, CocodeApp>, modifiers: Modifiers, k: Key) {
    h.key_press_modifiers(modifiers, k);
    h.run_steps(2);
}

fn status(h: &Harness<'_, CocodeApp>) -> Vec<String> {
    let id = h.state().active_editor().unwrap();
    views::editor::status(&h.state().editors, id).unwrap()
}

#[test]
fn a_file_opens_with_the_focus_in_the_text_and_typing_edits_it() {
    let (_dir, root) = workspace(&[("src/main.rs", "fn main() {\n}\n"), ("a.rs", "x\n")]);
    let mut h = harness(Some(root.clone()));
    let id = open(&mut h, "a.rs");
    assert_eq!(h.state().editors.title(id), "a.rs");
    type_text(&mut h, "let ");
    key(&mut h, Modifiers::NONE, Key::End);
    type_text(&mut h, ";");
    assert_eq!(shown(&h, id), "let x;|\n");
    assert_eq!(h.state().editors.title(id), "● a.rs");
    assert_eq!(
        status(&h),
        ["Ln 1, Col 7", "2 lines", "Rust", "LF", "Spaces: 4"]
    );
    // The status bar shows the same facts.
    h.get_by_label("Ln 1, Col 7");
    // Enter keeps indentation; Undo takes back the last step, Redo brings it back.
    key(&mut h, Modifiers::NONE, Key::Enter);
    type_text(&mut h, "y");
    assert_eq!(text(&h, id), "let x;\ny\n");
    // The Explorer marks the open file with unsaved changes.
    h.get_by_label("● a.rs");
    // A typed line break ends the step it was typed in.
    key(&mut h, Modifiers::COMMAND, Key::Z);
    assert_eq!(shown(&h, id), "let x;\n|\n");
    key(&mut h, Modifiers::COMMAND, Key::Z);
    assert_eq!(shown(&h, id), "let x|\n");
    key(&mut h, Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::Z);
    key(&mut h, Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::Z);
    assert_eq!(shown(&h, id), "let x;\ny|\n");
    // Nothing is written until a save.
    assert_eq!(std::fs::read_to_string(root.join("a.rs")).unwrap(), "x\n");
}

#[test]
fn hangul_composes_inline_and_commits_into_the_text() {
    let (_dir, root) = workspace(&[("note.md", "제목\n")]);
    let mut h = harness(Some(root));
    let id = open(&mut h, "note.md");
    key(&mut h, Modifiers::NONE, Key::End);
    for step in ["ㅎ", "하", "한"] {
        h.event(Event::Ime(ImeEvent::Preedit {
            text: step.into(),
            active_range_chars: None,
        }));
        h.run_steps(2);
        // Composition shows in the view but is not text yet.
        assert_eq!(h.state().editors.get(id).unwrap().preedit, step);
        assert_eq!(text(&h, id), "제목\n");
    }
    h.event(Event::Ime(ImeEvent::Commit("한".into())));
    h.event(Event::Ime(ImeEvent::Preedit {
        text: "글".into(),
        active_range_chars: None,
    }));
    h.run_steps(2);
    h.event(Event::Ime(ImeEvent::Commit("글".into())));
    h.run_steps(2);
    assert_eq!(shown(&h, id), "제목한글|\n");
    assert!(h.state().editors.get(id).unwrap().preedit.is_empty());
    // The IME is told where the cursor is.
    assert!(h.output().platform_output.ime.is_some());
    // Word motion treats Hangul as letters.
    key(
        &mut h,
        Modifiers::CTRL.plus(Modifiers::SHIFT),
        Key::ArrowLeft,
    );
    assert_eq!(shown(&h, id), "«|제목한글»\n");
}

#[test]
fn select_with_keys_and_mouse_then_edit_at_several_cursors() {
    let (_dir, root) = workspace(&[("a.py", "foo = 1\nfoo += foo\n")]);
    let mut h = harness(Some(root));
    let id = open(&mut h, "a.py");
    // Ctrl+D: the word, then its next occurrences.
    key(&mut h, Modifiers::COMMAND, Key::D);
    key(&mut h, Modifiers::COMMAND, Key::D);
    key(&mut h, Modifiers::COMMAND, Key::D);
    assert_eq!(status(&h)[1], "3 selections");
    type_text(&mut h, "bar");
    assert_eq!(text(&h, id), "bar = 1\nbar += bar\n");
    key(&mut h, Modifiers::NONE, Key::Escape);
    // Shift+arrows select; Ctrl+/ comments with the language's token.
    key(&mut h, Modifiers::COMMAND, Key::Home);
    key(&mut h, Modifiers::SHIFT, Key::ArrowDown);
    key(&mut h, Modifiers::COMMAND, Key::Slash);
    assert_eq!(text(&h, id), "# bar = 1\nbar += bar\n");
    // A double click selects the word under the pointer.
    let rect = h.get_by_label("Editor a.py").rect();
    let row = rect.min.y + 10.0;
    h.event(Event::PointerMoved(egui::pos2(rect.min.x + 200.0, row)));
    h.run_steps(1);
    key(&mut h, Modifiers::COMMAND, Key::Z);
    assert_eq!(text(&h, id), "bar = 1\nbar += bar\n");
}

#[test]
fn find_steps_through_matches_and_replace_all_is_one_undo_step() {
    let (_dir, root) = workspace(&[("t.txt", "cat dog cat\nCat\n")]);
    let mut h = harness(Some(root));
    let id = open(&mut h, "t.txt");
    key(&mut h, Modifiers::COMMAND, Key::H);
    h.run_steps(2);
    // The find field has the focus.
    type_text(&mut h, "cat");
    h.get_by_label("3 found");
    h.get_by_label("Aa").click();
    h.run_steps(2);
    h.get_by_label("2 found");
    h.get(By::new().role(Role::TextInput).value("cat")).click();
    h.run_steps(2);
    h.key_press(Key::Enter);
    h.run_steps(3);
    assert_eq!(shown(&h, id), "«cat|» dog cat\nCat\n");
    h.get_by_label("1 of 2");
    // Shift+Enter steps back, wrapping to the last match; Enter forward again.
    h.key_press_modifiers(Modifiers::SHIFT, Key::Enter);
    h.run_steps(3);
    assert_eq!(shown(&h, id), "cat dog «cat|»\nCat\n");
    h.get_by_label("2 of 2");
    h.key_press(Key::Enter);
    h.run_steps(3);
    assert_eq!(shown(&h, id), "«cat|» dog cat\nCat\n");
    // The second one-line field is the replacement.
    h.get_all(By::new().role(Role::TextInput))
        .nth(1)
        .unwrap()
        .click();
    h.run_steps(2);
    type_text(&mut h, "cow");
    assert_eq!(
        h.state()
            .editors
            .get(id)
            .unwrap()
            .find
            .as_ref()
            .unwrap()
            .replace_with,
        "cow"
    );
    h.get_by_label("Replace All").click();
    h.run_steps(3);
    assert_eq!(text(&h, id), "cow dog cow\nCat\n");
    h.get_by_label("Replaced 2 occurrence(s).");
    // Back in the text: one undo restores both.
    h.state_mut().editors.get_mut(id).unwrap().focus = true;
    h.run_steps(2);
    key(&mut h, Modifiers::COMMAND, Key::Z);
    assert_eq!(text(&h, id), "cat dog cat\nCat\n");
}

#[test]
fn go_to_line_moves_the_cursor_and_scrolls_to_it() {
    let body = (1..=5000)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let (_dir, root) = workspace(&[("long.txt", &body)]);
    let mut h = harness(Some(root));
    let id = open(&mut h, "long.txt");
    key(&mut h, Modifiers::COMMAND, Key::G);
    h.get_by_label_contains("Go to line (1–5001)");
    h.event(Event::Text("4321:3".into()));
    h.run_steps(2);
    h.key_press(Key::Enter);
    h.run_steps(4);
    assert_eq!(status(&h)[0], "Ln 4321, Col 3");
    let _ = id;
}

#[test]
fn save_writes_through_the_gate_and_keeps_crlf() {
    let (_dir, root) = workspace(&[("w.txt", "one\r\ntwo\r\n")]);
    let mut h = harness(Some(root.clone()));
    let id = open(&mut h, "w.txt");
    key(&mut h, Modifiers::NONE, Key::End);
    key(&mut h, Modifiers::NONE, Key::Enter);
    type_text(&mut h, "1.5");
    assert_eq!(status(&h)[3], "CRLF");
    key(&mut h, Modifiers::COMMAND, Key::S);
    run_until(&mut h, "the save", |h| !h.state().editors.is_dirty(id));
    assert_eq!(
        std::fs::read(root.join("w.txt")).unwrap(),
        b"one\r\n1.5\r\ntwo\r\n"
    );
    assert_eq!(h.state().editors.title(id), "w.txt");
    // The save went through the workspace (its history folder exists now).
    assert!(root.join(".cocode").is_dir());
}

#[test]
fn another_programs_edit_appears_in_a_clean_buffer_with_its_lines_marked() {
    let (_dir, root) = workspace(&[("lib.rs", "fn a() {}\nfn b() {}\n")]);
    let mut h = harness(Some(root.clone()));
    let id = open(&mut h, "lib.rs");
    key(&mut h, Modifiers::NONE, Key::ArrowDown);
    std::fs::write(root.join("lib.rs"), "fn a() {}\nfn b() { 2 }\nfn c() {}\n").unwrap();
    run_until(&mut h, "the reload", |h| text(h, id).contains("fn c"));
    assert_eq!(shown(&h, id), "fn a() {}\n|fn b() { 2 }\nfn c() {}\n");
    assert!(!h.state().editors.is_dirty(id));
    assert_eq!(
        h.state()
            .editors
            .get(id)
            .unwrap()
            .changed_lines
            .1
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [1, 2]
    );
}

#[test]
fn another_programs_edit_to_a_dirty_buffer_raises_the_banner_and_loses_nothing() {
    let (_dir, root) = workspace(&[("c.txt", "base\n")]);
    let mut h = harness(Some(root.clone()));
    let id = open(&mut h, "c.txt");
    type_text(&mut h, "mine ");
    std::fs::write(root.join("c.txt"), "theirs\n").unwrap();
    run_until(&mut h, "the banner", |h| {
        h.query_by_label("This file changed on disk while you have unsaved changes.")
            .is_some()
    });
    assert_eq!(text(&h, id), "mine base\n");
    // Compare shows the disk's text against the buffer's.
    h.get_by_label("Compare").click();
    h.run_steps(2);
    let diff = h
        .state()
        .editors
        .get(id)
        .unwrap()
        .conflict
        .as_ref()
        .unwrap()
        .comparison
        .clone()
        .unwrap();
    assert!(
        diff.contains("-theirs\n") && diff.contains("+mine base\n"),
        "{diff}"
    );
    h.get_by_label("Hide comparison");
    h.get_by_label("Load theirs").click();
    h.run_steps(3);
    assert_eq!(text(&h, id), "theirs\n");
    assert!(!h.state().editors.is_dirty(id));
    // What the person typed is one undo away.
    h.state_mut().editors.get_mut(id).unwrap().focus = true;
    h.run_steps(2);
    key(&mut h, Modifiers::COMMAND, Key::Z);
    assert_eq!(text(&h, id), "mine base\n");
}

#[test]
fn closing_the_window_with_unsaved_files_asks_and_enter_saves_them_before_it_closes() {
    let (_dir, root) = workspace(&[("k.txt", "keep\n")]);
    let mut h = harness(Some(root.clone()));
    open(&mut h, "k.txt");
    type_text(&mut h, "x");
    h.input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
    h.run_steps(3);
    h.get_by_label("1 file has unsaved changes");
    assert!(!h.state().quit_now, "the window waits for the person");
    assert!(h.get_by_label("Save All and Close").is_focused());
    h.key_press(Key::Enter);
    run_until(&mut h, "the save, then the close", |h| h.state().quit_now);
    assert_eq!(
        std::fs::read_to_string(root.join("k.txt")).unwrap(),
        "xkeep\n"
    );
}

#[test]
fn closing_a_dirty_tab_asks_and_a_closed_tab_reopens() {
    let (_dir, root) = workspace(&[("k.txt", "keep\n")]);
    let mut h = harness(Some(root.clone()));
    let id = open(&mut h, "k.txt");
    type_text(&mut h, "x");
    key(&mut h, Modifiers::COMMAND, Key::W);
    h.get_by_label("Save changes to k.txt?");
    // The keyboard is on the prompt's first button.
    assert!(h.get_by_label("Save").is_focused());
    h.get_by_label("Don't Save").click();
    h.run_steps(3);
    assert!(h.state().editors.get(id).is_none());
    assert!(h.state().dock.find_tab(&PanelId::Editor(id)).is_none());
    assert_eq!(
        std::fs::read_to_string(root.join("k.txt")).unwrap(),
        "keep\n"
    );
    key(&mut h, Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::T);
    run_until(&mut h, "the reopened tab", |h| {
        h.state()
            .editors
            .tabs
            .iter()
            .any(|t| t.name() == "k.txt" && t.rel.is_some())
    });
    let again = h.state().editors.active.unwrap();
    assert_eq!(text(&h, again), "keep\n");
}

#[test]
fn binary_and_other_encodings_open_read_only_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.bin"), b"\x00\x01\x02").unwrap();
    std::fs::write(dir.path().join("l.txt"), b"caf\xe9\n").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut h = harness(Some(root));
    run_until(&mut h, "the listing", |h| {
        h.query_by_label("  b.bin").is_some()
    });
    h.get_by_label("  b.bin").click();
    run_until(&mut h, "the notice", |h| {
        h.query_by_label("Binary file (3 B) — not shown.").is_some()
    });
    let id = open(&mut h, "l.txt");
    h.get_by_label("Not UTF-8 text (5 B): shown with replacement characters, read-only.");
    type_text(&mut h, "z");
    assert_eq!(text(&h, id), "caf\u{fffd}\n");
    let _ = Path::new("");
}

#[test]
fn quick_open_finds_a_file_by_fuzzy_name_and_enter_opens_it_with_the_focus() {
    let (_dir, root) = workspace(&[
        ("src/window/views/editor.rs", "// view\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("target/x.rs", "ignored\n"),
        (".gitignore", "target/\n"),
    ]);
    let mut h = harness(Some(root));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("⏵ src").is_some()
    });
    key(&mut h, Modifiers::COMMAND, Key::P);
    assert!(h.state().quick_open.open);
    type_text(&mut h, "vedit");
    run_until(&mut h, "the matches", |h| {
        h.state().quick_open.settled() && !h.state().quick_open.hits.is_empty()
    });
    let hits: Vec<String> = h
        .state()
        .quick_open
        .hits
        .iter()
        .map(|x| x.path.clone())
        .collect();
    assert_eq!(hits, ["src/window/views/editor.rs"]);
    h.key_press(Key::Enter);
    run_until(&mut h, "the editor", |h| {
        h.state()
            .editors
            .tabs
            .iter()
            .any(|t| t.name() == "editor.rs" && t.rel.is_some())
    });
    h.run_steps(3);
    assert!(!h.state().quick_open.open);
    let id = h.state().editors.active.unwrap();
    // The keyboard is in the text.
    type_text(&mut h, "x");
    assert_eq!(text(&h, id), "x// view\n");
    // Escape closes it without opening anything.
    key(&mut h, Modifiers::COMMAND, Key::P);
    type_text(&mut h, "main");
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(!h.state().quick_open.open);
    assert_eq!(h.state().editors.tabs.len(), 1);
}

#[test]
fn search_in_files_streams_results_and_opening_one_selects_the_match_without_writing() {
    let (_dir, root) = workspace(&[
        (
            "src/lib.rs",
            "pub fn alpha() {}\npub fn beta() { alpha() }\n",
        ),
        ("notes.md", "# alpha and omega\n"),
        ("target/out.rs", "alpha\n"),
        (".gitignore", "target/\n"),
    ]);
    let before = std::fs::read(root.join("src/lib.rs")).unwrap();
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("⏵ src").is_some()
    });
    key(&mut h, Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::F);
    h.run_steps(2);
    type_text(&mut h, "alpha");
    run_until(&mut h, "the search", |h| {
        matches!(
            h.state().search.progress,
            crate::window::search::SearchProgress::Done { .. }
        )
    });
    let mut found: Vec<(String, usize)> = h
        .state()
        .search
        .results
        .iter()
        .flat_map(|f| f.lines.iter().map(move |l| (f.path.clone(), l.line)))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("notes.md".to_owned(), 0),
            ("src/lib.rs".to_owned(), 0),
            ("src/lib.rs".to_owned(), 1)
        ]
    );
    h.get_by_label("3 results in 2 files (3 searched)");
    // Choosing the second line of lib.rs opens it with `alpha` selected.
    h.get_by_label("    2  pub fn beta() { alpha() }").click();
    run_until(&mut h, "the editor", |h| {
        h.state()
            .editors
            .tabs
            .iter()
            .any(|t| t.name() == "lib.rs" && t.rel.is_some())
    });
    h.run_steps(3);
    let id = h.state().editors.active.unwrap();
    assert_eq!(
        shown(&h, id),
        "pub fn alpha() {}\npub fn beta() { «alpha|»() }\n"
    );
    assert_eq!(std::fs::read(root.join("src/lib.rs")).unwrap(), before);
    assert!(!h.state().editors.is_dirty(id));
}

#[test]
fn the_explorer_creates_renames_and_deletes_through_the_gate_and_open_tabs_follow() {
    let (_dir, root) = workspace(&[("src/lib.rs", "pub fn a() {}\n"), ("old.txt", "old\n")]);
    let mut h = harness(Some(root.clone()));
    run_until(&mut h, "the root listing", |h| {
        h.query_by_label("  old.txt").is_some()
    });
    // New file from the header: named, created empty, opened.
    h.get_by_label("+").click();
    h.run_steps(2);
    h.get_by_label("New File");
    type_text(&mut h, "새 파일.md");
    h.key_press(Key::Enter);
    run_until(&mut h, "the new file's tab", |h| {
        h.state()
            .editors
            .tabs
            .iter()
            .any(|t| t.name() == "새 파일.md" && t.rel.is_some())
    });
    assert_eq!(std::fs::read(root.join("새 파일.md")).unwrap(), b"");
    assert!(h.state().workspace.as_ref().unwrap().prompt.is_none());
    // A taken name is refused in the prompt, with the reason.
    h.state_mut().run(
        Command::Explorer(ExplorerCommand::FileAction(
            crate::window::explorer::FileAction::Rename {
                path: root.join("old.txt"),
            },
        )),
        &egui::Context::default(),
    );
    h.run_steps(2);
    h.get_by_label("Rename old.txt");
    key(&mut h, Modifiers::COMMAND, Key::A);
    type_text(&mut h, "새 파일.md");
    h.key_press(Key::Enter);
    run_until(&mut h, "the refusal", |h| {
        h.state()
            .workspace
            .as_ref()
            .and_then(|w| w.prompt.as_ref())
            .is_some_and(|p| p.error.is_some())
    });
    assert!(root.join("old.txt").is_file());
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    // Renaming a folder moves the open tab of a file inside it.
    let lib = open_path(&mut h, &root, "src/lib.rs");
    h.state_mut().run(
        Command::Explorer(ExplorerCommand::FileAction(
            crate::window::explorer::FileAction::Rename {
                path: root.join("src"),
            },
        )),
        &egui::Context::default(),
    );
    h.run_steps(2);
    key(&mut h, Modifiers::COMMAND, Key::A);
    type_text(&mut h, "core");
    h.key_press(Key::Enter);
    run_until(&mut h, "the rename", |_| root.join("core/lib.rs").is_file());
    run_until(&mut h, "the tab to follow", |h| {
        h.state()
            .editors
            .get(lib)
            .is_some_and(|t| t.path == root.join("core/lib.rs"))
    });
    h.state_mut().editors.get_mut(lib).unwrap().focus = true;
    h.run_steps(2);
    type_text(&mut h, "// moved\n");
    key(&mut h, Modifiers::COMMAND, Key::S);
    run_until(&mut h, "the save", |h| !h.state().editors.is_dirty(lib));
    assert_eq!(
        std::fs::read_to_string(root.join("core/lib.rs")).unwrap(),
        "// moved\npub fn a() {}\n"
    );
    assert!(!root.join("src").exists());
    // Deleting asks first; the clean tab of the deleted file closes.
    h.state_mut().run(
        Command::Explorer(ExplorerCommand::FileAction(
            crate::window::explorer::FileAction::Delete {
                path: root.join("core"),
                folder: true,
            },
        )),
        &egui::Context::default(),
    );
    h.run_steps(2);
    h.get_by_label("Delete the folder “core”?");
    h.get_by_label("Delete").click();
    run_until(&mut h, "the delete", |h| {
        h.state().editors.get(lib).is_none()
    });
    assert!(!root.join("core").exists());
}

/// Opens `rel` (a path under `root`) through the Explorer's command.
fn open_path(h: &mut Harness<'static, CocodeApp>, root: &Path, rel: &str) -> u32 {
    h.state_mut().run(
        Command::Explorer(ExplorerCommand::OpenFile(root.join(rel))),
        &egui::Context::default(),
    );
    run_until(h, "the editor", |h| {
        h.state()
            .editors
            .tabs
            .iter()
            .any(|t| t.path == root.join(rel) && t.rel.is_some())
    });
    h.run_steps(3);
    h.state().editors.active.unwrap()
}

#[test]
fn an_open_file_a_running_task_changes_shows_its_edit_and_is_read_only_until_the_task_ends() {
    let (_dir, root) = workspace(&[("config.json", "{\"a\": 1}\n")]);
    let mut h = harness(Some(root.clone()));
    let id = open(&mut h, "config.json");
    h.state_mut().agent.prompt = r#"replace "1" with "2" in config.json"#.into();
    h.get_by_label("Run task").click();
    run_until(&mut h, "the approval card", |h| {
        h.query_by_label_contains("Allow the agent to edit a file?")
            .is_some()
    });
    h.get_by_label("Approve").click();
    run_until(&mut h, "the completion card", |h| {
        h.query_by_label_contains("passed verification. Accept it as completed?")
            .is_some()
    });
    // The agent's edit is in the buffer, and the tab says who holds it.
    run_until(&mut h, "the reload", |h| text(h, id) == "{\"a\": 2}\n");
    run_until(&mut h, "the lock", |h| {
        h.state()
            .editors
            .get(id)
            .is_some_and(|t| t.held_by.is_some())
    });
    let reason = h.state().editors.get(id).unwrap().locked().unwrap();
    h.get_by_label("  config.json  (task)");
    assert!(
        reason.starts_with("Task task-")
            && reason.ends_with("is changing this file: read-only until the task ends."),
        "{reason}"
    );
    h.get_by_label(&reason);
    h.state_mut().editors.get_mut(id).unwrap().focus = true;
    h.run_steps(2);
    type_text(&mut h, "typed while locked");
    assert_eq!(text(&h, id), "{\"a\": 2}\n");
    h.get_by_label("Accept").click();
    run_until(&mut h, "the end of the run", |h| {
        !h.state().agent.current().running
            && h.state()
                .editors
                .get(id)
                .is_some_and(|t| t.held_by.is_none())
    });
    h.state_mut().editors.get_mut(id).unwrap().focus = true;
    h.run_steps(2);
    type_text(&mut h, "x");
    assert_eq!(text(&h, id), "x{\"a\": 2}\n");
}

/// Where the end of `line` (0-based) of the editor is on screen: past the
/// last character, half a row down.
fn end_of_line(h: &Harness<'static, CocodeApp>, name: &str, line: usize) -> egui::Pos2 {
    let rect = h.get_by_label(&format!("Editor {name}")).rect();
    let font = egui::TextStyle::Monospace.resolve(&h.ctx.global_style());
    let row = h.ctx.fonts_mut(|f| f.row_height(&font));
    #[expect(clippy::cast_precision_loss, reason = "a small line number")]
    let y = rect.min.y + row * (line as f32 + 0.5);
    egui::pos2(rect.max.x - 40.0, y)
}

fn press(h: &mut Harness<'static, CocodeApp>, at: egui::Pos2, pressed: bool, modifiers: Modifiers) {
    h.event(Event::PointerMoved(at));
    h.event(Event::PointerButton {
        pos: at,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers,
    });
}

fn click(h: &mut Harness<'static, CocodeApp>, at: egui::Pos2, modifiers: Modifiers) {
    // The modifiers are held from before the press until after the release.
    h.event(Event::ModifiersChanged(modifiers));
    press(h, at, true, modifiers);
    h.run_steps(1);
    press(h, at, false, modifiers);
    h.run_steps(1);
    h.event(Event::ModifiersChanged(Modifiers::NONE));
    h.run_steps(1);
}

#[test]
fn the_mouse_places_cursors_selects_words_and_drags_selections() {
    let (_dir, root) = workspace(&[("m.txt", "alpha beta\ngamma\ndelta epsilon\n")]);
    let mut h = harness(Some(root));
    let id = open(&mut h, "m.txt");
    // A click past the end of a line puts the cursor at its end.
    let at = end_of_line(&h, "m.txt", 1);
    click(&mut h, at, Modifiers::NONE);
    assert_eq!(shown(&h, id), "alpha beta\ngamma|\ndelta epsilon\n");
    // Alt+click adds a cursor.
    let at = end_of_line(&h, "m.txt", 0);
    click(&mut h, at, Modifiers::ALT);
    assert_eq!(shown(&h, id), "alpha beta|\ngamma¦\ndelta epsilon\n");
    type_text(&mut h, "!");
    assert_eq!(text(&h, id), "alpha beta!\ngamma!\ndelta epsilon\n");
    key(&mut h, Modifiers::COMMAND, Key::Z);
    // A drag from the end of the last line up to the end of the first selects
    // what lies between.
    let from = end_of_line(&h, "m.txt", 2);
    let to = end_of_line(&h, "m.txt", 0);
    press(&mut h, from, true, Modifiers::NONE);
    h.run_steps(1);
    for step in 1..=4 {
        #[expect(clippy::cast_precision_loss, reason = "four steps")]
        let t = step as f32 / 4.0;
        h.event(Event::PointerMoved(from + (to - from) * t));
        h.run_steps(1);
    }
    press(&mut h, to, false, Modifiers::NONE);
    h.run_steps(2);
    assert_eq!(shown(&h, id), "alpha beta«|\ngamma\ndelta epsilon»\n");
    // A double click selects the word under the pointer. The harness's
    // frames are a quarter second apart, longer than a double click may
    // take: these four frames are 20 ms apart.
    let at = end_of_line(&h, "m.txt", 2);
    let start = h.ctx.input(|i| i.time) + 1.0;
    for (k, pressed) in [true, false, true, false].into_iter().enumerate() {
        press(&mut h, at, pressed, Modifiers::NONE);
        #[expect(clippy::cast_precision_loss, reason = "four frames")]
        let t = start + 0.02 * k as f64;
        h.input_mut().time = Some(t);
        h.step();
    }
    h.input_mut().time = None;
    h.run_steps(1);
    assert_eq!(shown(&h, id), "alpha beta\ngamma\ndelta «epsilon|»\n");
}

#[test]
fn a_save_refused_keeps_the_text_and_says_why() {
    let (_dir, root) = workspace(&[("w.txt", "disk\n")]);
    // Another cocode process writes to this folder (it holds the writer lock).
    let other = cocode_workspace::OpenWorkspace::open(&root).unwrap();
    let _held = other.lock_for_writing("cocode task run").unwrap();
    let mut h = harness(Some(root.clone()));
    let id = open(&mut h, "w.txt");
    type_text(&mut h, "mine ");
    key(&mut h, Modifiers::COMMAND, Key::S);
    run_until(&mut h, "the refusal", |h| {
        h.state()
            .editors
            .get(id)
            .is_some_and(|t| t.notice.as_ref().is_some_and(|n| n.error))
    });
    let notice = h
        .state()
        .editors
        .get(id)
        .unwrap()
        .notice
        .clone()
        .unwrap()
        .text;
    assert!(notice.starts_with("not saved: "), "{notice}");
    h.get_by_label(&notice);
    assert_eq!(
        std::fs::read_to_string(root.join("w.txt")).unwrap(),
        "disk\n"
    );
    assert_eq!(text(&h, id), "mine disk\n");
    assert!(h.state().editors.is_dirty(id));
}

#[test]
fn replace_in_files_asks_then_changes_every_file_through_the_gate_and_open_buffers_follow() {
    let (_dir, root) = workspace(&[
        ("a.txt", "cat\n"),
        ("sub/b.txt", "a cat, a cat\n"),
        ("c.txt", "dog\n"),
    ]);
    let mut h = harness(Some(root.clone()));
    let open_b = open_path(&mut h, &root, "sub/b.txt");
    h.state_mut().run(
        Command::Editor(EditorCommand::ShowSearch),
        &egui::Context::default(),
    );
    h.run_steps(2);
    type_text(&mut h, "cat");
    run_until(&mut h, "the search", |h| {
        matches!(
            h.state().search.progress,
            crate::window::search::SearchProgress::Done { .. }
        )
    });
    h.get_by_label("⏵").click();
    h.run_steps(2);
    h.get_all(By::new().role(Role::TextInput))
        .nth(1)
        .unwrap()
        .click();
    h.run_steps(2);
    type_text(&mut h, "고양이");
    h.get_by_label("Replace All").click();
    h.run_steps(2);
    h.get_by_label("Replace the matches on 2 line(s) in 2 file(s) with “고양이”?");
    // Nothing changes before the person says yes.
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "cat\n"
    );
    h.get_by_label("Replace").click();
    run_until(&mut h, "the replace", |h| {
        h.state().search.note.as_deref() == Some("Replaced 3 occurrence(s) in 2 file(s).")
    });
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "고양이\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("sub/b.txt")).unwrap(),
        "a 고양이, a 고양이\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("c.txt")).unwrap(),
        "dog\n"
    );
    // The open, clean buffer takes the new text; the search runs again and finds nothing.
    run_until(&mut h, "the reload", |h| {
        text(h, open_b) == "a 고양이, a 고양이\n"
    });
    run_until(&mut h, "the new search", |h| {
        matches!(
            h.state().search.progress,
            crate::window::search::SearchProgress::Done { .. }
        ) && h.state().search.results.is_empty()
    });
}

#[test]
fn replace_in_files_refuses_while_a_file_has_unsaved_changes() {
    let (_dir, root) = workspace(&[("a.txt", "cat\n"), ("b.txt", "cat\n")]);
    let mut h = harness(Some(root.clone()));
    let id = open_path(&mut h, &root, "b.txt");
    type_text(&mut h, "my ");
    h.state_mut().search.query.text = "cat".into();
    h.state_mut().search.replace_with = "dog".into();
    h.state_mut().search.start(&root);
    run_until(&mut h, "the search", |h| {
        matches!(
            h.state().search.progress,
            crate::window::search::SearchProgress::Done { .. }
        )
    });
    h.state_mut().run(
        Command::Editor(EditorCommand::ReplaceInFiles),
        &egui::Context::default(),
    );
    run_until(&mut h, "the refusal", |h| h.state().search.note.is_some());
    assert_eq!(
        h.state().search.note.as_deref(),
        Some("Nothing was replaced: save or close these first, they have unsaved changes: b.txt")
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "cat\n"
    );
    assert_eq!(text(&h, id), "my cat\n");
}

/// The window keeps drawing frames while a search is under way: the worker
/// is held after its first batch, and frame after frame the panel shows
/// those results as "so far" until the rest come. A file created later is
/// found by the next search (the watcher says the listing is stale).
#[test]
fn the_window_draws_frames_while_a_search_runs_and_a_new_file_is_found_next_time() {
    let files: Vec<(String, &str)> = (0..100)
        .map(|n| (format!("f{n:03}.txt"), "a word here\n"))
        .collect();
    let spec: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let (_dir, root) = workspace(&spec);
    let mut h = harness(Some(root.clone()));
    h.state().search.hold_after_each_batch();
    key(&mut h, Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::F);
    h.run_steps(2);
    type_text(&mut h, "word");
    run_until(&mut h, "the first batch", |h| {
        !h.state().search.results.is_empty()
    });
    for _ in 0..20 {
        h.run_steps(1);
        assert_eq!(
            h.state().search.progress,
            crate::window::search::SearchProgress::Running
        );
    }
    // The first block of 32 files, shown while the rest wait.
    assert_eq!(h.state().search.results.len(), 32);
    h.get_by_label("Searching… 32 results so far");
    h.state().search.release();
    run_until(&mut h, "the search", |h| {
        matches!(
            h.state().search.progress,
            crate::window::search::SearchProgress::Done { .. }
        )
    });
    assert_eq!(h.state().search.results.len(), 100);
    std::fs::write(root.join("new.txt"), "the word again\n").unwrap();
    let mut found = 0;
    for _ in 0..100 {
        h.run_steps(1);
        h.state_mut().search.start(&root);
        run_until(&mut h, "the search again", |h| {
            matches!(
                h.state().search.progress,
                crate::window::search::SearchProgress::Done { .. }
            )
        });
        found = h.state().search.results.len();
        if found == 101 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(found, 101);
}
