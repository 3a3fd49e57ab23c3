//! The one place in the product that spawns processes (`boundaries.yaml`).
//!
//! Every child starts from the whitelisted environment of its profile
//! ([`crate::env`]), in its own process group (so a kill reaches everything
//! it started), with stdio only — Rust opens every other descriptor
//! close-on-exec — and is killed with its group when its handle is dropped.
//! Agent-profile children get the policy proxy (fail closed without one) and,
//! on Linux, a Landlock ruleset applied between fork and exec.
#![expect(
    clippy::disallowed_methods,
    reason = "the process launcher: the single place that spawns"
)]

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cocode_core::process::{
    Confinement, ExitStatus, LaunchError, LaunchIo, LaunchSpec, ProcessHandle, ProcessLauncher,
    SandboxPlan, SandboxPolicy as _, SandboxProfile,
};
use std::io::{Read as _, Write as _};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

use crate::env::{ProxyEnv, with_launch_credentials};
use crate::policy::LaunchPolicy;
use crate::proxy::PolicyProxy;
use crate::scratch::PrivateTemp;

pub use crate::roots::WritableRoots;

/// The launcher of one app instance.
pub struct Launcher {
    runtime: tokio::runtime::Handle,
    proxy: Option<Arc<PolicyProxy>>,
    /// Decides every launch's sandbox; the launcher follows the plan.
    policy: Arc<LaunchPolicy>,
}

