//! The call pipeline through the library API, with real components built
//! from source: every step of the pipeline (`host/src/call/`) and each bad
//! input.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{dry_run, host, live, session};
use serde_json::{Value, json};
use toolhost::session::EventKind;
use toolhost::{
    ApprovalDecision, ApprovalRequest, Approver, CallError, CallOptions, PreApproved, Session,
    SessionSpec,
};

fn as_of(text: &str) -> SessionSpec {
    SessionSpec {
        as_of: Some(toolhost::session::parse_instant(text).unwrap()),
        ..SessionSpec::default()
    }
}

#[tokio::test]
async fn echo_returns_its_text_in_the_envelope() {
    let (_dir, host) = host(&["echo"], "").await;
    let result = host
        .call("echo", json!({"text": "hello"}), &live())
        .await
        .unwrap();
    let envelope = serde_json::to_value(&result).unwrap();
    assert_eq!(envelope["ok"], json!(true));
    assert_eq!(envelope["toolName"], json!("echo"));
    assert_eq!(envelope["isError"], json!(false));
    assert_eq!(envelope["result"], json!("hello"));
    assert_eq!(envelope["stubbed"], json!(false));
    assert_eq!(envelope["attempts"], json!(1));
    assert!(envelope["callId"].as_str().unwrap().starts_with("call_"));
    assert!(envelope["durationMs"].is_u64());
}

#[tokio::test]
async fn unknown_tool_names_the_tool_and_the_known_ones() {
    let (_dir, host) = host(&["echo"], "").await;
    let err = host.call("ecoh", json!({}), &live()).await.unwrap_err();
    assert_eq!(err.code(), "unknown_tool");
    let message = err.to_string();
    assert!(
        message.contains("`ecoh`") && message.contains("echo"),
        "{message}"
    );
}

#[tokio::test]
async fn malformed_json_is_invalid_input() {
    let (_dir, host) = host(&["echo"], "").await;
    let err = host.call("echo", "{\"text\": ", &live()).await.unwrap_err();
    assert_eq!(err.code(), "invalid_tool_input");
    let message = err.to_string();
    assert!(
        message.contains("`echo`") && message.contains("not valid JSON"),
        "{message}"
    );
}

#[tokio::test]
async fn schema_failures_carry_json_pointers() {
    let (_dir, host) = host(&["echo"], "").await;
    let err = host
        .call("echo", json!({"text": 5}), &live())
        .await
        .unwrap_err();
    let CallError::InvalidInput { tool, errors } = err else {
        panic!("expected invalid input, got {err}");
    };
    assert_eq!(tool, "echo");
    assert_eq!(errors[0].pointer, "/text");
    assert!(errors[0].message.contains("string"), "{errors:?}");

    let err = host.call("echo", json!({}), &live()).await.unwrap_err();
    let message = err.to_string();
    assert!(message.contains("text"), "{message}");
    // The host keeps working after refusing.
    assert!(
        !host
            .call("echo", json!({"text": "ok"}), &live())
            .await
            .unwrap()
            .is_error
    );
}

#[tokio::test]
async fn time_arguments_are_bounded_by_as_of() {
    let (_dir, host) = host(&["query_telemetry"], "").await;
    let frozen = || session(as_of("2026-06-01T00:00:00Z"));
    let ok = host
        .call(
            "query_telemetry",
            json!({"since": "2026-05-31T00:00:00Z", "until": "2026-05-31T03:00:00+00:00"}),
            &frozen(),
        )
        .await
        .unwrap();
    assert!(!ok.is_error, "{:?}", ok.result);

    let cases = [
        (
            json!({"since": "2026-05-31T00:00:00Z", "until": "2026-06-02T00:00:00Z"}),
            "/until",
            "later than",
        ),
        (
            json!({"since": "now-1h", "until": "2026-05-31T00:00:00Z"}),
            "/since",
            "not an absolute",
        ),
        (
            json!({"since": "2026-05-31T00:00:00", "until": "2026-05-31T01:00:00Z"}),
            "/since",
            "no timezone",
        ),
    ];
    for (input, pointer, needle) in cases {
        let err = host
            .call("query_telemetry", input.clone(), &frozen())
            .await
            .unwrap_err();
        let CallError::InvalidInput { errors, .. } = &err else {
            panic!("expected invalid input for {input}, got {err}");
        };
        assert_eq!(errors[0].pointer, pointer, "{input}");
        assert!(
            errors[0].message.contains(needle),
            "{input}: {}",
            errors[0].message
        );
    }

    // Without asOf the host does not bound them.
    let free = host
        .call(
            "query_telemetry",
            json!({"since": "2026-05-31T00:00:00Z", "until": "2030-01-01T00:00:00Z"}),
            &live(),
        )
        .await
        .unwrap();
    assert!(!free.is_error, "{:?}", free.result);
}

