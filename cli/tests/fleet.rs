//! Several servers, one Redis: `toolhost serve` child processes on their
//! own loopback ports and host directories, sharing state through a real
//! `redis-server` (started by the test with `appendonly yes` and
//! `appendfsync always`), with clients that alternate between them.

#![allow(
    clippy::unwrap_used,
    reason = "a test fails by panicking, helpers included"
)]

mod common;
#[path = "fleet/mcp.rs"]
mod mcp;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use common::process::{Served, serve};
use common::sse::EventStream;
use serde_json::{Value, json};
use tempfile::TempDir;
use toolhost_test_artifacts::redis::RedisServer;

/// Increments the fleet makes in the counting test.
const INCREMENTS: u64 = 10_000;
/// Clients making them at once.
const CLIENTS: u64 = 32;

/// Servers over one Redis, each in its own host directory (as on their
/// own machines) with the same tools and `[state]`, sharing one
/// workspaces folder (as a network mount would).
struct Fleet {
    servers: Vec<Served>,
    /// The folder every server keeps its sessions' workspaces in.
    workspaces: TempDir,
    _dirs: Vec<TempDir>,
}

/// The tools every server of a fleet serves.
const FLEET_TOOLS: &[&str] = &[
    "confirm_delete",
    "context",
    "counter",
    "echo",
    "kv_probe",
    "reminder_probe",
    "slow_compute",
    "test_elicitation",
];

/// The environment of every server of a fleet: its cluster key.
const FLEET_ENV: &[(&str, &str)] = &[(
    "TOOLHOST_CLUSTER_KEY",
    "fleet-test-cluster-key-0123456789abcdef",
)];

/// `toolhost.toml` for every server of a fleet on `redis`, with `extra`
/// lines in `[state]`. `context` asks for approval, `test_elicitation`
/// for approval and then the user, and the custom tool `get_weather` is
/// answered by the client.
fn fleet_config(redis: &RedisServer, workspaces: &std::path::Path, extra: &str) -> String {
    format!(
        "[state]\nbackend = \"redis\"\nredis_url = \"{}\"\nworkspaces_dir = \"{}\"\n\
         cluster_key_env = \"TOOLHOST_CLUSTER_KEY\"\n{extra}\n\
         [tools.counter]\nkv = [\"default\"]\n\n\
         [tools.kv_probe]\nkv = [\"default\"]\nworkspace = \"write\"\ntimeout_ms = 4000\n\n\
         [tools.context]\npermission = \"always_ask\"\n\n\
         [tools.test_elicitation]\npermission = \"always_ask\"\nask = [\"user\"]\n\n\
         [tools.reminder_probe]\nreminders = {{ tools = [\"echo\"] }}\n\n\
         [tools.confirm_delete]\ntask = \"required\"\nask = [\"user\"]\n\n\
         [tools.slow_compute]\ntimeout_ms = 60000\n\n\
         [custom_tools.get_weather]\ndescription = \"The weather in a city.\"\n\
         input_schema = {{ type = \"object\", properties = {{ city = {{ type = \"string\" }} }} }}\n",
        redis.url(),
        workspaces.display()
    )
}

impl Fleet {
    fn start(redis: &RedisServer, servers: usize) -> Self {
        Self::start_with(redis, servers, "")
    }

    /// A fleet whose `[state]` has the `extra` lines too.
    fn start_with(redis: &RedisServer, servers: usize, extra: &str) -> Self {
        let workspaces = tempfile::tempdir().unwrap();
        let config = fleet_config(redis, workspaces.path(), extra);
        let dirs: Vec<TempDir> = (0..servers)
            .map(|_| common::host_dir(FLEET_TOOLS, &config))
            .collect();
        let servers = dirs.iter().map(|d| serve(d.path(), FLEET_ENV)).collect();
        Self {
            servers,
            workspaces,
            _dirs: dirs,
        }
    }

    fn url(&self, i: usize) -> String {
        self.servers[i % self.servers.len()].url.clone()
    }

    /// `POST /sessions` on server `i`: the new session's id.
    async fn session(&self, i: usize, body: Value) -> String {
        let response = common::http_client()
            .post(format!("{}/toolhost/v1/sessions", self.url(i)))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        let body: Value = response.json().await.unwrap();
        body["id"].as_str().unwrap().to_string()
    }

