//! The Tasks extension (`io.modelcontextprotocol/tasks`): calls that
//! become tasks, and what a hostile client can do with them: task ids that
//! never were (64 KiB of one), answers to questions a task did not ask or
//! of the wrong shape, cancelling twice, more tasks than the server keeps,
//! results bigger than it keeps, tasks past their time to live, a task
//! whose client cannot be asked;
//! `/healthz` after each.

use super::*;
use crate::common::host_dir;
use crate::common::process;

use std::time::Instant;

/// The `_meta` of a client that declared the Tasks extension (and
/// elicitation unless `can_elicit` is false).
fn with_tasks(can_elicit: bool) -> Value {
    let mut capabilities = json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
    if can_elicit {
        capabilities["elicitation"] = json!({});
    }
    json!({ "io.modelcontextprotocol/clientCapabilities": capabilities })
}

/// Call `tool` with `arguments` as a client that declared tasks; the
/// created task's id.
async fn create(served: &Served, id: u64, tool: &str, arguments: Value) -> String {
    let reply = post(
        served,
        &request(
            id,
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
            with_tasks(true),
        ),
    )
    .await;
    let result = &reply.answer()["result"];
    assert_eq!(result["resultType"], "task", "{result}");
    result["taskId"].as_str().unwrap().to_string()
}

/// `method` on `task` (`params` added), as a client that declared tasks.
async fn on_task(served: &Served, id: u64, method: &str, task: &str, params: Value) -> Value {
    let mut params = params;
    params["taskId"] = json!(task);
    let reply = post(served, &request(id, method, params, with_tasks(true))).await;
    reply.answer().clone()
}

