//! `cargo xtask boundaries`: the "only place" rules, checked by parsing every
//! product source file with `syn`.
//!
//! - single launcher: process spawning only in the allowlisted launcher file;
//! - one composition root: a `Launcher` is built only in the host's root;
//! - single writer: file creation, writes, renames and removals only in the
//!   files under `writer:` in `boundaries.yaml`;
//! - pure crates: no `std::fs`, `std::net`, `std::process` or tokio I/O;
//! - task status is assigned only inside `TaskTransition`;
//! - single runtime: only one file builds a tokio runtime;
//! - module rules: which top-level modules of the app crate each may use,
//!   and no cycle between the files of any crate (`modules.rs`);
//! - words: no `{:?}` in the format strings of user-facing files;
//! - an `unsafe fn` has a `# Safety` section in its documentation.
//!
//! Tests, benches, examples and `#[cfg(test)]` code are exempt.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use quote::ToTokens as _;
use serde::Deserialize;
use syn::spanned::Spanned as _;
use syn::visit::Visit;

use crate::source_files;

/// `boundaries.yaml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowlist {
    #[serde(default)]
    pub launcher: Vec<PathBuf>,
    #[serde(default)]
    pub writer: Vec<PathBuf>,
    /// One composition root: the only files that build a `Launcher`.
    #[serde(default)]
    pub launcher_root: Vec<PathBuf>,
    #[serde(default)]
    pub task_status: Vec<PathBuf>,
    /// Single runtime: building a tokio runtime.
    #[serde(default)]
    pub runtime: Vec<PathBuf>,
    #[serde(default)]
    pub pure: Vec<PathBuf>,
    /// Module rules of one crate.
    #[serde(default)]
    pub modules: Option<crate::modules::ModuleRules>,
    /// Files and folders whose format strings a person reads.
    #[serde(default)]
    pub words: Vec<PathBuf>,
}

/// Which rule a finding breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    SingleLauncher,
    LauncherRoot,
    SingleWriter,
    PureCrate,
    TaskStatus,
    SingleRuntime,
    ModuleLayer,
    ModuleCycle,
    DebugInUserText,
    UnsafeWithoutSafety,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::SingleLauncher => "single launcher",
            Self::LauncherRoot => "one composition root",
            Self::SingleWriter => "single writer",
            Self::PureCrate => "pure crate",
            Self::TaskStatus => "task status only in TaskTransition",
            Self::SingleRuntime => "single runtime",
            Self::ModuleLayer => "module rules",
            Self::ModuleCycle => "module cycle",
            Self::DebugInUserText => "words, not Debug",
            Self::UnsafeWithoutSafety => "an unsafe fn says when it is safe",
        })
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    pub file: PathBuf,
    pub line: usize,
    pub rule: Rule,
    pub what: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.rule,
            self.what
        )
    }
}

/// Scans the product crates (`crates/*`, `apps/*`) under `root`.
pub fn run(root: &Path) -> Result<Vec<Finding>> {
    let allow_path = root.join("boundaries.yaml");
    let allow: Allowlist = serde_yaml_ng::from_str(
        &std::fs::read_to_string(&allow_path)
            .with_context(|| format!("reading {}", allow_path.display()))?,
    )
    .with_context(|| format!("parsing {}", allow_path.display()))?;
    let mut files = Vec::new();
    for dir in ["crates", "apps"] {
        files.extend(source_files(&root.join(dir)));
    }
    let mut sources = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        let relative = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
        sources.push((relative, text));
    }
    scan(&sources, &allow)
}

