//! Sessions: create, list, show; the event stream (server-sent events,
//! resumable from `Last-Event-ID`); client events (custom tool results).

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::{Stream, StreamExt as _};
use serde::Deserialize;
use serde_json::{Value, json};

use super::App;
use super::answers;
use super::board::{AnswerError, Answered, Status};
use super::caller::{self, Caller};
use super::error::{ApiError, JsonBody, PathParams, Query};
use super::fleet_calls::Forwarded;
use toolhost::agent_tools::WrittenScript;
use toolhost::output::ToolOutput;
use toolhost::output::messages::read_posted_block;
use toolhost::session::{
    Credentials, Event, EventData, EventKind, NewSession, RemoveError, Session, SessionMode,
    parse_instant, principal_id,
};

/// The body of `POST /<slug>/v1/sessions`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct CreateBody {
    channel: Option<String>,
    key: Option<String>,
    #[serde(default)]
    mode: Option<String>,
    as_of: Option<String>,
    /// The owner, as the client asserts it: kept as its principal only.
    auth: Option<Value>,
    /// What the session's calls present to upstream MCP servers
    /// (`auth_headers`): held in this server's memory only.
    credentials: Option<Value>,
    /// The agent whose tools the session's calls run (the default one when absent).
    agent: Option<String>,
    /// Which of its versions (the latest when absent).
    version: Option<u64>,
}

/// The body of `POST /<slug>/v1/sessions/<id>/upgrade`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct UpgradeBody {
    /// The version to move to (the agent's latest when absent).
    version: Option<u64>,
}

fn session_json(session: &Session, busy: bool) -> Value {
    json!({
        "id": session.id(),
        "channel": session.channel(),
        "key": session.key(),
        "continuationToken": session.continuation_token(),
        "mode": session.mode(),
        "asOf": session.as_of().map(|t| t.to_rfc3339()),
        "owner": session.auth().and_then(principal_id),
        "createdAt": session.created_at().to_rfc3339(),
        "lastActiveAt": session.last_active().to_rfc3339(),
        "busy": busy,
        "agent": session.pin(),
    })
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", message)
}

/// The session `id` and whether a write call holds it, on any server.
async fn describe(app: &App, session: &Session) -> Result<Value, ApiError> {
    let busy = app.sessions.is_busy(session).await?;
    Ok(session_json(session, busy))
}

pub(super) async fn find(app: &App, id: &str) -> Result<Arc<Session>, ApiError> {
    app.sessions.find(id).await?.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "session_not_found",
            format!("session `{id}` not found"),
        )
    })
}

pub(super) async fn create(
    State(app): State<Arc<App>>,
    PathParams(slug): PathParams<String>,
    JsonBody(body): JsonBody<CreateBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    app.check_slug(&slug)?;
    let mode = match body.mode.as_deref() {
        None | Some("live") => SessionMode::Live,
        Some("dry-run") => SessionMode::DryRun,
        Some(other) => {
            return Err(invalid(format!(
                "`mode` {other:?} is not one of \"live\", \"dry-run\""
            )));
        }
    };
    let as_of = body
        .as_of
        .as_deref()
        .map(parse_instant)
        .transpose()
        .map_err(|e| invalid(format!("`asOf` {e}")))?;
    let auth = body.auth.as_ref().map(caller::principal).transpose()?;
    let credentials = body
        .credentials
        .as_ref()
        .map(Credentials::from_json)
        .transpose()
        .map_err(invalid)?;
    let pin = app
        .host
        .pin_for(body.agent.as_deref(), body.version)
        .await?;
    let session = app
        .sessions
        .create(NewSession {
            channel: body.channel,
            key: body.key,
            mode,
            as_of,
            auth,
            credentials,
            pin: Some(pin),
        })
        .await?;
    if let Err(e) = write_agent_tools(&app, &session).await {
        tracing::warn!("session {}: {}", session.id(), e.body());
    }
    Ok((StatusCode::CREATED, Json(session_json(&session, false))))
}

