//! Hostile tools against the capability sandbox: each ends in a clear error,
//! nothing outside the grant is touched, and the next normal call succeeds.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{host, host_dir, live, session};
use serde_json::{Value, json};
use toolhost::SessionSpec;
use toolhost::caps::kv::RedbBackend;

/// Run the `escape` guest on `path` and return its report.
async fn escape(host: &toolhost::Host, workspace: &Path, path: &str, effect: &str) -> Value {
    let options = session(SessionSpec {
        workspace: Some(workspace.to_path_buf()),
        ..SessionSpec::default()
    });
    let result = host
        .call("escape", json!({"path": path, "effect": effect}), &options)
        .await
        .unwrap();
    assert!(!result.is_error, "{:?}", result.result);
    result.result.clone()
}

#[tokio::test]
async fn paths_cannot_leave_the_workspace() {
    let (dir, host) = host(&["escape"], "[tools.escape]\nworkspace = \"write\"\n").await;
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "secret").unwrap();
    std::os::unix::fs::symlink("/etc", workspace.join("etc-link")).unwrap();
    std::os::unix::fs::symlink(&outside, workspace.join("file-link")).unwrap();

    let inside = escape(&host, &workspace, "/workspace/inside.txt", "write").await;
    assert_eq!(inside["write"]["ok"], json!(true), "{inside}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("inside.txt")).unwrap(),
        "escaped\n"
    );

    for path in [
        "/workspace/../outside.txt",
        "../outside.txt",
        "/etc/passwd",
        "/workspace/etc-link/passwd",
        "/workspace/file-link",
        "/workspace/../../../../etc/hostname",
    ] {
        let report = escape(&host, &workspace, path, "write").await;
        assert_eq!(report["read"]["ok"], json!(false), "read {path}: {report}");
        assert_eq!(
            report["write"]["ok"],
            json!(false),
            "write {path}: {report}"
        );
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
}

#[tokio::test]
async fn read_calls_and_read_grants_cannot_write_files() {
    let config = "[tools.escape]\nworkspace = \"write\"\n";
    let (dir, host) = host(&["escape"], config).await;
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("file.txt"), "original").unwrap();

    // A read-effect call with a write grant: reads work, writes do not.
    let report = escape(&host, &workspace, "/workspace/file.txt", "read").await;
    assert_eq!(report["read"]["ok"], json!(true), "{report}");
    assert_eq!(report["write"]["ok"], json!(false), "{report}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("file.txt")).unwrap(),
        "original"
    );

    // A write call with a read grant.
    let (dir, host) = common::host(&["escape"], "[tools.escape]\nworkspace = \"read\"\n").await;
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let report = escape(&host, &workspace, "/workspace/new.txt", "write").await;
    assert_eq!(report["write"]["ok"], json!(false), "{report}");
    assert!(!workspace.join("new.txt").exists());

    // No grant: no workspace at all.
    let (dir, host) = common::host(&["escape"], "").await;
    let report = escape(&host, dir.path(), "/workspace/x", "write").await;
    assert_eq!(report["read"]["ok"], json!(false), "{report}");
    assert!(!dir.path().join("x").exists());
}

/// The state root (`state = "write"`) is `/state` in every session: a
/// write call writes it, a read call gets it read-only, a `read` grant is
/// read-only, no grant mounts nothing, and nothing leaves it.
#[tokio::test]
async fn the_state_root_is_shared_read_only_for_reads_and_confined() {
    let (dir, host) = host(&["escape"], "[tools.escape]\nstate = \"write\"\n").await;
    let root = host.state_root().to_path_buf();
    assert!(root.starts_with(dir.path()), "{}", root.display());
    let written = escape(&host, dir.path(), "/state/shared.txt", "write").await;
    assert_eq!(written["write"]["ok"], json!(true), "{written}");
    assert_eq!(
        std::fs::read_to_string(root.join("shared.txt")).unwrap(),
        "escaped\n"
    );
    // Another session sees the same file; a read call cannot change it.
    let read = escape(&host, dir.path(), "/state/shared.txt", "read").await;
    assert_eq!(read["read"]["ok"], json!(true), "{read}");
    assert_eq!(read["write"]["ok"], json!(false), "{read}");
    let created = escape(&host, dir.path(), "/state/new.txt", "read").await;
    assert_eq!(created["write"]["ok"], json!(false), "{created}");
    assert!(!root.join("new.txt").exists());
    for path in ["/state/../kv.redb", "/state/../../toolhost.toml"] {
        let report = escape(&host, dir.path(), path, "write").await;
        assert_eq!(report["read"]["ok"], json!(false), "{path}: {report}");
        assert_eq!(report["write"]["ok"], json!(false), "{path}: {report}");
    }

    let (dir, host) = common::host(&["escape"], "[tools.escape]\nstate = \"read\"\n").await;
    let report = escape(&host, dir.path(), "/state/new.txt", "write").await;
    assert_eq!(report["write"]["ok"], json!(false), "{report}");
    assert!(!host.state_root().join("new.txt").exists());

    let (dir, host) = common::host(&["escape"], "").await;
    std::fs::write(host.state_root().join("x"), "kept").unwrap();
    let report = escape(&host, dir.path(), "/state/x", "write").await;
    assert_eq!(report["read"]["ok"], json!(false), "{report}");
    assert_eq!(report["write"]["ok"], json!(false), "{report}");
    assert_eq!(
        std::fs::read_to_string(host.state_root().join("x")).unwrap(),
        "kept"
    );
}

