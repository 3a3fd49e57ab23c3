//! The client against real language servers (`cargo xtask test` installs
//! pyright, typescript-language-server and rust-analyzer): an error is
//! reported at the right characters after Hangul and an emoji on its line,
//! fixing it clears it, and hover, definition and completion answer.
#![expect(clippy::unwrap_used, reason = "test helpers")]
#![expect(clippy::disallowed_methods, reason = "tests build a workspace")]

#[path = "../../../../tests/support/require.rs"]
mod require;

use std::sync::Arc;
use std::time::Duration;

use cocode_core::path::{CaseSensitivity, NormalizeOptions, NormalizedPath, normalize};
use cocode_lsp::{
    Edit, LanguageServers, LspSetup, Scope, ServerRegistry, Severity, TextPos, TextRange, Timeouts,
};
use cocode_toolchain::{Launcher, WritableRoots};
use pretty_assertions::assert_eq;

fn options() -> NormalizeOptions {
    NormalizeOptions::native(CaseSensitivity::Sensitive)
}

fn path(p: &str) -> NormalizedPath {
    normalize(p, options()).unwrap()
}

fn servers(root: &std::path::Path) -> LanguageServers {
    let launcher = Launcher::new(
        tokio::runtime::Handle::current(),
        None,
        WritableRoots::default(),
    );
    LanguageServers::new(
        LspSetup {
            launcher: Arc::new(launcher),
            root: root.canonicalize().unwrap(),
            options: options(),
            registry: ServerRegistry::with_defaults()
                .with_typescript(root, std::env::var_os("PATH").as_deref()),
            path_var: std::env::var_os("PATH"),
            runtime: tokio::runtime::Handle::current(),
            timeouts: Timeouts {
                request: Duration::from_mins(1),
                ..Timeouts::default()
            },
            scope: Scope::Workspace,
        },
        |_| {},
    )
}

/// Characters `from..to` of one line.
fn on_line(line: u32, from: u32, to: u32) -> TextRange {
    TextRange {
        start: TextPos { line, column: from },
        end: TextPos { line, column: to },
    }
}

/// The character column of `needle` in `line`.
fn column(line: &str, needle: &str) -> u32 {
    let byte = line.find(needle).unwrap();
    u32::try_from(line[..byte].chars().count()).unwrap()
}

