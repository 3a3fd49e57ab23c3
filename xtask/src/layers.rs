//! `cargo xtask layers`: the crate ladder from `dependency_layers.yaml`,
//! checked against `cargo metadata`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use cargo_metadata::{DependencyKind, MetadataCommand};
use serde::Deserialize;

use crate::source_files;

/// `dependency_layers.yaml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayersConfig {
    pub layers: Vec<Layer>,
    #[serde(default)]
    pub same_layer: Vec<Edge>,
    #[serde(default)]
    pub unlayered: Vec<String>,
    #[serde(default)]
    pub external_only_in: Vec<OnlyIn>,
    #[serde(default)]
    pub forbidden_external: Vec<Forbidden>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    pub name: String,
    pub crates: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnlyIn {
    #[serde(rename = "crate")]
    pub krate: String,
    pub allowed: Vec<String>,
    pub reason: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Forbidden {
    pub crates: Vec<String>,
    pub forbid: Vec<String>,
    pub reason: String,
}

/// The kind of a declared dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Normal,
    Dev,
    Build,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Normal => "normal",
            Self::Dev => "dev",
            Self::Build => "build",
        })
    }
}

/// A dependency a member declares on another member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberDep {
    pub package: String,
    /// The name the code uses (`cocode_core`, or the rename).
    pub ident: String,
    pub kind: Kind,
    pub target: Option<String>,
}

/// A workspace member.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    pub root: PathBuf,
    pub deps: Vec<MemberDep>,
    pub lints_workspace: bool,
    /// Names used by `dep.workspace = true` entries.
    pub inherited_deps: BTreeSet<String>,
}

/// What the check needs from a workspace.
#[derive(Debug, Clone)]
pub struct WorkspaceGraph {
    pub members: Vec<Member>,
    /// Normal and build edges of the resolved graph, by package name.
    pub resolved: BTreeMap<String, BTreeSet<String>>,
    /// Keys of `[workspace.dependencies]`.
    pub workspace_dependencies: BTreeSet<String>,
}

/// One broken rule, with the offending path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation(pub String);

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads the config and the workspace at `root`, returns every violation.
pub fn run(root: &Path) -> Result<Vec<Violation>> {
    let config_path = root.join("dependency_layers.yaml");
    let text = std::fs::read_to_string(&config_path)
        .with_context(|| format!("reading {}", config_path.display()))?;
    let config: LayersConfig = serde_yaml_ng::from_str(&text)
        .with_context(|| format!("parsing {}", config_path.display()))?;
    let graph = load_graph(root)?;
    Ok(check(&config, &graph, &|member, ident, kind| {
        uses_ident(member, ident, kind)
    }))
}

/// Builds the graph from `cargo metadata` and the manifests.
pub fn load_graph(root: &Path) -> Result<WorkspaceGraph> {
    let metadata = MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .exec()
        .context("running cargo metadata")?;
    let member_ids: BTreeSet<_> = metadata.workspace_members.iter().collect();
    let names: BTreeMap<_, _> = metadata
        .packages
        .iter()
        .map(|p| (p.id.clone(), p.name.to_string()))
        .collect();
    let member_names: BTreeSet<String> = metadata
        .packages
        .iter()
        .filter(|p| member_ids.contains(&p.id))
        .map(|p| p.name.to_string())
        .collect();

    let mut members = Vec::new();
    for package in metadata
        .packages
        .iter()
        .filter(|p| member_ids.contains(&p.id))
    {
        let (lints_workspace, inherited_deps) = read_manifest(package.manifest_path.as_std_path())?;
        let deps = package
            .dependencies
            .iter()
            .filter(|d| member_names.contains(d.name.as_str()))
            .map(|d| MemberDep {
                package: d.name.clone(),
                ident: d
                    .rename
                    .clone()
                    .unwrap_or_else(|| d.name.clone())
                    .replace('-', "_"),
                kind: match d.kind {
                    DependencyKind::Development => Kind::Dev,
                    DependencyKind::Build => Kind::Build,
                    _ => Kind::Normal,
                },
                target: d.target.as_ref().map(ToString::to_string),
            })
            .collect();
        members.push(Member {
            name: package.name.to_string(),
            root: package
                .manifest_path
                .parent()
                .map(|p| p.as_std_path().to_path_buf())
                .unwrap_or_default(),
            deps,
            lints_workspace,
            inherited_deps,
        });
    }

    let mut resolved: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    if let Some(resolve) = &metadata.resolve {
        for node in &resolve.nodes {
            let Some(from) = names.get(&node.id) else {
                continue;
            };
            let entry = resolved.entry(from.clone()).or_default();
            for dep in &node.deps {
                let shipped = dep
                    .dep_kinds
                    .iter()
                    .any(|k| matches!(k.kind, DependencyKind::Normal | DependencyKind::Build));
                if let (true, Some(to)) = (shipped, names.get(&dep.pkg)) {
                    entry.insert(to.clone());
                }
            }
        }
    }

    Ok(WorkspaceGraph {
        members,
        resolved,
        workspace_dependencies: workspace_dependencies(root)?,
    })
}

