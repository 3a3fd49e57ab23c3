//! Module rules inside one crate (the app): which top-level modules a
//! module may use, and no cycle between its files; and the words rule:
//! no `{:?}` in the format strings of user-facing files.
//!
//! A file is one module (`window/views/agent.rs` is `window::views::agent`;
//! `lib.rs` is the crate root, `main.rs` a separate binary and exempt). An
//! edge runs from a file to the file of every item it names — through
//! `crate::`, `super::`, `self::`, a child module's name, or a `use` that
//! imports a module. Test code is exempt.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use syn::spanned::Spanned as _;
use syn::visit::Visit;

use crate::boundaries::{Finding, Rule, flatten_use, has_cfg_test, path_segments, skip_test_items};

/// `modules:` in `boundaries.yaml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleRules {
    /// The crate's `src` folder, relative to the repository root.
    pub root: PathBuf,
    /// Each top-level module and the other top-level modules it may use.
    pub may_use: BTreeMap<String, Vec<String>>,
}

/// A module path (`["window", "views", "agent"]`).
type ModPath = Vec<String>;

/// The module a file under `root` is, or `None` for a file outside it and
/// for `main.rs`.
fn module_of(root: &Path, file: &Path) -> Option<ModPath> {
    let rel = file.strip_prefix(root).ok()?;
    let mut parts: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    match stem {
        "main" if parts.is_empty() => return None,
        "lib" if parts.is_empty() => {}
        "mod" => {}
        _ => parts.push(stem.to_owned()),
    }
    Some(parts)
}

/// One reference from a file: where it points and on which line.
struct Reference {
    path: ModPath,
    line: usize,
}

/// Collects every path a file names outside its test code, with `use`
/// imports of modules remembered as aliases.
struct Collector {
    uses: Vec<(Vec<String>, Option<String>, usize)>,
    paths: Vec<(Vec<String>, usize)>,
}

impl<'ast> Visit<'ast> for Collector {
    skip_test_items!('ast);
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if has_cfg_test(&u.attrs) {
            return;
        }
        let line = u.span().start().line;
        for (path, rename) in flatten_use(&u.tree) {
            self.uses.push((path, rename, line));
        }
    }
    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.paths
            .push((path_segments(path), path.span().start().line));
        syn::visit::visit_path(self, path);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // `format!("{}", crate::x::f())`: paths inside macro bodies count.
        collect_token_paths(&m.tokens, &mut self.paths);
        syn::visit::visit_macro(self, m);
    }
}

fn collect_token_paths(tokens: &proc_macro2::TokenStream, out: &mut Vec<(Vec<String>, usize)>) {
    let mut current: Vec<String> = Vec::new();
    let mut line = 0;
    let mut colons = 0;
    let mut flush = |current: &mut Vec<String>, line: usize| {
        if current.len() > 1 {
            out.push((std::mem::take(current), line));
        }
        current.clear();
    };
    let mut nested = Vec::new();
    for tt in tokens.clone() {
        match tt {
            proc_macro2::TokenTree::Ident(ident) => {
                if colons != 2 {
                    flush(&mut current, line);
                    line = ident.span().start().line;
                }
                current.push(ident.to_string());
                colons = 0;
            }
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ':' => colons += 1,
            proc_macro2::TokenTree::Group(g) => {
                flush(&mut current, line);
                colons = 0;
                nested.push(g.stream());
            }
            proc_macro2::TokenTree::Punct(_) | proc_macro2::TokenTree::Literal(_) => {
                flush(&mut current, line);
                colons = 0;
            }
        }
    }
    flush(&mut current, line);
    for stream in nested {
        collect_token_paths(&stream, out);
    }
}

