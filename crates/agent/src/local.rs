//! The local agent: a deterministic planner that needs no key and no
//! network, and emits real tool calls through the same registry path as a
//! model (source `local_fallback`, so approvals apply).
//!
//! It always inspects first (`getStatus`, `listFiles`, then `readFile` for a
//! named file), then maps the request:
//!
//! | request | call |
//! | --- | --- |
//! | `replace "A" with "B" in PATH` | `workspace.applyPatch` with the revision it read |
//! | `create PATH with "TEXT"` | `workspace.createFile` |
//! | `rename A to B` | `workspace.renameFile` |
//! | `delete PATH` | `workspace.deleteFile` with the revision it read |
//! | `run "SHELL LINE"` | `terminal.run` through the platform shell |
//! | `run the tests` | `terminal.run` with the project's test command |
//! | `check PATH` / `check the workspace` | `lsp.diagnostics`, then reports what the language servers found |
//!
//! and then calls `task.finish`. Quoted text may use `"…"`, `'…'` or `“…”`
//! with `\"`, `\\` and `\n` escapes. Anything else is answered with what it
//! understands, and the turn ends without a finish (nothing was done, so
//! there is nothing to verify). When a step fails — a denied approval, a
//! revision conflict while the edit waited for approval — it reports the
//! error and ends the turn; it never retries over someone else's change.
//!
//! The planner is a pure function of the conversation: the same messages
//! always produce the same next step.

use serde_json::{Map, Value, json};

use cocode_tool_protocol::catalog as tools;
use cocode_tool_protocol::projection::encode_tool_name;

use crate::conversation::{AssistantMessage, Message, StopReason, ToolCall, ToolResultMessage};

/// A request the planner understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Intent {
    Replace {
        search: String,
        replace: String,
        path: String,
    },
    Create {
        path: String,
        content: String,
    },
    Rename {
        from: String,
        to: String,
    },
    Delete {
        path: String,
    },
    Run {
        line: String,
    },
    RunTests,
    /// The language servers' diagnostics of a file, or of the workspace.
    Check {
        path: Option<String>,
    },
    Unknown,
}

/// What the local agent says it understands.
pub const HELP: &str = "I am the local agent and work offline without a model. I understand:\n\
  • replace \"OLD\" with \"NEW\" in PATH\n\
  • create PATH with \"CONTENT\"\n\
  • rename PATH to NEW_PATH\n\
  • delete PATH\n\
  • run \"SHELL COMMAND\"\n\
  • run the tests\n\
  • check PATH (or: check the workspace)\n\
Configure a provider key in Settings → Providers to use a model instead.";

/// Parses one quoted string at the start of `s` (after whitespace);
/// returns it and the rest.
fn quoted(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start();
    let mut chars = s.char_indices();
    let (_, open) = chars.next()?;
    let close = match open {
        '"' => '"',
        '\'' => '\'',
        '“' => '”',
        _ => return None,
    };
    let mut out = String::new();
    let mut escaped = false;
    for (i, c) in chars {
        if escaped {
            out.push(match c {
                'n' => '\n',
                't' => '\t',
                other => other,
            });
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == close {
            return Some((out, &s[i + c.len_utf8()..]));
        } else {
            out.push(c);
        }
    }
    None
}

/// A path token: quoted, or up to the next whitespace; trailing sentence
/// punctuation is not part of it.
fn path_token(s: &str) -> Option<(String, &str)> {
    if let Some(q) = quoted(s) {
        return Some(q);
    }
    let s = s.trim_start();
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    let token = s[..end].trim_end_matches(['.', ',', ';', '!', '?']);
    (!token.is_empty()).then(|| (token.to_owned(), &s[end..]))
}

/// Strips a case-insensitive keyword (followed by whitespace or a quote).
fn keyword<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    let s = s.trim_start();
    let head = s.get(..word.len())?;
    if !head.eq_ignore_ascii_case(word) {
        return None;
    }
    let rest = &s[word.len()..];
    (rest.is_empty() || rest.starts_with(char::is_whitespace) || rest.starts_with(['"', '\'', '“']))
        .then_some(rest)
}

