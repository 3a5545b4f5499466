//! A load generator for the HTTP API benchmarks: keep-alive connections
//! (raw hyper HTTP/1.1), each sending one call after another to the
//! servers given in turn, timing each; and the servers they load.

#![allow(dead_code, reason = "each bench uses its part")]

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
#[derive(Clone)]
pub struct Call {
    /// The route, e.g. `/toolhost/v1/tools/echo`.
    pub path: &'static str,
    /// The JSON body.
    pub body: Bytes,
    /// Something every good answer holds.
    pub expect: &'static [u8],
}

impl Call {
    /// The same call in session `id`: its body with `"sessionId"` added.
    pub fn in_session(&self, id: &str) -> anyhow::Result<Self> {
        let mut body: serde_json::Value = serde_json::from_slice(&self.body)?;
        body["sessionId"] = serde_json::Value::String(id.to_string());
        Ok(Self {
            body: serde_json::to_vec(&body)?.into(),
            ..self.clone()
        })
    }
}

/// `POST /toolhost/v1/sessions` on `addr`: the new session's id.
pub async fn create_session(addr: SocketAddr) -> anyhow::Result<String> {
    let mut sender = connect(addr).await?;
    let request = hyper::Request::post("/toolhost/v1/sessions")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(b"{}")))?;
    let response = sender.send_request(request).await?;
    anyhow::ensure!(
        response.status() == 201,
        "no session: {}",
        response.status()
    );
    let bytes = response.into_body().collect().await?.to_bytes();
    let session: serde_json::Value = serde_json::from_slice(&bytes)?;
    session["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow::anyhow!("a session without an id"))
}

async fn connect(
    addr: SocketAddr,
) -> anyhow::Result<hyper::client::conn::http1::SendRequest<Full<Bytes>>> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) =
        hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender)
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

/// One connection per call of `calls`, connection `i` to
/// `servers[i % len]` sending `calls[i]` back to back for `duration`.
pub async fn load_each(
    servers: &[SocketAddr],
    calls: &[Call],
    duration: Duration,
) -> anyhow::Result<Run> {
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = calls
        .iter()
        .enumerate()
        .map(|(i, call)| tokio::spawn(client(servers[i % servers.len()], call.clone(), deadline)))
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
    let mut sender = connect(addr).await?;
    let body = call.body.clone();
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
