//! Load benchmark of the HTTP API: `echo` calls over keep-alive connections
//! from 1 and from 32 concurrent clients, reporting calls/s and p50/p99.
//!
//! The server runs in this process on its own 2-thread runtime, the clients
//! on another: like a separate load generator, they share the machine's cores.
//!
//! Run with `cargo bench -p toolhost --bench http_load` (optional args:
//! seconds per run, default 5); figures go in bench/RESULTS.md.

#[path = "common/load.rs"]
mod load;

use std::time::Duration;

use load::{Call, load_each, start_server};

fn echo_path() -> &'static str {
    toolhost_test_artifacts::find("echo").expect("echo artifact")
}

fn main() -> anyhow::Result<()> {
    let seconds: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("tools"))?;
    std::fs::copy(echo_path(), dir.path().join("tools/echo.wasm"))?;

    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let addr = server_rt.block_on(start_server(dir.path()))?;

    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let echo = Call {
        path: "/toolhost/v1/tools/echo",
        body: bytes::Bytes::from_static(br#"{"input":{"text":"hello"}}"#),
        expect: br#""hello""#,
    };
    println!("| clients | calls/s | p50 | p99 |");
    println!("| --- | --- | --- | --- |");
    for clients in [1, 32] {
        // A short warm-up, then the measured run.
        let calls = vec![echo.clone(); clients];
        client_rt.block_on(load_each(&[addr], &calls, Duration::from_millis(500)))?;
        let run = client_rt.block_on(load_each(&[addr], &calls, Duration::from_secs(seconds)))?;
        println!(
            "| {clients} | {:.0} | {:.3} ms | {:.3} ms |",
            run.rate(),
            run.ms(0.50),
            run.ms(0.99),
        );
    }
    Ok(())
}
