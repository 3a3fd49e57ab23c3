//! Pure scaffolding steps: resolving the variables of a request and
//! rendering a brick's files and hooks in memory. Nothing here touches the
//! disk, so every error is reported before the first write.

use std::collections::{BTreeMap, BTreeSet};

use cocode_core::path::{
    CaseSensitivity, NormalizeOptions, PathStyle, UnicodeSensitivity, normalize,
};
use cocode_core::services::{BrickVariable, BrickVariableKind};
use minijinja::{Environment, UndefinedBehavior, Value};

use crate::manifest::{FOLDER_NAME, Hooks, Manifest};

/// One file of a brick's `template/` folder: its path (`/`-separated,
/// itself a template) and its bytes (a template when UTF-8 text, copied
/// as they are otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// A rendered file, relative to the staging folder. Its path has only
/// normal segments that every supported OS can store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// Everything a scaffold will do, decided before anything is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub files: Vec<RenderedFile>,
    pub pre: Vec<Vec<String>>,
    pub post: Vec<Vec<String>>,
    pub timeout_secs: u64,
}

/// Hooks run at most this long unless the brick says otherwise.
pub const DEFAULT_HOOK_TIMEOUT_SECS: u64 = 300;

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_keep_trailing_newline(true);
    env
}

/// The template context of a request: every declared variable with its
/// typed value (given, or the default rendered against `folder_name`), and
/// `folder_name`.
pub fn resolve(
    manifest: &Manifest,
    folder_name: &str,
    given: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, Value>, String> {
    let declared: BTreeSet<&str> = manifest.variables.iter().map(|v| v.name.as_str()).collect();
    if let Some(unknown) = given.keys().find(|k| !declared.contains(k.as_str())) {
        let known: Vec<&str> = declared.into_iter().collect();
        return Err(format!(
            "unknown variable {unknown:?} (this brick has: {})",
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        ));
    }
    let mut context = BTreeMap::new();
    context.insert(FOLDER_NAME.to_owned(), Value::from(folder_name));
    for var in &manifest.variables {
        let raw = match given.get(&var.name) {
            Some(value) => value.clone(),
            None => default_value(var, folder_name)?
                .ok_or_else(|| format!("variable {:?} is required", var.name))?,
        };
        context.insert(var.name.clone(), typed(var, &raw)?);
    }
    Ok(context)
}

/// A variable's default for a destination folder name, rendered.
pub fn default_value(var: &BrickVariable, folder_name: &str) -> Result<Option<String>, String> {
    let Some(template) = &var.default else {
        return Ok(None);
    };
    let ctx = BTreeMap::from([(FOLDER_NAME, folder_name)]);
    environment()
        .render_str(template, ctx)
        .map(Some)
        .map_err(|e| format!("the default of {:?} does not render: {e}", var.name))
}

fn typed(var: &BrickVariable, raw: &str) -> Result<Value, String> {
    let name = &var.name;
    match var.kind {
        BrickVariableKind::String => {
            if let Some(pattern) = &var.pattern {
                let full = regex::Regex::new(&format!("^(?:{pattern})$"))
                    .map_err(|e| format!("variable {name:?}: bad pattern: {e}"))?;
                if !full.is_match(raw) {
                    return Err(format!(
                        "variable {name:?}: {raw:?} does not match {pattern}"
                    ));
                }
            }
            Ok(Value::from(raw))
        }
        BrickVariableKind::Bool => match raw {
            "true" => Ok(Value::from(true)),
            "false" => Ok(Value::from(false)),
            _ => Err(format!(
                "variable {name:?}: expected true or false, got {raw:?}"
            )),
        },
        BrickVariableKind::Integer => raw
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("variable {name:?}: expected an integer, got {raw:?}")),
        BrickVariableKind::Choice => {
            if var.choices.iter().any(|c| c == raw) {
                Ok(Value::from(raw))
            } else {
                Err(format!(
                    "variable {name:?}: {raw:?} is not one of {}",
                    var.choices.join(", ")
                ))
            }
        }
    }
}

