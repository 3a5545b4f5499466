//! The HTTP API (`toolhost serve`): the call pipeline over JSON, sessions
//! with their event streams, approvals, custom tools, health and metrics.
//!
//! Routes live under `/<slug>/v1`, where the slug is the config's `name`:
//!
//! | route | what |
//! |---|---|
//! | `GET /healthz` | liveness (no token needed) |
//! | `GET /metrics` | Prometheus text |
//! | `GET /<slug>/v1/tools` | the enabled tools |
//! | `POST /<slug>/v1/tools/<name>` | call a tool |
//! | `POST, GET /<slug>/v1/sessions` | create, list sessions |
//! | `GET /<slug>/v1/sessions/<id>` | one session |
//! | `GET /<slug>/v1/sessions/<id>/events` | server-sent events, resumable |
//! | `POST /<slug>/v1/sessions/<id>/events` | client events (custom tool results) |
//! | `POST /<slug>/v1/approvals/<callId>` | approve or deny a waiting call |
//! | `GET /<slug>/v1/calls/<callId>` | a waiting call's status or result |
//! | `DELETE /<slug>/v1/calls/<callId>` | end a running call |
//! | `POST, GET, DELETE /mcp` | MCP over streamable HTTP ([`crate::mcp`]) |

mod agents;
mod answers;
mod approval_log;
mod approvals;
mod artifacts;
mod board;
mod caller;
mod console;
mod error;
mod fleet_approvals;
mod fleet_calls;
mod forwarded;
mod inspect;
mod reminders;
mod sessions;
mod tools;
mod workspace;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

pub use board::{Board, MAX_WAITING_CALLS, Status};
pub use error::ApiError;

use crate::mcp::{McpOptions, ToolServer};
use crate::metrics::Metrics;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use tokio_util::sync::CancellationToken;
use toolhost::config::{
    DEFAULT_APPROVAL_TIMEOUT_MS, DEFAULT_BODY_READ_TIMEOUT_MS, DEFAULT_CUSTOM_TOOL_TIMEOUT_MS,
    DEFAULT_HEADER_READ_TIMEOUT_MS, DEFAULT_LISTEN, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_SESSION_RETENTION_SECS, DEFAULT_SHUTDOWN_GRACE_SECS,
    MIN_TOKEN_CHARS,
};
use toolhost::host::Host;
use toolhost::session::{
    HistoryBudget, MAX_HISTORY_BYTES, MAX_SESSION_HISTORY_BYTES, MAX_SESSIONS, SessionStore,
};

/// The slug routes use when the config has no `name`.
pub const DEFAULT_SLUG: &str = "toolhost";

/// How `toolhost serve` runs; flags over `[server]` over the defaults.
#[derive(Clone)]
pub struct ServeOptions {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The bearer token, if any.
    pub token: Option<String>,
    /// How long a call waits for an approval.
    pub approval_timeout: Duration,
    /// How long a custom tool call waits for its result.
    pub custom_tool_timeout: Duration,
    /// How long idle sessions and events are kept.
    pub session_retention: Duration,
    /// The largest request body.
    pub max_body_bytes: usize,
    /// How long calls running at shutdown may take to finish.
    pub shutdown_grace: Duration,
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers (and, on a
    /// kept-alive connection, to start the next request).
    pub header_read_timeout: Duration,
    /// How long a client may pause while sending a request's body.
    pub body_read_timeout: Duration,
    /// Sessions kept at once.
    pub max_sessions: usize,
    /// Calls that may wait for an approval or a custom tool's result at once.
    pub max_waiting_calls: usize,
    /// Event payload bytes one session's history keeps.
    pub session_history_bytes: usize,
    /// Event payload bytes every session's history keeps together.
    pub history_bytes: usize,
    /// Whether the web console is served at `/`.
    pub console: bool,
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("listen", &self.listen)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("approval_timeout", &self.approval_timeout)
            .field("custom_tool_timeout", &self.custom_tool_timeout)
            .field("session_retention", &self.session_retention)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("max_connections", &self.max_connections)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("max_sessions", &self.max_sessions)
            .field("max_waiting_calls", &self.max_waiting_calls)
            .field("session_history_bytes", &self.session_history_bytes)
            .field("history_bytes", &self.history_bytes)
            .finish()
    }
}

