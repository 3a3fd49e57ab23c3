//! A deterministic language server for the client's protocol tests.
//!
//! - Every line containing `ERROR` gets an error diagnostic over that word,
//!   published on open and on each change.
//! - Hover answers `hover: <word>`; hovering `crash` ends the process
//!   (status 3), `sleep` answers after 30 s, `opens` tells how many times
//!   the document was opened, `modified` answers "content modified"
//!   (-32801) twice before its answer.
//! - Completion offers `alpha` (a text edit over the typed word), `beta`
//!   (no range) and `gamma` (with an extra edit adding `import gamma` on
//!   the first line); `.` triggers it.
//! - A document containing `CRASH_ON_OPEN` ends the process when opened.
//! - Definition finds the line `def <word>`.
//! - Semantic tokens mark each `let` as a keyword.
//! - A document containing `SLOW_CHECK` is answered as rust-analyzer does:
//!   an empty report at once, then, after a pause, work announced with
//!   `$/progress` ("checking: 1/2 crates", 50%), the real report 1.5 s
//!   later and the work's end;
//!   `NEVER_SETTLES` begins the work and never ends it.
//!
//! `--encoding utf-8` makes it count columns in bytes (when the client
//! offers it); otherwise it counts UTF-16 code units.
//!
//! `--pull` makes it answer as pyright does when the client can pull: it
//! publishes nothing; once initialized it reads the `python` section of the
//! client's configuration, then registers `textDocument/diagnostic`, and
//! answers each pull after a pause of "analysis" (the first pull of a
//! document is cancelled with "server cancelled", asking to be asked
//! again). Hovering `include` tells the `analysis.include` it was given.
#![expect(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    reason = "a small test peer: its locks are never poisoned, its texts are small"
)]

use std::collections::HashMap;
use std::sync::Mutex;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::notification::Progress;
use tower_lsp_server::lsp_types::request::WorkDoneProgressCreate;
use tower_lsp_server::lsp_types::{
    CompletionItem, CompletionItemKind, CompletionOptions, CompletionParams, CompletionResponse,
    CompletionTextEdit, ConfigurationItem, Diagnostic, DiagnosticSeverity,
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DocumentDiagnosticParams, DocumentDiagnosticReport, DocumentDiagnosticReportResult,
    FullDocumentDiagnosticReport, GotoDefinitionParams, GotoDefinitionResponse, Hover,
    HoverContents, HoverParams, HoverProviderCapability, InitializeParams, InitializeResult,
    InitializedParams, Location, MarkupContent, MarkupKind, OneOf, Position, PositionEncodingKind,
    Range, Registration, RelatedFullDocumentDiagnosticReport, SemanticToken, SemanticTokenType,
    SemanticTokens, SemanticTokensFullOptions, SemanticTokensLegend, SemanticTokensOptions,
    SemanticTokensParams, SemanticTokensResult, SemanticTokensServerCapabilities,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind, TextEdit, Uri,
};
use tower_lsp_server::lsp_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressCreateParams, WorkDoneProgressEnd,
};
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Units {
    Utf8,
    Utf16,
}

struct Backend {
    client: Client,
    want_utf8: bool,
    units: Mutex<Units>,
    docs: Mutex<HashMap<String, String>>,
    opens: Mutex<HashMap<String, u32>>,
    /// Hovers asked on `modified`.
    modified: Mutex<u32>,
    /// `--pull`: reports only when pulled.
    pull: bool,
    /// The `python.analysis.include` the client gave (`--pull`).
    include: Mutex<Option<serde_json::Value>>,
    /// Pulls asked, by document.
    pulls: Mutex<HashMap<String, u32>>,
}

fn width(c: char, units: Units) -> u32 {
    match units {
        Units::Utf8 => c.len_utf8() as u32,
        Units::Utf16 => c.len_utf16() as u32,
    }
}

/// The byte offset of a position (the server's own conversion).
fn offset(text: &str, pos: Position, units: Units) -> usize {
    let mut line_start = 0;
    for _ in 0..pos.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let mut counted = 0;
    for (i, c) in text[line_start..].char_indices() {
        if counted >= pos.character || c == '\n' {
            return line_start + i;
        }
        counted += width(c, units);
    }
    text.len()
}

/// The position of a byte offset.
fn position(text: &str, at: usize, units: Units) -> Position {
    let before = &text[..at];
    let line = before.matches('\n').count() as u32;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let character = text[start..at].chars().map(|c| width(c, units)).sum();
    Position { line, character }
}

