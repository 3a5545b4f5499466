//! MCP servers as tool sources: the host's client side of MCP.
//!
//! [`Upstreams`] holds one [`Upstream`] per declared server, across reloads
//! (a server whose declaration is unchanged keeps its connection). An
//! [`Upstream`] starts its server (or opens its HTTP session) when first
//! needed, lists its tools, calls them, and starts it again with backoff
//! when it dies. A `url` server whose `auth_headers` map a session's `auth`
//! to request headers gets one connection per set of credentials, so two
//! sessions with different credentials never share one. What the tools
//! become on the host is the registry's business (`registry::mcp`), and a
//! call of one is one step of the call pipeline (`call::upstream`).
//!
//! A server's `notifications/tools/list_changed` bumps [`Upstreams::changes`],
//! which the reload watcher follows.

mod handler;
mod http;
mod stdio;

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode, JsonObject, Tool as McpTool};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceError};

use self::handler::Handler;
use crate::caps::http::Network;
use crate::config::Config;
use crate::config::mcp::{McpServer, McpTransport, Startup};

/// The longest wait before a server that keeps dying is started again.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a server must have run for its next exit to count as a first
/// failure again (no backoff).
const STABLE_AFTER: Duration = Duration::from_secs(60);
/// The most connections with distinct credentials one server keeps; the
/// least recently used one is closed to make room.
pub const MAX_CREDENTIAL_SETS: usize = 64;
/// The most sessions one connection remembers as its users.
const MAX_HOLDERS: usize = 1024;

/// What keeps a connection with credentials open: the session a call came
/// from, held weakly (the connection closes with the last of them).
pub type Holder = Weak<dyn Any + Send + Sync>;

/// Request headers made from a session's `auth` (`auth_headers`), sorted:
/// one connection each.
pub type Credentials = BTreeMap<String, String>;

/// The host's connections to the MCP servers its config declares.
pub struct Upstreams {
    /// The host directory (stdio servers' `cwd` is relative to it).
    dir: PathBuf,
    /// How `url` servers are reached.
    network: Network,
    servers: std::sync::Mutex<BTreeMap<String, Arc<Upstream>>>,
    changes: tokio::sync::watch::Sender<u64>,
}

impl std::fmt::Debug for Upstreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstreams")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Upstreams {
    /// No connections yet, for the host directory `dir`, reaching `url`
    /// servers through `network`.
    pub fn new(dir: impl Into<PathBuf>, network: Network) -> Self {
        Self {
            dir: dir.into(),
            network,
            servers: std::sync::Mutex::default(),
            changes: tokio::sync::watch::Sender::new(0),
        }
    }

    /// The connection of every server `config` declares: the one held
    /// already where the declaration is unchanged, a new one (not started
    /// yet) otherwise; a held one declared differently now is stopped.
    /// Servers `config` does not declare are left alone (another agent may
    /// declare them): [`Upstreams::retain`] stops those no agent declares.
    pub fn for_config(&self, config: &Config) -> BTreeMap<String, Arc<Upstream>> {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        let mut wanted = BTreeMap::new();
        for spec in &config.mcp_servers {
            let upstream = match servers.get(&spec.name) {
                Some(held) if held.spec == *spec => held.clone(),
                _ => {
                    let fresh = Arc::new(Upstream {
                        spec: spec.clone(),
                        dir: self.dir.clone(),
                        network: self.network.clone(),
                        links: std::sync::Mutex::default(),
                        changes: self.changes.clone(),
                    });
                    if let Some(replaced) = servers.insert(spec.name.clone(), fresh.clone()) {
                        tokio::spawn(async move { replaced.stop().await });
                    }
                    fresh
                }
            };
            wanted.insert(spec.name.clone(), upstream);
        }
        wanted
    }

    /// Stop every held server whose name `declared` does not hold (no
    /// agent declares it any more).
    pub fn retain(&self, declared: &BTreeSet<String>) {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        let gone: Vec<String> = servers
            .keys()
            .filter(|name| !declared.contains(*name))
            .cloned()
            .collect();
        for name in gone {
            if let Some(upstream) = servers.remove(&name) {
                tokio::spawn(async move { upstream.stop().await });
            }
        }
    }

    /// Start, in the background, every server `config` declares with
    /// `startup = "eager"`.
    pub fn start_eager(&self, config: &Config) {
        for (_, upstream) in self.for_config(config) {
            if upstream.spec.startup == Startup::Eager {
                tokio::spawn(async move {
                    if let Err(reason) = upstream.peer(&Credentials::new(), None).await {
                        tracing::warn!("MCP server `{}`: {reason}", upstream.spec.name);
                    }
                });
            }
        }
    }

    /// A receiver marked changed whenever a server says its tools changed.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Stop every server.
    pub async fn stop_all(&self) {
        let servers =
            std::mem::take(&mut *self.servers.lock().unwrap_or_else(PoisonError::into_inner));
        for (_, upstream) in servers {
            upstream.stop().await;
        }
    }
}

