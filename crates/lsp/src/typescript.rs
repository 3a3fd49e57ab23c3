//! Which TypeScript serves a folder's JavaScript and TypeScript files, found
//! as VS Code finds it: the folder's own `node_modules/typescript` first,
//! else a global installation. `typescript-language-server` needs a
//! TypeScript 5 (or older) `tsserver.js`, which it is given explicitly
//! (`tsserver.path`), so a global TypeScript serves a plain JavaScript
//! folder too; TypeScript 7 has no `tsserver.js` but is a language server
//! itself (`tsc --lsp --stdio`), which is used when it is what is there.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::spec::ServerSpec;

/// The built-in server's id and command, which discovery may adjust.
pub const SERVER_ID: &str = "typescript-language-server";
const DEFAULT_COMMAND: [&str; 2] = ["typescript-language-server", "--stdio"];

/// The first major version without `tsserver.js` (its own language server).
const NATIVE_MAJOR: u32 = 7;

/// One TypeScript installation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeScript {
    /// The package folder (`…/node_modules/typescript`).
    pub package: PathBuf,
    pub version: String,
    pub major: u32,
    /// The folder's own (`node_modules` of the workspace), not a global one.
    pub local: bool,
    /// Its `tsc` program, when it has one that runs.
    pub tsc: Option<PathBuf>,
}

impl TypeScript {
    /// `tsserver.js`, which TypeScript 5 and older have.
    pub fn tsserver(&self) -> Option<PathBuf> {
        let path = self.package.join("lib/tsserver.js");
        path.is_file().then_some(path)
    }

    /// Words for `cocode lsp servers`: `TypeScript 5.9.3 (global, /usr/lib/…)`.
    pub fn describe(&self) -> String {
        format!(
            "TypeScript {} ({}, {})",
            self.version,
            if self.local {
                "this folder's"
            } else {
                "global"
            },
            self.package.display()
        )
    }
}