/// Prints each crate's module graph in numbers and the largest product
/// files (`cargo xtask boundaries --graph`).
pub fn print_graph(root: &Path) -> Result<()> {
    let mut sources = Vec::new();
    for dir in ["crates", "apps"] {
        for file in source_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let relative = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
            sources.push((relative, text));
        }
    }
    let mut parsed = Vec::new();
    for (path, text) in &sources {
        let file = syn::parse_file(text).with_context(|| format!("parsing {}", path.display()))?;
        parsed.push((path.clone(), file, text.lines().count()));
    }
    let pairs: Vec<(PathBuf, syn::File)> = parsed
        .iter()
        .map(|(p, f, _)| (p.clone(), f.clone()))
        .collect();
    let test_modules = test_module_files(&pairs);
    let product: Vec<(&Path, &syn::File, usize)> = parsed
        .iter()
        .filter(|(path, _, _)| !is_test_path(path) && !test_modules.contains(path))
        .map(|(path, file, lines)| (path.as_path(), file, *lines))
        .collect();
    let files: Vec<(&Path, &syn::File)> = product.iter().map(|(p, f, _)| (*p, *f)).collect();
    println!("crate                              files  edges  circles  files on circles");
    let (mut total_files, mut total_edges, mut total_circles) = (0, 0, 0);
    for s in crate::modules::summaries(&files) {
        println!(
            "{:<34} {:>5}  {:>5}  {:>7}  {:>16}",
            s.root.display(),
            s.files,
            s.edges,
            s.circles,
            s.files_on_circles
        );
        total_files += s.files;
        total_edges += s.edges;
        total_circles += s.circles;
    }
    println!(
        "{:<34} {total_files:>5}  {total_edges:>5}  {total_circles:>7}",
        "all"
    );
    let mut largest: Vec<(usize, &Path)> = product.iter().map(|(p, _, n)| (*n, *p)).collect();
    largest.sort_by(|a, b| b.cmp(a));
    println!("largest product files (lines):");
    for (lines, path) in largest.iter().take(8) {
        println!("  {lines:>5}  {}", path.display());
    }
    Ok(())
}

/// Scans in-memory sources (paths relative to the repository root).
pub fn scan(sources: &[(PathBuf, String)], allow: &Allowlist) -> Result<Vec<Finding>> {
    let mut parsed = Vec::new();
    for (path, text) in sources {
        let file = syn::parse_file(text).with_context(|| format!("parsing {}", path.display()))?;
        parsed.push((path.clone(), file));
    }
    let test_modules = test_module_files(&parsed);
    let mut findings = Vec::new();
    for (path, file) in &parsed {
        if is_test_path(path) || test_modules.contains(path) {
            continue;
        }
        let mut visitor = Scanner {
            file: path,
            pure: allow.pure.iter().any(|p| path.starts_with(p)),
            aliases: collect_aliases(file),
            findings: Vec::new(),
        };
        visitor.visit_file(file);
        findings.extend(visitor.findings.into_iter().filter(|f| {
            let allowed = match f.rule {
                Rule::SingleLauncher => &allow.launcher,
                Rule::LauncherRoot => &allow.launcher_root,
                Rule::SingleWriter => &allow.writer,
                Rule::TaskStatus => &allow.task_status,
                Rule::SingleRuntime => &allow.runtime,
                Rule::PureCrate
                | Rule::ModuleLayer
                | Rule::ModuleCycle
                | Rule::DebugInUserText
                | Rule::UnsafeWithoutSafety => {
                    return true;
                }
            };
            !allowed.iter().any(|a| a == path)
        }));
        if allow.words.iter().any(|w| path.starts_with(w)) {
            findings.extend(crate::modules::check_words(path, file));
        }
        findings.extend(unsafe_fns_without_safety(path, file));
    }
    let product: Vec<(&Path, &syn::File)> = parsed
        .iter()
        .filter(|(path, _)| !is_test_path(path) && !test_modules.contains(path))
        .map(|(path, file)| (path.as_path(), file))
        .collect();
    match &allow.modules {
        Some(rules) => findings.extend(crate::modules::check(rules, &product)),
        None => findings.extend(crate::modules::cycles_in_crates(&product)),
    }
    findings.sort();
    Ok(findings)
}

fn is_test_path(path: &Path) -> bool {
    path.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some("tests" | "benches" | "examples" | "fuzz")
        )
    }) || path
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s.ends_with("_tests") || s == "tests")
}

pub(crate) fn has_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if a.path().is_ident("test") {
            return true;
        }
        if !a.path().is_ident("cfg") {
            return false;
        }
        let text = a.meta.to_token_stream().to_string().replace(' ', "");
        text.contains("test") && !text.contains("not(test")
    })
}

