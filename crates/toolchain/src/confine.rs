//! OS confinement of agent-profile children.
//!
//! Linux: a Landlock ruleset and a seccomp filter applied between fork and
//! exec (by the launcher). Landlock: read and execute everywhere; write
//! only below the granted paths; TCP `connect` only to the policy proxy's
//! port; TCP `bind` denied; no abstract Unix sockets and no signals to
//! processes outside the command (ABI 6 scoping, where the kernel has it).
//! seccomp (`socket_filter`): the only sockets a command can create are
//! TCP over IPv4 or IPv6 and Unix stream or seqpacket sockets — no UDP,
//! raw, packet or netlink sockets, no Unix datagrams, no TCP Fast Open and
//! no `io_uring`, which could open sockets past the filter; no hard links
//! and no opening files by handle (a write through another name reaches a
//! workspace file unseen by the sweep's watcher). Unix sockets
//! stay because build tools use their own (`tsx` serves its IPC on one in
//! its temp folder); which ones a command may reach is decided by cocode
//! at each `connect` (`broker`): only sockets in folders it may write.
//! macOS: a Seatbelt profile for `/usr/bin/sandbox-exec` with the same rules
//! ([`seatbelt_profile`], text unit-tested everywhere). Windows: unconfined,
//! and the task detail says so.
//!
//! What is granted ([`workspace_writes`]): Landlock grants whole
//! hierarchies and cannot carve a folder out of an allowed one. Where a
//! launch gets a mount namespace of its own (see `reaper`), the workspace
//! root itself is granted and every piece of version-control metadata and
//! cocode's history found in it at launch ([`metadata_paths`]: each `.git`,
//! `.hg`, `.svn`, `.jj`, `.bzr` and `.cocode`, at any depth, file or
//! folder, and the folder a `.git` file or link names inside the workspace)
//! is bound read-only over itself in that namespace: a command creates and
//! edits files anywhere, at the root too (`sed -i`, `Cargo.lock`, a new
//! `README.md`), but writes no hook, no `core.fsmonitor` and no history.
//! Without a mount namespace, the older way holds ([`workspace_grants`]):
//! each top-level entry is granted on its own, except [`PROTECTED`] and
//! symbolic links (a link is followed by the kernel, so `escape ->
//! /elsewhere` would grant its target); the root gets no write right, so a
//! command cannot create a new top-level file or folder there. History an
//! agent's command could rewrite would make rollback meaningless, so one of
//! the two always holds.
//!
//! Every path is opened without following a final symbolic link when the
//! ruleset is built, so an entry swapped for a link after it was listed is
//! left out rather than granted.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cocode_core::path::COCODE_DIR;
use cocode_core::process::Confinement;

pub use crate::hidden::{Hidden, hidden_sockets};
use crate::roots::WritableRoots;

/// Top-level workspace entries no agent command may write: cocode's history
/// and the metadata of version-control systems (compared without case, as
/// case-insensitive file systems would).
pub const PROTECTED: [&str; 6] = [COCODE_DIR, ".git", ".hg", ".svn", ".jj", ".bzr"];

/// Whether a top-level entry name is one of [`PROTECTED`].
pub fn is_protected(name: &str) -> bool {
    PROTECTED.iter().any(|p| name.eq_ignore_ascii_case(p))
}

/// A top-level symbolic link of the workspace that is not granted, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedLink {
    pub path: PathBuf,
    /// Where the link points (as written in the link).
    pub target: PathBuf,
    pub reason: RefusedWhy,
}

/// Why a top-level link is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusedWhy {
    /// Its target lies outside the workspace.
    Outside,
    /// Its target is the history or version-control metadata.
    Protected,
    /// Its target does not exist.
    Dangling,
}

impl RefusedWhy {
    /// The reason in words.
    pub fn phrase(self) -> &'static str {
        match self {
            Self::Outside => "points outside the workspace",
            Self::Protected => "points into cocode's history or version-control metadata",
            Self::Dangling => "points to nothing",
        }
    }
}

/// What of a workspace agent commands may write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceGrants {
    /// Top-level entries granted (sorted).
    pub granted: Vec<PathBuf>,
    /// Top-level links left out because of where they point (sorted).
    pub refused: Vec<RefusedLink>,
}

/// The top-level entries of `workspace` an agent command may write, and the
/// links it may not follow.
pub fn workspace_grants(workspace: &Path) -> WorkspaceGrants {
    let mut grants = WorkspaceGrants::default();
    let Ok(entries) = std::fs::read_dir(workspace) else {
        return grants;
    };
    let root = dunce::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        if is_protected(&name.to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if !kind.is_symlink() {
            grants.granted.push(path);
            continue;
        }
        let target = std::fs::read_link(&path).unwrap_or_default();
        let reason = match dunce::canonicalize(&path) {
            Err(_) => Some(RefusedWhy::Dangling),
            Ok(real) => match real.strip_prefix(&root) {
                Err(_) => Some(RefusedWhy::Outside),
                Ok(inner) => inner
                    .components()
                    .next()
                    .filter(|first| is_protected(&first.as_os_str().to_string_lossy()))
                    .map(|_| RefusedWhy::Protected),
            },
        };
        if let Some(reason) = reason {
            grants.refused.push(RefusedLink {
                path,
                target,
                reason,
            });
        }
    }
    grants.granted.sort();
    grants.refused.sort_by(|a, b| a.path.cmp(&b.path));
    grants
}

