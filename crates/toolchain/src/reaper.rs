//! Every process an agent command starts ends with it (Linux).
//!
//! A process group does not hold a command's descendants: `setsid` or a
//! double fork leaves it, and such a process outlives the command's end,
//! its time limit, a stop and cocode itself — and writes after the task
//! ended. So each agent launch runs in a PID namespace of its own:
//!
//! Between fork and exec, the child cocode forked (the *keeper*) unshares a
//! PID namespace (with a user namespace when cocode is not root, mapping the
//! person's own ids) and forks again; that child is the namespace's PID 1,
//! a small init that forks the command (an ordinary process, whose signals
//! work as usual), reaps the orphans the namespace hands it, and exits when
//! the command ends, sending the command's wait status to the keeper. When
//! PID 1 exits, the kernel kills every other process of the namespace and
//! reaps them before the keeper's wait returns, so nothing the command
//! started is alive when cocode sees its end — and the after-command sweep
//! sees every write. The keeper passes the command's exit on as its own. A
//! stop or a time limit kills the keeper's process group; the init dies with
//! the keeper (it holds `PR_SET_PDEATHSIG`), and the namespace with it. If
//! cocode itself dies, even by `kill -9`, the keeper sees a pipe whose other
//! end only cocode holds close, and kills the init — so no launch outlives
//! cocode.
//!
//! ```text
//! cocode ─ keeper ─ init (PID 1) ─ command ─ everything it starts
//! ```
//!
//! The same keeper gives the command a network namespace of its own with
//! nothing but loopback, where it makes a listener on the proxy's port and
//! hands it to cocode, whose proxy serves it: no other address answers. And
//! a mount namespace where the person's own sockets (`hidden::hidden_sockets`:
//! the D-Bus session bus, ssh and gpg agents, displays, container engines)
//! are covered, so a command cannot reach them with the person's rights,
//! and a devpts instance of its own is mounted, so it can use
//! pseudo-terminals (an agent's shell) without seeing the person's.
//!
//! Where namespaces are not allowed (user namespaces switched off), launches
//! run as before, in their process group, and `cocode doctor` says so.
#![expect(
    unsafe_code,
    reason = "runs between fork and exec: raw system calls only, no allocation"
)]
#![expect(
    clippy::disallowed_methods,
    reason = "part of the launcher (boundaries.yaml): its probe spawns once"
)]

use std::os::fd::{AsRawFd as _, OwnedFd, RawFd};
use std::sync::OnceLock;

/// The pipe whose write end only cocode holds: its keepers wait for it to
/// close. Both ends are close-on-exec.
fn death_pipe() -> Option<&'static (OwnedFd, OwnedFd)> {
    static PIPE: OnceLock<Option<(OwnedFd, OwnedFd)>> = OnceLock::new();
    PIPE.get_or_init(|| rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).ok())
        .as_ref()
}

/// How a launch enters its namespaces, prepared in cocode before the fork
/// (the child only reads it).
pub(crate) struct PidNamespace {
    /// The id maps to write when cocode is not root (`"<id> <id> 1"`).
    maps: Option<(Vec<u8>, Vec<u8>)>,
    death_read: RawFd,
    death_write: RawFd,
    /// A network namespace of its own, with the proxy's port inside.
    net: Option<NetNamespace>,
    /// Places covered in a mount namespace of its own: (path, is a folder).
    hide: Vec<(std::ffi::CString, bool)>,
    /// Namespaces unshared besides those the fields ask for (the probe asks
    /// for every kind a launch may use).
    extra: libc::c_int,
    /// Give the command a devpts instance of its own (in its mount
    /// namespace): its pseudo-terminals, and none of the person's.
    ptys: bool,
    /// Set in the child once that instance is mounted.
    private_ptys: std::sync::atomic::AtomicBool,
    /// Paths bound read-only over themselves in the mount namespace, each
    /// with the mount flags its remount must keep (`MS_NOSUID`, …).
    read_only: Vec<(std::ffi::CString, libc::c_ulong)>,
    /// Mount a procfs of the new PID namespace on `/proc`.
    proc: bool,
}