    /// `PATCH /agents/<agent>` on server `i`: the status and body.
    async fn patch_agent(&self, i: usize, agent: &str, body: Value) -> (u16, Value) {
        let response = common::http_client()
            .patch(format!("{}/toolhost/v1/agents/{agent}", self.url(i)))
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    /// Call `tool` on server `i`: the status and body.
    async fn call(&self, i: usize, tool: &str, body: Value) -> (u16, Value) {
        call(&common::http_client(), &self.url(i), tool, body).await
    }

    /// Wait until the `kv_probe` call hanging in session `id` has written
    /// its marker in the shared workspace.
    async fn hanging(&self, id: &str) {
        let marker = self.workspaces.path().join(id).join("workspace/committed");
        for _ in 0..1000 {
            if marker.exists() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the write call in {id} never started");
    }
}

/// Call `tool` through `url`: the status and body.
async fn call(client: &reqwest::Client, url: &str, tool: &str, body: Value) -> (u16, Value) {
    let response = client
        .post(format!("{url}/toolhost/v1/tools/{tool}"))
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// A `kv_probe` input: a write that sets `key` then hangs until its
/// timeout, holding the session's write slot.
fn hang(key: &str) -> Value {
    json!({"action": "set_then_hang", "key": key, "value": "v"})
}

/// What became of one call.
enum Sent {
    /// The server answered.
    Answered(u16, Value),
    /// The connection was refused: the request never reached a server.
    Refused,
    /// It was sent and no answer came: it may or may not have run.
    Unanswered,
}

/// One `counter` call.
async fn send(client: &reqwest::Client, url: &str, name: &str, by: i64) -> Sent {
    let response = client
        .post(format!("{url}/toolhost/v1/tools/counter"))
        .json(&json!({ "input": { "name": name, "by": by } }))
        .send()
        .await;
    let response = match response {
        Ok(response) => response,
        Err(e) if e.is_connect() => return Sent::Refused,
        Err(_) => return Sent::Unanswered,
    };
    let status = response.status().as_u16();
    match response.json().await {
        Ok(body) => Sent::Answered(status, body),
        Err(_) => Sent::Unanswered,
    }
}

/// One `counter` call; the status and body, or `None` when no answer came.
async fn count(client: &reqwest::Client, url: &str, name: &str, by: i64) -> Option<(u16, Value)> {
    match send(client, url, name, by).await {
        Sent::Answered(status, body) => Some((status, body)),
        Sent::Refused | Sent::Unanswered => None,
    }
}

/// The value of counter `name`, read through `url`.
async fn value(client: &reqwest::Client, url: &str, name: &str) -> i64 {
    let (status, body) = count(client, url, name, 0).await.expect("an answer");
    assert_eq!(status, 200, "{body}");
    body["result"]["value"].as_i64().expect("a value")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn increments_from_many_clients_over_two_servers_each_count_once() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Arc::new(Fleet::start(&redis, 2));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let fleet = fleet.clone();
            tokio::spawn(async move {
                let client = common::http_client();
                let mut seen = Vec::new();
                for n in (c..INCREMENTS).step_by(CLIENTS as usize) {
                    let url = fleet.url(n as usize);
                    let (status, body) = count(&client, &url, "hits", 1).await.expect("an answer");
                    assert_eq!(status, 200, "{body}");
                    assert_eq!(body["isError"], false, "{body}");
                    seen.push(body["result"]["value"].as_i64().expect("a value"));
                }
                seen
            })
        })
        .collect();
    let mut seen = Vec::new();
    for client in clients {
        seen.extend(client.await.unwrap());
    }
    seen.sort_unstable();
    let expected: Vec<i64> = (1..=INCREMENTS as i64).collect();
    assert!(seen == expected, "every increment saw its own new value");
    let client = common::http_client();
    for i in 0..2 {
        assert_eq!(
            value(&client, &fleet.url(i), "hits").await,
            INCREMENTS as i64
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_loses_no_acknowledged_increment() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut fleet = Fleet::start(&redis, 2);
    let acked = Arc::new(AtomicU64::new(0));
    let unknown = Arc::new(AtomicU64::new(0));
    // Checked between calls: a call in flight is never abandoned, so each
    // one is counted as acknowledged, refused or unanswered.
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..16)
        .map(|c| {
            let urls = [fleet.url(0), fleet.url(1)];
            let (acked, unknown, stop) = (acked.clone(), unknown.clone(), stop.clone());
            tokio::spawn(async move {
                let client = common::http_client();
                for n in c.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    match send(&client, &urls[n % 2], "survivor", 1).await {
                        Sent::Answered(200, body) if body["isError"] == false => {
                            acked.fetch_add(1, Ordering::Relaxed);
                        }
                        Sent::Refused => {}
                        // No answer, or not a clean one: it may or may not
                        // have counted. Never retried.
                        Sent::Answered(..) | Sent::Unanswered => {
                            unknown.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(400)).await;
    fleet.servers[0].child.kill().unwrap();
    fleet.servers[0].child.wait().unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await.unwrap();
    }
    let client = common::http_client();
    let final_value = value(&client, &fleet.url(1), "survivor").await as u64;
    let (acked, unknown) = (
        acked.load(Ordering::Relaxed),
        unknown.load(Ordering::Relaxed),
    );
    println!(
        "fleet: SIGKILL mid-load: {acked} acknowledged, {unknown} unanswered, {final_value} counted"
    );
    assert!(
        acked > 100,
        "the load made too few calls to test anything: {acked}"
    );
    assert!(
        acked <= final_value && final_value <= acked + unknown,
        "acknowledged {acked}, unanswered {unknown}, counted {final_value}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_gives_clear_errors_then_recovers() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let fleet = Fleet::start(&redis, 1);
    let (client, url) = (common::http_client(), fleet.url(0));
    let health = |client: reqwest::Client, url: String| async move {
        let body: Value = client
            .get(format!("{url}/healthz"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        body
    };
    let up = health(client.clone(), url.clone()).await;
    assert_eq!(up["state"]["backend"], "redis", "{up}");
    assert_eq!(up["state"]["reachable"], true, "{up}");
    assert_eq!(value(&client, &url, "kept").await, 0);
    assert_eq!(count(&client, &url, "kept", 7).await.unwrap().0, 200);

    redis.kill();
    // The first call to meet the outage may fail inside the tool; from
    // then on calls that need Redis are refused before they run.
    let _ = count(&client, &url, "kept", 1).await;
    let (status, body) = count(&client, &url, "kept", 1).await.unwrap();
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "state_unavailable", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("counter") && message.contains(&format!("Redis at {}", redis.url())),
        "{message}"
    );
    let down = health(client.clone(), url.clone()).await;
    assert_eq!(down["ok"], true, "the server itself is alive: {down}");
    assert_eq!(down["state"]["reachable"], false, "{down}");
    assert!(
        down["state"]["error"]
            .as_str()
            .unwrap()
            .contains("Redis at"),
        "{down}"
    );
    let echo = client
        .post(format!("{url}/toolhost/v1/tools/echo"))
        .json(&json!({ "input": { "text": "no state needed" } }))
        .send()
        .await
        .unwrap();
    assert_eq!(echo.status(), 200, "a tool with no kv grant still runs");
    let (status, versions) = get(&url, "/agents/default/versions").await;
    assert_eq!(status, 503, "not an empty list: {versions}");
    assert_eq!(versions["error"]["code"], "state_unavailable", "{versions}");
    let (status, version) = get(&url, "/agents/default/versions/7").await;
    assert_eq!(status, 503, "not `agent_version_not_found`: {version}");

    redis.restart().unwrap();
    let mut answer = count(&client, &url, "kept", 1).await.unwrap();
    for _ in 0..100 {
        if answer.0 == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        answer = count(&client, &url, "kept", 1).await.unwrap();
    }
    assert_eq!(
        answer.0, 200,
        "the server recovered by itself: {}",
        answer.1
    );
    assert_eq!(
        answer.1["result"]["value"], 8,
        "the increment acknowledged before the restart is kept, and none \
         refused while Redis was down counted: {}",
        answer.1
    );
    let up = health(client, url).await;
    assert_eq!(up["state"]["reachable"], true, "{up}");
}

/// The `.cwasm` files in `dir`, with their inode numbers.
fn compilations(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
                .map(|e| (e.path(), e.metadata().unwrap().ino()))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_share_the_compilations_their_cluster_key_authenticates() {
    let folder = tempfile::tempdir().unwrap();
    let config = format!(
        "[state]\nshared_compile_cache = \"{}\"\ncluster_key_env = \"TOOLHOST_CLUSTER_KEY\"\n",
        folder.path().display()
    );
    let key = [(
        "TOOLHOST_CLUSTER_KEY",
        "0123456789abcdef0123456789abcdef-fleet",
    )];
    let call = |url: String| async move {
        common::http_client()
            .post(format!("{url}/toolhost/v1/tools/echo"))
            .json(&json!({ "input": { "text": "shared" } }))
            .send()
            .await
            .unwrap()
            .status()
    };
    let a_dir = common::host_dir(&["echo"], &config);
    let a = serve(a_dir.path(), &key);
    // `serve` starts on baseline code and writes the optimized compilation
    // into the shared folder in the background.
    let mut written = Vec::new();
    for _ in 0..1200 {
        written = compilations(folder.path());
        if !written.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(written.len(), 1, "server A shared its compilation");
    assert_eq!(call(a.url.clone()).await, 200);

    let b_dir = common::host_dir(&["echo"], &config);
    let b = serve(b_dir.path(), &key);
    assert_eq!(call(b.url.clone()).await, 200);
    assert_eq!(
        compilations(folder.path()),
        written,
        "server B loaded A's compilation instead of writing its own"
    );
    assert!(compilations(&b_dir.path().join(".toolhost/cache")).is_empty());
    assert!(
        b_dir.path().join(".toolhost/cache/files").is_dir(),
        "its file index is its own"
    );
    drop(b);

    let stranger_key = [(
        "TOOLHOST_CLUSTER_KEY",
        "another-cluster-key-0123456789abcdef",
    )];
    let c_dir = common::host_dir(&["echo"], &config);
    let c = serve(c_dir.path(), &stranger_key);
    assert_eq!(call(c.url.clone()).await, 200);
    let mut rewritten = written.clone();
    for _ in 0..1200 {
        rewritten = compilations(folder.path());
        if rewritten != written {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        c.stderr().contains("its tag does not match"),
        "a server with another key refuses the entry: {}",
        c.stderr()
    );
    assert_ne!(rewritten, written, "and compiles its own");

    let missing = common::host_dir(&["echo"], &config);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["tools", "list", "--dir"])
        .arg(missing.path())
        .env_remove("TOOLHOST_CLUSTER_KEY")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("$TOOLHOST_CLUSTER_KEY, which is not set"),
        "{stderr}"
    );
    drop(a);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_has_one_writer_across_the_fleet_and_reads_run_beside_it() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Arc::new(Fleet::start(&redis, 2));
    let id = fleet
        .session(0, json!({"channel": "gh", "key": "PR-9"}))
        .await;
    let (status, on_b) = get(&fleet.url(1), &format!("/sessions/{id}")).await;
    assert_eq!(status, 200, "B knows the session A made: {on_b}");
    assert_eq!(on_b["continuationToken"], "gh:PR-9");

    let writer = {
        let fleet = fleet.clone();
        let body = json!({"input": hang("k"), "sessionId": id});
        tokio::spawn(async move { fleet.call(0, "kv_probe", body).await })
    };
    fleet.hanging(&id).await;
    let (_, on_b) = get(&fleet.url(1), &format!("/sessions/{id}")).await;
    assert_eq!(on_b["busy"], true, "B sees A's write: {on_b}");
    let set = json!({"action": "set", "key": "k2", "value": "w"});
    let (status, out) = fleet
        .call(
            1,
            "kv_probe",
            json!({"input": set, "continuationToken": "gh:PR-9"}),
        )
        .await;
    assert_eq!(
        (status, &out["error"]["code"]),
        (409, &json!("session_busy")),
        "{out}"
    );
    let read = json!({"action": "get", "key": "k"});
    let (status, out) = fleet
        .call(1, "kv_probe", json!({"input": read, "sessionId": id}))
        .await;
    assert_eq!(status, 200, "a read runs on B beside A's write: {out}");
    assert_eq!(out["result"]["value"], "v", "{out}");
    let (status, out) = fleet
        .call(1, "echo", json!({"input": {"text": "x"}, "sessionId": id}))
        .await;
    assert_eq!(status, 200, "{out}");
    let ended = common::http_client()
        .delete(format!("{}/toolhost/v1/sessions/{id}", fleet.url(1)))
        .send()
        .await
        .unwrap();
    assert_eq!(
        ended.status(),
        409,
        "a session is not ended under a write call"
    );

    let (status, out) = writer.await.unwrap();
    assert_eq!(
        (status, &out["isError"]),
        (200, &json!(true)),
        "it hung until its timeout: {out}"
    );
    let (status, out) = fleet
        .call(1, "kv_probe", json!({"input": set, "sessionId": id}))
        .await;
    assert_eq!(status, 200, "the slot is free once A's call ended: {out}");
    for n in 0..40 {
        let (status, out) = fleet
            .call(n, "kv_probe", json!({"input": set, "sessionId": id}))
            .await;
        assert_eq!(
            status, 200,
            "a client's writes one after another never find the slot taken: {out}"
        );
    }
    let ended = common::http_client()
        .delete(format!("{}/toolhost/v1/sessions/{id}", fleet.url(1)))
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), 204);
    let (status, _) = get(&fleet.url(0), &format!("/sessions/{id}")).await;
    assert_eq!(status, 404, "ended on B is ended on A");
    assert!(
        !fleet.workspaces.path().join(&id).exists(),
        "its workspace is gone"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_servers_write_slot_is_free_within_the_lease() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let lease = Duration::from_millis(2000);
    let mut fleet = Fleet::start_with(
        &redis,
        2,
        &format!("session_lease_ms = {}", lease.as_millis()),
    );
    let id = fleet.session(0, json!({})).await;
    let writer = {
        let (client, url) = (common::http_client(), fleet.url(0));
        let body = json!({"input": hang("k"), "sessionId": id});
        tokio::spawn(async move {
            let _ = client
                .post(format!("{url}/toolhost/v1/tools/kv_probe"))
                .json(&body)
                .send()
                .await;
        })
    };
    fleet.hanging(&id).await;
    fleet.servers[0].child.kill().unwrap();
    fleet.servers[0].child.wait().unwrap();
    let killed = std::time::Instant::now();
    let set = json!({"input": {"action": "set", "key": "k2", "value": "w"}, "sessionId": id});
    let (status, out) = fleet.call(1, "kv_probe", set.clone()).await;
    assert_eq!(status, 409, "the dead server's lease still holds: {out}");
    let freed = loop {
        let (status, out) = fleet.call(1, "kv_probe", set.clone()).await;
        if status == 200 {
            break killed.elapsed();
        }
        assert_eq!(status, 409, "{out}");
        assert!(killed.elapsed() < lease * 2, "the slot never came free");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    println!("fleet: the slot of a killed server came free {freed:?} after the kill");
    assert!(freed <= lease + Duration::from_millis(500), "{freed:?}");
    writer.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_cut_off_from_redis_stops_its_write_before_its_lease_can_pass_on() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let fleet = Arc::new(Fleet::start_with(&redis, 1, "session_lease_ms = 1000"));
    let id = fleet.session(0, json!({})).await;
    let writer = {
        let fleet = fleet.clone();
        let body = json!({"input": hang("k"), "sessionId": id});
        tokio::spawn(async move { fleet.call(0, "kv_probe", body).await })
    };
    fleet.hanging(&id).await;
    let cut = std::time::Instant::now();
    redis.kill();
    let (status, out) = writer.await.unwrap();
    let stopped = cut.elapsed();
    assert_eq!((status, &out["isError"]), (200, &json!(true)), "{out}");
    let text = out["result"].to_string();
    assert!(text.contains("session lease lost"), "{text}");
    assert!(
        stopped < Duration::from_millis(1000),
        "stopped within the lease, not at the 4 s timeout: {stopped:?}"
    );
    redis.restart().unwrap();
}

/// The event stream of session `id` on `url`, after `after` if given.
async fn events(url: &str, id: &str, after: Option<u64>) -> EventStream {
    let mut request = common::http_client().get(format!("{url}/toolhost/v1/sessions/{id}/events"));
    if let Some(after) = after {
        request = request.header("last-event-id", after.to_string());
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    EventStream::new(response)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_parked_on_one_server_is_answered_on_another() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Fleet::start_with(
        &redis,
        2,
        "[server]\napproval_timeout_ms = 20000\ncustom_tool_timeout_ms = 20000",
    );
    let id = fleet.session(0, json!({})).await;

    // A custom tool's call waits on A; its result is posted to B.
    let weather = json!({"input": {"city": "Oslo"}, "sessionId": id});
    let (status, parked) = fleet.call(0, "get_weather", weather).await;
    assert_eq!(status, 202, "{parked}");
    let call_id = parked["callId"].as_str().unwrap().to_string();
    let (status, polled) = get(&fleet.url(1), &format!("/calls/{call_id}")).await;
    assert_eq!(
        (status, &polled["status"]),
        (202, &json!("awaiting_custom_tool_result")),
        "{polled}"
    );
    let result = json!({"events": [{"type": "user.custom_tool_result", "custom_tool_use_id": call_id,
                                    "content": [{"type": "text", "text": "4 °C, rain"}]}]});
    let posted = post(
        &fleet.url(1),
        &format!("/sessions/{id}/events"),
        result.clone(),
    )
    .await;
    assert_eq!(posted.0, 200, "{}", posted.1);
    let (status, done) = get(&fleet.url(1), &format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["result"], "4 °C, rain", "{done}");
    let again = post(&fleet.url(1), &format!("/sessions/{id}/events"), result).await;
    assert_eq!(
        (again.0, &again.1["error"]["code"]),
        (409, &json!("call_not_waiting")),
        "{}",
        again.1
    );

    // An approval for a call parked on A, posted to B.
    let (status, parked) = fleet.call(0, "context", json!({"sessionId": id})).await;
    assert_eq!(status, 202, "{parked}");
    let call_id = parked["callId"].as_str().unwrap().to_string();
    // B lists the approval A's call waits for, with its input.
    let (status, listed) = get(&fleet.url(1), "/approvals").await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["pending"][0]["callId"], json!(call_id), "{listed}");
    assert_eq!(listed["pending"][0]["toolName"], "context", "{listed}");
    let approve = json!({"decision": "approve", "auth": {"user": "ada"}});
    let missing = post(&fleet.url(1), "/approvals/call_nope", approve.clone()).await;
    assert_eq!(
        (missing.0, &missing.1["error"]["code"]),
        (404, &json!("call_not_found"))
    );
    let approved = post(
        &fleet.url(1),
        &format!("/approvals/{call_id}"),
        approve.clone(),
    )
    .await;
    assert_eq!(approved.0, 200, "{}", approved.1);
    let (status, done) = get(&fleet.url(1), &format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(
        done["result"]["approvedBy"],
        json!({"user": "ada"}),
        "{done}"
    );
    let (status, on_a) = get(&fleet.url(0), &format!("/calls/{call_id}")).await;
    assert_eq!(
        (status, &on_a["result"]["approvedBy"]),
        (200, &json!({"user": "ada"}))
    );
    let (_, listed) = get(&fleet.url(1), "/approvals").await;
    assert_eq!(listed["pending"], json!([]), "{listed}");
    assert_eq!(
        (
            &listed["resolved"][0]["callId"],
            &listed["resolved"][0]["decision"]
        ),
        (&json!(call_id), &json!("approved")),
        "B lists how it ended: {listed}"
    );
    assert!(listed["resolved"][0].get("input").is_none(), "{listed}");
    let twice = post(&fleet.url(1), &format!("/approvals/{call_id}"), approve).await;
    assert_eq!(
        (twice.0, &twice.1["error"]["code"]),
        (409, &json!("call_not_waiting")),
        "{}",
        twice.1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_waits_twice_is_answered_on_another_server_both_times() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Fleet::start_with(&redis, 2, "[server]\napproval_timeout_ms = 20000");
    let id = fleet.session(0, json!({})).await;
    let ask = json!({"input": {"message": "Who?"}, "sessionId": id});
    let (status, parked) = fleet.call(0, "test_elicitation", ask).await;
    assert_eq!(status, 202, "{parked}");
    let call_id = parked["callId"].as_str().unwrap().to_string();
    let approve = json!({"decision": "approve", "auth": {"user": "ada"}});
    let approved = post(&fleet.url(1), &format!("/approvals/{call_id}"), approve).await;
    assert_eq!(approved.0, 200, "{}", approved.1);

    // Its second wait, a question, is seen and answered through B too.
    let mut asked = None;
    for _ in 0..100 {
        let (_, polled) = get(&fleet.url(1), &format!("/calls/{call_id}")).await;
        if polled["status"] == "awaiting_elicitation_result" {
            asked = Some(polled);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(asked.is_some(), "B sees the call wait for its question");
    let answer = json!({"events": [{
        "type": "user.elicitation_result", "call_id": call_id, "action": "accept",
        "content": {"username": "ada", "email": "ada@example.com"},
    }]});
    let posted = post(&fleet.url(1), &format!("/sessions/{id}/events"), answer).await;
    assert_eq!(posted.0, 200, "{}", posted.1);
    let (status, done) = get(&fleet.url(1), &format!("/calls/{call_id}?wait=10")).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(
        done["result"],
        r#"User response: action=accept, content={"email":"ada@example.com","username":"ada"}"#,
        "{done}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_server_died_is_answered_call_owner_gone() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let lease = "session_lease_ms = 2000";
    let mut fleet = Fleet::start_with(
        &redis,
        2,
        &format!("{lease}\n[server]\napproval_timeout_ms = 60000"),
    );
    let (status, parked) = fleet.call(0, "context", json!({})).await;
    assert_eq!(status, 202, "{parked}");
    let call_id = parked["callId"].as_str().unwrap().to_string();
    fleet.servers[0].child.kill().unwrap();
    fleet.servers[0].child.wait().unwrap();
    let approve = json!({"decision": "approve", "auth": {"user": "ada"}});
    let path = format!("/approvals/{call_id}");
    let started = std::time::Instant::now();
    let first = post(&fleet.url(1), &path, approve.clone()).await;
    assert_eq!(
        first.0, 200,
        "within the dead owner's lease it is taken: {}",
        first.1
    );
    let gone = loop {
        let answer = post(&fleet.url(1), &path, approve.clone()).await;
        if answer.1["error"]["code"] != "call_not_waiting"
            || started.elapsed() > Duration::from_secs(5)
        {
            break answer;
        }
        // Answered already, never taken: wait for the owner's lease to expire.
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    println!(
        "fleet: a dead server's call was owner_gone {:?} after the kill",
        started.elapsed()
    );
    assert_eq!(
        (gone.0, &gone.1["error"]["code"]),
        (409, &json!("call_owner_gone")),
        "{}",
        gone.1
    );
    let (status, polled) = get(&fleet.url(1), &format!("/calls/{call_id}")).await;
    assert_eq!(
        (status, &polled["error"]["code"]),
        (409, &json!("call_owner_gone")),
        "{polled}"
    );
    let (_, listed) = get(&fleet.url(1), "/approvals").await;
    assert_eq!(
        listed["pending"],
        json!([]),
        "a dead server's call is not listed as waiting: {listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_set_on_a_server_that_died_fires_from_another() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut fleet = Fleet::start(&redis, 2);
    let id = fleet.session(0, json!({})).await;
    let input = json!({"op": "message", "after_ms": 1500, "message": "stand-up"});
    let (status, out) = fleet
        .call(
            0,
            "reminder_probe",
            json!({"input": input, "sessionId": id}),
        )
        .await;
    assert_eq!((status, &out["isError"]), (200, &json!(false)), "{out}");
    let (_, listed) = get(&fleet.url(1), &format!("/sessions/{id}/reminders")).await;
    assert_eq!(
        listed["reminders"].as_array().map(Vec::len),
        Some(1),
        "B lists it: {listed}"
    );

    fleet.servers[0].child.kill().unwrap();
    fleet.servers[0].child.wait().unwrap();
    let mut on_b = events(&fleet.url(1), &id, None).await;
    let message = on_b.until("user.message").await;
    assert_eq!(message["data"]["message"], "stand-up", "{message}");
    let fired = on_b.until("reminder.fired").await;
    assert_eq!(
        fired["data"]["outcome"]["eventId"], message["id"],
        "{fired}"
    );
    let (_, listed) = get(&fleet.url(1), &format!("/sessions/{id}/reminders")).await;
    assert_eq!(listed["reminders"], json!([]), "fired once, and gone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_on_one_server_replays_and_follows_the_calls_made_on_another() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Fleet::start(&redis, 2);
    let id = fleet.session(0, json!({})).await;
    let echo = |text: &str| json!({"input": {"text": text}, "sessionId": id});
    assert_eq!(fleet.call(0, "echo", echo("one")).await.0, 200);

    let mut on_b = events(&fleet.url(1), &id, None).await;
    let requested = on_b.next().await;
    assert_eq!(
        (&requested["id"], &requested["type"]),
        (&json!(1), &json!("actions.requested"))
    );
    assert_eq!(requested["data"]["input"]["text"], "one", "{requested}");
    let result = on_b.next().await;
    assert_eq!(
        (&result["id"], &result["type"]),
        (&json!(2), &json!("action.result"))
    );
    assert_eq!(result["data"]["result"], "one", "{result}");

    assert_eq!(fleet.call(0, "echo", echo("two")).await.0, 200);
    let live = on_b.until("action.result").await;
    assert_eq!(live["id"], 4, "{live}");
    assert_eq!(live["data"]["result"], "two", "{live}");
    assert_eq!(fleet.call(1, "echo", echo("three")).await.0, 200);
    assert_eq!(
        on_b.until("action.result").await["id"],
        6,
        "calls on B are in the same sequence"
    );

    let mut resumed = events(&fleet.url(0), &id, Some(4)).await;
    let next = resumed.next().await;
    assert_eq!(
        (&next["id"], &next["data"]["input"]["text"]),
        (&json!(5), &json!("three"))
    );
}

/// The numbers of `agent`'s versions as server `url` lists them.
async fn version_numbers(url: &str, agent: &str) -> Vec<u64> {
    let (status, listed) = get(url, &format!("/agents/{agent}/versions")).await;
    assert_eq!(status, 200, "{listed}");
    listed["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_u64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_numbers_each_tool_set_once_and_any_server_runs_any_version() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut fleet = Fleet::start(&redis, 2);
    for i in 0..2 {
        assert_eq!(
            version_numbers(&fleet.url(i), "default").await,
            vec![1],
            "server {i} gives the fleet's tools the fleet's number"
        );
    }

    // An agent made on A: a session bound to it runs on B, which loads
    // the version from the fleet's records and files.
    let made = post(
        &fleet.url(0),
        "/agents",
        json!({"name": "repo", "components": ["echo"]}),
    )
    .await;
    assert_eq!(made.0, 201, "{}", made.1);
    let id = fleet.session(0, json!({"agent": "repo"})).await;
    let echo = json!({"input": {"text": "via B"}, "sessionId": id});
    let (status, ran) = fleet.call(1, "echo", echo).await;
    assert_eq!(status, 200, "{ran}");
    assert_eq!(ran["result"], "via B", "{ran}");
    assert_eq!(ran["agent"], json!({"name": "repo", "version": 1}), "{ran}");
    let made_here = fleet.session(1, json!({"agent": "repo"})).await;
    assert!(made_here.starts_with("ses_"), "B serves the agent A made");

    // A changes it; B, started again, serves the change under A's number.
    let (status, changed) = fleet
        .patch_agent(0, "repo", json!({"components": ["echo", "counter"]}))
        .await;
    assert_eq!((status, &changed["version"]), (200, &json!(2)), "{changed}");
    // B is told: it serves version 2 as the agent's latest, without a
    // restart, and a new session there is bound to it.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, agent) = get(&fleet.url(1), "/agents/repo").await;
        if agent["version"] == 2 {
            assert_eq!(agent["source"], "api", "{agent}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "B serves {agent}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let latest_on_b = fleet.session(1, json!({"agent": "repo"})).await;
    let (_, described) = get(&fleet.url(1), &format!("/sessions/{latest_on_b}")).await;
    assert_eq!(
        described["agent"],
        json!({"name": "repo", "version": 2}),
        "{described}"
    );
    let pinned = fleet
        .session(1, json!({"agent": "repo", "version": 2}))
        .await;
    let counter = json!({"input": {"name": "c"}, "sessionId": pinned});
    let (status, counted) = fleet.call(1, "counter", counter).await;
    assert_eq!(status, 200, "B runs version 2, made on A: {counted}");
    fleet.servers[1].child.kill().unwrap();
    fleet.servers[1].child.wait().unwrap();
    fleet.servers[1] = serve(fleet._dirs[1].path(), FLEET_ENV);
    assert_eq!(version_numbers(&fleet.url(1), "repo").await, vec![1, 2]);
    let on_b = fleet.session(1, json!({"agent": "repo"})).await;
    let (_, described) = get(&fleet.url(1), &format!("/sessions/{on_b}")).await;
    assert_eq!(
        described["agent"],
        json!({"name": "repo", "version": 2}),
        "{described}"
    );
}

/// `POST` `body` to a path under `/toolhost/v1` of `url`: the status and body.
async fn post(url: &str, path: &str, body: Value) -> (u16, Value) {
    let response = common::http_client()
        .post(format!("{url}/toolhost/v1{path}"))
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// `GET` a path under `/toolhost/v1` of `url`: the status and body.
async fn get(url: &str, path: &str) -> (u16, Value) {
    let response = common::http_client()
        .get(format!("{url}/toolhost/v1{path}"))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// A connection to `redis` of the tests' own, writing as an attacker with
/// access to the fleet's Redis (but not to the cluster key) would.
fn attacker(redis: &RedisServer) -> redis::Connection {
    redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap()
}

/// Attack 1 of issue 45: a writer of the fleet's Redis planted a version
/// record and its inputs, whose config declares a stdio MCP server running
/// a shell command, then asked for a session at that version: the command
/// ran as the server's user. Now nothing a server did not seal is obeyed:
/// not a version planted whole, nor one made of a genuine record's MAC
/// with other content, nor a genuine record moved to another number; the
/// command never runs and the session is refused, naming the version.
/// A forged answer to a parked call approves nothing either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_writer_cannot_make_a_server_run_a_command_or_obey_a_record() {
    use redis::Commands as _;
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Fleet::start(&redis, 1);
    let mut connection = attacker(&redis);
    let (status, _) = get(&fleet.url(0), "/agents/default/versions/1").await;
    assert_eq!(status, 200);
    let versions = "toolhost:agentversions:default";
    let inputs = "toolhost:agentinputs:default";
    let sealed_record: String = connection.hget(versions, "1").unwrap();
    let sealed_inputs: String = connection.hget(inputs, "1").unwrap();
    let (tag, record) = sealed_record.split_at(64);
    let mut record: Value = serde_json::from_str(record).unwrap();
    record["version"] = json!(99);
    let (_, kept) = sealed_inputs.split_at(64);
    let mut planted: Value = serde_json::from_str(kept).unwrap();
    let marker = tempfile::tempdir().unwrap();
    let ran = marker.path().join("ran");
    planted["config"] = json!(format!(
        "[[mcp_servers]]\nname = \"pwn\"\ntype = \"stdio\"\ncommand = \"/bin/sh\"\n\
         args = [\"-c\", \"touch {}\"]\n[[toolset]]\ntype = \"mcp_toolset\"\n\
         mcp_server_name = \"pwn\"\n",
        ran.display()
    ));
    for (number, version, inputs_value) in [
        (99, record.to_string(), planted.to_string()),
        (
            99,
            format!("{tag}{record}"),
            format!("{}{planted}", &sealed_inputs[..64]),
        ),
        (98, sealed_record.clone(), sealed_inputs.clone()),
    ] {
        let _: () = connection.hset(versions, number, version).unwrap();
        let _: () = connection.hset(inputs, number, inputs_value).unwrap();
        let response = common::http_client()
            .post(format!("{}/toolhost/v1/sessions", fleet.url(0)))
            .json(&json!({ "version": number }))
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert!(
            status.is_client_error() && body.to_string().contains(&number.to_string()),
            "version {number}: {status} {body}"
        );
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!ran.exists(), "the planted command ran");

    // A parked call waits for an approval; a planted answer approves nothing.
    let (status, parked) = fleet.call(0, "context", json!({})).await;
    assert_eq!(status, 202, "{parked}");
    let id = parked["callId"].as_str().unwrap().to_string();
    let wait: String = connection
        .hget(format!("toolhost:call:{id}"), "wait")
        .unwrap();
    let approval = json!({"kind": "approval", "body": {"decision": "approve"}});
    let _: () = connection
        .set(
            format!("toolhost:callanswer:{id}"),
            format!("{wait} {}{approval}", "0".repeat(64)),
        )
        .unwrap();
    let _: () = connection.publish("toolhost:callfeed", &id).unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (status, waiting) = get(&fleet.url(0), &format!("/calls/{id}")).await;
    assert_eq!(
        (status, waiting["status"].as_str()),
        (202, Some("awaiting_approval")),
        "{waiting}"
    );
}

/// Every value in the fleet's Redis, as text: strings, hashes, lists,
/// sets, sorted sets and streams.
fn every_value(connection: &mut redis::Connection) -> Vec<(String, String)> {
    use redis::Commands as _;
    let keys: Vec<String> = connection.keys("*").unwrap();
    keys.into_iter()
        .map(|key| {
            let kind: String = redis::cmd("TYPE").arg(&key).query(connection).unwrap();
            let text = match kind.as_str() {
                "string" => connection.get::<_, String>(&key).unwrap_or_default(),
                "hash" => format!(
                    "{:?}",
                    connection
                        .hgetall::<_, Vec<(String, String)>>(&key)
                        .unwrap()
                ),
                "list" => format!(
                    "{:?}",
                    connection.lrange::<_, Vec<String>>(&key, 0, -1).unwrap()
                ),
                "set" => format!("{:?}", connection.smembers::<_, Vec<String>>(&key).unwrap()),
                "zset" => format!(
                    "{:?}",
                    connection.zrange::<_, Vec<String>>(&key, 0, -1).unwrap()
                ),
                "stream" => format!(
                    "{:?}",
                    redis::cmd("XRANGE")
                        .arg(&key)
                        .arg("-")
                        .arg("+")
                        .query::<redis::Value>(connection)
                        .unwrap()
                ),
                other => format!("(a {other})"),
            };
            (key, text)
        })
        .collect()
}

/// Every file under `dir`, as text.
fn every_file(dir: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => {
                    let bytes = std::fs::read(&path).unwrap_or_default();
                    found.push((path, String::from_utf8_lossy(&bytes).into_owned()));
                }
                _ => {}
            }
        }
    }
    found
}

/// Attack 2 of issue 45: `[server] token` and a tool's `env` value were
/// copied into Redis, in every version's config text. A secret is planted
/// in every place `toolhost.toml` takes one (and a client's credentials),
/// the fleet makes versions, sessions, calls, approvals and events, and no
/// Redis key and no file under the state directory or the shared folder
/// holds any of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_redis_or_the_state_directory() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // A password in `redis_url` is a secret `toolhost.toml` may hold too.
    assert_eq!(
        redis
            .command("CONFIG SET requirepass redis-pw-SECRET9")
            .unwrap(),
        "+OK"
    );
    let workspaces = tempfile::tempdir().unwrap();
    let stdio_server = common::python().map_or_else(String::new, |python| {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp/upstream.py");
        let state = tempfile::tempdir().unwrap().keep();
        format!(
            "[[mcp_servers]]\nname = \"tickets\"\ntype = \"stdio\"\ncommand = {python:?}\n\
             args = [{script:?}]\nenv = {{ UPSTREAM_STATE = {state:?}, TOKEN = \"stdio-env-SECRET5\" }}\n\
             [[toolset]]\ntype = \"mcp_toolset\"\nmcp_server_name = \"tickets\"\n"
        )
    });
    let config = format!(
        "{stdio_server}\
         [[mcp_servers]]\nname = \"crm\"\ntype = \"url\"\nurl = \"http://127.0.0.1:9/mcp\"\n\
         headers = {{ Authorization = \"url-header-SECRET6\" }}\n\
         [[toolset]]\ntype = \"mcp_toolset\"\nmcp_server_name = \"crm\"\n\
         [server]\ntoken = \"server-token-SECRET1\"\n\
         [defaults]\nenv = {{ D = \"defaults-env-SECRET2\" }}\n\
         [tools.echo]\nenv = {{ E = \"tool-env-SECRET3\" }}\npermission = \"always_ask\"\n\
         [telemetry]\notlp_endpoint = \"http://127.0.0.1:9/\"\nheaders = {{ api-key = \"otlp-SECRET4\" }}\n\
         [state]\nbackend = \"redis\"\nredis_url = \"redis://:redis-pw-SECRET9@127.0.0.1:{}/0\"\n\
         workspaces_dir = \"{}\"\ncluster_key_env = \"TOOLHOST_CLUSTER_KEY\"\n",
        redis.port(),
        workspaces.path().display()
    );
    let dir = common::host_dir(&["echo"], &config);
    let served = serve(dir.path(), FLEET_ENV);
    let client = common::http_client();
    let api = |path: &str| format!("{}/toolhost/v1{path}", served.url);
    let bearer = "server-token-SECRET1";
    let session: Value = client
        .post(api("/sessions"))
        .bearer_auth(bearer)
        .json(&json!({
            "auth": {"user": "alice", "token": "auth-token-SECRET10"},
            "credentials": {"token": "credential-SECRET11"},
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = session["id"].as_str().unwrap().to_string();
    let alice = json!({"user": "alice"});
    let parked: Value = client
        .post(api("/tools/echo"))
        .bearer_auth(bearer)
        .json(&json!({
            "input": {"text": "hi"}, "sessionId": id, "auth": alice,
            "credentials": {"token": "credential-SECRET12"},
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let call = parked["callId"].as_str().unwrap().to_string();
    let decided = client
        .post(api(&format!("/approvals/{call}")))
        .bearer_auth(bearer)
        .json(&json!({"decision": "approve", "auth": {"user": "carol", "token": "approver-SECRET13"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(decided.status(), 200);
    let done = client
        .get(api(&format!("/calls/{call}?wait=10")))
        .bearer_auth(bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 200);
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut connection = redis::Client::open(format!(
        "redis://:redis-pw-SECRET9@127.0.0.1:{}/0",
        redis.port()
    ))
    .unwrap()
    .get_connection()
    .unwrap();
    let values = every_value(&mut connection);
    assert!(
        values.iter().any(|(key, _)| key.contains("agentinputs")),
        "versions were kept"
    );
    for (key, text) in values {
        assert!(
            !text.contains("SECRET"),
            "Redis key {key} holds a secret: {text}"
        );
    }
    for root in [
        dir.path().join(".toolhost"),
        workspaces.path().to_path_buf(),
    ] {
        for (path, text) in every_file(&root) {
            assert!(
                !text.contains("SECRET"),
                "{} holds a secret",
                path.display()
            );
        }
    }
}

/// A writer of the fleet's Redis rewrites the map of tool sets to version
/// numbers (it is not sealed: it only numbers) so every set maps to version
/// 1. A change to the agent then finds version 1's record holding other
/// tools: the change is refused naming the rewritten map, version 1 is not
/// relabelled, and the server goes on serving it meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewritten_number_map_labels_no_tool_set_as_another() {
    use redis::Commands as _;
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = Fleet::start(&redis, 1);
    let made = post(
        &fleet.url(0),
        "/agents",
        json!({"name": "repo", "components": ["echo"]}),
    )
    .await;
    assert_eq!(made.0, 201, "{}", made.1);

    let mut connection = attacker(&redis);
    let map = "toolhost:agenttools:repo";
    let sets: Vec<String> = connection.hkeys(map).unwrap();
    assert!(!sets.is_empty(), "the fleet numbered the agent's tools");
    // Every set the fleet has seen, and any it sees next, maps to 1.
    for set in &sets {
        let _: () = connection.hset(map, set, 1).unwrap();
    }
    let _: () = connection.set("toolhost:agentseq:repo", 0).unwrap();

    let started = std::time::Instant::now();
    let (status, changed) = fleet
        .patch_agent(0, "repo", json!({"components": ["echo", "counter"]}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "answered at once"
    );
    assert!(
        status >= 400 && changed.to_string().contains("map of tool sets to numbers"),
        "{status} {changed}"
    );
    let (_, agent) = get(&fleet.url(0), "/agents/repo").await;
    assert_eq!(agent["version"], 1, "{agent}");
    assert_eq!(
        agent["toolNames"],
        json!(["echo"]),
        "version 1 keeps its own tools"
    );
    let id = fleet.session(0, json!({"agent": "repo"})).await;
    let (status, ran) = fleet
        .call(
            0,
            "echo",
            json!({"input": {"text": "still"}, "sessionId": id}),
        )
        .await;
    assert_eq!((status, &ran["result"]), (200, &json!("still")), "{ran}");
    let health = common::http_client()
        .get(format!("{}/healthz", fleet.url(0)))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}
