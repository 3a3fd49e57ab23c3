//! ⑤ parse check: format parsers by file extension. Serde parsers for JSON,
//! TOML and YAML; tree-sitter grammars for Rust, Python, JavaScript,
//! TypeScript and TSX (a file fails when its tree has error or missing
//! nodes); an extension with no parser is `no_registered_parser`.

use std::sync::Arc;

use cocode_core::registry::{FileFormatParserRegistry, RegistryError};
use cocode_core::services::{FileFormatParser, ParseCheck};
use serde::Deserialize as _;

fn verdict(ok: bool) -> ParseCheck {
    if ok {
        ParseCheck::Ok
    } else {
        ParseCheck::Errors { count: 1 }
    }
}

/// JSON (`serde_json`; comments and trailing commas are errors).
#[derive(Debug, Default)]
pub struct JsonParser;

impl FileFormatParser for JsonParser {
    fn extensions(&self) -> &[&'static str] {
        &["json"]
    }
    fn check(&self, content: &[u8]) -> ParseCheck {
        verdict(serde_json::from_slice::<serde::de::IgnoredAny>(content).is_ok())
    }
}

/// TOML 1.0.
#[derive(Debug, Default)]
pub struct TomlParser;

impl FileFormatParser for TomlParser {
    fn extensions(&self) -> &[&'static str] {
        &["toml"]
    }
    fn check(&self, content: &[u8]) -> ParseCheck {
        let ok =
            std::str::from_utf8(content).is_ok_and(|t| toml::from_str::<toml::Table>(t).is_ok());
        verdict(ok)
    }
}

/// YAML (every document of a multi-document stream).
#[derive(Debug, Default)]
pub struct YamlParser;

impl FileFormatParser for YamlParser {
    fn extensions(&self) -> &[&'static str] {
        &["yaml", "yml"]
    }
    fn check(&self, content: &[u8]) -> ParseCheck {
        let Ok(text) = std::str::from_utf8(content) else {
            return ParseCheck::Errors { count: 1 };
        };
        // After a syntax error the document stream cannot resynchronise
        // (it would yield the same error forever): the first one decides.
        for doc in serde_yaml_ng::Deserializer::from_str(text) {
            if serde_yaml_ng::Value::deserialize(doc).is_err() {
                return ParseCheck::Errors { count: 1 };
            }
        }
        ParseCheck::Ok
    }
}

/// A tree-sitter grammar as a parse check. Only mature grammars are
/// registered: a grammar gap would fail a correct file.
pub struct TreeSitterParser {
    name: &'static str,
    extensions: &'static [&'static str],
    language: tree_sitter::Language,
}

impl std::fmt::Debug for TreeSitterParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeSitterParser")
            .field("name", &self.name)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

impl TreeSitterParser {
    /// The grammar, if this build's tree-sitter can load it (its ABI is
    /// checked here, once, not on every file).
    pub fn new(
        name: &'static str,
        extensions: &'static [&'static str],
        language: tree_sitter::Language,
    ) -> Option<Self> {
        tree_sitter::Parser::new().set_language(&language).ok()?;
        Some(Self {
            name,
            extensions,
            language,
        })
    }

    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl FileFormatParser for TreeSitterParser {
    fn extensions(&self) -> &[&'static str] {
        self.extensions
    }

    /// Counts the syntax errors: each outermost `ERROR` node, and each
    /// token the parser had to assume (`MISSING`).
    fn check(&self, content: &[u8]) -> ParseCheck {
        let mut parser = tree_sitter::Parser::new();
        let tree = match parser.set_language(&self.language) {
            Ok(()) => parser.parse(content, None),
            Err(_) => None,
        };
        // `new` loaded the grammar and no time limit is set, so there is
        // always a tree; without one the file cannot be called valid.
        let Some(tree) = tree else {
            return ParseCheck::Errors { count: 1 };
        };
        if !tree.root_node().has_error() {
            return ParseCheck::Ok;
        }
        let mut count = 0u32;
        let mut cursor = tree.walk();
        'walk: loop {
            let node = cursor.node();
            let descend = if node.is_error() || node.is_missing() {
                count = count.saturating_add(1);
                false
            } else {
                node.has_error()
            };
            if descend && cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        ParseCheck::Errors {
            count: count.max(1),
        }
    }
}

