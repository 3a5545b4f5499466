//! How the host reaches the network for tools: a [`Resolver`], a [`Dialer`]
//! and the [`HttpLimits`], bundled in a [`Network`] built once per host.
//!
//! The defaults use the system resolver and plain TCP. Tests inject scripted
//! ones through [`crate::HostBuilder::network`] so that DNS answers can be
//! anything (including answers that change between lookups) and no packet
//! ever leaves the loopback interface.

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A boxed, sendable future, as the [`Resolver`] and [`Dialer`] return (the
/// `futures` crate's, which the call pipeline's traits return too).
pub use futures::future::BoxFuture;

/// Turns a host name into addresses. Called once per request, never for an
/// IP literal; every address it returns is checked before any is dialed.
pub trait Resolver: Send + Sync {
    /// The addresses `host` resolves to, in order of preference.
    fn resolve<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>>;
}

/// Opens TCP connections. Only ever given an address that passed the checks.
pub trait Dialer: Send + Sync {
    /// Connect to `addr`.
    fn dial(&self, addr: SocketAddr) -> BoxFuture<'_, io::Result<TcpStream>>;
}

/// The system's name servers and hosts file (`/etc/resolv.conf`,
/// `/etc/hosts`), asked by hickory-resolver in-process. A lookup is a
/// future, not a blocking `getaddrinfo` call: it ends when its request does,
/// so a slow name server never holds a thread of tokio's blocking pool.
/// The configuration is read at the first lookup.
#[derive(Default)]
pub struct SystemResolver {
    resolver: std::sync::OnceLock<Result<hickory_resolver::TokioResolver, String>>,
}

impl SystemResolver {
    fn resolver(&self) -> io::Result<&hickory_resolver::TokioResolver> {
        self.resolver
            .get_or_init(|| {
                hickory_resolver::TokioResolver::builder_tokio()
                    .and_then(hickory_resolver::ResolverBuilder::build)
                    .map_err(|e| format!("cannot read the system's DNS configuration: {e}"))
            })
            .as_ref()
            .map_err(|e| io::Error::other(e.clone()))
    }
}

/// The most addresses of one answer a request considers: a name a tool's
/// server controls can answer with thousands.
pub const MAX_ADDRESSES: usize = 32;

impl Resolver for SystemResolver {
    fn resolve<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        Box::pin(async move {
            let answer = self.resolver()?.lookup_ip(host).await;
            let mut ips: Vec<IpAddr> = Vec::new();
            for ip in answer.map_err(io::Error::other)?.iter() {
                if ips.len() == MAX_ADDRESSES {
                    break;
                }
                if !ips.contains(&ip) {
                    ips.push(ip);
                }
            }
            Ok(ips)
        })
    }
}

/// Plain TCP connections ([`TcpStream::connect`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemDialer;

impl Dialer for SystemDialer {
    fn dial(&self, addr: SocketAddr) -> BoxFuture<'_, io::Result<TcpStream>> {
        Box::pin(TcpStream::connect(addr))
    }
}

/// The default cap on requests per call.
pub const DEFAULT_MAX_REQUESTS_PER_CALL: u32 = 100;
/// The default cap on one response body, in bytes (10 MiB).
pub const DEFAULT_MAX_RESPONSE_BODY_BYTES: u64 = 10 * 1024 * 1024;
/// The default time a DNS lookup may take.
pub const DEFAULT_DNS_TIMEOUT: Duration = Duration::from_secs(5);
/// The default time connecting may take (TCP, then TLS and the HTTP handshake).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default wait for the response head once the request is sent.
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(30);
/// The default wait between two frames of a response body.
pub const DEFAULT_BETWEEN_BYTES_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time one request may take in all, from lookup to last byte.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Outbound connections open at once for every tool together, by default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// DNS lookups in flight at once for every tool together, by default.
pub const DEFAULT_MAX_LOOKUPS: usize = 32;

