//! One admitted request on its way out: resolve the host once, check every
//! address, dial only a checked one, TLS with the original host name,
//! HTTP/1.1, and a response body under a byte cap and timeouts.
//!
//! Every failure is a [`HttpError`] the guest sees, and a trace line saying
//! why; nothing here traps or panics on what a guest or a server sends.

use std::future::{Future, poll_fn};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody};

use super::addr::{SpecialRange, special_range};
use super::net::{HttpLimits, Network, NoSlot};
use super::{AllowList, RequestBudget};
use crate::caps::log::TraceLog;

/// At most this many of a name's checked addresses are tried.
const MAX_ADDRESSES_TRIED: usize = 4;

/// What the guest's request future resolves to after the response head.
pub(super) type IoFuture = Box<dyn Future<Output = Result<(), HttpError>> + Send>;

/// The timeouts one request runs under: the host's, shortened by the guest's.
#[derive(Debug, Clone, Copy)]
struct Timeouts {
    dns: Duration,
    connect: Duration,
    first_byte: Duration,
    between_bytes: Duration,
    request: Duration,
}

impl Timeouts {
    fn new(limits: &HttpLimits, options: Option<RequestOptions>) -> Self {
        let options = options.unwrap_or_default();
        let shorter = |host: Duration, guest: Option<Duration>| guest.map_or(host, |g| g.min(host));
        Self {
            dns: limits.dns_timeout,
            connect: shorter(limits.connect_timeout, options.connect_timeout),
            first_byte: shorter(limits.first_byte_timeout, options.first_byte_timeout),
            between_bytes: shorter(limits.between_bytes_timeout, options.between_bytes_timeout),
            request: limits.request_timeout,
        }
    }
}

/// A request that passed the allow-list, method and request-cap checks.
pub(super) struct Outbound {
    pub network: Network,
    /// The call's request budget, which counts body bytes each way.
    pub budget: RequestBudget,
    pub allow: Arc<AllowList>,
    pub trace: TraceLog,
    /// The request as trace lines show it (no userinfo, no query, no headers).
    pub target: Arc<str>,
    pub https: bool,
    /// The host as the guest wrote it, without IPv6 brackets.
    pub host: String,
    pub port: u16,
}

impl Outbound {
    /// Send `request` and return the response with a capped body.
    pub async fn send(
        self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
    ) -> Result<(http::Response<WasiBody>, IoFuture), HttpError> {
        let timeouts = Timeouts::new(self.network.limits(), options);
        let deadline = after(timeouts.request);
        match tokio::time::timeout_at(deadline, self.exchange(request, timeouts, deadline)).await {
            Ok(result) => result,
            Err(_) => {
                self.note(format!(
                    "no response within {} (request_timeout)",
                    show(timeouts.request)
                ));
                Err(HttpError::HttpResponseTimeout)
            }
        }
    }

