//! The adversarial suite: a hostile guest (`tests/guests/hostile`) calls
//! host functions at and past their limits against `toolhost serve` in a
//! process of its own, eight attackers of one class at a time (on these two
//! cores), while `/healthz` is probed every 50 ms. For every class:
//!
//! - each call ends by its deadline: the receipt's wall time within
//!   `timeout_ms` + 250 ms, with the error naming the limit it hit;
//! - `/healthz` answers every probe, p99 under 100 ms, none over 1 s;
//! - the server's RSS stays under 512 MiB;
//! - the server's CPU use stops with the calls (host work that outlives a
//!   call would go on burning it);
//! - `echo` answers afterwards.
//!
//! At the end SIGTERM stops the server, exit 0. The figures go in
//! bench/RESULTS.md:
//!
//! ```sh
//! cargo test --release -p toolhost-cli --test adversarial -- --nocapture
//! ```

#![allow(
    clippy::unwrap_used,
    reason = "a test fails by panicking, helpers included"
)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::process::{Served, serve};
use serde_json::{Value, json};

/// Attackers of one class at a time.
const ATTACKERS: usize = 8;
/// The hostile tool's deadline.
const TIMEOUT_MS: u64 = 2000;
/// How far past its deadline a call may end (`HOST_CALL_GRACE`).
const GRACE_MS: u64 = 250;
/// The server's RSS bound.
const RSS_BOUND_KIB: u64 = 512 << 10;
/// How often `/healthz` is probed.
const PROBE_EVERY: Duration = Duration::from_millis(50);
/// The most CPU the idle server may use in the second after an attack.
const IDLE_CPU: Duration = Duration::from_millis(200);

const CONFIG: &str = "\
[limits]
max_concurrent_calls = 16