fn word_at(text: &str, at: usize) -> &str {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let start = text[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = text[at..]
        .char_indices()
        .find(|(_, c)| !is_word(*c))
        .map_or(text.len(), |(i, _)| at + i);
    &text[start..end]
}

impl Backend {
    fn units(&self) -> Units {
        *self.units.lock().unwrap()
    }

    fn text(&self, uri: &Uri) -> String {
        self.docs
            .lock()
            .unwrap()
            .get(uri.as_str())
            .cloned()
            .unwrap_or_default()
    }

    async fn publish(&self, uri: Uri) {
        let text = self.text(&uri);
        let diagnostics = diagnostics_of(&text, self.units());
        self.client
            .publish_diagnostics(uri, diagnostics, None)
            .await;
    }

    /// Like rust-analyzer: an empty report at once, then work announced
    /// with `$/progress` after a pause, the real report, and the work's end
    /// — or, for `NEVER_SETTLES`, work that never ends.
    fn publish_late(&self, uri: Uri, never_ends: bool) {
        let client = self.client.clone();
        let diagnostics = diagnostics_of(&self.text(&uri), self.units());
        tokio::spawn(async move {
            client
                .publish_diagnostics(uri.clone(), Vec::new(), None)
                .await;
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            let token = NumberOrString::String(format!("check {}", uri.as_str()));
            let _ = client
                .send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                    token: token.clone(),
                })
                .await;
            let progress = |value| ProgressParams {
                token: token.clone(),
                value: ProgressParamsValue::WorkDone(value),
            };
            client
                .send_notification::<Progress>(progress(WorkDoneProgress::Begin(
                    WorkDoneProgressBegin {
                        title: "checking".into(),
                        message: Some("1/2 crates".into()),
                        percentage: Some(50),
                        ..Default::default()
                    },
                )))
                .await;
            if never_ends {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
            client.publish_diagnostics(uri, diagnostics, None).await;
            client
                .send_notification::<Progress>(progress(WorkDoneProgress::End(
                    WorkDoneProgressEnd::default(),
                )))
                .await;
        });
    }
}

