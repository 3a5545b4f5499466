//! MCP 2026-07-28 beside 2025-11-25 on one server: requests that carry
//! their version, capabilities and log level in `_meta` with no
//! `initialize`, over HTTP (`toolhost serve`'s `/mcp`) and stdio
//! (`toolhost mcp`), with hostile inputs: per request (`per_request.rs`),
//! `subscriptions/listen` streams (`listen.rs`), input-required rounds
//! (`rounds.rs`), tasks (`tasks.rs`), principals (`principals.rs`) and the clients people use
//! (`clients.rs`). Here: a client of raw 2026-07-28 requests.

mod clients;
mod listen;
mod per_request;
mod principals;
mod rounds;
mod tasks;

use crate::common::http_client;
use crate::common::process::Served;

use std::time::Duration;

use serde_json::{Value, json};

pub(super) const VERSION: &str = "2026-07-28";

/// The `_meta` a 2026-07-28 request carries, with `extra` merged in.
fn meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": { "name": "test", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let (Some(meta), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        meta.extend(extra);
    }
    meta
}

/// A 2026-07-28 request `method` with `params` (its `_meta` added).
pub(super) fn request(id: u64, method: &str, mut params: Value, extra_meta: Value) -> Value {
    params["_meta"] = meta(extra_meta);
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// What `/mcp` answered one POST: its status, whether it named a session,
/// and the JSON-RPC messages of its body (one JSON body or SSE frames).
pub(super) struct Reply {
    pub(super) status: u16,
    pub(super) session_id: Option<String>,
    pub(super) messages: Vec<Value>,
}

impl Reply {
    /// The message answering the request (the one with an `id`).
    pub(super) fn answer(&self) -> &Value {
        self.messages
            .iter()
            .find(|m| m.get("id").is_some() && m.get("method").is_none())
            .unwrap_or_else(|| panic!("no answer among {:?}", self.messages))
    }

    /// The notifications the server sent before answering.
    pub(super) fn notifications(&self, method: &str) -> Vec<&Value> {
        self.messages
            .iter()
            .filter(|m| m["method"] == method)
            .collect()
    }
}

/// POST `body` to `served`'s `/mcp` with the 2026-07-28 headers.
pub(super) async fn post(served: &Served, body: &Value) -> Reply {
    post_as(served, body, None).await
}

/// POST `body` to `served`'s `/mcp` with the 2026-07-28 headers, acting
/// for the principal `auth` names (the `Toolhost-Auth` header), if any.
pub(super) async fn post_as(served: &Served, body: &Value, auth: Option<&str>) -> Reply {
    let method = body["method"].as_str().unwrap_or_default();
    let mut builder = http_client()
        .post(format!("{}/mcp", served.url))
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", VERSION)
        .header("Mcp-Method", method);
    if let Some(auth) = auth {
        builder = builder.header("Toolhost-Auth", auth);
    }
    let params = &body["params"];
    if let Some(name) = params["name"].as_str().or(params["taskId"].as_str()) {
        builder = builder.header("Mcp-Name", name);
    }
    let response = builder.json(body).send().await.expect("POST /mcp");
    let status = response.status().as_u16();
    let session_id = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let text = response.text().await.expect("body");
    let messages = match text.trim_start().starts_with('{') {
        true => vec![serde_json::from_str(&text).expect("a JSON body")],
        false => frames(&text),
    };
    Reply {
        status,
        session_id,
        messages,
    }
}

/// Assert `served` still answers `/healthz`.
pub(super) async fn healthy(served: &Served) {
    let health = http_client()
        .get(format!("{}/healthz", served.url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

/// The JSON-RPC messages of an SSE body.
pub(super) fn frames(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|frame| {
            let data: String = frame
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            (!data.is_empty()).then(|| serde_json::from_str(&data).expect("a JSON frame"))
        })
        .collect()
}

/// An open `subscriptions/listen` stream, read frame by frame.
pub(super) struct Listen {
    response: reqwest::Response,
    buffer: String,
}

impl Listen {
    pub(super) async fn open(served: &Served, id: u64, notifications: Value) -> Self {
        let body = request(
            id,
            "subscriptions/listen",
            json!({ "notifications": notifications }),
            json!({}),
        );
        let response = http_client()
            .post(format!("{}/mcp", served.url))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", VERSION)
            .header("Mcp-Method", "subscriptions/listen")
            .json(&body)
            .send()
            .await
            .expect("POST subscriptions/listen");
        assert_eq!(response.status(), 200);
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next message within `limit`, or `None`.
    pub(super) async fn next_within(&mut self, limit: Duration) -> Option<Value> {
        tokio::time::timeout(limit, async {
            loop {
                if let Some(end) = self.buffer.find("\n\n") {
                    let frame: String = self.buffer.drain(..end + 2).collect();
                    if let Some(message) = frames(&frame).pop() {
                        return message;
                    }
                    continue;
                }
                let chunk = self.response.chunk().await.unwrap().expect("stream open");
                self.buffer.push_str(&String::from_utf8_lossy(&chunk));
            }
        })
        .await
        .ok()
    }
}

/// The `requestState` and the one input request of an input-required
/// result, with its key.
pub(super) fn round(reply: &Reply) -> (String, String, Value) {
    let result = &reply.answer()["result"];
    assert_eq!(result["resultType"], "input_required", "{result}");
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{result}");
    let (key, request) = requests.iter().next().unwrap();
    let state = result["requestState"].as_str().unwrap().to_string();
    (state, key.clone(), request.clone())
}

/// A retry of `tool` with `arguments`, answering with `responses` under
/// `state`.
pub(super) fn retry(id: u64, tool: &str, arguments: Value, state: &str, responses: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({ "name": tool, "arguments": arguments,
                "inputResponses": responses, "requestState": state }),
        json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } }),
    )
}

/// An accepted form's answer.
pub(super) fn accept(content: Value) -> Value {
    json!({ "action": "accept", "content": content })
}
