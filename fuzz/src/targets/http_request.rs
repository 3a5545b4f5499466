//! HTTP API request parsing: requests decoded from arbitrary bytes
//! ([`request`]) sent to the API's router in-process with
//! `tower::ServiceExt::oneshot`, as `toolhost serve` would route them.
//!
//! The fixture serves the example tools with a bearer token, a custom tool,
//! and short approval and custom-tool timeouts (a parked call, or a poll
//! waiting for one, ends within [`PARK_FOR`]); a session made at start
//! stands behind `{session}`.
//!
//! Promises checked: every request gets a well-formed answer within 20 s; no
//! 5xx but the documented `workspace_unavailable`; every 4xx from the API's
//! own routes is a JSON error with a `code` and a `message`; a 401 names
//! the scheme; JSON bodies parse; `/healthz` still answers afterwards.

mod request;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt as _;
use serde_json::Value;
use tower::ServiceExt as _;

use toolhost::session::NewSession;
use toolhost_serve::http::{App, ServeOptions, router};

use crate::fixture;
use request::{Names, Vars};

/// The bearer token the fixture's server wants.
const TOKEN: &str = "fuzz-token-0123456789";

/// A custom tool besides the examples: its calls park until answered.
const CUSTOM_TOOL: &str = r#"
[custom_tools.ask_user]
description = "Ask the user a question and return the answer. Use it when a choice is theirs."
input_schema = { type = "object", properties = { question = { type = "string" } }, required = ["question"] }
effect = "read"
"#;

/// How long a call waits for an approval or a custom tool's result.
const PARK_FOR: Duration = Duration::from_millis(250);

/// How long one request may take, its body included.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);

/// HTTP and JSON syntax, the routes, headers and body keys.
pub(super) const DICTIONARY: &[&[&[u8]]] = &[
    super::JSON_TOKENS,
    &[
        b"GET ",
        b"POST ",
        b"PUT ",
        b"DELETE ",
        b"HEAD ",
        b"OPTIONS ",
        b" HTTP/1.1",
        b"\r\n",
        b"\n\n",
        b"\n%%\n",
        b"/toolhost/v1",
        b"/tools",
        b"/tools/echo",
        b"/sessions",
        b"/sessions/{session}",
        b"/events",
        b"/approvals/{call}",
        b"/calls/{call}",
        b"/healthz",
        b"/metrics",
        b"/mcp",
        b"?wait=",
        b"?after=",
        b"%2F",
        b"%00",
        b"%",
        b"..",
        b"//",
        b"content-type: application/json\n",
        b"content-type: text/plain\n",
        b"authorization: Bearer fuzz-token-0123456789\n",
        b"authorization: Bearer \n",
        b"last-event-id: ",
        b"mcp-session-id: {mcp}\n",
        b"accept: application/json, text/event-stream\n",
        b"origin: http://evil.example\n",
        b"host: 127.0.0.1:3000\n",
        b"1e999",
        b"-1",
        b"\"input\"",
        b"\"sessionId\"",
        b"\"continuationToken\"",
        b"\"auth\"",
        b"\"channel\"",
        b"\"key\"",
        b"\"mode\"",
        b"\"dry-run\"",
        b"\"asOf\"",
        b"\"events\"",
        b"\"user.custom_tool_result\"",
        b"\"custom_tool_use_id\"",
        b"\"content\"",
        b"\"decision\"",
        b"\"approve\"",
        b"\"deny\"",
        b"{session}",
        b"{call}",
        b"fuzz:seed",
        b"\"jsonrpc\"",
        b"\"method\"",
        b"\"tools/call\"",
        b"\"initialize\"",
    ],
];

struct Fixture {
    runtime: tokio::runtime::Runtime,
    app: Arc<App>,
    router: Router,
    tools: Vec<String>,
    /// The session `{session}` stands for until an input makes another.
    session: Mutex<String>,
    execs: AtomicU64,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let runtime = fixture::runtime("http_request");
        let config = format!(
            "[server]\ntoken = \"{TOKEN}\"\n{}{CUSTOM_TOOL}",
            fixture::EXAMPLE_GRANTS
        );
        let dir = fixture::host_dir("http_request", fixture::EXAMPLE_TOOLS, &config);
        let host = fixture::load_host(&runtime, &dir);
        let tools = host
            .registry()
            .tools()
            .map(|t| t.name().to_string())
            .collect();
        let mut options = ServeOptions::from_config(&host).expect("fixture: serve options");
        options.listen = "127.0.0.1:0".parse().expect("fixture: an address");
        options.approval_timeout = PARK_FOR;
        options.custom_tool_timeout = PARK_FOR;
        options.session_retention = Duration::from_secs(60);
        let app = App::new(host, options).expect("fixture: the app");
        // The MCP service spawns a task: build the router inside the runtime.
        let router = {
            let _entered = runtime.enter();
            router(app.clone())
        };
        let fixture = Fixture {
            runtime,
            app,
            router,
            tools,
            session: Mutex::default(),
            execs: AtomicU64::new(0),
        };
        fixture.current_session();
        fixture
    })
}

impl Fixture {
    /// The fixture's session, made again if the sweep removed it.
    fn current_session(&self) -> String {
        let mut id = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        if self.app.sessions.get(&id).is_none() {
            let sessions = &self.app.sessions;
            let session = self
                .runtime
                .block_on(async {
                    let seeded = sessions
                        .create(NewSession {
                            channel: Some("fuzz".into()),
                            key: Some("seed".into()),
                            ..NewSession::default()
                        })
                        .await;
                    match seeded {
                        Ok(session) => Ok(session),
                        Err(_) => sessions.create(NewSession::default()).await,
                    }
                })
                .expect("fixture: a session");
            *id = session.id().to_string();
        }
        id.clone()
    }
}

