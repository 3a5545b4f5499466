//! Input-required rounds: a tool's questions and approvals answered by
//! retries, the request state's checks, and the bounds on waiting calls.

use super::*;
use crate::common::host_dir;
use crate::common::process;

use std::time::Instant;

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

    // A retry without the answer, or with one of the wrong shape, is asked
    // again, under a new state.
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
        &retry(13, tool, json!({}), &state, json!({ key.clone(): "yes" })),
    )
    .await;
    let (state, key_again, _) = round(&wrong);
    assert_eq!(key, key_again);
    let answered = post(
        &served,
        &retry(
            13,
            tool,
            json!({}),
            &state,
            json!({ key: accept(json!({ "ok": true })) }),
        ),
    )
    .await;
    let result = &answered.answer()["result"];
    assert_eq!(result["resultType"], "complete", "{result}");

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
    healthy(&served).await;
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

/// The input requests of an input-required result, by key, and its state.
fn asked(reply: &Reply) -> (String, serde_json::Map<String, Value>) {
    let result = &reply.answer()["result"];
    assert_eq!(result["resultType"], "input_required", "{result}");
    let requests = result["inputRequests"].as_object().unwrap().clone();
    (
        result["requestState"].as_str().unwrap().to_string(),
        requests,
    )
}

/// A tool's questions asked together (`ask-all`) are one round under the
/// tool's keys: an answer the first request brings is used without
/// asking, a retry may answer some (the rest are asked again), keys the
/// round did not ask are ignored, and an answer of the wrong shape is
/// asked for again. An approval is never answered in advance, and a
/// question the client did not declare ends the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_asked_together_are_one_round_under_the_tools_keys() {
    let config = "[tools.ask_all]\nask = [\"user\", \"model\", \"roots\"]\n\n\
                  [tools.echo]\npermission = \"always_ask\"\n";
    let dir = host_dir(&["ask_all", "echo"], config);
    let served = process::serve(dir.path(), &[]);
    let all = json!({ "io.modelcontextprotocol/clientCapabilities":
                      { "elicitation": {}, "sampling": {}, "roots": {} } });
    let three = json!({ "questions": [
        { "key": "user_name", "kind": "user" },
        { "key": "greeting", "kind": "model" },
        { "key": "client_roots", "kind": "roots" },
    ] });
    let roots = json!({ "roots": [{ "uri": "file:///work", "name": "work" }] });
    let sample = json!({ "role": "assistant", "content": { "type": "text", "text": "Hi!" },
                         "model": "m", "stopReason": "endTurn" });

    // Answered in advance: only the roots are asked.
    let mut given = three.clone();
    given["questions"].as_array_mut().unwrap().remove(1);
    let first = post(
        &served,
        &request(
            1,
            "tools/call",
            json!({ "name": "ask_all", "arguments": given.clone(),
                    "inputResponses": { "user_name": accept(json!({ "name": "Ada" })),
                                        "unasked": { "anything": true } } }),
            all.clone(),
        ),
    )
    .await;
    let (state, requests) = asked(&first);
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["client_roots"]);
    assert_eq!(requests["client_roots"]["method"], "roots/list");
    // A retry without the answer is asked again, under a new state.
    let again = post(
        &served,
        &retry(
            2,
            "ask_all",
            given.clone(),
            &state,
            json!({ "other": roots.clone() }),
        ),
    )
    .await;
    let (state, requests) = asked(&again);
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["client_roots"]);
    let done = post(
        &served,
        &retry(
            3,
            "ask_all",
            given,
            &state,
            json!({ "client_roots": roots.clone() }),
        ),
    )
    .await;
    assert_eq!(
        done.answer()["result"]["content"][0]["text"],
        "user: {\"name\":\"Ada\"}\nroots: file:///work"
    );

    // Three in one round; answered one at a time, then one of the wrong shape.
    let first = post(
        &served,
        &request(
            4,
            "tools/call",
            json!({ "name": "ask_all", "arguments": three.clone() }),
            all.clone(),
        ),
    )
    .await;
    let (state, requests) = asked(&first);
    assert_eq!(requests.len(), 3);
    assert_eq!(requests["greeting"]["method"], "sampling/createMessage");
    assert_eq!(requests["user_name"]["method"], "elicitation/create");
    let some = post(
        &served,
        &retry(
            5,
            "ask_all",
            three.clone(),
            &state,
            json!({ "greeting": sample }),
        ),
    )
    .await;
    let (state, requests) = asked(&some);
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        ["client_roots", "user_name"]
    );
    let wrong = post(
        &served,
        &retry(
            6,
            "ask_all",
            three.clone(),
            &state,
            json!({ "user_name": accept(json!({ "name": "Ada" })),
                    "client_roots": { "roots": "not a list" } }),
        ),
    )
    .await;
    let (state, requests) = asked(&wrong);
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["client_roots"]);
    let done = post(
        &served,
        &retry(
            7,
            "ask_all",
            three.clone(),
            &state,
            json!({ "client_roots": roots }),
        ),
    )
    .await;
    assert_eq!(
        done.answer()["result"]["content"][0]["text"],
        "user: {\"name\":\"Ada\"}\nmodel: Hi!\nroots: file:///work"
    );

    // An approval's key answered in advance is asked all the same.
    let approval = post(
        &served,
        &request(
            8,
            "tools/call",
            json!({ "name": "echo", "arguments": { "text": "hi" },
                    "inputResponses": { "ask-1": accept(json!({ "approve": true })) } }),
            all,
        ),
    )
    .await;
    let (_, requests) = asked(&approval);
    assert_eq!(requests.len(), 1);

    // Roots the client did not declare end the request with -32021.
    let undeclared = post(
        &served,
        &request(
            9,
            "tools/call",
            json!({ "name": "ask_all", "arguments": three }),
            json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } }),
        ),
    )
    .await;
    let error = &undeclared.answer()["error"];
    assert_eq!(error["code"], -32021, "{error}");
    let required = &error["data"]["requiredCapabilities"];
    assert!(
        required.get("roots").is_some() && required.get("sampling").is_some(),
        "{error}"
    );
    healthy(&served).await;
}
