use super::*;
use crate::config::state::{Backend, StateSettings};
use crate::session::{Event, EventData, EventKind, SlotRefused};
use toolhost_test_artifacts::redis::RedisServer;

struct Fleet {
    a: SessionStore,
    b: SessionStore,
    root: tempfile::TempDir,
    _server: RedisServer,
}

/// A store of keys in the Redis `server` runs.
fn redis_store(server: &RedisServer) -> Arc<RedisStore> {
    let settings = StateSettings {
        backend: Backend::Redis,
        redis_url: Some(server.url()),
        ..StateSettings::default()
    };
    RedisStore::open_with_key(&settings, &crate::redis_store::TEST_CLUSTER_KEY).unwrap()
}

fn fleet(retention: Duration) -> Option<Fleet> {
    let server = RedisServer::start()?;
    let root = tempfile::tempdir().unwrap();
    let open = || {
        let redis = redis_store(&server);
        let terms = LeaseTerms::new(Duration::from_secs(2));
        SessionStore::open_shared(
            root.path(),
            retention,
            HistoryBudget::default(),
            redis,
            terms,
        )
        .unwrap()
    };
    Some(Fleet {
        a: open(),
        b: open(),
        root,
        _server: server,
    })
}

#[tokio::test]
async fn a_session_made_on_one_server_binds_on_another() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let ada = json!({"user": "ada"});
    let made = fleet
        .a
        .create(NewSession {
            channel: Some("gh".into()),
            key: Some("PR-1".into()),
            mode: SessionMode::DryRun,
            auth: Some(ada.clone()),
            pin: Some(AgentPin {
                name: "default".into(),
                version: 2,
            }),
            ..NewSession::default()
        })
        .await
        .unwrap();
    assert!(
        !fleet.root.path().join(made.id()).join(RECORD_FILE).exists(),
        "the record is in Redis, not in the shared folder"
    );
    let bound = fleet
        .b
        .bind(None, Some("gh:PR-1"), Some(&ada))
        .await
        .unwrap();
    assert!(!bound.scratch);
    assert_eq!(bound.session.id(), made.id());
    assert_eq!(bound.session.mode(), SessionMode::DryRun);
    assert_eq!(
        bound.session.workspace().unwrap(),
        made.workspace().unwrap()
    );
    let bob = json!({"user": "bob"});
    let stranger = fleet.b.bind(Some(made.id()), None, Some(&bob)).await;
    assert_eq!(stranger.unwrap_err().code(), "session_forbidden");

    let taken = fleet
        .b
        .create(NewSession {
            channel: Some("gh".into()),
            key: Some("PR-1".into()),
            ..NewSession::default()
        })
        .await;
    assert!(
        matches!(&taken, Err(StoreError::TokenTaken { session, .. }) if session == made.id()),
        "one token, one session across the fleet"
    );

    fleet
        .a
        .repin(
            &made,
            AgentPin {
                name: "default".into(),
                version: 3,
            },
        )
        .await
        .unwrap();
    let seen = fleet.b.find(made.id()).await.unwrap().unwrap();
    assert_eq!(
        seen.pin().map(|p| p.version),
        Some(3),
        "an upgrade on A is seen on B"
    );
    assert_eq!(fleet.b.list().await.unwrap().len(), 1);
}

#[tokio::test]
async fn one_write_slot_across_the_fleet() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let made = fleet.a.create(NewSession::default()).await.unwrap();
    let on_b = fleet.b.find(made.id()).await.unwrap().unwrap();
    assert!(!Arc::ptr_eq(&made, &on_b), "each server has its own copy");

    let held = made.write_slot().await.unwrap();
    assert!(matches!(on_b.write_slot().await, Err(SlotRefused::Busy)));
    assert!(fleet.b.is_busy(&on_b).await.unwrap(), "B sees A's call");
    let ended = fleet.b.remove(made.id()).await;
    assert!(matches!(ended, Err(RemoveError::Busy { .. })), "{ended:?}");
    drop(held);
    let mut taken = None;
    for _ in 0..100 {
        if let Ok(slot) = on_b.write_slot().await {
            taken = Some(slot);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        taken.is_some(),
        "a released slot is free for another server"
    );
}

