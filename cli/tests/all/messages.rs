//! Sessions on channels (`toolhost:tool/sessions`): a send starts or
//! resumes a session and appends a `user.message` event to it, only on
//! granted channels, never in a read call, never into another principal's
//! session, within the message and per-call bounds, and only on a host a
//! server attached its sessions to.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::session::{EventKind, SessionStore};
use toolhost::{CallOptions, Host, SessionSpec};

const GRANTED: &str = "[tools.session_probe]\nsessions = [\"support\", \"ops-*\"]\n";

/// A host running the probe under `config`, with a session store attached.
async fn host_with_store(config: &str) -> (tempfile::TempDir, Host, Arc<SessionStore>) {
    let (dir, host) = common::host(&["session_probe"], config).await;
    let store = Arc::new(
        SessionStore::open(dir.path().join("sessions"), Duration::from_secs(3600)).unwrap(),
    );
    host.attach_sessions(store.clone());
    (dir, host, store)
}

/// Options for a call in a fresh session owned by `user`.
fn as_user(user: &str) -> CallOptions {
    common::session(SessionSpec {
        auth: Some(json!({"user": user, "token": format!("{user}-secret")})),
        ..SessionSpec::default()
    })
}

/// Run the probe and return its answer and the call's receipt count of
/// messages sent.
async fn probe(host: &Host, input: Value, options: &CallOptions) -> (Value, u32) {
    let result = host.call("session_probe", input, options).await.unwrap();
    assert!(!result.is_error, "{:?}", result.result);
    (result.result.clone(), result.usage.messages_sent)
}

/// The one send's outcome of a probe's answer.
fn sent(answer: &Value) -> &Value {
    assert_eq!(answer["sent"].as_array().map(Vec::len), Some(1), "{answer}");
    &answer["sent"][0]
}

/// The message events of `session`, as JSON.
fn messages(store: &SessionStore, session: &str) -> Vec<Value> {
    store
        .get(session)
        .unwrap()
        .events()
        .kept(None)
        .into_iter()
        .filter(|e| e.kind == EventKind::UserMessage)
        .map(|e| e.to_json())
        .collect()
}

#[tokio::test]
async fn a_send_starts_or_resumes_a_session_and_appends_a_user_message() {
    let (_dir, host, store) = host_with_store(GRANTED).await;
    let ada = as_user("ada");

    let input = json!({"channel": "support", "message": "hello", "key": "T1"});
    let (answer, counted) = probe(&host, input.clone(), &ada).await;
    let first = sent(&answer);
    assert_eq!(first["ok"], true, "{first}");
    assert_eq!(first["started"], true);
    assert_eq!(first["eventId"], 1);
    assert_eq!(first["session"]["continuationToken"], "support:T1");
    assert_eq!(first["session"]["mode"], "live");
    assert_eq!(counted, 1);
    let id = first["session"]["id"].as_str().unwrap().to_string();
    let started = store.by_token("support:T1").await.unwrap().unwrap();
    assert_eq!(started.id(), id);
    assert_eq!(
        started.auth(),
        Some(&json!({"user": "ada"})),
        "owned by the sender's principal, never its credentials"
    );

    let events = messages(&store, &id);
    assert_eq!(events.len(), 1, "{events:?}");
    let data = &events[0]["data"];
    assert_eq!(events[0]["type"], "user.message");
    assert_eq!(data["message"], "hello");
    assert_eq!(data["channel"], "support");
    assert_eq!(data["auth"], json!({"user": "ada"}));
    assert_eq!(data["from"]["tool"], "session_probe");
    assert_eq!(data["from"]["sessionId"], ada.session.id());

    // The same key resumes it, and so does its id.
    let (answer, _) = probe(&host, input, &ada).await;
    assert_eq!(sent(&answer)["started"], false);
    assert_eq!(sent(&answer)["eventId"], 2);
    assert_eq!(sent(&answer)["session"]["id"], id.as_str());
    let by_id = json!({"channel": "support", "message": "again", "session_id": id});
    let (answer, _) = probe(&host, by_id, &ada).await;
    assert_eq!(sent(&answer)["eventId"], 3, "{answer}");
    let wrong_channel = json!({"channel": "ops-eu", "message": "x", "session_id": id});
    let (answer, _) = probe(&host, wrong_channel, &ada).await;
    let error = sent(&answer)["error"].as_str().unwrap();
    assert!(
        error.contains(&format!("no session \"{id}\" on channel \"ops-eu\"")),
        "{error}"
    );
    assert_eq!(messages(&store, &id).len(), 3);

    // Looked up by its owner, on its channel only.
    let lookup = |channel: &str| json!({"channel": channel, "session_id": id});
    let (answer, _) = probe(&host, lookup("support"), &ada).await;
    assert_eq!(answer["found"]["key"], "T1", "{answer}");
    let (answer, _) = probe(&host, lookup("ops-eu"), &ada).await;
    assert_eq!(answer["found"], Value::Null, "{answer}");

    // Another principal neither finds it nor writes to it.
    let bob = as_user("bob");
    let (answer, _) = probe(&host, lookup("support"), &bob).await;
    assert_eq!(answer["found"], Value::Null, "{answer}");
    let intrude = json!({"channel": "support", "message": "hi", "key": "T1"});
    let (answer, _) = probe(&host, intrude, &bob).await;
    let error = sent(&answer)["error"].as_str().unwrap();
    assert!(error.contains("belongs to another principal"), "{error}");
    assert_eq!(messages(&store, &id).len(), 3);

    // A prefix pattern; no key starts a new session with a fresh one.
    let (answer, _) = probe(&host, json!({"channel": "ops-eu", "message": "m"}), &bob).await;
    let fresh = sent(&answer);
    assert_eq!(fresh["started"], true, "{fresh}");
    assert_eq!(fresh["session"]["channel"], "ops-eu");
    assert_ne!(fresh["session"]["key"], "");

    // A channel outside the grant.
    let (answer, _) = probe(&host, json!({"channel": "billing", "message": "m"}), &ada).await;
    let error = sent(&answer)["error"].as_str().unwrap();
    assert!(
        error.contains("may not reach sessions on channel \"billing\"")
            && error.contains("ops-*, support"),
        "{error}"
    );

    // Started sessions are stored: they outlive the store.
    drop(store);
    let reopened =
        SessionStore::open(_dir.path().join("sessions"), Duration::from_secs(3600)).unwrap();
    assert_eq!(
        reopened.by_token("support:T1").await.unwrap().unwrap().id(),
        id
    );
}

