//! `GET /<slug>/v1/tools` and `POST /<slug>/v1/tools/<name>`.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::App;
use super::board::{BoardApprover, BoardAsker, BoardCustomTools, Outcome, ParkSignal};
use super::error::{ApiError, JsonBody, PathParams, Query};
use toolhost::Host;
use toolhost::ask::NoAsker;
use toolhost::call::{CallInput, CallOptions, CallResult, CallTrace, NoCustomTools, new_call_id};
use toolhost::session::{Credentials, Session, SessionSpec};

/// `GET /<slug>/v1/tools`: which version's tools, and whether in detail.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListQuery {
    agent: Option<String>,
    version: Option<u64>,
    /// Each tool as `GET …/tools/<name>` shows it, and the load failures.
    #[serde(default)]
    detail: bool,
}

pub(super) async fn list(
    State(app): State<Arc<App>>,
    PathParams(slug): PathParams<String>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let version = app
        .host
        .resolve(query.agent.as_deref(), query.version)
        .await?;
    if !query.detail {
        return Ok(Json(Host::listing_of(&version)));
    }
    let (tools, failures) = super::inspect::all(&app, version.registry()).await?;
    let mut listing = Host::listing_with(&version, tools);
    listing["failures"] = Value::Array(failures);
    Ok(Json(listing))
}

/// The body of a call.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct CallBody {
    /// The tool's input; `{}` when absent.
    input: Option<Box<RawValue>>,
    session_id: Option<String>,
    continuation_token: Option<String>,
    /// The caller's principal: checked against the session owner's.
    auth: Option<Value>,
    /// What the call's session presents to upstream MCP servers
    /// (`auth_headers`) from now on: held in this server's memory only.
    credentials: Option<Value>,
    /// The agent whose tools a call outside a session runs (a session's
    /// calls run its own).
    agent: Option<String>,
    /// That agent's version (its latest when absent).
    version: Option<u64>,
    /// Put the call's trace (log lines, stdout, stderr) in the envelope.
    #[serde(default)]
    include_trace: bool,
}

pub(super) async fn call(
    State(app): State<Arc<App>>,
    PathParams((slug, name)): PathParams<(String, String)>,
    JsonBody(body): JsonBody<CallBody>,
) -> Result<Response, ApiError> {
    app.check_slug(&slug)?;
    // Named: the version a scratch session runs (else the latest, when
    // the call runs).
    let pin = match (&body.agent, body.version) {
        (None, None) => None,
        (agent, version) => Some(app.host.pin_for(agent.as_deref(), version).await?),
    };
    let caller = body
        .auth
        .as_ref()
        .map(super::caller::principal)
        .transpose()?;
    let credentials = body
        .credentials
        .as_ref()
        .map(Credentials::from_json)
        .transpose()
        .map_err(|why| ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", why))?;
    let bound = app
        .sessions
        .bind_or(
            body.session_id.as_deref(),
            body.continuation_token.as_deref(),
            caller.as_ref(),
            SessionSpec {
                pin: pin.clone(),
                ..SessionSpec::default()
            },
        )
        .await?;
    if let Some(credentials) = credentials {
        bound.session.set_credentials(credentials);
    }
    let held = bound.session.pin().filter(|_| !bound.scratch);
    if let (Some(held), Some(pin)) = (held, &pin) {
        let other_agent = body.agent.as_ref().is_some_and(|a| *a != held.name);
        let other_version = body.version.is_some_and(|v| v != held.version);
        if other_agent || other_version {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                format!(
                    "`agent`/`version` name {pin}, but the session runs {held}: a session's \
                     calls run its own version; upgrade it (POST /sessions/<id>/upgrade) or \
                     leave them out"
                ),
            ));
        }
    }
    let input = body.input.map_or_else(
        || CallInput::Text("{}".into()),
        |raw| CallInput::Text(raw.get().into()),
    );
    let call_id = new_call_id();
    let (signal, parked) = ParkSignal::new();
    let options = if bound.scratch {
        CallOptions::new(bound.session.clone())
            .with_approver(Arc::new(BoardApprover {
                board: app.board.clone(),
                signal,
                timeout: app.options.approval_timeout,
                requested_by: bound.session.auth().cloned(),
            }))
            .with_custom_tools(Arc::new(NoCustomTools))
            .with_asker(Arc::new(NoAsker(
                "over the HTTP API a call can ask the user or a model only in a session: pass \
                 `sessionId`, then answer its agent.elicitation or agent.sampling event",
            )))
    } else {
        parked_options(&app, bound.session.clone(), signal)
    }
    .with_call_id(call_id.clone());
    let task = {
        let app = app.clone();
        let call_id = call_id.clone();
        let name = name.clone();
        tokio::spawn(async move {
            let outcome: Outcome = app
                .host
                .call(&name, input, &options)
                .await
                .map_err(Arc::new);
            app.board.finish(&call_id, &outcome);
            outcome
        })
    };
    tokio::pin!(task);
    tokio::select! {
        joined = &mut task => {
            let outcome = joined.map_err(|e| {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", format!("the call failed: {e}"))
            })?;
            outcome_response(outcome, body.include_trace)
        }
        Ok(status) = parked => Ok((
            StatusCode::ACCEPTED,
            Json(json!({
                "ok": true,
                "toolName": name,
                "callId": call_id,
                "sessionId": bound.session.id(),
                "status": status,
                "poll": format!("/{}/v1/calls/{call_id}", app.slug),
            })),
        )
            .into_response()),
    }
}

/// The options of a call in a stored session: it parks on the board to wait
/// for an approval, a custom tool's result or an answer, raising `signal`.
pub(super) fn parked_options(
    app: &App,
    session: Arc<Session>,
    signal: Arc<ParkSignal>,
) -> CallOptions {
    CallOptions::new(session.clone())
        .with_approver(Arc::new(BoardApprover {
            board: app.board.clone(),
            signal: signal.clone(),
            timeout: app.options.approval_timeout,
            requested_by: session.auth().cloned(),
        }))
        .with_custom_tools(Arc::new(BoardCustomTools {
            board: app.board.clone(),
            signal: signal.clone(),
            timeout: app.options.custom_tool_timeout,
        }))
        .with_asker(Arc::new(BoardAsker {
            board: app.board.clone(),
            signal,
            session,
        }))
}

/// The HTTP answer for a finished call: `200` with the envelope (and its
/// trace, when `with_trace`), or the refusal's status and error body.
pub(super) fn outcome_response(outcome: Outcome, with_trace: bool) -> Result<Response, ApiError> {
    match outcome {
        Ok(result) if with_trace => Ok(Json(WithTrace {
            result: &result,
            trace: &result.trace,
        })
        .into_response()),
        Ok(result) => Ok(Json(&*result).into_response()),
        Err(error) => Err(ApiError::from(&*error)),
    }
}

/// An envelope with its trace: the tool's log lines, stdout and stderr.
#[derive(Serialize)]
struct WithTrace<'a> {
    #[serde(flatten)]
    result: &'a CallResult,
    trace: &'a CallTrace,
}
