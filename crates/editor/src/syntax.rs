//! Syntax colouring with tree-sitter: a tree kept up to date incrementally
//! from each change set, highlight captures computed only for the byte
//! range on screen, and the first parse of a big file on a worker thread
//! (the text shows plain meanwhile). A grammar or query that fails leaves
//! the document plain text with the reason; it never fails the document.

use std::ops::Range;
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};

use ropey::Rope;
use tree_sitter::{InputEdit, Node, Parser, Point, Query, QueryCursor, StreamingIterator, Tree};

use crate::change::ChangeSet;
use crate::document::Document;

/// The languages cocode colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Json,
    Toml,
    Yaml,
    Markdown,
    Bash,
    Go,
    C,
    Cpp,
    Html,
    Css,
    Dart,
}

impl Language {
    pub const ALL: [Self; 16] = [
        Self::Rust,
        Self::Python,
        Self::JavaScript,
        Self::TypeScript,
        Self::Tsx,
        Self::Json,
        Self::Toml,
        Self::Yaml,
        Self::Markdown,
        Self::Bash,
        Self::Go,
        Self::C,
        Self::Cpp,
        Self::Html,
        Self::Css,
        Self::Dart,
    ];

    /// The language of a file, by its extension (or its well-known name).
    pub fn of_path(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_str()?;
        match name {
            "Cargo.lock" | "Pipfile" | "poetry.lock" => return Some(Self::Toml),
            ".bashrc" | ".bash_profile" | ".profile" | ".zshrc" => return Some(Self::Bash),
            _ => {}
        }
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "rs" => Self::Rust,
            "py" | "pyi" => Self::Python,
            "js" | "mjs" | "cjs" | "jsx" => Self::JavaScript,
            "ts" | "mts" | "cts" => Self::TypeScript,
            "tsx" => Self::Tsx,
            "json" | "jsonc" | "json5" => Self::Json,
            "toml" => Self::Toml,
            "yaml" | "yml" => Self::Yaml,
            "md" | "markdown" => Self::Markdown,
            "sh" | "bash" | "zsh" => Self::Bash,
            "go" => Self::Go,
            "c" | "h" => Self::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Self::Cpp,
            "html" | "htm" => Self::Html,
            "css" => Self::Css,
            "dart" => Self::Dart,
            _ => return None,
        })
    }

    /// The name people read (status bar).
    pub fn name(self) -> &'static str {
        match self {
            Self::Rust => "Rust",
            Self::Python => "Python",
            Self::JavaScript => "JavaScript",
            Self::TypeScript => "TypeScript",
            Self::Tsx => "TypeScript JSX",
            Self::Json => "JSON",
            Self::Toml => "TOML",
            Self::Yaml => "YAML",
            Self::Markdown => "Markdown",
            Self::Bash => "Shell Script",
            Self::Go => "Go",
            Self::C => "C",
            Self::Cpp => "C++",
            Self::Html => "HTML",
            Self::Css => "CSS",
            Self::Dart => "Dart",
        }
    }

    /// What starts a line comment (Ctrl+/); `None` where the language has
    /// only block comments, or none.
    pub fn line_comment(self) -> Option<&'static str> {
        match self {
            Self::Python | Self::Toml | Self::Yaml | Self::Bash => Some("#"),
            Self::Json | Self::Markdown | Self::Html | Self::Css => None,
            _ => Some("//"),
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Self::Rust => tree_sitter_rust::LANGUAGE.into(),
            Self::Python => tree_sitter_python::LANGUAGE.into(),
            Self::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Self::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Self::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Self::Json => tree_sitter_json::LANGUAGE.into(),
            Self::Toml => tree_sitter_toml_ng::LANGUAGE.into(),
            Self::Yaml => tree_sitter_yaml::LANGUAGE.into(),
            Self::Markdown => tree_sitter_md::LANGUAGE.into(),
            Self::Bash => tree_sitter_bash::LANGUAGE.into(),
            Self::Go => tree_sitter_go::LANGUAGE.into(),
            Self::C => tree_sitter_c::LANGUAGE.into(),
            Self::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Self::Html => tree_sitter_html::LANGUAGE.into(),
            Self::Css => tree_sitter_css::LANGUAGE.into(),
            Self::Dart => tree_sitter_dart::LANGUAGE.into(),
        }
    }

    fn query_source(self) -> String {
        match self {
            Self::Rust => tree_sitter_rust::HIGHLIGHTS_QUERY.to_owned(),
            Self::Python => tree_sitter_python::HIGHLIGHTS_QUERY.to_owned(),
            Self::JavaScript => format!(
                "{}\n{}",
                tree_sitter_javascript::HIGHLIGHT_QUERY,
                tree_sitter_javascript::JSX_HIGHLIGHT_QUERY
            ),
            // TypeScript's queries extend JavaScript's (later ones win).
            Self::TypeScript => format!(
                "{}\n{}",
                tree_sitter_javascript::HIGHLIGHT_QUERY,
                tree_sitter_typescript::HIGHLIGHTS_QUERY
            ),
            Self::Tsx => format!(
                "{}\n{}\n{}",
                tree_sitter_javascript::HIGHLIGHT_QUERY,
                tree_sitter_typescript::HIGHLIGHTS_QUERY,
                tree_sitter_javascript::JSX_HIGHLIGHT_QUERY
            ),
            Self::Json => tree_sitter_json::HIGHLIGHTS_QUERY.to_owned(),
            Self::Toml => tree_sitter_toml_ng::HIGHLIGHTS_QUERY.to_owned(),
            Self::Yaml => tree_sitter_yaml::HIGHLIGHTS_QUERY.to_owned(),
            // The block structure (headings, code fences, lists); inline
            // emphasis would need the inline grammar injected per paragraph.
            Self::Markdown => tree_sitter_md::HIGHLIGHT_QUERY_BLOCK.to_owned(),
            Self::Bash => tree_sitter_bash::HIGHLIGHT_QUERY.to_owned(),
            Self::Go => tree_sitter_go::HIGHLIGHTS_QUERY.to_owned(),
            Self::C => tree_sitter_c::HIGHLIGHT_QUERY.to_owned(),
            // C++'s queries extend C's.
            Self::Cpp => format!(
                "{}\n{}",
                tree_sitter_c::HIGHLIGHT_QUERY,
                tree_sitter_cpp::HIGHLIGHT_QUERY
            ),
            Self::Html => tree_sitter_html::HIGHLIGHTS_QUERY.to_owned(),
            Self::Css => tree_sitter_css::HIGHLIGHTS_QUERY.to_owned(),
            Self::Dart => tree_sitter_dart::HIGHLIGHTS_QUERY.to_owned(),
        }
    }

    /// The compiled highlight query, built once per process.
    pub fn query(self) -> Result<Arc<Highlighter>, String> {
        static CELLS: [OnceLock<Result<Arc<Highlighter>, String>>; Language::ALL.len()] =
            [const { OnceLock::new() }; Language::ALL.len()];
        let index = Self::ALL.iter().position(|l| *l == self).unwrap_or(0);
        CELLS[index]
            .get_or_init(|| {
                let language = self.grammar();
                let query = Query::new(&language, &self.query_source())
                    .map_err(|e| format!("{} highlight query: {e}", self.name()))?;
                let kinds = query
                    .capture_names()
                    .iter()
                    .map(|n| Highlight::of_capture(n))
                    .collect();
                Ok(Arc::new(Highlighter {
                    language,
                    query,
                    kinds,
                }))
            })
            .clone()
    }
}