#[tokio::test]
async fn ending_a_session_on_one_server_ends_it_everywhere() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let made = fleet
        .a
        .create(NewSession {
            channel: Some("slack".into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let token = made.continuation_token().unwrap();
    let dir = made.workspace().unwrap().to_path_buf();
    fleet.b.remove(made.id()).await.unwrap();
    assert!(!dir.exists(), "its workspace goes with it");
    assert!(fleet.a.find(made.id()).await.unwrap().is_none());
    assert!(fleet.a.get(made.id()).is_none(), "A forgets its copy");
    assert!(fleet.a.by_token(&token).await.unwrap().is_none());
    let again = fleet.b.remove(made.id()).await;
    assert!(
        matches!(again, Err(RemoveError::NotFound { .. })),
        "{again:?}"
    );
}

#[tokio::test]
async fn the_fleet_sweeps_each_idle_session_once_and_keeps_busy_and_reminded_ones() {
    let Some(fleet) = fleet(Duration::ZERO) else {
        return;
    };
    let idle = fleet.a.create(NewSession::default()).await.unwrap();
    let busy = fleet.a.create(NewSession::default()).await.unwrap();
    let reminded = fleet.a.create(NewSession::default()).await.unwrap();
    let _held = busy.write_slot().await.unwrap();
    let due = Utc::now() + chrono::Duration::hours(1);
    fleet.a.keep_until(reminded.id(), due).await.unwrap();
    let dir = idle.workspace().unwrap().to_path_buf();
    tokio::time::sleep(Duration::from_millis(5)).await;

    let (on_a, on_b) = tokio::join!(fleet.a.sweep(), fleet.b.sweep());
    let mut swept = on_a.unwrap();
    swept.extend(on_b.unwrap());
    assert_eq!(
        swept,
        vec![idle.id().to_string()],
        "removed by exactly one server"
    );
    assert!(!dir.exists());
    let left: Vec<String> = fleet
        .b
        .list()
        .await
        .unwrap()
        .iter()
        .map(|listed| listed.session.id().to_string())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.contains(&busy.id().to_string()) && left.contains(&reminded.id().to_string()));
}

#[tokio::test]
async fn the_fleet_keeps_at_most_its_sessions() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let Fleet { a, b, .. } = fleet;
    let (a, b) = (a.with_max_sessions(2), b.with_max_sessions(2));
    a.create(NewSession::default()).await.unwrap();
    b.create(NewSession::default()).await.unwrap();
    let err = a.create(NewSession::default()).await.unwrap_err();
    assert!(matches!(err, StoreError::Full { max: 2 }), "{err}");
}

/// The next event `followed` gives, within 5 s.
async fn next(followed: &mut futures::stream::BoxStream<'static, Event>) -> Event {
    use futures::StreamExt as _;
    tokio::time::timeout(Duration::from_secs(5), followed.next())
        .await
        .expect("an event in time")
        .expect("the stream goes on")
}

#[tokio::test]
async fn events_recorded_on_one_server_are_read_and_followed_on_another() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let on_a = fleet.a.create(NewSession::default()).await.unwrap();
    let on_b = fleet.b.find(on_a.id()).await.unwrap().unwrap();
    let event = |n: u64| EventData::Json(json!({ "n": n }));
    on_a.events().emit(EventKind::UserMessage, event(1));
    let second = on_a.events().append(EventKind::UserMessage, event(2)).await;
    assert_eq!(
        second.unwrap(),
        2,
        "emitted before on A, so appended before"
    );
    let third = on_b
        .events()
        .append(EventKind::ReminderFired, event(3))
        .await;
    assert_eq!(third.unwrap(), 3, "one sequence for the fleet");

    let kept = on_b.events().since(None).await.unwrap();
    let seen: Vec<(u64, EventKind, Value)> = kept
        .iter()
        .map(|e| (e.id, e.kind, e.to_json()["data"]["n"].clone()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (1, EventKind::UserMessage, json!(1)),
            (2, EventKind::UserMessage, json!(2)),
            (3, EventKind::ReminderFired, json!(3)),
        ]
    );
    assert_eq!(on_b.events().since(Some(2)).await.unwrap().len(), 1);
    let got = on_a.events().get(2).await.unwrap().unwrap();
    assert_eq!(got.to_json()["data"]["n"], 2);
    assert!(on_a.events().get(9).await.unwrap().is_none());

    let mut followed = on_b.follow_events(Some(1));
    assert_eq!(
        next(&mut followed).await.id,
        2,
        "replayed after Last-Event-ID"
    );
    assert_eq!(next(&mut followed).await.id, 3);
    let started = std::time::Instant::now();
    on_a.events().emit(EventKind::UserMessage, event(4));
    let live = next(&mut followed).await;
    assert_eq!(
        (live.id, live.to_json()["data"]["n"].clone()),
        (4, json!(4))
    );
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "woken by the feed, not the 1 s re-read: {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn following_a_session_ends_once_another_server_ends_it() {
    use futures::StreamExt as _;

    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let on_a = fleet.a.create(NewSession::default()).await.unwrap();
    let on_b = fleet.b.find(on_a.id()).await.unwrap().unwrap();
    let mut followed = on_b.follow_events(None);
    fleet.a.remove(on_a.id()).await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(5), followed.next()).await;
    assert!(
        matches!(ended, Ok(None)),
        "the stream ends with its session"
    );
}

