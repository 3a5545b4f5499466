//! A session's events across the fleet: recorded on one server, followed on
//! another, held to the fleet's history budget.

use super::*;

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
    SessionStore::open_fleet(
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
