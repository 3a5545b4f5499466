//! The `toolhost` command line.
//!
//! Exit codes: 0 success; 1 the tool ran and reported an error (or `check`
//! found a failing tool); 2 the call or command was refused (unknown tool,
//! invalid input, approval required, bad config or usage).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};

use crate::call::{CallOptions, PreApproved};
use crate::config::{Config, Permission, WorkspaceAccess};
use crate::engine::{EngineOptions, ToolEngine};
use crate::host::Host;
use crate::host::STATE_DIR;
use crate::registry::{self, Tool};
use crate::session::{Session, SessionMode, SessionSpec, parse_instant};

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
    /// Load every tool and report each failing check; exit 1 if any fails.
    Check(DirArgs),
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
    /// Call a tool in-process, in an ephemeral session.
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
    #[arg(long, short = 'w')]
    workspace: Option<PathBuf>,
    /// Run in a dry-run session: reads run, writes are stubbed.
    #[arg(long)]
    dry_run: bool,
    /// Freeze the session at this instant (RFC 3339): time arguments may not be later.
    #[arg(long, value_name = "INSTANT")]
    as_of: Option<String>,
    /// Approve the call if the tool is `always_ask`.
    #[arg(long)]
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
    match cli.command {
        Command::Tools {
            command: ToolsCommand::List { dir, json },
        } => list(&dir.dir, json).await,
        Command::Tool {
            command: ToolCommand::Call(args),
        } => call(args).await,
        Command::Inspect(args) => inspect(args).await,
        Command::Check(dir) => check(&dir.dir).await,
    }
}

async fn load(dir: &Path) -> anyhow::Result<Host> {
    Host::builder(dir).build().await
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
        let tools: Vec<Value> = registry.tools().map(|t| tool_json(t)).collect();
        let failures = serde_json::to_value(registry.failures())?;
        print_json(&json!({ "tools": tools, "failures": failures }))?;
        return Ok(ExitCode::SUCCESS);
    }
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
        .collect();
    let header = ["NAME", "EFFECT", "PERMISSION", "DESCRIPTION"].map(str::to_string);
    print_table(&header, &rows);
    if rows.is_empty() {
        println!("(no tools in {})", host.tools_dir().display());
    }
    warn_failures(&host);
    Ok(ExitCode::SUCCESS)
}

async fn check(dir: &Path) -> anyhow::Result<ExitCode> {
    let host = load(dir).await?;
    let registry = host.registry();
    for tool in registry.all() {
        println!("ok    {}", tool.name());
    }
    for failure in registry.failures() {
        println!("FAIL  {failure}");
    }
    let failed = registry.failures().len();
    println!("{} tools loaded, {failed} failed", registry.all().count());
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

async fn inspect(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let path = PathBuf::from(&args.target);
    let name = registry::slug(&path);
    let tool: Arc<Tool> = if path.extension().is_some_and(|e| e == "wasm") {
        // Just this file, under the folder's config: the rest of the folder
        // need not load.
        anyhow::ensure!(path.is_file(), "{} does not exist", path.display());
        let config = Config::load(&args.dir.dir)?;
        let engine = ToolEngine::new(&EngineOptions {
            max_memory_bytes: config.max_memory_bytes(),
            max_instances: 4,
            cache_dir: args.dir.dir.join(STATE_DIR).join("cache"),
        })?;
        match registry::load_tool(&engine, &path, &name, config.policy_for(&name)?).await {
            Ok(tool) => Arc::new(tool),
            Err(reason) => {
                eprintln!("error: {} (tool `{name}`): {reason}", path.display());
                return Ok(ExitCode::from(1));
            }
        }
    } else {
        let host = load(&args.dir.dir).await?;
        let registry = host.registry();
        if let Some(tool) = registry.all().find(|t| t.name() == name) {
            tool.clone()
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
    let tool = &*tool;
    let imports: Vec<Value> = tool
        .imports()
        .iter()
        .map(|i| json!({ "import": i, "status": import_status(tool, i) }))
        .collect();
    if args.json {
        let mut out = tool_json(tool);
        out["file"] = json!(tool.path());
        out["sha256"] = json!(tool.sha256());
        out["imports"] = json!(imports);
        print_json(&out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let meta = tool.metadata();
    println!("tool:        {}", tool.name());
    println!("file:        {}", tool.path().display());
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
    println!("\ndescription:\n{}\n", indent(&meta.description));
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
        println!("  {import:<48} {}", import_status(tool, import));
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether an import is served, granted, or refused for this tool.
fn import_status(tool: &Tool, import: &str) -> String {
    let grants = &tool.policy().grants;
    let interface = import.split('@').next().unwrap_or(import);
    if interface.starts_with("wasi:sockets/") {
        return "always denied".into();
    }
    if interface.starts_with("wasi:filesystem/") {
        return match grants.workspace {
            WorkspaceAccess::None => "NOT GRANTED (no workspace)".into(),
            WorkspaceAccess::Read => "granted: workspace read-only".into(),
            WorkspaceAccess::Write => {
                "granted: workspace read-write (read-only for read calls)".into()
            }
        };
    }
    if interface.starts_with("wasi:keyvalue/") {
        return if grants.kv.is_empty() {
            "NOT GRANTED (no kv buckets)".into()
        } else {
            format!("granted: buckets {}", grants.kv.join(", "))
        };
    }
    if interface.starts_with("wasi:http/") {
        return if grants.http.is_empty() {
            "NOT GRANTED (no http allow-list)".into()
        } else {
            "granted: allow-listed origins".into()
        };
    }
    if interface == "wasi:cli/environment" {
        return if grants.env.is_empty() {
            "served: empty environment".into()
        } else {
            format!("granted: {} variables", grants.env.len())
        };
    }
    "served".into()
}

async fn call(args: CallArgs) -> anyhow::Result<ExitCode> {
    let as_of = args
        .as_of
        .as_deref()
        .map(parse_instant)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--as-of {e}"))?;
    let host = load(&args.dir.dir).await?;
    warn_failures(&host);
    let session = Arc::new(Session::open(SessionSpec {
        mode: if args.dry_run {
            SessionMode::DryRun
        } else {
            SessionMode::Live
        },
        as_of,
        channel: Some("cli".into()),
        auth: Some(cli_principal()),
        workspace: args.workspace.clone(),
        ..SessionSpec::default()
    })?);
    let mut options = CallOptions::new(session.clone()).with_approver(Arc::new(
        crate::call::NoApprover("pass --approve to approve it".into()),
    ));
    if args.approve {
        options = options.with_approver(Arc::new(PreApproved(cli_principal())));
    }
    let result = host.call(&args.name, args.input.as_str(), &options).await?;
    if args.trace {
        eprintln!("{}", serde_json::to_string_pretty(&result.trace)?);
    }
    if args.json {
        print_json(&serde_json::to_value(&result)?)?;
    } else {
        match &result.result {
            Value::String(text) => println!("{text}"),
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

fn tool_json(tool: &Tool) -> Value {
    let meta = tool.metadata();
    json!({
        "name": tool.name(),
        "description": meta.description,
        "inputSchema": meta.input_schema,
        "outputSchema": meta.output_schema,
        "effect": meta.effect.to_string(),
        "timeArgs": meta.time_args,
        "hasDryRunResult": meta.has_dry_run_result,
        "permission": permission_name(tool.policy().permission),
        "enabled": tool.policy().enabled,
    })
}

fn permission_name(permission: Permission) -> &'static str {
    match permission {
        Permission::AlwaysAllow => "always_allow",
        Permission::AlwaysAsk => "always_ask",
    }
}

fn summary(text: &str, max: usize) -> String {
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
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
