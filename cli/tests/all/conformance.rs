//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in tests/conformance/package.json) against `toolhost serve`'s
//! `/mcp`, over the fixture components in tests/conformance/tools: the
//! server scenarios each protocol revision requires (`--requirements`),
//! failing on any failure or warning that the revision's baseline
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

/// The fixtures that ask the client's user or model are granted to.
const GRANTS: &str = r#"
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
"#;

#[test]
fn the_2025_11_25_requirements_pass_but_for_the_listed_failures() {
    run_requirements("2025-11-25", "expected-failures.yml");
}

#[test]
fn the_2026_07_28_requirements_pass_but_for_the_listed_failures() {
    run_requirements("2026-07-28", "expected-failures-2026-07-28.yml");
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
/// of the spare waits in `spare/` (a folder the host does not load).
fn lay_out_triggers(host: &Path) {
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
    let state = host.join(".toolhost");
    std::fs::create_dir(&state).unwrap();
    std::os::unix::fs::symlink(&tools, state.join("state-root")).unwrap();
}

/// Run the scenarios protocol revision `revision` requires against a fresh
/// `toolhost serve`, held to the baseline `baseline` in tests/conformance.
fn run_requirements(revision: &str, baseline: &str) {
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
    lay_out_triggers(tools.path());
    let served = common::process::serve(tools.path(), &[]);
    // The suite writes its results under the working directory.
    let results = tempfile::tempdir().unwrap();
    let out = Command::new("node")
        .arg(&runner)
        .args(["server", "--requirements", revision, "--url"])
        .arg(format!("{}/mcp", served.url))
        .arg("--expected-failures")
        .arg(suite.join(baseline))
        .current_dir(results.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the conformance suite's {revision} requirements failed ({}):\n{stdout}\n{}\n--- \
         toolhost serve:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        served.stderr()
    );
    println!("{stdout}");
}
