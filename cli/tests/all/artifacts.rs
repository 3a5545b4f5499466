//! Artifacts (`toolhost:tool/artifacts`): granted per tool, refused to read
//! calls, saved from bytes or from a file the call can read (never from
//! outside it), held to the session's bytes, recorded as events and in the
//! receipt, and kept with the session: across a restart, and removed when
//! the session is.

use crate::common;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::artifacts::SessionArtifacts;
use toolhost::session::{EventKind, NewSession, SessionStore};
use toolhost::{CallOptions, SessionSpec};

const GRANTED: &str =
    "[tools.artifact_probe]\nartifacts = \"write\"\nworkspace = \"write\"\nstate = \"write\"\n";

/// Run the probe with `input` in the session of `options`.
async fn probe(host: &toolhost::Host, input: Value, options: &CallOptions) -> Value {
    let result = host.call("artifact_probe", input, options).await.unwrap();
    assert!(!result.is_error, "{:?}", result.result);
    result.result.clone()
}

fn in_dirs(dir: &Path) -> CallOptions {
    common::session(SessionSpec {
        workspace: Some(dir.join("ws")),
        artifacts: Some(dir.join("artifacts")),
        ..SessionSpec::default()
    })
}

#[tokio::test]
async fn a_write_call_saves_bytes_and_files_and_a_read_call_only_lists() {
    let (dir, host) = common::host(&["artifact_probe"], GRANTED).await;
    let options = in_dirs(dir.path());
    let id = options.session.id().to_string();

    let input = json!({"name": "report.md", "text": "# hello", "media_type": "text/markdown", "tags": ["r"]});
    let result = host.call("artifact_probe", input, &options).await.unwrap();
    let saved = &result.result["saved"];
    assert_eq!(saved["ok"], true, "{saved}");
    assert_eq!(saved["size"], 7);
    assert_eq!(saved["session"], id.as_str());
    assert_eq!(saved["tags"], json!(["r"]));
    assert_eq!(
        saved["uri"],
        format!("toolhost://sessions/{id}/artifacts/report.md")
    );
    assert_eq!(result.result["listed"], json!([["report.md", 7]]));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("artifacts/report.md")).unwrap(),
        "# hello"
    );
    assert_eq!(
        (result.usage.artifacts_saved, result.usage.artifact_bytes),
        (1, 7)
    );
    let created: Vec<Value> = options
        .session
        .events()
        .kept(None)
        .into_iter()
        .filter(|e| e.kind == EventKind::ArtifactCreated)
        .map(|e| e.to_json()["data"].clone())
        .collect();
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(created[0]["name"], "report.md");
    assert_eq!(created[0]["tool"], "artifact_probe");
    assert_eq!(created[0]["callId"], result.call.id.as_str());
    assert_eq!(created[0]["mediaType"], "text/markdown");

    // From files the call can read: the workspace (absolute or relative)
    // and the state root.
    std::fs::write(dir.path().join("ws/out.bin"), vec![7u8; 1000]).unwrap();
    std::fs::write(host.state_root().join("shared.txt"), "state").unwrap();
    for (name, path, size) in [
        ("a.bin", "/workspace/out.bin", 1000),
        ("b.bin", "out.bin", 1000),
        ("c.txt", "/state/shared.txt", 5),
    ] {
        let report = probe(&host, json!({"name": name, "path": path}), &options).await;
        assert_eq!(report["saved"]["ok"], true, "{path}: {report}");
        assert_eq!(report["saved"]["size"], size, "{path}");
    }

    // Never from outside them.
    std::os::unix::fs::symlink("/etc/hostname", dir.path().join("ws/link")).unwrap();
    std::fs::write(dir.path().join("secret"), "secret").unwrap();
    for path in [
        "/workspace/../secret",
        "../secret",
        "/etc/passwd",
        "/workspace/link",
        "/workspace/missing",
        "/workspace",
    ] {
        let report = probe(&host, json!({"name": "x", "path": path}), &options).await;
        assert_eq!(report["saved"]["ok"], false, "{path}: {report}");
    }
    let report = probe(&host, json!({"name": "x", "path": "/etc/passwd"}), &options).await;
    let error = report["saved"]["error"].as_str().unwrap();
    assert!(
        error.contains("not a file under a directory the tool can read"),
        "{error}"
    );

    // Names, media types and tags are checked, each named in the error.
    for (input, expected) in [
        (
            json!({"name": "../x", "text": "t"}),
            "artifact name \"../x\" is invalid",
        ),
        (json!({"name": ".hidden", "text": "t"}), "is invalid"),
        (
            json!({"text": "t", "media_type": "text"}),
            "media type \"text\" is invalid",
        ),
        (json!({"text": "t", "tags": ["a\nb"]}), "tag \"a\\nb\""),
    ] {
        let report = probe(&host, input.clone(), &options).await;
        let error = report["saved"]["error"].as_str().unwrap_or_default();
        assert!(error.contains(expected), "{input}: {error}");
    }

    // A read call lists, and cannot save.
    let report = probe(
        &host,
        json!({"effect": "read", "name": "r.txt", "text": "no"}),
        &options,
    )
    .await;
    assert_eq!(report["saved"]["ok"], false, "{report}");
    assert!(
        report["saved"]["error"]
            .as_str()
            .unwrap()
            .contains("may not save artifacts in this call"),
        "{report}"
    );
    let names: Vec<&str> = report["listed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| pair[0].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a.bin", "b.bin", "c.txt", "report.md"]);
    assert!(!dir.path().join("artifacts/r.txt").exists());
}

