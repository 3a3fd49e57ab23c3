//! What the servers answer, in the editor's terms: character positions,
//! plain words, workspace paths.

use std::path::PathBuf;

use cocode_core::path::NormalizedPath;
use lsp_types::DiagnosticSeverity;
use ropey::Rope;
use serde::Serialize;

use crate::encoding::{PositionEncoding, TextPos, TextRange, from_lsp, range_from_lsp};

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    /// The word people read.
    pub fn word(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Information => "info",
            Self::Hint => "hint",
        }
    }

    /// A server's severity (an unset one counts as an error, as editors do).
    pub fn from_lsp(severity: Option<DiagnosticSeverity>) -> Self {
        match severity {
            Some(DiagnosticSeverity::WARNING) => Self::Warning,
            Some(DiagnosticSeverity::INFORMATION) => Self::Information,
            Some(DiagnosticSeverity::HINT) => Self::Hint,
            _ => Self::Error,
        }
    }
}

/// One problem a server reported, at character positions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub range: TextRange,
    pub severity: Severity,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl Diagnostic {
    pub fn from_lsp(d: &lsp_types::Diagnostic, rope: &Rope, encoding: PositionEncoding) -> Self {
        Self {
            range: range_from_lsp(rope, d.range, encoding),
            severity: Severity::from_lsp(d.severity),
            message: d.message.clone(),
            source: d.source.clone(),
            code: d.code.as_ref().map(|c| match c {
                lsp_types::NumberOrString::Number(n) => n.to_string(),
                lsp_types::NumberOrString::String(s) => s.clone(),
            }),
        }
    }
}

/// The diagnostics of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiagnostics {
    pub path: NormalizedPath,
    pub diagnostics: Vec<Diagnostic>,
}

/// A replacement of characters `start..end` (char offsets in the text it
/// applies to) by `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// One entry of a completion list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    /// A short word for its kind (`function`, `variable`…), if the server
    /// said.
    pub kind: Option<&'static str>,
    pub detail: Option<String>,
    /// The main edit, in the document the list was asked for.
    pub edit: Edit,
    /// Further edits (an import at the top), applied with the main one.
    pub additional: Vec<Edit>,
    /// The text the list is filtered by as the person types.
    pub filter: String,
    sort: String,
}

impl Completion {
    pub fn sort_key(&self) -> &str {
        &self.sort
    }
}