/// A launch's network namespace: nothing but loopback, where a listener on
/// `127.0.0.1:<proxy port>` is made and handed to cocode over `channel`
/// (cocode's proxy serves it). No other address answers inside, so TCP
/// reaches the proxy and nothing else — whatever the address.
pub(crate) struct NetNamespace {
    pub(crate) port: u16,
    /// The child's end of a Unix socket pair whose other end cocode reads.
    pub(crate) channel: RawFd,
}

impl PidNamespace {
    /// The plan for this process, or `None` when the pipe cannot be made.
    pub(crate) fn prepare(
        net: Option<NetNamespace>,
        hide: &[crate::hidden::Hidden],
        ptys: bool,
        read_only: &[std::path::PathBuf],
        proc: bool,
    ) -> Option<Self> {
        use std::os::unix::ffi::OsStrExt as _;
        let hide = hide
            .iter()
            .filter_map(|h| {
                let (path, folder) = h.parts();
                let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
                Some((c, folder))
            })
            .collect();
        let read_only = read_only
            .iter()
            .map(|path| {
                let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
                Some((c.clone(), locked_flags(&c)?))
            })
            .collect::<Option<Vec<_>>>()?;
        let (read, write) = death_pipe()?;
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        Some(Self {
            maps: (uid != 0).then(|| {
                (
                    format!("{uid} {uid} 1").into_bytes(),
                    format!("{gid} {gid} 1").into_bytes(),
                )
            }),
            death_read: read.as_raw_fd(),
            death_write: write.as_raw_fd(),
            net,
            hide,
            extra: 0,
            ptys,
            private_ptys: std::sync::atomic::AtomicBool::new(false),
            read_only,
            proc,
        })
    }

    /// Whether the launch needs a mount namespace of its own.
    fn mounts(&self) -> bool {
        !self.hide.is_empty() || self.ptys || !self.read_only.is_empty() || self.proc
    }

    /// Runs in the forked child before exec. Returns in the command, which
    /// goes on to exec; the keeper and the namespace's init never return.
    /// An error fails the launch (the spawn reports it).
    pub(crate) fn enter(&self) -> std::io::Result<()> {
        // SAFETY: only async-signal-safe system calls on memory prepared
        // before the fork; see each call.
        unsafe {
            let flags = libc::CLONE_NEWPID
                | if self.maps.is_some() {
                    libc::CLONE_NEWUSER
                } else {
                    0
                }
                | if self.net.is_some() {
                    libc::CLONE_NEWNET
                } else {
                    0
                }
                | if self.mounts() { libc::CLONE_NEWNS } else { 0 }
                | self.extra;
            if libc::unshare(flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some((uid_map, gid_map)) = &self.maps {
                // A sealed cocode is undumpable, and so is this fork of it:
                // its `/proc/self` files then belong to root, and a person
                // who is not root could not write its maps. It is dumpable
                // for the three opens alone (nothing else runs meanwhile;
                // its environment block holds no secret), then not again.
                let sealed = libc::prctl(libc::PR_GET_DUMPABLE) == 0;
                if sealed {
                    libc::prctl(libc::PR_SET_DUMPABLE, 1);
                }
                let open = |path: &std::ffi::CStr| {
                    libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC)
                };
                let fds = [
                    open(c"/proc/self/setgroups"),
                    open(c"/proc/self/uid_map"),
                    open(c"/proc/self/gid_map"),
                ];
                let opened = std::io::Error::last_os_error();
                if sealed {
                    libc::prctl(libc::PR_SET_DUMPABLE, 0);
                }
                if fds.iter().any(|fd| *fd < 0) {
                    for fd in fds.into_iter().filter(|fd| *fd >= 0) {
                        libc::close(fd);
                    }
                    return Err(opened);
                }
                for (fd, bytes) in fds.into_iter().zip([&b"deny"[..], uid_map, gid_map]) {
                    write_fd(fd, bytes)?;
                }
            }
            if self.mounts() {
                self.cover()?;
            }
            if let Some(net) = &self.net {
                loopback_up()?;
                let listener = listen_on_loopback(net.port)?;
                let sent = send_fd(net.channel, listener);
                libc::close(listener);
                libc::close(net.channel);
                sent?;
            }
            // `alive` tells the init whether the keeper lived past the
            // fork; `status` carries the command's wait status to the
            // keeper.
            let alive = pipe()?;
            let status = pipe()?;
            match libc::fork() {
                -1 => Err(std::io::Error::last_os_error()),
                0 => init(alive, status, self.proc),
                init_pid => self.keep(init_pid, alive, status),
            }
        }
    }

