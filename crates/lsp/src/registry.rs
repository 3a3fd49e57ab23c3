//! Which server speaks for which files, how to start it, and how to get it
//! when it is not installed.

use std::path::Path;

use cocode_core::workspace::LanguageServerEntry;

pub use crate::spec::ServerSpec;

/// The protocol's language id of a file.
pub fn language_id(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "toml" => "toml",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "dart" => "dart",
        _ => return None,
    })
}

fn spec(id: &str, extensions: &[&str], command: &[&str], install: &str) -> ServerSpec {
    ServerSpec {
        id: id.to_owned(),
        extensions: extensions.iter().map(|s| (*s).to_owned()).collect(),
        command: command.iter().map(|s| (*s).to_owned()).collect(),
        install: install.to_owned(),
        needs_trust: false,
        from_workspace: false,
        initialization_options: None,
        note: None,
        pull_is_final: false,
    }
}

/// The servers of one workspace: the built-in list with the person's and
/// the workspace's entries applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerRegistry {
    specs: Vec<ServerSpec>,
}

impl ServerRegistry {
    /// The servers cocode knows without configuration.
    pub fn with_defaults() -> Self {
        Self {
            specs: vec![
                spec(
                    "rust-analyzer",
                    &["rs"],
                    &["rust-analyzer"],
                    "rustup component add rust-analyzer",
                ),
                ServerSpec {
                    pull_is_final: true,
                    ..spec(
                        "pyright",
                        &["py", "pyi"],
                        &["pyright-langserver", "--stdio"],
                        "npm install -g pyright",
                    )
                },
                spec(
                    "typescript-language-server",
                    &["ts", "mts", "cts", "tsx", "js", "mjs", "cjs", "jsx"],
                    &["typescript-language-server", "--stdio"],
                    "npm install -g typescript-language-server typescript",
                ),
                spec(
                    "taplo",
                    &["toml"],
                    &["taplo", "lsp", "stdio"],
                    "cargo install taplo-cli --locked --features lsp",
                ),
                spec(
                    "gopls",
                    &["go"],
                    &["gopls"],
                    "go install golang.org/x/tools/gopls@latest",
                ),
                spec(
                    "clangd",
                    &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
                    &["clangd"],
                    "install clangd from your system's packages (apt install clangd)",
                ),
                spec(
                    "dart",
                    &["dart"],
                    &["dart", "language-server", "--protocol=lsp"],
                    "install the Dart SDK (dart.dev/get-dart)",
                ),
            ],
        }
    }

    /// Applies configuration entries in order (the person's, then the
    /// workspace's): an entry with a known id replaces its command (an
    /// empty command turns the server off) and, when given, its
    /// extensions; a new id adds a server.
    #[must_use]
    pub fn with_entries(mut self, entries: &[LanguageServerEntry]) -> Self {
        for entry in entries {
            let extensions: Vec<String> = entry
                .extensions
                .iter()
                .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
                .collect();
            if let Some(known) = self.specs.iter_mut().find(|s| s.id == entry.id) {
                known.command.clone_from(&entry.command);
                if !extensions.is_empty() {
                    known.extensions = extensions;
                }
            } else {
                self.specs.push(ServerSpec {
                    id: entry.id.clone(),
                    extensions,
                    command: entry.command.clone(),
                    install: format!("install {}", entry.command.first().map_or("", |c| c)),
                    needs_trust: false,
                    from_workspace: false,
                    initialization_options: None,
                    note: None,
                    pull_is_final: false,
                });
            }
        }
        self
    }

    /// Applies the workspace's own entries, as [`Self::with_entries`]
    /// does, and holds every command they bring that `trusted` does not
    /// accept: a cloned repository's configuration could otherwise name
    /// any program, started as soon as one of its files opens. Turning a
    /// server off, or naming other extensions for the same command, needs
    /// no trust.
    #[must_use]
    pub fn with_workspace_entries(
        self,
        entries: &[LanguageServerEntry],
        trusted: impl Fn(&[String]) -> bool,
    ) -> Self {
        let before = self.clone();
        let mut after = self.with_entries(entries);
        for spec in &mut after.specs {
            let unchanged = before
                .get(&spec.id)
                .is_some_and(|b| b.command == spec.command);
            if !unchanged && !spec.command.is_empty() {
                spec.from_workspace = true;
                spec.needs_trust = !trusted(&spec.command);
            }
        }
        after
    }

