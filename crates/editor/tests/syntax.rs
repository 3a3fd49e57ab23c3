//! Syntax trees follow edits incrementally and colour only what is asked.
#![expect(clippy::unwrap_used, reason = "test helpers")]

use std::time::{Duration, Instant};

use cocode_editor::syntax::PLAIN_ABOVE_BYTES;
use cocode_editor::{Document, EditKind, Highlight, Language, Motion, Syntax, SyntaxState};
use pretty_assertions::assert_eq;
use proptest::prelude::*;

/// A full parse of `text` from scratch, on this thread.
fn fresh_sexp(language: Language, text: &str) -> String {
    assert_eq!(language, Language::Rust);
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_rust::LANGUAGE.into())
        .unwrap();
    parser.parse(text, None).unwrap().root_node().to_sexp()
}

/// Each coloured span as (text, kind).
fn spans(syntax: &Syntax, text: &str) -> Vec<(String, Highlight)> {
    syntax
        .highlights(0..text.len())
        .into_iter()
        .map(|(r, k)| (text[r].to_owned(), k))
        .collect()
}

#[test]
fn every_bundled_language_has_a_working_query() {
    for language in Language::ALL {
        assert!(
            language.query().is_ok(),
            "{}: {:?}",
            language.name(),
            language.query().err()
        );
    }
    assert_eq!(Language::of_path("a/b.RS".as_ref()), Some(Language::Rust));
    assert_eq!(Language::of_path("x.tsx".as_ref()), Some(Language::Tsx));
    assert_eq!(Language::of_path("Makefile".as_ref()), None);
    assert_eq!(
        Language::of_path("Cargo.lock".as_ref()),
        Some(Language::Toml)
    );
    assert_eq!(Language::of_path("x/y.hpp".as_ref()), Some(Language::Cpp));
    assert_eq!(Language::Json.line_comment(), None);
    assert_eq!(Language::Yaml.line_comment(), Some("#"));
}

/// One snippet per bundled language, and a span each must colour.
#[test]
fn every_bundled_language_colours_its_own_syntax() {
    let cases: [(Language, &str, &str, Highlight); 16] = [
        (Language::Rust, "fn main() {}\n", "fn", Highlight::Keyword),
        (
            Language::Python,
            "def f(): pass\n",
            "def",
            Highlight::Keyword,
        ),
        (
            Language::JavaScript,
            "const a = 'x';\n",
            "'x'",
            Highlight::String,
        ),
        (
            Language::TypeScript,
            "let n: number = 1;\n",
            "number",
            Highlight::Type,
        ),
        (
            Language::Tsx,
            "const e = <div>hi</div>;\n",
            "div",
            Highlight::Tag,
        ),
        (
            Language::Json,
            "{\"key\": true}\n",
            "true",
            Highlight::Constant,
        ),
        (
            Language::Toml,
            "[package]\nname = \"x\"\n",
            "\"x\"",
            Highlight::String,
        ),
        (Language::Yaml, "key: 12\n", "12", Highlight::Number),
        (
            Language::Markdown,
            "# 제목\n\ntext\n",
            "#",
            Highlight::Punctuation,
        ),
        (
            Language::Bash,
            "if true; then echo hi; fi\n",
            "if",
            Highlight::Keyword,
        ),
        (
            Language::Go,
            "package main\nfunc f() {}\n",
            "func",
            Highlight::Keyword,
        ),
        (
            Language::C,
            "int main(void) { return 0; }\n",
            "return",
            Highlight::Keyword,
        ),
        (
            Language::Cpp,
            "class A { public: int x; };\n",
            "class",
            Highlight::Keyword,
        ),
        (
            Language::Html,
            "<p class=\"a\">x</p>\n",
            "p",
            Highlight::Tag,
        ),
        (
            Language::Css,
            "a { color: red; }\n",
            "color",
            Highlight::Property,
        ),
        (
            Language::Dart,
            "void main() { print('hi'); }\n",
            "'hi'",
            Highlight::String,
        ),
    ];
    for (language, text, span, kind) in cases {
        let syntax = Syntax::new(language, &Document::from_text(text));
        assert_eq!(syntax.state(), &SyntaxState::Ready, "{}", language.name());
        let got = spans(&syntax, text);
        assert!(
            got.iter().any(|(t, k)| t == span && *k == kind),
            "{}: {span:?} as {kind:?} missing from {got:?}",
            language.name()
        );
    }
}

