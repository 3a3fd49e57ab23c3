//! The policy proxy: the only way an agent-profile child reaches the
//! network.
//!
//! - Loopback only (`127.0.0.1:<ephemeral>`), never `0.0.0.0`.
//! - Every agent launch gets its own credentials in its proxy URL; a request
//!   without valid `Proxy-Authorization` gets 407. The credentials name the
//!   task for the blocked-host log and keep other local processes out.
//! - `CONNECT host:port` is judged per tunnel. Plain HTTP is judged per
//!   request on its absolute-form target, a disagreeing `Host` header is
//!   refused, and `Connection: close` is forced both ways so a second
//!   request cannot ride an already-judged connection. Redirects go back to
//!   the client, whose next hop is judged again.
//! - Every address an allowed name resolves to is judged again before the
//!   connection is made (DNS rebinding into the person's machine or LAN).
//! - A refusal is a 403 with a short body naming the host, logged once per
//!   host per task in the [`BlockedHostLog`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::convert::Infallible;
use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, RwLock};

use base64::Engine as _;
use bytes::Bytes;
use cocode_core::ids::TaskId;
use cocode_core::workspace::HostPattern;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpListener, TcpStream};

use crate::env::ProxyEnv;
use crate::hosts::{HostPolicy, HostRefused, normalize_host};

type Body = BoxBody<Bytes, hyper::Error>;

/// Hosts refused per task, each once, in memory.
#[derive(Debug, Default)]
pub struct BlockedHostLog {
    by_task: Mutex<BTreeMap<TaskId, BTreeSet<Place>>>,
}

/// A refused host and the port asked for (none when only a Host header
/// named it).
type Place = (String, Option<u16>);

impl BlockedHostLog {
    fn record(&self, task: &TaskId, host: &str, port: Option<u16>) {
        self.by_task
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(task.clone())
            .or_default()
            .insert((host.to_owned(), port));
    }

    fn refused(&self, task: &TaskId) -> BTreeSet<Place> {
        self.by_task
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(task)
            .cloned()
            .unwrap_or_default()
    }

    /// The hosts refused for a task, sorted.
    pub fn hosts(&self, task: &TaskId) -> Vec<String> {
        let names: BTreeSet<String> = self.refused(task).into_iter().map(|(h, _)| h).collect();
        names.into_iter().collect()
    }

    /// The places refused for a task as `host:port` (the form an entry's
    /// `model_hosts` or `allowed_hosts` takes), sorted.
    pub fn places(&self, task: &TaskId) -> Vec<String> {
        self.refused(task)
            .into_iter()
            .map(|(h, p)| match p {
                Some(p) if h.contains(':') => format!("[{h}]:{p}"),
                Some(p) => format!("{h}:{p}"),
                None => h,
            })
            .collect()
    }
}

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("the policy proxy cannot listen on loopback: {0}")]
    Bind(std::io::Error),
    #[error("no randomness for proxy credentials: {0}")]
    Random(String),
}

struct Shared {
    policy: RwLock<HostPolicy>,
    /// launch id → its credentials and scope
    launches: Mutex<HashMap<String, Launch>>,
    blocked: BlockedHostLog,
    /// Open CONNECT tunnels against their cap.
    tunnels: Arc<crate::tunnel::TunnelCount>,
    /// A tunnel idle both ways for this long is closed.
    tunnel_idle: std::time::Duration,
}

/// One agent launch's token, task, and the hosts it alone may reach.
type Launch = (String, TaskId, Vec<HostPattern>);

/// A running policy proxy. Dropping it stops accepting connections.
pub struct PolicyProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for PolicyProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyProxy")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Drop for PolicyProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// A listener the proxy serves besides its own; dropping it stops that.
#[derive(Debug)]
pub struct Serving(tokio::task::JoinHandle<()>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Accepts connections on `listener` and serves each as the proxy.
fn serve(listener: TcpListener, shared: Arc<Shared>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let shared = Arc::clone(&shared);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let shared = Arc::clone(&shared);
                    async move { Ok::<_, Infallible>(handle(&shared, req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .preserve_header_case(true)
                    .title_case_headers(true)
                    .serve_connection(TokioIo::new(stream), service)
                    .with_upgrades()
                    .await;
            });
        }
    })
}

fn random_hex(bytes: usize) -> Result<String, ProxyError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| ProxyError::Random(e.to_string()))?;
    Ok(buf.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    }))
}

