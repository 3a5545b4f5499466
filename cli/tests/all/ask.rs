//! A running call asks the user or the model (`toolhost:tool/ask`) through
//! the Rust API's [`Asker`]: the grant, the deadline that stops while the
//! call waits, the wait's own limit, the cap on waiting calls, and answers
//! checked against the form. Over MCP: tests/mcp/client.py and the
//! conformance suite.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::Notify;

use common::asker::{Scripted, accept};
use common::live;
use toolhost::ask::ElicitAnswer;

const GRANTED: &str = r#"
[tools.test_elicitation]
ask = ["user"]
timeout_ms = 400
[tools.test_sampling]
ask = ["model"]
timeout_ms = 400
"#;

fn text(result: &toolhost::CallResult) -> String {
    result.result.as_str().unwrap_or_default().to_string()
}

/// The call's 400 ms timeout stops while the user takes 1.5 s to answer,
/// and the answer reaches the tool; the model's answer too.
#[tokio::test]
async fn a_call_waits_for_its_answer_without_spending_its_timeout() {
    let (_dir, host) = common::host(&["test_elicitation", "test_sampling"], GRANTED).await;
    let asker = Scripted::after(
        Duration::from_millis(1500),
        accept(&[("username", "ada"), ("email", "ada@example.com")]),
    );
    let options = live().with_asker(asker.clone());
    let asked = host
        .call("test_elicitation", json!({"message": "Who?"}), &options)
        .await
        .unwrap();
    assert!(!asked.is_error, "{:?}", asked.result);
    assert_eq!(
        text(&asked),
        r#"User response: action=accept, content={"email":"ada@example.com","username":"ada"}"#
    );
    let trace: Vec<String> = asked.trace.logs.iter().map(|l| l.message.clone()).collect();
    assert!(
        trace.iter().any(|l| l == "asked the user: Who?")
            && trace.iter().any(|l| l == "the user answered"),
        "{trace:?}"
    );
    let sampled = host
        .call("test_sampling", json!({"prompt": "hi"}), &options)
        .await
        .unwrap();
    assert_eq!(text(&sampled), "LLM response: you said: hi");
}

/// Without a grant, or without anyone to ask, the tool gets an error that
/// says why (and the call reports it as the tool's failure).
#[tokio::test]
async fn a_question_is_refused_without_a_grant_or_someone_to_ask() {
    let (_dir, host) = common::host(&["test_elicitation"], "").await;
    let asker = Scripted::after(Duration::ZERO, ElicitAnswer::Cancel);
    let ungranted = host
        .call(
            "test_elicitation",
            json!({"message": "Who?"}),
            &live().with_asker(asker),
        )
        .await
        .unwrap();
    assert!(ungranted.is_error);
    assert!(
        text(&ungranted).contains(r#"may not ask the user: the operator grants it with `ask = ["user"]` in [tools.test_elicitation]"#),
        "{}",
        text(&ungranted)
    );

    let (_dir, host) = common::host(&["test_elicitation", "test_sampling"], GRANTED).await;
    let nobody = host
        .call("test_elicitation", json!({"message": "Who?"}), &live())
        .await
        .unwrap();
    assert!(nobody.is_error);
    assert!(
        text(&nobody).contains("this surface cannot ask"),
        "{}",
        text(&nobody)
    );
}

/// An answer that does not fit the form never reaches the tool.
#[tokio::test]
async fn an_answer_that_does_not_fit_the_form_is_refused() {
    let (_dir, host) = common::host(&["test_elicitation", "test_sampling"], GRANTED).await;
    let asker = Scripted::after(Duration::ZERO, accept(&[("username", "ada")]));
    let result = host
        .call(
            "test_elicitation",
            json!({"message": "Who?"}),
            &live().with_asker(asker),
        )
        .await
        .unwrap();
    assert!(result.is_error);
    assert!(
        text(&result).contains("the answer does not fit the form")
            && text(&result).contains("email"),
        "{}",
        text(&result)
    );
}

/// A question waits at most `ask_timeout_ms`.
#[tokio::test]
async fn a_question_waits_at_most_the_ask_timeout() {
    let config = format!("[limits]\nask_timeout_ms = 300\n{GRANTED}");
    let (_dir, host) = common::host(&["test_elicitation", "test_sampling"], &config).await;
    let never = Arc::new(Scripted {
        delay: Duration::ZERO,
        release: Some(Arc::new(Notify::new())),
        answer: ElicitAnswer::Cancel,
        asked: Notify::new(),
    });
    let result = host
        .call(
            "test_elicitation",
            json!({"message": "Who?"}),
            &live().with_asker(never),
        )
        .await
        .unwrap();
    assert!(result.is_error);
    assert!(
        text(&result).contains(
            "no answer came within 300 ms: a call's questions wait 300 ms in all (ask_timeout_ms)"
        ),
        "{}",
        text(&result)
    );
}

/// With `max_asking_calls = 1`, a second call asking while the first
/// waits is refused at once, and the host still runs other calls.
#[tokio::test]
async fn calls_waiting_for_answers_cannot_hold_every_slot() {
    let config = format!(
        "[limits]\nmax_concurrent_calls = 2\nmax_asking_calls = 1\n{}",
        GRANTED.replace("timeout_ms = 400", "timeout_ms = 10000")
    );
    let (_dir, host) = common::host(&["test_elicitation", "test_sampling", "echo"], &config).await;
    let release = Arc::new(Notify::new());
    let held = Arc::new(Scripted {
        delay: Duration::ZERO,
        release: Some(release.clone()),
        answer: accept(&[("username", "a"), ("email", "b")]),
        asked: Notify::new(),
    });
    let host = Arc::new(host);
    let first = {
        let (host, held) = (host.clone(), held.clone());
        tokio::spawn(async move {
            host.call(
                "test_elicitation",
                json!({"message": "first"}),
                &live().with_asker(held),
            )
            .await
        })
    };
    // Once the first call is asked, it holds the host's only asking slot.
    held.asked.notified().await;
    let at_once = Scripted::after(Duration::ZERO, accept(&[("username", "c"), ("email", "d")]));
    let second = host
        .call(
            "test_elicitation",
            json!({"message": "second"}),
            &live().with_asker(at_once),
        )
        .await
        .unwrap();
    assert!(second.is_error);
    assert!(
        text(&second).contains(
            "all 1 of the host's slots for calls waiting for an answer are taken (max_asking_calls)"
        ),
        "{}",
        text(&second)
    );
    let echo = host
        .call("echo", json!({"text": "still here"}), &live())
        .await
        .unwrap();
    assert_eq!(echo.result, json!("still here"));
    release.notify_one();
    let first = first.await.unwrap().unwrap();
    assert!(!first.is_error, "{:?}", first.result);
}
