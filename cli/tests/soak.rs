//! Soak: calls of every outcome (success, `isError`, trap, timeout, invalid
//! input, unknown tool) from 32 clients at once through `toolhost serve`.
//! Afterwards the server's memory and file descriptors are where they were
//! after the warm-up, every call got exactly one well-formed answer, and
//! the KV counter equals the increments acknowledged.
//!
//! CI runs 10 000 calls. The full run, whose figures go in bench/RESULTS.md:
//!
//! ```sh
//! TOOLHOST_SOAK_CALLS=100000 cargo test --release -p toolhost --test soak -- --nocapture
//! ```

#![allow(
    clippy::unwrap_used,
    reason = "a test fails by panicking, helpers included"
)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::process::{Served, serve};
use reqwest::StatusCode;
use serde_json::{Value, json};

const CLIENTS: usize = 32;
const DEFAULT_CALLS: usize = 10_000;
/// RSS may grow this much from the end of the warm-up to the end.
const RSS_GROWTH_ALLOWED: f64 = 0.10;

const CONFIG: &str = "\
[tools.counter]
kv = [\"default\"]
[tools.spin]
timeout_ms = 20
";

/// What one call is, and so what its answer must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Echo,
    Increment,
    Trap,
    Timeout,
    InvalidInput,
    UnknownTool,
}

impl Kind {
    /// The mix, by call number: 45% echo, 25% increments, 10% traps, 2%
    /// timeouts, 12% invalid input, 6% unknown tools.
    fn of(n: usize) -> Self {
        match n % 100 {
            0..45 => Self::Echo,
            45..70 => Self::Increment,
            70..80 => Self::Trap,
            80..82 => Self::Timeout,
            82..94 => Self::InvalidInput,
            _ => Self::UnknownTool,
        }
    }

    fn request(self, n: usize) -> (&'static str, Value) {
        match self {
            Self::Echo => ("echo", json!({ "text": format!("call {n}") })),
            Self::Increment => ("counter", json!({ "name": "soak" })),
            Self::Trap => ("trap", json!({})),
            Self::Timeout => ("spin", json!({})),
            Self::InvalidInput => ("echo", json!({ "text": n })),
            Self::UnknownTool => ("no_such_tool", json!({})),
        }
    }

    /// Whether `(status, body)` is the one answer this call may get.
    fn check(self, n: usize, status: StatusCode, body: &Value) -> Result<(), String> {
        let text = body["result"].as_str().unwrap_or_default();
        let envelope = |is_error: bool| {
            status == StatusCode::OK && body["ok"] == true && body["isError"] == is_error
        };
        let refusal = |want: StatusCode, code: &str| {
            status == want && body["ok"] == false && body["error"]["code"] == code
        };
        let good = match self {
            Self::Echo => envelope(false) && text == format!("call {n}"),
            Self::Increment => envelope(false) && body["result"]["value"].is_i64(),
            Self::Trap => envelope(true) && text.contains("trapped"),
            Self::Timeout => envelope(true) && text.contains("timed out"),
            Self::InvalidInput => refusal(StatusCode::BAD_REQUEST, "invalid_tool_input"),
            Self::UnknownTool => refusal(StatusCode::NOT_FOUND, "unknown_tool"),
        };
        if good {
            Ok(())
        } else {
            Err(format!("call {n} ({self:?}): {status} {body}"))
        }
    }
}

/// What a phase of the run saw.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    /// Each receipt's `[wallUs, peakMemoryBytes, peakHostBytes, outputBytes]`.
    receipts: Vec<[u64; 4]>,
    increments: usize,
    wrong: Vec<String>,
}

/// The parts of a receipt the soak reports, in `Tally::receipts` order.
const RECEIPT_PARTS: [&str; 4] = ["wallUs", "peakMemoryBytes", "peakHostBytes", "outputBytes"];

/// A call that ran carries its receipt (`usage`); a refusal does not.
fn receipt(body: &Value) -> Option<[u64; 4]> {
    let usage = body.get("usage")?;
    Some(RECEIPT_PARTS.map(|part| usage[part].as_u64().unwrap_or(u64::MAX)))
}

