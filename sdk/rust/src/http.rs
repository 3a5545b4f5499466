//! Outgoing HTTP over `wasi:http/outgoing-handler`.
//!
//! The host lets a tool reach only the origins its grant lists
//! (`http = ["https://api.github.com"]`), and a call whose effect is `read`
//! only with GET and HEAD. A refused request fails with
//! [`ErrorKind::Denied`] and a message that says so.
//!
//! Redirects are not followed (`wasi:http` does not follow them): a 3xx
//! response comes back as it is; [`resolve`] turns its `Location` into the
//! next URL.
//!
//! ```no_run
//! use toolhost_sdk::http;
//! # fn run() -> Result<(), http::Error> {
//! let page = http::get("https://example.com/")?;
//! println!("{} {}", page.status, page.text());
//!
//! let created = http::Request::new("POST", "https://api.example.com/items")
//!     .header("content-type", "application/json")
//!     .body(r#"{"name":"x"}"#)
//!     .max_body_bytes(64 * 1024)
//!     .send()?;
//! # let _ = created; Ok(()) }
//! ```

use std::fmt;
use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::bindings::wasi::http::{outgoing_handler, types};
use crate::bindings::wasi::io::streams::StreamError;

/// How many response-body bytes [`get`] and [`request`] keep (10 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// Sends a request and reads the response, keeping at most
/// [`DEFAULT_MAX_BODY_BYTES`] of its body.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Result<Response, Error> {
    let mut request = Request::new(method, url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.body(body);
    }
    request.send()
}

/// Sends a GET request and reads the response, keeping at most
/// [`DEFAULT_MAX_BODY_BYTES`] of its body.
pub fn get(url: &str) -> Result<Response, Error> {
    Request::new("GET", url).send()
}

/// An HTTP request under construction.
#[derive(Debug, Clone)]
pub struct Request {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    max_body_bytes: usize,
    timeout: Option<Duration>,
}

impl Request {
    /// A request with `method` (e.g. `"GET"`) to the absolute `url`.
    pub fn new(method: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            method: method.into(),
            url: url.into(),
            headers: Vec::new(),
            body: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            timeout: None,
        }
    }

    /// Adds a header (repeat the call for repeated headers).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the request body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Keeps at most `max` bytes of the response body; the rest is not read
    /// and [`Response::truncated`] is set.
    pub fn max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }

    /// Asks the host to give up when connecting, waiting for the first
    /// response byte, or waiting between bytes takes longer than `timeout`
    /// (the host's own limits apply too).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sends the request and reads the whole response body, up to the cap.
    pub fn send(self) -> Result<Response, Error> {
        let target = Target::parse(&self.url)?;
        let context = format!("{} {}", self.method, self.url);
        let fail = |kind, what: &str| Error::new(kind, format!("{context}: {what}"));

        let headers = types::Fields::new();
        for (name, value) in &self.headers {
            headers.append(name, value.as_bytes()).map_err(|err| {
                fail(
                    ErrorKind::InvalidRequest,
                    &format!("header {name:?}: {err:?}"),
                )
            })?;
        }
        let request = types::OutgoingRequest::new(headers);
        request
            .set_method(&method(&self.method))
            .map_err(|()| fail(ErrorKind::InvalidRequest, "invalid method"))?;
        request
            .set_scheme(Some(&target.scheme))
            .map_err(|()| fail(ErrorKind::InvalidRequest, "invalid scheme"))?;
        request
            .set_authority(Some(&target.authority))
            .map_err(|()| fail(ErrorKind::InvalidRequest, "invalid host or port"))?;
        request
            .set_path_with_query(Some(&target.path_and_query))
            .map_err(|()| fail(ErrorKind::InvalidRequest, "invalid path"))?;
        let outgoing_body = request
            .body()
            .map_err(|()| fail(ErrorKind::Other, "request body unavailable"))?;

        let options = self.timeout.map(|timeout| {
            let nanos = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
            let options = types::RequestOptions::new();
            // A host that does not support a timeout refuses it; its own limits
            // still apply, so the refusal is not an error.
            let _ = options.set_connect_timeout(Some(nanos));
            let _ = options.set_first_byte_timeout(Some(nanos));
            let _ = options.set_between_bytes_timeout(Some(nanos));
            options
        });

        let pending = outgoing_handler::handle(request, options)
            .map_err(|code| Error::from_code(&context, code))?;

        if let Some(body) = &self.body {
            let stream = outgoing_body
                .write()
                .map_err(|()| fail(ErrorKind::Other, "request body stream unavailable"))?;
            // `blocking-write-and-flush` takes at most 4096 bytes a call.
            for chunk in body.chunks(4096) {
                stream
                    .blocking_write_and_flush(chunk)
                    .map_err(|err| Error::from_stream(&context, err))?;
            }
        }
        types::OutgoingBody::finish(outgoing_body, None)
            .map_err(|code| Error::from_code(&context, code))?;

        let response = loop {
            match pending.get() {
                Some(result) => break result,
                None => pending.subscribe().block(),
            }
        };
        let response = response
            .map_err(|()| fail(ErrorKind::Other, "response already taken"))?
            .map_err(|code| Error::from_code(&context, code))?;

        let status = response.status();
        let headers = response
            .headers()
            .entries()
            .into_iter()
            .map(|(name, value)| (name, String::from_utf8_lossy(&value).into_owned()))
            .collect();
        let (body, truncated) = read_body(&context, &response, self.max_body_bytes)?;
        Ok(Response {
            status,
            headers,
            body,
            truncated,
        })
    }
}

