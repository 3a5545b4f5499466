//! MCP over stdio: `echo` calls from one client speaking newline-delimited
//! JSON-RPC to `toolhost mcp`, against the same client talking to two
//! do-nothing servers as floors (this binary with `--floor-server`: a bare
//! read-parse-write loop; with `--rmcp-floor`: rmcp serving a handler that
//! answers at once, the library's own cost, on tokio's multi-thread
//! runtime as `#[tokio::main]` makes it, and with `--rmcp-floor-one-thread`
//! on a current-thread runtime, as `toolhost mcp` runs); and
//! the time from starting `toolhost mcp` to the first `tools/list` answer
//! with 5 tools and a warm compile cache. One more row puts a second
//! `toolhost mcp` in front, whose `echo` is the first one's, mounted by an
//! `mcp_toolset`: its p50 less the first row's is what proxying a call to
//! an MCP server costs; and another in front of the rmcp floor, whose p50
//! less the rmcp floor's is the proxy alone, with an upstream that costs
//! next to nothing.
//!
//! Each row also gives the server process's CPU time per call (user and
//! system, from `/proc`), the figure issue 25's lean MCP path targets. The
//! servers take turns in rounds, and a row's CPU per call is the median of
//! its rounds'.
//!
//! One more row is an rmcp server on one thread whose `call_tool` is the
//! host's `Host::call` and nothing more (`--rmcp-host-call DIR`): the floor
//! plus the sandboxed call as a server runs it, between messages, with
//! colder caches than the back-to-back `Host::call` measured in this
//! process. `toolhost mcp` less that row is toolhost's own MCP layer.
//!
//! Last, the Python evaluator (`tests/python/py_eval`) over `toolhost mcp`
//! (one call in 50 as many calls; componentize-py must be on `PATH`).
//!
//! Run with `cargo bench -p toolhost-cli --bench mcp_stdio` (optional: the
//! number of calls, default 50000); figures go in bench/RESULTS.md. With
//! `MCP_STDIO_BASELINE` set to another `toolhost` binary (an older build,
//! say), it gets a row of its own, to compare a change in the same run.

#[path = "common/cpu_time.rs"]
mod cpu_time;

use cpu_time::cpu_time;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::{Value, json};

