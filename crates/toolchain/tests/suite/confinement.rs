//! Landlock for agent children: writes outside the allowed set and
//! connections to anything but the proxy fail; writes inside and traffic
//! through the proxy work.

use std::path::Path;
use std::sync::Arc;

use cocode_core::process::{Confinement, ExitStatus, ProcessLauncher as _};
use cocode_toolchain::PolicyProxy;
use pretty_assertions::assert_eq;

use super::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confined_agent_child_writes_only_where_allowed_and_connects_only_to_the_proxy() {
    if !require_peer(
        "Landlock with network rules",
        matches!(
            cocode_toolchain::confine::available(),
            Confinement::Landlock
        ),
    ) {
        return;
    }
    if !require("curl") {
        return;
    }
    // Outside the temp folder, which agent children may write.
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    let outside = base.path().join("outside");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(ws.join(".cocode/history")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let port = http_server().await;
    let unlisted = http_server().await;
    let proxy = Arc::new(
        PolicyProxy::start(policy(&[format!("127.0.0.1:{port}")]))
            .await
            .unwrap(),
    );
    let l = launcher(Some(proxy), Some(&ws));
    let script = format!(
        "echo ok > src/inside.txt && echo 1; {{ echo bad > {out}/x.txt; }} 2>/dev/null && echo 2; {{ echo bad > .cocode/history/x; }} 2>/dev/null && echo 3; {{ echo t > /var/tmp/cocode-landlock-$$; }} 2>/dev/null && echo 4; echo t > \"$TMPDIR/x\" && echo 5; true",
        out = outside.display()
    );
    let (status, out) = run(&l, spec(&["sh", "-c", &script], agent(), &ws)).await;
    assert_eq!((status, out.as_str()), (ExitStatus::Code(0), "1\n5\n"));
    assert_eq!(
        std::fs::read_to_string(ws.join("src/inside.txt")).unwrap(),
        "ok\n"
    );
    assert!(!outside.join("x.txt").exists());
    assert!(!ws.join(".cocode/history/x").exists());
    // Direct connections are refused by the kernel; through the proxy works.
    let direct = format!("http://127.0.0.1:{unlisted}/");
    let (status, _) = run(
        &l,
        spec(&["curl", "-s", "--noproxy", "*", &direct], agent(), &ws),
    )
    .await;
    assert_eq!(status, ExitStatus::Code(7), "curl: couldn't connect");
    let through = format!("http://127.0.0.1:{port}/");
    let (status, out) = run(&l, spec(&["curl", "-s", &through], agent(), &ws)).await;
    assert_eq!((status, out.as_str()), (ExitStatus::Code(0), "hello"));
}

/// Landlock with network rules is here (a failure under CI, a skip elsewhere).
fn landlock() -> bool {
    require_peer(
        "Landlock with network rules",
        matches!(
            cocode_toolchain::confine::available(),
            Confinement::Landlock
        ),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_makes_no_hard_links_and_tools_that_link_copy_instead() {
    if !landlock() || !require("python3") {
        return;
    }
    let (_base, ws) = out_workspace();
    std::fs::write(ws.join("out/a.txt"), "a\n").unwrap();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws));
    // `ln` (`linkat`) and Python's `os.link` (`link`, or `linkat` when it
    // may not follow links) are refused, inside the workspace and from it
    // to the command's temp folder; `cp --link` too, and a plain copy
    // works.
    let script = r#"
cd out
ln a.txt b.txt 2>/dev/null || echo ln
ln a.txt "$TMPDIR/alias" 2>/dev/null || echo out
python3 -c '
import os
for name, follow in (("link", True), ("linkat", False)):
    try:
        os.link("a.txt", name, follow_symlinks=follow)
    except PermissionError:
        print(name, flush=True)
'
cp --link a.txt d.txt 2>/dev/null || echo cp
cp a.txt e.txt && echo copied
"#;
    let (status, out) = run(&l, spec(&["sh", "-c", script], agent(), &ws)).await;
    assert_eq!(
        (status, out.as_str()),
        (ExitStatus::Code(0), "ln\nout\nlink\nlinkat\ncp\ncopied\n")
    );
    let mut names: Vec<String> = std::fs::read_dir(ws.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.txt", "e.txt"]);
    assert_eq!(
        std::os::unix::fs::MetadataExt::nlink(&std::fs::metadata(ws.join("out/a.txt")).unwrap()),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_out_of_the_workspace_or_into_its_history_and_vcs_metadata_grant_nothing() {
    if !landlock() {
        return;
    }
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    let outside = base.path().join("outside");
    for dir in [
        ws.join("src"),
        ws.join(".cocode/history"),
        ws.join(".git/hooks"),
        outside.clone(),
    ] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    // What a cloned repository could ship.
    std::os::unix::fs::symlink(&outside, ws.join("escape")).unwrap();
    std::os::unix::fs::symlink(".cocode", ws.join("hist")).unwrap();
    std::os::unix::fs::symlink(".git/hooks", ws.join("hooks")).unwrap();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws));
    let script = "for f in escape/x hist/history/x hooks/pre-commit .git/hooks/post-checkout .git/config .git/new src/ok; do \
        if { printf bad >> \"$f\"; } 2>/dev/null; then echo \"wrote $f\"; else echo \"refused $f\"; fi; done; \
        { git config --file .git/config core.fsmonitor 'touch /tmp/pwned'; } 2>/dev/null && echo 'git config wrote'; true";
    let (status, out) = run(&l, spec(&["sh", "-c", script], agent(), &ws)).await;
    assert_eq!(
        (status, out.as_str()),
        (
            ExitStatus::Code(0),
            "refused escape/x\nrefused hist/history/x\nrefused hooks/pre-commit\nrefused .git/hooks/post-checkout\nrefused .git/config\nrefused .git/new\nwrote src/ok\n"
        )
    );
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert_eq!(
        std::fs::read_dir(ws.join(".cocode/history"))
            .unwrap()
            .count(),
        0
    );
    assert_eq!(std::fs::read_dir(ws.join(".git/hooks")).unwrap().count(), 0);
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(std::fs::read_to_string(ws.join("src/ok")).unwrap(), "bad");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_inside_the_system_temp_folder_keeps_its_history_and_commands_get_a_private_temp()
 {
    if !landlock() {
        return;
    }
    // The default place a person might open: below the system temp folder.
    let base = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let ws = base.path().join("ws");
    std::fs::create_dir_all(ws.join(".cocode/history/objects")).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join(".cocode/history/objects/blob"), "kept").unwrap();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws));
    let sibling = base.path().join("sibling.txt");
    let script = format!(
        "rm -rf {ws}/.cocode/history/objects 2>/dev/null; \
         {{ printf x > {sibling}; }} 2>/dev/null && echo 'wrote beside the workspace'; \
         [ \"$TMPDIR\" = \"$TMP\" ] && [ \"$TMP\" = \"$TEMP\" ] && echo same; \
         printf t > \"$TMPDIR/scratch\" && mkdir \"$TMPDIR/d\" && echo private; \
         echo \"$TMPDIR\"",
        ws = ws.display(),
        sibling = sibling.display(),
    );
    let (status, out) = run(&l, spec(&["sh", "-c", &script], agent(), &ws)).await;
    assert_eq!(status, ExitStatus::Code(0), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[..2], ["same", "private"], "{out}");
    let private = Path::new(lines[2]);
    assert!(
        private.starts_with(std::env::temp_dir().canonicalize().unwrap())
            && private
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(cocode_toolchain::scratch::PREFIX),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".cocode/history/objects/blob")).unwrap(),
        "kept"
    );
    assert!(!sibling.exists());
    // The private folder went away with the command.
    assert!(!private.exists(), "{out}");
}

