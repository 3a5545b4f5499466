use super::*;

#[test]
fn events_are_numbered_and_replayable() {
    let log = EventLog::default();
    log.emit(EventKind::ActionsRequested, EventData::Json(Value::Null));
    log.emit(EventKind::ActionResult, EventData::Json(Value::Null));
    assert_eq!(log.kept(None).len(), 2);
    let after_first = log.kept(Some(1));
    assert_eq!(after_first.len(), 1);
    assert_eq!(after_first[0].id, 2);
    assert_eq!(
        log.kept_event(2).map(|e| e.kind),
        Some(EventKind::ActionResult)
    );
    assert!(log.kept_event(3).is_none());
    assert!(log.kept_event(0).is_none());
}

#[test]
fn old_events_are_pruned() {
    let log = EventLog::default();
    log.emit(EventKind::ActionsRequested, EventData::Json(Value::Null));
    assert_eq!(
        log.prune_before(Utc::now() + chrono::Duration::seconds(1)),
        1
    );
    assert!(log.kept(None).is_empty());
    let next = log.record(EventKind::ActionResult, EventData::Json(Value::Null));
    assert_eq!(next.id, 2, "ids keep counting after a prune");
}

fn result(call: usize, output_bytes: u64) -> EventData {
    EventData::Result(Arc::new(CallResult {
        ok: true,
        call: crate::envelope::CallRef {
            id: format!("call_{call}"),
            tool: "big".into(),
            origin: None,
            agent: crate::session::AgentPin {
                name: "default".into(),
                version: 1,
            },
        },
        is_error: false,
        result: Value::Null,
        duration_ms: 0,
        stubbed: false,
        attempts: 1,
        scratch_workspace: false,
        output: crate::output::ToolOutput::default(),
        usage: Usage {
            output_bytes,
            ..Usage::default()
        },
        trace: CallTrace::default(),
    }))
}

#[test]
fn a_history_keeps_ids_and_outcomes_when_it_drops_payloads_past_its_bytes() {
    let (log, _) = log_with_own_total();
    for call in 0..40 {
        log.emit(EventKind::ActionResult, result(call, 1 << 20));
    }
    let history = log.history.lock().unwrap();
    assert!(
        history.bytes <= MAX_SESSION_HISTORY_BYTES,
        "{}",
        history.bytes
    );
    assert_eq!(history.events.len(), 40, "every event is kept");
    drop(history);
    let events = log.kept(None);
    let first = events[0].to_json();
    assert_eq!(first["data"]["payloadDropped"], true, "{first}");
    assert_eq!(first["data"]["callId"], "call_0");
    assert_eq!(first["data"]["usage"]["outputBytes"], 1 << 20);
    let last = events[39].to_json();
    assert!(last["data"].get("payloadDropped").is_none(), "{last}");
    assert_eq!(last["data"]["callId"], "call_39");
}

/// A log with the default caps counted apart from the process's, so
/// tests running beside it do not move its total.
fn log_with_own_total() -> (EventLog, HistoryBudget) {
    let budget = HistoryBudget::new(MAX_SESSION_HISTORY_BYTES, MAX_HISTORY_BYTES);
    (EventLog::with_budget(budget.clone()), budget)
}

#[test]
fn events_with_nothing_to_drop_go_whole_past_the_bytes() {
    let (log, _) = log_with_own_total();
    let refused = || {
        EventData::Refused(Arc::new(CallRefused {
            ok: false,
            call: crate::call::CallRef {
                id: "call".into(),
                tool: "t".into(),
                origin: None,
                agent: crate::session::AgentPin {
                    name: "default".into(),
                    version: 1,
                },
            },
            error: Value::String("x".repeat(MAX_SESSION_HISTORY_BYTES / 4)),
        }))
    };
    for _ in 0..8 {
        log.emit(EventKind::ActionResult, refused());
    }
    let history = log.history.lock().unwrap();
    assert!(history.bytes <= MAX_SESSION_HISTORY_BYTES);
    assert!(history.events.len() < 8);
    assert_eq!(history.events.back().map(|e| e.id), Some(8));
}

#[test]
fn every_history_together_is_bounded_and_a_dropped_one_gives_its_bytes_back() {
    let (first, budget) = log_with_own_total();
    first.emit(EventKind::ActionResult, result(0, 1 << 20));
    assert!(budget.held() >= 2 << 20);
    drop(first);
    assert_eq!(budget.held(), 0);

    // Twenty sessions of 15 MiB each are past the 256 MiB of every
    // history together: the later ones drop their own payloads.
    let shared: Vec<EventLog> = (0..20)
        .map(|_| EventLog::with_budget(budget.clone()))
        .collect();
    for log in &shared {
        for call in 0..15 {
            log.emit(EventKind::ActionResult, result(call, 512 << 10));
        }
    }
    assert!(
        budget.held() <= MAX_HISTORY_BYTES + (2 << 20),
        "{}",
        budget.held()
    );
}

#[test]
fn a_budget_of_its_own_holds_its_histories_to_its_bytes() {
    let budget = HistoryBudget::new(4 << 20, 6 << 20);
    let logs: Vec<EventLog> = (0..3)
        .map(|_| EventLog::with_budget(budget.clone()))
        .collect();
    for log in &logs {
        for call in 0..8 {
            log.emit(EventKind::ActionResult, result(call, 512 << 10));
        }
        assert!(log.history.lock().unwrap().bytes <= 4 << 20);
    }
    assert!(budget.held() <= (6 << 20) + (2 << 20), "{}", budget.held());
    drop(logs);
    assert_eq!(budget.held(), 0);
}

#[test]
fn kind_names_match_their_json() {
    for kind in [
        EventKind::ActionsRequested,
        EventKind::ActionResult,
        EventKind::ApprovalRequested,
        EventKind::ApprovalResolved,
        EventKind::CustomToolUse,
        EventKind::CustomToolResult,
        EventKind::Elicitation,
        EventKind::ElicitationResult,
        EventKind::Sampling,
        EventKind::SamplingResult,
    ] {
        assert_eq!(serde_json::to_value(kind).unwrap(), kind.name());
    }
}