    async fn exchange(
        &self,
        mut request: http::Request<WasiBody>,
        timeouts: Timeouts,
        deadline: Instant,
    ) -> Result<(http::Response<WasiBody>, IoFuture), HttpError> {
        let candidates = self.lookup(timeouts.dns).await?;
        let allowed = self.screen(&candidates)?;
        let slot = match self.network.connection_slot(timeouts.connect).await {
            Ok(slot) => slot,
            Err(NoSlot { max }) => {
                self.note(format!(
                    "all {max} of the host's outbound connections stayed in use for {} \
                     (connect_timeout)",
                    show(timeouts.connect)
                ));
                return Err(HttpError::ConnectionLimitReached);
            }
        };
        let (stream, addr) = self.connect(&allowed, timeouts.connect).await?;

        let handshake = async {
            let io: Box<dyn Io> = if self.https {
                Box::new(self.tls(stream).await?)
            } else {
                Box::new(stream)
            };
            hyper::client::conn::http1::Builder::new()
                .handshake::<_, WasiBody>(TokioIo::new(io))
                .await
                .map_err(|e| {
                    self.note(format!("HTTP handshake with {addr} failed: {e}"));
                    HttpError::from(e)
                })
        };
        let (mut sender, conn) = match tokio::time::timeout(timeouts.connect, handshake).await {
            Ok(result) => result?,
            Err(_) => {
                self.note(format!(
                    "handshake with {addr} took longer than {} (connect_timeout)",
                    show(timeouts.connect)
                ));
                return Err(HttpError::ConnectionTimeout);
            }
        };

        // The head carries only the path: scheme and authority are for proxies.
        *request.uri_mut() = origin_form(request.uri())?;
        let budget = self.budget.clone();
        let request = request.map(|body| {
            body.map_frame(move |frame| {
                if let Some(data) = frame.data_ref() {
                    budget.count_sent(data.len());
                }
                frame
            })
            .boxed_unsync()
        });

        // Drive the connection while waiting for the response head.
        let mut conn = Some(conn);
        let mut send = pin!(tokio::time::timeout(
            timeouts.first_byte,
            sender.send_request(request)
        ));
        let head = poll_fn(|cx| {
            if let Poll::Ready(result) = send.as_mut().poll(cx) {
                return Poll::Ready(result);
            }
            let Some(driver) = conn.as_mut() else {
                return Poll::Pending;
            };
            match Pin::new(driver).poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Ok(())) => {
                    conn = None;
                    send.as_mut().poll(cx)
                }
                Poll::Ready(Err(e)) => {
                    conn = None;
                    Poll::Ready(Ok(Err(e)))
                }
            }
        })
        .await;
        let response = match head {
            Ok(Ok(response)) => response,
            Ok(Err(e)) => {
                self.note(format!("{addr}: {e}"));
                return Err(HttpError::from(e));
            }
            Err(_) => {
                self.note(format!(
                    "{addr} sent no response within {} (first_byte_timeout)",
                    show(timeouts.first_byte)
                ));
                return Err(HttpError::HttpResponseTimeout);
            }
        };

        let cap = self.network.limits().max_response_body_bytes;
        let announced = response.body().size_hint().lower();
        if announced > cap {
            self.note(format!(
                "the response body is {announced} bytes, over the {cap}-byte cap (max_response_body_bytes)"
            ));
            return Err(HttpError::HttpResponseBodySize(Some(announced)));
        }
        self.note(format!("via {addr}: {}", response.status()));

        let (trace, target) = (self.trace.clone(), Arc::clone(&self.target));
        let between_bytes = timeouts.between_bytes;
        let budget = self.budget.clone();
        let response = response.map(|incoming| {
            CappedBody {
                incoming: Some(incoming),
                received: 0,
                budget,
                cap,
                between_bytes,
                idle: Box::pin(tokio::time::sleep(between_bytes)),
                deadline: Box::pin(tokio::time::sleep_until(deadline)),
                trace,
                target,
            }
            .boxed_unsync()
        });
        let io = async move {
            // The connection's slot is freed when the connection closes.
            let _slot = slot;
            let Some(conn) = conn else {
                return Ok(());
            };
            match tokio::time::timeout_at(deadline, conn).await {
                Ok(result) => result.map_err(HttpError::from),
                Err(_) => Err(HttpError::HttpResponseTimeout),
            }
        };
        Ok((response, Box::new(io)))
    }

    /// The addresses to consider: the literal itself, or one DNS lookup.
    async fn lookup(&self, timeout: Duration) -> Result<Vec<IpAddr>, HttpError> {
        if let Ok(ip) = self.host.parse::<IpAddr>() {
            return Ok(vec![ip]);
        }
        let host = &self.host;
        let started = tokio::time::Instant::now();
        let _slot = match self.network.lookup_slot(timeout).await {
            Ok(slot) => slot,
            Err(NoSlot { max }) => {
                self.note(format!(
                    "all {max} of the host's DNS lookup slots stayed in use for {} (dns_timeout)",
                    show(timeout)
                ));
                return Err(HttpError::DnsTimeout);
            }
        };
        let timeout = timeout.saturating_sub(started.elapsed());
        match tokio::time::timeout(timeout, self.network.resolver().resolve(host)).await {
            Ok(Ok(ips)) if !ips.is_empty() => Ok(ips),
            Ok(Ok(_)) => {
                self.note(format!("DNS lookup of {host} returned no addresses"));
                Err(dns_error())
            }
            Ok(Err(e)) => {
                self.note(format!("DNS lookup of {host} failed: {e}"));
                Err(dns_error())
            }
            Err(_) => {
                self.note(format!(
                    "DNS lookup of {host} took longer than {} (dns_timeout)",
                    show(timeout)
                ));
                Err(HttpError::DnsTimeout)
            }
        }
    }

    /// Keep the addresses that are globally routable or named literally by
    /// an allow-list entry for this scheme and port. None left is a refusal.
    fn screen(&self, candidates: &[IpAddr]) -> Result<Vec<IpAddr>, HttpError> {
        let scheme = if self.https { "https" } else { "http" };
        let mut allowed: Vec<IpAddr> = Vec::new();
        let mut refused: Vec<(IpAddr, SpecialRange)> = Vec::new();
        for &ip in candidates {
            if allowed.contains(&ip) || refused.iter().any(|(r, _)| *r == ip) {
                continue;
            }
            match special_range(ip) {
                None => allowed.push(ip),
                Some(_) if self.allow.names_ip(scheme, ip, self.port) => allowed.push(ip),
                Some(range) => refused.push((ip, range)),
            }
        }
        let listing = refused
            .iter()
            .map(|(ip, range)| format!("{ip} is {range}"))
            .collect::<Vec<_>>()
            .join("; ");
        let resolution = if self.host.parse::<IpAddr>().is_ok() {
            String::new()
        } else {
            let all: Vec<String> = candidates.iter().map(IpAddr::to_string).collect();
            format!("{} resolves to {}; ", self.host, all.join(", "))
        };
        if allowed.is_empty() {
            let example = refused.first().map_or_else(String::new, |(ip, _)| {
                format!(" (such as \"{scheme}://{}:{}\")", url_host(*ip), self.port)
            });
            self.trace.host(format!(
                "http: refused {}: {resolution}{listing}: not a globally routable address, \
                 and no `http` entry names it literally{example}",
                self.target,
            ));
            return Err(HttpError::DestinationIpProhibited);
        }
        if !refused.is_empty() {
            self.note(format!("{resolution}skipped {listing}"));
        }
        Ok(allowed)
    }

    /// Connect to the first checked address that answers.
    async fn connect(
        &self,
        allowed: &[IpAddr],
        timeout: Duration,
    ) -> Result<(TcpStream, SocketAddr), HttpError> {
        let mut last = HttpError::DestinationUnavailable;
        for &ip in allowed.iter().take(MAX_ADDRESSES_TRIED) {
            let addr = SocketAddr::new(ip, self.port);
            match tokio::time::timeout(timeout, self.network.dialer().dial(addr)).await {
                Ok(Ok(stream)) => return Ok((stream, addr)),
                Ok(Err(e)) => {
                    self.note(format!("connecting to {addr} failed: {e}"));
                    last = connect_error(e);
                }
                Err(_) => {
                    self.note(format!(
                        "connecting to {addr} took longer than {} (connect_timeout)",
                        show(timeout)
                    ));
                    last = HttpError::ConnectionTimeout;
                }
            }
        }
        Err(last)
    }

    /// TLS over `stream`, verified against the web PKI for the host name the
    /// guest asked for (also its SNI), not the address dialed.
    async fn tls(
        &self,
        stream: TcpStream,
    ) -> Result<tokio_rustls::client::TlsStream<TcpStream>, HttpError> {
        use rustls::pki_types::ServerName;
        let config = tls_config()?;
        let name = match self.host.parse::<IpAddr>() {
            Ok(ip) => ServerName::IpAddress(ip.into()),
            Err(_) => ServerName::try_from(self.host.clone()).map_err(|e| {
                self.note(format!(
                    "{:?} is not a valid TLS server name: {e}",
                    self.host
                ));
                HttpError::HttpRequestUriInvalid
            })?,
        };
        tokio_rustls::TlsConnector::from(config)
            .connect(name, stream)
            .await
            .map_err(|e| {
                self.note(format!("TLS with {} failed: {e}", self.host));
                tls_error(&e)
            })
    }

    /// A trace line about this request.
    fn note(&self, message: String) {
        self.trace.host(format!("http: {}: {message}", self.target));
    }
}

