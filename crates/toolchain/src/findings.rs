//! What a failing check said failed, read from its output: the failing
//! tests of cargo test and nextest, pytest, jest, vitest, node's test
//! runner, TAP (tape, node-tap) and go test; the errors of compilers, type
//! checkers and linters with their place (`path:line:col`); the programs a
//! shell could not find; and the paths outside the workspace the sandbox
//! refused to let it write.
//!
//! Pure text in, findings out. Each reader looks for its runner's own
//! marks, so a reader never fires on another runner's output by accident;
//! all readers run over every failing output because a script can run
//! several tools (`npm test` running tsc, then jest).

use std::collections::BTreeSet;
use std::path::Path;

use cocode_core::verification::{Finding, FindingKind, MAX_FINDINGS};

/// Every finding in `output`, failing tests first, then errors, each once,
/// at most `MAX_FINDINGS`.
pub fn read(output: &str) -> Vec<Finding> {
    let clean: String = output
        .lines()
        .map(strip_escapes)
        .collect::<Vec<_>>()
        .join("\n");
    let lines: Vec<&str> = clean.lines().collect();
    let mut out = Vec::new();
    libtest(&lines, &mut out);
    nextest(&lines, &mut out);
    pytest(&lines, &mut out);
    jest(&lines, &mut out);
    vitest(&lines, &mut out);
    node_spec(&lines, &mut out);
    tap(&lines, &mut out);
    go_test(&lines, &mut out);
    rustc(&lines, &mut out);
    cargo_json(&clean, &mut out);
    tsc(&lines, &mut out);
    colon_places(&lines, &mut out);
    python_traceback(&lines, &mut out);
    dedup(out)
}

fn dedup(found: Vec<Finding>) -> Vec<Finding> {
    let mut seen = BTreeSet::new();
    let mut out: Vec<Finding> = found
        .into_iter()
        .filter(|f| seen.insert((f.kind(), f.name().to_owned(), f.place().map(str::to_owned))))
        .collect();
    // Failing tests first: they say most about what the change broke.
    out.sort_by_key(|f| f.kind() != FindingKind::FailedTest);
    out.truncate(MAX_FINDINGS);
    out
}

/// The programs a shell or `env` said it could not find.
pub fn missing_tools(output: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in output.lines().map(str::trim) {
        let name = if let Some(rest) = line.strip_suffix(": not found") {
            // dash: `sh: 1: yarn: not found`
            rest.rsplit(": ").next()
        } else if let Some(rest) = line.strip_suffix(": command not found") {
            // bash: `bash: yarn: command not found`, `bash: line 1: yarn: …`
            rest.rsplit(": ").next()
        } else if let Some(rest) = line.strip_prefix("env: ") {
            // `env: 'yarn': No such file or directory`
            rest.strip_suffix(": No such file or directory")
        } else {
            None
        };
        let Some(name) = name.map(|n| n.trim_matches(['\'', '"', '`', '‘', '’'])) else {
            continue;
        };
        if !name.is_empty()
            && !name.contains(char::is_whitespace)
            && name.len() <= 200
            && !out.iter().any(|n| n == name)
        {
            out.push(name.to_owned());
        }
    }
    out
}

/// Marks of a refused write on one line of output.
const REFUSAL_MARKS: [&str; 6] = [
    "Permission denied",
    "permission denied",
    "EACCES",
    "EPERM",
    "Read-only file system",
    "EROFS",
];

/// Absolute paths on lines that say a write was refused, outside `root`
/// (a refusal inside the workspace is the project's own business).
pub fn refused_paths(output: &str, root: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in output.lines() {
        if !REFUSAL_MARKS.iter().any(|m| line.contains(m)) {
            continue;
        }
        for quoted in quoted_paths(line) {
            let path = Path::new(&quoted);
            if path.is_absolute() && !path.starts_with(root) && !out.contains(&quoted) {
                out.push(quoted);
            }
        }
    }
    out
}