impl std::fmt::Debug for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launcher")
            .field("proxy", &self.proxy.as_ref().map(|p| p.port()))
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Launcher {
    /// A launcher spawning on `runtime`, passing whitelisted variables of
    /// this process's environment.
    pub fn new(
        runtime: tokio::runtime::Handle,
        proxy: Option<Arc<PolicyProxy>>,
        writable: WritableRoots,
    ) -> Self {
        let policy = Arc::new(LaunchPolicy::new(
            writable,
            proxy.as_ref().map(|p| p.port()),
        ));
        Self {
            runtime,
            proxy,
            policy,
        }
    }

    /// Replaces the environment children inherit from (before the whitelist).
    #[must_use]
    pub fn with_inherited_env(mut self, inherited: BTreeMap<String, String>) -> Self {
        Arc::make_mut(&mut self.policy).inherited = inherited;
        self
    }

    /// Whether agent commands may write at the workspace root, with the
    /// metadata bound read-only in their mount namespace (the default where
    /// mount namespaces exist). Off, they get the grant of machines
    /// without them: each existing top-level entry but the metadata.
    #[must_use]
    pub fn with_root_grant(mut self, root_grant: bool) -> Self {
        let policy = Arc::make_mut(&mut self.policy);
        *policy = policy.clone().with_root_grant(root_grant);
        self
    }

    /// The sandbox policy this launcher follows.
    pub fn policy(&self) -> Arc<LaunchPolicy> {
        Arc::clone(&self.policy)
    }

    /// A child on a pseudo-terminal (the person's terminal, interactive tools).
    fn launch_pty(
        &self,
        spec: &LaunchSpec,
        env: &BTreeMap<String, String>,
        rows: u16,
        cols: u16,
    ) -> Result<Box<dyn ProcessHandle>, LaunchError> {
        use portable_pty::{CommandBuilder, PtySize, native_pty_system};
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| LaunchError::Spawn(format!("no pseudo-terminal: {e}")))?;
        let mut cmd = CommandBuilder::new(&spec.argv[0]);
        cmd.args(&spec.argv[1..]);
        cmd.cwd(&spec.cwd);
        cmd.env_clear();
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = pty.slave.spawn_command(cmd).map_err(|e| {
            let text = e.to_string();
            if [
                "No such file",
                "not found",
                "No viable candidates",
                "does not exist",
                "doesn't exist",
            ]
            .iter()
            .any(|m| text.contains(m))
            {
                LaunchError::NotFound(spec.argv[0].clone())
            } else {
                LaunchError::Spawn(format!("{}: {e}", spec.argv[0]))
            }
        })?;
        drop(pty.slave);
        let reader = pty
            .master
            .try_clone_reader()
            .map_err(|e| LaunchError::Io(e.to_string()))?;
        let writer = pty
            .master
            .take_writer()
            .map_err(|e| LaunchError::Io(e.to_string()))?;
        let pid = child.process_id();
        let killer = child.clone_killer();
        let (exit_tx, exit_rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("cocode-pty-wait".into())
            .spawn(move || {
                let _ = exit_tx.send(child.wait());
            })
            .map_err(|e| LaunchError::Io(e.to_string()))?;
        let timed_out = Arc::new(AtomicBool::new(false));
        let watchdog = spec.timeout.map(|limit| {
            let flag = Arc::clone(&timed_out);
            let mut killer = killer.clone_killer();
            self.runtime.spawn(async move {
                tokio::time::sleep(limit).await;
                flag.store(true, Ordering::SeqCst);
                if let Some(pid) = pid {
                    kill_group(pid);
                }
                let _ = killer.kill();
            })
        });
        Ok(Box::new(PtyHandle {
            pid,
            master: Arc::new(std::sync::Mutex::new(pty.master)),
            reader: Some(reader),
            writer: Some(Arc::new(std::sync::Mutex::new(writer))),
            output: None,
            exited: Some(exit_rx),
            killer,
            watchdog,
            timed_out,
            exit: None,
        }))
    }

    /// How agent children will be confined on this machine.
    pub fn agent_confinement(&self) -> Confinement {
        self.policy.agent_confinement()
    }

    /// The program and arguments to run: on macOS an agent child runs under
    /// `sandbox-exec` with its Seatbelt profile.
    fn confined_argv(spec: &LaunchSpec, plan: &SandboxPlan) -> (String, Vec<String>) {
        #[cfg(target_os = "macos")]
        if let (cocode_core::process::NetworkPlan::ProxyOnly { port }, Confinement::Seatbelt) =
            (&plan.network, &plan.confinement)
        {
            let mut args = vec![
                "-p".to_owned(),
                crate::confine::seatbelt_profile(&plan.writable_roots, *port),
            ];
            args.extend(spec.argv.iter().cloned());
            return ("/usr/bin/sandbox-exec".to_owned(), args);
        }
        let _ = plan;
        (spec.argv[0].clone(), spec.argv[1..].to_vec())
    }

    /// What an agent child does between fork and exec on Linux: enter PID
    /// and network namespaces of its own when the machine allows it (see
    /// `reaper`), then apply Landlock and the socket filter when the kernel
    /// has Landlock; without it the launch goes on with proxy-only
    /// enforcement, which [`Self::agent_confinement`] reports. Returns
    /// cocode's end of the channel on which the child hands over the
    /// proxy listener it made inside its network namespace.
    #[cfg(target_os = "linux")]
    fn confine_child(
        &self,
        cmd: &mut tokio::process::Command,
        plan: &SandboxPlan,
    ) -> Result<ChildChannels, LaunchError> {
        use std::os::fd::AsRawFd as _;
        let cocode_core::process::NetworkPlan::ProxyOnly { port } = &plan.network else {
            return Ok(ChildChannels::default());
        };
        let pair = |what: &str| {
            rustix::net::socketpair(
                rustix::net::AddressFamily::UNIX,
                rustix::net::SocketType::SEQPACKET,
                rustix::net::SocketFlags::CLOEXEC,
                None,
            )
            .map_err(|e| LaunchError::Sandbox(format!("no channel for the {what}: {e}")))
        };
        let mut channel = None;
        let namespace = if crate::reaper::available() {
            let (ours, theirs) = pair("namespace")?;
            let net = crate::reaper::NetNamespace {
                port: *port,
                channel: theirs.as_raw_fd(),
            };
            channel = Some((ours, theirs));
            crate::reaper::PidNamespace::prepare(
                Some(net),
                &self.hidden(plan),
                true,
                &plan.read_only,
                crate::confine::protections().private_proc,
            )
        } else {
            None
        };
        if namespace.is_none() && !plan.read_only.is_empty() {
            // The root is granted only with its metadata bound read-only.
            return Err(LaunchError::Sandbox(
                "the command's mount namespace could not be prepared, so the history and version-control metadata could not be kept read-only".into(),
            ));
        }
        let mut broker = None;
        let ruleset = match plan.confinement {
            Confinement::Landlock => {
                let prepared = crate::confine::prepare(&plan.writable_roots, *port)?;
                Some(if crate::confine::protections().connect_broker {
                    let (ours, theirs) = pair("connect broker")?;
                    let prepared = prepared.with_broker(theirs.as_raw_fd());
                    broker = Some((ours, theirs));
                    prepared
                } else {
                    prepared
                })
            }
            _ => None,
        };
        if namespace.is_none() && ruleset.is_none() {
            return Ok(ChildChannels::default());
        }
        // The child's ends live as long as the command (and so the closure).
        let (ours, theirs) = channel.map_or((None, None), |(o, t)| (Some(o), Some(t)));
        let (broker_ours, broker_theirs) = broker.map_or((None, None), |(o, t)| (Some(o), Some(t)));
        #[expect(
            unsafe_code,
            reason = "pre_exec runs in the forked child before exec: raw system calls for the namespaces, then the prepared ruleset and filter"
        )]
        // SAFETY: the closure touches no lock another thread could hold
        // across fork except the ruleset's own mutex, created for this
        // launch and never shared; the namespace step makes raw system
        // calls on memory prepared before the fork.
        unsafe {
            cmd.pre_exec(move || {
                let _channels = (&theirs, &broker_theirs);
                if let Some(namespace) = &namespace {
                    namespace.enter()?;
                }
                if let Some(ruleset) = &ruleset {
                    ruleset.restrict(
                        namespace
                            .as_ref()
                            .is_some_and(crate::reaper::PidNamespace::private_ptys),
                    )?;
                }
                Ok(())
            });
        }
        Ok(ChildChannels {
            net: ours,
            broker: broker_ours,
        })
    }

    /// The person's socket places to cover for an agent launch: those that
    /// exist and hold nothing the launch may write.
    #[cfg(target_os = "linux")]
    fn hidden(&self, plan: &SandboxPlan) -> Vec<crate::hidden::Hidden> {
        let uid = rustix::process::geteuid().as_raw();
        crate::hidden::hidden_sockets(&self.policy.inherited, uid)
            .into_iter()
            .filter(|h| {
                let (path, folder) = h.parts();
                let kind = std::fs::symlink_metadata(path);
                let fits = kind.is_ok_and(|m| {
                    if folder {
                        m.is_dir()
                    } else {
                        !m.is_dir() && !m.file_type().is_symlink()
                    }
                });
                fits && !plan
                    .writable_roots
                    .iter()
                    .any(|w| w.starts_with(path) || path.starts_with(w))
            })
            .collect()
    }

    /// Takes the proxy listener a child made in its network namespace and
    /// has the proxy serve it while the command lives.
    #[cfg(target_os = "linux")]
    fn serve_namespace(
        channel: &std::os::fd::OwnedFd,
        proxy: &PolicyProxy,
    ) -> Result<crate::proxy::Serving, LaunchError> {
        let lost = |why: String| {
            LaunchError::Sandbox(format!(
                "the command's network namespace did not hand over its proxy listener: {why}"
            ))
        };
        let listener = std::net::TcpListener::from(received_fd(channel).map_err(lost)?);
        proxy
            .serve_listener(listener)
            .map_err(|e| lost(e.to_string()))
    }

    /// Takes the listener of the child's connect filter and answers its
    /// `connect` calls while any of its processes lives.
    #[cfg(target_os = "linux")]
    fn broker(
        channel: &std::os::fd::OwnedFd,
        plan: &SandboxPlan,
    ) -> Result<crate::broker::Broker, LaunchError> {
        let cocode_core::process::NetworkPlan::ProxyOnly { port } = plan.network else {
            return Err(LaunchError::Sandbox(
                "a connect broker for a launch without the proxy".into(),
            ));
        };
        let lost = |why: String| {
            LaunchError::Sandbox(format!(
                "the command did not hand over its connect filter: {why}"
            ))
        };
        let listener = received_fd(channel).map_err(lost)?;
        crate::broker::Broker::start(
            listener,
            crate::broker::Rules::new(&plan.writable_roots, port),
        )
        .map_err(|e| lost(e.to_string()))
    }
}

