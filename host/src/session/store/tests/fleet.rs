mod events;
mod hostile;
mod reminders;

use super::*;
use crate::redis_store::RedisOptions;
use crate::session::{Event, EventData, EventKind, SlotRefused};
use toolhost_test_artifacts::redis::RedisServer;

struct Fleet {
    a: SessionStore,
    b: SessionStore,
    /// The fleet's keys, as the stores name them, for a test to read or
    /// plant records.
    keys: FleetSessions,
    root: tempfile::TempDir,
    _server: RedisServer,
}

/// A store of keys in the Redis `server` runs.
fn redis_store(server: &RedisServer) -> Arc<RedisStore> {
    let settings = RedisOptions::new(server.url());
    RedisStore::open(&settings, &crate::redis_store::TEST_CLUSTER_KEY).unwrap()
}

fn fleet(retention: Duration) -> Option<Fleet> {
    let server = RedisServer::start()?;
    let root = tempfile::tempdir().unwrap();
    let open = || {
        let redis = redis_store(&server);
        let terms = LeaseTerms::new(Duration::from_secs(2));
        SessionStore::open_fleet(
            root.path(),
            retention,
            HistoryBudget::default(),
            redis,
            terms,
        )
        .unwrap()
    };
    let keys = FleetSessions::new(
        redis_store(&server),
        LeaseTerms::new(Duration::from_secs(2)),
        &HistoryBudget::default(),
    );
    Some(Fleet {
        a: open(),
        b: open(),
        keys,
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
    let redis = fleet.keys.connection();
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
