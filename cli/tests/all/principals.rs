//! Identity apart from credentials (issue 45, attack 7): what a server
//! lists, stores, mirrors, puts in events or hands to a tool is the
//! principal only; credentials for upstream servers travel in
//! `credentials` and stay in the server's memory; no client passes for the
//! approver the server vouches for; and the routes that act on a session
//! without a call (ending it, upgrading it, cancelling its reminders,
//! reading its workspace) take only its owner.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::serve::{Server, code, start};

const BEARER: &str = "Bearer s3cret-upstream-token";

/// `method path` with `Toolhost-Auth: caller`.
async fn as_caller(
    server: &Server,
    method: reqwest::Method,
    path: &str,
    caller: Option<&Value>,
) -> (StatusCode, Value) {
    let mut request = server.client.request(method, server.url(path));
    if let Some(caller) = caller {
        request = request.header("toolhost-auth", caller.to_string());
    }
    let response = server.auth(request).send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Every file under `dir`, read whole.
fn every_file(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            match entry.file_type().unwrap() {
                t if t.is_dir() => stack.push(path),
                t if t.is_file() => found.push((path.clone(), std::fs::read(&path).unwrap())),
                _ => {}
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_never_leave_the_server_and_only_owners_act_on_sessions() {
    let config =
        "[tools.context]\npermission = \"always_ask\"\n[server]\napproval_timeout_ms = 20000\n";
    let server = start(&["context"], config).await;
    let alice = json!({"user": "alice"});
    // The README once suggested upstream tokens in `auth`: a token there is
    // dropped at the door, and `credentials` holds it in memory only.
    let session = server
        .session(json!({
            "auth": {"user": "alice", "token": BEARER},
            "credentials": {"token": BEARER},
        }))
        .await;
    let id = session["id"].as_str().unwrap().to_string();
    assert!(!session.to_string().contains("s3cret"), "{session}");

    let (status, pending) = server
        .call("context", json!({"sessionId": id, "auth": alice}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{pending}");
    let call_id = pending["callId"].as_str().unwrap().to_string();
    let (_, approvals) = server.get("/approvals").await;
    assert!(approvals.to_string().contains(&call_id), "{approvals}");
    assert!(!approvals.to_string().contains("s3cret"), "{approvals}");

    // No client passes for the server's own approver.
    for forged in [
        json!({"principal": "server-token"}),
        json!({"user": "loopback"}),
        json!({"user": "carol", "vouchedBy": "toolhost"}),
    ] {
        let (status, refused) = server
            .post(
                &format!("/approvals/{call_id}"),
                json!({"decision": "approve", "auth": forged}),
            )
            .await;
        assert_eq!(
            (status, code(&refused)),
            (StatusCode::BAD_REQUEST, "invalid_request"),
            "{forged}: {refused}"
        );
    }
    // Vouched for by the server: its marker reaches the tool.
    let (status, _) = server
        .post(
            &format!("/approvals/{call_id}"),
            json!({"decision": "approve"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, done) = server.get(&format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(
        done["result"]["approvedBy"],
        json!({"principal": "loopback", "vouchedBy": "toolhost"}),
        "{done}"
    );
    assert_eq!(
        done["result"]["auth"], alice,
        "the tool sees the principal only"
    );
    let (_, approvals) = server.get("/approvals").await;
    assert!(!approvals.to_string().contains("s3cret"), "{approvals}");
    let (_, events) = server.get(&format!("/sessions/{id}")).await;
    assert!(!events.to_string().contains("s3cret"), "{events}");

    // Nothing the server wrote holds the token.
    for (path, bytes) in every_file(server.dir.path()) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains("s3cret"),
            "{} holds the credential",
            path.display()
        );
    }

    // Only the owner ends, upgrades, cancels reminders of, or reads the
    // workspace of a session.
    let mallory = json!({"user": "mallory"});
    for (method, path) in [
        (reqwest::Method::GET, format!("/sessions/{id}/workspace")),
        (reqwest::Method::GET, format!("/sessions/{id}/workspace/x")),
        (
            reqwest::Method::DELETE,
            format!("/sessions/{id}/reminders/rem_x"),
        ),
        (reqwest::Method::POST, format!("/sessions/{id}/upgrade")),
        (reqwest::Method::DELETE, format!("/sessions/{id}")),
    ] {
        for caller in [None, Some(&mallory)] {
            let (status, refused) = as_caller(&server, method.clone(), &path, caller).await;
            assert_eq!(
                (status, code(&refused)),
                (StatusCode::FORBIDDEN, "session_forbidden"),
                "{method} {path} as {caller:?}: {refused}"
            );
        }
    }
    let (status, refused) = as_caller(
        &server,
        reqwest::Method::DELETE,
        &format!("/sessions/{id}"),
        Some(&json!({"principal": "server-token"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    let (status, listed) = as_caller(
        &server,
        reqwest::Method::GET,
        &format!("/sessions/{id}/workspace"),
        Some(&alice),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let (status, _) = as_caller(
        &server,
        reqwest::Method::DELETE,
        &format!("/sessions/{id}"),
        Some(&alice),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
}

/// The owner of a call's session (or whoever holds the token, for a
/// session with no owner) ends a call that runs: it stops at once and
/// answers `409 call_ended`, and the session takes calls again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_call_is_ended_on_request() {
    let server = start(&["spin", "echo"], "[tools.spin]\ntimeout_ms = 30000\n").await;
    let alice = json!({"user": "alice"});
    let session = server.session(json!({"auth": alice})).await;
    let id = session["id"].as_str().unwrap().to_string();
    let mut events = server.events(&id, None).await;
    let spinning = {
        let (client, url, token) = (
            server.client.clone(),
            server.url("/tools/spin"),
            server.token.clone(),
        );
        let body = json!({"sessionId": id, "auth": alice});
        tokio::spawn(async move {
            let mut request = client.post(url).json(&body);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        })
    };
    let requested = events.until("actions.requested").await;
    let call_id = requested["data"]["callId"].as_str().unwrap().to_string();
    let path = format!("/calls/{call_id}");
    let (status, refused) = as_caller(
        &server,
        reqwest::Method::DELETE,
        &path,
        Some(&json!({"user": "bob"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    let asked = std::time::Instant::now();
    let (status, ended) = as_caller(&server, reqwest::Method::DELETE, &path, Some(&alice)).await;
    assert_eq!(status, StatusCode::OK, "{ended}");
    let (status, answer) = spinning.await.unwrap();
    assert!(
        asked.elapsed() < std::time::Duration::from_secs(5),
        "ended after {:?}",
        asked.elapsed()
    );
    assert_eq!(
        (status, code(&answer)),
        (StatusCode::CONFLICT, "call_ended"),
        "{answer}"
    );
    let (status, gone) = as_caller(&server, reqwest::Method::DELETE, &path, Some(&alice)).await;
    assert_eq!(
        (status, code(&gone)),
        (StatusCode::NOT_FOUND, "call_not_found")
    );
    let (status, echoed) = server
        .call(
            "echo",
            json!({"input": {"text": "next"}, "sessionId": id, "auth": alice}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{echoed}");
}