/// The tree-sitter grammars of the parse check.
pub fn grammars() -> Vec<TreeSitterParser> {
    [
        TreeSitterParser::new("Rust", &["rs"], tree_sitter_rust::LANGUAGE.into()),
        TreeSitterParser::new(
            "Python",
            &["py", "pyi"],
            tree_sitter_python::LANGUAGE.into(),
        ),
        TreeSitterParser::new(
            "JavaScript",
            &["js", "mjs", "cjs", "jsx"],
            tree_sitter_javascript::LANGUAGE.into(),
        ),
        TreeSitterParser::new(
            "TypeScript",
            &["ts", "mts", "cts"],
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        ),
        TreeSitterParser::new("TSX", &["tsx"], tree_sitter_typescript::LANGUAGE_TSX.into()),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The registry with every built-in parser.
pub fn builtin_registry() -> Result<FileFormatParserRegistry, RegistryError> {
    let mut registry = FileFormatParserRegistry::new();
    let mut parsers: Vec<Arc<dyn FileFormatParser>> = vec![
        Arc::new(JsonParser),
        Arc::new(TomlParser),
        Arc::new(YamlParser),
    ];
    for grammar in grammars() {
        parsers.push(Arc::new(grammar));
    }
    for parser in &parsers {
        registry.register(parser)?;
    }
    Ok(registry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn each_format_accepts_valid_and_rejects_broken_text() {
        let registry = builtin_registry().unwrap();
        let check =
            |name: &str, text: &str| registry.parser_for(name).map(|p| p.check(text.as_bytes()));
        assert_eq!(
            [
                check("a.json", "{\"a\": [1, 2]}"),
                check("a.json", "{\"a\": [1, 2,]}"),
                check("Cargo.TOML", "[package]\nname = \"x\""),
                check("c.toml", "[package\nname ="),
                check("ci.yml", "a: 1\n---\nb: [1, 2]\n"),
                check("ci.yaml", "a: [1, 2\n"),
                check("notes.txt", "free text"),
            ],
            [
                Some(ParseCheck::Ok),
                Some(ParseCheck::Errors { count: 1 }),
                Some(ParseCheck::Ok),
                Some(ParseCheck::Errors { count: 1 }),
                Some(ParseCheck::Ok),
                Some(ParseCheck::Errors { count: 1 }),
                None,
            ]
        );
        assert_eq!(
            registry.extensions(),
            vec![
                "cjs", "cts", "js", "json", "jsx", "mjs", "mts", "py", "pyi", "rs", "toml", "ts",
                "tsx", "yaml", "yml"
            ]
        );
    }

    #[test]
    fn every_grammar_loads_and_counts_the_syntax_errors_of_a_file() {
        assert_eq!(
            grammars()
                .iter()
                .map(TreeSitterParser::name)
                .collect::<Vec<_>>(),
            ["Rust", "Python", "JavaScript", "TypeScript", "TSX"]
        );
        let registry = builtin_registry().unwrap();
        let check =
            |name: &str, text: &str| registry.parser_for(name).unwrap().check(text.as_bytes());
        let cases = [
            (
                "lib.rs",
                "pub fn add(a: u8) -> u8 { a + 1 }\n// 한국어 주석\n",
                ParseCheck::Ok,
            ),
            (
                "lib.rs",
                "pub fn add(a: u8 -> u8 { a + }\n",
                ParseCheck::Errors { count: 2 },
            ),
            (
                "lib.rs",
                "fn a() { let x = 1 }\n",
                ParseCheck::Errors { count: 1 },
            ),
            (
                "app.py",
                "def f(x):\n    return [i for i in x]\n",
                ParseCheck::Ok,
            ),
            (
                "app.py",
                "def f(x)\n    return x\n",
                ParseCheck::Errors { count: 1 },
            ),
            (
                "app.mjs",
                "export const f = (a) => ({ a, ...b });\n",
                ParseCheck::Ok,
            ),
            (
                "app.js",
                "const f = (a => a;\n",
                ParseCheck::Errors { count: 1 },
            ),
            (
                "a.ts",
                "export function f<T>(x: T): T[] { return [x]; }\n",
                ParseCheck::Ok,
            ),
            ("a.ts", "let x: = 3;\n", ParseCheck::Errors { count: 1 }),
            (
                "view.tsx",
                "export const V = () => <div className=\"a\">{1}</div>;\n",
                ParseCheck::Ok,
            ),
            (
                "view.tsx",
                "export const V = () => <div>;\n",
                ParseCheck::Errors { count: 1 },
            ),
        ];
        for (name, text, expected) in cases {
            assert_eq!(check(name, text), expected, "{name}: {text}");
        }
    }
}