/// Write the agent-execution tools of `session`'s version into its
/// workspace, off the runtime's threads.
async fn write_agent_tools(
    app: &App,
    session: &Arc<Session>,
) -> Result<Vec<WrittenScript>, ApiError> {
    let host = app.host.clone();
    let session = session.clone();
    tokio::task::spawn_blocking(move || host.write_agent_tools(&session))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "workspace_unavailable",
                format!("the agent-execution tools cannot be written: {e:#}"),
            )
        })
}

/// `GET /<slug>/v1/sessions/<id>/agent-tools`: the agent-execution tools
/// of the session's version, written into its workspace (again, if a file
/// was changed or removed) for the agent harness to run.
pub(super) async fn agent_tools(
    State(app): State<Arc<App>>,
    PathParams((slug, id)): PathParams<(String, String)>,
    Caller(caller): Caller,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    caller::check_owner(&session, caller.as_ref())?;
    let written = write_agent_tools(&app, &session).await?;
    Ok(Json(json!({
        "dir": toolhost::agent_tools::AGENT_TOOLS_DIR,
        "agentTools": written,
    })))
}

/// `POST /<slug>/v1/sessions/<id>/upgrade`: bind the session to another
/// version of its agent (the latest unless one is named) and say what
/// changed; its next call runs the new version's tools.
pub(super) async fn upgrade(
    State(app): State<Arc<App>>,
    PathParams((slug, id)): PathParams<(String, String)>,
    Caller(caller): Caller,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    caller::check_owner(&session, caller.as_ref())?;
    let body: UpgradeBody = if body.iter().all(u8::is_ascii_whitespace) {
        UpgradeBody::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| invalid(format!("the upgrade body is not valid: {e}")))?
    };
    let to = body.version;
    let diff = app.host.upgrade(&app.sessions, &session, to).await?;
    if let Err(e) = write_agent_tools(&app, &session).await {
        tracing::warn!("session {}: {}", session.id(), e.body());
    }
    session.events().emit(
        EventKind::SessionUpgraded,
        EventData::Json(serde_json::to_value(&diff).unwrap_or(Value::Null)),
    );
    Ok(Json(json!({
        "session": describe(&app, &session).await?,
        "changes": diff,
    })))
}

