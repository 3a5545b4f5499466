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
mod guards;
mod inspect;
mod listener;
mod options;
mod reminders;
mod sessions;
mod tools;
mod workspace;

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

pub use board::{Board, MAX_WAITING_CALLS, Status};
pub use error::ApiError;
pub use listener::{bind, run, serve};
pub use options::ServeOptions;

use guards::{refuse_cross_site, require_loopback_host, require_token};

use crate::mcp::{McpOptions, ToolServer};
use crate::metrics::Metrics;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use tokio_util::sync::CancellationToken;
use toolhost::host::Host;
use toolhost::session::SessionStore;

/// The slug routes use when the config has no `name`.
pub const DEFAULT_SLUG: &str = "toolhost";

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
    if let Some(state) = app.host.fleet_health().await {
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
