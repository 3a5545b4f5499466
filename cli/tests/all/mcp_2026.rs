//! MCP 2026-07-28 beside 2025-11-25 on one server: requests that carry
//! their version, capabilities and log level in `_meta` with no
//! `initialize`, `server/discover`, the methods 2026-07-28 removed,
//! listings' cache hints, MissingRequiredClientCapability for a question
//! the client cannot be asked, and `subscriptions/listen` streams, over
//! HTTP (`toolhost serve`'s `/mcp`) and stdio (`toolhost mcp`) — with
//! hostile filters and more streams than a server holds.

use crate::common::process::{self, Served};
use crate::common::stdio_mcp::StdioMcp;
use crate::common::{artifact, host_dir, http_client};

use std::time::{Duration, Instant};

use serde_json::{Value, json};

const VERSION: &str = "2026-07-28";

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
fn request(id: u64, method: &str, mut params: Value, extra_meta: Value) -> Value {
    params["_meta"] = meta(extra_meta);
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// What `/mcp` answered one POST: its status, whether it named a session,
/// and the JSON-RPC messages of its body (one JSON body or SSE frames).
struct Reply {
    status: u16,
    session_id: Option<String>,
    messages: Vec<Value>,
}

impl Reply {
    /// The message answering the request (the one with an `id`).
    fn answer(&self) -> &Value {
        self.messages
            .iter()
            .find(|m| m.get("id").is_some() && m.get("method").is_none())
            .unwrap_or_else(|| panic!("no answer among {:?}", self.messages))
    }

    /// The notifications the server sent before answering.
    fn notifications(&self, method: &str) -> Vec<&Value> {
        self.messages
            .iter()
            .filter(|m| m["method"] == method)
            .collect()
    }
}

/// POST `body` to `served`'s `/mcp` with the 2026-07-28 headers.
async fn post(served: &Served, body: &Value) -> Reply {
    let method = body["method"].as_str().unwrap_or_default();
    let mut builder = http_client()
        .post(format!("{}/mcp", served.url))
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", VERSION)
        .header("Mcp-Method", method);
    if let Some(name) = body["params"]["name"].as_str() {
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

/// The JSON-RPC messages of an SSE body.
fn frames(text: &str) -> Vec<Value> {
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
struct Listen {
    response: reqwest::Response,
    buffer: String,
}

impl Listen {
    async fn open(served: &Served, id: u64, notifications: Value) -> Self {
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
    async fn next_within(&mut self, limit: Duration) -> Option<Value> {
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

const GRANTS: &str = r#"
[tools.test_missing_capability]
ask = ["model"]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_client_is_served_per_request_beside_a_2025_11_25_session() {
    let dir = host_dir(&["echo", "chatty", "test_missing_capability"], GRANTS);
    let served = process::serve(dir.path(), &[]);

    let discover = post(
        &served,
        &request(1, "server/discover", json!({}), json!({})),
    )
    .await;
    let found = discover.answer();
    let versions = &found["result"]["supportedVersions"];
    for version in ["2025-11-25", VERSION] {
        assert!(
            versions.as_array().unwrap().contains(&json!(version)),
            "{found}"
        );
    }
    assert_eq!(
        found["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "toolhost",
        "{found}"
    );

    // A listing names no session, tells how long it may be kept and by
    // whom, and lists the tools in one order.
    let listed = post(&served, &request(2, "tools/list", json!({}), json!({}))).await;
    assert_eq!(listed.status, 200);
    assert_eq!(listed.session_id, None);
    let result = &listed.answer()["result"];
    assert_eq!(result["ttlMs"], 5000, "{result}");
    assert_eq!(result["cacheScope"], "private", "{result}");
    let names: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["chatty", "echo", "test_missing_capability"]);

    let echoed = post(
        &served,
        &request(
            3,
            "tools/call",
            json!({ "name": "echo", "arguments": { "text": "per request" } }),
            json!({}),
        ),
    )
    .await;
    assert_eq!(
        echoed.answer()["result"]["content"][0]["text"],
        "per request"
    );

    // The methods of a session are not part of 2026-07-28.
    for (id, method) in (10..).zip([
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ]) {
        let removed = post(&served, &request(id, method, json!({}), json!({}))).await;
        let error = &removed.answer()["error"];
        assert_eq!(removed.status, 404, "{method}: {error}");
        assert_eq!(error["code"], -32601, "{method}: {error}");
    }
    let set_level = post(
        &served,
        &request(
            20,
            "logging/setLevel",
            json!({ "level": "debug" }),
            json!({}),
        ),
    )
    .await;
    let error = &set_level.answer()["error"];
    assert_eq!(error["code"], -32601, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("logLevel"),
        "{error}"
    );

    // A tool's lines reach only a request that names a level, from it up.
    let logged = |level: Option<&str>| {
        let extra = match level {
            Some(level) => json!({ "io.modelcontextprotocol/logLevel": level }),
            None => json!({}),
        };
        request(
            30,
            "tools/call",
            json!({ "name": "chatty", "arguments": { "bytes": 0, "log": true } }),
            extra,
        )
    };
    let silent = post(&served, &logged(None)).await;
    assert_eq!(silent.answer()["result"]["isError"], false);
    assert!(
        silent.notifications("notifications/message").is_empty(),
        "{:?}",
        silent.messages
    );
    let warned = post(&served, &logged(Some("warning"))).await;
    let levels: Vec<&Value> = warned
        .notifications("notifications/message")
        .iter()
        .map(|m| &m["params"]["level"])
        .collect();
    assert_eq!(levels, [&json!("warning"), &json!("error")]);

    // A question the client cannot be asked ends the request at once with
    // MissingRequiredClientCapability, naming what was missing.
    let started = Instant::now();
    let refused = post(
        &served,
        &request(
            40,
            "tools/call",
            json!({ "name": "test_missing_capability", "arguments": {} }),
            json!({}),
        ),
    )
    .await;
    let error = &refused.answer()["error"];
    assert_eq!(refused.status, 400, "{error}");
    assert_eq!(error["code"], -32021, "{error}");
    assert!(
        error["data"]["requiredCapabilities"]["sampling"].is_object(),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let health = http_client()
        .get(format!("{}/healthz", served.url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);

    // A 2025-11-25 session on the same server keeps its shape.
    let opened = http_client()
        .post(format!("{}/mcp", served.url))
        .header("Accept", "application/json, text/event-stream")
        .json(
            &json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "old", "version": "0" } } }),
        )
        .send()
        .await
        .unwrap();
    assert!(opened.headers().contains_key("mcp-session-id"));
    let opened = frames(&opened.text().await.unwrap());
    assert_eq!(opened[0]["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_hears_the_changes_it_accepted_and_no_others() {
    let dir = host_dir(&["echo"], "");
    let served = process::serve(dir.path(), &[]);

    let mut tools = Listen::open(&served, 1, json!({ "toolsListChanged": true })).await;
    let mut prompts = Listen::open(&served, 2, json!({ "promptsListChanged": true })).await;
    for (stream, id) in [(&mut tools, 1), (&mut prompts, 2)] {
        let ack = stream.next_within(Duration::from_secs(10)).await.unwrap();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(
            ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], id,
            "{ack}"
        );
    }

    // A filter asking for more addresses than a stream keeps, some of them
    // no address at all: the acknowledgment names what was accepted.
    let mut asked: Vec<String> = (0..3000).map(|i| format!("test://r/{i}")).collect();
    asked.insert(0, "not an address".into());
    asked.insert(1, format!("test://{}", "x".repeat(64 << 10)));
    let mut many = Listen::open(
        &served,
        3,
        json!({ "resourceSubscriptions": asked, "toolsListChanged": false }),
    )
    .await;
    let ack = many.next_within(Duration::from_secs(10)).await.unwrap();
    let accepted = ack["params"]["notifications"]["resourceSubscriptions"]
        .as_array()
        .unwrap();
    assert_eq!(accepted.len(), 1024);
    assert_eq!(accepted[0], "test://r/0");

    // A tool arrives: the tools stream is told, the prompts stream is not.
    std::fs::copy(artifact("chatty"), dir.path().join("tools/chatty.wasm")).unwrap();
    let changed = tools.next_within(Duration::from_secs(20)).await.unwrap();
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    assert_eq!(prompts.next_within(Duration::from_secs(2)).await, None);
    assert_eq!(many.next_within(Duration::from_millis(100)).await, None);
    let listed = post(&served, &request(4, "tools/list", json!({}), json!({}))).await;
    assert_eq!(listed.answer()["result"]["tools"][0]["name"], "chatty");

    // Open streams do not hold a stopping server up.
    let mut served = served;
    served.signal(libc::SIGTERM);
    let stopped = served.wait_for_exit(Duration::from_secs(10));
    assert!(stopped.is_some_and(|s| s.success()), "{stopped:?}");
    drop((tools, prompts, many));
}

#[test]
fn stdio_speaks_2026_07_28_and_holds_a_bounded_number_of_listen_streams() {
    let tool = "test_input_required_result_request_state";
    let grant = format!("[tools.{tool}]\nask = [\"user\"]\n");
    let dir = host_dir(&["echo", tool], &grant);
    let mut mcp = StdioMcp::spawn(&[], dir.path());
    let listed = mcp.exchange(request(1, "tools/list", json!({}), json!({})));
    assert_eq!(listed["result"]["tools"][0]["name"], "echo", "{listed}");
    assert_eq!(listed["result"]["cacheScope"], "private", "{listed}");

    // A question is a round on stdio too.
    let can_elicit = json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } });
    let asked = mcp.exchange(request(
        3,
        "tools/call",
        json!({ "name": tool, "arguments": {} }),
        can_elicit,
    ));
    let asked = Reply {
        status: 200,
        session_id: None,
        messages: vec![asked],
    };
    let (state, key, _) = round(&asked);
    let done = mcp.exchange(retry(
        4,
        tool,
        json!({}),
        &state,
        json!({ key: accept(json!({ "ok": true })) }),
    ));
    assert_eq!(
        done["result"]["content"][0]["text"], "state-ok: confirmed=true",
        "{done}"
    );

    // Each listen is acknowledged; past the cap, one is refused by name.
    const CAP: u64 = 1024;
    for id in 100..100 + CAP + 1 {
        mcp.send(request(
            id,
            "subscriptions/listen",
            json!({ "notifications": { "toolsListChanged": true } }),
            json!({}),
        ));
    }
    // Every listen is acknowledged before it is counted, the refused one too.
    let (mut acknowledged, mut refused) = (0, Vec::new());
    while acknowledged < CAP + 1 || refused.is_empty() {
        let message = mcp.next();
        match message["method"].as_str() {
            Some("notifications/subscriptions/acknowledged") => acknowledged += 1,
            _ if message["error"].is_object() => refused.push(message),
            _ => panic!("unexpected {message}"),
        }
    }
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0]["error"]["data"]["code"], "too_many_listeners");
    let echoed = mcp.exchange(request(
        2,
        "tools/call",
        json!({ "name": "echo", "arguments": { "text": "still here" } }),
        json!({}),
    ));
    assert_eq!(echoed["result"]["content"][0]["text"], "still here");
    assert!(mcp.close().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_schema_2020_12_input_schema_is_listed_as_written_and_checks_calls() {
    let dir = host_dir(&["json_schema_2020_12_tool"], "");
    let served = process::serve(dir.path(), &[]);
    let listed = post(&served, &request(1, "tools/list", json!({}), json!({}))).await;
    let schema = &listed.answer()["result"]["tools"][0]["inputSchema"];
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    assert!(schema["allOf"][0]["anyOf"].is_array(), "{schema}");
    for keyword in ["if", "then", "else"] {
        assert!(schema[keyword].is_object(), "{keyword}: {schema}");
    }

    let call = |id: u64, arguments: Value| {
        request(
            id,
            "tools/call",
            json!({ "name": "json_schema_2020_12_tool", "arguments": arguments }),
            json!({}),
        )
    };
    // `if`/`then`: by phone needs a phone number, whatever else is given.
    let refused = post(
        &served,
        &call(
            2,
            json!({ "contactMethod": "phone", "email": "a@example.org" }),
        ),
    )
    .await;
    let result = &refused.answer()["result"];
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["_meta"]["code"], "invalid_tool_input", "{result}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("phone")
    );
    // `$ref` into `$defs` and `additionalProperties: false`.
    let refused = post(&served, &call(3, json!({ "email": "e", "extra": 1 }))).await;
    assert_eq!(refused.answer()["result"]["isError"], true);
    let answered = post(
        &served,
        &call(4, json!({ "email": "e", "address": { "city": "Oslo" } })),
    )
    .await;
    assert_eq!(
        answered.answer()["result"]["content"][0]["text"],
        "nobody of Oslo, reached at e"
    );
}

/// The `requestState` and the one input request of an input-required
/// result, with its key.
fn round(reply: &Reply) -> (String, String, Value) {
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
fn retry(id: u64, tool: &str, arguments: Value, state: &str, responses: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({ "name": tool, "arguments": arguments,
                "inputResponses": responses, "requestState": state }),
        json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } }),
    )
}