impl ServeOptions {
    /// The options `[server]` in the host's config gives.
    pub fn from_config(host: &Host) -> anyhow::Result<Self> {
        let config = host.config();
        let server = &config.server;
        let listen = server.listen.as_deref().unwrap_or(DEFAULT_LISTEN);
        Ok(Self {
            listen: listen
                .parse()
                .with_context(|| format!("invalid listen address {listen:?}"))?,
            token: server.token.clone(),
            approval_timeout: Duration::from_millis(
                server
                    .approval_timeout_ms
                    .unwrap_or(DEFAULT_APPROVAL_TIMEOUT_MS),
            ),
            custom_tool_timeout: Duration::from_millis(
                server
                    .custom_tool_timeout_ms
                    .unwrap_or(DEFAULT_CUSTOM_TOOL_TIMEOUT_MS),
            ),
            session_retention: Duration::from_secs(
                server
                    .session_retention_secs
                    .unwrap_or(DEFAULT_SESSION_RETENTION_SECS),
            ),
            max_body_bytes: server.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES),
            shutdown_grace: Duration::from_secs(
                server
                    .shutdown_grace_secs
                    .unwrap_or(DEFAULT_SHUTDOWN_GRACE_SECS),
            ),
            max_connections: server.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS) as usize,
            header_read_timeout: Duration::from_millis(
                server
                    .header_read_timeout_ms
                    .unwrap_or(DEFAULT_HEADER_READ_TIMEOUT_MS),
            ),
            body_read_timeout: Duration::from_millis(
                server
                    .body_read_timeout_ms
                    .unwrap_or(DEFAULT_BODY_READ_TIMEOUT_MS),
            ),
            max_sessions: server.max_sessions.unwrap_or(MAX_SESSIONS),
            max_waiting_calls: server.max_waiting_calls.unwrap_or(MAX_WAITING_CALLS),
            session_history_bytes: server
                .session_history_mb
                .map_or(MAX_SESSION_HISTORY_BYTES, |mb| mb << 20),
            history_bytes: server.history_mb.map_or(MAX_HISTORY_BYTES, |mb| mb << 20),
            console: server.console.unwrap_or(true),
        })
    }

    /// The session store these options describe, where `host` keeps its
    /// sessions (shared with its fleet on the Redis backend).
    pub fn session_store(&self, host: &Host) -> anyhow::Result<SessionStore> {
        let history = HistoryBudget::new(self.session_history_bytes, self.history_bytes);
        Ok(host
            .open_sessions(self.session_retention, history)?
            .with_max_sessions(self.max_sessions))
    }
}

/// What every handler shares.
pub struct App {
    /// The tools and the pipeline.
    pub host: Arc<Host>,
    /// The sessions (shared with MCP over HTTP).
    pub sessions: Arc<SessionStore>,
    /// Calls waiting for an approval or a custom tool's result.
    pub board: Arc<Board>,
    /// Counters for `/metrics`.
    pub metrics: Arc<Metrics>,
    /// The slug routes live under.
    pub slug: String,
    /// The options in force.
    pub options: ServeOptions,
    /// Cancelled at shutdown: ends the open event and MCP streams, which
    /// would otherwise hold the graceful shutdown forever.
    shutdown: CancellationToken,
}

impl App {
    /// The shared state for `host`, with sessions kept under its state
    /// directory (which its tools reach through `toolhost:tool/sessions`).
    pub fn new(host: Arc<Host>, options: ServeOptions) -> anyhow::Result<Arc<Self>> {
        let sessions = Arc::new(options.session_store(&host)?);
        host.attach_sessions(sessions.clone());
        let slug = host
            .config()
            .name
            .clone()
            .unwrap_or_else(|| DEFAULT_SLUG.to_string());
        let metrics = Arc::new(Metrics::new(host.tool_metrics().clone()));
        host.observe(metrics.clone());
        let mut board = Board::with_max_waiting(options.max_waiting_calls);
        if let Some(redis) = host.shared_store() {
            let (terms, retention) = (
                toolhost::redis_store::lease::LeaseTerms::new(host.config().state.session_lease()),
                options.session_retention,
            );
            board = board.shared(fleet_calls::FleetCalls::new(
                redis.clone(),
                terms,
                retention,
            ));
        }
        let app = Arc::new(Self {
            host,
            sessions,
            board: Arc::new(board),
            metrics,
            slug,
            options,
            shutdown: CancellationToken::new(),
        });
        app.board
            .set_applier(forwarded::applier(Arc::downgrade(&app)));
        Ok(app)
    }

