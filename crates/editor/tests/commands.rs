//! The editing commands, written in selection markup: `|` is the primary
//! cursor, `¦` another cursor, `«…»` a selection (see `cocode_editor::markup`).
#![expect(clippy::unwrap_used, reason = "test helpers")]

use cocode_editor::commands::matching_bracket;
use cocode_editor::{Document, EditKind, Motion, SearchQuery, markup};
use pretty_assertions::assert_eq;
use proptest::prelude::*;

fn doc(m: &str) -> Document {
    let (text, sel) = markup::parse(m).unwrap();
    let mut d = Document::from_text(&text);
    d.set_selection(sel);
    d
}

fn shown(d: &Document) -> String {
    markup::render(&d.text(), d.selection())
}

#[track_caller]
fn check(before: &str, f: impl FnOnce(&mut Document), after: &str) {
    let mut d = doc(before);
    f(&mut d);
    assert_eq!(shown(&d), after);
}

#[test]
fn typing_goes_to_every_cursor_and_replaces_selections() {
    check(
        "a|b¦c«de¦»",
        |d| d.insert_text("X", EditKind::Typing),
        "aX|bX¦cX¦",
    );
    check(
        "«한|»글",
        |d| d.insert_text("漢", EditKind::Typing),
        "漢|글",
    );
}

#[test]
fn multi_cursor_typing_is_one_undo_step_and_undo_restores_the_cursors() {
    let mut d = doc("a|\nb¦\n");
    for ch in ["x", "y", "z"] {
        d.insert_text(ch, EditKind::Typing);
    }
    assert_eq!(shown(&d), "axyz|\nbxyz¦\n");
    assert!(d.undo());
    assert_eq!(shown(&d), "a|\nb¦\n");
    assert!(!d.undo());
    assert!(d.redo());
    assert_eq!(shown(&d), "axyz|\nbxyz¦\n");
}

#[test]
fn enter_keeps_the_indentation_and_opens_brackets() {
    check(
        "    let x = 1;|",
        Document::newline,
        "    let x = 1;\n    |",
    );
    check("fn a() {|}", Document::newline, "fn a() {\n    |\n}");
    // The indentation unit is the file's own (two spaces here).
    check("  call(|", Document::newline, "  call(\n    |");
    check("a|\r\nb", Document::newline, "a\r\n|\r\nb");
}

#[test]
fn backspace_deletes_graphemes_line_breaks_and_soft_tab_stops() {
    check(
        "a\n    b\n        |x",
        Document::backspace,
        "a\n    b\n    |x",
    );
    check(
        "a\n    b\n      |x",
        Document::backspace,
        "a\n    b\n    |x",
    );
    check("a👍🏽|b", Document::backspace, "a|b");
    // A decomposed (NFD) syllable is one grapheme: 한 = ᄒ ᅡ ᆫ.
    check("\u{1112}\u{1161}\u{11ab}|", Document::backspace, "|");
    check("a\r\n|b", Document::backspace, "a|b");
    check("|ab", Document::backspace, "|ab");
    check("«ab|»c", Document::backspace, "|c");
    check("a|\r\nb", Document::delete_forward, "a|b");
    check("|👍🏽b", Document::delete_forward, "|b");
}

#[test]
fn arrows_move_by_grapheme_and_collapse_selections() {
    check("a👍🏽|b", |d| d.move_cursors(Motion::Left, false), "a|👍🏽b");
    check(
        "a|\r\nb",
        |d| d.move_cursors(Motion::Right, false),
        "a\r\n|b",
    );
    check("«ab|»c", |d| d.move_cursors(Motion::Left, false), "|abc");
    check("«ab|»c", |d| d.move_cursors(Motion::Right, false), "ab|c");
    check("a|bc", |d| d.move_cursors(Motion::Right, true), "a«b|»c");
}

#[test]
fn word_motions_know_hangul_and_punctuation() {
    check(
        "안녕 세계|",
        |d| d.move_cursors(Motion::WordLeft, false),
        "안녕 |세계",
    );
    check(
        "|안녕 세계",
        |d| d.move_cursors(Motion::WordRight, false),
        "안녕| 세계",
    );
    check(
        "foo.bar(|)",
        |d| d.move_cursors(Motion::WordLeft, false),
        "foo.bar|()",
    );
    check(
        "a  |\n  b",
        |d| d.move_cursors(Motion::WordRight, false),
        "a  \n  b|",
    );
    check("x = fo|o", |d| d.delete_word(true), "x = |o");
}

