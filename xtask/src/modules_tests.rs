use super::*;
use pretty_assertions::assert_eq;

fn rules() -> ModuleRules {
    ModuleRules {
        root: PathBuf::from("apps/cocode/src"),
        may_use: BTreeMap::from([
            ("host".to_owned(), vec![]),
            ("cli".to_owned(), vec!["host".to_owned()]),
            ("window".to_owned(), vec!["host".to_owned()]),
        ]),
    }
}

/// (file, line, rule, what) of every finding over the given files.
fn check_files(files: &[(&str, &str)]) -> Vec<(String, usize, Rule, String)> {
    let parsed: Vec<(PathBuf, syn::File)> = files
        .iter()
        .map(|(p, t)| (PathBuf::from(p), syn::parse_file(t).unwrap()))
        .collect();
    let refs: Vec<(&Path, &syn::File)> = parsed.iter().map(|(p, f)| (p.as_path(), f)).collect();
    let mut found: Vec<_> = check(&rules(), &refs)
        .into_iter()
        .map(|f| (f.file.display().to_string(), f.line, f.rule, f.what))
        .collect();
    found.sort();
    found
}

const LIB: (&str, &str) = (
    "apps/cocode/src/lib.rs",
    "pub mod cli;\npub mod host;\npub mod window;\n",
);

#[test]
fn a_clean_tree_has_no_findings() {
    let files = [
        LIB,
        ("apps/cocode/src/host.rs", "pub mod task_host;\n"),
        (
            "apps/cocode/src/host/task_host.rs",
            "pub struct TaskHost;\n",
        ),
        ("apps/cocode/src/cli.rs", "pub mod task;\n"),
        (
            "apps/cocode/src/cli/task.rs",
            "use crate::host::task_host::TaskHost;\npub fn f(_: TaskHost) {}\n",
        ),
        (
            "apps/cocode/src/window.rs",
            "pub mod app;\npub mod views;\npub mod command;\n",
        ),
        (
            "apps/cocode/src/window/command.rs",
            "pub enum Command { Quit }\n",
        ),
        (
            "apps/cocode/src/window/app.rs",
            "use crate::window::views;\npub fn f() { views::agent::show(); }\n",
        ),
        ("apps/cocode/src/window/views.rs", "pub mod agent;\n"),
        (
            "apps/cocode/src/window/views/agent.rs",
            "use super::super::command::Command;\npub fn show() -> Option<Command> { None }\n",
        ),
        (
            "apps/cocode/src/main.rs",
            "fn main() { cocode::window::app::f(); }\n",
        ),
    ];
    assert_eq!(check_files(&files), vec![]);
}

#[test]
fn a_planted_cycle_is_found_with_its_files() {
    let files = [
        LIB,
        (
            "apps/cocode/src/window.rs",
            "pub mod app;\npub mod views;\n",
        ),
        (
            "apps/cocode/src/window/app.rs",
            "pub struct AgentPanel;\n\nuse crate::window::views;\npub fn f() { views::agent::show(); }\n",
        ),
        ("apps/cocode/src/window/views.rs", "pub mod agent;\n"),
        (
            "apps/cocode/src/window/views/agent.rs",
            "use super::super::app::AgentPanel;\npub fn show(_: Option<AgentPanel>) {}\n",
        ),
    ];
    assert_eq!(
        check_files(&files),
        vec![(
            "apps/cocode/src/window/app.rs".to_owned(),
            4,
            Rule::ModuleCycle,
            "apps/cocode/src/window/app.rs:4 → apps/cocode/src/window/views/agent.rs:1 → apps/cocode/src/window/app.rs"
                .to_owned()
        )]
    );
}

#[test]
fn a_cycle_through_three_files_and_a_parent_is_found() {
    let files = [
        LIB,
        (
            "apps/cocode/src/host.rs",
            "pub mod a;\npub mod b;\npub fn root() { a::f(); }\n",
        ),
        (
            "apps/cocode/src/host/a.rs",
            "pub fn f() { crate::host::b::g(); }\n",
        ),
        (
            "apps/cocode/src/host/b.rs",
            "pub fn g() { super::root(); }\n",
        ),
    ];
    let found = check_files(&files);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].2, Rule::ModuleCycle);
    assert_eq!(
        found[0].3,
        "apps/cocode/src/host.rs:3 → apps/cocode/src/host/a.rs:1 → apps/cocode/src/host/b.rs:1 → apps/cocode/src/host.rs"
    );
}