/// At most this many entries are looked at for metadata at a launch; a
/// larger workspace is granted entry by entry ([`workspace_grants`]).
pub const METADATA_WALK_LIMIT: usize = 2_000_000;

/// Every piece of version-control metadata and cocode history in
/// `workspace` (canonical paths, sorted, none below another): each entry
/// named as one of [`PROTECTED`] at any depth (not looked into), the
/// in-workspace target of such an entry that is a symbolic link, and the
/// in-workspace folder a `.git` file names (`gitdir: …`). `None` when the
/// workspace cannot be read, holds more than [`METADATA_WALK_LIMIT`]
/// entries, or a piece of metadata is the workspace itself or holds it
/// (binding it read-only would leave nothing to write).
pub fn metadata_paths(workspace: &Path) -> Option<Vec<PathBuf>> {
    let root = dunce::canonicalize(workspace).ok()?;
    let mut found = std::collections::BTreeSet::new();
    let seen = std::sync::atomic::AtomicUsize::new(0);
    // Folder depth by folder depth, each depth's folders listed on every
    // core; a name gets a path only when it is a folder or metadata.
    let mut depth = vec![root.clone()];
    while !depth.is_empty() {
        let listings =
            cocode_platform::threads::parallel_map(&depth, |folder| metadata_in(folder, &seen));
        if seen.load(std::sync::atomic::Ordering::Relaxed) > METADATA_WALK_LIMIT {
            return None;
        }
        let mut deeper = Vec::new();
        for listing in listings {
            let (metadata, folders) = listing?;
            found.extend(metadata);
            deeper.extend(folders);
        }
        depth = deeper;
    }
    // Only what lies in the workspace is a command's to write at all.
    let inside: Vec<PathBuf> = found
        .into_iter()
        .filter(|p| p.starts_with(&root) || root.starts_with(p))
        .collect();
    if inside.iter().any(|p| root.starts_with(p)) {
        return None;
    }
    let mut out: Vec<PathBuf> = Vec::with_capacity(inside.len());
    for path in inside {
        if !out.iter().any(|kept| path.starts_with(kept)) {
            out.push(path);
        }
    }
    Some(out)
}

/// One folder of [`metadata_paths`]' walk: the metadata in it (a link's
/// in-workspace target, a `.git` file's folder) and its other folders;
/// `None` when it cannot be read.
fn metadata_in(
    folder: &Path,
    seen: &std::sync::atomic::AtomicUsize,
) -> Option<(Vec<PathBuf>, Vec<PathBuf>)> {
    let (mut found, mut folders) = (Vec::new(), Vec::new());
    let entries = std::fs::read_dir(folder).ok()?;
    let mut count = 0;
    for entry in entries {
        let entry = entry.ok()?;
        count += 1;
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        if !is_protected(&name.to_string_lossy()) {
            if kind.is_dir() {
                folders.push(folder.join(name));
            }
            continue;
        }
        let path = folder.join(name);
        if kind.is_symlink() {
            // Followed by git and by the kernel: its target inside the
            // workspace is what to keep read-only.
            if let Ok(real) = dunce::canonicalize(&path) {
                found.push(real);
            }
            continue;
        }
        if kind.is_file()
            && let Some(dir) = gitdir_of(&path)
        {
            found.push(dir);
        }
        found.push(path);
    }
    seen.fetch_add(count, std::sync::atomic::Ordering::Relaxed);
    Some((found, folders))
}

/// The folder a `.git` file names (`gitdir: <path>`, relative to the
/// file's folder), canonical; `None` when it names none that exists.
fn gitdir_of(file: &Path) -> Option<PathBuf> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::open(file)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    let named = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    dunce::canonicalize(file.parent()?.join(named)).ok()
}

/// What agent commands may write of a workspace: the paths granted, and
/// the paths inside them bound read-only in the launch's mount namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceWrites {
    pub writable: Vec<PathBuf>,
    pub read_only: Vec<PathBuf>,
}

/// The paths a confined child may write besides its private temp folder,
/// and those bound read-only: with `root_grant` (the launch gets a mount
/// namespace where read-only binds hold), the workspace root with its
/// metadata read-only; otherwise the granted top-level entries. The write
/// exceptions come after.
pub fn workspace_writes(roots: &WritableRoots, root_grant: bool) -> WorkspaceWrites {
    let mut out = WorkspaceWrites::default();
    if let Some(ws) = roots.workspace.as_deref() {
        let whole = root_grant
            .then(|| Some((dunce::canonicalize(ws).ok()?, metadata_paths(ws)?)))
            .flatten();
        match whole {
            Some((root, metadata)) => {
                out.writable.push(root);
                out.read_only = metadata;
            }
            None => out.writable = workspace_grants(ws).granted,
        }
    }
    out.writable.extend(roots.exceptions.iter().cloned());
    out
}

