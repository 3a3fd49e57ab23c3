//! Reading what a verification step printed: error counts, pyright's
//! findings, the failure excerpt the model is told, and the bounded raw
//! output kept for this session.

use std::collections::VecDeque;

use cocode_core::ids::{AttemptNo, TaskId};
use cocode_core::verification::{Finding, FindingKind, VerificationMethod, VerificationNote};

use super::plan::{Reading, Step};

/// The pyright rules whose errors count (besides syntax errors, which
/// have no rule).
pub(crate) const PYRIGHT_COUNTED_RULES: [&str; 1] = ["reportUndefinedVariable"];

/// The counted errors of `pyright --outputjson` output, or `None` when it
/// is not pyright's JSON.
pub(crate) fn pyright_errors(output: &str) -> Option<Vec<serde_json::Value>> {
    let start = output.find('{')?;
    let v: serde_json::Value = serde_json::from_str(output[start..].trim()).ok()?;
    let all = v.get("generalDiagnostics")?.as_array()?;
    Some(
        all.iter()
            .filter(|d| d.get("severity").and_then(|s| s.as_str()) == Some("error"))
            .filter(|d| {
                d.get("rule")
                    .and_then(|r| r.as_str())
                    .is_none_or(|r| PYRIGHT_COUNTED_RULES.contains(&r))
            })
            .cloned()
            .collect(),
    )
}

/// Findings of pyright's counted errors.
pub(crate) fn pyright_findings(output: &str) -> Vec<Finding> {
    pyright_errors(output)
        .unwrap_or_default()
        .iter()
        .map(|d| {
            let start = d.get("range").and_then(|r| r.get("start"));
            let n = |k: &str| {
                start
                    .and_then(|s| s.get(k))
                    .and_then(serde_json::Value::as_u64)
                    .unwrap_or(0)
                    + 1
            };
            let place = format!(
                "{}:{}:{}",
                d.get("file").and_then(|f| f.as_str()).unwrap_or("?"),
                n("line"),
                n("character")
            );
            Finding::new(
                FindingKind::Error,
                d.get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or_default(),
                Some(&place),
                "",
            )
        })
        .collect()
}

/// Errors a tool reported, by its reading.
pub(crate) fn count_errors(reading: Reading, output: &str) -> Option<u32> {
    let n = match reading {
        // The same error is reported once per target that compiles the
        // file (`--all-targets`): count distinct rendered messages.
        Reading::CargoMessages => crate::findings::cargo_errors(output)
            .into_iter()
            .map(|e| {
                if e.rendered.is_empty() {
                    e.message
                } else {
                    e.rendered
                }
            })
            .collect::<std::collections::BTreeSet<String>>()
            .len(),
        Reading::RuffJson => serde_json::from_str::<Vec<serde_json::Value>>(output.trim())
            .map(|v| v.len())
            .ok()?,
        Reading::ErrorLines(marker) => output.lines().filter(|l| l.contains(marker)).count(),
        Reading::PyrightJson => pyright_errors(output)?.len(),
        Reading::ExitCode | Reading::CargoTests | Reading::Pytest => return None,
    };
    Some(u32::try_from(n).unwrap_or(u32::MAX))
}

/// Total tests libtest reported in its `test result:` lines.
/// Markers of the lines that say what failed, in the output of compilers
/// and test runners (rustc and cargo test, pytest, jest and vitest, node's
/// test runner and TAP, go test, tsc, eslint).
pub(crate) const FAILURE_MARKERS: [&str; 17] = [
    "error",
    "Error",
    "ERROR",
    "FAILED",
    "FAIL",
    "failed",
    "failures",
    "panicked",
    "assert",
    "not ok",
    "✗",
    "✕",
    "●",
    "Traceback",
    "Exception",
    "expected",
    "-->",
];

