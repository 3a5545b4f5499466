//! Named agents over the HTTP API: declared in `toolhost.toml` or made with
//! `POST /agents`, validated as the registry page says, echoed with the
//! registry's defaults, versioned on change, and served to the sessions
//! bound to them; kept across a restart.

use crate::common;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::stdio_mcp::StdioMcp;
use crate::serve::{Server, code, start, start_in};

const WEATHER: &str = r#"
[agents.weather]
components = ["echo"]
tools = [
  { type = "agent_toolset", default_config = { enabled = false }, configs = [{ name = "read", enabled = true }] },
  { type = "custom", name = "get_weather", description = "Current weather for a city; no forecasts.", input_schema = { type = "object", properties = { location = { type = "string" } }, required = ["location"] } },
]
"#;

fn names(agent: &Value) -> Vec<&str> {
    agent["toolNames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect()
}

async fn patch(server: &Server, path: &str, body: Value) -> (StatusCode, Value) {
    let request = server.client.patch(server.url(path)).json(&body);
    let response = server.auth(request).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_declared_in_the_config_serves_only_its_tools() {
    let server = start(&["echo", "trap"], WEATHER).await;
    let (status, list) = server.get("/agents").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let listed: Vec<&str> = list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["default", "weather"]);

    let (status, agent) = server.get("/agents/weather").await;
    assert_eq!(status, StatusCode::OK, "{agent}");
    assert_eq!(agent["source"], json!("config"));
    assert_eq!(agent["version"], json!(1));
    assert_eq!(names(&agent), ["echo", "get_weather", "read"]);
    assert_eq!(agent["components"], json!(["echo"]));
    assert_eq!(agent["tools"][0]["type"], json!("agent_toolset_20260401"));
    assert_eq!(
        agent["tools"][0]["default_config"],
        json!({ "enabled": false, "permission_policy": { "type": "always_allow" } })
    );
    assert_eq!(agent["tools"][1]["type"], json!("custom"));
    assert_eq!(agent["tools"][1]["name"], json!("get_weather"));

    // A session of the agent calls its tools and none of the others.
    let session = server.session(json!({ "agent": "weather" })).await;
    assert_eq!(session["agent"], json!({ "name": "weather", "version": 1 }));
    let id = session["id"].as_str().unwrap();
    let (status, body) = server
        .call(
            "echo",
            json!({ "input": { "text": "hi" }, "sessionId": id }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["agent"], json!({ "name": "weather", "version": 1 }));
    let (status, body) = server
        .call("trap", json!({ "input": {}, "sessionId": id }))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = server
        .call(
            "get_weather",
            json!({ "input": { "location": "Oslo" }, "sessionId": id }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["status"], json!("awaiting_custom_tool_result"));

    // Calls outside a session, and listings, name the agent (and version).
    let (status, listing) = server.get("/tools?agent=weather&version=1").await;
    assert_eq!(status, StatusCode::OK, "{listing}");
    assert_eq!(listing["agent"], json!({ "name": "weather", "version": 1 }));
    assert_eq!(listing["tools"].as_array().unwrap().len(), 3, "{listing}");
    let (status, body) = server
        .call(
            "echo",
            json!({ "input": { "text": "x" }, "agent": "weather" }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["agent"], json!({ "name": "weather", "version": 1 }));
    let (status, body) = server
        .call("trap", json!({ "input": {}, "agent": "weather" }))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = server
        .call(
            "echo",
            json!({ "input": {}, "agent": "weather", "version": 7 }),
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "agent_version_not_found"),
        "{body}"
    );
    let other = server.session(json!({})).await;
    let (status, body) = server
        .call(
            "echo",
            json!({ "input": {}, "agent": "weather", "sessionId": other["id"] }),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("upgrade it")
    );

    // The default agent is untouched: the whole folder, no custom tool.
    let (_, default) = server.get("/agents/default").await;
    assert_eq!(names(&default), ["echo", "trap"]);

    // An agent the file declares is edited in the file.
    let (status, body) = patch(&server, "/agents/weather", json!({ "tools": [] })).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::CONFLICT, "agent_not_editable"),
        "{body}"
    );
}

/// `POST /agents` with `tools` and the error code and message fragment it
/// must answer with.
async fn refused(server: &Server, body: Value, fragment: &str) {
    let (status, answer) = server.post("/agents", body.clone()).await;
    assert_eq!(
        (status, code(&answer)),
        (StatusCode::BAD_REQUEST, "invalid_agent"),
        "{body} -> {answer}"
    );
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains(fragment), "{body} -> {message}");
}

