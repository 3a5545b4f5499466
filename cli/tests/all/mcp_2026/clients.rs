//! The clients people use: the Python `mcp` 2.3 `Client` and the
//! TypeScript client v2, over stdio and HTTP, in both protocol families.

use crate::common::process;
use crate::common::{artifact, host_dir};

/// A host for tests/mcp/client_modern.py: the tools it calls, and the
/// spare tool its listen scenario copies in.
fn modern_client_host() -> tempfile::TempDir {
    let grants = "[tools.test_elicitation]\nask = [\"user\"]\n\n[tools.test_sampling]\nask = \
                  [\"model\"]\n\n[tools.ask_all]\nask = [\"user\", \"roots\"]\n";
    let dir = host_dir(
        &[
            "echo",
            "chatty",
            "test_elicitation",
            "test_sampling",
            "ask_all",
        ],
        grants,
    );
    std::fs::create_dir(dir.path().join("spare")).unwrap();
    std::fs::copy(
        artifact("word_count"),
        dir.path().join("spare/word_count.wasm"),
    )
    .unwrap();
    dir
}

/// Run tests/mcp/client_modern.py with `args`, expecting `all ok`.
fn run_modern_client(python: &std::path::Path, args: &[&str]) {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp/client_modern.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("all ok"),
        "the Python client ({args:?}) failed\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run tests/mcp/client_modern.mjs with `args`, expecting `all ok`; or
/// skip (fail under `CI=true`) without Node.js 22 and the client.
fn run_typescript_client(args: &[&str]) {
    let mcp = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp");
    let client = mcp.join("node_modules/@modelcontextprotocol/client/package.json");
    let node = std::process::Command::new("node").arg("--version").output();
    if !client.is_file() || node.is_err() {
        let missing = "node or tests/mcp/node_modules was not found: run scripts/test, or `npm \
                       ci --prefix tests/mcp` with Node.js 22 on PATH";
        if crate::common::skip_missing_toolchain("the TypeScript MCP client", missing) {
            return;
        }
    }
    let out = std::process::Command::new("node")
        .arg(mcp.join("client_modern.mjs"))
        .args(args)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("all ok"),
        "the TypeScript client ({args:?}) failed\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_typescript_client_speaks_2026_07_28_and_forced_2025_11_25_over_stdio_and_http() {
    let binary = env!("CARGO_BIN_EXE_toolhost");
    for mode in ["auto", "legacy"] {
        let dir = modern_client_host();
        run_typescript_client(&["stdio", binary, dir.path().to_str().unwrap(), mode]);

        let dir = modern_client_host();
        let served = process::serve(dir.path(), &[]);
        let url = format!("{}/mcp", served.url);
        run_typescript_client(&["http", &url, dir.path().to_str().unwrap(), mode]);
    }
}

#[test]
fn the_python_client_speaks_2026_07_28_and_forced_2025_11_25_over_stdio_and_http() {
    let Some(python) = crate::common::python() else {
        return;
    };
    let binary = env!("CARGO_BIN_EXE_toolhost");
    for mode in ["auto", "legacy"] {
        let dir = modern_client_host();
        let dir_arg = dir.path().to_str().unwrap();
        run_modern_client(&python, &["stdio", binary, dir_arg, mode]);

        let dir = modern_client_host();
        let served = process::serve(dir.path(), &[]);
        let url = format!("{}/mcp", served.url);
        let dir_arg = dir.path().to_str().unwrap();
        run_modern_client(&python, &["http", &url, "no-token", dir_arg, mode]);
    }
}
