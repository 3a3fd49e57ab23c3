//! The credential vault against a real Secret Service (gnome-keyring in a
//! private D-Bus session with a throwaway HOME), and its locked and missing
//! cases. The keyring crate picks its store once per process, so every case
//! runs in a child process (`vault_child` with `COCODE_VAULT_SCENARIO`).

use std::path::Path;
use std::process::Command;

use cocode_core::ids::ProviderId;
use cocode_core::services::{CredentialVault, Secret};
use cocode_toolchain::vault::KeyringVault;
use pretty_assertions::assert_eq;

use super::common::require;

fn show(result: Result<Option<Secret>, cocode_core::services::VaultError>) -> String {
    match result {
        Ok(Some(s)) => format!("value:{}", s.expose()),
        Ok(None) => "none".to_owned(),
        Err(e) => format!("err:{}", e.code()),
    }
}

/// The child side; a no-op unless the parent set the scenario.
#[test]
fn vault_child() {
    let Ok(scenario) = std::env::var("COCODE_VAULT_SCENARIO") else {
        return;
    };
    let vault = KeyringVault;
    let p = ProviderId::new("anthropic").unwrap();
    match scenario.as_str() {
        "set" => {
            println!("before {}", show(vault.get(&p)));
            println!(
                "set {}",
                vault
                    .set(&p, &Secret::new("sk-ant-test-1"))
                    .map_or_else(|e| e.code().to_owned(), |()| "ok".into())
            );
        }
        "get-delete" => {
            println!("read {}", show(vault.get(&p)));
            println!(
                "delete {}",
                vault
                    .delete(&p)
                    .map_or_else(|e| e.code().to_owned(), |()| "ok".into())
            );
            println!("after {}", show(vault.get(&p)));
        }
        "probe" => {
            println!("get {}", show(vault.get(&p)));
            println!(
                "set {}",
                vault
                    .set(&p, &Secret::new("x"))
                    .map_or_else(|e| format!("err:{}", e.code()), |()| "ok".into())
            );
        }
        other => panic!("unknown scenario {other}"),
    }
}

/// Runs `script` under `dbus-run-session` with a private HOME; `$EXE` runs
/// the child test with the scenario given as its first argument.
fn session(home: &Path, script: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    let runtime = home.join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    // The children's lines go to a file, not to a pipe: a keyring daemon
    // the bus started can outlive the session holding the pipe open, and
    // reading to its end would wait for it.
    let lines = home.join("lines");
    let full = format!(
        "child() {{ COCODE_VAULT_SCENARIO=\"$1\" \"$EXE\" --exact suite::vault::vault_child --nocapture --test-threads=1 --quiet | grep -E '^(before|set|read|delete|after|get) ' >> \"$COCODE_LINES\"; }}\n{script}"
    );
    Command::new("dbus-run-session")
        .args(["--", "bash", "-c", &full])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("EXE", exe)
        .env("COCODE_LINES", &lines)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    std::fs::read_to_string(&lines).unwrap_or_default()
}

#[test]
fn a_key_round_trips_through_the_real_secret_service_across_processes() {
    if !(require("dbus-run-session") && require("gnome-keyring-daemon")) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let out = session(
        home.path(),
        "echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null\nchild set\nchild get-delete\n",
    );
    assert_eq!(
        out,
        "before none\nset ok\nread value:sk-ant-test-1\ndelete ok\nafter none\n"
    );
}

#[test]
fn a_locked_store_and_a_missing_store_are_reported_and_nothing_is_written() {
    if !(require("dbus-run-session") && require("gnome-keyring-daemon")) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let out = session(
        home.path(),
        "gnome-keyring-daemon --start --components=secrets >/dev/null\nchild probe\n",
    );
    // A locked collection hides its items (a read finds no key); a write is
    // refused as locked and stores nothing.
    assert_eq!(out, "get none\nset err:CREDENTIAL_VAULT_LOCKED\n");
    // No session bus at all.
    let empty_home = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([
            "--exact",
            "suite::vault::vault_child",
            "--nocapture",
            "--test-threads=1",
            "--quiet",
        ])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", empty_home.path())
        .env("COCODE_VAULT_SCENARIO", "probe")
        .output()
        .unwrap();
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("get ") || l.starts_with("set "))
        .map(ToOwned::to_owned)
        .collect();
    assert_eq!(
        lines,
        vec![
            "get err:CREDENTIAL_VAULT_UNAVAILABLE",
            "set err:CREDENTIAL_VAULT_UNAVAILABLE"
        ]
    );
    assert_eq!(
        std::fs::read_dir(empty_home.path()).unwrap().count(),
        0,
        "nothing written instead"
    );
}
