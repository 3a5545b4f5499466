//! Outbound HTTP: `wasi:http/outgoing-handler` limited to allow-listed origins
//! and globally routable addresses.
//!
//! An allow-list entry is `scheme://host[:port]`; `*.domain` matches every
//! subdomain, a missing port means the scheme's default, and `*://*:*` allows
//! everything (a bare `*` is refused so nobody allows everything by accident).
//! A call whose effect is `read` may only send GET and HEAD.
//!
//! Each request, in order: the request cap (refused attempts count too), the
//! allow-list and the method; then the host is resolved once
//! (never for an IP literal) and every address that is not globally routable
//! ([`addr`]) is dropped unless an allow-list entry names it literally for the
//! same scheme and port. Only a checked address is dialed — the name is never
//! resolved again, so DNS rebinding cannot swap the address — and TLS verifies
//! and sends (SNI) the host name the tool asked for. The response body is
//! capped and every step has a timeout ([`HttpLimits`]). A refusal is an
//! error the guest sees (`HTTP-request-denied`, `destination-IP-prohibited`)
//! plus a trace line naming the reason and the address; trace lines never
//! hold header values, URL user info or query strings.

pub mod addr;
mod allow_list;
mod net;
pub mod request_parts;
mod send;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks};

pub use net::{
    BoxFuture, DEFAULT_BETWEEN_BYTES_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_DNS_TIMEOUT,
    DEFAULT_FIRST_BYTE_TIMEOUT, DEFAULT_MAX_REQUESTS_PER_CALL, DEFAULT_MAX_RESPONSE_BODY_BYTES,
    DEFAULT_REQUEST_TIMEOUT, Dialer, HttpLimits, Network, Resolver, Screen, SystemDialer,
    SystemResolver,
};

pub use allow_list::{AllowList, AllowListError};

use super::log::TraceLog;
use super::{CallScope, Capability, Grants, Outside};
use crate::usage::HttpTally;
use send::Outbound;

/// The TLS client configuration tools' requests use (web PKI roots, ring),
/// for the host's own HTTPS clients too.
pub fn client_tls_config() -> anyhow::Result<rustls::ClientConfig> {
    send::tls_config()
        .map(|config| (*config).clone())
        .map_err(|e| anyhow::anyhow!("{e:?}"))
}

/// A count of the requests a call has attempted, against its cap, and of
/// the body bytes they sent and received. Cloning shares the counts, so one
/// budget can span several instances of a call.
#[derive(Debug, Clone)]
pub struct RequestBudget {
    counts: Arc<Counts>,
    max: u32,
}

#[derive(Debug, Default)]
struct Counts {
    attempted: AtomicU32,
    sent: AtomicU64,
    received: AtomicU64,
}

/// Whether one more request fits the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Admission {
    Within,
    /// The first attempt past the cap (worth a trace line).
    FirstOver,
    /// A later one (refused quietly).
    Over,
}

impl RequestBudget {
    /// A budget of `max` requests.
    pub fn new(max: u32) -> Self {
        Self {
            counts: Arc::default(),
            max,
        }
    }

    /// How many requests were attempted, refused ones included.
    pub fn attempted(&self) -> u32 {
        self.counts.attempted.load(Ordering::Relaxed)
    }

    /// The requests and their body bytes, for the receipt.
    pub fn tally(&self) -> HttpTally {
        HttpTally {
            requests: self.attempted(),
            bytes_sent: self.counts.sent.load(Ordering::Relaxed),
            bytes_received: self.counts.received.load(Ordering::Relaxed),
        }
    }

    /// Count one connection the host relays for the call (`bash`'s
    /// proxy) as a request: whether it fits the cap.
    pub fn admit_relayed(&self) -> bool {
        self.admit() == Admission::Within
    }

    /// Count the bytes a relayed connection carried each way.
    pub fn count_relayed(&self, sent: u64, received: u64) {
        self.counts.sent.fetch_add(sent, Ordering::Relaxed);
        self.counts.received.fetch_add(received, Ordering::Relaxed);
    }

    fn count_sent(&self, bytes: usize) {
        self.counts.sent.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    fn count_received(&self, bytes: usize) {
        self.counts
            .received
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// The cap.
    pub fn max(&self) -> u32 {
        self.max
    }

    fn admit(&self) -> Admission {
        let before = self
            .counts
            .attempted
            .try_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_add(1))
            })
            .unwrap_or(u32::MAX);
        match before {
            n if n < self.max => Admission::Within,
            n if n == self.max => Admission::FirstOver,
            _ => Admission::Over,
        }
    }
}

/// What `grants` give a component importing `interface` of `wasi:http`,
/// as `inspect` shows it; `None` for another interface.
pub fn import_status(grants: &Grants, interface: &str) -> Option<String> {
    interface.starts_with("wasi:http/").then(|| {
        if grants.http.is_empty() {
            "NOT GRANTED (no http allow-list)".into()
        } else {
            "granted: allow-listed origins".into()
        }
    })
}

impl Capability for HttpCtx {
    fn for_call(grants: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        Ok(Self::new(
            scope.network.clone(),
            Arc::clone(&grants.http),
            scope.read_only,
            scope.trace.clone(),
        )
        .with_budget(scope.http_budget.clone()))
    }

    fn outside_a_call(outside: &Outside<'_>) -> anyhow::Result<Self> {
        Ok(Self::deny_all(outside.trace.clone()))
    }
}

/// The per-call HTTP context: the allow-list, what this call's effect
/// permits, its request budget, and the host's [`Network`].
pub struct HttpCtx {
    network: Network,
    allow: Arc<AllowList>,
    read_only: bool,
    budget: RequestBudget,
    trace: TraceLog,
    body_chunk_bytes: usize,
}