    /// Points the built-in TypeScript server at the TypeScript this
    /// folder uses (`typescript`): its own, else a global one.
    #[must_use]
    pub fn with_typescript(mut self, root: &Path, path_var: Option<&std::ffi::OsStr>) -> Self {
        if let Some(spec) = self
            .specs
            .iter_mut()
            .find(|s| s.id == crate::typescript::SERVER_ID)
        {
            let found = crate::typescript::installations(root, path_var);
            crate::typescript::apply(spec, crate::typescript::choose(&found));
        }
        self
    }

    pub fn specs(&self) -> &[ServerSpec] {
        &self.specs
    }

    pub fn get(&self, id: &str) -> Option<&ServerSpec> {
        self.specs.iter().find(|s| s.id == id)
    }

    /// The server of a file: the last configured server naming its
    /// extension, so a workspace's own server wins over a built-in one.
    pub fn for_path(&self, path: &Path) -> Option<&ServerSpec> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        self.specs
            .iter()
            .rev()
            .find(|s| !s.command.is_empty() && s.extensions.contains(&ext))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn entry(id: &str, command: &[&str], extensions: &[&str]) -> LanguageServerEntry {
        LanguageServerEntry {
            id: id.into(),
            command: command.iter().map(|s| (*s).to_owned()).collect(),
            extensions: extensions.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn each_language_finds_its_server() {
        let r = ServerRegistry::with_defaults();
        let id = |p: &str| r.for_path(Path::new(p)).map(|s| s.id.as_str());
        assert_eq!(id("src/main.rs"), Some("rust-analyzer"));
        assert_eq!(id("a/b.PY"), Some("pyright"));
        assert_eq!(id("web/app.tsx"), Some("typescript-language-server"));
        assert_eq!(id("Cargo.toml"), Some("taplo"));
        assert_eq!(id("x.go"), Some("gopls"));
        assert_eq!(id("x.hpp"), Some("clangd"));
        assert_eq!(id("main.dart"), Some("dart"));
        assert_eq!(id("README.md"), None);
        assert_eq!(id("Makefile"), None);
        assert_eq!(language_id(Path::new("a.tsx")), Some("typescriptreact"));
        assert_eq!(language_id(Path::new("a.pyi")), Some("python"));
    }

    #[test]
    fn configuration_replaces_turns_off_and_adds_servers() {
        let r = ServerRegistry::with_defaults().with_entries(&[
            entry("pyright", &["basedpyright-langserver", "--stdio"], &[]),
            entry("taplo", &[], &[]),
            entry("ruff", &["ruff", "server"], &[".py"]),
        ]);
        assert_eq!(
            r.get("pyright").unwrap().command,
            vec!["basedpyright-langserver", "--stdio"]
        );
        assert_eq!(r.for_path(Path::new("Cargo.toml")), None);
        // The added server names .py after pyright, so it wins.
        assert_eq!(r.for_path(Path::new("a.py")).unwrap().id, "ruff");
        assert_eq!(r.get("ruff").unwrap().install, "install ruff");
        assert!(r.specs().iter().all(|s| !s.needs_trust));
    }

    #[test]
    fn commands_a_workspace_names_are_held_until_trusted() {
        let person = [entry(
            "pyright",
            &["basedpyright-langserver", "--stdio"],
            &[],
        )];
        let workspace = [
            // Its own command for a known server, and a new server.
            entry("rust-analyzer", &["sh", "-c", "touch /tmp/owned"], &[]),
            entry("evil", &["./tools/lsp"], &["txt"]),
            // The person's command again, with other extensions: no trust.
            entry(
                "pyright",
                &["basedpyright-langserver", "--stdio"],
                &["py", "pyw"],
            ),
            // Turned off: nothing to start.
            entry("taplo", &[], &[]),
        ];
        let trusted = |c: &[String]| c == ["./tools/lsp"];
        let r = ServerRegistry::with_defaults()
            .with_entries(&person)
            .with_workspace_entries(&workspace, trusted);
        let held: Vec<&str> = r
            .specs()
            .iter()
            .filter(|s| s.needs_trust)
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(held, ["rust-analyzer"]);
        assert_eq!(r.get("pyright").unwrap().extensions, ["py", "pyw"]);
        let none_trusted =
            ServerRegistry::with_defaults().with_workspace_entries(&workspace, |_| false);
        let held: Vec<&str> = none_trusted
            .specs()
            .iter()
            .filter(|s| s.needs_trust)
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(held, ["rust-analyzer", "pyright", "evil"]);
    }
}