/// The macOS services (Mach names) an agent command may look up: user and
/// group lookups, preferences, certificate trust for TLS, power assertions
/// (Python's multiprocessing), per-user temp folders, logging and
/// notifications, launch services. Not the keychain (`SecurityServer`,
/// `securityd`), the pasteboard, the window server (screen capture) or
/// privacy consent (`tccd`): an unrestricted `mach-lookup` would reach them
/// with the person's rights.
pub const SEATBELT_SERVICES: [&str; 13] = [
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.cfprefsd.daemon",
    "com.apple.cfprefsd.agent",
    "com.apple.trustd",
    "com.apple.trustd.agent",
    "com.apple.PowerManagement.control",
    "com.apple.bsd.dirhelper",
    "com.apple.system.logger",
    "com.apple.logd",
    "com.apple.system.notification_center",
    "com.apple.coreservices.launchservicesd",
    "com.apple.lsd.mapdb",
];

/// The Seatbelt (`sandbox-exec`) profile of an agent child on macOS.
pub fn seatbelt_profile(writable: &[PathBuf], proxy_port: u16) -> String {
    let quote = |p: &Path| {
        let text = p.to_string_lossy();
        format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
    };
    let mut profile = String::from(
        "(version 1)\n(deny default)\n(allow process-exec)\n(allow process-fork)\n(allow signal (target same-sandbox))\n(allow process-info* (target same-sandbox))\n(allow sysctl-read)\n(allow user-preference-read)\n(allow ipc-posix-sem)\n(allow mach-lookup",
    );
    for service in SEATBELT_SERVICES {
        let _ = write!(profile, " (global-name \"{service}\")");
    }
    // Pseudo-terminals the command opens itself (an agent's shell); not the
    // person's terminals, which lack the sandbox's extension.
    profile.push_str(
        ")\n(allow file-read*)\n(allow file-write* (literal \"/dev/null\") (literal \"/dev/tty\"))\n(allow pseudo-tty)\n(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\"))\n(allow file-read* file-write* file-ioctl (require-all (regex #\"^/dev/ttys[0-9]+$\") (extension \"com.apple.sandbox.pty\")))\n",
    );
    for path in writable {
        let _ = writeln!(profile, "(allow file-write* (subpath {}))", quote(path));
    }
    let _ = write!(
        profile,
        "(allow network-outbound (remote tcp \"localhost:{proxy_port}\"))\n(deny network-bind)\n"
    );
    profile
}

