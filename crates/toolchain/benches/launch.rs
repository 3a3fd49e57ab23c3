//! What a confined agent command's launch costs with the workspace root
//! granted and the metadata bound read-only (a walk of the workspace for
//! every `.git` and `.cocode`, a mount namespace with one read-only bind
//! each) against the launch without them (each top-level entry granted, no
//! binds), in the same run: `confined_launch_true` launches `true` in a
//! workspace of 2,000 files with a repository at the top and a vendored one
//! below, and waits for it. Each launch of ours is followed by one of the
//! peer (`benches/support/paired.rs`). Linux only; elsewhere the bench has
//! nothing to compare.
#![expect(clippy::unwrap_used, reason = "bench setup")]
#![expect(
    clippy::disallowed_methods,
    reason = "the bench lays out its workspace with std::fs"
)]

use criterion::{Criterion, criterion_group, criterion_main};

#[cfg(target_os = "linux")]
#[path = "../../../benches/support/paired.rs"]
mod paired;

/// A workspace of 2,000 files with a repository at the top, a vendored one
/// below and cocode's history.
#[cfg(target_os = "linux")]
fn lay_out(ws: &std::path::Path) {
    for (dir, files) in [
        ("src", 1000),
        ("tests", 500),
        ("docs", 300),
        ("vendor/dep/src", 200),
    ] {
        for n in 0..files {
            let path = ws.join(dir).join(format!("{}/f{n}.rs", n % 20));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "fn main() {}\n").unwrap();
        }
    }
    for git in [".git", "vendor/dep/.git"] {
        for n in 0..50 {
            let path = ws.join(git).join(format!("objects/{:02x}/obj{n}", n % 16));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        std::fs::write(ws.join(git).join("config"), "[core]\n").unwrap();
    }
    std::fs::create_dir_all(ws.join(".cocode/history")).unwrap();
}

#[cfg(target_os = "linux")]
fn bench(c: &mut Criterion) {
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::sync::Arc;
    use std::time::Duration;

    use cocode_core::ids::TaskId;
    use cocode_core::process::{
        ExitStatus, LaunchIo, LaunchSpec, ProcessLauncher as _, SandboxProfile,
    };
    use cocode_toolchain::{HostPolicy, Launcher, PolicyProxy, WritableRoots};
    use paired::Paired;

    let protections = cocode_toolchain::confine::protections();
    if !protections.metadata_mounts {
        eprintln!("confined_launch_true: skipped: no mount namespaces on this machine");
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let base = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = base.path().join("ws");
    lay_out(&ws);
    let proxy = rt.block_on(async {
        Arc::new(
            PolicyProxy::start(HostPolicy::new(Vec::new()))
                .await
                .unwrap(),
        )
    });
    let launcher = |root_grant: bool| {
        let _guard = rt.enter();
        let inherited: BTreeMap<String, String> =
            [("PATH".to_owned(), std::env::var("PATH").unwrap_or_default())].into();
        Launcher::new(
            rt.handle().clone(),
            Some(Arc::clone(&proxy)),
            WritableRoots {
                workspace: Some(ws.clone()),
                exceptions: Vec::new(),
            },
        )
        .with_inherited_env(inherited)
        .with_root_grant(root_grant)
    };
    let (ours, peer) = (launcher(true), launcher(false));
    let spec = |dir: &Path| LaunchSpec {
        argv: vec!["true".to_owned()],
        cwd: dir.to_path_buf(),
        env_overrides: BTreeMap::new(),
        profile: SandboxProfile::Agent {
            task_id: TaskId::new("task-bench").unwrap(),
        },
        io: LaunchIo::Piped,
        timeout: Some(Duration::from_secs(30)),
        output_byte_limit: None,
        extra_writable: Vec::new(),
        secret_env: BTreeMap::new(),
        extra_hosts: Vec::new(),
    };
    let once = |l: &Launcher| {
        let started = std::time::Instant::now();
        rt.block_on(async {
            let mut handle = l.launch(spec(&ws)).unwrap();
            while handle.read_output().await.is_some() {}
            assert_eq!(handle.wait().await.unwrap(), ExitStatus::Code(0));
        });
        started.elapsed()
    };
    let mut group = c.benchmark_group("confined_launch_true");
    group
        .sample_size(20)
        .sampling_mode(criterion::SamplingMode::Flat)
        .measurement_time(Duration::from_secs(10));
    let paired = Paired::default();
    for (side, want_ours) in [("ours", true), ("peer", false)] {
        group.bench_function(side, |b| {
            b.iter_custom(|iters| {
                paired.alternate(iters, || once(&ours), || once(&peer), want_ours)
            });
        });
    }
    group.finish();
    paired.write("confined_launch_true");
}

#[cfg(not(target_os = "linux"))]
fn bench(_: &mut Criterion) {}

criterion_group!(benches, bench);
criterion_main!(benches);
