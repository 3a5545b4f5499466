use super::*;
use serde_json::json;

fn store(root: &Path) -> SessionStore {
    SessionStore::open(root, Duration::from_secs(3600)).unwrap()
}

#[tokio::test]
async fn sessions_survive_a_restart_with_their_tokens() {
    let root = tempfile::tempdir().unwrap();
    let id = {
        let store = store(root.path());
        let session = store
            .create(NewSession {
                channel: Some("slack".into()),
                key: Some("T1".into()),
                mode: SessionMode::DryRun,
                as_of: Some(parse_instant("2026-01-31T12:00:00Z").unwrap()),
                auth: Some(json!({"user": "ada"})),
                credentials: None,
                pin: Some(AgentPin {
                    name: "default".into(),
                    version: 3,
                }),
            })
            .await
            .unwrap();
        std::fs::write(session.workspace().unwrap().join("f"), "kept").unwrap();
        session.id().to_string()
    };
    let store = store(root.path());
    let bound = store
        .bind(None, Some("slack:T1"), Some(&json!({"user": "ada"})))
        .await
        .unwrap();
    assert!(!bound.scratch);
    assert_eq!(bound.session.id(), id);
    assert_eq!(bound.session.mode(), SessionMode::DryRun);
    assert!(bound.session.as_of().is_some());
    assert_eq!(bound.session.pin().map(|p| p.version), Some(3));
    let file = bound.session.workspace().unwrap().join("f");
    assert_eq!(std::fs::read_to_string(file).unwrap(), "kept");
}

#[tokio::test]
async fn a_record_naming_another_folder_is_skipped_and_never_swept() {
    let root = tempfile::tempdir().unwrap();
    let sessions = root.path().join("sessions");
    let outside = root.path().join("precious");
    std::fs::create_dir_all(&outside).unwrap();
    let id = store(&sessions)
        .create(NewSession::default())
        .await
        .unwrap()
        .id()
        .to_string();
    let record = sessions.join(&id).join(RECORD_FILE);
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(&record, text.replace(&id, "../precious")).unwrap();
    let reopened = SessionStore::open(&sessions, Duration::ZERO).unwrap();
    assert!(
        reopened.list().await.unwrap().is_empty(),
        "the record is skipped"
    );
    reopened.sweep().await.unwrap();
    assert!(
        outside.is_dir(),
        "nothing outside the sessions folder is removed"
    );
}

#[tokio::test]
async fn a_full_store_refuses_one_more_session() {
    let root = tempfile::tempdir().unwrap();
    let store = store(root.path()).with_max_sessions(2);
    for _ in 0..2 {
        store.create(NewSession::default()).await.unwrap();
    }
    let err = store.create(NewSession::default()).await.unwrap_err();
    assert!(matches!(err, StoreError::Full { max: 2 }), "{err}");
    assert!(err.to_string().contains("keeps 2 sessions already"));
}

