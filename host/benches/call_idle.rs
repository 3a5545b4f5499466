//! The cost of one `echo` call through `Host::call` when calls arrive back
//! to back versus after the process sat idle (as a server waiting on its
//! next request does), on a current-thread and a multi-thread runtime.
//! Explains the gap between the criterion figure and the MCP stdio latency.
//!
//! Run with `cargo bench -p toolhost --bench call_idle`; figures go in
//! bench/RESULTS.md.

use std::sync::Arc;
use std::time::{Duration, Instant};

use toolhost::{CallOptions, Host, Session};

/// Calls measured per case, after as many again to warm up.
const CALLS: usize = 5000;

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("tools"))?;
    let echo = toolhost_test_artifacts::find("echo").expect("echo artifact");
    std::fs::copy(echo, dir.path().join("tools/echo.wasm"))?;
    println!("| runtime | idle before each call | p50 of Host::call |");
    println!("| --- | --- | --- |");
    for multi_thread in [false, true] {
        let runtime = if multi_thread {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?
        } else {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
        };
        let host = Arc::new(runtime.block_on(Host::builder(dir.path()).build())?);
        for idle in [Duration::ZERO, Duration::from_micros(100)] {
            let mut times = Vec::with_capacity(CALLS);
            for i in 0..CALLS * 2 {
                let host = host.clone();
                let took = runtime.block_on(async move {
                    tokio::spawn(async move {
                        let session = Arc::new(Session::ephemeral()?);
                        let options = CallOptions::new(session);
                        let started = Instant::now();
                        host.call("echo", serde_json::json!({"text": "hello"}), &options)
                            .await?;
                        anyhow::Ok(started.elapsed())
                    })
                    .await?
                })?;
                if i >= CALLS {
                    times.push(took);
                }
                std::thread::sleep(idle);
            }
            times.sort();
            println!(
                "| {} | {} µs | {:.1} µs |",
                if multi_thread {
                    "multi-thread"
                } else {
                    "current-thread"
                },
                idle.as_micros(),
                times[times.len() / 2].as_secs_f64() * 1e6
            );
        }
    }
    Ok(())
}