/// Reads at most `max` bytes of the body; `true` when more was left unread.
fn read_body(
    context: &str,
    response: &types::IncomingResponse,
    max: usize,
) -> Result<(Vec<u8>, bool), Error> {
    let unavailable = || {
        Error::new(
            ErrorKind::Other,
            format!("{context}: response body unavailable"),
        )
    };
    let incoming = response.consume().map_err(|()| unavailable())?;
    let stream = incoming.stream().map_err(|()| unavailable())?;
    let mut body = Vec::new();
    loop {
        let remaining = max - body.len();
        // At the cap, read one more byte to learn whether anything is left.
        let want = remaining.clamp(1, 64 * 1024) as u64;
        match stream.blocking_read(want) {
            Ok(chunk) if remaining == 0 => {
                if !chunk.is_empty() {
                    return Ok((body, true));
                }
            }
            Ok(chunk) => body.extend_from_slice(&chunk),
            Err(StreamError::Closed) => return Ok((body, false)),
            Err(err) => return Err(Error::from_stream(context, err)),
        }
    }
}

/// An HTTP response with its body read (up to the request's cap).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code, e.g. 200.
    pub status: u16,
    /// The headers in the order received; values decoded as UTF-8, lossily.
    pub headers: Vec<(String, String)>,
    /// The body, at most the request's `max_body_bytes`.
    pub body: Vec<u8>,
    /// Whether the body was longer than the cap (the rest was not read).
    pub truncated: bool,
}

impl Response {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// Whether the status is a redirect with a `Location` header.
    pub fn is_redirect(&self) -> bool {
        matches!(self.status, 301 | 302 | 303 | 307 | 308) && self.header("location").is_some()
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body decoded from JSON.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_json::from_slice(&self.body).map_err(|err| {
            Error::new(
                ErrorKind::Protocol,
                format!("response body is not the expected JSON: {err}"),
            )
        })
    }
}

/// What kind of failure an [`Error`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The host refused the request: the origin, method or address is not
    /// granted to this tool (or not allowed for this call's effect).
    Denied,
    /// The URL, method or a header is malformed.
    InvalidRequest,
    /// DNS, connect or response timed out. Worth retrying.
    Timeout,
    /// The destination could not be reached or dropped the connection.
    Connection,
    /// TLS or HTTP failed, or the response was malformed or too large.
    Protocol,
    /// Anything else.
    Other,
}

/// Why an HTTP request failed. The message names the request and the cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    transient: bool,
}