/// One declared MCP server and the host's connections to it.
pub struct Upstream {
    spec: McpServer,
    dir: PathBuf,
    network: Network,
    /// One connection per set of credentials (none: the listing's, and
    /// every call without mapped credentials).
    links: std::sync::Mutex<BTreeMap<Credentials, Arc<Link>>>,
    changes: tokio::sync::watch::Sender<u64>,
}

/// One connection to a server, and its restart bookkeeping.
#[derive(Default)]
struct Link {
    state: tokio::sync::Mutex<State>,
    /// When it was last used, to close the least recently used first.
    used: std::sync::Mutex<Option<Instant>>,
    /// The sessions that used it: a connection with credentials is closed
    /// once none of them is alive.
    holders: std::sync::Mutex<Vec<Holder>>,
}

impl Link {
    /// Whether a session that used it is still alive (the dead are forgotten).
    fn held(&self) -> bool {
        let mut holders = self.holders.lock().unwrap_or_else(PoisonError::into_inner);
        holders.retain(|holder| holder.strong_count() > 0);
        !holders.is_empty()
    }

    /// Remember `holder` as one of its users.
    fn hold(&self, holder: &Holder) {
        let mut holders = self.holders.lock().unwrap_or_else(PoisonError::into_inner);
        if holders.iter().any(|h| h.ptr_eq(holder)) {
            return;
        }
        if holders.len() >= MAX_HOLDERS {
            holders.retain(|h| h.strong_count() > 0);
        }
        if holders.len() < MAX_HOLDERS {
            holders.push(holder.clone());
        }
    }
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

/// A server's connection and its restart bookkeeping.
#[derive(Default)]
struct State {
    running: Option<Connection>,
    /// Exits and failed starts in a row.
    failures: u32,
    /// No start is tried before this.
    retry_at: Option<Instant>,
    /// Why the last start failed, or how the server last ended.
    last_error: Option<String>,
}

/// A started server.
struct Connection {
    service: RunningService<RoleClient, Handler>,
    /// The server's process, for a stdio server.
    process: Option<stdio::Process>,
    started: Instant,
}

impl Connection {
    /// Whether the server still runs and its connection is open.
    fn alive(&mut self) -> bool {
        !self.service.is_closed()
            && !self.service.peer().is_transport_closed()
            && self.process.as_mut().is_none_or(stdio::Process::running)
    }
}

/// Why a call of an upstream tool got no result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    /// The server could not be reached, ended the connection, or answered
    /// with an error other than refusing the request: another attempt may
    /// work.
    #[error("{0}")]
    Unreachable(String),
    /// The server refused the request (an unknown tool, arguments it
    /// rejects) or answered something that is not a tool result.
    #[error("{0}")]
    Protocol(String),
}

impl Upstream {
    /// Its declaration.
    pub fn spec(&self) -> &McpServer {
        &self.spec
    }