fn only_punctuation(rest: &str) -> bool {
    rest.trim()
        .chars()
        .all(|c| matches!(c, '.' | '!' | '?' | ','))
}

/// Parses a request.
pub fn parse(request: &str) -> Intent {
    let text = request.trim();
    let parsed = (|| {
        if let Some(rest) = keyword(text, "replace") {
            let (search, rest) = quoted(rest)?;
            let (replace, rest) = quoted(keyword(rest, "with")?)?;
            let (path, rest) = path_token(keyword(rest, "in")?)?;
            return (only_punctuation(rest) && !search.is_empty()).then_some(Intent::Replace {
                search,
                replace,
                path,
            });
        }
        if let Some(rest) = keyword(text, "create") {
            let (path, rest) = path_token(rest)?;
            let (content, rest) = quoted(keyword(rest, "with")?)?;
            return only_punctuation(rest).then_some(Intent::Create { path, content });
        }
        if let Some(rest) = keyword(text, "rename") {
            let (from, rest) = path_token(rest)?;
            let (to, rest) = path_token(keyword(rest, "to")?)?;
            return only_punctuation(rest).then_some(Intent::Rename { from, to });
        }
        if let Some(rest) = keyword(text, "delete") {
            let (path, rest) = path_token(rest)?;
            return only_punctuation(rest).then_some(Intent::Delete { path });
        }
        if let Some(rest) = keyword(text, "check") {
            let words: Vec<String> = rest
                .split_whitespace()
                .map(|w| w.trim_end_matches(['.', '!']).to_ascii_lowercase())
                .collect();
            if matches!(
                words
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .as_slice(),
                ["the", "workspace"] | ["everything"] | []
            ) {
                return Some(Intent::Check { path: None });
            }
            let (path, rest) = path_token(rest)?;
            return only_punctuation(rest).then_some(Intent::Check { path: Some(path) });
        }
        if let Some(rest) = keyword(text, "run") {
            if let Some((line, rest)) = quoted(rest) {
                return (only_punctuation(rest) && !line.trim().is_empty())
                    .then_some(Intent::Run { line });
            }
            let words: Vec<String> = rest
                .split_whitespace()
                .map(|w| w.trim_end_matches(['.', '!']).to_ascii_lowercase())
                .collect();
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            return matches!(
                words.as_slice(),
                ["the", "tests"] | ["tests"] | ["the", "test", "suite"]
            )
            .then_some(Intent::RunTests);
        }
        None
    })();
    parsed.unwrap_or(Intent::Unknown)
}

/// The platform shell for one command line.
pub fn shell_argv(line: &str) -> Vec<String> {
    if cfg!(windows) {
        vec!["cmd".into(), "/C".into(), line.into()]
    } else {
        vec!["sh".into(), "-c".into(), line.into()]
    }
}

/// What one earlier step returned.
#[derive(Debug)]
struct Step<'a> {
    tool: String,
    result: &'a ToolResultMessage,
}

impl Step<'_> {
    fn body(&self) -> Value {
        serde_json::from_str(&self.result.content).unwrap_or(Value::Null)
    }
}

fn canonical(provider_name: &str) -> String {
    // The planner only emits catalog names; decoding inverts `encode_tool_name`.
    provider_name.replace("__", ".")
}

/// The steps since the last user message, with their results.
fn steps_since_user(messages: &[Message]) -> (Option<&str>, Vec<Step<'_>>) {
    let start = messages.iter().rposition(|m| matches!(m, Message::User(_)));
    let Some(start) = start else {
        return (None, Vec::new());
    };
    let Message::User(request) = &messages[start] else {
        return (None, Vec::new());
    };
    let mut steps = Vec::new();
    let mut calls: Vec<&ToolCall> = Vec::new();
    for m in &messages[start + 1..] {
        match m {
            Message::Assistant(a) => calls.extend(a.tool_calls.iter()),
            Message::ToolResults(results) => {
                for r in results {
                    if let Some(call) = calls.iter().find(|c| c.id == r.call_id) {
                        steps.push(Step {
                            tool: canonical(&call.provider_name),
                            result: r,
                        });
                    }
                }
            }
            Message::User(_) => {}
        }
    }
    (Some(request.as_str()), steps)
}