impl Error {
    fn new(kind: ErrorKind, message: String) -> Self {
        let transient = kind == ErrorKind::Timeout;
        Self {
            kind,
            message,
            transient,
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Whether the host refused the request (not granted).
    pub fn is_denied(&self) -> bool {
        self.kind == ErrorKind::Denied
    }

    /// Whether trying again later may succeed (timeouts, refused or dropped
    /// connections).
    pub fn is_transient(&self) -> bool {
        self.transient
    }

    fn from_stream(context: &str, err: StreamError) -> Self {
        match err {
            StreamError::Closed => Self {
                transient: true,
                ..Self::new(
                    ErrorKind::Connection,
                    format!("{context}: connection closed early"),
                )
            },
            StreamError::LastOperationFailed(io) => match types::http_error_code(&io) {
                Some(code) => Self::from_code(context, code),
                None => Self::new(
                    ErrorKind::Other,
                    format!("{context}: {}", io.to_debug_string()),
                ),
            },
        }
    }

    fn from_code(context: &str, code: types::ErrorCode) -> Self {
        use types::ErrorCode as C;
        let (kind, what) = match &code {
            C::HttpRequestDenied => (
                ErrorKind::Denied,
                "refused by the host: the origin is not in this tool's `http` grant, the \
                 method is not allowed for this call's effect (read calls may only GET and \
                 HEAD), or the call used up its request allowance; the call's trace says which"
                    .to_string(),
            ),
            C::DestinationIpProhibited => (
                ErrorKind::Denied,
                "refused by the host: the destination address is not allowed".to_string(),
            ),
            C::HttpRequestMethodInvalid | C::HttpRequestUriInvalid | C::HttpRequestUriTooLong => {
                (ErrorKind::InvalidRequest, describe(&code))
            }
            C::DnsTimeout
            | C::ConnectionTimeout
            | C::ConnectionReadTimeout
            | C::ConnectionWriteTimeout
            | C::HttpResponseTimeout => (ErrorKind::Timeout, describe(&code)),
            C::DnsError(_)
            | C::DestinationNotFound
            | C::DestinationUnavailable
            | C::DestinationIpUnroutable
            | C::ConnectionRefused
            | C::ConnectionTerminated
            | C::ConnectionLimitReached => (ErrorKind::Connection, describe(&code)),
            C::InternalError(_) | C::ConfigurationError => (ErrorKind::Other, describe(&code)),
            _ => (ErrorKind::Protocol, describe(&code)),
        };
        let transient = kind == ErrorKind::Timeout
            || matches!(
                code,
                C::DnsError(_)
                    | C::DestinationUnavailable
                    | C::ConnectionRefused
                    | C::ConnectionTerminated
                    | C::ConnectionLimitReached
            );
        Self {
            kind,
            message: format!("{context}: {what}"),
            transient,
        }
    }
}

/// The error code's WIT name with its payload, e.g.
/// `connection-refused` or `internal-error: TLS handshake failed`.
fn describe(code: &types::ErrorCode) -> String {
    use types::ErrorCode as C;
    match code {
        C::DnsError(payload) => format!(
            "dns-error{}",
            payload
                .rcode
                .as_deref()
                .map(|rcode| format!(": {rcode}"))
                .unwrap_or_default()
        ),
        C::InternalError(Some(message)) => format!("internal-error: {message}"),
        C::HttpResponseBodySize(Some(size)) => format!("http-response-body-size: {size} bytes"),
        other => {
            // `Debug` prints `ErrorCode::ConnectionRefused`; keep the kebab-case name.
            let debug = format!("{other:?}");
            let name = debug
                .trim_start_matches("ErrorCode::")
                .split(['(', ' ', '{'])
                .next()
                .unwrap_or_default()
                .to_string();
            kebab(&name)
        }
    }
}

fn kebab(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

fn method(name: &str) -> types::Method {
    match name.to_ascii_uppercase().as_str() {
        "GET" => types::Method::Get,
        "HEAD" => types::Method::Head,
        "POST" => types::Method::Post,
        "PUT" => types::Method::Put,
        "DELETE" => types::Method::Delete,
        "CONNECT" => types::Method::Connect,
        "OPTIONS" => types::Method::Options,
        "TRACE" => types::Method::Trace,
        "PATCH" => types::Method::Patch,
        _ => types::Method::Other(name.to_string()),
    }
}

/// An absolute `http` or `https` URL split the way `wasi:http` wants it.
#[derive(Debug)]
struct Target {
    scheme: types::Scheme,
    authority: String,
    path_and_query: String,
}

impl Target {
    fn parse(url: &str) -> Result<Self, Error> {
        let parts = split(url).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidRequest,
                format!("{url:?} is not an absolute http or https URL"),
            )
        })?;
        let scheme = match parts.scheme.to_ascii_lowercase().as_str() {
            "http" => types::Scheme::Http,
            "https" => types::Scheme::Https,
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidRequest,
                    format!("{url:?}: unsupported scheme {other:?} (use http or https)"),
                ));
            }
        };
        if parts.authority.is_empty() || parts.authority.contains('@') {
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                format!("{url:?}: the URL needs a host (and no user info)"),
            ));
        }
        Ok(Self {
            scheme,
            authority: parts.authority.to_string(),
            path_and_query: format!(
                "{}{}",
                if parts.path.is_empty() {
                    "/"
                } else {
                    parts.path
                },
                parts.query
            ),
        })
    }
}