    /// Refuse a route under another slug, naming the one served.
    fn check_slug(&self, slug: &str) -> Result<(), ApiError> {
        if slug == self.slug {
            Ok(())
        } else {
            Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("this server serves `/{}/v1`, not `/{slug}/v1`", self.slug),
            ))
        }
    }

    /// Forget expired sessions and finished waiting calls.
    pub async fn sweep(&self) {
        let removed = match self.sessions.sweep().await {
            Ok(removed) => removed,
            Err(e) => {
                tracing::warn!("idle sessions not swept: {e}");
                Vec::new()
            }
        };
        if !removed.is_empty() {
            tracing::info!("removed {} idle sessions", removed.len());
            self.board.forget_sessions(&removed);
            self.host.release_versions();
        }
        self.board.sweep(self.options.session_retention);
    }
}

/// The router for `app`.
pub fn router(app: Arc<App>) -> Router {
    let api = Router::new()
        .route("/metrics", get(metrics))
        .route("/{slug}/v1/tools", get(tools::list))
        .route(
            "/{slug}/v1/tools/{name}",
            get(inspect::one).post(tools::call),
        )
        .route(
            "/{slug}/v1/sessions",
            post(sessions::create).get(sessions::list),
        )
        .route("/{slug}/v1/agents", get(agents::list).post(agents::create))
        .route(
            "/{slug}/v1/agents/{name}",
            get(agents::get).patch(agents::update),
        )
        .route("/{slug}/v1/agents/{name}/versions", get(agents::versions))
        .route(
            "/{slug}/v1/agents/{name}/versions/{version}",
            get(agents::version),
        )
        .route(
            "/{slug}/v1/sessions/{id}",
            get(sessions::get).delete(sessions::end),
        )
        .route("/{slug}/v1/sessions/{id}/upgrade", post(sessions::upgrade))
        .route(
            "/{slug}/v1/sessions/{id}/agent-tools",
            get(sessions::agent_tools),
        )
        .route("/{slug}/v1/sessions/{id}/artifacts", get(artifacts::list))
        .route(
            "/{slug}/v1/sessions/{id}/artifacts/{name}",
            get(artifacts::download),
        )
        .route("/{slug}/v1/sessions/{id}/workspace", get(workspace::list))
        .route(
            "/{slug}/v1/sessions/{id}/workspace/{*path}",
            get(workspace::download),
        )
        .route("/{slug}/v1/sessions/{id}/reminders", get(reminders::list))
        .route(
            "/{slug}/v1/sessions/{id}/reminders/{reminder}",
            axum::routing::delete(reminders::cancel),
        )
        .route(
            "/{slug}/v1/sessions/{id}/events",
            get(sessions::stream).post(sessions::post_events),
        )
        .route("/{slug}/v1/approvals", get(approvals::list))
        .route("/{slug}/v1/approvals/{call_id}", post(approvals::decide))
        .route(
            "/{slug}/v1/calls/{call_id}",
            get(approvals::poll).delete(sessions::end_call),
        )
        .route_service("/mcp", mcp_service(&app))
        .route_layer(middleware::from_fn(refuse_cross_site))
        .route_layer(middleware::from_fn_with_state(app.clone(), require_token))
        .route_layer(middleware::from_fn_with_state(
            app.clone(),
            require_loopback_host,
        ));
    let console = if app.options.console {
        console::routes().route_layer(middleware::from_fn_with_state(
            app.clone(),
            require_loopback_host,
        ))
    } else {
        Router::new()
    };
    Router::new()
        .route("/healthz", get(healthz))
        .merge(api)
        .merge(console)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(app.options.max_body_bytes))
        .with_state(app)
}

/// MCP over streamable HTTP, with the HTTP API's sessions and token.
fn mcp_service(
    app: &Arc<App>,
) -> StreamableHttpService<
    ToolServer,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    let server = ToolServer::new(
        app.host.clone(),
        app.sessions.clone(),
        McpOptions::default(),
    );
    let public = !app.options.listen.ip().is_loopback();
    let origins = app
        .host
        .config()
        .server
        .allowed_origins
        .clone()
        .unwrap_or_default();
    server.http_service(
        app.shutdown.child_token(),
        public,
        &origins,
        app.options.max_body_bytes,
    )
}