/// What a failing check printed that says what failed, for the model's
/// retry and for people: each line with a failure marker and the two after
/// it (rustc's `-->` place, a test's message), in order, at most
/// `max_lines` lines and `max_bytes` bytes; when no line has a marker, the
/// last `max_lines` lines. Escape sequences are dropped and the result is
/// shown escaped (`cocode_core::shown`).
pub fn failure_excerpt(output: &str, max_lines: usize, max_bytes: usize) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let mut keep = vec![false; lines.len()];
    let mut any = false;
    for (i, line) in lines.iter().enumerate() {
        if FAILURE_MARKERS.iter().any(|m| line.contains(m)) {
            any = true;
            for k in keep.iter_mut().skip(i).take(3) {
                *k = true;
            }
        }
    }
    if !any {
        let from = lines.len().saturating_sub(max_lines);
        for k in keep.iter_mut().skip(from) {
            *k = true;
        }
    }
    let mut out = String::new();
    let mut taken = 0;
    let mut gap = false;
    for (line, kept) in lines.iter().zip(&keep) {
        if !kept {
            gap = true;
            continue;
        }
        if taken == max_lines {
            out.push_str("…\n");
            break;
        }
        if gap && !out.is_empty() {
            out.push_str("…\n");
        }
        gap = false;
        let clean = crate::findings::strip_escapes(line.trim_end());
        let shown = cocode_core::shown::line(&clean);
        if out.len() + shown.len() + 1 > max_bytes {
            out.push_str("…\n");
            break;
        }
        out.push_str(&shown);
        out.push('\n');
        taken += 1;
    }
    out
}

pub(crate) fn cargo_test_total(output: &str) -> u64 {
    output
        .lines()
        .filter(|l| l.starts_with("test result:"))
        .flat_map(|l| {
            ["passed", "failed", "ignored"].map(|word| {
                l.split(';')
                    .find(|part| part.trim_end().ends_with(word))
                    .and_then(|part| part.split_whitespace().rev().nth(1)?.parse::<u64>().ok())
                    .unwrap_or(0)
            })
        })
        .sum()
}

/// What cargo and rustc say when the installed toolchain cannot build the
/// project at all (a newer `rust-version`, a nightly-only feature outside
/// the targets that can be left out), and what rustup says when it has no
/// toolchain to run (none set as the default, or the one the project's
/// `rust-toolchain.toml` names is not installed).
const TOOLCHAIN_MARKERS: [&str; 4] = [
    "may not be used on the stable release channel",
    "cannot be built because it requires rustc",
    "is not supported by the installed toolchain",
    "rustup could not choose a version of",
];

/// The installed toolchain cannot build the project, whatever its code
/// says: no edit fixes it.
pub(crate) fn toolchain_cannot_build(output: &str) -> bool {
    TOOLCHAIN_MARKERS.iter().any(|m| output.contains(m))
        || output.lines().any(|l| {
            l.trim_start().starts_with("error: toolchain '") && l.contains("' is not installed")
        })
}

/// The rustc error of a `#![feature]` on a stable toolchain.
pub(crate) const NIGHTLY_ONLY: &str = "E0554";

/// `step` (a `cargo check --all-targets`) without the targets that failed
/// only because they need a nightly toolchain, when every error is of that
/// kind and in a bench or example; `None` otherwise.
pub(crate) fn without_nightly_targets(step: &Step, output: &str) -> Option<Step> {
    if !step.argv.iter().any(|a| a == "--all-targets") {
        return None;
    }
    let errors = crate::findings::cargo_errors(output);
    if errors
        .iter()
        .any(|e| e.code.as_deref() != Some(NIGHTLY_ONLY))
    {
        return None;
    }
    let kinds: Vec<String> = errors.into_iter().flat_map(|e| e.target_kinds).collect();
    if kinds.is_empty() || kinds.iter().any(|k| k != "bench" && k != "example") {
        return None;
    }
    let mut narrowed = step.clone();
    narrowed.argv.retain(|a| a != "--all-targets");
    // `--lib` on a package without a library is an error of its own.
    let manifest = std::fs::read_to_string(step.cwd.join("Cargo.toml")).unwrap_or_default();
    let has_lib = step.cwd.join("src/lib.rs").is_file()
        || manifest.contains("[lib]")
        || manifest.contains("[workspace]");
    let mut keep: Vec<&str> = Vec::new();
    if has_lib {
        keep.push("--lib");
    }
    keep.extend(["--bins", "--tests"]);
    if !kinds.iter().any(|k| k == "example") {
        keep.push("--examples");
    }
    let at = narrowed
        .argv
        .iter()
        .position(|a| a == "check")
        .map_or(1, |p| p + 1);
    for (i, flag) in keep.iter().enumerate() {
        narrowed.argv.insert(at + i, (*flag).to_owned());
    }
    narrowed.notes.push(VerificationNote::SkippedNightlyTargets);
    Some(narrowed)
}