/// How long ending a session waits for the calls it ended to let go of it,
/// and how often it looks.
const ENDED_CALLS_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
const ENDED_CALLS_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// `DELETE /<slug>/v1/sessions/<id>`: end the session now: the calls
/// running in it here are ended, and its workspace, artifacts and pending
/// reminders go with it; the versions no session uses any more are
/// unloaded.
pub(super) async fn end(
    State(app): State<Arc<App>>,
    PathParams((slug, id)): PathParams<(String, String)>,
    Caller(caller): Caller,
) -> Result<StatusCode, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    caller::check_owner(&session, caller.as_ref())?;
    // No call takes the write slot from here on; those running are ended,
    // and let go of it as their futures are dropped.
    session.end();
    let ended = app.host.end_session_calls(&id);
    let until = tokio::time::Instant::now() + ENDED_CALLS_WAIT;
    let removed = loop {
        match app.sessions.remove(&id).await {
            // Held by a call of this server's, just ended: it lets go here
            // as it unwinds, and of its lease in Redis just after.
            Err(RemoveError::Busy { .. })
                if (ended > 0 || session.is_busy()) && tokio::time::Instant::now() < until =>
            {
                tokio::time::sleep(ENDED_CALLS_POLL).await;
            }
            removed => break removed,
        }
    };
    if removed.is_err() {
        // Not ended after all (a write on another server holds it).
        session.keep();
    }
    let removed = removed?;
    app.board.forget_sessions(&[removed.id().to_string()]);
    app.host.release_versions();
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /<slug>/v1/calls/<callId>`: end a call running on this server
/// now (its session's owner only): it answers `409 call_ended`.
pub(super) async fn end_call(
    State(app): State<Arc<App>>,
    PathParams((slug, call_id)): PathParams<(String, String)>,
    Caller(caller): Caller,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let not_running = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "call_not_found",
            format!("no call `{call_id}` is running on this server"),
        )
    };
    let session_id = app.host.session_of_call(&call_id).ok_or_else(not_running)?;
    if let Some(session) = app.sessions.find(&session_id).await? {
        caller::check_owner(&session, caller.as_ref())?;
    }
    if !app.host.end_call(&call_id) {
        return Err(not_running());
    }
    Ok(Json(json!({ "ok": true, "ended": call_id })))
}

pub(super) async fn list(
    State(app): State<Arc<App>>,
    PathParams(slug): PathParams<String>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let mut sessions = Vec::new();
    for listed in app.sessions.list().await? {
        sessions.push(session_json(&listed.session, listed.busy));
    }
    Ok(Json(json!({ "sessions": sessions })))
}

pub(super) async fn get(
    State(app): State<Arc<App>>,
    PathParams((slug, id)): PathParams<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    Ok(Json(describe(&app, &session).await?))
}

/// `?after=<event id>`: replay from there (as `Last-Event-ID` does).
#[derive(Deserialize)]
pub(super) struct StreamQuery {
    after: Option<u64>,
}

pub(super) async fn stream(
    State(app): State<Arc<App>>,
    PathParams((slug, id)): PathParams<(String, String)>,
    Query(query): Query<StreamQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    let after = match headers.get("last-event-id") {
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| invalid("`Last-Event-ID` must be an event id (a number)"))?,
        ),
        None => query.after,
    };
    let events = session
        .follow_events(after)
        .map(|event| Ok(sse(&event)))
        .take_until(app.shutdown.clone().cancelled_owned());
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

fn sse(event: &Event) -> SseEvent {
    SseEvent::default()
        .id(event.id.to_string())
        .event(event.kind.name())
        .json_data(event)
        .unwrap_or_else(|_| SseEvent::default().comment("unserializable event"))
}

/// The body of `POST …/sessions/<id>/events`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClientEvents {
    events: Vec<Value>,
    /// The poster's auth: checked against the session owner's.
    auth: Option<Value>,
}

/// A `user.custom_tool_result`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CustomToolResult {
    #[serde(rename = "type")]
    _kind: String,
    /// The call id, or the id of the `agent.custom_tool_use` event.
    custom_tool_use_id: Value,
    /// toolhost's blocks or the Messages API's (`output::messages`).
    content: Vec<Value>,
    #[serde(default)]
    is_error: bool,
}

pub(super) async fn post_events(
    State(app): State<Arc<App>>,
    PathParams((slug, id)): PathParams<(String, String)>,
    JsonBody(body): JsonBody<ClientEvents>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    let poster = body.auth.as_ref().map(caller::principal).transpose()?;
    caller::check_owner(&session, poster.as_ref())?;
    for (index, event) in body.events.into_iter().enumerate() {
        let at = |e: ApiError| ApiError {
            message: format!("events[{index}]: {}", e.message),
            ..e
        };
        match apply_event(&app, &session, event.clone())
            .await
            .map_err(at)?
        {
            Applied::Here(kind, payload) => session.events().emit(kind, EventData::Json(payload)),
            Applied::NotHere(target) => {
                let Some(fleet) = app.board.fleet() else {
                    return Err(at(AnswerError::NotFound(target.call_id).into()));
                };
                let forwarded = Forwarded::Event {
                    session: session.id().to_string(),
                    event,
                };
                fleet
                    .forward(
                        &target.call_id,
                        target.waited.name(),
                        Some(session.id()),
                        &forwarded,
                        target.what,
                    )
                    .await
                    .map_err(|e| at(e.into()))?;
            }
        }
    }
    Ok(Json(json!({ "ok": true })))
}

/// What became of one posted event.
pub(super) enum Applied {
    /// It reached its call, parked here: the session event to record.
    Here(EventKind, Value),
    /// Its call is not parked on this server.
    NotHere(Target),
}

/// The call a posted event answers, and what it must wait for.
pub(super) struct Target {
    call_id: String,
    waited: Status,
    what: &'static str,
}

/// Check one posted event and hand it to its call, if the call is parked
/// on this server.
pub(super) async fn apply_event(
    app: &App,
    session: &Session,
    event: Value,
) -> Result<Applied, ApiError> {
    let delivered = |delivery: Result<(), AnswerError>, target: Target| match delivery {
        Ok(()) => Ok(None),
        Err(AnswerError::NotFound(_)) => Ok(Some(Applied::NotHere(target))),
        Err(e) => Err(ApiError::from(e)),
    };
    let (kind, payload, outcome) = match event.get("type").and_then(Value::as_str) {
        Some("user.custom_tool_result") => {
            let result: CustomToolResult =
                serde_json::from_value(event).map_err(|e| invalid(e.to_string()))?;
            let call_id = call_id_of(session, &result.custom_tool_use_id)
                .await
                .map_err(invalid)?;
            let mut content = Vec::with_capacity(result.content.len());
            for (n, block) in result.content.into_iter().enumerate() {
                let read =
                    read_posted_block(block).map_err(|e| invalid(format!("content[{n}]: {e}")))?;
                content.extend(read);
            }
            let output = ToolOutput {
                content,
                structured: None,
                is_error: result.is_error,
            };
            let payload = json!({
                "customToolUseId": call_id,
                "isError": output.is_error,
                "content": output.content,
            });
            let delivery = app.board.answer(&call_id, session.id(), output);
            let target = Target {
                call_id,
                waited: Status::AwaitingCustomToolResult,
                what: "a custom tool result",
            };
            (
                EventKind::CustomToolResult,
                payload,
                delivered(delivery, target)?,
            )
        }
        Some("user.elicitation_result") => {
            let result: answers::ElicitationResult =
                serde_json::from_value(event).map_err(|e| invalid(e.to_string()))?;
            let (call_id, answer) = result.answer().map_err(invalid)?;
            let payload = json!({ "callId": call_id, "answer": answer });
            let delivery =
                app.board
                    .answer_question(&call_id, session.id(), Answered::Elicitation(answer));
            let target = Target {
                call_id,
                waited: Status::AwaitingElicitationResult,
                what: "an elicitation result",
            };
            (
                EventKind::ElicitationResult,
                payload,
                delivered(delivery, target)?,
            )
        }
        Some("user.sampling_result") => {
            let result: answers::SamplingResult =
                serde_json::from_value(event).map_err(|e| invalid(e.to_string()))?;
            let (call_id, answer) = result.answer().map_err(invalid)?;
            let payload = json!({ "callId": call_id, "result": answer });
            let delivery =
                app.board
                    .answer_question(&call_id, session.id(), Answered::Sampling(answer));
            let target = Target {
                call_id,
                waited: Status::AwaitingSamplingResult,
                what: "a sampling result",
            };
            (
                EventKind::SamplingResult,
                payload,
                delivered(delivery, target)?,
            )
        }
        Some(other) => {
            return Err(invalid(format!(
                "type {other:?} is not accepted; clients post \"user.custom_tool_result\", \
                 \"user.elicitation_result\" or \"user.sampling_result\""
            )));
        }
        None => return Err(invalid("missing `type`")),
    };
    Ok(outcome.unwrap_or(Applied::Here(kind, payload)))
}

/// A `custom_tool_use_id`: the call id, or the number of its event.
async fn call_id_of(session: &Session, id: &Value) -> Result<String, String> {
    match id {
        Value::String(call_id) => Ok(call_id.clone()),
        Value::Number(n) => {
            let found = match n.as_u64() {
                Some(n) => session.events().get(n).await.map_err(|e| e.to_string())?,
                None => None,
            };
            let event = found.ok_or_else(|| format!("no event {n} in this session"))?;
            let data = event.to_json();
            match (event.kind, data["data"]["callId"].as_str()) {
                (EventKind::CustomToolUse, Some(call_id)) => Ok(call_id.to_string()),
                _ => Err(format!("event {n} is not an agent.custom_tool_use")),
            }
        }
        _ => Err("`custom_tool_use_id` must be a call id or an event id".into()),
    }
}
