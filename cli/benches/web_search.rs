//! `web_search`'s cost over its search engine's: a SearXNG stand-in on
//! loopback answering a documented JSON page of ten hits, asked directly
//! (a new connection per request, as the component opens one) and through
//! `web_search` (`Host::call`: a fresh sandbox, the request through the
//! HTTP capability, the hits parsed and returned as blocks). Each row gives
//! p50 and p99 of one request; the rows take turns in rounds, so a slower
//! stretch of the machine falls on each alike.
//!
//! Run with `cargo bench -p toolhost-cli --bench web_search` (optional: the
//! number of requests per row, default 2000); figures go in
//! bench/RESULTS.md.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolhost::{CallOptions, Host, Session};

const ROUNDS: usize = 10;

fn main() -> anyhow::Result<()> {
    let requests: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(2000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(run(requests))
}

/// The engine's answer: ten hits, SearXNG's shape.
fn page() -> Vec<u8> {
    let results: Vec<_> = (0..10)
        .map(|i| {
            json!({ "url": format!("https://example.org/{i}"), "title": format!("Hit {i}"),
                    "content": "a snippet of a page about the query, as engines send it",
                    "engine": "duckduckgo", "score": 1.0 })
        })
        .collect();
    let body = json!({ "query": "q", "number_of_results": 10, "results": results }).to_string();
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Serve `page` to every request on `listener`, one connection each.
async fn serve(listener: tokio::net::TcpListener) {
    let page = Arc::new(page());
    while let Ok((mut socket, _)) = listener.accept().await {
        let page = page.clone();
        tokio::spawn(async move {
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = socket.write_all(&page).await;
            let _ = socket.shutdown().await;
        });
    }
}

/// GET `path` from `address` on a connection of its own, as the
/// component does: the whole response.
async fn ask(address: std::net::SocketAddr, path: &str) -> anyhow::Result<Vec<u8>> {
    let mut socket = tokio::net::TcpStream::connect(address).await?;
    let head = format!(
        "GET {path} HTTP/1.1\r\nhost: {address}\r\naccept: application/json\r\n\
         connection: close\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await?;
    let mut response = Vec::new();
    socket.read_to_end(&mut response).await?;
    Ok(response)
}

/// One row's times.
struct Row {
    label: &'static str,
    times: Vec<Duration>,
}

impl Row {
    fn quantile(&self, q: f64) -> Duration {
        let mut sorted = self.times.clone();
        sorted.sort();
        let at = ((sorted.len() as f64 - 1.0) * q).round() as usize;
        sorted.get(at).copied().unwrap_or_default()
    }
}

async fn run(requests: usize) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(serve(listener));
    let url = format!("http://{address}");

    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("tools"))?;
    std::fs::write(
        dir.path().join("toolhost.toml"),
        format!(
            "[toolset]\ntype = \"agent_toolset\"\n\
             web_search = {{ provider = \"searxng\", url = \"{url}\" }}\n"
        ),
    )?;
    let host = Host::builder(dir.path()).build().await?;
    let options = CallOptions::new(Arc::new(Session::ephemeral().context("session")?));
    let asked = "/search?q=wasmtime%20components&format=json";
    let input = json!({ "query": "wasmtime components", "max_results": 10 });

    // Warm both paths (the component compiled and cached).
    for _ in 0..20 {
        ask(address, asked).await?;
        host.call("web_search", input.clone(), &options).await?;
    }
    let mut engine = Row {
        label: "the engine, asked directly",
        times: Vec::new(),
    };
    let mut tool = Row {
        label: "web_search (Host::call)",
        times: Vec::new(),
    };
    let per_round = requests.div_ceil(ROUNDS);
    for _ in 0..ROUNDS {
        for _ in 0..per_round {
            let started = Instant::now();
            let body = ask(address, asked).await?;
            engine.times.push(started.elapsed());
            anyhow::ensure!(body.len() > 100, "the engine answered {} bytes", body.len());
        }
        for _ in 0..per_round {
            let started = Instant::now();
            let result = host.call("web_search", input.clone(), &options).await?;
            tool.times.push(started.elapsed());
            anyhow::ensure!(!result.is_error, "web_search failed: {}", result.result);
        }
    }
    println!("| path | requests | p50 | p99 |");
    println!("| --- | --- | --- | --- |");
    for row in [&engine, &tool] {
        println!(
            "| {} | {} | {:.3} ms | {:.3} ms |",
            row.label,
            row.times.len(),
            row.quantile(0.5).as_secs_f64() * 1e3,
            row.quantile(0.99).as_secs_f64() * 1e3,
        );
    }
    let overhead = tool.quantile(0.5).saturating_sub(engine.quantile(0.5));
    println!(
        "web_search's p50 over the engine's: {:.3} ms",
        overhead.as_secs_f64() * 1e3
    );
    Ok(())
}