/// cocode's ends of the channels on which a confined child hands over what
/// it made between fork and exec.
#[cfg(target_os = "linux")]
#[derive(Default)]
struct ChildChannels {
    /// The proxy listener made in its network namespace.
    net: Option<std::os::fd::OwnedFd>,
    /// The listener of its connect filter.
    broker: Option<std::os::fd::OwnedFd>,
}

/// The one descriptor the child sent on `channel` (already there: the
/// child sends it before exec, and the spawn returns after the exec).
#[cfg(target_os = "linux")]
fn received_fd(channel: &std::os::fd::OwnedFd) -> Result<std::os::fd::OwnedFd, String> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
    let mut byte = [0u8; 1];
    let mut space = [std::mem::MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    rustix::net::recvmsg(
        channel,
        &mut [std::io::IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC,
    )
    .map_err(|e| e.to_string())?;
    control
        .drain()
        .find_map(|message| match message {
            RecvAncillaryMessage::ScmRights(mut fds) => fds.next(),
            _ => None,
        })
        .ok_or_else(|| "no descriptor came".into())
}

/// What a failed spawn of `argv0` (run as `program`) means. A folder on
/// the PATH the person cannot read makes the search end with "permission
/// denied" though the program is nowhere: it is not installed, not refused.
fn spawn_error(
    e: &std::io::Error,
    program: &str,
    argv0: &str,
    path: Option<&String>,
) -> LaunchError {
    match e.kind() {
        std::io::ErrorKind::NotFound => LaunchError::NotFound(argv0.to_owned()),
        std::io::ErrorKind::PermissionDenied
            if !on_search_path(argv0, path.map(String::as_str)) =>
        {
            LaunchError::NotFound(argv0.to_owned())
        }
        _ => LaunchError::Spawn(format!("{program}: {e}")),
    }
}

/// Whether `program` names a file that exists: a path as it is, a bare
/// name in one of `path`'s folders (a folder that cannot be read holds
/// nothing that could run).
pub(crate) fn on_search_path(program: &str, path: Option<&str>) -> bool {
    if program.contains('/') || program.contains('\\') {
        return std::path::Path::new(program).exists();
    }
    path.is_some_and(|p| std::env::split_paths(p).any(|dir| dir.join(program).is_file()))
}

impl ProcessLauncher for Launcher {
    fn launch(&self, spec: LaunchSpec) -> Result<Box<dyn ProcessHandle>, LaunchError> {
        if spec.argv.is_empty() {
            return Err(LaunchError::Spawn("an empty command line".into()));
        }
        let agent = matches!(spec.profile, SandboxProfile::Agent { .. });
        if agent && matches!(spec.io, LaunchIo::Pty { .. }) {
            // Landlock is applied between fork and exec, which the PTY
            // spawner does not expose: agent children are always piped.
            return Err(LaunchError::Sandbox(
                "agent launches are piped; a PTY child could not be confined".into(),
            ));
        }
        let proxy_env: Option<(ProxyEnv, Arc<PolicyProxy>)> = match &spec.profile {
            SandboxProfile::Agent { task_id } => {
                let proxy = self.proxy.as_ref().ok_or(LaunchError::ProxyUnavailable)?;
                let env = proxy
                    .register_launch(task_id, &spec.extra_hosts)
                    .map_err(|e| LaunchError::Sandbox(e.to_string()))?;
                Some((env, Arc::clone(proxy)))
            }
            SandboxProfile::HumanTerminal | SandboxProfile::Tool => None,
        };
        let registered = proxy_env.as_ref().map(|(e, p)| (e.clone(), Arc::clone(p)));
        let launched = self.start(&spec, proxy_env);
        if launched.is_err() {
            // A launch that never ran gives its proxy credentials back.
            if let Some((env, proxy)) = registered {
                proxy.revoke_launch(&env);
            }
        }
        launched
    }
}

impl Launcher {
    fn start(
        &self,
        spec: &LaunchSpec,
        proxy_env: Option<(ProxyEnv, Arc<PolicyProxy>)>,
    ) -> Result<Box<dyn ProcessHandle>, LaunchError> {
        if proxy_env.is_some() {
            // Folders a launch may write besides the workspace (an ACP
            // agent's state folder) are made when missing, so a first run
            // does not fail where a later one would not.
            for dir in spec.extra_writable.iter().filter(|d| !d.exists()) {
                if let Err(e) = crate::scratch::lasting_folder(dir) {
                    tracing::warn!("{e}");
                }
            }
        }
        let mut plan = self.policy.plan(spec)?;
        let mut env = plan.env.clone();
        let mut temp = None;
        if let Some((proxy, _)) = &proxy_env {
            with_launch_credentials(&mut env, proxy);
            // Its own temp folder instead of the system's (see `scratch`).
            let private = PrivateTemp::create(self.policy.temp_base())?;
            let dir = private.path().to_string_lossy().into_owned();
            for name in ["TMPDIR", "TMP", "TEMP"] {
                env.insert(name.to_owned(), dir.clone());
            }
            plan.writable_roots.push(private.path().to_path_buf());
            temp = Some(private);
        }
        if let LaunchIo::Pty { rows, cols } = spec.io {
            return self.launch_pty(spec, &env, rows, cols);
        }
        let _enter = self.runtime.enter();
        let (program, args) = Self::confined_argv(spec, &plan);
        let mut cmd = tokio::process::Command::new(&program);
        cmd.args(&args)
            .current_dir(&spec.cwd)
            .env_clear()
            .envs(&env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        let channel = self.confine_child(&mut cmd, &plan)?;
        let mut child = cmd
            .spawn()
            .map_err(|e| spawn_error(&e, &program, &spec.argv[0], env.get("PATH")))?;
        // The child's end of the channel goes with the command line.
        drop(cmd);
        #[cfg(target_os = "linux")]
        let serving = match (&channel.net, &proxy_env) {
            (Some(channel), Some((_, proxy))) => Some(Self::serve_namespace(channel, proxy)?),
            _ => None,
        };
        #[cfg(target_os = "linux")]
        let broker = match (&channel.broker, &proxy_env) {
            (Some(channel), Some(_)) => Some(Self::broker(channel, &plan)?),
            _ => None,
        };
        #[cfg(not(target_os = "linux"))]
        let serving: Option<crate::proxy::Serving> = None;
        let (tx, rx) = mpsc::channel(64);
        if let Some(out) = child.stdout.take() {
            self.runtime.spawn(pump(out, tx.clone()));
        }
        let mut stderr = None;
        if let Some(err) = child.stderr.take() {
            if spec.io == LaunchIo::PipedSplit {
                let (etx, erx) = mpsc::channel(64);
                self.runtime.spawn(pump(err, etx));
                stderr = Some(erx);
            } else {
                self.runtime.spawn(pump(err, tx));
            }
        }
        // The time limit holds whether or not anyone is waiting: a watchdog
        // kills the group at the deadline.
        let timed_out = Arc::new(AtomicBool::new(false));
        let watchdog = match (spec.timeout, child.id()) {
            (Some(limit), Some(pid)) => {
                let flag = Arc::clone(&timed_out);
                Some(self.runtime.spawn(async move {
                    tokio::time::sleep(limit).await;
                    flag.store(true, Ordering::SeqCst);
                    kill_group(pid);
                }))
            }
            _ => None,
        };
        Ok(Box::new(PipedHandle {
            pid: child.id(),
            stdin: child.stdin.take(),
            child,
            output: rx,
            stderr,
            watchdog,
            timed_out,
            proxy: proxy_env,
            temp,
            serving,
            #[cfg(target_os = "linux")]
            broker,
            exit: None,
        }))
    }
}

/// A channel receiver as a stream.
struct ReceiverStream(mpsc::Receiver<Vec<u8>>);

impl futures_core::Stream for ReceiverStream {
    type Item = Vec<u8>;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Vec<u8>>> {
        self.0.poll_recv(cx)
    }
}

async fn pump(mut from: impl tokio::io::AsyncRead + Unpin, to: mpsc::Sender<Vec<u8>>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.send(buf[..n].to_vec()).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// SIGKILL to a whole process group (the child and everything it started).
/// Whether a process with this id exists now (for telling a live task's
/// runner from one that died). Elsewhere than Unix the answer is always yes:
/// a task is then never taken for interrupted by another process.
pub fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        match rustix::process::Pid::from_raw(pid.cast_signed()) {
            // Signal 0 checks existence; EPERM means it exists but is not ours.
            Some(pid) => !matches!(
                rustix::process::test_kill_process(pid),
                Err(rustix::io::Errno::SRCH)
            ),
            None => false,
        }
    }
    // Windows: `tasklist` filtered to the id; if it cannot run, the answer
    // stays "alive", so a task is never taken for interrupted by mistake.
    #[cfg(windows)]
    {
        windows_tool(&tasklist_argv(pid))
            .and_then(|mut cmd| cmd.output().ok())
            .is_none_or(|out| tasklist_lists(&String::from_utf8_lossy(&out.stdout), pid))
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = pid;
        true
    }
}

/// The command line ending a whole process tree on Windows, where a child
/// has no process group: `taskkill /T /F` follows the parent links.
#[cfg_attr(
    not(any(windows, test)),
    expect(dead_code, reason = "used on Windows; tested everywhere")
)]
fn taskkill_argv(pid: u32) -> Vec<String> {
    ["taskkill", "/T", "/F", "/PID", &pid.to_string()]
        .map(str::to_owned)
        .to_vec()
}

