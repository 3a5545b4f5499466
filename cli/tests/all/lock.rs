//! `tools.lock`: a tool whose component, metadata or grants differ from
//! the lock is refused with what changed; a reload keeps the version the
//! lock accepts.

use crate::common;

use std::fs;
use std::path::Path;

use serde_json::json;
use toolhost::Host;
use toolhost::lock::Lockfile;

const CONFIG: &str = "[tools.counter]\nkv = [\"default\"]\n";

/// Lock the folder as it is now.
async fn lock(dir: &Path) -> Lockfile {
    let host = Host::builder(dir)
        .cache_dir(common::cache_dir())
        .ignore_lock()
        .build()
        .await
        .unwrap();
    let lock = Lockfile::of(host.registry().all().map(|t| &**t));
    lock.write(dir).unwrap();
    lock
}

/// The same component with a custom section appended: new bytes, same tool.
fn rebuild_with_note(path: &Path) {
    let mut bytes = fs::read(path).unwrap();
    bytes.extend_from_slice(&[0, 6, 4, b'n', b'o', b't', b'e', b'x']);
    fs::write(path, bytes).unwrap();
}

/// Why `tool` did not load, if it did not.
fn refusal(host: &Host, tool: &str) -> Option<String> {
    host.registry()
        .failures()
        .iter()
        .find(|f| f.tool.as_deref() == Some(tool))
        .map(|f| f.reason.clone())
}

#[tokio::test]
async fn a_matching_folder_loads_whole() {
    let dir = common::host_dir(&["echo", "counter"], CONFIG);
    let locked = lock(dir.path()).await;
    assert_eq!(locked.tools.len(), 2);
    assert_eq!(
        locked.tools["counter"].grants.kv,
        ["default"],
        "grants are recorded"
    );
    let text = fs::read_to_string(dir.path().join("tools.lock")).unwrap();
    assert!(text.contains("[tools.echo]"), "{text}");
    let host = common::load(dir.path()).await;
    assert!(host.registry().failures().is_empty());
    assert_eq!(host.registry().tools().count(), 2);
}

#[tokio::test]
async fn a_changed_component_is_refused() {
    let dir = common::host_dir(&["echo", "counter"], CONFIG);
    lock(dir.path()).await;
    rebuild_with_note(&dir.path().join("tools/echo.wasm"));
    let host = common::load(dir.path()).await;
    let why = refusal(&host, "echo").expect("echo refused");
    assert!(
        why.contains("differs from tools.lock: component sha256"),
        "{why}"
    );
    assert!(
        !why.contains("metadata") && !why.contains("grants"),
        "{why}"
    );
    assert!(why.contains("toolhost lock"), "says how to accept: {why}");
    assert!(host.registry().get("echo").is_none());
    let err = host
        .call("echo", json!({"text": "x"}), &common::live())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "tool_not_callable");
    assert!(
        err.to_string().contains("did not load: `echo` differs"),
        "{err}"
    );
    assert!(host.registry().get("counter").is_some(), "the others run");
}

/// The check comes first: a file that differs from the lock is neither
/// compiled (no compilation of it lands in the cache) nor instantiated.
#[tokio::test]
async fn a_changed_component_is_refused_before_it_is_compiled() {
    use sha2::Digest as _;
    let dir = common::host_dir(&["echo"], "");
    lock(dir.path()).await;
    let file = dir.path().join("tools/echo.wasm");
    rebuild_with_note(&file);
    let sha = hex::encode(sha2::Sha256::digest(fs::read(&file).unwrap()));
    let cache = tempfile::tempdir().unwrap();
    let host = Host::builder(dir.path())
        .cache_dir(cache.path())
        .build()
        .await
        .unwrap();
    let why = refusal(&host, "echo").expect("echo refused");
    assert!(why.contains("neither compiled nor run"), "{why}");
    assert!(
        why.contains("differs from tools.lock: component sha256"),
        "{why}"
    );
    let compiled: Vec<String> = fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&sha))
        .collect();
    assert!(compiled.is_empty(), "compiled anyway: {compiled:?}");
}

