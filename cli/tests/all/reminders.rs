//! Reminders (`toolhost:tool/reminders`): scheduled in a stored session,
//! kept across a restart, fired once (a message as a `user.message` event,
//! a call through the pipeline with the tool's policy and `origin`), and
//! refused where the grant, the effect, the session or the bounds say no.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::call::UnattendedReminderCalls;
use toolhost::session::{Event, EventKind, NewSession, SessionStore};
use toolhost::{CallOptions, Host, Session};

const GRANTED: &str = "[tools.reminder_probe]\nreminders = { tools = [\"reminder_probe\", \"echo\", \"gone\"] }\n\
                       [tools.echo]\npermission = \"always_ask\"\n";

/// A host directory's store of sessions.
fn open_store(dir: &Path) -> Arc<SessionStore> {
    Arc::new(SessionStore::open(dir.join(".toolhost/sessions"), Duration::from_secs(3600)).unwrap())
}

/// The host of `dir` with its store attached and its reminders firing (the
/// task stops when the returned handle is aborted).
async fn serving(dir: &Path) -> (Arc<Host>, Arc<SessionStore>, tokio::task::JoinHandle<()>) {
    let host = Arc::new(common::load(dir).await);
    let store = open_store(dir);
    host.attach_sessions(store.clone());
    let calls = Arc::new(UnattendedReminderCalls("approve over HTTP".into()));
    let firing = tokio::spawn(host.clone().fire_reminders(calls));
    (host, store, firing)
}

/// Run the probe and return what it answered.
async fn probe(host: &Host, input: Value, session: &Arc<Session>) -> Value {
    let options = CallOptions::new(session.clone());
    let result = host.call("reminder_probe", input, &options).await.unwrap();
    assert!(!result.is_error, "{:?}", result.result);
    result.result["result"].clone()
}

/// The first outcome of a schedule, which must have been refused: its error.
fn refusal(result: &Value) -> String {
    assert_eq!(result[0]["ok"], false, "{result}");
    result[0]["error"].as_str().unwrap().to_string()
}