/// The command line listing one process id on Windows, as CSV without a header.
#[cfg_attr(
    not(any(windows, test)),
    expect(dead_code, reason = "used on Windows; tested everywhere")
)]
fn tasklist_argv(pid: u32) -> Vec<String> {
    [
        "tasklist",
        "/FO",
        "CSV",
        "/NH",
        "/FI",
        &format!("PID eq {pid}"),
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Whether `tasklist` CSV output has a row for `pid` (its second column).
/// Anything else — the localized "no tasks" notice, nothing — is no row.
#[cfg_attr(
    not(any(windows, test)),
    expect(dead_code, reason = "used on Windows; tested everywhere")
)]
fn tasklist_lists(output: &str, pid: u32) -> bool {
    let wanted = pid.to_string();
    output.lines().any(|line| {
        line.split("\",\"")
            .nth(1)
            .is_some_and(|field| field.trim_matches('"') == wanted)
    })
}

/// A Windows system tool from `%SystemRoot%\System32`, without a console
/// window flashing up from the GUI app.
#[cfg(windows)]
fn windows_tool(argv: &[String]) -> Option<std::process::Command> {
    use std::os::windows::process::CommandExt as _;
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    let (program, args) = argv.split_first()?;
    let system = std::env::var_os("SystemRoot").map(std::path::PathBuf::from);
    let path = system.map_or_else(
        || std::path::PathBuf::from(program),
        |root| root.join("System32").join(format!("{program}.exe")),
    );
    let mut cmd = std::process::Command::new(path);
    cmd.args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .creation_flags(CREATE_NO_WINDOW);
    Some(cmd)
}

fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Some(pid) = rustix::process::Pid::from_raw(pid.cast_signed()) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    // Windows: the tree, then the caller kills the child itself as well.
    #[cfg(windows)]
    if let Some(mut cmd) = windows_tool(&taskkill_argv(pid)) {
        let _ = cmd.stdout(Stdio::null()).status();
    }
    #[cfg(not(any(unix, windows)))]
    let _ = pid;
}

struct PipedHandle {
    pid: Option<u32>,
    child: Child,
    stdin: Option<ChildStdin>,
    output: mpsc::Receiver<Vec<u8>>,
    /// stderr apart, for `PipedSplit` launches.
    stderr: Option<mpsc::Receiver<Vec<u8>>>,
    watchdog: Option<tokio::task::JoinHandle<()>>,
    timed_out: Arc<AtomicBool>,
    proxy: Option<(ProxyEnv, Arc<PolicyProxy>)>,
    /// The agent command's private temp folder, removed when it ends.
    temp: Option<PrivateTemp>,
    /// The proxy serving the command's network namespace, while it runs.
    serving: Option<crate::proxy::Serving>,
    /// cocode's answers to the command's `connect` calls, while it runs.
    #[cfg(target_os = "linux")]
    broker: Option<crate::broker::Broker>,
    exit: Option<ExitStatus>,
}