/// The TypeScript package in `dir`, when `dir` holds one.
fn package_at(dir: &Path, local: bool) -> Option<TypeScript> {
    let bytes = std::fs::read(dir.join("package.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    if manifest.get("name")?.as_str()? != "typescript" {
        return None;
    }
    let version = manifest.get("version")?.as_str()?.to_owned();
    let major = version.split('.').next()?.parse().ok()?;
    let tsc = if local {
        // npm links it in `.bin`.
        dir.parent()
            .map(|modules| modules.join(".bin/tsc"))
            .filter(|p| p.is_file())
    } else {
        Some(dir.join("bin/tsc")).filter(|p| p.is_file())
    };
    Some(TypeScript {
        package: dunce::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
        version,
        major,
        local,
        tsc,
    })
}

/// The global `node_modules` folder a program on the PATH was installed
/// into (`/usr/lib/node_modules` for `/usr/bin/typescript-language-server`,
/// a link into it).
fn global_modules_of(program: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    let found = cocode_platform::programs::find_program(program, path_var)?;
    let real = dunce::canonicalize(&found).ok()?;
    real.ancestors()
        .find(|a| a.file_name() == Some(OsStr::new("node_modules")))
        .map(Path::to_path_buf)
}

/// Every TypeScript in reach: the folder's own, then the global ones next
/// to `typescript-language-server` and to `tsc` on the PATH.
pub fn installations(root: &Path, path_var: Option<&OsStr>) -> Vec<TypeScript> {
    let mut out: Vec<TypeScript> = Vec::new();
    let mut add = |t: Option<TypeScript>| {
        if let Some(t) = t
            && !out.iter().any(|o| o.package == t.package)
        {
            out.push(t);
        }
    };
    add(package_at(&root.join("node_modules/typescript"), true));
    for program in ["typescript-language-server", "tsc"] {
        if let Some(modules) = global_modules_of(program, path_var) {
            add(package_at(&modules.join("typescript"), false));
        }
    }
    out
}

/// The TypeScript a folder uses: its own whatever the version, else a
/// global one that `typescript-language-server` can use, else a global
/// TypeScript 7.
pub fn choose(found: &[TypeScript]) -> Option<&TypeScript> {
    found
        .iter()
        .find(|t| t.local)
        .or_else(|| found.iter().find(|t| t.major < NATIVE_MAJOR))
        .or_else(|| {
            found
                .iter()
                .find(|t| t.major >= NATIVE_MAJOR && t.tsc.is_some())
        })
}

/// Points the built-in TypeScript server at `ts`: `tsserver.path` for
/// TypeScript 5 and older, or TypeScript 7's own server. A server command
/// the person or the folder configured is left as it is.
pub fn apply(spec: &mut ServerSpec, ts: Option<&TypeScript>) {
    if spec.id != SERVER_ID || spec.command != DEFAULT_COMMAND {
        return;
    }
    "npm install -g typescript-language-server typescript@5 (or typescript in this folder's node_modules)"
        .clone_into(&mut spec.install);
    let Some(ts) = ts else {
        spec.note = Some(
            "no TypeScript found: install typescript (5.x) in this folder or globally".to_owned(),
        );
        return;
    };
    spec.note = Some(ts.describe());
    if ts.major >= NATIVE_MAJOR {
        if let Some(tsc) = &ts.tsc {
            spec.command = vec![
                tsc.to_string_lossy().into_owned(),
                "--lsp".to_owned(),
                "--stdio".to_owned(),
            ];
        }
    } else if let Some(tsserver) = ts.tsserver() {
        spec.initialization_options = Some(json!({
            "tsserver": { "path": tsserver.to_string_lossy() }
        }));
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "the tests build node_modules layouts"
)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn package(dir: &Path, version: &str, with_tsserver: bool) {
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(
            dir.join("package.json"),
            format!(r#"{{"name": "typescript", "version": "{version}"}}"#),
        )
        .unwrap();
        std::fs::write(dir.join("bin/tsc"), "#!/usr/bin/env node\n").unwrap();
        if with_tsserver {
            std::fs::write(dir.join("lib/tsserver.js"), "").unwrap();
        }
    }

    fn spec() -> ServerSpec {
        crate::ServerRegistry::with_defaults()
            .get(SERVER_ID)
            .unwrap()
            .clone()
    }

    #[test]
    fn a_global_typescript_5_is_given_to_the_server_for_a_folder_without_its_own() {
        let global = tempfile::tempdir().unwrap();
        package(&global.path().join("typescript"), "5.9.3", true);
        let ts = package_at(&global.path().join("typescript"), false).unwrap();
        assert_eq!((ts.major, ts.local), (5, false));
        let mut s = spec();
        apply(&mut s, choose(std::slice::from_ref(&ts)));
        assert_eq!(s.command, DEFAULT_COMMAND);
        assert_eq!(
            s.initialization_options,
            Some(
                json!({"tsserver": {"path": ts.package.join("lib/tsserver.js").to_string_lossy()}})
            )
        );
        assert_eq!(s.note, Some(ts.describe()));
    }

    #[test]
    fn typescript_7_serves_itself_and_a_5_elsewhere_is_preferred_for_the_old_server() {
        let global = tempfile::tempdir().unwrap();
        package(&global.path().join("a/typescript"), "7.0.2", false);
        package(&global.path().join("b/typescript"), "5.4.0", true);
        let seven = package_at(&global.path().join("a/typescript"), false).unwrap();
        let five = package_at(&global.path().join("b/typescript"), false).unwrap();
        // A global 5 wins over a global 7 …
        assert_eq!(choose(&[seven.clone(), five.clone()]), Some(&five));
        // … and with only 7, its own server runs.
        let mut s = spec();
        apply(&mut s, choose(std::slice::from_ref(&seven)));
        assert_eq!(
            s.command,
            vec![
                seven.package.join("bin/tsc").to_string_lossy().into_owned(),
                "--lsp".to_owned(),
                "--stdio".to_owned()
            ]
        );
        assert_eq!(s.initialization_options, None);
    }

    #[test]
    fn the_folders_own_typescript_wins_and_a_configured_command_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        package(&root.join("node_modules/typescript"), "7.0.2", false);
        let global = tempfile::tempdir().unwrap();
        package(&global.path().join("typescript"), "5.9.3", true);
        let local = package_at(&root.join("node_modules/typescript"), true).unwrap();
        let five = package_at(&global.path().join("typescript"), false).unwrap();
        assert_eq!(choose(&[local.clone(), five]).map(|t| t.local), Some(true));
        let mut configured = spec();
        configured.command = vec!["my-ts-server".into()];
        apply(&mut configured, Some(&local));
        assert_eq!(configured.command, vec!["my-ts-server".to_owned()]);
        assert_eq!(configured.initialization_options, None);
        // Nothing at all: the spec says so.
        let mut none = spec();
        apply(&mut none, None);
        assert!(none.note.unwrap().starts_with("no TypeScript found"));
        // Not a TypeScript package.
        std::fs::write(
            root.join("package.json"),
            r#"{"name": "other", "version": "1.0.0"}"#,
        )
        .unwrap();
        assert_eq!(package_at(&root, true), None);
    }
}