/// Absolute paths in quotes (`'…'`, `"…"`) or after `: ` at a line's end.
fn quoted_paths(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for quote in ['\'', '"'] {
        let mut parts = line.split(quote);
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
            if inside.starts_with('/') && !inside.contains(char::is_whitespace) {
                out.push(inside.to_owned());
            }
        }
        // An odd part count leaves the last one unpaired; it is not quoted.
    }
    if out.is_empty()
        && let Some(last) = line.rsplit(": ").next()
        && last.starts_with('/')
        && !last.contains(char::is_whitespace)
    {
        out.push(last.to_owned());
    }
    out
}

/// `line` without terminal escape sequences (colours, cursor moves).
pub fn strip_escapes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                // Parameters, then one final letter.
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The first `path:line:col` (or `path:line`) in `text` whose path has a
/// file extension, without surrounding brackets.
fn place_in(text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | ',' | '\''))
        .map(|w| w.trim_end_matches(':'))
        .map(|w| w.strip_prefix("file://").unwrap_or(w))
        .find(|w| is_place(w))
        .map(ToOwned::to_owned)
}

fn is_place(word: &str) -> bool {
    let mut parts = word.rsplitn(3, ':');
    let (Some(a), Some(b)) = (parts.next(), parts.next()) else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let path = match parts.next() {
        Some(path) if digits(a) && digits(b) => path,
        _ if digits(a) => word.rsplit_once(':').map_or("", |(p, _)| p),
        _ => return false,
    };
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    !path.contains("://")
        && file
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && (1..=5).contains(&ext.len()))
        && ext_is_word(file)
}

fn ext_is_word(file: &str) -> bool {
    file.rsplit_once('.')
        .is_some_and(|(_, ext)| ext.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// The lines after `at` up to the first for which `keep` is false.
fn block_after<'a>(lines: &[&'a str], at: usize, keep: impl Fn(&&str) -> bool) -> Vec<&'a str> {
    lines
        .iter()
        .skip(at + 1)
        .take_while(|l| keep(l))
        .copied()
        .collect()
}