impl PolicyProxy {
    /// Starts listening on an ephemeral loopback port (inside a tokio runtime).
    pub async fn start(policy: HostPolicy) -> Result<Self, ProxyError> {
        Self::start_with_tunnels(
            policy,
            crate::tunnel::MAX_TUNNELS,
            crate::tunnel::TUNNEL_IDLE,
        )
        .await
    }

    /// [`Self::start`] from code that is not async (the window's thread):
    /// binding a loopback port does not wait, so nothing blocks. Must be
    /// called inside the runtime (`Handle::enter`).
    pub fn start_now(policy: HostPolicy) -> Result<Self, ProxyError> {
        let std_listener =
            std::net::TcpListener::bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0))
                .map_err(ProxyError::Bind)?;
        std_listener
            .set_nonblocking(true)
            .map_err(ProxyError::Bind)?;
        let listener = TcpListener::from_std(std_listener).map_err(ProxyError::Bind)?;
        let addr = listener.local_addr().map_err(ProxyError::Bind)?;
        let shared = Arc::new(Shared {
            policy: RwLock::new(policy),
            launches: Mutex::new(HashMap::new()),
            blocked: BlockedHostLog::default(),
            tunnels: crate::tunnel::TunnelCount::new(crate::tunnel::MAX_TUNNELS),
            tunnel_idle: crate::tunnel::TUNNEL_IDLE,
        });
        let accept = serve(listener, Arc::clone(&shared));
        Ok(Self {
            addr,
            shared,
            accept,
        })
    }

    /// [`Self::start`] with another cap on open tunnels and idle time.
    pub async fn start_with_tunnels(
        policy: HostPolicy,
        max_tunnels: usize,
        tunnel_idle: std::time::Duration,
    ) -> Result<Self, ProxyError> {
        let listener = TcpListener::bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0))
            .await
            .map_err(ProxyError::Bind)?;
        let addr = listener.local_addr().map_err(ProxyError::Bind)?;
        let shared = Arc::new(Shared {
            policy: RwLock::new(policy),
            launches: Mutex::new(HashMap::new()),
            blocked: BlockedHostLog::default(),
            tunnels: crate::tunnel::TunnelCount::new(max_tunnels),
            tunnel_idle,
        });
        let accept = serve(listener, Arc::clone(&shared));
        Ok(Self {
            addr,
            shared,
            accept,
        })
    }

    /// Serves the connections that arrive on another listener — the one an
    /// agent command's network namespace hands over — the same way, until
    /// the returned [`Serving`] is dropped (inside a tokio runtime).
    pub fn serve_listener(&self, listener: std::net::TcpListener) -> Result<Serving, ProxyError> {
        listener.set_nonblocking(true).map_err(ProxyError::Bind)?;
        let listener = TcpListener::from_std(listener).map_err(ProxyError::Bind)?;
        Ok(Serving(serve(listener, Arc::clone(&self.shared))))
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Replaces the allowed hosts (user additions take effect at once).
    pub fn set_policy(&self, policy: HostPolicy) {
        *self
            .shared
            .policy
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = policy;
    }

    /// New credentials for one agent launch of `task`; `extra_hosts` are
    /// allowed for this launch alone (an external agent's model API).
    pub fn register_launch(
        &self,
        task: &TaskId,
        extra_hosts: &[HostPattern],
    ) -> Result<ProxyEnv, ProxyError> {
        let launch = format!("l{}", random_hex(6)?);
        let token = random_hex(16)?;
        self.shared
            .launches
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(
                launch.clone(),
                (token.clone(), task.clone(), extra_hosts.to_vec()),
            );
        Ok(ProxyEnv {
            url: format!("http://{launch}:{token}@127.0.0.1:{}", self.port()),
            port: self.port(),
        })
    }

    /// Withdraws a launch's credentials (the child exited).
    pub fn revoke_launch(&self, proxy: &ProxyEnv) {
        if let Some((launch, _)) = credentials_of(&proxy.url) {
            self.shared
                .launches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .remove(&launch);
        }
    }

    /// Launch credentials currently valid (children that have not ended).
    pub fn active_launches(&self) -> usize {
        self.shared
            .launches
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    pub fn blocked_hosts(&self, task: &TaskId) -> Vec<String> {
        self.shared.blocked.hosts(task)
    }

    /// … as `host:port`, the form `model_hosts` and `allowed_hosts` take.
    pub fn blocked_places(&self, task: &TaskId) -> Vec<String> {
        self.shared.blocked.places(task)
    }
}

/// (launch id, token) from a proxy URL's user info.
impl ProxyEnv {
    /// The `Proxy-Authorization` value a client of this launch sends (for a
    /// client that speaks to the proxy itself rather than through the URL).
    pub fn proxy_authorization(&self) -> Option<String> {
        let (launch, token) = credentials_of(&self.url)?;
        Some(format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{launch}:{token}"))
        ))
    }
}

