//! Requests that carry what they need: discovery, listings and their cache
//! hints, the methods 2026-07-28 removed, the log level, -32021, a session
//! beside them, JSON Schema 2020-12 and `Mcp-Param-*` headers.

use super::*;
use crate::common::host_dir;
use crate::common::process;

use std::time::Instant;

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
    healthy(&served).await;

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
    healthy(&served).await;
}