/// Keys of the root manifest's `[workspace.dependencies]`.
fn workspace_dependencies(root: &Path) -> Result<BTreeSet<String>> {
    let root_manifest: toml::Table = toml::from_str(
        &std::fs::read_to_string(root.join("Cargo.toml")).context("reading the root Cargo.toml")?,
    )
    .context("parsing the root Cargo.toml")?;
    Ok(root_manifest
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(toml::Value::as_table)
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default())
}

/// Whether a member manifest inherits the workspace lints, and the names it
/// takes from `[workspace.dependencies]`.
fn read_manifest(path: &Path) -> Result<(bool, BTreeSet<String>)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let manifest: toml::Table =
        toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let lints_workspace = manifest
        .get("lints")
        .and_then(|l| l.get("workspace"))
        .and_then(toml::Value::as_bool)
        == Some(true);
    let mut inherited = BTreeSet::new();
    let sections = ["dependencies", "dev-dependencies", "build-dependencies"];
    for section in sections {
        collect_inherited(manifest.get(section), &mut inherited);
    }
    if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
        for target in targets.values() {
            for section in sections {
                collect_inherited(target.get(section), &mut inherited);
            }
        }
    }
    Ok((lints_workspace, inherited))
}

fn collect_inherited(section: Option<&toml::Value>, out: &mut BTreeSet<String>) {
    let Some(table) = section.and_then(toml::Value::as_table) else {
        return;
    };
    for (name, spec) in table {
        if spec.get("workspace").and_then(toml::Value::as_bool) == Some(true) {
            out.insert(name.clone());
        }
    }
}

/// Whether the member's sources mention `ident` where a dependency of `kind`
/// may be used: `src/` and `build.rs` for normal and build dependencies,
/// anywhere in the package for dev-dependencies.
fn uses_ident(member: &Member, ident: &str, kind: Kind) -> bool {
    source_files(&member.root).into_iter().any(|file| {
        let relative = file.strip_prefix(&member.root).unwrap_or(&file);
        let in_scope = match kind {
            Kind::Dev => true,
            Kind::Normal => !["tests", "benches", "examples"]
                .iter()
                .any(|d| relative.starts_with(d)),
            Kind::Build => relative == Path::new("build.rs"),
        };
        in_scope && std::fs::read_to_string(&file).is_ok_and(|text| contains_word(&text, ident))
    })
}

fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        boundary(before) && boundary(after)
    })
}