fn count_calls(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| match m {
            Message::Assistant(a) => a.tool_calls.len(),
            _ => 0,
        })
        .sum()
}

fn say(text: impl Into<String>) -> AssistantMessage {
    AssistantMessage {
        text: text.into(),
        tool_calls: Vec::new(),
        stop: StopReason::EndTurn,
    }
}

/// The test command from `getStatus` (`projects[].testCommand`), else from
/// the manifests `listFiles` showed at the root.
fn test_command(status: &Value, listing: &Value) -> Option<Vec<String>> {
    let from_status = status
        .pointer("/result/projects")
        .and_then(Value::as_array)
        .and_then(|projects| {
            projects.iter().find_map(|p| {
                let argv: Vec<String> = p
                    .get("testCommand")?
                    .as_array()?
                    .iter()
                    .filter_map(|a| a.as_str().map(str::to_owned))
                    .collect();
                (!argv.is_empty()).then_some(argv)
            })
        });
    if from_status.is_some() {
        return from_status;
    }
    let root_files: Vec<&str> = listing
        .pointer("/result/files")
        .and_then(Value::as_array)
        .map(|files| {
            files
                .iter()
                .filter_map(|f| f.get("path").and_then(Value::as_str))
                .filter(|p| !p.contains('/'))
                .collect()
        })
        .unwrap_or_default();
    let has = |name: &str| root_files.contains(&name);
    let argv: &[&str] = if has("Cargo.toml") {
        &["cargo", "test"]
    } else if has("pyproject.toml") || has("setup.py") || has("pytest.ini") {
        &["python3", "-m", "pytest"]
    } else if has("package.json") {
        &["npm", "test"]
    } else if has("pubspec.yaml") {
        &["dart", "test"]
    } else {
        return None;
    };
    Some(argv.iter().map(|s| (*s).to_owned()).collect())
}