/// A Python script that tries each kind of socket and prints, per kind,
/// `ok` or the errno's name.
fn socket_attacks(udp_port: u16, abstract_name: &str, proxy_port: u16, outside: &str) -> String {
    let unix = unix_socket_attacks(outside);
    format!(
        r#"
import errno, socket
def attempt(name, f):
    try:
        f()
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
def udp_send():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", {udp_port}))
def udp6():
    socket.socket(socket.AF_INET6, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
def udp_bind():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).bind(("127.0.0.1", 0))
def own_unix():
    import os, tempfile
    path = os.path.join(tempfile.gettempdir(), "own.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(path)
    server.accept()[0].send(b"x")
    assert client.recv(1) == b"x"
def unix_abstract():
    # Refused by Landlock's scope (EPERM), or not there at all in the
    # command's own network namespace (ECONNREFUSED).
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect("\0{abstract_name}")
    except OSError as e:
        if e.errno in (errno.EPERM, errno.ECONNREFUSED):
            raise OSError(errno.EPERM, "refused")
        raise
def tcp_other_address():
    # The proxy's port, on another loopback address where a listener waits.
    socket.create_connection(("127.0.0.2", {proxy_port}), timeout=5)
def tcp_fastopen():
    # Fast Open connects inside sendto, past connect's checks.
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.sendto(b"x", socket.MSG_FASTOPEN, ("127.0.0.2", {proxy_port}))
{unix}def raw():
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
def packet():
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
def netlink():
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
def sctp():
    socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132)
def pair():
    a, b = socket.socketpair()
    a.send(b"x")
    assert b.recv(1) == b"x"
def tcp():
    socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)
for name, f in [("udp_send", udp_send), ("udp6", udp6), ("udp_bind", udp_bind), ("own_unix", own_unix),
                ("unix_abstract", unix_abstract), ("raw", raw), ("packet", packet), ("netlink", netlink),
                ("sctp", sctp), ("pair", pair), ("tcp", tcp), ("tcp_other_address", tcp_other_address),
                ("tcp_fastopen", tcp_fastopen), ("unix_path", unix_path), ("unix_link", unix_link),
                ("unix_relative", unix_relative), ("unix_proc", unix_proc), ("unix_dgram", unix_dgram),
                ("unix_dgram_pair", unix_dgram_pair), ("own_unix_workspace", own_unix_workspace)]:
    attempt(name, f)
"#,
    )
}