const TOOLS: &[&str] = &["echo", "counter", "notes", "fetch_url", "context"];

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--floor-server") {
        return floor_server();
    }
    let one_thread = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    };
    if args.iter().any(|a| a == "--rmcp-floor") {
        return rmcp_floor::serve(tokio::runtime::Runtime::new()?, None);
    }
    if args.iter().any(|a| a == "--rmcp-floor-one-thread") {
        return rmcp_floor::serve(one_thread()?, None);
    }
    if let Some(at) = args.iter().position(|a| a == "--rmcp-host-call") {
        let dir = args.get(at + 1).context("--rmcp-host-call DIR")?;
        return rmcp_floor::serve(one_thread()?, Some(std::path::Path::new(dir)));
    }
    let calls: usize = args
        .iter()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(50_000);

    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("tools"))?;
    for tool in TOOLS {
        let path = toolhost_test_artifacts::find(tool).expect("artifact");
        std::fs::copy(path, dir.path().join(format!("tools/{tool}.wasm")))?;
    }
    // `program mcp` serving the tools; `toolhost` is this build's.
    let mcp_of = |program: &std::ffi::OsStr| {
        let mut command = Command::new(program);
        command.args(["mcp", "--dir"]).arg(dir.path());
        command
    };
    let toolhost = || mcp_of(env!("CARGO_BIN_EXE_toolhost").as_ref());
    // A toolhost whose only tool is `echo` of the MCP server `command args`.
    let proxy_of =
        |command: &std::path::Path, args: &[&str]| -> anyhow::Result<tempfile::TempDir> {
            let proxy_dir = tempfile::tempdir()?;
            std::fs::create_dir_all(proxy_dir.path().join("tools"))?;
            std::fs::write(
                proxy_dir.path().join("toolhost.toml"),
                format!(
                    "[[mcp_servers]]\nname = \"inner\"\ntype = \"stdio\"\ncommand = {command:?}\n\
                 args = {args:?}\n\n\
                 [[toolset]]\ntype = \"mcp_toolset\"\nmcp_server_name = \"inner\"\n",
                ),
            )?;
            Ok(proxy_dir)
        };
    let dir_arg = dir.path().to_str().expect("utf-8 path");
    let of_toolhost = proxy_of(
        std::path::Path::new(env!("CARGO_BIN_EXE_toolhost")),
        &["mcp", "--dir", dir_arg],
    )?;
    let this_binary = std::env::current_exe()?;
    let of_floor = proxy_of(&this_binary, &["--rmcp-floor"])?;
    let proxy = |proxy_dir: &tempfile::TempDir| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        command.args(["mcp", "--dir"]).arg(proxy_dir.path());
        command
    };
    let this = |flag: &str| {
        let mut command = Command::new(std::env::current_exe().expect("this binary"));
        command.arg(flag);
        command
    };

    // Warm the compile cache with every tool's optimized code (a one-shot
    // `tools list` compiles with Cranelift; a served `toolhost mcp` would
    // start on baseline code and compile in the background, into the
    // start-up and CPU figures), then time start-up to the first tools/list.
    let warmed = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["tools", "list", "--dir"])
        .arg(dir.path())
        .output()?;
    anyhow::ensure!(
        warmed.status.success(),
        "toolhost tools list: {}",
        String::from_utf8_lossy(&warmed.stderr)
    );
    let mut starts: Vec<Duration> = (0..5)
        .map(|_| {
            let started = Instant::now();
            let mut client = Client::start(toolhost())?;
            client.list()?;
            Ok(started.elapsed())
        })
        .collect::<anyhow::Result<_>>()?;
    starts.sort();
    println!(
        "start to first tools/list ({} tools, warm cache): median {:.1} ms",
        TOOLS.len(),
        ms(starts[starts.len() / 2])
    );

    let mut on_two_threads = toolhost();
    on_two_threads.args(["--threads", "2"]);
    let mut servers = vec![
        ("toolhost mcp", toolhost()),
        ("toolhost mcp --threads 2", on_two_threads),
        (
            "toolhost mcp → mcp_toolset → toolhost mcp",
            proxy(&of_toolhost),
        ),
        ("toolhost mcp → mcp_toolset → rmcp floor", proxy(&of_floor)),
        ("rmcp floor (do-nothing handler)", this("--rmcp-floor")),
        (
            "rmcp floor, one thread (current-thread runtime)",
            this("--rmcp-floor-one-thread"),
        ),
        ("rmcp + `Host::call` (one thread)", {
            let mut command = this("--rmcp-host-call");
            command.arg(dir.path());
            command
        }),
        ("floor (do-nothing loop)", this("--floor-server")),
    ];
    if let Some(baseline) = std::env::var_os("MCP_STDIO_BASELINE") {
        servers.insert(1, ("toolhost mcp, baseline binary", mcp_of(&baseline)));
    }
    let mut rows = servers
        .into_iter()
        .map(|(name, command)| {
            let mut client = Client::start(command)?;
            client.list()?;
            for _ in 0..500 {
                client.call_echo()?;
            }
            Ok(Row::new(name, client))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    // The servers take turns, so that a slower stretch of this (virtual)
    // machine falls on every row alike; each row's CPU per call is the
    // median of its rounds'.
    for _ in 0..ROUNDS {
        for row in &mut rows {
            row.round(calls.div_ceil(ROUNDS))?;
        }
    }
    let host_call = host_call_time(dir.path(), calls)?;
    println!(
        "| server | calls | calls/s | p50 | p99 | server CPU per call (median of {ROUNDS} rounds) |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for row in &mut rows {
        row.print();
    }
    println!(
        "`Host::call` of `echo` in this process (one thread; median of {ROUNDS} rounds): {:.3} ms",
        ms(host_call)
    );
    python_over_mcp(calls / 50)?;
    let floor = rows
        .iter()
        .find(|row| row.name.starts_with("rmcp floor"))
        .map(Row::cpu)
        .expect("the rmcp floor's row");
    println!(
        "issue 25's bound for `toolhost mcp`: rmcp floor's CPU + `Host::call` + 10 µs = {:.3} ms (and ≤ 0.060 ms)",
        ms(floor + host_call + Duration::from_micros(10))
    );
    let row = |name: &str| rows.iter().find(|row| row.name == name).expect(name);
    let layer = row("toolhost mcp").cpu_over(row("rmcp + `Host::call` (one thread)"));
    println!(
        "`toolhost mcp` less rmcp + `Host::call` (median of the rounds' differences): {:.1} µs \
         per call, toolhost's own MCP layer (issue 25 allows 10 µs)",
        layer * 1e6
    );
    Ok(())
}

/// `calls` calls of the Python evaluator (`tests/python/py_eval`) over
/// `toolhost mcp`: issue 25's Python target, measured over MCP.
fn python_over_mcp(calls: usize) -> anyhow::Result<()> {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-guests");
    let wasm = toolhost_test_artifacts::python::componentize("py_eval", "evaluator", &out)
        .ok_or_else(|| {
            anyhow::anyhow!("componentize-py is not on PATH (PATH=$PWD/target/py/bin:$PATH)")
        })?;
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("tools"))?;
    std::fs::copy(&wasm, dir.path().join("tools/python.wasm"))?;
    let warmed = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["tools", "list", "--dir"])
        .arg(dir.path())
        .output()?;
    anyhow::ensure!(warmed.status.success(), "toolhost tools list");
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command.args(["mcp", "--dir"]).arg(dir.path());
    let mut client = Client::start(command)?;
    let pid = client.child.id();
    let arguments = json!({"expression": "sum(range(10)) * 2"});
    let mut call = || -> anyhow::Result<Duration> {
        let (elapsed, reply) = client.call("python_eval", arguments.clone())?;
        anyhow::ensure!(reply["result"]["isError"] == false, "{reply}");
        Ok(elapsed)
    };
    for _ in 0..100 {
        call()?;
    }
    let cpu_before = cpu_time(pid)?;
    let mut latencies = (0..calls)
        .map(|_| call())
        .collect::<anyhow::Result<Vec<_>>>()?;
    let cpu = cpu_time(pid)? - cpu_before;
    latencies.sort();
    println!(
        "Python `eval` over `toolhost mcp`, {calls} calls: p50 {:.3} ms, p99 {:.3} ms, server CPU per call {:.3} ms",
        ms(latencies[latencies.len() / 2]),
        ms(latencies[(latencies.len() - 1) * 99 / 100]),
        ms(cpu) / calls as f64
    );
    Ok(())
}