/// An accepted form's answer.
fn accept(content: Value) -> Value {
    json!({ "action": "accept", "content": content })
}

const ASKING: &str = r#"
[limits]
max_asking_calls = 2
ask_timeout_ms = 3000

[tools.test_input_required_result_multi_round]
ask = ["user"]

[tools.test_input_required_result_request_state]
ask = ["user"]

[tools.echo]
permission = "always_ask"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_an_input_required_round_and_a_retry_answers_the_waiting_call() {
    let dir = host_dir(
        &[
            "echo",
            "test_input_required_result_multi_round",
            "test_input_required_result_request_state",
        ],
        ASKING,
    );
    let served = process::serve(dir.path(), &[]);
    let tool = "test_input_required_result_multi_round";
    let can_elicit = json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } });
    let first = post(
        &served,
        &request(
            1,
            "tools/call",
            json!({ "name": tool, "arguments": {} }),
            can_elicit.clone(),
        ),
    )
    .await;
    let (state1, key1, asked) = round(&first);
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(asked["params"]["message"], "What is your name?");

    let second = post(
        &served,
        &retry(
            2,
            tool,
            json!({}),
            &state1,
            json!({ key1.clone(): accept(json!({ "name": "Alice" })) }),
        ),
    )
    .await;
    let (state2, key2, asked) = round(&second);
    assert_ne!(state1, state2);
    assert_eq!(asked["params"]["message"], "What is your favourite colour?");

    // Each state is good for one retry, of this request, unchanged.
    let refusals = [
        retry(
            3,
            tool,
            json!({}),
            &state1,
            json!({ key1: accept(json!({ "name": "Eve" })) }),
        ),
        retry(
            4,
            tool,
            json!({ "other": 1 }),
            &state2,
            json!({ key2.clone(): accept(json!({ "color": "red" })) }),
        ),
        retry(
            5,
            "test_input_required_result_request_state",
            json!({}),
            &state2,
            json!({}),
        ),
        retry(
            6,
            tool,
            json!({}),
            &format!("{state2}x"),
            json!({ key2.clone(): accept(json!({ "color": "red" })) }),
        ),
        retry(7, tool, json!({}), "", json!({})),
        retry(8, tool, json!({}), &"A".repeat(1 << 20), json!({})),
    ];
    for refused in &refusals {
        let reply = post(&served, refused).await;
        let error = &reply.answer()["error"];
        assert_eq!(error["code"], -32602, "{error}");
        assert_eq!(error["data"]["code"], "invalid_request_state", "{error}");
    }

    // The call went on from where it asked: the tool ran once.
    let done = post(
        &served,
        &retry(
            9,
            tool,
            json!({}),
            &state2,
            json!({ key2.clone(): accept(json!({ "color": "blue" })) }),
        ),
    )
    .await;
    let result = &done.answer()["result"];
    assert_eq!(
        result["content"][0]["text"], "Alice likes blue.",
        "{result}"
    );
    let again = post(
        &served,
        &retry(
            10,
            tool,
            json!({}),
            &state2,
            json!({ key2: accept(json!({ "color": "blue" })) }),
        ),
    )
    .await;
    let error = &again.answer()["error"];
    assert!(
        error["message"].as_str().unwrap().contains("over"),
        "{error}"
    );

    // A retry without the answer is asked again, under a new state; an
    // answer of the wrong shape reaches the tool as an error.
    let tool = "test_input_required_result_request_state";
    let asked = post(
        &served,
        &request(
            11,
            "tools/call",
            json!({ "name": tool, "arguments": {} }),
            can_elicit.clone(),
        ),
    )
    .await;
    let (state, key, _) = round(&asked);
    let again = post(
        &served,
        &retry(12, tool, json!({}), &state, json!({ "other": {} })),
    )
    .await;
    let (state, key_again, _) = round(&again);
    assert_eq!(key, key_again);
    let wrong = post(
        &served,
        &retry(13, tool, json!({}), &state, json!({ key: "yes" })),
    )
    .await;
    let result = &wrong.answer()["result"];
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("not an elicitation result"),
        "{result}"
    );

    // An approval is a round too.
    let approve = post(
        &served,
        &request(
            14,
            "tools/call",
            json!({ "name": "echo", "arguments": { "text": "approved" } }),
            can_elicit.clone(),
        ),
    )
    .await;
    let (state, key, asked) = round(&approve);
    assert!(
        asked["params"]["message"]
            .as_str()
            .unwrap()
            .contains("echo"),
        "{asked}"
    );
    let approved = post(
        &served,
        &retry(
            15,
            "echo",
            json!({ "text": "approved" }),
            &state,
            json!({ key: accept(json!({ "approve": true })) }),
        ),
    )
    .await;
    assert_eq!(
        approved.answer()["result"]["content"][0]["text"],
        "approved"
    );

    // Clients that ask and never come back hold at most `max_asking_calls`
    // calls, each until `ask_timeout_ms`; then the state names a call that is over.
    let mut states = Vec::new();
    for id in 20..22 {
        let asked = post(
            &served,
            &request(
                id,
                "tools/call",
                json!({ "name": tool, "arguments": {} }),
                can_elicit.clone(),
            ),
        )
        .await;
        states.push(round(&asked));
    }
    let third = post(
        &served,
        &request(
            22,
            "tools/call",
            json!({ "name": tool, "arguments": {} }),
            can_elicit.clone(),
        ),
    )
    .await;
    let result = &third.answer()["result"];
    assert_eq!(result["isError"], true, "{result}");
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let (state, key, _) = &states[0];
    let late = post(
        &served,
        &retry(
            23,
            tool,
            json!({}),
            state,
            json!({ key.clone(): accept(json!({ "ok": true })) }),
        ),
    )
    .await;
    let error = &late.answer()["error"];
    assert_eq!(error["data"]["code"], "invalid_request_state", "{error}");
    let health = http_client()
        .get(format!("{}/healthz", served.url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_param_headers_must_match_the_arguments_they_mirror() {
    let dir = host_dir(&["test_custom_headers"], "");
    let served = process::serve(dir.path(), &[]);
    let send = |id: u64, region: &str, header: Option<String>| {
        let body = request(
            id,
            "tools/call",
            json!({ "name": "test_custom_headers", "arguments": { "region": region } }),
            json!({}),
        );
        let mut builder = http_client()
            .post(format!("{}/mcp", served.url))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", VERSION)
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "test_custom_headers");
        if let Some(header) = header {
            builder = builder.header("Mcp-Param-Region", header);
        }
        builder.json(&body).send()
    };
    let listed = post(&served, &request(1, "tools/list", json!({}), json!({}))).await;
    let schema = &listed.answer()["result"]["tools"][0]["inputSchema"];
    assert_eq!(schema["properties"]["region"]["x-mcp-header"], "Region");

    let matching = send(2, "eu-west", Some("eu-west".into())).await.unwrap();
    assert_eq!(matching.status(), 200);
    let encoded = send(3, "Zürich", Some("=?base64?WsO8cmljaA==?=".into()))
        .await
        .unwrap();
    assert_eq!(encoded.status(), 200);
    let body = encoded.text().await.unwrap();
    assert!(body.contains("in Zürich"), "{body}");
    for (id, header) in [
        (4, Some("us-east".to_string())),
        (5, None),
        (6, Some("=?base64?WsO8cmljaA?=".into())),
        (7, Some("x".repeat(64 << 10))),
    ] {
        let refused = send(id, "eu-west", header).await.unwrap();
        let status = refused.status();
        assert!(status.is_client_error(), "{id}: {status}");
        if id < 7 {
            let body = refused.text().await.unwrap();
            assert!(body.contains("-32020"), "{id}: {body}");
        }
    }
    let health = http_client()
        .get(format!("{}/healthz", served.url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

/// A host for tests/mcp/client_modern.py: the tools it calls, and the
/// spare tool its listen scenario copies in.
fn modern_client_host() -> tempfile::TempDir {
    let grants =
        "[tools.test_elicitation]\nask = [\"user\"]\n\n[tools.test_sampling]\nask = [\"model\"]\n";
    let dir = host_dir(
        &["echo", "chatty", "test_elicitation", "test_sampling"],
        grants,
    );
    std::fs::create_dir(dir.path().join("spare")).unwrap();
    std::fs::copy(
        artifact("word_count"),
        dir.path().join("spare/word_count.wasm"),
    )
    .unwrap();
    dir
}

/// Run tests/mcp/client_modern.py with `args`, expecting `all ok`.
fn run_modern_client(python: &std::path::Path, args: &[&str]) {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp/client_modern.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("all ok"),
        "the Python client ({args:?}) failed\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run tests/mcp/client_modern.mjs with `args`, expecting `all ok`; or
/// skip (fail under `CI=true`) without Node.js 22 and the client.
fn run_typescript_client(args: &[&str]) {
    let mcp = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp");
    let client = mcp.join("node_modules/@modelcontextprotocol/client/package.json");
    let node = std::process::Command::new("node").arg("--version").output();
    if !client.is_file() || node.is_err() {
        let missing = "node or tests/mcp/node_modules was not found: run scripts/test, or `npm \
                       ci --prefix tests/mcp` with Node.js 22 on PATH";
        if crate::common::skip_missing_toolchain("the TypeScript MCP client", missing) {
            return;
        }
    }
    let out = std::process::Command::new("node")
        .arg(mcp.join("client_modern.mjs"))
        .args(args)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("all ok"),
        "the TypeScript client ({args:?}) failed\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_typescript_client_speaks_2026_07_28_and_forced_2025_11_25_over_stdio_and_http() {
    let binary = env!("CARGO_BIN_EXE_toolhost");
    for mode in ["auto", "legacy"] {
        let dir = modern_client_host();
        run_typescript_client(&["stdio", binary, dir.path().to_str().unwrap(), mode]);

        let dir = modern_client_host();
        let served = process::serve(dir.path(), &[]);
        let url = format!("{}/mcp", served.url);
        run_typescript_client(&["http", &url, dir.path().to_str().unwrap(), mode]);
    }
}

#[test]
fn the_python_client_speaks_2026_07_28_and_forced_2025_11_25_over_stdio_and_http() {
    let Some(python) = crate::common::python() else {
        return;
    };
    let binary = env!("CARGO_BIN_EXE_toolhost");
    for mode in ["auto", "legacy"] {
        let dir = modern_client_host();
        let dir_arg = dir.path().to_str().unwrap();
        run_modern_client(&python, &["stdio", binary, dir_arg, mode]);

        let dir = modern_client_host();
        let served = process::serve(dir.path(), &[]);
        let url = format!("{}/mcp", served.url);
        let dir_arg = dir.path().to_str().unwrap();
        run_modern_client(&python, &["http", &url, "no-token", dir_arg, mode]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_no_client_answers_hold_a_bounded_number_of_calls_for_a_bounded_time() {
    let config = "[server]\nmax_waiting_calls = 1\n\n[limits]\nask_timeout_ms = 1500\n\n\
                  [tools.echo]\npermission = \"always_ask\"\n";
    let dir = host_dir(&["echo"], config);
    let served = process::serve(dir.path(), &[]);
    let can_elicit = json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } });
    let call = |id: u64| {
        request(
            id,
            "tools/call",
            json!({ "name": "echo", "arguments": { "text": "hi" } }),
            can_elicit.clone(),
        )
    };
    let first = post(&served, &call(1)).await;
    let (state, key, _) = round(&first);

    // The one place is taken: the next approval is refused at once.
    let started = Instant::now();
    let second = post(&served, &call(2)).await;
    let result = &second.answer()["result"];
    assert_eq!(result["isError"], true, "{result}");
    assert!(started.elapsed() < Duration::from_secs(1));

    // Unanswered past `ask_timeout_ms`, the first call ends and frees it.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let late = post(
        &served,
        &retry(
            3,
            "echo",
            json!({ "text": "hi" }),
            &state,
            json!({ key: accept(json!({ "approve": true })) }),
        ),
    )
    .await;
    assert_eq!(
        late.answer()["error"]["data"]["code"],
        "invalid_request_state"
    );
    let third = post(&served, &call(4)).await;
    let (state, key, _) = round(&third);
    let approved = post(
        &served,
        &retry(
            5,
            "echo",
            json!({ "text": "hi" }),
            &state,
            json!({ key: accept(json!({ "approve": true })) }),
        ),
    )
    .await;
    assert_eq!(approved.answer()["result"]["content"][0]["text"], "hi");
}
