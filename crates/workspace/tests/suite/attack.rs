//! Attacks on the path policy: every one is refused with its code and
//! nothing is written anywhere.

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::WorkspaceFileGate;
use pretty_assertions::assert_eq;

use super::common::*;

#[test]
fn malformed_paths_are_invalid_before_they_reach_the_disk() {
    let (_d, ws) = workspace(&[]);
    let policy = ws.gate.policy();
    let got: Vec<(&str, WorkspaceErrorCode)> =
        ["../x", "a/../../x", "/etc/passwd", "C:/x", "a\0b", "", "./"]
            .into_iter()
            .map(|raw| (raw, policy.normalize("write", raw).unwrap_err().code))
            .collect();
    assert_eq!(
        got,
        ["../x", "a/../../x", "/etc/passwd", "C:/x", "a\0b", "", "./"]
            .into_iter()
            .map(|raw| (raw, WorkspaceErrorCode::PathInvalid))
            .collect::<Vec<_>>()
    );
    assert_eq!(tree(&ws.workspace.root), std::collections::BTreeMap::new());
}

/// Version-control metadata at any depth is the person's: an agent writes,
/// deletes or renames nothing in it (a hook or `core.fsmonitor` would run
/// in their own git, outside any sandbox), through a link to it neither;
/// a folder holding a repository still moves whole.
#[cfg(unix)]
#[test]
fn version_control_metadata_is_refused_at_any_depth_and_through_links() {
    let (_d, ws) = workspace(&[
        (".git/config", "[core]\n"),
        ("vendor/dep/.git/config", "[core]\n"),
        ("vendor/dep/lib.rs", "fn f() {}\n"),
        ("notes.txt", "n\n"),
    ]);
    let root = ws.workspace.root.clone();
    std::os::unix::fs::symlink(root.join(".git"), root.join("gitlink")).unwrap();
    let before = tree(&root);
    let c = ctx("t1", 1);
    let ops = [
        write(".git/hooks/pre-commit", b"#!/bin/sh\ntouch /tmp/owned\n"),
        write(".git/config", b"[core]\n\tfsmonitor = touch /tmp/owned\n"),
        write("vendor/dep/.git/hooks/post-checkout", b"x"),
        write("sub/.git/config", b"[core]\n\tfsmonitor = x\n"),
        write(".GIT/config", b"x"),
        write(".hg/hgrc", b"[hooks]\n"),
        write("gitlink/hooks/pre-commit", b"x"),
        delete(".git/config"),
        delete("vendor/dep/.git/config"),
        rename("notes.txt", "sub/.git/config"),
        rename(".git/config", "config-copy"),
    ];
    let codes: Vec<WorkspaceErrorCode> = ops
        .into_iter()
        .map(|op| ws.gate.apply(&c, op).unwrap_err().code)
        .collect();
    assert_eq!(codes, vec![WorkspaceErrorCode::PathNotWritable; 11]);
    assert_eq!(tree(&root), before);
    // The removal cocode makes of metadata a command made takes metadata
    // only.
    assert_eq!(
        ws.gate
            .remove_made_metadata(&c, &[p("notes.txt")])
            .unwrap_err()
            .code,
        WorkspaceErrorCode::PathNotWritable
    );
    assert_eq!(tree(&root), before);
    // A folder holding a repository moves whole.
    ws.gate.apply(&c, rename("vendor/dep", "moved")).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("moved/.git/config")).unwrap(),
        "[core]\n"
    );
}

#[test]
fn the_cocode_folder_is_refused_in_every_spelling() {
    let (_d, ws) = workspace(&[]);
    let c = ctx("t1", 1);
    let before_history = count_files(&ws.layout.cocode_dir());
    let spellings = [
        ".cocode/config/workspace.json",
        ".COCODE/x",
        ".CoCode/history/x",
        ".cocode/locks/edit_locks.json",
    ];
    let codes: Vec<WorkspaceErrorCode> = spellings
        .iter()
        .map(|raw| {
            let path = ws.gate.policy().normalize("write", raw).unwrap();
            ws.gate
                .apply(
                    &c,
                    cocode_core::gate::GateOp::Write {
                        path,
                        bytes: b"pwned".to_vec(),
                    },
                )
                .unwrap_err()
                .code
        })
        .collect();
    assert_eq!(codes, vec![WorkspaceErrorCode::PathNotWritable; 4]);
    // A compatibility spelling (full-width full stop) that folds to `.cocode`.
    let fullwidth = ws
        .gate
        .policy()
        .normalize("write", "\u{FF0E}cocode/x")
        .unwrap();
    let err = ws
        .gate
        .apply(
            &c,
            cocode_core::gate::GateOp::Write {
                path: fullwidth,
                bytes: b"x".to_vec(),
            },
        )
        .unwrap_err();
    assert_eq!(err.code, WorkspaceErrorCode::PathNotWritable);
    assert_eq!(count_files(&ws.layout.cocode_dir()), before_history);
    assert_eq!(tree(&ws.workspace.root), std::collections::BTreeMap::new());
}

