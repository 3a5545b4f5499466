//! A tool as an operator reviews it (`GET /<slug>/v1/tools/<name>`, and
//! every tool with `GET /<slug>/v1/tools?detail=true`): what `toolhost
//! inspect` shows (schemas, imports beside grants), its grants with
//! environment variables by name only, `toolhost check`'s lints, and its
//! `tools.lock` state.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost::lint::{self, Lint};
use toolhost::lock::{LockedTool, Lockfile};
use toolhost::registry::{Registry, Tool};

use super::App;
use super::error::{ApiError, PathParams, Query};

/// Which agent version's tool: the default agent's latest when neither is
/// given.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct VersionQuery {
    agent: Option<String>,
    version: Option<u64>,
}

/// `GET /<slug>/v1/tools/<name>`: the tool `name` in detail.
pub(super) async fn one(
    State(app): State<Arc<App>>,
    PathParams((slug, name)): PathParams<(String, String)>,
    Query(query): Query<VersionQuery>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let version = app
        .host
        .resolve(query.agent.as_deref(), query.version)
        .await?;
    let registry = version.registry();
    let tool = registry.get(&name).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_tool",
            format!("no tool `{name}` in {}", version.pin()),
        )
    })?;
    let (lock, lints) = review(&app, registry).await?;
    Ok(Json(detail(tool, &lints, lock.as_ref())))
}

/// Every tool of `registry` in detail, and the files that did not load.
pub(super) async fn all(
    app: &App,
    registry: &Registry,
) -> Result<(Vec<Value>, Vec<Value>), ApiError> {
    let (lock, lints) = review(app, registry).await?;
    let tools: Vec<Value> = registry
        .tools()
        .map(|tool| detail(tool, &lints, lock.as_ref()))
        .collect();
    let failures: Vec<Value> = registry
        .failures()
        .iter()
        .map(|f| {
            json!({
                "file": f.file.file_name().map(|n| n.to_string_lossy()),
                "tool": f.tool,
                "reason": f.reason,
            })
        })
        .collect();
    Ok((tools, failures))
}

/// What a tool of `registry` is held to: `tools.lock` of the host
/// directory, if there is one, and `toolhost check`'s findings about every
/// tool (some rules look at the tools together).
async fn review(app: &App, registry: &Registry) -> Result<(Option<Lockfile>, Vec<Lint>), ApiError> {
    let dir = app.host.dir().to_path_buf();
    let lock = tokio::task::spawn_blocking(move || Lockfile::load(&dir))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|e| ApiError::internal(format!("{e:#}")))?;
    let lints = lint::lint(registry.all().map(|t| lint::Subject::from(&**t)));
    Ok((lock, lints))
}

/// `tool` in detail, with its findings among `lints`, against `lock`.
fn detail(tool: &Tool, lints: &[Lint], lock: Option<&Lockfile>) -> Value {
    let now = LockedTool::of(tool);
    let mut out = tool.inspection();
    out["file"] = json!(tool.path().file_name().map(|n| n.to_string_lossy()));
    let mut grants = serde_json::to_value(&now.grants).unwrap_or(Value::Null);
    grants["env"] = json!(now.grants.env.keys().collect::<Vec<_>>());
    out["grants"] = grants;
    out["lints"] = json!(
        lints
            .iter()
            .filter(|l| l.tool == tool.name())
            .map(|l| json!({ "rule": l.rule, "message": l.message }))
            .collect::<Vec<_>>()
    );
    out["lock"] = match lock.map(|lock| lock.tools.get(tool.name())) {
        None => json!({ "state": "no_lock" }),
        Some(None) => json!({ "state": "unlocked" }),
        Some(Some(locked)) => match locked.changes(&now) {
            changes if changes.is_empty() => json!({ "state": "pinned" }),
            changes => json!({ "state": "drifted", "changes": changes }),
        },
    };
    out
}