/// Run calls `range` over `CLIENTS` connections; each client takes the next
/// call number until the range is done.
async fn run(url: &str, range: std::ops::Range<usize>) -> Tally {
    let next = Arc::new(AtomicUsize::new(range.start));
    let clients = (0..CLIENTS).map(|_| {
        let (next, url, end) = (next.clone(), url.to_string(), range.end);
        tokio::spawn(async move {
            let client = common::http_client();
            let mut tally = Tally::default();
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= end {
                    return tally;
                }
                let kind = Kind::of(n);
                let (tool, input) = kind.request(n);
                let started = Instant::now();
                let answer = client
                    .post(format!("{url}/toolhost/v1/tools/{tool}"))
                    .json(&json!({ "input": input }))
                    .send()
                    .await;
                let checked = match answer {
                    Ok(response) => {
                        let status = response.status();
                        match response.json::<Value>().await {
                            Ok(body) => {
                                tally.receipts.extend(receipt(&body));
                                kind.check(n, status, &body)
                            }
                            Err(e) => Err(format!("call {n} ({kind:?}): {status}, body: {e}")),
                        }
                    }
                    Err(e) => Err(format!("call {n} ({kind:?}): no answer: {e}")),
                };
                tally.latencies.push(started.elapsed());
                match checked {
                    Ok(()) if kind == Kind::Increment => tally.increments += 1,
                    Ok(()) => {}
                    Err(problem) => tally.wrong.push(problem),
                }
            }
        })
    });
    let mut total = Tally::default();
    for client in futures::future::join_all(clients).await {
        let tally = client.expect("a client task");
        total.latencies.extend(tally.latencies);
        total.receipts.extend(tally.receipts);
        total.increments += tally.increments;
        total.wrong.extend(tally.wrong);
    }
    total
}

/// RSS in KiB and open descriptors, once the clients' connections closed
/// and the idle server gave its pool's warm memory back
/// (`engine::IDLE_RELEASE_AFTER`), so warm slots are not counted as growth.
async fn footprint(served: &Served) -> (u64, usize) {
    tokio::time::sleep(toolhost::engine::IDLE_RELEASE_AFTER + Duration::from_millis(500)).await;
    (served.status_kib("VmRSS"), served.open_fds())
}

fn percentile<T: Copy + Default>(sorted: &[T], p: f64) -> T {
    if sorted.is_empty() {
        return T::default();
    }
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_mixed_load_leaks_nothing_and_loses_nothing() {
    let calls = std::env::var("TOOLHOST_SOAK_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CALLS);
    let warm_up = (calls / 10).max(1000).min(calls);
    let dir = common::host_dir(&["echo", "counter", "trap", "spin"], CONFIG);
    let served = serve(dir.path(), &[]);

    let first = run(&served.url, 0..warm_up).await;
    let (rss_warm, fds_warm) = footprint(&served).await;
    let started = Instant::now();
    let rest = run(&served.url, warm_up..calls).await;
    let elapsed = started.elapsed();
    let (rss_end, fds_end) = footprint(&served).await;

    let wrong: Vec<&String> = first.wrong.iter().chain(&rest.wrong).collect();
    assert!(
        wrong.is_empty(),
        "{} of {calls} calls got a wrong answer or none; first ones: {:#?}\nserver stderr:\n{}",
        wrong.len(),
        &wrong[..wrong.len().min(5)],
        served.stderr()
    );
    let increments = first.increments + rest.increments;
    let client = common::http_client();
    let total: Value = client
        .post(format!("{}/toolhost/v1/tools/counter", served.url))
        .json(&json!({ "input": { "name": "soak", "by": 0 } }))
        .send()
        .await
        .expect("read the counter")
        .json()
        .await
        .expect("a JSON answer");
    assert_eq!(
        total["result"]["value"],
        json!(increments),
        "the counter holds every acknowledged increment and nothing else"
    );

    let mut latencies = rest.latencies;
    latencies.sort();
    #[allow(clippy::cast_precision_loss)]
    let rate = latencies.len() as f64 / elapsed.as_secs_f64();
    println!(
        "soak: {calls} calls ({warm_up} warm-up) from {CLIENTS} clients; after the warm-up \
         {rate:.0} calls/s, p50 {:?}, p99 {:?}, max {:?}; RSS {rss_warm} KiB -> {rss_end} KiB; \
         fds {fds_warm} -> {fds_end}; {increments} increments",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or_default(),
    );
    for (i, part) in RECEIPT_PARTS.iter().enumerate() {
        let mut values: Vec<u64> = rest.receipts.iter().map(|r| r[i]).collect();
        values.sort_unstable();
        println!(
            "soak usage {part}: p50 {}, p99 {}, max {} over {} receipts",
            percentile(&values, 0.5),
            percentile(&values, 0.99),
            values.last().copied().unwrap_or_default(),
            values.len()
        );
    }
    assert!(
        rest.receipts.iter().all(|r| !r.contains(&u64::MAX)),
        "every receipt has every part"
    );
    assert!(
        rest.receipts.len() * 2 > calls - warm_up,
        "most calls ran and carried a receipt"
    );
    #[allow(clippy::cast_precision_loss)]
    let growth = (rss_end as f64 - rss_warm as f64) / rss_warm as f64;
    assert!(
        growth <= RSS_GROWTH_ALLOWED,
        "RSS grew {:.1}% after the warm-up ({rss_warm} -> {rss_end} KiB)",
        growth * 100.0
    );
    assert!(
        fds_end <= fds_warm,
        "file descriptors leaked: {fds_warm} after the warm-up, {fds_end} at the end"
    );
}
