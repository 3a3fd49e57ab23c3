//! `seal` in a process of its own (it must run before any thread exists, so
//! this test has no harness): the parent starts this binary again with
//! secrets in its environment, and reads the child's `/proc/<pid>/environ`
//! from outside while the child waits.
#![expect(
    clippy::disallowed_methods,
    reason = "the test starts itself as the sealed child"
)]
#![expect(clippy::unwrap_used, reason = "a test")]
#![expect(
    clippy::print_stdout,
    reason = "speaks the test runners' listing protocol"
)]

use std::io::{BufRead as _, Write as _};
use std::process::{Command, Stdio};

const CHILD: &str = "COCODE_SEAL_TEST_CHILD";
const KEY: &str = "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

fn main() {
    if std::env::var_os(CHILD).is_some() {
        child();
        return;
    }
    // The listing test runners ask for (`--list`, `--list --ignored`).
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        if !args.iter().any(|a| a == "--ignored") {
            println!("sealed_secrets_leave_the_environment_and_its_starting_block: test");
        }
        return;
    }
    parent();
}

fn child() {
    // SAFETY: no thread has started: this is the first thing the child does.
    #[expect(unsafe_code, reason = "the call under test")]
    let sealed = unsafe {
        cocode_platform::seal::seal(|name, value| {
            name.ends_with("_API_KEY") || value.starts_with("ghp_")
        })
    };
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "names={} kept={} token={} env={} plain={} undumpable={}",
        sealed.names().collect::<Vec<_>>().join(","),
        sealed.var("ANTHROPIC_API_KEY").unwrap_or_default() == KEY,
        sealed.var("SOME_VALUE").unwrap_or_default() == TOKEN,
        std::env::var("ANTHROPIC_API_KEY").is_err() && std::env::var("SOME_VALUE").is_err(),
        sealed.var("PLAIN").unwrap_or_default(),
        cocode_platform::seal::undumpable(),
    )
    .unwrap();
    out.flush().unwrap();
    drop(out);
    // Wait until the parent has looked.
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
}

fn parent() {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, "1")
        .env("ANTHROPIC_API_KEY", KEY)
        .env("SOME_VALUE", TOKEN)
        .env("PLAIN", "visible")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut report = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut report)
        .unwrap();
    #[cfg(target_os = "linux")]
    let expected = "names=ANTHROPIC_API_KEY,SOME_VALUE kept=true token=true env=true plain=visible undumpable=true\n";
    #[cfg(not(target_os = "linux"))]
    let expected = "names=ANTHROPIC_API_KEY,SOME_VALUE kept=true token=true env=true plain=visible undumpable=false\n";
    assert_eq!(report, expected);
    #[cfg(target_os = "linux")]
    {
        // What another process sees (root may still read the file).
        match std::fs::read(format!("/proc/{}/environ", child.id())) {
            Ok(block) => {
                let text = String::from_utf8_lossy(&block);
                assert!(!text.contains(KEY), "the key is still in the block");
                assert!(!text.contains(TOKEN), "the token is still in the block");
                assert!(text.contains("PLAIN=visible"), "{text}");
                assert!(text.contains("ANTHROPIC_API_KEY=\0"), "{text}");
            }
            // Not root: the undumpable process's file is closed to us.
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied),
        }
    }
    child.stdin.take().unwrap().write_all(b"\n").unwrap();
    assert!(child.wait().unwrap().success());
    println!("test sealed_secrets_leave_the_environment_and_its_starting_block ... ok");
}