/// What a span of code is, for colouring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Highlight {
    Keyword,
    Function,
    Type,
    String,
    Number,
    Comment,
    Constant,
    Property,
    Attribute,
    Operator,
    Punctuation,
    Variable,
    Tag,
    Escape,
    Label,
    Module,
}

impl Highlight {
    /// A capture name (`function.method`, `string.special`) to its kind.
    pub fn of_capture(name: &str) -> Option<Self> {
        let head = name.split('.').next().unwrap_or(name);
        Some(match head {
            "keyword" | "conditional" | "repeat" | "include" | "exception" | "storageclass" => {
                Self::Keyword
            }
            "function" | "method" | "constructor" => {
                if name == "function.macro" {
                    Self::Constant
                } else {
                    Self::Function
                }
            }
            "type" => Self::Type,
            "string" | "character" => {
                if name == "string.escape" {
                    Self::Escape
                } else {
                    Self::String
                }
            }
            "escape" => Self::Escape,
            "number" | "float" => Self::Number,
            "comment" => Self::Comment,
            "constant" | "boolean" => Self::Constant,
            "property" | "field" => Self::Property,
            "attribute" => Self::Attribute,
            "operator" => Self::Operator,
            "punctuation" | "delimiter" => Self::Punctuation,
            "variable" | "parameter" => {
                if name == "variable.builtin" {
                    Self::Keyword
                } else {
                    Self::Variable
                }
            }
            "tag" => Self::Tag,
            "label" => Self::Label,
            "module" | "namespace" => Self::Module,
            _ => return None,
        })
    }
}

