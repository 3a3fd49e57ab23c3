//! The service's lease watch, against a real lease registry.

use std::sync::Arc;
use std::time::Duration;

use cocode_core::TaskId;
use cocode_core::gate::{EditLockRegistry as _, TaskContext};
use cocode_core::ids::{AttemptNo, SessionId};
use cocode_core::path::NormalizedPath;
use cocode_workspace::LeaseRegistry;
use tokio_util::sync::CancellationToken;

use super::{RunEvent, ServiceEvent, watch_leases};
use crate::window::link::{Waker, link};

fn ctx(task: &str) -> TaskContext {
    TaskContext {
        task_id: TaskId::new(task).unwrap(),
        session_id: SessionId::new(format!("{task}-s0")).unwrap(),
        attempt_no: AttemptNo(0),
    }
}

/// Drains the link until `wanted` arrives (ten seconds at most).
async fn until_event(
    ui: &mut crate::window::link::UiEnd<super::ServiceRequest, ServiceEvent>,
    wanted: &ServiceEvent,
) {
    for _ in 0..1_000 {
        if ui.drain().iter().any(|e| e == wanted) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never reported: {wanted:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_waiting_for_another_tasks_lease_is_told_whom_it_waits_for_and_when_it_no_longer_waits()
 {
    let leases = Arc::new(LeaseRegistry::in_memory());
    let path = NormalizedPath::try_from("src/a.txt".to_owned()).unwrap();
    let holder = leases
        .acquire(std::slice::from_ref(&path), &ctx("task-holder"))
        .await
        .unwrap();
    let waiting = Arc::clone(&leases);
    let asked = path.clone();
    let waiter = tokio::spawn(async move {
        waiting
            .acquire(&[asked], &ctx("task-waiter"))
            .await
            .map(drop)
    });
    let (mut ui, worker) = link::<super::ServiceRequest, ServiceEvent>(Waker::new(|| {}));
    let done = CancellationToken::new();
    let watch = tokio::spawn(watch_leases(
        Arc::clone(&leases),
        7,
        TaskId::new("task-waiter").unwrap(),
        worker.events,
        done.clone(),
    ));
    let told = |wait: Option<&str>| ServiceEvent::Run {
        conv: 7,
        event: RunEvent::LeaseWait(wait.map(str::to_owned)),
    };
    until_event(
        &mut ui,
        &told(Some("waiting for task task-holder's lease on src/a.txt")),
    )
    .await;
    drop(holder);
    waiter.await.unwrap().unwrap();
    until_event(&mut ui, &told(None)).await;
    done.cancel();
    watch.await.unwrap();
}
