//! Every `connect` of an agent command is decided by cocode (Linux).
//!
//! Landlock on this kernel cannot confine connections to pathname Unix
//! sockets (its `RESOLVE_UNIX` right is newer), and a command must keep its
//! own (build tools serve their IPC on one: `tsx` does, in its temp folder).
//! So each confined command gets a second seccomp filter that hands every
//! `connect` to cocode through a user-notification listener. cocode reads
//! the address from the command's memory once, takes a duplicate of its
//! socket (`pidfd_getfd`), decides, and makes the connection itself on that
//! duplicate — the same open socket — with the address it checked, so
//! nothing the command changes after the check (its memory, a link, the
//! descriptor) changes what is connected. The rules:
//!
//! - A pathname Unix socket is reached only when the socket itself — every
//!   link followed — lies in a folder the command may write (its private
//!   temp folder, the workspace's granted entries, the download caches):
//!   places where the command could have made it. Another program's
//!   socket anywhere else (a database's, a session's, a container
//!   engine's) is refused with `EACCES`, even when file permissions would
//!   let the person reach it. The connection is made through
//!   `/proc/self/fd/N` of the socket file opened once, so the file checked
//!   is the file connected. Magic links (`/proc/*/fd`, `/proc/*/root`) are
//!   not followed.
//! - Abstract Unix sockets are refused (`EPERM`), as Landlock's scoping
//!   does.
//! - TCP reaches only the policy proxy, `127.0.0.1:<port>` (or its
//!   IPv4-mapped IPv6 form); anything else is refused with `EACCES`,
//!   whether or not the launch has a network namespace.
//! - `AF_UNSPEC` (dissolving a datagram association) and addresses of the
//!   wrong family pass to the kernel, which answers them.
//!
//! Unix datagram sockets are refused at creation by the socket filter
//! (`confine`): a datagram can name its destination in every `sendmsg`,
//! past any `connect`. The server sees cocode as the connecting process in
//! `SO_PEERCRED` (same user). A machine whose kernel lacks user
//! notification (before 5.9) or `pidfd_getfd` runs commands without the
//! broker, and `cocode doctor` says so.
#![expect(
    unsafe_code,
    reason = "seccomp user notification: raw system calls and ioctls on kernel structures"
)]

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

// Classic BPF opcodes (linux/filter.h): `BPF_LD | BPF_W | BPF_ABS`
// (0x00 | 0x00 | 0x20), `BPF_JMP | BPF_JEQ | BPF_K`, `BPF_RET | BPF_K`.
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x05 | 0x10;
const BPF_RET_K: u16 = 0x06;
/// Offsets in `struct seccomp_data`.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;
/// `SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV` (5.19): once cocode holds the
/// notification, only a fatal signal interrupts the call, so a runtime
/// that signals its threads often (Go) does not see its `connect`
/// restarted after cocode made the connection.
const WAIT_KILLABLE_RECV: libc::c_ulong = 1 << 5;
/// `PIDFD_THREAD` (6.9): a pidfd of a thread other than the leader.
const PIDFD_THREAD: libc::c_uint = 0x80;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const AUDIT_ARCH: u32 = 0;

