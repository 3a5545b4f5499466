//! Load benchmark of the HTTP API: `echo` calls over keep-alive connections
//! from 1 and from 32 concurrent clients, reporting calls/s and p50/p99.
//!
//! The server runs in this process on its own 2-thread runtime, the clients
//! on another: like a separate load generator, they share the machine's cores.
//!
//! Run with `cargo bench -p toolhost --bench http_load` (optional args:
//! seconds per run, default 5); figures go in bench/RESULTS.md.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
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
    println!("| clients | calls/s | p50 | p99 |");
    println!("| --- | --- | --- | --- |");
    for clients in [1, 32] {
        // A short warm-up, then the measured run.
        client_rt.block_on(load(addr, clients, Duration::from_millis(500)))?;
        let (calls, elapsed, mut latencies) =
            client_rt.block_on(load(addr, clients, Duration::from_secs(seconds)))?;
        latencies.sort_unstable();
        let pct = |p: f64| {
            let i = ((latencies.len() as f64 - 1.0) * p).round() as usize;
            latencies[i]
        };
        println!(
            "| {clients} | {:.0} | {:.3} ms | {:.3} ms |",
            calls as f64 / elapsed.as_secs_f64(),
            pct(0.50).as_secs_f64() * 1000.0,
            pct(0.99).as_secs_f64() * 1000.0,
        );
    }
    Ok(())
}

/// `clients` connections, each sending calls back to back for `duration`.
async fn load(
    addr: std::net::SocketAddr,
    clients: usize,
    duration: Duration,
) -> anyhow::Result<(usize, Duration, Vec<Duration>)> {
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = (0..clients)
        .map(|_| tokio::spawn(client(addr, deadline)))
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    Ok((latencies.len(), started.elapsed(), latencies))
}

async fn client(addr: std::net::SocketAddr, deadline: Instant) -> anyhow::Result<Vec<Duration>> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let body = Bytes::from_static(br#"{"input":{"text":"hello"}}"#);
    let mut latencies = Vec::new();
    while Instant::now() < deadline {
        let request = hyper::Request::post("/toolhost/v1/tools/echo")
            .header("host", addr.to_string())
            .header("content-type", "application/json")
            .body(Full::new(body.clone()))?;
        let start = Instant::now();
        let response = sender.send_request(request).await?;
        anyhow::ensure!(response.status() == 200, "status {}", response.status());
        let bytes = response.into_body().collect().await?.to_bytes();
        latencies.push(start.elapsed());
        anyhow::ensure!(
            bytes.windows(7).any(|w| w == b"\"hello\""),
            "unexpected body"
        );
    }
    Ok(latencies)
}