/// The part of [`socket_attacks`] on pathname Unix sockets: `outside` is
/// another program's, beside the workspace.
fn unix_socket_attacks(outside: &str) -> String {
    format!(
        r#"
def unix_path():
    # Another program's socket, outside every folder the command may write.
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect("{outside}")
def unix_link():
    # The same through a link the command made in a folder it may write.
    import os
    os.symlink("{outside}", "sub/link.sock")
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect("sub/link.sock")
def unix_relative():
    import os
    os.chdir("sub")
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).connect(os.path.relpath("{outside}"))
    finally:
        os.chdir("..")
def unix_proc():
    # A magic link of the command's own: not followed by the broker.
    import os
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("sub/proc.sock")
    server.listen(1)
    fd = os.open("sub/proc.sock", os.O_PATH)
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(f"/proc/self/fd/{{fd}}")
def unix_dgram():
    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
def unix_dgram_pair():
    socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
def own_unix_workspace():
    # Its own socket in a workspace folder it may write, nonblocking.
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("sub/own.sock")
    server.listen(1)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)
    client.connect("sub/own.sock")
    server.accept()[0].send(b"y")
    import select
    select.select([client], [], [], 5)
    assert client.recv(1) == b"y"
"#
    )
}

/// A socket listener of each kind the command must not reach, and what it
/// received afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_get_no_udp_raw_netlink_abstract_or_other_programs_unix_sockets_but_keep_their_own_and_the_proxy()
 {
    if !landlock() || !require("python3") || !require("curl") {
        return;
    }
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    // Another program's socket beside the workspace, which the person (and
    // so file permissions) may reach.
    let outside = base.path().join("db.sock");
    let outside_listener = std::os::unix::net::UnixListener::bind(&outside).unwrap();
    outside_listener.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let abstract_name = format!("cocode-confinement-{}", std::process::id());
    let abstract_listener = {
        use std::os::linux::net::SocketAddrExt as _;
        let addr =
            std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        std::os::unix::net::UnixListener::bind_addr(&addr).unwrap()
    };
    abstract_listener.set_nonblocking(true).unwrap();
    let port = http_server().await;
    let proxy = Arc::new(
        PolicyProxy::start(policy(&[format!("127.0.0.1:{port}")]))
            .await
            .unwrap(),
    );
    // A listener on the proxy's port at another loopback address: the
    // kernel's TCP rule checks the port only.
    let proxy_port = proxy.port();
    let decoy = std::net::TcpListener::bind(("127.0.0.2", proxy_port)).unwrap();
    decoy.set_nonblocking(true).unwrap();
    let l = launcher(Some(proxy), Some(&ws));
    let script = socket_attacks(
        udp_port,
        &abstract_name,
        proxy_port,
        outside.to_str().unwrap(),
    );
    let (status, out) = run(&l, spec(&["python3", "-c", &script], agent(), &ws)).await;
    assert_eq!(
        (status, out.as_str()),
        (
            ExitStatus::Code(0),
            "udp_send EPERM\nudp6 EPERM\nudp_bind EPERM\nown_unix ok\nunix_abstract EPERM\nraw EPERM\npacket EPERM\nnetlink EPERM\nsctp EPERM\npair ok\ntcp ok\ntcp_other_address EACCES\ntcp_fastopen EPERM\nunix_path EACCES\nunix_link EACCES\nunix_relative EACCES\nunix_proc ELOOP\nunix_dgram EPERM\nunix_dgram_pair EPERM\nown_unix_workspace ok\n"
        )
    );
    assert!(
        outside_listener.accept().is_err(),
        "a connection reached the other program's socket"
    );
    let mut buf = [0u8; 8];
    assert!(udp.recv(&mut buf).is_err(), "a datagram arrived");
    assert!(
        abstract_listener.accept().is_err(),
        "an abstract connection arrived"
    );
    assert!(decoy.accept().is_err(), "a connection reached 127.0.0.2");
    // The proxy still works for the same command kind.
    let through = format!("http://127.0.0.1:{port}/");
    let (status, out) = run(&l, spec(&["curl", "-s", &through], agent(), &ws)).await;
    assert_eq!((status, out.as_str()), (ExitStatus::Code(0), "hello"));
}

