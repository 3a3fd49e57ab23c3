//! Edit leases: containment conflicts, strict FIFO among conflicting
//! requests, independent requests proceed, release on every exit, session
//! close and restart; a randomized stress run ends without deadlock and
//! never lets two conflicting leases coexist.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cocode_core::gate::{EditLockRegistry, GateOp, LeaseError, WorkspaceFileGate, with_leases};
use cocode_core::path::NormalizedPath;
use cocode_workspace::{LeaseRegistry, LeaseWait};
use pretty_assertions::assert_eq;

use super::common::*;

fn paths(v: &[&str]) -> Vec<NormalizedPath> {
    v.iter().map(|s| p(s)).collect()
}

fn wait(task: &str, path: &str, holder: &str) -> LeaseWait {
    LeaseWait {
        task: ctx(task, 0).task_id,
        path: p(path),
        holder: ctx(holder, 0).task_id,
    }
}

/// Starts an acquisition on its own task; its receiver fires when granted.
fn spawn_acquire(
    registry: &Arc<LeaseRegistry>,
    task: &str,
    ps: &[&str],
    log: &Arc<Mutex<Vec<String>>>,
    hold: tokio::sync::oneshot::Receiver<()>,
) -> tokio::task::JoinHandle<Result<(), LeaseError>> {
    let registry = Arc::clone(registry);
    let log = Arc::clone(log);
    let ps = paths(ps);
    let c = ctx(task, 0);
    let name = task.to_owned();
    tokio::spawn(async move {
        let guard = registry.acquire(&ps, &c).await?;
        log.lock().unwrap().push(name);
        let _ = hold.await;
        drop(guard);
        Ok(())
    })
}