struct Deny;

impl Approver for Deny {
    fn decide<'a>(
        &'a self,
        _request: &'a ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ApprovalDecision> + Send + 'a>> {
        Box::pin(async {
            ApprovalDecision::Denied {
                by: json!({"user": "mallory"}),
                reason: Some("not today".into()),
            }
        })
    }
}

#[tokio::test]
async fn always_ask_needs_an_approval() {
    let config = "[tools.context]\npermission = \"always_ask\"\n";
    let (_dir, host) = host(&["context"], config).await;
    let err = host.call("context", json!({}), &live()).await.unwrap_err();
    assert_eq!(err.code(), "approval_required");

    let approved = live().with_approver(Arc::new(PreApproved(json!({"user": "alice"}))));
    let result = host.call("context", json!({}), &approved).await.unwrap();
    assert!(!result.is_error, "{:?}", result.result);
    assert_eq!(result.result["approvedBy"], json!({"user": "alice"}));
    assert_eq!(result.trace.approved_by, Some(json!({"user": "alice"})));

    // The approver's auth beyond its principal reaches neither the tool nor the trace.
    let with_token = json!({"user": "alice", "token": "s3cret"});
    let approved = live().with_approver(Arc::new(PreApproved(with_token)));
    let result = host.call("context", json!({}), &approved).await.unwrap();
    assert_eq!(result.result["approvedBy"], json!({"user": "alice"}));
    assert_eq!(result.trace.approved_by, Some(json!({"user": "alice"})));

    let denied = live().with_approver(Arc::new(Deny));
    let result = host.call("context", json!({}), &denied).await.unwrap();
    assert!(result.is_error);
    let text = result.result.as_str().unwrap();
    assert!(
        text.contains("mallory") && text.contains("not today"),
        "{text}"
    );

    // A call a dry-run session stubs needs no approval.
    let stubbed = host.call("context", json!({}), &dry_run()).await.unwrap();
    assert!(stubbed.stubbed);
}

#[tokio::test]
async fn the_tool_sees_its_call_context() {
    let (_dir, host) = host(&["context"], "").await;
    let options = session(SessionSpec {
        id: Some("ses_test".into()),
        channel: Some("slack".into()),
        auth: Some(json!({"user": "bob"})),
        as_of: Some(toolhost::session::parse_instant("2026-01-01T00:00:00Z").unwrap()),
        ..SessionSpec::default()
    });
    let result = host.call("context", json!({}), &options).await.unwrap();
    let ctx = &result.result;
    assert_eq!(ctx["callId"], json!(result.call.id));
    assert_eq!(ctx["attempt"], json!(1));
    assert_eq!(ctx["sessionId"], json!("ses_test"));
    assert_eq!(ctx["channel"], json!("slack"));
    assert_eq!(ctx["mode"], json!("live"));
    assert_eq!(ctx["approvedBy"], Value::Null);
    assert!(
        ctx["asOf"]
            .as_str()
            .unwrap()
            .starts_with("2026-01-01T00:00:00")
    );
    assert_eq!(ctx["auth"], json!({"user": "bob"}));
}

#[tokio::test]
async fn dry_run_stubs_writes_and_runs_reads() {
    let config =
        "[tools.counter]\nkv = [\"default\"]\n[tools.publish_release]\nworkspace = \"write\"\n";
    let (_dir, host) = host(&["echo", "counter", "publish_release", "manage_pr"], config).await;

    let read = host
        .call("echo", json!({"text": "r"}), &dry_run())
        .await
        .unwrap();
    assert!(!read.stubbed);
    assert_eq!(read.result, json!("r"));

    let publish = host
        .call("publish_release", json!({"version": "1.2.3"}), &dry_run())
        .await
        .unwrap();
    assert!(publish.stubbed);
    assert_eq!(publish.attempts, 0);
    assert_eq!(publish.result["published"], json!(false));
    assert_eq!(publish.result["version"], json!("1.2.3"));

    let merge = host
        .call(
            "manage_pr",
            json!({"action": "merge", "number": 7}),
            &dry_run(),
        )
        .await
        .unwrap();
    assert!(merge.stubbed);
    assert_eq!(merge.result, json!("Operation acknowledged."));

    let view = host
        .call(
            "manage_pr",
            json!({"action": "view", "number": 7}),
            &dry_run(),
        )
        .await
        .unwrap();
    assert!(
        !view.stubbed,
        "a by-input read runs in dry-run: {:?}",
        view.result
    );

    // Nothing was written: the counter still starts from zero.
    let counted = host
        .call("counter", json!({"name": "c"}), &live())
        .await
        .unwrap();
    assert!(!counted.is_error, "{:?}", counted.result);
    assert_eq!(counted.result["value"], json!(1));
}

