//! Requests decoded from an input.
//!
//! The text form is what a request looks like on the wire, without the
//! framing: `METHOD TARGET` on the first line, then `name: value` headers,
//! a blank line and the body (all of the rest). Up to four requests are
//! separated by lines holding `%%`. Bytes that do not start with a method
//! are shaped by `arbitrary` into a request to one of the API's routes.
//!
//! `{session}`, `{call}` and `{mcp}` stand for the ids the earlier requests
//! of the same input got back (a session, a waiting call, an MCP session),
//! so one input can create a session and then use it.

use arbitrary::Unstructured;
use axum::body::Body;
use http::{HeaderName, HeaderValue, Method, Request, Uri};
use serde_json::Value;

use crate::targets::{arbitrary_json, replace_all};

/// Separates the requests of one input.
pub(super) const SEPARATOR: &[u8] = b"\n%%\n";
/// The most requests one input makes.
pub(super) const MAX_REQUESTS: usize = 4;

/// The ids placeholders stand for.
#[derive(Debug, Default)]
pub(super) struct Vars {
    /// `{session}`: the last session created, else the fixture's.
    pub session: String,
    /// `{call}`: the last call id answered.
    pub call: String,
    /// `{mcp}`: the last MCP session id answered.
    pub mcp: String,
}

impl Vars {
    fn substitute(&self, chunk: &[u8]) -> Vec<u8> {
        let mut out = chunk.to_vec();
        for (name, value) in [
            (&b"{session}"[..], &self.session),
            (b"{call}", &self.call),
            (b"{mcp}", &self.mcp),
        ] {
            out = replace_all(&out, name, value.as_bytes());
        }
        out
    }
}

/// What the API's routes are made of.
pub(super) struct Names<'a> {
    /// The bearer token the server wants.
    pub token: &'a str,
    /// The slug routes live under.
    pub slug: &'a str,
    /// The tools served.
    pub tools: &'a [String],
}

/// The requests of an input, each still a template.
pub(super) fn chunks(data: &[u8]) -> Vec<&[u8]> {
    let mut chunks = Vec::new();
    let mut rest = data;
    while chunks.len() + 1 < MAX_REQUESTS {
        match rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
            Some(at) => {
                chunks.push(&rest[..at]);
                rest = &rest[at + SEPARATOR.len()..];
            }
            None => break,
        }
    }
    chunks.push(rest);
    chunks
}

/// The request a chunk stands for, with the placeholders filled in.
pub(super) fn build(chunk: &[u8], vars: &Vars, names: &Names<'_>) -> Request<Body> {
    let chunk = vars.substitute(chunk);
    text_form(&chunk).unwrap_or_else(|| shaped(&chunk, vars, names))
}

/// The text form, if the chunk starts with a method and a target.
fn text_form(chunk: &[u8]) -> Option<Request<Body>> {
    let (head, body) = split_head(chunk);
    let mut lines = head.split(|&b| b == b'\n').map(trim_cr);
    let mut request_line = lines.next()?.splitn(3, |&b| b == b' ');
    let method = request_line.next()?;
    if method.is_empty() || !method.iter().all(u8::is_ascii_uppercase) {
        return None;
    }
    let method = Method::from_bytes(method).ok()?;
    let uri = target_uri(request_line.next()?);
    let mut request = Request::builder().method(method).uri(uri);
    for line in lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let name = HeaderName::from_bytes(line[..colon].trim_ascii());
        let value = HeaderValue::from_bytes(line[colon + 1..].trim_ascii());
        if let (Ok(name), Ok(value)) = (name, value) {
            request = request.header(name, value);
        }
    }
    request.body(Body::from(body.to_vec())).ok()
}

