//! The HTTP API on a real loopback socket: every route, every error code,
//! the binding rules, busy sessions, approvals, custom tools and the event
//! stream.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::host;
use common::sse::EventStream;
use reqwest::StatusCode;
use serde_json::{Value, json};
use toolhost_serve::http::{self, App, ServeOptions};

/// A server on a loopback port, stopped when dropped.
pub(crate) struct Server {
    pub(crate) base: String,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) host: Arc<toolhost::Host>,
    pub(crate) client: reqwest::Client,
    pub(crate) token: Option<String>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(crate) async fn start(tools: &[&str], config: &str) -> Server {
    start_with(tools, config, |_| {}).await
}

async fn start_with(tools: &[&str], config: &str, tune: impl FnOnce(&mut ServeOptions)) -> Server {
    let (dir, host) = host(tools, config).await;
    serve(dir, host, tune).await
}

/// A server for the host directory `dir` as it is (a restart of one that
/// ran there before).
pub(crate) async fn start_in(dir: tempfile::TempDir) -> Server {
    let host = common::load(dir.path()).await;
    serve(dir, host, |_| {}).await
}

async fn serve(
    dir: tempfile::TempDir,
    host: toolhost::Host,
    tune: impl FnOnce(&mut ServeOptions),
) -> Server {
    let mut options = ServeOptions::from_config(&host).unwrap();
    options.listen = "127.0.0.1:0".parse().unwrap();
    tune(&mut options);
    let token = options.token.clone();
    let listener = http::bind(&options).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let host = Arc::new(host);
    let app = App::new(host.clone(), options).unwrap();
    let task = tokio::spawn(http::run(listener, app, std::future::pending()));
    Server {
        base,
        dir,
        host,
        client: common::http_client(),
        token,
        task,
    }
}

