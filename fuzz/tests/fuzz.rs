//! Runs every target for a bounded time on stable Rust (`TOOLHOST_FUZZ_SECS`,
//! default 60 under `CI=true`, else 10) from the seed corpus, printing each
//! target's executions. A test fails if its target crashed (the input is
//! in `fuzz/artifacts/<target>/`) or ran fewer inputs than its minimum.

use std::io::Write as _;

use toolhost_fuzz::runner::{self, Options};
use toolhost_fuzz::targets;

fn fuzz(name: &str) {
    let target = targets::find(name).expect("a target by that name");
    let report = runner::run(target, &Options::from_env()).expect("the run starts");
    // Straight to stderr, past the test harness's capture: CI logs show it.
    let _ = writeln!(std::io::stderr(), "{report}");
    assert!(report.passed(), "{report}");
}

#[test]
fn tool_input() {
    fuzz("tool_input");
}

#[test]
fn config() {
    fuzz("config");
}

#[test]
fn http_request() {
    fuzz("http_request");
}

#[test]
fn mcp_message() {
    fuzz("mcp_message");
}

#[test]
fn component() {
    fuzz("component");
}