#[tokio::test]
async fn a_sessions_stream_is_held_to_its_bytes_and_goes_with_it() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let redis = redis_store(&server);
    let root = tempfile::tempdir().unwrap();
    // Each event below holds 256 + ~1 KiB: five fit in 8 KiB.
    let store = store_with_history(root.path(), &redis, 8 << 10, 1 << 20);
    let session = store.create(NewSession::default()).await.unwrap();
    let text = "x".repeat(1000);
    for n in 1..=20 {
        let data = EventData::Json(json!({ "n": n, "text": text }));
        session
            .events()
            .append(EventKind::UserMessage, data)
            .await
            .unwrap();
    }
    let kept = session.events().since(None).await.unwrap();
    let ids: Vec<u64> = kept.iter().map(|e| e.id).collect();
    assert_eq!(ids, (15..=20).collect::<Vec<u64>>(), "the newest that fit");
    let all_bytes = || async {
        redis::cmd("GET")
            .arg(redis.key("evbytes", &[]))
            .query_async::<Option<i64>>(&mut redis.connection())
            .await
            .unwrap()
            .unwrap_or(0)
    };
    assert!(all_bytes().await <= 8 << 10);
    store.remove(session.id()).await.unwrap();
    assert_eq!(all_bytes().await, 0, "its bytes are given back");
    let stream_left: bool = redis::cmd("EXISTS")
        .arg(redis.key("events", &[session.id()]))
        .query_async(&mut redis.connection())
        .await
        .unwrap();
    assert!(!stream_left, "its stream is gone");
}

/// A store over `redis` whose event histories hold `session_bytes` each
/// and `every_bytes` together.
fn store_with_history(
    root: &Path,
    redis: &Arc<RedisStore>,
    session_bytes: usize,
    every_bytes: usize,
) -> SessionStore {
    SessionStore::open_shared(
        root,
        Duration::from_secs(3600),
        HistoryBudget::new(session_bytes, every_bytes),
        redis.clone(),
        LeaseTerms::new(Duration::from_secs(2)),
    )
    .unwrap()
}

async fn append_kib(session: &Session, n: u64) -> u64 {
    let data = EventData::Json(json!({ "n": n, "text": "x".repeat(1000) }));
    session
        .events()
        .append(EventKind::UserMessage, data)
        .await
        .unwrap()
}

async fn kept_ids(session: &Session) -> Vec<u64> {
    let kept = session.events().since(None).await.unwrap();
    kept.iter().map(|e| e.id).collect()
}