/// Opening a FIFO for reading blocks until a writer comes, inside a syscall
/// no deadline can end: the host refuses FIFOs and devices before opening
/// them. Two workers, so the test's own timeout still runs if one blocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifos_and_devices_in_the_workspace_are_refused_before_they_are_opened() {
    let config = "[tools.escape]\nworkspace = \"write\"\ntimeout_ms = 2000\n";
    let (dir, host) = host(&["escape"], config).await;
    let host = std::sync::Arc::new(host);
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let fifo = workspace.join("pipe");
    let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `path` is a NUL-terminated path the test owns.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0, "mkfifo");
    std::os::unix::fs::symlink("pipe", workspace.join("pipe-link")).unwrap();

    for (path, effect) in [
        ("/workspace/pipe", "read"),
        ("/workspace/pipe", "write"),
        ("/workspace/pipe-link", "read"),
    ] {
        let call = tokio::spawn({
            let (host, workspace) = (host.clone(), workspace.clone());
            async move { escape(&host, &workspace, path, effect).await }
        });
        let report = tokio::time::timeout(Duration::from_secs(10), call)
            .await
            .unwrap_or_else(|_| panic!("opening {path} ({effect}) hung"))
            .expect("no panic");
        for op in ["read", "write"] {
            assert_eq!(report[op]["ok"], json!(false), "{report}");
            assert_eq!(
                report[op]["kind"],
                json!("Unsupported"),
                "{op} of {path} ({effect}): {report}"
            );
        }
    }
    let report = escape(&host, &workspace, "/workspace/file.txt", "write").await;
    assert_eq!(report["write"]["ok"], json!(true), "{report}");
}

#[tokio::test]
async fn kv_is_limited_to_granted_buckets_and_write_effects() {
    let config = "[tools.kv_big]\nkv = [\"default\"]\n[tools.counter]\nkv = [\"other\"]\n";
    let (dir, host) = host(&["kv_big", "counter"], config).await;

    let denied = host
        .call(
            "kv_big",
            json!({"bytes": 3, "key": "r", "effect": "read"}),
            &live(),
        )
        .await
        .unwrap();
    assert!(
        denied.is_error,
        "a read call may not set: {:?}",
        denied.result
    );
    assert!(
        format!("{}", denied.result).contains("denied"),
        "{:?}",
        denied.result
    );

    let huge = host
        .call(
            "kv_big",
            json!({"bytes": 100 * 1024 * 1024, "key": "huge"}),
            &live(),
        )
        .await
        .unwrap();
    assert!(huge.is_error, "{:?}", huge.result);
    let text = format!("{}", huge.result);
    assert!(
        text.contains("limit") || text.contains("memory cap"),
        "{text}"
    );

    let wrong_bucket = host
        .call("counter", json!({"name": "n"}), &live())
        .await
        .unwrap();
    assert!(
        wrong_bucket.is_error,
        "counter uses `default`, granted only `other`"
    );

    let ok = host
        .call("kv_big", json!({"bytes": 3, "key": "small"}), &live())
        .await
        .unwrap();
    assert!(!ok.is_error, "{:?}", ok.result);

    drop(host);
    let db = RedbBackend::open(&dir.path().join(".toolhost/kv.redb")).unwrap();
    assert_eq!(
        db.get_blocking("default", "small").unwrap().as_deref(),
        Some(&b"xxx"[..])
    );
    assert_eq!(db.get_blocking("default", "r").unwrap(), None);
    assert_eq!(db.get_blocking("default", "huge").unwrap(), None);
}

#[tokio::test]
async fn raw_sockets_are_always_denied() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let config = "[tools.sockets]\nhttp = [\"*://*:*\"]\nworkspace = \"write\"\n";
    let (_dir, host) = host(&["sockets", "echo"], config).await;
    let result = host
        .call("sockets", json!({"addr": addr}), &live())
        .await
        .unwrap();
    let text = result.result.as_str().unwrap_or_default().to_string();
    assert!(text.starts_with("error:"), "{text}");
    assert!(listener.accept().is_err(), "nothing may reach the listener");
    let echo = host
        .call("echo", json!({"text": "ok"}), &live())
        .await
        .unwrap();
    assert_eq!(echo.result, json!("ok"));
}

#[tokio::test]
async fn env_is_only_what_was_granted() {
    let config = "[tools.context]\nenv = { GREETING = \"hi\" }\n";
    let (_dir, host) = host(&["context"], config).await;
    let result = host.call("context", json!({}), &live()).await.unwrap();
    assert_eq!(
        result.result["env"],
        json!({"GREETING": "hi"}),
        "no host variable leaks"
    );

    let (_dir, host) = common::host(&["context"], "").await;
    let result = host.call("context", json!({}), &live()).await.unwrap();
    assert_eq!(result.result["env"], json!({}));
}

#[test]
fn acknowledged_kv_writes_survive_sigkill() {
    let dir = host_dir(
        &["kv_probe"],
        "[tools.kv_probe]\nkv = [\"default\"]\nworkspace = \"write\"\ntimeout_ms = 600000\n",
    );
    let workspace = dir.path().join("ws");
    let toolhost = env!("CARGO_BIN_EXE_toolhost");
    for round in 0..3 {
        let _ = std::fs::remove_file(workspace.join("committed"));
        let key = format!("durable-{round}");
        let input = json!({"action": "set_then_hang", "key": key, "value": "kept"}).to_string();
        let mut child = Command::new(toolhost)
            .args(["tool", "call", "kv_probe", "--input", &input, "--workspace"])
            .arg(&workspace)
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while !workspace.join("committed").exists() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the tool never committed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let get = json!({"action": "get", "key": key}).to_string();
        let out = Command::new(toolhost)
            .args([
                "tool", "call", "kv_probe", "--json", "--input", &get, "--dir",
            ])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(envelope["result"]["value"], json!("kept"), "round {round}");
    }
}