/// Serve `host` on `options.listen` until `shutdown` resolves; calls in
/// flight get `options.shutdown_grace` to finish.
pub async fn serve(
    host: Arc<Host>,
    options: ServeOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener = bind(&options).await?;
    let app = App::new(host, options)?;
    run(listener, app, shutdown).await
}

/// Bind the listen address, refusing a non-loopback one without a token.
pub async fn bind(options: &ServeOptions) -> anyhow::Result<tokio::net::TcpListener> {
    anyhow::ensure!(
        options.listen.ip().is_loopback() || options.token.is_some(),
        "refusing to listen on {} without a token: anyone who can reach it could run tools. \
         Set one with --token, TOOLHOST_TOKEN or [server] token, or listen on 127.0.0.1",
        options.listen
    );
    if let Some(token) = &options.token {
        anyhow::ensure!(
            token.len() >= MIN_TOKEN_CHARS,
            "the token is too short: use at least {MIN_TOKEN_CHARS} characters"
        );
    }
    tokio::net::TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))
}

/// Serve `app` on an already bound listener until `shutdown` resolves.
/// From then on no connection is accepted; requests in flight get
/// `shutdown_grace` to finish, and whatever still runs after it is dropped.
pub async fn run(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    // Sessions kept from before a restart may be bound to versions the
    // tools folder no longer gives: load those again, beside serving.
    let restoring = app.host.clone();
    let restore = tokio::spawn(async move { restoring.restore_pinned_versions().await });
    let sweeper = {
        let app = app.clone();
        let every = (app.options.session_retention / 4)
            .clamp(Duration::from_millis(100), Duration::from_secs(60));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                app.sweep().await;
            }
        })
    };
    let reminders = tokio::spawn(app.host.clone().fire_reminders(Arc::new(
        reminders::BoardReminderCalls(Arc::downgrade(&app)),
    )));
    // What runs beside the server stops with it, even when the future
    // running the server is dropped rather than shut down.
    let _beside = AbortOnDrop([
        restore.abort_handle(),
        sweeper.abort_handle(),
        reminders.abort_handle(),
    ]);
    let cancel = app.shutdown.clone();
    let (host, grace) = (app.host.clone(), app.options.shutdown_grace);
    let connections = Connections::new(&app.options);
    let service = router(app);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = connections.accept(&listener) => {
                let (stream, permit) = accepted;
                let connection = connections.serve(stream, service.clone());
                let watched = graceful.watch(connection);
                tokio::spawn(async move {
                    // A client that breaks the protocol or times out ends
                    // only its own connection.
                    let _ = watched.await;
                    drop(permit);
                });
            }
        }
    }
    drop(listener);
    cancel.cancel();
    let outcome = tokio::select! {
        () = graceful.shutdown() => Ok(()),
        () = tokio::time::sleep(grace) => {
            tracing::warn!(
                running = host.gate().running(),
                queued = host.gate().waiting(),
                "requests still in flight after the {} s shutdown grace (shutdown_grace_secs) are dropped",
                grace.as_secs()
            );
            Ok(())
        }
    };
    sweeper.abort();
    reminders.abort();
    restore.abort();
    outcome
}

/// Aborts its tasks when dropped.
struct AbortOnDrop<const N: usize>([tokio::task::AbortHandle; N]);

impl<const N: usize> Drop for AbortOnDrop<N> {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// How `serve` takes connections: at most `max_connections` at once (more
/// wait in the kernel's listen backlog), each with a header and a body
/// read timeout, so slow or idle clients cannot hold the server.
struct Connections {
    slots: Arc<tokio::sync::Semaphore>,
    http: hyper::server::conn::http1::Builder,
    body_read_timeout: Duration,
}

/// How long `accept` backs off after an error such as running out of
/// descriptors, instead of spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

impl Connections {
    fn new(options: &ServeOptions) -> Self {
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(options.header_read_timeout);
        Self {
            slots: Arc::new(tokio::sync::Semaphore::new(options.max_connections)),
            http,
            body_read_timeout: options.body_read_timeout,
        }
    }