#[test]
fn rust_is_coloured_by_kind_with_inner_captures_winning() {
    let text = "// 한글 주석\nfn main() { let s = \"hi\\n\"; 42 }\n";
    let doc = Document::from_text(text);
    let syntax = Syntax::new(Language::Rust, &doc);
    assert_eq!(syntax.state(), &SyntaxState::Ready);
    let got = spans(&syntax, text);
    for want in [
        ("// 한글 주석", Highlight::Comment),
        ("fn", Highlight::Keyword),
        ("main", Highlight::Function),
        ("let", Highlight::Keyword),
        ("\"hi", Highlight::String),
        ("\\n", Highlight::Escape),
        ("42", Highlight::Constant),
    ] {
        assert!(
            got.contains(&(want.0.to_owned(), want.1)),
            "{want:?} missing from {got:?}"
        );
    }
    // Only the asked range is coloured.
    let line2 = text.find("fn").unwrap();
    let part = syntax.highlights(line2..line2 + 9);
    assert!(
        part.iter()
            .all(|(r, _)| r.start >= line2 && r.end <= line2 + 9),
        "{part:?}"
    );
    assert_eq!(
        part.first().map(|(r, k)| (&text[r.clone()], *k)),
        Some(("fn", Highlight::Keyword))
    );
}

#[test]
fn python_and_typescript_colour_keywords_and_strings() {
    let py = "def f(x):\n    return 'a'\n";
    let got = spans(&Syntax::new(Language::Python, &Document::from_text(py)), py);
    assert!(got.contains(&("def".into(), Highlight::Keyword)), "{got:?}");
    assert!(got.contains(&("'a'".into(), Highlight::String)), "{got:?}");
    let ts = "const n: number = 1;\n";
    let got = spans(
        &Syntax::new(Language::TypeScript, &Document::from_text(ts)),
        ts,
    );
    assert!(
        got.contains(&("const".into(), Highlight::Keyword)),
        "{got:?}"
    );
    assert!(got.contains(&("number".into(), Highlight::Type)), "{got:?}");
}

#[test]
fn undo_and_redo_reach_the_tree() {
    let mut doc = Document::from_text("fn a() {}\n");
    let mut syntax = Syntax::new(Language::Rust, &doc);
    doc.move_cursors(Motion::DocEnd, false);
    doc.insert_text("struct S;\n", EditKind::Other);
    syntax.sync(&doc);
    assert_eq!(
        syntax.tree().unwrap().root_node().to_sexp(),
        fresh_sexp(Language::Rust, &doc.text())
    );
    assert!(doc.undo());
    syntax.sync(&doc);
    assert_eq!(
        syntax.tree().unwrap().root_node().to_sexp(),
        fresh_sexp(Language::Rust, "fn a() {}\n")
    );
    assert!(doc.redo());
    syntax.sync(&doc);
    assert_eq!(
        syntax.tree().unwrap().root_node().to_sexp(),
        fresh_sexp(Language::Rust, &doc.text())
    );
}

#[test]
fn a_big_file_parses_off_thread_and_catches_up_with_edits_made_meanwhile() {
    let line = "fn f(x: u32) -> u32 { x + 1 } // 함수\n";
    let text = line.repeat(300_000 / line.len() + 1);
    let mut doc = Document::from_text(&text);
    let mut syntax = Syntax::new(Language::Rust, &doc);
    assert_eq!(syntax.state(), &SyntaxState::Parsing);
    assert!(syntax.highlights(0..100).is_empty());
    // Typing while the parse runs.
    doc.insert_text("struct T;\n", EditKind::Other);
    let deadline = Instant::now() + Duration::from_mins(1);
    while syntax.state() == &SyntaxState::Parsing && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        syntax.sync(&doc);
    }
    assert_eq!(syntax.state(), &SyntaxState::Ready);
    // Typing meanwhile: the tree follows at once (edited), the reparse lands later.
    doc.insert_text("// 끝\n", EditKind::Other);
    syntax.sync(&doc);
    assert!(!syntax.settled());
    // The old text keeps its colours at its new place ("fn" after the 17
    // inserted bytes); the new text gets its own once the reparse lands.
    assert_eq!(
        syntax.highlights(17..19),
        vec![(17..19, Highlight::Keyword)]
    );
    while !syntax.settled() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        syntax.sync(&doc);
    }
    assert!(syntax.settled());
    assert_eq!(
        syntax.tree().unwrap().root_node().to_sexp(),
        fresh_sexp(Language::Rust, &doc.text())
    );
    assert_eq!(syntax.highlights(0..6), vec![(0..6, Highlight::Keyword)]);
    assert_eq!(
        syntax.highlights(10..16),
        vec![(10..16, Highlight::Comment)]
    );
}

#[test]
fn a_huge_file_stays_plain_with_the_reason() {
    let doc = Document::from_text(&"x".repeat(PLAIN_ABOVE_BYTES + 1));
    let syntax = Syntax::new(Language::Rust, &doc);
    assert_eq!(
        syntax.state(),
        &SyntaxState::Plain("Files over 16 MiB show without syntax colours.".into())
    );
    assert!(syntax.highlights(0..100).is_empty());
}