#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::OwnedFd;
    use std::path::PathBuf;
    use std::sync::{Mutex, OnceLock};

    use cocode_core::process::{Confinement, LaunchError};
    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, Ruleset,
        RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
    };
    use rustix::fs::{FileType, Mode, OFlags};
    use seccompiler::BpfProgram;

    /// The ABI of the file and network rules; older kernels get the best
    /// effort, which [`available`] reports.
    const ABI_USED: ABI = ABI::V5;

    /// A ruleset and a filter built in the parent, enforced by the child
    /// after fork.
    pub(crate) struct Prepared {
        ruleset: Mutex<Option<RulesetCreated>>,
        /// A second descriptor of the same ruleset, for the rules only the
        /// child can add (its private pseudo-terminals).
        ruleset_fd: Option<OwnedFd>,
        filter: BpfProgram,
        /// The filter handing `connect` to cocode, and the child's end of
        /// the channel its listener goes through (see `broker`).
        broker: Option<(crate::broker::NotifyFilter, std::os::fd::RawFd)>,
    }

    /// `struct landlock_path_beneath_attr` (packed, as the kernel has it).
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }

    impl Prepared {
        /// Runs in the child between fork and exec: Landlock first (it sets
        /// `no_new_privs`, which the filter needs), then the filter. With
        /// `private_ptys` (the launch's mount namespace has a devpts
        /// instance of its own on `/dev/pts` and `/dev/ptmx`), the command
        /// may open and use pseudo-terminals there: only its own exist.
        pub(crate) fn restrict(&self, private_ptys: bool) -> std::io::Result<()> {
            let ruleset = self
                .ruleset
                .lock()
                .map_err(|_| std::io::Error::other("landlock ruleset lock"))?
                .take()
                .ok_or_else(|| std::io::Error::other("landlock ruleset already used"))?;
            if private_ptys && let Some(fd) = &self.ruleset_fd {
                use std::os::fd::AsRawFd as _;
                // The mount made them after the ruleset was built, so the
                // rules are added here, by raw calls (no allocation).
                grant_ptys(fd.as_raw_fd());
            }
            ruleset
                .restrict_self()
                .map(drop)
                .map_err(std::io::Error::other)?;
            seccompiler::apply_filter(&self.filter).map_err(std::io::Error::other)?;
            match &self.broker {
                Some((filter, channel)) => filter.hand_over(*channel),
                None => Ok(()),
            }
        }

        /// Hands this command's `connect` calls to cocode: the listener of
        /// the filter goes through `channel` (the child's end).
        pub(crate) fn with_broker(mut self, channel: std::os::fd::RawFd) -> Self {
            self.broker = Some((crate::broker::NotifyFilter::new(), channel));
            self
        }
    }

    /// Lets the command open, read, write and configure `/dev/ptmx` and
    /// the terminals below `/dev/pts`. Without the device-ioctl right
    /// (kernels before Landlock ABI 5 do not know it) the rule is added
    /// without it; a failure leaves the terminals refused.
    #[expect(
        unsafe_code,
        reason = "runs between fork and exec: open and landlock_add_rule on stack memory"
    )]
    fn grant_ptys(ruleset: std::os::fd::RawFd) {
        let with_ioctl = (AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev).bits();
        let without = (AccessFs::ReadFile | AccessFs::WriteFile).bits();
        for path in [c"/dev/pts", c"/dev/ptmx"] {
            // SAFETY: a NUL-terminated path, a packed struct on the stack
            // that outlives the call, descriptors this process owns.
            unsafe {
                let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
                if fd < 0 {
                    continue;
                }
                for access in [with_ioctl, without] {
                    let attr = PathBeneathAttr {
                        allowed_access: access,
                        parent_fd: fd,
                    };
                    let added = libc::syscall(
                        libc::SYS_landlock_add_rule,
                        ruleset,
                        1, // LANDLOCK_RULE_PATH_BENEATH
                        &raw const attr,
                        0,
                    );
                    if added == 0 {
                        break;
                    }
                }
                libc::close(fd);
            }
        }
    }

    fn sandbox_err(e: impl std::fmt::Display) -> LaunchError {
        LaunchError::Sandbox(format!("landlock: {e}"))
    }

    /// Opens `path` for a rule without following a final symbolic link;
    /// `None` for a link or a path that is gone (it is then not granted).
    fn rule_fd(path: &PathBuf) -> Option<(OwnedFd, bool)> {
        let fd = rustix::fs::open(
            path,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        let kind = FileType::from_raw_mode(rustix::fs::fstat(&fd).ok()?.st_mode);
        match kind {
            FileType::Symlink => None,
            FileType::Directory => Some((fd, true)),
            _ => Some((fd, false)),
        }
    }

    /// Builds the ruleset and the filter: read everywhere, write below
    /// `writable`, TCP connect only to `proxy_port`, no TCP bind, no
    /// abstract Unix sockets or signals out of the command, and only TCP
    /// and Unix sockets.
    pub(crate) fn prepare(writable: &[PathBuf], proxy_port: u16) -> Result<Prepared, LaunchError> {
        let mut rules = Vec::new();
        for path in writable {
            if let Some((fd, is_dir)) = rule_fd(path) {
                let access = if is_dir {
                    AccessFs::from_all(ABI_USED)
                } else {
                    AccessFs::from_file(ABI_USED)
                };
                rules.push(PathBeneath::new(fd, access));
            }
        }
        let ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(ABI_USED))
            .map_err(sandbox_err)?
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(sandbox_err)?
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(sandbox_err)?
            .create()
            .map_err(sandbox_err)?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(ABI_USED)))
            .map_err(sandbox_err)?
            .add_rules(path_beneath_rules(["/dev/null"], AccessFs::WriteFile))
            .map_err(sandbox_err)?
            .add_rules(rules.into_iter().map(Ok::<_, landlock::RulesetError>))
            .map_err(sandbox_err)?
            .add_rule(NetPort::new(proxy_port, AccessNet::ConnectTcp))
            .map_err(sandbox_err)?;
        let ruleset_fd = ruleset.try_clone().ok().and_then(Into::into);
        Ok(Prepared {
            ruleset: Mutex::new(Some(ruleset)),
            ruleset_fd,
            filter: socket_filter()?,
            broker: None,
        })
    }

    /// The seccomp filter of agent commands: `socket` only for TCP over
    /// IPv4/IPv6 and for Unix sockets, `socketpair` only for Unix pairs, no
    /// `io_uring` (its socket operation would pass the filter); every other
    /// call passes. Refusals answer `EPERM`, as container runtimes do. A
    /// process of another architecture (an i386 binary) is killed at its
    /// first call.
    pub(crate) fn socket_filter() -> Result<BpfProgram, LaunchError> {
        use seccompiler::{
            SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond,
            SeccompFilter, SeccompRule, TargetArch,
        };
        // The type argument carries SOCK_NONBLOCK / SOCK_CLOEXEC above the
        // low four bits.
        const TYPE_MASK: u64 = 0xf;
        let err = |e: seccompiler::BackendError| LaunchError::Sandbox(format!("seccomp: {e}"));
        let cond = |arg: u8, op: Op, value: u64| Cond::new(arg, Len::Dword, op, value).map_err(err);
        let rule = |conds: Vec<Cond>| SeccompRule::new(conds).map_err(err);
        let raw = |v: libc::c_int| u64::try_from(v).unwrap_or(u64::MAX);
        let (inet, inet6, unix) = (raw(libc::AF_INET), raw(libc::AF_INET6), raw(libc::AF_UNIX));
        let stream = raw(libc::SOCK_STREAM);
        // A rule matches a call to refuse: a family other than Unix, IPv4
        // and IPv6 (UDP's and TCP's families are told apart below).
        let mut socket = vec![rule(vec![
            cond(0, Op::Ne, unix)?,
            cond(0, Op::Ne, inet)?,
            cond(0, Op::Ne, inet6)?,
        ])?];
        for family in [inet, inet6] {
            // A protocol other than TCP (0 picks TCP for a stream).
            socket.push(rule(vec![
                cond(0, Op::Eq, family)?,
                cond(2, Op::Ne, 0)?,
                cond(2, Op::Ne, raw(libc::IPPROTO_TCP))?,
            ])?);
            // A type other than a stream (there is no masked not-equal:
            // every other value of the low bits is listed).
            for other in (0..=TYPE_MASK).filter(|t| *t != stream) {
                socket.push(rule(vec![
                    cond(0, Op::Eq, family)?,
                    cond(1, Op::MaskedEq(TYPE_MASK), other)?,
                ])?);
            }
        }
        // Unix datagram sockets: a datagram names its destination in each
        // `sendmsg`, past the connect broker.
        let dgram = raw(libc::SOCK_DGRAM);
        socket.push(rule(vec![
            cond(0, Op::Eq, unix)?,
            cond(1, Op::MaskedEq(TYPE_MASK), dgram)?,
        ])?);
        let socketpair = vec![
            rule(vec![cond(0, Op::Ne, unix)?])?,
            rule(vec![cond(1, Op::MaskedEq(TYPE_MASK), dgram)?])?,
        ];
        // TCP Fast Open connects inside `sendto`/`sendmsg`, where neither
        // Landlock's connect rule nor the broker looks.
        let fastopen = raw(libc::MSG_FASTOPEN);
        let fast = |arg: u8| -> Result<Vec<SeccompRule>, LaunchError> {
            Ok(vec![rule(vec![cond(
                arg,
                Op::MaskedEq(fastopen),
                fastopen,
            )?])?])
        };
        let mut calls = vec![
            (libc::SYS_socket, socket),
            (libc::SYS_socketpair, socketpair),
            (libc::SYS_sendto, fast(3)?),
            (libc::SYS_sendmsg, fast(2)?),
            (libc::SYS_sendmmsg, fast(3)?),
            (libc::SYS_io_uring_setup, Vec::new()),
        ];
        // No mounting: what the launch hid stays hidden even for a command
        // running as root where Landlock (which refuses mounts too) is
        // missing.
        for call in [
            libc::SYS_mount,
            libc::SYS_umount2,
            libc::SYS_pivot_root,
            libc::SYS_move_mount,
            libc::SYS_open_tree,
            libc::SYS_fsopen,
            libc::SYS_fsmount,
            libc::SYS_fsconfig,
            libc::SYS_fspick,
            libc::SYS_mount_setattr,
        ] {
            calls.push((call, Vec::new()));
        }
        // No hard links and no opening by handle: a write through a name
        // outside the workspace, or through a handle, changes a workspace
        // file without the sweep's watcher hearing of it. Tools that link
        // (cargo, git, pnpm) copy when linking fails, as across devices.
        calls.push((libc::SYS_linkat, Vec::new()));
        #[cfg(target_arch = "x86_64")]
        calls.push((libc::SYS_link, Vec::new()));
        calls.push((libc::SYS_open_by_handle_at, Vec::new()));
        // x86_64 kernels may also take the x32 numbering of the same calls.
        #[cfg(target_arch = "x86_64")]
        {
            const X32: libc::c_long = 0x4000_0000;
            let x32: Vec<_> = calls.iter().map(|(n, r)| (n | X32, r.clone())).collect();
            calls.extend(x32);
        }
        let arch: TargetArch = std::env::consts::ARCH.try_into().map_err(err)?;
        let filter = SeccompFilter::new(
            calls.into_iter().collect(),
            SeccompAction::Allow,
            SeccompAction::Errno(u32::try_from(libc::EPERM).unwrap_or(1)),
            arch,
        )
        .map_err(err)?;
        filter.try_into().map_err(err)
    }

    /// Measured once: restricts a throwaway thread (Landlock applies to the
    /// calling thread only) and reads what the kernel enforced.
    pub(crate) fn available() -> Confinement {
        static PROBE: OnceLock<Confinement> = OnceLock::new();
        PROBE
            .get_or_init(|| {
                let probe = std::thread::spawn(|| {
                    let status = Ruleset::default()
                        .handle_access(AccessFs::from_all(ABI_USED))
                        .and_then(|r| r.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp))
                        .and_then(Ruleset::create)
                        .and_then(RulesetCreated::restrict_self);
                    match status {
                        Ok(s) if s.ruleset == RulesetStatus::FullyEnforced => Confinement::Landlock,
                        Ok(s) if s.ruleset == RulesetStatus::PartiallyEnforced => Confinement::Unconfined {
                            reason: super::older_landlock_reason(abi_version()),
                        },
                        Ok(_) => Confinement::Unconfined {
                            reason: "Landlock is not enabled in this kernel; only the policy proxy limits network access".into(),
                        },
                        Err(e) => Confinement::Unconfined {
                            reason: format!("Landlock could not be set up: {e}"),
                        },
                    }
                });
                probe.join().unwrap_or(Confinement::Unconfined {
                    reason: "the Landlock probe failed".into(),
                })
            })
            .clone()
    }

    /// The Landlock ABI version this kernel offers, as it says.
    #[expect(unsafe_code, reason = "asks the kernel with a raw system call")]
    fn abi_version() -> Option<i64> {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_long = 1;
        // SAFETY: no attribute pointer, size 0, the version flag: the
        // kernel only returns a number.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        (v > 0).then_some(v)
    }

    /// Whether this kernel's Landlock keeps commands from abstract Unix
    /// sockets and from signalling processes outside them (ABI 6).
    pub(crate) fn scoping_available() -> bool {
        static PROBE: OnceLock<bool> = OnceLock::new();
        *PROBE.get_or_init(|| {
            std::thread::spawn(|| {
                Ruleset::default()
                    .set_compatibility(CompatLevel::HardRequirement)
                    .scope(Scope::AbstractUnixSocket | Scope::Signal)
                    .and_then(Ruleset::create)
                    .and_then(RulesetCreated::restrict_self)
                    .is_ok_and(|s| s.ruleset == RulesetStatus::FullyEnforced)
            })
            .join()
            .unwrap_or(false)
        })
    }

    /// Whether the kernel takes the socket filter (applied to a throwaway
    /// thread: seccomp filters, like Landlock, bind the calling thread).
    pub(crate) fn filter_available() -> bool {
        static PROBE: OnceLock<bool> = OnceLock::new();
        *PROBE.get_or_init(|| {
            std::thread::spawn(|| {
                socket_filter().is_ok_and(|f| seccompiler::apply_filter(&f).is_ok())
            })
            .join()
            .unwrap_or(false)
        })
    }
}