[tools.hostile]
timeout_ms = 2000
kv = [\"default\"]
workspace = \"write\"
artifacts = \"write\"
metrics = true
sessions = [\"*\"]
reminders = {}
";

/// One class of attack: how many host calls each attacker makes, and what
/// its error must say when it is refused (`None`: it may also finish, or
/// end at its deadline).
struct Class {
    attack: &'static str,
    count: u32,
    refused_with: Option<&'static str>,
}

const CLASSES: &[Class] = &[
    Class {
        attack: "resource_uri",
        count: 1000,
        refused_with: Some("at most 2048 are allowed"),
    },
    Class {
        attack: "resource_match",
        count: 1000,
        refused_with: Some("is not a resource this tool's component offers"),
    },
    Class {
        attack: "log",
        count: 1000,
        refused_with: None,
    },
    Class {
        attack: "random",
        count: 10,
        refused_with: Some("exceeds limit"),
    },
    Class {
        attack: "http_parts",
        count: 1024,
        refused_with: Some("authority 0 refused"),
    },
    Class {
        attack: "sessions",
        count: 1000,
        refused_with: Some("at most 256 are accepted"),
    },
    Class {
        attack: "metrics",
        count: 1000,
        refused_with: Some("is invalid"),
    },
    Class {
        attack: "reminder_at",
        count: 1000,
        refused_with: Some("at most 64 are"),
    },
    Class {
        attack: "kv_cursor",
        count: 1000,
        refused_with: Some("over the 1024-byte limit"),
    },
    Class {
        attack: "fs_sync",
        count: 1000,
        refused_with: None,
    },
    Class {
        attack: "artifacts",
        count: 100_000,
        refused_with: None,
    },
    Class {
        attack: "spin",
        count: 1,
        refused_with: None,
    },
];

/// What one class did to the server.
#[derive(Debug)]
struct Figures {
    attack: &'static str,
    peak_rss_kib: u64,
    health_p99: Duration,
    health_max: Duration,
    longest_past_deadline_ms: i64,
    idle_cpu: Duration,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hostile_host_calls_end_by_their_deadline_and_the_server_stays_up() {
    let dir = common::host_dir(&["hostile", "echo"], CONFIG);
    let mut served = serve(dir.path(), &[]);
    let client = common::http_client();
    echo(&served, &client).await;
    // The optimizer compiles the tools again in the background after the
    // server starts: the attacks begin once it is done.
    let quiet = settle(served.pid(), Duration::from_secs(300)).await;
    println!("the server is idle after {quiet:?}");
    let mut figures = Vec::new();
    for class in CLASSES {
        figures.push(attack(&served, &client, class).await);
        echo(&served, &client).await;
    }
    println!("attack          peak RSS   healthz p99   max    past deadline   CPU after");
    for f in &figures {
        println!(
            "{:<15} {:>5} MiB  {:>8.1?}  {:>8.1?}  {:>6} ms  {:>8.1?}",
            f.attack,
            f.peak_rss_kib >> 10,
            f.health_p99,
            f.health_max,
            f.longest_past_deadline_ms,
            f.idle_cpu
        );
    }
    served.signal(libc::SIGTERM);
    let status = served
        .wait_for_exit(Duration::from_secs(15))
        .expect("the server stops on SIGTERM");
    assert!(status.success(), "{status}:\n{}", served.stderr());
}

async fn attack(served: &Served, client: &reqwest::Client, class: &Class) -> Figures {
    let attacking = Arc::new(AtomicBool::new(true));
    let probes = tokio::spawn(probe(served.url.clone(), served.pid(), attacking.clone()));
    let attackers: Vec<_> = (0..ATTACKERS)
        .map(|_| {
            let (client, url) = (client.clone(), served.url.clone());
            let input = json!({ "attack": class.attack, "count": class.count });
            tokio::spawn(async move {
                let session = session(&client, &url).await;
                let started = Instant::now();
                let answer = client
                    .post(format!("{url}/toolhost/v1/tools/hostile"))
                    .json(&json!({ "input": input, "sessionId": session }))
                    .send()
                    .await
                    .expect("the attack is answered");
                let status = answer.status();
                let body: Value = answer.json().await.expect("a JSON answer");
                (status, body, started.elapsed())
            })
        })
        .collect();
    let mut longest_past_deadline_ms = i64::MIN;
    for attacker in attackers {
        let (status, body, elapsed) = attacker.await.unwrap();
        let attack = class.attack;
        assert!(status.is_success(), "{attack}: {status} {body}");
        let wall_ms = body["usage"]["wallUs"].as_u64().expect("a receipt") / 1000;
        longest_past_deadline_ms = longest_past_deadline_ms.max(wall_ms as i64 - TIMEOUT_MS as i64);
        assert!(
            wall_ms <= TIMEOUT_MS + GRACE_MS,
            "{attack}: the call ran {wall_ms} ms, past its {TIMEOUT_MS} ms deadline: {body}"
        );
        assert!(
            elapsed <= Duration::from_millis(TIMEOUT_MS + 1000),
            "{attack}: answered after {elapsed:?}: {body}"
        );
        let text = body["result"].to_string();
        match class.refused_with {
            Some(refusal) => assert!(
                body["isError"] == json!(true) && text.contains(refusal),
                "{attack}: not refused with {refusal:?}: {body}"
            ),
            None if body["isError"] == json!(true) => assert!(
                ["timed out", "limit", "cap", "at most", "budget"]
                    .iter()
                    .any(|named| text.contains(named)),
                "{attack}: the error names no limit: {body}"
            ),
            None => {}
        }
    }
    attacking.store(false, Ordering::Relaxed);
    let (mut latencies, peak_rss_kib) = probes.await.unwrap();
    // What the server burns once every call is over.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = cpu_time(served.pid());
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_cpu = cpu_time(served.pid()).saturating_sub(before);
    latencies.sort();
    let health_p99 = latencies[(latencies.len() * 99 / 100).min(latencies.len() - 1)];
    let health_max = *latencies.last().unwrap();
    let figures = Figures {
        attack: class.attack,
        peak_rss_kib,
        health_p99,
        health_max,
        longest_past_deadline_ms,
        idle_cpu,
    };
    println!("{figures:?}");
    assert!(
        peak_rss_kib < RSS_BOUND_KIB,
        "{}: the server's RSS reached {} MiB",
        class.attack,
        peak_rss_kib >> 10
    );
    assert!(
        health_p99 < Duration::from_millis(100) && health_max < Duration::from_secs(1),
        "{}: /healthz p99 {health_p99:?}, slowest {health_max:?}",
        class.attack
    );
    assert!(
        idle_cpu < IDLE_CPU,
        "{}: the server used {idle_cpu:?} of CPU in the second after the calls ended",
        class.attack
    );
    figures
}

/// Wait until the server spends less than [`IDLE_CPU`] in a second, at most
/// `limit`; how long that took.
async fn settle(pid: i32, limit: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let before = cpu_time(pid);
        tokio::time::sleep(Duration::from_secs(1)).await;
        if cpu_time(pid).saturating_sub(before) < IDLE_CPU {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "the server was still busy {limit:?} after it started"
        );
    }
}

/// Probe `/healthz` every [`PROBE_EVERY`] while `attacking`: each probe's
/// latency, and the server's peak RSS.
async fn probe(url: String, pid: i32, attacking: Arc<AtomicBool>) -> (Vec<Duration>, u64) {
    let client = common::http_client();
    let mut latencies = Vec::new();
    let mut peak_rss_kib = 0;
    while attacking.load(Ordering::Relaxed) {
        let asked = Instant::now();
        let health = tokio::time::timeout(
            Duration::from_secs(5),
            client.get(format!("{url}/healthz")).send(),
        )
        .await;
        let latency = asked.elapsed();
        assert!(
            matches!(&health, Ok(Ok(r)) if r.status().is_success()),
            "/healthz did not answer: {health:?}"
        );
        latencies.push(latency);
        peak_rss_kib = peak_rss_kib.max(rss_kib(pid));
        tokio::time::sleep(PROBE_EVERY.saturating_sub(latency)).await;
    }
    (latencies, peak_rss_kib)
}

/// A new session of the server's (reminders and artifacts need one): its id.
async fn session(client: &reqwest::Client, url: &str) -> String {
    let answer = client
        .post(format!("{url}/toolhost/v1/sessions"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 201);
    let body: Value = answer.json().await.unwrap();
    body["id"].as_str().unwrap().to_string()
}

async fn echo(served: &Served, client: &reqwest::Client) {
    let answer: Value = client
        .post(format!("{}/toolhost/v1/tools/echo", served.url))
        .json(&json!({ "input": { "text": "still here" } }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["result"], json!("still here"), "{answer}");
}

fn rss_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The process's user and system CPU time so far.
fn cpu_time(pid: i32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/<pid>/stat");
    // After the command's `)`: state is field 3, utime 14 and stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no memory effects.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100);
    Duration::from_millis(ticks * 1000 / per_second)
}