fn statement(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn connect_numbers() -> Vec<u32> {
    let native = u32::try_from(libc::SYS_connect).unwrap_or(u32::MAX);
    #[cfg(target_arch = "x86_64")]
    {
        vec![native, native | 0x4000_0000]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        vec![native]
    }
}

/// The filter that sends `connect` (native and, on x86-64, x32 numbering)
/// to the listener and lets every other call through (the socket filter
/// decides the rest; a foreign architecture is killed there).
pub(crate) struct NotifyFilter {
    program: Vec<libc::sock_filter>,
}

impl NotifyFilter {
    pub(crate) fn new() -> Self {
        let numbers = connect_numbers();
        let n = u8::try_from(numbers.len()).unwrap_or(u8::MAX);
        let mut program = vec![statement(BPF_LD_W_ABS, ARCH_OFFSET)];
        // Another architecture: allow here (the socket filter kills it).
        let mut arch = statement(BPF_JEQ_K, AUDIT_ARCH);
        arch.jf = n + 1;
        program.push(arch);
        program.push(statement(BPF_LD_W_ABS, NR_OFFSET));
        for (i, nr) in numbers.iter().enumerate() {
            let mut jump = statement(BPF_JEQ_K, *nr);
            // To the notify return, past the remaining tests and the allow.
            jump.jt = n - u8::try_from(i).unwrap_or(0);
            program.push(jump);
        }
        program.push(statement(BPF_RET_K, libc::SECCOMP_RET_ALLOW));
        program.push(statement(BPF_RET_K, libc::SECCOMP_RET_USER_NOTIF));
        Self { program }
    }

    /// Installs the filter on the calling thread (which must have
    /// `no_new_privs`) and returns the listener. Raw system calls only: it
    /// runs between fork and exec.
    pub(crate) fn install(&self) -> std::io::Result<RawFd> {
        let prog = libc::sock_fprog {
            len: u16::try_from(self.program.len()).unwrap_or(0),
            filter: self.program.as_ptr().cast_mut(),
        };
        let mut last = 0;
        for flags in [
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | WAIT_KILLABLE_RECV,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
        ] {
            // SAFETY: `prog` points at a live program for the call.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    flags,
                    &raw const prog,
                )
            };
            if fd >= 0 {
                return Ok(RawFd::try_from(fd).unwrap_or(-1));
            }
            last = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            if last != libc::EINVAL {
                break;
            }
        }
        Err(std::io::Error::from_raw_os_error(last))
    }

    /// Installs the filter and sends its listener to cocode over `channel`
    /// (between fork and exec: raw system calls only).
    pub(crate) fn hand_over(&self, channel: RawFd) -> std::io::Result<()> {
        let listener = self.install()?;
        // SAFETY: descriptors of this process; raw calls only.
        let sent = unsafe { crate::reaper::send_fd(channel, listener) };
        // SAFETY: the listener is ours; cocode holds its copy now.
        unsafe { libc::close(listener) };
        sent
    }
}

/// Whether this kernel gives a listener for the filter and lets cocode take
/// a command's socket (`pidfd_getfd`, 5.6): measured once, on a throwaway
/// thread (a filter binds the calling thread only).
pub(crate) fn available() -> bool {
    static PROBE: OnceLock<bool> = OnceLock::new();
    *PROBE.get_or_init(|| {
        std::thread::spawn(|| {
            // SAFETY: plain calls on this thread; the descriptors are ours.
            unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return false;
                }
                let pidfd = libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0);
                let Ok(pidfd) = RawFd::try_from(pidfd) else {
                    return false;
                };
                if pidfd < 0 {
                    return false;
                }
                let pidfd = OwnedFd::from_raw_fd(pidfd);
                let Ok(listener) = NotifyFilter::new().install() else {
                    return false;
                };
                let listener = OwnedFd::from_raw_fd(listener);
                let dup = libc::syscall(
                    libc::SYS_pidfd_getfd,
                    pidfd.as_raw_fd(),
                    listener.as_raw_fd(),
                    0,
                );
                if dup >= 0 {
                    drop(OwnedFd::from_raw_fd(RawFd::try_from(dup).unwrap_or(-1)));
                    true
                } else {
                    false
                }
            }
        })
        .join()
        .unwrap_or(false)
    })
}

/// What a command may connect to.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    /// Folders (and files) the command may write, as the kernel spells
    /// them (links resolved): a pathname socket must lie below one.
    pub(crate) roots: Vec<PathBuf>,
    /// The policy proxy's port on `127.0.0.1`.
    pub(crate) proxy_port: u16,
}

impl Rules {
    /// The rules for a launch writing below `writable`.
    pub(crate) fn new(writable: &[PathBuf], proxy_port: u16) -> Self {
        let roots = writable
            .iter()
            .filter_map(|p| dunce::canonicalize(p).ok())
            .collect();
        Self { roots, proxy_port }
    }