/// The word a completion kind stands for.
pub fn completion_kind(kind: lsp_types::CompletionItemKind) -> Option<&'static str> {
    use lsp_types::CompletionItemKind as K;
    Some(match kind {
        K::METHOD => "method",
        K::FUNCTION => "function",
        K::CONSTRUCTOR => "constructor",
        K::FIELD => "field",
        K::VARIABLE => "variable",
        K::CLASS => "class",
        K::INTERFACE => "interface",
        K::MODULE => "module",
        K::PROPERTY => "property",
        K::UNIT => "unit",
        K::VALUE => "value",
        K::ENUM => "enum",
        K::KEYWORD => "keyword",
        K::SNIPPET => "snippet",
        K::FILE => "file",
        K::FOLDER => "folder",
        K::ENUM_MEMBER => "enum member",
        K::CONSTANT => "constant",
        K::STRUCT => "struct",
        K::EVENT => "event",
        K::OPERATOR => "operator",
        K::TYPE_PARAMETER => "type parameter",
        _ => return None,
    })
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The start of the word the cursor ends (what a completion replaces when
/// the server gives no range).
pub fn word_start(rope: &Rope, cursor: usize) -> usize {
    let mut start = cursor.min(rope.len_chars());
    while start > 0 && is_word(rope.char(start - 1)) {
        start -= 1;
    }
    start
}

fn edit_of(rope: &Rope, e: &lsp_types::TextEdit, encoding: PositionEncoding) -> Edit {
    let r = range_from_lsp(rope, e.range, encoding);
    Edit {
        start: crate::encoding::char_index(rope, r.start),
        end: crate::encoding::char_index(rope, r.end),
        text: e.new_text.clone(),
    }
}

/// A server's completion item as an edit of the document.
pub fn completion_of(
    item: &lsp_types::CompletionItem,
    rope: &Rope,
    cursor: usize,
    encoding: PositionEncoding,
) -> Completion {
    let snippet = item.insert_text_format == Some(lsp_types::InsertTextFormat::SNIPPET);
    let plain = |text: &str| {
        if snippet {
            strip_snippet(text)
        } else {
            text.to_owned()
        }
    };
    let edit = match &item.text_edit {
        Some(lsp_types::CompletionTextEdit::Edit(e)) => {
            let mut edit = edit_of(rope, e, encoding);
            edit.text = plain(&edit.text);
            edit
        }
        Some(lsp_types::CompletionTextEdit::InsertAndReplace(e)) => {
            let r = range_from_lsp(rope, e.insert, encoding);
            Edit {
                start: crate::encoding::char_index(rope, r.start),
                end: crate::encoding::char_index(rope, r.end),
                text: plain(&e.new_text),
            }
        }
        None => Edit {
            start: word_start(rope, cursor),
            end: cursor,
            text: plain(item.insert_text.as_deref().unwrap_or(&item.label)),
        },
    };
    Completion {
        label: item.label.clone(),
        kind: item.kind.and_then(completion_kind),
        detail: item.detail.clone(),
        edit,
        additional: item
            .additional_text_edits
            .iter()
            .flatten()
            .map(|e| edit_of(rope, e, encoding))
            .collect(),
        filter: item
            .filter_text
            .clone()
            .unwrap_or_else(|| item.label.clone()),
        sort: item.sort_text.clone().unwrap_or_else(|| item.label.clone()),
    }
}

/// A snippet's text without its tab stops and placeholders (`$1`,
/// `${2:name}` → `name`, `$0`), with escapes resolved.
pub fn strip_snippet(snippet: &str) -> String {
    let mut out = String::new();
    let mut chars = snippet.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '$' => match chars.peek() {
                Some(d) if d.is_ascii_digit() => {
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                }
                Some('{') => {
                    chars.next();
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                    // `${1:default}` keeps `default`; `${1|a,b|}` keeps `a`.
                    match chars.next() {
                        Some(':') => {
                            let mut depth = 1;
                            for n in chars.by_ref() {
                                match n {
                                    '{' => depth += 1,
                                    '}' => {
                                        depth -= 1;
                                        if depth == 0 {
                                            break;
                                        }
                                    }
                                    _ => {}
                                }
                                out.push(n);
                            }
                        }
                        Some('|') => {
                            let mut first = true;
                            for n in chars.by_ref() {
                                match n {
                                    ',' | '|' => first = false,
                                    '}' => break,
                                    _ if first => out.push(n),
                                    _ => {}
                                }
                            }
                        }
                        _ => {}
                    }
                }
                _ => out.push('$'),
            },
            _ => out.push(c),
        }
    }
    out
}

/// Hover text as the server wrote it (Markdown or plain).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoverText {
    pub text: String,
    pub range: Option<TextRange>,
}

pub fn hover_text(hover: &lsp_types::Hover, rope: &Rope, encoding: PositionEncoding) -> HoverText {
    fn marked(m: &lsp_types::MarkedString) -> String {
        match m {
            lsp_types::MarkedString::String(s) => s.clone(),
            lsp_types::MarkedString::LanguageString(l) => {
                format!("```{}\n{}\n```", l.language, l.value)
            }
        }
    }
    let text = match &hover.contents {
        lsp_types::HoverContents::Scalar(m) => marked(m),
        lsp_types::HoverContents::Array(list) => {
            list.iter().map(marked).collect::<Vec<_>>().join("\n\n")
        }
        lsp_types::HoverContents::Markup(m) => m.value.clone(),
    };
    HoverText {
        text: text.trim().to_owned(),
        range: hover.range.map(|r| range_from_lsp(rope, r, encoding)),
    }
}

/// Where a definition is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file on disk.
    pub file: PathBuf,
    /// The file in the workspace, when it is one.
    pub path: Option<NormalizedPath>,
    pub range: TextRange,
}

