//! HTTP transport for provider requests: bodies read as text and then
//! parsed, status classification, at most two automatic retries with
//! bounded, jittered, cancellable backoff honouring `Retry-After`, and a
//! per-request timeout that is not a cancel.
//!
//! The timeout bounds the wait for response headers and then every gap
//! between two chunks of a streamed body: a long answer that keeps
//! streaming is never cut, a server that stops sending is.

use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::conversation::RawAssistant;
use crate::error::{ProviderError, ProviderErrorCode};
use crate::wire::{HttpRequestSpec, StreamDecoder, StreamDelta, error_message, snippet};

/// Retry and timeout settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Automatic retries after the first try (the design's limit is 2).
    pub max_retries: u32,
    /// First backoff; doubles per retry, then jittered to 50–100 %.
    pub base_delay: Duration,
    /// No backoff is longer than this.
    pub max_delay: Duration,
    /// A `Retry-After` longer than this is not waited for: the error is
    /// surfaced at once.
    pub max_retry_after: Duration,
    /// See the module comment.
    pub request_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 2,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_mins(1),
            request_timeout: Duration::from_mins(2),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry `n` (1-based).
    pub fn backoff(&self, n: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << n.saturating_sub(1).min(16))
            .min(self.max_delay);
        let jittered = exp.mul_f64(0.5 + fastrand::f64() * 0.5);
        retry_after.map_or(jittered, |ra| ra.max(jittered))
    }
}

/// The HTTP client shared by every session.
#[derive(Debug, Clone)]
pub struct Transport {
    client: reqwest::Client,
    policy: RetryPolicy,
}

/// Maps an HTTP status to a code.
pub fn classify_status(status: u16) -> ProviderErrorCode {
    match status {
        401 | 403 => ProviderErrorCode::Auth,
        408 => ProviderErrorCode::Timeout,
        429 => ProviderErrorCode::RateLimited,
        500..=599 => ProviderErrorCode::Unavailable,
        _ => ProviderErrorCode::BadRequest,
    }
}

/// `retry-after-ms` (`OpenAI`), then `Retry-After` in seconds.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = value("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

fn network(e: &reqwest::Error) -> ProviderError {
    if e.is_timeout() {
        return ProviderError::new(ProviderErrorCode::Timeout, "the request timed out");
    }
    // reqwest's message names the URL but never headers or the body.
    ProviderError::new(ProviderErrorCode::Network, format!("network error: {e}"))
}

fn timeout(what: &str) -> ProviderError {
    ProviderError::new(
        ProviderErrorCode::Timeout,
        format!("no response from the provider within the request timeout ({what})"),
    )
}

fn cancelled() -> ProviderError {
    ProviderError::new(ProviderErrorCode::Cancelled, "cancelled")
}

/// Makes a fresh decoder for each try of a request.
pub type DecoderFactory = dyn Fn() -> Box<dyn StreamDecoder> + Send + Sync;
/// Decodes a whole (non-streamed) body.
pub type BodyDecoder = fn(&Value) -> Result<RawAssistant, ProviderError>;

/// Observes a streaming request. Each call is awaited before the stream
/// is read further: an observer that waits (a full event queue) slows the
/// reading of the response instead of growing memory.
#[async_trait::async_trait]
pub trait StreamObserver: Send {
    async fn on_delta(&mut self, delta: StreamDelta);
    /// Retry `attempt` of `max` is about to be sent after `error`.
    async fn on_retry(&mut self, attempt: u32, max: u32, error: &ProviderError);
}

/// The proxies the person's environment names for cocode's own requests
/// (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, either case, and `NO_PROXY`),
/// read through a lookup rather than the environment: a proxy whose URL
/// holds a password is sealed out of the process environment at start.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct UpstreamProxies {
    pub https: Option<String>,
    pub http: Option<String>,
    pub all: Option<String>,
    pub no_proxy: Option<String>,
}

impl std::fmt::Debug for UpstreamProxies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URLs may hold a password.
        f.debug_struct("UpstreamProxies")
            .field("https", &self.https.is_some())
            .field("http", &self.http.is_some())
            .field("all", &self.all.is_some())
            .finish_non_exhaustive()
    }
}