/// The launching process's memory and signals are out of reach: with a
/// private `/proc` it is not even in sight; without one its memory is
/// closed. (cocode also seals its own environment at start-up, which the
/// app's tests check.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cannot_read_the_memory_of_or_signal_the_process_that_launched_it() {
    if !landlock() || !require("python3") {
        return;
    }
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws));
    let me = std::process::id();
    let script = format!(
        r#"
import os, signal
try:
    # Not root: even the map is closed.
    maps = open("/proc/{me}/maps").read().splitlines()
    start = int([l for l in maps if "[heap]" in l or "[stack]" in l][0].split("-")[0], 16)
    with open("/proc/{me}/mem", "rb") as mem:
        mem.seek(start)
        print("read", len(mem.read(64)))
except OSError as e:
    print("mem", e.strerror)
try:
    os.kill({me}, 0)
    print("signal reached")
except OSError:
    # Refused by Landlock's scope, or out of sight in its PID namespace.
    print("signal refused")
"#
    );
    let (status, out) = run(&l, spec(&["python3", "-c", &script], agent(), &ws)).await;
    let mem = if cocode_toolchain::confine::protections().private_proc {
        "No such file or directory"
    } else {
        "Permission denied"
    };
    assert_eq!(
        (status, out.as_str()),
        (
            ExitStatus::Code(0),
            format!("mem {mem}\nsignal refused\n").as_str()
        )
    );
}