#[test]
fn up_and_down_keep_the_goal_column() {
    let mut d = doc("abcdef|\nx\nabcdefgh");
    d.move_cursors(Motion::Down, false);
    assert_eq!(shown(&d), "abcdef\nx|\nabcdefgh");
    d.move_cursors(Motion::Down, false);
    assert_eq!(shown(&d), "abcdef\nx\nabcdef|gh");
    d.move_cursors(Motion::Down, false);
    assert_eq!(shown(&d), "abcdef\nx\nabcdefgh|");
    d.move_cursors(Motion::Up, false);
    assert_eq!(
        shown(&d),
        "abcdef\nx\nab|cdefgh"
            .replace("ab|cdefgh", "abcdefgh|")
            .replace("x\nabcdefgh|", "x|\nabcdefgh")
    );
}

#[test]
fn home_goes_to_the_first_non_blank_then_to_column_zero() {
    check(
        "    ab|c",
        |d| d.move_cursors(Motion::LineStart, false),
        "    |abc",
    );
    check(
        "    |abc",
        |d| d.move_cursors(Motion::LineStart, false),
        "|    abc",
    );
    check(
        "a|bc\r\nd",
        |d| d.move_cursors(Motion::LineEnd, false),
        "abc|\r\nd",
    );
    check("a|bc", |d| d.move_cursors(Motion::DocEnd, true), "a«bc|»");
}

#[test]
fn ctrl_d_selects_the_word_then_adds_next_occurrences() {
    let mut d = doc("let a|b = ab + ab;");
    d.add_next_occurrence();
    assert_eq!(shown(&d), "let «ab|» = ab + ab;");
    d.add_next_occurrence();
    assert_eq!(shown(&d), "let «ab¦» = «ab|» + ab;");
    d.add_next_occurrence();
    d.insert_text("x", EditKind::Typing);
    assert_eq!(shown(&d), "let x¦ = x¦ + x|;");
}

#[test]
fn cursors_are_added_above_below_and_by_alt_click() {
    let mut d = doc("ab|c\nd\nefg");
    d.add_cursor_vertical(true);
    d.add_cursor_vertical(true);
    // Each new cursor takes the column of the one it was added from.
    assert_eq!(shown(&d), "ab¦c\nd¦\ne|fg");
    d.toggle_cursor_at(0);
    assert_eq!(shown(&d), "|ab¦c\nd¦\ne¦fg");
    d.toggle_cursor_at(0);
    assert_eq!(shown(&d), "ab¦c\nd¦\ne|fg");
    d.set_selection(d.selection().primary_only());
    assert_eq!(shown(&d), "abc\nd\ne|fg");
}

#[test]
fn tab_indents_and_shift_tab_outdents() {
    check("ab|", Document::tab, "ab  |");
    check("«a\nb|»", Document::tab, "«    a\n    b|»");
    check(
        "«    a\n        b\n|»c",
        Document::outdent_lines,
        "«a\n    b\n|»c",
    );
    let mut tabs = doc("\tx|");
    assert!(tabs.indent().tabs);
    tabs.tab();
    assert_eq!(shown(&tabs), "\tx\t|");
}

#[test]
fn comments_toggle_at_the_common_indentation() {
    check(
        "  «a\n    b|»",
        |d| d.toggle_comment("//"),
        "  // «a\n  //   b|»",
    );
    check(
        "  // a\n  //   b|",
        |d| d.toggle_comment("//"),
        "  // a\n    b|",
    );
    check(
        "«  // a\n\n  //b|»",
        |d| d.toggle_comment("//"),
        "«  a\n\n  b|»",
    );
}