/// The head (request line and headers) and the body after the blank line.
fn split_head(chunk: &[u8]) -> (&[u8], &[u8]) {
    for blank in [&b"\r\n\r\n"[..], b"\n\n"] {
        if let Some(at) = chunk.windows(blank.len()).position(|w| w == blank) {
            return (&chunk[..at], &chunk[at + blank.len()..]);
        }
    }
    (chunk, &[])
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// A URI for any request target: bytes a URI cannot hold are
/// percent-encoded, as a client would send them.
fn target_uri(raw: &[u8]) -> Uri {
    let mut text = String::with_capacity(raw.len() + 1);
    if raw.first() != Some(&b'/') {
        text.push('/');
    }
    for &b in raw {
        if b.is_ascii_graphic() && !b"\"<>\\^`{|}#".contains(&b) {
            text.push(char::from(b));
        } else {
            text.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::try_from(text).unwrap_or_else(|_| Uri::from_static("/"))
}

/// A request to one of the API's routes, shaped from the bytes.
fn shaped(chunk: &[u8], vars: &Vars, names: &Names<'_>) -> Request<Body> {
    let mut u = Unstructured::new(chunk);
    // Running out of bytes yields defaults, never an error worth keeping.
    shape(&mut u, vars, names).unwrap_or_else(|_| {
        Request::get("/healthz")
            .body(Body::empty())
            .unwrap_or_default()
    })
}

/// Keys the API's bodies use.
const BODY_KEYS: &[&str] = &[
    "input",
    "sessionId",
    "continuationToken",
    "auth",
    "channel",
    "key",
    "mode",
    "asOf",
    "events",
    "type",
    "custom_tool_use_id",
    "content",
    "is_error",
    "decision",
    "reason",
    "user",
    "text",
];

fn shape(
    u: &mut Unstructured<'_>,
    vars: &Vars,
    names: &Names<'_>,
) -> arbitrary::Result<Request<Body>> {
    let method = u.choose(&[
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::HEAD,
        Method::OPTIONS,
        Method::PATCH,
    ])?;
    let slug = if u.ratio(9, 10)? {
        names.slug.to_string()
    } else {
        u.arbitrary()?
    };
    let segment = |u: &mut Unstructured<'_>, known: &str| -> arbitrary::Result<String> {
        if u.ratio(4, 5)? {
            Ok(known.to_string())
        } else {
            u.arbitrary()
        }
    };
    let tool = if names.tools.is_empty() {
        String::new()
    } else {
        u.choose(names.tools)?.clone()
    };
    let base = format!("/{slug}/v1");
    let path = match u.choose_index(10)? {
        0 => "/healthz".to_string(),
        1 => "/metrics".to_string(),
        2 => format!("{base}/tools"),
        3 => format!("{base}/tools/{}", segment(u, &tool)?),
        4 => format!("{base}/sessions"),
        5 => format!("{base}/sessions/{}", segment(u, &vars.session)?),
        6 => format!("{base}/sessions/{}/events", segment(u, &vars.session)?),
        7 => format!("{base}/approvals/{}", segment(u, &vars.call)?),
        8 => format!("{base}/calls/{}", segment(u, &vars.call)?),
        _ => "/mcp".to_string(),
    };
    let query = match u.choose_index(4)? {
        0 => format!("?wait={}", u.arbitrary::<f64>()?),
        1 => format!("?after={}", u.arbitrary::<u64>()?),
        2 => format!("?{}", u.arbitrary::<String>()?),
        _ => String::new(),
    };
    let target = format!("{path}{query}");
    let mut request = Request::builder()
        .method(method)
        .uri(target_uri(target.as_bytes()));
    if u.ratio(9, 10)? {
        request = request.header("content-type", "application/json");
    }
    match u.choose_index(5)? {
        0 => {}
        1 => request = request.header("authorization", "Bearer wrong-token-0123456"),
        _ => request = request.header("authorization", format!("Bearer {}", names.token)),
    }
    if path == "/mcp" {
        request = request
            .header("host", "127.0.0.1:3000")
            .header("accept", "application/json, text/event-stream");
        if u.arbitrary()? {
            request = request.header("mcp-session-id", vars.mcp.as_str());
        }
    }
    if u.ratio(1, 5)? {
        request = request.header("last-event-id", u.arbitrary::<String>()?);
    }
    let body = match u.choose_index(4)? {
        0 => Vec::new(),
        1 => u.arbitrary::<Vec<u8>>()?,
        _ => Value::Object(arbitrary_json::object(u, BODY_KEYS)?)
            .to_string()
            .into_bytes(),
    };
    Ok(request.body(Body::from(body)).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> (Vec<String>, Vars) {
        let vars = Vars {
            session: "ses_1".into(),
            call: "call_2".into(),
            mcp: "m3".into(),
        };
        (vec!["echo".to_string()], vars)
    }

    #[test]
    fn the_text_form_is_a_request() {
        let (tools, vars) = names();
        let names = Names {
            token: "t",
            slug: "toolhost",
            tools: &tools,
        };
        let text = b"POST /toolhost/v1/sessions/{session}/events HTTP/1.1\r\n\
            content-type: application/json\r\nbad header\r\n\r\n{\"events\": []}";
        let request = build(text, &vars, &names);
        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.uri().path(), "/toolhost/v1/sessions/ses_1/events");
        assert_eq!(request.headers()["content-type"], "application/json");
    }

    #[test]
    fn targets_are_escaped_and_inputs_split() {
        assert_eq!(target_uri(b"a b\xff").to_string(), "/a%20b%FF");
        assert_eq!(chunks(b"GET /\n%%\nGET /x").len(), 2);
        assert_eq!(chunks(&b"\n%%\n".repeat(9)).len(), MAX_REQUESTS);
    }

    #[test]
    fn other_bytes_are_shaped() {
        let (tools, vars) = names();
        let names = Names {
            token: "t",
            slug: "toolhost",
            tools: &tools,
        };
        for seed in 0..64u8 {
            let bytes: Vec<u8> = (0..200u8).map(|i| i.wrapping_mul(seed)).collect();
            let request = build(&bytes, &vars, &names);
            assert!(request.uri().path().starts_with('/'));
        }
    }
}