#[tokio::test]
async fn the_fleets_history_budget_trims_the_stalest_stream_and_never_the_new_event() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let redis = redis_store(&server);
    let root = tempfile::tempdir().unwrap();
    // Each event holds 256 + ~1 KiB: five fit in the fleet's 8 KiB.
    let store = store_with_history(root.path(), &redis, 1 << 20, 8 << 10);
    let stale = store.create(NewSession::default()).await.unwrap();
    for n in 1..=5 {
        append_kib(&stale, n).await;
    }
    let busy = store.create(NewSession::default()).await.unwrap();
    for n in 1..=3 {
        append_kib(&busy, n).await;
    }
    assert_eq!(
        kept_ids(&busy).await,
        vec![1, 2, 3],
        "the new stream keeps all"
    );
    assert_eq!(
        kept_ids(&stale).await,
        vec![3, 4, 5],
        "the stale one gave way"
    );

    let alone = store.create(NewSession::default()).await.unwrap();
    let big = EventData::Json(json!({ "text": "y".repeat(20 << 10) }));
    let id = alone
        .events()
        .append(EventKind::UserMessage, big)
        .await
        .unwrap();
    assert_eq!(
        kept_ids(&alone).await,
        vec![id],
        "an event over the budget is kept"
    );
    assert!(kept_ids(&stale).await.is_empty() && kept_ids(&busy).await.is_empty());
    assert_eq!(append_kib(&busy, 4).await, 4, "the others go on appending");
    assert_eq!(kept_ids(&busy).await, vec![4]);
    assert!(kept_ids(&alone).await.is_empty(), "the big one went next");
}

#[tokio::test]
async fn events_emitted_together_are_appended_in_order_in_batches() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let session = fleet.a.create(NewSession::default()).await.unwrap();
    for n in 1..=150 {
        let data = EventData::Json(json!({ "n": n }));
        session.events().emit(EventKind::UserMessage, data);
    }
    let last = session
        .events()
        .append(EventKind::UserMessage, EventData::Json(json!({ "n": 151 })))
        .await
        .unwrap();
    assert_eq!(last, 151, "after every event emitted before it");
    let on_b = fleet.b.find(session.id()).await.unwrap().unwrap();
    let kept = on_b.events().since(None).await.unwrap();
    let order: Vec<(u64, u64)> = kept
        .iter()
        .map(|e| (e.id, e.to_json()["data"]["n"].as_u64().unwrap()))
        .collect();
    let expected: Vec<(u64, u64)> = (1..=151).map(|n| (n, n)).collect();
    assert_eq!(order, expected);
}

#[tokio::test]
async fn a_session_ended_elsewhere_takes_no_write_and_no_event() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let on_a = fleet.a.create(NewSession::default()).await.unwrap();
    let on_b = fleet.b.find(on_a.id()).await.unwrap().unwrap();
    fleet.a.remove(on_a.id()).await.unwrap();
    assert!(
        matches!(on_b.write_slot().await, Err(SlotRefused::Ended)),
        "B's copy cannot take the slot of an ended session"
    );
    let appended = on_b
        .events()
        .append(EventKind::UserMessage, EventData::Json(json!({})))
        .await;
    assert!(appended.is_err(), "nor record an event in it");
    let redis = fleet.a.shared.as_ref().unwrap().connection();
    let left: Vec<String> = redis::cmd("KEYS")
        .arg(format!("*{}*", on_a.id()))
        .query_async(&mut redis.clone())
        .await
        .unwrap();
    assert!(left.is_empty(), "nothing of it is left in Redis: {left:?}");
}

#[tokio::test]
async fn waiting_for_the_slot_waits_for_a_call_on_another_server() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let on_a = fleet.a.create(NewSession::default()).await.unwrap();
    let on_b = fleet.b.find(on_a.id()).await.unwrap().unwrap();
    let held = on_a.write_slot().await.unwrap();
    let waited = tokio::time::timeout(Duration::from_millis(400), on_b.write_slot_free()).await;
    assert!(waited.is_err(), "B waits while A's call holds the slot");
    drop(held);
    tokio::time::timeout(Duration::from_secs(2), on_b.write_slot_free())
        .await
        .expect("B sees the slot free once A lets it go");
}

#[tokio::test]
async fn a_listing_says_which_sessions_are_busy_and_when_each_was_last_active() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let running = fleet.a.create(NewSession::default()).await.unwrap();
    let reminded = fleet.a.create(NewSession::default()).await.unwrap();
    let _held = running.write_slot().await.unwrap();
    let due = Utc::now() + chrono::Duration::hours(5);
    fleet.a.keep_until(reminded.id(), due).await.unwrap();
    let listed = fleet.b.list().await.unwrap();
    let busy: Vec<(String, bool)> = listed
        .iter()
        .map(|l| (l.session.id().to_string(), l.busy))
        .collect();
    assert_eq!(
        busy,
        vec![
            (running.id().to_string(), true),
            (reminded.id().to_string(), false)
        ]
    );
    for l in &listed {
        assert!(
            l.session.last_active() <= Utc::now(),
            "a reminder's due time is not an activity"
        );
    }
}

