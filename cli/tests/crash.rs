//! Crash safety: `toolhost serve` is killed with SIGKILL at random points of
//! a write-heavy load, many times over. After each kill, every KV write a
//! client was told about is on disk, and the database opens without repair;
//! some kills land while the server compiles its tools, and the compile
//! cache they leave behind is usable or rebuilt.
//!
//! CI kills 20 times. The full run, whose figures go in bench/RESULTS.md:
//!
//! ```sh
//! TOOLHOST_CRASH_KILLS=200 cargo test --release -p toolhost --test crash -- --nocapture
//! ```

#![allow(
    clippy::unwrap_used,
    reason = "a test fails by panicking, helpers included"
)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::process::serve;
use serde_json::{Value, json};
use toolhost::caps::kv::RedbBackend;

const DEFAULT_KILLS: usize = 20;
const WRITERS: usize = 8;
/// Every how many rounds the kill lands during start-up, with the compile
/// cache emptied first so the kill can catch the cache write.
const START_UP_KILL_EVERY: usize = 5;

/// A small xorshift: the kill points vary, and a failing round can be
/// told apart by its number.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Bump fresh counters until the server stops answering; the keys whose
/// increments were acknowledged.
async fn write_until_killed(url: String, round: usize, writer: usize) -> Vec<String> {
    let client = common::http_client();
    let mut acked = Vec::new();
    for seq in 0.. {
        let key = format!("r{round}-w{writer}-{seq}");
        let answer = client
            .post(format!("{url}/toolhost/v1/tools/counter"))
            .json(&json!({ "input": { "name": key } }))
            .send()
            .await;
        let Ok(response) = answer else { break };
        let Ok(body) = response.json::<Value>().await else {
            break;
        };
        assert_eq!(body["result"]["value"], 1, "a fresh counter: {body}");
        acked.push(key);
    }
    acked
}

/// Every acknowledged key holds 1, and the database needed no repair.
fn check_store(dir: &Path, acked: &[String], round: usize) {
    let db = RedbBackend::open(&dir.join(".toolhost/kv.redb"))
        .unwrap_or_else(|e| panic!("round {round}: the store does not open: {e:#}"));
    assert!(
        !db.was_repaired(),
        "round {round}: the store needed a repair"
    );
    for key in acked {
        let value = db
            .get_blocking("default", key)
            .unwrap_or_else(|e| panic!("round {round}: reading {key}: {e}"));
        assert_eq!(
            value.as_deref(),
            Some(&b"1"[..]),
            "round {round}: acknowledged increment of {key} is lost"
        );
    }
}

/// Start the server and SIGKILL it within its first 300 ms, whether or not
/// it is serving yet.
fn kill_during_start_up(dir: &Path, rng: &mut Rng) {
    let _ = std::fs::remove_dir_all(dir.join(".toolhost/cache"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--listen", "127.0.0.1:0", "--dir"])
        .arg(dir)
        .stderr(Stdio::null())
        .spawn()
        .expect("run toolhost serve");
    std::thread::sleep(Duration::from_millis(rng.below(300)));
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_sigkill() {
    let kills = std::env::var("TOOLHOST_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_KILLS);
    let dir = common::host_dir(&["counter"], "[tools.counter]\nkv = [\"default\"]\n");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let acked = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let mut start_up_kills = 0;
    for round in 0..kills {
        if round % START_UP_KILL_EVERY == START_UP_KILL_EVERY - 1 {
            kill_during_start_up(dir.path(), &mut rng);
            start_up_kills += 1;
        }
        let mut served = serve(dir.path(), &[]);
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| tokio::spawn(write_until_killed(served.url.clone(), round, w)))
            .collect();
        tokio::time::sleep(Duration::from_millis(50 + rng.below(400))).await;
        served.child.kill().expect("SIGKILL");
        served.child.wait().expect("reap");
        for writer in writers {
            let keys = writer.await.expect("a writer task");
            acked.lock().unwrap().extend(keys);
        }
        check_store(dir.path(), &acked.lock().unwrap(), round);
    }

    // The server that starts after the last kill serves from what is left.
    let served = serve(dir.path(), &[]);
    let answer: Value = common::http_client()
        .post(format!("{}/toolhost/v1/tools/counter", served.url))
        .json(&json!({ "input": { "name": "after", "by": 5 } }))
        .send()
        .await
        .expect("a call after the last kill")
        .json()
        .await
        .expect("a JSON answer");
    assert_eq!(answer["result"]["value"], 5, "{answer}");
    let acked = acked.lock().unwrap().len();
    println!(
        "crash: {kills} SIGKILLs survived ({start_up_kills} during start-up), {acked} \
         acknowledged writes all present, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(acked > kills, "the load wrote too little to test anything");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_written_cache_entry_is_rebuilt() {
    let dir = common::host_dir(&["echo"], "");
    let cache = dir.path().join(".toolhost/cache");
    let call = |url: String| async move {
        common::http_client()
            .post(format!("{url}/toolhost/v1/tools/echo"))
            .json(&json!({ "input": { "text": "still here" } }))
            .send()
            .await
            .expect("a call")
            .json::<Value>()
            .await
            .expect("a JSON answer")
    };
    // `serve` starts on baseline code and writes the optimized compilation
    // in the background.
    let first = serve(dir.path(), &[]);
    let compiled = || {
        std::fs::read_dir(&cache)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "cwasm"))
    };
    until(|| compiled().is_some()).await;
    drop(first);
    let entry = compiled().expect("a compiled entry");
    let whole = std::fs::metadata(&entry).expect("entry").len();
    let half = std::fs::OpenOptions::new()
        .write(true)
        .open(&entry)
        .expect("open the entry");
    half.set_len(whole / 2).expect("cut it in half");
    drop(half);

    let served = serve(dir.path(), &[]);
    assert_eq!(call(served.url.clone()).await["result"], "still here");
    let rewritten = || std::fs::metadata(&entry).is_ok_and(|m| m.len() == whole);
    until(rewritten).await;
    assert!(rewritten(), "the entry was written again, whole");
}

/// Wait until `done`, for at most two minutes (a Cranelift compile in the
/// background of a server on a loaded machine).
async fn until(done: impl Fn() -> bool) {
    let waiting = std::time::Instant::now();
    while !done() && waiting.elapsed() < std::time::Duration::from_secs(120) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
