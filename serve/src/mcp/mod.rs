//! The MCP server: the same call pipeline over the Model Context Protocol,
//! on stdio (`toolhost mcp`) and as streamable HTTP at `/mcp` on `serve`.
//!
//! Built on `rmcp`. The server speaks every protocol version up to
//! 2026-07-28, chosen per request: up to 2025-11-25 a client opens a session
//! with `initialize`; a 2026-07-28 request carries its version, capabilities
//! and log level in its own `_meta` (rmcp makes a handler per request, so a
//! handler holds nothing a request needs from the one before).
//!
//! Per-call session settings come from the request's `_meta`
//! (`toolhost/sessionId`, `toolhost/continuationToken`, `toolhost/dryRun`,
//! `toolhost/asOf`) over the server's own (`--session`, `--dry-run`, `--as-of`).

mod approve;
mod ask;
mod convert;
mod events;
mod fleet_rounds;
mod fleet_tasks;
mod notify;
mod peers;
mod requests;
mod resources;
mod rounds;
mod tasks;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, FixedOffset};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities,
    CompleteRequestParams, CompleteResult, CompletionInfo, CustomRequest, CustomResult, ErrorCode,
    ErrorData, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Reference, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{MaybeSendFuture, NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use toolhost::artifacts::SessionArtifacts;
use toolhost::call::CallOptions;
use toolhost::config::TaskSupport;
use toolhost::error::CallError;
use toolhost::host::Host;
use toolhost::redis_store::lease::LeaseTerms;
use toolhost::registry::Registry;
use toolhost::session::{Session, SessionMode, SessionSpec, SessionStore, parse_instant};

use peers::{Offered, Peers};

/// How often a call whose tool reports no progress of its own sends a
/// heartbeat to a client that asked for progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// The server's own session settings, used where a request's `_meta` gives none.
#[derive(Debug, Clone, Default)]
pub struct McpOptions {
    /// Run every call in this session.
    pub session: Option<String>,
    /// Run calls in dry-run sessions.
    pub dry_run: bool,
    /// Bound time arguments by this instant.
    pub as_of: Option<DateTime<FixedOffset>>,
    /// Who the client is, for session owner checks.
    pub caller: Option<Value>,
    /// The agent whose tools calls outside a session run and the listing
    /// shows (the default agent when `None`); `_meta.toolhost/agent`
    /// overrides it per call.
    pub agent: Option<String>,
    /// That agent's version (its latest when `None`);
    /// `_meta.toolhost/version` overrides it per call.
    pub version: Option<u64>,
}

/// The MCP face of a [`Host`]. Cheap to clone: one per MCP session.
#[derive(Clone)]
pub struct ToolServer {
    host: Arc<Host>,
    sessions: Arc<SessionStore>,
    options: Arc<McpOptions>,
    peers: Peers,
    /// The level this client set (`logging/setLevel`); each client its own.
    log_level: notify::ClientLevel,
    /// The resources this client subscribed to; each client its own.
    subscriptions: resources::Subscriptions,
    /// The 2026-07-28 calls between input-required rounds, shared by every
    /// client of the server.
    suspended: Arc<rounds::Suspended>,
    /// The calls that became tasks, shared by every client of the server.
    tasks: Arc<tasks::Tasks>,
}

impl ToolServer {
    /// A server for `host`, binding sessions in `sessions` (which its tools
    /// reach through `toolhost:tool/sessions`).
    pub fn new(host: Arc<Host>, sessions: Arc<SessionStore>, options: McpOptions) -> Self {
        host.attach_sessions(sessions.clone());
        let config = host.config();
        let mut suspended = rounds::Suspended::for_process(
            config.limits.ask_timeout(),
            config
                .server
                .max_waiting_calls
                .unwrap_or(toolhost::config::DEFAULT_MAX_WAITING_CALLS),
        );
        let mut tasks = tasks::Tasks::new(
            config.server.max_tasks(),
            config.server.task_ttl(),
            config.server.task_result_bytes(),
        );
        if let Some(store) = host.shared_store() {
            let terms = LeaseTerms::new(config.state.session_lease());
            tasks = tasks.shared(fleet_tasks::FleetTasks::new(store.clone(), terms));
        }
        let tasks = Arc::new(tasks);
        if let Some(store) = host.shared_store() {
            let terms = LeaseTerms::new(config.state.session_lease());
            let fleet = fleet_rounds::FleetRounds::new(
                store.clone(),
                terms,
                config.limits.ask_timeout(),
                tasks.clone(),
            );
            let key = fleet_rounds::FleetRounds::state_key(store);
            suspended = suspended.shared(fleet, key);
        }
        Self {
            host,
            sessions,
            options: Arc::new(options),
            peers: Peers::default(),
            log_level: notify::ClientLevel::default(),
            subscriptions: resources::Subscriptions::default(),
            suspended: Arc::new(suspended),
            tasks,
        }
    }

    /// This server for one more client: the same host and peers, a log
    /// level and subscriptions of its own.
    fn for_new_client(&self) -> Self {
        Self {
            log_level: notify::ClientLevel::default(),
            subscriptions: resources::Subscriptions::default(),
            ..self.clone()
        }
    }

    /// Tell every connected client when the host's tools change, and when
    /// the prompts or resources they offer change; and each client
    /// subscribed to a resource when a call announces it changed; until
    /// the host goes away.
    pub fn forward_tool_changes(&self) -> tokio::task::JoinHandle<()> {
        let mut changes = self.host.tool_changes();
        let mut updates = self.host.resource_updates();
        let peers = self.peers.clone();
        let host = self.host.clone();
        let offered_now = move || Offered::of(&host);
        tokio::spawn(async move {
            let mut offered = offered_now();
            loop {
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err() {
                            break;
                        }
                        let now = offered_now();
                        peers.changed(now.prompts != offered.prompts, now.resources != offered.resources);
                        offered = now;
                    }
                    update = updates.recv() => match update {
                        Ok(uri) => peers.resource_updated(uri),
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                            tracing::warn!(missed, "MCP clients missed resource updates");
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                    },
                }
            }
        })
    }

    /// Serve one client on stdin/stdout until stdin closes.
    pub async fn serve_stdio(self) -> anyhow::Result<()> {
        let forwarder = self.forward_tool_changes();
        // Non-blocking pipes where stdio are pipes (no blocking-pool hop per message).
        let running = self.serve(rmcp::transport::stdio_pipes()).await?;
        let reason = running.waiting().await;
        forwarder.abort();
        tracing::debug!(?reason, "MCP stdio session ended");
        Ok(())
    }

    /// The streamable HTTP transport for `serve`'s `/mcp`, stopped by `cancel`.
    /// `Host` and `Origin` are checked against loopback names unless
    /// `public` (a non-loopback listen address, which requires a token);
    /// request bodies over `max_body_bytes` are refused.
    pub fn http_service(
        self,
        cancel: CancellationToken,
        public: bool,
        extra_origins: &[String],
        max_body_bytes: usize,
    ) -> StreamableHttpService<Self, LocalSessionManager> {
        let mut origins: Vec<String> =
            ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
                .into_iter()
                .map(str::to_string)
                .collect();
        origins.extend(extra_origins.iter().cloned());
        // A 2026-07-28 request whose call sends nothing before its answer
        // is answered as one JSON body instead of an SSE stream (rmcp falls
        // back to SSE when a log line or progress comes first); sessions
        // keep their streams.
        let mut config = StreamableHttpServerConfig::default()
            .with_json_response(true)
            .with_allowed_origins(origins)
            .with_cancellation_token(cancel)
            .with_max_request_body_bytes(max_body_bytes);
        if public {
            config = config.disable_allowed_hosts();
        }
        self.forward_tool_changes();
        StreamableHttpService::new(
            move || Ok(self.for_new_client()),
            Arc::new(LocalSessionManager::default()),
            config,
        )
    }

    /// The session every call of this server runs in (`McpOptions::session`),
    /// when there is one and it exists.
    fn bound_session(&self) -> Option<Arc<Session>> {
        let id = self.options.session.as_deref()?;
        self.sessions
            .get(id)
            .filter(|s| s.admits(self.options.caller.as_ref()))
    }

    /// Who a request acts for: the server's own `caller` (stdio), else the
    /// principal an HTTP request names in its `Toolhost-Auth` header, read
    /// as the HTTP API reads it (identity only: sessions with an owner, a
    /// 2026-07-28 request state and tasks are bound to it).
    fn caller(&self, context: &RequestContext<RoleServer>) -> Result<Option<Value>, ErrorData> {
        if self.options.caller.is_some() {
            return Ok(self.options.caller.clone());
        }
        let header = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.headers.get(toolhost::session::AUTH_HEADER));
        let Some(header) = header else {
            return Ok(None);
        };
        toolhost::session::header_principal(header.as_bytes())
            .map(Some)
            .map_err(|why| {
                ErrorData::invalid_params(why, Some(json!({ "code": "invalid_request" })))
            })
    }

    /// The tools a client sees: its session's version's when it is bound
    /// to one, else the version of the agent its options name.
    async fn listed_registry(&self) -> Arc<Registry> {
        let version = match self.bound_session() {
            Some(session) => self.host.version_of(&session).ok(),
            None => self
                .host
                .resolve(self.options.agent.as_deref(), self.options.version)
                .await
                .ok(),
        };
        version.map_or_else(|| self.host.registry(), |v| v.registry().clone())
    }

    /// The session a call runs in, from its `_meta` over the server's options.
    async fn session_for(
        &self,
        meta: &serde_json::Map<String, Value>,
        caller: Option<&Value>,
    ) -> Result<Arc<Session>, ErrorData> {
        let text = |key: &str| meta.get(key).and_then(Value::as_str).map(str::to_string);
        let session_id = text("toolhost/sessionId").or_else(|| self.options.session.clone());
        let token = text("toolhost/continuationToken");
        let dry_run = match meta.get("toolhost/dryRun") {
            None => self.options.dry_run,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    "`_meta.toolhost/dryRun` must be a boolean",
                    None,
                ));
            }
        };
        let as_of = match text("toolhost/asOf") {
            Some(t) => Some(parse_instant(&t).map_err(|e| {
                ErrorData::invalid_params(format!("`_meta.toolhost/asOf`: {e}"), None)
            })?),
            None => self.options.as_of,
        };
        let agent = text("toolhost/agent").or_else(|| self.options.agent.clone());
        let version = match meta.get("toolhost/version") {
            None => self.options.version,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                ErrorData::invalid_params("`_meta.toolhost/version` must be a number", None)
            })?),
        };
        let pin = self
            .host
            .pin_for(agent.as_deref(), version)
            .await
            .map_err(|e| {
                ErrorData::invalid_params(e.to_string(), Some(json!({ "code": e.code() })))
            })?;
        let scratch = SessionSpec {
            pin: Some(pin),
            channel: Some("mcp".into()),
            mode: if dry_run {
                SessionMode::DryRun
            } else {
                SessionMode::Live
            },
            as_of,
            ..SessionSpec::default()
        };
        let bound = self
            .sessions
            .bind_or(session_id.as_deref(), token.as_deref(), caller, scratch)
            .await
            .map_err(|e| {
                ErrorData::invalid_params(e.to_string(), Some(json!({ "code": e.code() })))
            })?;
        if !bound.scratch
            && [
                "toolhost/dryRun",
                "toolhost/asOf",
                "toolhost/agent",
                "toolhost/version",
            ]
            .iter()
            .any(|key| meta.contains_key(*key))
        {
            return Err(ErrorData::invalid_params(
                "a session keeps its own mode, asOf and agent version: do not pass \
                 toolhost/dryRun, toolhost/asOf, toolhost/agent or toolhost/version with a \
                 session (upgrade it to move it to another version)",
                None,
            ));
        }
        Ok(bound.session)
    }
}

