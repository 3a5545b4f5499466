//! MCP's two protocol families side by side: `echo` calls from one client
//! as a 2025-11-25 session (`initialize`, then calls in the session) and as
//! 2026-07-28 requests (each carrying its version and capabilities in
//! `_meta`, no session), over stdio (`toolhost mcp`, one process per
//! client) and over streamable HTTP (one `toolhost serve`, one keep-alive
//! connection per client). Each row gives calls/s, p50 and p99 of a call
//! and the server's CPU time per call (user and system, from `/proc`); the
//! rows take turns in rounds, so a slower stretch of the machine falls on
//! each alike, and a row's CPU per call is the median of its rounds'.
//!
//! Run with `cargo bench -p toolhost-cli --bench mcp_versions` (optional:
//! the number of calls per row, default 20000); figures go in
//! bench/RESULTS.md. With `MCP_VERSIONS_BASELINE` set to another `toolhost`
//! binary (an older build, say), its HTTP rows run too, against a server of
//! its own, to compare a change in the same run.

#[path = "common/cpu_time.rs"]
mod cpu_time;

use cpu_time::cpu_time;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::{Value, json};

const ROUNDS: usize = 10;
const NEW: &str = "2026-07-28";
const OLD: &str = "2025-11-25";

fn main() -> anyhow::Result<()> {
    let calls: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20_000);
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("tools"))?;
    let echo = toolhost_test_artifacts::find("echo").context("echo artifact")?;
    std::fs::copy(echo, dir.path().join("tools/echo.wasm"))?;
    // Optimized code in the compile cache before anything is timed.
    let warmed = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["tools", "list", "--dir"])
        .arg(dir.path())
        .output()?;
    anyhow::ensure!(warmed.status.success(), "toolhost tools list failed");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let served = Served::start(env!("CARGO_BIN_EXE_toolhost").as_ref(), dir.path())?;
    // The baseline serves a folder of its own: two servers never share one.
    let baseline_dir = tempfile::tempdir()?;
    std::fs::create_dir_all(baseline_dir.path().join("tools"))?;
    std::fs::copy(echo, baseline_dir.path().join("tools/echo.wasm"))?;
    let baseline = std::env::var_os("MCP_VERSIONS_BASELINE")
        .map(|binary| Served::start(&binary, baseline_dir.path()))
        .transpose()?;
    let mut rows: Vec<Row> = vec![
        Row::new(
            "stdio, 2025-11-25 session",
            Transport::Stdio(StdioClient::start(dir.path(), OLD)?),
        ),
        Row::new(
            "stdio, 2026-07-28 per request",
            Transport::Stdio(StdioClient::start(dir.path(), NEW)?),
        ),
        Row::new(
            "HTTP, 2025-11-25 session",
            Transport::Http(runtime.block_on(Http::start(&served, OLD))?, served.pid),
        ),
        Row::new(
            "HTTP, 2026-07-28 per request",
            Transport::Http(runtime.block_on(Http::start(&served, NEW))?, served.pid),
        ),
    ];
    if let Some(baseline) = &baseline {
        for (name, version) in [
            ("HTTP, 2025-11-25 session, baseline binary", OLD),
            ("HTTP, 2026-07-28 per request, baseline binary", NEW),
        ] {
            let client = runtime.block_on(Http::start(baseline, version))?;
            rows.push(Row::new(name, Transport::Http(client, baseline.pid)));
        }
    }
    for row in &mut rows {
        for _ in 0..50 {
            row.call(&runtime)?;
        }
    }
    for _ in 0..ROUNDS {
        for row in &mut rows {
            // A baseline row may be far slower: it makes a tenth of the calls.
            let share = if row.name.ends_with("baseline binary") {
                10
            } else {
                1
            };
            row.round(&runtime, (calls / share).div_ceil(ROUNDS))?;
        }
    }
    println!(
        "| transport, protocol | calls | calls/s | p50 | p99 | server CPU per call (median of {ROUNDS} rounds) |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for row in &mut rows {
        row.print();
    }
    drop((served, baseline));
    Ok(())
}

/// One client, and the server process whose CPU it costs.
enum Transport {
    Stdio(StdioClient),
    Http(Http, u32),
}

/// A row: one client's calls, their latencies and the server CPU per round.
struct Row {
    name: &'static str,
    transport: Transport,
    latencies: Vec<Duration>,
    busy: Duration,
    cpu_per_call: Vec<Duration>,
}

impl Row {
    fn new(name: &'static str, transport: Transport) -> Self {
        Self {
            name,
            transport,
            latencies: Vec::new(),
            busy: Duration::ZERO,
            cpu_per_call: Vec::new(),
        }
    }

    fn pid(&self) -> u32 {
        match &self.transport {
            Transport::Stdio(stdio) => stdio.child.id(),
            Transport::Http(_, pid) => *pid,
        }
    }

    fn call(&mut self, runtime: &tokio::runtime::Runtime) -> anyhow::Result<Duration> {
        let started = Instant::now();
        let reply = match &mut self.transport {
            Transport::Stdio(stdio) => stdio.call_echo(),
            Transport::Http(http, _) => runtime.block_on(http.call_echo()),
        }
        .with_context(|| format!("an echo call of row {:?}", self.name))?;
        let elapsed = started.elapsed();
        anyhow::ensure!(
            reply["result"]["content"][0]["text"] == "hello",
            "{}: {reply}",
            self.name
        );
        Ok(elapsed)
    }