    fn holds(&self, socket: &Path) -> bool {
        self.roots.iter().any(|r| socket.starts_with(r))
    }

    /// The verdict on a TCP address (`sockaddr_in` or `sockaddr_in6`
    /// bytes): `Ok` for the proxy or `AF_UNSPEC`, else the errno.
    fn inet(&self, addr: &[u8]) -> Result<(), i32> {
        let proxy = std::net::Ipv4Addr::LOCALHOST;
        match family(addr) {
            Some(f) if f == libc::AF_UNSPEC => Ok(()),
            Some(f) if f == libc::AF_INET && addr.len() >= 8 => {
                let port = u16::from_be_bytes([addr[2], addr[3]]);
                let ip = std::net::Ipv4Addr::new(addr[4], addr[5], addr[6], addr[7]);
                if port == self.proxy_port && ip == proxy {
                    Ok(())
                } else {
                    Err(libc::EACCES)
                }
            }
            Some(f) if f == libc::AF_INET6 && addr.len() >= 24 => {
                let port = u16::from_be_bytes([addr[2], addr[3]]);
                let mut octets = [0u8; 16];
                octets.copy_from_slice(&addr[8..24]);
                let ip = std::net::Ipv6Addr::from(octets);
                if port == self.proxy_port && ip.to_ipv4_mapped() == Some(proxy) {
                    Ok(())
                } else {
                    Err(libc::EACCES)
                }
            }
            _ => Err(libc::EACCES),
        }
    }
}

fn family(addr: &[u8]) -> Option<libc::c_int> {
    let raw = addr.get(..2)?;
    Some(libc::c_int::from(u16::from_ne_bytes([raw[0], raw[1]])))
}

/// What a `sockaddr_un` names.
#[derive(Debug, PartialEq, Eq)]
enum UnixTarget<'a> {
    /// A pathname socket (the bytes before the first NUL).
    Path(&'a [u8]),
    Abstract,
    /// No name, or not a Unix address: the kernel answers it.
    Other,
}

fn unix_target(addr: &[u8]) -> UnixTarget<'_> {
    if family(addr) != Some(libc::AF_UNIX) || addr.len() <= 2 {
        return UnixTarget::Other;
    }
    let path = &addr[2..];
    if path.first() == Some(&0) {
        return UnixTarget::Abstract;
    }
    let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
    UnixTarget::Path(&path[..end])
}

/// The broker of one launch: a thread answering its command's `connect`
/// calls until every process of the command is gone (or this is dropped).
pub(crate) struct Broker {
    stop: Arc<AtomicBool>,
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl Broker {
    pub(crate) fn start(listener: OwnedFd, rules: Rules) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let listener = Arc::new(listener);
        let rules = Arc::new(rules);
        std::thread::Builder::new()
            .name("cocode-connect-broker".into())
            .spawn(move || serve(&listener, &rules, &flag))?;
        Ok(Self { stop })
    }
}

/// Calls of one launch answered at once, at most.
const MAX_IN_FLIGHT: usize = 32;

fn serve(listener: &Arc<OwnedFd>, rules: &Arc<Rules>, stop: &AtomicBool) {
    let in_flight = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    while !stop.load(Ordering::SeqCst) {
        let mut poll = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        let n = unsafe { libc::poll(&raw mut poll, 1, 250) };
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return;
        }
        if n == 0 {
            continue;
        }
        if poll.revents & libc::POLLIN == 0 {
            // POLLHUP: no process uses the filter any more.
            return;
        }
        // SAFETY: a zeroed notification is valid for the kernel to fill.
        let mut request: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: the ioctl fills `request`.
        let got = unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                &raw mut request,
            )
        };
        if got != 0 {
            // ENOENT: the caller went away before it was read.
            continue;
        }
        // A connection may block (a full backlog): each has its thread, so
        // one stalled call holds up no other — up to a cap, past which the
        // calls are answered here, one after the other: a command flooding
        // cocode with stalled calls waits on itself, and cocode's threads
        // stay bounded.
        if in_flight.load(Ordering::SeqCst) >= MAX_IN_FLIGHT {
            answer(listener, rules, &request);
            continue;
        }
        in_flight.fetch_add(1, Ordering::SeqCst);
        let (shared, shared_rules, count) = (
            Arc::clone(listener),
            Arc::clone(rules),
            Arc::clone(&in_flight),
        );
        let spawned = std::thread::Builder::new()
            .name("cocode-connect".into())
            .spawn(move || {
                answer(&shared, &shared_rules, &request);
                count.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            in_flight.fetch_sub(1, Ordering::SeqCst);
            answer(listener, rules, &request);
        }
    }
}