#[cfg(unix)]
#[test]
fn a_symlink_inside_pointing_outside_is_outside() {
    let (d, ws) = workspace(&[]);
    let outside = d.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, ws.workspace.root.join("link")).unwrap();
    let err = ws
        .gate
        .apply(&ctx("t1", 1), write("link/evil.txt", b"x"))
        .unwrap_err();
    assert_eq!(err.code, WorkspaceErrorCode::PathNotWritable);
    assert_eq!(count_files(&outside), 0);
    // The same place listed as a write exception gets the other code.
    let mut config = cocode_core::workspace::WorkspaceConfig::default();
    config
        .write_exceptions
        .push(cocode_core::workspace::WriteException {
            name: "CACHE".into(),
            path: outside.clone(),
        });
    std::fs::write(
        ws.layout.config_file(),
        serde_json::to_vec(&config).unwrap(),
    )
    .unwrap();
    drop(ws);
    let ws = cocode_workspace::OpenWorkspace::open(&d.path().join("ws")).unwrap();
    let err = ws
        .gate
        .apply(&ctx("t1", 1), write("link/evil.txt", b"x"))
        .unwrap_err();
    assert_eq!(err.code, WorkspaceErrorCode::OutsideWorkspace);
    assert_eq!(count_files(&outside), 0);
    assert_eq!(ws.gate.store().task_ids().unwrap(), vec![]);
}

#[cfg(unix)]
#[test]
fn a_symlink_inside_pointing_inside_resolves_to_the_real_path() {
    let (_d, ws) = workspace(&[("real/a.txt", "A")]);
    std::os::unix::fs::symlink("real", ws.workspace.root.join("alias")).unwrap();
    let records = apply(&ws, &ctx("t1", 1), write("alias/a.txt", b"B"));
    assert_eq!(
        summary(&records),
        vec![(
            "modify".to_owned(),
            "real/a.txt".to_owned(),
            "gate".to_owned()
        )]
    );
    assert_eq!(
        std::fs::read_to_string(ws.workspace.root.join("real/a.txt")).unwrap(),
        "B"
    );
}

/// The race the openat-based disk layer closes: the policy check sees a real
/// folder, then the folder is swapped for a symlink to the outside before the
/// write. The write must fail and the outside must stay empty.
#[cfg(unix)]
#[test]
fn a_folder_swapped_for_a_symlink_between_check_and_write_is_refused() {
    let (d, ws) = workspace(&[("sub/a.txt", "A")]);
    let outside = d.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let root = ws.workspace.root.clone();
    let me = std::thread::current().id();
    let swap_outside = outside.clone();
    fail::cfg_callback("gate::after_journal", move || {
        if std::thread::current().id() == me && root.join("sub").is_dir() {
            std::fs::rename(root.join("sub"), root.join("sub-moved")).unwrap();
            std::os::unix::fs::symlink(&swap_outside, root.join("sub")).unwrap();
        }
    })
    .unwrap();
    let result = ws.gate.apply(&ctx("t1", 1), write("sub/a.txt", b"pwned"));
    fail::remove("gate::after_journal");
    let err = result.unwrap_err();
    assert_eq!(err.code, WorkspaceErrorCode::PathNotWritable);
    assert_eq!(count_files(&outside), 0);
    assert_eq!(
        std::fs::read_to_string(ws.workspace.root.join("sub-moved/a.txt")).unwrap(),
        "A"
    );
    assert_eq!(ws.gate.store().task_ids().unwrap(), vec![]);
    assert_eq!(pending_journals(&ws.layout.write_journal_dir()).len(), 0);
}

/// The read-side race: the old read path canonicalized, checked the prefix
/// and read later by path, so a folder swapped for a link in between made
/// it read outside. The one safe read path walks the real path without
/// following any link and fails instead.
#[cfg(unix)]
#[test]
fn a_folder_swapped_for_a_symlink_between_check_and_read_is_refused() {
    let (d, ws) = workspace(&[("sub/a.txt", "A")]);
    let outside = d.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("a.txt"), "SECRET").unwrap();
    let root = ws.workspace.root.clone();
    let swap = {
        let (root, outside) = (root.clone(), outside.clone());
        move || {
            std::fs::rename(root.join("sub"), root.join("sub-moved")).unwrap();
            std::os::unix::fs::symlink(&outside, root.join("sub")).unwrap();
        }
    };
    let unswap = {
        let root = root.clone();
        move || {
            std::fs::remove_file(root.join("sub")).unwrap();
            std::fs::rename(root.join("sub-moved"), root.join("sub")).unwrap();
        }
    };

    // The old way: check, then read by path. The attack works on it.
    let real = root.join("sub/a.txt").canonicalize().unwrap();
    assert!(real.starts_with(&root), "the check passes");
    swap();
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "SECRET");
    unswap();

    // The one safe read path, with the same swap between its two steps.
    let me = std::thread::current().id();
    let armed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let fire = std::sync::Arc::clone(&armed);
    fail::cfg_callback("read::after_resolve", move || {
        if std::thread::current().id() == me
            && fire.swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            swap();
        }
    })
    .unwrap();
    let result = ws.gate.read_file("read", &p("sub/a.txt"));
    fail::remove("read::after_resolve");
    assert!(
        !armed.load(std::sync::atomic::Ordering::SeqCst),
        "the swap ran"
    );
    let err = result.unwrap_err();
    assert_eq!(err.code, WorkspaceErrorCode::FileTypeConflict);
    assert!(!err.message.contains("SECRET"));
}