impl HttpCtx {
    /// A context for one instance of a call, reaching the network through
    /// `network`, with a fresh request budget from its limits. `read_only`
    /// limits methods to GET and HEAD.
    pub fn new(network: Network, allow: Arc<AllowList>, read_only: bool, trace: TraceLog) -> Self {
        let budget = RequestBudget::new(network.limits().max_requests_per_call);
        Self {
            network,
            allow,
            read_only,
            budget,
            trace,
            body_chunk_bytes: wasmtime_wasi_http::p2::DEFAULT_OUTGOING_BODY_CHUNK_SIZE,
        }
    }

    /// A context that refuses every request. Every one shares one network:
    /// it never reaches it, and a new one per instance would cost its slots
    /// and resolver each time (metadata, `effect-for`, dry-run).
    pub fn deny_all(trace: TraceLog) -> Self {
        static UNUSED: std::sync::OnceLock<Network> = std::sync::OnceLock::new();
        Self::new(
            UNUSED.get_or_init(Network::system).clone(),
            Arc::default(),
            true,
            trace,
        )
    }

    /// The same context counting against `budget` (shared with other
    /// instances of the same call) instead of a fresh one.
    pub fn with_budget(mut self, budget: RequestBudget) -> Self {
        self.budget = budget;
        self
    }

    /// The same context with outgoing bodies buffering at most two writes
    /// of `bytes` each, so every body a guest holds stays within its
    /// per-handle share of the host memory budget.
    pub fn with_body_chunk_bytes(mut self, bytes: usize) -> Self {
        self.body_chunk_bytes = bytes.max(1);
        self
    }

    /// The budget this context counts against.
    pub fn budget(&self) -> &RequestBudget {
        &self.budget
    }

    /// Check a request against the cap, the allow-list and the method; trace
    /// and refuse it, or hand it on.
    fn admit(&self, request: &http::Request<WasiBody>) -> Result<Outbound, HttpError> {
        let uri = request.uri();
        let scheme = uri.scheme_str().unwrap_or("https").to_ascii_lowercase();
        let https = match scheme.as_str() {
            "http" => false,
            "https" => true,
            _ => return Err(HttpError::HttpRequestUriInvalid),
        };
        let bracketed = uri.host().unwrap_or_default();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let target = describe(request.method(), &scheme, bracketed, port, uri);

        let refuse = |reason: &str| {
            self.trace.host(format!("http: refused {target}: {reason}"));
            HttpError::HttpRequestDenied
        };
        match self.budget.admit() {
            Admission::Within => {}
            Admission::FirstOver => {
                return Err(refuse(&format!(
                    "request cap reached: a call may attempt {} requests (max_requests_per_call); \
                     this and every later request of the call is refused",
                    self.budget.max()
                )));
            }
            Admission::Over => return Err(HttpError::HttpRequestDenied),
        }
        if self.allow.is_empty() {
            return Err(refuse("this tool is granted no outbound HTTP"));
        }
        if !self.allow.allows(&scheme, bracketed, port) {
            return Err(refuse(&format!(
                "{scheme}://{bracketed}:{port} is not in this tool's http allow-list"
            )));
        }
        let method = request.method();
        if self.read_only && method != http::Method::GET && method != http::Method::HEAD {
            return Err(refuse(&format!(
                "{method} is refused: this call's effect is `read`, which allows only GET and HEAD"
            )));
        }
        let host = bracketed.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(refuse("the URL has no host"));
        }
        Ok(Outbound {
            network: self.network.clone(),
            budget: self.budget.clone(),
            allow: Arc::clone(&self.allow),
            trace: self.trace.clone(),
            target: target.into(),
            https,
            host: host.to_string(),
            port,
        })
    }
}

/// A request as trace lines show it: method and origin. Never user info,
/// the path or the query (either can carry a key: `/v1/<token>/…`, a
/// signed URL) or header values; `/…` says the URL went on.
fn describe(method: &http::Method, scheme: &str, host: &str, port: u16, uri: &http::Uri) -> String {
    let rest = if uri.path().len() > 1 || uri.query().is_some() {
        "/…"
    } else {
        "/"
    };
    format!("{method} {scheme}://{host}:{port}{rest}")
}

/// The request with any `user:password@` taken out of its `Host` header:
/// wasmtime-wasi-http copies the guest's authority there whole, and a
/// server (or anything logging on the way) must never receive it.
fn without_userinfo(mut request: http::Request<WasiBody>) -> http::Request<WasiBody> {
    let host = request.headers().get(http::header::HOST);
    let stripped = host
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.rsplit_once('@'))
        .and_then(|(_, host)| http::HeaderValue::from_str(host).ok());
    if let Some(host) = stripped {
        request.headers_mut().insert(http::header::HOST, host);
    }
    request
}

impl WasiHttpHooks for HttpCtx {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> Box<
        dyn Future<
                Output = wasmtime_wasi_http::Result<(
                    http::Response<WasiBody>,
                    Box<dyn Future<Output = Result<(), HttpError>> + Send>,
                )>,
            > + Send,
    > {
        match self.admit(&request) {
            Ok(outbound) => Box::new(outbound.send(without_userinfo(request), options)),
            Err(refusal) => Box::new(async move { Err(refusal) }),
        }
    }

    fn p2_outgoing_body_buffer_chunks(&mut self) -> usize {
        1
    }

    fn p2_outgoing_body_chunk_size(&mut self) -> usize {
        self.body_chunk_bytes
    }
}