#[test]
fn lines_move_duplicate_and_delete() {
    check("a\nb|\nc", |d| d.move_lines(false), "b|\na\nc");
    check("a|\nb\nc", |d| d.move_lines(true), "b\na|\nc");
    check("a\r\nb|", |d| d.move_lines(false), "b|\r\na");
    check("a|\nb", |d| d.move_lines(false), "a|\nb");
    check("x\na|b\nc", |d| d.duplicate_lines(true), "x\nab\na|b\nc");
    check("x\na|b\nc", |d| d.duplicate_lines(false), "x\na|b\nab\nc");
    check("a\nb|\nc\n", Document::delete_lines, "a\n|c\n");
    check("a\nb|", Document::delete_lines, "a|");
    check("«a\nb|»", Document::delete_lines, "|");
}

#[test]
fn brackets_match_across_nesting() {
    let d = doc("f(a[1], {b})|");
    let rope = d.rope();
    assert_eq!(matching_bracket(rope, 1, 1000), Some((1, 11)));
    // Just after a bracket counts too.
    assert_eq!(matching_bracket(rope, 12, 1000), Some((11, 1)));
    assert_eq!(matching_bracket(rope, 8, 1000), Some((8, 10)));
    assert_eq!(matching_bracket(rope, 7, 1000), None);
    // Unbalanced, or past the scan limit: none.
    assert_eq!(matching_bracket(doc("(((|").rope(), 0, 1000), None);
    assert_eq!(matching_bracket(rope, 1, 5), None);
}

#[test]
fn find_honours_case_whole_word_and_regex() {
    let rope = doc("|Foo foo food 한글foo").rope().clone();
    let q = |text: &str, case: bool, word: bool, regex: bool| {
        SearchQuery {
            text: text.into(),
            case_sensitive: case,
            whole_word: word,
            regex,
        }
        .compile()
        .unwrap()
        .find_all(&rope)
    };
    assert_eq!(
        q("foo", false, false, false),
        [(0, 3), (4, 7), (8, 11), (15, 18)]
    );
    assert_eq!(q("foo", true, false, false), [(4, 7), (8, 11), (15, 18)]);
    assert_eq!(q("foo", false, true, false), [(0, 3), (4, 7)]);
    assert_eq!(q("f.o", false, false, false), []);
    assert_eq!(q("f.o$", true, false, true), [(15, 18)]);
    let bad = SearchQuery {
        text: "(".into(),
        regex: true,
        ..SearchQuery::default()
    }
    .compile()
    .unwrap_err();
    assert_eq!(bad.code(), "SEARCH_BAD_REGEX");
    assert_eq!(
        SearchQuery::default().compile().unwrap_err().code(),
        "SEARCH_EMPTY"
    );
}

#[test]
fn find_next_wraps_and_replace_all_is_one_step() {
    let m = SearchQuery {
        text: "(\\w+)=(\\d)".into(),
        case_sensitive: true,
        regex: true,
        ..SearchQuery::default()
    }
    .compile()
    .unwrap();
    let mut d = doc("a=1 |b=2 c=3");
    assert!(d.find_next(&m, false));
    assert_eq!(shown(&d), "a=1 «b=2|» c=3");
    assert!(d.find_next(&m, false));
    assert!(d.find_next(&m, false));
    assert_eq!(shown(&d), "«a=1|» b=2 c=3");
    assert!(d.find_next(&m, true));
    assert_eq!(shown(&d), "a=1 b=2 «c=3|»");
    assert!(d.replace_match(&m, "$2:$1"));
    assert_eq!(d.text(), "a=1 b=2 3:c");
    assert_eq!(d.replace_all_matches(&m, "${2}${1}"), 2);
    assert_eq!(d.text(), "1a 2b 3:c");
    assert!(d.undo());
    assert_eq!(d.text(), "a=1 b=2 3:c");
}

#[test]
fn replacing_in_a_string_counts_and_expands() {
    let q = |text: &str, word: bool, regex: bool| {
        SearchQuery {
            text: text.into(),
            case_sensitive: true,
            whole_word: word,
            regex,
        }
        .compile()
        .unwrap()
    };
    assert_eq!(
        q("cat", false, false).replace_in_str("cat concat 고양이cat\n", "dog"),
        ("dog condog 고양이dog\n".to_owned(), 3)
    );
    assert_eq!(
        q("cat", true, false).replace_in_str("cat concat cat_x cat.\n", "dog"),
        ("dog concat cat_x dog.\n".to_owned(), 2)
    );
    assert_eq!(
        q("(\\w+)=(\\d)", false, true).replace_in_str("a=1, b=2", "$2=$1"),
        ("1=a, 2=b".to_owned(), 2)
    );
    assert_eq!(
        q("x", false, false).replace_in_str("none", "y"),
        ("none".to_owned(), 0)
    );
}