/// How long `Host::call` of `echo` takes in this process, on a
/// current-thread runtime (its wall time is its CPU time): the median of
/// [`ROUNDS`] rounds' time per call.
fn host_call_time(dir: &std::path::Path, calls: usize) -> anyhow::Result<Duration> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let host = runtime.block_on(toolhost::Host::builder(dir).build())?;
    let options = toolhost::CallOptions::new(std::sync::Arc::new(toolhost::Session::ephemeral()?));
    let input = json!({"text": "hello"});
    let call = || -> anyhow::Result<()> {
        let result = runtime.block_on(host.call("echo", input.clone(), &options))?;
        anyhow::ensure!(!result.is_error, "{:?}", result.result);
        Ok(())
    };
    for _ in 0..500 {
        call()?;
    }
    let per_round = calls.div_ceil(ROUNDS);
    let mut rounds = (0..ROUNDS)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..per_round {
                call()?;
            }
            Ok(started.elapsed() / u32::try_from(per_round)?)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    rounds.sort();
    Ok(rounds[ROUNDS / 2])
}

/// How many turns each server takes.
const ROUNDS: usize = 5;

/// One server's measurements.
struct Row {
    name: &'static str,
    client: Client,
    latencies: Vec<Duration>,
    elapsed: Duration,
    cpu_per_call: Vec<Duration>,
}

impl Row {
    fn new(name: &'static str, client: Client) -> Self {
        Self {
            name,
            client,
            latencies: Vec::new(),
            elapsed: Duration::ZERO,
            cpu_per_call: Vec::new(),
        }
    }

    /// `calls` more calls, with the server's CPU time they took.
    fn round(&mut self, calls: usize) -> anyhow::Result<()> {
        let cpu_before = cpu_time(self.client.child.id())?;
        let started = Instant::now();
        for _ in 0..calls {
            let latency = self.client.call_echo()?;
            self.latencies.push(latency);
        }
        self.elapsed += started.elapsed();
        let cpu = cpu_time(self.client.child.id())? - cpu_before;
        self.cpu_per_call
            .push(cpu / u32::try_from(calls).expect("calls fit u32"));
        Ok(())
    }

    /// The median of the rounds' CPU time per call.
    fn cpu(&self) -> Duration {
        let mut rounds = self.cpu_per_call.clone();
        rounds.sort();
        rounds[rounds.len() / 2]
    }

    /// How much more CPU per call this row's server took than `other`'s, in
    /// seconds: the median of the rounds' differences (the rows take turns,
    /// so each round's pair ran under the same conditions).
    fn cpu_over(&self, other: &Row) -> f64 {
        let mut differences: Vec<f64> = self
            .cpu_per_call
            .iter()
            .zip(&other.cpu_per_call)
            .map(|(a, b)| a.as_secs_f64() - b.as_secs_f64())
            .collect();
        differences.sort_by(f64::total_cmp);
        differences[differences.len() / 2]
    }