fn custom(name: &str) -> Value {
    json!({
        "type": "custom",
        "name": name,
        "description": "A tool the client runs.",
        "input_schema": { "type": "object" },
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_made_over_the_api_follow_the_registry_rules() {
    let server = start(&["echo"], "").await;
    let agent = |tools: Value| json!({ "name": "repo", "tools": tools });

    refused(
        &server,
        agent(json!([{ "type": "computer_20250124" }])),
        "tools[0]: `type` = \"computer_20250124\" is not a tool type",
    )
    .await;
    refused(
        &server,
        agent(json!([{ "type": "agent_toolset", "configs": [{ "name": "list" }] }])),
        "not accepted in the array form",
    )
    .await;
    let many: Vec<Value> = (0..129).map(|n| custom(&format!("tool_{n}"))).collect();
    refused(&server, agent(json!(many)), "at most 128").await;
    refused(&server, agent(json!([custom("bash")])), "reserved").await;
    refused(
        &server,
        agent(json!([{
            "type": "custom", "name": "wide", "description": "x".repeat(4097),
            "input_schema": { "type": "object" },
        }])),
        "4097",
    )
    .await;
    refused(
        &server,
        agent(json!([{
            "type": "custom", "name": "listy", "description": "A list.",
            "input_schema": { "type": "array" },
        }])),
        "\"type\": \"array\"",
    )
    .await;
    refused(
        &server,
        agent(json!([{ "type": "mcp_toolset", "mcp_server_name": "tickets" }])),
        "which no [[mcp_servers]] entry declares",
    )
    .await;
    refused(
        &server,
        json!({
            "name": "repo",
            "tools": [],
            "mcp_servers": [{ "name": "tickets", "type": "url", "url": "https://mcp.example.com/t" }],
        }),
        "no [[toolset]] of type \"mcp_toolset\" mounts it",
    )
    .await;
    refused(
        &server,
        json!({
            "name": "repo",
            "tools": [{ "type": "mcp_toolset", "mcp_server_name": "local" }],
            "mcp_servers": [{ "name": "local", "type": "stdio", "command": "sh" }],
        }),
        "only by `type = \"url\"`",
    )
    .await;
    refused(
        &server,
        json!({ "name": "repo", "tools": [], "components": ["nothere"] }),
        "no `nothere.wasm`",
    )
    .await;
    refused(
        &server,
        agent(json!([{ "type": "agent_toolset", "http": ["https://example.com"] }])),
        "not over the API",
    )
    .await;
    // A JSON Schema may hold nulls.
    let (status, body) = server
        .post(
            "/agents",
            json!({ "name": "nullable", "tools": [{
                "type": "custom", "name": "maybe", "description": "Takes an optional note.",
                "input_schema": { "type": "object", "properties": { "note": { "default": null } } },
            }]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = server
        .post("/agents", json!({ "name": "Bad Name", "tools": [] }))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("slug"));

    // The table form keeps unknown keys (ignored at run time) and may name
    // `list`; the echo fills in the registry's defaults.
    let (status, made) = server
        .post(
            "/agents",
            agent(json!([
                { "type": "agent_toolset", "configs": { "list": { "enabled": true }, "frobnicate": { "x": 1 } } },
                custom("get_weather"),
            ])),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    assert_eq!(made["version"], json!(1));
    assert_eq!(made["source"], json!("api"));
    assert_eq!(made["tools"][0]["type"], json!("agent_toolset_20260401"));
    assert_eq!(
        made["tools"][0]["default_config"],
        json!({ "enabled": true, "permission_policy": { "type": "always_allow" } })
    );
    assert_eq!(made["tools"][0]["configs"]["frobnicate"], json!({ "x": 1 }));
    assert_eq!(made["tools"][1], custom("get_weather"));
    assert!(names(&made).contains(&"list"), "{made}");
    assert!(!names(&made).contains(&"echo"), "no components asked for");

    let (status, body) = server
        .post("/agents", json!({ "name": "repo", "tools": [] }))
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::CONFLICT, "agent_exists")
    );
    let (status, body) = patch(&server, "/agents/default", json!({ "tools": [] })).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::CONFLICT, "agent_not_editable")
    );

    // A change makes version 2; a session made at 1 keeps its tools.
    let old = server.session(json!({ "agent": "repo" })).await;
    let (status, changed) = patch(
        &server,
        "/agents/repo",
        json!({ "tools": [custom("get_time")], "components": ["echo"] }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["version"], json!(2));
    assert_eq!(changed["changes"]["from"], json!(1));
    assert!(
        changed["changes"]["removed"]
            .as_array()
            .unwrap()
            .contains(&json!("get_weather")),
        "{changed}"
    );
    assert_eq!(names(&changed), ["echo", "get_time"]);
    let (status, body) = server
        .call(
            "get_weather",
            json!({ "input": {}, "sessionId": old["id"] }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "version 1 keeps it: {body}");
    let new = server.session(json!({ "agent": "repo" })).await;
    let (status, body) = server
        .call(
            "get_weather",
            json!({ "input": {}, "sessionId": new["id"] }),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // The agent outlives the process, at the same version.
    let restarted = common::load(server.dir.path()).await;
    let repo = restarted.agent("repo").unwrap();
    assert_eq!(repo.pin().version, 2);
    assert!(repo.registry().get("get_time").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_tool_answers_take_either_block_format() {
    let server = start(&[], WEATHER.replace("[\"echo\"]", "[]").as_str()).await;
    let session = server.session(json!({ "agent": "weather" })).await;
    let id = session["id"].as_str().unwrap();
    let png = "iVBORw0KGgo=";
    let answer = |content: Value| {
        json!({ "events": [{
            "type": "user.custom_tool_result",
            "custom_tool_use_id": Value::Null,
            "content": content,
        }]})
    };
    let ask = || async {
        let (status, pending) = server
            .call(
                "get_weather",
                json!({ "input": { "location": "Oslo" }, "sessionId": id }),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{pending}");
        pending["callId"].clone()
    };

    // The Messages API's blocks, as the registry page's clients send them.
    let call_id = ask().await;
    let mut body = answer(json!([
        { "type": "text", "text": "4°C, cloudy" },
        { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": png } },
        { "type": "search_result", "source": "https://met.example/oslo", "title": "Oslo",
          "content": [{ "type": "text", "text": "Cloudy all day." }] },
        { "type": "document", "title": "raw", "source": { "type": "text", "media_type": "text/plain", "data": "4C" } },
    ]));
    body["events"][0]["custom_tool_use_id"] = call_id.clone();
    let (status, ok) = server.post(&format!("/sessions/{id}/events"), body).await;
    assert_eq!(status, StatusCode::OK, "{ok}");
    let (_, messages) = server
        .get(&format!("/calls/{}?wait=10", call_id.as_str().unwrap()))
        .await;
    assert_eq!(messages["isError"], json!(false), "{messages}");

    // toolhost's own blocks for the same answer give the same result.
    let call_id = ask().await;
    let mut body = answer(json!([
        { "type": "text", "text": "4°C, cloudy" },
        { "type": "image", "mediaType": "image/png", "data": png },
        { "type": "search_result", "source": "https://met.example/oslo", "title": "Oslo", "text": "Cloudy all day." },
        { "type": "document", "mediaType": "text/plain", "data": "NEM=", "name": "raw" },
    ]));
    body["events"][0]["custom_tool_use_id"] = call_id.clone();
    let (status, ok) = server.post(&format!("/sessions/{id}/events"), body).await;
    assert_eq!(status, StatusCode::OK, "{ok}");
    let (_, own) = server
        .get(&format!("/calls/{}?wait=10", call_id.as_str().unwrap()))
        .await;
    assert_eq!(own["result"], messages["result"]);
    let text = own["result"].to_string();
    assert!(
        text.contains("image/png") && text.contains("Cloudy all day."),
        "{own}"
    );

    // A block toolhost cannot read is refused, naming it; the call still waits.
    let call_id = ask().await;
    let mut body = answer(json!([
        { "type": "image", "source": { "type": "file", "file_id": "file_01" } },
    ]));
    body["events"][0]["custom_tool_use_id"] = call_id;
    let (status, refused) = server.post(&format!("/sessions/{id}/events"), body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("events[0]: content[0]") && message.contains("file_id"),
        "{message}"
    );
}

const AGENT_TOOL: &str = r##"
[agent_tools.echo_here]
description = "Echo a message from the agent workspace."
input_schema = { type = "object", properties = { message = { type = "string" } }, required = ["message"] }
script = """#!/bin/sh
cat
"""
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_execution_tools_are_listed_refused_and_written_into_the_workspace() {
    let server = start(&["echo"], AGENT_TOOL).await;
    let (_, listing) = server.get("/tools").await;
    let tool = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo_here")
        .unwrap()
        .clone();
    assert_eq!(tool["execution"], json!("agent"), "{tool}");
    assert_eq!(tool["origin"], json!("agent"));

    let (status, body) = server
        .call("echo_here", json!({ "input": { "message": "hi" } }))
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::BAD_REQUEST, "tool_not_callable"),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains(".toolhost/agent-tools/echo_here"),
        "{body}"
    );

    // A new session finds the script in its workspace, and it runs there.
    let session = server.session(json!({})).await;
    let id = session["id"].as_str().unwrap();
    let (status, written) = server.get(&format!("/sessions/{id}/agent-tools")).await;
    assert_eq!(status, StatusCode::OK, "{written}");
    let entry = &written["agentTools"][0];
    assert_eq!(entry["name"], json!("echo_here"));
    assert_eq!(entry["path"], json!(".toolhost/agent-tools/echo_here"));
    assert_eq!(entry["sha256"].as_str().unwrap().len(), 64);
    let workspace = server
        .dir
        .path()
        .join(".toolhost/sessions")
        .join(id)
        .join("workspace");
    let script = workspace.join(".toolhost/agent-tools/echo_here");
    let mut child = std::process::Command::new(&script)
        .current_dir(&workspace)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"message":"hi"}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), r#"{"message":"hi"}"#);
    let spec: Value = serde_json::from_slice(
        &std::fs::read(workspace.join(".toolhost/agent-tools/echo_here.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(spec["input_schema"]["required"], json!(["message"]));

    // A script someone changed in the workspace is written back as declared.
    std::fs::write(&script, "#!/bin/sh\necho tampered\n").unwrap();
    server.get(&format!("/sessions/{id}/agent-tools")).await;
    assert_eq!(
        std::fs::read_to_string(&script).unwrap(),
        "#!/bin/sh\ncat\n"
    );

    // A symlink in the way is not followed: nothing outside is touched.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("keep"), "mine").unwrap();
    std::fs::remove_dir_all(workspace.join(".toolhost")).unwrap();
    std::os::unix::fs::symlink(outside.path(), workspace.join(".toolhost")).unwrap();
    let (status, body) = server.get(&format!("/sessions/{id}/agent-tools")).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert_eq!(code(&body), "workspace_unavailable");
    let left: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["keep"]);
}

#[test]
fn toolhost_mcp_serves_the_agent_it_is_given() {
    let config = format!(
        "{WEATHER}\n[agents.weather.agent_tools.echo_here]\ndescription = \"Echo here.\"\ninput_schema = {{ type = \"object\" }}\nscript = \"#!/bin/sh\\ncat\\n\"\n"
    );
    let dir = common::host_dir(&["echo", "trap"], &config);
    let mut mcp = StdioMcp::start(&["--agent", "weather"], dir.path());
    let mut ask = |message: Value| mcp.exchange(message);

    // Its tools, less what an MCP client cannot run (custom, agent-execution).
    let listed = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "read"], "{listed}");
    let echo = ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}}}));
    assert_eq!(echo["result"]["content"][0]["text"], "hi", "{echo}");
    let trap = ask(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "trap", "arguments": {}}}));
    assert_eq!(trap["error"]["data"]["code"], "unknown_tool", "{trap}");
    let script = ask(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "echo_here", "arguments": {}}}));
    assert_eq!(
        script["error"]["data"]["code"], "tool_not_callable",
        "{script}"
    );
    // `_meta` names another agent for one call.
    let default = ask(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "trap", "arguments": {}, "_meta": {"toolhost/agent": "default"}}}));
    assert!(default.get("result").is_some(), "{default}");
    assert!(mcp.close().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_keeps_its_version_across_a_restart() {
    let mut server = start(&["echo"], "").await;
    let old = server.session(json!({})).await;
    let old_id = old["id"].as_str().unwrap().to_string();
    // The component changes while the server is down.
    let dir = std::mem::replace(&mut server.dir, tempfile::tempdir().unwrap());
    drop(server);
    std::fs::copy(
        common::artifact("context"),
        dir.path().join("tools/echo.wasm"),
    )
    .unwrap();

    let server = start_in(dir).await;
    let new = server.session(json!({})).await;
    assert_eq!(new["agent"]["version"], json!(2));
    // Version 1 is loaded again from its kept files for the old session.
    let mut body = Value::Null;
    for _ in 0..100 {
        let (status, answer) = server
            .call(
                "echo",
                json!({ "input": { "text": "still" }, "sessionId": old_id }),
            )
            .await;
        body = answer;
        if status != StatusCode::CONFLICT {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(body["result"], json!("still"), "{body}");
    assert_eq!(body["agent"]["version"], json!(1));
    let (_, versions) = server.get("/agents/default/versions").await;
    assert_eq!(versions["versions"][0]["loaded"], json!(true), "{versions}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_agents_old_version_is_loaded_again_after_a_restart() {
    let mut server = start(&["echo"], "").await;
    let (status, made) = server
        .post(
            "/agents",
            json!({ "name": "repo", "components": ["echo"], "tools": [custom("get_weather")] }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let old = server.session(json!({ "agent": "repo" })).await;
    let old_id = old["id"].as_str().unwrap().to_string();
    let (status, changed) = patch(&server, "/agents/repo", json!({ "tools": [] })).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["version"], json!(2));
    let dir = std::mem::replace(&mut server.dir, tempfile::tempdir().unwrap());
    drop(server);

    let server = start_in(dir).await;
    let mut answer = (StatusCode::CONFLICT, Value::Null);
    for _ in 0..100 {
        answer = server
            .call("get_weather", json!({ "input": {}, "sessionId": old_id }))
            .await;
        if answer.0 != StatusCode::CONFLICT {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(answer.0, StatusCode::ACCEPTED, "{}", answer.1);
    let new = server.session(json!({ "agent": "repo" })).await;
    assert_eq!(new["agent"]["version"], json!(2));
    let (status, body) = server
        .call(
            "get_weather",
            json!({ "input": {}, "sessionId": new["id"] }),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

/// Attack 3 of issue 45: an agent made over the API named an MCP server
/// at `http://127.0.0.1:<port>/x`; the server POSTed there as it made the
/// agent and quoted the response body in its `400 invalid_agent`. Now such
/// an agent names only origins `[server] agent_mcp_servers` lists; a name
/// on the list is screened after it resolves (a loopback answer is
/// refused, so DNS rebinding and names like `127.0.0.1.nip.io` reach
/// nothing), a literal address only when the list names it, and what the
/// server answers is never quoted; static header values are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_agent_reaches_only_what_the_operator_allows_and_reads_nothing_back() {
    let upstream = crate::common::server::Server::start(|_| {
        crate::common::server::reply("500 Internal Server Error", "", b"INTERNAL-SECRET-DATA")
    })
    .await;
    let port = upstream.addr.port();
    let agent = |name: &str, url: String, extra: Value| {
        let mut server = json!({ "name": "x", "type": "url", "url": url });
        if let (Some(server), Value::Object(extra)) = (server.as_object_mut(), extra) {
            server.extend(extra);
        }
        json!({
            "name": name,
            "tools": [{ "type": "mcp_toolset", "mcp_server_name": "x" }],
            "mcp_servers": [server],
        })
    };
    let cases = [
        (
            "",
            "a1",
            format!("http://127.0.0.1:{port}/x"),
            json!({}),
            "`[server] agent_mcp_servers`",
        ),
        (
            "[server]\nagent_mcp_servers = [\"https://mcp.example.com\"]\n",
            "a2",
            format!("http://127.0.0.1:{port}/x"),
            json!({}),
            "it lists https://mcp.example.com:443",
        ),
        (
            &*format!("[server]\nagent_mcp_servers = [\"http://localhost:{port}\"]\n"),
            "a3",
            format!("http://localhost:{port}/x"),
            json!({}),
            "not globally routable",
        ),
        (
            &*format!("[server]\nagent_mcp_servers = [\"http://127.0.0.1:{port}\"]\n"),
            "a4",
            format!("http://127.0.0.1:{port}/x"),
            json!({ "headers": { "X-Key": "v" } }),
            "`headers` would keep their values",
        ),
    ];
    for (config, name, url, extra, why) in cases {
        let server = start(&["echo"], config).await;
        let (status, answer) = server.post("/agents", agent(name, url, extra)).await;
        assert_eq!(
            (status, code(&answer)),
            (StatusCode::BAD_REQUEST, "invalid_agent"),
            "{name}: {answer}"
        );
        assert!(answer.to_string().contains(why), "{name}: {answer}");
    }
    assert!(
        upstream.heads().is_empty(),
        "nothing was dialed: {:?}",
        upstream.heads()
    );

    // Named literally, it is reached; what it answers is not quoted.
    let config = format!("[server]\nagent_mcp_servers = [\"http://127.0.0.1:{port}\"]\n");
    let server = start(&["echo"], &config).await;
    let (status, answer) = server
        .post(
            "/agents",
            agent("a5", format!("http://127.0.0.1:{port}/x"), json!({})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        !upstream.heads().is_empty(),
        "the listed origin was reached"
    );
    assert!(
        !answer.to_string().contains("INTERNAL-SECRET-DATA"),
        "the upstream's answer is quoted: {answer}"
    );
}