impl UpstreamProxies {
    /// Reads the variables through `var` (upper case first, as curl does
    /// for all but `http_proxy`); empty values count as unset.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Self {
        let read = |names: [&str; 2]| {
            names
                .into_iter()
                .find_map(|n| var(n).filter(|v| !v.trim().is_empty()))
        };
        Self {
            https: read(["HTTPS_PROXY", "https_proxy"]),
            http: read(["http_proxy", "HTTP_PROXY"]),
            all: read(["ALL_PROXY", "all_proxy"]),
            no_proxy: read(["NO_PROXY", "no_proxy"]),
        }
    }

    fn is_empty(&self) -> bool {
        self.https.is_none() && self.http.is_none() && self.all.is_none()
    }
}

impl Transport {
    /// A transport whose requests follow the proxies in cocode's process
    /// environment.
    pub fn new(policy: RetryPolicy) -> Result<Self, ProviderError> {
        Self::with_proxies(policy, &UpstreamProxies::default())
    }

    /// A transport whose requests go through `proxies` when any is named
    /// (and through those of the process environment otherwise).
    pub fn with_proxies(
        policy: RetryPolicy,
        proxies: &UpstreamProxies,
    ) -> Result<Self, ProviderError> {
        let bad = |what: &str, e: reqwest::Error| {
            ProviderError::new(
                ProviderErrorCode::Config,
                format!(
                    "the {what} proxy's address cannot be used: {}",
                    e.without_url()
                ),
            )
        };
        let mut builder = reqwest::Client::builder();
        if !proxies.is_empty() {
            let no_proxy = proxies
                .no_proxy
                .as_deref()
                .and_then(reqwest::NoProxy::from_string);
            for (what, url) in [
                ("HTTPS", &proxies.https),
                ("HTTP", &proxies.http),
                ("ALL", &proxies.all),
            ] {
                let Some(url) = url else { continue };
                let proxy = match what {
                    "HTTPS" => reqwest::Proxy::https(url.as_str()),
                    "HTTP" => reqwest::Proxy::http(url.as_str()),
                    _ => reqwest::Proxy::all(url.as_str()),
                }
                .map_err(|e| bad(what, e))?;
                builder = builder.proxy(proxy.no_proxy(no_proxy.clone()));
            }
        }
        let client = builder
            .user_agent(concat!("cocode/", env!("CARGO_PKG_VERSION")))
            // Redirects could move a request (and its key) to another host.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(policy.request_timeout)
            .build()
            .map_err(|e| {
                ProviderError::new(
                    ProviderErrorCode::Config,
                    format!("the HTTP client cannot start: {e}"),
                )
            })?;
        Ok(Self { client, policy })
    }

    pub fn policy(&self) -> RetryPolicy {
        self.policy
    }

    /// Sends `spec` with retries; transport errors are retried, every other
    /// error is returned at once.
    async fn with_retries<T, F, Fut>(
        &self,
        cancel: &CancellationToken,
        mut once: F,
    ) -> Result<T, ProviderError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ProviderError>>,
    {
        let mut retries = 0;
        loop {
            if cancel.is_cancelled() {
                return Err(cancelled());
            }
            let error = match once().await {
                Ok(value) => return Ok(value),
                Err(e) => e,
            };
            let Some(wait) = self.retry_wait(&error, &mut retries) else {
                return Err(error);
            };
            self.wait_to_retry(cancel, wait).await?;
        }
    }

    /// How long to wait before retrying after `error`, with `retries` counted
    /// up; `None` when it is not retried.
    fn retry_wait(&self, error: &ProviderError, retries: &mut u32) -> Option<Duration> {
        let too_long = error
            .retry_after
            .is_some_and(|ra| ra > self.policy.max_retry_after);
        if !error.code.retried_by_transport() || *retries >= self.policy.max_retries || too_long {
            return None;
        }
        *retries += 1;
        let wait = self.policy.backoff(*retries, error.retry_after);
        tracing::debug!(code = %error.code, retries, ?wait, "provider request retried");
        Some(wait)
    }