#[cfg(target_os = "linux")]
pub(crate) use linux::prepare;

/// Why agent commands are not confined on a kernel whose Landlock lacks
/// network rules (ABI below 4): no ruleset is applied there, so neither
/// writes nor connections are confined by the kernel — only the policy
/// proxy (and, where it exists, the network namespace) limits them.
pub fn older_landlock_reason(abi: Option<i64>) -> String {
    let abi = abi.map_or_else(|| "unknown".to_owned(), |v| v.to_string());
    format!(
        "writes are not confined on this kernel (Landlock ABI {abi}; cocode needs 4 or later); only the policy proxy limits where agent commands connect"
    )
}

/// The protections agent commands get on this machine beyond file and TCP
/// rules, each active or not (for `cocode doctor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "a list of independent facts about the machine, each read on its own"
)]
pub struct Protections {
    /// Only TCP and Unix sockets (seccomp).
    pub socket_filter: bool,
    /// No abstract Unix sockets, no signals out of the command (Landlock 6).
    pub scoping: bool,
    /// A PID namespace per agent launch, so nothing a command starts
    /// outlives it (see `reaper`).
    pub pid_namespace: bool,
    /// Every `connect` decided by cocode: Unix sockets only in folders the
    /// command may write, TCP only to the proxy (see `broker`).
    pub connect_broker: bool,
    /// Version-control metadata and cocode's history bound read-only in a
    /// mount namespace per launch, so the workspace root can be granted
    /// (new files at the root work); without it, top-level entries are
    /// granted one by one.
    pub metadata_mounts: bool,
    /// A procfs of the launch's own PID namespace on `/proc`: no process
    /// outside the command (cocode, its parent, other users') is visible.
    pub private_proc: bool,
}