impl PipedHandle {
    fn kill_group(&mut self) {
        if let Some(pid) = self.pid {
            kill_group(pid);
        }
        let _ = self.child.start_kill();
    }

    fn finish(&mut self, status: ExitStatus) -> ExitStatus {
        if let Some(w) = self.watchdog.take() {
            w.abort();
        }
        if let Some((env, proxy)) = self.proxy.take() {
            proxy.revoke_launch(&env);
        }
        self.temp.take();
        self.serving.take();
        #[cfg(target_os = "linux")]
        self.broker.take();
        self.exit = Some(status);
        status
    }
}

fn exit_status(status: std::process::ExitStatus) -> ExitStatus {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            return ExitStatus::Signal(signal);
        }
    }
    ExitStatus::Code(status.code().unwrap_or(-1))
}

#[async_trait::async_trait]
impl ProcessHandle for PipedHandle {
    fn pid(&self) -> Option<u32> {
        self.pid
    }

    async fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), LaunchError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| LaunchError::Io("stdin is closed".into()))?;
        stdin
            .write_all(bytes)
            .await
            .map_err(|e| LaunchError::Io(e.to_string()))?;
        stdin
            .flush()
            .await
            .map_err(|e| LaunchError::Io(e.to_string()))
    }

    fn close_stdin(&mut self) {
        self.stdin.take();
    }

    fn take_stderr(&mut self) -> Option<cocode_core::process::ByteStream> {
        let rx = self.stderr.take()?;
        Some(Box::pin(ReceiverStream(rx)))
    }

    async fn read_output(&mut self) -> Option<Vec<u8>> {
        self.output.recv().await
    }

    async fn wait(&mut self) -> Result<ExitStatus, LaunchError> {
        if let Some(status) = self.exit {
            return Ok(status);
        }
        // Closing stdin lets filters that read to the end finish.
        self.stdin.take();
        let status = self
            .child
            .wait()
            .await
            .map_err(|e| LaunchError::Io(e.to_string()))?;
        if self.timed_out.load(Ordering::SeqCst) {
            return Ok(self.finish(ExitStatus::TimedOut));
        }
        Ok(self.finish(exit_status(status)))
    }

    async fn kill(&mut self) -> Result<(), LaunchError> {
        if self.exit.is_some() {
            return Ok(());
        }
        self.kill_group();
        self.child
            .wait()
            .await
            .map_err(|e| LaunchError::Io(e.to_string()))?;
        self.finish(ExitStatus::Killed);
        Ok(())
    }
}

