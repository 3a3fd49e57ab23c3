use super::*;
use pretty_assertions::assert_eq;
use std::fmt::Write as _;

const CONFIG: &str = r"
layers:
  - { name: L0, crates: [cocode-core, cocode-ui] }
  - { name: L1, crates: [cocode-workspace] }
  - { name: sink, crates: [cocode] }
same_layer: []
unlayered: [xtask]
external_only_in:
  - { crate: egui, allowed: [cocode-ui, cocode], reason: model crates never draw }
forbidden_external:
  - { crates: [cocode-core], forbid: [tokio], reason: core is pure }
";

fn config() -> LayersConfig {
    serde_yaml_ng::from_str(CONFIG).unwrap()
}

/// (crate name, inherits lints, dependencies as (name, manifest section)).
type CrateSpec<'a> = (&'a str, bool, &'a [(&'a str, &'a str)]);

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// A workspace of path crates. `crates` = (name, lints, deps as (name, section)).
    fn new(crates: &[CrateSpec<'_>], code: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let members: Vec<String> = crates.iter().map(|(n, ..)| format!("\"{n}\"")).collect();
        // Only crates something depends on are workspace dependencies.
        let ws_deps: Vec<String> = crates
            .iter()
            .map(|(n, ..)| *n)
            .filter(|n| {
                crates
                    .iter()
                    .any(|(_, _, deps)| deps.iter().any(|(d, _)| d == n))
            })
            .map(|n| format!("{n} = {{ path = \"{n}\" }}"))
            .collect();
        std::fs::write(
            root.join("Cargo.toml"),
            format!(
                "[workspace]\nresolver = \"3\"\nmembers = [{}]\n\n[workspace.lints.rust]\nunsafe_code = \"deny\"\n\n[workspace.dependencies]\n{}\n",
                members.join(", "),
                ws_deps.join("\n")
            ),
        )
        .unwrap();
        for (name, lints, deps) in crates {
            let mut manifest = format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n"
            );
            if *lints {
                manifest.push_str("[lints]\nworkspace = true\n\n");
            }
            for section in ["dependencies", "dev-dependencies"] {
                writeln!(manifest, "[{section}]").unwrap();
                for (dep, s) in deps.iter().filter(|(_, s)| *s == section) {
                    let _ = s;
                    writeln!(manifest, "{dep}.workspace = true").unwrap();
                }
            }
            std::fs::create_dir_all(root.join(name).join("src")).unwrap();
            std::fs::write(root.join(name).join("Cargo.toml"), manifest).unwrap();
            let body = code.iter().find(|(n, _)| n == name).map_or("", |(_, c)| c);
            std::fs::write(
                root.join(name).join("src/lib.rs"),
                format!("//! fixture\n{body}\n"),
            )
            .unwrap();
        }
        std::fs::write(root.join("dependency_layers.yaml"), CONFIG).unwrap();
        Self { dir }
    }

    fn violations(&self) -> Vec<String> {
        run(self.dir.path())
            .unwrap()
            .into_iter()
            .map(|v| v.0)
            .collect()
    }
}

#[test]
fn a_clean_ladder_passes() {
    let fx = Fixture::new(
        &[
            ("cocode-core", true, &[]),
            ("cocode-workspace", true, &[("cocode-core", "dependencies")]),
            (
                "cocode",
                true,
                &[
                    ("cocode-workspace", "dependencies"),
                    ("cocode-core", "dev-dependencies"),
                ],
            ),
        ],
        &[
            ("cocode-workspace", "pub use cocode_core as c;"),
            (
                "cocode",
                "pub use cocode_workspace as w;\n#[cfg(test)] mod t { use cocode_core as _; }",
            ),
        ],
    );
    assert_eq!(fx.violations(), Vec::<String>::new());
}

#[test]
fn an_upward_dependency_fails_with_its_path() {
    let fx = Fixture::new(
        &[
            ("cocode-core", true, &[("cocode-workspace", "dependencies")]),
            ("cocode-workspace", true, &[]),
        ],
        &[("cocode-core", "pub use cocode_workspace as w;")],
    );
    assert_eq!(
        fx.violations(),
        vec!["cocode-core -> cocode-workspace (normal): L0 may not depend upward on L1".to_owned()]
    );
}