/// Caps on a tool's outbound HTTP. The call's own deadline (`timeout_ms`)
/// bounds everything as well. A tool may ask for shorter timeouts through
/// `wasi:http` request options, never longer ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Requests a call may attempt, refused ones included. Each
    /// [`HttpCtx`](super::HttpCtx) counts against a fresh budget of this size
    /// unless it is given a shared one ([`super::HttpCtx::with_budget`]).
    pub max_requests_per_call: u32,
    /// Bytes one response body may have.
    pub max_response_body_bytes: u64,
    /// How long a DNS lookup may take.
    pub dns_timeout: Duration,
    /// How long a TCP connect may take, and again TLS plus the HTTP handshake.
    pub connect_timeout: Duration,
    /// How long the response head may take once the request is sent.
    pub first_byte_timeout: Duration,
    /// How long the response body may pause between frames.
    pub between_bytes_timeout: Duration,
    /// How long one request may take in all, body included.
    pub request_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            max_requests_per_call: DEFAULT_MAX_REQUESTS_PER_CALL,
            max_response_body_bytes: DEFAULT_MAX_RESPONSE_BODY_BYTES,
            dns_timeout: DEFAULT_DNS_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            first_byte_timeout: DEFAULT_FIRST_BYTE_TIMEOUT,
            between_bytes_timeout: DEFAULT_BETWEEN_BYTES_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    }
}

/// How tools reach the network: resolver, dialer and limits. Built once per
/// [`crate::Host`]; cloning shares the resolver and dialer.
///
/// ```
/// use std::time::Duration;
/// use toolhost::caps::http::{HttpLimits, Network};
///
/// let network = Network::system().with_limits(HttpLimits {
///     max_requests_per_call: 20,
///     connect_timeout: Duration::from_secs(3),
///     ..HttpLimits::default()
/// });
/// assert_eq!(network.limits().max_requests_per_call, 20);
/// ```
#[derive(Clone)]
pub struct Network {
    resolver: Arc<dyn Resolver>,
    dialer: Arc<dyn Dialer>,
    limits: HttpLimits,
    slots: Arc<Slots>,
}

/// What every tool's requests share, host-wide: connection and lookup slots.
struct Slots {
    connections: Arc<Semaphore>,
    max_connections: usize,
    lookups: Arc<Semaphore>,
    max_lookups: usize,
}

impl Slots {
    fn new(max_connections: usize, max_lookups: usize) -> Arc<Self> {
        Arc::new(Self {
            connections: Arc::new(Semaphore::new(max_connections)),
            max_connections,
            lookups: Arc::new(Semaphore::new(max_lookups)),
            max_lookups,
        })
    }
}

/// A host-wide slot ran out while a request waited for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NoSlot {
    /// How many there are.
    pub max: usize,
}

impl Network {
    /// The system's name servers, plain TCP and the default limits.
    pub fn system() -> Self {
        Self {
            resolver: Arc::new(SystemResolver::default()),
            dialer: Arc::new(SystemDialer),
            limits: HttpLimits::default(),
            slots: Slots::new(DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_LOOKUPS),
        }
    }

    /// The same network, with at most `connections` outbound connections
    /// and `lookups` DNS lookups at once for every tool together (a new
    /// pool of slots, shared by this network's clones).
    pub fn with_slots(mut self, connections: usize, lookups: usize) -> Self {
        self.slots = Slots::new(connections.max(1), lookups.max(1));
        self
    }

    /// The same network, resolving names with `resolver`.
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// The same network, connecting with `dialer`.
    pub fn with_dialer(mut self, dialer: Arc<dyn Dialer>) -> Self {
        self.dialer = dialer;
        self
    }