/// Up to `max` non-empty lines after `from` that do not start another
/// block (a line for which `stop` is true ends the detail).
fn detail_after(lines: &[&str], from: usize, max: usize, stop: impl Fn(&str) -> bool) -> String {
    lines
        .iter()
        .skip(from + 1)
        .take_while(|l| !stop(l))
        .filter(|l| !l.trim().is_empty())
        .take(max)
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

fn failed_test(name: &str, place: Option<&str>, detail: &str) -> Finding {
    Finding::new(FindingKind::FailedTest, name, place, detail)
}

/// libtest: `test tests::adds ... FAILED`, with the `---- tests::adds
/// stdout ----` section as detail and its `panicked at path:l:c` as place.
fn libtest(lines: &[&str], out: &mut Vec<Finding>) {
    for line in lines {
        let Some(name) = line
            .strip_prefix("test ")
            .and_then(|r| r.strip_suffix(" ... FAILED"))
        else {
            continue;
        };
        let header = format!("---- {name} stdout ----");
        let section = lines.iter().position(|l| l.trim() == header);
        let (place, detail) = match section {
            Some(at) => {
                let detail = detail_after(lines, at, 8, |l| {
                    l.starts_with("---- ")
                        || l.trim() == "failures:"
                        || l.starts_with("note: run with")
                        || l.starts_with("stack backtrace:")
                });
                let place = detail
                    .lines()
                    .find_map(|l| l.split_once("panicked at ").map(|(_, p)| p))
                    .and_then(place_in);
                (place, detail)
            }
            None => (None, String::new()),
        };
        out.push(failed_test(name, place.as_deref(), &detail));
    }
}

/// nextest: `        FAIL [   0.079s] (2/2) probe tests::adds` (and
/// `SIGSEGV`, `SIGABRT`, `TIMEOUT`, `ABORT`), with the test's own output
/// printed below it (`stderr ───`, or `--- STDERR: …` before 0.9.80): the
/// panic and the lines after it are the detail, its place the place.
fn nextest(lines: &[&str], out: &mut Vec<Finding>) {
    const MARKS: [&str; 6] = [
        "FAIL [",
        "SIGSEGV [",
        "SIGABRT [",
        "TIMEOUT [",
        "ABORT [",
        "PASS [",
    ];
    let starts = |l: &str| MARKS.iter().any(|m| l.trim_start().starts_with(m));
    for (at, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let Some(rest) = MARKS[..5].iter().find_map(|m| trimmed.strip_prefix(m)) else {
            continue;
        };
        let Some((_, after)) = rest.split_once(']') else {
            continue;
        };
        // `(2/2) <binary-id> <test name>`; the test is the last word.
        let Some(name) = after.split_whitespace().last() else {
            continue;
        };
        let block = block_after(lines, at, |l| {
            !starts(l) && !l.trim_start().starts_with("────")
        });
        // A summary line repeats the test after the run; its output is
        // above, with the first one.
        if block.is_empty()
            && out
                .iter()
                .any(|f| f.kind() == FindingKind::FailedTest && f.name() == name)
        {
            continue;
        }
        let panic = block.iter().position(|l| l.contains("panicked at "));
        let detail = panic
            .map(|p| {
                block
                    .iter()
                    .skip(p)
                    .take_while(|l| !l.trim_start().starts_with("stack backtrace:"))
                    .take_while(|l| !l.trim_start().starts_with("note: run with"))
                    .filter(|l| !l.trim().is_empty())
                    .take(6)
                    .map(|l| l.trim())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        let place = panic
            .and_then(|p| block[p].split_once("panicked at "))
            .and_then(|(_, p)| place_in(p));
        if !out
            .iter()
            .any(|f| f.kind() == FindingKind::FailedTest && f.name() == name)
        {
            out.push(failed_test(name, place.as_deref(), &detail));
        }
    }
}

/// pytest's short summary: `FAILED tests/test_x.py::test_add - assert 1 == 2`
/// and `ERROR tests/test_y.py - ImportError: …`; the place is the
/// `tests/test_x.py:5: AssertionError` line of its section.
fn pytest(lines: &[&str], out: &mut Vec<Finding>) {
    for line in lines {
        let (kind, rest) = if let Some(rest) = line.strip_prefix("FAILED ") {
            (FindingKind::FailedTest, rest)
        } else if let Some(rest) = line.strip_prefix("ERROR ") {
            (FindingKind::Error, rest)
        } else {
            continue;
        };
        let (name, message) = rest.split_once(" - ").unwrap_or((rest, ""));
        if !name.contains(".py") {
            continue;
        }
        let file = name.split("::").next().unwrap_or(name);
        // The test's section: `____ test_add ____`, or for a test in a
        // class `____ ChunkedTests.test_even ____`.
        let title = name.split("::").skip(1).collect::<Vec<_>>().join(".");
        let title = format!(" {title} ");
        let section: Vec<&str> = lines
            .iter()
            .position(|l| l.starts_with('_') && l.contains(&title))
            .map(|at| {
                lines
                    .iter()
                    .skip(at + 1)
                    // `_ _ _` separates the frames of one test.
                    .take_while(|l| !l.starts_with("__") && !l.starts_with('='))
                    .copied()
                    .collect()
            })
            .unwrap_or_default();
        // The first `tests/test_x.py:5: …` line of the section is the
        // test's own failing line.
        let place = section.iter().find_map(|l| {
            let after = l.trim().strip_prefix(file)?.strip_prefix(':')?;
            let (n, _) = after.split_once(':')?;
            n.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| format!("{file}:{n}"))
        });
        // The `E   ` lines say most.
        let detail: Vec<&str> = section
            .iter()
            .filter(|l| (l.starts_with("E ") || l.starts_with("> ")) && !l[1..].trim().is_empty())
            .take(8)
            .copied()
            .collect();
        let detail = if detail.is_empty() {
            message.to_owned()
        } else {
            detail.join("\n")
        };
        out.push(Finding::new(kind, name, place.as_deref(), &detail));
    }
}

/// jest: `  ● Suite › adds` for each failed test (`● Test suite failed to
/// run` is an error of the file), its message and the `at … (file:l:c)`
/// place below.
fn jest(lines: &[&str], out: &mut Vec<Finding>) {
    // Only in jest's own output (its summary), so a `●` in prose is not a test.
    if !lines.iter().any(|l| l.starts_with("Test Suites:")) {
        return;
    }
    for (at, line) in lines.iter().enumerate() {
        let Some(name) = line.trim_start().strip_prefix("● ") else {
            continue;
        };
        let name = name.trim();
        if name.is_empty() || name.starts_with("Console") {
            continue;
        }
        let block = block_after(lines, at, |l| {
            !l.trim_start().starts_with("● ") && !l.starts_with("Test Suites:")
        });
        let (detail, place) = message_and_frame(&block, 8, "node_modules");
        let kind = if name == "Test suite failed to run" {
            FindingKind::Error
        } else {
            FindingKind::FailedTest
        };
        out.push(Finding::new(kind, name, place.as_deref(), &detail));
    }
}

/// A JavaScript failure's message — its lines before the stack (`at …`),
/// source excerpts left out, at most `max` — and the place of the first
/// stack frame that does not contain `outside` (a dependency's, node's own).
fn message_and_frame(block: &[&str], max: usize, outside: &str) -> (String, Option<String>) {
    let message = block
        .iter()
        .take_while(|l| !l.trim_start().starts_with("at "))
        .filter(|l| !l.trim().is_empty() && !is_code_frame(l))
        .take(max)
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join("\n");
    let place = block
        .iter()
        .filter(|l| l.trim_start().starts_with("at ") && !l.contains(outside))
        .find_map(|l| place_in(l));
    (message, place)
}

/// A line of a source excerpt jest and vitest print (`> 3 | code`,
/// `  4| code`, `    |   ^`).
fn is_code_frame(line: &str) -> bool {
    let t = line.trim_start().trim_start_matches('>').trim_start();
    t.split_once('|')
        .is_some_and(|(gutter, _)| gutter.trim().bytes().all(|b| b.is_ascii_digit()))
}

/// vitest: ` FAIL  test/sum.test.ts > sum > adds` with the assertion
/// below and the `❯ test/sum.test.ts:5:17` place.
fn vitest(lines: &[&str], out: &mut Vec<Finding>) {
    for (at, line) in lines.iter().enumerate() {
        let Some(name) = line.trim_start().strip_prefix("FAIL ") else {
            continue;
        };
        let name = name.trim();
        if !name.contains(" > ") {
            continue;
        }
        let block = block_after(lines, at, |l| {
            !l.trim_start().starts_with("FAIL ") && !l.contains("⎯⎯⎯")
        });
        let detail = block
            .iter()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('❯'))
            .filter(|l| !is_code_frame(l))
            .take(6)
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join("\n");
        let place = block
            .iter()
            .filter(|l| l.trim_start().starts_with('❯'))
            .find_map(|l| place_in(l));
        out.push(failed_test(name, place.as_deref(), &detail));
    }
}

/// node's spec reporter: `✖ adds (1.2ms)` for each failing test, with the
/// error below; a suite (`▶ group`) that failed because a test in it did
/// is not named again, nor the summary after `✖ failing tests:`.
fn node_spec(lines: &[&str], out: &mut Vec<Finding>) {
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let end = lines
        .iter()
        .position(|l| l.trim_start().starts_with("✖ failing tests"))
        .unwrap_or(lines.len());
    for (at, line) in lines.iter().enumerate().take(end) {
        let Some(name) = line.trim_start().strip_prefix("✖ ") else {
            continue;
        };
        // `✖ adds (1.2ms)`: the time goes.
        let name = match name.rsplit_once(" (") {
            Some((n, t)) if t.ends_with("ms)") || t.ends_with("s)") => n,
            _ => name,
        }
        .trim();
        let indent = indent_of(line);
        let suite = format!("▶ {name}");
        if lines[..at]
            .iter()
            .any(|l| indent_of(l) == indent && l.trim_start() == suite)
        {
            continue;
        }
        let block = block_after(lines, at, |l| l.trim().is_empty() || indent_of(l) > indent);
        let (detail, place) = message_and_frame(&block, 6, "(node:");
        out.push(failed_test(name, place.as_deref(), &detail));
    }
}

/// TAP (tape, node-tap, node's runner without a terminal): `not ok 3 -
/// adds` with its YAML block (`---` … `...`) as detail and the block's
/// `at:` or `location:` as place. A subtest's parent, which fails because
/// the subtest did, is left out when its subtest was named.
fn tap(lines: &[&str], out: &mut Vec<Finding>) {
    let mut names: Vec<(usize, Finding)> = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let Some(rest) = trimmed.strip_prefix("not ok ") else {
            continue;
        };
        let indent = line.len() - trimmed.len();
        let rest = rest
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start();
        let rest = rest.strip_prefix("- ").unwrap_or(rest);
        // `# TODO` and `# SKIP` failures do not count.
        let upper = rest.to_ascii_uppercase();
        if upper.contains("# TODO") || upper.contains("# SKIP") {
            continue;
        }
        let mut name = rest.split(" # ").next().unwrap_or(rest).trim().to_owned();
        // tape names the test in a comment above its assertions
        // (`# adds`), node's runner as `# Subtest: adds`.
        let comment = lines[..at].iter().rev().find_map(|l| {
            let c = l.trim_start().strip_prefix("# ")?;
            Some(c.strip_prefix("Subtest: ").unwrap_or(c).trim())
        });
        if let Some(test) = comment
            && test != name
            && !test.is_empty()
        {
            name = format!("{test} › {name}");
        }
        let yaml: Vec<&str> = if lines.get(at + 1).is_some_and(|l| l.trim() == "---") {
            lines
                .iter()
                .skip(at + 2)
                .take_while(|l| l.trim() != "...")
                .copied()
                .collect()
        } else {
            Vec::new()
        };
        let place = yaml
            .iter()
            .filter_map(|l| {
                let t = l.trim();
                t.strip_prefix("at:")
                    .or_else(|| t.strip_prefix("location:"))
                    .map(|v| v.trim().trim_matches('\'').trim_matches('"'))
            })
            .find_map(place_in);
        let detail = yaml_detail(&yaml);
        names.push((indent, failed_test(&name, place.as_deref(), &detail)));
    }
    // Node's runner nests subtests deeper; a parent comes after its children.
    let mut kept: Vec<(usize, Finding)> = Vec::new();
    for (indent, f) in names {
        let has_child = kept.last().is_some_and(|(i, _)| *i > indent);
        if !has_child {
            kept.push((indent, f));
        }
    }
    out.extend(kept.into_iter().map(|(_, f)| f));
}