#[tokio::test]
async fn changed_metadata_is_refused() {
    let dir = common::host_dir(&["echo"], "");
    let mut locked = lock(dir.path()).await;
    let entry = locked.tools.get_mut("echo").unwrap();
    entry.metadata.description = "0".repeat(64);
    entry.metadata.effect = "write".into();
    locked.write(dir.path()).unwrap();
    let host = common::load(dir.path()).await;
    let why = refusal(&host, "echo").expect("echo refused");
    assert!(
        why.contains("metadata: description, effect write -> read"),
        "{why}"
    );
    assert!(!why.contains("component"), "{why}");
}

#[tokio::test]
async fn changed_grants_are_refused_with_a_capability_diff() {
    let dir = common::host_dir(&["echo", "counter"], CONFIG);
    lock(dir.path()).await;
    fs::write(
        dir.path().join("toolhost.toml"),
        "[tools.counter]\nkv = [\"default\", \"billing\"]\nworkspace = \"write\"\n\
         http = [\"https://api.example.com\"]\nenv = { TOKEN = \"s3cret\" }\n",
    )
    .unwrap();
    let host = common::load(dir.path()).await;
    let why = refusal(&host, "counter").expect("counter refused");
    assert!(
        why.contains(
            "grants: workspace none -> write; + kv billing; + http https://api.example.com:443; \
             + env TOKEN"
        ),
        "{why}"
    );
    assert!(!why.contains("s3cret"), "env values never show: {why}");
    let text = fs::read_to_string(dir.path().join("tools.lock")).unwrap();
    assert!(!text.contains("s3cret"));
    assert!(host.registry().get("echo").is_some());
}

#[tokio::test]
async fn a_tool_added_after_locking_is_refused_until_locked() {
    let dir = common::host_dir(&["echo"], "");
    lock(dir.path()).await;
    fs::copy(
        common::artifact("notes"),
        dir.path().join("tools/notes.wasm"),
    )
    .unwrap();
    fs::write(
        dir.path().join("toolhost.toml"),
        "[tools.notes]\nworkspace = \"write\"\n",
    )
    .unwrap();
    let host = common::load(dir.path()).await;
    let why = refusal(&host, "notes").expect("notes refused");
    assert!(why.contains("not in tools.lock"), "{why}");
    lock(dir.path()).await;
    let host = common::load(dir.path()).await;
    assert!(host.registry().get("notes").is_some());
}

#[tokio::test]
async fn a_reload_keeps_the_locked_version_of_a_changed_tool() {
    let dir = common::host_dir(&["echo"], "");
    lock(dir.path()).await;
    let host = common::load(dir.path()).await;
    let before = host.registry().get("echo").unwrap().sha256().to_string();
    rebuild_with_note(&dir.path().join("tools/echo.wasm"));
    let after = host.reload().await.unwrap();
    assert_eq!(after.get("echo").unwrap().sha256(), before);
    assert!(refusal(&host, "echo").unwrap().contains("component sha256"));
    let result = host
        .call("echo", json!({"text": "still here"}), &common::live())
        .await
        .unwrap();
    assert_eq!(result.result, json!("still here"));

    lock(dir.path()).await;
    let accepted = host.reload().await.unwrap();
    assert_ne!(accepted.get("echo").unwrap().sha256(), before);
    assert!(accepted.failures().is_empty());
}

#[tokio::test]
async fn a_malformed_lock_is_an_error_naming_the_file() {
    let dir = common::host_dir(&["echo"], "");
    fs::write(
        dir.path().join("tools.lock"),
        "version = 1\n[tools.echo]\nsha = 1\n",
    )
    .unwrap();
    let Err(err) = Host::builder(dir.path())
        .cache_dir(common::cache_dir())
        .build()
        .await
    else {
        panic!("a malformed lock loaded");
    };
    let message = format!("{err:#}");
    assert!(
        message.contains("tools.lock") && message.contains("toolhost lock"),
        "{message}"
    );
}