/// An absolute URL's parts: `scheme://authority` `path` `?query` (fragment
/// dropped).
struct Parts<'a> {
    scheme: &'a str,
    authority: &'a str,
    path: &'a str,
    query: &'a str,
}

fn split(url: &str) -> Option<Parts<'_>> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let url = url.split('#').next().unwrap_or_default();
    let (scheme, rest) = url.split_once("://")?;
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return None;
    }
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, rest) = rest.split_at(authority_end);
    let query_start = rest.find('?').unwrap_or(rest.len());
    let (path, query) = rest.split_at(query_start);
    Some(Parts {
        scheme,
        authority,
        path,
        query,
    })
}

/// Resolves `reference` (e.g. a redirect's `Location`) against the absolute
/// URL `base`, as a browser would (RFC 3986 section 5).
///
/// ```
/// use toolhost_sdk::http::resolve;
/// let base = "https://example.com/docs/guide/intro?x=1";
/// assert_eq!(resolve(base, "../api").unwrap(), "https://example.com/docs/api");
/// assert_eq!(resolve(base, "/login").unwrap(), "https://example.com/login");
/// assert_eq!(resolve(base, "//cdn.example.com/a").unwrap(), "https://cdn.example.com/a");
/// assert_eq!(resolve(base, "http://other.test/").unwrap(), "http://other.test/");
/// ```
pub fn resolve(base: &str, reference: &str) -> Result<String, Error> {
    let invalid = |what: &str| {
        Error::new(
            ErrorKind::InvalidRequest,
            format!("cannot resolve {reference:?} against {base:?}: {what}"),
        )
    };
    let base_parts = split(base).ok_or_else(|| invalid("the base is not an absolute URL"))?;
    let reference = reference.trim();
    if reference
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(invalid("the reference contains whitespace"));
    }
    let reference = reference.split('#').next().unwrap_or_default();
    if let Some(parts) = split(reference) {
        let path = remove_dot_segments(parts.path);
        return Ok(format!(
            "{}://{}{path}{}",
            parts.scheme, parts.authority, parts.query
        ));
    }
    let origin = format!("{}://{}", base_parts.scheme, base_parts.authority);
    if let Some(rest) = reference.strip_prefix("//") {
        return resolve(base, &format!("{}://{rest}", base_parts.scheme));
    }
    let (ref_path, ref_query) = reference.split_at(reference.find('?').unwrap_or(reference.len()));
    let path = if ref_path.is_empty() {
        // Same document: keep the base path (and its query unless replaced).
        let query = if ref_query.is_empty() {
            base_parts.query
        } else {
            ref_query
        };
        return Ok(format!("{origin}{}{query}", or_root(base_parts.path)));
    } else if ref_path.starts_with('/') {
        remove_dot_segments(ref_path)
    } else {
        let base_path = or_root(base_parts.path);
        let dir = &base_path[..base_path.rfind('/').map_or(0, |i| i + 1)];
        remove_dot_segments(&format!("{dir}{ref_path}"))
    };
    Ok(format!("{origin}{path}{ref_query}"))
}

