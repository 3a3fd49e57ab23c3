//! The byte pump of an allowed CONNECT tunnel.
//!
//! Once the proxy has judged a tunnel it only moves bytes between the two
//! sockets. That runs on two plain threads per tunnel (one per direction,
//! kept a while for the next tunnel) with blocking sockets: measured on
//! loopback, this moves a bulk transfer about a fifth faster than the same
//! copy driven by the async runtime, whose wake-ups sit between every read
//! and write. Linux `splice(2)`
//! (socket → pipe → socket) was measured as well and was slower than this
//! copy on loopback, so it is not used.

use std::io::{self, Read as _, Write as _};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The buffer per direction, at most.
pub(crate) const COPY_BUF: usize = 256 * 1024;

/// The buffer per direction at first.
const FIRST_BUF: usize = 16 * 1024;

/// Open tunnels at most (two threads and two buffers each); a CONNECT
/// beyond it is refused with 503 until one closes.
pub const MAX_TUNNELS: usize = 256;

/// A tunnel with no byte in either direction for this long is closed (a
/// command that left a connection open must not hold two threads forever).
pub const TUNNEL_IDLE: Duration = Duration::from_mins(5);

/// How often an idle direction looks at the other direction's activity.
const IDLE_CHECK: Duration = Duration::from_secs(5);

/// Counts open tunnels against a cap.
#[derive(Debug)]
pub(crate) struct TunnelCount {
    open: AtomicUsize,
    max: usize,
}

impl TunnelCount {
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            open: AtomicUsize::new(0),
            max,
        })
    }

    /// A slot for one more tunnel; `None` at the cap.
    pub(crate) fn take(self: &Arc<Self>) -> Option<Slot> {
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()?;
        Some(Slot(Arc::clone(self)))
    }

    #[cfg(test)]
    pub(crate) fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }
}

/// One tunnel's place under the cap, given back when both directions end.
#[derive(Debug)]
pub(crate) struct Slot(Arc<TunnelCount>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What both directions of a tunnel share: its slot and its last activity.
struct Tunnel {
    _slot: Slot,
    started: Instant,
    /// Milliseconds since `started` of the last byte either way.
    last: AtomicU64,
    idle: Duration,
}

impl Tunnel {
    fn touch(&self) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(now, Ordering::Relaxed);
    }

    fn idle_for(&self) -> Duration {
        let now = self.started.elapsed();
        now.saturating_sub(Duration::from_millis(self.last.load(Ordering::Relaxed)))
    }
}

/// Moves bytes both ways until both sides have finished sending (each
/// side's end of stream is passed on as a half-close), one fails, or
/// neither sends for `idle` — each of which closes both. Returns at once;
/// the threads end with the tunnel, and then `slot` is given back.
pub(crate) fn pump(
    client: tokio::net::TcpStream,
    server: tokio::net::TcpStream,
    slot: Slot,
    idle: Duration,
) -> io::Result<()> {
    let client = blocking(client)?;
    let server = blocking(server)?;
    let check = IDLE_CHECK.min(idle);
    client.set_read_timeout(Some(check))?;
    server.set_read_timeout(Some(check))?;
    let tunnel = Arc::new(Tunnel {
        _slot: slot,
        started: Instant::now(),
        last: AtomicU64::new(0),
        idle,
    });
    let up = (
        client.try_clone()?,
        server.try_clone()?,
        Arc::clone(&tunnel),
    );
    PUMPS.run(Box::new(move || one_way(up.0, up.1, &up.2)))?;
    PUMPS.run(Box::new(move || one_way(server, client, &tunnel)))?;
    Ok(())
}

/// A pump thread: a copy loop needs little stack (the buffer is on the heap,
/// and its pages are only touched as far as reads fill them), so a package
/// manager's dozens of parallel downloads stay cheap.
fn thread() -> std::thread::Builder {
    std::thread::Builder::new()
        .name("cocode-tunnel".into())
        .stack_size(64 * 1024)
}

/// The pump threads of every tunnel of the process.
static PUMPS: Pumps = Pumps::new(PUMPS_IDLE, PUMPS_KEEP);

/// Pump threads kept waiting for a next tunnel, at most.
const PUMPS_IDLE: usize = 64;

/// How long a pump thread waits for a next tunnel before it ends.
const PUMPS_KEEP: Duration = Duration::from_secs(30);

type Job = Box<dyn FnOnce() + Send>;