fn reminder(session: &str, id: &str, in_ms: i64) -> Reminder {
    Reminder::sample(id, session, in_ms)
}

#[tokio::test]
async fn reminders_set_on_one_server_are_listed_cancelled_and_taken_once_by_the_fleet() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let (a, b) = (Arc::new(fleet.a), Arc::new(fleet.b));
    let session = a.create(NewSession::default()).await.unwrap();
    let id = session.id().to_string();
    a.schedule_reminder(reminder(&id, "rem_later", 3_600_000))
        .await
        .unwrap();
    for n in 0..20 {
        let due = reminder(&id, &format!("rem_{n:02}"), -1);
        a.schedule_reminder(due).await.unwrap();
    }
    let listed = b.pending_reminders(&id).await.unwrap();
    assert_eq!(listed.len(), 21, "B lists what A set");
    assert_eq!(
        listed.last().map(|r| r.id.as_str()),
        Some("rem_later"),
        "soonest first"
    );
    let next = b.next_reminder_due().await.unwrap();
    assert!(next <= Utc::now(), "due now, though B set none");

    let (on_a, on_b) = tokio::join!(a.take_due_reminders(), b.take_due_reminders());
    let mut taken: Vec<String> = on_a.iter().chain(&on_b).map(|r| r.id.clone()).collect();
    taken.sort();
    let expected: Vec<String> = (0..20).map(|n| format!("rem_{n:02}")).collect();
    assert_eq!(
        taken, expected,
        "each due reminder taken by exactly one server"
    );
    assert!(a.take_due_reminders().await.is_empty());

    assert!(
        !a.cancel_reminder("ses_other", "rem_later").await.unwrap(),
        "not its session"
    );
    assert!(b.cancel_reminder(&id, "rem_later").await.unwrap());
    assert!(a.pending_reminders(&id).await.unwrap().is_empty());
    assert!(!b.cancel_reminder(&id, "rem_later").await.unwrap(), "once");
}

#[tokio::test]
async fn a_sessions_reminders_are_capped_fleet_wide_and_go_with_it() {
    use crate::session::reminders::MAX_PENDING_PER_SESSION;

    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let (a, b) = (Arc::new(fleet.a), Arc::new(fleet.b));
    let session = a.create(NewSession::default()).await.unwrap();
    let id = session.id().to_string();
    for n in 0..MAX_PENDING_PER_SESSION {
        let store = if n % 2 == 0 { &a } else { &b };
        store
            .schedule_reminder(reminder(&id, &format!("rem_{n}"), 60_000))
            .await
            .unwrap();
    }
    let err = a
        .schedule_reminder(reminder(&id, "rem_more", 60_000))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("reminders pending already"),
        "{err}"
    );
    b.remove(&id).await.unwrap();
    assert!(a.pending_reminders(&id).await.unwrap().is_empty());
    let shared = a.shared.as_ref().unwrap();
    let left: usize = redis::cmd("ZCARD")
        .arg(shared.reminders().pending_key())
        .query_async(&mut shared.connection())
        .await
        .unwrap();
    assert_eq!(left, 0, "none left in the fleet's set");
}

#[tokio::test]
async fn a_record_in_redis_naming_a_folder_outside_is_ignored() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let made = fleet.a.create(NewSession::default()).await.unwrap();
    let shared = fleet.b.shared.as_ref().unwrap();
    let mut record = Record::of(&made);
    record.id = "../precious".into();
    redis::cmd("SET")
        .arg(shared.record_key(made.id()))
        .arg(serde_json::to_string(&record).unwrap())
        .query_async::<()>(&mut shared.connection())
        .await
        .unwrap();
    assert!(fleet.b.find(made.id()).await.unwrap().is_none());
    assert!(fleet.b.list().await.unwrap().is_empty());
}