#[test]
fn an_upward_dev_dependency_cycle_fails() {
    let fx = Fixture::new(
        &[
            (
                "cocode-core",
                true,
                &[("cocode-workspace", "dev-dependencies")],
            ),
            ("cocode-workspace", true, &[("cocode-core", "dependencies")]),
        ],
        &[
            (
                "cocode-core",
                "#[cfg(test)] mod t { use cocode_workspace as _; }",
            ),
            ("cocode-workspace", "pub use cocode_core as c;"),
        ],
    );
    let v = fx.violations();
    assert!(
        v.contains(
            &"cocode-core -> cocode-workspace (dev): L0 may not depend upward on L1".to_owned()
        ),
        "{v:?}"
    );
    assert!(
        v.iter()
            .any(|m| m
                .starts_with("dependency cycle: cocode-core -> cocode-workspace -> cocode-core")),
        "{v:?}"
    );
}

#[test]
fn same_layer_unused_missing_lints_and_unknown_crates_fail() {
    let fx = Fixture::new(
        &[
            ("cocode-core", true, &[]),
            ("cocode-ui", false, &[("cocode-core", "dependencies")]),
            ("stray", true, &[]),
        ],
        &[],
    );
    let mut v = fx.violations();
    v.sort();
    let root = fx.dir.path().canonicalize().unwrap();
    assert_eq!(
        v,
        vec![
            "cocode-ui -> cocode-core (normal): declared but `cocode_core` is never used"
                .to_owned(),
            "cocode-ui -> cocode-core (normal): same-layer edge in L0 not declared in `same_layer`"
                .to_owned(),
            format!(
                "cocode-ui: missing `[lints] workspace = true` in {}",
                root.join("cocode-ui/Cargo.toml").display()
            ),
            "stray: not assigned to a layer in dependency_layers.yaml".to_owned(),
        ]
    );
}

#[test]
fn forbidden_external_crates_are_found_on_the_resolved_graph() {
    // Local stand-ins named like the real crates: the resolved graph is what counts.
    let fx = Fixture::new(
        &[
            ("egui", true, &[]),
            ("tokio", true, &[]),
            (
                "helper",
                true,
                &[("egui", "dependencies"), ("tokio", "dependencies")],
            ),
            ("cocode-core", true, &[("helper", "dependencies")]),
        ],
        &[
            ("helper", "pub use egui as e; pub use tokio as t;"),
            ("cocode-core", "pub use helper as h;"),
        ],
    );
    let v: Vec<String> = fx
        .violations()
        .into_iter()
        .filter(|m| m.starts_with("cocode-core:"))
        .collect();
    assert_eq!(
        v,
        vec![
            "cocode-core: reaches egui (model crates never draw): cocode-core -> helper -> egui"
                .to_owned(),
            "cocode-core: reaches forbidden tokio (core is pure): cocode-core -> helper -> tokio"
                .to_owned(),
        ]
    );
}

#[test]
fn unused_workspace_dependencies_fail() {
    let graph = WorkspaceGraph {
        members: vec![Member {
            name: "cocode-core".into(),
            root: PathBuf::from("/x"),
            deps: vec![],
            lints_workspace: true,
            inherited_deps: BTreeSet::from(["serde".to_owned()]),
        }],
        resolved: BTreeMap::new(),
        workspace_dependencies: BTreeSet::from(["serde".to_owned(), "regex".to_owned()]),
    };
    let v = check(&config(), &graph, &|_, _, _| true);
    assert_eq!(
        v,
        vec![Violation(
            "[workspace.dependencies] regex: declared but no crate uses it".into()
        )]
    );
}

#[test]
fn nothing_may_depend_on_tooling() {
    let graph = WorkspaceGraph {
        members: vec![Member {
            name: "cocode".into(),
            root: PathBuf::from("/x"),
            deps: vec![MemberDep {
                package: "xtask".into(),
                ident: "xtask".into(),
                kind: Kind::Normal,
                target: None,
            }],
            lints_workspace: true,
            inherited_deps: BTreeSet::new(),
        }],
        resolved: BTreeMap::new(),
        workspace_dependencies: BTreeSet::new(),
    };
    assert_eq!(
        check(&config(), &graph, &|_, _, _| true),
        vec![Violation(
            "cocode -> xtask (normal): nothing may depend on tooling crate xtask".into()
        )]
    );
}

#[test]
fn words_match_whole_identifiers_only() {
    assert!(contains_word("use cocode_core::x;", "cocode_core"));
    assert!(!contains_word("use cocode_core_extra::x;", "cocode_core"));
    assert!(!contains_word("my_cocode_core", "cocode_core"));
}

#[test]
fn the_repository_ladder_is_clean() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let v: Vec<String> = run(&root).unwrap().into_iter().map(|v| v.0).collect();
    assert_eq!(v, Vec::<String>::new());
}