#[cfg(unix)]
#[test]
fn reads_stay_inside_the_workspace_and_out_of_cocode() {
    use WorkspaceErrorCode as C;
    use cocode_workspace::WorkspaceReader;
    let (d, ws) = workspace(&[("real/a.txt", "A"), ("dir/b.txt", "B")]);
    let root = ws.workspace.root.clone();
    let outside = d.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "SECRET").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink("real", root.join("alias")).unwrap();
    std::os::unix::fs::symlink(".cocode", root.join("state")).unwrap();
    // A FIFO: reading it must be refused, never block.
    #[cfg(target_os = "linux")]
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let reader = WorkspaceReader::open(&root, ws.workspace.options()).unwrap();
    let read = |raw: &str| {
        reader
            .normalize("read", raw)
            .and_then(|path| reader.read("read", &path))
            .map(|bytes| bytes.map(|b| String::from_utf8(b).unwrap()))
            .map_err(|e| e.code)
    };
    let mut cases = vec![
        ("real/a.txt", Ok(Some("A".to_owned()))),
        ("alias/a.txt", Ok(Some("A".to_owned()))),
        ("missing.txt", Ok(None)),
        ("../outside/secret.txt", Err(C::PathInvalid)),
        ("real/../../outside/secret.txt", Err(C::PathInvalid)),
        ("out/secret.txt", Err(C::OutsideWorkspace)),
        ("leak.txt", Err(C::OutsideWorkspace)),
        (".cocode/config/workspace.json", Err(C::OutsideWorkspace)),
        (".COCODE/config/workspace.json", Err(C::OutsideWorkspace)),
        (
            "\u{FF0E}cocode/config/workspace.json",
            Err(C::OutsideWorkspace),
        ),
        ("state/config/workspace.json", Err(C::OutsideWorkspace)),
        ("dir", Err(C::FileTypeConflict)),
    ];
    if cfg!(target_os = "linux") {
        cases.push(("pipe", Err(C::FileTypeConflict)));
    }
    for (raw, expected) in cases {
        assert_eq!(read(raw), expected, "{raw}");
    }
    // The gate reads through the same path.
    assert_eq!(
        ws.gate.read_file("read", &p("leak.txt")).unwrap_err().code,
        C::OutsideWorkspace
    );
    let prefix = reader
        .read_prefix("preview", &p("real/a.txt"), 0)
        .unwrap()
        .unwrap();
    assert_eq!((prefix.bytes, prefix.size), (Vec::new(), 1));
    // A file opened as a walk listed it follows no link at all, not even
    // one that stays inside, and never reaches `.cocode/`.
    let listed = |raw: &str| {
        use std::io::Read as _;
        reader
            .normalize("search", raw)
            .and_then(|path| reader.open_listed("search", &path))
            .map(|file| {
                file.map(|mut f| {
                    let mut text = String::new();
                    f.read_to_string(&mut text).unwrap();
                    text
                })
            })
            .map_err(|e| e.code)
    };
    let mut cases = vec![
        ("real/a.txt", Ok(Some("A".to_owned()))),
        ("missing.txt", Ok(None)),
        ("missing/a.txt", Ok(None)),
        ("alias/a.txt", Err(C::FileTypeConflict)),
        ("out/secret.txt", Err(C::FileTypeConflict)),
        ("leak.txt", Err(C::FileTypeConflict)),
        (".cocode/config/workspace.json", Err(C::OutsideWorkspace)),
        (".COCODE/config/workspace.json", Err(C::OutsideWorkspace)),
        ("state/config/workspace.json", Err(C::FileTypeConflict)),
        ("dir", Err(C::FileTypeConflict)),
    ];
    if cfg!(target_os = "linux") {
        cases.push(("pipe", Err(C::FileTypeConflict)));
    }
    for (raw, expected) in cases {
        assert_eq!(listed(raw), expected, "{raw}");
    }
}