    /// The tools the server reports, starting it if it is not running.
    pub async fn list_tools(&self) -> Result<Vec<McpTool>, String> {
        let listing = async {
            let peer = self.peer(&Credentials::new(), None).await?;
            peer.list_all_tools()
                .await
                .map_err(|e| format!("listing its tools failed: {}", self.service_error(&e)))
        };
        tokio::time::timeout(self.spec.startup_timeout, listing)
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "it did not list its tools within {} ms (startup_timeout_ms)",
                    self.spec.startup_timeout.as_millis()
                ))
            })
    }

    /// The headers `auth_headers` makes of a session's credentials (none
    /// for a server that maps none, or a session that has none).
    pub fn credentials(&self, given: &crate::session::Credentials) -> Result<Credentials, String> {
        let McpTransport::Url { auth_headers, .. } = &self.spec.transport else {
            return Ok(Credentials::new());
        };
        let mut credentials = Credentials::new();
        for (header, field) in auth_headers {
            let Some(text) = given.get(field) else {
                continue;
            };
            ::http::HeaderValue::try_from(text).map_err(|_| {
                format!(
                    "the session's credentials field `{field}` cannot be sent as the `{header}` \
                     header"
                )
            })?;
            credentials.insert(header.clone(), text.to_string());
        }
        Ok(credentials)
    }

    /// Call its tool `name` with `arguments`, on the connection for
    /// `credentials`, which `holder` (the call's session) keeps open.
    /// Dropping the future cancels the request on the server
    /// (`notifications/cancelled`).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: JsonObject,
        credentials: &Credentials,
        holder: &Holder,
    ) -> Result<CallToolResult, UpstreamError> {
        let peer = self
            .peer(credentials, Some(holder))
            .await
            .map_err(UpstreamError::Unreachable)?;
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        peer.call_tool(params).await.map_err(|e| match &e {
            // The server refused the request itself (unknown tool, bad
            // arguments): asking again gets the same answer.
            ServiceError::McpError(data)
                if [ErrorCode::INVALID_PARAMS, ErrorCode::METHOD_NOT_FOUND]
                    .contains(&data.code) =>
            {
                UpstreamError::Protocol(self.service_error(&e))
            }
            ServiceError::McpError(_)
            | ServiceError::TransportClosed
            | ServiceError::TransportSend(_) => UpstreamError::Unreachable(self.service_error(&e)),
            _ => UpstreamError::Protocol(self.service_error(&e)),
        })
    }

    /// How many connections it holds (each set of credentials in use has
    /// one; the listing's is the one without).
    pub fn connections(&self) -> usize {
        self.links
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The connection for `credentials`, made on first use, remembering
    /// `holder` as a user. A connection with credentials none of whose
    /// sessions is alive is closed; past [`MAX_CREDENTIAL_SETS`], so is the
    /// least recently used.
    fn link(&self, credentials: &Credentials, holder: Option<&Holder>) -> Arc<Link> {
        let mut links = self.links.lock().unwrap_or_else(PoisonError::into_inner);
        links.retain(|key, link| key.is_empty() || link.held());
        if !links.contains_key(credentials) && links.len() > MAX_CREDENTIAL_SETS {
            let oldest = links
                .iter()
                .filter(|(key, _)| !key.is_empty())
                .min_by_key(|(_, link)| *link.used.lock().unwrap_or_else(PoisonError::into_inner))
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                links.remove(&oldest);
            }
        }
        let link = links.entry(credentials.clone()).or_default().clone();
        *link.used.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
        if let Some(holder) = holder {
            link.hold(holder);
        }
        link
    }

    /// The client of the running server for `credentials`: started (again)
    /// if it is not running and its backoff has passed.
    async fn peer(
        &self,
        credentials: &Credentials,
        holder: Option<&Holder>,
    ) -> Result<Peer<RoleClient>, String> {
        let link = self.link(credentials, holder);
        let mut state = link.state.lock().await;
        if let Some(running) = &mut state.running {
            if running.alive() {
                return Ok(running.service.peer().clone());
            }
            let ended = match state.running.take() {
                Some(mut connection) => {
                    let lived = connection.started.elapsed();
                    let how = match &mut connection.process {
                        Some(process) => process.ended().await,
                        None => "closed its HTTP session".to_string(),
                    };
                    if lived >= STABLE_AFTER {
                        state.failures = 0;
                    }
                    how
                }
                None => String::new(),
            };
            tracing::warn!("MCP server `{}` {ended}", self.spec.name);
            state.fail(format!("it {ended}"));
        }
        if let Some(at) = state.retry_at.filter(|at| *at > Instant::now()) {
            return Err(format!(
                "it is restarted in {} ms, after {} failures in a row (last: {})",
                at.saturating_duration_since(Instant::now()).as_millis(),
                state.failures,
                state.last_error.as_deref().unwrap_or("unknown")
            ));
        }
        let started =
            tokio::time::timeout(self.spec.startup_timeout, self.start(credentials)).await;
        match started.unwrap_or_else(|_| {
            Err(format!(
                "it did not start within {} ms (startup_timeout_ms)",
                self.spec.startup_timeout.as_millis()
            ))
        }) {
            Ok(connection) => {
                let peer = connection.service.peer().clone();
                state.running = Some(connection);
                state.retry_at = None;
                Ok(peer)
            }
            Err(reason) => {
                state.fail(reason.clone());
                Err(reason)
            }
        }
    }

    /// Start the server (or open an HTTP session with it, sending
    /// `credentials`) and initialize the MCP session.
    async fn start(&self, credentials: &Credentials) -> Result<Connection, String> {
        use rmcp::ServiceExt as _;
        let handler = Handler::new(self.spec.name.clone(), self.changes.clone());
        let (service, process) = match &self.spec.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let cwd = cwd
                    .as_ref()
                    .map_or_else(|| self.dir.clone(), |cwd| self.dir.join(cwd));
                let (process, transport) = stdio::spawn(&self.spec.name, command, args, env, &cwd)?;
                let service = handler.serve(transport).await;
                (service, Some(process))
            }
            McpTransport::Url { url, headers, .. } => {
                use rmcp::transport::StreamableHttpClientTransport;
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                let mut sent = std::collections::HashMap::new();
                for (name, value) in headers.iter().chain(credentials) {
                    let name = ::http::HeaderName::try_from(name.as_str())
                        .map_err(|e| format!("`{name}` is not a header name: {e}"))?;
                    let value = ::http::HeaderValue::try_from(value.as_str())
                        .map_err(|e| format!("the `{name}` header's value is not valid: {e}"))?;
                    sent.insert(name, value);
                }
                let client =
                    http::EgressClient::new(self.network.clone(), self.spec.screened.clone())?;
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(sent);
                let transport = StreamableHttpClientTransport::with_client(client, config);
                (handler.serve(transport).await, None)
            }
        };
        let service = service.map_err(|e| {
            format!(
                "it did not complete the MCP handshake: {}",
                self.handshake_error(&e)
            )
        })?;
        tracing::info!("MCP server `{}` started", self.spec.name);
        Ok(Connection {
            service,
            process,
            started: Instant::now(),
        })
    }

    /// Stop the server, if it runs (every connection to it).
    pub async fn stop(&self) {
        let links = std::mem::take(&mut *self.links.lock().unwrap_or_else(PoisonError::into_inner));
        for link in links.into_values() {
            let running = link.state.lock().await.running.take();
            if let Some(connection) = running {
                let Connection {
                    service, process, ..
                } = connection;
                let _ = service.cancel().await;
                if let Some(mut process) = process {
                    process.stop().await;
                }
            }
        }
    }
}