#[tokio::test]
async fn binding_rules() {
    let root = tempfile::tempdir().unwrap();
    let store = store(root.path());
    let owned = store
        .create(NewSession {
            channel: Some("gh".into()),
            auth: Some(json!({"user": "ada"})),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let ada = json!({"user": "ada"});
    let token = owned.continuation_token().unwrap();

    let both = store.bind(Some(owned.id()), Some(&token), Some(&ada)).await;
    assert_eq!(both.unwrap_err().code(), "invalid_continuation_token");
    let bad = store.bind(None, Some("no-colon"), Some(&ada)).await;
    assert_eq!(bad.unwrap_err().code(), "invalid_continuation_token");
    let missing = store.bind(Some("ses_nope"), None, None).await;
    assert_eq!(missing.unwrap_err().code(), "session_not_found");
    let stranger = store
        .bind(Some(owned.id()), None, Some(&json!({"user": "bob"})))
        .await;
    assert_eq!(stranger.unwrap_err().code(), "session_forbidden");

    let by_token = store.bind(None, Some(&token), Some(&ada)).await.unwrap();
    assert_eq!(by_token.session.id(), owned.id());
    let unmapped = store.bind(None, Some("gh:other"), None).await.unwrap();
    assert!(unmapped.scratch);
    assert_eq!(unmapped.session.channel(), Some("gh"));
    assert_eq!(unmapped.session.key(), Some("other"));
    assert!(store.bind(None, None, None).await.unwrap().scratch);
}

#[tokio::test]
async fn a_token_names_one_session() {
    let root = tempfile::tempdir().unwrap();
    let store = store(root.path());
    let new = || NewSession {
        channel: Some("gh".into()),
        key: Some("42".into()),
        ..NewSession::default()
    };
    store.create(new()).await.unwrap();
    assert!(matches!(
        store.create(new()).await,
        Err(StoreError::TokenTaken { .. })
    ));
    let bad = store
        .create(NewSession {
            channel: Some("a:b".into()),
            ..NewSession::default()
        })
        .await;
    assert!(matches!(bad, Err(StoreError::Invalid(_))));
}

#[tokio::test]
async fn idle_sessions_are_swept_with_their_workspace() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::open(root.path(), Duration::ZERO).unwrap();
    let session = store.create(NewSession::default()).await.unwrap();
    let dir = session.workspace().unwrap().to_path_buf();
    let held = session.try_write_slot().unwrap();
    std::thread::sleep(Duration::from_millis(5));
    assert!(
        store.sweep().await.unwrap().is_empty(),
        "a busy session is kept"
    );
    drop(held);
    assert_eq!(store.sweep().await.unwrap(), vec![session.id().to_string()]);
    assert!(!dir.exists());
    assert!(store.get(session.id()).is_none());
}

/// Two servers' stores over one Redis and one sessions folder.
mod fleet;

/// A stored session's folders may sit in a fleet's shared folder: one
/// swapped for a link is never used (a tool granted the workspace would
/// otherwise work wherever the link points).
#[tokio::test]
async fn a_stored_sessions_folder_swapped_for_a_link_is_not_used() {
    let root = tempfile::tempdir().unwrap();
    let store = store(root.path());
    let session = store.create(NewSession::default()).await.unwrap();
    let workspace = session.workspace().unwrap().to_path_buf();
    let outside = tempfile::tempdir().unwrap();
    std::fs::remove_dir_all(&workspace).unwrap();
    std::os::unix::fs::symlink(outside.path(), &workspace).unwrap();
    let err = session.workspace().unwrap_err().to_string();
    assert!(err.contains("is a link"), "{err}");
    assert!(crate::session::workspace_files::list(&session).is_err());
}

/// A call still ending in a session that was ended (its write slot gone)
/// makes none of its folder again: no reminder, record or workspace for a
/// restart to load; a folder left half-removed by a crash is removed.
#[tokio::test]
async fn an_ended_session_leaves_nothing_a_restart_loads() {
    let root = tempfile::tempdir().unwrap();
    let store = store(root.path());
    let session = store.create(NewSession::default()).await.unwrap();
    let id = session.id().to_string();
    store
        .reminders()
        .schedule(Reminder::sample("r_1", &id, 60_000))
        .unwrap();
    let record = std::fs::read(root.path().join(&id).join(RECORD_FILE)).unwrap();
    store.remove(&id).await.unwrap();

    let late = store
        .reminders()
        .schedule(Reminder::sample("r_2", &id, 0))
        .unwrap_err();
    assert!(late.to_string().contains("has ended"), "{late}");
    assert!(
        session.workspace().is_err(),
        "the workspace is not made again"
    );
    let pin = AgentPin {
        name: "default".into(),
        version: 2,
    };
    let err = store.repin(&session, pin).await.unwrap_err();
    assert!(err.to_string().contains("has ended"), "{err:#}");
    assert!(store.reminders().pending(&id).is_empty());
    let left: Vec<_> = std::fs::read_dir(root.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");

    let grave = root.path().join(format!("{ENDED_PREFIX}{id}"));
    std::fs::create_dir_all(grave.join("reminders")).unwrap();
    std::fs::write(grave.join(RECORD_FILE), record).unwrap();
    let reopened = SessionStore::open(root.path(), Duration::from_secs(3600)).unwrap();
    assert!(reopened.list().await.unwrap().is_empty());
    assert!(!grave.exists(), "a half-removed folder is removed on open");
}

/// Reminders scheduled while the session is being ended never outlive it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reminders_scheduled_while_a_session_ends_do_not_outlive_it() {
    let root = tempfile::tempdir().unwrap();
    for round in 0..20 {
        let store = Arc::new(store(root.path()));
        let session = store.create(NewSession::default()).await.unwrap();
        let id = session.id().to_string();
        std::fs::write(session.workspace().unwrap().join("f"), [0; 4096]).unwrap();
        let scheduling = {
            let (store, id) = (store.clone(), id.clone());
            std::thread::spawn(move || {
                for n in 0.. {
                    let reminder = Reminder::sample(&format!("r_{round}_{n}"), &id, 60_000);
                    if store.reminders().schedule(reminder).is_err() {
                        break;
                    }
                    if n % 2 == 1 {
                        let earlier = format!("r_{round}_{}", n - 1);
                        let _ = store.reminders().cancel(&id, &earlier);
                    }
                }
            })
        };
        std::thread::sleep(Duration::from_millis(2));
        store.remove(&id).await.unwrap();
        scheduling.join().unwrap();
        assert!(store.reminders().pending(&id).is_empty(), "round {round}");
        drop(store);
        let reopened = SessionStore::open(root.path(), Duration::from_secs(3600)).unwrap();
        assert!(reopened.list().await.unwrap().is_empty(), "round {round}");
        assert!(reopened.reminders().next_due().is_none(), "round {round}");
    }
}
