//! MCP servers as tool sources: the host's client side of MCP.
//!
//! [`Upstreams`] holds one [`Upstream`] per declared server, across reloads
//! (a server whose declaration is unchanged keeps its connection). An
//! [`Upstream`] starts its server when first needed, lists its tools, calls
//! them, and restarts the server with backoff when it dies. What the tools
//! become on the host is the registry's business (`registry::mcp`), and a
//! call of one is one step of the call pipeline (`call::upstream`).
//!
//! A server's `notifications/tools/list_changed` bumps [`Upstreams::changes`],
//! which the reload watcher follows.

mod handler;
mod stdio;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, Tool as McpTool};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceError};

use self::handler::Handler;
use crate::config::Config;
use crate::config::mcp::{McpServer, McpTransport, Startup};

/// The longest wait before a server that keeps dying is started again.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a server must have run for its next exit to count as a first
/// failure again (no backoff).
const STABLE_AFTER: Duration = Duration::from_secs(60);

/// The host's connections to the MCP servers its config declares.
pub struct Upstreams {
    /// The host directory (stdio servers' `cwd` is relative to it).
    dir: PathBuf,
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
    /// No connections yet, for the host directory `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            servers: std::sync::Mutex::default(),
            changes: tokio::sync::watch::Sender::new(0),
        }
    }

    /// The connection of every server `config` declares: the one held
    /// already where the declaration is unchanged, a new one (not started
    /// yet) otherwise. Servers `config` no longer declares, or declares
    /// differently, are stopped.
    pub fn for_config(&self, config: &Config) -> BTreeMap<String, Arc<Upstream>> {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        let mut kept = BTreeMap::new();
        for spec in &config.mcp_servers {
            let upstream = match servers.remove(&spec.name) {
                Some(held) if held.spec == *spec => held,
                _ => Arc::new(Upstream {
                    spec: spec.clone(),
                    dir: self.dir.clone(),
                    state: tokio::sync::Mutex::default(),
                    changes: self.changes.clone(),
                }),
            };
            kept.insert(spec.name.clone(), upstream);
        }
        let dropped = std::mem::replace(&mut *servers, kept.clone());
        for (_, upstream) in dropped {
            tokio::spawn(async move { upstream.stop().await });
        }
        kept
    }

    /// Start, in the background, every server `config` declares with
    /// `startup = "eager"`.
    pub fn start_eager(&self, config: &Config) {
        for (_, upstream) in self.for_config(config) {
            if upstream.spec.startup == Startup::Eager {
                tokio::spawn(async move {
                    if let Err(reason) = upstream.peer().await {
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

/// One declared MCP server and the host's connection to it.
pub struct Upstream {
    spec: McpServer,
    dir: PathBuf,
    state: tokio::sync::Mutex<State>,
    changes: tokio::sync::watch::Sender<u64>,
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
    process: stdio::Process,
    started: Instant,
}

impl Connection {
    /// Whether the server still runs and its connection is open.
    fn alive(&mut self) -> bool {
        !self.service.is_closed()
            && !self.service.peer().is_transport_closed()
            && self.process.running()
    }
}

/// Why a call of an upstream tool got no result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    /// The server could not be reached, ended the connection, or answered
    /// with a protocol error: another attempt may work.
    #[error("{0}")]
    Unreachable(String),
    /// The server answered something that is not a tool result.
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
            let peer = self.peer().await?;
            peer.list_all_tools()
                .await
                .map_err(|e| format!("listing its tools failed: {}", service_error(&e)))
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

    /// Call its tool `name` with `arguments`. Dropping the future cancels
    /// the request on the server (`notifications/cancelled`).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, UpstreamError> {
        let peer = self.peer().await.map_err(UpstreamError::Unreachable)?;
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        peer.call_tool(params).await.map_err(|e| match e {
            ServiceError::McpError(_)
            | ServiceError::TransportClosed
            | ServiceError::TransportSend(_) => UpstreamError::Unreachable(service_error(&e)),
            other => UpstreamError::Protocol(service_error(&other)),
        })
    }

    /// The client of the running server: started (again) if it is not
    /// running and its backoff has passed.
    async fn peer(&self) -> Result<Peer<RoleClient>, String> {
        let mut state = self.state.lock().await;
        if let Some(running) = &mut state.running {
            if running.alive() {
                return Ok(running.service.peer().clone());
            }
            let ended = match state.running.take() {
                Some(mut connection) => {
                    let lived = connection.started.elapsed();
                    let how = connection.process.ended().await;
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
        let started = tokio::time::timeout(self.spec.startup_timeout, self.start()).await;
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

    /// Start the server and initialize the MCP session.
    async fn start(&self) -> Result<Connection, String> {
        use rmcp::ServiceExt as _;
        let McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } = &self.spec.transport
        else {
            return Err(
                "streamable HTTP servers (`type = \"url\"`) are not supported yet; declare a \
                 stdio server"
                    .to_string(),
            );
        };
        let cwd = cwd
            .as_ref()
            .map_or_else(|| self.dir.clone(), |cwd| self.dir.join(cwd));
        let (process, transport) = stdio::spawn(&self.spec.name, command, args, env, &cwd)?;
        let handler = Handler::new(self.spec.name.clone(), self.changes.clone());
        let service = handler
            .serve(transport)
            .await
            .map_err(|e| format!("it did not complete the MCP handshake: {e}"))?;
        tracing::info!("MCP server `{}` started", self.spec.name);
        Ok(Connection {
            service,
            process,
            started: Instant::now(),
        })
    }

    /// Stop the server, if it runs.
    pub async fn stop(&self) {
        let running = self.state.lock().await.running.take();
        if let Some(connection) = running {
            let Connection {
                service,
                mut process,
                ..
            } = connection;
            let _ = service.cancel().await;
            process.stop().await;
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

/// A client error in words.
fn service_error(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(data) => format!(
            "the server answered error {}: {}",
            data.code.0, data.message
        ),
        ServiceError::TransportClosed => "the server closed the connection".to_string(),
        other => other.to_string(),
    }
}