    /// Covers the person's socket places in the new mount namespace: an
    /// empty read-only folder over each folder, `/dev/null` over each
    /// socket file. Nothing leaks back out (the namespace's mounts are made
    /// private first).
    ///
    /// # Safety
    /// Only in the forked child, single-threaded, inside its new mount
    /// namespace and before exec; the paths were prepared before the fork.
    unsafe fn cover(&self) -> std::io::Result<()> {
        // SAFETY: NUL-terminated paths prepared before the fork.
        unsafe {
            let none = std::ptr::null::<libc::c_char>();
            if libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            for (path, folder) in &self.hide {
                let done = if *folder {
                    libc::mount(
                        c"tmpfs".as_ptr(),
                        path.as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                        c"size=4k,mode=0555".as_ptr().cast(),
                    )
                } else {
                    libc::mount(
                        c"/dev/null".as_ptr(),
                        path.as_ptr(),
                        none,
                        libc::MS_BIND,
                        std::ptr::null(),
                    )
                };
                if done != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            for (path, flags) in &self.read_only {
                // Over itself, then made read-only, keeping the flags the
                // mount it lies on has (a user namespace may not drop
                // them). Still a mount point, so it cannot be renamed or
                // removed either.
                if libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    none,
                    libc::MS_BIND,
                    std::ptr::null(),
                ) != 0
                    || libc::mount(
                        none,
                        path.as_ptr(),
                        none,
                        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | flags,
                        std::ptr::null(),
                    ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if self.ptys {
                // A devpts instance of its own, its `ptmx` over `/dev/ptmx`:
                // the command's terminals are the only ones it can see.
                let private = libc::mount(
                    c"devpts".as_ptr(),
                    c"/dev/pts".as_ptr(),
                    c"devpts".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NOEXEC,
                    c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
                ) == 0
                    && libc::mount(
                        c"/dev/pts/ptmx".as_ptr(),
                        c"/dev/ptmx".as_ptr(),
                        none,
                        libc::MS_BIND,
                        std::ptr::null(),
                    ) == 0;
                self.private_ptys
                    .store(private, std::sync::atomic::Ordering::Relaxed);
            }
            Ok(())
        }
    }

    /// Whether the command got its own devpts instance (read in the child
    /// after [`Self::enter`]).
    pub(crate) fn private_ptys(&self) -> bool {
        self.private_ptys.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The keeper: waits for the namespace's init (or for cocode's end, then
    /// kills it) and ends the way the command ended.
    ///
    /// # Safety
    /// Only in the forked keeper, single-threaded: `init` is its child and
    /// `alive` and `status` are the pipes made for the two of them.
    unsafe fn keep(&self, init: libc::pid_t, alive: [RawFd; 2], status: [RawFd; 2]) -> ! {
        // SAFETY: raw system calls in a single-threaded child.
        unsafe {
            // Nothing of cocode's stays open here but the death pipe's read
            // end, the write end of `alive` (it closes with the keeper) and
            // the read end of `status`: above all not the pipe on which the
            // spawn learns that the exec happened, nor the output pipes.
            libc::close(alive[0]);
            libc::close(status[1]);
            libc::close(self.death_write);
            close_all_but(&mut [self.death_read, alive[1], status[0]]);
            let pidfd = libc::syscall(libc::SYS_pidfd_open, init, 0);
            let mut fds = [
                libc::pollfd {
                    fd: self.death_read,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: libc::c_int::try_from(pidfd).unwrap_or(-1),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let mut init_status: libc::c_int = 0;
            loop {
                let reaped = libc::waitpid(init, &raw mut init_status, libc::WNOHANG);
                if reaped == init {
                    break;
                }
                if reaped == -1
                    && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
                {
                    libc::_exit(127);
                }
                // Without a pidfd (kernels before 5.3) look again in 100 ms.
                let timeout = if fds[1].fd < 0 { 100 } else { -1 };
                let n = libc::poll(fds.as_mut_ptr(), 2, timeout);
                if n > 0 && fds[0].revents != 0 {
                    // cocode is gone: so is the namespace.
                    libc::kill(init, libc::SIGKILL);
                    fds[0].fd = -1;
                }
            }
            // The command's own wait status, which the init sent; without
            // it (the init was killed) the init's.
            let mut word: libc::c_int = 0;
            let size = size_of::<libc::c_int>();
            let got = libc::read(status[0], (&raw mut word).cast(), size);
            let ended = if usize::try_from(got).ok() == Some(size) {
                word
            } else {
                init_status
            };
            if libc::WIFEXITED(ended) {
                libc::_exit(libc::WEXITSTATUS(ended));
            }
            let signal = libc::WTERMSIG(ended);
            libc::signal(signal, libc::SIG_DFL);
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal)
        }
    }
}

/// A close-on-exec pipe: [read, write].
///
/// # Safety
/// The caller owns the two descriptors and closes them (in a forked child,
/// only async-signal-safe calls follow).
unsafe fn pipe() -> std::io::Result<[RawFd; 2]> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fds)
}

/// PID 1 of the namespace: starts the command (the fork's child returns
/// and goes on to exec), reaps every orphan the namespace hands it, and
/// when the command ends sends its wait status to the keeper and exits —
/// which kills and reaps every process left in the namespace.
///
/// # Safety
/// Only in the forked child that is the new PID namespace's first process,
/// single-threaded and before exec; `alive` and `status` are the pipes made
/// for it and the keeper.
unsafe fn init(alive: [RawFd; 2], status: [RawFd; 2], proc: bool) -> std::io::Result<()> {
    // SAFETY: raw system calls in a single-threaded child.
    unsafe {
        libc::close(alive[1]);
        libc::close(status[0]);
        // The keeper's end kills the whole namespace.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        // The keeper may have died before the line above.
        let mut probe = libc::pollfd {
            fd: alive[0],
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&raw mut probe, 1, 0) != 0 {
            libc::_exit(137);
        }
        let command = libc::fork();
        if command == -1 {
            return Err(std::io::Error::last_os_error());
        }
        if command == 0 {
            // The command: an ordinary process (not PID 1, whose signals
            // would be ignored), with cocode's descriptors as they were.
            libc::close(alive[0]);
            libc::close(status[1]);
            if proc {
                // Mounted from inside the namespace, so it shows this
                // namespace's processes only; a failure fails the launch.
                let none = std::ptr::null::<libc::c_char>();
                if libc::mount(
                    c"proc".as_ptr(),
                    c"/proc".as_ptr(),
                    c"proc".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    none.cast(),
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            return Ok(());
        }
        close_all_but(&mut [status[1]]);
        loop {
            let mut ended: libc::c_int = 0;
            let reaped = libc::waitpid(-1, &raw mut ended, 0);
            if reaped == command {
                let size = size_of::<libc::c_int>();
                libc::write(status[1], (&raw const ended).cast(), size);
                libc::_exit(0);
            }
            if reaped == -1 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                libc::_exit(127);
            }
        }
    }
}

/// The flags a read-only remount of a bind at `path` must keep: those of
/// the mount it lies on that a user namespace cannot drop. Access-time
/// flags are kept by the kernel when none is given. `None` when the path
/// cannot be looked at.
fn locked_flags(path: &std::ffi::CStr) -> Option<libc::c_ulong> {
    // SAFETY: a zeroed `statvfs` is valid; the call gets live pointers.
    let stat = unsafe {
        let mut stat: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(path.as_ptr(), &raw mut stat) != 0 {
            return None;
        }
        stat
    };
    let mut flags = 0;
    for (st, ms) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
    ] {
        if stat.f_flag & st != 0 {
            flags |= ms;
        }
    }
    Some(flags)
}

/// Brings the new network namespace's loopback interface up.
///
/// # Safety
/// Only in a single-threaded child inside its own network namespace,
/// before exec.
unsafe fn loopback_up() -> std::io::Result<()> {
    // SAFETY: a zeroed `ifreq` is valid; the calls get live pointers.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut request: libc::ifreq = std::mem::zeroed();
        for (to, from) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *to = libc::c_char::from_ne_bytes([*from]);
        }
        let mut done = libc::ioctl(sock, libc::SIOCGIFFLAGS, &raw mut request) == 0;
        if done {
            request.ifr_ifru.ifru_flags |= libc::c_short::try_from(libc::IFF_UP).unwrap_or(1);
            done = libc::ioctl(sock, libc::SIOCSIFFLAGS, &raw mut request) == 0;
        }
        let error = std::io::Error::last_os_error();
        libc::close(sock);
        if done { Ok(()) } else { Err(error) }
    }
}