#[tokio::test]
async fn effect_by_input_decides_the_session_slot() {
    let config = "[tools.manage_pr]\nworkspace = \"write\"\n";
    let (_dir, host) = host(&["manage_pr", "echo"], config).await;
    let options = live();
    // Another write call holds the session's write slot.
    let held = options.session.try_write_slot().unwrap();
    let busy = host
        .call(
            "manage_pr",
            json!({"action": "merge", "number": 1}),
            &options,
        )
        .await;
    assert_eq!(busy.unwrap_err().code(), "session_busy");
    let view = host
        .call(
            "manage_pr",
            json!({"action": "view", "number": 1}),
            &options,
        )
        .await
        .unwrap();
    assert!(
        !view.is_error,
        "reads never take the write slot: {:?}",
        view.result
    );
    assert!(
        !host
            .call("echo", json!({"text": "x"}), &options)
            .await
            .unwrap()
            .is_error
    );
    drop(held);
    let merged = host
        .call(
            "manage_pr",
            json!({"action": "merge", "number": 1}),
            &options,
        )
        .await
        .unwrap();
    assert!(!merged.is_error, "{:?}", merged.result);
    assert_eq!(merged.trace.effect, Some(toolhost::Effect::Write));
}

#[tokio::test]
async fn transient_reads_are_retried_up_to_three_attempts() {
    let (_dir, host) = host(&["flaky_lookup"], "").await;
    let result = host
        .call("flaky_lookup", json!({"key": "k"}), &live())
        .await
        .unwrap();
    assert!(!result.is_error, "{:?}", result.result);
    assert_eq!(result.attempts, 3);
    assert_eq!(result.result["attempts"], json!(3));

    let exhausted = host
        .call(
            "flaky_lookup",
            json!({"key": "k", "fail_times": 5}),
            &live(),
        )
        .await
        .unwrap();
    assert!(exhausted.is_error);
    assert_eq!(exhausted.attempts, 3);
    let text = exhausted.result.as_str().unwrap();
    assert!(
        text.contains("attempt 3"),
        "the last attempt's message: {text}"
    );
}

#[tokio::test]
async fn transient_writes_run_once() {
    let (_dir, host) = host(&["flaky_write"], "").await;
    let result = host
        .call("flaky_write", json!({"key": "k"}), &live())
        .await
        .unwrap();
    assert!(result.is_error);
    assert_eq!(result.attempts, 1);
}