/// Poll `task` until its status is `status` (at most 10 s).
async fn until(served: &Served, task: &str, status: &str) -> Value {
    let started = Instant::now();
    loop {
        let got = on_task(served, 900, "tasks/get", task, json!({})).await;
        if got["result"]["status"] == status || started.elapsed() > Duration::from_secs(10) {
            assert_eq!(got["result"]["status"], status, "{got}");
            return got["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

const TASKS: &str = r#"
[server]
task_after_ms = 200
max_tasks = 2
task_ttl_ms = 1500
task_results_mb = 1

[tools.big_output]
task = "required"
max_output_bytes = 2000000

[limits]
max_concurrent_calls = 4
max_asking_calls = 1

[tools.slow_compute]
timeout_ms = 60000

[tools.confirm_delete]
task = "required"
ask = ["user"]

[tools.multi_input]
task = "required"
ask = ["user"]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_polled_answered_and_cancelled_and_unknown_ids_get_nothing() {
    let dir = host_dir(
        &[
            "slow_compute",
            "confirm_delete",
            "multi_input",
            "echo",
            "big_output",
        ],
        TASKS,
    );
    let served = process::serve(dir.path(), &[]);

    // A quick call answers at once; a slow one becomes a task.
    let quick = post(
        &served,
        &request(
            1,
            "tools/call",
            json!({ "name": "slow_compute", "arguments": { "seconds": 0 } }),
            with_tasks(true),
        ),
    )
    .await;
    assert_eq!(quick.answer()["result"]["resultType"], "complete");
    let slow = create(&served, 2, "slow_compute", json!({ "seconds": 0.5 })).await;
    let done = until(&served, &slow, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "run: computed for 0.5 s"
    );
    assert_eq!(done["ttlMs"], 1500);

    // Ids that never were, however long, are -32602; nothing is echoed
    // whole. One that is not ASCII cannot be the `Mcp-Name` header the
    // request must carry: -32020 (over stdio it reaches the tasks, as in
    // `tasks::tests`).
    for task in ["", "no-such-task", &"x".repeat(64 * 1024), &"€".repeat(100)] {
        let expected = if task.is_ascii() { -32602 } else { -32020 };
        for method in ["tasks/get", "tasks/cancel"] {
            let error = on_task(&served, 3, method, task, json!({})).await;
            assert_eq!(error["error"]["code"], expected, "{method} {error}");
            assert!(error.to_string().len() < 4096, "{method}");
        }
    }

    // Answers the task did not ask for, or of the wrong shape, leave it
    // waiting; the right ones let it finish.
    let asking = create(&served, 4, "multi_input", json!({})).await;
    let waiting = until(&served, &asking, "input_required").await;
    let keys: Vec<&String> = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["first", "second"]);
    let ack = on_task(
        &served,
        5,
        "tasks/update",
        &asking,
        json!({ "inputResponses": { "first": 12345, "unasked": accept(json!({})) } }),
    )
    .await;
    assert_eq!(ack["result"], json!({ "resultType": "complete" }), "{ack}");
    let still = until(&served, &asking, "input_required").await;
    assert_eq!(still["inputRequests"].as_object().unwrap().len(), 2);
    let answers = json!({ "first": accept(json!({ "name": "A" })),
                          "second": accept(json!({ "name": "B" })) });
    on_task(
        &served,
        6,
        "tasks/update",
        &asking,
        json!({ "inputResponses": answers }),
    )
    .await;
    let done = until(&served, &asking, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Got A and B.");

    // Cancelling stops the call (its slot is free for the next), twice is
    // the same ack, and a cancelled task stays cancelled.
    let long = create(&served, 7, "slow_compute", json!({ "seconds": 30 })).await;
    for id in [8, 9] {
        let ack = on_task(&served, id, "tasks/cancel", &long, json!({})).await;
        assert_eq!(ack["result"], json!({ "resultType": "complete" }), "{ack}");
    }
    until(&served, &long, "cancelled").await;
    let started = Instant::now();
    let echo = post(
        &served,
        &request(
            10,
            "tools/call",
            json!({ "name": "echo", "arguments": { "text": "free" } }),
            with_tasks(true),
        ),
    )
    .await;
    assert_eq!(echo.answer()["result"]["content"][0]["text"], "free");
    assert!(started.elapsed() < Duration::from_secs(5));
    healthy(&served).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_bounded_in_number_and_time_and_fail_when_the_client_cannot_answer() {
    let dir = host_dir(
        &[
            "slow_compute",
            "confirm_delete",
            "multi_input",
            "big_output",
        ],
        TASKS,
    );
    let served = process::serve(dir.path(), &[]);

    // A result bigger than the server keeps for tasks fails the task,
    // saying so; one that fits is kept.
    let big = create(&served, 20, "big_output", json!({ "bytes": 1_500_000 })).await;
    let failed = until(&served, &big, "failed").await;
    assert_eq!(
        failed["error"]["data"]["code"], "task_result_too_large",
        "{failed}"
    );
    let small = create(&served, 21, "big_output", json!({ "bytes": 1000 })).await;
    until(&served, &small, "completed").await;

    // A task whose client cannot be asked fails, saying what it needs.
    let mute = post(
        &served,
        &request(
            1,
            "tools/call",
            json!({ "name": "confirm_delete", "arguments": { "filename": "a" } }),
            with_tasks(false),
        ),
    )
    .await;
    let mute = mute.answer()["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let failed = until(&served, &mute, "failed").await;
    assert_eq!(failed["error"]["code"], -32021, "{failed}");
    assert!(failed.get("result").is_none());

    // Two running tasks fill the server (the failed one gives its place
    // up); a third required one is refused, an optional one answers in
    // its request.
    let first = create(&served, 2, "slow_compute", json!({ "seconds": 30 })).await;
    let second = create(&served, 3, "slow_compute", json!({ "seconds": 30 })).await;
    let refused = post(
        &served,
        &request(
            4,
            "tools/call",
            json!({ "name": "confirm_delete", "arguments": { "filename": "b" } }),
            with_tasks(true),
        ),
    )
    .await;
    assert_eq!(
        refused.answer()["error"]["data"]["code"],
        "too_many_tasks",
        "{:?}",
        refused.messages
    );
    let inline = post(
        &served,
        &request(
            5,
            "tools/call",
            json!({ "name": "slow_compute", "arguments": { "seconds": 0.5 } }),
            with_tasks(true),
        ),
    )
    .await;
    let result = &inline.answer()["result"];
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(result["content"][0]["text"], "run: computed for 0.5 s");
    for task in [&first, &second] {
        on_task(&served, 5, "tasks/cancel", task, json!({})).await;
    }

    // Past its time to live a task is gone.
    let brief = create(&served, 6, "slow_compute", json!({ "seconds": 0.3 })).await;
    until(&served, &brief, "completed").await;
    tokio::time::sleep(Duration::from_millis(1700)).await;
    let gone = on_task(&served, 7, "tasks/get", &brief, json!({})).await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");

    // A required tool from a client that did not declare tasks: -32021.
    let undeclared = post(
        &served,
        &request(
            8,
            "tools/call",
            json!({ "name": "confirm_delete", "arguments": { "filename": "c" } }),
            json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } }),
        ),
    )
    .await;
    let error = &undeclared.answer()["error"];
    assert_eq!(error["code"], -32021, "{error}");
    assert!(
        error["data"]["requiredCapabilities"]["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_some(),
        "{error}"
    );
    healthy(&served).await;
}
