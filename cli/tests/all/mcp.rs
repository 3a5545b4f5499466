//! The MCP server driven by the official Python `mcp` client, over stdio
//! (`toolhost mcp`) and streamable HTTP (`serve`'s `/mcp`): see
//! tests/mcp/client.py for the scenarios.
//!
//! The client lives in `$CARGO_TARGET_DIR/py` (scripts/test installs it), or
//! wherever `TOOLHOST_TEST_PYTHON` points. Without it the tests skip, except
//! under `CI=true`, where a missing toolchain is a failure.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::stdio_mcp::StdioMcp;
use common::{host, host_dir, python};
use serde_json::{Value, json};
use toolhost::session::{NewSession, SessionStore};
use toolhost_serve::http::{self, App, ServeOptions};

const TOOLS: &[&str] = &[
    "echo",
    "counter",
    "notes",
    "fetch_url",
    "trap",
    "chatty",
    "context",
    "spin",
    "kv_probe",
    "word_count",
    "test_elicitation",
    "test_sampling",
    "journal",
];

const CONFIG: &str = r#"
[tools.counter]
kv = ["default"]
[tools.notes]
workspace = "write"
[tools.fetch_url]
http = ["https://example.com"]
[tools.context]
permission = "always_ask"
[tools.spin]
timeout_ms = 2500
[tools.kv_probe]
kv = ["default"]
workspace = "write"
timeout_ms = 20000
[tools.test_elicitation]
ask = ["user"]
[tools.test_sampling]
ask = ["model"]
[tools.journal]
state = "write"
artifacts = "write"
metrics = true
sessions = ["journal"]

[custom_tools.get_weather]
description = "Get the current weather for a city. Returns Celsius and a one-word summary; no forecasts."
input_schema = { type = "object", properties = { location = { type = "string" } } }
"#;

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp/client.py")
}

fn run_client(python: &Path, args: &[&str]) {
    let out = Command::new(python)
        .arg(client_script())
        .args(args)
        .output()
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all ok"),
        "the MCP client failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
}