/// A connection the HTTP client can run over: plain TCP or TLS.
trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// An IP address as it appears in a URL (IPv6 in brackets).
fn url_host(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    }
}

/// The process-wide TLS client configuration: web PKI roots, ring, HTTP/1.1.
pub(crate) fn tls_config() -> Result<Arc<rustls::ClientConfig>, HttpError> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let mut config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .with_root_certificates(roots)
                .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Ok(Arc::new(config))
        })
        .clone()
        .map_err(|e| HttpError::InternalError(Some(format!("TLS configuration: {e}"))))
}

/// The request target in origin form: path and query only.
fn origin_form(uri: &http::Uri) -> Result<http::Uri, HttpError> {
    let path_and_query = uri.path_and_query().map_or("/", |p| p.as_str());
    let path_and_query = if path_and_query.is_empty() {
        "/"
    } else {
        path_and_query
    };
    http::Uri::builder()
        .path_and_query(path_and_query)
        .build()
        .map_err(|_| HttpError::HttpRequestUriInvalid)
}

fn dns_error() -> HttpError {
    HttpError::DnsError {
        rcode: None,
        info_code: None,
    }
}

fn connect_error(e: io::Error) -> HttpError {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => HttpError::ConnectionRefused,
        io::ErrorKind::TimedOut => HttpError::ConnectionTimeout,
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
            HttpError::ConnectionTerminated
        }
        io::ErrorKind::HostUnreachable | io::ErrorKind::NetworkUnreachable => {
            HttpError::DestinationUnavailable
        }
        _ => HttpError::Connect(e),
    }
}

