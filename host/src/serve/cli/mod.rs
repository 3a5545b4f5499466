//! The `toolhost` command line.
//!
//! Exit codes: 0 success; 1 the tool ran and reported an error (or `check`
//! found a failing tool); 2 the call or command was refused (unknown tool,
//! invalid input, approval required, bad config or usage).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};
use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};

mod author;

use crate::call::{CallOptions, PreApproved};
use crate::caps;
use crate::config::{Config, Permission};
use crate::engine::{EngineOptions, Tiering, ToolEngine};
use crate::host::Host;
use crate::host::STATE_DIR;
use crate::lint;
use crate::lock::Lockfile;
use crate::registry::{self, Tool};
use crate::reload;
use crate::serve::client::{Answer, Client};
use crate::serve::http;
use crate::serve::mcp::{McpOptions, ToolServer};
use crate::session::{Session, SessionMode, SessionSpec, SessionStore, parse_instant};

/// Run untrusted agent tools as sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "toolhost", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List and inspect the tools of a folder.
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Call tools.
    Tool {
        #[command(subcommand)]
        command: ToolCommand,
    },
    /// Show a tool's metadata, schema, and imports beside its grants.
    Inspect(InspectArgs),
    /// Load every tool, report each failing check (exit 1 if any fails) and
    /// lint descriptions, names and schemas (warnings; exit 1 with --strict).
    Check(CheckArgs),
    /// Write tools.lock: pin each tool's component, metadata and grants; while
    /// it exists, a tool that differs from it is refused.
    Lock(DirArgs),
    /// Serve the HTTP API (and MCP at /mcp) until interrupted (Ctrl-C or SIGTERM).
    Serve(ServeArgs),
    /// Serve MCP on stdin/stdout until stdin closes.
    Mcp(McpArgs),
    /// Make a tool project (Rust, Python or TypeScript) that builds and
    /// passes `toolhost check` as it is.
    New(author::NewArgs),
    /// Build tool projects into the host directory's `tools/`.
    Build(author::BuildArgs),
}

#[derive(Debug, Args)]
struct McpArgs {
    #[command(flatten)]
    dir: DirArgs,
    /// Run every call in this session (one made through the HTTP API).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Run calls in dry-run sessions: reads run, writes are stubbed.
    #[arg(long, conflicts_with = "session")]
    dry_run: bool,
    /// Bound time arguments by this instant (RFC 3339).
    #[arg(long, value_name = "INSTANT", conflicts_with = "session", value_parser = parse_instant)]
    as_of: Option<DateTime<FixedOffset>>,
}

#[derive(Debug, Args)]
struct CheckArgs {
    #[command(flatten)]
    dir: DirArgs,
    /// Fail (exit 1) on lint warnings too.
    #[arg(long)]
    strict: bool,
}