#[test]
fn stdio_with_the_python_client() {
    let Some(python) = python() else { return };
    let dir = host_dir(TOOLS, CONFIG);
    let store = SessionStore::open(
        dir.path().join(".toolhost/sessions"),
        Duration::from_secs(3600),
    )
    .expect("session store");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let session = runtime
        .block_on(store.create(NewSession::default()))
        .expect("session");
    let binary = env!("CARGO_BIN_EXE_toolhost");
    let dir_arg = dir.path().to_str().expect("utf-8 path");
    run_client(&python, &["stdio", binary, dir_arg, session.id()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_with_the_python_client() {
    let Some(python) = python() else { return };
    let (_dir, host) = host(TOOLS, CONFIG).await;
    let mut options = ServeOptions::from_config(&host).unwrap();
    options.listen = "127.0.0.1:0".parse().unwrap();
    options.token = Some("mcp-test-token-0123".into());
    let listener = http::bind(&options).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = App::new(Arc::new(host), options).unwrap();
    let session = app.sessions.create(NewSession::default()).await.unwrap();
    let server = tokio::spawn(http::run(listener, app, std::future::pending()));

    let client = common::http_client();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}
    });
    let post = |origin: Option<&str>, token: Option<&str>| {
        let mut request = client
            .post(format!("{base}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    let unauthorized = post(None, None).await.unwrap();
    assert_eq!(unauthorized.status(), 401, "the API's token guards /mcp");
    let foreign = post(Some("http://evil.example"), Some("mcp-test-token-0123"))
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403, "a foreign Origin is refused");
    let local = post(Some("http://localhost:5173"), Some("mcp-test-token-0123"))
        .await
        .unwrap();
    assert_eq!(local.status(), 200);

    let url = format!("{base}/mcp");
    let id = session.id().to_string();
    tokio::task::spawn_blocking(move || {
        run_client(&python, &["http", &url, "mcp-test-token-0123", &id]);
    })
    .await
    .unwrap();
    // Calls over /mcp are counted in the server's metrics, as HTTP API calls are.
    let metrics = client
        .get(format!("{base}/metrics"))
        .bearer_auth("mcp-test-token-0123")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains(r#"toolhost_calls_total{tool="echo",outcome="ok"}"#),
        "{metrics}"
    );
    server.abort();
    // The approval the client's user gave by elicitation is in the session's
    // events, as an approval over the HTTP API is.
    let events: Vec<Value> = session
        .events()
        .kept(None)
        .iter()
        .map(|e| e.to_json())
        .collect();
    let of = |kind: &str| events.iter().find(|e| e["type"] == kind).cloned();
    let requested = of("approval.requested").expect("approval.requested recorded");
    assert_eq!(requested["data"]["toolName"], "context");
    let resolved = of("approval.resolved").expect("approval.resolved recorded");
    assert_eq!(resolved["data"]["decision"], "approved");
    assert_eq!(resolved["data"]["callId"], requested["data"]["callId"]);
}

/// Protocol hygiene without any client library: only JSON-RPC on stdout
/// (even from a tool that prints), a request before `initialize` refused,
/// `list_changed` after reloads that add a tool (on SIGHUP, and by watching
/// the folder) or disable one (by watching `toolhost.toml`), and a clean
/// exit when stdin closes.
#[test]
fn stdio_stays_clean_reports_reloads_and_exits_when_stdin_closes() {
    use std::io::{BufRead as _, BufReader, Write as _};
    let dir = host_dir(&["echo", "chatty"], "");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["mcp", "--dir"])
        .arg(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run toolhost mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut send = |message: serde_json::Value| {
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    };
    let mut reply = || -> serde_json::Value {
        let line = lines.next().expect("a line").expect("utf-8");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line:?}"))
    };

    send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let early = reply();
    assert_eq!(early["id"], 1);
    assert!(
        early["error"].is_object(),
        "a request before initialize is refused: {early}"
    );
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}),
    );
    assert_eq!(reply()["result"]["serverInfo"]["name"], "toolhost");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "chatty", "arguments": {"bytes": 200000}}}));
    let chatty = reply();
    assert_eq!(chatty["id"], 3);
    assert_eq!(chatty["result"]["isError"], false, "{chatty}");
    send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "after"}}}));
    assert_eq!(reply()["result"]["content"][0]["text"], "after");

    // A tool's log lines come as notifications/message before its result:
    // at info and above until the client sets a level, then at that level.
    fn logged_call(
        send: &mut impl FnMut(serde_json::Value),
        reply: &mut impl FnMut() -> serde_json::Value,
        id: u64,
    ) -> Vec<(String, String, String)> {
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "chatty", "arguments": {"bytes": 0, "log": true}}}));
        let mut logged = Vec::new();
        loop {
            let message = reply();
            if message["id"] == id {
                assert_eq!(message["result"]["isError"], false, "{message}");
                return logged;
            }
            assert_eq!(message["method"], "notifications/message", "{message}");
            let params = &message["params"];
            let field = |key: &str| params[key].as_str().unwrap_or_default().to_string();
            logged.push((field("level"), field("logger"), field("data")));
        }
    }
    let by_level = |lines: &[(String, String, String)]| -> Vec<String> {
        assert!(lines.iter().all(|(_, logger, _)| logger == "chatty"));
        lines.iter().map(|(level, _, _)| level.clone()).collect()
    };
    assert_eq!(
        by_level(&logged_call(&mut send, &mut reply, 40)),
        ["info", "warning", "error"]
    );
    send(
        json!({"jsonrpc": "2.0", "id": 41, "method": "logging/setLevel",
                "params": {"level": "debug"}}),
    );
    assert_eq!(reply()["id"], 41);
    let debug = logged_call(&mut send, &mut reply, 42);
    assert_eq!(by_level(&debug), ["debug", "info", "warning", "error"]);
    assert_eq!(debug[2].2, "warn line");
    send(
        json!({"jsonrpc": "2.0", "id": 43, "method": "logging/setLevel",
                "params": {"level": "error"}}),
    );
    assert_eq!(reply()["id"], 43);
    assert_eq!(by_level(&logged_call(&mut send, &mut reply, 44)), ["error"]);

    // A tool's progress reports reach a client that sent a progress token,
    // before the result; one that goes back is dropped, and the trace says so.
    send(json!({"jsonrpc": "2.0", "id": 45, "method": "tools/call",
                "params": {"name": "chatty", "arguments": {"bytes": 0, "progress": 3},
                           "_meta": {"progressToken": "p45"}}}));
    let mut reports = Vec::new();
    let result = loop {
        let message = reply();
        if message["id"] == 45 {
            break message;
        }
        assert_eq!(message["method"], "notifications/progress", "{message}");
        let params = &message["params"];
        assert_eq!(params["progressToken"], "p45", "{message}");
        assert_eq!(params["total"], 3.0, "{message}");
        reports.push((
            params["progress"].as_f64().unwrap_or_default(),
            params["message"].as_str().unwrap_or_default().to_string(),
        ));
    };
    assert_eq!(
        reports,
        [
            (1.0, "step 1".to_string()),
            (2.0, "step 2".to_string()),
            (3.0, "step 3".to_string())
        ]
    );
    assert_eq!(result["result"]["isError"], false, "{result}");

    // A reload (SIGHUP) that adds a tool tells the client; `counter` also
    // offers a prompt and a resource template, so those changed too.
    std::fs::copy(
        common::artifact("counter"),
        dir.path().join("tools/counter.wasm"),
    )
    .expect("add a tool");
    let hangup = Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .expect("kill -HUP");
    assert!(hangup.success());
    for method in [
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    ] {
        let notice = reply();
        assert_eq!(notice["method"], method, "{notice}");
    }
    send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}));
    let listed = reply();
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["chatty", "counter", "echo"], "{listed}");

    // The folder is watched: a tool copied in is picked up without a signal.
    std::fs::copy(
        common::artifact("notes"),
        dir.path().join("tools/notes.wasm"),
    )
    .expect("add a tool");
    let notice = reply();
    assert_eq!(
        notice["method"], "notifications/tools/list_changed",
        "{notice}"
    );
    send(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}));
    assert_eq!(reply()["result"]["tools"].as_array().map(Vec::len), Some(4));

    // So is toolhost.toml: disabling a tool there takes it out of the list.
    std::fs::write(
        dir.path().join("toolhost.toml"),
        "[tools.notes]\nenabled = false\n",
    )
    .expect("edit the config");
    let notice = reply();
    assert_eq!(
        notice["method"], "notifications/tools/list_changed",
        "{notice}"
    );
    send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}));
    assert_eq!(reply()["result"]["tools"].as_array().map(Vec::len), Some(3));

    // A tool whose component offers a prompt changes the prompts too (and
    // not the resources: it offers none); the two changes above did not.
    std::fs::copy(
        common::artifact("word_count"),
        dir.path().join("tools/word_count.wasm"),
    )
    .expect("add a tool");
    for method in [
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
    ] {
        let notice = reply();
        assert_eq!(notice["method"], method, "{notice}");
    }
    send(json!({"jsonrpc": "2.0", "id": 8, "method": "prompts/list"}));
    let listed = reply();
    let names: Vec<&str> = listed["result"]["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["counter_status", "word_count_report"], "{listed}");

    drop(stdin);
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    assert!(lines.next().is_none(), "nothing after the last reply");
}

