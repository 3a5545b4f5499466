//! `subscriptions/listen` over HTTP and stdio: filters, caps, shutdown, and
//! a round on stdio.

use super::*;
use crate::common::process;
use crate::common::stdio_mcp::StdioMcp;
use crate::common::{artifact, host_dir};

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