#[derive(Debug, Args)]
struct ServeArgs {
    #[command(flatten)]
    dir: DirArgs,
    /// The address to listen on (default: `[server] listen`, else 127.0.0.1:3000).
    #[arg(long, value_name = "ADDR")]
    listen: Option<std::net::SocketAddr>,
    /// Require `Authorization: Bearer <TOKEN>` on every route but /healthz.
    #[arg(long, env = "TOOLHOST_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

#[derive(Debug, Subcommand)]
enum ToolsCommand {
    /// List the enabled tools (and the files that did not load).
    List {
        #[command(flatten)]
        dir: DirArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum ToolCommand {
    /// Call a tool: in-process (an ephemeral session unless --session), or
    /// on a running server with --url.
    Call(CallArgs),
}

#[derive(Debug, Args)]
struct DirArgs {
    /// The host directory: `toolhost.toml` and `tools/`.
    #[arg(long, short = 'd', default_value = ".")]
    dir: PathBuf,
}

#[derive(Debug, Args)]
struct InspectArgs {
    /// A `.wasm` file, or the name of a tool in the folder.
    target: String,
    #[command(flatten)]
    dir: DirArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct CallArgs {
    /// The tool to call.
    name: String,
    /// The input, as JSON.
    #[arg(long, short = 'i', default_value = "{}")]
    input: String,
    #[command(flatten)]
    dir: DirArgs,
    /// Use this directory as the session's workspace (default: a scratch
    /// directory removed afterwards).
    #[arg(long, short = 'w', conflicts_with_all = ["session", "url"])]
    workspace: Option<PathBuf>,
    /// Call in this session (one made by `toolhost serve`'s session API).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Bind the call by continuation token `<channel>:<key>` (with --url).
    #[arg(
        long,
        value_name = "TOKEN",
        requires = "url",
        conflicts_with = "session"
    )]
    continuation_token: Option<String>,
    /// Call the tool on the server at URL (e.g. http://127.0.0.1:3000)
    /// instead of in-process.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The server's bearer token (with --url).
    #[arg(long, env = "TOOLHOST_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Run in a dry-run session: reads run, writes are stubbed.
    #[arg(long, conflicts_with_all = ["session", "url"])]
    dry_run: bool,
    /// Freeze the session at this instant (RFC 3339): time arguments may not be later.
    #[arg(long, value_name = "INSTANT", conflicts_with_all = ["session", "url"], value_parser = parse_instant)]
    as_of: Option<DateTime<FixedOffset>>,
    /// Approve the call if the tool is `always_ask` (in-process only: a
    /// server's calls are approved through its approvals route).
    #[arg(long, conflicts_with = "url")]
    approve: bool,
    /// Print the whole envelope as JSON.
    #[arg(long)]
    json: bool,
    /// Print the call's trace (logs, stdout, stderr) to stderr.
    #[arg(long)]
    trace: bool,
}

/// Parse the arguments and run the command.
pub async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if matches!(cli.command, Command::Serve(_) | Command::Mcp(_)) {
        raise_open_file_limit();
    } else {
        quiet_on_closed_stdout();
    }
    match cli.command {
        Command::Tools {
            command: ToolsCommand::List { dir, json },
        } => list(&dir.dir, json).await,
        Command::Tool {
            command: ToolCommand::Call(args),
        } => call(args).await,
        Command::Inspect(args) => inspect(args).await,
        Command::Check(args) => check(args).await,
        Command::Lock(dir) => lock(&dir.dir).await,
        Command::Serve(args) => serve(args).await,
        Command::Mcp(args) => mcp(args).await,
        Command::New(args) => author::new(args),
        Command::Build(args) => author::build(args),
    }
}

/// Let a closed stdout end the process quietly, as it does other Unix tools
/// (`toolhost tools list | head`): Rust ignores SIGPIPE, which turns the
/// next print into a panic. Not for the servers, whose peers may hang up.
fn quiet_on_closed_stdout() {
    #[cfg(unix)]
    // SAFETY: signal(2) only changes how the process treats SIGPIPE; no
    // handler runs, and nothing in these commands relies on ignoring it.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Raise the soft limit on open descriptors to the hard one, so the
/// servers' connections, tools' files and sockets, the compile cache and
/// the key-value store do not run out at the common soft default of 1024.
fn raise_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write only the struct passed.
    let raised = unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && {
            let before = limit.rlim_cur;
            limit.rlim_cur = limit.rlim_max;
            before == limit.rlim_max || libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0
        }
    };
    if !raised {
        tracing::warn!(
            "cannot raise the open-file limit (RLIMIT_NOFILE): {}",
            std::io::Error::last_os_error()
        );
    }
}

async fn load(dir: &Path) -> anyhow::Result<Host> {
    Host::builder(dir).build().await
}

/// Load a host that will keep running (`serve`, `mcp`): a tool the compile
/// cache does not hold serves baseline code until its optimized code is in.
async fn load_to_serve(dir: &Path) -> anyhow::Result<Host> {
    Host::builder(dir)
        .tiering(Tiering::BaselineFirst)
        .build()
        .await
}