/// The keys of a TAP YAML block that say what failed, each with its
/// block value (`error: |-` and the deeper lines below it).
fn yaml_detail(yaml: &[&str]) -> String {
    const KEYS: [&str; 7] = [
        "error:",
        "message:",
        "operator:",
        "expected:",
        "actual:",
        "found:",
        "wanted:",
    ];
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let mut out: Vec<String> = Vec::new();
    let mut at = 0;
    while at < yaml.len() {
        let line = yaml[at];
        let t = line.trim_start();
        at += 1;
        let Some(key) = KEYS.iter().find(|k| t.starts_with(**k)) else {
            continue;
        };
        let value = t[key.len()..].trim();
        if matches!(value, "|-" | "|" | ">-" | ">") {
            let body: Vec<&str> = yaml[at..]
                .iter()
                .take_while(|l| l.trim().is_empty() || indent_of(l) > indent_of(line))
                .copied()
                .collect();
            at += body.len();
            let text: Vec<&str> = body
                .iter()
                .map(|l| l.trim())
                .filter(|l| !l.is_empty())
                .take(3)
                .collect();
            out.push(format!("{key} {}", text.join(" ")));
        } else {
            out.push(t.to_owned());
        }
    }
    out.truncate(6);
    out.join("\n")
}

/// go test: `--- FAIL: TestAdd (0.00s)` with `    add_test.go:12: got 1`
/// below it, or (with `-v`) between `=== RUN   TestAdd` and it.
fn go_test(lines: &[&str], out: &mut Vec<Finding>) {
    for (at, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("--- FAIL: ") else {
            continue;
        };
        let name = rest.split(" (").next().unwrap_or(rest).trim();
        let mut detail = detail_after(lines, at, 6, |l| {
            !l.starts_with("    ") || l.trim_start().starts_with("--- ")
        })
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n");
        if detail.is_empty() {
            let run = format!("=== RUN   {name}");
            if let Some(from) = lines[..at].iter().rposition(|l| l.trim_start() == run) {
                detail = lines[from + 1..at]
                    .iter()
                    .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("=== "))
                    .take(6)
                    .map(|l| l.trim())
                    .collect::<Vec<_>>()
                    .join("\n");
            }
        }
        let place = detail.lines().find_map(|l| place_in(l.trim()));
        out.push(failed_test(name, place.as_deref(), &detail));
    }
}