fn call(messages: &[Message], tool: &str, arguments: Value, text: String) -> AssistantMessage {
    let arguments: Map<String, Value> = match arguments {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    AssistantMessage {
        text,
        tool_calls: vec![ToolCall {
            id: format!("local-{}", count_calls(messages) + 1),
            provider_name: encode_tool_name(tool).unwrap_or_else(|| tool.to_owned()),
            arguments,
        }],
        stop: StopReason::ToolUse,
    }
}

fn error_text(step: &Step<'_>) -> String {
    let body = step.body();
    let code = body
        .pointer("/error/code")
        .and_then(Value::as_str)
        .unwrap_or("ERROR");
    let message = body
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("the call failed");
    format!(
        "{} failed with {code}: {message}. I stopped here; nothing was overwritten.",
        step.tool
    )
}

/// The tool call a request maps to: (tool, arguments, what to say, the
/// finish summary). `Err` is the answer when there is nothing to call.
fn action(
    intent: &Intent,
    revision: Option<&str>,
    status: &Value,
    listing: &Value,
) -> Result<(&'static str, Value, String, String), AssistantMessage> {
    Ok(match intent {
        Intent::Replace {
            search,
            replace,
            path,
        } => {
            let mut args =
                json!({"path": path, "search": search, "replace": replace, "occurrence": "first"});
            if let Some(r) = revision {
                args["expectedRevision"] = json!(r);
            }
            (
                tools::APPLY_PATCH,
                args,
                format!("Replacing text in {path}."),
                format!("Replaced the first occurrence of the requested text in {path}."),
            )
        }
        Intent::Create { path, content } => (
            tools::CREATE_FILE,
            json!({"path": path, "content": content}),
            format!("Creating {path}."),
            format!("Created {path}."),
        ),
        Intent::Rename { from, to } => (
            tools::RENAME_FILE,
            json!({"from": from, "to": to}),
            format!("Renaming {from} to {to}."),
            format!("Renamed {from} to {to}."),
        ),
        Intent::Delete { path } => {
            let mut args = json!({"path": path});
            if let Some(r) = revision {
                args["expectedRevision"] = json!(r);
            }
            (
                tools::DELETE_FILE,
                args,
                format!("Deleting {path}."),
                format!("Deleted {path}."),
            )
        }
        Intent::Run { line } => (
            tools::TERMINAL_RUN,
            json!({"argv": shell_argv(line)}),
            format!("Running `{line}`."),
            format!("Ran `{line}`."),
        ),
        Intent::RunTests => {
            let Some(argv) = test_command(status, listing) else {
                return Err(say(
                    "I found no project here whose tests I know how to run \
                     (Cargo, Python, Node or Dart).",
                ));
            };
            let line = argv.join(" ");
            (
                tools::TERMINAL_RUN,
                json!({"argv": argv}),
                format!("Running the tests: `{line}`."),
                format!("Ran the tests with `{line}`."),
            )
        }
        Intent::Check { path } => (
            tools::LSP_DIAGNOSTICS,
            path.as_ref()
                .map_or_else(|| json!({}), |p| json!({"path": p})),
            match path {
                Some(p) => format!("Asking the language server about {p}."),
                None => "Asking the language servers about the workspace.".to_owned(),
            },
            String::new(),
        ),
        Intent::Unknown => return Err(say(HELP)),
    })
}

/// What the language servers found, one line per diagnostic as a compiler
/// prints it.
fn describe_diagnostics(report: &Value) -> String {
    let mut lines = Vec::new();
    for file in report
        .pointer("/result/files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let path = file["path"].as_str().unwrap_or("?");
        for d in file["diagnostics"].as_array().into_iter().flatten() {
            let message = d["message"]
                .as_str()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            lines.push(format!(
                "{path}:{}:{}: {}: {message}",
                d["line"],
                d["column"],
                d["severity"].as_str().unwrap_or("error"),
            ));
        }
    }
    for u in report
        .pointer("/result/unanswered")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        lines.push(format!(
            "{}: no answer ({})",
            u["path"].as_str().unwrap_or("?"),
            u["reason"].as_str().unwrap_or("")
        ));
    }
    if lines.is_empty() {
        "The language servers found no problems.".to_owned()
    } else {
        format!("The language servers found:\n{}", lines.join("\n"))
    }
}

