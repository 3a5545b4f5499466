//! Who a request acts for. A client asserts a principal in the body's
//! `auth` (calls, client events, approvals, new sessions) or, on routes that
//! act on a session without a body of their own (ending it, upgrading it,
//! cancelling its reminders or its calls, reading its workspace, artifacts
//! or agent-execution tools), in the `Toolhost-Auth` header as JSON. Either way it is identity only ([`client_principal`]),
//! and a session that names an owner takes only requests naming the same
//! principal.

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde_json::Value;
use toolhost::session::{AUTH_HEADER, Session, client_principal, header_principal, principal_name};

use super::error::ApiError;

/// The header naming the principal a bodiless request acts for.
pub(super) const HEADER: &str = AUTH_HEADER;

/// The principal a request without a body of its own acts for (the
/// `Toolhost-Auth` header), if it names one.
pub(super) struct Caller(pub(super) Option<Value>);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let Some(value) = parts.headers.get(HEADER) else {
            return Ok(Self(None));
        };
        header_principal(value.as_bytes())
            .map(|p| Self(Some(p)))
            .map_err(|why| ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", why))
    }
}

/// `auth` as a client asserted it, checked: its principal, or a
/// `400 invalid_request` saying why not.
pub(super) fn principal(auth: &Value) -> Result<Value, ApiError> {
    client_principal(auth)
        .map_err(|why| ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", why))
}

/// Refuse `caller` on `session` when the session names another owner.
pub(super) fn check_owner(session: &Session, caller: Option<&Value>) -> Result<(), ApiError> {
    if session.admits(caller) {
        return Ok(());
    }
    let owner = session.auth().map_or_else(String::new, principal_name);
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        "session_forbidden",
        format!(
            "session `{}` belongs to {owner}: name that principal in `auth` (or, for a \
             request without a body, in the `Toolhost-Auth` header)",
            session.id()
        ),
    ))
}
