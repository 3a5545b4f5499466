//! A load generator for the HTTP API benchmarks: keep-alive connections
//! (raw hyper HTTP/1.1), each sending one call after another to the
//! servers given in turn, timing each; and the servers they load.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use toolhost::Host;
use toolhost_serve::http::{self, App, ServeOptions};

/// `toolhost serve` on the host directory `dir`, on a free loopback port
/// of the current runtime, with the benches' shared compile cache.
pub async fn start_server(dir: &Path) -> anyhow::Result<SocketAddr> {
    let host = Host::builder(dir)
        .cache_dir(Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache"))
        .build()
        .await?;
    let mut options = ServeOptions::from_config(&host)?;
    options.listen = "127.0.0.1:0".parse()?;
    let listener = http::bind(&options).await?;
    let addr = listener.local_addr()?;
    let app = App::new(Arc::new(host), options)?;
    tokio::spawn(http::run(listener, app, std::future::pending()));
    Ok(addr)
}

/// What to send: `POST path` with `body`, and a byte string the answer
/// must hold.
#[derive(Clone, Copy)]
pub struct Call {
    /// The route, e.g. `/toolhost/v1/tools/echo`.
    pub path: &'static str,
    /// The JSON body.
    pub body: &'static [u8],
    /// Something every good answer holds.
    pub expect: &'static [u8],
}

/// What one run measured.
pub struct Run {
    /// Calls answered.
    pub calls: usize,
    /// How long the run took.
    pub elapsed: Duration,
    /// Each call's latency, sorted.
    pub latencies: Vec<Duration>,
}

impl Run {
    /// Calls answered per second.
    pub fn rate(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }

    /// The latency at quantile `p` (0..=1), in milliseconds.
    pub fn ms(&self, p: f64) -> f64 {
        let i = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies[i].as_secs_f64() * 1000.0
    }
}

/// `clients` connections, client `i` to `servers[i % len]`, each sending
/// `call` back to back for `duration`.
pub async fn load(
    servers: &[SocketAddr],
    call: Call,
    clients: usize,
    duration: Duration,
) -> anyhow::Result<Run> {
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = (0..clients)
        .map(|i| tokio::spawn(client(servers[i % servers.len()], call, deadline)))
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    latencies.sort_unstable();
    Ok(Run {
        calls: latencies.len(),
        elapsed: started.elapsed(),
        latencies,
    })
}

async fn client(addr: SocketAddr, call: Call, deadline: Instant) -> anyhow::Result<Vec<Duration>> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let body = Bytes::from_static(call.body);
    let mut latencies = Vec::new();
    while Instant::now() < deadline {
        let request = hyper::Request::post(call.path)
            .header("host", addr.to_string())
            .header("content-type", "application/json")
            .body(Full::new(body.clone()))?;
        let start = Instant::now();
        let response = sender.send_request(request).await?;
        let status = response.status();
        let bytes = response.into_body().collect().await?.to_bytes();
        latencies.push(start.elapsed());
        anyhow::ensure!(
            status == 200 && bytes.windows(call.expect.len()).any(|w| w == call.expect),
            "unexpected answer {status}: {}",
            String::from_utf8_lossy(&bytes)
        );
    }
    Ok(latencies)
}