fn tls_error(e: &io::Error) -> HttpError {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(rustls::Error::InvalidCertificate(_)) => HttpError::TlsCertificateError,
        Some(rustls::Error::AlertReceived(alert)) => HttpError::TlsAlertReceived {
            alert_id: Some(u8::from(*alert)),
            alert_message: Some(format!("{alert:?}")),
        },
        Some(_) => HttpError::TlsProtocolError,
        None => match e.kind() {
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted => HttpError::ConnectionTerminated,
            _ => HttpError::TlsProtocolError,
        },
    }
}

/// `Instant::now() + duration`, saturating far in the future.
fn after(duration: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(duration)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600))
}

/// A duration as trace lines show it.
fn show(duration: Duration) -> String {
    format!("{}ms", duration.as_millis())
}

/// A response body that errors, instead of growing, past the byte cap, and
/// when the body stalls or the request's time is up.
struct CappedBody {
    /// `None` once the body ended or failed.
    incoming: Option<Incoming>,
    received: u64,
    /// Where the call's received bytes are counted.
    budget: RequestBudget,
    cap: u64,
    between_bytes: Duration,
    idle: Pin<Box<Sleep>>,
    deadline: Pin<Box<Sleep>>,
    trace: TraceLog,
    target: Arc<str>,
}

type FramePoll = Poll<Option<Result<Frame<Bytes>, HttpError>>>;

impl CappedBody {
    fn fail(&mut self, error: HttpError, message: &str) -> FramePoll {
        self.incoming = None;
        self.trace.host(format!("http: {}: {message}", self.target));
        Poll::Ready(Some(Err(error)))
    }
}

impl Body for CappedBody {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> FramePoll {
        let this = self.get_mut();
        let Some(incoming) = this.incoming.as_mut() else {
            return Poll::Ready(None);
        };
        match Pin::new(incoming).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.budget.count_received(data.len());
                    let len = u64::try_from(data.len()).unwrap_or(u64::MAX);
                    this.received = this.received.saturating_add(len);
                    if this.received > this.cap {
                        let message = format!(
                            "the response body passed the {}-byte cap (max_response_body_bytes)",
                            this.cap
                        );
                        let size = this.received;
                        return this.fail(HttpError::HttpResponseBodySize(Some(size)), &message);
                    }
                }
                let next = after(this.between_bytes);
                this.idle.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                let error = if e.is_timeout() {
                    HttpError::HttpResponseTimeout
                } else {
                    HttpError::from(e)
                };
                let message = format!("reading the response body failed: {error}");
                this.fail(error, &message)
            }
            Poll::Ready(None) => {
                this.incoming = None;
                Poll::Ready(None)
            }
            Poll::Pending => {
                if this.deadline.as_mut().poll(cx).is_ready() {
                    return this.fail(
                        HttpError::HttpResponseTimeout,
                        "the response body was still arriving at the request_timeout",
                    );
                }
                if this.idle.as_mut().poll(cx).is_ready() {
                    let message = format!(
                        "the response body stalled for {} (between_bytes_timeout)",
                        show(this.between_bytes)
                    );
                    return this.fail(HttpError::ConnectionReadTimeout, &message);
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.incoming.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.incoming
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), Body::size_hint)
    }
}