impl State {
    /// Record a failed start or an exit: the next start waits longer.
    fn fail(&mut self, reason: String) {
        self.failures = self.failures.saturating_add(1);
        let wait = match self.failures {
            0 | 1 => Duration::ZERO,
            n => Duration::from_millis(250)
                .saturating_mul(1 << (n - 2).min(10))
                .min(MAX_BACKOFF),
        };
        self.retry_at = Some(Instant::now() + wait);
        self.last_error = Some(reason);
    }
}

impl Upstream {
    /// A client error in words: for a server an agent made over the API
    /// declared, what the server said is not quoted (only its error code,
    /// and this host's own reasons, such as a refused address).
    fn service_error(&self, error: &ServiceError) -> String {
        let screened = self.spec.screened.is_some();
        match error {
            ServiceError::McpError(data) if screened => {
                format!("the server answered error {}", data.code.0)
            }
            ServiceError::McpError(data) => format!(
                "the server answered error {}: {}",
                data.code.0, data.message
            ),
            ServiceError::TransportClosed => "the server closed the connection".to_string(),
            ServiceError::TransportSend(_) => error.to_string(),
            _ if screened => "the server gave an answer this host cannot use".to_string(),
            other => other.to_string(),
        }
    }

    /// Why the MCP handshake failed, in words (what the server said is not
    /// quoted for a server an agent made over the API declared).
    fn handshake_error(&self, error: &rmcp::service::ClientInitializeError) -> String {
        use rmcp::service::ClientInitializeError as Failed;
        match error {
            Failed::TransportError { .. } | Failed::ConnectionClosed(_) => error.to_string(),
            _ if self.spec.screened.is_some() => {
                "the server's answers were not an MCP handshake".to_string()
            }
            other => other.to_string(),
        }
    }
}