/// Threads that run one direction of a tunnel each and then wait a while
/// for the next one: starting a thread (its stack mapped and guarded, then
/// unmapped when it ends) sits between a tunnel's `200` and its first
/// byte, and a package manager opens hundreds of short tunnels.
struct Pumps {
    /// Waiting threads, each by a number and the way to hand it a job.
    idle: std::sync::Mutex<Vec<(u64, std::sync::mpsc::SyncSender<Job>)>>,
    next_id: AtomicU64,
    max_idle: usize,
    keep: Duration,
}

impl Pumps {
    const fn new(max_idle: usize, keep: Duration) -> Self {
        Self {
            idle: std::sync::Mutex::new(Vec::new()),
            next_id: AtomicU64::new(0),
            max_idle,
            keep,
        }
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Vec<(u64, std::sync::mpsc::SyncSender<Job>)>> {
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `job` on a waiting thread, or on a new one when none waits.
    fn run(&'static self, job: Job) -> io::Result<()> {
        let waiting = self.waiting().pop();
        let job = match waiting {
            // A thread leaves the list before it ends, so it takes the job.
            Some((_, hand)) => match hand.send(job) {
                Ok(()) => return Ok(()),
                Err(std::sync::mpsc::SendError(job)) => job,
            },
            None => job,
        };
        thread().spawn(move || self.work(job)).map(drop)
    }

    /// Runs jobs until none comes for [`Self::keep`] (or enough threads
    /// already wait).
    fn work(&self, mut job: Job) {
        use std::sync::mpsc::RecvTimeoutError;
        loop {
            job();
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let (hand, take) = std::sync::mpsc::sync_channel(1);
            {
                let mut waiting = self.waiting();
                if waiting.len() >= self.max_idle {
                    return;
                }
                waiting.push((id, hand));
            }
            job = match take.recv_timeout(self.keep) {
                Ok(next) => next,
                Err(RecvTimeoutError::Timeout) => {
                    let mut waiting = self.waiting();
                    if let Some(at) = waiting.iter().position(|(i, _)| *i == id) {
                        waiting.remove(at);
                        return;
                    }
                    // Taken off the list just now: its job is on the way.
                    drop(waiting);
                    match take.recv() {
                        Ok(next) => next,
                        Err(_) => return,
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return,
            };
        }
    }
}

fn blocking(stream: tokio::net::TcpStream) -> io::Result<TcpStream> {
    let stream = stream.into_std()?;
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// `src` → `dst` until `src` ends (then `dst` is half-closed), either
/// fails, or the tunnel has been idle too long (then both are closed, which
/// also ends the other direction).
fn one_way(mut src: TcpStream, mut dst: TcpStream, tunnel: &Tunnel) {
    // Small first (most tunnels are short: a request and its answer, and a
    // small buffer needs no mapping of its own), grown while reads fill it.
    let mut buf = vec![0u8; FIRST_BUF];
    loop {
        match src.read(&mut buf) {
            Ok(0) => {
                let _ = dst.shutdown(Shutdown::Write);
                return;
            }
            Ok(n) => {
                tunnel.touch();
                if n == buf.len() && buf.len() < COPY_BUF {
                    buf.resize((buf.len() * 4).min(COPY_BUF), 0);
                }
                if dst.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // The read timeout: only a tunnel idle both ways is closed.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if tunnel.idle_for() >= tunnel.idle {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    let _ = src.shutdown(Shutdown::Both);
    let _ = dst.shutdown(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpListener;

    /// Two connected loopback sockets.
    async fn socket_pair() -> (tokio::net::TcpStream, tokio::net::TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let near = tokio::net::TcpStream::connect(listener.local_addr().unwrap());
        let (near, far) = tokio::join!(near, listener.accept());
        (near.unwrap(), far.unwrap().0)
    }

    /// The thread a job ran on.
    fn ran_on(pumps: &'static Pumps) -> std::thread::ThreadId {
        let (tell, told) = std::sync::mpsc::channel();
        pumps
            .run(Box::new(move || {
                tell.send(std::thread::current().id()).unwrap();
            }))
            .unwrap();
        told.recv_timeout(Duration::from_secs(10)).unwrap()
    }

    /// Waits until `n` threads wait for a job.
    fn until_waiting(pumps: &Pumps, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while pumps.waiting().len() != n {
            assert!(
                Instant::now() < deadline,
                "{} threads wait, not {n}",
                pumps.waiting().len()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_pump_thread_runs_the_next_job_and_ends_when_none_comes() {
        static PUMPS: Pumps = Pumps::new(1, Duration::from_millis(300));
        let first = ran_on(&PUMPS);
        until_waiting(&PUMPS, 1);
        assert_eq!(ran_on(&PUMPS), first);
        // No job for longer than it keeps: the thread leaves the list and
        // ends, and the next job gets a new one.
        until_waiting(&PUMPS, 1);
        std::thread::sleep(Duration::from_millis(400));
        until_waiting(&PUMPS, 0);
        assert_ne!(ran_on(&PUMPS), first);
    }

    #[test]
    fn two_jobs_at_once_get_two_threads_and_only_the_cap_waits() {
        static PUMPS: Pumps = Pumps::new(1, Duration::from_secs(30));
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let wait = Arc::new(std::sync::Mutex::new(wait));
        let (tell, told) = std::sync::mpsc::channel();
        for _ in 0..2 {
            let (wait, tell) = (Arc::clone(&wait), tell.clone());
            PUMPS
                .run(Box::new(move || {
                    tell.send(std::thread::current().id()).unwrap();
                    let _ = wait.lock().unwrap().recv();
                }))
                .unwrap();
        }
        let a = told.recv_timeout(Duration::from_secs(10)).unwrap();
        let b = told.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_ne!(a, b, "a busy thread is never handed a second job");
        release.send(()).unwrap();
        release.send(()).unwrap();
        // One of the two waits for more; the other ended.
        until_waiting(&PUMPS, 1);
        std::thread::sleep(Duration::from_millis(100));
        until_waiting(&PUMPS, 1);
    }

    #[tokio::test]
    async fn bytes_cross_both_ways_and_each_end_of_stream_is_passed_on() {
        let (mut client, proxy_client_side) = socket_pair().await;
        let (proxy_server_side, mut server) = socket_pair().await;
        let count = TunnelCount::new(4);
        pump(
            proxy_client_side,
            proxy_server_side,
            count.take().unwrap(),
            TUNNEL_IDLE,
        )
        .unwrap();

        // More than one buffer, with a pattern that catches reordering.
        let upload: Vec<u8> = (0..3 * COPY_BUF + 17)
            .map(|i| u8::try_from(i % 251).unwrap())
            .collect();
        let sent = upload.clone();
        let writer = tokio::spawn(async move {
            client.write_all(&sent).await.unwrap();
            client.shutdown().await.unwrap();
            client
        });
        let mut received = Vec::new();
        server.read_to_end(&mut received).await.unwrap();
        assert_eq!(received.len(), upload.len());
        assert!(received == upload, "the upload arrived changed");

        // The server still answers after the client's half-close.
        let mut client = writer.await.unwrap();
        server.write_all(b"answer").await.unwrap();
        drop(server);
        let mut answer = Vec::new();
        client.read_to_end(&mut answer).await.unwrap();
        assert_eq!(answer, b"answer");
    }

    #[tokio::test]
    async fn a_side_that_goes_away_ends_the_other_side_too() {
        let (mut client, proxy_client_side) = socket_pair().await;
        let (proxy_server_side, server) = socket_pair().await;
        let count = TunnelCount::new(4);
        pump(
            proxy_client_side,
            proxy_server_side,
            count.take().unwrap(),
            TUNNEL_IDLE,
        )
        .unwrap();
        // The server vanishes without a clean close (reset on linger 0).
        server.set_zero_linger().unwrap();
        drop(server);
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut rest))
            .await
            .expect("the client's side is closed, not left hanging");
        // Either a clean end or a reset, never data.
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
        assert!(rest.is_empty());
    }

    #[tokio::test]
    async fn a_tunnel_idle_both_ways_is_closed_and_gives_its_slot_back() {
        let count = TunnelCount::new(1);
        let (mut client, proxy_client_side) = socket_pair().await;
        let (proxy_server_side, mut server) = socket_pair().await;
        pump(
            proxy_client_side,
            proxy_server_side,
            count.take().unwrap(),
            Duration::from_millis(300),
        )
        .unwrap();
        assert!(count.take().is_none(), "the cap is one tunnel");
        // The server trickles a byte every 100 ms for a second: one busy
        // direction keeps the whole tunnel open.
        let trickle = tokio::spawn(async move {
            for _ in 0..10 {
                server.write_all(b"t").await.unwrap();
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            server
        });
        let mut got = [0u8; 10];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"tttttttttt");
        let _server = trickle.await.unwrap();
        // Then nothing either way: the tunnel closes on its own.
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(20), client.read_to_end(&mut rest))
            .await
            .expect("the idle tunnel was closed");
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while count.open() != 0 {
            assert!(Instant::now() < deadline, "the slot was never given back");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(count.take().is_some());
    }
}