/// Files of modules declared `#[cfg(test)] mod name;` (with `#[path]` honoured).
fn test_module_files(parsed: &[(PathBuf, syn::File)]) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for (path, file) in parsed {
        let dir = path.parent().unwrap_or(Path::new(""));
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let is_root = matches!(stem, "lib" | "main" | "mod");
        for item in &file.items {
            let syn::Item::Mod(m) = item else { continue };
            if m.content.is_some() || !has_cfg_test(&m.attrs) {
                continue;
            }
            let explicit = m.attrs.iter().find_map(|a| {
                if !a.path().is_ident("path") {
                    return None;
                }
                match &a.meta {
                    syn::Meta::NameValue(nv) => match &nv.value {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(s),
                            ..
                        }) => Some(s.value()),
                        _ => None,
                    },
                    _ => None,
                }
            });
            let name = m.ident.to_string();
            let target = match explicit {
                Some(p) => dir.join(p),
                None if is_root => dir.join(format!("{name}.rs")),
                None => dir.join(stem).join(format!("{name}.rs")),
            };
            out.insert(target);
        }
    }
    out
}

struct Scanner<'a> {
    file: &'a Path,
    pure: bool,
    /// `use a::b as c;` renames in this file: `c` → `[a, b]`.
    aliases: BTreeMap<String, Vec<String>>,
    findings: Vec<Finding>,
}

/// Renames declared by `use … as …` anywhere in the file.
fn collect_aliases(file: &syn::File) -> BTreeMap<String, Vec<String>> {
    struct Uses(BTreeMap<String, Vec<String>>);
    impl<'ast> Visit<'ast> for Uses {
        fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
            for (path, rename, _) in flatten_use(&u.tree) {
                if let Some(rename) = rename {
                    self.0.insert(rename, path);
                }
            }
        }
    }
    let mut uses = Uses(BTreeMap::new());
    uses.visit_file(file);
    uses.0
}

const SPAWN_SUFFIXES: [&[&str]; 6] = [
    &["process", "Command"],
    &["process", "Child"],
    &["process", "CommandExt"],
    &["Command", "new"],
    &["unistd", "fork"],
    &["libc", "fork"],
];

const WRITE_SUFFIXES: [&[&str]; 17] = [
    &["fs", "write"],
    &["File", "create"],
    &["File", "create_new"],
    &["File", "options"],
    &["fs", "rename"],
    &["fs", "copy"],
    &["fs", "remove_file"],
    &["fs", "remove_dir"],
    &["fs", "remove_dir_all"],
    &["fs", "create_dir"],
    &["fs", "create_dir_all"],
    &["fs", "hard_link"],
    &["fs", "set_permissions"],
    &["fs", "symlink"],
    &["fs", "symlink_file"],
    &["fs", "symlink_dir"],
    &["fs", "soft_link"],
];

impl Scanner<'_> {
    fn report(&mut self, span: proc_macro2::Span, rule: Rule, what: String) {
        self.findings.push(Finding {
            file: self.file.to_path_buf(),
            line: span.start().line,
            rule,
            what,
        });
    }

    fn check_path(&mut self, segments: &[String], span: proc_macro2::Span) {
        // Expand a renamed import (`use std::fs as f;` makes `f::write` → `std::fs::write`).
        let expanded: Vec<String>;
        let segments = match segments.first().and_then(|first| self.aliases.get(first)) {
            Some(original) => {
                expanded = original.iter().chain(&segments[1..]).cloned().collect();
                &expanded[..]
            }
            None => segments,
        };
        let text = segments.join("::");
        let ends_with = |suffix: &[&str]| {
            segments.len() >= suffix.len()
                && segments[segments.len() - suffix.len()..]
                    .iter()
                    .zip(suffix)
                    .all(|(a, b)| a == b)
        };
        let contains = |name: &str| segments.iter().any(|s| s == name);
        let starts = |prefix: &[&str]| {
            segments.len() >= prefix.len() && segments.iter().zip(prefix).all(|(a, b)| a == b)
        };

        let spawns = SPAWN_SUFFIXES.iter().any(|s| ends_with(s))
            || contains("portable_pty")
            || contains("CommandBuilder")
            || starts(&["tokio", "process"])
            || (starts(&["std", "process"]) && segments.len() == 2);
        // `Command::new` only counts when it is a process command; a bare
        // `Command::new` of another type is still flagged because the name is
        // reserved for processes across the codebase.
        if spawns {
            self.report(
                span,
                Rule::SingleLauncher,
                format!("`{text}` spawns processes"),
            );
        }

        if ends_with(&["Launcher", "new"]) {
            self.report(
                span,
                Rule::LauncherRoot,
                format!("`{text}` builds a launcher outside the composition root"),
            );
        }

        let writes = WRITE_SUFFIXES.iter().any(|s| ends_with(s))
            || contains("OpenOptions")
            || (starts(&["tokio", "fs"])
                && segments.last().is_some_and(|l| {
                    !matches!(
                        l.as_str(),
                        "read"
                            | "read_to_string"
                            | "read_dir"
                            | "metadata"
                            | "canonicalize"
                            | "symlink_metadata"
                            | "try_exists"
                    )
                })
                && segments.len() > 2);
        if writes {
            self.report(
                span,
                Rule::SingleWriter,
                format!("`{text}` writes to the file system"),
            );
        }

        let builds_runtime = ends_with(&["Builder", "new_multi_thread"])
            || ends_with(&["Builder", "new_current_thread"])
            || ends_with(&["Runtime", "new"])
            || ends_with(&["tokio", "main"]);
        if builds_runtime {
            self.report(
                span,
                Rule::SingleRuntime,
                format!("`{text}` builds a tokio runtime"),
            );
        }

        if self.pure {
            let io_root = starts(&["std", "fs"])
                || starts(&["std", "net"])
                || starts(&["std", "process"])
                || starts(&["tokio"])
                || starts(&["std", "os"]);
            if io_root {
                self.report(
                    span,
                    Rule::PureCrate,
                    format!("`{text}` is I/O in a pure crate"),
                );
            }
        }
    }
}