#[tokio::test]
async fn grants_and_the_session_budget_hold() {
    // A `read` grant lists; no grant refuses both.
    let (dir, host) = common::host(
        &["artifact_probe"],
        "[tools.artifact_probe]\nartifacts = \"read\"\n",
    )
    .await;
    let report = probe(&host, json!({"text": "t"}), &in_dirs(dir.path())).await;
    assert_eq!(report["saved"]["ok"], false, "{report}");
    assert_eq!(report["listed"], json!([]));
    let (dir, host) = common::host(&["artifact_probe"], "").await;
    let report = probe(&host, json!({"text": "t"}), &in_dirs(dir.path())).await;
    let error = report["saved"]["error"].as_str().unwrap();
    assert!(
        error.contains("artifacts are not granted to this tool"),
        "{error}"
    );
    assert!(report["listed"]["error"].is_string(), "{report}");

    // The session's artifacts share `session_artifacts_mb`; replacing one
    // gives its bytes back first.
    let config = format!("[limits]\nsession_artifacts_mb = 1\n{GRANTED}");
    let (dir, host) = common::host(&["artifact_probe"], &config).await;
    let options = in_dirs(dir.path());
    let first = probe(&host, json!({"name": "a", "bytes": 600_000}), &options).await;
    assert_eq!(first["saved"]["ok"], true, "{first}");
    let over = probe(&host, json!({"name": "b", "bytes": 600_000}), &options).await;
    let error = over["saved"]["error"].as_str().unwrap();
    assert!(
        error.contains("over its 1048576") && error.contains("session_artifacts_mb"),
        "{error}"
    );
    assert_eq!(
        over["listed"],
        json!([["a", 600_000]]),
        "nothing half-saved"
    );
    let replaced = probe(&host, json!({"name": "a", "bytes": 1_000_000}), &options).await;
    assert_eq!(replaced["saved"]["ok"], true, "{replaced}");
}

/// A stored session's artifacts outlive the host and its store, and go
/// with the session when it expires.
#[tokio::test]
async fn a_stored_sessions_artifacts_survive_a_restart_and_go_with_it() {
    let (dir, host) = common::host(&["artifact_probe"], GRANTED).await;
    let sessions_dir = host.sessions_dir();
    let store = SessionStore::open(&sessions_dir, Duration::from_secs(3600)).unwrap();
    let session = store.create(NewSession::default()).await.unwrap();
    let id = session.id().to_string();
    let options = CallOptions::new(session.clone());
    let report = probe(&host, json!({"name": "kept.txt", "text": "kept"}), &options).await;
    assert_eq!(report["saved"]["ok"], true, "{report}");
    drop((options, session, store, host));

    let host = common::load(dir.path()).await;
    let store = SessionStore::open(&sessions_dir, Duration::ZERO).unwrap();
    let session = store.get(&id).expect("the session is back");
    let listed = SessionArtifacts::new(&session).list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].name.as_str(), listed[0].size), ("kept.txt", 4));
    let report = probe(&host, json!({}), &CallOptions::new(session.clone())).await;
    assert_eq!(report["listed"], json!([["kept.txt", 4]]));
    let artifacts_dir = session.artifacts_path().unwrap().to_path_buf();
    assert!(artifacts_dir.join("kept.txt").is_file());
    drop(session);

    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(store.sweep().await.unwrap(), [id]);
    assert!(!artifacts_dir.exists(), "removed with the session");
    drop(host);
}