/// A plain component's functions over MCP stdio: listed with their derived
/// schemas, called with structured results, invalid input refused; a tool
/// that did not load is refused with why.
#[test]
fn plain_component_functions_over_mcp() {
    let dir = host_dir(&["plain_shapes"], "");
    std::fs::write(dir.path().join("tools/broken.wasm"), b"not a component").expect("broken");
    let mut mcp = StdioMcp::start(&[], dir.path());
    let mut exchange = |message: serde_json::Value| mcp.exchange(message);

    let listed = exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let swap = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "plain_shapes_swap")
        .expect("swap listed")
        .clone();
    assert_eq!(
        swap["inputSchema"]["properties"]["pair"]["maxItems"], 2,
        "{swap}"
    );
    assert_eq!(
        swap["annotations"]["destructiveHint"], true,
        "write unless configured"
    );

    let called = exchange(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "plain_shapes_swap", "arguments": {"pair": ["a", 1]}}}));
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert_eq!(
        called["result"]["structuredContent"],
        json!({"result": [1, "a"]})
    );
    let usage = &called["result"]["_meta"]["toolhost/usage"];
    assert_eq!(usage["attempts"], 1, "{called}");
    assert!(usage["wallUs"].as_u64().unwrap() > 0, "{called}");

    let refused = exchange(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "plain_shapes_swap", "arguments": {"pair": [1, "a"]}}}));
    // Invalid arguments reach the model as a tool error it can correct
    // (SEP-1303), each at its pointer; unknown tools stay -32602.
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("plain_shapes_swap") && text.contains("- at /pair/0:"),
        "{refused}"
    );
    let meta = &refused["result"]["_meta"];
    assert_eq!(meta["code"], "invalid_tool_input", "{refused}");
    assert_eq!(meta["errors"][0]["pointer"], "/pair/0", "{refused}");
    let unknown = exchange(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "no_such_tool", "arguments": {}}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(
        unknown["error"]["data"]["code"], "unknown_tool",
        "{unknown}"
    );

    let broken = exchange(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "broken", "arguments": {}}}));
    assert_eq!(
        broken["error"]["data"]["code"], "tool_not_callable",
        "{broken}"
    );
    let message = broken["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("did not load") && message.contains("not a WebAssembly file"),
        "{broken}"
    );

    assert!(mcp.close().success());
}

/// `toolhost mcp` runs calls on one thread by default, and calls the client
/// makes at once still overlap: an `echo` sent while a CPU-bound `spin` runs
/// is answered first, on one thread and on two; `--threads 0` is refused.
#[test]
fn calls_overlap_on_one_thread_and_on_several() {
    let dir = host_dir(&["spin", "echo"], "[tools.spin]\ntimeout_ms = 1500\n");
    for threads in ["1", "2"] {
        let mut mcp = StdioMcp::start(&["--threads", threads], dir.path());
        mcp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "spin", "arguments": {}}}));
        mcp.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "meanwhile"}}}));
        let first = mcp.next();
        assert_eq!(first["id"], 3, "--threads {threads}: {first}");
        assert_eq!(first["result"]["content"][0]["text"], "meanwhile");
        let second = mcp.next();
        assert_eq!(second["id"], 2, "--threads {threads}: {second}");
        assert_eq!(second["result"]["isError"], true, "{second}");
        assert!(mcp.close().success(), "--threads {threads}");
    }
    let refused = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["mcp", "--threads", "0", "--dir"])
        .arg(dir.path())
        .output()
        .expect("run toolhost mcp");
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--threads"), "{stderr}");
}