#[derive(Debug, Clone)]
enum Op {
    Type(String),
    Newline,
    Backspace,
    Move(u8),
    Undo,
    Redo,
    DeleteLines,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        "[a-z{}();\"/ 한]{1,3}".prop_map(Op::Type),
        Just(Op::Newline),
        Just(Op::Backspace),
        (0u8..6).prop_map(Op::Move),
        Just(Op::Undo),
        Just(Op::Redo),
        Just(Op::DeleteLines),
    ]
}

/// Every node's row and column agree with its bytes in `text`, and the root
/// spans all of it.
fn check_positions(tree: &tree_sitter::Tree, text: &str) -> Result<(), TestCaseError> {
    let point = |byte: usize| {
        let before = &text[..byte];
        let row = before.matches('\n').count();
        let column = byte - before.rfind('\n').map_or(0, |i| i + 1);
        tree_sitter::Point { row, column }
    };
    let root = tree.root_node();
    prop_assert_eq!(root.end_byte(), text.len());
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        prop_assert!(
            text.is_char_boundary(node.start_byte()) && text.is_char_boundary(node.end_byte())
        );
        prop_assert_eq!(
            node.start_position(),
            point(node.start_byte()),
            "start of {}",
            node.kind()
        );
        prop_assert_eq!(
            node.end_position(),
            point(node.end_byte()),
            "end of {}",
            node.kind()
        );
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                return Ok(());
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
}

/// Applies `ops` to `doc`, syncing `syntax` after every `sync_every`th.
fn apply(doc: &mut Document, syntax: &mut Syntax, ops: &[Op], sync_every: usize) {
    let motions = [
        Motion::Left,
        Motion::Right,
        Motion::Up,
        Motion::Down,
        Motion::WordRight,
        Motion::LineEnd,
    ];
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Type(t) => doc.insert_text(t, EditKind::Typing),
            Op::Newline => doc.newline(),
            Op::Backspace => doc.backspace(),
            Op::Move(m) => doc.move_cursors(motions[usize::from(*m)], false),
            Op::Undo => {
                doc.undo();
            }
            Op::Redo => {
                doc.redo();
            }
            Op::DeleteLines => doc.delete_lines(),
        }
        if i.is_multiple_of(sync_every) {
            syntax.sync(doc);
        }
    }
    syntax.sync(doc);
}

const MAIN: &str = "fn main() {\n    let x = \"a\";\n}\n";

/// Tree-sitter recovers from errors starting from the old tree, so an edited
/// tree of broken text may group the error differently from a fresh parse
/// (this sequence shows it with tree-sitter alone). Its positions still
/// agree with the text, and undoing back to valid code gives the fresh tree.
#[test]
fn broken_text_may_recover_differently_but_undo_restores_the_fresh_tree() {
    let mut doc = Document::from_text(MAIN);
    let mut syntax = Syntax::new(Language::Rust, &doc);
    let ops = [
        Op::Move(3),
        Op::Type("\"".into()),
        Op::Move(3),
        Op::Type("a".into()),
        Op::Type("\"".into()),
    ];
    apply(&mut doc, &mut syntax, &ops, 1);
    let text = doc.text();
    assert_eq!(text, "fn main() {\n\"    let x = \"a\";\n}a\"\n");
    let edited = syntax.tree().unwrap().root_node().to_sexp();
    assert_ne!(edited, fresh_sexp(Language::Rust, &text));
    assert!(edited.contains("ERROR"));
    check_positions(syntax.tree().unwrap(), &text).unwrap();
    while doc.undo() {}
    syntax.sync(&doc);
    assert_eq!(doc.text(), MAIN);
    assert_eq!(
        syntax.tree().unwrap().root_node().to_sexp(),
        fresh_sexp(Language::Rust, MAIN)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// After any edits the incrementally kept tree agrees with the text
    /// everywhere; it equals a fresh parse whenever the text has no syntax
    /// error, and again once every edit is undone.
    #[test]
    fn the_incremental_tree_follows_every_edit(
        ops in proptest::collection::vec(op(), 1..30),
        sync_every in 1usize..4,
    ) {
        let mut doc = Document::from_text(MAIN);
        let mut syntax = Syntax::new(Language::Rust, &doc);
        apply(&mut doc, &mut syntax, &ops, sync_every);
        let text = doc.text();
        check_positions(syntax.tree().unwrap(), &text)?;
        let fresh = fresh_sexp(Language::Rust, &text);
        if !fresh.contains("ERROR") && !fresh.contains("MISSING") {
            prop_assert_eq!(syntax.tree().unwrap().root_node().to_sexp(), fresh);
        }
        let mut undone = 0usize;
        while doc.undo() {
            undone += 1;
            if undone.is_multiple_of(sync_every) {
                syntax.sync(&doc);
            }
        }
        syntax.sync(&doc);
        prop_assert_eq!(doc.text(), MAIN);
        prop_assert_eq!(
            syntax.tree().unwrap().root_node().to_sexp(),
            fresh_sexp(Language::Rust, MAIN)
        );
    }
}