/// rustc's rendered errors: `error[E0308]: mismatched types` and its
/// `  --> src/lib.rs:423:26` place.
fn rustc(lines: &[&str], out: &mut Vec<Finding>) {
    for (at, line) in lines.iter().enumerate() {
        let Some(message) = line.strip_prefix("error") else {
            continue;
        };
        let (code, message) = match message.strip_prefix('[') {
            Some(rest) => match rest.split_once("]: ") {
                Some((code, m)) => (Some(code), m),
                None => continue,
            },
            None => match message.strip_prefix(": ") {
                Some(m) => (None, m),
                None => continue,
            },
        };
        let Some(place) = lines
            .get(at + 1)
            .and_then(|l| l.trim_start().strip_prefix("--> "))
            .map(str::trim)
        else {
            continue;
        };
        let name = code.map_or_else(|| message.to_owned(), |c| format!("{c}: {message}"));
        let detail = detail_after(lines, at + 1, 8, |l| {
            l.starts_with("error") || l.starts_with("warning") || l.starts_with("For more")
        });
        out.push(Finding::new(
            FindingKind::Error,
            &name,
            Some(place),
            &detail,
        ));
    }
}

/// One error message of `cargo … --message-format=json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoError {
    /// rustc's code (`E0308`), when it has one.
    pub code: Option<String>,
    pub message: String,
    /// `path:line:col` of its primary span.
    pub place: Option<String>,
    /// The message as rustc renders it for a terminal.
    pub rendered: String,
    /// The kinds of the target it was reported for (`lib`, `bench`, …).
    pub target_kinds: Vec<String>,
}