fn or_root(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// RFC 3986 section 5.2.4 on an absolute path.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "." | ".." => {
                if *segment == ".." && out.len() > 1 {
                    out.pop();
                }
                // A trailing dot segment still names a directory.
                if i == last {
                    out.push("");
                }
            }
            other => out.push(other),
        }
    }
    let joined = out.join("/");
    if joined.starts_with('/') {
        joined
    } else {
        format!("/{joined}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets() {
        let target = Target::parse("https://api.example.com:8443/v1/items?q=a#frag").unwrap();
        assert!(matches!(target.scheme, types::Scheme::Https));
        assert_eq!(target.authority, "api.example.com:8443");
        assert_eq!(target.path_and_query, "/v1/items?q=a");

        let bare = Target::parse("http://example.com").unwrap();
        assert_eq!(bare.path_and_query, "/");
        let query_only = Target::parse("http://example.com?x=1").unwrap();
        assert_eq!(query_only.path_and_query, "/?x=1");
    }

    #[test]
    fn rejects_bad_targets() {
        for url in [
            "example.com",
            "ftp://example.com/",
            "https:///path",
            "https://user@example.com/",
            "https://exa mple.com/",
            "",
        ] {
            let err = Target::parse(url).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{url}");
        }
    }

    #[test]
    fn resolves_references() {
        let base = "https://example.com/a/b/c?q=1";
        let cases = [
            ("https://other.test/x", "https://other.test/x"),
            ("//cdn.test/y", "https://cdn.test/y"),
            ("/root", "https://example.com/root"),
            ("d", "https://example.com/a/b/d"),
            ("./d/", "https://example.com/a/b/d/"),
            ("../d", "https://example.com/a/d"),
            ("../../../../d", "https://example.com/d"),
            (".", "https://example.com/a/b/"),
            ("..", "https://example.com/a/"),
            ("?z=2", "https://example.com/a/b/c?z=2"),
            ("", "https://example.com/a/b/c?q=1"),
            ("#top", "https://example.com/a/b/c?q=1"),
            ("d?x=1#f", "https://example.com/a/b/d?x=1"),
            ("http://h.test/a/./b/../c", "http://h.test/a/c"),
        ];
        for (reference, expected) in cases {
            assert_eq!(resolve(base, reference).unwrap(), expected, "{reference}");
        }
        assert_eq!(
            resolve("https://example.com", "next").unwrap(),
            "https://example.com/next"
        );
        assert!(resolve("not a url", "/x").is_err());
    }

    #[test]
    fn names_error_codes() {
        let err = Error::from_code("GET http://x", types::ErrorCode::HttpRequestDenied);
        assert!(err.is_denied());
        assert!(
            err.to_string().contains("refused by the host")
                && err.to_string().contains("`http` grant"),
            "{err}"
        );

        let err = Error::from_code("GET http://x", types::ErrorCode::ConnectionRefused);
        assert_eq!(err.to_string(), "GET http://x: connection-refused");
        assert!(err.is_transient());

        let err = Error::from_code("GET http://x", types::ErrorCode::HttpResponseTimeout);
        assert_eq!(err.kind(), ErrorKind::Timeout);

        let err = Error::from_code("GET http://x", types::ErrorCode::TlsCertificateError);
        assert_eq!(err.to_string(), "GET http://x: tls-certificate-error");
        assert!(!err.is_transient());

        let err = Error::from_code(
            "GET http://x",
            types::ErrorCode::InternalError(Some("boom".into())),
        );
        assert_eq!(err.to_string(), "GET http://x: internal-error: boom");
    }

    #[test]
    fn response_helpers() {
        let response = Response {
            status: 302,
            headers: vec![("Location".into(), "/next".into())],
            body: b"{\"a\":1}".to_vec(),
            truncated: false,
        };
        assert_eq!(response.header("location"), Some("/next"));
        assert!(response.is_redirect());
        assert!(!response.is_success());
        let value: serde_json::Value = response.json().unwrap();
        assert_eq!(value["a"], 1);
    }
}
