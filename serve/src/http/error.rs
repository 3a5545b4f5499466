//! API errors: a status, a stable code, a message, and a JSON body.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{HeaderValue, StatusCode, header, request::Parts};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use toolhost::agents::AgentError;
use toolhost::error::CallError;
use toolhost::session::{BindError, RemoveError, StoreError, Unavailable};

/// An error response: `{"ok": false, "error": {"code", "message", ...}}`.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable code clients match on.
    pub code: &'static str,
    /// What went wrong, in words.
    pub message: String,
    /// More fields for the error object (each validation error, the available tools).
    pub details: Option<Value>,
}

impl ApiError {
    /// A fault in the server itself (`500 internal_error`).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", message)
    }

    /// An error with no details.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            details: None,
        }
    }

    /// The same error with extra fields in its error object.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The JSON body.
    pub fn body(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let (Some(Value::Object(extra)), Some(object)) = (&self.details, error.as_object_mut()) {
            object.extend(extra.clone());
        }
        json!({ "ok": false, "error": error })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        let extra = match self.status {
            StatusCode::UNAUTHORIZED => Some((header::WWW_AUTHENTICATE, "Bearer")),
            StatusCode::SERVICE_UNAVAILABLE => Some((header::RETRY_AFTER, "1")),
            _ => None,
        };
        if let Some((name, value)) = extra {
            response
                .headers_mut()
                .insert(name, HeaderValue::from_static(value));
        }
        response
    }
}

impl From<CallError> for ApiError {
    fn from(error: CallError) -> Self {
        Self::from(&error)
    }
}

impl From<&CallError> for ApiError {
    fn from(error: &CallError) -> Self {
        let status = match error {
            CallError::UnknownTool { .. } | CallError::SessionEnded { .. } => StatusCode::NOT_FOUND,
            CallError::InvalidInput { .. } | CallError::ToolNotCallable { .. } => {
                StatusCode::BAD_REQUEST
            }
            CallError::ApprovalRequired { .. } => StatusCode::FORBIDDEN,
            CallError::SessionBusy { .. }
            | CallError::VersionUnavailable { .. }
            | CallError::CallEnded { .. } => StatusCode::CONFLICT,
            CallError::Overloaded(_) | CallError::StateUnavailable { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            CallError::WorkspaceUnavailable { .. } | CallError::Internal(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        let details = match error {
            CallError::UnknownTool { known, .. } => Some(json!({ "availableTools": known })),
            CallError::InvalidInput { errors, .. } => Some(json!({ "errors": errors })),
            _ => None,
        };
        Self {
            status,
            code: error.code(),
            message: error.to_string(),
            details,
        }
    }
}

impl From<BindError> for ApiError {
    fn from(error: BindError) -> Self {
        let status = match &error {
            BindError::InvalidToken { .. } => StatusCode::BAD_REQUEST,
            BindError::SessionNotFound { .. } => StatusCode::NOT_FOUND,
            BindError::NotOwner { .. } => StatusCode::FORBIDDEN,
            BindError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        };
        Self::new(status, error.code(), error.to_string())
    }
}

impl From<AgentError> for ApiError {
    fn from(error: AgentError) -> Self {
        let status = match &error {
            AgentError::UnknownAgent { .. } | AgentError::VersionNotFound { .. } => {
                StatusCode::NOT_FOUND
            }
            AgentError::VersionNotLoaded { .. }
            | AgentError::Exists { .. }
            | AgentError::NotEditable { .. } => StatusCode::CONFLICT,
            AgentError::Invalid { .. } => StatusCode::BAD_REQUEST,
            AgentError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            AgentError::Io(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self::new(status, error.code(), error.to_string())
    }
}

impl From<RemoveError> for ApiError {
    fn from(error: RemoveError) -> Self {
        match &error {
            RemoveError::NotFound { .. } => Self::new(
                StatusCode::NOT_FOUND,
                "session_not_found",
                error.to_string(),
            ),
            RemoveError::Busy { .. } => {
                Self::new(StatusCode::CONFLICT, "session_busy", error.to_string())
            }
            RemoveError::Unavailable(unavailable) => Self::from(unavailable),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match &error {
            StoreError::Invalid(_) => Self::new(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                error.to_string(),
            ),
            StoreError::TokenTaken { session, .. } => {
                Self::new(StatusCode::CONFLICT, "session_exists", error.to_string())
                    .with_details(json!({ "sessionId": session }))
            }
            StoreError::Full { .. } => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "too_many_sessions",
                error.to_string(),
            ),
            StoreError::Io(_) => Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "workspace_unavailable",
                error.to_string(),
            ),
            StoreError::Unavailable(unavailable) => Self::from(unavailable),
        }
    }
}

impl From<&Unavailable> for ApiError {
    fn from(error: &Unavailable) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "state_unavailable",
            error.to_string(),
        )
    }
}

impl From<Unavailable> for ApiError {
    fn from(error: Unavailable) -> Self {
        Self::from(&error)
    }
}

/// A JSON request body whose rejections are JSON errors too: wrong content
/// type (415), malformed or mistyped JSON (400), a body over the cap (413).
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(json_rejection(&rejection)),
        }
    }
}

fn json_rejection(rejection: &JsonRejection) -> ApiError {
    let status = rejection.status();
    let code = match status {
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
        _ => "invalid_request",
    };
    let message = match status {
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            "the body must be JSON with `content-type: application/json`".to_string()
        }
        StatusCode::PAYLOAD_TOO_LARGE => {
            "the request body is larger than the server accepts (server.max_body_bytes)".to_string()
        }
        _ => rejection.body_text(),
    };
    // Deserialization errors (422 in axum) are bad requests here.
    let status = if status == StatusCode::UNPROCESSABLE_ENTITY {
        StatusCode::BAD_REQUEST
    } else {
        status
    };
    ApiError::new(status, code, message)
}

/// A query string whose rejections are JSON errors.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| Self(q.0))
            .map_err(|e: QueryRejection| {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", e.body_text())
            })
    }
}

/// Path parameters whose rejections are JSON errors.
pub struct PathParams<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for PathParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| Self(p.0))
            .map_err(|e: PathRejection| {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", e.body_text())
            })
    }
}
