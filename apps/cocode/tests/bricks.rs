//! `cocode bricks` and `cocode new` through the real binary, with a bricks
//! folder of the person's own (one good brick, one broken).
#![expect(
    clippy::disallowed_methods,
    reason = "the test builds brick folders and runs the binary"
)]
#![expect(clippy::unwrap_used, reason = "test code")]

use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;

fn cocode(bricks: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args(args)
        .env("COCODE_BRICKS_DIR", bricks)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn new_workspaces_come_from_built_in_and_personal_bricks() {
    let home = tempfile::tempdir().unwrap();
    let bricks = home.path().join("bricks");
    std::fs::create_dir_all(bricks.join("notes/template/docs")).unwrap();
    std::fs::write(
        bricks.join("notes/brick.toml"),
        "name = \"notes\"\ndescription = \"Notes\"\n[[variables]]\nname = \"owner\"\n",
    )
    .unwrap();
    std::fs::write(
        bricks.join("notes/template/docs/{{ owner }}.md"),
        "# {{ owner }}'s notes\n",
    )
    .unwrap();
    std::fs::create_dir_all(bricks.join("broken")).unwrap();
    std::fs::write(
        bricks.join("broken/brick.toml"),
        "name = \"Broken Name\"\ndescription = \"x\"\n",
    )
    .unwrap();

    let (code, listing, _) = cocode(&bricks, &["bricks"]);
    assert_eq!(code, 0);
    assert!(
        listing.contains("notes — Notes\n  owner (text; required) \n"),
        "{listing}"
    );
    assert!(listing.contains("rust-lib — Rust library"), "{listing}");
    assert!(
        listing.contains("not loaded: brick at ")
            && listing.contains("\"Broken Name\" must be lower-case"),
        "{listing}"
    );

    let dest = home.path().join("mine");
    let dest_arg = dest.to_str().unwrap();
    let (code, out, err) = cocode(&bricks, &["new", dest_arg, "--brick", "notes"]);
    assert_eq!(
        (code, err.trim()),
        (
            1,
            "cocode: rejected before any write: variable \"owner\" is required"
        )
    );
    assert!(out.starts_with("not loaded: brick at "), "{out}");
    assert!(!dest.exists());
    let (code, out, err) = cocode(
        &bricks,
        &["new", dest_arg, "--brick", "notes", "--var", "owner=지민"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().last().unwrap().starts_with("created "), "{out}");
    assert_eq!(
        std::fs::read_to_string(dest.join("docs/지민.md")).unwrap(),
        "# 지민's notes\n"
    );
    let (code, _, err) = cocode(&bricks, &["new", dest_arg, "--brick", "rust-bin"]);
    assert_eq!(code, 1);
    assert!(err.contains("already exists"), "{err}");
}
