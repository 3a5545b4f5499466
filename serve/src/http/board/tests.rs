use super::*;

#[test]
fn the_waiting_cap_is_the_boards_own() {
    let board = Board::with_max_waiting(2);
    for n in 0..2 {
        assert!(
            board
                .park(&format!("call_{n}"), "t", "s", Status::AwaitingApproval)
                .is_some()
        );
    }
    assert!(
        board
            .park("call_2", "t", "s", Status::AwaitingCustomToolResult)
            .is_none()
    );
}

#[test]
fn a_call_that_stops_waiting_frees_its_place_at_once() {
    let board = Board::with_max_waiting(1);
    let parked = board
        .park("call_a", "t", "s", Status::AwaitingApproval)
        .expect("room for one");
    assert!(
        board
            .park("call_b", "t", "s", Status::AwaitingApproval)
            .is_none()
    );
    board.set_status(&parked, Status::Running, None);
    assert_eq!(board.waiting.load(Ordering::Relaxed), 0);
    assert!(
        board
            .park("call_b", "t", "s", Status::AwaitingCustomToolResult)
            .is_some(),
        "approved or answered, a call no longer counts as waiting"
    );
    board.set_status(&parked, Status::Running, None);
    assert_eq!(board.waiting.load(Ordering::Relaxed), 1, "counted once");
}

#[test]
fn a_full_board_refuses_one_more_waiting_call_and_forgets_gone_sessions() {
    let board = Board::default();
    for n in 0..MAX_WAITING_CALLS {
        let session = if n == 0 { "gone" } else { "kept" };
        let parked = board.park(&format!("call_{n}"), "t", session, Status::AwaitingApproval);
        assert!(parked.is_some(), "call {n} parks");
    }
    assert!(
        board
            .park("call_more", "t", "kept", Status::AwaitingApproval)
            .is_none()
    );
    assert!(
        board.park("call_1", "t", "kept", Status::Running).is_some(),
        "a call already parked moves on"
    );
    let outcome: Outcome = Err(Arc::new(CallError::Internal(anyhow::anyhow!("x"))));
    board.finish("call_0", &outcome);
    assert!(
        board
            .park("call_more", "t", "kept", Status::AwaitingApproval)
            .is_some(),
        "a finished call frees its place"
    );
    board.forget_sessions(&["gone".to_string()]);
    assert!(board.get("call_0").is_none(), "finished with its session");
    assert!(board.get("call_2").is_some());
}