/// One answer, read as far as the check needs.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

/// Run one input: see the module documentation.
pub fn http_request(data: &[u8]) {
    let fixture = fixture();
    let names = Names {
        token: TOKEN,
        slug: &fixture.app.slug,
        tools: &fixture.tools,
    };
    let mut vars = Vars {
        session: fixture.current_session(),
        ..Vars::default()
    };
    let mut mcp_sessions = Vec::new();
    fixture.runtime.block_on(async {
        for chunk in request::chunks(data) {
            let request = request::build(chunk, &vars, &names);
            let (method, path) = (request.method().clone(), request.uri().path().to_string());
            let answer = send(&fixture.router, request).await;
            check(&method, &path, &answer);
            learn(&answer, &mut vars, &mut mcp_sessions);
        }
        for id in mcp_sessions {
            close_mcp_session(&fixture.router, &id).await;
        }
    });
    let n = fixture.execs.fetch_add(1, Ordering::Relaxed);
    if n.is_multiple_of(16) {
        fixture.runtime.block_on(still_healthy(&fixture.router));
    }
    if n.is_multiple_of(256) {
        fixture.runtime.block_on(fixture.app.sweep());
    }
}

/// Send a request and read its answer (a bit of an event stream).
async fn send(router: &Router, request: Request<Body>) -> Answer {
    let what = format!("{} {}", request.method(), request.uri());
    let response = tokio::time::timeout(ANSWER_WITHIN, router.clone().oneshot(request))
        .await
        .unwrap_or_else(|_| panic!("no answer to {what} within {ANSWER_WITHIN:?}"))
        .unwrap_or_else(|never| match never {});
    let (parts, mut body) = response.into_parts();
    let streaming = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let mut bytes = Vec::new();
    if streaming {
        // An event stream never ends: take what comes at once.
        let wait = Duration::from_millis(5);
        while let Ok(Some(Ok(frame))) = tokio::time::timeout(wait, body.frame()).await {
            if let Some(data) = frame.data_ref() {
                bytes.extend_from_slice(data);
            }
        }
    } else {
        let collected = tokio::time::timeout(ANSWER_WITHIN, body.collect())
            .await
            .unwrap_or_else(|_| panic!("the body of {what} did not end within {ANSWER_WITHIN:?}"));
        match collected {
            Ok(collected) => bytes = collected.to_bytes().to_vec(),
            Err(e) => panic!("the body of {what} failed: {e}"),
        }
    }
    Answer {
        status: parts.status,
        headers: parts.headers,
        body: bytes,
    }
}

/// Check one answer to `method path`.
fn check(method: &Method, path: &str, answer: &Answer) {
    let json: Option<Value> = serde_json::from_slice(&answer.body).ok();
    let code = json
        .as_ref()
        .and_then(|j| j.pointer("/error/code"))
        .and_then(Value::as_str);
    if answer.status.is_server_error() {
        assert_eq!(
            code,
            Some("workspace_unavailable"),
            "{method} {path}: {} {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        );
    }
    // `/mcp` answers as the MCP transport does; HEAD answers have no body.
    if path == "/mcp" || method == Method::HEAD {
        return;
    }
    if answer.status == StatusCode::UNAUTHORIZED {
        assert!(
            answer.headers.contains_key(header::WWW_AUTHENTICATE),
            "{method} {path}: a 401 without WWW-Authenticate"
        );
    }
    let says_json = answer
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if says_json || answer.status.is_client_error() {
        assert!(
            json.is_some(),
            "{method} {path}: {} with a body that is not JSON: {:?}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        );
    }
    if answer.status.is_client_error() {
        let message = json
            .as_ref()
            .and_then(|j| j.pointer("/error/message"))
            .and_then(Value::as_str);
        let ok = json.as_ref().and_then(|j| j.get("ok"));
        assert!(
            ok == Some(&Value::Bool(false))
                && code.is_some_and(|c| !c.is_empty())
                && message.is_some_and(|m| !m.trim().is_empty()),
            "{method} {path}: {} is not a JSON error with a code and a message: {json:?}",
            answer.status
        );
    }
}

/// Remember the ids an answer hands out, for the requests after it.
fn learn(answer: &Answer, vars: &mut Vars, mcp_sessions: &mut Vec<String>) {
    if let Some(id) = answer
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        vars.mcp = id.to_string();
        mcp_sessions.push(id.to_string());
    }
    let Ok(json) = serde_json::from_slice::<Value>(&answer.body) else {
        return;
    };
    if let Some(call) = json.get("callId").and_then(Value::as_str) {
        vars.call = call.to_string();
    }
    if let Some(id) = json.get("id").and_then(Value::as_str)
        && id.starts_with("ses_")
    {
        vars.session = id.to_string();
    }
}

/// End an MCP session an input opened, so they do not pile up.
async fn close_mcp_session(router: &Router, id: &str) {
    let request = Request::delete("/mcp")
        .header("host", "127.0.0.1:3000")
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("mcp-session-id", id)
        .body(Body::empty());
    if let Ok(request) = request {
        let _ = tokio::time::timeout(ANSWER_WITHIN, router.clone().oneshot(request)).await;
    }
}

/// `/healthz` still answers `ok`.
async fn still_healthy(router: &Router) {
    let request = Request::get("/healthz")
        .body(Body::empty())
        .unwrap_or_default();
    let answer = send(router, request).await;
    let json: Option<Value> = serde_json::from_slice(&answer.body).ok();
    assert!(
        answer.status == StatusCode::OK
            && json.and_then(|j| j.get("ok").cloned()) == Some(Value::Bool(true)),
        "/healthz no longer answers: {} {:?}",
        answer.status,
        String::from_utf8_lossy(&answer.body)
    );
}