pub(crate) fn path_segments(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// Every path a `use` tree imports, with its `as` name if renamed
/// and whether it is a glob (a glob yields its module path).
pub(crate) fn flatten_use(tree: &syn::UseTree) -> Vec<(Vec<String>, Option<String>, bool)> {
    fn walk(
        tree: &syn::UseTree,
        prefix: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, Option<String>, bool)>,
    ) {
        let leaf = |prefix: &[String], ident: &syn::Ident| {
            let mut full = prefix.to_vec();
            if ident != "self" {
                full.push(ident.to_string());
            }
            full
        };
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) => out.push((leaf(prefix, &n.ident), None, false)),
            syn::UseTree::Rename(r) => {
                out.push((leaf(prefix, &r.ident), Some(r.rename.to_string()), false));
            }
            syn::UseTree::Glob(_) => out.push((prefix.clone(), None, true)),
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    walk(item, prefix, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

/// The `Visit` methods every scanner starts with: test modules, functions
/// and impls (`#[cfg(test)]`, `#[test]`) are not visited.
macro_rules! skip_test_items {
    ($ast:lifetime) => {
        fn visit_item_mod(&mut self, m: &$ast syn::ItemMod) {
            if !$crate::boundaries::has_cfg_test(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }

        fn visit_item_fn(&mut self, f: &$ast syn::ItemFn) {
            if !$crate::boundaries::has_cfg_test(&f.attrs) {
                syn::visit::visit_item_fn(self, f);
            }
        }

        fn visit_item_impl(&mut self, i: &$ast syn::ItemImpl) {
            if !$crate::boundaries::has_cfg_test(&i.attrs) {
                syn::visit::visit_item_impl(self, i);
            }
        }
    };
}
pub(crate) use skip_test_items;

/// Whether `attrs` hold documentation with a `# Safety` heading.
fn documents_safety(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc")
            && matches!(&a.meta, syn::Meta::NameValue(nv) if matches!(
                &nv.value,
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })
                    if s.value().trim() == "# Safety"
            ))
    })
}

/// Every `unsafe fn` (free, in an `impl` or a trait) of a file without a
/// `# Safety` section; test code is left out.
fn unsafe_fns_without_safety(path: &Path, file: &syn::File) -> Vec<Finding> {
    struct Unsafe<'a> {
        path: &'a Path,
        found: Vec<Finding>,
    }
    impl Unsafe<'_> {
        fn check(&mut self, sig: &syn::Signature, attrs: &[syn::Attribute]) {
            if sig.unsafety.is_some() && !documents_safety(attrs) {
                self.found.push(Finding {
                    file: self.path.to_path_buf(),
                    line: sig.ident.span().start().line,
                    rule: Rule::UnsafeWithoutSafety,
                    what: format!("`unsafe fn {}` has no `# Safety` section", sig.ident),
                });
            }
        }
    }
    impl<'ast> Visit<'ast> for Unsafe<'_> {
        fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
            if !has_cfg_test(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            if !has_cfg_test(&f.attrs) {
                self.check(&f.sig, &f.attrs);
                syn::visit::visit_item_fn(self, f);
            }
        }
        fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
            self.check(&f.sig, &f.attrs);
            syn::visit::visit_impl_item_fn(self, f);
        }
        fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
            self.check(&f.sig, &f.attrs);
            syn::visit::visit_trait_item_fn(self, f);
        }
    }
    let mut visitor = Unsafe {
        path,
        found: Vec::new(),
    };
    visitor.visit_file(file);
    visitor.found
}

