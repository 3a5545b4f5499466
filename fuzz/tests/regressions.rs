//! Replays every file in `fuzz/regressions/<target>/` (inputs that once
//! broke toolhost) and every checked-in seed: each must pass its target.

use toolhost_fuzz::{corpus, runner, targets};

fn replay(name: &str) {
    let target = targets::find(name).expect("a target by that name");
    let dirs = [corpus::regression_dir(name), corpus::seed_dir(name)];
    let mut count = 0;
    for dir in &dirs {
        for (path, input) in corpus::files(dir).expect("readable corpus") {
            if let Err(message) = runner::replay(target, input).expect("the replay runs") {
                panic!("{} fails again: {message}", path.display());
            }
            count += 1;
        }
    }
    assert!(count > 0, "no seeds for {name} in {}", dirs[1].display());
}

#[test]
fn tool_input() {
    replay("tool_input");
}

#[test]
fn config() {
    replay("config");
}

#[test]
fn http_request() {
    replay("http_request");
}

#[test]
fn mcp_message() {
    replay("mcp_message");
}

#[test]
fn component() {
    replay("component");
}