fn respond(listener: RawFd, id: u64, result: Result<(), i32>) {
    let response = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: result.err().map_or(0, |e| -e),
        flags: 0,
    };
    // SAFETY: the ioctl reads `response`; a failure (the caller is gone)
    // needs no answer.
    unsafe {
        libc::ioctl(
            listener,
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &raw const response,
        );
    }
}

fn answer(listener: &OwnedFd, rules: &Rules, request: &libc::seccomp_notif) {
    let result = decide_and_connect(listener.as_raw_fd(), rules, request);
    respond(listener.as_raw_fd(), request.id, result);
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Whether the notification still stands (its caller waits in it): after
/// this, the pid read from it named that caller.
fn still_valid(listener: RawFd, id: u64) -> bool {
    // SAFETY: the ioctl reads one u64.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &raw const id) == 0 }
}

fn decide_and_connect(
    listener: RawFd,
    rules: &Rules,
    request: &libc::seccomp_notif,
) -> Result<(), i32> {
    let tid = libc::pid_t::try_from(request.pid).map_err(|_| libc::ESRCH)?;
    let fd = libc::c_int::try_from(request.data.args[0] & 0xffff_ffff).unwrap_or(-1);
    let len = usize::try_from(request.data.args[2] & 0xffff_ffff).unwrap_or(usize::MAX);
    if len > size_of::<libc::sockaddr_storage>() {
        return Err(libc::EINVAL);
    }
    let mut addr = vec![0u8; len];
    if len > 0 {
        let local = libc::iovec {
            iov_base: addr.as_mut_ptr().cast(),
            iov_len: len,
        };
        let remote = libc::iovec {
            iov_base: std::ptr::without_provenance_mut(
                usize::try_from(request.data.args[1]).unwrap_or(0),
            ),
            iov_len: len,
        };
        // SAFETY: `local` is our buffer of `len` bytes; the kernel checks
        // the remote range.
        let read =
            unsafe { libc::process_vm_readv(tid, &raw const local, 1, &raw const remote, 1, 0) };
        if usize::try_from(read).ok() != Some(len) {
            return Err(libc::EFAULT);
        }
    }
    let pidfd = pidfd(tid)?;
    if !still_valid(listener, request.id) {
        return Err(libc::ESRCH);
    }
    // SAFETY: a pidfd we own and a descriptor number of that process.
    let sock = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if sock < 0 {
        return Err(errno());
    }
    // SAFETY: a new descriptor the kernel just gave us.
    let sock = unsafe { OwnedFd::from_raw_fd(RawFd::try_from(sock).unwrap_or(-1)) };
    let mut domain: libc::c_int = 0;
    let mut size = libc::socklen_t::try_from(size_of::<libc::c_int>()).unwrap_or(4);
    // SAFETY: `domain` has room for the option.
    let asked = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_DOMAIN,
            (&raw mut domain).cast(),
            &raw mut size,
        )
    };
    if asked != 0 {
        return Err(errno());
    }
    match domain {
        libc::AF_UNIX => match unix_target(&addr) {
            UnixTarget::Abstract => Err(libc::EPERM),
            UnixTarget::Other => connect(&sock, &addr),
            UnixTarget::Path(path) => {
                let path = Path::new(OsStr::from_bytes(path));
                let full = if path.is_absolute() {
                    path.to_path_buf()
                } else {
                    std::fs::read_link(format!("/proc/{tid}/cwd"))
                        .map_err(|_| libc::ESRCH)?
                        .join(path)
                };
                connect_unix(&sock, &full, rules)
            }
        },
        libc::AF_INET | libc::AF_INET6 => {
            rules.inet(&addr)?;
            connect(&sock, &addr)
        }
        _ => Err(libc::EACCES),
    }
}