/// A language's grammar and compiled highlight query.
#[derive(Debug)]
pub struct Highlighter {
    language: tree_sitter::Language,
    query: Query,
    kinds: Vec<Option<Highlight>>,
}

/// Files bigger than this open as plain text (no tree at all).
pub const PLAIN_ABOVE_BYTES: usize = 16 << 20;
/// Files bigger than this get their first parse on a worker thread.
pub const BACKGROUND_ABOVE_BYTES: usize = 256 << 10;

/// Where the syntax tree of a document is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyntaxState {
    /// Coloured from a tree of the current text.
    Ready,
    /// The first parse runs on a worker thread; the text shows plain.
    Parsing,
    /// Plain text, with the reason.
    Plain(String),
}

/// The syntax tree of one document.
pub struct Syntax {
    language: Language,
    highlighter: Option<Arc<Highlighter>>,
    /// For parses on this thread (small documents).
    parser: Option<Parser>,
    /// The tree of `rope`: a parse of it when `fresh`, otherwise an older
    /// parse edited to match its positions (good enough to colour with
    /// until the reparse under way lands).
    tree: Option<Tree>,
    fresh: bool,
    /// The document version `rope` is.
    version: i32,
    rope: Rope,
    /// A parse under way on a worker thread: its version, text and tree.
    background: Option<mpsc::Receiver<(i32, Rope, Option<Tree>)>>,
    state: SyntaxState,
}