pub(crate) const RESOURCE_MARKERS: [&str; 4] = [
    "No space left on device",
    "Cannot allocate memory",
    "out of memory",
    "Disk quota exceeded",
];

/// Raw tool output kept for this session only, bounded in total.
#[derive(Debug)]
pub struct RawOutputBuffer {
    pub(crate) cap: usize,
    pub(crate) used: usize,
    pub(crate) entries: VecDeque<((TaskId, AttemptNo, VerificationMethod), Vec<u8>)>,
    pub(crate) evicted: Vec<(TaskId, AttemptNo, VerificationMethod)>,
}

/// What the UI can say about a method's raw output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawNotice {
    Present(Vec<u8>),
    /// It was kept but the session's cap pushed it out.
    TrimmedByCap,
    /// Not from this session (raw output is never persisted).
    EarlierSession,
}

impl RawOutputBuffer {
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            used: 0,
            entries: VecDeque::new(),
            evicted: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, key: (TaskId, AttemptNo, VerificationMethod), bytes: Vec<u8>) {
        self.used += bytes.len();
        self.entries.push_back((key, bytes));
        while self.used > self.cap {
            let Some((key, old)) = self.entries.pop_front() else {
                break;
            };
            self.used -= old.len();
            self.evicted.push(key);
        }
    }

    pub fn notice(
        &self,
        task: &TaskId,
        attempt: AttemptNo,
        method: VerificationMethod,
    ) -> RawNotice {
        let key = (task.clone(), attempt, method);
        let kept: Vec<u8> = self
            .entries
            .iter()
            .filter(|(k, _)| *k == key)
            .flat_map(|(_, b)| b.iter().copied())
            .collect();
        if !kept.is_empty() {
            RawNotice::Present(kept)
        } else if self.evicted.contains(&key) {
            RawNotice::TrimmedByCap
        } else {
            RawNotice::EarlierSession
        }
    }
}

#[cfg(test)]
mod tests {
    use super::toolchain_cannot_build;

    #[test]
    fn rustups_missing_toolchain_is_the_toolchains_limit_not_a_defect() {
        for said in [
            "error: rustup could not choose a version of cargo to run, because one wasn't specified explicitly, and no default is configured.\nhelp: run 'rustup default stable' to download the latest stable release of Rust and set it as your default toolchain.\n",
            "error: toolchain 'nightly-2020-01-01-x86_64-unknown-linux-gnu' is not installed\nhelp: run `rustup toolchain install nightly-2020-01-01-x86_64-unknown-linux-gnu` to install it\n",
            "error: package `semver v1.0.28` cannot be built because it requires rustc 1.99 or newer, while the currently active rustc version is 1.95.0\n",
        ] {
            assert!(toolchain_cannot_build(said), "{said}");
        }
        for said in [
            "error[E0308]: mismatched types\n --> src/lib.rs:3:5\n",
            "error: package 'left-pad' is not installed\n",
            "",
        ] {
            assert!(!toolchain_cannot_build(said), "{said}");
        }
    }
}
