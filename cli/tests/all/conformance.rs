//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in tests/conformance/package.json) against `toolhost serve`'s
//! `/mcp`, over the fixture components in tests/conformance/tools: every
//! server scenario (`--suite all`), failing on any failure that
//! tests/conformance/expected-failures.yml does not list, and on any entry
//! there that now passes.
//!
//! scripts/test installs the suite. Without it (or without Node.js) the test
//! skips, except under `CI=true`, where a missing toolchain is a failure.

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
"#;

#[test]
fn the_official_suite_passes_but_for_the_listed_failures() {
    let suite = suite_dir();
    let runner = suite.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let node = Command::new("node").arg("--version").output();
    if !runner.is_file() || node.is_err() {
        let missing = format!(
            "node or {} was not found: run scripts/test, or `npm ci --prefix tests/conformance`",
            runner.display()
        );
        if common::skip_missing_toolchain("the MCP conformance suite", &missing) {
            return;
        }
    }

    let tools = toolhost_test_artifacts::tools_dir(toolhost_test_artifacts::CONFORMANCE).unwrap();
    std::fs::write(tools.path().join("toolhost.toml"), GRANTS).unwrap();
    let served = common::process::serve(tools.path(), &[]);
    // The suite writes its results under the working directory.
    let results = tempfile::tempdir().unwrap();
    let out = Command::new("node")
        .arg(&runner)
        .args(["server", "--suite", "all", "--url"])
        .arg(format!("{}/mcp", served.url))
        .arg("--expected-failures")
        .arg(suite.join("expected-failures.yml"))
        .current_dir(results.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the conformance suite failed ({}):\n{stdout}\n{}\n--- toolhost serve:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        served.stderr()
    );
    println!("{stdout}");
}
