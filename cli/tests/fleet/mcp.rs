//! MCP in a fleet: 2025-11-25 sessions live on one server; 2026-07-28
//! requests need no affinity (rounds, tasks and listen streams reach
//! across servers); and a writer of Redis without the cluster key moves
//! none of it.

use super::*;

/// A minimal MCP client over streamable HTTP that follows the spec's rule
/// for a session the server does not know: on 404, start a new one.
struct McpClient {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
    next_id: u64,
}

impl McpClient {
    fn new(base: &str) -> Self {
        Self {
            http: common::http_client(),
            url: format!("{base}/mcp"),
            session: None,
            next_id: 1,
        }
    }

    /// POST one JSON-RPC message; the status and the JSON-RPC answer (read
    /// from a JSON body or the first `data:` of an SSE one).
    async fn post(&self, message: &Value) -> (u16, Option<Value>, Option<String>) {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .json(message);
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = response.text().await.unwrap();
        (status, jsonrpc_answer(&text), session)
    }

    async fn initialize(&mut self) {
        self.session = None;
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "fleet-test", "version": "0"}}
        });
        let (status, answer, session) = self.post(&initialize).await;
        assert_eq!(status, 200, "{answer:?}");
        self.session = Some(session.expect("an Mcp-Session-Id"));
        let (status, _, _) = self
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(status, 202);
    }

    /// Call `method`; the raw status of the first try, and the answer after
    /// re-initializing if that try was a 404.
    async fn request(&mut self, method: &str, params: Value) -> (u16, Value) {
        self.next_id += 1;
        let message =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let (first, answer, _) = self.post(&message).await;
        if first != 404 {
            return (first, answer.expect("a JSON-RPC answer"));
        }
        self.initialize().await;
        let (status, answer, _) = self.post(&message).await;
        assert_eq!(status, 200, "{answer:?}");
        (first, answer.expect("a JSON-RPC answer"))
    }
}

/// The JSON-RPC answer in an MCP response body: a JSON body, or an SSE
/// stream whose answer is the event carrying a result or an error (others
/// are notifications or priming).
fn jsonrpc_answer(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok().or_else(|| {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|event| event.get("result").is_some() || event.get("error").is_some())
    })
}

/// A 2026-07-28 request to server `url` from a client that declared the
/// Tasks extension and elicitation: the JSON-RPC answer.
async fn mcp_2026(url: &str, method: &str, params: Value) -> Value {
    let capabilities = json!({ "elicitation": {},
                               "extensions": { "io.modelcontextprotocol/tasks": {} } });
    request_2026(url, method, params, capabilities).await
}

/// A 2026-07-28 request to server `url` from a client that declared
/// elicitation only (its calls' questions are rounds, never tasks).
async fn mcp_rounds(url: &str, method: &str, params: Value) -> Value {
    request_2026(url, method, params, json!({ "elicitation": {} })).await
}

