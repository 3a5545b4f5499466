//! Records planted in Redis or a Redis gone: nothing outside the store is
//! touched, nothing unsealed is believed, and the store says Redis is gone.

use super::*;

#[tokio::test]
async fn a_record_in_redis_naming_a_folder_outside_is_ignored() {
    let Some(fleet) = fleet(Duration::from_secs(3600)) else {
        return;
    };
    let made = fleet.a.create(NewSession::default()).await.unwrap();
    let shared = &fleet.keys;
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
    let shared = &fleet.keys;
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
    let shared = &fleet.keys;
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
        let c = SessionStore::open_fleet(
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
    let shared = &fleet.keys;
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
