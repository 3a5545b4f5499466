//! A session's artifacts: listed, and downloaded as they were saved.
//!
//! A download is a tool's bytes under a tool's media type: it is served as
//! an attachment that no browser renders or sniffs (`Content-Disposition:
//! attachment`, `X-Content-Type-Options: nosniff`, `Content-Security-Policy:
//! sandbox`).

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use toolhost::artifacts::{ArtifactError, SessionArtifacts};

use super::App;
use super::caller::{Caller, check_owner};
use super::error::{ApiError, PathParams};
use super::sessions::find;

fn artifact_error(error: ArtifactError) -> ApiError {
    match error {
        ArtifactError::NotFound(_) => ApiError::new(
            StatusCode::NOT_FOUND,
            "artifact_not_found",
            error.to_string(),
        ),
        other => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "artifact_unavailable",
            other.to_string(),
        ),
    }
}

/// `GET /<slug>/v1/sessions/<id>/artifacts`: `{"artifacts": [...]}`, by name.
pub(super) async fn list(
    State(app): State<Arc<App>>,
    PathParams((slug, id)): PathParams<(String, String)>,
    Caller(caller): Caller,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    check_owner(&session, caller.as_ref())?;
    let listed = tokio::task::spawn_blocking(move || {
        SessionArtifacts::new(&session).list().map(|all| {
            all.iter()
                .map(|a| a.to_json(session.id()))
                .collect::<Vec<_>>()
        })
    })
    .await
    .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?
    .map_err(artifact_error)?;
    Ok(Json(json!({ "artifacts": listed })))
}

/// `GET /<slug>/v1/sessions/<id>/artifacts/<name>`: the bytes, as an
/// attachment of the artifact's media type.
pub(super) async fn download(
    State(app): State<Arc<App>>,
    PathParams((slug, id, name)): PathParams<(String, String, String)>,
    Caller(caller): Caller,
) -> Result<Response, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    check_owner(&session, caller.as_ref())?;
    let (artifact, file) =
        tokio::task::spawn_blocking(move || SessionArtifacts::new(&session).open(&name))
            .await
            .map_err(|e| {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
            })?
            .map_err(artifact_error)?;
    // The bytes opened, which a save replacing the artifact since leaves be.
    let size = file.metadata().map_or(artifact.size, |m| m.len());
    Ok(attachment(file, size, &artifact.media_type, &artifact.name))
}

/// `file` (`size` bytes) as a download the browser saves and never renders:
/// `Content-Disposition: attachment` named `name` (`[A-Za-z0-9._-]`, or
/// left unnamed), `nosniff` and `CSP: sandbox`.
pub(super) fn attachment(file: std::fs::File, size: u64, media_type: &str, name: &str) -> Response {
    // What was there when it was opened: a file still being written is
    // sent as far as `Content-Length` says.
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(
        tokio::io::AsyncReadExt::take(tokio::fs::File::from_std(file), size),
    ));
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    let fixed = [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::CONTENT_SECURITY_POLICY, "sandbox"),
        (header::CACHE_CONTROL, "no-store"),
        (header::CONTENT_TYPE, "application/octet-stream"),
        (header::CONTENT_DISPOSITION, "attachment"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if let Ok(value) = HeaderValue::from_str(media_type) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    let safe = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if safe
        && !name.is_empty()
        && let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\""))
    {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    response
}
