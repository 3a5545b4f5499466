//! A session's workspace, read-only: `GET /<slug>/v1/sessions/<id>/workspace`
//! lists its files, `GET …/workspace/<path>` downloads one (as an
//! attachment, never rendered).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use toolhost::session::workspace_files;

use super::App;
use super::artifacts::attachment;
use super::caller::{Caller, check_owner};
use super::error::{ApiError, PathParams};
use super::sessions::find;

/// `{"entries": [{path, kind, size, modified}], "truncated"}`.
pub(super) async fn list(
    State(app): State<Arc<App>>,
    PathParams((slug, id)): PathParams<(String, String)>,
    Caller(caller): Caller,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    check_owner(&session, caller.as_ref())?;
    let listing = tokio::task::spawn_blocking(move || workspace_files::list(&session))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|e| ApiError::internal(format!("cannot list the workspace: {e}")))?;
    Ok(Json(json!(listing)))
}

/// The regular file at `path` in the workspace.
pub(super) async fn download(
    State(app): State<Arc<App>>,
    PathParams((slug, id, path)): PathParams<(String, String, String)>,
    Caller(caller): Caller,
) -> Result<Response, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    check_owner(&session, caller.as_ref())?;
    let opened = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || workspace_files::open(&session, &path))
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?
    };
    let file = opened.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "file_not_found",
            format!("no file {path:?} in session `{id}`'s workspace"),
        )
    })?;
    let size = file.metadata().map_or(0, |m| m.len());
    let name = path.rsplit('/').next().unwrap_or_default();
    Ok(attachment(file, size, "application/octet-stream", name))
}