#[tokio::test]
async fn traps_and_limits_are_tool_errors_and_the_host_goes_on() {
    let config = "[defaults]\ntimeout_ms = 1000\nmemory_mb = 32\n";
    let (_dir, host) = host(&["trap", "spin", "hog", "recurse", "echo"], config).await;
    let cases = [
        ("trap", "trapped"),
        ("spin", "timed out"),
        ("hog", "memory cap hit"),
        ("recurse", "overflow"),
    ];
    for (tool, needle) in cases {
        let result = host.call(tool, json!({}), &live()).await.unwrap();
        assert!(result.is_error, "{tool}");
        let text = result.result.as_str().unwrap();
        assert!(text.contains(needle), "{tool}: {text}");
        assert!(text.contains(&format!("`{tool}`")), "{tool}: {text}");
        let echo = host
            .call("echo", json!({"text": "still here"}), &live())
            .await
            .unwrap();
        assert_eq!(echo.result, json!("still here"));
    }
    let trap = host.call("trap", json!({}), &live()).await.unwrap();
    assert!(
        trap.result.as_str().unwrap().contains("panicked"),
        "the panic message is kept: {:?}",
        trap.result
    );
    let spin = host.call("spin", json!({}), &live()).await.unwrap();
    assert!(spin.result.as_str().unwrap().contains("1000ms"));
    // A second of spinning is ~200 ticks of 5 ms; a loaded machine runs
    // the guest for fewer of them.
    assert!(
        (20..=220).contains(&spin.usage.epoch_ticks),
        "{:?}",
        spin.usage
    );
    let hog = host.call("hog", json!({}), &live()).await.unwrap();
    assert!(hog.result.as_str().unwrap().contains("32 MiB"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn looping_tools_do_not_starve_other_calls() {
    let config = "[tools.spin]\ntimeout_ms = 4000\n";
    let (_dir, host) = host(&["spin", "echo"], config).await;
    let host = Arc::new(host);
    let spinners: Vec<_> = (0..2)
        .map(|_| {
            let host = host.clone();
            tokio::spawn(async move { host.call("spin", json!({}), &live()).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let echo = host
        .call("echo", json!({"text": "prompt"}), &live())
        .await
        .unwrap();
    let waited = started.elapsed();
    assert_eq!(echo.result, json!("prompt"));
    assert!(
        waited < Duration::from_secs(2),
        "echo waited {waited:?} behind two looping tools"
    );
    for spinner in spinners {
        let result = spinner.await.unwrap().unwrap();
        assert!(result.is_error && result.result.as_str().unwrap().contains("timed out"));
    }
}

#[tokio::test]
async fn output_over_the_cap_is_an_error_and_stdout_is_captured() {
    let (_dir, host) = host(&["big_output", "chatty"], "").await;
    let over = host
        .call("big_output", json!({"bytes": 1024 * 1024 + 1}), &live())
        .await
        .unwrap();
    assert!(over.is_error);
    assert!(
        over.result.as_str().unwrap().contains("output cap"),
        "{:?}",
        over.result
    );
    let under = host
        .call("big_output", json!({"bytes": 1000}), &live())
        .await
        .unwrap();
    assert!(!under.is_error);

    let chatty = host
        .call("chatty", json!({"bytes": 10 * 1024 * 1024}), &live())
        .await
        .unwrap();
    assert!(!chatty.is_error, "{:?}", chatty.result);
    assert!(chatty.trace.stdout_truncated && chatty.trace.stderr_truncated);
    assert_eq!(chatty.trace.stdout.len(), 64 * 1024);
}

#[tokio::test]
async fn trace_events_pair_request_and_result() {
    let (_dir, host) = host(&["echo"], "").await;
    let session = Arc::new(Session::ephemeral().unwrap());
    let options = CallOptions::new(session.clone());
    let result = host
        .call("echo", json!({"text": "t"}), &options)
        .await
        .unwrap();
    let events = session.events().kept(None);
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].kind, EventKind::ActionsRequested);
    assert_eq!(events[1].kind, EventKind::ActionResult);
    for event in &events {
        assert_eq!(event.to_json()["data"]["callId"], json!(result.call.id));
    }
    let finished = events[1].to_json();
    assert_eq!(finished["type"], json!("action.result"));
    assert_eq!(finished["data"]["stubbed"], json!(false));
    assert_eq!(finished["data"]["result"], json!("t"));
    assert!(finished["data"]["trace"]["logs"].is_array());
}

#[tokio::test]
async fn capabilities_run_as_far_as_granted() {
    let config = "[tools.counter]\nkv = [\"default\"]\n[tools.notes]\nworkspace = \"write\"\n";
    let (_dir, host) = host(&["counter", "notes", "fetch_url"], config).await;
    let options = live();
    for expected in 1..=3 {
        let result = host
            .call("counter", json!({"name": "n", "by": 1}), &options)
            .await
            .unwrap();
        assert_eq!(
            result.result["value"],
            json!(expected),
            "{:?}",
            result.result
        );
    }
    let added = host
        .call(
            "notes",
            json!({"action": "add", "title": "todo", "body": "ship it"}),
            &options,
        )
        .await
        .unwrap();
    assert!(!added.is_error, "{:?}", added.result);
    let note = std::fs::read_to_string(options.session.workspace().unwrap().join("notes/todo.md"))
        .unwrap();
    assert!(note.contains("ship it"));
    let read = host
        .call(
            "notes",
            json!({"action": "read", "title": "todo"}),
            &options,
        )
        .await
        .unwrap();
    assert!(
        format!("{}", read.result).contains("ship it"),
        "{:?}",
        read.result
    );

    let fetched = host
        .call("fetch_url", json!({"url": "http://127.0.0.1:9/"}), &options)
        .await
        .unwrap();
    assert!(fetched.is_error, "no http grant: {:?}", fetched.result);
    assert!(
        fetched
            .trace
            .logs
            .iter()
            .any(|l| l.message.contains("granted no outbound HTTP")),
        "{:?}",
        fetched.trace.logs
    );
}

#[tokio::test]
async fn size_caps_come_from_the_config() {
    let config = "[tools.big_output]\nmax_output_bytes = 1000\n\
                  [tools.echo]\nmax_input_bytes = 40\n\
                  [tools.chatty]\nmax_stdio_bytes = 10\n";
    let (_dir, host) = host(&["big_output", "echo", "chatty"], config).await;
    let over = host
        .call("big_output", json!({"bytes": 1001}), &live())
        .await
        .unwrap();
    assert!(over.is_error);
    let text = over.result.as_str().unwrap();
    assert!(
        text.contains("at most 1000") && text.contains("max_output_bytes"),
        "{text}"
    );
    assert!(
        !host
            .call("big_output", json!({"bytes": 900}), &live())
            .await
            .unwrap()
            .is_error
    );

    let err = host
        .call("echo", json!({"text": "x".repeat(50)}), &live())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("max_input_bytes"), "{err}");

    let chatty = host
        .call("chatty", json!({"bytes": 1000}), &live())
        .await
        .unwrap();
    assert_eq!(chatty.trace.stdout.len(), 10);
    assert!(chatty.trace.stdout_truncated);
}

struct SlowApprover;

impl Approver for SlowApprover {
    fn decide<'a>(
        &'a self,
        _request: &'a ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ApprovalDecision> + Send + 'a>> {
        Box::pin(async {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            ApprovalDecision::Approved {
                by: json!({"user": "slow"}),
            }
        })
    }
}

#[tokio::test]
async fn waiting_for_approval_does_not_use_up_the_deadline() {
    let config = "[tools.context]\npermission = \"always_ask\"\ntimeout_ms = 1000\n";
    let (_dir, host) = host(&["context"], config).await;
    let options = live().with_approver(Arc::new(SlowApprover));
    let result = host.call("context", json!({}), &options).await.unwrap();
    assert!(!result.is_error, "{:?}", result.result);
    assert_eq!(result.result["approvedBy"], json!({"user": "slow"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_past_the_instance_limit_wait_then_fail_clearly() {
    let dir = common::host_dir(
        &["spin", "echo"],
        "[tools.spin]\ntimeout_ms = 1500\n[tools.echo]\ntimeout_ms = 300\n",
    );
    let host = Arc::new(
        toolhost::Host::builder(dir.path())
            .cache_dir(common::cache_dir())
            .max_instances(1)
            .build()
            .await
            .unwrap(),
    );
    let spinner = {
        let host = host.clone();
        tokio::spawn(async move { host.call("spin", json!({}), &live()).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let starved = host
        .call("echo", json!({"text": "x"}), &live())
        .await
        .unwrap();
    assert!(starved.is_error);
    let text = starved.result.as_str().unwrap();
    assert!(text.contains("limit of 1 live instances"), "{text}");
    assert!(spinner.await.unwrap().unwrap().is_error);
    let after = host
        .call("echo", json!({"text": "x"}), &live())
        .await
        .unwrap();
    assert_eq!(after.result, json!("x"));
}

#[tokio::test]
async fn an_instance_pool_that_cannot_be_reserved_is_a_startup_error() {
    let dir = common::host_dir(
        &["echo"],
        "[limits]\nmax_concurrent_calls = 4096\n[defaults]\nmemory_mb = 4096\n",
    );
    let error = toolhost::Host::builder(dir.path())
        .cache_dir(common::cache_dir())
        .build()
        .await
        .err()
        .expect("4104 instances of 4 GiB do not fit the address space");
    let message = format!("{error:#}");
    assert!(
        message.contains("4104 instances of up to 4096 MiB")
            && message.contains("max_concurrent_calls"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_call_past_the_queue_is_refused_as_overloaded() {
    let (_dir, host) = host(
        &["slow", "echo"],
        "[limits]\nmax_concurrent_calls = 1\nmax_queued_calls = 0\n[tools.slow]\ntimeout_ms = 5000\n",
    )
    .await;
    let host = Arc::new(host);
    let running = tokio::spawn({
        let host = host.clone();
        async move { host.call("slow", json!({"ms": 800}), &live()).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = host
        .call("echo", json!({"text": "x"}), &live())
        .await
        .expect_err("no slot and no queue");
    assert_eq!(refused.code(), "overloaded");
    assert_eq!(host.gate().running(), 1);
    assert_eq!(running.await.unwrap().unwrap().result, json!("slow"));
    let after = host.call("echo", json!({"text": "x"}), &live()).await;
    assert_eq!(after.unwrap().result, json!("x"));
}