#[derive(Debug, Clone)]
enum Op {
    Type(String),
    Newline,
    Backspace,
    Delete,
    Move(u8, bool),
    AddBelow,
    Tab,
    Outdent,
    Comment,
    MoveLine(bool),
    Duplicate(bool),
    DeleteLines,
    Paste(String),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        "[a-z한 ]{1,2}".prop_map(Op::Type),
        Just(Op::Newline),
        Just(Op::Backspace),
        Just(Op::Delete),
        (0u8..8, any::<bool>()).prop_map(|(m, e)| Op::Move(m, e)),
        Just(Op::AddBelow),
        Just(Op::Tab),
        Just(Op::Outdent),
        Just(Op::Comment),
        any::<bool>().prop_map(Op::MoveLine),
        any::<bool>().prop_map(Op::Duplicate),
        Just(Op::DeleteLines),
        "[a-z\n]{0,6}".prop_map(Op::Paste),
    ]
}

fn run(d: &mut Document, op: &Op) {
    let motions = [
        Motion::Left,
        Motion::Right,
        Motion::WordLeft,
        Motion::WordRight,
        Motion::Up,
        Motion::Down,
        Motion::LineStart,
        Motion::LineEnd,
    ];
    match op {
        Op::Type(t) => d.insert_text(t, EditKind::Typing),
        Op::Newline => d.newline(),
        Op::Backspace => d.backspace(),
        Op::Delete => d.delete_forward(),
        Op::Move(m, e) => d.move_cursors(motions[usize::from(*m)], *e),
        Op::AddBelow => d.add_cursor_vertical(true),
        Op::Tab => d.tab(),
        Op::Outdent => d.outdent_lines(),
        Op::Comment => d.toggle_comment("#"),
        Op::MoveLine(down) => d.move_lines(*down),
        Op::Duplicate(down) => d.duplicate_lines(*down),
        Op::DeleteLines => d.delete_lines(),
        Op::Paste(t) => d.paste(t),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any command sequence undone step by step restores the text and the
    /// selection exactly, and redone restores the end state; cursors stay
    /// inside the text throughout.
    #[test]
    fn undo_all_restores_text_and_selection(
        text in "[a-z한 \n]{0,30}",
        ops in proptest::collection::vec(op(), 1..25),
    ) {
        let mut d = Document::from_text(&text);
        // Undo restores the selection from before the first edit (moving
        // cursors alone is not an undo step).
        let mut start = None;
        let mut last_edit = None;
        for op in &ops {
            let (before, version) = (d.selection().clone(), d.version());
            run(&mut d, op);
            if d.version() != version {
                start.get_or_insert(before);
                last_edit = Some(d.selection().clone());
            }
            let len = d.rope().len_chars();
            prop_assert!(d.selection().ranges().iter().all(|r| r.anchor <= len && r.head <= len));
        }
        let end_text = d.text();
        while d.undo() {}
        prop_assert_eq!(d.text(), text);
        if let Some(start) = start {
            prop_assert_eq!(d.selection(), &start);
        }
        while d.redo() {}
        prop_assert_eq!(d.text(), end_text);
        if let Some(end) = last_edit {
            prop_assert_eq!(d.selection(), &end);
        }
    }
}

#[test]
fn a_reload_from_disk_changes_only_the_differing_lines_and_keeps_cursors() {
    let mut d = doc("one\ntwo\nthr|ee\nfour\n");
    let changed = d.reload("one\nTWO\nthree\nfour\nfive\n");
    assert_eq!(changed, vec![1, 4]);
    assert_eq!(shown(&d), "one\nTWO\nthr|ee\nfour\nfive\n");
    assert!(!d.is_dirty());
    // The reload is one undo step (undoing it makes the buffer differ from disk).
    assert!(d.undo());
    assert_eq!(d.text(), "one\ntwo\nthree\nfour\n");
    assert!(d.is_dirty());
    let mut same = doc("a|\n");
    assert_eq!(same.reload("a\n"), Vec::<usize>::new());
    assert!(!same.can_undo());
}