/// The next assistant turn for a conversation.
pub fn next(messages: &[Message]) -> AssistantMessage {
    let (Some(request), steps) = steps_since_user(messages) else {
        return say(HELP);
    };
    if let Some(failed) = steps.iter().find(|s| s.result.is_error) {
        return say(error_text(failed));
    }
    let intent = parse(request);
    if intent == Intent::Unknown {
        return say(HELP);
    }
    let done = |tool: &str| steps.iter().any(|s| s.tool == tool);
    let result_of = |tool: &str| {
        steps
            .iter()
            .rev()
            .find(|s| s.tool == tool)
            .map_or(Value::Null, Step::body)
    };
    if !done(tools::GET_STATUS) {
        return call(
            messages,
            tools::GET_STATUS,
            json!({}),
            "Checking the workspace.".into(),
        );
    }
    if !done(tools::LIST_FILES) {
        return call(
            messages,
            tools::LIST_FILES,
            json!({}),
            "Listing files.".into(),
        );
    }
    let read_target = match &intent {
        Intent::Replace { path, .. } | Intent::Delete { path } => Some(path.clone()),
        _ => None,
    };
    if let Some(path) = &read_target
        && !done(tools::READ_FILE)
    {
        return call(
            messages,
            tools::READ_FILE,
            json!({"path": path}),
            format!("Reading {path}."),
        );
    }
    let revision = result_of(tools::READ_FILE)
        .pointer("/result/revision")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let (tool, arguments, text, summary) = match action(
        &intent,
        revision.as_deref(),
        &result_of(tools::GET_STATUS),
        &result_of(tools::LIST_FILES),
    ) {
        Ok(action) => action,
        Err(answer) => return answer,
    };
    if !done(tool) {
        return call(messages, tool, arguments, text);
    }
    // A check changes nothing: there is nothing to verify or finish.
    if tool == tools::LSP_DIAGNOSTICS {
        return say(describe_diagnostics(&result_of(tool)));
    }
    if tool == tools::TERMINAL_RUN {
        let run = result_of(tools::TERMINAL_RUN);
        let exit = run.pointer("/result/exitCode").and_then(Value::as_i64);
        if exit != Some(0) {
            let exit = exit.map_or_else(|| "no exit code".to_owned(), |c| format!("exit code {c}"));
            return say(format!(
                "The command finished with {exit}; see its output above."
            ));
        }
    }
    if !done(tools::TASK_FINISH) {
        return call(
            messages,
            tools::TASK_FINISH,
            json!({"summary": summary}),
            String::new(),
        );
    }
    say("Done.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn requests_parse_into_intents() {
        let cases = [
            (
                r#"replace "foo()" with "bar()" in src/lib.rs"#,
                Intent::Replace {
                    search: "foo()".into(),
                    replace: "bar()".into(),
                    path: "src/lib.rs".into(),
                },
            ),
            (
                r#"Replace 'a \"q\"' with “b” in "dir with space/x.py"."#,
                Intent::Replace {
                    search: "a \"q\"".into(),
                    replace: "b".into(),
                    path: "dir with space/x.py".into(),
                },
            ),
            (
                r##"create notes/한글.md with "# 제목\nbody""##,
                Intent::Create {
                    path: "notes/한글.md".into(),
                    content: "# 제목\nbody".into(),
                },
            ),
            (
                "rename a.txt to b.txt",
                Intent::Rename {
                    from: "a.txt".into(),
                    to: "b.txt".into(),
                },
            ),
            (
                "delete old.rs.",
                Intent::Delete {
                    path: "old.rs".into(),
                },
            ),
            (
                r#"run "echo hi && ls""#,
                Intent::Run {
                    line: "echo hi && ls".into(),
                },
            ),
            ("Run the tests.", Intent::RunTests),
            ("run tests", Intent::RunTests),
            ("make it faster", Intent::Unknown),
            (r#"replace "" with "x" in a"#, Intent::Unknown),
            (
                "check src/main.py.",
                Intent::Check {
                    path: Some("src/main.py".into()),
                },
            ),
            ("Check the workspace", Intent::Check { path: None }),
            ("check", Intent::Check { path: None }),
            ("check a.py and b.py", Intent::Unknown),
            (r#"replace "a" with "b""#, Intent::Unknown),
            ("run", Intent::Unknown),
            ("renamed things", Intent::Unknown),
        ];
        for (text, intent) in cases {
            assert_eq!(parse(text), intent, "{text}");
        }
    }

    fn result(call_id: &str, body: &Value, is_error: bool) -> Message {
        Message::ToolResults(vec![ToolResultMessage {
            call_id: call_id.into(),
            content: body.to_string(),
            is_error,
        }])
    }

    /// Runs the planner against scripted results; returns the canonical
    /// tool names it called, in order, and its last text.
    fn drive(
        request: &str,
        answer: impl Fn(&str) -> (Value, bool),
    ) -> (Vec<(String, Value)>, String) {
        let mut messages = vec![Message::User(request.into())];
        let mut calls = Vec::new();
        for _ in 0..20 {
            let turn = next(&messages);
            let text = turn.text.clone();
            let pending = turn.tool_calls.clone();
            messages.push(Message::Assistant(turn));
            if pending.is_empty() {
                return (calls, text);
            }
            for c in pending {
                let tool = canonical(&c.provider_name);
                let (body, is_error) = answer(&tool);
                calls.push((tool, Value::Object(c.arguments)));
                messages.push(result(&c.id, &body, is_error));
            }
        }
        panic!("the planner did not stop");
    }

    const REV: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

    fn ok(tool: &str) -> (Value, bool) {
        let body = match tool {
            tools::READ_FILE => json!({"isError": false, "result": {"revision": REV}}),
            tools::GET_STATUS => json!({"isError": false, "result": {"projects": [
                {"kind": "cargo", "path": ".", "testCommand": ["cargo", "test", "--quiet"]}
            ]}}),
            tools::TERMINAL_RUN => json!({"isError": false, "result": {"exitCode": 0}}),
            _ => json!({"isError": false, "result": {}}),
        };
        (body, false)
    }

    #[test]
    fn a_check_asks_the_language_servers_and_reports_without_finishing() {
        let (calls, text) = drive("check main.py", |tool| match tool {
            tools::LSP_DIAGNOSTICS => (
                json!({"isError": false, "result": {"files": [{"path": "main.py", "diagnostics": [
                    {"severity": "error", "line": 2, "column": 7,
                     "message": "\"x\" is not defined\nmore", "source": "Pyright"}
                ]}], "checked": 1, "omitted": 0, "unanswered": []}}),
                false,
            ),
            other => ok(other),
        });
        let names: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            names,
            vec![tools::GET_STATUS, tools::LIST_FILES, tools::LSP_DIAGNOSTICS]
        );
        assert_eq!(calls[2].1, json!({"path": "main.py"}));
        assert_eq!(
            text,
            "The language servers found:\nmain.py:2:7: error: \"x\" is not defined"
        );
        let (calls, text) = drive("check the workspace", ok);
        assert_eq!(calls[2], (tools::LSP_DIAGNOSTICS.to_owned(), json!({})));
        assert_eq!(text, "The language servers found no problems.");
    }

    #[test]
    fn a_replace_reads_first_and_patches_the_revision_it_read() {
        let (calls, text) = drive(r#"replace "a" with "b" in x.rs"#, ok);
        assert_eq!(
            calls,
            vec![
                (tools::GET_STATUS.into(), json!({})),
                (tools::LIST_FILES.into(), json!({})),
                (tools::READ_FILE.into(), json!({"path": "x.rs"})),
                (
                    tools::APPLY_PATCH.into(),
                    json!({"path": "x.rs", "search": "a", "replace": "b",
                           "occurrence": "first", "expectedRevision": REV})
                ),
                (
                    tools::TASK_FINISH.into(),
                    json!({"summary": "Replaced the first occurrence of the requested text in x.rs."})
                ),
            ]
        );
        assert_eq!(text, "Done.");
    }

    #[test]
    fn run_the_tests_uses_the_projects_test_command() {
        let (calls, _) = drive("run the tests", ok);
        assert_eq!(
            calls[2],
            (
                tools::TERMINAL_RUN.into(),
                json!({"argv": ["cargo", "test", "--quiet"]})
            )
        );
        assert_eq!(calls.len(), 4, "{calls:?}");
    }

    #[test]
    fn a_failed_step_is_reported_and_nothing_follows() {
        let (calls, text) = drive(r#"replace "a" with "b" in x.rs"#, |tool| {
            if tool == tools::APPLY_PATCH {
                (
                    json!({"isError": true, "error": {"code": "WORKSPACE_REVISION_CONFLICT",
                           "message": "x.rs changed since it was read", "retryable": true}}),
                    true,
                )
            } else {
                ok(tool)
            }
        });
        assert_eq!(calls.len(), 4);
        assert!(
            text.contains("WORKSPACE_REVISION_CONFLICT")
                && text.contains("nothing was overwritten"),
            "{text}"
        );
    }

    #[test]
    fn an_unknown_request_is_answered_with_help_and_no_calls() {
        let (calls, text) = drive("please refactor everything", ok);
        assert!(calls.is_empty());
        assert_eq!(text, HELP);
    }
}