impl Drop for PipedHandle {
    fn drop(&mut self) {
        if self.exit.is_none() {
            self.kill_group();
        }
        if let Some(w) = self.watchdog.take() {
            w.abort();
        }
        if let Some((env, proxy)) = self.proxy.take() {
            proxy.revoke_launch(&env);
        }
    }
}

fn pty_pump(mut reader: Box<dyn std::io::Read + Send>, to: &mpsc::Sender<Vec<u8>>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf) {
            // EIO once the child side closed is the end of output on Linux.
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.blocking_send(buf[..n].to_vec()).is_err() {
                    return;
                }
            }
        }
    }
}

struct PtyHandle {
    pid: Option<u32>,
    /// Kept open until the handle and every resizer are gone.
    master: Arc<std::sync::Mutex<Box<dyn portable_pty::MasterPty + Send>>>,
    /// Until `read_output` starts its pump or `take_pty` takes it.
    reader: Option<Box<dyn std::io::Read + Send>>,
    writer: Option<Arc<std::sync::Mutex<Box<dyn std::io::Write + Send>>>>,
    output: Option<mpsc::Receiver<Vec<u8>>>,
    exited: Option<tokio::sync::oneshot::Receiver<std::io::Result<portable_pty::ExitStatus>>>,
    killer: Box<dyn portable_pty::ChildKiller + Send + Sync>,
    watchdog: Option<tokio::task::JoinHandle<()>>,
    timed_out: Arc<AtomicBool>,
    exit: Option<ExitStatus>,
}

impl PtyHandle {
    fn stop_watchdog(&mut self) {
        if let Some(w) = self.watchdog.take() {
            w.abort();
        }
    }
}

/// Controls the pseudo-terminal a [`PtyHandle`] shares.
struct PtyControl(Arc<std::sync::Mutex<Box<dyn portable_pty::MasterPty + Send>>>);

impl cocode_core::process::PtyControl for PtyControl {
    fn resize(&self, rows: u16, cols: u16) -> Result<(), LaunchError> {
        let master = self
            .0
            .lock()
            .map_err(|_| LaunchError::Io("terminal poisoned".into()))?;
        master
            .resize(portable_pty::PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| LaunchError::Io(e.to_string()))
    }

    fn foreground_group(&self) -> Option<u32> {
        #[cfg(unix)]
        {
            let leader = self.0.lock().ok()?.process_group_leader()?;
            u32::try_from(leader).ok()
        }
        #[cfg(not(unix))]
        None
    }
}

/// The shared PTY writer as a plain writer.
struct SharedWriter(Arc<std::sync::Mutex<Box<dyn std::io::Write + Send>>>);

impl std::io::Write for SharedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("terminal writer poisoned"))?
            .write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("terminal writer poisoned"))?
            .flush()
    }
}

#[async_trait::async_trait]
impl ProcessHandle for PtyHandle {
    fn pid(&self) -> Option<u32> {
        self.pid
    }