/// Renders the files and hook commands. A file whose path has a segment
/// that renders to nothing (`{% if with_tests %}tests{% endif %}/it.rs` with
/// `with_tests = false`) is left out; any other path that is absolute,
/// contains `..`, or names something Windows cannot store is refused, as
/// are two files landing on one path (compared case-insensitively, so the
/// result also fits a case-insensitive volume).
pub fn render(
    files: &[TemplateFile],
    hooks: &Hooks,
    context: &BTreeMap<String, Value>,
) -> Result<Plan, String> {
    let env = environment();
    let mut rendered = Vec::with_capacity(files.len());
    let mut taken = BTreeSet::new();
    for file in files {
        // Segment by segment, so only a segment that is a template and
        // renders to nothing leaves the file out; a value that brings its
        // own `/` (`/etc/passwd`) stays visible to the checks below.
        let mut segments = Vec::new();
        for segment in file.path.split('/') {
            segments.push(
                env.render_str(segment, context)
                    .map_err(|e| format!("path {:?}: {e}", file.path))?,
            );
        }
        if segments.iter().any(String::is_empty) {
            continue;
        }
        let path = segments.join("/");
        let path = safe_path(&path)
            .map_err(|e| format!("path {:?} renders to {path:?}: {e}", file.path))?;
        if !taken.insert(path.to_lowercase()) {
            return Err(format!("two template files render to {path:?}"));
        }
        let bytes = match std::str::from_utf8(&file.bytes) {
            Ok(text) => env
                .render_str(text, context)
                .map_err(|e| format!("{:?}: {e}", file.path))?
                .into_bytes(),
            Err(_) => file.bytes.clone(),
        };
        rendered.push(RenderedFile { path, bytes });
    }
    let argv = |cmds: &[Vec<String>]| -> Result<Vec<Vec<String>>, String> {
        cmds.iter()
            .map(|cmd| {
                cmd.iter()
                    .map(|arg| {
                        env.render_str(arg, context)
                            .map_err(|e| format!("hook argument {arg:?}: {e}"))
                    })
                    .collect()
            })
            .collect()
    };
    Ok(Plan {
        files: rendered,
        pre: argv(&hooks.pre)?,
        post: argv(&hooks.post)?,
        timeout_secs: hooks.timeout_secs.unwrap_or(DEFAULT_HOOK_TIMEOUT_SECS),
    })
}