/// Whose a task made for `caller` is.
fn task_owner(caller: Option<&Value>) -> String {
    caller.map(Value::to_string).unwrap_or_default()
}

/// How long a 2026-07-28 client may keep a listing before it asks again: a
/// short hint, since the tools change on every reload and agent upgrade
/// (which `subscriptions/listen` streams are told of). Listings are
/// `private`: they depend on the caller's session, agent and version.
const LISTING_TTL_MS: u64 = 5_000;

/// A listing result with the cache hints of [`LISTING_TTL_MS`] for a
/// 2026-07-28 request (older ones keep the shape they had).
macro_rules! listing_hints {
    ($result:expr, $context:expr) => {{
        let result = $result;
        match is_per_request(&$context) {
            true => result
                .with_ttl_ms(LISTING_TTL_MS)
                .with_cache_scope(rmcp::model::CacheScope::Private),
            false => result,
        }
    }};
}

/// The methods both protocol families offer.
const OFFERED: &[&str] = &[
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
];

/// The methods a session opened with `initialize` (up to 2025-11-25) has
/// besides those; 2026-07-28 removed them.
const REMOVED_IN_2026_07_28: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The methods 2026-07-28 added.
const ADDED_IN_2026_07_28: &[&str] = &["server/discover", "subscriptions/listen"];