    fn print(&mut self) {
        let latencies = &mut self.latencies;
        latencies.sort();
        let pct = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
        println!(
            "| {} | {} | {:.0} | {:.3} ms | {:.3} ms | {:.3} ms |",
            self.name,
            latencies.len(),
            latencies.len() as f64 / self.elapsed.as_secs_f64(),
            ms(pct(0.5)),
            ms(pct(0.99)),
            ms(self.cpu()),
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A minimal newline-delimited JSON-RPC client.
struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
}

impl Client {
    fn start(mut command: Command) -> anyhow::Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut client = Self {
            child,
            stdin,
            stdout,
            next_id: 0,
            line: String::new(),
        };
        client.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}),
        )?;
        writeln!(
            client.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )?;
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
            anyhow::ensure!(
                self.stdout.read_line(&mut self.line)? > 0,
                "the server closed stdout"
            );
            let reply: Value = serde_json::from_str(&self.line)?;
            if reply["id"] == json!(self.next_id) {
                anyhow::ensure!(reply.get("error").is_none(), "error reply: {reply}");
                return Ok(reply);
            }
        }
    }

    fn list(&mut self) -> anyhow::Result<Value> {
        self.request("tools/list", json!({}))
    }

    fn call_echo(&mut self) -> anyhow::Result<Duration> {
        let (elapsed, reply) = self.call("echo", json!({"text": "hello"}))?;
        anyhow::ensure!(reply["result"]["content"][0]["text"] == "hello", "{reply}");
        Ok(elapsed)
    }

    /// Call `tool`: how long the answer took, and the answer.
    fn call(&mut self, tool: &str, arguments: Value) -> anyhow::Result<(Duration, Value)> {
        let started = Instant::now();
        let reply = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        Ok((started.elapsed(), reply))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The floor: answers every request at once, the way a server with no work would.
fn floor_server() -> anyhow::Result<()> {
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let message: Value = serde_json::from_str(&line?)?;
        let Some(id) = message.get("id") else {
            continue;
        };
        let result = match message["method"].as_str() {
            Some("tools/call") => {
                json!({"content": [{"type": "text", "text": "hello"}], "isError": false})
            }
            Some("tools/list") => json!({"tools": []}),
            _ => json!({"protocolVersion": "2025-11-25", "capabilities": {},
                        "serverInfo": {"name": "floor", "version": "0"}}),
        };
        writeln!(
            stdout,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "result": result})
        )?;
        stdout.flush()?;
    }
    Ok(())
}

/// rmcp on stdio with a handler that answers `echo` at once, or that makes
/// the call with `Host::call` and nothing more.
mod rmcp_floor {
    use std::sync::Arc;

    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
        ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    };
    use rmcp::service::RequestContext;
    use rmcp::{RoleServer, ServerHandler, ServiceExt as _};

    /// A handler that answers at once; or, given a host, one whose
    /// `call_tool` is that host's `Host::call` in a fresh session and nothing
    /// more: the floor plus the sandboxed call, run as `toolhost mcp` runs
    /// it, between reading and writing messages.
    struct Floor {
        host: Option<toolhost::Host>,
    }

    impl ServerHandler for Floor {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            // One tool, so that a toolhost can mount it (the proxy rows).
            let schema = serde_json::json!({
                "type": "object",
                "properties": { "text": { "type": "string" } }
            });
            let serde_json::Value::Object(schema) = schema else {
                unreachable!("an object")
            };
            let echo = rmcp::model::Tool::new("echo", "Say the text back.", schema)
                .with_annotations(rmcp::model::ToolAnnotations::new().read_only(true));
            Ok(ListToolsResult::with_all_items(vec![echo]))
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let Some(host) = &self.host else {
                return Ok(CallToolResult::success(vec![ContentBlock::text("hello")]).into());
            };
            let failed = |e: String| ErrorData::internal_error(e, None);
            let session = toolhost::Session::ephemeral().map_err(|e| failed(e.to_string()))?;
            let options = toolhost::CallOptions::new(Arc::new(session));
            let input = serde_json::Value::Object(request.arguments.unwrap_or_default());
            let result = Box::pin(host.call(&request.name, input, &options))
                .await
                .map_err(|e| failed(e.to_string()))?;
            match result.is_error {
                false => Ok(CallToolResult::success(vec![ContentBlock::text("hello")]).into()),
                true => Err(failed(format!("{:?}", result.result))),
            }
        }
    }

    /// Serve on stdio until it closes, on `runtime`; with `host_dir`, calls
    /// go to the tools there.
    pub fn serve(
        runtime: tokio::runtime::Runtime,
        host_dir: Option<&std::path::Path>,
    ) -> anyhow::Result<()> {
        runtime.block_on(async {
            let host = match host_dir {
                Some(dir) => Some(toolhost::Host::builder(dir).build().await?),
                None => None,
            };
            let running = Floor { host }.serve(rmcp::transport::stdio_pipes()).await?;
            let _ = running.waiting().await;
            anyhow::Ok(())
        })
    }
}