/// Decodes a server's relative semantic tokens into absolute character
/// positions, naming types and modifiers by the server's legend.
pub fn decode_tokens(
    data: &[lsp_types::SemanticToken],
    legend: &lsp_types::SemanticTokensLegend,
    rope: &Rope,
    encoding: PositionEncoding,
) -> Vec<cocode_core::services::SemanticToken> {
    let mut line = 0u32;
    let mut start = 0u32;
    let mut out = Vec::with_capacity(data.len());
    for t in data {
        if t.delta_line > 0 {
            line += t.delta_line;
            start = t.delta_start;
        } else {
            start += t.delta_start;
        }
        let Some(kind) = legend.token_types.get(t.token_type as usize) else {
            continue;
        };
        let from = from_lsp(
            rope,
            lsp_types::Position {
                line,
                character: start,
            },
            encoding,
        );
        let to = from_lsp(
            rope,
            lsp_types::Position {
                line,
                character: start + t.length,
            },
            encoding,
        );
        if from.line != line {
            continue;
        }
        let modifiers = legend
            .token_modifiers
            .iter()
            .enumerate()
            .filter(|(i, _)| *i < 32 && t.token_modifiers_bitset & (1 << i) != 0)
            .map(|(_, m)| m.as_str().to_owned())
            .collect();
        out.push(cocode_core::services::SemanticToken {
            line,
            start_char: from.column,
            length: to.column.saturating_sub(from.column),
            token_type: kind.as_str().to_owned(),
            modifiers,
        });
    }
    out
}

/// A position as people read it: 1-based line and character column.
pub fn one_based(pos: TextPos) -> (u32, u32) {
    (pos.line + 1, pos.column + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn snippets_become_the_text_they_would_insert() {
        assert_eq!(strip_snippet("print($1)$0"), "print()");
        assert_eq!(
            strip_snippet("fn ${1:name}(${2:args}) {}"),
            "fn name(args) {}"
        );
        assert_eq!(strip_snippet("${1|one,two|} \\$x"), "one $x");
        assert_eq!(strip_snippet("cost: $ 5"), "cost: $ 5");
    }

    #[test]
    fn a_completion_without_a_range_replaces_the_word_before_the_cursor() {
        let rope = Rope::from_str("x = 한글.app");
        let item = lsp_types::CompletionItem {
            label: "append".into(),
            kind: Some(lsp_types::CompletionItemKind::METHOD),
            ..Default::default()
        };
        let c = completion_of(&item, &rope, 10, PositionEncoding::Utf16);
        assert_eq!(
            c.edit,
            Edit {
                start: 7,
                end: 10,
                text: "append".into()
            }
        );
        assert_eq!(c.kind, Some("method"));
        assert_eq!(c.filter, "append");
    }

    #[test]
    fn tokens_are_decoded_to_absolute_character_positions() {
        let rope = Rope::from_str("let 한 = 1;\nfn 🙂x() {}\n");
        let legend = lsp_types::SemanticTokensLegend {
            token_types: vec!["variable".into(), "function".into()],
            token_modifiers: vec!["declaration".into(), "readonly".into()],
        };
        let t = |delta_line, delta_start, length, token_type, bits| lsp_types::SemanticToken {
            delta_line,
            delta_start,
            length,
            token_type,
            token_modifiers_bitset: bits,
        };
        // UTF-16: "🙂x" starts at unit 3 and is 3 units long.
        let data = [t(0, 4, 1, 0, 0b11), t(1, 3, 3, 1, 0), t(0, 9, 1, 7, 0)];
        let got = decode_tokens(&data, &legend, &rope, PositionEncoding::Utf16);
        assert_eq!(
            got,
            vec![
                cocode_core::services::SemanticToken {
                    line: 0,
                    start_char: 4,
                    length: 1,
                    token_type: "variable".into(),
                    modifiers: vec!["declaration".into(), "readonly".into()],
                },
                cocode_core::services::SemanticToken {
                    line: 1,
                    start_char: 3,
                    length: 2,
                    token_type: "function".into(),
                    modifiers: vec![],
                },
            ]
        );
    }
}
