//! Who a request acts for over `/mcp`: the principal its `Toolhost-Auth`
//! header names, read as the HTTP API reads it. Tasks, request states and
//! owned sessions are each principal's own.

use super::*;
use crate::common::host_dir;
use crate::common::process;

const ADA: &str = r#"{"user":"ada"}"#;
const BOB: &str = r#"{"user":"bob"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_principal_has_its_own_tasks_request_states_and_sessions() {
    let asks = "test_input_required_result_request_state";
    let grant = format!(
        "[tools.slow_compute]\ntimeout_ms = 60000\ntask = \"required\"\n\n\
         [tools.{asks}]\nask = [\"user\"]\n"
    );
    let dir = host_dir(&["echo", "slow_compute", asks], &grant);
    let served = process::serve(dir.path(), &[]);

    // A task made for Ada is unknown to Bob and to a caller naming no one.
    let tasks = json!({ "io.modelcontextprotocol/clientCapabilities":
        { "extensions": { "io.modelcontextprotocol/tasks": {} } } });
    let long = json!({ "name": "slow_compute", "arguments": { "seconds": 30 } });
    let made = post_as(
        &served,
        &request(1, "tools/call", long, tasks.clone()),
        Some(ADA),
    )
    .await;
    let task = made.answer()["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{:?}", made.messages))
        .to_string();
    for method in ["tasks/get", "tasks/cancel"] {
        for auth in [Some(BOB), None] {
            let tried = request(2, method, json!({ "taskId": task }), tasks.clone());
            let refused = post_as(&served, &tried, auth).await;
            assert_eq!(
                refused.answer()["error"]["code"],
                -32602,
                "{auth:?} {method}"
            );
        }
    }
    let polled = request(3, "tasks/get", json!({ "taskId": task }), tasks.clone());
    let shown = post_as(&served, &polled, Some(ADA)).await;
    assert_eq!(shown.answer()["result"]["status"], "working");
    let cancel = request(4, "tasks/cancel", json!({ "taskId": task }), tasks.clone());
    let cancelled = post_as(&served, &cancel, Some(ADA)).await;
    assert!(
        cancelled.answer()["result"].is_object(),
        "{:?}",
        cancelled.messages
    );

    // A round's state minted for Ada does not answer for Bob.
    let can_elicit = json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } });
    let call = json!({ "name": asks, "arguments": {} });
    let asked = post_as(
        &served,
        &request(5, "tools/call", call, can_elicit),
        Some(ADA),
    )
    .await;
    let (state, key, _) = round(&asked);
    let answer = json!({ key: accept(json!({ "ok": true })) });
    let as_bob = post_as(
        &served,
        &retry(6, asks, json!({}), &state, answer.clone()),
        Some(BOB),
    )
    .await;
    let refused = &as_bob.answer()["error"];
    assert_eq!(
        refused["data"]["code"], "invalid_request_state",
        "{refused}"
    );
    let as_ada = post_as(
        &served,
        &retry(7, asks, json!({}), &state, answer),
        Some(ADA),
    )
    .await;
    assert_eq!(
        as_ada.answer()["result"]["content"][0]["text"],
        "state-ok: confirmed=true"
    );

    // A session Ada owns takes her MCP calls, and no one else's.
    let response = http_client()
        .post(format!("{}/toolhost/v1/sessions", served.url))
        .json(&json!({ "auth": { "user": "ada" } }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let session: Value = response.json().await.unwrap();
    let in_session = json!({ "toolhost/sessionId": session["id"] });
    let echo = json!({ "name": "echo", "arguments": { "text": "mine" } });
    for (auth, runs) in [(Some(ADA), true), (Some(BOB), false), (None, false)] {
        let body = request(8, "tools/call", echo.clone(), in_session.clone());
        let reply = post_as(&served, &body, auth).await;
        let answer = reply.answer();
        assert_eq!(
            answer["result"]["content"][0]["text"] == "mine",
            runs,
            "{auth:?}: {answer}"
        );
    }

    // A header that is not JSON, is too long, or names a principal only
    // the server vouches for: refused, naming the header.
    let long = format!(r#"{{"user":"{}"}}"#, "x".repeat(5000));
    for bad in [
        "not json",
        long.as_str(),
        r#"{"user":"ada","vouchedBy":"x"}"#,
    ] {
        let echo = json!({ "name": "echo", "arguments": { "text": "x" } });
        let reply = post_as(
            &served,
            &request(9, "tools/call", echo, json!({})),
            Some(bad),
        )
        .await;
        let error = &reply.answer()["error"];
        assert_eq!(error["code"], -32602, "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("Toolhost-Auth"), "{message}");
    }
    healthy(&served).await;
}