/// A TCP listener on `127.0.0.1:port` in the current network namespace.
///
/// # Safety
/// As [`loopback_up`]; the caller owns the returned descriptor.
unsafe fn listen_on_loopback(port: u16) -> std::io::Result<RawFd> {
    // SAFETY: a zeroed `sockaddr_in` is valid; the calls get live pointers.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::sa_family_t::try_from(libc::AF_INET).unwrap_or(2);
        addr.sin_port = port.to_be();
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let size = libc::socklen_t::try_from(size_of::<libc::sockaddr_in>()).unwrap_or(16);
        let bound =
            libc::bind(sock, (&raw const addr).cast(), size) == 0 && libc::listen(sock, 128) == 0;
        if bound {
            Ok(sock)
        } else {
            let error = std::io::Error::last_os_error();
            libc::close(sock);
            Err(error)
        }
    }
}

/// Sends descriptor `fd` over the Unix socket `channel` (one byte of data
/// carries it).
///
/// # Safety
/// `channel` and `fd` are open descriptors the caller owns for the call.
pub(crate) unsafe fn send_fd(channel: RawFd, fd: RawFd) -> std::io::Result<()> {
    // SAFETY: the message points at live stack buffers sized with the
    // kernel's macros.
    unsafe {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        // Aligned room for one control message with one descriptor.
        let mut space = [0u64; 8];
        let fd_size = u32::try_from(size_of::<libc::c_int>()).unwrap_or(4);
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr().cast();
        msg.msg_controllen = usize::try_from(libc::CMSG_SPACE(fd_size)).unwrap_or(0);
        let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        if cmsg.is_null() {
            return Err(std::io::Error::other("no room for the descriptor"));
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = usize::try_from(libc::CMSG_LEN(fd_size)).unwrap_or(0);
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::c_int>(), fd);
        if libc::sendmsg(channel, &raw const msg, 0) == 1 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

/// Writes `bytes` whole to `fd` in one call and closes it.
///
/// # Safety
/// `fd` is an open descriptor the caller gives away: it is closed here.
unsafe fn write_fd(fd: RawFd, bytes: &[u8]) -> std::io::Result<()> {
    // SAFETY: `fd` is open and this function's to close; `bytes` is live.
    unsafe {
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let written = std::io::Error::last_os_error();
        libc::close(fd);
        if usize::try_from(n).ok() == Some(bytes.len()) {
            Ok(())
        } else {
            Err(written)
        }
    }
}

/// Closes every descriptor but those in `keep` (sorted here).
///
/// # Safety
/// Only in a single-threaded child before exec: every other descriptor is
/// closed, those Rust objects own included.
unsafe fn close_all_but(keep: &mut [RawFd]) {
    keep.sort_unstable();
    let to_u = |fd: RawFd| libc::c_uint::try_from(fd).unwrap_or(0);
    // SAFETY: closing descriptors of this single-threaded process.
    unsafe {
        let close_range = |first: libc::c_uint, last: libc::c_uint| {
            first > last || libc::syscall(libc::SYS_close_range, first, last, 0) == 0
        };
        let mut done = true;
        let mut next: libc::c_uint = 0;
        for fd in keep.iter().map(|fd| to_u(*fd)) {
            if fd > next {
                done &= close_range(next, fd - 1);
            }
            next = fd.saturating_add(1);
        }
        done &= close_range(next, libc::c_uint::MAX);
        if !done {
            // Kernels before 5.9: one by one, up to a generous limit.
            for fd in 0..65_536 {
                if !keep.contains(&fd) {
                    libc::close(fd);
                }
            }
        }
    }
}

/// Whether launches here get their PID namespace: measured once by
/// starting `/bin/sh -c 'echo $$'` the way an agent launch starts, which
/// prints 2 inside a namespace of its own (its init is 1).
pub fn available() -> bool {
    static PROBE: OnceLock<bool> = OnceLock::new();
    *PROBE.get_or_init(|| {
        let Some(mut ns) = PidNamespace::prepare(None, &[], false, &[], false) else {
            return false;
        };
        // Every kind of namespace a launch may ask for.
        ns.extra = libc::CLONE_NEWNET | libc::CLONE_NEWNS;
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.args(["-c", "echo $$"])
            .env_clear()
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: `enter` makes raw system calls only (see its comment).
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || ns.enter());
        }
        cmd.output()
            .is_ok_and(|out| out.status.success() && out.stdout == b"2\n")
    })
}