    fn round(&mut self, runtime: &tokio::runtime::Runtime, calls: usize) -> anyhow::Result<()> {
        let cpu_before = cpu_time(self.pid())?;
        let started = Instant::now();
        for _ in 0..calls {
            let took = self.call(runtime)?;
            self.latencies.push(took);
        }
        self.busy += started.elapsed();
        let cpu = cpu_time(self.pid())?.saturating_sub(cpu_before);
        self.cpu_per_call.push(cpu / u32::try_from(calls)?);
        Ok(())
    }

    fn print(&mut self) {
        self.latencies.sort();
        self.cpu_per_call.sort();
        let n = self.latencies.len();
        let at = |q: f64| self.latencies[((n as f64 * q) as usize).min(n - 1)];
        println!(
            "| {} | {n} | {:.0} | {:.3} ms | {:.3} ms | {:.3} ms |",
            self.name,
            n as f64 / self.busy.as_secs_f64(),
            ms(at(0.5)),
            ms(at(0.99)),
            ms(self.cpu_per_call[self.cpu_per_call.len() / 2]),
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The `_meta` of a 2026-07-28 request.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": NEW,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "bench", "version": "0" },
    })
}

/// The params of an `echo` call in `version`.
fn echo_params(version: &str) -> Value {
    let mut params = json!({ "name": "echo", "arguments": { "text": "hello" } });
    if version == NEW {
        params["_meta"] = meta();
    }
    params
}

/// `toolhost mcp` over its stdin and stdout, as a client of `version`.
struct StdioClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    version: &'static str,
    next_id: u64,
    line: String,
}

impl StdioClient {
    fn start(dir: &std::path::Path, version: &'static str) -> anyhow::Result<Self> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["mcp", "--dir"])
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout")?);
        let mut client = Self {
            child,
            stdin,
            stdout,
            version,
            next_id: 0,
            line: String::new(),
        };
        if version == OLD {
            client.request(
                "initialize",
                json!({"protocolVersion": OLD, "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "0"}}),
            )?;
            writeln!(
                client.stdin,
                r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
            )?;
        }
        Ok(client)
    }

    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let message =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        writeln!(self.stdin, "{message}")?;
        self.stdin.flush()?;
        loop {
            self.line.clear();
            anyhow::ensure!(self.stdout.read_line(&mut self.line)? > 0, "stdout closed");
            let reply: Value = serde_json::from_str(&self.line)?;
            if reply["id"] == json!(self.next_id) {
                return Ok(reply);
            }
        }
    }

    fn call_echo(&mut self) -> anyhow::Result<Value> {
        self.request("tools/call", echo_params(self.version))
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `toolhost serve` on a loopback port.
struct Served {
    child: Child,
    url: String,
    pid: u32,
}

impl Served {
    /// `binary serve` for the host in `dir`.
    fn start(binary: &std::ffi::OsStr, dir: &std::path::Path) -> anyhow::Result<Self> {
        let mut child = Command::new(binary)
            .args(["serve", "--listen", "127.0.0.1:0", "--dir"])
            .arg(dir)
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = BufReader::new(child.stderr.take().context("stderr")?);
        let mut url = None;
        let mut lines = stderr.lines();
        for line in lines.by_ref() {
            let line = line?;
            if line.contains("serving") {
                url = line
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("http://"))
                    .and_then(|rest| rest.split('/').next())
                    .map(|addr| format!("http://{addr}"));
                break;
            }
        }
        std::thread::spawn(move || lines.for_each(drop));
        let pid = child.id();
        Ok(Self {
            child,
            url: url.context("toolhost serve printed no address")?,
            pid,
        })
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client of `/mcp` over one keep-alive connection.
struct Http {
    client: reqwest::Client,
    url: String,
    version: &'static str,
    session: Option<String>,
    next_id: u64,
}

impl Http {
    async fn start(served: &Served, version: &'static str) -> anyhow::Result<Self> {
        // reqwest needs the process's TLS provider set, though this is plain HTTP.
        let _ = rustls::crypto::ring::default_provider().install_default();
        // The server drops a connection idle for `header_read_timeout_ms`
        // (10 s) while other rows run: reconnect before it would.
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .pool_idle_timeout(Duration::from_secs(5))
            .build()?;
        let mut http = Self {
            client,
            url: format!("{}/mcp", served.url),
            version,
            session: None,
            next_id: 0,
        };
        if version == OLD {
            let response = http
                .post(
                    "initialize",
                    json!({"protocolVersion": OLD, "capabilities": {},
                                            "clientInfo": {"name": "bench", "version": "0"}}),
                )
                .await?;
            http.session = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            response.bytes().await?;
            http.client
                .post(&http.url)
                .header("Accept", "application/json, text/event-stream")
                .header(
                    "Mcp-Session-Id",
                    http.session.clone().context("no session id")?,
                )
                .header("MCP-Protocol-Version", OLD)
                .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .send()
                .await?
                .bytes()
                .await?;
        }
        Ok(http)
    }

    async fn post(&mut self, method: &str, params: Value) -> anyhow::Result<reqwest::Response> {
        self.next_id += 1;
        let mut request = self
            .client
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", self.version)
            .header("Mcp-Method", method);
        if let Some(name) = params["name"].as_str() {
            request = request.header("Mcp-Name", name.to_string());
        }
        if let Some(session) = &self.session {
            request = request.header("Mcp-Session-Id", session.clone());
        }
        let body =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        Ok(request.json(&body).send().await?)
    }

    async fn call_echo(&mut self) -> anyhow::Result<Value> {
        let response = self.post("tools/call", echo_params(self.version)).await?;
        let text = response.text().await?;
        let data = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .find(|d| d.contains("\"result\"") || d.contains("\"error\""))
            .unwrap_or(text.trim());
        Ok(serde_json::from_str(data)?)
    }
}