/// The error messages in cargo's JSON output, in order (rustc's closing
/// "aborting due to …" left out).
pub fn cargo_errors(output: &str) -> Vec<CargoError> {
    let str_of = |v: Option<&serde_json::Value>| v.and_then(|x| x.as_str()).map(ToOwned::to_owned);
    let mut out = Vec::new();
    for line in output.lines() {
        if !line.starts_with('{') || !line.contains("compiler-message") {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if str_of(v.get("reason")).as_deref() != Some("compiler-message") {
            continue;
        }
        let Some(m) = v.get("message") else {
            continue;
        };
        if str_of(m.get("level")).as_deref() != Some("error") {
            continue;
        }
        let message = str_of(m.get("message")).unwrap_or_default();
        if message.starts_with("aborting due to") {
            continue;
        }
        let number = |s: &serde_json::Value, key: &str| {
            s.get(key).and_then(serde_json::Value::as_u64).unwrap_or(0)
        };
        let place = m
            .get("spans")
            .and_then(|s| s.as_array())
            .and_then(|spans| {
                spans.iter().find(|s| {
                    s.get("is_primary").and_then(serde_json::Value::as_bool) == Some(true)
                })
            })
            .map(|s| {
                format!(
                    "{}:{}:{}",
                    str_of(s.get("file_name")).unwrap_or_else(|| "?".to_owned()),
                    number(s, "line_start"),
                    number(s, "column_start")
                )
            });
        out.push(CargoError {
            code: str_of(m.get("code").and_then(|c| c.get("code"))),
            message,
            place,
            rendered: str_of(m.get("rendered")).unwrap_or_default(),
            target_kinds: v
                .get("target")
                .and_then(|t| t.get("kind"))
                .and_then(|k| k.as_array())
                .map_or_else(Vec::new, |k| {
                    k.iter()
                        .filter_map(|x| x.as_str().map(ToOwned::to_owned))
                        .collect()
                }),
        });
    }
    out
}

/// `cargo check --message-format=json`: each error message with its
/// primary span.
fn cargo_json(output: &str, out: &mut Vec<Finding>) {
    for e in cargo_errors(output) {
        let name = e
            .code
            .as_ref()
            .map_or_else(|| e.message.clone(), |c| format!("{c}: {}", e.message));
        let detail: String = e
            .rendered
            .lines()
            .skip(1)
            .take(8)
            .collect::<Vec<_>>()
            .join("\n");
        out.push(Finding::new(
            FindingKind::Error,
            &name,
            e.place.as_deref(),
            &detail,
        ));
    }
}

/// tsc: `src/a.ts(3,5): error TS2322: Type 'string' is not …`.
fn tsc(lines: &[&str], out: &mut Vec<Finding>) {
    for line in lines {
        let Some((head, message)) = line.split_once("): error ") else {
            continue;
        };
        let Some((path, pos)) = head.rsplit_once('(') else {
            continue;
        };
        let place = format!("{}:{}", path.trim(), pos.replace(',', ":"));
        out.push(Finding::new(FindingKind::Error, message, Some(&place), ""));
    }
}

/// `path:line:col: error: message` (gcc, clang, mypy, eslint's unix
/// format, dart) and pyright's `  path:line:col - error: message`.
fn colon_places(lines: &[&str], out: &mut Vec<Finding>) {
    for line in lines {
        let t = line.trim();
        let (head, message) = if let Some((h, m)) = t.split_once(" - error: ") {
            (h, m)
        } else if let Some((h, m)) = t.split_once(": error: ") {
            (h, m)
        } else if let Some((h, m)) = t.split_once(": error - ") {
            (h, m)
        } else {
            continue;
        };
        if is_place(head.trim()) {
            out.push(Finding::new(
                FindingKind::Error,
                message,
                Some(head.trim()),
                "",
            ));
        }
    }
}

/// A Python traceback that ends a check: `  File "x.py", line 3` and the
/// `SyntaxError: …` (any `…Error:`) line that closes it.
fn python_traceback(lines: &[&str], out: &mut Vec<Finding>) {
    for (at, line) in lines.iter().enumerate() {
        if !line.starts_with("Traceback (most recent call last)") && !line.starts_with("  File \"")
        {
            continue;
        }
        if line.starts_with("  File \"")
            && at > 0
            && (lines[at - 1].starts_with("  ") || lines[at - 1].starts_with("Traceback"))
        {
            continue;
        }
        let block: Vec<&str> = lines
            .iter()
            .skip(at)
            .take_while(|l| l.starts_with(' ') || l.starts_with("Traceback"))
            .copied()
            .collect();
        let Some(end) = lines.get(at + block.len()) else {
            continue;
        };
        let Some((kind, message)) = end.split_once(": ") else {
            continue;
        };
        if !kind.ends_with("Error") && !kind.ends_with("Exception") {
            continue;
        }
        let place = block.iter().rev().find_map(|l| {
            let rest = l.trim().strip_prefix("File \"")?;
            let (file, rest) = rest.split_once('"')?;
            let n = rest.strip_prefix(", line ")?.split(',').next()?;
            Some(format!("{file}:{n}"))
        });
        let detail = block
            .iter()
            .rev()
            .take(4)
            .rev()
            .map(|l| l.trim_end())
            .collect::<Vec<_>>()
            .join("\n");
        out.push(Finding::new(
            FindingKind::Error,
            &format!("{kind}: {message}"),
            place.as_deref(),
            &detail,
        ));
    }
}

#[cfg(test)]
#[path = "findings_tests.rs"]
mod tests;
