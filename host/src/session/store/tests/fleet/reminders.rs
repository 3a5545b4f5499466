//! The fleet's reminders: listed, cancelled and taken once, capped fleet-wide.

use super::*;

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
    let (a, b, keys) = (Arc::new(fleet.a), Arc::new(fleet.b), fleet.keys);
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
    let shared = &keys;
    let left: usize = redis::cmd("ZCARD")
        .arg(shared.reminders().pending_key())
        .query_async(&mut shared.connection())
        .await
        .unwrap();
    assert_eq!(left, 0, "none left in the fleet's set");
}