    async fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), LaunchError> {
        let writer = Arc::clone(
            self.writer
                .as_ref()
                .ok_or_else(|| LaunchError::Io("the terminal was taken".into()))?,
        );
        let bytes = bytes.to_vec();
        tokio::task::spawn_blocking(move || {
            let mut w = writer
                .lock()
                .map_err(|_| LaunchError::Io("terminal writer poisoned".into()))?;
            w.write_all(&bytes)
                .and_then(|()| w.flush())
                .map_err(|e| LaunchError::Io(e.to_string()))
        })
        .await
        .map_err(|e| LaunchError::Io(e.to_string()))?
    }

    async fn read_output(&mut self) -> Option<Vec<u8>> {
        if self.output.is_none() {
            // The pump starts with the first read (a terminal that takes the
            // PTY reads it itself).
            let reader = self.reader.take()?;
            let (tx, rx) = mpsc::channel(64);
            if let Err(e) = std::thread::Builder::new()
                .name("cocode-pty-reader".into())
                .spawn(move || pty_pump(reader, &tx))
            {
                tracing::warn!("the terminal's output cannot be read: {e}");
                return None;
            }
            self.output = Some(rx);
        }
        self.output.as_mut()?.recv().await
    }

    fn take_pty(&mut self) -> Option<cocode_core::process::PtyIo> {
        let reader = self.reader.take()?;
        let writer = self.writer.take()?;
        Some(cocode_core::process::PtyIo {
            reader,
            writer: Box::new(SharedWriter(writer)),
            control: Box::new(PtyControl(Arc::clone(&self.master))),
        })
    }

    async fn wait(&mut self) -> Result<ExitStatus, LaunchError> {
        if let Some(exit) = self.exit {
            return Ok(exit);
        }
        let Some(rx) = self.exited.take() else {
            return Err(LaunchError::Io("the child was already awaited".into()));
        };
        let status = rx
            .await
            .map_err(|_| LaunchError::Io("the wait thread ended".into()))?
            .map_err(|e| LaunchError::Io(e.to_string()))?;
        self.stop_watchdog();
        let exit = if self.timed_out.load(Ordering::SeqCst) {
            ExitStatus::TimedOut
        } else if status.signal().is_some() {
            ExitStatus::Killed
        } else {
            ExitStatus::Code(i32::try_from(status.exit_code()).unwrap_or(i32::MAX))
        };
        self.exit = Some(exit);
        Ok(exit)
    }

    async fn kill(&mut self) -> Result<(), LaunchError> {
        if self.exit.is_some() {
            return Ok(());
        }
        if let Some(pid) = self.pid {
            kill_group(pid);
        }
        let _ = self.killer.kill();
        if let Some(rx) = self.exited.take() {
            let _ = rx.await;
        }
        self.stop_watchdog();
        self.exit = Some(ExitStatus::Killed);
        Ok(())
    }
}

impl Drop for PtyHandle {
    fn drop(&mut self) {
        if self.exit.is_none() {
            if let Some(pid) = self.pid {
                kill_group(pid);
            }
            let _ = self.killer.kill();
        }
        self.stop_watchdog();
    }
}

#[cfg(test)]
mod tests {

    #[test]
    #[cfg(unix)]
    fn permission_denied_on_the_search_is_not_installed_but_on_a_program_is_refused() {
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let path = "/nonexistent-cocode-dir:/bin".to_owned();
        assert_eq!(
            spawn_error(&denied, "no-such-tool", "no-such-tool", Some(&path)),
            LaunchError::NotFound("no-such-tool".into())
        );
        assert_eq!(
            spawn_error(&denied, "sh", "sh", Some(&path)),
            LaunchError::Spawn(format!("sh: {denied}"))
        );
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(
            spawn_error(&missing, "x", "x", None),
            LaunchError::NotFound("x".into())
        );
    }
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn windows_process_tools_are_asked_the_right_questions() {
        assert_eq!(taskkill_argv(42), ["taskkill", "/T", "/F", "/PID", "42"]);
        assert_eq!(
            tasklist_argv(42),
            ["tasklist", "/FO", "CSV", "/NH", "/FI", "PID eq 42"]
        );
        let row = "\"cocode.exe\",\"4242\",\"Console\",\"1\",\"25,432 K\"\r\n";
        assert!(tasklist_lists(row, 4242));
        assert!(!tasklist_lists(row, 42));
        assert!(!tasklist_lists(row, 424));
        for none in [
            "INFO: No tasks are running which match the specified criteria.\r\n",
            "정보: 지정된 조건에 일치하는 작업이 실행되고 있지 않습니다.\r\n",
            "",
        ] {
            assert!(!tasklist_lists(none, 4242), "{none}");
        }
    }
}
