//! Agents and their versions: `GET /<slug>/v1/agents[/<name>]`,
//! `POST /<slug>/v1/agents` and `PATCH /<slug>/v1/agents/<name>` (agents
//! made over the API), and `GET /<slug>/v1/agents/<name>/versions[/<n>]`.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use super::App;
use super::error::{ApiError, JsonBody, PathParams};
use toolhost::agents::{AgentVersion, VersionRecord};
use toolhost::host::AgentSource;
use toolhost::session::AgentPin;

/// An agent as listed: its latest version, its definition in the
/// registry's form (`tools` with the defaults filled in, `mcp_servers`,
/// `components`), where that comes from, and its tools' names.
fn agent_json(app: &App, version: &AgentVersion) -> Value {
    let name = &version.pin().name;
    let source = match app.host.agent_source(name) {
        Some(AgentSource::Api) => "api",
        Some(AgentSource::Config) | None => "config",
    };
    let mut body = json!({
        "id": name,
        "type": "agent",
        "name": name,
        "version": version.pin().version,
        "createdAt": version.record().created_at.to_rfc3339(),
        "source": source,
        "toolNames": version.registry().tools().map(|t| t.name()).collect::<Vec<_>>(),
    });
    if let (Some(body), Value::Object(definition)) = (body.as_object_mut(), version.definition()) {
        body.extend(definition.clone());
    }
    body
}

/// Run `edit` to its end even if the client goes away meanwhile: an edit
/// of an agent writes its definition and commits its version off the async
/// workers, and must not be cut off between the two (nor before the fleet
/// is told).
async fn to_the_end<T: Send + 'static>(
    edit: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::spawn(edit)
        .await
        .map_err(|e| ApiError::internal(format!("the agent's edit failed: {e}")))
}

/// `400 invalid_agent`, as the host answers a definition that breaks a rule.
fn invalid_agent(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid_agent", message)
}

/// A request body that must be a JSON object.
fn object(body: Value) -> Result<Map<String, Value>, ApiError> {
    match body {
        Value::Object(map) => Ok(map),
        other => Err(invalid_agent(format!(
            "the body must be a JSON object with `tools`, not {other}"
        ))),
    }
}

pub(super) async fn create(
    State(app): State<Arc<App>>,
    PathParams(slug): PathParams<String>,
    JsonBody(body): JsonBody<Value>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    app.check_slug(&slug)?;
    let mut body = object(body)?;
    let name = match body.remove("name") {
        Some(Value::String(name)) => name,
        _ => {
            return Err(invalid_agent(
                "`name` (a string) is required: the agent's slug",
            ));
        }
    };
    let host = app.host.clone();
    let version = to_the_end(async move { host.create_agent(&name, &body).await }).await??;
    Ok((StatusCode::CREATED, Json(agent_json(&app, &version))))
}

pub(super) async fn update(
    State(app): State<Arc<App>>,
    PathParams((slug, name)): PathParams<(String, String)>,
    JsonBody(body): JsonBody<Value>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let mut patch = object(body)?;
    if let Some(given) = patch.remove("name")
        && given != json!(name)
    {
        return Err(invalid_agent(format!(
            "`name` is the agent's id and cannot change (this is `{name}`)"
        )));
    }
    let host = app.host.clone();
    let committed = to_the_end(async move { host.update_agent(&name, &patch).await }).await??;
    let mut body = agent_json(&app, &committed.version);
    body["changes"] = match &committed.diff {
        Some(diff) => serde_json::to_value(diff).map_err(|e| ApiError::internal(e.to_string()))?,
        None => Value::Null,
    };
    Ok(Json(body))
}

/// A version as listed: its number, when it was made, whether its code is
/// loaded, and how many of `sessions` (the store's pins) are bound to it.
fn summary_json(app: &App, record: &VersionRecord, sessions: &[AgentPin]) -> Value {
    let pin = AgentPin {
        name: record.agent.clone(),
        version: record.version,
    };
    json!({
        "version": record.version,
        "createdAt": record.created_at.to_rfc3339(),
        "loaded": app.host.is_loaded(&pin),
        "sessions": sessions.iter().filter(|p| **p == pin).count(),
        "toolCount": record.tools.len(),
    })
}

pub(super) async fn list(
    State(app): State<Arc<App>>,
    PathParams(slug): PathParams<String>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let agents: Vec<Value> = app
        .host
        .agent_names()
        .iter()
        .filter_map(|name| app.host.agent(name).ok())
        .map(|version| agent_json(&app, &version))
        .collect();
    Ok(Json(json!({ "agents": agents })))
}

pub(super) async fn get(
    State(app): State<Arc<App>>,
    PathParams((slug, name)): PathParams<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    Ok(Json(agent_json(&app, &*app.host.agent(&name)?)))
}

pub(super) async fn versions(
    State(app): State<Arc<App>>,
    PathParams((slug, name)): PathParams<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let host = app.host.clone();
    let records = tokio::task::spawn_blocking(move || host.agent_versions(&name))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))??;
    let pins: Vec<AgentPin> = app
        .sessions
        .list()
        .await?
        .iter()
        .filter_map(|listed| listed.session.pin())
        .collect();
    let versions: Vec<Value> = records
        .iter()
        .map(|r| summary_json(&app, r, &pins))
        .collect();
    Ok(Json(json!({ "versions": versions })))
}

pub(super) async fn version(
    State(app): State<Arc<App>>,
    PathParams((slug, name, number)): PathParams<(String, String, u64)>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let record = app.host.agent_version(&name, number).await?;
    let mut body = serde_json::to_value(&record).map_err(|e| ApiError::internal(e.to_string()))?;
    body["loaded"] = json!(app.host.is_loaded(&AgentPin {
        name: name.clone(),
        version: number,
    }));
    Ok(Json(body))
}