/// Launches run in a PID namespace where the machine allows it (a failure
/// under CI, a skip elsewhere).
fn namespaces() -> bool {
    require_peer(
        "PID namespaces for agent launches",
        cocode_toolchain::reaper::available(),
    )
}

/// A workspace with an `out/` folder commands may write, below `/var/tmp`.
fn out_workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    std::fs::create_dir_all(ws.join("out")).unwrap();
    (base, ws)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descendants_that_leave_the_process_group_are_dead_when_the_command_returns() {
    if !namespaces() {
        return;
    }
    let (_base, ws) = out_workspace();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws));
    // A new session, and a double fork whose middle process exits at once.
    let script = "setsid sh -c 'sleep 1; echo late > out/setsid' & \
                  sh -c '(sleep 1; echo late > out/double) &'; \
                  echo $$";
    let (status, out) = run(&l, spec(&["sh", "-c", script], agent(), &ws)).await;
    // The command is the first process its namespace's init started.
    assert_eq!((status, out.as_str()), (ExitStatus::Code(0), "2\n"));
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert_eq!(
        std::fs::read_dir(ws.join("out")).unwrap().count(),
        0,
        "a descendant wrote after the command ended"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descendants_die_with_a_command_at_its_time_limit_and_with_a_stop() {
    if !namespaces() {
        return;
    }
    let (_base, ws) = out_workspace();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws));
    let script = "setsid sh -c 'sleep 2; echo late > out/setsid' & \
                  sh -c '(sleep 2; echo late > out/double) &'; \
                  sleep 30";
    let mut timed = spec(&["sh", "-c", script], agent(), &ws);
    timed.timeout = Some(std::time::Duration::from_secs(1));
    let (status, _) = run(&l, timed).await;
    assert_eq!(status, ExitStatus::TimedOut);
    let mut stopped = l.launch(spec(&["sh", "-c", script], agent(), &ws)).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    stopped.kill().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(
        std::fs::read_dir(ws.join("out")).unwrap().count(),
        0,
        "a descendant wrote after its command was ended"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_keeps_its_exit_code_and_its_signal_through_the_keeper() {
    if !namespaces() {
        return;
    }
    let (_base, ws) = out_workspace();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws));
    let (status, out) = run(&l, spec(&["sh", "-c", "echo out; exit 7"], agent(), &ws)).await;
    assert_eq!((status, out.as_str()), (ExitStatus::Code(7), "out\n"));
    let (status, _) = run(&l, spec(&["sh", "-c", "kill -SEGV $$"], agent(), &ws)).await;
    assert_eq!(status, ExitStatus::Signal(11));
}

/// Every `connect` of a command goes through cocode: a hundred at once, and
/// some of them stalled on a full backlog, all get their answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_connections_of_a_command_all_reach_the_proxy() {
    if !landlock() || !require("python3") {
        return;
    }
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let port = proxy.port();
    let l = launcher(Some(proxy), Some(&ws));
    let script = format!(
        r#"
import socket, struct, threading, time
# Blocking connections stalled on a listener that never accepts, more than
# cocode answers on threads of their own; each gives up after a second.
stall = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
stall.bind("sub/stall.sock")
stall.listen(0)
stalled = []
def wait():
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 1, 0))
    try:
        c.connect("sub/stall.sock")
        stalled.append("ok")
    except BlockingIOError:
        stalled.append("EAGAIN")
    except OSError as e:
        stalled.append(str(e))
waiting = [threading.Thread(target=wait) for _ in range(34)]
for t in waiting: t.start()
time.sleep(0.2)
results = []
def one():
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=20).close()
        results.append("ok")
    except OSError as e:
        results.append(str(e))