/// Waits until `done` holds, checking after every short pause; a state
/// that never comes fails the test after ten seconds (a deadline, not a
/// timing the test depends on).
async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..10_000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("never reached: {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicting_requests_are_served_in_arrival_order_and_independent_ones_proceed() {
    let registry = Arc::new(LeaseRegistry::in_memory());
    let log = Arc::new(Mutex::new(Vec::new()));
    let (release_h, hold_h) = tokio::sync::oneshot::channel();
    let h = spawn_acquire(&registry, "holder", &["d"], &log, hold_h);
    let granted = |n: usize| {
        let log = Arc::clone(&log);
        move || log.lock().unwrap().len() == n
    };
    until("the holder's lease", granted(1)).await;
    // w1 wants a file below the held folder; w2 wants the same file and
    // another one; w3 is independent.
    let (release_1, hold_1) = tokio::sync::oneshot::channel();
    let w1 = spawn_acquire(&registry, "w1", &["d/x.txt"], &log, hold_1);
    until("w1 waiting", || registry.waiting() == 1).await;
    let (release_2, hold_2) = tokio::sync::oneshot::channel();
    let w2 = spawn_acquire(&registry, "w2", &["e.txt", "d/x.txt"], &log, hold_2);
    until("w2 waiting", || registry.waiting() == 2).await;
    assert_eq!(
        registry.waits(),
        vec![
            wait("w1", "d/x.txt", "holder"),
            wait("w2", "d/x.txt", "holder")
        ]
    );
    // e.txt is free, but w2 may not overtake w1 and holds nothing while waiting.
    let (release_3, hold_3) = tokio::sync::oneshot::channel();
    let w3 = spawn_acquire(&registry, "w3", &["f.txt"], &log, hold_3);
    until("w3's lease", granted(2)).await;
    assert_eq!(*log.lock().unwrap(), vec!["holder", "w3"]);
    assert_eq!(registry.waiting(), 2);
    release_h.send(()).unwrap();
    until("w1's lease", granted(3)).await;
    assert_eq!(*log.lock().unwrap(), vec!["holder", "w3", "w1"]);
    assert_eq!(registry.waiting(), 1, "w2 still waits behind w1");
    assert_eq!(registry.waits(), vec![wait("w2", "d/x.txt", "w1")]);
    release_1.send(()).unwrap();
    until("w2's lease", granted(4)).await;
    assert_eq!(*log.lock().unwrap(), vec!["holder", "w3", "w1", "w2"]);
    release_2.send(()).unwrap();
    release_3.send(()).unwrap();
    for t in [h, w1, w2, w3] {
        t.await.unwrap().unwrap();
    }
    assert_eq!(registry.leases(), vec![]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_delete_blocks_a_concurrent_write_below_it() {
    let (_d, ws) = workspace(&[("d/a.txt", "A")]);
    let ws = Arc::new(ws);
    let registry = Arc::new(LeaseRegistry::open(ws.gate.store().clone()));
    let dir_ctx = ctx("deleter", 0);
    let guard = registry.acquire(&paths(&["d"]), &dir_ctx).await.unwrap();
    let writer = {
        let (registry, ws) = (Arc::clone(&registry), Arc::clone(&ws));
        tokio::spawn(async move {
            let c = ctx("writer", 0);
            let op = write("d/a.txt", b"B");
            let touched: Vec<NormalizedPath> = op.touched_paths().into_iter().cloned().collect();
            with_leases(registry.as_ref(), &touched, &c, async {
                ws.gate.apply(&c, op)
            })
            .await
        })
    };
    until("the writer waiting", || registry.waiting() == 1).await;
    assert!(!writer.is_finished());
    assert_eq!(
        registry
            .leases()
            .iter()
            .map(|(p, l)| (p.to_string(), l.task_id.to_string()))
            .collect::<Vec<_>>(),
        vec![("d".to_owned(), "deleter".to_owned())]
    );
    // The delete runs under its lease; then the writer gets its turn and
    // creates the file anew.
    ws.gate
        .apply(&dir_ctx, GateOp::Delete { path: p("d") })
        .unwrap();
    drop(guard);
    let outcome = tokio::time::timeout(Duration::from_secs(5), writer)
        .await
        .unwrap()
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        summary(&applied(outcome)),
        vec![("create".to_owned(), "d/a.txt".to_owned(), "gate".to_owned())]
    );
    assert_eq!(registry.leases(), vec![]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_are_released_on_refusal_session_close_and_restart() {
    let (_d, ws) = workspace(&[]);
    let registry = LeaseRegistry::open(ws.gate.store().clone());
    let c = ctx("t1", 0);
    // A refused operation releases its lease on return.
    let refused = with_leases(&registry, &paths(&["missing.txt"]), &c, async {
        ws.gate.apply(&c, delete("missing.txt"))
    })
    .await
    .unwrap();
    assert!(refused.is_err());
    assert_eq!(registry.leases(), vec![]);
    // A held lease and a waiter of the same session vanish when it closes.
    let guard = registry.acquire(&paths(&["a.txt"]), &c).await.unwrap();
    let lock_file = ws.layout.edit_locks_file();
    let recorded: cocode_workspace::leases::EditLocksFile =
        serde_json::from_slice(&std::fs::read(&lock_file).unwrap()).unwrap();
    assert_eq!(
        recorded
            .leases
            .iter()
            .map(|l| l.path.to_string())
            .collect::<Vec<_>>(),
        vec!["a.txt"]
    );
    let registry = Arc::new(registry);
    let waiter = {
        let registry = Arc::clone(&registry);
        let c = c.clone();
        tokio::spawn(async move { registry.acquire(&paths(&["a.txt"]), &c).await.map(drop) })
    };
    until("the waiter queued", || registry.waiting() == 1).await;
    registry.release_session(&c.session_id);
    assert_eq!(waiter.await.unwrap(), Err(LeaseError::Cancelled));
    assert_eq!(registry.leases(), vec![]);
    drop(guard);
    // A lease left in the file by a crashed run is gone after restart.
    let stale = cocode_workspace::leases::EditLocksFile {
        version: 1,
        leases: recorded.leases,
    };
    std::fs::write(&lock_file, serde_json::to_vec(&stale).unwrap()).unwrap();
    let restarted = LeaseRegistry::open(ws.gate.store().clone());
    assert!(restarted.startup_sweep_completed());
    assert_eq!(restarted.leases(), vec![]);
    let on_disk: cocode_workspace::leases::EditLocksFile =
        serde_json::from_slice(&std::fs::read(&lock_file).unwrap()).unwrap();
    assert_eq!(on_disk.leases, vec![]);
}

// The waiter's timeout is the subject: a paused clock fires it exactly.
#[tokio::test(start_paused = true)]
async fn a_task_reaching_a_terminal_state_releases_its_leases_and_a_dropped_wait_withdraws() {
    let registry = Arc::new(LeaseRegistry::in_memory());
    let held = registry
        .acquire(&paths(&["a"]), &ctx("t1", 0))
        .await
        .unwrap();
    // A waiter that gives up (its future is dropped) leaves the queue.
    let gave_up = tokio::time::timeout(
        Duration::from_millis(50),
        registry.acquire(&paths(&["a"]), &ctx("t2", 0)),
    )
    .await;
    assert!(gave_up.is_err());
    assert_eq!(registry.waiting(), 0);
    registry.release_task(&ctx("t1", 0).task_id);
    assert_eq!(registry.leases(), vec![]);
    let next = tokio::time::timeout(
        Duration::from_secs(5),
        registry.acquire(&paths(&["a"]), &ctx("t3", 0)),
    )
    .await;
    assert!(next.unwrap().is_ok());
    drop(held);
}

/// (worker, the paths it holds right now)
type Holding = (usize, Vec<NormalizedPath>);

/// xorshift64*: a fixed seed keeps failures reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn randomized_overlapping_acquisitions_finish_without_deadlock_or_overlap() {
    const UNIVERSE: [&str; 8] = ["a", "a/x", "a/y", "b", "b/z", "c", "c/d/e", "c/d"];
    let registry = Arc::new(LeaseRegistry::in_memory());
    let inside: Arc<Mutex<Vec<Holding>>> = Arc::default();
    let violations = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for worker in 0..12 {
        let (registry, inside, violations) = (
            Arc::clone(&registry),
            Arc::clone(&inside),
            Arc::clone(&violations),
        );
        tasks.push(tokio::spawn(async move {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (worker as u64 + 1));
            for round in 0..40 {
                let n = 1 + (rng.next() % 3) as usize;
                let set: Vec<NormalizedPath> = (0..n)
                    .map(|_| p(UNIVERSE[(rng.next() % 8) as usize]))
                    .collect();
                let c = ctx(&format!("w{worker}"), 0);
                let guard = registry.acquire(&set, &c).await.unwrap();
                {
                    let mut held = inside.lock().unwrap();
                    for (other, theirs) in held.iter() {
                        if set
                            .iter()
                            .any(|x| theirs.iter().any(|y| x.contains(y) || y.contains(x)))
                        {
                            violations
                                .lock()
                                .unwrap()
                                .push(format!("w{worker} round {round} overlaps w{other}"));
                        }
                    }
                    held.push((worker, set.clone()));
                }
                tokio::task::yield_now().await;
                inside.lock().unwrap().retain(|(w, _)| *w != worker);
                drop(guard);
            }
        }));
    }
    let all = async {
        for t in tasks {
            t.await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(30), all)
        .await
        .expect("no deadlock: every worker finished");
    assert_eq!(*violations.lock().unwrap(), Vec::<String>::new());
    assert_eq!(registry.leases(), vec![]);
}