    async fn wait_to_retry(
        &self,
        cancel: &CancellationToken,
        wait: Duration,
    ) -> Result<(), ProviderError> {
        tokio::select! {
            () = cancel.cancelled() => Err(cancelled()),
            () = tokio::time::sleep(wait) => Ok(()),
        }
    }

    async fn send(
        &self,
        spec: &HttpRequestSpec,
        get: bool,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, ProviderError> {
        let mut request = if get {
            self.client.get(&spec.url)
        } else {
            self.client
                .post(&spec.url)
                .header(CONTENT_TYPE, "application/json")
                .body(spec.body.to_string())
        };
        for (name, value) in &spec.headers {
            request = request.header(*name, value);
        }
        let response = tokio::select! {
            () = cancel.cancelled() => return Err(cancelled()),
            r = tokio::time::timeout(self.policy.request_timeout, request.send()) => match r {
                Err(_) => return Err(timeout("headers")),
                Ok(Err(e)) => return Err(network(&e)),
                Ok(Ok(response)) => response,
            },
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let after = retry_after(response.headers());
        let text = self.text(response, cancel).await.unwrap_or_default();
        let detail = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| error_message(&v))
            .unwrap_or_else(|| snippet(&text));
        let code = match classify_status(status.as_u16()) {
            ProviderErrorCode::BadRequest if crate::context::says_too_long(&detail) => {
                ProviderErrorCode::ContextTooLong
            }
            code => code,
        };
        let mut error = ProviderError::new(code, format!("HTTP {}: {detail}", status.as_u16()));
        error.retry_after = after;
        Err(error)
    }

    async fn text(
        &self,
        response: reqwest::Response,
        cancel: &CancellationToken,
    ) -> Result<String, ProviderError> {
        tokio::select! {
            () = cancel.cancelled() => Err(cancelled()),
            r = tokio::time::timeout(self.policy.request_timeout, response.text()) => match r {
                Err(_) => Err(timeout("body")),
                Ok(Err(e)) => Err(network(&e)),
                Ok(Ok(text)) => Ok(text),
            },
        }
    }

    /// Sends a GET and parses the JSON body (model catalogs).
    pub async fn get_json(
        &self,
        spec: &HttpRequestSpec,
        cancel: &CancellationToken,
    ) -> Result<Value, ProviderError> {
        self.with_retries(cancel, || async {
            let response = self.send(spec, true, cancel).await?;
            let text = self.text(response, cancel).await?;
            serde_json::from_str(&text).map_err(|_| {
                ProviderError::invalid_response(format!(
                    "the response is not JSON: {}",
                    snippet(&text)
                ))
            })
        })
        .await
    }

    /// Sends a streaming request and decodes it. A body that is not an event
    /// stream (a server that ignores `stream: true`) is read as text and
    /// decoded whole by `decode_body`.
    pub async fn stream(
        &self,
        spec: &HttpRequestSpec,
        new_decoder: &DecoderFactory,
        decode_body: BodyDecoder,
        cancel: &CancellationToken,
        observer: &mut dyn StreamObserver,
    ) -> Result<RawAssistant, ProviderError> {
        let mut retries = 0;
        loop {
            if cancel.is_cancelled() {
                return Err(cancelled());
            }
            let error = match self
                .stream_once(spec, new_decoder, decode_body, cancel, observer)
                .await
            {
                Ok(raw) => return Ok(raw),
                Err(e) => e,
            };
            let Some(wait) = self.retry_wait(&error, &mut retries) else {
                return Err(error);
            };
            observer
                .on_retry(retries, self.policy.max_retries, &error)
                .await;
            self.wait_to_retry(cancel, wait).await?;
        }
    }

    /// One try of a streaming request.
    async fn stream_once(
        &self,
        spec: &HttpRequestSpec,
        new_decoder: &DecoderFactory,
        decode_body: BodyDecoder,
        cancel: &CancellationToken,
        observer: &mut dyn StreamObserver,
    ) -> Result<RawAssistant, ProviderError> {
        let response = self.send(spec, false, cancel).await?;
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            let text = self.text(response, cancel).await?;
            let body = serde_json::from_str::<Value>(&text).map_err(|_| {
                ProviderError::invalid_response(format!(
                    "the response is neither an event stream nor JSON: {}",
                    snippet(&text)
                ))
            })?;
            let raw = decode_body(&body)?;
            if !raw.text.is_empty() {
                observer.on_delta(StreamDelta::Text(raw.text.clone())).await;
            }
            return Ok(raw);
        }
        let mut decoder = new_decoder();
        let mut events = response.bytes_stream().eventsource();
        loop {
            let next = tokio::select! {
                () = cancel.cancelled() => return Err(cancelled()),
                n = tokio::time::timeout(self.policy.request_timeout, events.next()) => n,
            };
            match next {
                Err(_) => return Err(timeout("stream")),
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    return Err(ProviderError::new(
                        ProviderErrorCode::Network,
                        format!("the response stream broke: {e}"),
                    ));
                }
                Ok(Some(Ok(event))) => {
                    for delta in decoder.on_event(&event.event, &event.data)? {
                        observer.on_delta(delta).await;
                    }
                    if decoder.is_done() {
                        break;
                    }
                }
            }
        }
        decoder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A proxy whose URL holds a password (sealed out of the environment)
    /// is used when handed over: the request goes to it, with its
    /// credentials, and `NO_PROXY` still applies.
    #[tokio::test]
    async fn requests_go_through_a_proxy_handed_over_with_its_password() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buf = [0_u8; 1024];
            while !head.ends_with(b"\r\n\r\n") {
                let n = conn.read(&mut buf).await.unwrap();
                assert!(n > 0, "the connection closed early");
                head.extend_from_slice(&buf[..n]);
            }
            conn.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection: close\r\n\r\n{\"a\":1}",
            )
            .await
            .unwrap();
            String::from_utf8(head).unwrap()
        });
        let proxies = UpstreamProxies::from_lookup(|name| match name {
            "http_proxy" => Some(format!("http://proxyuser:proxypass@127.0.0.1:{port}")),
            "NO_PROXY" => Some("internal.example".to_owned()),
            _ => None,
        });
        let transport = Transport::with_proxies(RetryPolicy::default(), &proxies).unwrap();
        let spec = HttpRequestSpec {
            url: "http://models.example.org/v1/models".to_owned(),
            headers: Vec::new(),
            body: Value::Null,
        };
        let body = transport
            .get_json(&spec, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(body, serde_json::json!({"a": 1}));
        let head = server.await.unwrap().to_ascii_lowercase();
        assert!(
            head.starts_with("get http://models.example.org/v1/models http/1.1\r\n"),
            "{head}"
        );
        // base64("proxyuser:proxypass")
        assert!(
            head.contains("proxy-authorization: basic chjvehl1c2vyonbyb3h5cgfzcw==\r\n"),
            "{head}"
        );
        assert_eq!(
            format!("{proxies:?}"),
            "UpstreamProxies { https: false, http: true, all: false, .. }"
        );
    }

    #[test]
    fn statuses_map_to_codes() {
        use ProviderErrorCode::{Auth, BadRequest, RateLimited, Timeout, Unavailable};
        for (status, code) in [
            (401, Auth),
            (403, Auth),
            (400, BadRequest),
            (404, BadRequest),
            (408, Timeout),
            (429, RateLimited),
            (500, Unavailable),
            (503, Unavailable),
            (529, Unavailable),
        ] {
            assert_eq!(classify_status(status), code, "{status}");
        }
    }

    #[test]
    fn backoff_is_bounded_jittered_and_honours_retry_after() {
        let policy = RetryPolicy::default();
        for _ in 0..100 {
            let first = policy.backoff(1, None);
            assert!(first >= Duration::from_millis(250) && first <= Duration::from_millis(500));
            assert!(policy.backoff(30, None) <= policy.max_delay);
            assert!(policy.backoff(1, Some(Duration::from_secs(3))) >= Duration::from_secs(3));
        }
    }

    #[test]
    fn retry_after_reads_both_headers() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        h.insert(
            RETRY_AFTER,
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        h.remove("retry-after-ms");
        assert_eq!(retry_after(&h), None);
    }
}
