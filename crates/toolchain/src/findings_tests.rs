use std::fmt::Write as _;

use super::*;
use pretty_assertions::assert_eq;

/// Real output of each runner, captured from a failing run.
fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/findings")
        .join(format!("{name}.txt"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Each finding as `kind | name | place | detail` for whole-value asserts.
fn shown(findings: &[Finding]) -> Vec<String> {
    findings
        .iter()
        .map(|f| {
            format!(
                "{:?} | {} | {} | {}",
                f.kind(),
                f.name(),
                f.place().unwrap_or("-"),
                f.detail().replace('\n', " / ")
            )
        })
        .collect()
}

#[test]
fn cargo_test_names_the_failing_test_with_its_panic() {
    assert_eq!(
        shown(&read(&fixture("cargo-test"))),
        [
            "FailedTest | tests::adds | src/lib.rs:4:25 | thread 'tests::adds' (7624) panicked at src/lib.rs:4:25: / assertion `left == right` failed /   left: -1 /  right: 5"
        ]
    );
}

#[test]
fn nextest_names_the_failing_test_once() {
    assert_eq!(
        shown(&read(&fixture("nextest"))),
        [
            "FailedTest | tests::adds | src/lib.rs:4:25 | thread 'tests::adds' (7662) panicked at src/lib.rs:4:25: / assertion `left == right` failed / left: -1 / right: 5"
        ]
    );
}

#[test]
fn pytest_names_the_failing_test_with_its_assertion() {
    assert_eq!(
        shown(&read(&fixture("pytest"))),
        [
            "FailedTest | tests/test_calc.py::test_add | tests/test_calc.py:5 | >       assert add(2, 3) == 5 / E       assert -1 == 5 / E        +  where -1 = add(2, 3)"
        ]
    );
}

#[test]
fn pytest_places_each_test_of_a_class_in_its_own_section() {
    let found = read(&fixture("pytest-classes"));
    let places: Vec<(&str, Option<&str>)> = found.iter().map(|f| (f.name(), f.place())).collect();
    assert_eq!(
        places,
        [
            (
                "tests/test_more.py::ChunkedTests::test_even",
                Some("tests/test_more.py:55")
            ),
            (
                "tests/test_more.py::ChunkedTests::test_strict_being_true",
                Some("tests/test_more.py:104")
            ),
        ]
    );
    assert!(
        found[0].detail().starts_with(">       self.assertEqual(\nE       AssertionError: Lists differ: [['A', 'B', 'C', 'D'], ['E', 'F']]"),
        "{}",
        found[0].detail()
    );
    assert!(
        found[1]
            .detail()
            .contains("E               ValueError: iterable is not divisible by n."),
        "{}",
        found[1].detail()
    );
}

#[test]
fn jest_and_vitest_name_the_failing_test() {
    assert_eq!(
        shown(&read(&fixture("jest"))),
        [
            "FailedTest | sum › adds | test/sum.test.js:3:42 | expect(received).toBe(expected) // Object.is equality / Expected: 5 / Received: -1"
        ]
    );
    assert_eq!(
        shown(&read(&fixture("vitest"))),
        [
            "FailedTest | test/vsum.test.mjs > sum > adds | test/vsum.test.mjs:4:42 | AssertionError: expected -1 to be 5 // Object.is equality / - Expected / + Received / - 5 / + -1"
        ]
    );
}

#[test]
fn node_runner_names_failing_tests_not_their_suites() {
    assert_eq!(
        shown(&read(&fixture("node-spec"))),
        [
            "FailedTest | adds | /tmp/fx/node/t.test.mjs:3:29 | AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: / -1 !== 5",
            "FailedTest | inner fails | /tmp/fx/node/t.test.mjs:5:73 | AssertionError [ERR_ASSERTION]: inner broke",
        ]
    );
    assert_eq!(
        shown(&read(&fixture("node-tap"))),
        [
            "FailedTest | adds | /tmp/fx/node/t.test.mjs:3:1 | error: Expected values to be strictly equal: -1 !== 5 / expected: 5 / actual: -1 / operator: 'strictEqual'",
            "FailedTest | inner fails | /tmp/fx/node/t.test.mjs:5:38 | error: 'inner broke' / expected: true / actual: false / operator: '=='",
        ]
    );
}

#[test]
fn tape_names_the_test_and_its_assertion() {
    assert_eq!(
        shown(&read(&fixture("tape"))),
        [
            "FailedTest | adds › sum is right | /tmp/fx/js/test/tape.js:2:25 | operator: equal / expected: 5 / actual: -1"
        ]
    );
}

#[test]
fn go_test_names_the_failing_test_in_both_layouts() {
    assert_eq!(
        shown(&read(&fixture("go-test"))),
        ["FailedTest | TestAdd | add_test.go:8 | add_test.go:8: add(2, 3) = -1; want 5"]
    );
    assert_eq!(
        shown(&read(
            "--- FAIL: TestAdd (0.00s)\n    add_test.go:8: got -1\nFAIL\n"
        )),
        ["FailedTest | TestAdd | add_test.go:8 | add_test.go:8: got -1"]
    );
}

#[test]
fn compiler_errors_carry_their_place() {
    assert_eq!(
        shown(&read(&fixture("rustc"))),
        [
            "Error | E0308: mismatched types | src/lib.rs:7:26 |   | / 7 | pub fn broken() -> u32 { \"text\" } /   |                    ---   ^^^^^^ expected `u32`, found `&str` /   |                    | /   |                    expected `u32` because of return type"
        ]
    );
    // The JSON messages give the same finding once, with the same place.
    let json = read(&fixture("cargo-json"));
    assert_eq!(json.len(), 1);
    assert_eq!(
        (json[0].name(), json[0].place()),
        ("E0308: mismatched types", Some("src/lib.rs:7:26"))
    );
    assert_eq!(
        shown(&read(&fixture("tsc"))),
        ["Error | TS2322: Type 'string' is not assignable to type 'number'. | a.ts:1:7 | "]
    );
    assert_eq!(
        shown(&read(&fixture("pyright"))),
        [
            "Error | Type \"Literal['s']\" is not assignable to declared type \"int\" | /tmp/fx/py/bad.py:1:10 | "
        ]
    );
    assert_eq!(
        shown(&read(&fixture("pycompile"))),
        [
            "Error | SyntaxError: invalid syntax | syn.py:1 |   File \"<string>\", line 3, in <module> /   File \"syn.py\", line 1 /     def f(: /           ^"
        ]
    );
}

#[test]
fn passing_output_and_prose_give_no_findings() {
    let passing = "running 2 tests\ntest a ... ok\ntest b ... ok\n\ntest result: ok. 2 passed\nok 1 - adds\n# pass 1\n";
    assert_eq!(read(passing), Vec::<Finding>::new());
    // Words that only look like marks.
    assert_eq!(
        read("the error: handling is fine\nFAILED to parse is a phrase\n● note\n"),
        Vec::<Finding>::new()
    );
    // TODO and SKIP failures do not count.
    assert_eq!(
        read("not ok 1 - later # TODO not yet\nnot ok 2 - x # skip\n"),
        Vec::<Finding>::new()
    );
}

#[test]
fn findings_are_capped_and_failing_tests_come_first() {
    let mut output = String::from("src/a.c:1:2: error: first\n");
    for i in 0..40 {
        let _ = writeln!(output, "test t{i} ... FAILED");
    }
    let found = read(&output);
    assert_eq!(found.len(), MAX_FINDINGS);
    assert!(found.iter().all(|f| f.kind() == FindingKind::FailedTest));
    assert_eq!(found[0].name(), "t0");
}

#[test]
fn missing_programs_are_named_from_each_shell() {
    assert_eq!(
        missing_tools(
            "sh: 1: yarn: not found\nbash: pnpm: command not found\nbash: line 1: bun: command not found\nenv: 'deno': No such file or directory\nsh: 1: yarn: not found\n"
        ),
        ["yarn", "pnpm", "bun", "deno"]
    );
    assert_eq!(
        missing_tools("all good\nnot found anywhere\n"),
        Vec::<String>::new()
    );
}

#[test]
fn refused_writes_outside_the_workspace_are_named() {
    let root = Path::new("/work/proj");
    let output = "Error: EACCES: permission denied, mkdir '/root/.cache/nyc'\nPermissionError: [Errno 13] Permission denied: '/home/me/.local/x'\nEACCES: permission denied, open '/work/proj/dist/a.js'\ntouch: cannot touch '/etc/x': Read-only file system\nfine line '/opt/y'\n";
    assert_eq!(
        refused_paths(output, root),
        ["/root/.cache/nyc", "/home/me/.local/x", "/etc/x"]
    );
}