async fn errors_after(
    servers: &LanguageServers,
    p: &NormalizedPath,
    what: &str,
    done: impl Fn(&[cocode_lsp::Diagnostic]) -> bool,
) -> Vec<cocode_lsp::Diagnostic> {
    for _ in 0..600 {
        let now: Vec<cocode_lsp::Diagnostic> = servers
            .diagnostics(std::slice::from_ref(p))
            .into_iter()
            .flat_map(|f| f.diagnostics)
            .filter(|d| d.severity == Severity::Error)
            .collect();
        if done(&now) {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

fn apply(text: &str, edits: &[&Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let mut sorted: Vec<&&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| std::cmp::Reverse(e.start));
    for e in sorted {
        chars.splice(e.start..e.end, e.text.chars());
    }
    chars.into_iter().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_reports_fixes_hovers_defines_and_completes() {
    if !require::require_program("pyright-langserver") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let line0 = "s = \"한글🙂\"; n: int = \"text\"";
    let text = format!("{line0}\n\ndef greet(who: str) -> str:\n    return who\n\ngreet(s)\n");
    std::fs::write(dir.path().join("main.py"), &text).unwrap();
    let servers = servers(dir.path());
    let p = path("main.py");
    servers.open(&p, &text, 1).await.unwrap();
    let errors = errors_after(&servers, &p, "the type error", |d| !d.is_empty()).await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    let start = column(line0, "\"text\"");
    assert_eq!(errors[0].range, on_line(0, start, start + 6));
    assert!(errors[0].message.contains("int"), "{}", errors[0].message);
    assert_eq!(errors[0].source.as_deref(), Some("Pyright"));

    // Hover and definition answer on the call.
    let call = TextPos { line: 5, column: 1 };
    let hover = servers.hover(&p, call).await.unwrap().unwrap();
    assert!(
        hover.text.contains("def greet(who: str) -> str"),
        "{}",
        hover.text
    );
    let defs = servers.definition(&p, call).await.unwrap();
    assert_eq!(defs.len(), 1);
    assert_eq!(defs[0].path, Some(p.clone()));
    assert_eq!(defs[0].range.start, TextPos { line: 2, column: 4 });

    // Fixing the value clears the error.
    let from = usize::try_from(start).unwrap();
    servers.change(
        &p,
        2,
        &[Edit {
            start: from,
            end: from + 6,
            text: "3".into(),
        }],
    );
    errors_after(&servers, &p, "the fix", <[_]>::is_empty).await;

    // A completion is applied.
    let fixed = text.replacen("\"text\"", "3", 1);
    let typed = format!("{fixed}import os\nos.pa");
    let len = fixed.chars().count();
    servers.change(
        &p,
        3,
        &[Edit {
            start: len,
            end: len,
            text: "import os\nos.pa".into(),
        }],
    );
    let list = servers
        .completion(&p, TextPos { line: 7, column: 5 }, None)
        .await
        .unwrap();
    let item = list.iter().find(|c| c.label == "path").unwrap();
    let mut edits = vec![&item.edit];
    edits.extend(&item.additional);
    let done = apply(&typed, &edits);
    assert!(done.ends_with("import os\nos.path"), "{done}");
    servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_language_server_reports_fixes_and_hovers() {
    if !require::require_program("typescript-language-server") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let line0 = "const s = \"한글🙂\"; const n: number = \"text\";";
    let text =
        format!("{line0}\nexport function twice(x: number) {{ return x * 2; }}\ntwice(n);\n");
    std::fs::write(dir.path().join("index.ts"), &text).unwrap();
    std::fs::write(
        dir.path().join("tsconfig.json"),
        r#"{ "compilerOptions": { "strict": true, "noEmit": true } }"#,
    )
    .unwrap();
    let servers = servers(dir.path());
    let p = path("index.ts");
    servers.open(&p, &text, 1).await.unwrap();
    let errors = errors_after(&servers, &p, "the type error", |d| !d.is_empty()).await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    // TypeScript reports the assignment at the declared name.
    let start = column(line0, "n: number");
    assert_eq!(errors[0].range, on_line(0, start, start + 1));
    assert!(
        errors[0]
            .message
            .contains("not assignable to type 'number'"),
        "{}",
        errors[0].message
    );
    let hover = servers
        .hover(&p, TextPos { line: 2, column: 1 })
        .await
        .unwrap()
        .unwrap();
    assert!(
        hover.text.contains("function twice(x: number): number"),
        "{}",
        hover.text
    );
    let defs = servers
        .definition(&p, TextPos { line: 2, column: 1 })
        .await
        .unwrap();
    assert_eq!(defs[0].range.start.line, 1);

    let value = usize::try_from(column(line0, "\"text\"")).unwrap();
    servers.change(
        &p,
        2,
        &[Edit {
            start: value,
            end: value + 6,
            text: "3".into(),
        }],
    );
    errors_after(&servers, &p, "the fix", <[_]>::is_empty).await;
    servers.shutdown().await;
}

/// A plain JavaScript folder (no `node_modules`, no `tsconfig.json`) is
/// served by the global TypeScript, given to the server as
/// `tsserver.path`: a `// @ts-check` error is reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_javascript_folder_uses_the_global_typescript() {
    if !require::require_program("typescript-language-server") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("package.json"),
        r#"{"name": "plain", "version": "1.0.0"}"#,
    )
    .unwrap();
    let text = "// @ts-check\nlet n = 1;\nn.toUpperCase();\n";
    std::fs::write(dir.path().join("index.js"), text).unwrap();
    let servers = servers(dir.path());
    let spec = servers
        .registry()
        .get("typescript-language-server")
        .unwrap();
    let note = spec.note.clone().unwrap_or_default();
    assert!(note.contains("(global, "), "{note}");
    let tsserver = spec.initialization_options.as_ref().unwrap()["tsserver"]["path"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        tsserver.ends_with("typescript/lib/tsserver.js")
            && !tsserver.starts_with(&*dir.path().to_string_lossy()),
        "{tsserver}"
    );
    let p = path("index.js");
    servers.open(&p, text, 1).await.unwrap();
    let errors = errors_after(&servers, &p, "the ts-check error", |d| !d.is_empty()).await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0]
            .message
            .contains("Property 'toUpperCase' does not exist on type 'number'"),
        "{}",
        errors[0].message
    );
    assert_eq!(errors[0].range.start.line, 2);
    servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_analyzer_reports_a_syntax_error_and_answers_hover_and_definition() {
    // rustup puts a proxy on the PATH even when the component is missing;
    // the server is there when the proxy can run it.
    let runs = std::process::Command::new("rust-analyzer")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !require::require("rust-analyzer", runs) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    let line2 = "    let s = \"한글🙂\"; let x = ;";
    let text = format!(
        "pub fn twice(x: i32) -> i32 {{ x * 2 }}\npub fn use_it() -> i32 {{\n{line2}\n    twice(2)\n}}\n"
    );
    std::fs::write(dir.path().join("src/lib.rs"), &text).unwrap();
    let servers = servers(dir.path());
    let p = path("src/lib.rs");
    servers.open(&p, &text, 1).await.unwrap();
    let errors = errors_after(&servers, &p, "the syntax error", |d| !d.is_empty()).await;
    // The semicolon after `=`: column 27 in characters, 28 in the UTF-16
    // units rust-analyzer counts (the emoji is two).
    let semicolon = column(line2, " ;") + 1;
    assert_eq!(semicolon, 27);
    let first = &errors[0];
    assert_eq!(first.message, "Syntax Error: expected expression");
    assert_eq!(first.range, on_line(2, semicolon, semicolon));
    let call = TextPos { line: 3, column: 5 };
    // Syntax errors come from the parse alone; names resolve once the
    // server has loaded the crate, which takes a while on a busy machine.
    let mut hover = None;
    for _ in 0..600 {
        hover = servers.hover(&p, call).await.unwrap();
        if hover.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let hover = hover.expect("rust-analyzer answers the hover once the crate is loaded");
    assert!(
        hover.text.contains("pub fn twice(x: i32) -> i32"),
        "{}",
        hover.text
    );
    let defs = servers.definition(&p, call).await.unwrap();
    assert_eq!(defs.len(), 1);
    assert_eq!(
        defs[0].range,
        TextRange {
            start: TextPos { line: 0, column: 7 },
            end: TextPos {
                line: 0,
                column: 12
            },
        }
    );
    servers.shutdown().await;
}