/// Whether `context`'s request speaks a protocol version without
/// `initialize` (2026-07-28 and later): everything it needs is in its own
/// `_meta`, and the server may send it no request of its own.
fn is_per_request(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| !version.has_initialize())
}

/// The methods the protocol version of `context`'s request offers.
fn offered_methods(context: &RequestContext<RoleServer>) -> Vec<&'static str> {
    let version_specific = match is_per_request(context) {
        true => ADDED_IN_2026_07_28,
        false => REMOVED_IN_2026_07_28,
    };
    OFFERED.iter().chain(version_specific).copied().collect()
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(notify::declared(
            ServerCapabilities::builder()
                .enable_completions()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_resources_subscribe()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_tasks()
                .build(),
        ))
        .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Tools run in sandboxes with only the capabilities the operator granted. \
             Pass `toolhost/sessionId`, `toolhost/dryRun` or `toolhost/asOf` in a call's _meta \
             to choose its session.",
        )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.peers.add(context.peer, self.subscriptions.clone());
    }

    /// A request rmcp could not decode as one this server handles: an
    /// unknown method, a method 2026-07-28 removed, or a known one with
    /// params MCP does not define. rmcp's default answer names only the
    /// method (and so says nothing for `""`).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method;
        let offered = offered_methods(&context);
        Err(if offered.contains(&method.as_str()) {
            ErrorData::invalid_params(
                format!("the params of {method:?} are not the ones MCP defines"),
                None,
            )
        } else {
            let version = context.protocol_version();
            let removed = if REMOVED_IN_2026_07_28.contains(&method.as_str()) {
                format!(
                    " ({method:?} is not part of protocol version {})",
                    version.as_ref().map_or("2026-07-28", |v| v.as_str())
                )
            } else {
                String::new()
            };
            ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "this server has no method {method:?}{removed}; it offers {}",
                    offered.join(", ")
                ),
                None,
            )
        })
    }

    #[expect(
        deprecated,
        reason = "rmcp 3.11 marks logging/setLevel deprecated (SEP-2577): 2026-07-28 requests \
                  name their level in `_meta`, sessions up to 2025-11-25 still set it"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if is_per_request(&context) {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "logging/setLevel is not part of protocol version 2026-07-28: name the level \
                 in each request's `_meta` (`io.modelcontextprotocol/logLevel`)",
                None,
            ));
        }
        self.log_level.set(request.level);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let registry = self.listed_registry().await;
        let tools = registry
            .tools()
            .filter(|t| t.runs_on_host())
            .map(|t| convert::tool(t))
            .collect();
        Ok(listing_hints!(
            ListToolsResult::with_all_items(tools),
            context
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let registry = self.host.registry();
        let prompts = registry
            .prompts()
            .map(|(_, prompt)| convert::prompt(prompt))
            .collect();
        Ok(listing_hints!(
            ListPromptsResult::with_all_items(prompts),
            context
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let registry = self.host.registry();
        let mut listed: Vec<_> = registry
            .resources()
            .map(|(_, spec)| resources::resource(spec))
            .collect();
        if let Some(session) = self.bound_session() {
            let saved = tokio::task::spawn_blocking(move || {
                SessionArtifacts::new(&session)
                    .list()
                    .map(|all| (session, all))
            })
            .await;
            if let Ok(Ok((session, saved))) = saved {
                listed.extend(saved.iter().map(|a| resources::artifact(a, session.id())));
            }
        }
        Ok(listing_hints!(
            ListResourcesResult::with_all_items(listed),
            context
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let registry = self.host.registry();
        let templates = registry
            .resource_templates()
            .map(|(_, spec)| resources::template(spec))
            .collect();
        Ok(listing_hints!(
            ListResourceTemplatesResult::with_all_items(templates),
            context
        ))
    }

    /// The tool `name` as the default agent's tools show it now: rmcp
    /// checks a 2026-07-28 request's `Mcp-Param-*` headers against its
    /// input schema's `x-mcp-header` properties before the call is made.
    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        let registry = self.host.registry();
        registry
            .get(name)
            .filter(|tool| tool.runs_on_host())
            .map(|tool| convert::tool(tool))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(resources::accepted(requested))
    }

    /// A 2026-07-28 client's `subscriptions/listen` stream: told of what it
    /// accepted until the client closes it or the server stops.
    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let _listening = self.peers.listen(subscription.sink().clone())?;
        subscription.cancelled().await;
        Ok(())
    }

    /// Subscribe to an address, whether or not something is there yet (a
    /// template's resources come and go).
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.add(request.uri)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetTaskResult, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(async move {
            let owner = task_owner(self.caller(&context)?.as_ref());
            self.tasks.get(&request.task_id, &owner).await
        })
    }

    fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(async move {
            let owner = task_owner(self.caller(&context)?.as_ref());
            self.tasks
                .update(&request.task_id, &owner, request.input_responses)
                .await
        })
    }

    fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(async move {
            let owner = task_owner(self.caller(&context)?.as_ref());
            self.tasks.cancel(&request.task_id, &owner).await
        })
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.prompt(request, context))
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(async move {
            let caller = self.caller(&context)?;
            self.read(request, caller.as_ref()).await
        })
    }

    fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CompleteResult, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.completion(request))
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + MaybeSendFuture + '_ {
        Box::pin(self.call(request, context))
    }
}
