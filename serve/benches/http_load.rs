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

use std::sync::Arc;
use std::time::Duration;

use load::{Call, load};
use toolhost::Host;
use toolhost_serve::http::{self, App, ServeOptions};

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
    let addr = server_rt.block_on(async {
        let host = Host::builder(dir.path())
            .cache_dir(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache"))
            .build()
            .await?;
        let mut options = ServeOptions::from_config(&host)?;
        options.listen = "127.0.0.1:0".parse()?;
        let listener = http::bind(&options).await?;
        let addr = listener.local_addr()?;
        let app = App::new(Arc::new(host), options)?;
        tokio::spawn(http::run(listener, app, std::future::pending()));
        anyhow::Ok(addr)
    })?;

    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let echo = Call {
        path: "/toolhost/v1/tools/echo",
        body: br#"{"input":{"text":"hello"}}"#,
        expect: br#""hello""#,
    };
    println!("| clients | calls/s | p50 | p99 |");
    println!("| --- | --- | --- | --- |");
    for clients in [1, 32] {
        // A short warm-up, then the measured run.
        client_rt.block_on(load(&[addr], echo, clients, Duration::from_millis(500)))?;
        let run = client_rt.block_on(load(&[addr], echo, clients, Duration::from_secs(seconds)))?;
        println!(
            "| {clients} | {:.0} | {:.3} ms | {:.3} ms |",
            run.rate(),
            run.ms(0.50),
            run.ms(0.99),
        );
    }
    Ok(())
}