/// Resolves `segments` written in module `here` to a crate-absolute path,
/// or `None` for a path outside the crate (std, other crates, locals).
fn resolve(
    here: &[String],
    segments: &[String],
    modules: &BTreeSet<ModPath>,
    aliases: &BTreeMap<String, ModPath>,
) -> Option<ModPath> {
    let first = segments.first()?;
    match first.as_str() {
        "crate" => Some(segments[1..].to_vec()),
        "self" => Some(here.iter().chain(&segments[1..]).cloned().collect()),
        "super" => {
            let mut base = here.to_vec();
            let mut rest = segments;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
            Some(base.into_iter().chain(rest.iter().cloned()).collect())
        }
        _ => {
            if let Some(target) = aliases.get(first) {
                return Some(target.iter().chain(&segments[1..]).cloned().collect());
            }
            let mut child = here.to_vec();
            child.push(first.clone());
            modules
                .contains(&child)
                .then(|| here.iter().chain(segments).cloned().collect())
        }
    }
}

/// The module (file) a crate-absolute path lands in: its longest prefix
/// that is a module.
fn file_module(path: &[String], modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
}

/// Every reference of one file (module `here`) into the crate.
fn references_of(here: &[String], file: &syn::File, modules: &BTreeSet<ModPath>) -> Vec<Reference> {
    let mut collector = Collector {
        uses: Vec::new(),
        paths: Vec::new(),
    };
    collector.visit_file(file);
    let mut aliases = BTreeMap::new();
    let mut references = Vec::new();
    for (segments, rename, line) in &collector.uses {
        let Some(resolved) = resolve(here, segments, modules, &BTreeMap::new()) else {
            continue;
        };
        if let Some(name) = rename.clone().or_else(|| segments.last().cloned())
            && name != "_"
        {
            aliases.insert(name, resolved.clone());
        }
        references.push(Reference {
            path: resolved,
            line: *line,
        });
    }
    for (segments, line) in &collector.paths {
        if let Some(resolved) = resolve(here, segments, modules, &aliases) {
            references.push(Reference {
                path: resolved,
                line: *line,
            });
        }
    }
    references
}

/// Checks the module rules over the crate's parsed, non-test files.
pub fn check(rules: &ModuleRules, files: &[(&Path, &syn::File)]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let in_crate: Vec<(ModPath, &Path, &syn::File)> = files
        .iter()
        .filter_map(|(path, file)| module_of(&rules.root, path).map(|m| (m, *path, *file)))
        .collect();
    let modules: BTreeSet<ModPath> = in_crate.iter().map(|(m, _, _)| m.clone()).collect();
    let file_of: BTreeMap<&ModPath, &Path> = in_crate.iter().map(|(m, p, _)| (m, *p)).collect();
    let mut edges: BTreeMap<ModPath, BTreeMap<ModPath, usize>> = BTreeMap::new();
    for (here, path, file) in &in_crate {
        let references = references_of(here, file, &modules);
        let top = here.first();
        if let Some(top) = top
            && !rules.may_use.contains_key(top)
        {
            findings.push(Finding {
                file: path.to_path_buf(),
                line: 1,
                rule: Rule::ModuleLayer,
                what: format!("module `{top}` has no entry in boundaries.yaml's module rules"),
            });
        }
        for reference in references {
            let Some(target) = file_module(&reference.path, &modules) else {
                continue;
            };
            if &target == here {
                continue;
            }
            if let (Some(top), Some(target_top)) = (top, target.first())
                && top != target_top
                && rules
                    .may_use
                    .get(top)
                    .is_some_and(|allowed| !allowed.contains(target_top))
            {
                findings.push(Finding {
                    file: path.to_path_buf(),
                    line: reference.line,
                    rule: Rule::ModuleLayer,
                    what: format!(
                        "`{top}` may not use `{target_top}` (`crate::{}`)",
                        reference.path.join("::")
                    ),
                });
            }
            edges
                .entry(here.clone())
                .or_default()
                .entry(target)
                .or_insert(reference.line);
        }
    }
    for cycle in cycles(&modules, &edges) {
        let first = &cycle[0];
        let next = &cycle[1 % cycle.len()];
        let line = edges
            .get(first)
            .and_then(|e| e.get(next))
            .copied()
            .unwrap_or(1);
        let names: Vec<String> = cycle
            .iter()
            .chain(std::iter::once(first))
            .map(|m| {
                file_of
                    .get(m)
                    .map_or_else(|| m.join("::"), |p| p.display().to_string())
            })
            .collect();
        findings.push(Finding {
            file: file_of
                .get(first)
                .map_or_else(PathBuf::new, |p| p.to_path_buf()),
            line,
            rule: Rule::ModuleCycle,
            what: names.join(" → "),
        });
    }
    findings
}

