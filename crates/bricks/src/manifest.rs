//! `brick.toml`: a brick's name, description, variables and hooks.

use std::collections::BTreeSet;

use cocode_core::services::{BrickVariable, BrickVariableKind};
use serde::Deserialize;

/// The variable every template may use without declaring it: the
/// destination folder's name.
pub const FOLDER_NAME: &str = "folder_name";

/// A parsed and checked `brick.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub name: String,
    /// Recorded in the new workspace's `applied_bricks`; `1` when absent.
    pub version: String,
    pub description: String,
    pub variables: Vec<BrickVariable>,
    pub hooks: Hooks,
}

/// Commands run in the staging folder: `pre` before the template files are
/// written, `post` after. Each is an argv whose items are templates too.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hooks {
    #[serde(default)]
    pub pre: Vec<Vec<String>>,
    #[serde(default)]
    pub post: Vec<Vec<String>>,
    /// Per hook; 300 s when absent.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: String,
    #[serde(default)]
    version: Option<String>,
    description: String,
    #[serde(default)]
    variables: Vec<RawVariable>,
    #[serde(default)]
    hooks: Hooks,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariable {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(rename = "type", default)]
    kind: BrickVariableKind,
    default: Option<String>,
    pattern: Option<String>,
    #[serde(default)]
    choices: Vec<String>,
}

/// Why a `brick.toml` is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error("brick.toml is not valid: {0}")]
    Syntax(String),
    #[error("brick name {0:?} must be lower-case letters, digits and '-'")]
    Name(String),
    #[error(
        "variable {0:?} must be an identifier (letters, digits, '_', not starting with a digit)"
    )]
    VariableName(String),
    #[error("variable {0:?} is declared twice")]
    DuplicateVariable(String),
    #[error("variable name {FOLDER_NAME:?} is reserved")]
    ReservedVariable,
    #[error("variable {name:?}: pattern is not a valid regular expression: {message}")]
    Pattern { name: String, message: String },
    #[error("variable {0:?}: a choice variable needs at least one choice")]
    NoChoices(String),
    #[error("variable {0:?}: choices and pattern only apply to choice and string variables")]
    MisplacedConstraint(String),
    #[error("a hook has an empty command")]
    EmptyHook,
}

/// Parses and checks `brick.toml` text.
pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
    let raw: RawManifest =
        toml::from_str(text).map_err(|e| ManifestError::Syntax(e.to_string()))?;
    let name_ok = !raw.name.is_empty()
        && raw
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !name_ok {
        return Err(ManifestError::Name(raw.name));
    }
    let mut seen = BTreeSet::new();
    let mut variables = Vec::with_capacity(raw.variables.len());
    for v in raw.variables {
        if v.name == FOLDER_NAME {
            return Err(ManifestError::ReservedVariable);
        }
        if !is_identifier(&v.name) {
            return Err(ManifestError::VariableName(v.name));
        }
        if !seen.insert(v.name.clone()) {
            return Err(ManifestError::DuplicateVariable(v.name));
        }
        if let Some(pattern) = &v.pattern {
            if v.kind != BrickVariableKind::String {
                return Err(ManifestError::MisplacedConstraint(v.name));
            }
            regex::Regex::new(pattern).map_err(|e| ManifestError::Pattern {
                name: v.name.clone(),
                message: e.to_string(),
            })?;
        }
        match (v.kind, v.choices.is_empty()) {
            (BrickVariableKind::Choice, true) => return Err(ManifestError::NoChoices(v.name)),
            (BrickVariableKind::Choice, false) | (_, true) => {}
            (_, false) => return Err(ManifestError::MisplacedConstraint(v.name)),
        }
        variables.push(BrickVariable {
            name: v.name,
            description: v.description,
            kind: v.kind,
            default: v.default,
            pattern: v.pattern,
            choices: v.choices,
        });
    }
    if raw
        .hooks
        .pre
        .iter()
        .chain(&raw.hooks.post)
        .any(Vec::is_empty)
    {
        return Err(ManifestError::EmptyHook);
    }
    Ok(Manifest {
        name: raw.name,
        version: raw.version.unwrap_or_else(|| "1".to_owned()),
        description: raw.description,
        variables,
        hooks: raw.hooks,
    })
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_complete_manifest_parses_into_typed_variables_and_hooks() {
        let m = parse(
            r#"
name = "demo"
version = "2.1.0"
description = "A demo"
[[variables]]
name = "crate_name"
description = "Package name"
default = "{{ folder_name }}"
pattern = "^[a-z_]+$"
[[variables]]
name = "license"
type = "choice"
choices = ["MIT", "Apache-2.0"]
default = "MIT"
[[variables]]
name = "with_tests"
type = "bool"
default = "true"
[hooks]
post = [["git", "init", "-q"]]
timeout_secs = 20
"#,
        )
        .unwrap();
        assert_eq!(
            m,
            Manifest {
                name: "demo".into(),
                version: "2.1.0".into(),
                description: "A demo".into(),
                variables: vec![
                    BrickVariable {
                        name: "crate_name".into(),
                        description: "Package name".into(),
                        kind: BrickVariableKind::String,
                        default: Some("{{ folder_name }}".into()),
                        pattern: Some("^[a-z_]+$".into()),
                        choices: vec![],
                    },
                    BrickVariable {
                        name: "license".into(),
                        description: String::new(),
                        kind: BrickVariableKind::Choice,
                        default: Some("MIT".into()),
                        pattern: None,
                        choices: vec!["MIT".into(), "Apache-2.0".into()],
                    },
                    BrickVariable {
                        name: "with_tests".into(),
                        description: String::new(),
                        kind: BrickVariableKind::Bool,
                        default: Some("true".into()),
                        pattern: None,
                        choices: vec![],
                    },
                ],
                hooks: Hooks {
                    pre: vec![],
                    post: vec![vec!["git".into(), "init".into(), "-q".into()]],
                    timeout_secs: Some(20),
                },
            }
        );
    }

    #[test]
    fn broken_manifests_are_refused_with_the_reason() {
        let head = "name = \"x\"\ndescription = \"d\"\n";
        let cases = [
            (
                "name = \"X Y\"\ndescription = \"d\"\n",
                ManifestError::Name("X Y".into()),
            ),
            (
                &*format!("{head}[[variables]]\nname = \"1a\"\n"),
                ManifestError::VariableName("1a".into()),
            ),
            (
                &*format!("{head}[[variables]]\nname = \"a\"\n[[variables]]\nname = \"a\"\n"),
                ManifestError::DuplicateVariable("a".into()),
            ),
            (
                &*format!("{head}[[variables]]\nname = \"folder_name\"\n"),
                ManifestError::ReservedVariable,
            ),
            (
                &*format!("{head}[[variables]]\nname = \"a\"\ntype = \"choice\"\n"),
                ManifestError::NoChoices("a".into()),
            ),
            (
                &*format!("{head}[[variables]]\nname = \"a\"\ntype = \"bool\"\npattern = \"x\"\n"),
                ManifestError::MisplacedConstraint("a".into()),
            ),
            (
                &*format!("{head}[hooks]\npost = [[]]\n"),
                ManifestError::EmptyHook,
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse(text), Err(expected), "{text}");
        }
        assert!(matches!(
            parse(&format!(
                "{head}[[variables]]\nname = \"a\"\npattern = \"(\"\n"
            )),
            Err(ManifestError::Pattern { .. })
        ));
        assert!(matches!(
            parse(&format!("{head}colour = 1\n")),
            Err(ManifestError::Syntax(_))
        ));
    }
}