/// Every violation of the ladder in `graph`.
pub fn check(
    config: &LayersConfig,
    graph: &WorkspaceGraph,
    uses: &dyn Fn(&Member, &str, Kind) -> bool,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let layer_of: BTreeMap<&str, (usize, &str)> = config
        .layers
        .iter()
        .enumerate()
        .flat_map(|(i, l)| {
            l.crates
                .iter()
                .map(move |c| (c.as_str(), (i, l.name.as_str())))
        })
        .collect();
    let unlayered: BTreeSet<&str> = config.unlayered.iter().map(String::as_str).collect();

    for member in &graph.members {
        if !layer_of.contains_key(member.name.as_str()) && !unlayered.contains(member.name.as_str())
        {
            out.push(Violation(format!(
                "{}: not assigned to a layer in dependency_layers.yaml",
                member.name
            )));
        }
        if !member.lints_workspace {
            out.push(Violation(format!(
                "{}: missing `[lints] workspace = true` in {}",
                member.name,
                member.root.join("Cargo.toml").display()
            )));
        }
        for dep in &member.deps {
            let target = dep
                .target
                .as_ref()
                .map(|t| format!(" [target {t}]"))
                .unwrap_or_default();
            let edge = format!("{} -> {} ({}{target})", member.name, dep.package, dep.kind);
            if unlayered.contains(dep.package.as_str()) {
                out.push(Violation(format!(
                    "{edge}: nothing may depend on tooling crate {}",
                    dep.package
                )));
                continue;
            }
            if let (Some((from, from_name)), Some((to, to_name))) = (
                layer_of.get(member.name.as_str()),
                layer_of.get(dep.package.as_str()),
            ) {
                let declared = config
                    .same_layer
                    .iter()
                    .any(|e| e.from == member.name && e.to == dep.package);
                if to > from {
                    out.push(Violation(format!(
                        "{edge}: {from_name} may not depend upward on {to_name}"
                    )));
                } else if to == from && !declared {
                    out.push(Violation(format!(
                        "{edge}: same-layer edge in {from_name} not declared in `same_layer`"
                    )));
                }
            }
            if !uses(member, &dep.ident, dep.kind) {
                out.push(Violation(format!(
                    "{edge}: declared but `{}` is never used",
                    dep.ident
                )));
            }
        }
    }

    for edge in &config.same_layer {
        let exists = graph
            .members
            .iter()
            .any(|m| m.name == edge.from && m.deps.iter().any(|d| d.package == edge.to));
        if !exists {
            out.push(Violation(format!(
                "same_layer edge {} -> {} is declared but does not exist",
                edge.from, edge.to
            )));
        }
    }

    let inherited: BTreeSet<&String> = graph
        .members
        .iter()
        .flat_map(|m| &m.inherited_deps)
        .collect();
    for dep in &graph.workspace_dependencies {
        if !inherited.contains(dep) {
            out.push(Violation(format!(
                "[workspace.dependencies] {dep}: declared but no crate uses it"
            )));
        }
    }

    out.extend(find_cycles(graph));
    out.extend(check_externals(config, graph));
    out
}

fn find_cycles(graph: &WorkspaceGraph) -> Vec<Violation> {
    let edges: BTreeMap<&str, Vec<&str>> = graph
        .members
        .iter()
        .map(|m| {
            (
                m.name.as_str(),
                m.deps.iter().map(|d| d.package.as_str()).collect(),
            )
        })
        .collect();
    let mut reported = BTreeSet::new();
    let mut out = Vec::new();
    for start in edges.keys() {
        let mut stack = vec![(*start, vec![*start])];
        let mut seen = BTreeSet::new();
        while let Some((node, path)) = stack.pop() {
            for next in edges.get(node).into_iter().flatten() {
                if next == start {
                    let mut cycle = path.clone();
                    cycle.push(next);
                    let mut key: Vec<&str> = cycle[..cycle.len() - 1].to_vec();
                    key.sort_unstable();
                    if reported.insert(key) {
                        out.push(Violation(format!(
                            "dependency cycle: {}",
                            cycle.join(" -> ")
                        )));
                    }
                } else if seen.insert(*next) {
                    let mut longer = path.clone();
                    longer.push(next);
                    stack.push((next, longer));
                }
            }
        }
    }
    out
}

/// The path from `from` to `target` through shipped edges, if any.
fn path_to(graph: &WorkspaceGraph, from: &str, target: &str) -> Option<Vec<String>> {
    let mut queue = std::collections::VecDeque::from([vec![from.to_owned()]]);
    let mut seen = BTreeSet::from([from.to_owned()]);
    while let Some(path) = queue.pop_front() {
        let last = path.last().cloned().unwrap_or_default();
        if last == target && path.len() > 1 {
            return Some(path);
        }
        for next in graph.resolved.get(&last).into_iter().flatten() {
            if seen.insert(next.clone()) || next == target {
                let mut longer = path.clone();
                longer.push(next.clone());
                queue.push_back(longer);
            }
        }
    }
    None
}

fn check_externals(config: &LayersConfig, graph: &WorkspaceGraph) -> Vec<Violation> {
    let mut out = Vec::new();
    for member in &graph.members {
        for rule in &config.external_only_in {
            if rule.allowed.contains(&member.name) {
                continue;
            }
            if let Some(path) = path_to(graph, &member.name, &rule.krate) {
                out.push(Violation(format!(
                    "{}: reaches {} ({}): {}",
                    member.name,
                    rule.krate,
                    rule.reason,
                    path.join(" -> ")
                )));
            }
        }
        for rule in config
            .forbidden_external
            .iter()
            .filter(|r| r.crates.contains(&member.name))
        {
            for krate in &rule.forbid {
                if let Some(path) = path_to(graph, &member.name, krate) {
                    out.push(Violation(format!(
                        "{}: reaches forbidden {} ({}): {}",
                        member.name,
                        krate,
                        rule.reason,
                        path.join(" -> ")
                    )));
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "layers_tests.rs"]
mod tests;