/// Runs `sh -c script args…` the way an agent launch starts, in namespaces
/// of its own with `read_only` bound read-only and, with `proc`, a private
/// `/proc`; what it printed, or `None` when it could not run or failed.
fn probe(
    read_only: &[std::path::PathBuf],
    proc: bool,
    script: &str,
    args: &[&std::ffi::OsStr],
) -> Option<Vec<u8>> {
    let mut ns = PidNamespace::prepare(None, &[], false, read_only, proc)?;
    ns.extra = libc::CLONE_NEWNET | libc::CLONE_NEWNS;
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(script)
        .args(args)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: `enter` makes raw system calls only (see its comment).
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || ns.enter());
    }
    let out = cmd.output().ok()?;
    out.status.success().then_some(out.stdout)
}

/// Whether a launch here can bind a folder read-only over itself in its
/// mount namespace (measured once: a command tries to write in a private
/// folder bound so).
pub fn read_only_binds_available() -> bool {
    static PROBE: OnceLock<bool> = OnceLock::new();
    *PROBE.get_or_init(|| {
        let Ok(folder) = crate::scratch::PrivateTemp::create(&std::env::temp_dir()) else {
            return false;
        };
        let target = folder.path().to_path_buf();
        probe(
            std::slice::from_ref(&target),
            false,
            r#"(: > "$0/x") 2>/dev/null && echo writable || echo read-only"#,
            &[target.as_os_str()],
        )
        .is_some_and(|out| out == b"read-only\n")
            && !target.join("x").exists()
    })
}

/// Whether a launch here gets a procfs of its own PID namespace (measured
/// once: a command looks for this process in `/proc`).
pub fn private_proc_available() -> bool {
    static PROBE: OnceLock<bool> = OnceLock::new();
    *PROBE.get_or_init(|| {
        let me = std::process::id().to_string();
        probe(
            &[],
            true,
            r#"test -e "/proc/$0" && echo host || echo private"#,
            &[std::ffi::OsStr::new(&me)],
        )
        .is_some_and(|out| out == b"private\n")
    })
}