/// Attack F1 of issue 45: a member planted in the fleet's set of sessions
/// names a folder outside the store, and every server's sweep would have
/// removed it; a member that is not a session id names nothing.
#[tokio::test]
async fn a_planted_member_of_the_sessions_set_removes_nothing_outside() {
    let Some(fleet) = fleet(Duration::from_millis(1)) else {
        return;
    };
    let precious = fleet.root.path().join("precious");
    std::fs::create_dir_all(&precious).unwrap();
    std::fs::write(precious.join("keep"), "x").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("keep"), "x").unwrap();
    let shared = fleet.b.shared.as_ref().unwrap();
    for member in [
        "precious".to_string(),
        "../precious".to_string(),
        outside.path().display().to_string(),
    ] {
        redis::cmd("ZADD")
            .arg(shared.sessions_key())
            .arg(0)
            .arg(member)
            .query_async::<()>(&mut shared.connection())
            .await
            .unwrap();
    }
    fleet.b.sweep().await.unwrap();
    assert!(
        precious.join("keep").exists(),
        "the store's root is untouched"
    );
    assert!(
        outside.path().join("keep").exists(),
        "a folder elsewhere is untouched"
    );
}

/// Attack 1 of issue 45: a writer of Redis without the cluster key cannot
/// make a session record a server obeys: not by writing one, not by
/// changing a sealed one (its owner), not by copying one to another key.
#[tokio::test]
async fn session_records_a_server_did_not_seal_are_not_there() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let made = fleet
        .a
        .create(NewSession {
            auth: Some(serde_json::json!({"user": "victim"})),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let other = fleet.a.create(NewSession::default()).await.unwrap();
    let shared = fleet.b.shared.as_ref().unwrap();
    let mut connection = shared.connection();
    let sealed: String = redis::cmd("GET")
        .arg(shared.record_key(made.id()))
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(
        fleet.b.find(made.id()).await.unwrap().unwrap().auth(),
        Some(&serde_json::json!({"user": "victim"}))
    );
    let mut record = Record::of(&made);
    record.auth = Some(serde_json::json!({"user": "mallory"}));
    let plain = serde_json::to_string(&record).unwrap();
    let changed = format!("{}{plain}", &sealed[..64]);
    let mut moved = Record::of(&made);
    moved.id = other.id().to_string();
    let copied = format!(
        "{}{}",
        &sealed[..64],
        serde_json::to_string(&moved).unwrap()
    );
    for (id, value) in [
        (made.id(), plain.clone()),
        (made.id(), changed),
        (other.id(), sealed.clone()),
        (other.id(), copied),
    ] {
        let key = shared.record_key(id);
        redis::cmd("SET")
            .arg(&key)
            .arg(value)
            .query_async::<()>(&mut connection)
            .await
            .unwrap();
        let c = SessionStore::open_shared(
            fleet.root.path(),
            Duration::from_secs(3600),
            HistoryBudget::default(),
            redis_store(&fleet._server),
            LeaseTerms::new(Duration::from_secs(2)),
        )
        .unwrap();
        assert!(c.find(id).await.unwrap().is_none(), "{key}");
    }
}

/// A continuation token's key is not sealed: pointed at a session on
/// another channel, it leads nowhere.
#[tokio::test]
async fn a_token_pointed_at_another_session_leads_nowhere() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let ops = fleet
        .a
        .create(NewSession {
            channel: Some("ops".into()),
            key: Some("o1".into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let shared = fleet.b.shared.as_ref().unwrap();
    redis::cmd("SET")
        .arg(shared.token_key("support:t1"))
        .arg(ops.id())
        .query_async::<()>(&mut shared.connection())
        .await
        .unwrap();
    assert!(fleet.b.by_token("support:t1").await.unwrap().is_none());
    assert_eq!(
        fleet.b.by_token("ops:o1").await.unwrap().unwrap().id(),
        ops.id()
    );
}

#[tokio::test]
async fn a_store_whose_redis_is_gone_says_so() {
    let Some(mut fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let made = fleet.a.create(NewSession::default()).await.unwrap();
    fleet._server.kill();
    let err = fleet.b.bind(Some(made.id()), None, None).await.unwrap_err();
    assert_eq!(err.code(), "state_unavailable");
    assert!(err.to_string().contains("Redis at redis://"), "{err}");
    let refused = made.write_slot().await;
    assert!(
        matches!(refused, Err(SlotRefused::Unavailable(_))),
        "{refused:?}"
    );
}