/// A pidfd of thread `tid` (or of its process where the kernel has no
/// thread pidfds: the descriptors are the process's).
fn pidfd(tid: libc::pid_t) -> Result<OwnedFd, i32> {
    // SAFETY: plain system calls; the result is a new descriptor.
    let mut fd = unsafe { libc::syscall(libc::SYS_pidfd_open, tid, PIDFD_THREAD) };
    if fd < 0 {
        let status =
            std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
        let leader: libc::pid_t = status
            .lines()
            .find_map(|l| l.strip_prefix("Tgid:"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or(libc::ESRCH)?;
        // SAFETY: as above.
        fd = unsafe { libc::syscall(libc::SYS_pidfd_open, leader, 0) };
    }
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a new descriptor the kernel just gave us.
    Ok(unsafe { OwnedFd::from_raw_fd(RawFd::try_from(fd).unwrap_or(-1)) })
}

fn connect(sock: &OwnedFd, addr: &[u8]) -> Result<(), i32> {
    let len = libc::socklen_t::try_from(addr.len()).map_err(|_| libc::EINVAL)?;
    // SAFETY: `addr` holds `len` bytes, copied from the caller once.
    let done = unsafe { libc::connect(sock.as_raw_fd(), addr.as_ptr().cast(), len) };
    if done == 0 { Ok(()) } else { Err(errno()) }
}

/// Opens the socket file at `full` (links followed, magic links not),
/// checks where it really lies, and connects to that very file.
fn connect_unix(sock: &OwnedFd, full: &Path, rules: &Rules) -> Result<(), i32> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let file = rustix::fs::openat2(
        rustix::fs::CWD,
        full,
        OFlags::PATH | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_MAGICLINKS,
    )
    .map_err(rustix::io::Errno::raw_os_error)?;
    let stat = rustix::fs::fstat(&file).map_err(rustix::io::Errno::raw_os_error)?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::Socket {
        return Err(libc::ECONNREFUSED);
    }
    let handle = format!("/proc/self/fd/{}", file.as_raw_fd());
    let real = std::fs::read_link(&handle).map_err(|_| libc::EACCES)?;
    if !rules.holds(&real) {
        return Err(libc::EACCES);
    }
    // SAFETY: a zeroed `sockaddr_un` is valid.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::sa_family_t::try_from(libc::AF_UNIX).unwrap_or(1);
    let name = CString::new(handle).map_err(|_| libc::EINVAL)?;
    let bytes = name.as_bytes_with_nul();
    for (to, from) in addr.sun_path.iter_mut().zip(bytes) {
        *to = libc::c_char::from_ne_bytes([*from]);
    }
    let len = libc::socklen_t::try_from(2 + bytes.len()).unwrap_or(0);
    // SAFETY: `addr` is a live `sockaddr_un` of at least `len` bytes.
    let done = unsafe { libc::connect(sock.as_raw_fd(), (&raw const addr).cast(), len) };
    if done == 0 { Ok(()) } else { Err(errno()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inet(ip: [u8; 4], port: u16) -> Vec<u8> {
        let mut a = u16::try_from(libc::AF_INET).unwrap().to_ne_bytes().to_vec();
        a.extend(port.to_be_bytes());
        a.extend(ip);
        a.extend([0u8; 8]);
        a
    }

    fn inet6(ip: std::net::Ipv6Addr, port: u16) -> Vec<u8> {
        let mut a = u16::try_from(libc::AF_INET6)
            .unwrap()
            .to_ne_bytes()
            .to_vec();
        a.extend(port.to_be_bytes());
        a.extend([0u8; 4]);
        a.extend(ip.octets());
        a.extend([0u8; 4]);
        a
    }

    #[test]
    fn tcp_reaches_the_proxy_on_loopback_only() {
        let rules = Rules {
            roots: Vec::new(),
            proxy_port: 8080,
        };
        assert_eq!(rules.inet(&inet([127, 0, 0, 1], 8080)), Ok(()));
        assert_eq!(rules.inet(&inet([127, 0, 0, 2], 8080)), Err(libc::EACCES));
        assert_eq!(rules.inet(&inet([127, 0, 0, 1], 8081)), Err(libc::EACCES));
        assert_eq!(rules.inet(&inet([10, 0, 0, 1], 8080)), Err(libc::EACCES));
        let mapped = std::net::Ipv4Addr::LOCALHOST.to_ipv6_mapped();
        assert_eq!(rules.inet(&inet6(mapped, 8080)), Ok(()));
        assert_eq!(
            rules.inet(&inet6(std::net::Ipv6Addr::LOCALHOST, 8080)),
            Err(libc::EACCES)
        );
        let unspec = u16::try_from(libc::AF_UNSPEC)
            .unwrap()
            .to_ne_bytes()
            .to_vec();
        assert_eq!(rules.inet(&unspec), Ok(()));
        // Too short to hold an address.
        assert_eq!(
            rules.inet(&inet([127, 0, 0, 1], 8080)[..6]),
            Err(libc::EACCES)
        );
        assert_eq!(rules.inet(&[]), Err(libc::EACCES));
    }

    #[test]
    fn unix_addresses_are_told_apart() {
        let unix = u16::try_from(libc::AF_UNIX).unwrap().to_ne_bytes();
        let with = |tail: &[u8]| [unix.as_slice(), tail].concat();
        assert_eq!(
            unix_target(&with(b"/run/x.sock\0junk")),
            UnixTarget::Path(b"/run/x.sock")
        );
        assert_eq!(
            unix_target(&with(b"rel.sock")),
            UnixTarget::Path(b"rel.sock")
        );
        assert_eq!(unix_target(&with(b"\0name")), UnixTarget::Abstract);
        assert_eq!(unix_target(&unix), UnixTarget::Other);
        assert_eq!(unix_target(&inet([127, 0, 0, 1], 1)), UnixTarget::Other);
    }

    #[test]
    fn a_socket_must_lie_below_a_root_component_by_component() {
        let rules = Rules {
            roots: vec![PathBuf::from("/ws/src"), PathBuf::from("/tmp/cocode-x")],
            proxy_port: 1,
        };
        assert!(rules.holds(Path::new("/ws/src/a.sock")));
        assert!(rules.holds(Path::new("/tmp/cocode-x/tsx/ipc.sock")));
        assert!(!rules.holds(Path::new("/ws/srcx/a.sock")));
        assert!(!rules.holds(Path::new("/ws/a.sock")));
        assert!(!rules.holds(Path::new("/run/user/0/bus")));
    }

    #[test]
    fn the_filter_notifies_connect_and_allows_the_rest() {
        let program = NotifyFilter::new().program;
        let numbers = connect_numbers();
        // Walk the program as the kernel would, for a few calls.
        let run = |arch: u32, nr: u32| -> u32 {
            let mut acc = 0;
            let mut pc = 0;
            loop {
                let s = program[pc];
                match s.code {
                    BPF_LD_W_ABS => acc = if s.k == ARCH_OFFSET { arch } else { nr },
                    BPF_JEQ_K => {
                        pc += usize::from(if acc == s.k { s.jt } else { s.jf });
                    }
                    BPF_RET_K => return s.k,
                    other => panic!("unexpected opcode {other}"),
                }
                pc += 1;
            }
        };
        for nr in &numbers {
            assert_eq!(run(AUDIT_ARCH, *nr), libc::SECCOMP_RET_USER_NOTIF);
        }
        let socket = u32::try_from(libc::SYS_socket).unwrap();
        assert_eq!(run(AUDIT_ARCH, socket), libc::SECCOMP_RET_ALLOW);
        assert_eq!(run(AUDIT_ARCH ^ 1, numbers[0]), libc::SECCOMP_RET_ALLOW);
    }
}