/// What [`Protections`] this machine offers.
pub fn protections() -> Protections {
    #[cfg(target_os = "linux")]
    {
        Protections {
            socket_filter: linux::filter_available(),
            scoping: linux::scoping_available(),
            pid_namespace: crate::reaper::available(),
            connect_broker: linux::filter_available() && crate::broker::available(),
            metadata_mounts: crate::reaper::read_only_binds_available(),
            private_proc: crate::reaper::private_proc_available(),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Protections {
            socket_filter: false,
            scoping: false,
            pid_namespace: false,
            connect_broker: false,
            metadata_mounts: false,
            private_proc: false,
        }
    }
}

/// Starts measuring [`protections`] on a thread of its own, for a process
/// that will launch commands soon: each probe starts a shell in namespaces
/// of its own, which then overlaps the process's other start-up work (its
/// first launch waits for what is still being measured).
pub fn measure_in_background() {
    let started = std::thread::Builder::new()
        .name("cocode-probes".into())
        .spawn(|| {
            let _ = protections();
        });
    if let Err(e) = started {
        tracing::debug!("the protections are measured at the first launch instead: {e}");
    }
}

/// How agent children are confined on this machine.
pub fn available() -> Confinement {
    #[cfg(target_os = "linux")]
    {
        linux::available()
    }
    #[cfg(target_os = "macos")]
    {
        Confinement::Seatbelt
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Confinement::Unconfined {
            reason: "Windows offers no confinement cocode can apply; agent commands run with the person's rights, limited only by the policy proxy".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::collections::BTreeMap;

    #[test]
    fn seatbelt_profile_names_its_services_and_keeps_the_keychain_and_screen_out() {
        let profile = seatbelt_profile(&[PathBuf::from("/ws/src")], 1);
        assert!(!profile.contains("(allow mach-lookup)"), "{profile}");
        for kept_out in [
            "SecurityServer",
            "securityd",
            "pasteboard",
            "windowserver",
            "tccd",
        ] {
            assert!(
                !profile.to_lowercase().contains(&kept_out.to_lowercase()),
                "{kept_out}"
            );
        }
        // Balanced: sandbox-exec refuses the whole profile otherwise.
        let depth = profile.chars().try_fold(0i32, |d, c| {
            let d = d + i32::from(c == '(') - i32::from(c == ')');
            (d >= 0).then_some(d)
        });
        assert_eq!(depth, Some(0));
    }

    #[test]
    fn seatbelt_profile_denies_by_default_and_allows_only_the_listed_writes_and_the_proxy() {
        let profile = seatbelt_profile(
            &[
                PathBuf::from("/Users/me/ws/src"),
                PathBuf::from("/tmp/x \"q\""),
            ],
            4242,
        );
        assert_eq!(
            profile,
            "(version 1)\n(deny default)\n(allow process-exec)\n(allow process-fork)\n(allow signal (target same-sandbox))\n(allow process-info* (target same-sandbox))\n(allow sysctl-read)\n(allow user-preference-read)\n(allow ipc-posix-sem)\n(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\") (global-name \"com.apple.system.opendirectoryd.membership\") (global-name \"com.apple.cfprefsd.daemon\") (global-name \"com.apple.cfprefsd.agent\") (global-name \"com.apple.trustd\") (global-name \"com.apple.trustd.agent\") (global-name \"com.apple.PowerManagement.control\") (global-name \"com.apple.bsd.dirhelper\") (global-name \"com.apple.system.logger\") (global-name \"com.apple.logd\") (global-name \"com.apple.system.notification_center\") (global-name \"com.apple.coreservices.launchservicesd\") (global-name \"com.apple.lsd.mapdb\"))\n(allow file-read*)\n(allow file-write* (literal \"/dev/null\") (literal \"/dev/tty\"))\n(allow pseudo-tty)\n(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\"))\n(allow file-read* file-write* file-ioctl (require-all (regex #\"^/dev/ttys[0-9]+$\") (extension \"com.apple.sandbox.pty\")))\n(allow file-write* (subpath \"/Users/me/ws/src\"))\n(allow file-write* (subpath \"/tmp/x \\\"q\\\"\"))\n(allow network-outbound (remote tcp \"localhost:4242\"))\n(deny network-bind)\n"
        );
    }

    #[test]
    #[expect(clippy::disallowed_methods, reason = "builds a fixture workspace")]
    fn the_workspace_is_granted_entry_by_entry_without_history_metadata_or_links() {
        let dir = tempfile::tempdir().unwrap();
        #[cfg(unix)]
        let outside = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        for folder in [
            "src", ".cocode", ".COCODE", ".git", ".hg", ".svn", ".jj", ".bzr",
        ] {
            std::fs::create_dir(ws.join(folder)).unwrap();
        }
        std::fs::write(ws.join("Cargo.toml"), b"").unwrap();
        #[cfg(unix)]
        for (link, target) in [
            ("escape", outside.path().to_path_buf()),
            ("hist", PathBuf::from(".cocode")),
            ("hooks", ws.join(".git/hooks")),
            ("gone", PathBuf::from("no-such-thing")),
            ("code", PathBuf::from("src")),
        ] {
            std::os::unix::fs::symlink(&target, ws.join(link)).unwrap();
        }
        std::fs::create_dir(ws.join(".git/hooks")).unwrap();
        let grants = workspace_grants(&ws);
        assert_eq!(grants.granted, vec![ws.join("Cargo.toml"), ws.join("src")]);
        #[cfg(unix)]
        assert_eq!(
            grants.refused,
            vec![
                RefusedLink {
                    path: ws.join("escape"),
                    target: outside.path().to_path_buf(),
                    reason: RefusedWhy::Outside,
                },
                RefusedLink {
                    path: ws.join("gone"),
                    target: PathBuf::from("no-such-thing"),
                    reason: RefusedWhy::Dangling,
                },
                RefusedLink {
                    path: ws.join("hist"),
                    target: PathBuf::from(".cocode"),
                    reason: RefusedWhy::Protected,
                },
                RefusedLink {
                    path: ws.join("hooks"),
                    target: ws.join(".git/hooks"),
                    reason: RefusedWhy::Protected,
                },
            ]
        );
        let roots = WritableRoots {
            workspace: Some(ws.clone()),
            exceptions: vec![PathBuf::from("/home/me/.cargo/registry")],
        };
        assert_eq!(
            workspace_writes(&roots, false),
            WorkspaceWrites {
                writable: vec![
                    ws.join("Cargo.toml"),
                    ws.join("src"),
                    PathBuf::from("/home/me/.cargo/registry"),
                ],
                read_only: Vec::new(),
            }
        );
    }

    #[test]
    #[cfg(unix)]
    #[expect(clippy::disallowed_methods, reason = "builds a fixture workspace")]
    fn with_a_mount_namespace_the_root_is_granted_and_every_piece_of_metadata_is_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        for folder in [
            ".git/hooks",
            ".git/modules/sub",
            ".cocode/history",
            "src/.git",
            "vendor/lib/.hg",
            "sub",
            "elsewhere/realgit",
            "deep/a/b/c/.JJ",
        ] {
            std::fs::create_dir_all(ws.join(folder)).unwrap();
        }
        // A submodule's `.git` file, naming a folder inside the top one
        // (already covered), and a worktree naming one elsewhere in the
        // workspace; a `.git` link into the workspace and one out of it.
        std::fs::write(ws.join("sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        std::fs::create_dir_all(ws.join("wt")).unwrap();
        std::fs::write(ws.join("wt/.git"), "gitdir: ../elsewhere/realgit\n").unwrap();
        std::fs::create_dir_all(ws.join("linked")).unwrap();
        std::os::unix::fs::symlink("../elsewhere", ws.join("linked/.git")).unwrap();
        std::fs::create_dir_all(ws.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.join("out/.git")).unwrap();
        // Not metadata: looks like it.
        std::fs::write(ws.join(".gitignore"), "").unwrap();
        std::fs::create_dir_all(ws.join(".github")).unwrap();
        let roots = WritableRoots {
            workspace: Some(ws.clone()),
            exceptions: vec![PathBuf::from("/home/me/.cargo/registry")],
        };
        assert_eq!(
            workspace_writes(&roots, true),
            WorkspaceWrites {
                writable: vec![ws.clone(), PathBuf::from("/home/me/.cargo/registry")],
                read_only: vec![
                    ws.join(".cocode"),
                    ws.join(".git"),
                    ws.join("deep/a/b/c/.JJ"),
                    ws.join("elsewhere"),
                    ws.join("src/.git"),
                    ws.join("sub/.git"),
                    ws.join("vendor/lib/.hg"),
                    ws.join("wt/.git"),
                ],
            }
        );
        // A `.git` that is the workspace (or holds it) leaves the older way.
        std::os::unix::fs::symlink("..", ws.join("src/.hg")).unwrap();
        assert_eq!(metadata_paths(&ws), None);
        assert_eq!(
            workspace_writes(&roots, true).writable.first(),
            Some(&ws.join(".github"))
        );
    }

    #[test]
    fn the_persons_sockets_are_found_in_the_environment_and_the_usual_places() {
        let env: BTreeMap<String, String> = [
            ("XDG_RUNTIME_DIR", "/run/user/1000"),
            ("HOME", "/home/me"),
            ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
            (
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/run/user/1000/bus;unix:abstract=/tmp/dbus-1",
            ),
            ("DOCKER_HOST", "unix:///home/me/.colima/docker.sock"),
            ("DISPLAY", ":0"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let folder = |p: &str| Hidden::Folder(PathBuf::from(p));
        let file = |p: &str| Hidden::File(PathBuf::from(p));
        assert_eq!(
            hidden_sockets(&env, 1000),
            vec![
                folder("/home/me/.docker/run"),
                folder("/run/containerd"),
                folder("/run/dbus"),
                folder("/run/podman"),
                folder("/run/user/1000"),
                folder("/tmp/.ICE-unix"),
                folder("/tmp/.X11-unix"),
                folder("/var/run/dbus"),
                file("/home/me/.colima/docker.sock"),
                file("/run/docker.sock"),
                file("/run/user/1000/bus"),
                file("/tmp/ssh-x/agent.1"),
                file("/var/run/docker.sock"),
            ]
        );
    }

    #[test]
    fn an_older_landlock_is_said_to_confine_nothing() {
        assert_eq!(
            older_landlock_reason(Some(3)),
            "writes are not confined on this kernel (Landlock ABI 3; cocode needs 4 or later); only the policy proxy limits where agent commands connect"
        );
        assert!(older_landlock_reason(None).contains("Landlock ABI unknown;"));
    }

    #[test]
    fn protected_names_are_matched_without_case() {
        for name in [".cocode", ".Git", ".HG", ".svn", ".jj", ".bzr"] {
            assert!(is_protected(name), "{name}");
        }
        for name in [".github", ".gitignore", "git", ".cocoder", "src"] {
            assert!(!is_protected(name), "{name}");
        }
    }
}