#[tokio::test]
async fn read_calls_look_up_but_never_send_and_sends_are_bounded() {
    let (_dir, host, store) = host_with_store(GRANTED).await;
    let ada = as_user("ada");

    let read = json!({"effect": "read", "channel": "support", "message": "m", "key": "K"});
    let (answer, _) = probe(&host, read, &ada).await;
    let error = sent(&answer)["error"].as_str().unwrap();
    assert!(error.contains("the call is a read"), "{error}");
    assert!(
        store.by_token("support:K").await.unwrap().is_none(),
        "nothing started"
    );
    let lookup = json!({"effect": "read", "channel": "support", "session_id": "ses_none"});
    let (answer, _) = probe(&host, lookup, &ada).await;
    assert_eq!(
        (&answer["ok"], &answer["found"]),
        (&json!(true), &Value::Null)
    );

    // Sixteen sends a call; the seventeenth is refused and still counted.
    let many = json!({"channel": "support", "message": "m", "key": "K", "times": 17});
    let (answer, counted) = probe(&host, many, &ada).await;
    let outcomes = answer["sent"].as_array().unwrap();
    assert!(outcomes[..16].iter().all(|o| o["ok"] == true), "{answer}");
    let error = outcomes[16]["error"].as_str().unwrap();
    assert!(error.contains("sent 16 messages already"), "{error}");
    assert_eq!(counted, 17);
    let id = store
        .by_token("support:K")
        .await
        .unwrap()
        .unwrap()
        .id()
        .to_string();
    assert_eq!(messages(&store, &id).len(), 16);

    // A message past 64 KiB, and an `auth` that is not an object.
    let big = json!({"channel": "support", "message_bytes": 65537, "key": "K"});
    let (answer, _) = probe(&host, big, &ada).await;
    let error = sent(&answer)["error"].as_str().unwrap();
    assert!(error.contains("65537 bytes; at most 65536"), "{error}");
    let bad_auth = json!({"channel": "support", "message": "m", "auth": "ada"});
    let (answer, _) = probe(&host, bad_auth, &ada).await;
    let error = sent(&answer)["error"].as_str().unwrap();
    assert!(error.contains("`auth` must be a JSON object"), "{error}");
    let both = json!({"channel": "support", "message": "m", "key": "K", "session_id": id});
    let (answer, _) = probe(&host, both, &ada).await;
    let error = sent(&answer)["error"].as_str().unwrap();
    assert!(error.contains("not both"), "{error}");
    assert_eq!(messages(&store, &id).len(), 16);
}

#[tokio::test]
async fn without_a_grant_or_a_server_a_send_is_refused() {
    let input = json!({"channel": "support", "message": "m"});
    let (_dir, host, store) = host_with_store("").await;
    let (answer, _) = probe(&host, input.clone(), &common::live()).await;
    let error = sent(&answer)["error"].as_str().unwrap();
    assert!(
        error.contains("sessions are not granted to this tool"),
        "{error}"
    );
    assert!(store.list().await.unwrap().is_empty());

    let (_dir, host) = common::host(&["session_probe"], GRANTED).await;
    let (answer, _) = probe(&host, input, &common::live()).await;
    let error = sent(&answer)["error"].as_str().unwrap();
    assert!(error.contains("this host keeps no sessions"), "{error}");
}