threads = [threading.Thread(target=one) for _ in range(100)]
for t in threads: t.start()
for t in threads: t.join()
for t in waiting: t.join()
print(results.count("ok"), sorted(set(r for r in results if r != "ok")))
print(len(stalled), sorted(set(stalled)))
"#
    );
    let (status, out) = run(&l, spec(&["python3", "-c", &script], agent(), &ws)).await;
    assert_eq!(
        (status, out.as_str()),
        (ExitStatus::Code(0), "100 []\n34 ['EAGAIN', 'ok']\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_persons_own_sockets_are_out_of_a_commands_sight() {
    if !namespaces() || !require("python3") {
        return;
    }
    let (base, ws) = out_workspace();
    // The person's session: a bus in the runtime folder and an ssh agent.
    let runtime = base.path().join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    let bus_path = runtime.join("bus");
    let bus = std::os::unix::net::UnixListener::bind(&bus_path).unwrap();
    bus.set_nonblocking(true).unwrap();
    let agent_path = base.path().join("ssh-agent.sock");
    let ssh_agent = std::os::unix::net::UnixListener::bind(&agent_path).unwrap();
    ssh_agent.set_nonblocking(true).unwrap();
    let inherited: std::collections::BTreeMap<String, String> = [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", "/home/someone".to_owned()),
        ("XDG_RUNTIME_DIR", runtime.display().to_string()),
        ("SSH_AUTH_SOCK", agent_path.display().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws)).with_inherited_env(inherited);
    let script = format!(
        r#"
import os, socket
for name, path in [("bus", "{bus}"), ("agent", "{agent}")]:
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(path)
        print(name, "reached")
    except OSError:
        print(name, "refused")
print("runtime", sorted(os.listdir("{runtime}")))
"#,
        bus = bus_path.display(),
        agent = agent_path.display(),
        runtime = runtime.display(),
    );
    let (status, out) = run(&l, spec(&["python3", "-c", &script], agent(), &ws)).await;
    assert_eq!(
        (status, out.as_str()),
        (
            ExitStatus::Code(0),
            "bus refused\nagent refused\nruntime []\n"
        )
    );
    assert!(bus.accept().is_err(), "the bus was reached");
    assert!(ssh_agent.accept().is_err(), "the agent was reached");
    // Outside the command nothing changed.
    assert!(bus_path.exists() && agent_path.exists());
}

/// An agent's own shell needs a pseudo-terminal (Gemini CLI's shell tool
/// runs in one): a command gets a devpts instance of its own, where it can
/// open terminals, and cannot see or write the person's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_gets_pseudo_terminals_of_its_own_and_none_of_the_persons() {
    if !landlock() || !namespaces() || !require("python3") {
        return;
    }
    // The person's terminal: a pseudo-terminal this process holds open.
    let (mut leader, mut follower) = (-1, -1);
    #[expect(unsafe_code, reason = "openpty fills two descriptors")]
    // SAFETY: out-pointers to two ints; no name, termios or size given.
    let opened = unsafe {
        libc::openpty(
            &raw mut leader,
            &raw mut follower,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    let persons = std::fs::read_link(format!("/proc/self/fd/{follower}")).unwrap();
    assert!(persons.starts_with("/dev/pts/"), "{}", persons.display());
    let (_base, ws) = out_workspace();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws));
    let script = r"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    print('hello from a terminal', os.isatty(0), flush=True)
    os._exit(0)
out = b''
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.waitpid(pid, 0)
os.close(fd)
print(out.decode().strip())
print(sorted(os.listdir('/dev/pts')))
try:
    with open(sys.argv[1], 'w') as t:
        t.write('typed by a command')
    print('wrote the persons terminal')
except OSError as e:
    print('the persons terminal:', e.strerror)
";
    let target = persons.to_string_lossy().into_owned();
    let (status, out) = run(&l, spec(&["python3", "-c", script, &target], agent(), &ws)).await;
    assert_eq!(
        (status, out.as_str()),
        (
            ExitStatus::Code(0),
            "hello from a terminal True\n['ptmx']\nthe persons terminal: Permission denied\n"
        )
    );
    #[expect(unsafe_code, reason = "closing the descriptors openpty gave")]
    // SAFETY: both descriptors are this test's own.
    unsafe {
        libc::close(leader);
        libc::close(follower);
    }
}