impl std::fmt::Debug for Syntax {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Syntax")
            .field("language", &self.language)
            .field("version", &self.version)
            .field("fresh", &self.fresh)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Syntax {
    /// Starts following `doc`; a big file's first parse goes to a thread.
    pub fn new(language: Language, doc: &Document) -> Self {
        let mut syntax = Self {
            language,
            highlighter: None,
            parser: None,
            tree: None,
            fresh: false,
            version: doc.version(),
            rope: doc.rope().clone(),
            background: None,
            state: SyntaxState::Parsing,
        };
        let highlighter = match language.query() {
            Ok(h) => h,
            Err(reason) => {
                syntax.state = SyntaxState::Plain(reason);
                return syntax;
            }
        };
        if doc.rope().len_bytes() > PLAIN_ABOVE_BYTES {
            syntax.state = SyntaxState::Plain(format!(
                "Files over {} MiB show without syntax colours.",
                PLAIN_ABOVE_BYTES >> 20
            ));
            return syntax;
        }
        let mut parser = Parser::new();
        if let Err(e) = parser.set_language(&highlighter.language) {
            syntax.state = SyntaxState::Plain(format!("{} grammar: {e}", language.name()));
            return syntax;
        }
        syntax.parser = Some(parser);
        syntax.highlighter = Some(highlighter);
        syntax.reparse();
        syntax
    }

    pub fn language(&self) -> Language {
        self.language
    }

    pub fn state(&self) -> &SyntaxState {
        &self.state
    }

    pub fn tree(&self) -> Option<&Tree> {
        self.tree.as_ref()
    }

    /// Whether the tree is a parse of the last synced text (no parse under
    /// way, no edit waiting for one).
    pub fn settled(&self) -> bool {
        self.background.is_none() && (self.fresh || !matches!(self.state, SyntaxState::Ready))
    }

    /// Parses `rope` again, from the (edited) tree: here for a small
    /// document, on a worker thread for a big one (one at a time).
    fn reparse(&mut self) {
        if self.fresh || self.background.is_some() {
            return;
        }
        let Some(h) = &self.highlighter else { return };
        if self.rope.len_bytes() <= BACKGROUND_ABOVE_BYTES
            && let Some(parser) = &mut self.parser
        {
            self.tree = parse(parser, &self.rope, self.tree.as_ref());
            self.fresh = true;
            self.settle_state();
            return;
        }
        let (tx, rx) = mpsc::channel();
        let (version, rope, old) = (self.version, self.rope.clone(), self.tree.clone());
        let language = h.language.clone();
        let spawned = std::thread::Builder::new()
            .name("cocode-parse".into())
            .spawn(move || {
                let mut parser = Parser::new();
                let tree = parser
                    .set_language(&language)
                    .ok()
                    .and_then(|()| parse(&mut parser, &rope, old.as_ref()));
                let _ = tx.send((version, rope, tree));
            });
        match spawned {
            Ok(_) => self.background = Some(rx),
            Err(e) => self.state = SyntaxState::Plain(format!("cannot start the parser: {e}")),
        }
    }

    fn settle_state(&mut self) {
        self.state = if self.tree.is_some() {
            SyntaxState::Ready
        } else {
            SyntaxState::Plain("the parser gave up on this file".into())
        };
    }

    /// Brings the tree up to `doc`'s text: the change sets since the last
    /// sync become tree edits at once (so colours stay where their text
    /// is), then a reparse — here for a small document, on a worker thread
    /// for a big one. Picks up a finished worker parse. Cheap when nothing
    /// changed.
    pub fn sync(&mut self, doc: &Document) {
        if self.highlighter.is_none() || self.parser.is_none() {
            return;
        }
        if let Some(rx) = &self.background {
            match rx.try_recv() {
                Ok((version, rope, tree)) => {
                    self.background = None;
                    self.tree = tree;
                    self.version = version;
                    self.rope = rope;
                    self.fresh = true;
                    self.settle_state();
                    if self.tree.is_none() {
                        return;
                    }
                }
                Err(mpsc::TryRecvError::Empty) => {}
                Err(mpsc::TryRecvError::Disconnected) => {
                    self.background = None;
                    self.state = SyntaxState::Plain("the parser stopped".into());
                    return;
                }
            }
        }
        if doc.version() != self.version {
            match (doc.changes_since(self.version), self.tree.as_mut()) {
                (Some(sets), Some(tree)) => {
                    for set in &sets {
                        for edit in input_edits(&mut self.rope, set) {
                            tree.edit(&edit);
                        }
                    }
                }
                // Too far behind to replay (or nothing parsed yet): parse
                // from scratch.
                _ => self.tree = None,
            }
            self.rope = doc.rope().clone();
            self.version = doc.version();
            self.fresh = false;
        }
        self.reparse();
    }

    /// The coloured spans within `bytes` of the synced text, in order and
    /// not overlapping (an inner capture wins over the one around it; for
    /// one node, the query's last matching pattern wins).
    pub fn highlights(&self, bytes: Range<usize>) -> Vec<(Range<usize>, Highlight)> {
        let (Some(tree), Some(h)) = (&self.tree, &self.highlighter) else {
            return Vec::new();
        };
        let rope = &self.rope;
        let end = bytes.end.min(rope.len_bytes());
        let start = bytes.start.min(end);
        if start == end {
            return Vec::new();
        }
        let mut cursor = QueryCursor::new();
        cursor.set_byte_range(start..end);
        let text = |node: Node<'_>| {
            let r = node.byte_range();
            rope.byte_slice(r.start.min(rope.len_bytes())..r.end.min(rope.len_bytes()))
                .chunks()
                .map(str::as_bytes)
        };
        let mut found: Vec<(usize, usize, usize, Highlight)> = Vec::new();
        // The query runs on each top-level node that meets the range, not on
        // the root: a flat file's root has tens of thousands of children,
        // and a cursor on the root steps over each of them.
        let root = tree.root_node();
        let mut walk = root.walk();
        let mut tops = Vec::new();
        if walk.goto_first_child_for_byte(start).is_some() {
            loop {
                let node = walk.node();
                if node.start_byte() >= end {
                    break;
                }
                tops.push(node);
                if !walk.goto_next_sibling() {
                    break;
                }
            }
        }
        if tops.is_empty() {
            tops.push(root);
        }
        for top in tops {
            let mut captures = cursor.captures(&h.query, top, text);
            while let Some((m, index)) = captures.next() {
                let capture = m.captures()[*index];
                if let Some(Some(kind)) = h.kinds.get(capture.index as usize) {
                    let r = capture.node.byte_range();
                    found.push((r.start, r.end, m.pattern_index, *kind));
                }
            }
        }
        // Paint outer before inner, and for one range in pattern order: the
        // grammars' queries put general patterns first and the specific ones
        // that refine them later (as their own `tree-sitter.json` orders
        // TypeScript after JavaScript and C++ after C), so the later wins.
        found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        let mut paint: Vec<Option<Highlight>> = vec![None; end - start];
        for (a, b, _, kind) in found {
            let (a, b) = (a.max(start), b.min(end));
            for slot in paint
                .iter_mut()
                .take(b.saturating_sub(start))
                .skip(a.saturating_sub(start))
            {
                *slot = Some(kind);
            }
        }
        let mut spans: Vec<(Range<usize>, Highlight)> = Vec::new();
        for (i, kind) in paint.into_iter().enumerate() {
            let Some(kind) = kind else { continue };
            let at = start + i;
            match spans.last_mut() {
                Some((r, k)) if r.end == at && *k == kind => r.end = at + 1,
                _ => spans.push((at..at + 1, kind)),
            }
        }
        spans
    }
}