#[test]
fn a_circle_in_any_crate_is_found() {
    let files = [
        ("crates/core/src/lib.rs", "pub mod ids;\npub mod task;\n"),
        (
            "crates/core/src/ids.rs",
            "pub struct TaskId;\npub fn f() -> crate::task::Status { todo!() }\n",
        ),
        (
            "crates/core/src/task.rs",
            "use crate::ids::TaskId;\npub struct Status(TaskId);\n",
        ),
    ];
    assert_eq!(
        check_files(&files),
        vec![(
            "crates/core/src/ids.rs".to_owned(),
            2,
            Rule::ModuleCycle,
            "crates/core/src/ids.rs:2 → crates/core/src/task.rs:1 → crates/core/src/ids.rs"
                .to_owned()
        )]
    );
}

#[test]
fn re_exports_visibility_and_inline_modules_make_no_false_circle() {
    let files = [
        (
            "crates/gate/src/lib.rs",
            "pub mod disk;\npub mod paths;\npub use paths::Checked;\n",
        ),
        (
            "crates/gate/src/paths.rs",
            "pub struct Checked;\npub(crate) fn check() -> Checked { Checked }\n",
        ),
        (
            "crates/gate/src/disk.rs",
            "use crate::Checked;\npub(crate) fn write(_: Checked) {}\nmod unix {\n    use super::write;\n    pub fn w() { write(crate::paths::check()) }\n}\n",
        ),
    ];
    assert_eq!(check_files(&files), vec![]);
}

#[test]
fn the_host_may_use_neither_front_end_and_the_front_ends_not_each_other() {
    let files = [
        LIB,
        (
            "apps/cocode/src/host.rs",
            "pub fn f() { crate::cli::task::print(); }\n",
        ),
        ("apps/cocode/src/cli.rs", "pub mod task;\n"),
        ("apps/cocode/src/cli/task.rs", "pub fn print() {}\n"),
        (
            "apps/cocode/src/window.rs",
            "use crate::cli::task as printing;\npub fn g() { printing::print(); }\n",
        ),
    ];
    assert_eq!(
        check_files(&files),
        vec![
            (
                "apps/cocode/src/host.rs".to_owned(),
                1,
                Rule::ModuleLayer,
                "`host` may not use `cli` (`crate::cli::task::print`)".to_owned()
            ),
            (
                "apps/cocode/src/window.rs".to_owned(),
                1,
                Rule::ModuleLayer,
                "`window` may not use `cli` (`crate::cli::task`)".to_owned()
            ),
            (
                "apps/cocode/src/window.rs".to_owned(),
                2,
                Rule::ModuleLayer,
                "`window` may not use `cli` (`crate::cli::task::print`)".to_owned()
            ),
        ]
    );
}

#[test]
fn a_new_top_level_module_needs_a_rule() {
    let files = [LIB, ("apps/cocode/src/extra.rs", "pub fn f() {}\n")];
    assert_eq!(
        check_files(&files),
        vec![(
            "apps/cocode/src/extra.rs".to_owned(),
            1,
            Rule::ModuleLayer,
            "module `extra` has no entry in boundaries.yaml's module rules".to_owned()
        )]
    );
}

#[test]
fn test_code_makes_no_edges() {
    let files = [
        LIB,
        (
            "apps/cocode/src/host.rs",
            "#[cfg(test)]\nmod tests { use crate::cli::X; }\n#[cfg(test)]\nfn t() { crate::window::f(); }\n",
        ),
        ("apps/cocode/src/cli.rs", "pub struct X;\n"),
        ("apps/cocode/src/window.rs", "pub fn f() {}\n"),
    ];
    assert_eq!(check_files(&files), vec![]);
}

#[test]
fn debug_placeholders_are_told_from_words() {
    assert_eq!(
        debug_placeholders("{:?} {x:?} {:#?} {y:x?} {} {z} {{:?}} {w:>4}"),
        vec!["{:?}", "{x:?}", "{:#?}", "{y:x?}"]
    );
    assert_eq!(debug_placeholders("no placeholders"), Vec::<String>::new());
    assert_eq!(debug_placeholders("unclosed {x:?"), Vec::<String>::new());
}

#[test]
fn debug_in_user_facing_macros_is_found_and_logs_are_not() {
    let file = syn::parse_file(
        "fn f(out: &mut W, s: S) {\n    writeln!(out, \"status: {s:?}\");\n    tracing::warn!(\"{s:?}\");\n    let _ = format!(\"{}\", s);\n    anyhow::bail!(\"{:?} is not an id\", s);\n}\n#[cfg(test)]\nfn t() { println!(\"{:?}\", 1); }\n",
    )
    .unwrap();
    let found: Vec<(usize, Rule)> = check_words(Path::new("apps/cocode/src/cli/task.rs"), &file)
        .into_iter()
        .map(|f| (f.line, f.rule))
        .collect();
    assert_eq!(
        found,
        vec![(2, Rule::DebugInUserText), (5, Rule::DebugInUserText)]
    );
}
