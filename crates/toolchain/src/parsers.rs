//! ⑤ parse check: format parsers by file extension. Serde parsers for JSON,
//! TOML and YAML; an extension with no parser is `no_registered_parser`.
//! (Tree-sitter grammars for source files join the registry with the
//! editor's syntax work.)

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

/// The registry with every built-in parser.
pub fn builtin_registry() -> Result<FileFormatParserRegistry, RegistryError> {
    let mut registry = FileFormatParserRegistry::new();
    let parsers: [Arc<dyn FileFormatParser>; 3] = [
        Arc::new(JsonParser),
        Arc::new(TomlParser),
        Arc::new(YamlParser),
    ];
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
                check("main.rs", "fn main() {}"),
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
        assert_eq!(registry.extensions(), vec!["json", "toml", "yaml", "yml"]);
    }
}