/// A 2026-07-28 request to server `url` from a client with `capabilities`.
async fn request_2026(url: &str, method: &str, params: Value, capabilities: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "fleet-test", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let name = params["name"].as_str().or(params["taskId"].as_str());
    let mut request = common::http_client()
        .post(format!("{url}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let text = request
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    jsonrpc_answer(&text).unwrap_or_else(|| panic!("no JSON-RPC answer in {text}"))
}

/// `tasks/get` of `task` on `url` until its status is `status` (10 s).
async fn task_until(url: &str, task: &str, status: &str) -> Value {
    let started = std::time::Instant::now();
    loop {
        let got = mcp_2026(url, "tasks/get", json!({ "taskId": task })).await;
        if got["result"]["status"] == status || started.elapsed() > Duration::from_secs(10) {
            assert_eq!(got["result"]["status"], status, "{got}");
            return got["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An MCP task is the fleet's: made on one server, another shows it, takes
/// its answers and its cancel to the server running it; when that server
/// dies the task reads `failed`, and its call runs nowhere else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_task_made_on_one_server_is_polled_answered_and_cancelled_on_another() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut fleet = Fleet::start_with(&redis, 2, "session_lease_ms = 2000");
    let (a, b) = (fleet.url(0), fleet.url(1));

    // Asked on a, answered through b.
    let (task, key) = confirm_delete_waiting(&a, &b, "x").await;
    let answer = json!({ key: { "action": "accept", "content": { "confirm": true } } });
    let ack = mcp_2026(
        &b,
        "tasks/update",
        json!({ "taskId": task, "inputResponses": answer }),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = task_until(&b, &task, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted x.");

    // Cancelled through b.
    let long = mcp_2026(
        &a,
        "tools/call",
        json!({ "name": "slow_compute", "arguments": { "seconds": 30 } }),
    )
    .await;
    let long = long["result"]["taskId"].as_str().unwrap().to_string();
    task_until(&b, &long, "working").await;
    mcp_2026(&b, "tasks/cancel", json!({ "taskId": long })).await;
    task_until(&a, &long, "cancelled").await;
    task_until(&b, &long, "cancelled").await;

    // Ids nobody made are unknown everywhere.
    let unknown = mcp_2026(&b, "tasks/get", json!({ "taskId": "no-such-task" })).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    // Its server dies: the task reads failed once the lease has passed.
    let orphan = mcp_2026(
        &a,
        "tools/call",
        json!({ "name": "slow_compute", "arguments": { "seconds": 30 } }),
    )
    .await;
    let orphan = orphan["result"]["taskId"].as_str().unwrap().to_string();
    task_until(&b, &orphan, "working").await;
    fleet.servers[0].child.kill().unwrap();
    fleet.servers[0].child.wait().unwrap();
    let failed = task_until(&b, &orphan, "failed").await;
    assert_eq!(
        failed["error"]["data"]["code"], "task_owner_gone",
        "{failed}"
    );
    healthy(&b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_session_lives_on_one_server_and_a_client_sent_elsewhere_starts_another() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Fleet::start(&redis, 2);
    let mut client = McpClient::new(&fleet.url(0));
    client.initialize().await;
    let call = json!({"name": "counter", "arguments": {"name": "mcp"}});
    let (status, answer) = client.request("tools/call", call.clone()).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer.to_string().contains(r#"\"value\":1"#), "{answer}");

    // The load balancer sends the client to the other server: its MCP
    // session is unknown there, and the client starts a new one.
    client.url = format!("{}/mcp", fleet.url(1));
    let (status, answer) = client.request("tools/call", call).await;
    assert_eq!(status, 404, "another server's MCP session is not found");
    assert!(
        answer.to_string().contains(r#"\"value\":2"#),
        "the new session on the other server sees the shared counter: {answer}"
    );
}

/// A writer of the fleet's Redis without the cluster key can neither show
/// a client an MCP task (a record planted whole, or a genuine one changed
/// under its seal), nor answer or cancel one (messages planted in its
/// inbox and announced): the server running it ignores them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_writer_cannot_show_answer_or_cancel_an_mcp_task() {
    use redis::Commands as _;
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Fleet::start(&redis, 2);
    let (a, b) = (fleet.url(0), fleet.url(1));
    let mut connection = attacker(&redis);
    let (task, _) = confirm_delete_waiting(&a, &b, "y").await;
    let genuine: String = connection.get(format!("toolhost:mcptask:{task}")).unwrap();

    // A record planted whole, and a genuine one changed under its seal.
    let (tag, body) = genuine.split_at(64);
    let mut changed: Value = serde_json::from_str(body).unwrap();
    changed["task"]["status"] = json!("completed");
    changed["task"]["result"] = json!({ "content": [{ "type": "text", "text": "forged" }] });
    for (id, planted) in [
        ("planted", changed.to_string()),
        ("planted-tagged", format!("{tag}{changed}")),
    ] {
        let _: () = connection
            .set(format!("toolhost:mcptask:{id}"), planted)
            .unwrap();
        let shown = mcp_2026(&b, "tasks/get", json!({ "taskId": id })).await;
        assert_eq!(shown["error"]["code"], -32602, "{id}: {shown}");
    }

    // Answers and a cancel planted in its inbox, announced: ignored.
    let inbox = format!("toolhost:mcptaskinbox:{task}");
    let answer = json!({ "kind": "update", "owner": "",
                         "responses": { "x": { "action": "accept", "content": { "confirm": true } } } });
    for planted in [
        json!({ "kind": "cancel", "owner": "" }).to_string(),
        format!("{tag}{}", json!({ "kind": "cancel", "owner": "" })),
        answer.to_string(),
    ] {
        let _: () = connection.rpush(&inbox, planted).unwrap();
    }
    let _: () = connection
        .publish("toolhost:mcptaskinboxfeed", &task)
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let still = mcp_2026(&a, "tasks/get", json!({ "taskId": task })).await;
    assert_eq!(still["result"]["status"], "input_required", "{still}");
    let through_b = mcp_2026(&b, "tasks/get", json!({ "taskId": task })).await;
    assert_eq!(
        through_b["result"]["status"], "input_required",
        "{through_b}"
    );
    for url in [&a, &b] {
        healthy(url).await;
    }
}

/// A writer of the fleet's Redis filling a running task's inbox past its
/// cap, with small messages and ones far over any a server sends: a
/// genuine answer through the other server is refused as overloaded
/// while it is full, then delivered once the running server has dropped
/// the planted ones (the large ones dropped in Redis, never read into its
/// memory); both servers stay healthy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_writer_filling_a_tasks_inbox_delays_it_but_cannot_swamp_its_server() {
    use redis::Commands as _;
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Fleet::start(&redis, 2);
    let (a, b) = (fleet.url(0), fleet.url(1));
    let mut connection = attacker(&redis);
    let (task, key) = confirm_delete_waiting(&a, &b, "z").await;
    let before = fleet.servers[0].status_kib("VmHWM");
    let inbox = format!("toolhost:mcptaskinbox:{task}");
    let huge = "x".repeat(20 << 20);
    for _ in 0..6 {
        let _: () = connection.rpush(&inbox, &huge).unwrap();
    }
    for n in 0..700 {
        let _: () = connection.rpush(&inbox, format!("junk {n}")).unwrap();
    }
    let _: () = connection
        .publish("toolhost:mcptaskinboxfeed", &task)
        .unwrap();
    let answer = json!({ key: { "action": "accept", "content": { "confirm": true } } });
    let update = || {
        mcp_2026(
            &b,
            "tasks/update",
            json!({ "taskId": task, "inputResponses": answer }),
        )
    };
    let first = update().await;
    assert_eq!(first["error"]["data"]["code"], "overloaded", "{first}");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let ack = update().await;
        if ack["result"]["resultType"] == "complete" {
            break;
        }
        assert_eq!(ack["error"]["data"]["code"], "overloaded", "{ack}");
        assert!(
            std::time::Instant::now() < deadline,
            "the inbox never drained"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let done = task_until(&b, &task, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted z.");
    let grown = fleet.servers[0].status_kib("VmHWM").saturating_sub(before);
    assert!(grown < 60 << 10, "the running server grew {grown} KiB");
    let left: usize = connection.llen(&inbox).unwrap();
    assert_eq!(left, 0);
    for url in [&a, &b] {
        healthy(url).await;
    }
}

/// A `confirm_delete` call of `filename` made a task on `a`, waiting for
/// its confirmation as `b` sees it: the task's id and the question's key.
async fn confirm_delete_waiting(a: &str, b: &str, filename: &str) -> (String, String) {
    let made = mcp_2026(
        a,
        "tools/call",
        json!({ "name": "confirm_delete", "arguments": { "filename": filename } }),
    )
    .await;
    let task = made["result"]["taskId"].as_str().unwrap().to_string();
    let waiting = task_until(b, &task, "input_required").await;
    let key = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    (task, key)
}

/// Assert the server at `url` still answers `/healthz`.
async fn healthy(url: &str) {
    let health = common::http_client()
        .get(format!("{url}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200, "{url}");
}

/// The `requestState` and the one input request's key of an
/// input-required answer.
fn asked(answer: &Value) -> (String, String) {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{answer}");
    let key = requests.keys().next().unwrap().clone();
    (result["requestState"].as_str().unwrap().to_string(), key)
}

/// `tools/call` of `tool` with `arguments` on `url`, retrying under
/// `state` with `responses`.
async fn retry(url: &str, tool: &str, arguments: &Value, state: &str, responses: Value) -> Value {
    let params = json!({ "name": tool, "arguments": arguments,
                         "requestState": state, "inputResponses": responses });
    mcp_rounds(url, "tools/call", params).await
}

/// An accepted form's answer.
fn accept(content: Value) -> Value {
    json!({ "action": "accept", "content": content })
}

/// An open `subscriptions/listen` stream of a 2026-07-28 client, read
/// message by message.
struct Listen {
    response: reqwest::Response,
    buffer: String,
}

impl Listen {
    /// Listen on `url` for what `notifications` asks for.
    async fn open(url: &str, notifications: Value) -> Self {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
            "params": { "notifications": notifications, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": { "name": "fleet-test", "version": "0" },
                "io.modelcontextprotocol/clientCapabilities": {} } } });
        let response = common::http_client()
            .post(format!("{url}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "subscriptions/listen")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next message whose method is `method`, within `limit`, or `None`.
    async fn next(&mut self, method: &str, limit: Duration) -> Option<Value> {
        tokio::time::timeout(limit, async {
            loop {
                if let Some(end) = self.buffer.find("\n\n") {
                    let frame: String = self.buffer.drain(..end + 2).collect();
                    let data: String = frame
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(str::trim_start)
                        .collect();
                    match serde_json::from_str::<Value>(&data) {
                        Ok(message) if message["method"] == method => return message,
                        _ => continue,
                    }
                }
                let chunk = self.response.chunk().await.unwrap().expect("stream open");
                self.buffer.push_str(&String::from_utf8_lossy(&chunk));
            }
        })
        .await
        .ok()
    }
}

/// A 2026-07-28 client behind a round robin needs no affinity: it lists
/// on either server, a call asked on one is answered round by round on
/// the other (never run again, each state good once fleet-wide), and a
/// listen stream held on one server hears of a resource a call changed on
/// the other and of an agent changed there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_alternating_between_two_servers_needs_no_affinity() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Fleet::start(&redis, 2);
    let (a, b) = (fleet.url(0), fleet.url(1));
    let mut listen = Listen::open(
        &b,
        json!({ "toolsListChanged": true, "resourceSubscriptions": ["counter://hits"] }),
    )
    .await;
    let acknowledged = listen
        .next(
            "notifications/subscriptions/acknowledged",
            Duration::from_secs(10),
        )
        .await;
    assert!(acknowledged.is_some(), "the listen stream is acknowledged");

    for url in [&a, &b] {
        let listed = mcp_2026(url, "tools/list", json!({})).await;
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert!(names.contains(&"test_elicitation"), "{listed}");
    }

    // Asked on a (the approval), answered on b, asked again there (the
    // tool's question), answered on a.
    let tool = "test_elicitation";
    let arguments = json!({ "message": "Who are you?" });
    let first = mcp_rounds(
        &a,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    )
    .await;
    let (approval, key) = asked(&first);
    let approved = json!({ key: accept(json!({ "approve": true })) });
    let second = retry(&b, tool, &arguments, &approval, approved.clone()).await;
    let (question, key) = asked(&second);
    let answer = json!({ key: accept(json!({ "username": "ann", "email": "ann@example.org" })) });
    let done = retry(&a, tool, &arguments, &question, answer.clone()).await;
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\"username\":\"ann\""), "{done}");

    // Each state is good once, whichever server it is shown to; a state
    // with other arguments, or changed, is refused where it lands.
    for (url, state, responses) in [(&a, &approval, &approved), (&b, &question, &answer)] {
        let again = retry(url, tool, &arguments, state, responses.clone()).await;
        assert_eq!(again["error"]["code"], -32602, "{again}");
    }
    let third = mcp_rounds(
        &b,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    )
    .await;
    let (state, key) = asked(&third);
    let approved = json!({ key: accept(json!({ "approve": true })) });
    let other = json!({ "message": "Someone else?" });
    let moved = retry(&a, tool, &other, &state, approved.clone()).await;
    assert_eq!(
        moved["error"]["data"]["code"], "invalid_request_state",
        "{moved}"
    );
    let mut changed = state.clone().into_bytes();
    let last = changed.len() - 1;
    changed[last] = if changed[last] == b'A' { b'B' } else { b'A' };
    let changed = String::from_utf8(changed).unwrap();
    let forged = retry(&a, tool, &arguments, &changed, approved.clone()).await;
    assert_eq!(
        forged["error"]["data"]["code"], "invalid_request_state",
        "{forged}"
    );
    let still = retry(&a, tool, &arguments, &state, approved).await;
    asked(&still);

    // A resource changed on a, an agent changed on a: heard on b.
    let counted = mcp_2026(
        &a,
        "tools/call",
        json!({ "name": "counter", "arguments": { "name": "hits" } }),
    )
    .await;
    assert!(counted["result"].is_object(), "{counted}");
    let updated = listen
        .next("notifications/resources/updated", Duration::from_secs(10))
        .await
        .expect("b's stream hears of the resource a's call changed");
    assert_eq!(updated["params"]["uri"], "counter://hits", "{updated}");
    let made = post(
        &a,
        "/agents",
        json!({"name": "repo", "components": ["echo"]}),
    )
    .await;
    assert_eq!(made.0, 201, "{}", made.1);
    // Whether B hears of the agent's first version before it changes or
    // first at its second, its listen stream is told.
    let (status, changed) = fleet
        .patch_agent(0, "repo", json!({"components": ["echo", "counter"]}))
        .await;
    assert_eq!(status, 200, "{changed}");
    let told = listen
        .next("notifications/tools/list_changed", Duration::from_secs(10))
        .await;
    assert!(told.is_some(), "b's stream hears of the agent a changed");
    for url in [&a, &b] {
        healthy(url).await;
    }
}

/// A retry for a call whose server died is refused on the server it
/// lands on within the lease, naming why; the call is not run again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_for_a_call_whose_server_died_is_refused_elsewhere() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut fleet = Fleet::start_with(&redis, 2, "session_lease_ms = 2000");
    let (a, b) = (fleet.url(0), fleet.url(1));
    let arguments = json!({ "message": "Who?" });
    let first = mcp_rounds(
        &a,
        "tools/call",
        json!({ "name": "test_elicitation", "arguments": arguments }),
    )
    .await;
    let (state, key) = asked(&first);
    fleet.servers[0].child.kill().unwrap();
    fleet.servers[0].child.wait().unwrap();
    let started = std::time::Instant::now();
    let refused = retry(
        &b,
        "test_elicitation",
        &arguments,
        &state,
        json!({ key: accept(json!({ "approve": true })) }),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("stopped"), "{refused}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    healthy(&b).await;
}

/// A writer of the fleet's Redis without the cluster key answers no
/// waiting call: retries planted in its inbox (bare, or under a made-up
/// seal) are dropped, and resource updates published bare (or too long)
/// are not heard; the client's own retry, relayed, still goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_writer_cannot_answer_a_waiting_mcp_call_or_announce_a_change() {
    use redis::Commands as _;
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Fleet::start(&redis, 2);
    let (a, b) = (fleet.url(0), fleet.url(1));
    let mut connection = attacker(&redis);
    let mut listen = Listen::open(&b, json!({ "resourceSubscriptions": ["counter://x"] })).await;
    listen
        .next(
            "notifications/subscriptions/acknowledged",
            Duration::from_secs(10),
        )
        .await
        .unwrap();

    let tool = "test_elicitation";
    let arguments = json!({ "message": "Who?" });
    let first = mcp_rounds(
        &a,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    )
    .await;
    let (state, key) = asked(&first);
    let owners: Vec<String> = connection.keys("toolhost:mcproundowner:*").unwrap();
    assert_eq!(owners.len(), 1, "{owners:?}");
    let call = owners[0].rsplit(':').next().unwrap().to_string();
    let inbox = format!("toolhost:mcproundinbox:{call}");
    let planted = json!({ "kind": "retry", "reply": "r", "state": state, "binding": "",
        "responses": { key.clone(): accept(json!({ "approve": true })) } });
    let tag = "0".repeat(64);
    for planted in [planted.to_string(), format!("{tag}{planted}")] {
        let _: () = connection.rpush(&inbox, planted).unwrap();
    }
    let _: () = connection
        .publish("toolhost:mcproundinboxfeed", &call)
        .unwrap();
    let _: () = connection
        .publish(
            "toolhost:resourcefeed",
            json!({ "server": "x", "uri": "counter://x" }).to_string(),
        )
        .unwrap();
    let _: () = connection
        .publish("toolhost:resourcefeed", "x".repeat(1 << 20))
        .unwrap();
    assert_eq!(
        listen
            .next(
                "notifications/resources/updated",
                Duration::from_millis(1500)
            )
            .await,
        None
    );

    // The state is untouched: the client's retry, through b, is the one
    // that counts.
    let answered = retry(
        &b,
        tool,
        &arguments,
        &state,
        json!({ key: accept(json!({ "approve": true })) }),
    )
    .await;
    asked(&answered);
    for url in [&a, &b] {
        healthy(url).await;
    }
}