/// Wait (up to 10 s) until `session` has `count` events of `kind`.
async fn wait_for(session: &Session, kind: EventKind, count: usize) -> Vec<Event> {
    for _ in 0..200 {
        let found: Vec<Event> = session
            .events()
            .kept(None)
            .into_iter()
            .filter(|e| e.kind == kind)
            .collect();
        if found.len() >= count {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no {count} {kind:?} events in 10 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_reminder_fires_once_even_across_a_restart() {
    let dir = common::host_dir(&["reminder_probe", "echo"], GRANTED);
    let (host, store, firing) = serving(dir.path()).await;
    let session = store
        .create(NewSession {
            auth: Some(json!({"user": "ada"})),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let id = session.id().to_string();

    let options = CallOptions::new(session.clone());
    let input = json!({"op": "message", "after_ms": 2000, "message": "stand-up"});
    let scheduled = host.call("reminder_probe", input, &options).await.unwrap();
    assert_eq!(scheduled.usage.reminders_scheduled, 1);
    let kept = &scheduled.result["result"][0]["value"];
    assert_eq!(kept["session"], id.as_str(), "{kept}");
    assert_eq!(kept["scheduledBy"], scheduled.call.id.as_str());
    let reminder = kept["id"].as_str().unwrap().to_string();
    let file = dir
        .path()
        .join(format!(".toolhost/sessions/{id}/reminders/{reminder}.json"));
    assert!(file.is_file(), "kept durably");
    let listed = probe(&host, json!({"op": "list", "effect": "read"}), &session).await;
    assert_eq!(listed["value"][0]["id"], reminder.as_str(), "{listed}");

    // The server stops before it is due, and starts again.
    firing.abort();
    drop((host, store, session));
    let (_host, store, firing) = serving(dir.path()).await;
    assert_eq!(store.reminders().pending(&id).len(), 1, "loaded again");
    let session = store.get(&id).unwrap();
    let messages = wait_for(&session, EventKind::UserMessage, 1).await;
    let data = messages[0].to_json()["data"].clone();
    assert_eq!(data["message"], "stand-up");
    assert_eq!(data["reminderId"], reminder.as_str());
    assert_eq!(
        data["origin"],
        format!("reminder({})", scheduled.call.id).as_str()
    );
    let fired = wait_for(&session, EventKind::ReminderFired, 1).await;
    assert_eq!(
        fired[0].to_json()["data"]["outcome"]["eventId"],
        messages[0].id
    );
    assert!(!file.exists(), "removed before it fired");

    // Once: not again, neither now nor after another restart.
    tokio::time::sleep(Duration::from_millis(500)).await;
    firing.abort();
    drop(store);
    let (_host, store, firing) = serving(dir.path()).await;
    assert!(store.reminders().pending(&id).is_empty());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let session = store.get(&id).unwrap();
    assert!(
        session.events().kept(None).is_empty(),
        "nothing fired again"
    );
    firing.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_call_runs_through_the_pipeline_with_its_policy() {
    let dir = common::host_dir(&["reminder_probe", "echo"], GRANTED);
    let (host, store, firing) = serving(dir.path()).await;
    let session = store.create(NewSession::default()).await.unwrap();

    let input = json!({"op": "call", "tool": "reminder_probe", "input": {"note": "later"}});
    let options = CallOptions::new(session.clone());
    let scheduled = host.call("reminder_probe", input, &options).await.unwrap();
    assert_eq!(
        scheduled.result["result"][0]["ok"], true,
        "{:?}",
        scheduled.result
    );
    let origin = format!("reminder({})", scheduled.call.id);
    // It fires at once, while the scheduling call may still hold the
    // session's write slot: the reminder's call waits for it.
    let fired = wait_for(&session, EventKind::ReminderFired, 1).await;
    let with_origin = |kind: EventKind| -> Vec<Value> {
        session
            .events()
            .kept(None)
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.to_json()["data"].clone())
            .filter(|data| data["origin"] == origin.as_str())
            .collect()
    };
    let requested = with_origin(EventKind::ActionsRequested);
    assert_eq!(requested.len(), 1, "{requested:?}");
    let results = with_origin(EventKind::ActionResult);
    assert_eq!(results.len(), 1, "{results:?}");
    let fired_call = &results[0];
    assert_eq!(fired_call["result"]["note"], "later", "{fired_call}");
    assert_eq!(fired_call["callId"], requested[0]["callId"]);
    let outcome = &fired[0].to_json()["data"]["outcome"];
    assert_eq!(outcome["callId"], fired_call["callId"], "{outcome}");
    assert_eq!(outcome["isError"], false);

    // `always_ask` still asks: here nobody can approve, so it is refused.
    let input = json!({"op": "call", "tool": "echo", "input": {"text": "hi"}});
    probe(&host, input, &session).await;
    let fired = wait_for(&session, EventKind::ReminderFired, 2).await;
    let outcome = &fired[1].to_json()["data"]["outcome"];
    assert_eq!(outcome["error"]["code"], "approval_required", "{outcome}");
    assert!(
        outcome["error"]["message"]
            .as_str()
            .unwrap()
            .contains("approve over HTTP"),
        "{outcome}"
    );
    firing.abort();
}

#[tokio::test]
async fn schedules_are_refused_where_the_grant_the_call_or_the_bounds_say_no() {
    let dir = common::host_dir(&["reminder_probe", "echo"], GRANTED);
    let (host, store, firing) = serving(dir.path()).await;
    firing.abort();
    let session = store.create(NewSession::default()).await.unwrap();
    let schedule = |extra: Value| {
        let mut input = json!({"op": "message", "message": "m", "after_ms": 3_600_000});
        input
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        input
    };

    let cases = [
        (json!({"effect": "read"}), "the call is a read"),
        (
            json!({"after_ms": 400u64 * 86_400_000}),
            "at most 366 days ahead",
        ),
        (json!({"at": "2030-01-01T00:00:00"}), "has no timezone"),
        (json!({"message": "x".repeat(65537)}), "65537 bytes"),
        (
            json!({"op": "call", "tool": "trap", "input": {}}),
            "may not schedule calls of \"trap\": its grant `reminders.tools` lists",
        ),
        (
            json!({"op": "call", "tool": "gone", "input": {}}),
            "there is no tool `gone` on this host",
        ),
        (
            json!({"op": "call", "tool": "echo", "input": {"text": 5}}),
            "invalid input for tool `echo`",
        ),
    ];
    for (extra, expected) in cases {
        let input = schedule(extra.clone());
        let error = refusal(&probe(&host, input, &session).await);
        assert!(error.contains(expected), "{extra}: {error}");
    }
    assert!(store.reminders().pending(session.id()).is_empty());

    // A session of one call takes none.
    let scratch = common::live().session;
    let error = refusal(&probe(&host, schedule(json!({})), &scratch).await);
    assert!(error.contains("ends with the call"), "{error}");

    // Sixty-four pending a session; cancelling frees a place.
    let result = probe(&host, schedule(json!({"times": 65})), &session).await;
    let outcomes = result.as_array().unwrap();
    assert!(outcomes[..64].iter().all(|o| o["ok"] == true));
    let error = outcomes[64]["error"].as_str().unwrap();
    assert!(error.contains("64 reminders pending already"), "{error}");
    let first = outcomes[0]["value"]["id"].as_str().unwrap();
    let cancel = json!({"op": "cancel", "id": first});
    assert_eq!(probe(&host, cancel.clone(), &session).await["value"], true);
    assert_eq!(probe(&host, cancel, &session).await["value"], false);
    assert_eq!(store.reminders().pending(session.id()).len(), 63);

    // No grant, and no store.
    let (_dir, bare) = common::host(&["reminder_probe"], "").await;
    bare.attach_sessions(store.clone());
    let error = refusal(&probe(&bare, schedule(json!({})), &session).await);
    assert!(error.contains("reminders are not granted"), "{error}");
    let (_dir, lone) = common::host(&["reminder_probe", "echo"], GRANTED).await;
    let error = refusal(&probe(&lone, schedule(json!({})), &session).await);
    assert!(error.contains("this host keeps no sessions"), "{error}");
}

#[tokio::test]
async fn a_sessions_reminders_end_with_it() {
    let dir = common::host_dir(&["reminder_probe", "echo"], GRANTED);
    let (host, _, firing) = serving(dir.path()).await;
    firing.abort();
    let store = Arc::new(
        SessionStore::open(dir.path().join(".toolhost/sessions"), Duration::ZERO).unwrap(),
    );
    host.attach_sessions(store.clone());
    let session = store.create(NewSession::default()).await.unwrap();
    let input = json!({"op": "message", "message": "m", "after_ms": 3_600_000});
    probe(&host, input, &session).await;
    std::thread::sleep(Duration::from_millis(5));
    assert!(
        store.sweep().await.unwrap().is_empty(),
        "a pending reminder keeps it"
    );
    let id = store.reminders().pending(session.id())[0].id.clone();
    assert!(store.reminders().cancel(session.id(), &id).unwrap());
    assert_eq!(store.sweep().await.unwrap(), vec![session.id().to_string()]);
    assert!(
        !dir.path()
            .join(".toolhost/sessions")
            .join(session.id())
            .exists()
    );
}

/// A tool granted reminders of itself cannot keep itself running (issue
/// 45, attack 5): a chain of reminders, each call scheduling the next, ends
/// after `MAX_CHAIN` calls with a refusal naming the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_of_reminders_ends_at_its_limit() {
    use toolhost::session::reminders::MAX_CHAIN;
    let config = "[tools.reminder_probe]\nreminders = { tools = [\"reminder_probe\"] }\n";
    let dir = common::host_dir(&["reminder_probe"], config);
    let (host, store, firing) = serving(dir.path()).await;
    let session = store.create(NewSession::default()).await.unwrap();
    let started = probe(&host, json!({"op": "loop", "times": 1}), &session).await;
    assert_eq!(started[0]["ok"], true, "{started}");
    let chain = usize::try_from(MAX_CHAIN).unwrap();
    let fired = wait_for(&session, EventKind::ReminderFired, chain).await;
    // The last call of the chain was refused its next reminder.
    let last_call = fired[chain - 1].to_json()["data"]["outcome"]["callId"]
        .as_str()
        .unwrap()
        .to_string();
    let results = wait_for(&session, EventKind::ActionResult, chain + 1).await;
    let last = results
        .iter()
        .map(Event::to_json)
        .find(|e| e["data"]["callId"] == last_call.as_str())
        .unwrap();
    let refused = last["data"]["result"]["result"][0]["error"]
        .as_str()
        .unwrap();
    assert!(
        refused.contains(&format!("a chain of {MAX_CHAIN} reminders")),
        "{refused}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        session
            .events()
            .kept(None)
            .iter()
            .filter(|e| e.kind == EventKind::ReminderFired)
            .count(),
        chain,
        "nothing fired after the chain ended"
    );
    assert!(store.reminders().pending(session.id()).is_empty());
    firing.abort();
}

/// A burst of reminders that re-arm themselves runs at its session's rate,
/// at most 4 calls at once on the server (counted in `/metrics`), and
/// ending the session stops it at once: the calls running in it and its
/// pending reminders, for good (a restart fires none).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ending_a_session_stops_its_reminders_and_their_calls_for_good() {
    let config = "[tools.reminder_probe]\nreminders = { tools = [\"reminder_probe\"] }\n";
    let server = crate::serve::start(&["reminder_probe"], config).await;
    let alice = json!({"user": "alice"});
    let session = server.session(json!({"auth": alice})).await;
    let id = session["id"].as_str().unwrap().to_string();
    let (status, out) = server
        .call(
            "reminder_probe",
            json!({"input": {"op": "loop", "times": 64}, "sessionId": id, "auth": alice}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{out}");

    let figure = |text: &str, name: &str| -> u64 {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(0, |v| v as u64)
    };
    let mut deferred = 0;
    for _ in 0..200 {
        let metrics = server.metrics().await;
        assert!(
            figure(&metrics, "toolhost_reminder_calls_running") <= 4,
            "{metrics}"
        );
        deferred = figure(&metrics, "toolhost_reminders_deferred_total");
        if deferred > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(deferred > 0, "the session's budget held the loop back");

    let url = server.url(&format!("/sessions/{id}"));
    let ended = server
        .auth(server.client.delete(url))
        .header("toolhost-auth", alice.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(
        ended.status(),
        reqwest::StatusCode::NO_CONTENT,
        "{}",
        ended.text().await.unwrap()
    );
    let fired = |text: &str| figure(text, "toolhost_reminders_fired_total{action=\"call\"}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = fired(&server.metrics().await);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let metrics = server.metrics().await;
    assert_eq!(
        fired(&metrics),
        before,
        "no reminder fired after the session ended"
    );
    assert_eq!(figure(&metrics, "toolhost_reminder_calls_running"), 0);

    let restarted = crate::serve::start_in(server.into_dir()).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let metrics = restarted.metrics().await;
    assert_eq!(fired(&metrics), 0, "nothing fires after a restart");
    let (status, _) = restarted.get(&format!("/sessions/{id}")).await;
    assert_eq!(status, reqwest::StatusCode::NOT_FOUND);
}
