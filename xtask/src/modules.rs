//! Module rules: which top-level modules of the app crate a module may
//! use, and no cycle between the files of any crate; and the words rule:
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

/// One name a `use` brings in: its path, its rename, whether it is a glob,
/// its line and the inline modules it sits in.
type UseItem = (Vec<String>, Option<String>, bool, usize, Vec<String>);

/// Collects every path a file names outside its test code, with `use`
/// imports of modules remembered as aliases. Each path keeps the inline
/// modules (`mod unix { … }`) it sits in, so that `super` inside one means
/// the file's own module.
struct Collector {
    inline: Vec<String>,
    uses: Vec<UseItem>,
    paths: Vec<(Vec<String>, usize, Vec<String>)>,
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if has_cfg_test(&m.attrs) {
            return;
        }
        self.inline.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.inline.pop();
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !has_cfg_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !has_cfg_test(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(crate)`, `pub(super)`, `pub(in path)` name no item.
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if has_cfg_test(&u.attrs) {
            return;
        }
        let line = u.span().start().line;
        for (path, rename, glob) in flatten_use(&u.tree) {
            self.uses
                .push((path, rename, glob, line, self.inline.clone()));
        }
    }
    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.paths.push((
            path_segments(path),
            path.span().start().line,
            self.inline.clone(),
        ));
        syn::visit::visit_path(self, path);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // `format!("{}", crate::x::f())`: paths inside macro bodies count.
        let mut found = Vec::new();
        collect_token_paths(&m.tokens, &mut found);
        self.paths.extend(
            found
                .into_iter()
                .map(|(p, line)| (p, line, self.inline.clone())),
        );
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

/// Every reference of one file (module `here`) into the crate, and what
/// its `use` items import: (name, crate path, whether a glob).
fn references_of(
    here: &[String],
    file: &syn::File,
    modules: &BTreeSet<ModPath>,
) -> (Vec<Reference>, Vec<(String, ModPath, bool)>) {
    let mut collector = Collector {
        inline: Vec::new(),
        uses: Vec::new(),
        paths: Vec::new(),
    };
    collector.visit_file(file);
    let within = |inline: &[String]| -> ModPath { here.iter().chain(inline).cloned().collect() };
    let mut aliases = BTreeMap::new();
    let mut references = Vec::new();
    let mut imports = Vec::new();
    for (segments, rename, glob, line, inline) in &collector.uses {
        let Some(resolved) = resolve(&within(inline), segments, modules, &BTreeMap::new()) else {
            continue;
        };
        if *glob {
            imports.push((String::new(), resolved.clone(), true));
        } else if let Some(name) = rename.clone().or_else(|| segments.last().cloned())
            && name != "_"
        {
            aliases.insert(name.clone(), resolved.clone());
            if inline.is_empty() {
                imports.push((name, resolved.clone(), false));
            }
        }
        references.push(Reference {
            path: resolved,
            line: *line,
        });
    }
    for (segments, line, inline) in &collector.paths {
        if let Some(resolved) = resolve(&within(inline), segments, modules, &aliases) {
            references.push(Reference {
                path: resolved,
                line: *line,
            });
        }
    }
    (references, imports)
}

/// The crate source folder (`crates/x/src`, `apps/cocode/src`) a file
/// belongs to: its path up to the first `src`.
fn crate_root(file: &Path) -> Option<PathBuf> {
    let mut root = PathBuf::new();
    for c in file.components() {
        root.push(c);
        if c.as_os_str() == "src" {
            return Some(root);
        }
    }
    None
}

/// A crate's files as modules and the edges between them: from a file to
/// the file that defines what it names, following `use` re-exports
/// (`crate::Gate` re-exported by `lib.rs` lands in the file that defines
/// `Gate`).
struct CrateGraph<'a> {
    modules: BTreeSet<ModPath>,
    file_of: BTreeMap<ModPath, &'a Path>,
    /// (module, its file, the path as written, the file it lands in, line)
    references: Vec<(ModPath, &'a Path, ModPath, ModPath, usize)>,
    edges: BTreeMap<ModPath, BTreeMap<ModPath, usize>>,
}

/// What one module imports (`use`), by name, and its glob imports.
#[derive(Default)]
struct Imports {
    names: BTreeMap<String, ModPath>,
    globs: Vec<ModPath>,
}

/// The names a file defines at its top level (items and inline modules).
fn defined_names(file: &syn::File) -> BTreeSet<String> {
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Const(i) => Some(i.ident.to_string()),
            syn::Item::Enum(i) => Some(i.ident.to_string()),
            syn::Item::Fn(i) => Some(i.sig.ident.to_string()),
            syn::Item::Macro(i) => i.ident.as_ref().map(ToString::to_string),
            syn::Item::Mod(i) => Some(i.ident.to_string()),
            syn::Item::Static(i) => Some(i.ident.to_string()),
            syn::Item::Struct(i) => Some(i.ident.to_string()),
            syn::Item::Trait(i) => Some(i.ident.to_string()),
            syn::Item::Type(i) => Some(i.ident.to_string()),
            syn::Item::Union(i) => Some(i.ident.to_string()),
            _ => None,
        })
        .collect()
}

fn crate_graph<'a>(root: &Path, files: &[(&'a Path, &syn::File)]) -> CrateGraph<'a> {
    let in_crate: Vec<(ModPath, &'a Path, &syn::File)> = files
        .iter()
        .filter_map(|(path, file)| module_of(root, path).map(|m| (m, *path, *file)))
        .collect();
    let modules: BTreeSet<ModPath> = in_crate.iter().map(|(m, _, _)| m.clone()).collect();
    let file_of: BTreeMap<ModPath, &'a Path> =
        in_crate.iter().map(|(m, p, _)| (m.clone(), *p)).collect();
    let defined: BTreeMap<&ModPath, BTreeSet<String>> = in_crate
        .iter()
        .map(|(m, _, f)| (m, defined_names(f)))
        .collect();
    let mut imports: BTreeMap<ModPath, Imports> = BTreeMap::new();
    let mut written = Vec::new();
    for (here, path, file) in &in_crate {
        let (references, uses) = references_of(here, file, &modules);
        let entry = imports.entry(here.clone()).or_default();
        for (name, target, glob) in uses {
            if glob {
                entry.globs.push(target);
            } else {
                entry.names.insert(name, target);
            }
        }
        written.push((here.clone(), *path, references));
    }
    // Where a path lands: the file defining its item, through imports.
    let land = |path: &[String]| -> Option<ModPath> {
        let mut path = path.to_vec();
        'follow: for _ in 0..16 {
            let module = file_module(&path, &modules)?;
            let Some(name) = path.get(module.len()) else {
                return Some(module);
            };
            if defined.get(&module).is_some_and(|d| d.contains(name)) {
                return Some(module);
            }
            let Some(imported) = imports.get(&module) else {
                return Some(module);
            };
            if let Some(target) = imported.names.get(name) {
                let next: ModPath = target
                    .iter()
                    .chain(&path[module.len() + 1..])
                    .cloned()
                    .collect();
                if next == path {
                    return Some(module);
                }
                path = next;
                continue;
            }
            for glob in &imported.globs {
                if modules.contains(glob) && defined.get(glob).is_some_and(|d| d.contains(name)) {
                    path = glob.iter().chain(&path[module.len()..]).cloned().collect();
                    continue 'follow;
                }
            }
            return Some(module);
        }
        file_module(&path, &modules)
    };
    let mut references = Vec::new();
    let mut edges: BTreeMap<ModPath, BTreeMap<ModPath, usize>> = BTreeMap::new();
    for (here, path, written) in written {
        for reference in written {
            let Some(target) = land(&reference.path) else {
                continue;
            };
            if target == here {
                continue;
            }
            edges
                .entry(here.clone())
                .or_default()
                .entry(target.clone())
                .or_insert(reference.line);
            references.push((here.clone(), path, reference.path, target, reference.line));
        }
    }
    CrateGraph {
        modules,
        file_of,
        references,
        edges,
    }
}

/// Checks the module rules over the crate's parsed, non-test files: which
/// top-level modules each may use (the app crate), and no cycle between
/// the files of any crate.
pub fn check(rules: &ModuleRules, files: &[(&Path, &syn::File)]) -> Vec<Finding> {
    let mut findings = layers(rules, files);
    findings.extend(cycles_in_crates(files));
    findings
}

/// Which top-level modules of `rules.root` each may use.
fn layers(rules: &ModuleRules, files: &[(&Path, &syn::File)]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let graph = crate_graph(&rules.root, files);
    for (module, path) in &graph.file_of {
        if let Some(top) = module.first()
            && !rules.may_use.contains_key(top)
        {
            findings.push(Finding {
                file: path.to_path_buf(),
                line: 1,
                rule: Rule::ModuleLayer,
                what: format!("module `{top}` has no entry in boundaries.yaml's module rules"),
            });
        }
    }
    for (here, path, written, target, line) in &graph.references {
        if let (Some(top), Some(target_top)) = (here.first(), target.first())
            && top != target_top
            && rules
                .may_use
                .get(top)
                .is_some_and(|allowed| !allowed.contains(target_top))
        {
            findings.push(Finding {
                file: path.to_path_buf(),
                line: *line,
                rule: Rule::ModuleLayer,
                what: format!(
                    "`{top}` may not use `{target_top}` (`crate::{}`)",
                    written.join("::")
                ),
            });
        }
    }
    findings
}

/// No two files of one crate use each other, directly or around a circle.
pub fn cycles_in_crates(files: &[(&Path, &syn::File)]) -> Vec<Finding> {
    let mut by_crate: BTreeMap<PathBuf, Vec<(&Path, &syn::File)>> = BTreeMap::new();
    for (path, file) in files {
        if let Some(root) = crate_root(path) {
            by_crate.entry(root).or_default().push((*path, *file));
        }
    }
    let mut findings = Vec::new();
    for (root, files) in &by_crate {
        let graph = crate_graph(root, files);
        for cycle in cycles(&graph.modules, &graph.edges) {
            let first = &cycle[0];
            let next = &cycle[1 % cycle.len()];
            let line = graph
                .edges
                .get(first)
                .and_then(|e| e.get(next))
                .copied()
                .unwrap_or(1);
            // Each hop names the line of the reference that makes it.
            let names: Vec<String> = cycle
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let file = graph
                        .file_of
                        .get(m)
                        .map_or_else(|| m.join("::"), |p| p.display().to_string());
                    let to = &cycle[(i + 1) % cycle.len()];
                    match graph.edges.get(m).and_then(|e| e.get(to)) {
                        Some(line) => format!("{file}:{line}"),
                        None => file,
                    }
                })
                .chain(std::iter::once(
                    graph
                        .file_of
                        .get(first)
                        .map_or_else(|| first.join("::"), |p| p.display().to_string()),
                ))
                .collect();
            findings.push(Finding {
                file: graph
                    .file_of
                    .get(first)
                    .map_or_else(PathBuf::new, |p| p.to_path_buf()),
                line,
                rule: Rule::ModuleCycle,
                what: names.join(" → "),
            });
        }
    }
    findings
}

/// One crate's module graph in numbers: files, edges between them, files
/// on a circle, and its largest file's lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphSummary {
    pub root: PathBuf,
    pub files: usize,
    pub edges: usize,
    pub circles: usize,
    pub files_on_circles: usize,
}

/// The summary of every crate among `files`.
pub fn summaries(files: &[(&Path, &syn::File)]) -> Vec<GraphSummary> {
    let mut by_crate: BTreeMap<PathBuf, Vec<(&Path, &syn::File)>> = BTreeMap::new();
    for (path, file) in files {
        if let Some(root) = crate_root(path) {
            by_crate.entry(root).or_default().push((*path, *file));
        }
    }
    by_crate
        .iter()
        .map(|(root, files)| {
            let graph = crate_graph(root, files);
            let components = strongly_connected(&graph.modules, &graph.edges);
            GraphSummary {
                root: root.clone(),
                files: graph.modules.len(),
                edges: graph.edges.values().map(BTreeMap::len).sum(),
                circles: components.len(),
                files_on_circles: components.iter().map(Vec::len).sum(),
            }
        })
        .collect()
}

/// The strongly connected components of more than one module (Tarjan).
fn strongly_connected(
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
    state.components
}

/// One concrete cycle per strongly connected component: from its first
/// module, edges inside the component are followed until a module repeats.
fn cycles(
    modules: &BTreeSet<ModPath>,
    edges: &BTreeMap<ModPath, BTreeMap<ModPath, usize>>,
) -> Vec<Vec<ModPath>> {
    strongly_connected(modules, edges)
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