impl<'ast> Visit<'ast> for Scanner<'_> {
    skip_test_items!('ast);

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if has_cfg_test(&u.attrs) {
            return;
        }
        for (path, _, _) in flatten_use(&u.tree) {
            // `use std::process;`, `use std::process as p;` and globs hide
            // later spawns behind a short name: `check_path` flags the bare module.
            self.check_path(&path, u.span());
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.check_path(&path_segments(path), path.span());
        syn::visit::visit_path(self, path);
    }

    fn visit_expr_macro(&mut self, m: &'ast syn::ExprMacro) {
        self.scan_tokens(&m.mac.tokens);
        syn::visit::visit_expr_macro(self, m);
    }

    fn visit_stmt_macro(&mut self, m: &'ast syn::StmtMacro) {
        self.scan_tokens(&m.mac.tokens);
        syn::visit::visit_stmt_macro(self, m);
    }

    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        if let syn::Expr::Field(field) = &*a.left
            && matches!(&field.member, syn::Member::Named(n) if n == "status")
        {
            self.report(a.span(), Rule::TaskStatus, "assignment to `.status`".into());
        }
        syn::visit::visit_expr_assign(self, a);
    }

    fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
        if s.path
            .segments
            .last()
            .is_some_and(|l| l.ident == "DelegatedTask")
        {
            self.report(
                s.span(),
                Rule::TaskStatus,
                "`DelegatedTask { .. }` built outside TaskTransition".into(),
            );
        }
        syn::visit::visit_expr_struct(self, s);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        // `std::mem::replace(&mut t.status, ..)` and friends.
        if let syn::Expr::Path(p) = &*c.func {
            let name = path_segments(&p.path);
            if name.last().is_some_and(|l| matches!(l.as_str(), "replace" | "swap" | "take"))
                && c.args.iter().any(|a| {
                    matches!(a, syn::Expr::Reference(r) if r.mutability.is_some()
                        && matches!(&*r.expr, syn::Expr::Field(f) if matches!(&f.member, syn::Member::Named(n) if n == "status")))
                })
            {
                self.report(c.span(), Rule::TaskStatus, "`.status` replaced through a `&mut`".into());
            }
        }
        syn::visit::visit_expr_call(self, c);
    }
}

impl Scanner<'_> {
    /// Macro bodies are token streams: look for paths in them as well, so
    /// `format!("{}", std::fs::write(..))` cannot hide a write.
    fn scan_tokens(&mut self, tokens: &proc_macro2::TokenStream) {
        let mut current: Vec<String> = Vec::new();
        let mut span = proc_macro2::Span::call_site();
        let mut expect_ident = false;
        let mut colons = 0;
        let flush = |scanner: &mut Self, current: &mut Vec<String>, span| {
            if current.len() > 1 {
                let segs = std::mem::take(current);
                scanner.check_path(&segs, span);
            }
            current.clear();
        };
        for tt in tokens.clone() {
            match tt {
                proc_macro2::TokenTree::Ident(ident) => {
                    if !expect_ident {
                        flush(self, &mut current, span);
                        span = ident.span();
                    }
                    current.push(ident.to_string());
                    expect_ident = false;
                    colons = 0;
                }
                proc_macro2::TokenTree::Punct(p) if p.as_char() == ':' => {
                    colons += 1;
                    if colons == 2 {
                        expect_ident = true;
                    }
                }
                proc_macro2::TokenTree::Group(g) => {
                    flush(self, &mut current, span);
                    expect_ident = false;
                    self.scan_tokens(&g.stream());
                }
                _ => {
                    flush(self, &mut current, span);
                    expect_ident = false;
                    colons = 0;
                }
            }
        }
        flush(self, &mut current, span);
    }
}

#[cfg(test)]
#[path = "boundaries_tests.rs"]
mod tests;
