//! `cocode bricks` and `cocode new`: the bricks on offer, and a new
//! workspace made from one.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{Context as _, bail};
use cocode_core::services::{BrickEngine, BrickVariableKind, ScaffoldRequest};

use crate::host::bricks::{catalog, user_bricks_dir};

/// `cocode bricks`: every brick with its variables and defaults.
pub fn list(out: &mut dyn Write) -> anyhow::Result<u8> {
    let (catalog, problems) = catalog()?;
    for brick in catalog.infos() {
        writeln!(out, "{} — {}", brick.name, brick.description)?;
        for var in &brick.variables {
            let kind = match var.kind {
                BrickVariableKind::String => match &var.pattern {
                    Some(p) => format!("text matching {p}"),
                    None => "text".to_owned(),
                },
                BrickVariableKind::Bool => "true|false".to_owned(),
                BrickVariableKind::Integer => "integer".to_owned(),
                BrickVariableKind::Choice => var.choices.join("|"),
            };
            let default = match var.default.as_deref() {
                None => "required".to_owned(),
                Some(d) if d.contains("{{") => "default derived from the folder name".to_owned(),
                Some(d) => format!("default {d}"),
            };
            writeln!(
                out,
                "  {} ({kind}; {default}) {}",
                var.name, var.description
            )?;
        }
    }
    if let Some(dir) = user_bricks_dir() {
        writeln!(out, "your bricks folder: {}", dir.display())?;
    }
    for problem in &problems {
        writeln!(out, "not loaded: {problem}")?;
    }
    Ok(0)
}

/// Parses `NAME=VALUE` arguments.
pub fn parse_vars(vars: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut parsed = BTreeMap::new();
    for var in vars {
        let Some((name, value)) = var.split_once('=') else {
            bail!("--var “{var}”: expected NAME=VALUE");
        };
        if parsed.insert(name.to_owned(), value.to_owned()).is_some() {
            bail!("--var {name} is given twice");
        }
    }
    Ok(parsed)
}

/// `cocode new DEST --brick NAME [--var NAME=VALUE]…`.
pub fn new_workspace(
    dest: &Path,
    brick: &str,
    vars: &[String],
    root: &crate::host::root::HostRoot,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let variables = parse_vars(vars)?;
    let destination =
        std::path::absolute(dest).with_context(|| format!("resolving {}", dest.display()))?;
    let (catalog, problems) = catalog()?;
    for problem in &problems {
        writeln!(out, "not loaded: {problem}")?;
    }
    let made = root.runtime().block_on(async {
        let engine = root.bricks(catalog);
        let req = ScaffoldRequest {
            brick: brick.to_owned(),
            destination,
            variables,
        };
        anyhow::Ok(engine.scaffold(req).await?)
    })?;
    writeln!(
        out,
        "created {} from {brick}; open it with: cocode open {}",
        made.display(),
        made.display()
    )?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn variables_are_name_value_pairs_given_once() {
        let vars = |v: &[&str]| parse_vars(&v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(
            vars(&["a=1", "b=x=y", "c="]).unwrap(),
            BTreeMap::from([
                ("a".to_owned(), "1".to_owned()),
                ("b".to_owned(), "x=y".to_owned()),
                ("c".to_owned(), String::new()),
            ])
        );
        assert_eq!(
            vars(&["a"]).unwrap_err().to_string(),
            "--var “a”: expected NAME=VALUE"
        );
        assert_eq!(
            vars(&["a=1", "a=2"]).unwrap_err().to_string(),
            "--var a is given twice"
        );
    }
}