fn credentials_of(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("http://")?;
    let (userinfo, _) = rest.split_once('@')?;
    let (launch, token) = userinfo.split_once(':')?;
    Some((launch.to_owned(), token.to_owned()))
}

fn full(status: StatusCode, text: String) -> Response<Body> {
    let mut resp = Response::new(
        Full::new(Bytes::from(text))
            .map_err(|never| match never {})
            .boxed(),
    );
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// The task whose launch credentials the request carries.
fn authenticate(shared: &Shared, headers: &HeaderMap) -> Option<(TaskId, Vec<HostPattern>)> {
    let value = headers.get(header::PROXY_AUTHORIZATION)?.to_str().ok()?;
    let encoded = value
        .strip_prefix("Basic ")
        .or_else(|| value.strip_prefix("basic "))?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (launch, token) = text.split_once(':')?;
    let launches = shared
        .launches
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (expected, task, extra) = launches.get(launch)?;
    // Compare without an early exit on the first differing byte.
    let same = expected.len() == token.len()
        && expected
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    same.then(|| (task.clone(), extra.clone()))
}

async fn handle(shared: &Shared, req: Request<Incoming>) -> Response<Body> {
    let Some((task, extra)) = authenticate(shared, req.headers()) else {
        let mut resp = full(
            StatusCode::PROXY_AUTHENTICATION_REQUIRED,
            "cocode: proxy credentials required\n".into(),
        );
        resp.headers_mut().insert(
            header::PROXY_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"cocode\""),
        );
        return resp;
    };
    if req.method() == Method::CONNECT {
        connect_tunnel(shared, &task, &extra, req).await
    } else {
        forward(shared, &task, &extra, req).await
    }
}

fn refuse(
    shared: &Shared,
    task: &TaskId,
    refused: &HostRefused,
    (shown, port): (&str, u16),
) -> Response<Body> {
    shared.blocked.record(task, shown, Some(port));
    full(
        StatusCode::FORBIDDEN,
        format!("cocode blocked {shown}: {refused}\n"),
    )
}

/// Judges the name, resolves it, judges every address and connects.
async fn open_upstream(
    shared: &Shared,
    extra: &[HostPattern],
    host: &str,
    port: u16,
) -> Result<TcpStream, (StatusCode, Option<HostRefused>, String)> {
    let policy = shared
        .policy
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .with_extra(extra);
    let judged = policy.judge(host, port);
    let host = judged.map_err(|r| (StatusCode::FORBIDDEN, Some(r), host.to_owned()))?;
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| (StatusCode::BAD_GATEWAY, None, format!("{host}: {e}")))?
        .collect();
    for addr in &addrs {
        let verdict = policy.judge_address(&host, port, addr.ip());
        verdict.map_err(|r| (StatusCode::FORBIDDEN, Some(r), host.clone()))?;
    }
    let mut last = format!("{host}: no address");
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = format!("{host}: {e}"),
        }
    }
    Err((StatusCode::BAD_GATEWAY, None, last))
}

fn upstream_failed(
    shared: &Shared,
    task: &TaskId,
    port: u16,
    (status, refused, detail): (StatusCode, Option<HostRefused>, String),
) -> Response<Body> {
    match refused {
        Some(r) => refuse(shared, task, &r, (&detail, port)),
        None => full(status, format!("cocode proxy: {detail}\n")),
    }
}

