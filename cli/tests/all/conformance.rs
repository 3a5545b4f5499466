//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in tests/conformance/package.json) against `toolhost serve`'s
//! `/mcp`, over the fixture components in tests/conformance/tools: the
//! server scenarios each protocol revision requires (`--requirements`) and
//! the Tasks extension's (by name), failing on any failure or warning that
//! the baseline
//! (tests/conformance/expected-failures*.yml) does not list, and on any
//! entry there that now passes.
//!
//! scripts/test installs the suite and Node.js 22+, which it needs. Without
//! them the test skips, except under `CI=true`, where a missing toolchain is
//! a failure.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// tests/conformance, where the suite, its baseline and the fixtures live.
fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance")
}

/// What the fixtures are granted: to ask the client's user, model or
/// roots, the state root, whether their calls may be tasks. A call that may
/// be a task becomes one after 300 ms, so `slow_compute` of one second is
/// one for certain.
const GRANTS: &str = r#"
[server]
task_after_ms = 300
[tools.test_sampling]
ask = ["model"]

[tools.test_elicitation]
ask = ["user"]

[tools.test_elicitation_sep1034_defaults]
ask = ["user"]

[tools.test_elicitation_sep1330_enums]
ask = ["user"]

[tools.test_missing_capability]
ask = ["model"]

[tools.test_streaming_elicitation]
ask = ["user"]

[tools.test_input_required_result_elicitation]
ask = ["user"]

[tools.test_input_required_result_sampling]
ask = ["model"]

[tools.test_input_required_result_request_state]
ask = ["user"]

[tools.test_input_required_result_multi_round]
ask = ["user"]

[tools.test_input_required_result_tampered_state]
ask = ["user"]

[tools.test_input_required_result_capabilities]
ask = ["model"]

[tools.test_input_required_result_list_roots]
ask = ["roots"]

[tools.test_input_required_result_multiple_inputs]
ask = ["user", "model", "roots"]

[tools.test_input_required_result_prompt]
ask = ["user"]

[tools.test_trigger_tool_change]
state = "write"

[tools.test_trigger_prompt_change]
state = "write"

[tools.greet]
task = "never"

[tools.slow_compute]
timeout_ms = 120000

[tools.failing_job]
task = "required"

[tools.protocol_error_job]
task = "required"

[tools.confirm_delete]
task = "required"
ask = ["user"]

[tools.multi_input]
task = "required"
ask = ["user"]

[tools.test_tool_with_task]
ask = ["user"]
"#;

#[test]
fn the_2025_11_25_requirements_pass_but_for_the_listed_failures() {
    run_requirements("2025-11-25", "expected-failures.yml");
}

#[test]
fn the_2026_07_28_requirements_pass_but_for_the_listed_failures() {
    run_requirements("2026-07-28", "expected-failures-2026-07-28.yml");
}

/// The Tasks extension's scenarios (`io.modelcontextprotocol/tasks`,
/// SEP-2663), which no revision requires, so the suite runs them only by
/// name: 0.2.0-alpha.12 has these ten (`tasks-status-notifications` skips
/// itself until the suite's listen rewrite).
const TASKS_SCENARIOS: [&str; 10] = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
    "tasks-status-notifications",
];

#[test]
fn the_tasks_extension_scenarios_pass() {
    let runs: Vec<Vec<&str>> = TASKS_SCENARIOS
        .iter()
        .map(|scenario| vec!["--scenario", scenario])
        .collect();
    run_suite("the Tasks extension", &runs, "expected-failures-tasks.yml");
}

/// The major version of the `node` on PATH, if there is one.
fn node_major() -> Option<u32> {
    let out = Command::new("node").arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&out.stdout);
    version
        .trim()
        .strip_prefix('v')?
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// The suite changes the tool and prompt lists by calling
/// `test_trigger_tool_change` and `test_trigger_prompt_change` (one
/// fixture under two names), which add or remove `test_trigger_spare`:
/// their state root (`state = "write"`) is the tools folder, where a copy
/// of the spare waits in `spare/` (a folder the host does not load). The
/// Tasks scenarios' `greet` is `tasks_greet` renamed.
fn lay_out_fixtures(host: &Path) {
    let tools = host.join("tools");
    std::fs::copy(
        tools.join("test_trigger_tool_change.wasm"),
        tools.join("test_trigger_prompt_change.wasm"),
    )
    .unwrap();
    std::fs::create_dir(tools.join("spare")).unwrap();
    std::fs::copy(
        tools.join("test_trigger_spare.wasm"),
        tools.join("spare/test_trigger_spare.wasm"),
    )
    .unwrap();
    // The Tasks scenarios call their sync-only tool `greet`, which is an
    // example tool's name too: the fixture is built as `tasks_greet`.
    std::fs::rename(tools.join("tasks_greet.wasm"), tools.join("greet.wasm")).unwrap();
    let state = host.join(".toolhost");
    std::fs::create_dir(&state).unwrap();
    std::os::unix::fs::symlink(&tools, state.join("state-root")).unwrap();
}

/// Run the scenarios protocol revision `revision` requires against a fresh
/// `toolhost serve`, held to the baseline `baseline` in tests/conformance.
fn run_requirements(revision: &str, baseline: &str) {
    let what = format!("the {revision} requirements");
    run_suite(&what, &[vec!["--requirements", revision]], baseline);
}

/// Run the suite once for each of `runs` (its arguments) against one fresh
/// `toolhost serve`, each held to the baseline `baseline` in
/// tests/conformance; `what` names them in a failure.
fn run_suite(what: &str, runs: &[Vec<&str>], baseline: &str) {
    let suite = suite_dir();
    let runner = suite.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    if !runner.is_file() || node_major().is_none_or(|major| major < 22) {
        let missing = format!(
            "Node.js 22+ or {} was not found: run scripts/test, or `npm ci --prefix \
             tests/conformance` with Node.js 22 on PATH",
            runner.display()
        );
        if common::skip_missing_toolchain("the MCP conformance suite", &missing) {
            return;
        }
    }

    let tools = toolhost_test_artifacts::tools_dir(toolhost_test_artifacts::CONFORMANCE).unwrap();
    std::fs::write(tools.path().join("toolhost.toml"), GRANTS).unwrap();
    lay_out_fixtures(tools.path());
    let served = common::process::serve(tools.path(), &[]);
    for args in runs {
        // The suite writes its results under the working directory.
        let results = tempfile::tempdir().unwrap();
        let out = Command::new("node")
            .arg(&runner)
            .arg("server")
            .args(args)
            .arg("--url")
            .arg(format!("{}/mcp", served.url))
            .arg("--expected-failures")
            .arg(suite.join(baseline))
            .current_dir(results.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "the conformance suite's {what} failed ({args:?}: {}):\n{stdout}\n{}\n--- \
             toolhost serve:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            served.stderr()
        );
        println!("{stdout}");
    }
}