impl Server {
    /// Stop serving and hand back the host directory, for a restart.
    pub(crate) fn into_dir(mut self) -> tempfile::TempDir {
        std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap())
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/toolhost/v1{path}", self.base)
    }

    pub(crate) fn auth(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    pub(crate) async fn get(&self, path: &str) -> (StatusCode, Value) {
        read(
            self.auth(self.client.get(self.url(path)))
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// `/metrics` as text.
    pub(crate) async fn metrics(&self) -> String {
        let request = self.client.get(format!("{}/metrics", self.base));
        let response = self.auth(request).send().await.unwrap();
        response.text().await.unwrap()
    }

    pub(crate) async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let request = self.client.post(self.url(path)).json(&body);
        read(self.auth(request).send().await.unwrap()).await
    }

    pub(crate) async fn call(&self, tool: &str, body: Value) -> (StatusCode, Value) {
        self.post(&format!("/tools/{tool}"), body).await
    }

    pub(crate) async fn session(&self, body: Value) -> Value {
        let (status, session) = self.post("/sessions", body).await;
        assert_eq!(status, StatusCode::CREATED, "{session}");
        session
    }

    /// Open the event stream of `session` (after `after`, if given).
    pub(crate) async fn events(&self, session: &str, after: Option<u64>) -> EventStream {
        let mut request = self
            .client
            .get(self.url(&format!("/sessions/{session}/events")));
        if let Some(after) = after {
            request = request.header("last-event-id", after.to_string());
        }
        let response = self.auth(request).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        EventStream::new(response)
    }
}

async fn read(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{status}: body is not JSON ({e}): {text:?}"));
    (status, body)
}

pub(crate) fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_called_and_counted() {
    let server = start(&["echo", "trap"], "").await;
    let health: Value = server
        .client
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health, json!({"ok": true, "slug": "toolhost", "tools": 2}));

    let (status, list) = server.get("/tools").await;
    assert_eq!(status, StatusCode::OK);
    let echo = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .unwrap();
    assert_eq!(echo["effect"], "read");
    assert_eq!(echo["inputSchema"]["type"], "object");
    assert!(echo["description"].as_str().unwrap().contains("Echo"));

    let (status, envelope) = server
        .call("echo", json!({"input": {"text": "hi", "uppercase": true}}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(envelope["ok"], true);
    assert_eq!(envelope["toolName"], "echo");
    assert_eq!(envelope["isError"], false);
    assert_eq!(envelope["result"], "HI");
    assert_eq!(envelope["stubbed"], false);
    assert_eq!(envelope["attempts"], 1);
    assert!(envelope["callId"].as_str().unwrap().starts_with("call_"));
    assert!(envelope["durationMs"].is_u64());
    assert_eq!(envelope["usage"]["attempts"], 1);
    assert!(envelope["usage"]["peakMemoryBytes"].as_u64().unwrap() > 0);

    // A tool that fails is a 200 with isError.
    let (status, failed) = server.call("trap", json!({"input": {}})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(failed["isError"], true);
    assert!(failed["result"].as_str().unwrap().contains("trapped"));

    let metrics = server.metrics().await;
    assert!(
        metrics.contains(r#"toolhost_calls_total{tool="echo",outcome="ok"} 1"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"toolhost_calls_total{tool="trap",outcome="is_error"} 1"#));
    assert!(metrics.contains("toolhost_call_duration_seconds_bucket"));
    assert!(
        metrics.contains(r#"toolhost_call_peak_memory_bytes_count{tool="echo"} 1"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"toolhost_call_output_bytes_count{tool="trap"} 1"#));
    for part in [
        "http_bytes_received",
        "epoch_ticks",
        "files_opened",
        "peak_files_open",
    ] {
        assert!(
            metrics.contains(&format!(r#"toolhost_call_{part}_count{{tool="echo"}} 1"#)),
            "{part}: {metrics}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_has_its_status_and_code() {
    let config = "[server]\nmax_body_bytes = 2048\n";
    let server = start(&["echo"], config).await;

    let (status, body) = server.call("nope", json!({"input": {}})).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "unknown_tool")
    );
    assert_eq!(body["error"]["availableTools"], json!(["echo"]));

    let (status, body) = server.call("echo", json!({"input": {"text": 5}})).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_tool_input")
    );
    assert_eq!(body["error"]["errors"][0]["pointer"], "/text");

    let (status, body) = server
        .call(
            "echo",
            json!({"input": {"text": "x"}, "sessionId": "ses_none"}),
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "session_not_found")
    );

    for body in [
        json!({"input": {"text": "x"}, "continuationToken": "no-colon"}),
        json!({"input": {"text": "x"}, "continuationToken": "a:b", "sessionId": "ses_x"}),
    ] {
        let (status, body) = server.call("echo", body).await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::BAD_REQUEST, "invalid_continuation_token")
        );
    }

    // Malformed, mistyped, oversized bodies and wrong content types are JSON 4xx.
    let raw = |body: &'static str, content_type: &'static str| {
        server
            .client
            .post(server.url("/tools/echo"))
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let (status, body) = read(raw("{not json", "application/json").await.unwrap()).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );
    let (status, body) = read(
        raw(r#"{"input": {}, "extra": 1}"#, "application/json")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );
    assert!(body["error"]["message"].as_str().unwrap().contains("extra"));
    let (status, body) = read(raw(r#"{"input": {}}"#, "text/plain").await.unwrap()).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
    );
    let big = json!({"input": {"text": "x".repeat(4096)}});
    let (status, body) = server.call("echo", big).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large")
    );
    let mcp = server
        .client
        .post(format!("{}/mcp", server.base))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x".repeat(4096)}}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        mcp.status(),
        StatusCode::PAYLOAD_TOO_LARGE,
        "max_body_bytes holds for /mcp too"
    );

    let wrong_slug = server
        .client
        .get(format!("{}/other/v1/tools", server.base))
        .send()
        .await
        .unwrap();
    let (status, body) = read(wrong_slug).await;
    assert_eq!((status, code(&body)), (StatusCode::NOT_FOUND, "not_found"));
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/toolhost/v1")
    );
    let (status, body) = read(
        server
            .client
            .get(format!("{}/nowhere", server.base))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, code(&body)), (StatusCode::NOT_FOUND, "not_found"));
    let (status, body) = read(
        server
            .client
            .delete(server.url("/tools"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed")
    );
    let (status, body) = server.get("/calls/call_unknown").await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "call_not_found")
    );
    let (status, body) = server.post("/sessions", json!({"mode": "sometimes"})).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );
    let (status, body) = server
        .post("/sessions", json!({"asOf": "2026-01-01"}))
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timezone")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_bind_to_sessions_by_id_or_token() {
    let config = "[tools.notes]\nworkspace = \"write\"\n";
    let server = start(&["notes", "context"], config).await;
    let ada = json!({"user": "ada", "token": "s3cret"});
    let session = server
        .session(json!({"channel": "slack", "key": "T42", "auth": ada}))
        .await;
    let id = session["id"].as_str().unwrap();
    assert_eq!(session["continuationToken"], "slack:T42");
    assert_eq!(session["owner"], "ada");
    assert!(
        session.get("auth").is_none(),
        "auth (with its secrets) is not echoed"
    );

    let (_, listed) = server.get("/sessions").await;
    assert_eq!(listed["sessions"][0]["id"], id);
    let (status, one) = server.get(&format!("/sessions/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(one["mode"], "live");
    let (status, taken) = server
        .post("/sessions", json!({"channel": "slack", "key": "T42"}))
        .await;
    assert_eq!(
        (status, code(&taken)),
        (StatusCode::CONFLICT, "session_exists")
    );

    let add = json!({"action": "add", "title": "plan", "body": "ship it"});
    let (status, out) = server
        .call("notes", json!({"input": add, "sessionId": id, "auth": ada}))
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let workspace = server
        .dir
        .path()
        .join(".toolhost/sessions")
        .join(id)
        .join("workspace");
    assert!(
        workspace.join("notes/plan.md").is_file(),
        "written in the session's workspace"
    );

    // The token maps to the same session and workspace.
    let read = json!({"action": "read", "title": "plan"});
    let (_, out) = server
        .call(
            "notes",
            json!({"input": read, "continuationToken": "slack:T42", "auth": ada}),
        )
        .await;
    assert!(out["result"].to_string().contains("ship it"), "{out}");

    // Another principal is refused.
    let (status, out) = server
        .call(
            "notes",
            json!({"input": read, "sessionId": id, "auth": {"user": "bob"}}),
        )
        .await;
    assert_eq!(
        (status, code(&out)),
        (StatusCode::FORBIDDEN, "session_forbidden")
    );

    // No id or token: a scratch workspace that is gone after the call.
    let (_, out) = server.call("notes", json!({"input": add})).await;
    assert_eq!(out["isError"], false, "{out}");
    let (_, out) = server.call("notes", json!({"input": read})).await;
    assert_eq!(
        out["isError"], true,
        "a scratch workspace starts empty: {out}"
    );

    // A token with no session: scratch, with the token as the call's identity.
    let (_, out) = server
        .call("context", json!({"continuationToken": "github:PR-7"}))
        .await;
    assert_eq!(out["result"]["channel"], "github", "{out}");
    assert_eq!(out["result"]["sessionId"], "github:PR-7");
    let (_, out) = server
        .call("context", json!({"sessionId": id, "auth": ada}))
        .await;
    assert_eq!(out["result"]["sessionId"], id);
    assert_eq!(out["result"]["channel"], "slack");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_run_while_a_write_holds_the_session() {
    let config = "[tools.kv_probe]\nkv = [\"default\"]\nworkspace = \"write\"\ntimeout_ms = 3000\n";
    let server = start(&["kv_probe", "echo"], config).await;
    let session = server.session(json!({})).await;
    let id = session["id"].as_str().unwrap().to_string();
    let hang = json!({"action": "set_then_hang", "key": "k", "value": "v"});
    let writer = {
        let (client, url) = (server.client.clone(), server.url("/tools/kv_probe"));
        let body = json!({"input": hang, "sessionId": id});
        tokio::spawn(async move { read(client.post(url).json(&body).send().await.unwrap()).await })
    };
    let marker = server
        .dir
        .path()
        .join(".toolhost/sessions")
        .join(&id)
        .join("workspace/committed");
    while !marker.exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (_, listed) = server.get(&format!("/sessions/{id}")).await;
    assert_eq!(listed["busy"], true);

    let set = json!({"action": "set", "key": "k2", "value": "w"});
    let (status, out) = server
        .call("kv_probe", json!({"input": set, "sessionId": id}))
        .await;
    assert_eq!((status, code(&out)), (StatusCode::CONFLICT, "session_busy"));
    let get = json!({"action": "get", "key": "k"});
    let (status, out) = server
        .call("kv_probe", json!({"input": get, "sessionId": id}))
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a read runs alongside the write: {out}"
    );
    assert_eq!(out["result"]["value"], "v");
    let (status, _) = server
        .call("echo", json!({"input": {"text": "x"}, "sessionId": id}))
        .await;
    assert_eq!(status, StatusCode::OK);

    let (status, out) = writer.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(out["isError"], true);
    assert!(
        out["result"].as_str().unwrap().contains("timed out"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unavailable_workspace_gives_reads_scratch_and_refuses_writes() {
    let config = "[tools.notes]\nworkspace = \"write\"\n";
    let server = start(&["notes"], config).await;
    let session = server.session(json!({})).await;
    let id = session["id"].as_str().unwrap();
    let workspace = server
        .dir
        .path()
        .join(".toolhost/sessions")
        .join(id)
        .join("workspace");
    std::fs::remove_dir_all(&workspace).unwrap();
    std::fs::write(&workspace, "a file where the workspace should be").unwrap();

    let (status, out) = server
        .call(
            "notes",
            json!({"input": {"action": "list"}, "sessionId": id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    assert_eq!(out["scratchWorkspace"], true);
    let add = json!({"action": "add", "title": "t", "body": "b"});
    let (status, out) = server
        .call("notes", json!({"input": add, "sessionId": id}))
        .await;
    assert_eq!(
        (status, code(&out)),
        (StatusCode::INTERNAL_SERVER_ERROR, "workspace_unavailable")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_approve_deny_and_expire() {
    let config =
        "[tools.context]\npermission = \"always_ask\"\n[server]\napproval_timeout_ms = 1500\n";
    let server = start(&["context"], config).await;
    let session = server.session(json!({"auth": {"user": "ada"}})).await;
    let id = session["id"].as_str().unwrap();
    let ada = json!({"user": "ada"});
    let mut events = server.events(id, None).await;

    // Approved: the approver reaches the tool.
    let (status, pending) = server
        .call("context", json!({"sessionId": id, "auth": ada}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{pending}");
    assert_eq!(pending["status"], "awaiting_approval");
    let call_id = pending["callId"].as_str().unwrap();
    let requested = events.until("approval.requested").await;
    assert_eq!(requested["data"]["callId"], call_id);
    assert_eq!(requested["data"]["toolName"], "context");
    let (status, waiting) = server.get(&format!("/calls/{call_id}")).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(waiting["status"], "awaiting_approval");
    let (status, _) = server
        .post(
            &format!("/approvals/{call_id}"),
            json!({"decision": "approve", "auth": {"user": "carol"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, done) = server.get(&format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["result"]["approvedBy"], json!({"user": "carol"}));
    let resolved = events.until("approval.resolved").await;
    assert_eq!(resolved["data"]["decision"], "approved");
    // Deciding twice is a conflict.
    let (status, again) = server
        .post(
            &format!("/approvals/{call_id}"),
            json!({"decision": "deny", "auth": {"user": "carol"}}),
        )
        .await;
    assert_eq!(
        (status, code(&again)),
        (StatusCode::CONFLICT, "call_not_waiting")
    );

    // Denied: isError naming who denied.
    let (_, pending) = server
        .call("context", json!({"sessionId": id, "auth": ada}))
        .await;
    let call_id = pending["callId"].as_str().unwrap();
    server
        .post(
            &format!("/approvals/{call_id}"),
            json!({"decision": "deny", "auth": {"user": "dave"}, "reason": "not now"}),
        )
        .await;
    let (_, done) = server.get(&format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(done["isError"], true);
    let text = done["result"].as_str().unwrap();
    assert!(text.contains("dave") && text.contains("not now"), "{text}");

    // Unanswered: expires with a clear result.
    let (_, pending) = server.call("context", json!({})).await;
    let call_id = pending["callId"].as_str().unwrap();
    let (status, done) = server.get(&format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(done["isError"], true);
    assert!(
        done["result"].as_str().unwrap().contains("nobody approved"),
        "{done}"
    );

    // A dry-run session stubs the call: no approval needed.
    let dry = server.session(json!({"mode": "dry-run"})).await;
    let (status, out) = server
        .call("context", json!({"sessionId": dry["id"]}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(out["stubbed"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_tools_are_answered_by_the_client() {
    let config = r#"
[custom_tools.get_weather]
description = "Get the current weather for a city. Returns Celsius and a one-word summary; no forecasts."
input_schema = { type = "object", properties = { location = { type = "string" } }, required = ["location"] }

[server]
custom_tool_timeout_ms = 1000
"#;
    let server = start(&["echo"], config).await;
    let (_, list) = server.get("/tools").await;
    let weather = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "get_weather")
        .unwrap()
        .clone();
    assert_eq!(weather["custom"], true);

    let input = json!({"location": "Oslo"});
    let (status, out) = server.call("get_weather", json!({"input": input})).await;
    assert_eq!(
        (status, code(&out)),
        (StatusCode::BAD_REQUEST, "tool_not_callable")
    );
    let (status, out) = server.call("get_weather", json!({"input": {}})).await;
    assert_eq!(
        (status, code(&out)),
        (StatusCode::BAD_REQUEST, "invalid_tool_input")
    );

    let session = server.session(json!({})).await;
    let id = session["id"].as_str().unwrap();
    let mut events = server.events(id, None).await;
    let (status, pending) = server
        .call("get_weather", json!({"input": input, "sessionId": id}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(pending["status"], "awaiting_custom_tool_result");
    let call_id = pending["callId"].as_str().unwrap();
    let use_event = events.until("agent.custom_tool_use").await;
    assert_eq!(use_event["data"]["name"], "get_weather");
    assert_eq!(use_event["data"]["input"], input);
    // Answered by the event's id, as the reference client does.
    let (status, ok) = server
        .post(
            &format!("/sessions/{id}/events"),
            json!({"events": [{
                "type": "user.custom_tool_result",
                "custom_tool_use_id": use_event["id"],
                "content": [{"type": "text", "text": "4°C, cloudy"}],
            }]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{ok}");
    let (status, done) = server.get(&format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(done["result"], "4°C, cloudy");
    assert_eq!(done["isError"], false);
    events.until("user.custom_tool_result").await;
    let result = events.until("action.result").await;
    assert_eq!(result["data"]["callId"], call_id);

    // An answer for a call that is not waiting is refused; a bad event too.
    let (status, out) = server
        .post(
            &format!("/sessions/{id}/events"),
            json!({"events": [{"type": "user.custom_tool_result", "custom_tool_use_id": call_id, "content": []}]}),
        )
        .await;
    assert_eq!(
        (status, code(&out)),
        (StatusCode::CONFLICT, "call_not_waiting")
    );
    let (status, out) = server
        .post(
            &format!("/sessions/{id}/events"),
            json!({"events": [{"type": "user.message"}]}),
        )
        .await;
    assert_eq!(
        (status, code(&out)),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );

    // Nobody answers: the call ends with an error result, not a hang.
    let (_, pending) = server
        .call("get_weather", json!({"input": input, "sessionId": id}))
        .await;
    let call_id = pending["callId"].as_str().unwrap();
    let (_, done) = server.get(&format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(done["isError"], true);
    assert!(
        done["result"].as_str().unwrap().contains("got no result"),
        "{done}"
    );
}

/// A tool asks the user and the model over the HTTP API: the call parks
/// (`202`), its session gets `agent.elicitation` / `agent.sampling`, the
/// client posts the answer, and the call goes on; a mismatched or
/// ill-formed answer is refused, and outside a session nobody is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_asks_the_user_and_the_model_over_the_http_api() {
    let config = r#"
[tools.test_elicitation]
ask = ["user"]
[tools.test_sampling]
ask = ["model"]
"#;
    let server = start(&["test_elicitation", "test_sampling"], config).await;
    let session = server.session(json!({})).await;
    let id = session["id"].as_str().unwrap();
    let mut events = server.events(id, None).await;
    let events_path = format!("/sessions/{id}/events");
    let post = |answer: Value| server.post(&events_path, json!({"events": [answer]}));

    let (status, pending) = server
        .call(
            "test_elicitation",
            json!({"input": {"message": "Who?"}, "sessionId": id}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{pending}");
    assert_eq!(pending["status"], "awaiting_elicitation_result");
    let call_id = pending["callId"].as_str().unwrap();
    let asked = events.until("agent.elicitation").await;
    assert_eq!(asked["data"]["callId"], call_id);
    assert_eq!(asked["data"]["message"], "Who?");
    assert_eq!(
        asked["data"]["requestedSchema"]["required"],
        json!(["username", "email"])
    );
    // The wrong kind of answer, and an ill-formed one, are refused.
    let (status, out) = post(json!({
        "type": "user.sampling_result", "call_id": call_id, "model": "m",
        "content": {"type": "text", "text": "no"},
    }))
    .await;
    assert_eq!(
        (status, code(&out)),
        (StatusCode::CONFLICT, "call_not_waiting"),
        "{out}"
    );
    let (status, out) =
        post(json!({"type": "user.elicitation_result", "call_id": call_id, "action": "accept"}))
            .await;
    assert_eq!(
        (status, code(&out)),
        (StatusCode::BAD_REQUEST, "invalid_request"),
        "{out}"
    );
    let (status, out) = post(json!({
        "type": "user.elicitation_result", "call_id": call_id, "action": "accept",
        "content": {"username": "ada", "email": "ada@example.com"},
    }))
    .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let (_, done) = server.get(&format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(done["isError"], false, "{done}");
    assert_eq!(
        done["result"],
        r#"User response: action=accept, content={"email":"ada@example.com","username":"ada"}"#
    );
    let answered = events.until("user.elicitation_result").await;
    assert_eq!(answered["data"]["answer"]["action"], "accept");

    let (status, pending) = server
        .call(
            "test_sampling",
            json!({"input": {"prompt": "Say hi"}, "sessionId": id}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{pending}");
    assert_eq!(pending["status"], "awaiting_sampling_result");
    let call_id = pending["callId"].as_str().unwrap();
    let asked = events.until("agent.sampling").await;
    assert_eq!(asked["data"]["messages"][0]["content"]["text"], "Say hi");
    assert_eq!(asked["data"]["options"]["maxTokens"], 100);
    let (status, out) = post(json!({
        "type": "user.sampling_result", "call_id": call_id, "model": "m",
        "content": {"type": "text", "text": "hi!"}, "stop_reason": "endTurn",
    }))
    .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let (_, done) = server.get(&format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(done["result"], "LLM response: hi!", "{done}");

    // Outside a session there is nobody to answer.
    let (status, scratch) = server
        .call("test_elicitation", json!({"input": {"message": "Who?"}}))
        .await;
    assert_eq!(status, StatusCode::OK, "{scratch}");
    assert_eq!(scratch["isError"], true);
    assert!(
        scratch["result"]
            .as_str()
            .unwrap()
            .contains("only in a session"),
        "{scratch}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_stream_replays_from_last_event_id() {
    let server = start(
        &["echo", "counter"],
        "[tools.counter]\nkv = [\"default\"]\n",
    )
    .await;
    let session = server.session(json!({"mode": "dry-run"})).await;
    let id = session["id"].as_str().unwrap();
    server
        .call("echo", json!({"input": {"text": "a"}, "sessionId": id}))
        .await;
    let (_, stubbed) = server
        .call("counter", json!({"input": {"name": "c"}, "sessionId": id}))
        .await;
    assert_eq!(stubbed["stubbed"], true, "{stubbed}");

    let mut all = server.events(id, None).await;
    let kinds: Vec<(u64, String)> = [
        all.next().await,
        all.next().await,
        all.next().await,
        all.next().await,
    ]
    .iter()
    .map(|e| {
        (
            e["id"].as_u64().unwrap(),
            e["type"].as_str().unwrap().to_string(),
        )
    })
    .collect();
    assert_eq!(
        kinds,
        [
            (1, "actions.requested".into()),
            (2, "action.result".into()),
            (3, "actions.requested".into()),
            (4, "action.result".into())
        ]
    );
    let mut resumed = server.events(id, Some(3)).await;
    let event = resumed.next().await;
    assert_eq!(event["id"], 4);
    assert_eq!(event["data"]["stubbed"], true);
    // Live events follow the replay.
    server
        .call("echo", json!({"input": {"text": "b"}, "sessionId": id}))
        .await;
    assert_eq!(resumed.next().await["id"], 5);
    assert_eq!(all.next().await["id"], 5);
}

/// A tool's progress reports are `call.progress` events in its session,
/// between the call's request and result; one that goes back is dropped
/// and noted in the trace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reports_are_session_events() {
    let server = start(&["chatty"], "").await;
    let session = server.session(json!({})).await;
    let id = session["id"].as_str().unwrap();
    let (status, done) = server
        .call(
            "chatty",
            json!({"input": {"bytes": 0, "progress": 2}, "sessionId": id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    let call_id = done["callId"].as_str().unwrap();
    let mut events = server.events(id, None).await;
    assert_eq!(events.next().await["type"], "actions.requested");
    for step in 1..=2 {
        let event = events.next().await;
        assert_eq!(event["type"], "call.progress", "{event}");
        let data = &event["data"];
        assert_eq!(data["callId"], call_id, "{event}");
        assert_eq!(data["toolName"], "chatty", "{event}");
        assert_eq!(data["progress"], f64::from(step), "{event}");
        assert_eq!(data["total"], 2.0, "{event}");
        assert_eq!(data["message"], format!("step {step}"), "{event}");
    }
    let result = events.next().await;
    assert_eq!(result["type"], "action.result", "{result}");
    let logs = result["data"]["trace"]["logs"].to_string();
    assert!(logs.contains("1 progress reports dropped"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_guards_every_route_but_healthz() {
    let server = start_with(&["echo"], "", |o| {
        o.token = Some("t0k3n-t0k3n-t0k3n".into())
    })
    .await;
    let health = server
        .client
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    for path in ["/toolhost/v1/tools", "/metrics"] {
        let response = server
            .client
            .get(format!("{}{path}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        let (status, body) = read(response).await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::UNAUTHORIZED, "unauthorized")
        );
    }
    let wrong = server
        .client
        .get(server.url("/tools"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let (status, _) = server.get("/tools").await;
    assert_eq!(status, StatusCode::OK);

    let open = ServeOptions {
        listen: "0.0.0.0:0".parse().unwrap(),
        token: None,
        ..server_options()
    };
    let err = http::bind(&open).await.unwrap_err().to_string();
    assert!(err.contains("without a token"), "{err}");
    let short = ServeOptions {
        token: Some("short".into()),
        ..server_options()
    };
    let err = http::bind(&short).await.unwrap_err().to_string();
    assert!(err.contains("at least 16 characters"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_server_refuses_other_host_names() {
    let server = start(&["echo"], "").await;
    let port = server.base.rsplit(':').next().unwrap().to_string();
    for host in [
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        "127.0.0.1".into(),
    ] {
        let response = server
            .client
            .get(server.url("/tools"))
            .header("host", &host)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "Host {host}");
    }
    let rebound = server
        .client
        .post(server.url("/tools/echo"))
        .header("host", format!("attacker.example:{port}"))
        .json(&json!({"input": {"text": "x"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), StatusCode::FORBIDDEN);
    let body: Value = rebound.json().await.unwrap();
    assert_eq!(body["error"]["code"], "host_not_allowed", "{body}");
}

/// `[server] max_sessions` from the config reaches the server's store.
#[tokio::test]
async fn the_session_cap_comes_from_the_config() {
    let server = start(&["echo"], "[server]\nmax_sessions = 1\n").await;
    server.session(json!({})).await;
    let (status, body) = server.post("/sessions", json!({})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], json!("too_many_sessions"), "{body}");
}

/// `[server] session_history_mb` from the config holds a session's history:
/// past it, replay gives the oldest events without their payloads.
#[tokio::test]
async fn the_history_cap_comes_from_the_config() {
    let server = start(&["echo"], "[server]\nsession_history_mb = 1\n").await;
    let session = server.session(json!({})).await;
    let id = session["id"].as_str().unwrap();
    let text = "h".repeat(300_000);
    for _ in 0..4 {
        let (status, body) = server
            .call("echo", json!({"input": {"text": text}, "sessionId": id}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let mut events = server.events(id, None).await;
    let first = events.next().await;
    assert_eq!(first["data"]["payloadDropped"], true, "{first}");
}

fn server_options() -> ServeOptions {
    ServeOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        token: None,
        approval_timeout: Duration::from_secs(1),
        custom_tool_timeout: Duration::from_secs(1),
        session_retention: Duration::from_secs(60),
        max_body_bytes: 1 << 20,
        shutdown_grace: Duration::from_secs(5),
        max_connections: 64,
        header_read_timeout: Duration::from_secs(10),
        body_read_timeout: Duration::from_secs(30),
        max_sessions: 10_000,
        max_waiting_calls: 1024,
        session_history_bytes: 16 << 20,
        history_bytes: 256 << 20,
        console: true,
    }
}

/// Slow clients (slowloris): connections that never finish their headers
/// or pause mid-body are closed after the read timeouts, and while they
/// hold every connection slot, a new client waits for one instead of
/// being served or dropped at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_cut_off_and_cannot_hold_the_server() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let server = start_with(&["echo"], "", |o| {
        o.max_connections = 4;
        o.header_read_timeout = Duration::from_millis(300);
        o.body_read_timeout = Duration::from_millis(300);
    })
    .await;
    let addr = server.base.trim_start_matches("http://").to_string();
    // A fresh connection each time: the server closes an idle keep-alive
    // connection after the 300 ms header timeout, and a pooled one could be
    // reused just as it closes.
    let fresh = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let healthz = || async {
        fresh
            .get(format!("{}/healthz", server.base))
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .map(|r| r.status())
    };

    // Four clients that start their headers and never finish them.
    let mut slow = Vec::new();
    for _ in 0..4 {
        let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .await
            .unwrap();
        slow.push(stream);
    }
    let started = std::time::Instant::now();
    assert_eq!(
        healthz().await.unwrap(),
        StatusCode::OK,
        "served once a slot frees"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "the fifth client waited for a slot: {:?}",
        started.elapsed()
    );
    for mut stream in slow {
        let mut rest = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest)).await;
        assert!(
            read.is_ok(),
            "a client that never finished its headers was cut off"
        );
    }

    // A body that stops halfway.
    let mut stalled = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stalled
        .write_all(
            b"POST /toolhost/v1/tools/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n\
              content-type: application/json\r\ncontent-length: 100\r\n\r\n{\"input\":",
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stalled.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "a stalled body ends its connection");
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 4"),
        "{answer}"
    );
    assert_eq!(healthz().await.unwrap(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_expire_with_their_workspace() {
    let server = start_with(&["echo"], "", |o| {
        o.session_retention = Duration::from_millis(300);
    })
    .await;
    let session = server.session(json!({})).await;
    let id = session["id"].as_str().unwrap();
    let dir = server.dir.path().join(".toolhost/sessions").join(id);
    assert!(dir.join("workspace").is_dir());
    tokio::time::sleep(Duration::from_millis(900)).await;
    let (status, body) = server.get(&format!("/sessions/{id}")).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "session_not_found")
    );
    assert!(!dir.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_calls_answer_while_tools_spin() {
    let server = start(&["spin", "echo"], "[tools.spin]\ntimeout_ms = 3000\n").await;
    // One spinning tool per core.
    let spinners: Vec<_> = (0..2)
        .map(|_| {
            let (client, url) = (server.client.clone(), server.url("/tools/spin"));
            tokio::spawn(async move {
                read(client.post(url).json(&json!({})).send().await.unwrap()).await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let asked = std::time::Instant::now();
    let health = server
        .client
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let (status, out) = server
        .call("echo", json!({"input": {"text": "still here"}}))
        .await;
    assert_eq!(
        (status, out["result"].as_str()),
        (StatusCode::OK, Some("still here"))
    );
    // Answered while both spinners still run (they run until their 3 s deadline).
    assert!(
        asked.elapsed() < Duration::from_millis(2000),
        "{:?}",
        asked.elapsed()
    );
    for spinner in spinners {
        let (status, out) = spinner.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert!(
            out["result"].as_str().unwrap().contains("timed out"),
            "{out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_open_event_streams() {
    let (_dir, host) = host(&["echo"], "").await;
    let mut options = ServeOptions::from_config(&host).unwrap();
    options.listen = "127.0.0.1:0".parse().unwrap();
    let listener = http::bind(&options).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = App::new(Arc::new(host), options).unwrap();
    let session = app.sessions.create(Default::default()).await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http::run(listener, app, async {
        let _ = stopped.await;
    }));
    let mut stream = common::http_client()
        .get(format!(
            "{base}/toolhost/v1/sessions/{}/events",
            session.id()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    stop.send(()).unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while let Ok(Some(_)) = stream.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the event stream ended at shutdown");
    let finished = tokio::time::timeout(Duration::from_secs(5), server).await;
    assert!(
        matches!(finished, Ok(Ok(Ok(())))),
        "the server stopped: {finished:?}"
    );
}

#[tokio::test]
async fn plain_component_functions_are_called_over_http() {
    let server = start(&["plain_shapes"], "").await;
    let (status, listing) = server.get("/tools").await;
    assert_eq!(status, StatusCode::OK);
    let area = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "plain_shapes_shape_area")
        .expect("listed");
    assert!(
        area["inputSchema"]["properties"]["s"]["oneOf"].is_array(),
        "{area}"
    );

    let (status, body) = server
        .call(
            "plain_shapes_shape_area",
            json!({"input": {"s": {"circle": 1.0}}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let area = body["result"]["result"].as_f64().unwrap();
    assert!((area - std::f64::consts::PI).abs() < 1e-9, "{body}");

    let (status, body) = server
        .call("plain_shapes_classify", json!({"input": {"n": -1}}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(code(&body), "invalid_tool_input");
    let (status, body) = server
        .call(
            "plain_shapes_safe_divide",
            json!({"input": {"a": 1, "b": 0}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["isError"], json!(true), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_past_the_admission_queue_get_503_overloaded() {
    let config = "[limits]\nmax_concurrent_calls = 1\nmax_queued_calls = 1\n\
                  queue_timeout_ms = 20000\n[tools.slow]\ntimeout_ms = 5000\n";
    let server = Arc::new(start(&["slow", "echo"], config).await);
    let running = tokio::spawn({
        let server = server.clone();
        async move { server.call("slow", json!({"input": {"ms": 1200}})).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let queued = tokio::spawn({
        let server = server.clone();
        async move {
            server
                .call("echo", json!({"input": {"text": "queued"}}))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;

    let response = server
        .client
        .post(server.url("/tools/echo"))
        .json(&json!({"input": {"text": "refused"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "1");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "overloaded", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("max_queued_calls"), "{message}");

    let (status, body) = running.await.unwrap();
    assert_eq!((status, &body["result"]), (StatusCode::OK, &json!("slow")));
    let (status, body) = queued.await.unwrap();
    assert_eq!(status, StatusCode::OK, "the queued call ran next: {body}");
    assert_eq!(body["result"], "queued");
    let metrics = server.metrics().await;
    assert!(
        metrics.contains(r#"toolhost_calls_total{tool="echo",outcome="overloaded"} 1"#),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_queued_past_the_queue_timeout_gets_503() {
    let config = "[limits]\nmax_concurrent_calls = 1\nqueue_timeout_ms = 200\n\
                  [tools.slow]\ntimeout_ms = 5000\n";
    let server = Arc::new(start(&["slow", "echo"], config).await);
    let running = tokio::spawn({
        let server = server.clone();
        async move { server.call("slow", json!({"input": {"ms": 1000}})).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, body) = server
        .call("echo", json!({"input": {"text": "late"}}))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("queue_timeout_ms"), "{message}");
    assert_eq!(running.await.unwrap().0, StatusCode::OK);
}

/// Sessions of the HTTP API share the state root: what one session's call
/// writes under `/state`, another session's read call sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_share_the_state_root() {
    let server = start(&["journal"], "[tools.journal]\nstate = \"write\"\n").await;
    let mut sessions = Vec::new();
    for entry in ["from a", "from b"] {
        let session = server.session(json!({})).await;
        let id = session["id"].as_str().unwrap().to_string();
        let (status, out) = server
            .call(
                "journal",
                json!({"input": {"entry": entry}, "sessionId": id}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{out}");
        assert_eq!(out["isError"], false, "{out}");
        sessions.push(id);
    }
    let (status, out) = server
        .call("journal", json!({"input": {}, "sessionId": sessions[0]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    assert_eq!(
        out["result"]["latest"],
        json!([
            {"session": sessions[0], "text": "from a"},
            {"session": sessions[1], "text": "from b"},
        ])
    );
}

/// A session's artifacts are listed and downloaded over the HTTP API, as
/// attachments no browser renders, and announced on its event stream; the
/// tool's own metrics are on `/metrics`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artifacts_are_listed_downloaded_and_announced() {
    let config = "[tools.journal]\nstate = \"write\"\nartifacts = \"write\"\nmetrics = true\n";
    let server = start(&["journal"], config).await;
    let session = server.session(json!({})).await;
    let id = session["id"].as_str().unwrap();
    let mut events = server.events(id, None).await;
    let (status, out) = server
        .call(
            "journal",
            json!({"input": {"entry": "shipped", "export": true}, "sessionId": id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let uri = format!("toolhost://sessions/{id}/artifacts/journal.txt");
    assert_eq!(out["result"]["artifact"], uri.as_str(), "{out}");
    assert_eq!(out["usage"]["artifactsSaved"], 1, "{out}");

    let created = events.until("artifact.created").await;
    assert_eq!(created["data"]["name"], "journal.txt");
    assert_eq!(created["data"]["uri"], uri.as_str());
    assert_eq!(created["data"]["tool"], "journal");

    let (status, listed) = server.get(&format!("/sessions/{id}/artifacts")).await;
    assert_eq!(status, StatusCode::OK);
    let artifact = &listed["artifacts"][0];
    assert_eq!(artifact["name"], "journal.txt");
    assert_eq!(artifact["mediaType"], "text/plain");
    assert_eq!(artifact["tags"], json!(["journal"]));
    let size = artifact["size"].as_u64().unwrap();

    let request = server
        .client
        .get(server.url(&format!("/sessions/{id}/artifacts/journal.txt")));
    let response = server.auth(request).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    for (name, value) in [
        ("content-type", "text/plain"),
        (
            "content-disposition",
            "attachment; filename=\"journal.txt\"",
        ),
        ("x-content-type-options", "nosniff"),
        ("content-security-policy", "sandbox"),
    ] {
        assert_eq!(headers[name], value, "{name}");
    }
    let body = response.text().await.unwrap();
    assert_eq!(body.len() as u64, size);
    assert!(body.ends_with(&format!("{id}\tshipped\n")), "{body:?}");

    let (status, missing) = server
        .get(&format!("/sessions/{id}/artifacts/nope.txt"))
        .await;
    assert_eq!(
        (status, code(&missing)),
        (StatusCode::NOT_FOUND, "artifact_not_found")
    );
    // The tool's own metrics are on /metrics, labelled with the tool.
    let metrics = server.metrics().await;
    assert!(
        metrics
            .contains("toolhost_tool_journal_entries_total{tool=\"journal\",channel=\"none\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("toolhost_tool_journal_append_seconds_count{tool=\"journal\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("# TYPE toolhost_tool_journal_append_seconds histogram"),
        "{metrics}"
    );

    let (status, missing) = server.get("/sessions/ses_nobody/artifacts").await;
    assert_eq!(
        (status, code(&missing)),
        (StatusCode::NOT_FOUND, "session_not_found")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_message_reaches_the_application_on_the_event_stream() {
    let config = "[tools.session_probe]\nsessions = [\"support\"]\n";
    let server = start(&["session_probe"], config).await;
    let session = server
        .session(json!({"channel": "support", "key": "T9", "auth": {"user": "ada"}}))
        .await;
    let id = session["id"].as_str().unwrap();
    let mut events = server.events(id, None).await;

    let send = json!({"channel": "support", "message": "ticket closed", "key": "T9"});
    let (status, out) = server
        .call(
            "session_probe",
            json!({"input": send, "auth": {"user": "ada"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let sent = &out["result"]["sent"][0];
    assert_eq!(sent["session"]["id"], id, "{out}");
    assert_eq!(sent["started"], false);
    assert_eq!(out["usage"]["messagesSent"], 1, "{out}");
    let message = events.until("user.message").await;
    assert_eq!(message["data"]["message"], "ticket closed");
    assert_eq!(message["data"]["from"]["tool"], "session_probe");
    assert_eq!(message["data"]["from"]["callId"], out["callId"]);

    // Another principal's call is refused inside the tool.
    let (_, out) = server
        .call(
            "session_probe",
            json!({"input": send, "auth": {"user": "bob"}}),
        )
        .await;
    let error = out["result"]["sent"][0]["error"].as_str().unwrap_or("");
    assert!(error.contains("belongs to another principal"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reminders_are_listed_cancelled_and_their_calls_approved() {
    let config = "[tools.reminder_probe]\nreminders = { tools = [\"echo\"] }\n\
                  [tools.echo]\npermission = \"always_ask\"\n";
    let server = start(&["reminder_probe", "echo"], config).await;
    let session = server.session(json!({})).await;
    let id = session["id"].as_str().unwrap();
    let mut events = server.events(id, None).await;
    let schedule =
        |input: Value| server.call("reminder_probe", json!({"input": input, "sessionId": id}));

    // A far one is listed, then cancelled once.
    let (status, out) =
        schedule(json!({"op": "message", "message": "m", "after_ms": 3_600_000})).await;
    assert_eq!(status, StatusCode::OK, "{out}");
    assert_eq!(out["usage"]["remindersScheduled"], 1, "{out}");
    let far = out["result"]["result"][0]["value"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, listed) = server.get(&format!("/sessions/{id}/reminders")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed["reminders"][0]["id"], far.as_str(), "{listed}");
    assert_eq!(listed["reminders"][0]["action"]["type"], "message");
    let cancel = || async {
        let url = server.url(&format!("/sessions/{id}/reminders/{far}"));
        read(server.auth(server.client.delete(url)).send().await.unwrap()).await
    };
    let (status, out) = cancel().await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let (status, out) = cancel().await;
    assert_eq!(
        (status, code(&out)),
        (StatusCode::NOT_FOUND, "reminder_not_found")
    );
    let (_, listed) = server.get(&format!("/sessions/{id}/reminders")).await;
    assert_eq!(listed["reminders"], json!([]));
    let (status, out) = server.get("/sessions/ses_nope/reminders").await;
    assert_eq!(
        (status, code(&out)),
        (StatusCode::NOT_FOUND, "session_not_found")
    );

    // One due now calls an `always_ask` tool: it waits for an approval like
    // any call in the session, and carries its origin.
    let (_, out) = schedule(json!({"op": "call", "tool": "echo", "input": {"text": "hi"}})).await;
    let origin = format!("reminder({})", out["callId"].as_str().unwrap());
    let requested = events.until("approval.requested").await;
    assert_eq!(requested["data"]["toolName"], "echo");
    let call_id = requested["data"]["callId"].as_str().unwrap().to_string();
    let (status, _) = server
        .post(
            &format!("/approvals/{call_id}"),
            json!({"decision": "approve", "auth": {"user": "carol"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let result = loop {
        let result = events.until("action.result").await;
        if result["data"]["callId"] == call_id.as_str() {
            break result;
        }
    };
    assert_eq!(result["data"]["origin"], origin.as_str(), "{result}");
    assert_eq!(result["data"]["isError"], false, "{result}");
    let fired = events.until("reminder.fired").await;
    assert_eq!(fired["data"]["outcome"]["callId"], call_id.as_str());
    let (status, done) = server.get(&format!("/calls/{call_id}")).await;
    assert_eq!(status, StatusCode::OK, "{done}");
}

#[tokio::test]
async fn sessions_keep_their_version_through_a_reload_until_upgraded() {
    let server = start(&["echo"], "").await;
    let old = server.session(json!({})).await;
    assert_eq!(old["agent"], json!({ "name": "default", "version": 1 }));
    let old_id = old["id"].as_str().unwrap().to_string();
    let (status, body) = server
        .call(
            "echo",
            json!({ "input": { "text": "one" }, "sessionId": old_id }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"], json!("one"));
    assert_eq!(body["agent"], json!({ "name": "default", "version": 1 }));

    // Another component under the same name: version 2 for new sessions.
    let tools = server.dir.path().join("tools");
    std::fs::copy(common::artifact("context"), tools.join("echo.wasm")).unwrap();
    server.host.reload().await.unwrap();
    let new = server.session(json!({})).await;
    assert_eq!(new["agent"]["version"], json!(2));
    let (status, body) = server
        .call("echo", json!({ "input": {}, "sessionId": new["id"] }))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["result"].get("callId").is_some(), "{body}");
    assert_eq!(body["agent"]["version"], json!(2));

    // The old session still runs the old component, schema and all.
    let (status, body) = server
        .call(
            "echo",
            json!({ "input": { "text": "still" }, "sessionId": old_id }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"], json!("still"));
    assert_eq!(body["agent"]["version"], json!(1));
    assert!(
        server
            .metrics()
            .await
            .contains(r#"toolhost_agent_versions_loaded{agent="default"} 2"#)
    );

    let (status, versions) = server.get("/agents/default/versions").await;
    assert_eq!(status, StatusCode::OK, "{versions}");
    let versions = versions["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2, "{versions:?}");
    assert_eq!(versions[0]["sessions"], json!(1));
    let (status, v1) = server.get("/agents/default/versions/1").await;
    assert_eq!(status, StatusCode::OK, "{v1}");
    assert!(v1["tools"]["echo"]["lock"]["component"].is_string(), "{v1}");
    let (status, agent) = server.get("/agents/default").await;
    assert_eq!(status, StatusCode::OK, "{agent}");
    assert_eq!(agent["version"], json!(2));

    // Upgrading says what changed; version 1 is then used by no session
    // and is unloaded.
    let (status, upgraded) = server
        .post(&format!("/sessions/{old_id}/upgrade"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{upgraded}");
    assert_eq!(upgraded["changes"]["from"], json!(1));
    assert_eq!(upgraded["changes"]["to"], json!(2));
    let echo = upgraded["changes"]["changed"]["echo"].to_string();
    assert!(echo.contains("component sha256"), "{upgraded}");
    assert!(echo.contains("input schema"), "{upgraded}");
    let (_, body) = server
        .call("echo", json!({ "input": {}, "sessionId": old_id }))
        .await;
    assert!(body["result"].get("callId").is_some(), "{body}");
    let metrics = server.metrics().await;
    assert!(
        metrics.contains(r#"toolhost_agent_versions_loaded{agent="default"} 1"#),
        "{metrics}"
    );
    let (_, versions) = server.get("/agents/default/versions").await;
    assert_eq!(versions["versions"][0]["loaded"], json!(false));

    // An unloaded version cannot be named for a new session; an unknown
    // one or agent is not found.
    let (status, body) = server.post("/sessions", json!({ "version": 1 })).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::CONFLICT, "agent_version_unavailable"),
        "{body}"
    );
    let (status, body) = server.post("/sessions", json!({ "version": 9 })).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "agent_version_not_found")
    );
    let (status, body) = server.post("/sessions", json!({ "agent": "nobody" })).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "agent_not_found")
    );
}

#[tokio::test]
async fn ending_a_session_unloads_the_version_only_it_used() {
    let server = start(&["echo"], "").await;
    let old = server.session(json!({})).await;
    let id = old["id"].as_str().unwrap().to_string();
    let tools = server.dir.path().join("tools");
    std::fs::copy(common::artifact("context"), tools.join("echo.wasm")).unwrap();
    server.host.reload().await.unwrap();
    let loaded = |metrics: &str, n: usize| {
        metrics.contains(&format!(
            r#"toolhost_agent_versions_loaded{{agent="default"}} {n}"#
        ))
    };
    let before = server.metrics().await;
    assert!(loaded(&before, 2), "{before}");

    let request = server.client.delete(server.url(&format!("/sessions/{id}")));
    let response = server.auth(request).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let after = server.metrics().await;
    assert!(loaded(&after, 1), "{after}");
    let bytes = |metrics: &str| -> u64 {
        let line = metrics
            .lines()
            .find(|l| l.starts_with("toolhost_loaded_code_bytes "))
            .unwrap();
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(bytes(&after) < bytes(&before), "the old code is freed");
    let (status, _) = server.get(&format!("/sessions/{id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        !server
            .dir
            .path()
            .join(".toolhost/sessions")
            .join(&id)
            .exists()
    );
}
