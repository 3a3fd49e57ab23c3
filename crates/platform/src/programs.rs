//! Finding an installed program on a `PATH` value (for install hints and
//! "installed" lines; the launcher itself resolves programs as the OS does).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Where `program` is found on `path_var` (a `PATH` value); a program
/// named with a slash is taken as given.
pub fn find_program(program: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    if program.contains('/') || program.contains('\\') {
        let p = PathBuf::from(program);
        return is_executable(&p).then_some(p);
    }
    std::env::split_paths(path_var?).find_map(|dir| {
        let candidates = if cfg!(windows) {
            vec![
                dir.join(format!("{program}.exe")),
                dir.join(format!("{program}.cmd")),
                dir.join(program),
            ]
        } else {
            vec![dir.join(program)]
        };
        candidates.into_iter().find(|c| is_executable(c))
    })
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

// The test makes executable files with Unix modes.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    #[expect(clippy::disallowed_methods, reason = "builds a fixture folder")]
    fn a_program_is_found_only_where_it_is_an_executable_file() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(b.join("tool-dir")).unwrap();
        std::fs::write(a.join("tool"), "#!/bin/sh\n").unwrap();
        std::fs::write(b.join("tool"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(b.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([&a, &b]).unwrap();
        assert_eq!(find_program("tool", Some(&path)), Some(b.join("tool")));
        assert_eq!(find_program("tool-dir", Some(&path)), None);
        assert_eq!(find_program("tool", None), None);
        assert_eq!(
            find_program(&b.join("tool").to_string_lossy(), None),
            Some(b.join("tool"))
        );
        assert_eq!(find_program(&a.join("tool").to_string_lossy(), None), None);
    }
}