/// Mount namespaces with read-only binds are here (a failure under CI, a
/// skip elsewhere).
fn metadata_mounts() -> bool {
    require_peer(
        "read-only binds in a mount namespace per agent launch",
        cocode_toolchain::confine::protections().metadata_mounts,
    )
}

/// Ordinary work at the workspace root — a new file, `sed -i` (which
/// writes a temporary file beside the one it edits), a lock file, a new
/// folder — works, while the history and every piece of version-control
/// metadata, nested ones included, stay read-only: no hook, no
/// `core.fsmonitor`, no history rewrite, not even by renaming them away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_works_at_the_workspace_root_but_never_writes_metadata_or_history() {
    if !landlock() || !metadata_mounts() {
        return;
    }
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    for dir in [
        ".git/hooks",
        ".cocode/history",
        "vendor/dep/.git/hooks",
        "src",
    ] {
        std::fs::create_dir_all(ws.join(dir)).unwrap();
    }
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join("vendor/dep/.git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join("notes.txt"), "hello world\n").unwrap();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws));
    let script = r#"
try() { if ( eval "$1" ) 2>/dev/null; then echo "did: $1"; else echo "refused: $1"; fi; }
try 'env > envdump.txt'
try "sed -i 's/world/there/' notes.txt"
try 'printf lock > Cargo.lock'
try 'mkdir newdir && printf x > newdir/a'
try 'printf x > .git/hooks/pre-commit'
try 'printf x >> .git/config'
try 'git config --file .git/config core.fsmonitor "touch /tmp/pwned"'
try 'printf x > .git/new'
try 'printf x > vendor/dep/.git/hooks/post-checkout'
try 'printf x >> vendor/dep/.git/config'
try 'printf x > .cocode/history/x'
try 'mv .git moved-git'
try 'mv .cocode moved-cocode'
try 'rm -rf vendor/dep/.git'
try 'mv vendor/dep moved-dep'
try 'printf x >> moved-dep/.git/config'
"#;
    let (status, out) = run(&l, spec(&["sh", "-c", script], agent(), &ws)).await;
    assert_eq!(
        (status, out.as_str()),
        (
            ExitStatus::Code(0),
            "did: env > envdump.txt\n\
             did: sed -i 's/world/there/' notes.txt\n\
             did: printf lock > Cargo.lock\n\
             did: mkdir newdir && printf x > newdir/a\n\
             refused: printf x > .git/hooks/pre-commit\n\
             refused: printf x >> .git/config\n\
             refused: git config --file .git/config core.fsmonitor \"touch /tmp/pwned\"\n\
             refused: printf x > .git/new\n\
             refused: printf x > vendor/dep/.git/hooks/post-checkout\n\
             refused: printf x >> vendor/dep/.git/config\n\
             refused: printf x > .cocode/history/x\n\
             refused: mv .git moved-git\n\
             refused: mv .cocode moved-cocode\n\
             refused: rm -rf vendor/dep/.git\n\
             did: mv vendor/dep moved-dep\n\
             refused: printf x >> moved-dep/.git/config\n"
        )
    );
    assert_root_work_kept_and_metadata_untouched(&ws);
}

/// The same ordinary work with the root grant switched off (the grant of
/// machines without mount namespaces): a new file at the root is refused,
/// so the test above fails without the protection it checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_root_grant_a_new_file_at_the_root_is_refused() {
    if !landlock() {
        return;
    }
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("notes.txt"), "hello world\n").unwrap();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws)).with_root_grant(false);
    let script = r#"