fn parse(parser: &mut Parser, rope: &Rope, old: Option<&Tree>) -> Option<Tree> {
    let len = rope.len_bytes();
    parser.parse_with_options(
        &mut |byte: usize, _: Point| -> &[u8] {
            if byte >= len {
                return &[];
            }
            let (chunk, chunk_start, _, _) = rope.chunk_at_byte(byte);
            &chunk.as_bytes()[byte - chunk_start..]
        },
        old,
        None,
    )
}

fn point(rope: &Rope, byte: usize) -> Point {
    let line = rope.byte_to_line(byte);
    Point::new(line, byte - rope.line_to_byte(line))
}

/// The tree edits of a change set, applying it to `rope` (the text the
/// tree describes) along the way.
pub fn input_edits(rope: &mut Rope, set: &ChangeSet) -> Vec<InputEdit> {
    let mut edits = Vec::with_capacity(set.changes().len());
    let mut shift = 0isize;
    for c in set.changes() {
        let start = c.start.saturating_add_signed(shift).min(rope.len_chars());
        let old_end = c.end.saturating_add_signed(shift).min(rope.len_chars());
        let start_byte = rope.char_to_byte(start);
        let old_end_byte = rope.char_to_byte(old_end);
        let start_position = point(rope, start_byte);
        let old_end_position = point(rope, old_end_byte);
        if old_end > start {
            rope.remove(start..old_end);
        }
        if !c.text.is_empty() {
            rope.insert(start, &c.text);
        }
        let inserted = c.text.chars().count();
        let new_end_byte = rope.char_to_byte(start + inserted);
        edits.push(InputEdit {
            start_byte,
            old_end_byte,
            new_end_byte,
            start_position,
            old_end_position,
            new_end_position: point(rope, new_end_byte),
        });
        shift += isize::try_from(inserted).unwrap_or(isize::MAX)
            - isize::try_from(c.end - c.start).unwrap_or(isize::MAX);
    }
    edits
}