/// A relative path every OS can store inside the staging folder.
fn safe_path(rendered: &str) -> Result<String, String> {
    if rendered.contains('\\') {
        return Err("a backslash is not a path separator in a brick".to_owned());
    }
    let options = NormalizeOptions {
        case: CaseSensitivity::Sensitive,
        unicode: UnicodeSensitivity::Insensitive,
        style: PathStyle::Windows,
    };
    let normalized = normalize(rendered, options).map_err(|e| e.to_string())?;
    if rendered.split('/').any(str::is_empty) {
        return Err("empty path segment".to_owned());
    }
    if normalized.is_in_cocode_dir() {
        return Err("the .cocode folder belongs to cocode".to_owned());
    }
    Ok(normalized.as_str().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn manifest(vars: &str) -> Manifest {
        crate::manifest::parse(&format!("name = \"t\"\ndescription = \"d\"\n{vars}")).unwrap()
    }

    fn file(path: &str, text: &str) -> TemplateFile {
        TemplateFile {
            path: path.into(),
            bytes: text.as_bytes().to_vec(),
        }
    }

    #[test]
    fn given_values_and_rendered_defaults_are_typed() {
        let m = manifest(
            "[[variables]]\nname = \"pkg\"\ndefault = \"{{ folder_name | lower }}\"\npattern = \"[a-z-]+\"\n\
             [[variables]]\nname = \"tests\"\ntype = \"bool\"\ndefault = \"false\"\n\
             [[variables]]\nname = \"port\"\ntype = \"integer\"\n",
        );
        let ctx = resolve(
            &m,
            "My-App",
            &BTreeMap::from([("port".into(), "8080".into())]),
        )
        .unwrap();
        assert_eq!(ctx["pkg"], Value::from("my-app"));
        assert_eq!(ctx["tests"], Value::from(false));
        assert_eq!(ctx["port"], Value::from(8080));
        assert_eq!(ctx["folder_name"], Value::from("My-App"));
    }

    #[test]
    fn bad_values_are_refused_with_the_variable_named() {
        let m = manifest(
            "[[variables]]\nname = \"pkg\"\npattern = \"[a-z]+\"\n\
             [[variables]]\nname = \"flag\"\ntype = \"bool\"\ndefault = \"true\"\n\
             [[variables]]\nname = \"lic\"\ntype = \"choice\"\nchoices = [\"MIT\"]\ndefault = \"MIT\"\n",
        );
        let with = |pairs: &[(&str, &str)]| {
            resolve(
                &m,
                "d",
                &pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            )
        };
        assert_eq!(with(&[]).unwrap_err(), "variable \"pkg\" is required");
        assert_eq!(
            with(&[("pkg", "abc1")]).unwrap_err(),
            "variable \"pkg\": \"abc1\" does not match [a-z]+"
        );
        assert_eq!(
            with(&[("pkg", "a"), ("flag", "yes")]).unwrap_err(),
            "variable \"flag\": expected true or false, got \"yes\""
        );
        assert_eq!(
            with(&[("pkg", "a"), ("lic", "GPL")]).unwrap_err(),
            "variable \"lic\": \"GPL\" is not one of MIT"
        );
        assert_eq!(
            with(&[("pkg", "a"), ("colour", "red")]).unwrap_err(),
            "unknown variable \"colour\" (this brick has: flag, lic, pkg)"
        );
    }

    #[test]
    fn paths_and_contents_render_and_empty_conditional_paths_are_left_out() {
        let m = manifest(
            "[[variables]]\nname = \"name\"\n[[variables]]\nname = \"tests\"\ntype = \"bool\"\n",
        );
        let ctx = resolve(
            &m,
            "d",
            &BTreeMap::from([
                ("name".into(), "demo".into()),
                ("tests".into(), "false".into()),
            ]),
        )
        .unwrap();
        let files = [
            file(
                "src/{{ name }}.rs",
                "pub const NAME: &str = \"{{ name }}\";\n",
            ),
            file(
                "{% if tests %}tests{% endif %}/it.rs",
                "#[test] fn t() {}\n",
            ),
            TemplateFile {
                path: "logo.bin".into(),
                bytes: vec![0xff, 0x00, b'{', b'{'],
            },
        ];
        let hooks = Hooks {
            pre: vec![],
            post: vec![vec!["echo".into(), "{{ name }}".into()]],
            timeout_secs: None,
        };
        assert_eq!(
            render(&files, &hooks, &ctx).unwrap(),
            Plan {
                files: vec![
                    RenderedFile {
                        path: "src/demo.rs".into(),
                        bytes: b"pub const NAME: &str = \"demo\";\n".to_vec()
                    },
                    RenderedFile {
                        path: "logo.bin".into(),
                        bytes: vec![0xff, 0x00, b'{', b'{']
                    },
                ],
                pre: vec![],
                post: vec![vec!["echo".into(), "demo".into()]],
                timeout_secs: DEFAULT_HOOK_TIMEOUT_SECS,
            }
        );
    }

    #[test]
    fn rendered_paths_that_escape_or_collide_are_refused() {
        let m = manifest("[[variables]]\nname = \"p\"\n");
        let hooks = Hooks::default();
        for (value, message) in [
            ("../outside", "contains a '..' segment"),
            ("/etc/passwd", "absolute"),
            ("a/../../b", "'..'"),
            ("CON", "reserved device name"),
            ("a\\b", "backslash"),
            ("x\0y", "NUL"),
            (".COCODE/config/workspace.json", "belongs to cocode"),
        ] {
            let ctx = resolve(&m, "d", &BTreeMap::from([("p".into(), value.into())])).unwrap();
            let err = render(&[file("{{ p }}", "x")], &hooks, &ctx).unwrap_err();
            assert!(err.contains(message), "{value:?}: {err}");
        }
        let ctx = resolve(&m, "d", &BTreeMap::from([("p".into(), "README.md".into())])).unwrap();
        let err = render(
            &[file("{{ p }}", "a"), file("readme.MD", "b")],
            &hooks,
            &ctx,
        )
        .unwrap_err();
        assert_eq!(err, "two template files render to \"readme.MD\"");
        let err = render(&[file("a.txt", "{{ missing }}")], &hooks, &ctx).unwrap_err();
        assert!(err.contains("undefined"), "{err}");
    }
}
