use std::sync::atomic::{AtomicUsize, Ordering};

use pretty_assertions::assert_eq;

use super::*;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Text(String),
    Other(u32),
}

impl Coalesce for Ev {
    fn merge(&mut self, next: Self) -> Option<Self> {
        match (self, next) {
            (Self::Text(text), Self::Text(more)) => {
                text.push_str(&more);
                None
            }
            (_, next) => Some(next),
        }
    }
}

fn counting() -> (Waker, Arc<AtomicUsize>) {
    let wakes = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&wakes);
    (
        Waker::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        }),
        wakes,
    )
}

#[test]
fn requests_beyond_the_room_wait_in_order_and_none_is_lost() {
    let (waker, _) = counting();
    let (mut ui, mut worker) = link::<usize, Ev>(waker);
    for n in 0..LINK_CAPACITY + 10 {
        ui.send(n);
    }
    assert_eq!(ui.waiting(), 10);
    let mut got = Vec::new();
    for _ in 0..20 {
        got.push(worker.requests.try_recv().unwrap());
    }
    assert!(ui.drain().is_empty());
    assert_eq!(ui.waiting(), 0, "the waiting requests were handed over");
    while let Ok(n) = worker.requests.try_recv() {
        got.push(n);
    }
    assert_eq!(got, (0..LINK_CAPACITY + 10).collect::<Vec<_>>());
}

#[test]
fn a_frame_drains_everything_and_merges_streamed_text() {
    let (waker, woken) = counting();
    let (mut ui, worker) = link::<(), Ev>(waker);
    for event in [
        Ev::Text("I will ".into()),
        Ev::Text("edit ".into()),
        Ev::Text("it.".into()),
        Ev::Other(1),
        Ev::Text("done".into()),
    ] {
        assert!(worker.events.blocking_send(event));
    }
    assert_eq!(woken.load(Ordering::SeqCst), 5, "one wake per event");
    assert_eq!(
        ui.drain(),
        vec![
            Ev::Text("I will edit it.".into()),
            Ev::Other(1),
            Ev::Text("done".into())
        ]
    );
    assert_eq!(ui.drain(), vec![], "nothing arrives twice");
}

#[test]
fn a_worker_waits_for_room_and_every_event_arrives_in_order() {
    let (waker, _) = counting();
    let (mut ui, worker) = link::<(), Ev>(waker);
    let total = u32::try_from(LINK_CAPACITY * 3).unwrap();
    let sender = std::thread::spawn(move || {
        for n in 0..total {
            assert!(worker.events.blocking_send(Ev::Other(n)));
        }
    });
    let mut got = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while got.len() < LINK_CAPACITY * 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "{} arrived",
            got.len()
        );
        got.extend(ui.drain());
        std::thread::yield_now();
    }
    sender.join().unwrap();
    assert_eq!(got, (0..total).map(Ev::Other).collect::<Vec<_>>());
}