    /// The next connection, once a slot is free for it.
    async fn accept(
        &self,
        listener: &tokio::net::TcpListener,
    ) -> (tokio::net::TcpStream, tokio::sync::OwnedSemaphorePermit) {
        let Ok(permit) = self.slots.clone().acquire_owned().await else {
            unreachable!("the connection semaphore is never closed")
        };
        loop {
            match listener.accept().await {
                Ok((stream, _)) => return (stream, permit),
                Err(e) => {
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            }
        }
    }

    /// Serve one connection with `router`, every request body under the
    /// body read timeout.
    fn serve(
        &self,
        stream: tokio::net::TcpStream,
        router: Router,
    ) -> impl hyper_util::server::graceful::GracefulConnection + use<> {
        let timeout = self.body_read_timeout;
        let service =
            hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let request = request.map(|body| {
                    axum::body::Body::new(tower_http::timeout::TimeoutBody::new(timeout, body))
                });
                tower::ServiceExt::oneshot(router.clone(), request)
            });
        self.http
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
    }
}

async fn require_token(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let Some(expected) = &app.options.token else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(token) if constant_time_eq(token.as_bytes(), expected.as_bytes()) => {
            next.run(request).await
        }
        Some(_) => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the bearer token is wrong",
        )
        .into_response(),
        None => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this server needs `Authorization: Bearer <token>`",
        )
        .into_response(),
    }
}

/// On a loopback address every request must name a loopback host: a web
/// page whose own name was rebound to 127.0.0.1 (DNS rebinding) sends that
/// name and is refused, so it cannot call tools through a browser.
async fn require_loopback_host(
    State(app): State<Arc<App>>,
    request: Request,
    next: Next,
) -> Response {
    if !app.options.listen.ip().is_loopback() {
        return next.run(request).await;
    }
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()))
        .unwrap_or_default();
    if is_loopback_host(host) {
        return next.run(request).await;
    }
    ApiError::new(
        StatusCode::FORBIDDEN,
        "host_not_allowed",
        format!(
            "Host {host:?} is not a loopback name: a server on a loopback address answers \
             only requests for localhost, 127.0.0.1 or [::1]"
        ),
    )
    .into_response()
}

/// Refuse a request that changes state when a browser says another site
/// sent it (`Sec-Fetch-Site: cross-site` or `same-site`, or, from a browser
/// that does not send that, an `Origin` other than the server's own): a
/// page elsewhere cannot use a visitor's browser to call tools. `/mcp` checks origins itself (`[server]
/// allowed_origins`).
async fn refuse_cross_site(request: Request, next: Next) -> Response {
    let safe = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if safe || request.uri().path() == "/mcp" {
        return next.run(request).await;
    }
    let headers = request.headers();
    let text = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    // A browser that sends `Sec-Fetch-Site` says where the request comes
    // from, and its word stands (behind a proxy `Host` is the proxy's
    // upstream, not what the page's `Origin` names). An older browser
    // sends only `Origin`, compared with `Host`.
    let cross_site = match text("sec-fetch-site") {
        Some(site) => matches!(site, "cross-site" | "same-site"),
        None => text(header::ORIGIN.as_str()).is_some_and(|origin| {
            let authority = origin.split_once("://").map_or(origin, |(_, rest)| rest);
            origin == "null" || Some(authority) != text(header::HOST.as_str())
        }),
    };
    if cross_site {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "cross_site_request",
            "a request that changes state must come from this server's own pages, or from a \
             client that is not a browser page on another site",
        )
        .into_response();
    }
    next.run(request).await
}

/// Whether `authority` (`name[:port]`) names this machine.
fn is_loopback_host(authority: &str) -> bool {
    let name = match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn healthz(State(app): State<Arc<App>>) -> axum::Json<serde_json::Value> {
    let mut health = json!({
        "ok": true,
        "slug": app.slug,
        "tools": app.host.registry().tools().count(),
    });
    // Still serving the tools loaded before a change (an edited file, an MCP
    // server's new tools) was refused; the reason is in the log, not here,
    // since this route needs no token.
    if app.host.reload_error().is_some() {
        health["reloadFailed"] = json!(true);
    }
    // Still serving what needs no shared state; the calls that need it
    // are refused with 503 `state_unavailable` until Redis is back.
    if let Some(state) = app.host.shared_health().await {
        health["state"] = json!(state);
    }
    axum::Json(health)
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    let text = app.metrics.render(
        app.sessions.len_here(),
        app.host.gate(),
        &app.host.loaded_versions(),
        &app.host.reminder_figures(),
    );
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

async fn not_found(request: Request) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no route {} {}", request.method(), request.uri().path()),
    )
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "{} is not allowed on {}",
            request.method(),
            request.uri().path()
        ),
    )
}
