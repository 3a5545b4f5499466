//! A streamable HTTP server's transport: rmcp's client worker over the
//! host's own HTTP client, so that an MCP server's `url` is reached under
//! the same egress rules as a tool's requests: the host's resolver and
//! dialer ([`Network`]), a name's addresses dialed only when globally
//! routable (an address written literally in `url` is the operator's
//! choice; for a server an agent made over the API declared, no address
//! is but those `[server] agent_mcp_servers` names), TLS with the web PKI
//! roots, HTTP/1.1, redirects never followed, and every response body read
//! under a byte cap. Each request dials a connection of its own, so every
//! connection, reconnects included, is screened anew.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt as _;
use futures::stream::BoxStream;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use crate::caps::http::{AllowList, Network, Screen};
use crate::config::mcp::RESERVED_HEADERS;
use crate::outbound::{OutboundClient, OutboundError, read_capped};

const SESSION_ID: &str = "mcp-session-id";
const LAST_EVENT_ID: &str = "last-event-id";
const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";

/// The host's HTTP client for MCP servers.
#[derive(Clone)]
pub(super) struct EgressClient {
    client: OutboundClient,
    /// For a server an agent made over the API declared: the origins the
    /// operator lets such agents reach.
    screened: Option<Arc<AllowList>>,
}

type Error = StreamableHttpError<OutboundError>;
type Events = BoxStream<'static, Result<Sse, SseError>>;

impl EgressClient {
    /// A client reaching servers through `network`, screened by what
    /// `screened` allows (see [`crate::config::mcp::McpServer::screened`]).
    pub(super) fn new(network: Network, screened: Option<Arc<AllowList>>) -> Result<Self, String> {
        Ok(Self {
            client: OutboundClient::new(network)?,
            screened,
        })
    }

    /// Send `request` on a connection of its own; the response's body is
    /// read by the caller, under a cap.
    async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<http::Response<Incoming>, OutboundError> {
        let https = request.uri().scheme_str() == Some("https");
        let screen = self.screened.as_deref().map(|allowed| Screen {
            allowed,
            scheme: if https { "https" } else { "http" },
            key: "`[server] agent_mcp_servers`",
        });
        self.client.send(request, screen).await
    }

    /// A request to `uri` with the session, credentials and headers every
    /// message carries.
    fn request(
        method: Method,
        uri: &str,
        session_id: Option<&str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        body: Bytes,
    ) -> Result<Request<Full<Bytes>>, Error> {
        let mut builder = Request::builder()
            .method(method)
            .uri(uri)
            .header(ACCEPT, format!("{EVENT_STREAM}, {JSON}"));
        if !body.is_empty() {
            builder = builder.header(CONTENT_TYPE, JSON);
        }
        if let Some(session_id) = session_id {
            builder = builder.header(SESSION_ID, session_id);
        }
        if let Some(token) = auth_header {
            builder = builder.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        let mut request = builder
            .body(Full::new(body))
            .map_err(|e| Error::Client(OutboundError(format!("bad request: {e}"))))?;
        for (name, value) in custom_headers {
            if RESERVED_HEADERS
                .iter()
                .any(|r| name.as_str().eq_ignore_ascii_case(r))
                && !name.as_str().eq_ignore_ascii_case("mcp-protocol-version")
            {
                return Err(Error::ReservedHeaderConflict(name.to_string()));
            }
            request.headers_mut().insert(name, value);
        }
        Ok(request)
    }
}

impl EgressClient {
    /// What a response that is not a success says, cut at `cap` bytes: its
    /// status alone for a server an agent made over the API declared (what
    /// it answers is never quoted back to whoever made the agent).
    async fn failure(&self, response: http::Response<Incoming>, cap: usize) -> Error {
        let status = response.status();
        if self.screened.is_some() {
            return Error::UnexpectedServerResponse(format!("HTTP {status}").into());
        }
        let text = match read_capped(response.into_body(), cap).await {
            Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            _ => String::new(),
        };
        Error::UnexpectedServerResponse(format!("HTTP {status}: {}", text.trim()).into())
    }
}

fn content_type_is(response: &http::Response<Incoming>, expected: &str) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(expected))
}

/// The events of an SSE body; an event longer than `max_event` bytes ends
/// the stream with an error.
fn events(body: Incoming, max_event: usize) -> Events {
    let mut pending = 0usize;
    let bytes = body.into_data_stream().map(move |chunk| {
        let chunk = chunk.map_err(io::Error::other)?;
        // Bytes since the last blank line, which ends an event.
        pending = match chunk.windows(2).rposition(|w| w == b"\n\n") {
            Some(at) => chunk.len() - at - 2,
            None => pending.saturating_add(chunk.len()),
        };
        if pending > max_event {
            return Err(io::Error::other(format!(
                "an event is longer than {max_event} bytes"
            )));
        }
        Ok::<Bytes, io::Error>(chunk)
    });
    SseStream::from_bytes_stream(bytes).boxed()
}

impl StreamableHttpClient for EgressClient {
    type Error = OutboundError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let body = Bytes::from(serde_json::to_vec(&message)?);
        let request = Self::request(
            Method::POST,
            &uri,
            session_id.as_deref(),
            auth_header,
            custom_headers,
            body,
        )?;
        let response = self.send(request).await.map_err(Error::Client)?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(Error::SessionExpired);
        }
        if !status.is_success() {
            return Err(self.failure(response, limits.max_error_response_size).await);
        }
        let session = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if content_type_is(&response, EVENT_STREAM) {
            let stream = events(response.into_body(), limits.max_sse_event_size);
            return Ok(StreamableHttpPostResponse::Sse(stream, session));
        }
        if content_type_is(&response, JSON) {
            let max = limits.max_json_response_size;
            let bytes = read_capped(response.into_body(), max)
                .await
                .map_err(Error::Client)?
                .ok_or(Error::ResponseBodyTooLarge { max_size: max })?;
            let message: ServerJsonRpcMessage = serde_json::from_slice(&bytes)?;
            return Ok(StreamableHttpPostResponse::Json(message, session));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        Err(Error::UnexpectedContentType(content_type))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let request = Self::request(
            Method::DELETE,
            &uri,
            Some(&session_id),
            auth_header,
            custom_headers,
            Bytes::new(),
        )?;
        let response = self.send(request).await.map_err(Error::Client)?;
        match response.status() {
            StatusCode::METHOD_NOT_ALLOWED => Err(Error::ServerDoesNotSupportDeleteSession),
            status if status.is_success() => Ok(()),
            _ => Err(self.failure(response, 4096).await),
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, Error> {
        let mut request = Self::request(
            Method::GET,
            &uri,
            session_id.as_deref(),
            auth_header,
            custom_headers,
            Bytes::new(),
        )?;
        if let Some(id) = last_event_id {
            let value = HeaderValue::try_from(id)
                .map_err(|e| Error::Client(OutboundError(format!("bad Last-Event-Id: {e}"))))?;
            request.headers_mut().insert(LAST_EVENT_ID, value);
        }
        let response = self.send(request).await.map_err(Error::Client)?;
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(Error::ServerDoesNotSupportSse);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(Error::SessionExpired);
        }
        if !status.is_success() {
            return Err(self.failure(response, 4096).await);
        }
        if !content_type_is(&response, EVENT_STREAM) {
            return Err(Error::ServerDoesNotSupportSse);
        }
        let limits = StreamableHttpResponseLimits::default();
        Ok(events(response.into_body(), limits.max_sse_event_size))
    }
}