fn warn_failures(host: &Host) {
    for failure in host.registry().failures() {
        eprintln!("warning: not loaded: {failure}");
    }
}

async fn list(dir: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let host = load(dir).await?;
    let registry = host.registry();
    if as_json {
        let mut listing = host.listing();
        listing["failures"] = serde_json::to_value(registry.failures())?;
        print_json(&listing)?;
        return Ok(ExitCode::SUCCESS);
    }
    let unavailable = registry.unavailable().iter().map(|u| {
        [
            u.name.clone(),
            "-".to_string(),
            "-".to_string(),
            summary(&format!("unavailable: {}", u.reason), 70),
        ]
    });
    let rows: Vec<[String; 4]> = registry
        .tools()
        .map(|t| {
            [
                t.name().to_string(),
                t.metadata().effect.to_string(),
                permission_name(t.policy().permission).to_string(),
                summary(&t.metadata().description, 70),
            ]
        })
        .chain(unavailable)
        .collect();
    let header = ["NAME", "EFFECT", "PERMISSION", "DESCRIPTION"].map(str::to_string);
    print_table(&header, &rows);
    if rows.is_empty() {
        println!("(no tools in {})", host.tools_dir().display());
    }
    warn_failures(&host);
    Ok(ExitCode::SUCCESS)
}

async fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let host = load(&args.dir.dir).await?;
    let registry = host.registry();
    for tool in registry.all() {
        println!("ok    {}", tool.name());
    }
    for failure in registry.failures() {
        println!("FAIL  {failure}");
    }
    let config = host.config();
    if let Some(toolset) = config.declared_toolset() {
        for key in toolset.ignored_keys() {
            println!(
                "warn  toolhost.toml: [toolset] configs.{key} names no toolset tool; kept but \
                 ignored"
            );
        }
    }
    let lints = lint::lint(registry.all().map(|t| lint::Subject::from(&**t)));
    for finding in &lints {
        println!(
            "warn  {}: {} [{}]",
            finding.tool, finding.message, finding.rule
        );
    }
    let failed = registry.failures().len();
    println!(
        "{} tools loaded, {failed} failed, {} warnings",
        registry.all().count(),
        lints.len()
    );
    Ok(if failed > 0 || (args.strict && !lints.is_empty()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

async fn lock(dir: &Path) -> anyhow::Result<ExitCode> {
    let host = Host::builder(dir).ignore_lock().build().await?;
    let registry = host.registry();
    let previous = Lockfile::load(dir).unwrap_or_else(|e| {
        eprintln!("warning: {e:#}; writing a new one");
        None
    });
    let (next, failures) = Lockfile::merged(&registry, previous.as_ref());
    for (failure, kept) in failures {
        if kept {
            eprintln!("warning: {failure}; its entry is kept as it was");
        } else {
            eprintln!("warning: not locked: {failure}");
        }
    }
    let changes = previous.unwrap_or_default().diff(&next);
    let path = next.write(dir)?;
    for line in &changes {
        println!("{line}");
    }
    println!(
        "{}: {} tools locked, {} changed",
        path.display(),
        next.tools.len(),
        changes.len()
    );
    Ok(if registry.failures().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

async fn inspect(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let path = PathBuf::from(&args.target);
    let name = registry::slug(&path);
    let tools: Vec<Arc<Tool>> = if path.extension().is_some_and(|e| e == "wasm") {
        // Just this file, under the folder's config: the rest of the folder
        // need not load.
        anyhow::ensure!(path.is_file(), "{} does not exist", path.display());
        let config = Config::load(&args.dir.dir)?;
        let engine = ToolEngine::new(&EngineOptions {
            max_memory_bytes: config.max_memory_bytes(),
            max_instances: 4,
            cache_dir: args.dir.dir.join(STATE_DIR).join("cache"),
            cache_max_bytes: config.limits.compile_cache_bytes(),
        })?;
        match registry::load_tool(&engine, &path, &name, &config).await {
            Ok(tools) => tools.into_iter().map(Arc::new).collect(),
            Err(reason) => {
                eprintln!("error: {} (tool `{name}`): {reason}", path.display());
                return Ok(ExitCode::from(1));
            }
        }
    } else {
        let host = Host::builder(&args.dir.dir).only(&name).build().await?;
        let registry = host.registry();
        if let Some(tool) = registry.all().find(|t| t.name() == name) {
            vec![tool.clone()]
        } else if let Some(failure) = registry
            .failures()
            .iter()
            .find(|f| f.tool.as_deref() == Some(&name))
        {
            eprintln!("error: {failure}");
            return Ok(ExitCode::from(1));
        } else {
            anyhow::bail!("no tool `{name}` in {}", host.tools_dir().display());
        }
    };
    if args.json {
        let mut described: Vec<Value> = tools.iter().map(|t| inspection(t)).collect();
        let out = if described.len() == 1 {
            described.remove(0)
        } else {
            json!({ "file": path, "plainComponent": true, "tools": described })
        };
        print_json(&out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if tools.len() > 1 {
        println!(
            "{} is a plain component: {} tools, one per exported function\n",
            path.display(),
            tools.len()
        );
    }
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            println!("\n{}\n", "-".repeat(72));
        }
        print_inspection(tool)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A tool as `inspect --json` shows it.
fn inspection(tool: &Tool) -> Value {
    let imports: Vec<Value> = tool
        .imports()
        .iter()
        .map(|i| json!({ "import": i, "status": caps::import_status(&tool.policy().grants, i) }))
        .collect();
    let mut out = tool.to_json();
    out["file"] = json!(tool.path());
    out["sha256"] = json!(tool.sha256());
    out["imports"] = json!(imports);
    if let Some(function) = tool.plain_export() {
        out["function"] = json!(function);
    }
    out
}

/// A tool as `inspect` prints it.
fn print_inspection(tool: &Tool) -> anyhow::Result<()> {
    let meta = tool.metadata();
    println!("tool:        {}", tool.name());
    println!("file:        {}", tool.path().display());
    if let Some(function) = tool.plain_export() {
        println!("function:    {function} (plain component)");
    }
    println!("sha256:      {}", tool.sha256());
    println!("effect:      {}", meta.effect);
    println!("permission:  {}", permission_name(tool.policy().permission));
    println!("enabled:     {}", tool.policy().enabled);
    println!(
        "dry-run:     {}",
        if meta.has_dry_run_result {
            "tool supplies a result"
        } else {
            "\"Operation acknowledged.\""
        }
    );
    if !meta.time_args.is_empty() {
        println!("time args:   {}", meta.time_args.join(", "));
    }
    println!(
        "\ndescription:\n{}\n",
        indent(&terminal_safe(&meta.description))
    );
    println!(
        "input schema:\n{}\n",
        indent(&serde_json::to_string_pretty(&meta.input_schema)?)
    );
    if let Some(output) = &meta.output_schema {
        println!(
            "output schema:\n{}\n",
            indent(&serde_json::to_string_pretty(output)?)
        );
    }
    println!("imports (what it could ask for) and grants:");
    for import in tool.imports() {
        println!(
            "  {import:<48} {}",
            caps::import_status(&tool.policy().grants, import)
        );
    }
    Ok(())
}

async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let host = Arc::new(load_to_serve(&args.dir.dir).await?);
    warn_failures(&host);
    let mut options = http::ServeOptions::from_config(&host)?;
    if let Some(listen) = args.listen {
        options.listen = listen;
    }
    if args.token.is_some() {
        options.token = args.token;
    }
    let listener = http::bind(&options).await?;
    let (_watcher, _hangups) = hot_reload(&host);
    let app = http::App::new(host, options)?;
    let addr = listener.local_addr()?;
    eprintln!(
        "toolhost: serving {} tools at http://{addr}/{}/v1 (health: http://{addr}/healthz)",
        app.host.registry().tools().count(),
        app.slug
    );
    let grace = app.options.shutdown_grace.as_secs();
    let stopping = async move {
        shutdown_signal().await;
        eprintln!(
            "toolhost: stopping: no new connections; calls in flight have {grace} s to finish"
        );
    };
    http::run(listener, app, stopping).await?;
    eprintln!("toolhost: stopped");
    Ok(ExitCode::SUCCESS)
}

async fn mcp(args: McpArgs) -> anyhow::Result<ExitCode> {
    let host = Arc::new(load_to_serve(&args.dir.dir).await?);
    warn_failures(&host);
    let sessions =
        Arc::new(http::ServeOptions::from_config(&host)?.session_store(host.sessions_dir())?);
    if let Some(id) = &args.session {
        sessions
            .bind(Some(id), None, Some(&cli_principal()))
            .map_err(|e| anyhow::anyhow!("--session: {e}"))?;
    }
    let (_watcher, _hangups) = hot_reload(&host);
    let options = McpOptions {
        session: args.session,
        dry_run: args.dry_run,
        as_of: args.as_of,
        caller: Some(cli_principal()),
    };
    ToolServer::new(host, sessions, options)
        .serve_stdio()
        .await?;
    Ok(ExitCode::SUCCESS)
}

/// Reload the tools folder when it changes and on SIGHUP (clients are told
/// when the tools change). The returned guards stop both when dropped.
fn hot_reload(host: &Arc<Host>) -> (Option<reload::ReloadWatcher>, tokio::task::JoinHandle<()>) {
    let watcher = reload::watch(host.clone())
        .inspect_err(|e| {
            eprintln!(
                "warning: not watching {}: {e:#}",
                host.tools_dir().display()
            )
        })
        .ok();
    let host = host.clone();
    let hangups = tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let Ok(mut hangups) = signal(SignalKind::hangup()) else {
                return;
            };
            while hangups.recv().await.is_some() {
                reload::reload_and_report(&host).await;
            }
        }
        #[cfg(not(unix))]
        drop(host);
    });
    (watcher, hangups)
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

/// `tool call --url`: the call goes to a running server.
async fn remote_call(args: &CallArgs, url: &str) -> anyhow::Result<ExitCode> {
    let input: Value = serde_json::from_str(&args.input)
        .map_err(|e| anyhow::anyhow!("--input is not JSON: {e}"))?;
    let client = Client::new(url, args.token.clone())?;
    let body = json!({
        "input": input,
        "sessionId": args.session,
        "continuationToken": args.continuation_token,
        "auth": cli_principal(),
    });
    let answer = client
        .call(&args.name, body, |pending| {
            eprintln!(
                "call {} is {}; waiting (approve with POST {url}{})",
                pending["callId"].as_str().unwrap_or("?"),
                pending["status"].as_str().unwrap_or("waiting"),
                pending["callId"]
                    .as_str()
                    .map(|id| format!("/<slug>/v1/approvals/{id}"))
                    .unwrap_or_default(),
            );
        })
        .await?;
    match answer {
        Answer::Envelope(envelope) => {
            if args.json {
                print_json(&envelope)?;
            } else {
                match &envelope["result"] {
                    Value::String(text) => println!("{}", terminal_safe(text)),
                    other => print_json(other)?,
                }
            }
            Ok(if envelope["isError"] == json!(true) {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Answer::Refused(_, error) if args.json => {
            print_json(&json!({ "ok": false, "error": error }))?;
            Ok(ExitCode::from(2))
        }
        Answer::Refused(status, error) => {
            eprintln!(
                "error: {} ({status}, {})",
                error["message"].as_str().unwrap_or("refused"),
                error["code"].as_str().unwrap_or("?")
            );
            Ok(ExitCode::from(2))
        }
    }
}

async fn call(args: CallArgs) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.url {
        return remote_call(&args, url).await;
    }
    let host = Host::builder(&args.dir.dir)
        .only(&args.name)
        .build()
        .await?;
    warn_failures(&host);
    let session = if let Some(id) = &args.session {
        let options = http::ServeOptions::from_config(&host)?;
        let store = SessionStore::open(host.sessions_dir(), options.session_retention)?;
        store
            .bind(Some(id), None, Some(&cli_principal()))
            .map_err(|e| anyhow::anyhow!("--session: {e}"))?
            .session
    } else {
        Arc::new(Session::open(SessionSpec {
            mode: if args.dry_run {
                SessionMode::DryRun
            } else {
                SessionMode::Live
            },
            as_of: args.as_of,
            channel: Some("cli".into()),
            auth: Some(cli_principal()),
            workspace: args.workspace.clone(),
            ..SessionSpec::default()
        })?)
    };
    let mut options = CallOptions::new(session.clone()).with_approver(Arc::new(
        crate::call::NoApprover("pass --approve to approve it".into()),
    ));
    if args.approve {
        options = options.with_approver(Arc::new(PreApproved(cli_principal())));
    }
    let result = match host.call(&args.name, args.input.as_str(), &options).await {
        Ok(result) => result,
        Err(refused) if args.json => {
            print_json(&http::ApiError::from(&refused).body())?;
            return Ok(ExitCode::from(2));
        }
        Err(refused) => return Err(refused.into()),
    };
    if args.trace {
        eprintln!("{}", serde_json::to_string_pretty(&result.trace)?);
    }
    if args.json {
        print_json(&serde_json::to_value(&result)?)?;
    } else {
        match &result.result {
            Value::String(text) => println!("{}", terminal_safe(text)),
            other => print_json(other)?,
        }
    }
    Ok(if result.is_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Who the CLI acts as: the local user.
fn cli_principal() -> Value {
    let user = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    json!({ "type": "cli", "user": user })
}

fn permission_name(permission: Permission) -> &'static str {
    match permission {
        Permission::AlwaysAllow => "always_allow",
        Permission::AlwaysAsk => "always_ask",
    }
}

fn summary(text: &str, max: usize) -> String {
    let text = terminal_safe(text);
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() <= max {
        line.to_string()
    } else {
        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn print_table(header: &[String; 4], rows: &[[String; 4]]) {
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = std::io::stdout().lock();
    for row in std::iter::once(header).chain(rows) {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
}

fn print_json(value: &Value) -> anyhow::Result<()> {
    // serde_json escapes C0 controls but prints C1 and bidirectional
    // formatting characters as they are; they can only stand in strings,
    // where `\uXXXX` means the same.
    let text = serde_json::to_string_pretty(value)?;
    println!(
        "{}",
        escape_hidden(&text, |c| format!("\\u{:04x}", u32::from(c)))
    );
    Ok(())
}

/// `text` (a tool's description or result) as it is safe to print to a
/// terminal: control and bidirectional-formatting characters but newline and
/// tab shown as `\u{…}` escapes, so a tool cannot move the cursor, recolour
/// or reorder what the user reads.
fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    escape_hidden(text, |c| format!("\\u{{{:x}}}", u32::from(c)))
}

fn escape_hidden(text: &str, escape: impl Fn(char) -> String) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(crate::tool::is_hidden_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if crate::tool::is_hidden_control(c) {
            shown.push_str(&escape(c));
        } else {
            shown.push(c);
        }
    }
    shown.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_tool_prints_cannot_drive_the_terminal() {
        assert_eq!(terminal_safe("plain\n\ttext"), "plain\n\ttext");
        assert_eq!(
            terminal_safe("ok\u{1b}[2K\rgone \u{202e}txet"),
            "ok\\u{1b}[2K\\u{d}gone \\u{202e}txet"
        );
        assert_eq!(summary("a\u{9b}b", 70), "a\\u{9b}b");
        let json = serde_json::to_string_pretty(&json!({"r": "x\u{202e}y"})).unwrap();
        let shown = escape_hidden(&json, |c| format!("\\u{:04x}", u32::from(c)));
        assert!(shown.contains("x\\u202ey"), "{shown}");
        let back: Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back["r"], "x\u{202e}y", "the escape means the same JSON");
    }
}
