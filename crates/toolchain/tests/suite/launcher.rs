//! The launcher with real children: environment, timeouts, group kill,
//! output limits, missing programs, fail-closed agent launches.

use std::collections::BTreeSet;
use std::time::Duration;

use cocode_core::process::{ExitStatus, LaunchError, ProcessLauncher, SandboxProfile};
use pretty_assertions::assert_eq;

use super::common::*;

fn names(env_output: &str) -> BTreeSet<String> {
    env_output
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_profile_gets_only_whitelisted_variables_and_never_a_credential() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = std::sync::Arc::new(
        cocode_toolchain::PolicyProxy::start(policy(&[]))
            .await
            .unwrap(),
    );
    let l = launcher(Some(proxy), Some(dir.path()));
    let base: BTreeSet<String> = ["HOME", "LANG", "PATH"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let proxy_vars: BTreeSet<String> = [
        "ALL_PROXY",
        "GRADLE_OPTS",
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "JAVA_TOOL_OPTIONS",
        "NO_PROXY",
        // The command's private temp folder.
        "TEMP",
        "TMP",
        "TMPDIR",
        "all_proxy",
        "http_proxy",
        "https_proxy",
        "no_proxy",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    for (profile, extra) in [
        (SandboxProfile::Tool, BTreeSet::new()),
        (SandboxProfile::HumanTerminal, BTreeSet::new()),
        (agent(), proxy_vars.clone()),
    ] {
        let (status, out) = run(&l, spec(&["env"], profile.clone(), dir.path())).await;
        assert_eq!(status, ExitStatus::Code(0));
        let expected: BTreeSet<String> = base.union(&extra).cloned().collect();
        assert_eq!((profile.kind(), names(&out)), (profile.kind(), expected));
        assert!(
            !out.contains("must-not-leak")
                && !out.contains("must_not_leak")
                && !out.contains("hunter2"),
            "{out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_like_override_is_refused_and_an_agent_launch_without_a_proxy_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let l = launcher(None, Some(dir.path()));
    let mut s = spec(&["env"], SandboxProfile::Tool, dir.path());
    s.env_overrides.insert("NPM_TOKEN".into(), "x".into());
    assert_eq!(
        l.launch(s).err(),
        Some(LaunchError::CredentialLikeEnv("NPM_TOKEN".into()))
    );
    assert_eq!(
        l.launch(spec(&["env"], agent(), dir.path())).err(),
        Some(LaunchError::ProxyUnavailable)
    );
    assert_eq!(
        l.launch(spec(
            &["no-such-program-cocode"],
            SandboxProfile::Tool,
            dir.path()
        ))
        .err(),
        Some(LaunchError::NotFound("no-such-program-cocode".into()))
    );
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let l = launcher(None, Some(dir.path()));
    let pid_file = dir.path().join("grandchild.pid");
    let script = format!("sleep 60 & echo $! > {}; wait", pid_file.display());
    let mut s = spec(&["sh", "-c", &script], SandboxProfile::Tool, dir.path());
    s.timeout = Some(Duration::from_millis(500));
    let (status, _) = run(&l, s).await;
    assert_eq!(status, ExitStatus::TimedOut);
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_owned();
    // The background grandchild is gone too (reaped by init once killed).
    let mut alive = true;
    for _ in 0..50 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        alive = !stat.is_empty() && !stat.contains(") Z ");
        if !alive {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive, "grandchild {pid} survived the timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_beyond_the_limit_keeps_the_newest_bytes_and_stdin_reaches_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let l = launcher(None, Some(dir.path()));
    let mut s = spec(
        &[
            "sh",
            "-c",
            "i=0; while [ $i -lt 1000 ]; do echo line$i; i=$((i+1)); done",
        ],
        SandboxProfile::Tool,
        dir.path(),
    );
    s.output_byte_limit = Some(16);
    let (status, out) = run(&l, s).await;
    assert_eq!(
        (status, out.as_str()),
        (ExitStatus::Code(0), "line998\nline999\n")
    );
    let mut handle = l
        .launch(spec(&["cat"], SandboxProfile::Tool, dir.path()))
        .unwrap();
    handle.write_stdin("안녕\n".as_bytes()).await.unwrap();
    let status = handle.wait().await.unwrap();
    let mut echoed = Vec::new();
    while let Some(chunk) = handle.read_output().await {
        echoed.extend(chunk);
    }
    assert_eq!(
        (status, String::from_utf8(echoed).unwrap()),
        (ExitStatus::Code(0), "안녕\n".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_stdin_lets_a_filter_finish_while_its_output_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let l = launcher(None, Some(dir.path()));
    let input = "0123456789abcdef\n".repeat(4096);
    let mut handle = l
        .launch(spec(&["cat"], SandboxProfile::Tool, dir.path()))
        .unwrap();
    handle.write_stdin(input.as_bytes()).await.unwrap();
    handle.close_stdin();
    // Without the close, `cat` would wait for more input and its output
    // would never end.
    let echoed = tokio::time::timeout(Duration::from_secs(20), async {
        let mut echoed = Vec::new();
        while let Some(chunk) = handle.read_output().await {
            echoed.extend(chunk);
        }
        echoed
    })
    .await
    .expect("the output ended");
    assert_eq!(
        (handle.wait().await.unwrap(), echoed.len()),
        (ExitStatus::Code(0), input.len())
    );
    assert!(handle.write_stdin(b"late").await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_stops_a_running_child() {
    let dir = tempfile::tempdir().unwrap();
    let l = launcher(None, Some(dir.path()));
    let mut handle = l
        .launch(spec(&["sleep", "60"], SandboxProfile::Tool, dir.path()))
        .unwrap();
    handle.kill().await.unwrap();
    assert_eq!(handle.wait().await.unwrap(), ExitStatus::Killed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_launch_keeps_stderr_out_of_the_protocol_stream() {
    let dir = tempfile::tempdir().unwrap();
    let l = launcher(None, Some(dir.path()));
    let mut s = spec(
        &[
            "sh",
            "-c",
            "echo out1; echo err1 >&2; echo out2; echo err2 >&2",
        ],
        SandboxProfile::Tool,
        dir.path(),
    );
    s.io = cocode_core::process::LaunchIo::PipedSplit;
    let mut handle = l.launch(s).unwrap();
    let mut stderr = handle.take_stderr().unwrap();
    assert!(handle.take_stderr().is_none(), "taken once");
    let mut out = Vec::new();
    while let Some(chunk) = handle.read_output().await {
        out.extend(chunk);
    }
    let mut err = Vec::new();
    while let Some(chunk) = std::future::poll_fn(|cx| stderr.as_mut().poll_next(cx)).await {
        err.extend(chunk);
    }
    assert_eq!(String::from_utf8_lossy(&out), "out1\nout2\n");
    assert_eq!(String::from_utf8_lossy(&err), "err1\nerr2\n");
    assert_eq!(handle.wait().await.unwrap(), ExitStatus::Code(0));
    // A plain piped launch has no separate stderr.
    let mut handle = l
        .launch(spec(
            &["sh", "-c", "echo x >&2"],
            SandboxProfile::Tool,
            dir.path(),
        ))
        .unwrap();
    assert!(handle.take_stderr().is_none());
    assert_eq!(handle.read_output().await, Some(b"x\n".to_vec()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pty_child_sees_a_terminal_of_the_asked_size_and_echoes_input() {
    let dir = tempfile::tempdir().unwrap();
    let l = launcher(None, Some(dir.path()));
    let mut s = spec(
        &[
            "sh",
            "-c",
            "test -t 0 && stty size && read line && echo got:$line",
        ],
        SandboxProfile::HumanTerminal,
        dir.path(),
    );
    s.io = cocode_core::process::LaunchIo::Pty {
        rows: 33,
        cols: 101,
    };
    let mut handle = l.launch(s).unwrap();
    handle.write_stdin(b"hello\r").await.unwrap();
    let mut out = Vec::new();
    while let Some(chunk) = handle.read_output().await {
        out.extend(chunk);
    }
    let status = handle.wait().await.unwrap();
    let text = String::from_utf8_lossy(&out).replace('\r', "");
    assert_eq!(status, ExitStatus::Code(0));
    assert!(
        text.contains("33 101\n") && text.contains("got:hello\n"),
        "{text:?}"
    );
    // Agent children are never put on a PTY (they could not be confined).
    let mut s = spec(&["true"], agent(), dir.path());
    s.io = cocode_core::process::LaunchIo::Pty { rows: 24, cols: 80 };
    assert!(matches!(
        l.launch(s).err(),
        Some(LaunchError::ProxyUnavailable | LaunchError::Sandbox(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pty_child_past_its_time_limit_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let l = launcher(None, Some(dir.path()));
    let mut s = spec(&["sleep", "60"], SandboxProfile::HumanTerminal, dir.path());
    s.io = cocode_core::process::LaunchIo::Pty { rows: 24, cols: 80 };
    s.timeout = Some(Duration::from_millis(300));
    let mut handle = l.launch(s).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), handle.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, ExitStatus::TimedOut);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_credentials_live_exactly_as_long_as_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = std::sync::Arc::new(
        cocode_toolchain::PolicyProxy::start(policy(&[]))
            .await
            .unwrap(),
    );
    let l = launcher(Some(std::sync::Arc::clone(&proxy)), Some(dir.path()));
    // A launch that fails gives its credentials back at once.
    assert!(matches!(
        l.launch(spec(&["no-such-program-cocode"], agent(), dir.path()))
            .err(),
        Some(LaunchError::NotFound(_))
    ));
    assert_eq!(proxy.active_launches(), 0);
    let mut handle = l
        .launch(spec(&["sleep", "0.1"], agent(), dir.path()))
        .unwrap();
    assert_eq!(proxy.active_launches(), 1);
    assert_eq!(handle.wait().await.unwrap(), ExitStatus::Code(0));
    assert_eq!(proxy.active_launches(), 0);
}