/// An error over each `ERROR` in `text`.
fn diagnostics_of(text: &str, units: Units) -> Vec<Diagnostic> {
    text.match_indices("ERROR")
        .map(|(at, word)| Diagnostic {
            range: Range {
                start: position(text, at, units),
                end: position(text, at + word.len(), units),
            },
            severity: Some(DiagnosticSeverity::ERROR),
            source: Some("test-server".into()),
            message: "found ERROR".into(),
            ..Default::default()
        })
        .collect()
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let offered_utf8 = params
            .capabilities
            .general
            .and_then(|g| g.position_encodings)
            .is_some_and(|e| e.contains(&PositionEncodingKind::UTF8));
        let units = if self.want_utf8 && offered_utf8 {
            Units::Utf8
        } else {
            Units::Utf16
        };
        *self.units.lock().unwrap() = units;
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(match units {
                    Units::Utf8 => PositionEncodingKind::UTF8,
                    Units::Utf16 => PositionEncodingKind::UTF16,
                }),
                text_document_sync: Some(TextDocumentSyncCapability::Kind(
                    TextDocumentSyncKind::INCREMENTAL,
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(vec![".".into()]),
                    ..Default::default()
                }),
                definition_provider: Some(OneOf::Left(true)),
                semantic_tokens_provider: Some(
                    SemanticTokensServerCapabilities::SemanticTokensOptions(
                        SemanticTokensOptions {
                            legend: SemanticTokensLegend {
                                token_types: vec![SemanticTokenType::KEYWORD],
                                token_modifiers: vec![],
                            },
                            full: Some(SemanticTokensFullOptions::Bool(true)),
                            ..Default::default()
                        },
                    ),
                ),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn initialized(&self, _: InitializedParams) {
        if !self.pull {
            return;
        }
        let asked = self
            .client
            .configuration(vec![ConfigurationItem {
                scope_uri: None,
                section: Some("python".into()),
            }])
            .await;
        let include = asked
            .ok()
            .and_then(|v| v.into_iter().next())
            .map(|v| v["analysis"]["include"].clone());
        *self.include.lock().unwrap() = include;
        let _ = self
            .client
            .register_capability(vec![Registration {
                id: "pull".into(),
                method: "textDocument/diagnostic".into(),
                register_options: Some(serde_json::json!({
                    "interFileDependencies": true,
                    "workspaceDiagnostics": false,
                    "documentSelector": null,
                })),
            }])
            .await;
    }

    async fn diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        let uri = params.text_document.uri;
        let asked = {
            let mut pulls = self.pulls.lock().unwrap();
            let n = pulls.entry(uri.to_string()).or_default();
            *n += 1;
            *n
        };
        if asked == 1 {
            return Err(tower_lsp_server::jsonrpc::Error {
                code: tower_lsp_server::jsonrpc::ErrorCode::ServerError(-32802),
                message: "server cancelled".into(),
                data: Some(serde_json::json!({ "retriggerRequest": true })),
            });
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let items = diagnostics_of(&self.text(&uri), self.units());
        Ok(DocumentDiagnosticReportResult::Report(
            DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: FullDocumentDiagnosticReport {
                    result_id: None,
                    items,
                },
            }),
        ))
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        if params.text_document.text.contains("CRASH_ON_OPEN") {
            std::process::exit(4);
        }
        let uri = params.text_document.uri;
        self.docs
            .lock()
            .unwrap()
            .insert(uri.to_string(), params.text_document.text);
        *self
            .opens
            .lock()
            .unwrap()
            .entry(uri.to_string())
            .or_default() += 1;
        let text = self.text(&uri);
        if self.pull {
            return;
        }
        if text.contains("SLOW_CHECK") || text.contains("NEVER_SETTLES") {
            self.publish_late(uri, text.contains("NEVER_SETTLES"));
        } else {
            self.publish(uri).await;
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let units = self.units();
        {
            let mut docs = self.docs.lock().unwrap();
            let text = docs.entry(uri.to_string()).or_default();
            for change in params.content_changes {
                match change.range {
                    Some(range) => {
                        let start = offset(text, range.start, units);
                        let end = offset(text, range.end, units);
                        text.replace_range(start..end, &change.text);
                    }
                    None => *text = change.text,
                }
            }
        }
        if !self.pull {
            self.publish(uri).await;
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        self.docs
            .lock()
            .unwrap()
            .remove(params.text_document.uri.as_str());
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        let text = self.text(&p.text_document.uri);
        let at = offset(&text, p.position, self.units());
        let word = word_at(&text, at).to_owned();
        let value = match word.as_str() {
            "crash" => std::process::exit(3),
            "sleep" => {
                tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                "slept".to_owned()
            }
            "opens" => format!(
                "opened {} times",
                self.opens
                    .lock()
                    .unwrap()
                    .get(p.text_document.uri.as_str())
                    .copied()
                    .unwrap_or(0)
            ),
            // Twice "the content changed", as rust-analyzer answers while
            // it reloads; the third time an answer.
            "modified" => {
                let mut seen = self.modified.lock().unwrap();
                *seen += 1;
                if *seen <= 2 {
                    return Err(tower_lsp_server::jsonrpc::Error {
                        code: tower_lsp_server::jsonrpc::ErrorCode::ServerError(-32801),
                        message: "content modified".into(),
                        data: None,
                    });
                }
                format!("answered after {} tries", *seen)
            }
            "include" => format!(
                "include: {}",
                self.include
                    .lock()
                    .unwrap()
                    .as_ref()
                    .map_or_else(|| "none".to_owned(), ToString::to_string)
            ),
            "" => return Ok(None),
            w => format!("hover: {w}"),
        };
        Ok(Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value,
            }),
            range: None,
        }))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let p = params.text_document_position;
        let text = self.text(&p.text_document.uri);
        let units = self.units();
        let at = offset(&text, p.position, units);
        let typed = text[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric())
            .map(char::len_utf8)
            .sum::<usize>();
        let range = Range {
            start: position(&text, at - typed, units),
            end: p.position,
        };
        Ok(Some(CompletionResponse::Array(vec![
            CompletionItem {
                label: "alpha".into(),
                kind: Some(CompletionItemKind::FUNCTION),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                    range,
                    new_text: "alpha()".into(),
                })),
                ..Default::default()
            },
            CompletionItem {
                label: "beta".into(),
                kind: Some(CompletionItemKind::VARIABLE),
                ..Default::default()
            },
            CompletionItem {
                label: "gamma".into(),
                additional_text_edits: Some(vec![TextEdit {
                    range: Range::default(),
                    new_text: "import gamma\n".into(),
                }]),
                ..Default::default()
            },
        ])))
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        let text = self.text(&p.text_document.uri);
        let units = self.units();
        let word = word_at(&text, offset(&text, p.position, units));
        if word.is_empty() {
            return Ok(None);
        }
        let needle = format!("def {word}");
        Ok(text.find(&needle).map(|at| {
            let start = at + 4;
            GotoDefinitionResponse::Scalar(Location {
                uri: p.text_document.uri.clone(),
                range: Range {
                    start: position(&text, start, units),
                    end: position(&text, start + word.len(), units),
                },
            })
        }))
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        let text = self.text(&params.text_document.uri);
        let units = self.units();
        let mut data = Vec::new();
        let (mut last_line, mut last_start) = (0, 0);
        for (at, _) in text.match_indices("let") {
            let pos = position(&text, at, units);
            let delta_line = pos.line - last_line;
            let delta_start = if delta_line == 0 {
                pos.character - last_start
            } else {
                pos.character
            };
            data.push(SemanticToken {
                delta_line,
                delta_start,
                length: 3,
                token_type: 0,
                token_modifiers_bitset: 0,
            });
            (last_line, last_start) = (pos.line, pos.character);
        }
        Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
            result_id: None,
            data,
        })))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let want_utf8 = std::env::args().any(|a| a == "utf-8");
    let pull = std::env::args().any(|a| a == "--pull");
    let (service, socket) = LspService::new(|client| Backend {
        client,
        want_utf8,
        units: Mutex::new(Units::Utf16),
        docs: Mutex::default(),
        opens: Mutex::default(),
        modified: Mutex::default(),
        pull,
        include: Mutex::default(),
        pulls: Mutex::default(),
    });
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
        .serve(service)
        .await;
}
