//! The real binary opens a real window: `cocode open DIR` under a virtual X
//! server must map a top-level window titled "cocode" and keep running.

#![expect(
    clippy::disallowed_methods,
    reason = "the test runs the app and builds a fixture folder"
)]

use std::process::Command;

#[cfg(target_os = "linux")]
#[path = "../../../tests/support/require.rs"]
mod peers;

#[cfg(target_os = "linux")]
fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Linux only: the virtual X server exists there (macOS and Windows CI
/// runners have a real desktop but no Xvfb).
#[cfg(target_os = "linux")]
#[test]
fn the_app_opens_a_window_with_a_folder() {
    // `cargo xtask test` installs both on CI and as root.
    if !peers::require(
        "xvfb-run and xwininfo (packages xvfb, xauth, x11-utils)",
        have("xvfb-run") && have("xwininfo"),
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("안녕하세요.md"), "# 안녕하세요\n").unwrap();
    let script = r#"
        "$0" open "$1" 2>"$2" & app=$!
        for i in $(seq 1 120); do
            if xwininfo -root -tree | grep -q '"cocode"'; then
                sleep 1
                if kill -0 $app 2>/dev/null; then echo WINDOW; kill $app; exit 0; fi
                echo DIED; exit 3
            fi
            if ! kill -0 $app 2>/dev/null; then echo EXITED; exit 4; fi
            sleep 0.25
        done
        kill $app; echo TIMEOUT; exit 5
    "#;
    let log = dir.path().join("stderr.log");
    let attempt = || {
        let output = Command::new("xvfb-run")
            .args(["-a", "-s", "-screen 0 1280x800x24", "sh", "-c", script])
            .arg(env!("CARGO_BIN_EXE_cocode"))
            .arg(dir.path())
            .arg(&log)
            // The window remembers its folders: not in the person's own.
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        (stdout, std::fs::read_to_string(&log).unwrap_or_default())
    };
    let (mut stdout, mut stderr) = attempt();
    // On a loaded machine the virtual X server is sometimes not accepting
    // connections yet when the app starts; that is the server's start-up,
    // not the app, so it gets one more try. Any other failure fails.
    if stdout != "WINDOW" && stderr.contains("Failed to open connection to X server") {
        (stdout, stderr) = attempt();
    }
    assert_eq!(stdout, "WINDOW", "app stderr:\n{stderr}");
}

#[test]
fn opening_a_missing_folder_fails_with_a_clear_message() {
    let output = Command::new(env!("CARGO_BIN_EXE_cocode"))
        .args(["open", "/nonexistent/cocode-test-folder"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("cocode: cannot open folder /nonexistent/cocode-test-folder"),
        "{stderr}"
    );
}