async fn connect_tunnel(
    shared: &Shared,
    task: &TaskId,
    extra: &[HostPattern],
    req: Request<Incoming>,
) -> Response<Body> {
    let Some(authority) = req.uri().authority().cloned() else {
        return full(StatusCode::BAD_REQUEST, "CONNECT needs host:port\n".into());
    };
    let Some(port) = authority.port_u16() else {
        return full(StatusCode::BAD_REQUEST, "CONNECT needs host:port\n".into());
    };
    let Some(slot) = shared.tunnels.take() else {
        return full(
            StatusCode::SERVICE_UNAVAILABLE,
            "cocode proxy: too many open tunnels; retry when one closes\n".into(),
        );
    };
    let idle = shared.tunnel_idle;
    let mut server = match open_upstream(shared, extra, authority.host(), port).await {
        Ok(s) => s,
        Err(e) => return upstream_failed(shared, task, port, e),
    };
    tokio::spawn(async move {
        let Ok(upgraded) = hyper::upgrade::on(req).await else {
            return;
        };
        // Back to the plain socket (and whatever the client sent early), so
        // the tunnel moves bytes socket to socket.
        match upgraded.downcast::<TokioIo<TcpStream>>() {
            Ok(parts) => {
                let client = parts.io.into_inner();
                if !parts.read_buf.is_empty() && server.write_all(&parts.read_buf).await.is_err() {
                    return;
                }
                if let Err(e) = crate::tunnel::pump(client, server, slot, idle) {
                    tracing::warn!("tunnel not started: {e}");
                }
            }
            Err(upgraded) => {
                let _slot = slot;
                let mut client = TokioIo::new(upgraded);
                let _ = tokio::io::copy_bidirectional_with_sizes(
                    &mut client,
                    &mut server,
                    crate::tunnel::COPY_BUF,
                    crate::tunnel::COPY_BUF,
                )
                .await;
            }
        }
    });
    Response::new(
        Full::new(Bytes::new())
            .map_err(|never| match never {})
            .boxed(),
    )
}

/// Headers that describe one hop and never travel further.
const HOP_BY_HOP: [header::HeaderName; 8] = [
    header::CONNECTION,
    header::PROXY_AUTHORIZATION,
    header::PROXY_AUTHENTICATE,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::HeaderName::from_static("keep-alive"),
];

fn strip_hop_by_hop(headers: &mut HeaderMap) {
    for name in &HOP_BY_HOP {
        headers.remove(name);
    }
    headers.remove("proxy-connection");
}

async fn forward(
    shared: &Shared,
    task: &TaskId,
    extra: &[HostPattern],
    req: Request<Incoming>,
) -> Response<Body> {
    let uri = req.uri().clone();
    let (Some(authority), Some("http")) = (uri.authority().cloned(), uri.scheme_str()) else {
        return full(
            StatusCode::BAD_REQUEST,
            "cocode proxy: an absolute http:// target is required\n".into(),
        );
    };
    let port = authority.port_u16().unwrap_or(80);
    // The Host header must name the same place as the target.
    if let Some(host_header) = req.headers().get(header::HOST) {
        let named = host_header
            .to_str()
            .ok()
            .and_then(|h| h.parse::<Uri>().ok())
            .and_then(|h| h.authority().cloned());
        let agrees = named.as_ref().is_some_and(|h| {
            normalize_host(h.host()).ok() == normalize_host(authority.host()).ok()
                && h.port_u16().unwrap_or(80) == port
        });
        if !agrees {
            let shown = named.map_or_else(
                || "an unreadable Host header".to_owned(),
                |h| h.host().to_owned(),
            );
            shared.blocked.record(task, &shown, None);
            return full(
                StatusCode::FORBIDDEN,
                format!(
                    "cocode blocked {shown}: the Host header disagrees with the target {}\n",
                    authority.host()
                ),
            );
        }
    }
    let stream = match open_upstream(shared, extra, authority.host(), port).await {
        Ok(s) => s,
        Err(e) => return upstream_failed(shared, task, port, e),
    };
    let Ok((mut sender, conn)) = hyper::client::conn::http1::Builder::new()
        .preserve_header_case(true)
        .title_case_headers(true)
        .handshake(TokioIo::new(stream))
        .await
    else {
        return full(
            StatusCode::BAD_GATEWAY,
            "cocode proxy: upstream handshake failed\n".into(),
        );
    };
    tokio::spawn(conn);
    let (mut parts, body) = req.into_parts();
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    parts.uri = path.parse().unwrap_or_else(|_| Uri::from_static("/"));
    strip_hop_by_hop(&mut parts.headers);
    parts
        .headers
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    match sender.send_request(Request::from_parts(parts, body)).await {
        Ok(resp) => {
            let (mut parts, body) = resp.into_parts();
            strip_hop_by_hop(&mut parts.headers);
            parts
                .headers
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Response::from_parts(parts, body.boxed())
        }
        Err(e) => full(
            StatusCode::BAD_GATEWAY,
            format!("cocode proxy: upstream failed: {e}\n"),
        ),
    }
}