/// The strongly connected components of more than one module, each as a
/// cycle through them (Tarjan, then a walk inside the component).
fn cycles(
    modules: &BTreeSet<ModPath>,
    edges: &BTreeMap<ModPath, BTreeMap<ModPath, usize>>,
) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModPath, BTreeMap<ModPath, usize>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        next: usize,
        components: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a ModPath) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(out) = s.edges.get(v) {
            for w in out.keys() {
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.components.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        components: Vec::new(),
    };
    for m in modules {
        if !state.index.contains_key(m) {
            visit(&mut state, m);
        }
    }
    // Name one concrete cycle per component: from its first module, follow
    // edges inside the component until a module repeats.
    state
        .components
        .into_iter()
        .map(|component| {
            let members: BTreeSet<&ModPath> = component.iter().collect();
            let mut path = vec![component[0].clone()];
            loop {
                let last = &path[path.len() - 1];
                let Some(next) = edges
                    .get(last)
                    .and_then(|e| e.keys().find(|k| members.contains(k)))
                else {
                    return path;
                };
                if let Some(at) = path.iter().position(|p| p == next) {
                    return path.split_off(at);
                }
                path.push(next.clone());
            }
        })
        .collect()
}

/// The Debug placeholders (`{:?}`, `{x:#?}`, `{:x?}`) of a format string.
pub fn debug_placeholders(format: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut chars = format.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        match c {
            '{' if chars.peek().is_some_and(|(_, n)| *n == '{') => {
                chars.next();
            }
            '{' => {
                let mut end = None;
                for (i, n) in chars.by_ref() {
                    if n == '}' {
                        end = Some(i);
                        break;
                    }
                }
                let Some(end) = end else { break };
                let inner = &format[start + 1..end];
                if inner
                    .split_once(':')
                    .is_some_and(|(_, spec)| spec.ends_with('?'))
                {
                    found.push(format[start..=end].to_owned());
                }
            }
            _ => {}
        }
    }
    found
}

/// Macros whose format string a person reads (logging macros are exempt).
const WORDS_MACROS: [&str; 10] = [
    "format", "write", "writeln", "print", "println", "eprint", "eprintln", "anyhow", "bail",
    "ensure",
];

/// Finds Debug placeholders in the format strings of user-facing macros.
pub fn check_words(path: &Path, file: &syn::File) -> Vec<Finding> {
    struct Words<'a> {
        path: &'a Path,
        findings: Vec<Finding>,
    }
    impl<'ast> Visit<'ast> for Words<'_> {
        skip_test_items!('ast);
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            let name = m.path.segments.last().map(|s| s.ident.to_string());
            if name.is_some_and(|n| WORDS_MACROS.contains(&n.as_str())) {
                for tt in m.tokens.clone() {
                    let proc_macro2::TokenTree::Literal(lit) = tt else {
                        continue;
                    };
                    let Ok(syn::Lit::Str(s)) = syn::parse_str::<syn::Lit>(&lit.to_string()) else {
                        continue;
                    };
                    for placeholder in debug_placeholders(&s.value()) {
                        self.findings.push(Finding {
                            file: self.path.to_path_buf(),
                            line: lit.span().start().line,
                            rule: Rule::DebugInUserText,
                            what: format!(
                                "`{placeholder}` shows Rust Debug to a person; write words (a phrase, `.display()`, quotes)"
                            ),
                        });
                    }
                }
            }
            syn::visit::visit_macro(self, m);
        }
    }
    let mut words = Words {
        path,
        findings: Vec::new(),
    };
    words.visit_file(file);
    words.findings
}

#[cfg(test)]
#[path = "modules_tests.rs"]
mod tests;