try() { if ( eval "$1" ) 2>/dev/null; then echo "did: $1"; else echo "refused: $1"; fi; }
try 'printf lock > Cargo.lock'
try "sed -i 's/world/there/' notes.txt"
try 'printf x > src/a.rs'
"#;
    let (status, out) = run(&l, spec(&["sh", "-c", script], agent(), &ws)).await;
    assert_eq!(
        (status, out.as_str()),
        (
            ExitStatus::Code(0),
            "refused: printf lock > Cargo.lock\n\
             refused: sed -i 's/world/there/' notes.txt\n\
             did: printf x > src/a.rs\n"
        )
    );
    assert!(!ws.join("Cargo.lock").exists());
}

/// What the root-work test's command left: its ordinary work, and every
/// piece of metadata exactly as it was.
fn assert_root_work_kept_and_metadata_untouched(ws: &Path) {
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "hello there\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("Cargo.lock")).unwrap(),
        "lock"
    );
    assert_eq!(std::fs::read_to_string(ws.join("newdir/a")).unwrap(), "x");
    // The environment the command saw is the whitelist's.
    let dump = std::fs::read_to_string(ws.join("envdump.txt")).unwrap();
    assert!(
        !dump.contains("must-not-leak") && !dump.contains("hunter2"),
        "{dump}"
    );
    // A folder holding a repository moves with it, still untouched.
    for (file, text) in [
        (".git/config", "[core]\n"),
        ("moved-dep/.git/config", "[core]\n"),
    ] {
        assert_eq!(std::fs::read_to_string(ws.join(file)).unwrap(), text);
    }
    assert_eq!(std::fs::read_dir(ws.join(".git/hooks")).unwrap().count(), 0);
    assert_eq!(
        std::fs::read_dir(ws.join("moved-dep/.git/hooks"))
            .unwrap()
            .count(),
        0
    );
    assert_eq!(
        std::fs::read_dir(ws.join(".cocode/history"))
            .unwrap()
            .count(),
        0
    );
    let mut top: Vec<String> = std::fs::read_dir(ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(
        top,
        [
            ".cocode",
            ".git",
            "Cargo.lock",
            "envdump.txt",
            "moved-dep",
            "newdir",
            "notes.txt",
            "src",
            "vendor"
        ]
    );
}

/// A command sees only its own processes: not the process that launched
/// it, not that one's parent, not their environment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cannot_see_the_launching_process_or_its_parent_in_proc() {
    if !landlock()
        || !require_peer(
            "a private /proc per agent launch",
            cocode_toolchain::confine::protections().private_proc,
        )
    {
        return;
    }
    let (_base, ws) = out_workspace();
    let proxy = Arc::new(PolicyProxy::start(policy(&[])).await.unwrap());
    let l = launcher(Some(proxy), Some(&ws));
    let me = std::process::id();
    let parent = std::os::unix::process::parent_id();
    let script = format!(
        "for p in {me} {parent}; do \
           if cat /proc/$p/environ >/dev/null 2>&1; then echo \"read $p\"; else echo \"no $p\"; fi; \
         done; \
         ls /proc | grep -c '^[0-9]'"
    );
    let (status, out) = run(&l, spec(&["sh", "-c", &script], agent(), &ws)).await;
    let lines: Vec<String> = out.lines().map(str::to_owned).collect();
    assert_eq!((status, lines.len()), (ExitStatus::Code(0), 3), "{out}");
    assert_eq!(
        lines[..2],
        [format!("no {me}"), format!("no {parent}")],
        "{out}"
    );
    // Only the command's own processes: the namespace's init, the shell,
    // `ls` and — when it has started by the time `ls` reads — `grep`.
    let count: u32 = lines[2].parse().unwrap();
    assert!((3..=4).contains(&count), "{out}");
}