    /// The same network with other limits.
    pub fn with_limits(mut self, limits: HttpLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits in force.
    pub fn limits(&self) -> &HttpLimits {
        &self.limits
    }

    pub(super) fn resolver(&self) -> &Arc<dyn Resolver> {
        &self.resolver
    }

    pub(super) fn dialer(&self) -> &Arc<dyn Dialer> {
        &self.dialer
    }

    /// A slot for one outbound connection, held while it is open; waits up
    /// to `wait` for one to free.
    pub(super) async fn connection_slot(
        &self,
        wait: Duration,
    ) -> Result<OwnedSemaphorePermit, NoSlot> {
        let slots = &self.slots;
        acquire(&slots.connections, wait, slots.max_connections).await
    }

    /// A connection to `host`:`port` for the host's own requests (an MCP
    /// server's `url`), under the same address rules as a tool's: a name
    /// is resolved once and only its globally routable addresses are
    /// dialed; an IP literal is dialed whatever its class when the operator
    /// wrote it (`screened` is `None`). For a connection someone other than
    /// the operator asked for (a server an agent made over the API
    /// declared, a request from `bash`'s sandbox), `screened` holds the
    /// allow-list the operator wrote for it: every address, a literal's
    /// too, is dialed only if globally routable or named literally there,
    /// as a tool's request is. The connection slot is held while the
    /// stream lives.
    pub(crate) async fn dial_checked(
        &self,
        host: &str,
        port: u16,
        screened: Option<Screen<'_>>,
    ) -> Result<(TcpStream, SocketAddr, OwnedSemaphorePermit), String> {
        let limits = &self.limits;
        let candidates = match host.parse::<IpAddr>() {
            Ok(ip) => {
                if let Some(screen) = screened
                    && !super::addr::is_globally_routable(ip)
                    && !screen.allowed.names_ip(screen.scheme, ip, port)
                {
                    return Err(format!(
                        "{ip} is not a globally routable address, and {} does not name it",
                        screen.key
                    ));
                }
                vec![ip]
            }
            Err(_) => {
                let _slot = self
                    .lookup_slot(limits.dns_timeout)
                    .await
                    .map_err(|NoSlot { max }| format!("all {max} DNS lookup slots are in use"))?;
                let answer = tokio::time::timeout(limits.dns_timeout, self.resolver.resolve(host));
                let ips = match answer.await {
                    Ok(Ok(ips)) => ips,
                    Ok(Err(e)) => return Err(format!("DNS lookup of {host} failed: {e}")),
                    Err(_) => return Err(format!("DNS lookup of {host} timed out")),
                };
                let (global, special): (Vec<IpAddr>, Vec<IpAddr>) =
                    ips.into_iter().partition(|ip| {
                        super::addr::is_globally_routable(*ip)
                            || screened.is_some_and(|screen| {
                                screen.allowed.names_ip(screen.scheme, *ip, port)
                            })
                    });
                if global.is_empty() {
                    let shown: Vec<String> = special.iter().map(IpAddr::to_string).collect();
                    let shown = if shown.is_empty() {
                        "no address".to_string()
                    } else {
                        shown.join(", ")
                    };
                    return Err(match screened {
                        None => format!(
                            "{host} resolves to {shown}, and only globally routable addresses \
                             are reached by name; write the address itself in `url` to reach it"
                        ),
                        Some(screen) => format!(
                            "{host} resolves to {shown}: not globally routable, and {} names \
                             none of them",
                            screen.key
                        ),
                    });
                }
                global
            }
        };
        let slot = self
            .connection_slot(limits.connect_timeout)
            .await
            .map_err(|NoSlot { max }| format!("all {max} outbound connections are in use"))?;
        let mut last = String::from("no address to try");
        for ip in candidates.into_iter().take(4) {
            let addr = SocketAddr::new(ip, port);
            match tokio::time::timeout(limits.connect_timeout, self.dialer.dial(addr)).await {
                Ok(Ok(stream)) => return Ok((stream, addr, slot)),
                Ok(Err(e)) => last = format!("cannot connect to {addr}: {e}"),
                Err(_) => last = format!("connecting to {addr} timed out"),
            }
        }
        Err(last)
    }

    /// A slot for one DNS lookup; waits up to `wait` for one to free.
    pub(super) async fn lookup_slot(&self, wait: Duration) -> Result<OwnedSemaphorePermit, NoSlot> {
        let slots = &self.slots;
        acquire(&slots.lookups, wait, slots.max_lookups).await
    }
}

async fn acquire(
    semaphore: &Arc<Semaphore>,
    wait: Duration,
    max: usize,
) -> Result<OwnedSemaphorePermit, NoSlot> {
    match tokio::time::timeout(wait, Arc::clone(semaphore).acquire_owned()).await {
        Ok(Ok(permit)) => Ok(permit),
        _ => Err(NoSlot { max }),
    }
}

/// The allow-list a connection someone other than the operator asked for
/// is screened by (`Network::dial_checked`).
#[derive(Debug, Clone, Copy)]
pub struct Screen<'a> {
    /// What the operator wrote for it.
    pub allowed: &'a super::AllowList,
    /// The scheme the connection is for (`http` or `https`).
    pub scheme: &'a str,
    /// Where the operator wrote it, as errors name it.
    pub key: &'a str,
}

impl Default for Network {
    fn default() -> Self {
        Self::system()
    }
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Network")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}
