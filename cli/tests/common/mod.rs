//! Shared set-up for the integration tests: host directories built from the
//! example tools and test guests compiled by `toolhost-test-artifacts`.

#![allow(dead_code)]

pub mod asker;
pub mod browser;
pub mod process;
pub mod server;
pub mod sse;
pub mod stdio_mcp;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolhost::{CallOptions, Host, Session, SessionSpec};

/// The `.wasm` of an example tool or test guest, by slug.
pub fn artifact(slug: &str) -> &'static str {
    toolhost_test_artifacts::find(slug).unwrap_or_else(|| panic!("no artifact named {slug}"))
}

/// A plain HTTP client (the process's TLS provider set once, as reqwest needs).
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// A compile cache shared by every test (entries are keyed by content).
pub fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("toolhost-test-cache")
}

/// The artifact `slug` with a custom section no other copy has: content no
/// compile cache holds, so loading it compiles it anew.
pub fn fresh_copy(slug: &str) -> Vec<u8> {
    static COPIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tag = format!(
        "{}-{}-{}",
        std::process::id(),
        COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let mut bytes = std::fs::read(artifact(slug)).expect("artifact");
    let name = b"toolhost-test-copy";
    let body_len = 1 + name.len() + tag.len();
    // Section id 0 (custom), LEB128 size (under 128 here), name, tag.
    assert!(body_len < 128);
    bytes.push(0);
    bytes.push(body_len as u8);
    bytes.push(name.len() as u8);
    bytes.extend_from_slice(name);
    bytes.extend_from_slice(tag.as_bytes());
    bytes
}

/// A host directory holding `tools` (by slug) and `config` as `toolhost.toml`.
pub fn host_dir(tools: &[&str], config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools_dir = dir.path().join("tools");
    std::fs::create_dir_all(&tools_dir).expect("tools dir");
    for slug in tools {
        std::fs::copy(artifact(slug), tools_dir.join(format!("{slug}.wasm"))).expect("copy tool");
    }
    std::fs::write(dir.path().join("toolhost.toml"), config).expect("config");
    dir
}

/// Load a host from a directory, with the shared compile cache.
pub async fn load(dir: &Path) -> Host {
    Host::builder(dir)
        .cache_dir(cache_dir())
        .build()
        .await
        .expect("host loads")
}

/// A host directory and its loaded host.
pub async fn host(tools: &[&str], config: &str) -> (tempfile::TempDir, Host) {
    let dir = host_dir(tools, config);
    let host = load(dir.path()).await;
    let registry = host.registry();
    let failures = registry.failures();
    assert!(
        failures.is_empty(),
        "unexpected load failures: {failures:?}"
    );
    (dir, host)
}

/// Options for a call in a fresh live session with a scratch workspace.
pub fn live() -> CallOptions {
    CallOptions::new(Arc::new(Session::ephemeral().expect("session")))
}

/// Options for a call in a session built from `spec`.
pub fn session(spec: SessionSpec) -> CallOptions {
    CallOptions::new(Arc::new(Session::open(spec).expect("session")))
}

/// Options for a call in a fresh dry-run session.
pub fn dry_run() -> CallOptions {
    session(SessionSpec {
        mode: toolhost::SessionMode::DryRun,
        ..SessionSpec::default()
    })
}

/// A Python with the `mcp` package (`$CARGO_TARGET_DIR/py`, where
/// scripts/test installs it, or `TOOLHOST_TEST_PYTHON`), or `None`: skip,
/// except under `CI=true`, where a missing toolchain is a failure.
pub fn python() -> Option<PathBuf> {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .to_path_buf();
    let candidates = std::env::var_os("TOOLHOST_TEST_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([target.join("py/bin/python")]);
    for python in candidates {
        let works = std::process::Command::new(&python)
            .args(["-c", "import mcp"])
            .status()
            .is_ok_and(|s| s.success());
        if works {
            return Some(python);
        }
    }
    let why = "no Python with the `mcp` package (scripts/test installs it into target/py)";
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
    eprintln!("skipping: {why}");
    None
}

/// Whether a build that failed with `stderr` only lacked its toolchain and
/// may be skipped: `true` (with a message) outside CI; under `CI=true` a
/// missing toolchain is a failure, so this panics.
pub fn skip_missing_toolchain(what: &str, stderr: &str) -> bool {
    if !stderr.contains("was not found") {
        return false;
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "{what}: a toolchain is missing under CI=true (scripts/test installs it):\n{stderr}"
        );
    }
    eprintln!("SKIPPED {what}: a toolchain is missing (scripts/test installs it):\n{stderr}");
    true
}