#[test]
fn a_bad_channel_pattern_names_the_tool_and_the_pattern() {
    let dir = common::host_dir(
        &["session_probe"],
        "[tools.session_probe]\nsessions = [\"sup*port\"]\n",
    );
    let err = format!("{:#}", toolhost::Config::load(dir.path()).unwrap_err());
    assert!(
        err.contains("in [tools.session_probe]: invalid `sessions` grant")
            && err.contains("\"sup*port\" may have `*` only at its end"),
        "{err}"
    );
}

/// A tool sends as its call's principal: naming another in `auth`
/// (attack 6 of issue 45: mallory's call writing into the victim's
/// session as the victim) is refused unless its `send_as` grant names that
/// principal, and what it writes beside its own id is not kept.
#[tokio::test]
async fn a_tool_sends_as_its_calls_principal_unless_send_as_names_another() {
    let config = "[tools.session_probe]\nsessions = [\"*\"]\nsend_as = [\"support-bot\"]\n";
    let (_dir, host, store) = host_with_store(config).await;
    let victim = as_user("victim");
    let (answer, _) = probe(
        &host,
        json!({"channel": "support", "message": "my ticket", "key": "ticket-1"}),
        &victim,
    )
    .await;
    let id = sent(&answer)["session"]["id"].as_str().unwrap().to_string();

    let mallory = as_user("mallory");
    for auth in [json!({"user": "victim"}), json!({"email": "victim"})] {
        let forged = json!({
            "channel": "support", "message": "close it", "key": "ticket-1", "auth": auth,
        });
        let (answer, _) = probe(&host, forged, &mallory).await;
        let error = sent(&answer)["error"].as_str().unwrap();
        assert!(
            error.contains("may not send as \"victim\"")
                && error.contains("its call's principal (`mallory`)")
                && error.contains("(it names support-bot)"),
            "{error}"
        );
    }
    let anonymous = json!({
        "channel": "support", "message": "x", "key": "ticket-1", "auth": {"user": "victim"},
    });
    let (answer, _) = probe(&host, anonymous, &common::live()).await;
    assert!(
        sent(&answer)["error"]
            .as_str()
            .unwrap()
            .contains("its call's principal (none)"),
        "{answer}"
    );
    let nobody = json!({"channel": "support", "message": "x", "auth": {"token": "t"}});
    let (answer, _) = probe(&host, nobody, &mallory).await;
    assert!(
        sent(&answer)["error"]
            .as_str()
            .unwrap()
            .contains("`auth` names no principal"),
        "{answer}"
    );
    assert_eq!(messages(&store, &id).len(), 1, "nothing reached the victim");

    // Its own id, with a marker beside it: sent as the call's principal.
    let own = json!({
        "channel": "ops", "message": "m", "key": "K", "auth": {"user": "mallory", "via": "server-token"},
    });
    let (answer, _) = probe(&host, own, &mallory).await;
    let own_id = sent(&answer)["session"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        messages(&store, &own_id)[0]["data"]["auth"],
        json!({"user": "mallory"})
    );

    // Never the server's own marker or principals, whatever `send_as` says.
    let (_, host_any, store_any) =
        host_with_store("[tools.session_probe]\nsessions = [\"*\"]\nsend_as = [\"*\"]\n").await;
    let vouched = json!({
        "channel": "ops", "message": "m", "key": "V", "auth": {"principal": "server-token"},
    });
    let (answer, _) = probe(&host_any, vouched, &mallory).await;
    assert!(
        sent(&answer)["error"]
            .as_str()
            .unwrap()
            .contains("may not send as `server-token`"),
        "{answer}"
    );
    let marked = json!({
        "channel": "ops", "message": "m", "key": "W",
        "auth": {"user": "helper", "vouchedBy": "toolhost"},
    });
    let (answer, _) = probe(&host_any, marked, &mallory).await;
    let marked_id = sent(&answer)["session"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        messages(&store_any, &marked_id)[0]["data"]["auth"],
        json!({"user": "helper"})
    );

    // A principal `send_as` names, recorded with the tool and call behind it.
    let bot = json!({
        "channel": "alerts", "message": "disk full", "key": "A1",
        "auth": {"user": "support-bot", "token": "secret"},
    });
    let (answer, _) = probe(&host, bot, &mallory).await;
    let bot_id = sent(&answer)["session"]["id"].as_str().unwrap().to_string();
    let data = &messages(&store, &bot_id)[0]["data"];
    assert_eq!(data["auth"], json!({"user": "support-bot"}), "{data}");
    assert_eq!(data["from"]["tool"], "session_probe");
    assert_eq!(data["from"]["sessionId"], mallory.session.id());
    assert!(
        data["from"]["callId"]
            .as_str()
            .unwrap()
            .starts_with("call_")
    );
    assert_eq!(
        store.get(&bot_id).unwrap().auth(),
        Some(&json!({"user": "support-bot"})),
        "owned by the principal sent as, never its credentials"
    );
}
