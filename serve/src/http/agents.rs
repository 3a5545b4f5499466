//! Agents and their versions: `GET /<slug>/v1/agents[/<name>]` and
//! `GET /<slug>/v1/agents/<name>/versions[/<n>]`.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use super::App;
use super::error::{ApiError, PathParams};
use toolhost::agents::{AgentVersion, VersionRecord};
use toolhost::session::AgentPin;

/// An agent as listed: its latest version, the tool set the config
/// declares in the registry's form, and its tools' names.
fn agent_json(version: &AgentVersion) -> Value {
    json!({
        "type": "agent",
        "name": version.pin().name,
        "version": version.pin().version,
        "createdAt": version.record().created_at.to_rfc3339(),
        "tools": version.config().toolset.to_json(),
        "toolNames": version.registry().tools().map(|t| t.name()).collect::<Vec<_>>(),
    })
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
        .map(|version| agent_json(&version))
        .collect();
    Ok(Json(json!({ "agents": agents })))
}

pub(super) async fn get(
    State(app): State<Arc<App>>,
    PathParams((slug, name)): PathParams<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    Ok(Json(agent_json(&*app.host.agent(&name)?)))
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
    let pins: Vec<AgentPin> = app.sessions.list().iter().filter_map(|s| s.pin()).collect();
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
    let record = app.host.agent_version(&name, number)?;
    let mut body = serde_json::to_value(&record).map_err(|e| ApiError::internal(e.to_string()))?;
    body["loaded"] = json!(app.host.is_loaded(&AgentPin {
        name: name.clone(),
        version: number,
    }));
    Ok(Json(body))
}
