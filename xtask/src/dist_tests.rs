use super::*;
use pretty_assertions::assert_eq;

/// Every file and folder below `dir`, relative, sorted.
pub(crate) fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[path = "../../tests/support/require.rs"]
mod require;

/// Runs `sh script` with `vars` set (and no `PREFIX` unless given); it
/// must succeed.
fn run_sh(script: &Path, vars: &[(&str, &Path)]) {
    let mut command = Command::new("sh");
    command.arg(script).env_remove("PREFIX");
    for (name, value) in vars {
        command.env(name, value);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A work folder with a stand-in for the release binary (`script` is its
/// shell body: the packaging is what is tested) and the tarball's folder
/// staged around it.
fn staged(script: &str) -> (tempfile::TempDir, PathBuf) {
    let root = crate::repo_root().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fake = work.path().join("cocode");
    std::fs::write(&fake, format!("#!/bin/sh\n{script}")).unwrap();
    let dir = stage(&root, &fake, work.path(), "cocode-test").unwrap();
    (work, dir)
}

#[test]
fn the_tarball_installs_into_a_home_and_uninstalls_leaving_nothing() {
    let (work, staged) = staged("echo \"cocode $*\"\n");
    let home = work.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join(".profile"), "# the person's own file\n").unwrap();
    let before = tree(&home);

    run_sh(&staged.join("install.sh"), &[("HOME", &home)]);
    let prefix = home.join(".local");
    let installed = tree(&home);
    for expected in [
        ".local/bin/cocode",
        ".local/share/applications/cocode.desktop",
        ".local/share/icons/hicolor/16x16/apps/cocode.png",
        ".local/share/icons/hicolor/512x512/apps/cocode.png",
        ".local/share/cocode/uninstall.sh",
        ".local/share/cocode/installed",
        ".local/share/cocode/apparmor-cocode",
    ] {
        assert!(
            installed.contains(&expected.to_owned()),
            "{expected}: {installed:?}"
        );
    }
    // The AppArmor profile an administrator may install names this
    // install's program.
    let profile = std::fs::read_to_string(prefix.join("share/cocode/apparmor-cocode")).unwrap();
    assert!(
        profile.contains(&format!(
            "\nprofile cocode {} flags=(unconfined) {{\n  userns,\n",
            prefix.join("bin/cocode").display()
        )),
        "{profile}"
    );
    let ran = Command::new(prefix.join("bin/cocode"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "cocode --version\n");
    let entry = std::fs::read_to_string(prefix.join("share/applications/cocode.desktop")).unwrap();
    assert!(
        entry.contains(&format!(
            "\nExec={} open %f\n",
            prefix.join("bin/cocode").display()
        )),
        "{entry}"
    );
    assert!(entry.contains("\nMimeType=inode/directory;\n"));
    if require::require_program("desktop-file-validate") {
        let checked = Command::new("desktop-file-validate")
            .arg(prefix.join("share/applications/cocode.desktop"))
            .output()
            .unwrap();
        assert!(
            checked.status.success() && checked.stdout.is_empty(),
            "{}{}",
            String::from_utf8_lossy(&checked.stdout),
            String::from_utf8_lossy(&checked.stderr)
        );
    }

    run_sh(
        &prefix.join("share/cocode/uninstall.sh"),
        &[("HOME", &home)],
    );
    assert_eq!(tree(&home), before);
}

#[test]
fn an_existing_folder_of_the_person_stays_after_uninstall() {
    let (work, staged) = staged("");
    let prefix = work.path().join("prefix");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::write(prefix.join("bin/mine"), "").unwrap();
    run_sh(&staged.join("install.sh"), &[("PREFIX", &prefix)]);
    run_sh(&prefix.join("share/cocode/uninstall.sh"), &[]);
    assert_eq!(tree(&prefix), vec!["bin".to_owned(), "bin/mine".to_owned()]);
}

#[test]
fn the_version_is_the_workspaces() {
    let root = crate::repo_root().unwrap();
    assert_eq!(version(&root).unwrap(), env!("CARGO_PKG_VERSION"));
}

#[test]
fn the_deb_holds_the_program_entry_and_icons_with_its_dependencies() {
    if !require::require_program("dpkg-deb") {
        return;
    }
    let root = crate::repo_root().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fake = work.path().join("cocode");
    std::fs::write(&fake, "#!/bin/sh\n").unwrap();
    let deb = deb(&root, &fake, work.path(), "0.1.0").unwrap();
    assert_eq!(
        deb.file_name().unwrap().to_str().unwrap(),
        format!("cocode_0.1.0_{}.deb", deb_arch())
    );
    let field = |name: &str| {
        let out = Command::new("dpkg-deb")
            .args(["--field"])
            .arg(&deb)
            .arg(name)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(field("Package"), "cocode");
    assert_eq!(field("Version"), "0.1.0");
    assert_eq!(field("Depends"), DEB_DEPENDS);
    let listed = Command::new("dpkg-deb")
        .arg("--contents")
        .arg(&deb)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    for path in [
        "./usr/bin/cocode",
        "./usr/share/applications/cocode.desktop",
        "./usr/share/icons/hicolor/48x48/apps/cocode.png",
        "./usr/share/icons/hicolor/scalable/apps/cocode.svg",
        "./etc/apparmor.d/cocode",
    ] {
        let line = listed
            .lines()
            .find(|l| l.ends_with(path))
            .unwrap_or_else(|| panic!("{path} missing:\n{listed}"));
        assert!(line.contains("root/root"), "{line}");
        if path.ends_with("bin/cocode") {
            assert!(line.starts_with("-rwxr-xr-x"), "{line}");
        }
    }
    // The AppArmor profile names the installed program and allows it user
    // namespaces, and nothing else; it is a conffile, loaded on configure.
    let unpacked = work.path().join("unpacked");
    let control = work.path().join("control");
    for (flag, into) in [("--extract", &unpacked), ("--control", &control)] {
        let status = Command::new("dpkg-deb")
            .arg(flag)
            .arg(&deb)
            .arg(into)
            .status()
            .unwrap();
        assert!(status.success(), "{flag}");
    }
    let profile = std::fs::read_to_string(unpacked.join("etc/apparmor.d/cocode")).unwrap();
    let rules: Vec<&str> = profile
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(
        rules,
        [
            "abi <abi/4.0>,",
            "include <tunables/global>",
            "profile cocode /usr/bin/cocode flags=(unconfined) {",
            "userns,",
            "include if exists <local/cocode>",
            "}"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(control.join("conffiles")).unwrap(),
        "/etc/apparmor.d/cocode\n"
    );
    let postinst = std::fs::read_to_string(control.join("postinst")).unwrap();
    assert!(
        postinst.contains("apparmor_parser -r -T -W /etc/apparmor.d/cocode"),
        "{postinst}"
    );
    std::fs::remove_dir_all(&unpacked).unwrap();
    std::fs::remove_dir_all(&control).unwrap();
    // The staging folder is gone; only the package is left.
    let mut left: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        vec![
            "cocode".to_owned(),
            format!("cocode_0.1.0_{}.deb", deb_arch())
        ]
    );
}

#[test]
fn the_release_workflow_builds_every_package_on_a_tag_and_checks_the_versions() {
    let root = crate::repo_root().unwrap();
    let text = std::fs::read_to_string(root.join(".github/workflows/release.yml")).unwrap();
    let workflow: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    assert_eq!(
        workflow["on"]["push"]["tags"],
        serde_yaml_ng::from_str::<serde_yaml_ng::Value>("[\"v*\"]").unwrap()
    );
    let jobs = workflow["jobs"].as_mapping().unwrap();
    let names: Vec<&str> = jobs.keys().filter_map(|k| k.as_str()).collect();
    assert_eq!(
        names,
        ["linux", "windows", "windows-under-wine", "macos", "release"]
    );
    let runs = |job: &str| -> String {
        workflow["jobs"][job]["steps"]
            .as_sequence()
            .unwrap()
            .iter()
            .filter_map(|s| s["run"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (job, builds) in [
        ("linux", "cargo xtask dist"),
        ("windows", "cargo build --release --locked -p cocode"),
        ("macos", "cargo xtask dist"),
    ] {
        let steps = runs(job);
        assert!(steps.contains(builds), "{job}: {steps}");
        assert!(
            steps.contains("--version") && steps.contains("GITHUB_REF_NAME#v"),
            "{job} checks the tag against `cocode --version`: {steps}"
        );
    }
    assert!(runs("windows").contains("assets\\windows\\cocode.iss"));
    assert!(runs("macos").contains("plutil -lint"));
    // The Windows program runs under Wine before anything is published.
    assert!(runs("windows-under-wine").contains("cargo xtask windows-check"));
    assert_eq!(
        workflow["jobs"]["release"]["needs"],
        serde_yaml_ng::from_str::<serde_yaml_ng::Value>(
            "[linux, windows, windows-under-wine, macos]"
        )
        .unwrap()
    );
    // The installer script takes the version and the program's folder.
    let iss = std::fs::read_to_string(root.join("assets/windows/cocode.iss")).unwrap();
    for needed in [
        "AppVersion={#Version}",
        "Source: \"{#Source}\\cocode.exe\"",
        "SetupIconFile=..\\icon\\cocode.ico",
        "PrivilegesRequired=lowest",
    ] {
        assert!(iss.contains(needed), "{needed}");
    }
}
